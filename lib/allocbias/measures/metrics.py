"""Bias metrics between a group A and a reference group B, computed from candidate scores.

Every metric compares the scores ``s_a`` of group A's candidates with the scores ``s_b`` of the reference group
B's candidates (per model and per subtask: a job or an essay topic). Higher scores are better.

* :func:`rabbi`: the Rank-Allocational-Based Bias Index (the rank-biserial correlation),
  ``R(A, B) = mean over (a, b) in A x B of [1(s_a > s_b) - 1(s_a < s_b)] = 2 U_A / (n_A n_B) - 1``,
  computed from midranks in ``O(n log n)``; :func:`rabbi_test` adds the Mann–Whitney p-value and an optional
  bootstrap interval.
* :func:`avg_score_gap`: ``delta = mean(s_A) - mean(s_B)``.
* :func:`jsd` and :func:`emd`: Jensen–Shannon divergence (base 2) and Earth Mover's (Wasserstein-1) distance
  between the two score distributions; both are non-directional (``>= 0``). ``jsd(..., variant="authors")``
  is the definition of the paper's released analysis code, which its Table 1 was computed with.
* :func:`score_shape`: skewness and excess kurtosis per group (the paper's Figure 13).
* :func:`bias_table`: every metric for every group against the reference, one tidy row per
  (by-keys, group), optionally also on qualified candidates only (the inputs of the EO comparisons).

Pairwise comparisons (an LLM asked "which of a and b is better?" in both orders) come as a tidy frame, one row
per prompt, with the columns ``pair_id``, ``cand_a``, ``cand_b``, ``order`` and ``winner`` (see
:func:`pairwise_points` for the exact contract):

* :func:`pairwise_points`: the per-candidate pairwise scores of the study's scoring rule;
* :func:`pairwise_win_share` / :func:`pairwise_gap_table`: the pairwise form of the average gap, the share of
  A x B pairs won consistently by A (``variant="authors"``: the signed net share of prompts won, as in the
  paper's released code);
* :func:`pairwise_output_stats`: the Regular / Tie / Flipped / Inconsistent percentages of the paper's Table 2.

All functions are pure, take arrays or tidy frames, and raise ``ValueError`` naming the offending parameter,
column or group on bad input (empty groups, NaN scores, unknown labels); none returns NaN silently.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import rel_entr

from ..checks import require_columns
from .disaggregate import key_tuple, percentile_bounds, stratified_draws

__all__ = [
    "ABS_GAP_METRICS",
    "DELTA_VARIANTS",
    "STUDY_GAPS",
    "STUDY_METRICS",
    "JSD_VARIANTS",
    "ORDERS",
    "WINNERS",
    "RabbiTest",
    "avg_score_gap",
    "bias_table",
    "emd",
    "excess_kurtosis",
    "jsd",
    "pairwise_answer_shares",
    "pairwise_gap_table",
    "pairwise_output_stats",
    "pairwise_points",
    "pairwise_win_share",
    "rabbi",
    "rabbi_test",
    "score_shape",
    "skewness",
]

#: The study's score-level bias metrics, in the order every table and figure shows them: RABBI
#: (:func:`rabbi`), the average score gap δ (:func:`avg_score_gap`, column ``avg_gap``), the Jensen–Shannon
#: divergence (:func:`jsd`) and the earth mover's distance (:func:`emd`); the columns of :func:`bias_table`.
STUDY_METRICS: tuple[str, ...] = ("rabbi", "avg_gap", "jsd", "emd")
#: The study's allocation gaps, the outcomes the metrics are validated against: ΔDP (``dDP``, the selection-rate
#: gap) and ΔEO (``dEO``, the gap among qualified candidates), see :func:`allocbias.selection.allocation_gaps`.
STUDY_GAPS: tuple[str, ...] = ("dDP", "dEO")
#: The metrics compared with ``|gap|`` rather than the signed gap: JSD and EMD are distances (``>= 0``) without a
#: direction, while RABBI and δ carry the sign of the gap.
ABS_GAP_METRICS: tuple[str, ...] = ("jsd", "emd")

#: the two prompt orders of a pairwise comparison: ``"ab"`` shows ``cand_a`` first, ``"ba"`` shows ``cand_b`` first
ORDERS: tuple[str, str] = ("ab", "ba")
#: parsed pairwise answers, *relative to the candidates* ``cand_a`` / ``cand_b`` (not to prompt positions)
WINNERS: tuple[str, str, str, str] = ("a", "b", "tie", "undetected")

_ALTERNATIVES = ("two-sided", "greater", "less")
_PAIRWISE_COLUMNS = ("pair_id", "cand_a", "cand_b", "order", "winner")
_DEFAULT_JSD_BINS = 10
#: definitions of :func:`jsd`: ``"paper"`` (the paper's text, the default) and ``"authors"`` (its released code)
JSD_VARIANTS: tuple[str, str] = ("paper", "authors")
#: definitions of the pairwise delta (:func:`pairwise_gap_table`): ``"paper"`` (its text) and ``"authors"`` (its code)
DELTA_VARIANTS: tuple[str, str] = ("paper", "authors")
#: the pairwise delta's output column under each variant
_DELTA_COLUMN = {"paper": "win_share", "authors": "net_win_share"}


def _check_variant(variant: object, allowed: tuple[str, ...], what: str) -> str:
    if not isinstance(variant, str) or variant not in allowed:
        raise ValueError(f"{what} variant must be one of {list(allowed)}, got {variant!r}")
    return variant


# --------------------------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------------------------
def _float_vector(x: object, name: str, *, numeric: str = "be numeric", one_d: str = "be 1-D") -> np.ndarray:
    """``x`` as a 1-D float64 array (a Series' or Index's missing values become NaN), or a ValueError naming
    ``name``: bool and non-numeric dtypes are refused (``{name} must {numeric}``), as is any shape but 1-D
    (``{name} must {one_d}``). Finiteness is the caller's check (its message names what the values are)."""
    if isinstance(x, (pd.Series, pd.Index)):
        if pd.api.types.is_bool_dtype(x.dtype) or not pd.api.types.is_numeric_dtype(x.dtype):
            raise ValueError(f"{name} must {numeric}, got dtype {x.dtype}")
        arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"{name} must {numeric} (int or float), got dtype {arr.dtype}")
        arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 1:
        raise ValueError(f"{name} must {one_d}, got shape {arr.shape}")
    return arr


def _scores(x: object, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D float array of finite scores, or raise a ValueError naming ``name``."""
    arr = _float_vector(x, name, numeric="hold numeric scores", one_d="be a 1-D array of scores")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: every group needs at least one score")
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.flatnonzero(bad)[:5].tolist()
        raise ValueError(
            f"{name} contains {int(bad.sum())} non-finite score(s) (NaN or inf), first at position(s) {where}"
        )
    return arr


def _compared_groups(groups: Sequence[Hashable], present: Any, reference: Hashable, listing: str) -> list:
    """``groups`` (the groups to compare with ``reference``) as a list, or a ValueError: a label not in
    ``present`` (the message ends with ``listing``, which names the groups present), or the reference among them."""
    groups = list(groups)
    unknown = [g for g in groups if g not in present]
    if unknown:
        raise ValueError(f"unknown group label(s) {unknown}{listing}")
    if reference in groups:
        raise ValueError(f"groups must not contain the reference group {reference!r}")
    return groups


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")


def _check_columns(df: pd.DataFrame, columns: Sequence[str], what: str = "df") -> None:
    require_columns(df, columns, what)


def _check_no_missing_keys(df: pd.DataFrame, columns: Sequence[str], what: str = "df") -> None:
    for c in columns:
        n_missing = int(df[c].isna().sum())
        if n_missing:
            raise ValueError(f"{what} column {c!r} has {n_missing} missing value(s); key columns must be complete")


def _check_score_column(df: pd.DataFrame, score: str, group: str | None = None) -> None:
    """Numeric, non-boolean, finite ``df[score]``; NaN/inf are reported with the groups they occur in."""
    values = _float_vector(df[score], f"score column {score!r}")
    bad = ~np.isfinite(values)
    if bad.any():
        where = ""
        if group is not None:
            labels = pd.unique(df.loc[bad, group])
            where = f" in group(s) {list(labels)[:10]} of column {group!r}"
        raise ValueError(f"score column {score!r} has {int(bad.sum())} NaN/inf value(s){where}")


# --------------------------------------------------------------------------------------------------------------
# RABBI
# --------------------------------------------------------------------------------------------------------------
def _u_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Mann–Whitney ``U_A`` from midranks of the pooled sample: ``U_A = R_A - n_A (n_A + 1) / 2``."""
    ranks = stats.rankdata(np.concatenate([a, b]))
    return float(ranks[: a.size].sum() - a.size * (a.size + 1) / 2.0)


def _rabbi(a: np.ndarray, b: np.ndarray) -> float:
    return 2.0 * _u_statistic(a, b) / (a.size * b.size) - 1.0


def rabbi(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    r"""Rank-Allocational-Based Bias Index of group A against reference group B (rank-biserial correlation).

    .. math::

        R(A, B) = \frac{1}{n_A n_B} \sum_{a \in A} \sum_{b \in B} [\mathbb 1(s_a > s_b) - \mathbb 1(s_a < s_b)]
                = \frac{2 U_A}{n_A n_B} - 1,

    where ``U_A = R_A - n_A (n_A + 1) / 2`` is the Mann–Whitney statistic from the midranks ``R_A`` of A in the
    pooled sample, so a tie counts 0 (half a win and half a loss). Computed from ranks in ``O(n log n)``; no
    pairwise loop. ``R = 1`` when every A score beats every B score, ``-1`` in the reverse case, ``0`` without
    preference; ``R(A, B) = -R(B, A)``; invariant under strictly increasing transforms of the scores.

    Parameters
    ----------
    a, b
        Scores of group A and of the reference group B (1-D, numeric, finite, non-empty).

    Returns
    -------
    float
        ``R(A, B)`` in ``[-1, 1]``.

    Examples
    --------
    >>> rabbi([3, 2], [1, 2])  # pairs: (3,1)+ (3,2)+ (2,1)+ (2,2)0 -> 3/4
    0.75
    >>> rabbi([1, 2], [3, 2])
    -0.75
    """
    return _rabbi(_scores(a, "a"), _scores(b, "b"))


@dataclass(frozen=True)
class RabbiTest:
    """RABBI with its Mann–Whitney test and an optional bootstrap percentile interval.

    Attributes
    ----------
    statistic
        ``R(A, B)`` (see :func:`rabbi`).
    pvalue
        Mann–Whitney U test p-value (``scipy.stats.mannwhitneyu`` with ``method="auto"``).
    n_a, n_b
        Group sizes.
    alternative
        ``"two-sided"``, ``"greater"`` (A stochastically greater than B) or ``"less"``.
    ci_low, ci_high
        Bootstrap percentile interval of R, or ``None`` when ``n_boot == 0``.
    n_boot
        Number of bootstrap resamples (0: none).
    confidence
        Confidence level of the interval, or ``None`` when ``n_boot == 0``.
    """

    statistic: float
    pvalue: float
    n_a: int
    n_b: int
    alternative: str = "two-sided"
    ci_low: float | None = None
    ci_high: float | None = None
    n_boot: int = 0
    confidence: float | None = None


def _bootstrap_rabbi(a: np.ndarray, b: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` RABBI values from independent resamples of A and B (row-wise ranks, chunked for memory)."""
    n_a, n_b = a.size, b.size
    out = np.empty(n_boot)
    chunk = max(1, 2_000_000 // (n_a + n_b))
    both = np.concatenate([a, b])  # A and B are the two strata of the resampling
    strata = [np.arange(n_a), np.arange(n_a, n_a + n_b)]
    for start, idx in zip(range(0, n_boot, chunk), stratified_draws(strata, n_boot, rng, block=chunk)):
        m = idx.shape[0]
        pooled = both[idx]
        ranks = stats.rankdata(pooled, axis=1)
        u = ranks[:, :n_a].sum(axis=1) - n_a * (n_a + 1) / 2.0
        out[start : start + m] = 2.0 * u / (n_a * n_b) - 1.0
    return out


def rabbi_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 0,
    seed: int | np.random.Generator | None = None,
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
    confidence: float = 0.95,
) -> RabbiTest:
    r"""RABBI with the Mann–Whitney p-value and, if ``n_boot > 0``, a bootstrap percentile interval.

    ``statistic = 2 U_A / (n_A n_B) - 1`` (see :func:`rabbi`); ``pvalue`` from
    ``scipy.stats.mannwhitneyu(a, b, alternative=alternative)`` (the test of ``U_A``; under H0 ``R = 0``).
    The bootstrap resamples A and B independently with replacement ``n_boot`` times and reports the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of R.

    Parameters
    ----------
    a, b
        Scores of group A and reference group B.
    n_boot
        Bootstrap resamples (0 disables the interval).
    seed
        Seed or ``numpy.random.Generator`` for the bootstrap.
    alternative
        ``"two-sided"``, ``"greater"`` (A tends to score higher) or ``"less"``.
    confidence
        Interval level in (0, 1).

    Examples
    --------
    >>> res = rabbi_test([3, 4, 5], [0, 1, 2])
    >>> res.statistic, round(res.pvalue, 3), res.ci_low
    (1.0, 0.1, None)
    >>> rabbi_test([3, 4, 5], [0, 1, 2], n_boot=200, seed=0).ci_high
    1.0
    """
    x, y = _scores(a, "a"), _scores(b, "b")
    _check_alternative(alternative)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative integer, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    statistic = _rabbi(x, y)
    pvalue = float(stats.mannwhitneyu(x, y, alternative=alternative).pvalue)
    if n_boot == 0:
        return RabbiTest(statistic, pvalue, x.size, y.size, alternative)
    boot = _bootstrap_rabbi(x, y, int(n_boot), np.random.default_rng(seed))
    low, high = percentile_bounds(boot, confidence, axis=None)
    return RabbiTest(statistic, pvalue, x.size, y.size, alternative, float(low), float(high), int(n_boot), confidence)


# --------------------------------------------------------------------------------------------------------------
# average gap and distribution distances
# --------------------------------------------------------------------------------------------------------------
def avg_score_gap(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    r"""Average score gap ``delta(A, B) = mean(s_A) - mean(s_B)`` (pointwise form).

    Examples
    --------
    >>> avg_score_gap([0.9, 0.7], [0.5, 0.6])
    0.25
    """
    return float(_scores(a, "a").mean() - _scores(b, "b").mean())


def _histogram_edges(
    pooled: np.ndarray, bins: int | str | Sequence[float] | np.ndarray, bin_range: tuple[float, float] | None
) -> np.ndarray:
    if isinstance(bins, bool):
        raise ValueError(f"bins must be an int, a numpy bin rule name or a sequence of edges, got {bins!r}")
    if isinstance(bins, (int, np.integer)) and bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if bin_range is not None:
        lo, hi = bin_range
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"bin_range must be a finite (low, high) with low < high, got {bin_range!r}")
    try:
        edges = np.histogram_bin_edges(pooled, bins=bins, range=bin_range)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid bins={bins!r} / bin_range={bin_range!r}: {exc}") from exc
    outside = (pooled < edges[0]) | (pooled > edges[-1])
    if outside.any():
        raise ValueError(
            f"{int(outside.sum())} score(s) lie outside the bins [{edges[0]}, {edges[-1]}]; "
            "widen bin_range or the bin edges (numpy would drop them silently)"
        )
    return edges


def jsd(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    bins: int | str | Sequence[float] | np.ndarray = _DEFAULT_JSD_BINS,
    bin_range: tuple[float, float] | None = None,
    variant: Literal["paper", "authors"] = "paper",
) -> float:
    r"""Jensen–Shannon divergence (base 2, in ``[0, 1]``) between the score histograms of A and B.

    .. math::

        \mathrm{JSD}(P, Q) = \tfrac12 \mathrm{KL}(P \,\|\, M) + \tfrac12 \mathrm{KL}(Q \,\|\, M),
        \quad M = \tfrac12 (P + Q), \quad \mathrm{KL}(P \| M) = \sum_i p_i \log_2 (p_i / m_i),

    where ``P`` and ``Q`` are the bin proportions of A's and B's scores on ONE shared binning.

    Binning (a decision): by default ``bins=10`` equal-width bins spanning the *pooled* range
    ``[min(s_A ∪ s_B), max(s_A ∪ s_B)]`` (``numpy.histogram_bin_edges`` on the pooled scores). A fixed number of
    bins keeps JSD on the same resolution for every (model, subtask, group) point, which the validity
    correlations compare; data-driven rules (``"auto"``, ``"fd"``) change the bin count with the sample size and
    spread, and JSD of histograms grows with the number of bins on finite samples. Any numpy rule name, an
    integer, or explicit edges can be passed; ``bin_range`` fixes the range (e.g. ``(0, 1)`` for probabilities,
    ``(1, 5)`` for essay grades). Scores outside explicit edges/range raise (numpy would drop them silently).
    If all pooled scores are equal, numpy uses one bin and JSD is 0.

    Reference: ``scipy.spatial.distance.jensenshannon(p, q, base=2) ** 2`` (scipy returns the distance, the
    square root of the divergence).

    ``variant="authors"``: the definition of the paper's released analysis code, from which its Table 1 JSD
    rows come. It differs from the text in three ways:

    .. math::

        \mathrm{JSD}_{code}(A, B) = \tfrac12 \sum_{i \in K} p_i \ln \frac{p_i}{m_i}
                                  + \tfrac12 \sum_{i \in K} q_i \ln \frac{q_i}{m_i},
        \quad K = \{i : p_i > 0,\ q_i > 0\},

    (1) natural logarithms (values in ``[0, ln 2]``, not ``[0, 1]``); (2) the ``bins`` equal-width bins span
    group A's own range ``[min s_A, max s_A]``, and ``p_i``, ``q_i`` are the bin counts divided by each group's
    size, so reference scores outside A's range are dropped and ``q`` may sum to less than 1; (3) the sums run
    only over the bins ``K`` non-empty in both groups (no renormalisation). Samples with disjoint ranges
    therefore give 0 (no shared bin), not 1, and the value is not a divergence of the two whole
    distributions. ``bin_range`` does not apply (the range is A's) and must be ``None``.

    Examples
    --------
    >>> jsd([0, 0, 1, 1], [0, 0, 1, 1])
    0.0
    >>> jsd([0, 0], [1, 1])  # disjoint supports
    1.0
    >>> round(jsd([0, 1], [0, 0], bins=2), 4)  # P = (1/2, 1/2), Q = (1, 0)
    0.3113
    >>> jsd([0, 0], [1, 1], variant="authors")  # disjoint: no bin is non-empty in both
    0.0
    >>> # bins [0, 0.5), [0.5, 1] over A; 5 is dropped: P = (1/2, 1/2), Q = (2/3, 0); only the first bin is kept
    >>> round(jsd([0, 1], [0, 0, 5], bins=2, variant="authors"), 5)  # (1/2)(1/2 ln(6/7) + 2/3 ln(8/7))
    0.00597
    """
    variant = _check_variant(variant, JSD_VARIANTS, "jsd")
    x, y = _scores(a, "a"), _scores(b, "b")
    if variant == "authors":
        return _jsd_authors(x, y, bins, bin_range)
    edges = _histogram_edges(np.concatenate([x, y]), bins, bin_range)
    p = np.histogram(x, bins=edges)[0] / x.size
    q = np.histogram(y, bins=edges)[0] / y.size
    m = 0.5 * (p + q)
    value = 0.5 * (rel_entr(p, m).sum() + rel_entr(q, m).sum()) / np.log(2.0)
    return float(min(max(value, 0.0), 1.0))


def _jsd_authors(
    x: np.ndarray, y: np.ndarray, bins: int | str | Sequence[float] | np.ndarray, bin_range: tuple[float, float] | None
) -> float:
    """JSD as the paper's released code computes it (see :func:`jsd`, ``variant="authors"``)."""
    if bin_range is not None:
        raise ValueError("bin_range does not apply to the 'authors' jsd variant: its bins span group A's own range")
    edges = _histogram_edges(x, bins, None)  # over A's range only
    counts_a = np.histogram(x, bins=edges)[0]
    counts_b = np.histogram(y, bins=edges)[0]  # reference scores outside A's range are dropped
    p, q = counts_a / x.size, counts_b / y.size  # proportions of each whole group, not renormalised
    keep = (p > 0) & (q > 0)  # disjoint ranges keep no bin: 0
    p, q = p[keep], q[keep]
    m = 0.5 * (p + q)
    return float(max(0.5 * (rel_entr(p, m).sum() + rel_entr(q, m).sum()), 0.0))


def emd(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    r"""Earth Mover's distance (Wasserstein-1) between the empirical score distributions of A and B.

    ``EMD(A, B) = integral |F_A(t) - F_B(t)| dt`` (``scipy.stats.wasserstein_distance``), in score units.

    Examples
    --------
    >>> emd([0, 1], [1, 2])
    1.0
    """
    return float(stats.wasserstein_distance(_scores(a, "a"), _scores(b, "b")))


# --------------------------------------------------------------------------------------------------------------
# distribution shape
# --------------------------------------------------------------------------------------------------------------
def skewness(x: Sequence[float] | np.ndarray, *, bias: bool = True) -> float:
    r"""Sample skewness ``g1 = m3 / m2^{3/2}`` (``m_k`` central moments with divisor n).

    ``bias=True`` (default, scipy's default) returns ``g1``; ``bias=False`` the adjusted Fisher–Pearson
    ``G1 = g1 sqrt(n (n - 1)) / (n - 2)`` (pandas' ``skew``; needs n >= 3). Constant input raises: the skewness
    of a point mass is undefined. Matches ``scipy.stats.skew``.

    Examples
    --------
    >>> round(skewness([0, 0, 0, 1]), 4)
    1.1547
    """
    arr = _scores(x, "x")
    frame = pd.DataFrame({"score": arr, "group": 0})
    return float(_shape_table(frame, "score", [], "group", bias=bias, on_constant="raise")["skewness"].iloc[0])


def excess_kurtosis(x: Sequence[float] | np.ndarray, *, bias: bool = True) -> float:
    r"""Excess kurtosis ``g2 = m4 / m2^2 - 3`` (Fisher's definition; a normal distribution has 0).

    ``bias=True`` (default, scipy's default) returns ``g2``; ``bias=False`` the adjusted estimator
    ``G2 = ((n + 1) g2 + 6) (n - 1) / ((n - 2) (n - 3))`` (pandas' ``kurt``; needs n >= 4). Constant input raises.
    Matches ``scipy.stats.kurtosis(fisher=True)``.

    Examples
    --------
    >>> round(excess_kurtosis([0, 0, 0, 1]), 4)
    -0.6667
    """
    arr = _scores(x, "x")
    frame = pd.DataFrame({"score": arr, "group": 0})
    return float(
        _shape_table(frame, "score", [], "group", bias=bias, on_constant="raise")["excess_kurtosis"].iloc[0]
    )


def _shape_table(
    df: pd.DataFrame,
    score: str,
    by: list[str],
    group: str,
    *,
    bias: bool,
    on_constant: Literal["raise", "nan"],
) -> pd.DataFrame:
    keys = [*by, group]
    x = df[score].to_numpy(dtype=np.float64)
    grouped = df.groupby(keys, sort=True, observed=True)[score]
    d = x - grouped.transform("mean").to_numpy(dtype=np.float64)
    work = df[keys].copy()
    work["_x"] = x
    work["_d2"] = d**2
    work["_d3"] = d**3
    work["_d4"] = d**4
    agg = work.groupby(keys, sort=True, observed=True).agg(
        n=("_x", "size"),
        mean=("_x", "mean"),
        low=("_x", "min"),
        high=("_x", "max"),
        m2=("_d2", "mean"),
        m3=("_d3", "mean"),
        m4=("_d4", "mean"),
    )
    constant = (agg["low"] == agg["high"]).to_numpy()
    if constant.any() and on_constant == "raise":
        cells = [key_tuple(k) for k in agg.index[constant][:5]]
        raise ValueError(
            f"score column {score!r} is constant in {int(constant.sum())} cell(s) of {keys}, e.g. {cells}: "
            "skewness and kurtosis are undefined (pass on_constant='nan' to get NaN for them explicitly)"
        )
    n = agg["n"].to_numpy(dtype=np.float64)
    if not bias:
        small = n < 4
        if small.any():
            cells = [key_tuple(k) for k in agg.index[small][:5]]
            raise ValueError(
                f"bias=False needs at least 4 scores per cell of {keys}; too few in {cells}"
            )
    m2 = agg["m2"].to_numpy()
    safe = np.where(constant, 1.0, m2)
    g1 = np.where(constant, np.nan, agg["m3"].to_numpy() / safe**1.5)
    g2 = np.where(constant, np.nan, agg["m4"].to_numpy() / safe**2 - 3.0)
    if not bias:
        g1 = g1 * np.sqrt(n * (n - 1.0)) / (n - 2.0)
        g2 = ((n + 1.0) * g2 + 6.0) * (n - 1.0) / ((n - 2.0) * (n - 3.0))
    out = agg[["n", "mean"]].reset_index()
    out["skewness"] = g1
    out["excess_kurtosis"] = g2
    return out


def score_shape(
    df: pd.DataFrame,
    score: str,
    group: str,
    *,
    by: Sequence[str] = (),
    bias: bool = True,
    on_constant: Literal["raise", "nan"] = "raise",
) -> pd.DataFrame:
    r"""Skewness and excess kurtosis of the score distribution per (by-keys, group): the paper's Figure 13.

    Per cell with scores ``x_1..x_n`` and central moments ``m_k = mean((x - mean(x))^k)``:
    ``skewness = m3 / m2^{3/2}``, ``excess_kurtosis = m4 / m2^2 - 3`` (``bias=True``, scipy's default plug-in
    estimators; ``bias=False`` applies the small-sample adjustments of :func:`skewness` and
    :func:`excess_kurtosis`). Vectorised with one groupby; equal to ``scipy.stats.skew`` /
    ``scipy.stats.kurtosis(fisher=True)`` per cell.

    Parameters
    ----------
    df
        Tidy frame, one row per scored candidate.
    score, group
        Score column and group-label column.
    by
        Further key columns (e.g. ``["model", "job"]``).
    bias
        Plug-in (True) or adjusted (False) estimators.
    on_constant
        A cell with constant scores has undefined shape: ``"raise"`` (default) or ``"nan"`` to return NaN
        for it on request.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, group, n, mean, skewness, excess_kurtosis``.

    Examples
    --------
    >>> df = pd.DataFrame({"g": ["x"] * 4 + ["y"] * 4, "s": [0, 0, 0, 1, 0, 1, 1, 1]})
    >>> score_shape(df, "s", "g")[["g", "n", "skewness", "excess_kurtosis"]].round(4).to_dict("list")
    {'g': ['x', 'y'], 'n': [4, 4], 'skewness': [1.1547, -1.1547], 'excess_kurtosis': [-0.6667, -0.6667]}
    """
    by = list(by)
    _check_columns(df, [score, group, *by])
    if on_constant not in ("raise", "nan"):
        raise ValueError(f"on_constant must be 'raise' or 'nan', got {on_constant!r}")
    if df.empty:
        raise ValueError("df is empty: no scores to describe")
    _check_no_missing_keys(df, [group, *by])
    _check_score_column(df, score, group)
    return _shape_table(df, score, by, group, bias=bias, on_constant=on_constant)


# --------------------------------------------------------------------------------------------------------------
# the tidy bias table
# --------------------------------------------------------------------------------------------------------------
_METRIC_COLUMNS = ("n_group", "n_reference", "rabbi", "rabbi_pvalue", "avg_gap", "jsd", "emd")


def _metric_row(
    a: np.ndarray,
    b: np.ndarray,
    alternative: str,
    jsd_bins: int | str | Sequence[float] | np.ndarray,
    jsd_range: tuple[float, float] | None,
    jsd_variant: str = "paper",
) -> list[float]:
    return [
        a.size,
        b.size,
        _rabbi(a, b),
        float(stats.mannwhitneyu(a, b, alternative=alternative).pvalue),
        float(a.mean() - b.mean()),
        jsd(a, b, bins=jsd_bins, bin_range=jsd_range, variant=jsd_variant),
        float(stats.wasserstein_distance(a, b)),
    ]


def bias_table(
    df: pd.DataFrame,
    score: str,
    group: str,
    reference: Hashable,
    *,
    by: Sequence[str] = (),
    qualified: str | None = None,
    groups: Sequence[Hashable] | None = None,
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
    jsd_bins: int | str | Sequence[float] | np.ndarray = _DEFAULT_JSD_BINS,
    jsd_range: tuple[float, float] | None = None,
    jsd_variant: Literal["paper", "authors"] = "paper",
) -> pd.DataFrame:
    r"""Every bias metric of every group against the reference group: one tidy row per (by-keys, group).

    For each cell of ``by`` (e.g. model x job) and each group A != reference B present in it:
    ``rabbi`` = R(A, B) (:func:`rabbi`), ``rabbi_pvalue`` (Mann–Whitney, :func:`rabbi_test`),
    ``avg_gap`` = mean(s_A) - mean(s_B), ``jsd`` (:func:`jsd`, binning ``jsd_bins`` / ``jsd_range`` on the pooled
    scores of A and B), ``emd`` (:func:`emd`), and the sizes ``n_group``, ``n_reference``.
    With ``qualified`` (a boolean column), the same metrics on qualified candidates only,
    ``A' = {a in A : d_a = 1}`` against ``B'``, in columns with the suffix ``_qualified``
    (``rabbi_qualified``, ``avg_gap_qualified``, ...): these are the inputs of the EO comparisons
    (:func:`allocbias.validity.validity_table` reads ``<metric>_qualified``).

    The frame is split once with ``groupby`` (row positions per (cell, group)); each metric is then a vectorised
    numpy/scipy call on that group's scores. There is no loop over rows.

    Parameters
    ----------
    df
        Tidy frame, one row per scored candidate.
    score
        Numeric score column (higher is better); NaN/inf raise, naming the groups.
    group
        Group-label column; its name is also the output's group column.
    reference
        The reference group B (must be present in every cell of ``by``).
    by
        Cell keys, e.g. ``["model", "job"]``.
    qualified
        Optional boolean column (True = qualified) for the ``_qualified`` metrics.
    groups
        Groups to compare (default: every non-reference group present in a cell). A listed group must be present
        in every cell.
    alternative
        Alternative of the Mann–Whitney test (``"greater"``: A scores higher).
    jsd_bins, jsd_range
        Binning of :func:`jsd` (default 10 equal-width bins over the pooled range of each comparison).
    jsd_variant
        Definition of :func:`jsd`: ``"paper"`` (the paper's text, default) or ``"authors"`` (its released code:
        natural logs, bins over group A's range, only bins non-empty in both groups; ``jsd_range`` must be None).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, <group>, reference, n_group, n_reference, rabbi, rabbi_pvalue, avg_gap, jsd, emd`` and,
        with ``qualified``, the same metric columns with suffix ``_qualified``.

    Examples
    --------
    >>> df = pd.DataFrame({"group": ["W"] * 3 + ["B"] * 3, "score": [0.9, 0.8, 0.7, 0.8, 0.6, 0.5]})
    >>> table = bias_table(df, "score", "group", "W")
    >>> table[["group", "reference", "n_group", "rabbi", "avg_gap"]].round(4).to_dict("records")
    [{'group': 'B', 'reference': 'W', 'n_group': 3, 'rabbi': -0.6667, 'avg_gap': -0.1667}]
    """
    by = list(by)
    needed = [score, group, *by] + ([qualified] if qualified is not None else [])
    _check_columns(df, needed)
    if group in by:
        raise ValueError(f"group column {group!r} must not also be in by={by}")
    if df.empty:
        raise ValueError("df is empty: no scores to compare")
    _check_alternative(alternative)
    _check_variant(jsd_variant, JSD_VARIANTS, "jsd")
    if jsd_variant == "authors" and jsd_range is not None:
        raise ValueError("jsd_range does not apply to jsd_variant='authors': its bins span group A's own range")
    _check_no_missing_keys(df, [group, *by])
    _check_score_column(df, score, group)
    if qualified is not None:
        qdtype = df[qualified].dtype
        if not pd.api.types.is_bool_dtype(qdtype) or df[qualified].isna().any():
            raise ValueError(f"qualified column {qualified!r} must be boolean without missing values, got {qdtype}")
    present = list(pd.unique(df[group]))
    if reference not in present:
        raise ValueError(f"reference group {reference!r} not found in column {group!r}; groups present: {present}")
    if groups is not None:
        groups = _compared_groups(groups, present, reference, f" in groups; groups present in {group!r}: {present}")
        if not groups:
            raise ValueError("groups is empty: name at least one group to compare with the reference")

    scores = df[score].to_numpy(dtype=np.float64)
    is_qualified = df[qualified].to_numpy(dtype=bool) if qualified is not None else None
    labels = df[group].to_numpy()
    cell_index = df.groupby(by, sort=True, observed=True).indices if by else {(): np.arange(len(df))}

    rows: list[list[object]] = []
    for cell_key, positions in cell_index.items():
        cell = key_tuple(cell_key) if by else ()
        where = f" in cell {dict(zip(by, cell))}" if by else ""
        cell_groups = pd.unique(labels[positions])
        by_group = pd.Series(positions).groupby(labels[positions], sort=True).indices
        if reference not in by_group:
            raise ValueError(
                f"reference group {reference!r} is missing{where}; groups present there: {list(cell_groups)}"
            )
        ref_pos = positions[by_group[reference]]
        compared = groups if groups is not None else [g for g in by_group if g != reference]
        if not compared:  # one group only: there is nothing to compare (an empty table would read as "no bias")
            raise ValueError(f"only the reference group {reference!r} is present{where} in column {group!r}: "
                             "bias_table needs at least one other group to compare with it")
        for g in compared:
            if g not in by_group:
                raise ValueError(f"group {g!r} is missing{where}; groups present there: {list(cell_groups)}")
            grp_pos = positions[by_group[g]]
            row: list[object] = [*cell, g, reference]
            row += _metric_row(scores[grp_pos], scores[ref_pos], alternative, jsd_bins, jsd_range, jsd_variant)
            if is_qualified is not None:
                qa, qb = grp_pos[is_qualified[grp_pos]], ref_pos[is_qualified[ref_pos]]
                for label, q in ((g, qa), (reference, qb)):
                    if q.size == 0:
                        raise ValueError(
                            f"group {label!r} has no qualified candidates (column {qualified!r}){where}: "
                            "the _qualified metrics need at least one per group"
                        )
                row += _metric_row(scores[qa], scores[qb], alternative, jsd_bins, jsd_range, jsd_variant)
            rows.append(row)
    columns = [*by, group, "reference", *_METRIC_COLUMNS]
    if qualified is not None:
        columns += [f"{c}_qualified" for c in _METRIC_COLUMNS]
    out = pd.DataFrame(rows, columns=columns)
    for c in columns:
        if c.startswith("n_"):
            out[c] = out[c].astype(np.int64)
    return out


# --------------------------------------------------------------------------------------------------------------
# pairwise comparisons
# --------------------------------------------------------------------------------------------------------------
def _check_pairwise(df: pd.DataFrame, keys: list[str]) -> None:
    """Validate the tidy pairwise frame: columns, labels, exactly one 'ab' and one 'ba' row per pair."""
    _check_columns(df, [*_PAIRWISE_COLUMNS, *keys])
    if df.empty:
        raise ValueError("df is empty: no pairwise comparisons")
    _check_no_missing_keys(df, [*_PAIRWISE_COLUMNS, *keys])
    bad_order = sorted(set(pd.unique(df["order"])) - set(ORDERS), key=str)
    if bad_order:
        raise ValueError(f"column 'order' has value(s) {bad_order}; allowed: {list(ORDERS)}")
    bad_winner = sorted(set(pd.unique(df["winner"])) - set(WINNERS), key=str)
    if bad_winner:
        raise ValueError(f"column 'winner' has value(s) {bad_winner}; allowed: {list(WINNERS)}")
    same = (df["cand_a"] == df["cand_b"]).to_numpy()
    if same.any():
        raise ValueError(
            f"{int(same.sum())} row(s) compare a candidate with itself, e.g. {df['cand_a'][same].iloc[0]!r}"
        )
    pair_keys = [*keys, "pair_id"]
    work = df[pair_keys].copy()
    work["_ab"] = (df["order"] == "ab").to_numpy()
    work["_ba"] = ~work["_ab"]
    counts = work.groupby(pair_keys, sort=False).agg(ab=("_ab", "sum"), ba=("_ba", "sum"))
    bad = (counts["ab"] != 1) | (counts["ba"] != 1)
    if bad.any():
        example = counts[bad].iloc[:3]
        raise ValueError(
            f"{int(bad.sum())} pair(s) of {pair_keys} do not have exactly one 'ab' and one 'ba' row, e.g. "
            f"{[(key_tuple(k), int(r.ab), int(r.ba)) for k, r in example.iterrows()]}"
            + ("" if keys else "; if pair_id repeats across models or subtasks, pass them as by=[...]")
        )
    n_cands = work.assign(cand_a=df["cand_a"], cand_b=df["cand_b"]).groupby(pair_keys, sort=False)[
        ["cand_a", "cand_b"]
    ].nunique()
    mixed = (n_cands["cand_a"] != 1) | (n_cands["cand_b"] != 1)
    if mixed.any():
        raise ValueError(
            f"{int(mixed.sum())} pair(s) name different cand_a/cand_b in their two rows, e.g. "
            f"{key_tuple(n_cands.index[mixed][0])}: cand_a/cand_b must be the pair's canonical order in both rows"
        )


def _pair_table(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per pair: ``*keys, pair_id, cand_a, cand_b, w_ab, w_ba`` (df already validated)."""
    pair_keys = [*keys, "pair_id"]
    cols = [*pair_keys, "cand_a", "cand_b", "winner"]
    ab = df.loc[df["order"] == "ab", cols].rename(columns={"winner": "w_ab"})
    ba = df.loc[df["order"] == "ba", [*pair_keys, "winner"]].rename(columns={"winner": "w_ba"})
    return ab.merge(ba, on=pair_keys, how="inner", validate="one_to_one")


def pairwise_points(df: pd.DataFrame, *, by: Sequence[str] = ()) -> pd.DataFrame:
    r"""Per-candidate pairwise scores: ``score(a)`` = sum over a's pairs of the points the pair gives a.

    Input contract (one row per prompt; a pair is asked in both orders):

    * ``pair_id``: identifies the unordered pair (unique within a cell of ``by``);
    * ``cand_a``, ``cand_b``: the pair's two candidates in a canonical order, the same in both rows;
    * ``order``: ``"ab"`` (cand_a shown first) or ``"ba"`` (cand_b shown first);
    * ``winner``: the parsed answer *relative to the candidates*, NOT to the prompt position: ``"a"`` means
      cand_a was chosen (whichever slot it occupied), ``"b"`` cand_b, ``"tie"`` an answer that both are equally
      good, ``"undetected"`` no parsable answer.

    Scoring rule (Chen, Ji & Evans 2024, after Qin et al. 2024). Each prompt distributes at most half a
    point: the chosen candidate gets 0.5, a tie answer gives 0.25 to each candidate, an undetected answer gives
    nothing. A pair's points are the sum over its two prompts:

    ======================  ==============  ==============  ======================================
    answers (ab, ba)        points cand_a   points cand_b   meaning
    ======================  ==============  ==============  ======================================
    (a, a)                  1               0               consistent win: 1 point to the winner
    (a, b) or (b, a)        0.5             0.5             inconsistent orders: 0.5 each
    (tie, tie)              0.5             0.5             0.25 per tie prompt to each
    (a, tie) or (tie, a)    0.75            0.25            decision: see below
    (a, undetected)         0.5             0               decision: see below
    (tie, undetected)       0.25            0.25            0.25 from the tie prompt
    (undetected, undet.)    0               0               nothing parsed
    ======================  ==============  ==============  ======================================

    Decision for the mixed cases, which the paper does not spell out: the rule is applied prompt by prompt, so
    the non-tie prompt's winner keeps the 0.5 it earns in an inconsistent pair and the tie prompt adds 0.25 to
    each (a leaning but not consistent preference: 0.75 vs 0.25); an undetected prompt gives 0, so its
    partner's win counts as half a win only. This is the only additive per-prompt rule reproducing every case the
    paper states (1 / 0.5 / 0.25 per tie prompt) and it never gives a pair more than 1 point in total. The
    paper's literal formula ``1(a > b) + 0.5 * 1(M(a,b) != M(b,a))`` would instead give 0.5 to *both*
    candidates of (a, undetected), rewarding b for an unparsable answer, and 0.5 + 0.25 = 0.75 to both
    candidates of (a, tie), 1.5 points for one pair.

    Parameters
    ----------
    df
        The tidy pairwise frame (columns above, plus ``by``).
    by
        Cell keys within which ``pair_id`` is unique and scores are summed, e.g. ``["model", "job", "pool"]``
        (the paper scores a candidate over the pairs of its pool).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, candidate, score, n_pairs``, one row per candidate per cell.

    Examples
    --------
    >>> df = pd.DataFrame({
    ...     "pair_id": [1, 1, 2, 2, 3, 3],
    ...     "cand_a": ["x", "x", "x", "x", "y", "y"],
    ...     "cand_b": ["y", "y", "z", "z", "z", "z"],
    ...     "order": ["ab", "ba"] * 3,
    ...     "winner": ["a", "a", "a", "b", "tie", "a"],
    ... })
    >>> pairwise_points(df).to_dict("list")
    {'candidate': ['x', 'y', 'z'], 'score': [1.5, 0.75, 0.75], 'n_pairs': [2, 2, 2]}
    """
    by = list(by)
    _check_pairwise(df, by)
    winner = df["winner"].to_numpy()
    tie = 0.25 * (winner == "tie")
    long = pd.concat(
        [
            df[by].assign(candidate=df["cand_a"].to_numpy(), points=0.5 * (winner == "a") + tie),
            df[by].assign(candidate=df["cand_b"].to_numpy(), points=0.5 * (winner == "b") + tie),
        ],
        ignore_index=True,
    )
    out = (
        long.groupby([*by, "candidate"], sort=True, observed=True)
        .agg(score=("points", "sum"), n_prompts=("points", "size"))
        .reset_index()
    )
    out["n_pairs"] = (out.pop("n_prompts") // 2).astype(np.int64)
    return out


def _group_lookup(group_of: Mapping[Hashable, Hashable] | pd.Series, candidates: pd.Series, column: str) -> np.ndarray:
    lookup = group_of if isinstance(group_of, pd.Series) else pd.Series(dict(group_of), dtype=object)
    if not lookup.index.is_unique:
        dup = lookup.index[lookup.index.duplicated()][0]
        raise ValueError(f"group_of lists candidate {dup!r} more than once")
    mapped = candidates.map(lookup)
    unknown = mapped.isna().to_numpy()
    if unknown.any():
        names = list(pd.unique(candidates[unknown]))[:5]
        raise ValueError(f"group_of has no group for candidate(s) {names} (column {column!r})")
    return mapped.to_numpy()


def pairwise_gap_table(
    df: pd.DataFrame,
    group_of: Mapping[Hashable, Hashable] | pd.Series,
    reference: Hashable,
    *,
    by: Sequence[str] = (),
    groups: Sequence[Hashable] | None = None,
    variant: Literal["paper", "authors"] = "paper",
) -> pd.DataFrame:
    r"""Pairwise average gap of every group against the reference: the share of A x B pairs won consistently by A.

    .. math:: \delta(A, B) = \frac{1}{|A \times B|} \sum_{(a, b) \in A \times B} \mathbb 1(a \succ b),

    ``a > b`` meaning the model chose a in both orders (answers ``("a", "a")`` when a is cand_a). ``A x B`` is
    the set of compared pairs (rows of ``df``) with one candidate in A and the other in B; pairs with a tie,
    an undetected answer or inconsistent orders count in the denominator and not in the numerator. As in the
    paper, only A's consistent wins are counted (B's are not subtracted), so a model without group preference
    has ``delta`` = half its consistent-pair rate, not 0. Vectorised (one pair table, one groupby).

    ``variant="authors"``: the definition of the paper's released analysis code, from which its Table 1
    pairwise delta rows come: the signed net share of *prompts* won,

    .. math:: \delta_{code}(A, B) = \frac{W_A - W_B}{2 |A \times B|},

    with ``W_A`` (``W_B``) the number of prompts, over both orders of every compared pair, whose answer names
    A's (B's) candidate, and ``2 |A x B|`` all those prompts (ties and undetected answers count in the
    denominator only). It lies in ``[-1, 1]``, is 0 for a model without group preference and for one that
    always names the first-shown candidate, and ``delta_code(A, B) = -delta_code(B, A)``. The output column is
    then ``net_win_share`` instead of ``win_share``. (The code counts every prompt whose two candidates are
    both in A or B, so a pair of two A candidates would add a win for A; pools with one candidate per group,
    as here, have no such pairs, and this function counts A x B pairs only.)

    Parameters
    ----------
    df
        The tidy pairwise frame of :func:`pairwise_points`.
    group_of
        Mapping or Series from candidate to group label; every candidate in ``df`` must be listed.
    reference
        Reference group B.
    by
        Cell keys (e.g. ``["model", "job"]``).
    groups
        Groups to report (default: every non-reference group with at least one pair against the reference).
    variant
        ``"paper"`` (the paper's text, default) or ``"authors"`` (its released code), see above.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, group, reference, win_share, n_pairs`` (``n_pairs`` = |A x B| compared); with
        ``variant="authors"`` ``net_win_share`` in place of ``win_share``.

    Examples
    --------
    >>> df = pd.DataFrame({"pair_id": [1, 1, 2, 2], "cand_a": ["w1", "w1", "b1", "b1"],
    ...     "cand_b": ["b1", "b1", "w2", "w2"], "order": ["ab", "ba"] * 2, "winner": ["b", "b", "a", "b"]})
    >>> groups = {"w1": "W", "w2": "W", "b1": "B"}
    >>> pairwise_gap_table(df, groups, "W").to_dict("list")
    {'group': ['B'], 'reference': ['W'], 'win_share': [0.5], 'n_pairs': [2]}
    >>> pairwise_gap_table(df, groups, "W", variant="authors").to_dict("list")  # (3 - 1) / 4 prompts
    {'group': ['B'], 'reference': ['W'], 'net_win_share': [0.5], 'n_pairs': [2]}
    """
    variant = _check_variant(variant, DELTA_VARIANTS, "pairwise delta")
    by = list(by)
    _check_pairwise(df, by)
    pairs = _pair_table(df, by)
    ga = _group_lookup(group_of, pairs["cand_a"], "cand_a")
    gb = _group_lookup(group_of, pairs["cand_b"], "cand_b")
    present = set(pd.unique(np.concatenate([ga, gb])))
    if reference not in present:
        raise ValueError(f"reference group {reference!r} not found in group_of for the candidates of df; "
                         f"groups present: {sorted(present, key=str)}")
    if groups is not None:
        groups = _compared_groups(groups, present, reference, f"; groups present: {sorted(present, key=str)}")
    a_ref, b_ref = ga == reference, gb == reference
    cross = a_ref ^ b_ref  # exactly one candidate in the reference group
    w_ab, w_ba = pairs["w_ab"].to_numpy(), pairs["w_ba"].to_numpy()
    # the non-reference candidate is cand_a where b is the reference, else cand_b
    focal, other = np.where(b_ref, "a", "b"), np.where(b_ref, "b", "a")
    if variant == "paper":  # 1 if A's candidate won both prompts
        focal_win = ((w_ab == focal) & (w_ba == focal)).astype(np.float64)
    else:  # prompts won by A minus prompts won by B, over the pair's 2 prompts
        won = (w_ab == focal).astype(np.float64) + (w_ba == focal)
        lost = (w_ab == other).astype(np.float64) + (w_ba == other)
        focal_win = (won - lost) / 2.0
    focal_group = np.where(b_ref, ga, gb)
    work = pairs.loc[cross, by].copy()
    work["group"] = focal_group[cross]
    work["_win"] = focal_win[cross]
    if groups is not None:
        work = work[work["group"].isin(groups)]
        compared = set(work["group"])
        missing = [g for g in groups if g not in compared]
        if missing:
            raise ValueError(f"df has no pair between group(s) {missing} and the reference group {reference!r}")
    if work.empty:
        raise ValueError(f"df has no pair between the reference group {reference!r} and any other group")
    out = (
        work.groupby([*by, "group"], sort=True, observed=True)
        .agg(**{_DELTA_COLUMN[variant]: ("_win", "mean")}, n_pairs=("_win", "size"))
        .reset_index()
    )
    out.insert(len(by) + 1, "reference", reference)
    out["n_pairs"] = out["n_pairs"].astype(np.int64)
    return out


def pairwise_win_share(
    df: pd.DataFrame,
    group_of: Mapping[Hashable, Hashable] | pd.Series,
    group: Hashable,
    reference: Hashable,
    *,
    variant: Literal["paper", "authors"] = "paper",
) -> float:
    r"""Share of the compared A x B pairs won consistently by A (pairwise average gap, one cell).

    ``delta(A, B) = (1 / |A x B|) sum_{(a, b)} 1(a > b)``; with ``variant="authors"`` the paper's code's
    ``(W_A - W_B) / (2 |A x B|)``, prompts won by A minus prompts won by B over the compared prompts. See
    :func:`pairwise_gap_table` for the definitions and for many cells at once. ``df`` must hold a single cell
    (``pair_id`` unique).

    Examples
    --------
    >>> df = pd.DataFrame({"pair_id": [1, 1], "cand_a": ["w", "w"], "cand_b": ["b", "b"],
    ...     "order": ["ab", "ba"], "winner": ["b", "b"]})
    >>> pairwise_win_share(df, {"w": "W", "b": "B"}, "B", "W")
    1.0
    """
    table = pairwise_gap_table(df, group_of, reference, groups=[group], variant=variant)
    return float(table[_DELTA_COLUMN[variant]].iloc[0])


def pairwise_output_stats(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = ("model",),
    pair_keys: Sequence[str] = (),
) -> pd.DataFrame:
    r"""Pairwise output statistics per model (the paper's Table 2), in percent.

    With ``w_ab``, ``w_ba`` the answers of a pair's two prompts (relative to the candidates, see
    :func:`pairwise_points`):

    * ``regular``: % of prompts whose answer names one of the two candidates ("the output includes the
      acceptable answers listed in the prompt"): ``winner in {a, b}``;
    * ``tie``: % of prompts answering that both are equally good;
    * ``undetected``: % of prompts with no parsable answer (``regular + tie + undetected = 100``);
    * ``flipped``: % of pairs where both prompts are regular but name different candidates, i.e. the answer
      flips when the order is reversed (the model follows the position, not the candidate);
    * ``inconsistent``: % of pairs whose two answers differ, ``w_ab != w_ba`` over the four outcomes
      (the paper's ``M(a,b) != M(b,a)``). Flipped pairs are inconsistent; so are pairs mixing a win with a
      tie or an undetected answer. A pair answered tie/tie (or undetected/undetected) gives the same answer in
      both orders and is NOT inconsistent.

    Each unordered pair with its two orders is classified once; since every pair has exactly two prompts the
    pair percentages equal the percentages of prompts. Decision check against Table 2: for StarlingLM
    (Tie 3.28 %, no undetected answers) Inconsistent - Flipped = 2.99 points; counting tie/tie pairs as
    inconsistent would need at least 3.28 points (half the tie prompts sit in tie pairs at most), so the paper
    did not count them.

    Parameters
    ----------
    df
        The tidy pairwise frame plus the ``by`` columns (default ``model``).
    by
        Report cells (default ``["model"]``; add e.g. ``"task"``).
    pair_keys
        Further columns that, with ``by`` and ``pair_id``, identify a pair (e.g. ``["job"]`` when pair ids
        restart per job).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, regular, tie, undetected, flipped, inconsistent, n_prompts, n_pairs``.

    Examples
    --------
    >>> df = pd.DataFrame({"model": "m", "pair_id": [1, 1, 2, 2], "cand_a": "x", "cand_b": ["y", "y", "z", "z"],
    ...     "order": ["ab", "ba"] * 2, "winner": ["a", "b", "tie", "tie"]})
    >>> pairwise_output_stats(df)[["model", "regular", "tie", "flipped", "inconsistent"]].to_dict("records")
    [{'model': 'm', 'regular': 50.0, 'tie': 50.0, 'flipped': 50.0, 'inconsistent': 50.0}]
    """
    by, pair_keys = list(by), list(pair_keys)
    if not by:
        raise ValueError("by must name at least one column (e.g. ['model'])")
    overlap = set(by) & set(pair_keys)
    if overlap:
        raise ValueError(f"column(s) {sorted(overlap)} are in both by and pair_keys")
    keys = [*by, *pair_keys]
    _check_pairwise(df, keys)
    winner = df["winner"].to_numpy()
    prompts = df[by].copy()
    prompts["_regular"] = np.isin(winner, ("a", "b")) * 100.0
    prompts["_tie"] = (winner == "tie") * 100.0
    prompts["_undetected"] = (winner == "undetected") * 100.0
    per_prompt = prompts.groupby(by, sort=True, observed=True).agg(
        regular=("_regular", "mean"), tie=("_tie", "mean"), undetected=("_undetected", "mean"),
        n_prompts=("_regular", "size"),
    )
    pairs = _pair_table(df, keys)
    w_ab, w_ba = pairs["w_ab"].to_numpy(), pairs["w_ba"].to_numpy()
    both_regular = np.isin(w_ab, ("a", "b")) & np.isin(w_ba, ("a", "b"))
    per_pair_work = pairs[by].copy()
    per_pair_work["_flipped"] = (both_regular & (w_ab != w_ba)) * 100.0
    per_pair_work["_inconsistent"] = (w_ab != w_ba) * 100.0
    per_pair = per_pair_work.groupby(by, sort=True, observed=True).agg(
        flipped=("_flipped", "mean"), inconsistent=("_inconsistent", "mean"), n_pairs=("_flipped", "size")
    )
    out = per_prompt.join(per_pair, how="inner").reset_index()
    out = out[[*by, "regular", "tie", "undetected", "flipped", "inconsistent", "n_prompts", "n_pairs"]]
    out["n_prompts"] = out["n_prompts"].astype(np.int64)
    out["n_pairs"] = out["n_pairs"].astype(np.int64)
    return out


def pairwise_answer_shares(df: pd.DataFrame, *, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    r"""What the raw pairwise answers look like, in percent, next to :func:`pairwise_output_stats`.

    * ``empty``: % of prompts whose ``answer`` is blank (the model ended its turn at once; such an answer is
      undetected);
    * ``first_shown``: % of the regular answers (``winner`` in ``{a, b}``) that name the candidate shown first
      (``winner`` equal to the first letter of ``order``). Every pair is asked in both orders, so a model that
      judges the candidates names the first-shown one about half of the time and one that follows the position
      always; NaN in a cell without regular answers.

    Columns ``*by, empty, first_shown, n_prompts, n_regular``.

    >>> df = pd.DataFrame({"model": "m", "order": ["ab", "ba", "ab", "ba"], "winner": ["a", "b", "b", "undetected"],
    ...                    "answer": ["Ann", "Bo", "Bo", " "]})
    >>> pairwise_answer_shares(df).round(1).to_dict("records")
    [{'model': 'm', 'empty': 25.0, 'first_shown': 66.7, 'n_prompts': 4, 'n_regular': 3}]
    """
    by = list(by)
    _check_columns(df, [*by, "order", "winner", "answer"])
    bad = sorted(set(df["order"]) - set(ORDERS))
    if bad:
        raise ValueError(f"column 'order' must hold {list(ORDERS)}, got {bad[:5]}")
    work = df[by].copy()
    work["_empty"] = df["answer"].fillna("").astype(str).str.strip().eq("").to_numpy() * 100.0
    regular = df["winner"].isin(("a", "b")).to_numpy()
    first = (df["winner"].to_numpy() == df["order"].str[0].to_numpy()) * 100.0
    work["_first"] = np.where(regular, first, np.nan)
    work["_regular"] = regular
    out = work.groupby(by, sort=True, observed=True).agg(
        empty=("_empty", "mean"), first_shown=("_first", "mean"), n_prompts=("_empty", "size"),
        n_regular=("_regular", "sum"),
    ).reset_index()
    return out.astype({"n_prompts": np.int64, "n_regular": np.int64})


# --------------------------------------------------------------------------------------------------------------
# paired (within-pool) RABBI
# --------------------------------------------------------------------------------------------------------------
__all__ += ["paired_rabbi"]


def paired_rabbi(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    r"""Paired (within-pool) RABBI: the group's score against the reference's score *in the same pool*.

    .. math::

        R_{\mathrm{paired}}(A, B) = \frac{1}{N} \sum_{i=1}^{N} \mathrm{sign}(s_{A,i} - s_{B,i})

    over ``N`` pools (e.g. the answers of a listwise ranking, each holding one candidate of A and one of B), so a
    tie counts 0. Where :func:`rabbi` compares every A score with every B score, also across pools, this
    compares only the two candidates a decision actually weighed against each other: the share of pools where
    A beats B minus the share where B beats A. In ``[-1, 1]``; ``R(A, B) = -R(B, A)``.

    Parameters
    ----------
    a, b
        Scores of group A and of the reference group B, pool by pool (1-D, same length, finite).

    Examples
    --------
    >>> paired_rabbi([3, 1, 2], [1, 2, 2])  # wins, loses, ties -> (1 - 1 + 0) / 3
    0.0
    >>> paired_rabbi([8, 7, 1, 6], [1, 2, 8, 5])
    0.5
    """
    x, y = _scores(a, "a"), _scores(b, "b")
    if x.size != y.size:
        raise ValueError(f"a and b must be paired (one score each per pool), got {x.size} and {y.size} scores")
    return float(np.sign(x - y).mean())
