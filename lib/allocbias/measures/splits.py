"""Random halves of an audit's pools, within strata: the one split that the held-out test and the split-half
reliability share (:func:`allocbias.measures.validity.validity_controls`,
:mod:`allocbias.measures.reliability`). A module of its own so that both can import it without importing each
other; and the row-wise Pearson r both use to compare the halves."""

from __future__ import annotations

import numpy as np

from .. import checks

__all__ = ["half_split_masks"]


def _strata_sizes(strata: np.ndarray, size: int | None) -> tuple[np.ndarray, np.ndarray, int | None]:
    strata = np.asarray(strata)
    if strata.ndim != 1 or strata.size == 0 or not np.issubdtype(strata.dtype, np.integer) or strata.min() < 0:
        raise ValueError("strata must be a non-empty 1-d array of non-negative integer codes (one per pool)")
    per = np.bincount(strata)
    present = per > 0
    if size is not None:
        size = checks.count(size, "size")
        short = np.flatnonzero(present & (per < 2 * size))
        if short.size:
            raise ValueError(f"size={size} needs at least {2 * size} pools in every stratum; stratum "
                             f"{int(short[0])} has {int(per[short[0]])}")
    elif (present & (per < 2)).any():
        lonely = int(np.flatnonzero(present & (per < 2))[0])
        raise ValueError(f"stratum {lonely} has 1 pool: a split into halves needs at least 2 pools per stratum")
    return strata, per, size


def half_split_masks(strata: np.ndarray, n_splits: int, seed: int | np.random.Generator = 0, *,
                     size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Random halves of the pools within each stratum: boolean masks ``(in_a, in_b)``, each ``(n_splits, n_pools)``.

    Pool ``j`` belongs to stratum ``strata[j]`` (integer codes). In every split the pools of each stratum are put in
    a uniformly random order (``numpy.random.default_rng(seed)``; a Generator is used as it is); with
    ``size=None`` the first :math:`\lfloor n_s/2 \rfloor` pools of a stratum of :math:`n_s` form half A and the
    rest half B; with ``size=m`` the first ``m`` form A and the next ``m`` form B (the others are left out), so
    statistics can be compared at ``m`` pools per stratum.

    >>> a, b = half_split_masks(np.array([0, 0, 0, 0, 1, 1]), 3, seed=1)
    >>> a.sum(axis=1).tolist(), b.sum(axis=1).tolist(), bool((a & b).any())
    ([3, 3, 3], [3, 3, 3], False)
    >>> a, b = half_split_masks(np.array([0, 0, 0, 0, 1, 1]), 2, seed=1, size=1)
    >>> (a | b)[:, :4].sum(axis=1).tolist()
    [2, 2]
    """
    strata, per, size = _strata_sizes(strata, size)
    n_splits = checks.count(n_splits, "n_splits")
    rng = np.random.default_rng(seed)
    n_pools = strata.size
    keys = strata[None, :] + rng.random((n_splits, n_pools))
    order = np.argsort(keys, axis=1)  # pools grouped by stratum, random within
    start = np.concatenate([[0], np.cumsum(per)[:-1]])
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_pools)[None, :], axis=1)
    place = rank - start[strata][None, :]
    if size is None:
        in_a = place < (per[strata] // 2)[None, :]
        return in_a, ~in_a
    return place < size, (place >= size) & (place < 2 * size)


def _row_r(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis, leaving out pairs with a NaN; NaN with < 3 pairs or a constant side."""
    ok = np.isfinite(x) & np.isfinite(y)
    n = ok.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = np.where(ok, x, 0.0).sum(-1, keepdims=True) / n[..., None]
        ym = np.where(ok, y, 0.0).sum(-1, keepdims=True) / n[..., None]
        xc, yc = np.where(ok, x - xm, 0.0), np.where(ok, y - ym, 0.0)
        sxx, syy = (xc * xc).sum(-1), (yc * yc).sum(-1)
        r = (xc * yc).sum(-1) / np.sqrt(sxx * syy)
    bad = (n < 3) | ~(sxx > 1e-24 * np.maximum(1.0, n)) | ~(syy > 1e-24 * np.maximum(1.0, n))
    return np.where(bad, np.nan, np.clip(r, -1.0, 1.0))
