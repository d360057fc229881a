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

The interval covers name sampling and (for selection rates) the pool draws; it does not cover the choice of
résumés, jobs or prompt wording, which stay fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .. import checks
from ..checks import require_columns

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
    by_stratum: dict[tuple, list[np.ndarray]] = {}  # per stratum: the row positions of each cluster
    indices = frame.groupby([*strata, cluster], sort=True, dropna=False).indices
    for key, rows in sorted(indices.items(), key=lambda kv: str(kv[0])):
        key = key if isinstance(key, tuple) else (key,)
        by_stratum.setdefault(key[:-1], []).append(np.asarray(rows))
    cells = list(by_stratum.values())
    rng = np.random.default_rng(seed)
    out = []
    for b in range(int(n_boot)):
        rows = np.concatenate([np.concatenate([c[i] for i in rng.integers(0, len(c), size=len(c))]) for c in cells])
        result = statistic(frame.iloc[rows].reset_index(drop=True))
        if not isinstance(result, pd.DataFrame):
            raise ValueError(f"statistic must return a DataFrame, got {type(result).__name__}")
        out.append(result.assign(replicate=b))
    return pd.concat(out, ignore_index=True)


def percentile_intervals(
    estimate: pd.DataFrame,
    replicates: pd.DataFrame,
    keys: Sequence[str],
    values: Sequence[str],
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Estimates with percentile intervals, one tidy row per (``keys``, value column).

    Columns: ``keys``, ``metric`` (the value column's name), ``estimate`` (from ``estimate``), ``ci_low``,
    ``ci_high`` (quantiles of the replicates, NaN values left out) and ``n_boot`` (replicates with a value).
    A key of ``estimate`` that no replicate has gets NaN bounds.

    >>> est = pd.DataFrame({"group": ["A"], "gap": [0.5]})
    >>> reps = pd.DataFrame({"group": ["A"] * 5, "gap": [0.1, 0.2, 0.3, 0.4, 0.5], "replicate": range(5)})
    >>> percentile_intervals(est, reps, ["group"], ["gap"], confidence=0.5).round(2).to_dict("records")
    [{'group': 'A', 'metric': 'gap', 'estimate': 0.5, 'ci_low': 0.2, 'ci_high': 0.4, 'n_boot': 5}]
    """
    keys, values = list(keys), list(values)
    require_columns(estimate, [*keys, *values], "estimate")
    require_columns(replicates, [*keys, *values], "replicates")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    lo, hi = (1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0
    long_est = estimate.melt(id_vars=keys, value_vars=values, var_name="metric", value_name="estimate")
    long_rep = replicates.melt(id_vars=keys, value_vars=values, var_name="metric", value_name="value")
    long_rep = long_rep.dropna(subset=["value"])
    grouped = long_rep.groupby([*keys, "metric"], sort=False)["value"]
    bounds = pd.DataFrame({"ci_low": grouped.quantile(lo), "ci_high": grouped.quantile(hi),
                           "n_boot": grouped.size()}).reset_index()
    out = long_est.merge(bounds, on=[*keys, "metric"], how="left")
    out["n_boot"] = out["n_boot"].fillna(0).astype(np.int64)
    return out
