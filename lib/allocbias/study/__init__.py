"""The study's findings: one function per chapter that computes what the chapter shows.

Each module holds a chapter's findings function, which takes the chapter's parameters and returns one typed
object: the tables, the data behind each figure, and the scalars and phrases the prose quotes. A chapter calls
it, shows what it returns and glues every finding with one loop. The package sits on top of the analysis modules
(metrics, selection, validity, ll144, the public data sets); no other module of the library imports it.
"""

from __future__ import annotations

from .real_scores import RealScoreFindings, real_scores_findings

__all__ = ["RealScoreFindings", "real_scores_findings"]
