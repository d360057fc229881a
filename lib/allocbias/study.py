"""Compatibility facade: re-exports; import from the new modules.

The study's plan used to live here. It is now split along the flow of the audit:

:mod:`allocbias.systems`
    the systems under audit (:class:`~allocbias.systems.System`, ids, the study's models and precisions);
:mod:`allocbias.items`
    the prompt items of each scoring task;
:mod:`allocbias.catalog`
    where each score table is kept (:func:`~allocbias.catalog.store_for`), its readers and provenance;
:mod:`allocbias.runs`
    the scoring runners, local and served;
:mod:`allocbias.tables`
    the analysis tables of the chapters (quality separation, selection and allocation, predictive validity).

Every public name below is the object of its new module (the same object, not a copy).
"""

from __future__ import annotations

from .catalog import (
    PROVENANCE_COLUMNS,
    TASK_PARAMS,
    clear_tables,
    ellipse_scores,
    job_texts_hash,
    provenance_table,
    resolve_scores_root,
    scores_dir,
    served_pointwise_store,
    served_store,
    store_for,
    study_scores,
)
from .items import (
    TASKS,
    candidate_id,
    ellipse_pointwise_items,
    essay_pointwise_items,
    hiring_bloomberg_items,
    pairwise_rounds,
    resume_pairwise_items,
    resume_pointwise_items,
)
from .runs import (
    LazyEngine,
    pairwise_table,
    pointwise_table,
    score_ellipse_pointwise,
    score_essays_pointwise,
    score_hiring_bloomberg,
    score_resume_pairwise,
    score_resume_pairwise_served,
    score_resume_pointwise,
    score_resume_pointwise_served,
    timed,
)
from .store import MissingRowsError, ScoreStore, content_hash, run_resumable, set_live_scoring
from .systems import (
    MODELS,
    PRECISIONS,
    STUDY_SYSTEMS,
    SYSTEM_COLUMNS,
    WORDINGS,
    System,
    parse_system,
    served_system_id,
    systems,
)
from .tables import allocation_table, pairwise_study_points, quality_separation, selection_table, study_points

__all__ = [
    "LazyEngine",
    "MODELS",
    "MissingRowsError",
    "PRECISIONS",
    "PROVENANCE_COLUMNS",
    "STUDY_SYSTEMS",
    "SYSTEM_COLUMNS",
    "ScoreStore",
    "System",
    "TASKS",
    "TASK_PARAMS",
    "WORDINGS",
    "allocation_table",
    "candidate_id",
    "clear_tables",
    "content_hash",
    "ellipse_pointwise_items",
    "ellipse_scores",
    "essay_pointwise_items",
    "hiring_bloomberg_items",
    "job_texts_hash",
    "pairwise_rounds",
    "pairwise_study_points",
    "pairwise_table",
    "parse_system",
    "pointwise_table",
    "provenance_table",
    "quality_separation",
    "resolve_scores_root",
    "resume_pairwise_items",
    "resume_pointwise_items",
    "run_resumable",
    "score_ellipse_pointwise",
    "score_essays_pointwise",
    "score_hiring_bloomberg",
    "score_resume_pairwise",
    "score_resume_pairwise_served",
    "score_resume_pointwise",
    "score_resume_pointwise_served",
    "scores_dir",
    "selection_table",
    "served_pointwise_store",
    "served_store",
    "served_system_id",
    "set_live_scoring",
    "store_for",
    "study_points",
    "study_scores",
    "systems",
    "timed",
]
