"""The study: the plan that turns score tables into the book's findings.

The study holds only the chapters' findings modules and their base (:mod:`.findings`). The machinery they share
lives in the layer named for what it does: where score tables live and scoring what a table lacks next to scoring
(:mod:`allocbias.scoring.catalog`, :mod:`allocbias.scoring.runs`), the decision and gap tables and the simulated
systems next to the measures (:mod:`allocbias.measures.tables`, :mod:`allocbias.measures.synthetic`), and the
papermill runner and the reading of built pages in :mod:`allocbias.book`. The old paths
(``allocbias.study.catalog``, ``.runs``, ``.tables``, ``.synthetic``, ``.book``, ``.reading``) still import, with a
:class:`DeprecationWarning` naming the new one.

The findings: one module per chapter, whose findings function takes the chapter's parameters and returns one typed
object — the tables, the data behind each figure, and the scalars and phrases the prose quotes. A chapter calls it,
shows what it returns and glues every finding with one loop. The findings functions are importable from here
(loaded on first use, so importing the runner does not import every chapter).

Nothing below the study (what is audited, how it is scored, what is measured) imports it.
"""

from __future__ import annotations

import importlib
from typing import Any

from .._renamed import moved

#: Each chapter's findings function and its result type, by the module that holds them (reading order).
FINDINGS: dict[str, tuple[str, str]] = {
    "task_and_data": ("task_and_data_findings", "TaskAndDataFindings"),
    "scoring_checks": ("scoring_checks_findings", "ScoringFindings"),
    "decisions": ("decisions_findings", "DecisionFindings"),
    "predictive_validity": ("predictive_validity_findings", "PredictiveValidityFindings"),
    "model_selection": ("model_selection_findings", "ModelSelectionFindings"),
    "group_correlation": ("group_correlation_findings", "GroupCorrelationFindings"),
    "quota_sweep": ("quota_sweep_findings", "QuotaSweepFindings"),
    "score_shapes": ("score_shapes_findings", "ScoreShapeFindings"),
    "hiring_bloomberg": ("hiring_bloomberg_findings", "HiringBloombergFindings"),
    "bloomberg_rankings": ("bloomberg_rankings_findings", "BloombergFindings"),
    "real_scores": ("real_scores_findings", "RealScoreFindings"),
    "audit_size": ("audit_size_findings", "AuditSizeFindings"),
    "averages": ("averages_findings", "AveragesFindings"),
    "ll144_metrics": ("ll144_metrics_findings", "LL144MetricsFindings"),
    "ll144_audits": ("ll144_audits_findings", "LL144AuditsFindings"),
    "real_essays": ("real_essays_findings", "RealEssayFindings"),
}
_WHERE = {name: module for module, names in FINDINGS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'allocbias.study' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


# The shared machinery that lived here moved to the layer named for what it does; the old paths still import,
# with a DeprecationWarning naming the new one.
moved(__name__, {
    "catalog": "allocbias.scoring.catalog",
    "runs": "allocbias.scoring.runs",
    "tables": "allocbias.measures.tables",
    "synthetic": "allocbias.measures.synthetic",
    "book": "allocbias.book.runner",
    "reading": "allocbias.book.reading",
})
