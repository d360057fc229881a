r"""How reliable is an audit's statistic, and how large must the audit be? Split-half reliability, Spearman--Brown,
measured reliability curves and the forecast test.

An audit measures a statistic per (system, group) point -- a selection-rate gap against the reference group, a
bias metric -- from a finite set of *pools* (a vacancy's candidates, a run, an answer). A second audit of the
same systems on new pools gives other values. How much the two agree is the statistic's reliability:

* :func:`split_half_reliability`: the pools of each stratum (by default each system) split at random into two
  halves (seeded, many splits); the statistic computed on each half; Pearson's r of half A's points with half
  B's. Its mean over the splits is the reliability of a statistic computed from one half's pools; its 2.5th and
  97.5th percentiles show how much it moves with the split.
* :func:`spearman_brown` (Spearman 1910; Brown 1910): the reliability of the same statistic on ``m`` times the
  pools, :math:`\rho_m = m\rho / (1 + (m-1)\rho)`, and :func:`size_for_reliability`, the pools needed for a
  target reliability, :math:`n^* = n\,t(1-\rho) / (\rho(1-t))`.
* :func:`reliability_curve`: the reliability measured on subsamples of several sizes beside the Spearman--Brown
  prediction from the smallest, so the extrapolation is checked on the data rather than assumed.
* :func:`forecast_test`: for each bias metric and for the gap itself, the held-out r (the statistic from one
  half, the gap from the other) at a given size, with a sampling interval (a bootstrap of the systems), the
  held-out r's own permutation null, the reliability of the gap it is tested against (its square
  root is the ceiling on the held-out r) and a disattenuated r (Spearman's correction for attenuation) with its
  interval.
* :func:`disattenuate`: Spearman's correction :math:`r / \sqrt{\rho_x \rho_y}`.

The split of pools into halves (:func:`half_split_masks`) is the one :func:`allocbias.validity.validity_controls`
uses for its held-out r and reliability. All functions are pure and raise ``ValueError`` naming the offending
parameter or column.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import checks
from ..checks import require_columns
from .metrics import STUDY_METRICS
from .splits import _row_r, half_split_masks

__all__ = [
    "SplitHalf",
    "disattenuate",
    "forecast_test",
    "half_split_masks",
    "reliability_curve",
    "size_for_reliability",
    "spearman_brown",
    "split_half_reliability",
]


# --------------------------------------------------------------------------------------------------------------
# Spearman--Brown and Spearman's correction
# --------------------------------------------------------------------------------------------------------------
def _as_array(x: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or an array of numbers, got {x!r}") from exc
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {x!r}")
    return arr


def _out(arr: np.ndarray, *inputs: Any) -> float | np.ndarray:
    return float(arr) if all(np.ndim(i) == 0 for i in inputs) else arr


def spearman_brown(rho: float | Sequence[float] | np.ndarray, m: float | Sequence[float] | np.ndarray
                   ) -> float | np.ndarray:
    r"""Reliability of a statistic on ``m`` times the data, from its reliability ``rho`` (Spearman--Brown).

    .. math:: \rho_m = \frac{m\,\rho}{1 + (m - 1)\,\rho}

    The prophecy assumes the added data are parallel to the data measured: each pool adds the same true signal
    and independent noise of the same size. ``m < 1`` steps down (e.g. ``m = 1/n`` gives one pool's reliability).
    ``rho`` must lie in [0, 1] (a measured reliability at or below 0 gives no basis to extrapolate; clip it
    yourself if you mean 0) and ``m`` must be positive. Arrays broadcast.

    >>> round(spearman_brown(0.5, 2), 4), round(spearman_brown(0.2, 4), 4), spearman_brown(0.0, 10)
    (0.6667, 0.5, 0.0)
    >>> spearman_brown([0.1, 0.5], 3).round(3)
    array([0.25, 0.75])
    """
    r, mm = _as_array(rho, "rho"), _as_array(m, "m")
    if ((r < 0) | (r > 1)).any():
        raise ValueError(f"rho must lie in [0, 1], got {rho!r}")
    if (mm <= 0).any():
        raise ValueError(f"m must be positive, got {m!r}")
    # in [0, 1] exactly for rho in [0, 1]; the clip only removes rounding (rho = 1, m < 1 gives 1 + 2e-16)
    return _out(np.clip(mm * r / (1.0 + (mm - 1.0) * r), 0.0, 1.0), rho, m)


def size_for_reliability(rho: float | Sequence[float] | np.ndarray, n: float | Sequence[float] | np.ndarray,
                         target: float | Sequence[float] | np.ndarray) -> float | np.ndarray:
    r"""The size (pools, runs, vacancies) at which a statistic measured with reliability ``rho`` on ``n`` units
    reaches the reliability ``target``: Spearman--Brown solved for ``m`` and multiplied by ``n``.

    .. math:: n^* = n \, \frac{t\,(1 - \rho)}{\rho\,(1 - t)}

    ``rho`` and ``target`` must lie strictly between 0 and 1 (at ``rho <= 0`` no size is enough), ``n`` must be
    positive. The result is not rounded: round it up for a count of units. Arrays broadcast.

    >>> round(size_for_reliability(0.5, 10, 0.8), 6)
    40.0
    >>> round(size_for_reliability(0.05, 15, 0.8), 1)  # a half of 15 pools with reliability 0.05
    1140.0
    >>> size_for_reliability(0.0, 15, 0.8)
    Traceback (most recent call last):
    ...
    ValueError: rho must lie in (0, 1), got 0.0: with no reliability no size reaches the target
    """
    r, nn, t = _as_array(rho, "rho"), _as_array(n, "n"), _as_array(target, "target")
    if ((r <= 0) | (r >= 1)).any():
        raise ValueError(f"rho must lie in (0, 1), got {rho!r}: with no reliability no size reaches the target")
    if ((t <= 0) | (t >= 1)).any():
        raise ValueError(f"target must lie in (0, 1), got {target!r}")
    if (nn <= 0).any():
        raise ValueError(f"n must be positive, got {n!r}")
    return _out(nn * t * (1.0 - r) / (r * (1.0 - t)), rho, n, target)


def disattenuate(r: float | Sequence[float] | np.ndarray, rel_x: float | Sequence[float] | np.ndarray,
                 rel_y: float | Sequence[float] | np.ndarray) -> float | np.ndarray:
    r"""Spearman's correction for attenuation: the correlation of the true values behind two noisy measures.

    .. math:: r^* = \frac{r_{xy}}{\sqrt{\rho_x\,\rho_y}}

    with :math:`\rho_x, \rho_y` the reliabilities of the two measures (here split-half reliabilities of the
    halves they come from). It is only as good as the reliabilities: small ones make it large and unstable (it
    can exceed 1), so report it with an interval (:func:`forecast_test` does). Reliabilities must be in (0, 1].

    >>> round(disattenuate(0.3, 0.5, 0.5), 4), round(disattenuate(0.2, 0.9, 0.1), 4)
    (0.6, 0.6667)
    """
    rr, x, y = _as_array(r, "r"), _as_array(rel_x, "rel_x"), _as_array(rel_y, "rel_y")
    for name, v, raw in (("rel_x", x, rel_x), ("rel_y", y, rel_y)):
        if ((v <= 0) | (v > 1)).any():
            raise ValueError(f"{name} must lie in (0, 1], got {raw!r}: Spearman's correction needs a positive "
                             "reliability")
    if ((rr < -1) | (rr > 1)).any():
        raise ValueError(f"r must lie in [-1, 1], got {r!r}")
    return _out(rr / np.sqrt(x * y), r, rel_x, rel_y)


# --------------------------------------------------------------------------------------------------------------
# split-half reliability of a per-(system, group) statistic
# --------------------------------------------------------------------------------------------------------------
def _summary(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return float("nan"), float("nan"), float("nan")
    lo, hi = (1 - confidence) / 2, (1 + confidence) / 2
    return float(finite.mean()), float(np.quantile(finite, lo)), float(np.quantile(finite, hi))


@dataclass(frozen=True)
class SplitHalf:
    """The result of :func:`split_half_reliability`.

    Attributes
    ----------
    reliability
        Mean over the splits of Pearson's r between the two halves' statistics over the points.
    lo, hi
        The ``confidence`` range of that r over the splits (how much it moves with the split alone).
    values
        The r of every split (NaN where undefined: fewer than 3 points or a constant half).
    n_points
        Points (system, group) compared.
    size
        Pools per stratum in each half (``None``: half of each stratum's pools, the rest in the other half).
    n_splits, confidence
        As passed.
    """

    reliability: float
    lo: float
    hi: float
    values: np.ndarray
    n_points: int
    size: int | None
    n_splits: int
    confidence: float


def _as_list(cols: str | Sequence[str] | None) -> list[str]:
    if cols is None:
        return []
    return [cols] if isinstance(cols, str) else list(cols)


def split_half_reliability(
    data: pd.DataFrame,
    *,
    value: str | None = "value",
    statistic: Callable[[pd.DataFrame], pd.Series] | None = None,
    reference: Hashable | None = None,
    absolute: bool = False,
    contrast: str = "difference",
    system: str | Sequence[str] = "system",
    group: str = "group",
    pool: str = "pool",
    within: str | Sequence[str] | None = None,
    size: int | None = None,
    n_splits: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> SplitHalf:
    r"""Split-half reliability of a per-(system, group) statistic: pools split at random within each stratum.

    ``data`` has one row per observation (a candidate, an answer) with the ``system`` column(s), ``group``,
    ``pool`` and either a numeric ``value`` or what ``statistic`` reads. A pool is one value of
    ``(*system, pool)`` and must lie in one stratum (``within``, default the system); in each of ``n_splits`` seeded splits (:func:`half_split_masks`) the pools of
    each stratum (``within``, default the system) go into half A or half B, and the statistic is computed on each
    half for every point. The split's reliability is Pearson's r over the points between half A and half B:

    .. math:: \hat\rho = \operatorname{corr}_{(s, g)}\bigl(T_{sg}(A), T_{sg}(B)\bigr)

    With a ``value`` column, :math:`T_{sg}` is the mean of the values of group g in system s over the half's
    rows; with ``reference``, the gap :math:`T_{sg} - T_{s,\mathrm{ref}}` (points: the groups other than the
    reference), e.g. a selection-rate gap when the value is each candidate's selection probability, or with
    ``contrast="ratio"`` the ratio :math:`T_{sg} / T_{s,\mathrm{ref}}` (then an impact ratio; a half whose reference
    mean is 0 gives that point no ratio, left out of the split's r); with ``absolute=True`` its absolute value. Otherwise ``statistic(rows)`` returns a Series indexed by the point
    (any index); the halves' values are compared on the index both share.

    When the statistic is a true per-point value plus independent noise, :math:`\hat\rho` estimates the share of
    a half's variance over the points that is true-value variance: the reliability of a statistic measured on a
    half's pools (``size`` pools per stratum, or half of them). :func:`spearman_brown` carries it to other sizes.

    Returns a :class:`SplitHalf` (the mean r over the splits, its range over the splits, every split's r).

    >>> rng = np.random.default_rng(0)
    >>> true = rng.normal(0, 1, 40)  # 40 systems, one group each; true effects of variance 1, pool noise 2
    >>> rows = pd.DataFrame([dict(system=s, group="A", pool=p, value=true[s] + rng.normal(0, 2))
    ...                      for s in range(40) for p in range(8)])
    >>> res = split_half_reliability(rows, size=4, n_splits=100)
    >>> round(res.reliability, 2), res.n_points  # expected 1 / (1 + 4/4) = 0.5
    (0.41, 40)
    """
    systems, strata_cols = _as_list(system), _as_list(within)
    if not systems:
        raise ValueError("system must name at least one column")
    if (value is None) == (statistic is None):
        raise ValueError("give exactly one of value (a numeric column) and statistic (a callable)")
    if statistic is not None and (reference is not None or absolute):
        raise ValueError("reference and absolute apply to a value column; a statistic computes its own gap")
    if contrast not in ("difference", "ratio"):
        raise ValueError(f"contrast must be 'difference' or 'ratio', got {contrast!r}")
    if contrast == "ratio" and reference is None:
        raise ValueError("contrast='ratio' needs a reference group (the ratio's denominator)")
    needed = [*systems, *strata_cols, group, pool] + ([value] if value is not None else [])
    require_columns(data, list(dict.fromkeys(needed)), "data", nonempty=True)
    n_splits = checks.count(n_splits, "n_splits")
    seed = checks.seed(seed)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    for c in dict.fromkeys([*systems, *strata_cols, group, pool]):
        missing = int(data[c].isna().sum())
        if missing:
            raise ValueError(f"data column {c!r} has {missing} missing value(s)")
    pool_codes = data.groupby([*systems, pool], sort=True, observed=True).ngroup().to_numpy()
    stratum = data.groupby(strata_cols or systems, sort=True, observed=True).ngroup().to_numpy()
    pool_stratum = _pool_strata(pool_codes, stratum, pool, strata_cols or systems)
    in_a, in_b = half_split_masks(pool_stratum, n_splits, seed, size=size)
    if statistic is not None:
        rs = np.empty(n_splits)
        n_points = 0
        for i in range(n_splits):
            ta = pd.Series(statistic(data[in_a[i][pool_codes]]))
            tb = pd.Series(statistic(data[in_b[i][pool_codes]]))
            both = ta.index.intersection(tb.index)
            n_points = max(n_points, len(both))
            x = pd.to_numeric(ta.loc[both], errors="coerce").to_numpy(float)
            y = pd.to_numeric(tb.loc[both], errors="coerce").to_numpy(float)
            rs[i] = _row_r(x, y)
        mean, lo, hi = _summary(rs, confidence)
        return SplitHalf(mean, lo, hi, rs, int(n_points), size, n_splits, float(confidence))
    values = pd.to_numeric(data[value], errors="coerce").to_numpy(float)
    if not np.isfinite(values).all():
        raise ValueError(f"data column {value!r} has {int((~np.isfinite(values)).sum())} missing or non-finite "
                         "value(s)")
    point_codes = data.groupby([*systems, group], sort=True, observed=True).ngroup().to_numpy()
    points = data.iloc[np.unique(point_codes, return_index=True)[1]][[*systems, group]].reset_index(drop=True)
    half_a = _half_means(in_a, pool_codes, point_codes, values)
    half_b = _half_means(in_b, pool_codes, point_codes, values)
    if reference is not None:
        if reference not in set(points[group]):
            raise ValueError(f"reference group {reference!r} is not in column {group!r}")
        sys_codes = points.groupby(systems, sort=True, observed=True).ngroup().to_numpy()
        is_ref = (points[group] == reference).to_numpy()
        ref_of_system = np.full(int(sys_codes.max()) + 1, -1)
        ref_of_system[sys_codes[is_ref]] = np.flatnonzero(is_ref)
        keep = ~is_ref & (ref_of_system[sys_codes] >= 0)
        ref_idx = ref_of_system[sys_codes[keep]]
        if contrast == "ratio":
            with np.errstate(divide="ignore", invalid="ignore"):  # a reference mean of 0: no ratio (left out)
                half_a = half_a[:, keep] / half_a[:, ref_idx]
                half_b = half_b[:, keep] / half_b[:, ref_idx]
        else:
            half_a = half_a[:, keep] - half_a[:, ref_idx]
            half_b = half_b[:, keep] - half_b[:, ref_idx]
    if absolute:
        half_a, half_b = np.abs(half_a), np.abs(half_b)
    rs = _row_r(half_a, half_b)
    mean, lo, hi = _summary(rs, confidence)
    return SplitHalf(mean, lo, hi, rs, int(half_a.shape[1]), size, n_splits, float(confidence))


def _pool_strata(pool_codes: np.ndarray, stratum: np.ndarray, pool: str, strata_cols: list[str]) -> np.ndarray:
    """The stratum of every pool (codes), checking that no pool spans two strata."""
    pool_stratum = np.full(int(pool_codes.max()) + 1, -1, dtype=np.intp)
    pool_stratum[pool_codes] = stratum
    if (pool_stratum[pool_codes] != stratum).any():
        raise ValueError(f"a pool of column {pool!r} spans several strata of {strata_cols}: pools must be nested in "
                         "the strata")
    return pool_stratum


def _half_means(mask: np.ndarray, pool_codes: np.ndarray, point_codes: np.ndarray, values: np.ndarray
                ) -> np.ndarray:
    """Mean value per point over the rows whose pool is in the half: (n_splits, n_points); NaN for none."""
    from scipy import sparse

    n_pools, n_points = int(pool_codes.max()) + 1, int(point_codes.max()) + 1
    sums = sparse.csr_matrix((values, (pool_codes, point_codes)), shape=(n_pools, n_points))
    counts = sparse.csr_matrix((np.ones_like(values), (pool_codes, point_codes)), shape=(n_pools, n_points))
    m = mask.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((sums.T @ m.T).T) / np.asarray((counts.T @ m.T).T)


def reliability_curve(data: pd.DataFrame, *, sizes: Sequence[int], **kwargs: Any) -> pd.DataFrame:
    r"""Split-half reliability measured at several sizes, beside the Spearman--Brown prediction from the smallest.

    For each ``size`` m (pools per stratum in each half) :func:`split_half_reliability` (``kwargs`` passed on,
    the same seed at every size) gives the mean reliability and its range over the splits; ``predicted`` is
    :func:`spearman_brown` of the smallest size's mean reliability by the factor ``m / m_min`` (NaN when that
    reliability is not positive). Where ``predicted`` leaves the measured range, the pools are not parallel
    replicates and the prophecy should not be trusted beyond the sizes measured.

    Returns one row per size: ``size, reliability, lo, hi, predicted, n_points, n_splits``.

    >>> rng = np.random.default_rng(0)
    >>> true = rng.normal(0, 1, 60)
    >>> rows = pd.DataFrame([dict(system=s, group="A", pool=p, value=true[s] + rng.normal(0, 2))
    ...                      for s in range(60) for p in range(16)])
    >>> curve = reliability_curve(rows, sizes=[1, 4, 8], n_splits=50)
    >>> curve[["size", "reliability", "predicted"]].round(2).to_dict("list")  # truth 0.2, 0.5, 0.67
    {'size': [1, 4, 8], 'reliability': [0.19, 0.51, 0.65], 'predicted': [0.19, 0.49, 0.66]}
    """
    sizes = [checks.count(s, "sizes") for s in sizes]
    if not sizes or len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must be distinct positive integers, got {sizes}")
    sizes = sorted(sizes)
    if "size" in kwargs:
        raise ValueError("pass the sizes as sizes=, not size=")
    rows = []
    for m in sizes:
        res = split_half_reliability(data, size=m, **kwargs)
        rows.append({"size": m, "reliability": res.reliability, "lo": res.lo, "hi": res.hi,
                     "n_points": res.n_points, "n_splits": res.n_splits})
    out = pd.DataFrame(rows)
    base = float(out["reliability"].iloc[0])
    out.insert(4, "predicted", [float(spearman_brown(min(base, 1.0), m / sizes[0])) if base > 0 else float("nan")
                                for m in sizes])
    return out


# --------------------------------------------------------------------------------------------------------------
# the forecast test
# --------------------------------------------------------------------------------------------------------------
def _disattenuated(r: np.ndarray, rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((rx > 0) & (ry > 0) & np.isfinite(r), r / np.sqrt(np.abs(rx * ry)), np.nan)


def forecast_test(
    candidates: pd.DataFrame,
    *,
    reference: Hashable,
    k: int | Sequence[int],
    metrics: Sequence[str] = STUDY_METRICS,
    gap: str = "dDP",
    design: str = "pools",
    size: int | None = None,
    n_splits: int = 100,
    n_boot: int = 200,
    n_perm: int = 200,
    seed: int = 0,
    system: str | Sequence[str] = "system",
    within: str | Sequence[str] | None = None,
    pool: str = "pool",
    group: str = "group",
    score: str = "score",
    qualified: str | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    r"""Which statistic computed on one half of an audit forecasts the selection-rate gap of the other half?

    The points are (system, group != reference). For every split (``n_splits``, :func:`half_split_masks`:
    ``size`` pools per stratum ``within`` in each half, default half of them) each bias metric (RABBI, δ, JSD,
    EMD: :func:`allocbias.validity.validity_controls`' definitions, on counts) and the gap (the exact selection
    rate gap at each quota k; ``design`` as there) are computed on half A and on half B. For each metric the
    **held-out r** is Pearson's r over the points of the metric in A with the gap in B (``|gap|`` for JSD and
    EMD); for the gap itself (``statistic = "gap"``) of the gap in A with the gap in B, its split-half
    reliability. Beside the mean over splits (``heldout_r``, range ``split_lo, split_hi``):

    * ``ci_lo, ci_hi``: a sampling interval from ``n_boot`` bootstrap replicates: replicate b takes split
      ``b mod n_splits`` and resamples the systems with replacement (all points of a system together), or, when
      there is one system, its points (``bootstrap`` says which). The interval thus holds both the spread over
      splits and the sampling of the points. (Resampling the pools instead is biased: the resampled data's true
      gaps are the observed gaps, which carry the full sample's noise, so two bootstrap halves agree more than two
      halves of new data would, by far when the reliability is low.)
    * ``null_mean, null_lo, null_hi, p_null``: the held-out r's own permutation null: group labels shuffled
      among the candidates of each pool (``n_perm`` shuffles, one random split each) and the held-out r
      recomputed; ``p_null = (1 + #{null >= heldout_r}) / (1 + n_perm)``. Each null value rests on one split
      while ``heldout_r`` is a mean over ``n_splits`` splits, so the null is wider than the spread of that mean
      and the comparison conservative;
    * ``reliability`` (mean split-half r of the gap the statistic is tested against, signed or absolute) and
      ``ceiling`` :math:`= \sqrt{\max(\rho, 0)}`: no statistic from one half correlates with the other half's gap
      by more, on average, than that half's gap correlates with its true value;
    * ``statistic_reliability``: the statistic's own split-half reliability (A with B);
    * ``vs_gap`` with ``vs_gap_lo, vs_gap_hi``: the statistic's held-out r minus the gap's own (the gap from half
      A forecasting half B), on the same splits and, for the interval, the same bootstrap replicates (paired): an
      interval above 0 says the statistic forecasts the other half's gap better than the observed gap does;
    * ``disattenuated`` :math:`= r / \sqrt{\rho_x \rho_y}` (:func:`disattenuate`, from the means; NaN when a
      reliability is not positive) with ``dis_lo, dis_hi`` over the bootstrap replicates (each with its own
      reliabilities) and ``dis_defined``, the share of replicates where it is defined (NaN for the gap's own row,
      where the correction is 1 by definition).

    Returns one row per (statistic, k): ``statistic, k, gap, tested_against, size, n_points, heldout_r, split_lo,
    split_hi, ci_lo, ci_hi, null_mean, null_lo, null_hi, p_null, reliability, ceiling, statistic_reliability,
    vs_gap, vs_gap_lo, vs_gap_hi, disattenuated, dis_lo, dis_hi, dis_defined, bootstrap, n_splits, n_boot, n_perm``.

    Examples
    --------
    Twelve systems whose group B is shifted by a different amount, in pools of one A and one B candidate: RABBI
    from one half forecasts the other half's gap, its held-out r lies above its null and below its ceiling.

    >>> rng = np.random.default_rng(0)
    >>> rows = [dict(system=s, pool=p, group=g, score=float(rng.integers(0, 6) + (s / 3 if g == "B" else 0)))
    ...         for s in range(12) for p in range(40) for g in "AB"]
    >>> t = forecast_test(pd.DataFrame(rows), reference="A", k=1, metrics=["rabbi"], n_splits=20, n_boot=40,
    ...                   n_perm=40)
    >>> t["statistic"].tolist()
    ['rabbi', 'gap']
    >>> row = t.iloc[0]
    >>> bool(row["heldout_r"] > row["null_hi"]), bool(row["ci_lo"] < row["heldout_r"] < row["ci_hi"])
    (True, True)
    >>> bool(abs(row["null_mean"]) < 0.2), bool(row["heldout_r"] <= row["ceiling"] + 0.05)
    (True, True)
    """
    from . import validity as v

    cell_cols = _as_list(system)
    strata_cols = _as_list(within)
    n_boot = checks.count(n_boot, "n_boot")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if strata_cols:
        require_columns(candidates, strata_cols, "candidates", nonempty=True)
    metrics, n_perm, n_splits, lay = v._control_setup(candidates, reference, k, metrics, gap, design, n_perm,
                                                      n_splits, seed, cell_cols, pool, group, score, qualified)
    seed = int(seed)
    if strata_cols:
        stratum = candidates.groupby(strata_cols, sort=True, observed=True).ngroup().to_numpy()
        pool_stratum = _pool_strata(lay.pool, stratum, pool, strata_cols)
    else:
        pool_stratum = lay.pool_cell
    others = [g for g in range(len(lay.groups)) if g != lay.ref]
    n_cells = len(lay.cells)
    n_cells_groups_values = int(np.prod(lay.shape))
    per_item = n_cells_groups_values * (max(lay.ks) + 1 if design == "draws" else 1)
    rng = np.random.default_rng(seed)

    def halves(groups: np.ndarray, wa: np.ndarray, wb: np.ndarray):
        """Metrics and gaps from weights wa, wb over pools (B, n_pools): ((metrics_a, gap_a), (metrics_b, gap_b))."""
        parts_a, parts_b = [], []
        for s in v._blocks(wa.shape[0], per_item):
            g = groups[s] if groups.shape[0] > 1 else np.broadcast_to(groups, (wa[s].shape[0], groups.shape[1]))
            ua, ub = wa[s][:, lay.pool], wb[s][:, lay.pool]
            parts_a.append(v._evaluate(lay, g, ua, ua, metrics=metrics, gap=gap, design=design))
            parts_b.append(v._evaluate(lay, g, ub, ub, metrics=metrics, gap=gap, design=design))

        def stack(parts):
            return ({m: np.concatenate([p[0][m] for p in parts]) for m in metrics},
                    np.concatenate([p[1] for p in parts]))

        return stack(parts_a), stack(parts_b)

    in_a, in_b = half_split_masks(pool_stratum, n_splits, rng, size=size)
    (ma, ga), (mb, gb) = halves(lay.group[None, :], in_a.astype(float), in_b.astype(float))
    which = np.arange(n_boot) % n_splits  # each replicate resamples the points of one split
    if n_cells >= 3:
        bootstrap = "systems"
        chosen = rng.integers(0, n_cells, size=(n_boot, n_cells))
        take = (chosen[:, :, None] * len(others) + np.arange(len(others))[None, None, :]).reshape(n_boot, -1)
    elif n_cells == 1:
        bootstrap = "points"
        take = rng.integers(0, len(others), size=(n_boot, len(others)))
    else:
        raise ValueError(f"the bootstrap needs one system or at least 3, got {n_cells} (column(s) {cell_cols})")
    bma = {m: np.take_along_axis(ma[m][which], take, axis=1) for m in metrics}
    bmb = {m: np.take_along_axis(mb[m][which], take, axis=1) for m in metrics}
    bga, bgb = ga[which], gb[which]
    shuffled = v._shuffled_groups(lay, rng, n_perm)
    pa, pb = half_split_masks(pool_stratum, n_perm, rng, size=size)
    (nma, nga), (nmb, ngb) = halves(shuffled, pa.astype(float), pb.astype(float))

    rows = []
    for ki, kk in enumerate(lay.ks):
        g_a, g_b = ga[:, ki], gb[:, ki]
        bg_a, bg_b = np.take_along_axis(bga[:, ki], take, axis=1), np.take_along_axis(bgb[:, ki], take, axis=1)
        ng_a, ng_b = nga[:, ki], ngb[:, ki]
        rel = {"signed": _row_r(g_a, g_b), "abs": _row_r(np.abs(g_a), np.abs(g_b))}
        boot_rel = {"signed": _row_r(bg_a, bg_b), "abs": _row_r(np.abs(bg_a), np.abs(bg_b))}
        stats = [("gap", "signed")] + [(m, "abs" if v.DEFAULT_ABS_GAP.get(m, False) else "signed") for m in metrics]
        for name, against in stats:
            tr = np.abs if against == "abs" else (lambda x: x)
            if name == "gap":
                held, boot, null = rel["signed"], boot_rel["signed"], _row_r(ng_a, ng_b)
                own, boot_own = rel["signed"], boot_rel["signed"]
            else:
                held = _row_r(ma[name], tr(g_b))
                boot = _row_r(bma[name], tr(bg_b))
                null = _row_r(nma[name], tr(ng_b))
                own, boot_own = _row_r(ma[name], mb[name]), _row_r(bma[name], bmb[name])
            if name == "gap":
                gap_held, gap_boot = held, boot
            diff, diff_boot = held - gap_held, boot - gap_boot  # paired: the same splits and replicates
            mean, split_lo, split_hi = _summary(held, confidence)
            _, vs_lo, vs_hi = _summary(diff_boot, confidence)
            _, ci_lo, ci_hi = _summary(boot, confidence)
            null_mean, null_lo, null_hi = _summary(null, confidence)
            finite_null = null[np.isfinite(null)]
            rel_mean = _summary(rel[against], confidence)[0]
            own_mean = _summary(own, confidence)[0]
            if name == "gap":  # corrected against itself it is 1 by definition: nothing to report
                dis, boot_dis = np.array(np.nan), np.full(boot.shape, np.nan)
            else:
                dis = _disattenuated(np.array(mean), np.array(own_mean), np.array(rel_mean))
                boot_dis = _disattenuated(boot, boot_own, boot_rel[against])
            _, dis_lo, dis_hi = _summary(boot_dis, confidence)
            rows.append(dict(
                statistic=name, k=kk, gap=gap, tested_against="|gap|" if against == "abs" else "gap", size=size,
                n_points=n_cells * len(others), heldout_r=mean, split_lo=split_lo, split_hi=split_hi,
                ci_lo=ci_lo, ci_hi=ci_hi, null_mean=null_mean, null_lo=null_lo, null_hi=null_hi,
                p_null=float((1 + (finite_null >= mean).sum()) / (1 + finite_null.size)) if np.isfinite(mean)
                else float("nan"),
                reliability=rel_mean, ceiling=float(np.sqrt(max(rel_mean, 0.0))) if np.isfinite(rel_mean)
                else float("nan"),
                statistic_reliability=own_mean, vs_gap=_summary(diff, confidence)[0],
                vs_gap_lo=vs_lo if name != "gap" else float("nan"), vs_gap_hi=vs_hi if name != "gap" else float("nan"),
                disattenuated=float(dis), dis_lo=dis_lo, dis_hi=dis_hi,
                dis_defined=float(np.isfinite(boot_dis).mean()), bootstrap=bootstrap, n_splits=n_splits,
                n_boot=n_boot, n_perm=n_perm))
    out = pd.DataFrame(rows)
    order = {name: i for i, name in enumerate([*metrics, "gap"])}
    out = out.sort_values(["k", "statistic"], key=lambda c: c.map(order) if c.name == "statistic" else c,
                          kind="stable").reset_index(drop=True)
    out["size"] = out["size"].astype("Int64")
    return out
