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

from .._renamed import renamed
from .disaggregate import cell_frames, with_keys

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


# =========================================================================== audit tables from counts
#
# A Local Law 144 bias audit publishes, per category (sex, race/ethnicity and their intersection), the number of
# applicants, the number selected (or scored above the median), the selection (or scoring) rate and the impact
# ratio against the category with the highest rate. The functions below compute that table from counts (a CSV of
# counts, or an allocation simulated by the study), apply the rules' option to exclude categories below 2% of the
# data, bound the ratios for applicants whose category is unknown, and check published tables against their counts.

__all__ += [
    "DEFAULT_TOTAL",
    "DEFAULT_UNKNOWN",
    "EXCLUDE_BELOW",
    "allocation_counts",
    "compare_reported",
    "impact_ratio_table",
    "missing_data_bounds",
    "published_audit_headlines",
    "published_audit_rows",
    "scores_consistent_with_rates",
    "scoring_counts",
]

#: Category labels that mean "unknown race or sex": counted, never compared as a group.
DEFAULT_UNKNOWN: tuple[str, ...] = ("Unknown", "Missing/Unknown")
#: Label of a row that sums over a category (the sex table of a report has race "Total").
DEFAULT_TOTAL = "Total"
#: The rules' option: a category below this share of the applicants may be left out of the impact ratios.
EXCLUDE_BELOW = 0.02

_TABLE_COLUMNS = ["category", "group", "applicants", "selected", "rate", "share", "excluded", "unknown",
                  "comparator", "impact_ratio", "four_fifths", "note"]


def _as_columns(cols: Any, what: str) -> list[str]:
    if cols is None:
        return []
    out = [cols] if isinstance(cols, str) else list(cols)
    if not out and what == "group":
        raise ValueError("group names no column: give one column name or several")
    return out


def _unknown_list(unknown: Any) -> list:
    if unknown is None:
        return []
    return [unknown] if isinstance(unknown, str) else list(dict.fromkeys(unknown))


def _unknown_set(unknown: Any) -> set:
    return set(_unknown_list(unknown))


def _at(label: Any) -> str:
    """A row's index label as an error names it: ``7``, not ``np.int64(7)``."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def _fold(label: Any) -> Any:
    """A label as it is compared with the unknown and total labels: surrounding spaces dropped, case folded."""
    return label.strip().casefold() if isinstance(label, str) else label


def _clean_labels(frame: pd.DataFrame, cols: list[str], unknown: Any, total: Any, by: list[str],
                  duplicates: bool = True) -> pd.DataFrame:
    """Normalise the label spellings of ``cols`` and refuse labels that cannot be counted as groups.

    * every spelling of an unknown label that differs only in case or surrounding spaces (``unknown``,
      ``Unknown ``, ``MISSING/UNKNOWN``) becomes the label as ``unknown`` gives it;
    * surrounding spaces are dropped from every other text label (``"Female "`` is ``"Female"``);
    * a label that reads "total" but is not ``total`` itself (a lowercase ``total`` row, or any total row when
      ``total`` is None) is refused: it sums other rows, and counting it as a group doubles the applicants;
    * two labels of one column that differ only in case are refused (``female`` and ``Female``);
    * two rows with the same labels in every column of ``cols`` (within a cell of ``by``) are refused, unless
      the row holds no known label (unknown or total in every column): unknown rows are summed into the count
      of unknown applicants (``duplicates=False`` skips this check: rows of applicants, not of groups).
    """
    unk = _unknown_list(unknown)
    canon = {_fold(u): u for u in reversed(unk)}  # the first spelling given wins
    total_fold = _fold(total) if total is not None else None
    out = frame
    for col in cols:
        values = frame[col]
        mapping = {}
        folded: dict[Any, list] = {}
        for v in values.unique():  # the distinct labels, never the rows
            if not isinstance(v, str):
                folded.setdefault(v, []).append(v)
                continue
            f = _fold(v)
            if f in canon:
                if v != canon[f]:
                    mapping[v] = canon[f]
                continue
            if f == "total" or (total_fold is not None and f == total_fold):
                if v == total:
                    continue
                row = frame.index[(values == v).to_numpy()][0]
                hint = (f"write it {total!r} (it then sums the other rows) or remove it" if total is not None
                        else "remove it: the margins are computed from the categories' rows")
                raise ValueError(f"row {_at(row)}, column {col!r}: the label {v!r} is a total row, not a group; {hint}")
            stripped = v.strip()
            if stripped != v:
                mapping[v] = stripped
            folded.setdefault(f, []).append(stripped)
        for spellings in folded.values():
            distinct = list(dict.fromkeys(spellings))
            if len(distinct) > 1:
                rows = [frame.index[(values.map(lambda x: x.strip() if isinstance(x, str) else x) == d).to_numpy()][0]
                        for d in distinct[:2]]
                raise ValueError(f"column {col!r}: the labels {distinct[0]!r} (row {_at(rows[0])}) and {distinct[1]!r} "
                                 f"(row {_at(rows[1])}) differ only in case: spell each group one way")
        if mapping:
            if out is frame:
                out = frame.copy()
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
            renamed = np.array([mapping.get(u, u) if isinstance(u, str) else u for u in uniques], dtype=object)
            out[col] = np.where(codes >= 0, renamed[np.maximum(codes, 0)] if len(renamed) else None, None)
    if not duplicates:
        return out
    labels = out[cols].astype(object)
    no_known = (labels.isin(set(unk)) | (labels.eq(total) if total is not None else False)).all(axis=1)
    dup = out.duplicated([*by, *cols], keep=False).to_numpy() & ~no_known.to_numpy()
    if dup.any():
        rows = out.index[dup]
        first = out.loc[[rows[0]], [*by, *cols]].iloc[0]
        same = out.index[(out[[*by, *cols]] == first).all(axis=1).to_numpy()]
        raise ValueError(f"rows {_at(same[0])} and {_at(same[1])} repeat the group "
                         f"{', '.join(f'{c}={first[c]!r}' for c in cols)}"
                         f"{_where(by, tuple(first[c] for c in by))} (columns {cols}): list each group once "
                         "(duplicate rows are not summed)")
    return out


def _row(frame: pd.DataFrame, k: int, cols: list[str]) -> str:
    """``row 7 (sex='F', race='A')``: a row of ``frame`` by its index label and its group labels."""
    labels = ", ".join(f"{c}={frame[c].iloc[k]!r}" for c in cols)
    return f"row {_at(frame.index[k])} ({labels})"


def _check_count_frame(frame: Any, group: list[str], applicants: str, selected: str, by: list[str],
                       unknown: Any = None, total: Any = None) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in [*by, *group, applicants, selected] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}; it has {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(f"frame has no rows: group column(s) {group} name no group")
    for col in [*by, *group]:
        if frame[col].isna().any():
            raise ValueError(f"column {col!r} has {int(frame[col].isna().sum())} missing label(s), "
                             f"first at row {frame.index[frame[col].isna().to_numpy()][0]!r}")
    for col in (applicants, selected):
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            raise ValueError(f"column {col!r} must hold numeric counts, got dtype {frame[col].dtype}")
        v = frame[col].to_numpy(dtype=float)
        for bad, what in ((np.isinf(v), "is not finite"), (v < 0, "is negative")):
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{_row(frame, k, group)}, column {col!r}: the count {v[k]:g} {what}")
    a = frame[applicants].to_numpy(dtype=float)
    s = frame[selected].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        over = s > a * (1 + 1e-9) + 1e-9
    if over.any():
        k = int(np.flatnonzero(over)[0])
        raise ValueError(f"{_row(frame, k, group)}: column {selected!r} exceeds column {applicants!r}: {s[k]:g} "
                         f"selected of {a[k]:g} applicants")
    return _clean_labels(frame, group, unknown, total, by)


def _label(values: Sequence[Any]) -> str:
    return " ".join(str(v) for v in values)


def _where(by: list[str], key: tuple) -> str:
    return f" (in {', '.join(f'{c}={v!r}' for c, v in zip(by, key))})" if by else ""


def _analyses(cell: pd.DataFrame, group: list[str], total: Any, margins: bool,
              unknown: set) -> list[tuple[list[str], pd.DataFrame]]:
    """The tables of one cell: (columns compared, rows) for each margin and for the cross table."""
    is_total = {c: cell[c].eq(total).to_numpy() if total is not None else np.zeros(len(cell), bool) for c in group}
    # a column with no known label other than Total is summed over in this cell (a report's sex table has race
    # "Total", and its row of unknown sex may say "unknown" for race too)
    active = [c for c in group if (~is_total[c] & ~cell[c].astype(object).isin(unknown).to_numpy()).any()]
    if not active:
        return []
    cross = ~np.any([is_total[c] for c in active], axis=0)
    plans = [[c] for c in active] if len(active) > 1 and margins else []
    plans.append(active)
    out = []
    for cols in plans:
        if len(cols) == 1 and len(active) > 1:
            c = cols[0]
            reported = ~is_total[c] & np.all([is_total[o] for o in active if o != c], axis=0)
            rows = cell[reported] if reported.any() else cell[cross]  # a reported margin, else the sum of the cross table
        elif len(cols) == 1:
            rows = cell[~is_total[cols[0]]]
        else:
            rows = cell[cross]
        if len(rows):
            out.append((cols, rows))
    return out


def _one_table(rows: pd.DataFrame, cols: list[str], group: list[str], applicants: str, selected: str,
               unknown: set, total: Any, exclude_below: float | None, bound: float, where: str) -> pd.DataFrame:
    """The audit table of one analysis (rows already validated)."""
    labels = rows[cols].astype(object)
    is_unknown = labels.isin(unknown).any(axis=1).to_numpy()
    agg = (rows.assign(_unknown=is_unknown)
           .groupby([*cols, "_unknown"], sort=True, dropna=False)[[applicants, selected]]
           .sum(min_count=1).reset_index())
    agg = agg.sort_values("_unknown", kind="stable").reset_index(drop=True)
    known = ~agg["_unknown"].to_numpy()
    a = agg[applicants].to_numpy(dtype=float)
    s = agg[selected].to_numpy(dtype=float)
    category = " × ".join(cols)
    names = [_label(v) for v in agg[cols].itertuples(index=False)]
    for k in np.flatnonzero(known):
        if np.isnan(a[k]) or np.isnan(s[k]):
            col = applicants if np.isnan(a[k]) else selected
            raise ValueError(f"column {col!r} has no count for group {names[k]!r} of {category!r}{where}")
    for col, v in ((applicants, a), (selected, s)):
        neg = np.flatnonzero(v < 0)
        if neg.size:
            raise ValueError(f"column {col!r} has a negative count ({v[neg[0]]:g}) for group {names[neg[0]]!r} "
                             f"of {category!r}{where}")
    over = np.flatnonzero(s > a * (1 + 1e-9) + 1e-9)
    if over.size:
        k = over[0]
        raise ValueError(f"column {selected!r} exceeds column {applicants!r} for group {names[k]!r} of "
                         f"{category!r}{where}: {s[k]:g} selected of {a[k]:g} applicants")
    known_total = a[known].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(known & (a > 0), s / np.where(a > 0, a, 1.0), np.nan)
        share = np.where(known, a / known_total if known_total > 0 else np.nan, np.nan)
    cut = 0.0 if exclude_below is None else float(exclude_below)
    excluded = known & ((share < cut) | (a <= 0))
    included = known & ~excluded
    if not included.any():
        detail = ", ".join(f"{names[k]!r} ({share[k]:.1%})" for k in np.flatnonzero(known)) or "none known"
        raise ValueError(f"every group of column(s) {cols} in {category!r}{where} is excluded (below "
                         f"exclude_below={cut:g} of the applicants, or without applicants): {detail}; "
                         "nothing is left to compare")
    top = np.nanmax(rate[included])
    comparator = included & (rate == top)
    notes = np.array([""] * len(agg), dtype=object)
    notes[excluded & (a > 0)] = [f"excluded: {share[k]:.2%} of applicants, below {cut:.0%}" for k in
                                 np.flatnonzero(excluded & (a > 0))]
    notes[known & (a <= 0)] = "no applicants: rate undefined"
    notes[~known] = "unknown category: counted, not compared"
    if top > 0:
        ratio = np.where(known & (a > 0), rate / top, np.nan)
        notes[comparator] = "comparator (highest rate)"
    else:
        ratio = np.full(len(agg), np.nan)
        notes[known & (a > 0)] = [
            (notes[k] + "; " if notes[k] else "") + "impact ratio undefined: the comparator's rate is 0 (no "
            "applicant of any included group was selected)" for k in np.flatnonzero(known & (a > 0))]
    out = pd.DataFrame(index=range(len(agg)))
    out["category"] = category
    for c in group:
        out[c] = agg[c].to_numpy() if c in cols else (total if total is not None else "Total")
    out["group"] = names
    out["applicants"] = a
    out["selected"] = s
    out["rate"] = rate
    out["share"] = share
    out["excluded"] = excluded
    out["unknown"] = ~known
    out["comparator"] = comparator
    out["impact_ratio"] = ratio
    out["four_fifths"] = included & (ratio < bound)
    out["note"] = notes
    return out


def impact_ratio_table(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str = "applicants",
    selected: str = "selected",
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    margins: bool = True,
    bound: float = FOUR_FIFTHS,
) -> pd.DataFrame:
    r"""A Local Law 144 audit table from counts: rates, impact ratios, four-fifths flags, 2% exclusions.

    For each category ``c`` (one column of ``group``, or their intersection) and each group ``g`` of it,

    .. math::

        r_g = s_g / n_g, \qquad \text{share}_g = n_g / \sum_{h\ \text{known}} n_h, \qquad
        IR_g = r_g / \max_{h \in I} r_h, \qquad \text{flag}_g = [IR_g < 0.8],\ g \in I,

    with ``n_g`` applicants and ``s_g`` selected (for a scoring tool: scored above the median, so ``r_g`` is the
    scoring rate). ``I`` holds the *included* groups: known, with applicants, and (the rules' option) at least
    ``exclude_below`` of the known applicants; the comparator is the included group with the highest rate.
    An excluded group keeps its rate and a ratio against the comparator (which may exceed 1) but is never the
    comparator and never flagged. Rows whose label is in ``unknown`` are reported as counts, never as a group.

    Labels are read leniently where that is safe and strictly where it is not: a spelling of an ``unknown`` label
    that differs in case or surrounding spaces (``unknown``, ``Unknown ``) is that unknown label, and surrounding
    spaces are dropped from every label; a label reading "total" other than ``total`` itself (a lowercase
    ``total`` row), two rows with the same group labels (several unknown rows are summed into one count of
    unknown applicants), two labels of a column differing only in case, and an infinite count are refused with a
    ``ValueError`` naming the row (its index label) and the column.

    ``group`` may name several columns: the table then holds each column's own table (``margins=True``) and the
    intersectional one, in one call. A column's table uses the rows that sum over the other columns (labelled
    ``total``, as in a published report's sex table) when there are such rows, and otherwise the sum of the
    intersectional rows; a column that is ``total`` throughout a cell of ``by`` is left out there. ``by`` names
    columns that separate independent tables (an audit, a tool, a job). Counts may be fractional (shared seats of
    a simulated allocation, or counts rebuilt from rounded rates).

    A comparator rate of 0 (nobody in any included group selected) leaves every ratio undefined: ``NaN`` with
    the reason in ``note`` (the curve functions above set ``0/0 := 1`` instead, because at ``p = 1`` nobody is
    selected by construction; in an audit table it is a fact worth reporting). A flag is screening evidence of a
    selection-rate gap, never proof of discrimination, and no flag is no proof of fairness.

    Returns
    -------
    pandas.DataFrame
        One row per (``by``, category, group): ``by`` columns, ``category``, the ``group`` columns (``total``
        where a column is summed over), ``group`` (the label), ``applicants``, ``selected``, ``rate``, ``share``,
        ``excluded``, ``unknown``, ``comparator``, ``impact_ratio``, ``four_fifths`` and ``note``.

    Raises
    ------
    ValueError
        naming the row or group and the column: negative or infinite counts, ``selected`` above ``applicants``, a
        missing count or label, a total row other than ``total``, a repeated group, a frame without rows, or a table
        whose every group is excluded.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "F", "M", "M", "Unknown"], "race": ["A", "B", "A", "B", "Unknown"],
    ...                        "applicants": [40, 60, 50, 50, 20], "selected": [10, 30, 20, 25, 5]})
    >>> t = impact_ratio_table(counts, group=["sex", "race"])
    >>> t[t["category"] == "sex"][["group", "rate", "impact_ratio", "four_fifths"]].round(3).values.tolist()
    [['F', 0.4, 0.889, False], ['M', 0.45, 1.0, False], ['Unknown', nan, nan, False]]
    >>> t[t["category"] == "sex × race"][["group", "impact_ratio", "four_fifths"]].round(3).values.tolist()[:2]
    [['F A', 0.5, True], ['F B', 1.0, False]]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    frame = _check_count_frame(frame, cols, applicants, selected, by_cols, unknown, total)
    b = _check_bound(bound)
    if exclude_below is not None and not 0.0 <= float(exclude_below) < 1.0:
        raise ValueError(f"exclude_below must lie in [0, 1) or be None, got {exclude_below!r}")
    unk = _unknown_set(unknown)
    parts = []
    for key, cell in cell_frames(frame, by_cols, sort=False, dropna=False):
        where = _where(by_cols, key)
        analyses = _analyses(cell, cols, total, margins, unk)
        if not analyses:
            raise ValueError(f"group column(s) {cols} have no rows to compare{where}: no label other than {total!r} or an unknown category")
        for used, rows in analyses:
            table = _one_table(rows, used, cols, applicants, selected, unk, total, exclude_below, b, where)
            parts.append(with_keys(table, by_cols, key))
    return pd.concat(parts, ignore_index=True)


def missing_data_bounds(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str = "applicants",
    selected: str = "selected",
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    margins: bool = True,
    bound: float = FOUR_FIFTHS,
    comparator: str = "observed",
) -> pd.DataFrame:
    r""":func:`impact_ratio_table` plus bounds on each rate and ratio for the applicants of unknown category.

    With ``m`` applicants of unknown category in a table (the sum of its unknown rows), group ``g`` could hold
    all of them (Gerchick et al.'s worst and best cases), none selected or all selected:

    .. math::

        r^{lo}_g = \frac{s_g}{n_g + m}, \qquad r^{hi}_g = \frac{s_g + m}{n_g + m},

    or only its share ``p_g = n_g / \sum_{h\ known} n_h`` of them (the *proportional* variant, ``_prop``):

    .. math:: r^{lo,prop}_g = \frac{s_g}{n_g + m p_g}, \qquad r^{hi,prop}_g = \frac{s_g + m p_g}{n_g + m p_g}.

    The ratio bounds divide by the comparator's observed rate (``comparator="observed"``, as in the paper), or
    by the highest included rate *in that scenario*, where only ``g``'s rate moves
    (``comparator="scenario"``: :math:`r^{lo}_g / \max(r^{lo}_g, \max_{h \in I, h \ne g} r_h)`, which never
    exceeds 1). ``four_fifths_possible`` says the lower ratio bound is below ``bound`` (an included group that
    could fail the rule), ``four_fifths_certain`` that even the upper one is. A table without an unknown row, or
    whose unknown count is missing, gets no bounds (``NaN``, with the reason in ``note``): an unreported count is
    not a count of zero.

    Every keyword but ``comparator`` is passed on to :func:`impact_ratio_table` and means what it means there; the
    returned table is that table with the bound columns added.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "M", "Unknown"], "applicants": [100, 100, 50], "selected": [40, 45, 0]})
    >>> t = missing_data_bounds(counts, group="sex")
    >>> t[["group", "rate_lower", "rate_upper", "impact_ratio_lower", "impact_ratio_upper"]].round(3).values.tolist()[:2]
    [['F', 0.267, 0.6, 0.593, 1.333], ['M', 0.3, 0.633, 0.667, 1.407]]
    >>> bool(t.loc[0, "four_fifths_possible"]), bool(t.loc[0, "four_fifths"])
    (True, False)
    """
    if comparator not in ("observed", "scenario"):
        raise ValueError(f"comparator must be 'observed' or 'scenario', got {comparator!r}")
    table = impact_ratio_table(frame, group=group, applicants=applicants, selected=selected, by=by, unknown=unknown,
                               total=total, exclude_below=exclude_below, margins=margins, bound=bound)
    keys = [*_as_columns(by, "by"), "category"]
    unk_rows = table["unknown"].to_numpy()
    has_unknown = pd.Series(unk_rows).groupby([table[k] for k in keys], sort=False).transform("any").to_numpy()
    m_sum = (table["applicants"].where(table["unknown"]).groupby([table[k] for k in keys], sort=False)
             .transform(lambda v: v.sum(min_count=1)))
    m_nan = table["applicants"].where(table["unknown"]).isna() & table["unknown"]
    any_nan = m_nan.groupby([table[k] for k in keys], sort=False).transform("any").to_numpy()
    m = np.where(has_unknown & ~any_nan, m_sum.to_numpy(dtype=float), np.nan)
    known = ~unk_rows & (table["applicants"].to_numpy() > 0)
    n = table["applicants"].to_numpy(dtype=float)
    s = table["selected"].to_numpy(dtype=float)
    p = table["share"].to_numpy(dtype=float)
    included = known & ~table["excluded"].to_numpy()
    out = table.copy()
    out.insert(out.columns.get_loc("note"), "n_unknown", m)
    rates = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        rates["rate_lower"] = s / (n + m)
        rates["rate_upper"] = (s + m) / (n + m)
        rates["rate_lower_prop"] = s / (n + m * p)
        rates["rate_upper_prop"] = (s + m * p) / (n + m * p)
    for name, v in rates.items():
        rates[name] = np.where(known, v, np.nan)
    # the comparator: the observed top rate of the table, or the top rate with g's rate moved
    rate = out["rate"].where(pd.Series(included)).to_numpy(dtype=float)
    grouped = pd.Series(rate).groupby([out[k] for k in keys], sort=False)
    top = grouped.transform("max").to_numpy(dtype=float)
    # the highest included rate among the *other* groups of the table (the second-highest where g is the top)
    def _top_other(v: pd.Series) -> pd.Series:
        arr = v.to_numpy(dtype=float)
        res = np.full(arr.size, np.nan)
        for i in range(arr.size):  # tables hold at most a few dozen groups
            others = np.delete(arr, i)
            others = others[~np.isnan(others)]
            res[i] = others.max() if others.size else np.nan
        return pd.Series(res, index=v.index)
    top_other = grouped.transform(_top_other).to_numpy(dtype=float)
    ratios = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, v in rates.items():
            if comparator == "observed":
                den = top
            else:
                den = np.where(included, np.fmax(v, top_other), top)
            ratios[name.replace("rate", "impact_ratio")] = np.where(known & (den > 0), v / den, np.nan)
    for name in ["rate_lower", "rate_upper", "impact_ratio_lower", "impact_ratio_upper",
                 "rate_lower_prop", "rate_upper_prop", "impact_ratio_lower_prop", "impact_ratio_upper_prop"]:
        out.insert(out.columns.get_loc("note"), name, rates.get(name, ratios.get(name)))
    b = _check_bound(bound)
    lo = out["impact_ratio_lower"].to_numpy(dtype=float)
    hi = out["impact_ratio_upper"].to_numpy(dtype=float)
    out.insert(out.columns.get_loc("note"), "four_fifths_possible", included & (lo < b))
    out.insert(out.columns.get_loc("note"), "four_fifths_certain", included & (hi < b))
    no_count = known & np.isnan(m)
    reason = np.where(has_unknown, "no bounds: the count of unknown applicants is missing",
                      "no bounds: the table reports no unknown applicants")
    notes = out["note"].to_numpy(dtype=object).copy()
    for k in np.flatnonzero(no_count):
        notes[k] = (notes[k] + "; " if notes[k] else "") + reason[k]
    out["note"] = notes
    return out


def allocation_counts(candidates: pd.DataFrame, pools: Any, selected: Any, *, group: str | Sequence[str]) -> pd.DataFrame:
    """Applicant and selection counts per group from simulated selection rounds (input to :func:`impact_ratio_table`).

    Each round is a pool of row positions of ``candidates`` (``pools``, shape ``(rounds, pool size)``, as drawn by
    :func:`allocbias.selection.draw_group_pools`) and the share of a seat each got (``selected``, same shape, as
    returned by :func:`allocbias.selection.select_top_k`: 1, 0, or a fraction for tied candidates). A candidate
    counts as one applicant per appearance; ``selected`` sums the seat shares, so it may be fractional.

    .. math:: n_g = \\#\\{(r, j) : c_{rj} \\in g\\}, \\qquad s_g = \\sum_{(r, j) : c_{rj} \\in g} x_{rj}

    Examples
    --------
    >>> cands = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["A", "A", "B"]})
    >>> allocation_counts(cands, [[0, 1], [1, 2]], [[1, 0], [0.5, 0.5]], group=["sex", "race"]).values.tolist()
    [['F', 'A', 1, 1.0], ['F', 'B', 1, 0.5], ['M', 'A', 2, 0.5]]
    """
    cols = _as_columns(group, "group")
    if not isinstance(candidates, pd.DataFrame):
        raise ValueError(f"candidates must be a pandas DataFrame, got {type(candidates).__name__}")
    missing = [c for c in cols if c not in candidates.columns]
    if missing:
        raise ValueError(f"candidates has no column(s) {missing}")
    idx = np.asarray(pools)
    x = np.asarray(selected, dtype=float)
    if idx.ndim != 2 or idx.dtype.kind not in "iu":
        raise ValueError(f"pools must be a 2-d array of row positions, got shape {idx.shape} and dtype {idx.dtype}")
    if x.shape != idx.shape:
        raise ValueError(f"selected must have the shape of pools {idx.shape}, got {x.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= len(candidates)):
        raise ValueError(f"pools hold row positions outside 0..{len(candidates) - 1}")
    if not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
        raise ValueError("selected must hold seat shares in [0, 1]")
    n = len(candidates)
    counts = candidates[cols].copy()
    counts["applicants"] = np.bincount(idx.ravel(), minlength=n)
    counts["selected"] = np.bincount(idx.ravel(), weights=x.ravel(), minlength=n)
    out = counts.groupby(cols, sort=True)[["applicants", "selected"]].sum().reset_index()
    return out[out["applicants"] > 0].reset_index(drop=True)


def scoring_counts(frame: pd.DataFrame, *, score: str, group: str | Sequence[str],
                   by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Applicants and applicants scored above the pooled median per group: the counts behind a scoring rate.

    The median is ``Q(0.5)`` of the pooled scores of each cell of ``by`` (``np.quantile``,
    ``method="inverted_cdf"``, the cut of :func:`di_median`), and "above" is strict, so the scoring rates of
    :func:`impact_ratio_table` on this frame give exactly :func:`di_median`'s impact ratios.

    Examples
    --------
    >>> df = pd.DataFrame({"score": [1, 2, 3, 4, 3, 4, 5, 6], "g": list("AAAABBBB")})
    >>> scoring_counts(df, score="score", group="g").values.tolist()
    [['A', 4, 1, 3.0], ['B', 4, 3, 3.0]]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in [*by_cols, *cols, score] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}")
    if len(frame) == 0:
        raise ValueError("frame has no rows")
    values = _as_scores(frame[score])
    med = (pd.Series(values, index=frame.index).groupby([frame[c] for c in by_cols], sort=False)
           .transform(lambda v: np.quantile(v.to_numpy(), 0.5, method=QUANTILE_METHOD))
           if by_cols else pd.Series(np.quantile(values, 0.5, method=QUANTILE_METHOD), index=frame.index))
    work = frame[[*by_cols, *cols]].assign(applicants=1, selected=(values > med.to_numpy()).astype(np.int64),
                                           median=med.to_numpy())
    return (work.groupby([*by_cols, *cols], sort=True)
            .agg(applicants=("applicants", "sum"), selected=("selected", "sum"), median=("median", "first"))
            .reset_index())


def _decimals(values: np.ndarray) -> int:
    """Number of decimals the finite values are written with (at most 6): 0.47 -> 2, 0.473 -> 3."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 6
    scaled = np.round(finite * 1e6).astype(np.int64)
    for d in range(7):
        if np.all(scaled % 10 ** (6 - d) == 0):
            return d
    return 6


#: Why a published impact ratio and the one recomputed from its counts disagree (:func:`compare_reported`).
DIFFERENCE_REASONS = ("counts do not give the rate", "rounded rates", "another comparator", "unexplained")
__all__ += ["DIFFERENCE_REASONS"]


def compare_reported(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str,
    selected: str,
    reported_rate: str,
    reported_ratio: str,
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    tol: float = 0.01,
) -> pd.DataFrame:
    r"""Recompute a published audit table from its counts and say why a published ratio differs.

    Every table (a cell of ``by``; ``group`` names its columns, without margins) is recomputed with
    :func:`impact_ratio_table`; a row *disagrees* when :math:`|IR^{ours}_g - IR^{pub}_g| > tol`. A disagreement
    gets the first reason that explains it:

    1. ``"counts do not give the rate"``: :math:`|s_g / n_g - r^{pub}_g| > h`, where ``h`` is half a unit of the
       last decimal the table writes its rates with (0.005 for 0.47);
    2. ``"rounded rates"``: the published ratio lies within what the published, rounded rates allow against our
       comparator ``c``: :math:`[(r_g - h)/(r_c + h) - h', (r_g + h)/(r_c - h) + h']` (``h'`` the same for ratios);
    3. ``"another comparator"``: one comparator rate :math:`\rho` fits every published ratio of the table
       within rounding, :math:`\rho \in \bigcap_g [(r_g - h)/(IR^{pub}_g + h'), (r_g + h)/(IR^{pub}_g - h')]`,
       but it is not our comparator's rate (a group below 2% kept, or a comparator from other data);
    4. ``"unexplained"``.

    Rows whose count, published ratio or recomputed ratio is missing are not compared (``reason`` says which).
    Within a table, two rows with the same labels raise ``ValueError``.

    Returns
    -------
    pandas.DataFrame
        The known groups of :func:`impact_ratio_table` with ``reported_rate``, ``reported_impact_ratio``,
        ``ratio_difference`` (ours minus published), ``disagrees`` and ``reason``.

    Examples
    --------
    >>> pub = pd.DataFrame({"g": ["A", "B", "C"], "n": [200, 200, 200], "s": [100, 80, 61],
    ...                     "rate": [0.5, 0.4, 0.305], "ir": [1.0, 0.8, 0.45]})
    >>> c = compare_reported(pub, group="g", applicants="n", selected="s", reported_rate="rate", reported_ratio="ir")
    >>> c[["group", "impact_ratio", "reported_impact_ratio", "disagrees", "reason"]].values.tolist()
    [['A', 1.0, 1.0, False, 'agrees'], ['B', 0.8, 0.8, False, 'agrees'], ['C', 0.61, 0.45, True, 'unexplained']]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    missing = [c for c in (reported_rate, reported_ratio) if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}")
    unk = _unknown_set(unknown)
    keys = [*by_cols, *cols]
    is_unknown = frame[cols].astype(object).isin(unk).any(axis=1)
    known_rows = frame[~is_unknown]
    dup = known_rows.duplicated(keys, keep=False)
    if dup.any():
        first = known_rows[dup].iloc[0]
        raise ValueError(f"two rows share the labels {dict(first[keys])}: a table must list each group once")
    countable = known_rows[applicants].notna() & known_rows[selected].notna()
    usable = known_rows[countable]
    if by_cols:  # a table none of whose groups has counts is not recomputed
        cells = pd.MultiIndex.from_frame(usable[by_cols]) if len(by_cols) > 1 else pd.Index(usable[by_cols[0]])
        mine = pd.MultiIndex.from_frame(frame[by_cols]) if len(by_cols) > 1 else pd.Index(frame[by_cols[0]])
        unknown_rows = frame[is_unknown.to_numpy() & mine.isin(cells)]
    else:
        unknown_rows = frame[is_unknown] if len(usable) else frame.iloc[:0]
    if len(usable) == 0:
        raise ValueError(f"no known group of column(s) {cols} has both {applicants!r} and {selected!r} counts")
    table = impact_ratio_table(pd.concat([usable, unknown_rows]), group=cols,
                               applicants=applicants, selected=selected, by=by_cols, unknown=unknown, total=total,
                               exclude_below=exclude_below, margins=False)
    table = table[~table["unknown"]].drop(columns=["unknown"])
    reported = known_rows[keys + [reported_rate, reported_ratio]].rename(
        columns={reported_rate: "reported_rate", reported_ratio: "reported_impact_ratio"})
    out = reported.merge(table, on=keys, how="left", validate="one_to_one")
    out = out[[c for c in table.columns] + ["reported_rate", "reported_impact_ratio"]]
    labels = pd.Series([_label(v) for v in known_rows[cols].itertuples(index=False)], index=out.index)
    out["group"] = out["group"].fillna(labels)
    out["ratio_difference"] = out["impact_ratio"] - out["reported_impact_ratio"]
    out["disagrees"] = out["ratio_difference"].abs() > tol
    reason = np.full(len(out), "agrees", dtype=object)
    reason[out["reported_impact_ratio"].isna().to_numpy()] = "not reported"
    reason[(out["reported_impact_ratio"].notna() & out["impact_ratio"].isna()).to_numpy()] = "not computable"
    cell_keys = [*by_cols] or None
    cells = out.groupby(cell_keys, sort=False, dropna=False).indices if cell_keys else {(): np.arange(len(out))}
    for idx in cells.values():
        part = out.iloc[idx]
        r_pub = part["reported_rate"].to_numpy(dtype=float)
        n = part["applicants"].to_numpy(dtype=float)
        s = part["selected"].to_numpy(dtype=float)
        ir_pub = part["reported_impact_ratio"].to_numpy(dtype=float)
        h = 0.5 * 10.0 ** -_decimals(r_pub) if np.isfinite(r_pub).any() else 0.0
        h_ir = 0.5 * 10.0 ** -_decimals(ir_pub)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_cnt = np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)
        r = np.where(np.isfinite(r_pub), r_pub, r_cnt)
        comp = part["comparator"].to_numpy(dtype=bool)
        r_c = np.nanmax(np.where(comp, r, np.nan)) if comp.any() else np.nan
        eps = 1e-9
        with np.errstate(invalid="ignore", divide="ignore"):
            lo = (r - h) / (r_c + h) - h_ir - eps
            hi = np.where(r_c - h > 0, (r + h) / (r_c - h), np.inf) + h_ir + eps
            usable = np.isfinite(r) & np.isfinite(ir_pub) & (ir_pub > 0)
            c_lo = np.where(usable, (r - h) / (ir_pub + h_ir), -np.inf)
            c_hi = np.where(usable & (ir_pub - h_ir > 0), (r + h) / np.where(ir_pub - h_ir > 0, ir_pub - h_ir, 1.0),
                            np.inf)
        one_comparator = usable.any() and c_lo.max() <= c_hi.min() + eps
        dis = part["disagrees"].to_numpy(dtype=bool)
        for j in np.flatnonzero(dis):
            if np.isfinite(r_pub[j]) and abs(r_cnt[j] - r_pub[j]) > h + eps:
                why = DIFFERENCE_REASONS[0]
            elif lo[j] <= ir_pub[j] <= hi[j]:
                why = DIFFERENCE_REASONS[1]
            elif one_comparator:
                why = DIFFERENCE_REASONS[2]
            else:
                why = DIFFERENCE_REASONS[3]
            reason[idx[j]] = why
    out["reason"] = reason
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- the published audits of Gerchick et al.

#: Columns that identify one published table in Gerchick et al.'s data (an audit, a rate definition, a category).
AUDIT_TABLE = ("audit_id", "selection_or_scoring_rate", "protected_char_group")
#: Category columns of their data.
AUDIT_GROUPS = ("sex", "race_ethnicity")
__all__ += ["AUDIT_GROUPS", "AUDIT_TABLE"]


def _r_any(values: pd.Series) -> Any:
    """R's ``any()`` without ``na.rm``: True if any True, else NA if any NA, else False."""
    v = values.astype("boolean")
    if v.fillna(False).any():
        return True
    return pd.NA if v.isna().any() else False


def published_audit_rows(audits: pd.DataFrame, recomputed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows of Gerchick et al.'s audit data their impact-ratio analysis keeps, with the ratio it analyses.

    Their inclusion rules (Section 4.2.2 of the paper; ``code/paper_results.Rmd`` of their repository):

    * leave out the HackerRank audits (there, being selected is the negative outcome);
    * leave out the scoring rows of the one audit (Dover) that reports both selection and scoring rates;
    * analyse the published ratio, except where a table publishes no ratio of 1 and a row's ratio is missing
      (HiredScore publishes none; a comparator below 2% in an NYU Langone table): there use the ratio recomputed
      from the counts. ``recomputed`` is :func:`impact_ratio_table` of the same data (with ``by=AUDIT_TABLE``,
      ``group=AUDIT_GROUPS``, ``margins=False``); without it the ratios come from the published rates.

    Adds ``table_any_ir_is_one`` (a published ratio of 1 in the table), ``impact_ratio_for_analysis`` and
    ``table_has_comparator`` (R's ``any()`` of the authors' ``comparator_group`` over the table: ``NA`` when no
    row is marked True and some are unmarked).
    """
    need = ["deploying_entity", "tool_vendor", "impact_ratio", "comparator_group", "number_of_applications",
            *AUDIT_TABLE, *AUDIT_GROUPS]
    missing = [c for c in need if c not in audits.columns]
    if missing:
        raise ValueError(f"audits has no column(s) {missing}: expected Gerchick et al.'s audits_full.csv")
    keep = (audits["deploying_entity"] != "Hackerrank") & ~(
        (audits["tool_vendor"] == "dover") & (audits["selection_or_scoring_rate"] == "Scoring"))
    rows = audits[keep].copy()
    table = list(AUDIT_TABLE)
    rows["table_any_ir_is_one"] = rows["impact_ratio"].eq(1).groupby([rows[c] for c in table]).transform("any")
    if recomputed is not None:
        ours = recomputed[[*table, *AUDIT_GROUPS, "impact_ratio"]].rename(columns={"impact_ratio": "_ours"})
        rows = rows.merge(ours, on=[*table, *AUDIT_GROUPS], how="left", validate="many_to_one")
    else:
        top = rows.groupby(table)["result"].transform("max")
        rows["_ours"] = rows["result"] / top
    fill = ~rows["table_any_ir_is_one"] & rows["impact_ratio"].isna()
    rows["impact_ratio_for_analysis"] = rows["impact_ratio"].where(~fill, rows["_ours"])
    rows["table_has_comparator"] = rows.groupby(table)["comparator_group"].transform(_r_any)
    return rows.drop(columns=["_ours"]).reset_index(drop=True)


def published_audit_headlines(audits: pd.DataFrame, recomputed: pd.DataFrame | None = None,
                              bound: float = FOUR_FIFTHS) -> pd.DataFrame:
    """Gerchick et al.'s headline shares, recomputed with their inclusion rules (see :func:`published_audit_rows`).

    * ``audits_any_ir_below``: audits (with at least one analysed ratio) with a ratio below ``bound`` in a row
      with applicants (their Section 4.2.2);
    * ``tables_any_ir_below``: tables (audit x rate definition x category) with a marked comparator and a ratio
      below ``bound`` -- the paper's "group level results" (Section 4.2.2);
    * ``audits_any_ir_above_1``: audits with a ratio above 1 (Section 4.2.2);
    * ``audits_first_use_unknown`` and ``audits_position_unknown``: audits whose date of first use, or position,
      is missing or "Unknown" (Section 4.2.4; all audits, before the exclusions above);
    * ``audits_missing_demographics``: among audits with an unknown-category row, those reporting applicants
      there (Section 4.2.4; an audit whose unknown counts are all missing counts in the denominator).

    Returns one row per quantity: ``quantity``, ``numerator``, ``denominator``, ``share``.
    """
    b = _check_bound(bound)
    rows = published_audit_rows(audits, recomputed)
    ir = rows["impact_ratio_for_analysis"]
    rows["_below"] = (ir < b) & (rows["number_of_applications"] != 0) & rows["number_of_applications"].notna()
    rows["_above"] = ir > 1
    analysed = rows[ir.notna()]
    per_audit = rows.groupby("audit_id")[["_below", "_above"]].any().loc[analysed["audit_id"].unique()]
    tables = rows.groupby(list(AUDIT_TABLE))["_below"].transform("any")
    has_comp = rows["table_has_comparator"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    in_tables = rows[ir.notna().to_numpy() & has_comp].assign(_tb=tables).drop_duplicates(list(AUDIT_TABLE))
    out = [("audits_any_ir_below", int(per_audit["_below"].sum()), len(per_audit)),
           ("tables_any_ir_below", int(in_tables["_tb"].sum()), len(in_tables)),
           ("audits_any_ir_above_1", int(per_audit["_above"].sum()), len(per_audit))]
    for name, col in (("audits_first_use_unknown", "date_of_first_use"), ("audits_position_unknown", "position")):
        if col not in audits.columns:
            raise ValueError(f"audits has no column {col!r}")
        meta = audits[["audit_id", col]].drop_duplicates()
        unknown = meta[col].isna() | meta[col].astype(str).str.contains("unknown", case=False)
        out.append((name, int(unknown.sum()), len(meta)))
    miss = audits[(audits["sex"] == "Missing/Unknown") | (audits["race_ethnicity"] == "Missing/Unknown")]
    per = miss.groupby("audit_id")["number_of_applications"].apply(lambda v: _r_any((v > 0).where(v.notna())) is True)
    out.append(("audits_missing_demographics", int(per.sum()), len(per)))
    frame = pd.DataFrame(out, columns=["quantity", "numerator", "denominator"])
    frame["share"] = frame["numerator"] / frame["denominator"]
    return frame


def scores_consistent_with_rates(
    counts: pd.DataFrame,
    *,
    group: str,
    applicants: str = "applicants",
    selected: str = "selected",
    spread: Any = None,
    n: int = 20_000,
    cut: float = 50.0,
    scale: float = 10.0,
    seed: int = 0,
) -> pd.DataFrame:
    r"""Simulated scores whose share above ``cut`` in each group is the group's reported scoring rate.

    A published scoring-rate table gives, per group, only how many applicants scored above the median. This draws
    one of the many score distributions consistent with it: the groups keep their relative sizes in a sample of
    about ``n`` (at least 2 per group), and group ``g`` gets ``m_g = round(n_g r_g)`` scores above the cut and the
    rest below,

    .. math:: s = \text{cut} \pm \text{scale} \cdot \sigma_g \cdot |Z|, \qquad Z \sim N(0, 1),

    with the spread ``\sigma_g`` of ``spread`` (1 where not given). The reported numbers fix ``m_g / n_g`` and
    nothing else: the spreads are free, and so is everything the curve of :func:`di_curve` sees away from the
    cut. The published audits contain no scores, so any conclusion drawn from these samples is about what the
    reported numbers *allow*, not about the tool. ``cut`` stands for the audit's median; the simulated sample's
    own pooled median can differ when applicants of unknown category (not simulated) scored differently.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "M"], "applicants": [300, 100], "selected": [120, 60]})
    >>> sim = scores_consistent_with_rates(counts, group="sex", n=400, spread={"F": 0.5}, seed=1)
    >>> sim.groupby("sex")["score"].apply(lambda s: float((s > 50).mean())).to_dict()
    {'F': 0.4, 'M': 0.6}
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive, got {scale!r}")
    table = impact_ratio_table(counts, group=group, applicants=applicants, selected=selected, exclude_below=None,
                               margins=False)
    table = table[~table["unknown"] & (table["applicants"] > 0)]
    spread = dict(spread or {})
    unknown_groups = set(spread) - set(table[group])
    if unknown_groups:
        raise ValueError(f"spread names group(s) {sorted(map(str, unknown_groups))} absent from column {group!r}")
    bad = {k: v for k, v in spread.items() if not (np.isfinite(v) and v > 0)}
    if bad:
        raise ValueError(f"spread must be positive for every group, got {bad}")
    rng = np.random.default_rng(seed)
    total = table["applicants"].sum()
    parts = []
    for label, size, rate in zip(table[group], table["applicants"], table["rate"]):  # a handful of groups
        n_g = max(2, int(round(n * size / total)))
        m_g = int(round(n_g * rate))
        sigma = float(spread.get(label, 1.0))
        mag = np.abs(rng.standard_normal(n_g)) * scale * sigma
        sign = np.r_[np.ones(m_g), -np.ones(n_g - m_g)]
        mag[mag == 0] = np.finfo(float).tiny  # a score exactly at the cut would count as below
        parts.append(pd.DataFrame({"score": cut + sign * mag, group: label}))
    return pd.concat(parts, ignore_index=True)


def published_audit_counts(audits: pd.DataFrame) -> pd.DataFrame:
    """The rows of Gerchick et al.'s data an audit table can be recomputed from.

    Keeps the known-category rows that report both counts (``number_of_applications`` and
    ``n_selected_or_n_above_median``) and the unknown-category rows of every table (:data:`AUDIT_TABLE`) that
    keeps at least one known row; the result goes to :func:`impact_ratio_table` or :func:`missing_data_bounds`
    with ``by=AUDIT_TABLE``, ``group=AUDIT_GROUPS`` and ``margins=False``.
    """
    missing = [c for c in [*AUDIT_TABLE, *AUDIT_GROUPS, "number_of_applications", "n_selected_or_n_above_median"]
               if c not in audits.columns]
    if missing:
        raise ValueError(f"audits has no column(s) {missing}: expected Gerchick et al.'s audits_full.csv")
    unknown = audits[list(AUDIT_GROUPS)].isin(_unknown_set(DEFAULT_UNKNOWN)).any(axis=1)
    complete = audits[["number_of_applications", "n_selected_or_n_above_median"]].notna().all(axis=1)
    rows = audits[unknown | complete]
    known = ~unknown.loc[rows.index]
    has_known = known.groupby([rows[c] for c in AUDIT_TABLE]).transform("any")
    return rows[has_known.to_numpy()].reset_index(drop=True)


__all__ += ["published_audit_counts"]


# =========================================================================== one employer's bias audit
#
# What an employer or its independent auditor publishes under Local Law 144, from the employer's own data in
# either shape: one row per applicant, or one row per category with counts. Everything above is reused: the
# counts go to missing_data_bounds (impact_ratio_table), the scores to the curve metrics.

__all__ += ["BiasAudit", "INTERVAL_MIN_COUNT", "REGRESSION_BOOT", "REGRESSION_BOOT_MAX_N", "bias_audit",
            "rate_intervals", "ratio_intervals"]

#: A category with fewer selected (or fewer not selected) applicants than this gets a warning: its rate's and
#: ratio's intervals rest on a normal approximation (Wilson) or on very few selections (the ratio's draws).
INTERVAL_MIN_COUNT = 5
_YES = {"yes", "y", "true", "1", "1.0"}
_NO = {"no", "n", "false", "0", "0.0"}


def rate_intervals(selected: Any, applicants: Any, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score intervals of selection rates ``s / n`` (vectorised; counts may be fractional).

    .. math::

        \frac{\hat r + z^2/2n \pm z \sqrt{\hat r (1 - \hat r)/n + z^2/4n^2}}{1 + z^2/n}, \qquad
        z = \Phi^{-1}\big((1 + c)/2\big)

    Wilson (1927); Brown, Cai and DasGupta (2001) recommend it over the Wald interval for small ``n`` and rates
    near 0 or 1: it never leaves ``[0, 1]`` and is not empty when nobody (or everybody) was selected.
    ``NaN`` where ``n`` is 0.

    Examples
    --------
    >>> lo, hi = rate_intervals([0, 5], [10, 10])
    >>> np.round(lo, 4).tolist(), np.round(hi, 4).tolist()
    ([0.0, 0.2366], [0.2775, 0.7634])
    """
    s = np.asarray(selected, dtype=float)
    n = np.asarray(applicants, dtype=float)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    z = stats.norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = s / n
        centre = (r + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(r * (1 - r) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        lo, hi = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    bad = ~(n > 0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def ratio_intervals(selected: Any, applicants: Any, included: Any, confidence: float = 0.95, draws: int = 4000,
                    seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Intervals of the impact ratios ``r_g / max_{h in I} r_h`` of one table, by simulation.

    Each draw gives every group a rate from its Jeffreys distribution, :math:`r^*_g \sim
    \mathrm{Beta}(s_g + \tfrac12, n_g - s_g + \tfrac12)`, and recomputes the comparator:
    :math:`IR^*_g = r^*_g / \max_{h \in I} r^*_h`. The interval is the central ``confidence`` share of the
    draws. Why this and not a closed form: the comparator is *chosen by the data* (the highest rate), which a
    two-group interval (Katz's log interval, Koopman's score interval) ignores; the comparator's own ratio is 1 by
    construction, yet its interval says how far below 1 it could be; and the Jeffreys distribution, unlike a
    binomial resample, does not collapse to a point when a group has no (or only) selections. Counts may be
    fractional. ``NaN`` for groups not in ``included`` and without applicants, and everywhere when no included
    group has applicants.

    Examples
    --------
    >>> lo, hi = ratio_intervals([50, 40], [100, 100], [True, True], draws=2000)
    >>> bool(lo[1] < 0.8 < hi[1] <= 1.0), bool(lo[0] < 1.0 == hi[0])
    (True, True)
    """
    s = np.asarray(selected, dtype=float)
    n = np.asarray(applicants, dtype=float)
    inc = np.asarray(included, dtype=bool) & (n > 0)
    has = n > 0
    lo = np.full(s.shape, np.nan)
    hi = np.full(s.shape, np.nan)
    if not inc.any():
        return lo, hi
    rng = np.random.default_rng(seed)
    idx = np.flatnonzero(has)
    sims = rng.beta(s[idx] + 0.5, n[idx] - s[idx] + 0.5, size=(int(draws), idx.size))
    top = sims[:, inc[idx]].max(axis=1, keepdims=True)
    ir = sims / top
    q = np.quantile(ir, [0.5 - confidence / 2, 0.5 + confidence / 2], axis=0)
    lo[idx], hi[idx] = q[0], q[1]
    return lo, hi


#: Bootstrap replicates behind the regression alternatives' intervals, and the most applicants they are drawn for.
REGRESSION_BOOT = 200
REGRESSION_BOOT_MAX_N = 20_000


def _regression_intervals(prep: _Prepared, grid: np.ndarray, prior: Prior, bound: float, boot: int,
                          confidence: float, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Percentile intervals of the ratio of means, DI_median, AUC_DI and P_fair: applicants resampled within groups.

    Each replicate draws every group's ``n_g`` applicants with replacement (group sizes fixed, as in the audit)
    and recomputes the four metrics (the pooled quantiles move with the replicate); the interval is the central
    ``confidence`` share of the ``boot`` replicates (Efron and Tibshirani 1993, ch. 13).
    """
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(prep.codes == k) for k in range(len(prep.labels))]
    w = _prior_weights(prior, grid)
    reps = np.full((boot, 4, len(members)), np.nan)
    for r in range(boot):  # replicates of a small sample; each one vectorised over thresholds and groups
        take = np.concatenate([rng.choice(ix, ix.size) for ix in members])
        rep = _prepare(prep.scores[take], prep.codes[take])
        curve = _curve_matrix(rep, grid)
        means = np.bincount(rep.codes, weights=rep.scores) / rep.counts
        if (means > 0).all():
            reps[r, 0] = means / means.max()
        reps[r, 1] = _di_median(rep).to_numpy()
        reps[r, 2] = np.trapezoid(curve * w[None, :], grid, axis=1)
        reps[r, 3] = np.trapezoid((curve >= bound) * w[None, :], grid, axis=1)
    with np.errstate(invalid="ignore"):
        q = np.nanquantile(reps, [0.5 - confidence / 2, 0.5 + confidence / 2], axis=0)
    return {name: (q[0, j], q[1, j]) for j, name in enumerate(["ratio_of_means", "di_median", "auc_di", "p_fair"])}


@dataclass(frozen=True)
class BiasAudit:
    """A Local Law 144 bias audit of one tool (:func:`bias_audit`).

    Attributes
    ----------
    kind : ``"selection"`` or ``"scoring"``.
    shape : ``"applicants"`` (one row per applicant) or ``"counts"`` (one row per category).
    table : one row per category (``sex``, ``race/ethnicity``, their intersection) and group: the columns of
        :func:`missing_data_bounds` plus ``rate_low``, ``rate_high`` (Wilson), ``impact_ratio_low``,
        ``impact_ratio_high`` (:func:`ratio_intervals`) and ``interval_warning``. Rates and ratios are fractions.
    unknown : per category, the applicants of unknown category (``n_unknown``) and their share of all applicants.
    excluded : the groups left out of the comparison (the 2% rule, or no applicants), with ``reason``.
    regression : scoring tools: per category and group, ``n``, ``mean``, ``ratio_of_means`` (:func:`di_avg`),
        ``di_median``, ``auc_di``, ``p_fair``, ``ks_statistic``, ``ks_pvalue`` (group against the rest), over the
        applicants of the included groups; ``None`` for a selection tool or counts.
    curves : scoring tools: per category, the impact-ratio curve :func:`di_curve` (index ``p``).
    median : scoring tools with applicant rows: the sample median the scoring rates use.
    warnings : what the reader must know before reading the numbers (small categories, metrics not computed).
    options : the options the audit ran with.
    """

    kind: str
    shape: str
    n_applicants: float
    table: pd.DataFrame
    unknown: pd.DataFrame
    excluded: pd.DataFrame
    regression: pd.DataFrame | None
    curves: dict
    median: float | None
    warnings: tuple
    options: dict

    def flagged(self) -> pd.DataFrame:
        """The included groups whose impact ratio is below the four-fifths bound (screening evidence only)."""
        return self.table[self.table["four_fifths"]]


def _category_names(cols: list[str], names: dict[str, str]) -> dict[str, str]:
    out = {c: names.get(c, c) for c in cols}
    if len(cols) > 1:
        out[" × ".join(cols)] = "intersectional"
    return out


def _yes_no(values: pd.Series, col: str) -> np.ndarray:
    """``selected`` as 0/1: booleans, 0/1, or yes/no, y/n, true/false in any case; anything else is refused."""
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=np.int64)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        k = int(np.argmax(codes < 0))
        raise ValueError(f"row {_at(values.index[k])}, column {col!r}: empty; expected yes or no")
    lookup = np.empty(len(uniques), dtype=np.int64)
    for j, u in enumerate(uniques):  # a handful of distinct spellings, never the rows
        text = str(u).strip().casefold()
        if text in _YES:
            lookup[j] = 1
        elif text in _NO:
            lookup[j] = 0
        else:
            k = int(np.argmax(codes == j))
            raise ValueError(f"row {_at(values.index[k])}, column {col!r}: {u!r} is not yes or no")
    return lookup[codes]


def _fill_unknown(frame: pd.DataFrame, cols: list[str], label: Any) -> pd.DataFrame:
    """Empty category cells of applicant rows are the unknown category (the applicant did not say)."""
    if not any(frame[c].isna().any() for c in cols):
        return frame
    return frame.assign(**{c: frame[c].astype(object).where(frame[c].notna(), label) for c in cols})


def bias_audit(
    data: pd.DataFrame,
    *,
    sex: str | None = "sex",
    race: str | None = "race_ethnicity",
    selected: str = "selected",
    score: str = "score",
    applicants: str = "applicants",
    tool: str | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    exclude_below: float | None = EXCLUDE_BELOW,
    bound: float = FOUR_FIFTHS,
    integer_counts: bool = False,
    intervals: bool = True,
    confidence: float = 0.95,
    draws: int = 4000,
    seed: int = 0,
    grid: Any = None,
    prior: Prior = None,
    regression_boot: int = REGRESSION_BOOT,
) -> BiasAudit:
    r"""A Local Law 144 bias audit from an employer's data, in either shape, as one :class:`BiasAudit`.

    ``data`` is one of

    * **one row per applicant** with the category columns ``sex`` and ``race`` and either ``selected`` (yes/no: a
      selection tool) or ``score`` (a number: a scoring tool, whose *scoring rate* is the share of a group scored
      above the sample median, :func:`scoring_counts`); an empty category cell is the unknown category;
    * **one row per category** with counts: the category columns, ``applicants`` and ``selected`` (for a scoring
      tool, the number scored above the median). Every row is one category: a total row, a repeated category, a
      negative or infinite count or more selected than applicants is refused, naming the row and column (the
      index labels of ``data``), and so is a fractional count when ``integer_counts``. Counts cannot tell a
      selection tool from a scoring tool: say ``tool="scoring"`` for the latter (only the wording changes).

    It returns, for sex, race/ethnicity and their intersection (:func:`missing_data_bounds`, which calls
    :func:`impact_ratio_table`): rates and impact ratios ``IR_g = r_g / max_{h in I} r_h`` (fractions), the
    four-fifths flag ``IR_g < bound`` (a screening rule, never a verdict of compliance), the groups the 2% rule
    excludes and why, the applicants of unknown category and the worst-case and proportional bounds for them,
    Wilson intervals for the rates (:func:`rate_intervals`) and simulated intervals for the ratios
    (:func:`ratio_intervals`), with a warning for a group with fewer than :data:`INTERVAL_MIN_COUNT` selected or
    not selected. The intervals treat applicants as independent draws: for counts from simulated rounds that reuse
    the same candidates they are too narrow (pass ``intervals=False``). For a scoring tool given per applicant it
    adds the seed paper's alternatives over the applicants of the included groups of each category: the ratio of
    mean scores (:func:`di_avg`), the impact-ratio curve (:func:`di_curve`), its area :func:`auc_di`,
    :func:`p_fair` and the two-sample KS test of each group against the rest (:func:`ks_test`), with percentile
    intervals from ``regression_boot`` bootstrap replicates (applicants resampled within groups) up to
    :data:`REGRESSION_BOOT_MAX_N` applicants, and a warning instead above.

    Examples
    --------
    >>> rows = pd.DataFrame({"sex": ["F"] * 50 + ["M"] * 50, "race_ethnicity": ["A", "B"] * 50,
    ...                      "selected": ["yes"] * 20 + ["no"] * 30 + ["yes"] * 25 + ["no"] * 25})
    >>> a = bias_audit(rows)
    >>> sex = a.table[a.table["category"] == "sex"]
    >>> sex[["group", "rate", "impact_ratio"]].values.tolist()
    [['F', 0.4, 0.8], ['M', 0.5, 1.0]]
    >>> a.kind, a.shape, len(a.table)
    ('selection', 'applicants', 8)
    """
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    cols = [c for c in (sex, race) if c is not None]
    if not cols:
        raise ValueError("give at least one category column (sex or race)")
    if len(set(cols)) < len(cols):
        raise ValueError(f"sex and race name the same column {cols[0]!r}")
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} (the category column); the columns are {list(data.columns)}")
    if len(data) == 0:
        raise ValueError("no rows: nothing to audit")
    if tool not in (None, "selection", "scoring"):
        raise ValueError(f"tool must be 'selection', 'scoring' or None (from the columns), got {tool!r}")
    b = _check_bound(bound)
    unk = _unknown_list(unknown)
    if not unk:
        raise ValueError("unknown must name at least one label (e.g. 'Unknown')")
    has_score, has_selected, has_counts = score in data.columns, selected in data.columns, applicants in data.columns
    warnings: list[str] = []
    median = None
    scores_frame = None
    if has_counts:
        if not has_selected:
            raise ValueError(f"no column {selected!r}: counts need {applicants!r} and {selected!r}")
        shape, kind = "counts", tool or "selection"
        counts = data[[*cols, applicants, selected]].rename(columns={applicants: "applicants", selected: "selected"})
        for col, name in ((applicants, "applicants"), (selected, "selected")):
            v = pd.to_numeric(counts[name], errors="coerce")
            bad = v.isna() & counts[name].notna()
            if bad.any():
                k = int(np.argmax(bad.to_numpy()))
                raise ValueError(f"row {_at(data.index[k])}, column {col!r}: {counts[name].iloc[k]!r} is not a count")
            counts[name] = v.astype(float)
        is_unknown = counts[cols].astype(object).map(_fold).isin({_fold(u) for u in unk}).any(axis=1).to_numpy()
        for col, name in ((applicants, "applicants"), (selected, "selected")):
            v = counts[name].to_numpy()
            empty = np.isnan(v) & (~is_unknown if name == "selected" else True)
            if empty.any():
                k = int(np.argmax(empty))
                raise ValueError(f"row {_at(data.index[k])}, column {col!r}: no count")
            if integer_counts:
                frac = np.isfinite(v) & (v != np.round(v))
                if frac.any():
                    k = int(np.argmax(frac))
                    raise ValueError(f"row {_at(data.index[k])}, column {col!r}: {v[k]:g} is not a whole number")
        total = None
    else:
        shape = "applicants"
        if has_score and has_selected:
            raise ValueError(f"both {selected!r} and {score!r} columns: keep {selected!r} for a selection tool or "
                             f"{score!r} for a scoring tool")
        if not (has_score or has_selected):
            raise ValueError(f"no column {selected!r} (yes/no) or {score!r}: one row per applicant needs one of them, "
                             f"and one row per category needs {applicants!r} and {selected!r}")
        rows = _clean_labels(_fill_unknown(data[[*cols]], cols, unk[0]), cols, unk, None, [], duplicates=False)
        if tool is not None and tool != ("selection" if has_selected else "scoring"):
            raise ValueError(f"tool={tool!r} but the data have a {selected if has_selected else score!r} column")
        if has_selected:
            kind = "selection"
            work = rows.assign(_sel=_yes_no(data[selected], selected))
        else:
            kind = "scoring"
            s = pd.to_numeric(data[score], errors="coerce")
            bad = s.isna().to_numpy() | ~np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(f"row {_at(data.index[k])}, column {score!r}: {data[score].iloc[k]!r} is not a number")
            s = s.to_numpy(dtype=float)
            median = float(np.quantile(s, 0.5, method=QUANTILE_METHOD))
            work = rows.assign(_sel=(s > median).astype(np.int64))
            scores_frame = rows.assign(_score=s)
        counts = (work.groupby(cols, sort=True, observed=True)["_sel"].agg(["size", "sum"])
                  .rename(columns={"size": "applicants", "sum": "selected"}).reset_index())
        counts[["applicants", "selected"]] = counts[["applicants", "selected"]].astype(float)
        total = None
    table = missing_data_bounds(counts, group=cols, applicants="applicants", selected="selected", unknown=unk,
                                total=total, exclude_below=exclude_below, margins=True, bound=b)
    names = _category_names(cols, {sex: "sex", race: "race/ethnicity"} if race else {sex: "sex"})
    table.insert(0, "table", table["category"].map(names))
    known = ~table["unknown"].to_numpy() & (table["applicants"].to_numpy() > 0)
    if intervals:
        lo, hi = rate_intervals(table["selected"], table["applicants"], confidence)
        table.insert(table.columns.get_loc("rate") + 1, "rate_low", np.where(known, lo, np.nan))
        table.insert(table.columns.get_loc("rate_low") + 1, "rate_high", np.where(known, hi, np.nan))
        ir_lo = np.full(len(table), np.nan)
        ir_hi = np.full(len(table), np.nan)
        for k, (cat, part) in enumerate(table.groupby("category", sort=False)):  # three tables
            idx = part.index.to_numpy()
            ok = known[idx] & part["impact_ratio"].notna().to_numpy()
            inc = ok & ~part["excluded"].to_numpy()
            if inc.any():
                l, h = ratio_intervals(part["selected"].to_numpy()[ok], part["applicants"].to_numpy()[ok], inc[ok],
                                       confidence, draws, seed + k)
                ir_lo[idx[ok]], ir_hi[idx[ok]] = l, h
        at = table.columns.get_loc("impact_ratio") + 1
        table.insert(at, "impact_ratio_low", ir_lo)
        table.insert(at + 1, "impact_ratio_high", ir_hi)
        s_, n_ = table["selected"].to_numpy(dtype=float), table["applicants"].to_numpy(dtype=float)
        small = known & ((s_ < INTERVAL_MIN_COUNT) | (n_ - s_ < INTERVAL_MIN_COUNT))
        table["interval_warning"] = np.where(
            small, f"fewer than {INTERVAL_MIN_COUNT} selected or not selected: the interval is rough", "")
        for name, part in table[small].groupby("table", sort=False):
            warnings.append(f"{name}: fewer than {INTERVAL_MIN_COUNT} selected or not selected in "
                            f"{', '.join(map(str, part['group']))}: their intervals are rough")
    unknown_frame = (table[table["unknown"]].groupby("table", sort=False)["applicants"].sum()
                     .reindex(list(names.values()), fill_value=0.0).rename("n_unknown").reset_index())
    unknown_frame = unknown_frame.rename(columns={"table": "category"})
    n_all = float(counts["applicants"].sum())
    unknown_frame["share_unknown"] = unknown_frame["n_unknown"] / n_all if n_all > 0 else np.nan
    ex = table[~table["unknown"] & table["excluded"]]
    excluded = pd.DataFrame({"category": ex["table"], "group": ex["group"], "applicants": ex["applicants"],
                             "share": ex["share"], "reason": ex["note"].str.split(";").str[0]}).reset_index(drop=True)
    regression = None
    curves: dict = {}
    if scores_frame is not None:
        g = _check_grid(grid)
        parts = []
        for cat, part in table.groupby("category", sort=False):
            label = names[cat]
            cat_cols = cat.split(" × ")
            inc = part[~part["unknown"] & ~part["excluded"]]
            grouped = scores_frame.groupby(cat_cols, sort=True, observed=True)
            labels = np.array([_label(v if isinstance(v, tuple) else (v,)) for v in grouped.size().index], dtype=object)
            codes = grouped.ngroup().to_numpy()
            mask = np.isin(labels, inc["group"].astype(str).to_numpy())[codes]
            key = labels[codes]
            if inc.shape[0] < 2 or (inc["applicants"] < 2).any():
                warnings.append(f"{label}: the regression alternatives need two included groups of at least 2 "
                                "applicants; not computed")
                continue
            prep = _prepare(scores_frame["_score"].to_numpy()[mask], key[mask])
            curve = pd.DataFrame(_curve_matrix(prep, g).T, index=pd.Index(g, name="p"), columns=prep.labels.copy())
            curves[label] = curve
            out = pd.DataFrame(index=prep.labels.copy())
            out["n"] = prep.counts
            out["mean"] = np.bincount(prep.codes, weights=prep.scores) / prep.counts
            try:
                out["ratio_of_means"] = _di_avg(prep)
            except ValueError:
                out["ratio_of_means"] = np.nan
                warnings.append(f"{label}: a group's mean score is not positive; the ratio of means is undefined")
            out["di_median"] = _di_median(prep)
            out["auc_di"] = curve_auc(curve, prior)
            out["p_fair"] = curve_p_fair(curve, prior, b)
            if intervals and regression_boot and prep.scores.size <= REGRESSION_BOOT_MAX_N:
                ci = _regression_intervals(prep, g, prior, b, int(regression_boot), confidence,
                                           seed + 100 + len(parts))
                for name, (lo, hi) in ci.items():
                    at = out.columns.get_loc(name) + 1
                    out.insert(at, f"{name}_low", lo)
                    out.insert(at + 1, f"{name}_high", hi)
            elif intervals and regression_boot:
                warnings.append(f"{label}: no intervals for the regression alternatives above "
                                f"{REGRESSION_BOOT_MAX_N:,} applicants (a bootstrap would take minutes); at "
                                f"{prep.scores.size:,} applicants their sampling error is small")
            ks = _ks_all(prep)
            out["ks_statistic"] = [r.statistic for r in ks]
            out["ks_pvalue"] = [r.pvalue for r in ks]
            parts.append(out.rename_axis("group").reset_index().assign(category=label))
        if parts:
            regression = pd.concat(parts, ignore_index=True)
            regression = regression[["category", *[c for c in regression.columns if c != "category"]]]
    options = dict(sex=sex, race=race, selected=selected, score=score, applicants=applicants, tool=kind,
                   unknown=list(unk),
                   exclude_below=exclude_below, bound=b, integer_counts=integer_counts, intervals=intervals,
                   confidence=confidence, draws=draws, seed=seed, regression_boot=regression_boot,
                   grid_points=None if scores_frame is None else int(_check_grid(grid).size))
    return BiasAudit(kind=kind, shape=shape, n_applicants=n_all, table=table.reset_index(drop=True),
                     unknown=unknown_frame, excluded=excluded, regression=regression, curves=curves, median=median,
                     warnings=tuple(warnings), options=options)


#: Old names (deprecated aliases): ``ll144.impact_ratios`` collided with ``rankings.impact_ratios`` and
#: ``ll144.summary`` with ``genderbench.summary``, which compute other things.
__getattr__ = renamed(__name__, {"impact_ratios": "impact_ratios_at", "summary": "group_metric_summary"})
