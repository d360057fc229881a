"""NYC Local Law 144 regression metrics and two distribution-wide alternatives.

Local Law 144 asks auditors of automated employment decision tools that output a
*score* (regression) for bias metrics based on *impact ratios*. This module
computes the legal metrics and the distribution-wide alternatives of Filippi et
al., "Local Law 144: A Critical Analysis of Regression Metrics" (the book's page
*Definitions and notation* states the formulas, reconstructed where the paper's
text lost them).

Definitions (``s`` a score, ``g`` a group, ``t`` a threshold):

* selection rate ``SR_g(t) = P(s > t | g)`` (strict ``>``: a score equal to the
  threshold is *not* selected);
* impact ratio ``IR_g(t) = SR_g(t) / max_h SR_h(t)``, with ``0/0 := 1`` (no group
  selected means no group is disadvantaged); four-fifths rule: flag ``IR_g < 0.8``;
* ``DI_avg = mean_g / max_h mean_h`` (the withdrawn rule; needs positive means);
* ``DI_median = IR_g(median of the pooled scores)`` (the final rule);
* ``DI_threshold(t) = IR_g(t)`` at a fixed score ``t``;
* DI curve ``DI_g(p) = IR_g(Q(p))``, ``Q`` the quantile function of the pooled
  scores, ``p`` in ``[0, 1]`` the proportion of candidates *rejected*;
  ``DI_g(0) = DI_g(1) = 1`` by definition (everybody / nobody is selected);
* ``AUC_DI = int_0^1 DI_g(p) pi(p) dp`` and
  ``P_fair = int_0^1 1[DI_g(p) >= 0.8] pi(p) dp`` for a prior density ``pi`` on the
  rejected proportion (flat by default).

Numerical conventions (fixed here, stated in the book):

* pooled quantiles are the generalised inverse of the empirical CDF
  ``Q(p) = inf{x : F(x) >= p}``, i.e. ``Q(p) = x_(k)`` with ``k = max(1, ceil(n p))``
  on the sorted pooled scores ``x_(1) <= ... <= x_(n)`` (numpy's
  ``method="inverted_cdf"``). The rank ``k`` is computed in integers, never as a
  float ``n * p``: a grid value is read as the fraction ``a / b`` (``b <= 10**6``)
  it rounds from, when it lies within ``1e-13`` (relative) of one (``0.28`` is
  ``7/25``), otherwise as its exact binary value; the points of
  ``np.linspace(0, 1, m)`` (:func:`default_grid`) are ``i/(m - 1)``; and
  ``k = ceil(n a / b)``. Floating point would land ``n p`` just
  above an integer for some grid points (``25 * 0.28 = 7.000000000000001``) and
  take one order statistic too many. This is the paper's ``q(p)`` with
  ``P(s <= q(p)) = p``: at least a share ``p`` of all candidates is rejected, at
  most ``1 - p`` selected. No
  interpolation means the thresholds are observed scores, so every metric except
  ``DI_avg`` is exactly invariant under strictly increasing transforms of the
  scores. :func:`di_median` uses ``Q(0.5)``, which selects exactly the candidates
  above ``np.median(pooled)`` (for even ``n`` any cut between the two middle scores
  selects the same people), and equals the curve at ``p = 0.5``;
* the default grid is ``np.linspace(0, 1, 1001)`` (step 0.001);
* integrals over ``p`` use the trapezoid rule on the grid, and the prior is
  normalised so that its trapezoid integral on the grid is 1 (so a grid that does
  not span ``[0, 1]`` averages over the grid's range only).

Everything is vectorised: scores are sorted once (pooled and per group) and the
selection rates at every threshold come from one ``np.searchsorted`` per group.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats


__all__ = [
    "DEFAULT_GRID_POINTS",
    "FOUR_FIFTHS",
    "QUANTILE_METHOD",
    "KSResult",
    "auc_di",
    "curve_auc",
    "curve_p_fair",
    "default_grid",
    "di_avg",
    "di_curve",
    "di_median",
    "di_threshold",
    "four_fifths_flags",
    "group_metric_summary",
    "impact_ratios_at",
    "ks_test",
    "p_fair",
    "pooled_quantiles",
    "selection_rates",
    "synthetic_components",
    "synthetic_example",
    "synthetic_sweep",
]

#: Number of points of the default ``p`` grid, ``np.linspace(0, 1, 1001)``.
DEFAULT_GRID_POINTS = 1001
#: The EEOC four-fifths bound used for every ratio metric unless told otherwise.
FOUR_FIFTHS = 0.8
#: The ``np.quantile`` method whose definition the pooled thresholds follow (computed
#: exactly, see :func:`pooled_quantiles`).
QUANTILE_METHOD = "inverted_cdf"
#: Largest denominator of the fraction a grid value ``p`` is read as.
_P_MAX_DENOMINATOR = 10**6
#: A grid value is read as a fraction when it lies within this relative distance of it.
_P_SNAP_RTOL = 1e-13

#: A prior on the rejected share p: None (flat), a callable density, a frozen scipy
#: distribution (anything with ``.pdf``) or one value per grid point.
Prior = Any


# --------------------------------------------------------------------------- input checks


@dataclass(frozen=True)
class _Prepared:
    """Validated scores, group codes and the sorted arrays every metric needs."""

    scores: np.ndarray  # float64, original order
    codes: np.ndarray  # int, index into labels
    labels: pd.Index  # sorted group labels, name "group"
    counts: np.ndarray  # members per group
    pooled_sorted: np.ndarray  # all scores, ascending
    segments: tuple[np.ndarray, ...]  # per group scores, ascending


def _as_scores(scores: Any) -> np.ndarray:
    if isinstance(scores, (pd.Series, pd.Index)):
        if pd.api.types.is_bool_dtype(scores.dtype) or not pd.api.types.is_numeric_dtype(
            scores.dtype
        ):
            raise ValueError(f"scores must be numeric, got dtype {scores.dtype}")
        arr = scores.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = np.asarray(scores)
        if arr.dtype.kind not in "iuf":
            raise ValueError(
                f"scores must be numeric (int or float), got dtype {arr.dtype}"
            )
        arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"scores contain {int(bad.sum())} NaN or infinite value(s), "
            f"first at position {int(np.argmax(bad))}"
        )
    return arr


def _prepare(scores: Any, groups: Any) -> _Prepared:
    arr = _as_scores(scores)
    if isinstance(groups, (pd.Series, pd.Index)):
        grp = groups.to_numpy()
    else:
        grp = np.asarray(groups, dtype=object) if not isinstance(groups, np.ndarray) else groups
    if grp.ndim != 1:
        raise ValueError(f"groups must be one-dimensional, got shape {grp.shape}")
    if grp.shape[0] != arr.shape[0]:
        raise ValueError(
            f"length mismatch: {arr.shape[0]} scores but {grp.shape[0]} group labels"
        )
    codes, uniques = pd.factorize(grp, sort=True)
    if (codes < 0).any():
        raise ValueError(
            f"groups contain {int((codes < 0).sum())} missing label(s), "
            f"first at position {int(np.argmax(codes < 0))}"
        )
    labels = pd.Index(uniques, name="group")
    if len(labels) < 2:
        raise ValueError(
            f"need at least two groups to compare, got {len(labels)}: {list(labels)}"
        )
    counts = np.bincount(codes, minlength=len(labels))
    small = np.flatnonzero(counts < 2)
    if small.size:
        named = ", ".join(f"{labels[k]!r} ({counts[k]})" for k in small)
        raise ValueError(f"every group needs at least 2 members; too few in group {named}")
    # Sort once pooled (for the quantiles) and once within each group (for the
    # selection rates): a stable (radix) sort of the small integer codes makes each
    # group's scores contiguous, then each block is sorted on its own.
    pooled_sorted = np.sort(arr)
    small_codes = codes.astype(np.int16) if len(labels) < 2**15 else codes
    by_group = arr[np.argsort(small_codes, kind="stable")]
    bounds = np.cumsum(counts)[:-1]
    segments = tuple(np.sort(block) for block in np.split(by_group, bounds))
    return _Prepared(arr, codes, labels, counts, pooled_sorted, segments)


def _check_threshold(threshold: Any) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"threshold must be a number, got {threshold!r}") from exc
    if np.isnan(t):
        raise ValueError("threshold is NaN")
    return t


def _check_bound(bound: Any) -> float:
    try:
        b = float(bound)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bound must be a number, got {bound!r}") from exc
    if not 0.0 < b <= 1.0:
        raise ValueError(f"bound must lie in (0, 1], got {bound!r}")
    return b


def default_grid(points: int = DEFAULT_GRID_POINTS) -> np.ndarray:
    """Evenly spaced grid of rejected proportions, ``np.linspace(0, 1, points)``.

    Parameters
    ----------
    points : int
        Number of grid points (at least 2); the default 1001 gives a step of 0.001.

    Examples
    --------
    >>> default_grid(5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 2:
        raise ValueError(f"grid points must be an integer >= 2, got {points!r}")
    return np.linspace(0.0, 1.0, int(points))


def _check_grid(grid: Any) -> np.ndarray:
    if grid is None:
        return default_grid()
    g = np.asarray(grid)
    if g.dtype.kind not in "iuf":
        raise ValueError(f"grid must be numeric, got dtype {g.dtype}")
    g = g.astype(np.float64)
    if g.ndim != 1 or g.size < 2:
        raise ValueError(f"grid must be one-dimensional with at least 2 points, got shape {g.shape}")
    if not np.isfinite(g).all():
        raise ValueError("grid contains NaN or infinite values")
    if g.min() < 0.0 or g.max() > 1.0:
        raise ValueError(f"grid must lie in [0, 1], got values in [{g.min()}, {g.max()}]")
    if not (np.diff(g) > 0).all():
        raise ValueError("grid must be strictly increasing")
    return g


def _prior_weights(prior: Prior, grid: np.ndarray) -> np.ndarray:
    """Prior density on ``grid`` normalised to trapezoid integral 1."""
    if prior is None:
        w = np.ones_like(grid)
    else:
        if hasattr(prior, "pdf") and not callable(prior):
            raw = prior.pdf(grid)  # a frozen scipy distribution
        elif callable(prior):
            raw = prior(grid)
        else:
            raw = prior
        w = np.asarray(raw)
        if w.dtype.kind not in "iuf":
            raise ValueError(f"prior must give numeric values, got dtype {w.dtype}")
        w = w.astype(np.float64)
        if callable(prior) or hasattr(prior, "pdf"):
            if w.ndim == 0:
                w = np.full_like(grid, float(w))
        if w.shape != grid.shape:
            raise ValueError(
                f"prior must have one value per grid point ({grid.size}), got shape {w.shape}"
            )
    if not np.isfinite(w).all():
        bad = int(np.argmax(~np.isfinite(w)))
        raise ValueError(f"prior has NaN or infinite values, first at p={grid[bad]:g}")
    if (w < 0).any():
        bad = int(np.argmax(w < 0))
        raise ValueError(f"prior has negative values, first at p={grid[bad]:g}")
    total = float(np.trapezoid(w, grid))
    if not (np.isfinite(total) and total > 0):
        raise ValueError(
            f"prior must integrate to a positive finite number on the grid, got {total!r}"
        )
    return w / total


# --------------------------------------------------------------------------- core kernels


def _selection_rate_matrix(prep: _Prepared, thresholds: np.ndarray) -> np.ndarray:
    """``SR[k, j] = P(s > thresholds[j] | group k)``; one searchsorted per group."""
    out = np.empty((len(prep.segments), thresholds.size), dtype=np.float64)
    for k, seg in enumerate(prep.segments):  # a handful of groups, never their members
        out[k] = (seg.size - np.searchsorted(seg, thresholds, side="right")) / seg.size
    return out


def _impact_ratio_matrix(sr: np.ndarray) -> np.ndarray:
    """``SR / max over groups`` column-wise, with ``0/0 := 1``."""
    top = sr.max(axis=0, keepdims=True)
    return np.divide(sr, top, out=np.ones_like(sr), where=top > 0)


def _as_fraction(p: float) -> Fraction:
    """The fraction a grid value stands for: ``a / b`` (``b <= 10**6``) within 1e-13, else its exact value."""
    exact = Fraction(p)
    near = exact.limit_denominator(_P_MAX_DENOMINATOR)
    return near if abs(near - exact) <= _P_SNAP_RTOL * exact else exact


@functools.lru_cache(maxsize=32)
def _grid_fractions(key: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """Numerators and denominators (int64) of the fractions a grid stands for; None if one is not simple (cached)."""
    grid = np.frombuffer(key, dtype=np.float64)
    m = grid.size - 1
    if m >= 1 and np.array_equal(grid, np.linspace(0.0, 1.0, m + 1)):  # default_grid(m + 1): p_i = i / m
        return np.arange(m + 1, dtype=np.int64), np.full(m + 1, m, dtype=np.int64)
    fractions = [_as_fraction(float(p)) for p in grid]
    if any(f.denominator > _P_MAX_DENOMINATOR for f in fractions):
        return None
    num = np.array([f.numerator for f in fractions], dtype=np.int64)
    den = np.array([f.denominator for f in fractions], dtype=np.int64)
    return num, den


def _order_ranks(n: int, p: np.ndarray) -> np.ndarray:
    """``k = max(1, ceil(n p))`` for each ``p``, in integer arithmetic (the 1-based rank of ``Q(p)``)."""
    p = np.ascontiguousarray(p, dtype=np.float64)
    fractions = _grid_fractions(p.tobytes())
    if fractions is not None and n * int(fractions[0].max(initial=0)) < 2**62:  # n * num fits in int64
        num, den = fractions
        return np.maximum(-((-n * num) // den), 1)
    return np.array([max(1, math.ceil(n * _as_fraction(float(x)))) for x in p], dtype=np.int64)


def _pooled_quantiles(prep: _Prepared, p: np.ndarray) -> np.ndarray:
    n = prep.pooled_sorted.size
    return prep.pooled_sorted[_order_ranks(n, p) - 1]


def _curve_matrix(prep: _Prepared, grid: np.ndarray) -> np.ndarray:
    thresholds = _pooled_quantiles(prep, grid)
    ir = _impact_ratio_matrix(_selection_rate_matrix(prep, thresholds))
    ir[:, (grid == 0.0) | (grid == 1.0)] = 1.0  # DI_g(0) = DI_g(1) = 1 by definition
    return ir


def _series(values: np.ndarray, prep: _Prepared, name: str) -> pd.Series:
    return pd.Series(values, index=prep.labels.copy(), name=name)


# --------------------------------------------------------------------------- legal metrics


def pooled_quantiles(scores: Any, p: Any) -> np.ndarray:
    """Quantiles of the pooled scores used as thresholds, the order statistics ``Q(p) = x_(k)``.

    ``Q(p) = inf{x : F(x) >= p} = x_(k)``, ``k = max(1, ceil(n p))``, on the sorted scores
    ``x_(1) <= ... <= x_(n)`` (numpy's ``method="inverted_cdf"``), with ``k`` computed in integers:
    ``p`` is read as the fraction ``a / b`` (``b <= 10**6``) it lies within ``1e-13`` (relative) of, else
    as its exact binary value (the points of ``np.linspace(0, 1, m)`` as ``i / (m - 1)``), and
    ``k = ceil(n a / b)``. In floating point ``25 * 0.28`` is
    ``7.000000000000001`` and ``np.quantile`` returns ``x_(8)``; here ``Q(0.28) = x_(7)``.

    Examples
    --------
    >>> pooled_quantiles([4, 1, 3, 2], [0.0, 0.3, 0.5, 1.0]).tolist()
    [1.0, 2.0, 2.0, 4.0]
    >>> pooled_quantiles(range(1, 26), [0.28]).tolist()  # k = 25 * 7/25 = 7
    [7.0]
    """
    arr = _as_scores(scores)
    if arr.size == 0:
        raise ValueError("scores is empty")
    q = np.asarray(p, dtype=np.float64)
    if not np.isfinite(q).all() or (q < 0).any() or (q > 1).any():
        raise ValueError("p must lie in [0, 1]")
    ranks = _order_ranks(arr.size, q.ravel()).reshape(q.shape)
    return np.sort(arr)[ranks - 1]


def selection_rates(scores: Any, groups: Any, threshold: float) -> pd.Series:
    r"""Selection rate of each group at a score threshold.

    .. math:: SR_g(t) = P(s > t \mid g) = \#\{i \in g : s_i > t\} / n_g

    The inequality is strict: a score equal to ``threshold`` is not selected.

    Parameters
    ----------
    scores : array-like of float
        One score per candidate.
    groups : array-like
        One group label per candidate (same length as ``scores``).
    threshold : float
        Score cut.

    Returns
    -------
    pandas.Series
        Indexed by group (sorted labels), named ``"selection_rate"``.

    Examples
    --------
    >>> selection_rates([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), 3).to_dict()
    {'A': 0.25, 'B': 0.75}
    """
    prep = _prepare(scores, groups)
    t = np.array([_check_threshold(threshold)])
    return _series(_selection_rate_matrix(prep, t)[:, 0], prep, "selection_rate")


def impact_ratios_at(scores: Any, groups: Any, threshold: float) -> pd.Series:
    r"""Impact ratio of each group at a score threshold.

    .. math:: IR_g(t) = SR_g(t) / \max_h SR_h(t), \qquad 0/0 := 1

    Values lie in ``[0, 1]``; the most selected group has 1.

    Examples
    --------
    >>> ir = impact_ratios_at([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), 3)
    >>> ir.round(4).to_dict()
    {'A': 0.3333, 'B': 1.0}
    """
    prep = _prepare(scores, groups)
    t = np.array([_check_threshold(threshold)])
    ir = _impact_ratio_matrix(_selection_rate_matrix(prep, t))
    return _series(ir[:, 0], prep, "impact_ratio")


def di_threshold(scores: Any, groups: Any, threshold: float) -> pd.Series:
    r"""``DI_threshold(t)``: the impact ratio at a fixed score ``t`` (a named metric of the book's *Definitions and notation*).

    .. math:: DI_{threshold}(t)_g = SR_g(t) / \max_h SR_h(t)

    Identical to :func:`impact_ratios_at`, named ``"di_threshold"``; the paper's real-data
    case thresholds a 0-100 score at 50.

    Examples
    --------
    >>> di_threshold([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), 3.5).round(4).to_dict()
    {'A': 0.3333, 'B': 1.0}
    """
    return impact_ratios_at(scores, groups, threshold).rename("di_threshold")


def four_fifths_flags(
    scores: Any, groups: Any, threshold: float, bound: float = FOUR_FIFTHS
) -> pd.Series:
    """Four-fifths rule at a threshold: ``True`` where ``IR_g(t) < bound`` (default 0.8).

    A flag is screening evidence of a selection-rate gap, not proof of
    discrimination; no flag is not proof of fairness either.

    Examples
    --------
    >>> four_fifths_flags([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), 3).to_dict()
    {'A': True, 'B': False}
    """
    b = _check_bound(bound)
    return (impact_ratios_at(scores, groups, threshold) < b).rename("four_fifths_flag")


def di_avg(scores: Any, groups: Any) -> pd.Series:
    r"""Ratio of mean scores, the rule Local Law 144's first draft proposed (withdrawn).

    .. math:: DI_{avg, g} = \bar s_g / \max_h \bar s_h

    A ratio of means only reads as an impact ratio when every group mean is positive
    (scores on a 0-100 scale, probabilities); with a zero or negative mean the ratio
    can be negative, infinite or flip order, so this raises ``ValueError`` instead.
    Unlike every other metric here it depends on the score scale (it is not invariant
    under increasing transforms of the scores).

    Examples
    --------
    >>> di_avg([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB")).round(4).to_dict()
    {'A': 0.5556, 'B': 1.0}
    """
    return _di_avg(_prepare(scores, groups))


def _di_avg(prep: _Prepared) -> pd.Series:
    means = np.bincount(prep.codes, weights=prep.scores) / prep.counts
    nonpos = np.flatnonzero(means <= 0)
    if nonpos.size:
        named = ", ".join(f"{prep.labels[k]!r} (mean {means[k]:g})" for k in nonpos)
        raise ValueError(
            "di_avg needs positive group means (a ratio of means is not an impact "
            f"ratio otherwise); non-positive mean in group {named}"
        )
    return _series(means / means.max(), prep, "di_avg")


def di_median(scores: Any, groups: Any) -> pd.Series:
    r"""Impact ratio at the median of the pooled scores, Local Law 144's final rule.

    .. math:: DI_{median, g} = IR_g(Q(0.5))

    ``Q(0.5)`` is :func:`pooled_quantiles` at 0.5, ``x_(ceil(n/2))``; the strict
    ``>`` makes it select exactly the candidates above ``np.median(pooled)``, and it
    equals :func:`di_curve` at ``p = 0.5``.

    Examples
    --------
    >>> di_median([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB")).round(4).to_dict()
    {'A': 0.3333, 'B': 1.0}
    """
    return _di_median(_prepare(scores, groups))


def _di_median(prep: _Prepared) -> pd.Series:
    t = _pooled_quantiles(prep, np.array([0.5]))
    ir = _impact_ratio_matrix(_selection_rate_matrix(prep, t))
    return _series(ir[:, 0], prep, "di_median")


# --------------------------------------------------------------------------- distribution-wide


def di_curve(scores: Any, groups: Any, grid: Any = None) -> pd.DataFrame:
    r"""Binary disparate-impact curve over the rejected proportion ``p``.

    .. math:: DI_g(p) = IR_g(Q(p)), \qquad DI_g(0) = DI_g(1) = 1

    ``Q(p)`` is the ``p``-quantile of the pooled scores, ``x_(k)`` with ``k = max(1, ceil(n p))``
    in integer arithmetic (:func:`pooled_quantiles`), so at most a share ``1 - p`` of all candidates is
    selected (exactly ``1 - ceil(n p) / n`` without ties at the cut).
    The end points are set to 1 by definition (everybody, resp. nobody, selected).

    Parameters
    ----------
    scores, groups : array-like
        Scores and group labels, same length.
    grid : array-like of float, optional
        Strictly increasing values in ``[0, 1]``; default ``np.linspace(0, 1, 1001)``.

    Returns
    -------
    pandas.DataFrame
        Index ``p`` (the grid), one column per group (sorted labels).

    Examples
    --------
    >>> c = di_curve([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), [0, .25, .5, .75, 1])
    >>> c["A"].round(4).tolist()
    [1.0, 0.5, 0.3333, 0.0, 1.0]
    """
    prep = _prepare(scores, groups)
    g = _check_grid(grid)
    ir = _curve_matrix(prep, g)
    return pd.DataFrame(ir.T, index=pd.Index(g, name="p"), columns=prep.labels.copy())


def _check_curve(curve: Any) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(curve, pd.DataFrame):
        raise ValueError(f"curve must be a DataFrame from di_curve, got {type(curve).__name__}")
    grid = _check_grid(curve.index.to_numpy())
    values = curve.to_numpy(dtype=np.float64)
    if not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
        raise ValueError("curve values must be finite impact ratios in [0, 1]")
    return grid, values


def curve_auc(curve: pd.DataFrame, prior: Prior = None) -> pd.Series:
    r"""``AUC_DI`` of a curve from :func:`di_curve` (trapezoid rule on its grid).

    .. math:: AUC_{DI, g} = \int_0^1 DI_g(p)\, \pi(p)\, dp

    ``prior`` as in :func:`auc_di`.

    Examples
    --------
    >>> c = di_curve([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), [0, .25, .5, .75, 1])
    >>> curve_auc(c).round(4).to_dict()
    {'A': 0.4583, 'B': 1.0}
    """
    grid, values = _check_curve(curve)
    w = _prior_weights(prior, grid)
    auc = np.trapezoid(values * w[:, None], grid, axis=0)
    return pd.Series(auc, index=curve.columns.copy(), name="auc_di")


def curve_p_fair(curve: pd.DataFrame, prior: Prior = None, bound: float = FOUR_FIFTHS) -> pd.Series:
    r"""``P_fair`` of a curve from :func:`di_curve` (trapezoid rule on its grid).

    .. math:: P_{fair, g} = \int_0^1 \mathbf 1[DI_g(p) \ge b]\, \pi(p)\, dp

    Examples
    --------
    >>> c = di_curve([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), [0, .25, .5, .75, 1])
    >>> curve_p_fair(c).to_dict()
    {'A': 0.25, 'B': 1.0}
    """
    b = _check_bound(bound)
    grid, values = _check_curve(curve)
    w = _prior_weights(prior, grid)
    pf = np.trapezoid((values >= b) * w[:, None], grid, axis=0)
    return pd.Series(pf, index=curve.columns.copy(), name="p_fair")


def auc_di(scores: Any, groups: Any, prior: Prior = None, grid: Any = None) -> pd.Series:
    r"""Area under the disparate-impact curve, weighted by a prior on ``p``.

    .. math:: AUC_{DI, g} = \int_0^1 DI_g(p)\, \pi(p)\, dp

    Parameters
    ----------
    scores, groups : array-like
        Scores and group labels, same length.
    prior : callable, frozen scipy distribution or array-like, optional
        Density of the rejected proportion ``p``: a callable evaluated on the grid,
        an object with ``.pdf`` (e.g. ``scipy.stats.beta(18, 2)``), or one value per
        grid point. It is normalised to trapezoid integral 1 on the grid; ``None``
        means flat. Negative or non-finite values, or a zero integral, raise.
    grid : array-like, optional
        As in :func:`di_curve` (default ``np.linspace(0, 1, 1001)``).

    Examples
    --------
    >>> auc_di([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), grid=[0, .25, .5, .75, 1]).round(4).to_dict()
    {'A': 0.4583, 'B': 1.0}
    """
    return curve_auc(di_curve(scores, groups, grid), prior)


def p_fair(
    scores: Any, groups: Any, prior: Prior = None, grid: Any = None, bound: float = FOUR_FIFTHS
) -> pd.Series:
    r"""Prior probability that the binarised decision passes the four-fifths rule.

    .. math:: P_{fair, g} = \int_0^1 \mathbf 1[DI_g(p) \ge b]\, \pi(p)\, dp, \quad b = 0.8

    ``prior`` and ``grid`` as in :func:`auc_di`.

    Examples
    --------
    >>> p_fair([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), grid=[0, .25, .5, .75, 1]).to_dict()
    {'A': 0.25, 'B': 1.0}
    """
    b = _check_bound(bound)
    return curve_p_fair(di_curve(scores, groups, grid), prior, b)


# --------------------------------------------------------------------------- test, summary


@dataclass(frozen=True)
class KSResult:
    """Two-sample Kolmogorov-Smirnov test of one group against the rest."""

    group: Hashable
    statistic: float
    pvalue: float
    n_group: int
    n_rest: int


def ks_test(scores: Any, groups: Any, group: Hashable, method: str = "auto") -> KSResult:
    r"""Two-sample KS test of ``group`` against all other candidates (``scipy.stats.ks_2samp``).

    .. math:: D = \sup_t |F_g(t) - F_{rest}(t)|

    A small p-value is evidence that the score distributions differ somewhere; a large
    one is inconclusive (it does not show the distributions are equal).

    Examples
    --------
    >>> r = ks_test([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), "A")
    >>> round(r.statistic, 3), r.n_group, r.n_rest
    (0.5, 4, 4)
    """
    prep = _prepare(scores, groups)
    if group not in prep.labels:
        raise ValueError(f"group {group!r} not found; groups are {list(prep.labels)}")
    return _ks(prep, int(prep.labels.get_loc(group)), method)


def _ks(prep: _Prepared, k: int, method: str = "auto") -> KSResult:
    mask = prep.codes == k
    res = stats.ks_2samp(prep.scores[mask], prep.scores[~mask], method=method)
    return KSResult(prep.labels[k], float(res.statistic), float(res.pvalue), int(mask.sum()), int((~mask).sum()))


#: Above this many scores in the larger sample, scipy's ``ks_2samp(method="auto")`` uses the asymptotic p-value.
_KS_MAX_EXACT_N = 10_000
#: Above this effective size ``n_g n_r / n`` the p-value is the limiting Kolmogorov distribution's.
_KS_LIMIT_N = 100_000


def _ks_all(prep: _Prepared) -> list[KSResult]:
    """:func:`ks_test` of every group against the rest, from the sorted scores ``prep`` already holds.

    Where scipy's ``ks_2samp(method="auto")`` would use the asymptotic p-value (the larger sample above 10,000
    scores), the statistic is read off the sorted scores: at each distinct pooled score ``x``, with ``c_g(x)`` the
    group's scores ``<= x`` (one ``searchsorted`` into the group's sorted scores) and ``c(x)`` all scores ``<= x``,
    ``D_g = max_x |c_g(x)/n_g - (c(x) - c_g(x))/(n - n_g)|``; the p-value is scipy's,
    ``kstwo.sf(D, round(n_g n_r / n))``, or, for an effective size ``m = n_g n_r / n`` above 100,000, the limiting
    ``kstwobign.sf(D sqrt(m))`` (relative difference ``O(m^{-1/2})``, and scipy's finite-``m`` one takes a quarter
    of a second per group at a million scores). The other groups go to scipy. (``tests/test_ll144_command.py``
    checks both against ``scipy.stats.ks_2samp``.)
    """
    n = prep.pooled_sorted.size
    ends = np.r_[np.flatnonzero(np.diff(prep.pooled_sorted) != 0), n - 1]  # last index of each distinct score
    values = prep.pooled_sorted[ends]
    below = ends + 1.0
    out = []
    for k, n_g in enumerate(prep.counts):  # a handful of groups, never their members
        n_r = n - int(n_g)
        if max(int(n_g), n_r) <= _KS_MAX_EXACT_N:
            out.append(_ks(prep, k))
            continue
        c = np.searchsorted(prep.segments[k], values, side="right")
        d = float(np.max(np.abs(c / n_g - (below - c) / n_r)))
        big, small = sorted([float(n_g), float(n_r)], reverse=True)
        m = big * small / (big + small)
        p = stats.kstwobign.sf(d * np.sqrt(m)) if m > _KS_LIMIT_N else stats.kstwo.sf(d, np.round(m))
        out.append(KSResult(prep.labels[k], d, float(np.clip(p, 0, 1)), int(n_g), n_r))
    return out


def group_metric_summary(
    scores: Any,
    groups: Any,
    threshold: float | None = None,
    prior: Prior = None,
    grid: Any = None,
    bound: float = FOUR_FIFTHS,
) -> pd.DataFrame:
    """One tidy row per group with every metric and its four-fifths flag.

    Columns: ``n``, ``mean``, ``di_avg``, ``di_median``, ``di_threshold`` (only when
    ``threshold`` is given), ``auc_di``, ``p_fair``, ``ks_statistic``, ``ks_pvalue``
    (group vs rest) and ``flag_<metric>`` = ``metric < bound`` for each ratio metric.
    ``di_avg`` raises for non-positive group means (see :func:`di_avg`).

    Examples
    --------
    >>> s = group_metric_summary([1, 2, 3, 4, 3, 4, 5, 6], list("AAAABBBB"), grid=[0, .25, .5, .75, 1])
    >>> round(float(s.loc["A", "di_median"]), 4), float(s.loc["A", "p_fair"]), bool(s.loc["A", "flag_di_median"])
    (0.3333, 0.25, True)
    """
    b = _check_bound(bound)
    prep = _prepare(scores, groups)
    g = _check_grid(grid)
    curve = pd.DataFrame(_curve_matrix(prep, g).T, index=pd.Index(g, name="p"), columns=prep.labels)
    out = pd.DataFrame(index=prep.labels.copy())
    out["n"] = prep.counts
    out["mean"] = np.bincount(prep.codes, weights=prep.scores) / prep.counts
    out["di_avg"] = _di_avg(prep)
    out["di_median"] = _di_median(prep)
    ratio_cols = ["di_avg", "di_median"]
    if threshold is not None:
        t = np.array([_check_threshold(threshold)])
        out["di_threshold"] = _impact_ratio_matrix(_selection_rate_matrix(prep, t))[:, 0]
        ratio_cols.append("di_threshold")
    out["auc_di"] = curve_auc(curve, prior)
    out["p_fair"] = curve_p_fair(curve, prior, b)
    ratio_cols += ["auc_di", "p_fair"]
    ks = [_ks(prep, k) for k in range(len(prep.labels))]  # one test per group
    out["ks_statistic"] = [r.statistic for r in ks]
    out["ks_pvalue"] = [r.pvalue for r in ks]
    for col in ratio_cols:
        out[f"flag_{col}"] = out[col] < b
    return out


# --------------------------------------------------------------------------- synthetic examples

_EXAMPLE_KINDS = (1, 2, 3)


def synthetic_components(kind: int, param: float) -> dict[str, list[tuple[float, float, float]]]:
    """Mixture components ``(weight, mean, sd)`` of groups ``"A"`` and ``"B"`` in the paper's examples.

    The paper's exact parameter values were lost with its formulas; these are our
    reconstruction of its three shapes on a 0-100 score scale:

    1. two normals with the same mean 50 whose standard deviations drift apart:
       ``A ~ N(50, 15 - 10 a)``, ``B ~ N(50, 15 + 10 a)`` for ``0 <= a < 1.5``
       (``a = 0``: identical groups);
    2. a normal against a symmetric bimodal mixture with a shared sd ``sigma > 0``:
       ``A ~ N(50, sigma)``, ``B ~ 0.5 N(20, sigma) + 0.5 N(80, sigma)``;
    3. two bimodal mixtures with equal lower modes and different upper modes:
       ``A ~ 0.5 N(30, 10) + 0.5 N(70, sigma)``, ``B ~ 0.5 N(30, 10) + 0.5 N(80, sigma)``.

    Examples
    --------
    >>> synthetic_components(1, 0.5)
    {'A': [(1.0, 50.0, 10.0)], 'B': [(1.0, 50.0, 20.0)]}
    """
    if kind not in _EXAMPLE_KINDS:
        raise ValueError(f"kind must be one of {_EXAMPLE_KINDS}, got {kind!r}")
    try:
        a = float(param)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"param must be a number, got {param!r}") from exc
    if not np.isfinite(a):
        raise ValueError(f"param must be finite, got {param!r}")
    if kind == 1:
        if not 0.0 <= a < 1.5:
            raise ValueError(f"example 1 needs 0 <= param < 1.5 (sd of A = 15 - 10 param > 0), got {a}")
        return {"A": [(1.0, 50.0, 15.0 - 10.0 * a)], "B": [(1.0, 50.0, 15.0 + 10.0 * a)]}
    if a <= 0:
        raise ValueError(f"example {kind} needs a positive standard deviation param, got {a}")
    if kind == 2:
        return {"A": [(1.0, 50.0, a)], "B": [(0.5, 20.0, a), (0.5, 80.0, a)]}
    return {"A": [(0.5, 30.0, 10.0), (0.5, 70.0, a)], "B": [(0.5, 30.0, 10.0), (0.5, 80.0, a)]}


def synthetic_example(kind: int, param: float, n: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Sample one of the paper's synthetic examples as a tidy frame.

    Draws ``n`` scores for each of the groups ``"A"`` and ``"B"`` from the mixtures of
    :func:`synthetic_components` (component chosen per candidate with its weight, then
    a normal draw). Pure: the same arguments give the same frame.

    Returns
    -------
    pandas.DataFrame
        Columns ``score`` (float) and ``group`` (``"A"`` then ``"B"``), ``2 n`` rows.

    Examples
    --------
    >>> df = synthetic_example(2, 10.0, n=5, seed=1)
    >>> df.shape, df["group"].tolist()
    ((10, 2), ['A', 'A', 'A', 'A', 'A', 'B', 'B', 'B', 'B', 'B'])
    """
    comps = synthetic_components(kind, param)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n (candidates per group) must be an integer >= 2, got {n!r}")
    rng = np.random.default_rng(seed)
    parts = []
    for label, mix in comps.items():  # two groups
        w = np.array([c[0] for c in mix])
        mu = np.array([c[1] for c in mix])
        sd = np.array([c[2] for c in mix])
        pick = rng.choice(len(mix), size=int(n), p=w / w.sum())
        scores = rng.normal(mu[pick], sd[pick])
        parts.append(pd.DataFrame({"score": scores, "group": label}))
    return pd.concat(parts, ignore_index=True)


def synthetic_sweep(
    kind: int,
    params: Sequence[float],
    n: int = 10_000,
    seed: int = 0,
    threshold: float | None = None,
    prior: Prior = None,
    grid: Any = None,
    bound: float = FOUR_FIFTHS,
) -> pd.DataFrame:
    """:func:`group_metric_summary` of one synthetic example at each parameter value, as one tidy frame.

    Every parameter value is sampled with the same ``seed`` (common random numbers),
    so the metrics move smoothly with the parameter instead of jumping with the noise.

    Returns
    -------
    pandas.DataFrame
        Columns ``example``, ``param``, ``group`` and those of :func:`group_metric_summary`; one row per
        (parameter value, group), in the order of ``params``.

    Examples
    --------
    >>> sw = synthetic_sweep(1, [0.0, 1.0], n=500, seed=0, grid=default_grid(101))
    >>> sw[["param", "group"]].values.tolist()
    [[0.0, 'A'], [0.0, 'B'], [1.0, 'A'], [1.0, 'B']]
    >>> bool(sw.loc[2, "auc_di"] < sw.loc[0, "auc_di"])
    True
    """
    values = list(params)
    if not values:
        raise ValueError("params is empty: give at least one parameter value")
    frames = []
    for a in values:  # a handful of parameter values
        df = synthetic_example(kind, a, n=n, seed=seed)
        s = group_metric_summary(df["score"], df["group"], threshold=threshold, prior=prior, grid=grid, bound=bound)
        frames.append(s.reset_index().assign(example=kind, param=float(a)))
    out = pd.concat(frames, ignore_index=True)
    first = ["example", "param", "group"]
    return out[first + [c for c in out.columns if c not in first]]
