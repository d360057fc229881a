"""NYC Local Law 144: the regression metrics and their distribution-wide alternatives, audit tables from counts,
their intervals, and one employer's bias audit.

The package has one module per job; every public name is importable from here (``from allocbias.measures import
ll144; ll144.di_curve(...)``), as before the split:

=================  ===========================================================================================
``regression``     selection rates and impact ratios of scores, DI_avg, DI_median, the impact-ratio curve, AUC_DI,
                   P_fair, the KS test and the synthetic examples of Filippi et al.
``tables``         impact-ratio tables from counts (the 2% rule, unknown categories and their bounds), counts of
                   simulated allocations and scoring tools, published tables checked against their counts
``intervals``      Wilson intervals of rates, simulated intervals of impact ratios, bootstrap intervals of the
                   regression alternatives
``power``          the four-fifths rule's error rates at given counts (false-flag rate, detectable ratio) and the
                   significance tests beside it (Fisher's exact, the two-proportion z-test)
``audit``          :func:`bias_audit`: one employer's audit from applicant rows or counts, in named steps
=================  ===========================================================================================

The definitions and numerical conventions are stated in :mod:`allocbias.measures.ll144.regression` and on the
book's page *Definitions and notation*.
"""

from __future__ import annotations

from ..._renamed import renamed
from . import audit, intervals, power, regression, tables
from .audit import *  # noqa: F401,F403
from .intervals import *  # noqa: F401,F403
from .power import *  # noqa: F401,F403
from .regression import *  # noqa: F401,F403
from .regression import _ks_all, _prepare  # noqa: F401  (kernels the tests and benchmarks check directly)
from .tables import *  # noqa: F401,F403

__all__ = [*regression.__all__, *tables.__all__, *intervals.__all__, *power.__all__, *audit.__all__]

#: Old names (deprecated aliases): ``ll144.impact_ratios`` collided with ``rankings.impact_ratios`` and
#: ``ll144.summary`` with ``genderbench.summary``, which compute other things.
__getattr__ = renamed(__name__, {"impact_ratios": "impact_ratios_at", "summary": "group_metric_summary"})
