r"""Bootstrap intervals over the names: how much an audit's numbers move with the sample of names.

An audit shows each résumé under a few names per group; another draw of names from the same populations
would give other selection rates and other metric values. The cluster bootstrap redraws the names:

- the *clusters* are the names (all rows of one ``full_name`` in one job: the name shown on every résumé);
- within each *stratum* (a job × group cell) the stratum's :math:`n` names are drawn :math:`n` times with
  replacement and all their rows kept, so every replicate has the design of the audit (same résumés, same
  number of names per group);
- a statistic (any function of the resampled table that returns a tidy frame) is computed on ``n_boot``
  replicates; :func:`percentile_intervals` reports the :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of each
  value next to the estimate on the original table (percentile intervals, Efron and Tibshirani 1993, ch. 13).

Both are calls of the library's one resampling engine, :mod:`allocbias.measures.disaggregate` (its
:func:`~allocbias.measures.disaggregate.cluster_replicates` draws the replicates; :func:`percentile_intervals` *is*
:func:`allocbias.measures.disaggregate.percentile_intervals`); :func:`allocbias.measures.disaggregate.disaggregate` builds a whole
per-group table with its intervals in one call.

The interval covers name sampling and (for selection rates) the pool draws; it does not cover the choice of
résumés, jobs or prompt wording, which stay fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from .. import checks
from ..checks import require_columns
from .disaggregate import cluster_replicates, percentile_intervals

__all__ = ["cluster_bootstrap", "percentile_intervals"]


def cluster_bootstrap(
    frame: pd.DataFrame,
    statistic: Callable[[pd.DataFrame], pd.DataFrame],
    n_boot: int,
    seed: int,
    *,
    strata: Sequence[str] = ("job", "group"),
    cluster: str = "full_name",
) -> pd.DataFrame:
    """``statistic`` on ``n_boot`` cluster-bootstrap replicates of ``frame``, stacked with a ``replicate`` column.

    In each stratum (a cell of ``strata``) the clusters (values of ``cluster``) are drawn with replacement as
    many times as the stratum holds clusters; a drawn cluster brings all its rows. ``numpy.random.default_rng(seed)``
    drives every draw, so the same seed gives the same replicates.

    >>> df = pd.DataFrame({"job": "j", "group": ["A", "A", "B", "B"], "full_name": ["a1", "a2", "b1", "b2"],
    ...                    "score": [1.0, 3.0, 0.0, 0.0]})
    >>> mean_a = lambda f: pd.DataFrame({"mean_A": [f.loc[f["group"] == "A", "score"].mean()]})
    >>> reps = cluster_bootstrap(df, mean_a, 200, seed=0)
    >>> len(reps), sorted(reps["mean_A"].unique().tolist())
    (200, [1.0, 2.0, 3.0])
    """
    strata = list(strata)
    require_columns(frame, [*strata, cluster], "frame")
    n_boot = checks.count(n_boot, "n_boot")
    if frame.empty:
        raise ValueError("frame is empty: nothing to resample")
    frame = frame.reset_index(drop=True)
    out = []
    for b, rows in enumerate(cluster_replicates(frame, n_boot, seed, strata=strata, cluster=cluster)):
        result = statistic(frame.iloc[rows].reset_index(drop=True))
        if not isinstance(result, pd.DataFrame):
            raise ValueError(f"statistic must return a DataFrame, got {type(result).__name__}")
        out.append(result.assign(replicate=b))
    return pd.concat(out, ignore_index=True)
