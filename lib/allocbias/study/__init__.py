"""The study: the plan that turns score tables into the book's findings.

The plan, in the order data flows:

* :mod:`.catalog` — where each (system, task) score table is kept and how to read it;
* :mod:`.runs` — scoring the rows a table lacks (through :func:`allocbias.study.runs.score`), several systems
  at once;
* :mod:`.tables` — the analysis tables the chapters read (quality separation, selection rates, allocation gaps);
* :mod:`.synthetic` — synthetic score distributions for controlled experiments;
* :mod:`.book` — the papermill runner of the book (profiles, parameter checks, executed copies), and
  :mod:`.reading` — how a built page reads.

The findings: one module per chapter, whose findings function takes the chapter's parameters and returns one typed
object — the tables, the data behind each figure, and the scalars and phrases the prose quotes. A chapter calls it,
shows what it returns and glues every finding with one loop. The findings functions are importable from here
(loaded on first use, so importing the runner does not import every chapter).

Nothing below the study (what is audited, how it is scored, what is measured) imports it.
"""

from __future__ import annotations

import importlib
from typing import Any

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
