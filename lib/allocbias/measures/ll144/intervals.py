"""Sampling intervals of a Local Law 144 audit: Wilson intervals of the selection rates, simulated intervals of
the impact ratios, and bootstrap intervals of the regression alternatives (ratio of means, DI_median, AUC_DI,
P_fair)."""

from __future__ import annotations

from typing import Any

import warnings

import numpy as np
from scipy import stats

from .regression import Prior, _curve_matrix, _di_median, _prepare, _Prepared, _prior_weights

__all__ = ["INTERVAL_MIN_COUNT", "REGRESSION_BOOT", "REGRESSION_BOOT_MAX_N", "rate_intervals", "ratio_intervals"]

#: A category with fewer selected (or fewer not selected) applicants than this gets a warning: its rate's and
#: ratio's intervals rest on a normal approximation (Wilson) or on very few selections (the ratio's draws).
INTERVAL_MIN_COUNT = 5

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
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        # a metric undefined in every replicate (the ratio of means of scores that are not all positive) is NaN
        warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
        q = np.nanquantile(reps, [0.5 - confidence / 2, 0.5 + confidence / 2], axis=0)
    return {name: (q[0, j], q[1, j]) for j, name in enumerate(["ratio_of_means", "di_median", "auc_di", "p_fair"])}
