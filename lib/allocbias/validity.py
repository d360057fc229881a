"""Judging bias metrics against allocation gaps: predictive validity, fairness rankings and NDCG.

The inputs are *points*: a tidy frame with one row per (model, subtask, group) holding the bias metrics of
that group against the reference group (the output of :func:`allocbias.metrics.bias_table`: ``rabbi``,
``avg_gap``, ``jsd``, ``emd`` and their ``<metric>_qualified`` versions) and its allocation gaps (``dDP``,
``dEO``, from the selection simulation).

* Predictive validity (the paper's Table 1): :func:`pearson`, :func:`validity_table` — Pearson r with p-value
  and confidence interval between each metric and each gap over all points; the non-directional metrics
  (JSD, EMD) against ``|gap|``; the EO gap against the metric computed on qualified candidates only.
  :func:`validity_decomposition` splits a pooled correlation into what holds within each cluster of points
  (e.g. each system) and what the differences between the clusters' means add.
* Model selection (the paper's Figure 4): :func:`rms_over_groups`, :func:`fairness_ranking`, :func:`ndcg_at`,
  :func:`ndcg_table` — models ranked ascending by the root mean square of their bias over groups per subtask,
  compared with the ideal ranking by allocation gap through NDCG@N, averaged over subtasks.

All functions are pure and raise ``ValueError`` naming the offending column, model or parameter.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "DEFAULT_ABS_GAP",
    "expected_random_ndcg",
    "random_ndcg_values",
    "PearsonResult",
    "fairness_ranking",
    "ndcg_at",
    "ndcg_table",
    "pearson",
    "rms_over_groups",
    "validity_decomposition",
    "validity_table",
]

#: metrics compared with ``|gap|`` by default: JSD and EMD are distances (>= 0) without a direction
DEFAULT_ABS_GAP: Mapping[str, bool] = {"jsd": True, "emd": True}
_DEFAULT_METRICS = ("rabbi", "avg_gap", "jsd", "emd")
_DEFAULT_GAPS = ("dDP", "dEO")


# --------------------------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------------------------
def _check_frame(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} has no column(s) {missing}; columns present: {list(df.columns)}")
    if df.empty:
        raise ValueError(f"{what} is empty")


def _check_keys(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    for c in columns:
        n_missing = int(df[c].isna().sum())
        if n_missing:
            raise ValueError(f"{what} key column {c!r} has {n_missing} missing value(s)")


def _numeric(df: pd.DataFrame, column: str, what: str) -> np.ndarray:
    dtype = df[column].dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        raise ValueError(f"{what} column {column!r} must be numeric, got dtype {dtype}")
    values = df[column].to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"{what} column {column!r} has {int(bad.sum())} NaN/inf value(s)")
    return values


def _as_key_tuple(key: object) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _cells(df: pd.DataFrame, by: list[str]) -> list[tuple[tuple, pd.DataFrame]]:
    if not by:
        return [((), df)]
    return [(_as_key_tuple(k), part) for k, part in df.groupby(by, sort=True, observed=True)]


# --------------------------------------------------------------------------------------------------------------
# predictive validity
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PearsonResult:
    """Pearson correlation with its p-value and confidence interval.

    Attributes
    ----------
    r
        Pearson's correlation coefficient.
    pvalue
        Two-sided p-value of H0: r = 0 (exact t-based test of ``scipy.stats.pearsonr``).
    ci_low, ci_high
        Confidence interval (Fisher z transform, ``PearsonRResult.confidence_interval``).
    n
        Number of points.
    confidence
        Confidence level of the interval.
    """

    r: float
    pvalue: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float


def _vector(x: object, name: str) -> np.ndarray:
    if isinstance(x, (pd.Series, pd.Index)):
        if pd.api.types.is_bool_dtype(x.dtype) or not pd.api.types.is_numeric_dtype(x.dtype):
            raise ValueError(f"{name} must be numeric, got dtype {x.dtype}")
        arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be numeric (int or float), got dtype {arr.dtype}")
        arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} NaN/inf value(s)")
    return arr


def pearson(
    x: Sequence[float] | np.ndarray | pd.Series,
    y: Sequence[float] | np.ndarray | pd.Series,
    *,
    confidence: float = 0.95,
) -> PearsonResult:
    r"""Pearson correlation of x and y with p-value and confidence interval (``scipy.stats.pearsonr``).

    ``r = sum (x_i - xbar)(y_i - ybar) / sqrt(sum (x_i - xbar)^2 sum (y_i - ybar)^2)``; p-value of H0: r = 0;
    interval from the Fisher transform ``atanh(r) +- z_{(1+c)/2} / sqrt(n - 3)`` (scipy's
    ``confidence_interval``; it spans [-1, 1] when n = 3).

    Raises on fewer than 3 points, on different lengths, and on constant input (r undefined), naming x or y.

    Examples
    --------
    >>> res = pearson([1, 2, 3, 4, 5], [1, 2, 3, 5, 4])
    >>> round(res.r, 2), round(res.pvalue, 4), res.n
    (0.9, 0.0374, 5)
    """
    xv, yv = _vector(x, "x"), _vector(y, "y")
    if xv.size != yv.size:
        raise ValueError(f"x and y must have the same length, got {xv.size} and {yv.size}")
    if xv.size < 3:
        raise ValueError(f"pearson needs at least 3 points, got {xv.size}")
    for name, v in (("x", xv), ("y", yv)):
        if v.min() == v.max():
            raise ValueError(f"{name} is constant (all values {v[0]!r}): the correlation is undefined")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    res = stats.pearsonr(xv, yv)
    ci = res.confidence_interval(confidence_level=confidence)
    return PearsonResult(
        float(res.statistic), float(res.pvalue), float(ci.low), float(ci.high), int(xv.size), float(confidence)
    )


def _abs_gap_map(abs_gap: Mapping[str, bool] | None, metrics: list[str]) -> dict[str, bool]:
    if abs_gap is None:
        return {m: bool(DEFAULT_ABS_GAP.get(m, False)) for m in metrics}
    unknown = [m for m in abs_gap if m not in metrics]
    if unknown:
        raise ValueError(f"abs_gap names metric(s) {unknown} that are not in metrics={metrics}")
    return {m: bool(abs_gap.get(m, False)) for m in metrics}


def _metric_column(metric: str, gap: str, qualified_gaps: Sequence[str], qualified_suffix: str) -> str:
    return f"{metric}{qualified_suffix}" if gap in qualified_gaps else metric


def validity_table(
    points: pd.DataFrame,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    gaps: Sequence[str] = _DEFAULT_GAPS,
    *,
    abs_gap: Mapping[str, bool] | None = None,
    qualified_gaps: Sequence[str] = ("dEO",),
    qualified_suffix: str = "_qualified",
    by: Sequence[str] = (),
    confidence: float = 0.95,
    dropna: bool = False,
) -> pd.DataFrame:
    r"""Predictive validity: Pearson r (p-value, CI, n) of each bias metric against each allocation gap.

    For each cell of ``by`` (e.g. task x setting x quota k), each metric and each gap, over all points
    (rows: one per (model, subtask, group)):

    * ``x`` = the metric column; for a gap in ``qualified_gaps`` (default ``dEO``) the metric computed on
      qualified candidates only, column ``<metric><qualified_suffix>`` (e.g. ``rabbi_qualified``, as written
      by :func:`allocbias.metrics.bias_table`), because equal opportunity is about qualified candidates;
    * ``y`` = the gap, or ``|gap|`` for metrics without a direction: by default ``jsd`` and ``emd``
      (:data:`DEFAULT_ABS_GAP`); ``abs_gap`` replaces that mapping (metric -> compare with ``|gap|``; metrics not
      listed are compared with the signed gap).

    Parameters
    ----------
    points
        Tidy frame with the metric columns (and their ``_qualified`` versions where needed) and the gap columns.
    metrics, gaps
        Column names of the metrics and of the allocation gaps.
    abs_gap
        Mapping metric -> bool: compare with ``|gap|``.
    qualified_gaps
        Gaps for which the ``_qualified`` metric column is used.
    qualified_suffix
        Suffix of the qualified-candidates metric columns.
    by
        Optional cell keys; one correlation per cell.
    confidence
        Level of the Pearson confidence interval.
    dropna
        Leave the points where the metric or the gap is NaN out of that correlation (``n`` counts the points
        used), e.g. a metric on qualified candidates where a group had none. Default: NaN raises, naming the
        column.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, metric, gap, metric_column, gap_transform ("signed" | "abs"), r, pvalue, ci_low, ci_high,
        n``; one row per (cell, metric, gap).

    Examples
    --------
    >>> pts = pd.DataFrame({"rabbi": [-0.5, 0.0, 0.2, 0.6], "dDP": [-0.3, 0.05, 0.1, 0.4]})
    >>> validity_table(pts, ["rabbi"], ["dDP"])[["metric", "gap", "gap_transform", "n"]].to_dict("records")
    [{'metric': 'rabbi', 'gap': 'dDP', 'gap_transform': 'signed', 'n': 4}]
    >>> pts.loc[0, "rabbi"] = float("nan")  # a metric undefined at one point
    >>> int(validity_table(pts, ["rabbi"], ["dDP"], dropna=True)["n"].iloc[0])
    3
    """
    metrics, gaps, by = list(metrics), list(gaps), list(by)
    if not metrics or not gaps:
        raise ValueError("metrics and gaps must each name at least one column")
    transform = _abs_gap_map(abs_gap, metrics)
    pairs = [(m, g, _metric_column(m, g, qualified_gaps, qualified_suffix)) for m in metrics for g in gaps]
    needed = sorted({c for _, _, c in pairs} | set(gaps) | set(by), key=str)
    _check_frame(points, needed, "points")
    _check_keys(points, by, "points")
    rows = []
    for cell, part in _cells(points, by):
        for metric, gap, column in pairs:
            used = part[part[column].notna() & part[gap].notna()] if dropna else part
            x = _numeric(used, column, "points")
            y = _numeric(used, gap, "points")
            if transform[metric]:
                y = np.abs(y)
            where = f" (cell {dict(zip(by, cell))})" if by else ""
            try:
                res = pearson(x, y, confidence=confidence)
            except ValueError as exc:
                raise ValueError(f"correlating {column!r} with {gap!r}{where}: {exc}") from exc
            rows.append(
                [*cell, metric, gap, column, "abs" if transform[metric] else "signed",
                 res.r, res.pvalue, res.ci_low, res.ci_high, res.n]
            )
    columns = [*by, "metric", "gap", "metric_column", "gap_transform", "r", "pvalue", "ci_low", "ci_high", "n"]
    out = pd.DataFrame(rows, columns=columns)
    out["n"] = out["n"].astype(np.int64)
    return out


def _pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of two vectors, NaN when either is constant or there are fewer than 3 values."""
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    xc, yc = x - x.mean(), y - y.mean()
    denom = np.sqrt((xc @ xc) * (yc @ yc))
    return float(xc @ yc / denom) if denom > 0 else float("nan")


def validity_decomposition(
    points: pd.DataFrame,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    gaps: Sequence[str] = _DEFAULT_GAPS,
    *,
    cluster: str = "system",
    abs_gap: Mapping[str, bool] | None = None,
    qualified_gaps: Sequence[str] = ("dEO",),
    qualified_suffix: str = "_qualified",
) -> pd.DataFrame:
    r"""A pooled predictive-validity correlation split into its within-cluster and between-cluster parts.

    Points come in clusters (``cluster``, e.g. the system: its points share one set of scores). For each metric
    and gap, with ``x`` and ``y`` chosen as in :func:`validity_table` (the ``_qualified`` metric for
    ``qualified_gaps``, ``|gap|`` for the metrics without a direction):

    * ``r_pooled``: Pearson's r over all points (the number :func:`validity_table` reports);
    * ``r_within``: Pearson's r after subtracting each cluster's mean from its ``x`` and its ``y``, so that only
      how the points of one cluster vary around their own centre counts (the pooled within-cluster correlation);
    * ``r_between``: Pearson's r of the clusters' means (one value per cluster; NaN with fewer than 3 clusters);
    * ``r_cluster_median``, ``r_cluster_min``, ``r_cluster_max``: the correlation within each cluster alone,
      summarised (NaN for a cluster whose ``x`` or ``y`` is constant, left out of the summary);
    * ``between_share``: the share of the pooled covariance that the clusters' means carry,
      :math:`\sum_c n_c (\bar x_c - \bar x)(\bar y_c - \bar y) / \sum_i (x_i - \bar x)(y_i - \bar y)`;
      the rest is the within-cluster covariance. Near 0: the pooled r is a within-cluster relation; near 1: it is
      made by clusters that differ in both their metric and their gap. It can leave ``[0, 1]`` when the two
      parts have opposite signs.
    * ``n`` (points) and ``n_clusters``.

    NaN metric or gap values raise (use :func:`validity_table` with ``dropna`` to inspect them).

    Examples
    --------
    Two clusters whose points fall with the metric inside each, while the cluster with the larger metric also has
    the larger gaps: the pooled r is positive, the within-cluster r is -1.

    >>> pts = pd.DataFrame({"system": ["a"] * 3 + ["b"] * 3, "rabbi": [0.0, 0.1, 0.2, 1.0, 1.1, 1.2],
    ...                     "dDP": [0.2, 0.1, 0.0, 1.2, 1.1, 1.0]})
    >>> d = validity_decomposition(pts, ["rabbi"], ["dDP"])
    >>> d[["r_pooled", "r_within", "r_cluster_median", "n", "n_clusters"]].round(3).to_dict("records")
    [{'r_pooled': 0.948, 'r_within': -1.0, 'r_cluster_median': -1.0, 'n': 6, 'n_clusters': 2}]
    >>> round(float(d["between_share"].iloc[0]), 3), bool(np.isnan(d["r_between"].iloc[0]))  # two clusters only
    (1.027, True)
    """
    metrics, gaps = list(metrics), list(gaps)
    if not metrics or not gaps:
        raise ValueError("metrics and gaps must each name at least one column")
    transform = _abs_gap_map(abs_gap, metrics)
    pairs = [(m, g, _metric_column(m, g, qualified_gaps, qualified_suffix)) for m in metrics for g in gaps]
    needed = sorted({c for _, _, c in pairs} | set(gaps) | {cluster}, key=str)
    _check_frame(points, needed, "points")
    _check_keys(points, [cluster], "points")
    codes, labels = pd.factorize(points[cluster], sort=True)
    n_clusters = len(labels)
    counts = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    rows = []
    for metric, gap, column in pairs:
        x = _numeric(points, column, "points")
        y = _numeric(points, gap, "points")
        if transform[metric]:
            y = np.abs(y)
        mx = np.bincount(codes, weights=x, minlength=n_clusters) / counts
        my = np.bincount(codes, weights=y, minlength=n_clusters) / counts
        xw, yw = x - mx[codes], y - my[codes]
        total = float(((x - x.mean()) * (y - y.mean())).sum())
        between = float((counts * (mx - x.mean()) * (my - y.mean())).sum())
        per = np.array([_pearson_r(x[codes == c], y[codes == c]) for c in range(n_clusters)])
        per = per[~np.isnan(per)]
        rows.append([
            metric, gap, column, "abs" if transform[metric] else "signed",
            _pearson_r(x, y), _pearson_r(xw, yw), _pearson_r(mx, my),
            float(np.median(per)) if per.size else float("nan"),
            float(per.min()) if per.size else float("nan"), float(per.max()) if per.size else float("nan"),
            between / total if total != 0 else float("nan"), int(x.size), int(n_clusters),
        ])
    return pd.DataFrame(rows, columns=["metric", "gap", "metric_column", "gap_transform", "r_pooled", "r_within",
                                       "r_between", "r_cluster_median", "r_cluster_min", "r_cluster_max",
                                       "between_share", "n", "n_clusters"])


# --------------------------------------------------------------------------------------------------------------
# model selection
# --------------------------------------------------------------------------------------------------------------
def rms_over_groups(df: pd.DataFrame, value: str, by: Sequence[str]) -> pd.DataFrame:
    r"""Root mean square of ``value`` over the rows of each cell of ``by``: a model's overall bias.

    ``RMS = sqrt((1 / |G|) sum_{A in G \ B} v_A^2)``: with one row per group (against the reference), the rows
    of a cell ``by = [model, subtask]`` are its groups. Signs cancel: a model biased for one group and against
    another is not "fair on average".

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, <value>, n_groups`` (``<value>`` now holds the RMS).

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["m", "m"], "rabbi": [0.3, -0.4]})
    >>> rms_over_groups(df, "rabbi", ["model"]).round(4).to_dict("records")
    [{'model': 'm', 'rabbi': 0.3536, 'n_groups': 2}]
    """
    by = list(by)
    _check_frame(df, [value, *by], "df")
    if value in by:
        raise ValueError(f"value column {value!r} must not also be in by={by}")
    _check_keys(df, by, "df")
    squares = _numeric(df, value, "df") ** 2
    work = df[by].copy()
    work["_sq"] = squares
    if by:
        agg = work.groupby(by, sort=True, observed=True).agg(ms=("_sq", "mean"), n_groups=("_sq", "size"))
        out = agg.reset_index()
    else:
        out = pd.DataFrame({"ms": [squares.mean()], "n_groups": [squares.size]})
    out.insert(len(by), value, np.sqrt(out.pop("ms").to_numpy()))
    out["n_groups"] = out["n_groups"].astype(np.int64)
    return out


def fairness_ranking(
    df: pd.DataFrame,
    value: str,
    by: Sequence[str] = ("subtask",),
    *,
    model: str = "model",
) -> pd.DataFrame:
    r"""Rank models ascending by their RMS bias over groups, within each cell of ``by`` (e.g. per subtask).

    Each row of ``df`` is one group's value for a (model, cell); a model's overall bias in a cell is
    ``RMS = sqrt(mean over its rows of value^2)`` (:func:`rms_over_groups`), and rank 1 is the least biased model.
    Ties (equal RMS) are broken by the model label in ascending order, so the ranking is a strict, deterministic
    permutation as NDCG needs (an arbitrary but reproducible choice; ``rank`` is 1..number of models).

    Parameters
    ----------
    df
        Tidy points: one row per (model, cell, group).
    value
        Bias metric or allocation-gap column.
    by
        Cells within which models are ranked (default ``["subtask"]``).
    model
        Model-label column.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, <model>, <value> (the RMS), n_groups, rank``, sorted by cell and rank.

    Examples
    --------
    >>> df = pd.DataFrame({"subtask": "se", "model": ["m1", "m1", "m2", "m2", "m3", "m3"],
    ...                    "rabbi": [0.3, -0.3, 0.1, 0.0, 0.1, 0.0]})
    >>> fairness_ranking(df, "rabbi")[["model", "rank"]].to_dict("list")
    {'model': ['m2', 'm3', 'm1'], 'rank': [1, 2, 3]}
    """
    by = list(by)
    if model in by:
        raise ValueError(f"model column {model!r} must not also be in by={by}")
    _check_frame(df, [model], "df")
    rms = rms_over_groups(df, value, [*by, model])
    rms = rms.sort_values([*by, value, model], kind="mergesort").reset_index(drop=True)
    if by:
        rms["rank"] = rms.groupby(by, sort=False, observed=True).cumcount().to_numpy() + 1
    else:
        rms["rank"] = np.arange(1, len(rms) + 1)
    rms["rank"] = rms["rank"].astype(np.int64)
    return rms


def _permutation_check(ranking: list, ideal: list) -> None:
    for name, seq in (("ideal", ideal), ("ranking", ranking)):
        seen: set = set()
        for m in seq:
            if m in seen:
                raise ValueError(f"{name} lists model {m!r} more than once; it must be a permutation")
            seen.add(m)
    ideal_set, ranking_set = set(ideal), set(ranking)
    extra = [m for m in ranking if m not in ideal_set]
    if extra:
        raise ValueError(f"ranking has model(s) {extra} that are not in ideal")
    missing = [m for m in ideal if m not in ranking_set]
    if missing:
        raise ValueError(f"ranking lacks model(s) {missing} of ideal")


def ndcg_at(ranking: Sequence[Hashable], ideal: Sequence[Hashable], n: int) -> float:
    r"""NDCG@N of a fairness ranking ``tau`` against the ideal ranking ``sigma`` (both best first).

    .. math::

        \mathrm{NDCG@}N(\tau) = \frac{\mathrm{DCG@}N(\tau)}{\mathrm{DCG@}N(\sigma)}, \qquad
        \mathrm{DCG@}N(\tau) = \sum_{i=1}^{N} \frac{\mathrm{rel}(\tau(i))}{\log_2(i + 1)}, \qquad
        \mathrm{rel}(M) = \sigma_{max} - \sigma^{-1}(M),

    where ``sigma^-1(M)`` is M's 1-based ideal rank and ``sigma_max`` the number of models, so the ideal best
    model has relevance ``sigma_max - 1`` and the ideal worst 0 (the paper prints ``sigma_max . sigma^-1``, a
    typo for this reverse ideal rank; see the book's Definitions and notation). NDCG@N = 1 exactly when ``tau`` and ``sigma`` agree on their
    first N positions, and < 1 otherwise.

    Parameters
    ----------
    ranking, ideal
        Sequences of model labels, best first; each a permutation of the same set of at least 2 models.
    n
        Cut-off N in ``1..len(ideal)``.

    Examples
    --------
    >>> ndcg_at(["m1", "m2", "m3"], ["m1", "m2", "m3"], 3)
    1.0
    >>> round(ndcg_at(["m2", "m1", "m3"], ["m1", "m2", "m3"], 2), 4)  # (1 + 2/log2 3) / (2 + 1/log2 3)
    0.8597
    """
    ranking, ideal = list(ranking), list(ideal)
    _permutation_check(ranking, ideal)
    n_models = len(ideal)
    if n_models < 2:
        raise ValueError(f"NDCG needs at least 2 models (every relevance is 0 with {n_models})")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_models:
        raise ValueError(f"n must be an integer in 1..{n_models} (the number of models), got {n!r}")
    ideal_rank = {m: i for i, m in enumerate(ideal, start=1)}
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    rel = np.array([n_models - ideal_rank[m] for m in ranking[:n]], dtype=np.float64)
    ideal_rel = n_models - np.arange(1, n + 1, dtype=np.float64)
    return float(rel @ discount / (ideal_rel @ discount))


def ndcg_table(
    points: pd.DataFrame,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    gaps: Sequence[str] = _DEFAULT_GAPS,
    *,
    ns: Sequence[int] | None = None,
    subtask: str = "subtask",
    model: str = "model",
    qualified_gaps: Sequence[str] = ("dEO",),
    qualified_suffix: str = "_qualified",
    by: Sequence[str] = (),
    average: bool = True,
) -> pd.DataFrame:
    r"""NDCG@N of each metric's fairness ranking against the ideal ranking by each allocation gap.

    Per cell of ``by`` and per subtask: ``tau`` = models ranked ascending by the RMS over groups of the metric
    (for a gap in ``qualified_gaps``, of ``<metric><qualified_suffix>``), ``sigma`` = models ranked ascending by
    the RMS over groups of the gap (:func:`fairness_ranking`, ties broken by model label);
    ``NDCG@N(tau)`` by :func:`ndcg_at`; then averaged over subtasks (``average=True``), as in the paper's
    Figure 4. Every subtask of a cell must hold the same models.

    Parameters
    ----------
    points
        Tidy frame: one row per (model, subtask, group) with metric and gap columns.
    metrics, gaps
        Metric and gap columns.
    ns
        Cut-offs N (default 1..number of models).
    subtask, model
        Column names of the subtask (job, essay topic) and model labels.
    qualified_gaps, qualified_suffix
        As in :func:`validity_table`.
    by
        Optional outer cells (e.g. task x setting x k).
    average
        Average over subtasks (default) or return one row per subtask.

    Returns
    -------
    pandas.DataFrame
        ``average=True``: columns ``*by, metric, gap, n, ndcg, n_subtasks``; ``average=False``:
        ``*by, <subtask>, metric, gap, n, ndcg``.

    Examples
    --------
    >>> pts = pd.DataFrame({"subtask": "se", "model": ["m1", "m2", "m3"],
    ...                     "rabbi": [0.1, 0.2, 0.3], "dDP": [0.05, 0.1, 0.2]})
    >>> ndcg_table(pts, ["rabbi"], ["dDP"])[["n", "ndcg"]].to_dict("list")
    {'n': [1, 2, 3], 'ndcg': [1.0, 1.0, 1.0]}
    """
    metrics, gaps, by = list(metrics), list(gaps), list(by)
    if not metrics or not gaps:
        raise ValueError("metrics and gaps must each name at least one column")
    if subtask in by or model in by or subtask == model:
        raise ValueError(f"subtask {subtask!r}, model {model!r} and by={by} must be distinct columns")
    pairs = [(m, g, _metric_column(m, g, qualified_gaps, qualified_suffix)) for m in metrics for g in gaps]
    needed = sorted({c for _, _, c in pairs} | set(gaps) | set(by) | {subtask, model}, key=str)
    _check_frame(points, needed, "points")
    _check_keys(points, [*by, subtask, model], "points")
    rows = []
    for cell, part in _cells(points, by):
        where = f" in cell {dict(zip(by, cell))}" if by else ""
        present = pd.crosstab(part[subtask], part[model]) > 0
        if not present.to_numpy().all():
            st = present.index[~present.all(axis=1).to_numpy()][0]
            lacking = list(present.columns[~present.loc[st].to_numpy()])
            raise ValueError(
                f"subtask {st!r}{where} lacks model(s) {lacking}; every subtask must rank the same models"
            )
        n_models = present.shape[1]
        cutoffs = list(range(1, n_models + 1)) if ns is None else list(ns)
        rankings: dict[str, dict] = {}
        for column in sorted({c for _, _, c in pairs} | set(gaps), key=str):
            ranked = fairness_ranking(part, column, [subtask], model=model)
            rankings[column] = {_as_key_tuple(k)[0]: list(g[model]) for k, g in ranked.groupby(subtask, sort=True)}
        for metric, gap, column in pairs:
            for st in rankings[gap]:
                tau, sigma = rankings[column][st], rankings[gap][st]
                for n in cutoffs:
                    try:
                        value = ndcg_at(tau, sigma, n)
                    except ValueError as exc:
                        raise ValueError(f"NDCG of {column!r} vs {gap!r}, subtask {st!r}{where}: {exc}") from exc
                    rows.append([*cell, st, metric, gap, n, value])
    detail = pd.DataFrame(rows, columns=[*by, subtask, "metric", "gap", "n", "ndcg"])
    detail["n"] = detail["n"].astype(np.int64)
    if not average:
        return detail
    out = (
        detail.groupby([*by, "metric", "gap", "n"], sort=False, observed=True)
        .agg(ndcg=("ndcg", "mean"), n_subtasks=("ndcg", "size"))
        .reset_index()
    )
    out["n_subtasks"] = out["n_subtasks"].astype(np.int64)
    return out


def _check_ndcg_sizes(n_models: int, n: int) -> None:
    if isinstance(n_models, bool) or not isinstance(n_models, (int, np.integer)) or n_models < 2:
        raise ValueError(f"n_models must be an integer >= 2, got {n_models!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_models:
        raise ValueError(f"n must be an integer in 1..{n_models} (the number of models), got {n!r}")


def expected_random_ndcg(n_models: int, n: int) -> float:
    r"""Expected NDCG@n of a uniformly random ranking of ``n_models`` models: the chance baseline of
    :func:`ndcg_at`.

    Every place of a random ranking holds a uniformly random model, of expected relevance
    :math:`(\sigma_{max} - 1)/2`, so with discounts :math:`d_i = 1/\log_2(i + 1)`

    .. math:: \mathbb{E}[\mathrm{NDCG@}n] = \frac{\tfrac{\sigma_{max} - 1}{2} \sum_{i \le n} d_i}
              {\sum_{i \le n} (\sigma_{max} - i)\, d_i} .

    >>> expected_random_ndcg(6, 1)
    0.5
    >>> round(expected_random_ndcg(10, 10), 4)
    0.8042
    """
    _check_ndcg_sizes(n_models, n)
    d = 1.0 / np.log2(np.arange(2, n + 2))
    return float((n_models - 1) / 2 * d.sum() / ((n_models - np.arange(1, n + 1)) @ d))


def random_ndcg_values(n_models: int, n: int, *, seed: int = 0, max_orders: int = 40_320) -> np.ndarray:
    """NDCG@n of every ordering of ``n_models`` models against the ideal one (exact, when
    ``n_models! <= max_orders``), else of ``max_orders`` seeded random orderings: the distribution behind
    :func:`expected_random_ndcg`, for the chance of a ranking scoring at least as high as a metric's.

    >>> sorted(set(np.round(random_ndcg_values(3, 1), 6).tolist()))
    [0.0, 0.5, 1.0]
    >>> bool(abs(random_ndcg_values(6, 3).mean() - expected_random_ndcg(6, 3)) < 1e-12)
    True
    """
    import itertools
    import math

    _check_ndcg_sizes(n_models, n)
    if math.factorial(n_models) <= max_orders:
        orders = np.array(list(itertools.permutations(range(n_models))))
    else:
        orders = np.random.default_rng(seed).random((max_orders, n_models)).argsort(axis=1)
    d = 1.0 / np.log2(np.arange(2, n + 2))
    # model m at the ideal position m has relevance n_models - 1 - m; the ideal DCG puts them in order
    return (n_models - 1 - orders[:, :n]).astype(float) @ d / ((n_models - np.arange(1, n + 1)) @ d)
