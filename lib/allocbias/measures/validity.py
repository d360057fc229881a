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

from .. import checks
from ..checks import require_columns
from .disaggregate import cell_frames, key_tuple
from .metrics import ABS_GAP_METRICS, STUDY_GAPS, STUDY_METRICS, _float_vector
from .splits import _row_r, half_split_masks
from .verdicts import (  # noqa: F401  (the verdict words, re-exported: validity's public names)
    VERDICT_TRACKS, VERDICT_NOT_SHOWN, VERDICT_TOO_NOISY, VERDICTS, _VERDICT_COLUMNS, _verdict_inputs, verdict_words, verdict_column, control_words, order_word, _GLUE_FIELDS, _GAP_WORDS, controls_glue, ndcg_words,
    RELIABILITY_WORDS, reliability_word, reliability_phrase,
)

__all__ = [
    "CONTROL_METRICS",
    "DEFAULT_ABS_GAP",
    "ValidityControls",
    "validity_controls",
    "expected_random_ndcg",
    "random_ndcg_values",
    "PearsonResult",
    "fairness_ranking",
    "group_spread_test",
    "ndcg_at",
    "ndcg_controls",
    "ndcg_words",
    "control_words",
    "controls_glue",
    "VERDICTS",
    "verdict_column",
    "verdict_words",
    "RELIABILITY_WORDS",
    "reliability_word",
    "reliability_phrase",
    "order_word",
    "ndcg_table",
    "pearson",
    "rms_over_groups",
    "validity_decomposition",
    "validity_table",
]

#: metrics compared with ``|gap|`` by default (:data:`allocbias.metrics.ABS_GAP_METRICS`): JSD and EMD are
#: distances (>= 0) without a direction
DEFAULT_ABS_GAP: Mapping[str, bool] = dict.fromkeys(ABS_GAP_METRICS, True)
_DEFAULT_METRICS = STUDY_METRICS
_DEFAULT_GAPS = STUDY_GAPS


# --------------------------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------------------------
def _check_frame(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    require_columns(df, columns, what, nonempty=True)


def _check_keys(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    for c in columns:
        n_missing = int(df[c].isna().sum())
        if n_missing:
            raise ValueError(f"{what} key column {c!r} has {n_missing} missing value(s)")


def _numeric(df: pd.DataFrame, column: str, what: str) -> np.ndarray:
    values = _float_vector(df[column], f"{what} column {column!r}")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"{what} column {column!r} has {int(bad.sum())} NaN/inf value(s)")
    return values


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
    arr = _float_vector(x, name)
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
    method: str = "pearson",
) -> pd.DataFrame:
    r"""Predictive validity: Pearson r (p-value, CI, n) of each bias metric against each allocation gap, or
    Spearman's rank correlation with ``method="spearman"``.

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
    method
        ``"pearson"`` (default) or ``"spearman"``: Spearman's :math:`\rho` is Pearson's :math:`r` of the ranks of
        ``x`` and ``y`` (average ranks for ties; ``y`` ranked after the ``|gap|`` transform), so ``r`` holds
        :math:`\rho`, ``pvalue`` the t test of :func:`scipy.stats.spearmanr` and ``ci_low``/``ci_high`` the
        Fisher interval of the ranks' correlation (an approximation for :math:`\rho`).

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
    >>> rho = validity_table(pts.assign(dDP=[-0.3, 0.05, 0.4, 0.1]), ["rabbi"], ["dDP"], method="spearman")
    >>> float(rho["r"].iloc[0])  # the order of the points only: ranks (1, 2, 3, 4) against (1, 2, 4, 3)
    0.8
    >>> pts.loc[0, "rabbi"] = float("nan")  # a metric undefined at one point
    >>> int(validity_table(pts, ["rabbi"], ["dDP"], dropna=True)["n"].iloc[0])
    3
    """
    metrics, gaps, by = list(metrics), list(gaps), list(by)
    if not metrics or not gaps:
        raise ValueError("metrics and gaps must each name at least one column")
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")
    transform = _abs_gap_map(abs_gap, metrics)
    pairs = [(m, g, _metric_column(m, g, qualified_gaps, qualified_suffix)) for m in metrics for g in gaps]
    needed = sorted({c for _, _, c in pairs} | set(gaps) | set(by), key=str)
    _check_frame(points, needed, "points")
    _check_keys(points, by, "points")
    rows = []
    for cell, part in cell_frames(points, by):
        for metric, gap, column in pairs:
            used = part[part[column].notna() & part[gap].notna()] if dropna else part
            x = _numeric(used, column, "points")
            y = _numeric(used, gap, "points")
            if transform[metric]:
                y = np.abs(y)
            if method == "spearman":
                x, y = stats.rankdata(x), stats.rankdata(y)
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


def _r_last_axis(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis of two arrays of the same shape (no NaN handling)."""
    xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
    return (xc * yc).sum(-1) / np.sqrt((xc ** 2).sum(-1) * (yc ** 2).sum(-1))


def group_spread_test(
    points: pd.DataFrame,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    gaps: Sequence[str] = _DEFAULT_GAPS,
    *,
    permutations: int = 2000,
    seed: int = 0,
    cell: Sequence[str] = ("system", "job"),
    group: str = "group",
    qualified_gaps: Sequence[str] = ("dEO",),
    qualified_suffix: str = "_qualified",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    r"""Is a metric's correlation with a gap different between groups? A permutation test of the spread.

    For each group :math:`A` the Pearson r between the metric and the gap runs over the cells (e.g. system x
    job), as in :func:`validity_table` with ``by=[group]`` (``|gap|`` for the metrics of
    :data:`DEFAULT_ABS_GAP`, the ``_qualified`` metric for a gap in ``qualified_gaps``). The statistic is the
    spread :math:`\max_A r_A - \min_A r_A`. Under the null that the groups are exchangeable, the (metric, gap)
    pairs of each cell are shuffled between its groups (one relabelling per permutation, the same for every
    metric and gap, ``numpy.random.default_rng(seed)``), and

    .. math:: p = \frac{1 + \#\{\text{shuffles with spread} \ge \text{observed}\}}{1 + \text{permutations}} .

    Every cell must hold the same groups (one row each). Returns ``(table, r)``: ``table`` one row per (gap,
    metric) with ``spread, null_mean, null_q95, p_value``; ``r`` the observed per-group correlations (``gap,
    metric, group, r``, groups sorted).

    >>> pts = pd.DataFrame({"system": "s", "job": list("aabbccdd"), "group": ["A", "B"] * 4,
    ...                     "rabbi": [1., 2, 2, 1, 3, 3, 4, 0], "dDP": [1., 1, 2, 2, 3, 4, 4, 3]})
    >>> table, r = group_spread_test(pts, ["rabbi"], ["dDP"], permutations=50)
    >>> r.round(3).to_dict("list")
    {'gap': ['dDP', 'dDP'], 'metric': ['rabbi', 'rabbi'], 'group': ['A', 'B'], 'r': [1.0, 0.2]}
    >>> float(table["spread"].iloc[0]), bool(0 < table["p_value"].iloc[0] <= 1)
    (0.8, True)
    """
    cell = list(cell)
    permutations = checks.count(permutations, "permutations")
    columns = [*cell, group, *gaps, *{_metric_column(m, g, qualified_gaps, qualified_suffix) for m in metrics
                                      for g in gaps}]
    _check_frame(points, columns, "points")
    rng = np.random.default_rng(seed)
    cells = points.sort_values([*cell, group]).reset_index(drop=True)
    groups = sorted(pd.unique(cells[group]))
    n_groups = len(groups)
    n_cells = len(cells) // n_groups
    if n_cells * n_groups != len(cells) or cells.groupby(cell, sort=False)[group].nunique().ne(n_groups).any():
        raise ValueError(f"every cell of {cell} must hold each of the {n_groups} groups exactly once")
    relabel = rng.random((permutations, n_cells, n_groups)).argsort(axis=2)  # a group shuffle within each cell
    rows, r_rows = [], []
    for gap in gaps:
        for metric in metrics:
            x = cells[_metric_column(metric, gap, qualified_gaps, qualified_suffix)].to_numpy().reshape(
                n_cells, n_groups)
            y = cells[gap].to_numpy().reshape(n_cells, n_groups)
            y = np.abs(y) if DEFAULT_ABS_GAP.get(metric, False) else y
            observed = _r_last_axis(x.T, y.T)  # (groups,) in sorted group order
            shuffled = _r_last_axis(*(np.take_along_axis(np.broadcast_to(v, relabel.shape), relabel, axis=2)
                                      .transpose(0, 2, 1) for v in (x, y)))  # (permutations, groups)
            null = shuffled.max(axis=1) - shuffled.min(axis=1)
            obs = float(observed.max() - observed.min())
            rows.append(dict(gap=gap, metric=metric, spread=obs, null_mean=float(null.mean()),
                             null_q95=float(np.quantile(null, 0.95)),
                             p_value=float((1 + (null >= obs - 1e-12).sum()) / (1 + permutations))))
            r_rows.extend(dict(gap=gap, metric=metric, group=g, r=float(v)) for g, v in zip(groups, observed))
    return pd.DataFrame(rows), pd.DataFrame(r_rows)


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


def _check_gain(gain: str) -> None:
    if gain not in ("linear", "exponential"):
        raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")


def _gains(relevance: np.ndarray, gain: str) -> np.ndarray:
    """The gain of each relevance: itself (``"linear"``) or :math:`2^{rel} - 1` (``"exponential"``)."""
    return relevance if gain == "linear" else 2.0 ** relevance - 1


def ndcg_at(ranking: Sequence[Hashable], ideal: Sequence[Hashable], n: int, *, gain: str = "linear") -> float:
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
    gain
        ``"linear"`` (the paper's): the gain of a place is the relevance itself; ``"exponential"``: the
        information-retrieval convention :math:`2^{\mathrm{rel}} - 1`, which weighs the ideal top places more.

    Examples
    --------
    >>> ndcg_at(["m1", "m2", "m3"], ["m1", "m2", "m3"], 3)
    1.0
    >>> round(ndcg_at(["m2", "m1", "m3"], ["m1", "m2", "m3"], 2), 4)  # (1 + 2/log2 3) / (2 + 1/log2 3)
    0.8597
    >>> # gains 2^rel - 1: (1 + 3/log2 3) / (3 + 1/log2 3)
    >>> round(ndcg_at(["m2", "m1", "m3"], ["m1", "m2", "m3"], 2, gain="exponential"), 4)
    0.7967
    """
    _check_gain(gain)
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
    return float(_gains(rel, gain) @ discount / (_gains(ideal_rel, gain) @ discount))


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
    gain: str = "linear",
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
    gain
        The gain of a place, as in :func:`ndcg_at`: ``"linear"`` (the paper's) or ``"exponential"``
        (:math:`2^{\mathrm{rel}} - 1`).

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
    _check_gain(gain)
    if subtask in by or model in by or subtask == model:
        raise ValueError(f"subtask {subtask!r}, model {model!r} and by={by} must be distinct columns")
    pairs = [(m, g, _metric_column(m, g, qualified_gaps, qualified_suffix)) for m in metrics for g in gaps]
    needed = sorted({c for _, _, c in pairs} | set(gaps) | set(by) | {subtask, model}, key=str)
    _check_frame(points, needed, "points")
    _check_keys(points, [*by, subtask, model], "points")
    rows = []
    for cell, part in cell_frames(points, by):
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
            rankings[column] = {key_tuple(k)[0]: list(g[model]) for k, g in ranked.groupby(subtask, sort=True)}
        for metric, gap, column in pairs:
            for st in rankings[gap]:
                tau, sigma = rankings[column][st], rankings[gap][st]
                for n in cutoffs:
                    try:
                        value = ndcg_at(tau, sigma, n, gain=gain)
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


def expected_random_ndcg(n_models: int, n: int, *, gain: str = "linear") -> float:
    r"""Expected NDCG@n of a uniformly random ranking of ``n_models`` models: the chance baseline of
    :func:`ndcg_at` (same ``gain``).

    Every place of a random ranking holds a uniformly random model, of expected relevance
    :math:`(\sigma_{max} - 1)/2`, so with discounts :math:`d_i = 1/\log_2(i + 1)`

    .. math:: \mathbb{E}[\mathrm{NDCG@}n] = \frac{\tfrac{\sigma_{max} - 1}{2} \sum_{i \le n} d_i}
              {\sum_{i \le n} (\sigma_{max} - i)\, d_i} ;

    with the exponential gain the expected gain of a place is the mean of :math:`2^r - 1` over
    :math:`r = 0, \dots, \sigma_{max} - 1`, :math:`(2^{\sigma_{max}} - 1)/\sigma_{max} - 1`, and the ideal place
    :math:`i` gains :math:`2^{\sigma_{max} - i} - 1`.

    >>> expected_random_ndcg(6, 1)
    0.5
    >>> round(expected_random_ndcg(10, 10), 4)
    0.8042
    >>> round(expected_random_ndcg(3, 1, gain="exponential"), 4)  # gains 0, 1, 3: mean 4/3 over the best's 3
    0.4444
    """
    _check_ndcg_sizes(n_models, n)
    _check_gain(gain)
    d = 1.0 / np.log2(np.arange(2, n + 2))
    mean_gain = (n_models - 1) / 2 if gain == "linear" else (2.0 ** n_models - 1) / n_models - 1
    return float(mean_gain * d.sum() / (_gains(n_models - np.arange(1, n + 1, dtype=np.float64), gain) @ d))


def random_ndcg_values(n_models: int, n: int, *, seed: int = 0, max_orders: int = 40_320,
                       gain: str = "linear") -> np.ndarray:
    """NDCG@n of every ordering of ``n_models`` models against the ideal one (exact, when
    ``n_models! <= max_orders``), else of ``max_orders`` seeded random orderings: the distribution behind
    :func:`expected_random_ndcg`, for the chance of a ranking scoring at least as high as a metric's (``gain`` as
    in :func:`ndcg_at`).

    >>> sorted(set(np.round(random_ndcg_values(3, 1), 6).tolist()))
    [0.0, 0.5, 1.0]
    >>> bool(abs(random_ndcg_values(6, 3).mean() - expected_random_ndcg(6, 3)) < 1e-12)
    True
    """
    import itertools
    import math

    _check_ndcg_sizes(n_models, n)
    _check_gain(gain)
    if math.factorial(n_models) <= max_orders:
        orders = np.array(list(itertools.permutations(range(n_models))))
    else:
        orders = np.random.default_rng(seed).random((max_orders, n_models)).argsort(axis=1)
    d = 1.0 / np.log2(np.arange(2, n + 2))
    # model m at the ideal position m has relevance n_models - 1 - m; the ideal DCG puts them in order
    relevance = (n_models - 1 - orders[:, :n]).astype(float)
    return _gains(relevance, gain) @ d / (_gains(n_models - np.arange(1, n + 1, dtype=np.float64), gain) @ d)


# --------------------------------------------------------------------------------------------------------------
# validity with controls: permutation null, held-out r, split-half reliability
# --------------------------------------------------------------------------------------------------------------
#: the metrics :func:`validity_controls` computes from counts (the definitions of :mod:`allocbias.metrics`):
#: the study's metrics, :data:`allocbias.metrics.STUDY_METRICS`
CONTROL_METRICS: tuple[str, ...] = STUDY_METRICS
_DESIGNS = ("pools", "draws")
_CONTROL_GAPS = STUDY_GAPS
#: elements of a (batch, cell, group, value) count tensor processed at once (bounds memory)
_COUNT_BLOCK = 1 << 22
_JSD_BINS = 10


@dataclass(frozen=True)
class _Layout:
    """The candidates in integer codes: cells (systems), groups, pools, value index on each cell's grid."""

    cell: np.ndarray  # (n,) cell code
    cells: pd.DataFrame  # one row per cell: the cell key columns
    group: np.ndarray  # (n,) group code
    groups: list  # group labels, sorted
    ref: int  # reference group code
    pool: np.ndarray  # (n,) global pool code
    pool_cell: np.ndarray  # (n_pools,) cell of each pool
    value: np.ndarray  # (n,) index on the cell's value grid
    grid: np.ndarray  # (n_cells, S) sorted distinct values per cell, padded with the cell's largest
    qualified: np.ndarray | None  # (n,) bool
    ks: list[int]
    prob: np.ndarray | None  # (K, n) fixed-pool selection probabilities (design "pools")

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.cells), len(self.groups), self.grid.shape[1]


def _control_layout(
    candidates: pd.DataFrame,
    *,
    reference: Hashable,
    k: object,
    design: str,
    cell_cols: list[str],
    pool: str,
    group: str,
    score: str,
    qualified: str | None,
) -> _Layout:
    from .selection import _exact_inputs, pool_selection_probabilities

    if design not in _DESIGNS:
        raise ValueError(f"design must be one of {_DESIGNS}, got {design!r}")
    ks = checks.quotas(k, distinct=True)
    values, mask = _exact_inputs(candidates, [*cell_cols, pool, group], score, qualified)
    cell = candidates.groupby(cell_cols, sort=True, observed=True).ngroup().to_numpy()
    first = np.unique(cell, return_index=True)[1]
    cells = candidates.iloc[first][cell_cols].reset_index(drop=True)
    group_codes, groups = pd.factorize(candidates[group], sort=True)
    groups = list(groups)
    if reference not in groups:
        raise ValueError(f"reference group {reference!r} is not in column {group!r}; groups are {groups}")
    if len(groups) < 2:
        raise ValueError(f"column {group!r} holds one group only ({groups}); nothing to compare with the reference")
    pool_codes = candidates.groupby([*cell_cols, pool], sort=True, observed=True).ngroup().to_numpy()
    pool_cell = np.zeros(int(pool_codes.max()) + 1, dtype=np.intp)
    pool_cell[pool_codes] = cell
    # each cell's sorted distinct values; value index per candidate
    order = np.lexsort((values, cell))
    sv, sc = values[order], cell[order]
    new = np.ones(sv.size, dtype=bool)
    new[1:] = (sv[1:] != sv[:-1]) | (sc[1:] != sc[:-1])
    run = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    first_run_of_cell = run[np.searchsorted(sc, np.arange(len(cells)))]
    value = np.empty(values.size, dtype=np.intp)
    value[order] = run - first_run_of_cell[sc]
    n_values = np.bincount(sc[starts], minlength=len(cells))
    grid = np.empty((len(cells), int(n_values.max())))
    grid[sc[starts], value[order][starts]] = sv[starts]
    pad = np.arange(grid.shape[1])[None, :] >= n_values[:, None]
    grid[pad] = np.repeat(grid[np.arange(len(cells)), n_values - 1], grid.shape[1] - n_values)
    prob = pool_selection_probabilities(pool_codes, values, ks) if design == "pools" else None
    return _Layout(cell, cells, group_codes.astype(np.intp), groups, groups.index(reference), pool_codes, pool_cell,
                   value, grid, mask, ks, prob)


def _count_tensor(lay: _Layout, groups: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Counts (B, cell, group, value) of candidates with labels ``groups`` (B, n), weighted by ``weight`` (B, n)."""
    n_cells, n_groups, n_values = lay.shape
    batch = groups.shape[0]
    base = (lay.cell * n_groups)[None, :] + groups
    idx = ((np.arange(batch)[:, None] * n_cells * n_groups + base) * n_values + lay.value[None, :]).ravel()
    size = batch * n_cells * n_groups * n_values
    return np.bincount(idx, weights=np.broadcast_to(weight, groups.shape).ravel(), minlength=size).reshape(
        batch, n_cells, n_groups, n_values)


def _histogram_bins(grid: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """numpy.histogram's bin index of each grid value for ``_JSD_BINS`` equal bins over [lo, hi] (same rounding)."""
    nb = _JSD_BINS
    lo_, hi_ = lo[..., None], hi[..., None]
    same = lo_ == hi_
    lo_ = np.where(same, lo_ - 0.5, lo_)
    hi_ = np.where(same, hi_ + 0.5, hi_)
    edges = np.linspace(lo_, hi_, nb + 1, axis=-1)  # the edges numpy.histogram_bin_edges computes, to the last bit
    x = np.clip(grid, lo_, hi_)  # values outside [lo, hi] hold no count of either group
    idx = ((x - lo_) / (hi_ - lo_) * nb).astype(np.intp)
    idx[idx == nb] -= 1
    idx = np.clip(idx, 0, nb - 1)
    left = np.take_along_axis(edges, idx[..., None], axis=-1)[..., 0]
    idx = np.where(x < left, idx - 1, idx)
    right = np.take_along_axis(edges, (idx + 1)[..., None], axis=-1)[..., 0]
    return np.where((x >= right) & (idx != nb - 1), idx + 1, idx)


def _metric_tensor(counts: np.ndarray, grid: np.ndarray, ref: int, metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """Every metric of every group against the reference, from counts (B, cell, group, value): (B, cell, group).

    The formulas of :mod:`allocbias.metrics` written on counts over each cell's value grid ``u``:
    RABBI ``= sum_v C_A(v) [2 C_B(< v) + C_B(v)] / (n_A n_B) - 1``; ``avg_gap = mean_A - mean_B``;
    EMD ``= sum_v |F_A(u_v) - F_B(u_v)| (u_{v+1} - u_v)``; JSD (base 2) of the two histograms on ten equal
    bins over the pooled range of A and B (numpy's binning). NaN where a group (or the reference) is absent.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        n = counts.sum(-1)
        cref = counts[:, :, ref : ref + 1, :]
        n_ref = n[:, :, ref : ref + 1]
        absent = (n == 0) | (n_ref == 0)
        out: dict[str, np.ndarray] = {}
        g = grid[None, :, None, :]
        if "avg_gap" in metrics:
            mean = (counts * g).sum(-1) / n
            out["avg_gap"] = mean - mean[:, :, ref : ref + 1]
        if "rabbi" in metrics:
            below = np.cumsum(cref, axis=-1) - cref
            u = (counts * (2.0 * below + cref)).sum(-1)
            out["rabbi"] = u / (n * n_ref) - 1.0
        if "emd" in metrics:
            cdf = np.cumsum(counts, axis=-1) / n[..., None]
            cdf_ref = cdf[:, :, ref : ref + 1, :]
            du = np.diff(grid, axis=-1)[None, :, None, :]
            out["emd"] = (np.abs(cdf - cdf_ref)[..., :-1] * du).sum(-1)
        if "jsd" in metrics:
            both = (counts + cref) > 0
            any_ = both.any(-1)
            lo_idx = np.where(any_, np.argmax(both, axis=-1), 0)
            hi_idx = np.where(any_, both.shape[-1] - 1 - np.argmax(both[..., ::-1], axis=-1), 0)
            gb = np.broadcast_to(grid[None, :, None, :], counts.shape)
            lo = np.take_along_axis(gb, lo_idx[..., None], axis=-1)[..., 0]
            hi = np.take_along_axis(gb, hi_idx[..., None], axis=-1)[..., 0]
            bins = _histogram_bins(gb, lo, hi)  # (B, cell, group, value)
            flat = (np.arange(bins[..., 0].size).reshape(bins.shape[:-1])[..., None] * _JSD_BINS + bins).ravel()
            size = bins[..., 0].size * _JSD_BINS
            p = np.bincount(flat, weights=counts.ravel(), minlength=size).reshape(*bins.shape[:-1], _JSD_BINS)
            q = np.bincount(flat, weights=np.broadcast_to(cref, counts.shape).ravel(), minlength=size).reshape(p.shape)
            p, q = p / n[..., None], q / n_ref[..., None]
            m = 0.5 * (p + q)
            from scipy.special import rel_entr

            value = 0.5 * (rel_entr(p, m).sum(-1) + rel_entr(q, m).sum(-1)) / np.log(2.0)
            out["jsd"] = np.clip(value, 0.0, 1.0)
        for name in out:
            out[name] = np.where(absent, np.nan, out[name])
    return out


def _rates(lay: _Layout, groups: np.ndarray, use: np.ndarray, design: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Exact selection rates (B, K, cell, group) over the candidates in ``use`` (B, n) with labels ``groups``;
    and over the qualified ones. NaN where a group has no candidate (design "draws": the whole cell)."""
    from .selection import draw_selection_probabilities

    n_cells, n_groups, _ = lay.shape
    batch = groups.shape[0]
    w = np.broadcast_to(use, groups.shape).astype(float)
    wq = w * lay.qualified[None, :] if lay.qualified is not None else None
    with np.errstate(invalid="ignore", divide="ignore"):
        if design == "pools":
            idx = (np.arange(batch)[:, None] * n_cells * n_groups + (lay.cell * n_groups)[None, :] + groups).ravel()
            size = batch * n_cells * n_groups
            n = np.bincount(idx, weights=w.ravel(), minlength=size)
            rate = np.stack([np.bincount(idx, weights=(w * p[None, :]).ravel(), minlength=size) / n for p in lay.prob])
            rate = rate.reshape(len(lay.ks), batch, n_cells, n_groups).transpose(1, 0, 2, 3)
            rate_q = None
            if wq is not None:
                nq = np.bincount(idx, weights=wq.ravel(), minlength=size)
                rate_q = np.stack([np.bincount(idx, weights=(wq * p[None, :]).ravel(), minlength=size) / nq
                                   for p in lay.prob])
                rate_q = rate_q.reshape(len(lay.ks), batch, n_cells, n_groups).transpose(1, 0, 2, 3)
            return rate, rate_q
        counts = _count_tensor(lay, groups, w)  # (B, cell, group, value)
        n = counts.sum(-1, keepdims=True)
        shares = np.where(n > 0, counts / n, 0.0)
        f = draw_selection_probabilities(shares, lay.ks)  # (B, cell, K, group, value)
        missing = (n[..., 0] == 0).any(-1)  # (B, cell): a pool needs every group
        rate = (shares[:, :, None] * f).sum(-1).transpose(0, 2, 1, 3)
        rate = np.where(missing[:, None, :, None], np.nan, rate)
        rate_q = None
        if wq is not None:
            cq = _count_tensor(lay, groups, wq)
            rate_q = ((cq[:, :, None] * f).sum(-1) / cq.sum(-1)[:, :, None]).transpose(0, 2, 1, 3)
            rate_q = np.where(missing[:, None, :, None], np.nan, rate_q)
        return rate, rate_q


def _blocks(total: int, per_item: int) -> list[slice]:
    step = max(1, _COUNT_BLOCK // max(per_item, 1))
    return [slice(s, min(total, s + step)) for s in range(0, total, step)]


def _evaluate(lay: _Layout, groups: np.ndarray, metric_use: np.ndarray, gap_use: np.ndarray, *, metrics: list[str],
              gap: str, design: str) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Metrics (from candidates in ``metric_use``) and gap + rates (from ``gap_use``), per point.

    Returns ``metric -> (B, P)``, the gap (B, K, P) and the impact ratio (B, K, P); a point is (cell, group !=
    reference) in cell-major order."""
    n_cells, n_groups, n_values = lay.shape
    others = [g for g in range(n_groups) if g != lay.ref]
    qualified = gap == "dEO"
    weight = metric_use.astype(float)
    if qualified:
        weight = weight * lay.qualified[None, :]
    counts = _count_tensor(lay, groups, weight)
    values = _metric_tensor(counts, lay.grid, lay.ref, metrics)
    rate, rate_q = _rates(lay, groups, gap_use, design)
    r = rate_q if qualified else rate
    batch = groups.shape[0]
    gap_values = (r - r[:, :, :, lay.ref : lay.ref + 1])[:, :, :, others].reshape(batch, len(lay.ks), -1)
    ref_rate = r[:, :, :, lay.ref : lay.ref + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where((ref_rate == 0) & (r == 0), 1.0, r / ref_rate)
    ratio = ratio[:, :, :, others].reshape(batch, len(lay.ks), -1)
    return ({m: v[:, :, others].reshape(batch, -1) for m, v in values.items()}, gap_values, ratio)


def _shuffled_groups(lay: _Layout, rng: np.random.Generator, n_perm: int) -> np.ndarray:
    """``n_perm`` relabellings (n_perm, n): group labels shuffled among the candidates of each pool."""
    base = np.argsort(lay.pool, kind="stable")
    keys = lay.pool[None, :] + rng.random((n_perm, lay.pool.size))
    order = np.argsort(keys, axis=1)
    out = np.empty((n_perm, lay.pool.size), dtype=np.intp)
    np.put_along_axis(out, order, lay.group[base][None, :], axis=1)
    return out


def _split_halves(lay: _Layout, rng: np.random.Generator, n_splits: int) -> np.ndarray:
    """``n_splits`` masks (n_splits, n): True for the candidates of a random half of each cell's pools."""
    per_cell = np.bincount(lay.pool_cell, minlength=len(lay.cells))
    if (per_cell < 2).any():
        lonely = lay.cells.iloc[int(np.argmax(per_cell < 2))].to_dict()
        raise ValueError(f"cell {lonely} has {int(per_cell.min())} pool(s): the held-out test needs at least 2 "
                         "pools per cell (see the pool parameter)")
    in_a, _ = half_split_masks(lay.pool_cell, n_splits, rng)  # the split of allocbias.reliability
    return in_a[:, lay.pool]


@dataclass(frozen=True)
class ValidityControls:
    """The result of :func:`validity_controls`.

    Attributes
    ----------
    table
        One row per (metric, k): ``metric, k, gap, n_points, r, r_lo, r_hi, p`` (Pearson over the points),
        ``null_mean, null_lo, null_hi`` (the permutation null's mean and 95% range), ``null_percentile`` (share of
        null r at or below the observed r, in %), ``p_perm`` (one-sided permutation p-value, r as large or
        larger), ``heldout_mean, heldout_lo, heldout_hi`` (r with the metric from one half of the pools and the
        gap from the other, over the splits: mean and 95% range), ``reliability`` (mean split-half r of the gap
        with itself), ``reliability_lo, reliability_hi``, ``ceiling`` (its square root: the bound on the held-out r),
        ``heldout_ci_lo, heldout_ci_hi`` (the held-out r's bootstrap interval over systems),
        ``heldout_null_mean, heldout_null_lo, heldout_null_hi, heldout_p_null`` (the held-out r's own permutation
        null), ``n_boot``, ``bootstrap`` (``"systems"`` or ``"points"``),
        ``ir_below_08`` (points
        whose impact ratio, the group's selection rate over the reference's, is below 0.8),
        ``ir_below_08_null_mean`` and ``ir_below_08_null_hi`` (the same count under the null: mean, 97.5th
        percentile), ``n_perm``, ``n_splits``.
    points
        One row per (system..., group, k): every metric and the gap (signed), and ``impact_ratio``.
    """

    table: pd.DataFrame
    points: pd.DataFrame


def _quantiles(v: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, as intended
            return (np.nanmean(v, axis=axis), np.nanquantile(v, 0.025, axis=axis), np.nanquantile(v, 0.975, axis=axis))


def _control_setup(candidates, reference, k, metrics, gap, design, n_perm, n_splits, seed, cell_cols, pool, group,
                   score, qualified):
    metrics = list(metrics)
    unknown = [m for m in metrics if m not in CONTROL_METRICS]
    if not metrics or unknown:
        raise ValueError(f"metrics must name some of {CONTROL_METRICS}, got {metrics}")
    if gap not in _CONTROL_GAPS:
        raise ValueError(f"gap must be one of {_CONTROL_GAPS}, got {gap!r}")
    if gap == "dEO" and qualified is None:
        raise ValueError("gap='dEO' needs the qualified parameter (a boolean column): EO is about qualified candidates")
    n_perm = checks.count(n_perm, "n_perm", 1)
    n_splits = checks.count(n_splits, "n_splits", 1)
    seed = checks.seed(seed)
    lay = _control_layout(candidates, reference=reference, k=k, design=design, cell_cols=cell_cols, pool=pool,
                          group=group, score=score, qualified=qualified)
    return metrics, n_perm, n_splits, lay


def _run_controls(lay: _Layout, metrics: list[str], gap: str, design: str, n_perm: int, n_splits: int, seed: int,
                  heldout_null: bool = False):
    """Observed, permuted and split-half values of every metric and gap (the work behind both control tables);
    with ``heldout_null`` also the permuted values split into halves (the held-out r's null), else None."""
    rng = np.random.default_rng(seed)
    n = lay.group.size
    n_cells, n_groups, n_values = lay.shape
    everyone = np.ones((1, n), dtype=bool)
    observed = _evaluate(lay, lay.group[None, :], everyone, everyone, metrics=metrics, gap=gap, design=design)
    shuffled = _shuffled_groups(lay, rng, n_perm)
    halves = _split_halves(lay, rng, n_splits)
    per_item = n_cells * n_groups * n_values * (max(lay.ks) + 1 if design == "draws" else 1)
    perm_parts = [_evaluate(lay, shuffled[s], everyone, everyone, metrics=metrics, gap=gap, design=design)
                  for s in _blocks(n_perm, per_item)]
    split_a, split_b = [], []
    for s in _blocks(n_splits, per_item):
        groups = np.broadcast_to(lay.group, halves[s].shape)
        split_a.append(_evaluate(lay, groups, halves[s], halves[s], metrics=metrics, gap=gap, design=design))
        split_b.append(_evaluate(lay, groups, ~halves[s], ~halves[s], metrics=metrics, gap=gap, design=design))
    # the held-out r's own null: permutation p relabelled as above, then split by split p mod n_splits
    null_a, null_b = [], []
    for s in _blocks(n_perm, per_item) if heldout_null else []:
        use = halves[np.arange(s.start, s.stop) % n_splits]
        null_a.append(_evaluate(lay, shuffled[s], use, use, metrics=metrics, gap=gap, design=design))
        null_b.append(_evaluate(lay, shuffled[s], ~use, ~use, metrics=metrics, gap=gap, design=design))

    def stack(parts):
        return ({m: np.concatenate([p[0][m] for p in parts]) for m in metrics},
                np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))

    nulls = (stack(null_a), stack(null_b)) if heldout_null else (None, None)
    return observed, stack(perm_parts), stack(split_a), stack(split_b), *nulls, rng


def _transform(metric: str, gap_values: np.ndarray) -> np.ndarray:
    return np.abs(gap_values) if DEFAULT_ABS_GAP.get(metric, False) else gap_values


def validity_controls(
    candidates: pd.DataFrame,
    *,
    reference: Hashable,
    k: int | Sequence[int],
    metrics: Sequence[str] = CONTROL_METRICS,
    gap: str = "dDP",
    design: str = "pools",
    n_perm: int = 200,
    n_splits: int = 50,
    seed: int = 0,
    system: str | Sequence[str] = "system",
    pool: str = "pool",
    group: str = "group",
    score: str = "score",
    qualified: str | None = None,
    per_group: bool = False,
    n_boot: int = 200,
) -> ValidityControls:
    r"""Predictive validity of bias metrics with its controls: a permutation null, a held-out r, the gap's reliability.

    Points are (system, group != reference, k). At each point the bias metric of the group against the reference
    group (RABBI, the average score gap δ, JSD, EMD: the definitions of :mod:`allocbias.metrics`, computed here
    from counts over each system's distinct scores for every point and permutation at once) is set beside the
    exact selection-rate gap (:func:`allocbias.selection.exact_pool_rates` for ``design="pools"``, natural fixed
    pools such as the candidates of one vacancy; :func:`allocbias.selection.exact_draw_rates` for
    ``design="draws"``, one independent draw per group within each system). For ``gap="dEO"`` the metric is
    computed on qualified candidates only and the gap is the rate gap among qualified candidates. RABBI and δ are
    compared with the signed gap, JSD and EMD with ``|gap|``. Beside Pearson's r and its interval
    (:func:`pearson`):

    * **permutation null**: group labels shuffled among the candidates of each pool (``n_perm`` seeded
      shuffles), metric and gap recomputed, the same r: its mean, 95% range and the observed r's percentile.
      A metric and a gap computed from the same scores share their sampling noise; the null shows the r that
      noise alone gives.
    * **held-out r**: the metric from a random half of each system's pools, the gap from the other half
      (``n_splits`` seeded splits); mean and 95% range over the splits (``heldout_lo, heldout_hi``: how much it
      moves with the split alone, not a sampling interval). Beside it its **sampling interval**
      ``heldout_ci_lo, heldout_ci_hi``: ``n_boot`` bootstrap replicates, replicate b taking split b mod
      ``n_splits`` and resampling the systems (cells) with replacement, all points of a cell together (the
      points themselves when there are fewer than 3 cells; ``bootstrap`` says which), as
      :func:`allocbias.measures.reliability.forecast_test` does; and the **held-out r's own permutation null**
      ``heldout_null_mean, heldout_null_lo, heldout_null_hi`` (mean, 95% range) and ``heldout_p_null``: each
      label shuffle of the in-sample null split into halves (split p mod ``n_splits``) and the held-out r
      recomputed. :func:`verdict_words` reads the verdict from these.
    * **reliability**: on the same splits, r of the gap from one half with the gap from the other (the split-half
      reliability :math:`\rho` of a half's gap). Writing a half's gap as a true gap plus independent noise, no
      metric from the other half correlates with it by more than :math:`\sqrt{\rho}` on average (its correlation
      with the true gap; the classical attenuation bound), reported as ``ceiling``. A held-out r near the ceiling
      means the metric predicts all of the gap that can be predicted; it can exceed :math:`\rho` itself when the
      metric measures the true gap with less noise than a half's gap does.
    * **impact ratios below 0.8**: points whose selection rate over the reference's is below 0.8 (0/0 counts as
      1), against the same permutation null.

    Parameters
    ----------
    candidates
        One row per scored candidate: ``system`` column(s), ``pool``, ``group``, ``score`` (higher is better,
        finite) and optionally ``qualified`` (boolean).
    reference
        The reference group.
    k
        Quota(s) of the top-k selection.
    metrics
        Some of :data:`CONTROL_METRICS` (the study's metrics ``("rabbi", "avg_gap", "jsd", "emd")``).
    gap
        ``"dDP"`` or ``"dEO"`` (needs ``qualified``).
    design
        ``"pools"`` (the candidates of a pool compete) or ``"draws"`` (one draw per group within each system;
        the pools are then only the units shuffled and split, e.g. a résumé or a run).
    n_perm, n_splits, seed
        Permutations, split halves and the seed of both (the same seed gives the same tables).
    n_boot
        Bootstrap replicates of the held-out r's sampling interval (drawn after the permutations and splits, so
        the other columns do not depend on it).
    system, pool, group, score, qualified
        Column names; ``system`` may be a list (e.g. ``["system", "job"]``: one cell per system and job).
    per_group
        One row per (group, metric, k) instead of per (metric, k): every statistic over that group's points
        only (one per system), the permutations and splits shared by all groups.

    Returns
    -------
    ValidityControls
        ``.table`` (one row per metric and k) and ``.points``.

    Examples
    --------
    Eight systems whose group B is shifted by a different amount, in pools of one A and one B candidate. RABBI
    correlates with the gap in-sample, but so does a shuffle of the labels within pools (the metric and the gap
    share the pools' noise); out of sample the r drops, below the ceiling set by the gap's reliability.

    >>> rng = np.random.default_rng(0)
    >>> rows = [dict(system=s, pool=p, group=g, score=float(rng.integers(0, 6) + (s / 2 if g == "B" else 0)))
    ...         for s in range(8) for p in range(20) for g in "AB"]
    >>> res = validity_controls(pd.DataFrame(rows), reference="A", k=1, metrics=["rabbi"], n_perm=50, n_splits=10)
    >>> row = res.table.iloc[0]
    >>> int(row["n_points"]), bool(row["r"] > 0.9), bool(row["null_mean"] > 0.5)
    (8, True, True)
    >>> bool(row["heldout_mean"] < row["r"]), bool(row["heldout_mean"] <= row["ceiling"])
    (True, True)
    """
    cell_cols = [system] if isinstance(system, str) else list(system)
    metrics, n_perm, n_splits, lay = _control_setup(candidates, reference, k, metrics, gap, design, n_perm, n_splits,
                                                    seed, cell_cols, pool, group, score, qualified)
    observed, perm, half_a, half_b, null_a, null_b, rng = _run_controls(lay, metrics, gap, design, n_perm, n_splits,
                                                                         int(seed), heldout_null=True)
    obs_metrics, obs_gap, obs_ratio = observed
    others = [g for g in range(len(lay.groups)) if g != lay.ref]
    n_cells = len(lay.cells)
    if per_group:
        selections = [({group: lay.groups[g]}, np.arange(n_cells) * len(others) + i) for i, g in enumerate(others)]
    else:
        selections = [({}, np.arange(n_cells * len(others)))]
    # the held-out r's sampling interval: replicate b takes split b mod n_splits and resamples the systems (cells)
    # with replacement, all points of a cell together; with fewer than 3 cells it resamples the points
    n_boot = checks.count(n_boot, "n_boot", 1)
    which = np.arange(n_boot) % n_splits
    bootstrap = "systems" if n_cells >= 3 else "points"
    chosen = rng.integers(0, n_cells if n_cells >= 3 else n_cells * len(others), size=(n_boot, n_cells if n_cells >= 3
                                                                                        else n_cells * len(others)))
    rows = []
    for label, cols in selections:
        if bootstrap == "systems":
            take = cols.reshape(n_cells, -1)[chosen].reshape(n_boot, -1)
        else:
            take = cols[chosen % cols.size]
        for ki, kk in enumerate(lay.ks):
            below = (perm[2][:, ki][:, cols] < 0.8).sum(-1).astype(float)
            for m in metrics:
                x, y = obs_metrics[m][0, cols], _transform(m, obs_gap[0, ki, cols])
                ok = np.isfinite(x) & np.isfinite(y)
                where = f" ({group} {label[group]!r})" if label else ""
                try:
                    res = pearson(x[ok], y[ok])
                except ValueError as exc:
                    raise ValueError(f"correlating {m!r} with {gap!r} at k={kk}{where}: {exc}") from exc
                null = _row_r(perm[0][m][:, cols], _transform(m, perm[1][:, ki][:, cols]))
                held = _row_r(half_a[0][m][:, cols], _transform(m, half_b[1][:, ki][:, cols]))
                rel = _row_r(_transform(m, half_a[1][:, ki][:, cols]), _transform(m, half_b[1][:, ki][:, cols]))
                null_mean, null_lo, null_hi = _quantiles(null)
                held_mean, held_lo, held_hi = _quantiles(held)
                rel_mean, rel_lo, rel_hi = _quantiles(rel)
                valid = null[np.isfinite(null)]
                boot = _row_r(np.take_along_axis(half_a[0][m][which], take, axis=1),
                              _transform(m, np.take_along_axis(half_b[1][which, ki], take, axis=1)))
                _, ci_lo, ci_hi = _quantiles(boot)
                held_null = _row_r(null_a[0][m][:, cols], _transform(m, null_b[1][:, ki][:, cols]))
                hn_mean, hn_lo, hn_hi = _quantiles(held_null)
                hn_valid = held_null[np.isfinite(held_null)]
                rows.append(dict(
                    **label, metric=m, k=kk, gap=gap, n_points=res.n, r=res.r, r_lo=res.ci_low, r_hi=res.ci_high,
                    p=res.pvalue, null_mean=null_mean, null_lo=null_lo, null_hi=null_hi,
                    null_percentile=100.0 * float((valid <= res.r).mean()) if valid.size else float("nan"),
                    p_perm=float((1 + (valid >= res.r).sum()) / (1 + valid.size)),
                    heldout_mean=held_mean, heldout_lo=held_lo, heldout_hi=held_hi,
                    heldout_ci_lo=ci_lo, heldout_ci_hi=ci_hi, heldout_null_mean=hn_mean, heldout_null_lo=hn_lo,
                    heldout_null_hi=hn_hi,
                    heldout_p_null=float((1 + (hn_valid >= held_mean).sum()) / (1 + hn_valid.size))
                    if np.isfinite(held_mean) else float("nan"),
                    reliability=rel_mean, reliability_lo=rel_lo, reliability_hi=rel_hi,
                    ceiling=float(np.sqrt(max(rel_mean, 0.0))) if np.isfinite(rel_mean) else float("nan"),
                    ir_below_08=int((obs_ratio[0, ki, cols] < 0.8).sum()), ir_below_08_null_mean=float(below.mean()),
                    ir_below_08_null_hi=float(np.quantile(below, 0.975)), n_perm=n_perm, n_splits=n_splits,
                    n_boot=n_boot, bootstrap=bootstrap))
    table = pd.DataFrame(rows)
    for c in ("null_mean", "null_lo", "null_hi", "heldout_mean", "heldout_lo", "heldout_hi", "heldout_ci_lo",
              "heldout_ci_hi", "heldout_null_mean", "heldout_null_lo", "heldout_null_hi", "reliability",
              "reliability_lo", "reliability_hi"):
        table[c] = table[c].astype(float)
    base = lay.cells.loc[np.repeat(np.arange(len(lay.cells)), len(others))].reset_index(drop=True)
    base[group] = [lay.groups[g] for _ in range(len(lay.cells)) for g in others]
    frames = []
    for ki, kk in enumerate(lay.ks):
        frame = base.copy()
        frame["k"] = kk
        for m in metrics:
            frame[m] = obs_metrics[m][0]
        frame[gap] = obs_gap[0, ki]
        frame["impact_ratio"] = obs_ratio[0, ki]
        frames.append(frame)
    return ValidityControls(table=table, points=pd.concat(frames, ignore_index=True))


def _ndcg_batch(metric_rms: np.ndarray, gap_rms: np.ndarray, ns: list[int]) -> np.ndarray:
    """NDCG@n of the ranking by ``metric_rms`` against the ideal by ``gap_rms`` (both (B, subtask, model),
    ascending, ties by model order), averaged over subtasks: (B, len(ns))."""
    n_models = metric_rms.shape[-1]
    tau = np.argsort(metric_rms, axis=-1, kind="stable")
    sigma = np.argsort(gap_rms, axis=-1, kind="stable")
    ideal_rank = np.empty_like(sigma)
    np.put_along_axis(ideal_rank, sigma, np.arange(1, n_models + 1)[None, None, :], axis=-1)
    rel = n_models - np.take_along_axis(ideal_rank, tau, axis=-1)  # relevance of the model at each place
    discount = 1.0 / np.log2(np.arange(2, n_models + 2))
    dcg = np.cumsum(rel * discount, axis=-1)
    ideal = np.cumsum((n_models - np.arange(1, n_models + 1)) * discount)
    out = (dcg / ideal)[..., np.array(ns) - 1]  # (B, subtask, len(ns))
    return out.mean(axis=1)


def ndcg_controls(
    candidates: pd.DataFrame,
    *,
    reference: Hashable,
    k: int | Sequence[int],
    metrics: Sequence[str] = CONTROL_METRICS,
    gap: str = "dDP",
    design: str = "pools",
    n_perm: int = 200,
    n_splits: int = 50,
    seed: int = 0,
    model: str = "model",
    subtask: str = "subtask",
    pool: str = "pool",
    group: str = "group",
    score: str = "score",
    qualified: str | None = None,
    ns: Sequence[int] | None = None,
    n_random: int = 2000,
) -> pd.DataFrame:
    r"""Model selection by a bias metric (NDCG, :func:`ndcg_table`) with its controls.

    Per subtask, models are ranked ascending by the root mean square over groups of the metric and, ideally, of
    the allocation gap (exact rates as in :func:`validity_controls`: ``design="pools"`` or ``"draws"`` within
    each (model, subtask)); ``NDCG@n`` of the first against the second (:func:`ndcg_at`) is averaged over
    subtasks. Beside it:

    * ``random_ndcg``: the expected NDCG of a uniformly random ordering (:func:`expected_random_ndcg`) and
      ``random_hi``, the 97.5th percentile of the subtask-average NDCG of random orderings (``n_random`` seeded
      draws from :func:`random_ndcg_values`);
    * the permutation null (group labels shuffled within pools; ``null_mean, null_lo, null_hi`` and the observed
      NDCG's ``null_percentile``): the agreement between metric and gap rankings that the shared noise alone gives;
    * the held-out NDCG: the metric's ranking from one random half of each (model, subtask)'s pools, the ideal
      ranking from the other half (``heldout_mean, heldout_lo, heldout_hi`` over ``n_splits`` splits), and the
      same for the gap's own half-A ranking against half B (``gap_heldout_mean``: the ceiling of a metric's).

    Every (model, subtask) pair must be present. Returns one row per (metric, k, n) with ``metric, k, gap, n,
    ndcg, random_ndcg, random_hi, null_mean, null_lo, null_hi, null_percentile, heldout_mean, heldout_lo,
    heldout_hi, gap_heldout_mean, n_models, n_subtasks``.

    Parameters
    ----------
    candidates, reference, k, metrics, gap, design, n_perm, n_splits, seed, pool, group, score, qualified
        As in :func:`validity_controls` (the same checks and the same permutations and splits for the same seed).
    model, subtask
        Column names: the models ranked, and the subtasks that each rank them (one cell per model and subtask).
    ns
        Cut-offs ``n`` of NDCG@n (default ``1 .. n_models``).
    n_random
        Draws of subtask-averaged random orderings behind ``random_hi``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> rows = [dict(model=m, subtask=t, pool=p, group=g, score=float(rng.integers(0, 8) + (m if g == "B" else 0)))
    ...         for m in range(5) for t in range(2) for p in range(30) for g in "AB"]
    >>> out = ndcg_controls(pd.DataFrame(rows), reference="A", k=1, metrics=["rabbi"], n_perm=40, n_splits=10, ns=[5])
    >>> row = out.iloc[0]
    >>> bool(row["ndcg"] > 0.95), bool(row["ndcg"] > row["random_hi"]), bool(row["heldout_mean"] > row["random_ndcg"])
    (True, True, True)
    """
    if model == subtask:
        raise ValueError(f"model and subtask must be different columns, both are {model!r}")
    metrics, n_perm, n_splits, lay = _control_setup(candidates, reference, k, metrics, gap, design, n_perm, n_splits,
                                                    seed, [model, subtask], pool, group, score, qualified)
    n_random = checks.count(n_random, "n_random", 1)
    models = pd.unique(lay.cells[model]).tolist()
    subtasks = pd.unique(lay.cells[subtask]).tolist()
    n_models, n_subtasks = len(models), len(subtasks)
    if n_models < 2:
        raise ValueError(f"column {model!r} holds {n_models} model(s): ranking needs at least 2")
    if len(lay.cells) != n_models * n_subtasks:
        have = set(map(tuple, lay.cells[[model, subtask]].to_numpy().tolist()))
        lacking = next((m, t) for m in models for t in subtasks if (m, t) not in have)
        raise ValueError(f"model {lacking[0]!r} has no candidate for {subtask} {lacking[1]!r}: every subtask must "
                         "rank the same models")
    cutoffs = list(range(1, n_models + 1)) if ns is None else list(ns)
    for n in cutoffs:
        _check_ndcg_sizes(n_models, n)
    observed, perm, half_a, half_b, *_ = _run_controls(lay, metrics, gap, design, n_perm, n_splits, int(seed))
    n_others = len(lay.groups) - 1

    def rms(values: np.ndarray) -> np.ndarray:  # (B, cells * others) -> (B, subtask, model), cells model-major
        v = values.reshape(values.shape[0], n_models, n_subtasks, n_others)
        with np.errstate(invalid="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out = np.sqrt(np.nanmean(v**2, axis=-1))
        return np.where(np.isnan(out), np.inf, out).transpose(0, 2, 1)

    rng = np.random.default_rng(seed)
    random_hi = {}  # one set of random orderings per cut-off, shared by every metric and quota
    for n in cutoffs:
        chance = random_ndcg_values(n_models, n, seed=int(seed))
        random_hi[n] = float(np.quantile(rng.choice(chance, size=(n_random, n_subtasks)).mean(axis=1), 0.975))
    rows = []
    for ki, kk in enumerate(lay.ks):
        gap_obs, gap_perm = rms(observed[1][:, ki]), rms(perm[1][:, ki])
        gap_a, gap_b = rms(half_a[1][:, ki]), rms(half_b[1][:, ki])
        gap_held = _ndcg_batch(gap_a, gap_b, cutoffs)
        for m in metrics:
            obs = _ndcg_batch(rms(observed[0][m]), gap_obs, cutoffs)[0]
            null = _ndcg_batch(rms(perm[0][m]), gap_perm, cutoffs)
            held = _ndcg_batch(rms(half_a[0][m]), gap_b, cutoffs)
            null_mean, null_lo, null_hi = _quantiles(null)
            held_mean, held_lo, held_hi = _quantiles(held)
            for i, n in enumerate(cutoffs):
                rows.append(dict(
                    metric=m, k=kk, gap=gap, n=n, ndcg=float(obs[i]), random_ndcg=expected_random_ndcg(n_models, n),
                    random_hi=random_hi[n], null_mean=float(null_mean[i]),
                    null_lo=float(null_lo[i]), null_hi=float(null_hi[i]),
                    null_percentile=100.0 * float((null[:, i] <= obs[i] + 1e-12).mean()),
                    heldout_mean=float(held_mean[i]), heldout_lo=float(held_lo[i]), heldout_hi=float(held_hi[i]),
                    gap_heldout_mean=float(gap_held[:, i].mean()), n_models=n_models, n_subtasks=n_subtasks))
    return pd.DataFrame(rows)
