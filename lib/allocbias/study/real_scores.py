r"""What real large models' scores show: the findings of the chapter on public LLM hiring scores.

Three public data sets hold scores that real large models gave to candidates who differ only in a name (the data
cards in ``data/lippens``, ``data/recinq`` and ``data/jderbysh`` say where they come from and what they allow):

* **Lippens** (gpt-3.5-turbo-0613): 1,920 real Flemish vacancies, each scored for the same 18 CVs (9 origins x 2
  sexes). A vacancy is a natural pool of 18; a job type (occupation x required experience, 30 vacancies each) is a
  system; the reference group is native Belgian men.
* **re-cinq** (11 current models): 17 job descriptions x one résumé under six first names (one name per group,
  James Smith the reference) x 5 runs; placebo variants (irrelevant edits) collected months later; a prompt lab of
  six prompting strategies.
* **jderbysh** (gpt-3.5-turbo-0125, gpt-5.1): 36 Bertrand--Mullainathan names x 81 job x résumé pairs, many of them
  deliberately mismatched, so a qualified/unqualified split gives the equal-opportunity gap.

For each, the paper's Table 1 (each bias metric's Pearson r with the selection-rate gap over (system, group)
points, k = 1 up to half the pool) is set beside three controls (:func:`allocbias.validity.validity_controls`):
the same r with the group labels shuffled within pools (the permutation null: what a metric and a gap computed
from the same scores share by sampling noise alone), the held-out r (the metric from one half of the pools or
runs, the gap from the other) and the split-half reliability of the gap itself, the ceiling on any held-out r.
:func:`real_scores_findings` computes all of it and returns a :class:`RealScoreFindings`; the ``figure_*``
functions draw the chapter's figures from it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import checks
from ..measures import ll144, metrics, selection, validity
from ..checks import require_columns
from .findings import Findings

__all__ = [
    "METRICS",
    "RealScoreFindings",
    "boundary_tie_share",
    "choice_phrase",
    "closest_testable_phrase",
    "closest_verdict_phrase",
    "control_verdict",
    "figure_controls",
    "figure_lippens_points",
    "figure_lippens_rates",
    "figure_ndcg",
    "figure_shapes",
    "floor_phrase",
    "qualified_balance_phrase",
    "lead_phrase",
    "name_labels",
    "ndcg_phrase",
    "pooled_selection_rates",
    "real_scores_findings",
    "reference_tie_share",
    "verdict_count_phrase",
    "verdict_counts",
    "table1_view",
]

#: The score-level bias metrics the paper's Table 1 compares, in its order (the study's metrics).
METRICS: tuple[str, ...] = metrics.STUDY_METRICS
#: How the prose names each metric.
METRIC_NAMES: Mapping[str, str] = {"rabbi": "RABBI", "avg_gap": "δ", "jsd": "JSD", "emd": "EMD"}
#: Data set labels, in the chapter's order.
DATASET_LABELS: Mapping[str, str] = {
    "lippens": "Lippens: vacancies",
    "recinq": "re-cinq: first names",
    "recinq_placebo": "re-cinq: placebo edits",
    "jderbysh": "jderbysh: names × résumés",
}
#: re-cinq's reference placebo: the résumé with one blank line added (the edit closest to no edit at all).
PLACEBO_REFERENCE = "noop-whitespace"
#: re-cinq's prompt-lab reference: the unchanged résumé.
PROMPT_LAB_REFERENCE = "baseline"


# --------------------------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------------------------
def _require(frame: Any, columns: Sequence[str], what: str) -> None:
    require_columns(frame, columns, what, nonempty=True)


# --------------------------------------------------------------------------------------------------------------
# ties and pooled rates
# --------------------------------------------------------------------------------------------------------------
def reference_tie_share(
    candidates: pd.DataFrame, *, reference: Hashable, by: str | Sequence[str], group: str = "group",
    score: str = "score",
) -> pd.DataFrame:
    r"""Share of (group, reference) candidate pairs within a cell of ``by`` whose scores are equal.

    For each group :math:`A \ne B` (the reference) and cell :math:`c` (a pool, or a system x job stratum),
    the pairs are all :math:`(a, b)` with :math:`a \in A_c, b \in B_c`; the share is

    .. math:: \frac{\sum_c \#\{(a, b) : s_a = s_b\}}{\sum_c |A_c|\,|B_c|} .

    With integer scores a large share means the comparison, and a top-k selection between the two, is often
    decided by the tie-break rather than by the scores.

    Returns one row per group: ``group, pairs, tied, tie_share``.

    >>> c = pd.DataFrame({"pool": [1, 1, 1, 2, 2, 2], "group": ["A", "B", "C"] * 2, "score": [5, 5, 4, 3, 4, 4]})
    >>> reference_tie_share(c, reference="A", by="pool").to_dict("list")
    {'group': ['B', 'C'], 'pairs': [2, 2], 'tied': [1, 0], 'tie_share': [0.5, 0.0]}
    """
    by = [by] if isinstance(by, str) else list(by)
    _require(candidates, [*by, group, score], "candidates")
    if reference not in set(candidates[group]):
        raise ValueError(f"reference group {reference!r} is not in column {group!r}")
    counts = candidates.groupby([*by, group, score], observed=True).size().rename("n").reset_index()
    ref = counts[counts[group] == reference].drop(columns=group).rename(columns={"n": "n_ref"})
    others = counts[counts[group] != reference]
    tied = others.merge(ref, on=[*by, score], how="inner")
    tied = (tied["n"] * tied["n_ref"]).groupby(tied[group], observed=True).sum()
    size = candidates.groupby([*by, group], observed=True).size().rename("n").reset_index()
    ref_size = size[size[group] == reference].drop(columns=group).rename(columns={"n": "n_ref"})
    pairs = size[size[group] != reference].merge(ref_size, on=by, how="inner")
    pairs = (pairs["n"] * pairs["n_ref"]).groupby(pairs[group], observed=True).sum()
    out = pd.DataFrame({"pairs": pairs.astype(np.int64)})
    out["tied"] = tied.reindex(out.index).fillna(0).astype(np.int64)
    out["tie_share"] = out["tied"] / out["pairs"]
    return out.rename_axis(group).reset_index().rename(columns={group: "group"})


def boundary_tie_share(candidates: pd.DataFrame, *, pool: str | Sequence[str], k: int | Sequence[int],
                       score: str = "score") -> pd.DataFrame:
    r"""Share of pools whose selection boundary is a tie: the :math:`k`-th and :math:`(k+1)`-th highest scores are
    equal, so the tie-break decides who of the tied candidates is selected.

    Returns one row per k: ``k, pools, tied_pools, share``. Pools with at most k candidates are left out.

    >>> c = pd.DataFrame({"pool": [1, 1, 1, 2, 2, 2], "score": [5, 5, 4, 6, 4, 4]})
    >>> boundary_tie_share(c, pool="pool", k=[1, 2]).to_dict("list")
    {'k': [1, 2], 'pools': [2, 2], 'tied_pools': [1, 1], 'share': [0.5, 0.5]}
    """
    keys = [pool] if isinstance(pool, str) else list(pool)
    _require(candidates, [*keys, score], "candidates")
    ks = checks.quotas(k)
    ranked = candidates.sort_values(score, ascending=False, kind="mergesort")
    position = ranked.groupby(keys, observed=True).cumcount()
    size = ranked.groupby(keys, observed=True)[score].transform("size")
    rows = []
    for kk in ks:
        at_k = ranked[(position == kk - 1) & (size > kk)].set_index(keys)[score]
        after = ranked[position == kk].set_index(keys)[score].reindex(at_k.index)
        rows.append({"k": int(kk), "pools": int(at_k.size), "tied_pools": int((at_k == after).sum())})
    out = pd.DataFrame(rows)
    out["share"] = out["tied_pools"] / out["pools"]
    return out


def _quantiles(values: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each column over its finite values (NaN for a column without one)."""
    out = np.full(values.shape[1], np.nan)
    for j in range(values.shape[1]):
        finite = values[np.isfinite(values[:, j]), j]
        if finite.size:
            out[j] = np.quantile(finite, q)
    return out


def pooled_selection_rates(
    candidates: pd.DataFrame,
    *,
    reference: Hashable,
    k: int | Sequence[int] = (1, 2),
    pool: str = "pool",
    group: str = "group",
    score: str = "score",
    strata: str | None = None,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    r"""Selection rate of every group over all fixed pools, its impact ratio against the reference, and bootstrap
    intervals that resample the pools.

    Each pool selects its top k, ties broken uniformly at random, so candidate :math:`i` is selected with the
    exact probability :math:`p_i(k)` of :func:`allocbias.selection.exact_pool_rates`; the pooled rate of group
    :math:`X` and its impact ratio against the reference :math:`B` are

    .. math:: \phi(X, k) = \frac{\sum_{i \in X} p_i(k)}{|X|}, \qquad IR(X) = \frac{\phi(X, k)}{\phi(B, k)} .

    The intervals are percentile intervals over ``n_boot`` bootstrap samples of the pools (drawn with replacement
    within each value of ``strata``, e.g. a job type, when given; ``numpy.random.default_rng(seed)``).

    Returns one row per (k, group): ``k, group, n, rate, rate_low, rate_high, impact_ratio, ir_low, ir_high``.

    >>> c = pd.DataFrame({"pool": [1, 1, 2, 2], "group": ["A", "B"] * 2, "score": [3, 3, 5, 1]})
    >>> pooled_selection_rates(c, reference="A", k=1, n_boot=20)[["group", "rate", "impact_ratio"]].to_dict("list")
    {'group': ['A', 'B'], 'rate': [0.75, 0.25], 'impact_ratio': [1.0, 0.3333333333333333]}
    """
    _require(candidates, [pool, group, score] + ([strata] if strata else []), "candidates")
    n_boot = checks.count(n_boot, "n_boot")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    ks = checks.quotas(k, distinct=True)
    pool_codes, pools = pd.factorize(candidates[pool], sort=True)
    group_codes, groups = pd.factorize(candidates[group], sort=True)
    groups = list(groups)
    if reference not in groups:
        raise ValueError(f"reference group {reference!r} is not in column {group!r}; groups are {groups}")
    values = pd.to_numeric(candidates[score], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ValueError(f"column {score!r} has {int((~np.isfinite(values)).sum())} missing or non-finite score(s)")
    prob = selection.pool_selection_probabilities(pool_codes, values, ks)  # (K, candidates): exact p_i(k)
    cell = pool_codes * len(groups) + group_codes
    size = pools.size * len(groups)
    app = np.bincount(cell, minlength=size).reshape(pools.size, len(groups)).astype(float)
    sel_k = [np.bincount(cell, weights=prob[i], minlength=size).reshape(pools.size, len(groups))
             for i in range(len(ks))]
    rng = np.random.default_rng(seed)
    if strata:
        stratum = np.empty(pools.size, dtype=object)
        stratum[pool_codes] = candidates[strata].to_numpy()
        cells = [np.flatnonzero(stratum == value) for value in pd.unique(stratum)]
    else:
        cells = [np.arange(pools.size)]
    weights = np.zeros((n_boot, pools.size))
    for rows in cells:
        draws = rng.integers(0, rows.size, size=(n_boot, rows.size))
        np.add.at(weights, (np.repeat(np.arange(n_boot), rows.size), rows[draws].ravel()), 1.0)
    lo, hi = (1 - confidence) / 2, (1 + confidence) / 2
    ref = groups.index(reference)
    frames = []
    for kk, s in zip(ks, sel_k):
        rate = s.sum(axis=0) / app.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (weights @ s) / (weights @ app)  # NaN where a replicate drew no candidate of a group
            boot_ir = np.where(boot[:, [ref]] > 0, boot / boot[:, [ref]], np.nan)  # undefined when B gets no seat
        frames.append(pd.DataFrame({
            "k": kk, "group": groups, "n": app.sum(axis=0).astype(np.int64), "rate": rate,
            "rate_low": _quantiles(boot, lo), "rate_high": _quantiles(boot, hi),
            "impact_ratio": rate / rate[ref] if rate[ref] > 0 else np.nan,
            "ir_low": _quantiles(boot_ir, lo), "ir_high": _quantiles(boot_ir, hi),
        }))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------------------------
# phrases that depend on the results
# --------------------------------------------------------------------------------------------------------------
def _fmt(x: float) -> str:
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text.replace("-", "−")


_GAP_WORDS = {"dDP": "ΔDP", "dEO": "ΔEO"}


def _gap_label(row: Mapping[str, Any]) -> str:
    gap = _GAP_WORDS.get(str(row.get("gap", "dDP")), str(row.get("gap", "the gap")))
    return f"|{gap}|" if validity.DEFAULT_ABS_GAP.get(str(row.get("metric", "")), False) else gap


def control_verdict(row: Mapping[str, Any]) -> str:
    """A metric's verdict in words, with its reason: :func:`allocbias.validity.verdict_words` of one row of
    :attr:`allocbias.validity.ValidityControls.table` (the held-out r's 95% interval against the 97.5th
    percentile of its held-out permutation null, and the gap's ceiling), the gap named ΔDP or ΔEO (in bars for JSD
    and EMD). The in-sample r and its null play no part.

    >>> row = {"gap": "dDP", "metric": "rabbi", "heldout_mean": 0.03, "heldout_ci_lo": -0.1, "heldout_ci_hi": 0.15,
    ...        "heldout_null_lo": -0.12, "heldout_null_hi": 0.13, "ceiling": 0.1}
    >>> control_verdict(row)[:56]
    'is not shown to track ΔDP at this size: ΔDP itself is to'
    >>> control_verdict(row | {"heldout_ci_lo": 0.2, "metric": "jsd"})[:25]
    'tracks |ΔDP| out of sampl'
    """
    return str(validity.verdict_words(row, gap=_gap_label(row))["phrase"])


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of a controls table track the gap out of sample (:func:`allocbias.validity.verdict_words`),
    how many are not shown at this size, how many of those because the gap is too noisy to test, and, as a
    described control only, how many in-sample r lie above their permutation null (``r > null_hi``).

    >>> t = pd.DataFrame({"r": [0.6, 0.6, 0.1], "null_hi": [0.2, 0.7, 0.2], "heldout_mean": [0.3, 0.0, 0.0],
    ...                   "heldout_ci_lo": [0.2, -0.2, -0.3], "heldout_ci_hi": [0.4, 0.2, 0.3],
    ...                   "heldout_null_lo": [-0.1] * 3, "heldout_null_hi": [0.1] * 3, "ceiling": [0.5, 0.5, 0.05]})
    >>> verdict_counts(t)
    {'rows': 3, 'tracks': 1, 'not_shown': 2, 'too_noisy': 1, 'above_null': 1}
    """
    _require(table, ["r", "null_hi"], "table")
    words = [validity.verdict_words(row) for _, row in table.iterrows()]
    return {"rows": int(len(table)), "tracks": sum(bool(w["tracks"]) for w in words),
            "not_shown": sum(not w["tracks"] for w in words),
            "too_noisy": sum(w["verdict"] == validity.VERDICT_TOO_NOISY for w in words),
            "above_null": int((table["r"] > table["null_hi"]).sum())}


def lead_phrase(table: pd.DataFrame, *, first: str = "rabbi", second: str = "avg_gap") -> str:
    """Compare two metrics' in-sample and held-out r at one k, in words: who leads in-sample, by how much, and
    whether a lead holds out of sample. Held out a metric leads only when it tracks the gap
    (:func:`allocbias.validity.verdict_words`) and the two held-out r's 95% sampling intervals
    (``heldout_ci_lo, heldout_ci_hi``) do not overlap.

    ``table`` has one row per metric (column ``metric``) with ``r`` and the columns of the verdict.

    >>> t = pd.DataFrame({"metric": ["rabbi", "avg_gap"], "gap": "dDP", "r": [0.62, 0.60],
    ...                   "heldout_mean": [0.10, 0.11], "heldout_ci_lo": [-0.1, -0.1], "heldout_ci_hi": [0.3, 0.3],
    ...                   "heldout_null_lo": -0.15, "heldout_null_hi": 0.15, "ceiling": 0.5})
    >>> lead_phrase(t)
    'RABBI leads δ in-sample by 0.02 in r, and held out neither is shown to track ΔDP at this size (r = 0.10 and 0.11)'
    """
    _require(table, ["metric", "r", "heldout_mean", "heldout_ci_lo", "heldout_ci_hi"], "table")
    rows = {}
    for name in (first, second):
        part = table[table["metric"] == name]
        if len(part) != 1:
            raise ValueError(f"table must hold exactly one row of metric {name!r}, has {len(part)}")
        rows[name] = part.iloc[0]
    a, b = rows[first], rows[second]
    na, nb = METRIC_NAMES.get(first, first), METRIC_NAMES.get(second, second)
    diff = float(a["r"] - b["r"])
    if abs(diff) < 0.005:
        ins = f"{na} and {nb} have the same in-sample r ({_fmt(a['r'])})"
    elif diff > 0:
        ins = f"{na} leads {nb} in-sample by {_fmt(diff)} in r"
    else:
        ins = f"{nb} leads {na} in-sample by {_fmt(-diff)} in r"
    gap = _gap_label(a)
    track_a, track_b = (bool(validity.verdict_words(x)["tracks"]) for x in (a, b))
    overlap = a["heldout_ci_lo"] <= b["heldout_ci_hi"] and b["heldout_ci_lo"] <= a["heldout_ci_hi"]
    ahead_a = a["heldout_mean"] > b["heldout_mean"]
    if not (track_a or track_b):
        held = (f"held out neither is shown to track {gap} at this size (r = {_fmt(a['heldout_mean'])} and "
                f"{_fmt(b['heldout_mean'])})")
    elif overlap or not (track_a if ahead_a else track_b):
        held = (f"held out the two cannot be told apart (r = {_fmt(a['heldout_mean'])} and "
                f"{_fmt(b['heldout_mean'])}, overlapping 95% intervals)")
    else:
        held = (f"held out {na if ahead_a else nb} stays ahead (r = {_fmt(a['heldout_mean'])} against "
                f"{_fmt(b['heldout_mean'])}, 95% intervals apart)")
    return f"{ins}, and {held}"


def ndcg_phrase(row: Mapping[str, float], *, what: str = "the models") -> str:
    """One row of :func:`allocbias.validity.ndcg_controls` in words: the in-sample NDCG against its permutation null,
    and the held-out NDCG against a random ordering (better than chance when the held-out mean exceeds the random
    orderings' 97.5th percentile, ``random_hi``).

    >>> row = {"n": 1, "ndcg": 0.94, "random_ndcg": 0.5, "random_hi": 0.66, "null_mean": 0.93, "null_hi": 0.99,
    ...        "heldout_mean": 0.58}
    >>> ndcg_phrase(row, what="the 11 models")
    'ranks the 11 models with NDCG@1 = 0.94 in-sample, within its permutation null (0.93 on average), and 0.58 held out, no better than a random ordering (0.50 on average, 0.66 at its 97.5th percentile)'
    >>> ndcg_phrase(dict(row, ndcg=0.995, heldout_mean=0.8)).split(", ")[1:3]
    ['above its permutation null (0.93 on average)', 'and 0.80 held out']
    """
    keys = ("n", "ndcg", "random_ndcg", "random_hi", "null_mean", "null_hi", "heldout_mean")
    for key in keys:
        if key not in row or row[key] is None or not np.isfinite(float(row[key])):
            raise ValueError(f"ndcg_phrase needs a finite {key!r}, got {row.get(key)!r}")
    null = "above" if row["ndcg"] > row["null_hi"] else "within"
    chance = "better than" if row["heldout_mean"] > row["random_hi"] else "no better than"
    return (f"ranks {what} with NDCG@{int(row['n'])} = {_fmt(row['ndcg'])} in-sample, {null} its permutation null "
            f"({_fmt(row['null_mean'])} on average), and {_fmt(row['heldout_mean'])} held out, {chance} a random "
            f"ordering ({_fmt(row['random_ndcg'])} on average, {_fmt(row['random_hi'])} at its 97.5th percentile)")


def verdict_count_phrase(counts: Mapping[str, int], *, what: str = "correlations", gap: str = "the gap") -> str:
    """The counts of :func:`verdict_counts` in one sentence: the verdicts first, the in-sample null after, as a
    described control.

    >>> verdict_count_phrase({"rows": 36, "tracks": 2, "not_shown": 34, "too_noisy": 20, "above_null": 30})
    'of the 36 correlations, 2 track the gap out of sample and 34 are not shown at this size, 20 of them because the gap is too noisy for any metric to be tested; 30 lie above their in-sample permutation null, which by itself is no verdict'
    >>> verdict_count_phrase({"rows": 4, "tracks": 0, "not_shown": 4, "too_noisy": 0, "above_null": 0}, what="rows")
    'of the 4 rows, none tracks the gap out of sample and all 4 are not shown at this size, none of them because the gap is too noisy for any metric to be tested; none lies above its in-sample permutation null, which by itself is no verdict'
    """
    for key in ("rows", "tracks", "not_shown", "too_noisy", "above_null"):
        if key not in counts:
            raise ValueError(f"counts lacks {key!r}")
    n = int(counts["rows"])

    def part(value: float, one: str, many: str) -> str:
        value = int(value)
        if value == n and n > 1:
            return f"all {n} {many}"
        if value == 0:
            return f"none {one}"
        return f"{value} {one if value == 1 else many}"

    noisy = int(counts["too_noisy"])
    reason = "because the gap is too noisy for any metric to be tested"
    return (f"of the {n} {what}, {part(counts['tracks'], f'tracks {gap} out of sample', f'track {gap} out of sample')}"
            f" and {part(counts['not_shown'], 'is not shown at this size', 'are not shown at this size')}, "
            f"{'none' if noisy == 0 else noisy} of them {reason}; "
            f"{part(counts['above_null'], 'lies above its in-sample permutation null', 'lie above their in-sample permutation null')}, "
            "which by itself is no verdict")


def closest_verdict_phrase(table: pd.DataFrame) -> str:
    """The row of a controls table whose verdict is the closest call, in words with the digits that decide it:
    the lower end of the held-out r's 95% interval against the larger of 0 and the 97.5th percentile of the
    held-out null (:func:`allocbias.validity.verdict_words`' threshold), to three decimals.

    >>> t = pd.DataFrame({"data set": ["a", "b"], "metric": ["rabbi", "avg_gap"], "k": [1, 2],
    ...                   "heldout_ci_lo": [-0.2, 0.024], "heldout_null_hi": [0.1, 0.103]})
    >>> closest_verdict_phrase(t)
    "the closest call is b, δ at k = 2: the interval's lower end 0.024 against the threshold 0.103 (not shown)"
    """
    _require(table, ["data set", "metric", "k", "heldout_ci_lo", "heldout_null_hi"], "table")
    threshold = table["heldout_null_hi"].clip(lower=0.0)
    margin = (table["heldout_ci_lo"] - threshold).abs()
    if not margin.notna().any():
        raise ValueError("table has no row with a held-out interval and null")
    row = table.loc[margin.idxmin()]
    word = "tracks" if row["heldout_ci_lo"] > threshold[margin.idxmin()] else "not shown"
    return (f"the closest call is {row['data set']}, {METRIC_NAMES.get(row['metric'], row['metric'])} at "
            f"k = {int(row['k'])}: the interval's lower end {row['heldout_ci_lo']:.3f} against the threshold "
            f"{threshold[margin.idxmin()]:.3f} ({word})")


def closest_testable_phrase(table: pd.DataFrame) -> str:
    """The row of a controls table whose "gap too noisy to test" call is the closest, with its digits: the ceiling
    (square root of the gap's split-half reliability) against the 97.5th percentile of the held-out null
    (:func:`allocbias.validity.verdict_words`' rule), to three decimals.

    >>> t = pd.DataFrame({"data set": ["a", "b"], "metric": ["rabbi", "jsd"], "k": [1, 1],
    ...                   "ceiling": [0.221, 0.2], "heldout_null_hi": [0.14, 0.6]})
    >>> closest_testable_phrase(t)
    'the closest call on whether the gap can be tested is a, RABBI at k = 1: ceiling 0.221 against 0.140 (testable)'
    """
    _require(table, ["data set", "metric", "k", "ceiling", "heldout_null_hi"], "table")
    margin = (table["ceiling"] - table["heldout_null_hi"]).abs()
    if not margin.notna().any():
        raise ValueError("table has no row with a ceiling and a held-out null")
    row = table.loc[margin.idxmin()]
    word = "testable" if row["ceiling"] > row["heldout_null_hi"] else "too noisy"
    return (f"the closest call on whether the gap can be tested is {row['data set']}, "
            f"{METRIC_NAMES.get(row['metric'], row['metric'])} at k = {int(row['k'])}: ceiling {row['ceiling']:.3f} "
            f"against {row['heldout_null_hi']:.3f} ({word})")


def qualified_balance_phrase(counts: Mapping[str, tuple[int, int]]) -> str:
    """How many qualified and unqualified candidates each model scored, in words (``counts``: model ->
    (qualified, unqualified)); equal counts are said as equal, never as one outnumbering the other.

    >>> qualified_balance_phrase({"m1": (931, 1830), "m2": (5832, 5832)})
    'm1: 931 qualified against 1,830 unqualified; m2: as many qualified as unqualified (5,832 each)'
    """
    if not counts:
        raise ValueError("qualified_balance_phrase needs the counts of at least one model")
    parts = []
    for model, (q, u) in counts.items():
        q, u = int(q), int(u)
        parts.append(f"{model}: as many qualified as unqualified ({q:,} each)" if q == u
                     else f"{model}: {q:,} qualified against {u:,} unqualified")
    return "; ".join(parts)


def floor_phrase(names: Mapping[str, Any], placebo: Mapping[str, Any], *, metric: str = "rabbi") -> str:
    """Set a metric's in-sample r on real groups beside its r on placebo groups (irrelevant edits), in words, then
    give the verdict on the names (:func:`allocbias.validity.verdict_words`): the in-sample comparison is "no
    stronger than the placebo floor" when the names' r lies within the placebo r's confidence interval or below it,
    and the names' r is also set against its own permutation null. Neither in-sample comparison is the verdict.

    >>> held = {"heldout_mean": 0.1, "heldout_ci_lo": -0.2, "heldout_ci_hi": 0.4, "heldout_null_lo": -0.3,
    ...         "heldout_null_hi": 0.3, "ceiling": 0.6}
    >>> floor_phrase({"r": 0.60, "null_lo": 0.5, "null_hi": 0.7, **held}, {"r": 0.55, "r_lo": 0.45, "r_hi": 0.64})
    'RABBI correlates with ΔDP at r = 0.60 across the names and at r = 0.55 across placebo edits that change nothing relevant, no stronger than that floor in-sample and within its own permutation null; held out it is not shown to track ΔDP at this size'
    """
    for side, row, keys in (("names", names, ("r", "null_lo", "null_hi")), ("placebo", placebo, ("r", "r_lo", "r_hi"))):
        for key in keys:
            if key not in row or not np.isfinite(float(row[key])):
                raise ValueError(f"{side} needs a finite {key!r}")
    floor = "no stronger than that floor" if names["r"] <= placebo["r_hi"] else "stronger than that floor"
    null = validity.control_words(names)["null"]
    null_words = {"above": "above", "inside": "within", "below": "below"}[null]
    verdict = validity.verdict_words(names, gap="ΔDP")["short"]
    return (f"{METRIC_NAMES.get(metric, metric)} correlates with ΔDP at r = {_fmt(names['r'])} across the names and "
            f"at r = {_fmt(placebo['r'])} across placebo edits that change nothing relevant, {floor} in-sample and "
            f"{null_words} its own permutation null; held out it {verdict}")


def choice_phrase(table: pd.DataFrame) -> str:
    """What the verdicts leave for choosing a bias metric, from one row per (data set, metric) at one k: the
    metrics that track the gap out of sample (:func:`allocbias.validity.verdict_words`) in every data set, in
    some, or in none.

    >>> t = pd.DataFrame({"data set": ["a", "a", "b", "b"], "metric": ["rabbi", "avg_gap"] * 2,
    ...                   "heldout_mean": 0.3, "heldout_ci_lo": [0.2, 0.2, 0.2, -0.1], "heldout_ci_hi": 0.5,
    ...                   "heldout_null_lo": -0.1, "heldout_null_hi": 0.1, "ceiling": 0.6})
    >>> choice_phrase(t)
    'RABBI tracks the gap out of sample in every data set, δ in 1 of 2'
    >>> choice_phrase(t.assign(heldout_ci_lo=[0.2, -0.1, -0.1, -0.1]))
    'RABBI tracks the gap out of sample in 1 of 2 data sets; δ in none: no metric is shown to track the gap in every data set, so these data give no reason to prefer one metric to another for predicting selection-rate gaps'
    >>> choice_phrase(t.assign(heldout_ci_lo=-0.1))
    'no metric is shown to track the gap out of sample in any data set at this size, so these data cannot rank the metrics by how well they predict the selection-rate gap'
    """
    _require(table, ["data set", "metric"], "table")
    ok = pd.Series([bool(validity.verdict_words(row)["tracks"]) for _, row in table.iterrows()], index=table.index)
    n_sets = int(table["data set"].nunique())
    passed = ok.groupby(table["metric"], sort=False).sum()
    if passed.sum() == 0:
        return ("no metric is shown to track the gap out of sample in any data set at this size, so these data "
                "cannot rank the metrics by how well they predict the selection-rate gap")
    parts = []
    for metric, count in passed.sort_values(ascending=False, kind="mergesort").items():
        name = METRIC_NAMES.get(metric, metric)
        if count == n_sets:
            parts.append(f"{name} tracks the gap out of sample in every data set" if not parts
                         else f"{name} in every one")
        elif count:
            parts.append(f"{name} tracks the gap out of sample in {count} of {n_sets} data sets" if not parts
                         else f"{name} in {count} of {n_sets}")
    none = [METRIC_NAMES.get(m, m) for m, c in passed.items() if c == 0]
    tail = f"; {', '.join(none)} in none" if none else ""
    if passed.max() < n_sets:
        tail += (": no metric is shown to track the gap in every data set, so these data give no reason to prefer "
                 "one metric to another for predicting selection-rate gaps")
    return ", ".join(parts) + tail


def table1_view(table: pd.DataFrame, *, digits: int = 2) -> pd.DataFrame:
    """A controls table (rows of :attr:`allocbias.validity.ValidityControls.table`, with ``data set`` and
    ``verdict``) as the chapter shows it: each estimate beside its interval or range in one cell, the held-out r
    beside its null's 97.5th percentile and the ceiling (the verdict's evidence), the gap's reliability in the book's
    words, metrics by name; inside the text column at 1280 px (the full table is ``findings.validity``).

    >>> t = pd.DataFrame({"data set": ["a"], "gap": ["dDP"], "metric": ["rabbi"], "k": [1], "n_points": [10],
    ...                   "r": [0.5], "r_lo": [0.2], "r_hi": [0.7], "null_mean": [0.4], "null_lo": [0.1],
    ...                   "null_hi": [0.6], "heldout_mean": [0.05], "heldout_ci_lo": [-0.1], "heldout_ci_hi": [0.2],
    ...                   "heldout_null_mean": [0.0], "heldout_null_lo": [-0.15], "heldout_null_hi": [0.16],
    ...                   "reliability": [0.1], "verdict": ["v"]})
    >>> view = table1_view(t).iloc[0].to_dict()
    >>> view["r [95% CI]; shuffled labels"], view["held-out r [95% CI]; null 97.5%; ceiling"], view["gap reliability"]
    ('0.50 [0.20, 0.70]; 0.40', '0.05 [−0.10, 0.20]; 0.16; 0.32', '0.10 (unreliable)')
    """
    need = ["data set", "gap", "metric", "k", "n_points", "r", "r_lo", "r_hi", "null_mean", "null_lo", "null_hi",
            "heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_mean", "heldout_null_lo",
            "heldout_null_hi", "reliability", "verdict"]
    _require(table, need, "table")

    def fmt(x: float) -> str:
        text = f"{float(x):.{digits}f}"
        return text.replace("-", "−") if float(text) != 0 else text.lstrip("-")

    def cell(mid: str, lo: str, hi: str) -> list[str]:
        return [f"{fmt(a)} [{fmt(b)}, {fmt(c)}]" for a, b, c in zip(table[mid], table[lo], table[hi])]

    return pd.DataFrame({
        "data set": table["data set"].to_numpy(), "gap": table["gap"].map({"dDP": "ΔDP", "dEO": "ΔEO"}).fillna(
            table["gap"]).to_numpy(),
        "metric": table["metric"].map(METRIC_NAMES).fillna(table["metric"]).to_numpy(),
        "k": table["k"].astype(int).to_numpy(), "points": table["n_points"].astype(int).to_numpy(),
        "r [95% CI]; shuffled labels": [f"{r}; {fmt(m)}" for r, m in zip(cell("r", "r_lo", "r_hi"), table["null_mean"])],
        "held-out r [95% CI]; null 97.5%; ceiling": [
            f"{h}; {fmt(n)}; {fmt(np.sqrt(max(float(rel), 0.0)))}" for h, n, rel in zip(
                cell("heldout_mean", "heldout_ci_lo", "heldout_ci_hi"), table["heldout_null_hi"], table["reliability"])],
        "gap reliability": [f"{fmt(x)} ({validity.reliability_word(x)})" if np.isfinite(x) else "–"
                            for x in table["reliability"]],
        "verdict": table["verdict"].to_numpy(),
    })


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RealScoreFindings(Findings):
    """Everything the chapter on real large models' scores shows.

    Attributes
    ----------
    counts
        Per data set: rows read, valid scores, flagged rows (refusals, empty answers), systems, groups, pools.
    validity
        The paper's Table 1 with controls, one row per (data set, gap, metric, k): in-sample ``r`` with its
        interval, the permutation null (``null_mean``, ``null_lo``, ``null_hi``, ``null_percentile``), the held-out
        r (``heldout_mean``, its range over splits ``heldout_lo``, ``heldout_hi``, its sampling interval
        ``heldout_ci_lo``, ``heldout_ci_hi`` and its own null ``heldout_null_*``), the gap's split-half
        ``reliability``, the number of impact ratios below 0.8 and its null, and ``verdict``
        (:func:`allocbias.validity.verdict_words`).
    points
        The (system, group) points behind the k = 1 scatter of each data set (metric and gap columns).
    lippens_rates
        Pooled Lippens selection rates per group at k = 1 and 2 with intervals, and impact ratios against native
        Belgian men.
    lippens_ll144
        The Local Law 144 table those rates imply at k = 1 (comparator: the group with the highest rate).
    ties
        Per data set: the share of (group, reference) pairs tied, and (natural pools) of boundaries tied.
    ndcg
        Model selection: NDCG@n of each metric's ranking (re-cinq's models; the prompt lab's strategies) beside a
        random ordering's.
    shapes
        Skewness and excess kurtosis of the scores per (data set, system, group).
    values
        The numbers (and one label) the prose quotes, by glue key (:meth:`glue_values`).
    phrases
        Result-dependent sentences, by glue key.
    parameters
        The parameters the findings were computed with.
    """

    counts: pd.DataFrame
    validity: pd.DataFrame
    points: pd.DataFrame
    lippens_rates: pd.DataFrame
    lippens_ll144: pd.DataFrame
    ties: pd.DataFrame
    ndcg: pd.DataFrame
    shapes: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def _ks(pool_size: int, k_max: int | None) -> list[int]:
    """k = 1 up to half the pool (at least 1), capped at ``k_max``."""
    top = max(1, pool_size // 2)
    return list(range(1, (top if k_max is None else min(top, k_max)) + 1))


def _counts_row(name: str, frame: pd.DataFrame, valid: pd.DataFrame, system: Sequence[str], pool: Sequence[str]
                ) -> dict:
    """One row of the counts table: rows read, valid scores, flagged rows, models, systems (the cells of Table 1),
    pools (the units whose group labels the null shuffles and the held-out test splits) and groups."""
    models = int(valid["model"].nunique()) if "model" in valid.columns else 1
    return {"data set": DATASET_LABELS.get(name, name), "rows": int(len(frame)), "valid scores": int(len(valid)),
            "flagged": int(len(frame) - len(valid)), "models": models,
            "systems": int(valid.groupby(list(system)).ngroups),
            "pools": int(valid.groupby([*system, *pool]).ngroups), "groups": int(valid["group"].nunique())}


def _with_key(frame: pd.DataFrame, name: str, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with a column ``name`` joining ``columns`` (e.g. model and job) into one label."""
    out = frame.copy()
    out[name] = out[list(columns)].astype(str).agg(" · ".join, axis=1)
    return out


def name_labels(frame: pd.DataFrame) -> pd.Series:
    """re-cinq's first-name variants as readable group labels: the name, and the group it signals when the table
    gives one (``firstName_wei-chen`` in group ``East Asian`` becomes ``Wei Chen (East Asian)``).

    >>> name_labels(pd.DataFrame({"variant": ["firstName_wei-chen", "Jo Doe"], "group": ["East Asian", "Jo Doe"]}))
    0    Wei Chen (East Asian)
    1                   Jo Doe
    Name: group, dtype: object
    """
    _require(frame, ["variant", "group"], "frame")
    name = frame["variant"].astype(str).str.removeprefix("firstName_").str.replace("-", " ").str.title()
    group = frame["group"].astype(str)
    return pd.Series(np.where(name == group, name, name + " (" + group + ")"), index=frame.index, name="group",
                     dtype=object)


def _shapes(name: str, frame: pd.DataFrame, system: str) -> pd.DataFrame:
    shape = metrics.score_shape(frame, "score", "group", by=[system], on_constant="nan")
    return shape.rename(columns={system: "system"}).assign(**{"data set": DATASET_LABELS.get(name, name)})


def _loaders() -> dict[str, Callable[[], pd.DataFrame]]:
    from ..audited import public_scores

    return {"lippens": public_scores.load_lippens,
            "recinq": lambda: public_scores.load_recinq(kind="results"),
            "prompt_lab": lambda: public_scores.load_recinq(kind="prompt_lab"),
            "jderbysh": public_scores.load_jderbysh}


def real_scores_findings(
    *,
    k_max: int | None = None,
    n_perm: int = 200,
    n_splits: int = 50,
    n_boot: int = 10_000,
    n_boot_heldout: int = 1_000,
    seed: int = 0,
    metric_names: Sequence[str] = METRICS,
    frames: Mapping[str, pd.DataFrame] | None = None,
    references: Mapping[str, Hashable] | None = None,
) -> RealScoreFindings:
    """The findings of the real-scores chapter, computed from the three public data sets.

    Parameters
    ----------
    k_max
        Largest k of the Table 1 sweeps (default: half of each data set's pool).
    n_perm, n_splits
        Permutations of the null and random half splits of the held-out test (the issue's floor: 200 and 50).
    n_boot
        Bootstrap samples of the Lippens vacancies behind the pooled rates' intervals.
    n_boot_heldout
        Bootstrap replicates of the held-out r's sampling interval (systems resampled), on which the verdicts rest
        (:func:`allocbias.validity.verdict_words`).
    seed
        Seed of every random step (permutations, splits, bootstrap).
    metric_names
        The bias metrics compared.
    frames
        The data sets as tidy frames (keys ``lippens``, ``recinq``, ``prompt_lab``, ``jderbysh``), for tests on
        small synthetic data; default: the committed tables, read through :mod:`allocbias.audited.public_scores`.
    references
        The reference group of each data set (default: the loaders' references).

    Returns
    -------
    RealScoreFindings
    """
    n_perm = checks.count(n_perm, "n_perm", 2)
    n_splits = checks.count(n_splits, "n_splits", 1)
    n_boot = checks.count(n_boot, "n_boot", 2)
    if k_max is not None:
        k_max = checks.count(k_max, "k_max")
    metric_names = list(metric_names)
    unknown = [m for m in metric_names if m not in METRICS]
    if unknown or not metric_names:
        raise ValueError(f"metric_names must be a non-empty subset of {list(METRICS)}, got {metric_names}")
    if frames is None:
        frames = {name: load() for name, load in _loaders().items()}
    missing = [k for k in ("lippens", "recinq", "prompt_lab", "jderbysh") if k not in frames]
    if missing:
        raise ValueError(f"frames lacks the data set(s) {missing}")
    if references is None:
        from ..audited import public_scores

        references = {"lippens": public_scores.LIPPENS_REFERENCE, "recinq": public_scores.RECINQ_REFERENCE,
                      "jderbysh": public_scores.JDERBYSH_REFERENCE, "recinq_placebo": PLACEBO_REFERENCE,
                      "prompt_lab": PROMPT_LAB_REFERENCE}
    n_boot_heldout = checks.count(n_boot_heldout, "n_boot_heldout", 1)
    return _findings(frames, references, k_max=k_max, n_perm=n_perm, n_splits=n_splits, n_boot=n_boot, seed=seed,
                     metric_names=metric_names, n_boot_heldout=n_boot_heldout)


def _controls(name: str, candidates: pd.DataFrame, *, gap: str, metric_names: Sequence[str], **kwargs: Any
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 with its controls for one data set and one gap: (table, points), labelled with the data set."""
    result = validity.validity_controls(candidates, metrics=tuple(metric_names), gap=gap, group="group",
                                        score="score", **kwargs)
    label = DATASET_LABELS.get(name, name)
    table = result.table.copy()
    table.insert(0, "data set", label)
    if "gap" not in table.columns:
        table.insert(1, "gap", gap)
    table["verdict"] = validity.verdict_column(table)
    points = result.points.copy()
    points.insert(0, "data set", label)
    if "gap" not in points.columns:
        points.insert(1, "gap", gap)
    return table, points


def _row(table: pd.DataFrame, dataset: str, metric: str, k: int, gap: str = "dDP") -> pd.Series:
    part = table[(table["data set"] == DATASET_LABELS[dataset]) & (table["metric"] == metric) & (table["k"] == k)
                 & (table["gap"] == gap)]
    if len(part) != 1:
        raise ValueError(f"expected one Table 1 row for {dataset}, {metric}, k = {k}, {gap}; found {len(part)}")
    return part.iloc[0]


def _findings(frames: Mapping[str, pd.DataFrame], references: Mapping[str, Hashable], *, k_max: int | None,
              n_perm: int, n_splits: int, n_boot: int, seed: int, metric_names: list[str],
              n_boot_heldout: int = 1_000) -> RealScoreFindings:
    control = {"n_perm": n_perm, "n_splits": n_splits, "seed": seed, "metric_names": metric_names,
               "n_boot": n_boot_heldout}
    counts, tables, points, ties, shapes, ndcg = [], [], [], [], [], []

    # Lippens: job type = system, vacancy = natural pool of 18, native Belgian men the reference
    lip_all = frames["lippens"]
    _require(lip_all, ["vacancy_id", "job_type", "group", "score", "valid", "bare_output", "recoded"],
             "the Lippens table")
    lip = lip_all[lip_all["valid"].astype(bool)]
    counts.append(_counts_row("lippens", lip_all, lip, ["job_type"], ["vacancy_id"]))
    lip_pool = int(lip.groupby("vacancy_id").size().max())
    lip_ks = _ks(lip_pool, k_max)
    t, p = _controls("lippens", lip, gap="dDP", reference=references["lippens"], k=lip_ks, design="pools",
                     system="job_type", pool="vacancy_id", **control)
    tables.append(t)
    points.append(p)
    rates = pooled_selection_rates(lip, reference=references["lippens"], k=[1, 2], pool="vacancy_id",
                                   strata="job_type", n_boot=n_boot, seed=seed)
    rates.insert(2, "origin", rates["group"].map(lip.drop_duplicates("group").set_index("group")["origin"]))
    rates.insert(3, "sex", rates["group"].map(lip.drop_duplicates("group").set_index("group")["sex"]))
    at_1 = rates[rates["k"] == 1]
    ll = ll144.impact_ratio_table(at_1.assign(applicants=at_1["n"].astype(float),
                                              selected=at_1["rate"] * at_1["n"]),
                                  group=["origin", "sex"], exclude_below=None)
    tie = reference_tie_share(lip, reference=references["lippens"], by="vacancy_id")
    ties.append({"data set": DATASET_LABELS["lippens"],
                 "reference pairs tied": float(tie["tied"].sum() / tie["pairs"].sum()),
                 **{f"boundary tied at k = {r['k']}": float(r["share"]) for r in
                    boundary_tie_share(lip, pool="vacancy_id", k=[1, 2]).to_dict("records")}})
    shapes.append(_shapes("lippens", lip, "job_type"))

    # re-cinq: first names (one name per group), system = model x job, pools of one draw per name
    rc_all = frames["recinq"]
    _require(rc_all, ["model", "job", "variant", "axis", "run", "group", "placebo", "score", "valid"],
             "the re-cinq results table")
    rc_valid = rc_all[rc_all["valid"].astype(bool)]
    names = rc_valid[rc_valid["axis"] == "firstName"]
    reference_rows = names[names["variant"] == references["recinq"]]
    if reference_rows.empty:
        raise ValueError(f"the re-cinq table has no valid row of the reference variant {references['recinq']!r}")
    names_reference = name_labels(reference_rows.head(1)).iloc[0]
    names = names.assign(group=name_labels(names))
    counts.append(_counts_row("recinq", rc_all[rc_all["axis"] == "firstName"], names, ["model", "job"], ["run"]))
    rc_ks = _ks(int(names["group"].nunique()), k_max)
    t, p = _controls("recinq", names, gap="dDP", reference=names_reference, k=rc_ks, design="draws",
                     system=["model", "job"], pool="run", **control)
    tables.append(t)
    points.append(p)
    tie = reference_tie_share(names, reference=names_reference, by=["model", "job"])
    ties.append({"data set": DATASET_LABELS["recinq"],
                 "reference pairs tied": float(tie["tied"].sum() / tie["pairs"].sum())})
    shapes.append(_shapes("recinq", names, "model"))
    ndcg.append(validity.ndcg_controls(names, reference=names_reference, k=rc_ks, metrics=tuple(metric_names),
                                       design="draws", n_perm=n_perm, n_splits=n_splits, seed=seed, model="model",
                                       subtask="job", pool="run")
                .assign(ranking=f"re-cinq: {names['model'].nunique()} models", among="models"))

    # re-cinq placebo against placebo: the empirical floor
    placebo = rc_valid[rc_valid["placebo"].astype(bool)]
    counts.append(_counts_row("recinq_placebo", rc_all[rc_all["placebo"].astype(bool)], placebo, ["model", "job"],
                              ["run"]))
    pl_ks = _ks(int(placebo["group"].nunique()), k_max)
    t, p = _controls("recinq_placebo", placebo, gap="dDP", reference=references["recinq_placebo"], k=pl_ks,
                     design="draws", system=["model", "job"], pool="run", **control)
    tables.append(t)
    points.append(p)

    ndcg.append(validity.ndcg_controls(placebo, reference=references["recinq_placebo"], k=pl_ks,
                                       metrics=tuple(metric_names), design="draws", n_perm=n_perm, n_splits=n_splits,
                                       seed=seed, model="model", subtask="job", pool="run")
                .assign(ranking=f"re-cinq placebo edits: {placebo['model'].nunique()} models", among="placebo"))

    # re-cinq prompt lab: rank the prompting strategies
    lab_all = frames["prompt_lab"]
    _require(lab_all, ["strategy", "model", "job", "group", "score", "valid"], "the re-cinq prompt-lab table")
    lab = _with_key(lab_all[lab_all["valid"].astype(bool)], "subtask", ["model", "job"])
    lab_ks = _ks(int(lab["group"].nunique()), k_max)
    ndcg.append(validity.ndcg_controls(lab, reference=references["prompt_lab"], k=lab_ks, metrics=tuple(metric_names),
                                       design="draws", n_perm=n_perm, n_splits=n_splits, seed=seed,
                                       model="strategy", subtask="subtask", pool="run")
                .assign(ranking=f"re-cinq prompt lab: {lab['strategy'].nunique()} strategies", among="strategies"))

    # jderbysh: system = model x job, one draw per race x sex group among its résumés; qualified = matched résumé
    jd_all = frames["jderbysh"]
    _require(jd_all, ["model", "job", "group", "qualified", "score", "valid"], "the jderbysh table")
    jd = jd_all[jd_all["valid"].astype(bool)]
    counts.append(_counts_row("jderbysh", jd_all, jd, ["model", "job"], ["resume"]))
    qualified = jd["qualified"].astype(bool)
    jd_balance = {str(m): (int(q.sum()), int((~q).sum())) for m, q in qualified.groupby(jd["model"], sort=True)}
    jd_ks = _ks(int(jd["group"].nunique()), k_max)
    for gap in metrics.STUDY_GAPS:
        t, p = _controls("jderbysh", jd, gap=gap, reference=references["jderbysh"], k=jd_ks, design="draws",
                         system=["model", "job"], pool="resume", qualified="qualified", **control)
        tables.append(t)
        points.append(p)
    tie = reference_tie_share(jd, reference=references["jderbysh"], by=["model", "job"])
    ties.append({"data set": DATASET_LABELS["jderbysh"],
                 "reference pairs tied": float(tie["tied"].sum() / tie["pairs"].sum())})
    shapes.append(_shapes("jderbysh", jd, "model"))

    table = pd.concat(tables, ignore_index=True)
    all_points = pd.concat(points, ignore_index=True)
    ndcg_table = pd.concat(ndcg, ignore_index=True)
    counts_table = pd.DataFrame(counts)
    scalars, phrases = _scalars_and_phrases(table, rates, ll, ties, ndcg_table, counts_table, lip_all, lip, rc_all,
                                            references)
    phrases["jderbysh_qualified_balance"] = qualified_balance_phrase(jd_balance)
    return RealScoreFindings(
        counts=counts_table, validity=table, points=all_points, lippens_rates=rates, lippens_ll144=ll,
        ties=pd.DataFrame(ties), ndcg=ndcg_table, shapes=pd.concat(shapes, ignore_index=True), values=scalars,
        phrases=phrases,
        parameters={"k_max": k_max, "n_perm": n_perm, "n_splits": n_splits, "n_boot": n_boot,
                    "n_boot_heldout": n_boot_heldout, "seed": seed,
                    "metrics": list(metric_names)})


def _scalars_and_phrases(table: pd.DataFrame, rates: pd.DataFrame, ll: pd.DataFrame, ties: list[dict],
                         ndcg: pd.DataFrame,
                         counts: pd.DataFrame, lip_all: pd.DataFrame, lip: pd.DataFrame, rc_all: pd.DataFrame,
                         references: Mapping[str, Hashable]) -> tuple[dict[str, Any], dict[str, str]]:
    ref = references["lippens"]
    at_1 = rates[(rates["k"] == 1) & (rates["group"] != ref)]
    near_08 = at_1.loc[(at_1["impact_ratio"] - 0.8).abs().idxmin()]
    near_1 = at_1.loc[(at_1["ir_high"] - 1.0).abs().idxmin()]
    low = at_1.loc[at_1["impact_ratio"].idxmin()]
    scalars: dict[str, Any] = {
        "lippens_n_scores": int(len(lip_all)),
        "lippens_n_pools": int(lip["vacancy_id"].nunique()),
        "lippens_n_job_types": int(lip["job_type"].nunique()),
        # the size the controls' split-half reliability is measured at: half of each job type's vacancies
        "lippens_vacancies_per_half": int(lip.groupby("job_type")["vacancy_id"].nunique().min() // 2),
        "lippens_n_groups": int(lip["group"].nunique()),
        "lippens_n_other_groups": int(lip["group"].nunique() - 1),
        "lippens_n_flagged": int(len(lip_all) - len(lip)),
        "lippens_n_longer_answer": int((~lip["bare_output"].astype(bool) & ~lip["recoded"].astype(bool)).sum()),
        "lippens_n_recoded": int(lip["recoded"].astype(bool).sum()),
        "lippens_min_ir_k1": float(low["impact_ratio"]),
        "lippens_min_ir_k1_group": str(low["group"]),
        "lippens_min_ir_k1_low": float(low["ir_low"]),
        "lippens_min_ir_k1_high": float(low["ir_high"]),
        "lippens_n_ir_below_08_k1": int((at_1["impact_ratio"] < 0.8).sum()),
        "lippens_n_ir_ci_below_1_k1": int((at_1["ir_high"] < 1.0).sum()),
        # the values that decide the two counts above, shown with the digits that decide them
        "lippens_ir_nearest_08_k1": float(near_08["impact_ratio"]),
        "lippens_ir_nearest_08_k1_group": str(near_08["group"]),
        "lippens_ir_high_nearest_1_k1": float(near_1["ir_high"]),
        "lippens_ir_high_nearest_1_k1_group": str(near_1["group"]),
        "lippens_tie_ref_share": float(ties[0]["reference pairs tied"]),
        "lippens_ll144_n_flagged": int(ll.loc[ll["category"] == "origin × sex", "four_fifths"].sum()),
        "lippens_ll144_comparator": str(ll.loc[(ll["category"] == "origin × sex") & ll["comparator"],
                                                "group"].iloc[0]),
        "lippens_boundary_tie_k1": float(ties[0]["boundary tied at k = 1"]),
        "recinq_n_models": int(rc_all["model"].nunique()),
        "recinq_n_results": int(len(rc_all)),
        "recinq_n_flagged": int((~rc_all["valid"].astype(bool)).sum()),
        "recinq_n_jobs": int(rc_all["job"].nunique()),
        "recinq_tie_ref_share": float(ties[1]["reference pairs tied"]),
        "jderbysh_tie_ref_share": float(ties[2]["reference pairs tied"]),
    }
    for dataset, prefix in (("lippens", "lippens"), ("recinq", "recinq"), ("recinq_placebo", "placebo"),
                            ("jderbysh", "jderbysh")):
        for metric, short in (("rabbi", "rabbi"), ("avg_gap", "delta"), ("jsd", "jsd"), ("emd", "emd")):
            if metric not in set(table["metric"]):
                continue
            row = _row(table, dataset, metric, 1)
            scalars[f"{prefix}_r_{short}_k1"] = float(row["r"])
            scalars[f"{prefix}_null_r_{short}_k1"] = float(row["null_mean"])
            scalars[f"{prefix}_null_hi_{short}_k1"] = float(row["null_hi"])
            scalars[f"{prefix}_heldout_r_{short}_k1"] = float(row["heldout_mean"])
            scalars[f"{prefix}_heldout_ci_lo_{short}_k1"] = float(row["heldout_ci_lo"])
            scalars[f"{prefix}_heldout_ci_hi_{short}_k1"] = float(row["heldout_ci_hi"])
            scalars[f"{prefix}_heldout_null_hi_{short}_k1"] = float(row["heldout_null_hi"])
            scalars[f"{prefix}_ceiling_{short}_k1"] = float(row["ceiling"])
        row = _row(table, dataset, table["metric"].iloc[0], 1)
        scalars[f"{prefix}_gap_reliability_k1"] = float(row["reliability"])
        scalars[f"{prefix}_gap_reliability_word_k1"] = validity.reliability_word(float(row["reliability"]))
        if "rabbi" in set(table["metric"]):
            rabbi = _row(table, dataset, "rabbi", 1)
            scalars[f"{prefix}_rabbi_verdict_short_k1"] = str(validity.verdict_words(rabbi, gap=_gap_label(rabbi))["short"])
        scalars[f"{prefix}_n_points_k1"] = int(row["n_points"])
    # the quota of exercise 3 (its solution computes the impact ratios there)
    scalars["ex_rates_k"] = int(rates["k"].max())
    eo = _row(table, "jderbysh", table["metric"].iloc[0], 1, gap="dEO")
    scalars["jderbysh_eo_r_k1"] = float(eo["r"])
    scalars["jderbysh_eo_heldout_r_k1"] = float(eo["heldout_mean"])
    scalars["jderbysh_eo_reliability_k1"] = float(eo["reliability"])
    jd = counts[counts["data set"] == DATASET_LABELS["jderbysh"]].iloc[0]
    scalars["jderbysh_n_scores"] = int(jd["rows"])
    scalars["jderbysh_n_flagged"] = int(jd["flagged"])
    first_metric = "rabbi" if "rabbi" in set(ndcg["metric"]) else str(ndcg["metric"].iloc[0])
    rows_n1: dict[str, pd.Series] = {}
    for among, prefix in (("models", "ndcg_models"), ("placebo", "ndcg_placebo"), ("strategies", "ndcg_lab")):
        one = ndcg[(ndcg["among"] == among) & (ndcg["k"] == 1) & (ndcg["n"] == 1) & (ndcg["metric"] == first_metric)]
        if len(one) != 1:
            raise ValueError(f"expected one NDCG row for the {among} at k = 1, n = 1; found {len(one)}")
        row = one.iloc[0]
        scalars[f"{prefix}_n1"] = float(row["ndcg"])
        scalars[f"{prefix}_null_n1"] = float(row["null_mean"])
        scalars[f"{prefix}_heldout_n1"] = float(row["heldout_mean"])
        scalars[f"{prefix}_random_n1"] = float(row["random_ndcg"])
        scalars[f"{prefix}_random_hi_n1"] = float(row["random_hi"])
        scalars[f"{prefix}_gap_heldout_n1"] = float(row["gap_heldout_mean"])
        scalars[f"{prefix}_n_systems"] = int(row["n_models"])
        rows_n1[prefix] = row

    main = table[(table["gap"] == "dDP") & (table["data set"] != DATASET_LABELS["recinq_placebo"])]
    lip_k1 = table[(table["data set"] == DATASET_LABELS["lippens"]) & (table["k"] == 1)]
    phrases: dict[str, str] = {
        "lippens_rabbi_verdict_k1": control_verdict(_row(table, "lippens", first_metric, 1)),
        "lippens_rabbi_null_word_k1": {"above": "above", "inside": "within", "below": "below"}[
            validity.control_words(_row(table, "lippens", first_metric, 1))["null"]],
        "survival_all": verdict_count_phrase(verdict_counts(main), what="correlations (data set × metric × k)"),
        "closest_verdict_all": closest_verdict_phrase(main),
        "closest_testable_all": closest_testable_phrase(main),
        "survival_k1": verdict_count_phrase(verdict_counts(main[main["k"] == 1]), what="correlations at k = 1"),
        "choice_k1": choice_phrase(main[main["k"] == 1]),
        "ndcg_models_phrase": ndcg_phrase(rows_n1["ndcg_models"],
                                          what=f"the {scalars['ndcg_models_n_systems']} models"),
        "ndcg_placebo_phrase": ndcg_phrase(rows_n1["ndcg_placebo"],
                                           what=f"the {scalars['ndcg_placebo_n_systems']} models"),
        "ndcg_lab_phrase": ndcg_phrase(rows_n1["ndcg_lab"],
                                       what=f"the {scalars['ndcg_lab_n_systems']} prompting strategies"),
    }
    if {"rabbi", "avg_gap"} <= set(lip_k1["metric"]):
        phrases["lippens_lead_k1"] = lead_phrase(lip_k1)
    names, placebo = _row(table, "recinq", first_metric, 1), _row(table, "recinq_placebo", first_metric, 1)
    phrases["placebo_floor"] = floor_phrase(names, placebo, metric=first_metric)
    return scalars, phrases


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
#: The three columns of :func:`figure_controls`: the columns of the controls table and how the figure names them.
CONTROL_LABELS: Mapping[str, str] = {"r": "in-sample r", "null_mean": "shuffled labels (null mean)",
                                     "heldout_mean": "held-out r"}


def _metric_colours() -> dict[str, Any]:
    """The book's colour of each metric, keyed by its display label (:data:`allocbias.plotting.METRIC_LABELS`)."""
    from ..plotting import METRIC_LABELS, metric_palette

    return {METRIC_LABELS[m]: c for m, c in metric_palette(list(METRICS)).items()}


def figure_controls(findings: RealScoreFindings) -> Any:
    """Each metric's correlation with ΔDP across k, one row per data set: the in-sample Pearson r, the mean r with
    the group labels shuffled within pools (the permutation null) and the held-out r, with the gap's split-half
    reliability's square root (black, dashed: the ceiling on the held-out r) and each metric's held-out permutation
    null (its 97.5th percentile, dotted in the metric's colour: the bar the verdict asks the held-out r's interval to
    clear) beside the held-out r. Metrics differ
    by marker and line style as well as colour. Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from ..plotting import METRIC_LABELS, label_axes

    table = findings.validity
    _require(table, ["data set", "gap", "metric", "k", *CONTROL_LABELS, "ceiling", "heldout_null_hi"],
             "findings.validity")
    ddp = table[table["gap"] == "dDP"]
    long = ddp.melt(id_vars=["data set", "metric", "k"], value_vars=list(CONTROL_LABELS), var_name="control",
                    value_name="correlation")
    long["control"] = long["control"].map(CONTROL_LABELS)
    long["metric"] = long["metric"].map(METRIC_LABELS)
    first = "rabbi" if "rabbi" in set(ddp["metric"]) else str(ddp["metric"].iloc[0])
    rel = ddp[ddp["metric"] == first]
    datasets = list(dict.fromkeys(long["data set"]))
    controls = list(CONTROL_LABELS.values())
    fig, axes = plt.subplots(len(datasets), 3, figsize=(11, 2.7 * len(datasets)), sharey=True, squeeze=False)
    for i, dataset in enumerate(datasets):
        for j, control in enumerate(controls):
            ax = axes[i, j]
            part = long[(long["data set"] == dataset) & (long["control"] == control)]
            sns.lineplot(part, x="k", y="correlation", hue="metric", style="metric", markers=True, dashes=False,
                         palette=_metric_colours(), ax=ax, legend=i == 0 and j == 0)
            ax.axhline(0, color="0.5", lw=0.8)
            if control == CONTROL_LABELS["heldout_mean"]:
                own = rel[rel["data set"] == dataset]
                ax.plot(own["k"], own["ceiling"], color="black", ls="--", lw=1.2)
                # each metric's held-out permutation null (its 97.5th percentile, dotted, in the metric's colour):
                # the verdict's bar, which a held-out r under the ceiling may still not clear
                for metric, rows in ddp[ddp["data set"] == dataset].groupby("metric", sort=False):
                    ax.plot(rows["k"], rows["heldout_null_hi"], color=_metric_colours()[METRIC_LABELS[metric]],
                            ls=":", lw=1.4)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            label_axes(ax, title=f"{dataset}\n{control}", x="k (seats per pool)" if i == len(datasets) - 1 else "",
                       y="Pearson r with ΔDP" if j == 0 else "")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].get_legend().remove()
    fig.suptitle("Each metric's correlation with the selection-rate gap, with and without its controls")
    fig.tight_layout()
    fig.legend([*handles, Line2D([], [], color="black", ls="--"), Line2D([], [], color="0.3", ls=":", lw=1.4)],
               [*labels, "ceiling: √(gap's split-half reliability)",
                "held-out null, 97.5% (dotted)"],
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False, fontsize=13)
    return fig


def figure_lippens_points(findings: RealScoreFindings, *, metrics: Sequence[str] = ("rabbi", "avg_gap")) -> Any:
    """The Lippens (job type, group) points at k = 1: each metric (RABBI, δ in score points) against the group's
    top-1 selection-rate gap ΔDP to native Belgian men, one panel per metric. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..plotting import METRIC_LABELS, label_axes

    points = findings.points
    _require(points, ["data set", "k", "dDP", *metrics], "findings.points")
    pts = points[(points["data set"] == DATASET_LABELS["lippens"]) & (points["k"] == 1)]
    if pts.empty:
        raise ValueError("findings.points holds no Lippens point at k = 1")
    colours = _metric_colours()
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.5 * len(metrics), 3.8), sharey=True, squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        sns.scatterplot(pts, x=metric, y="dDP", s=12, alpha=0.5, color=colours[METRIC_LABELS[metric]], ax=ax)
        ax.axhline(0, color="0.5", lw=0.8)
        ax.axvline(0, color="0.5", lw=0.8)
        unit = " (score points)" if metric == "avg_gap" else ""
        label_axes(ax, title=f"{METRIC_LABELS[metric]} against ΔDP at k = 1", x=METRIC_LABELS[metric] + unit,
                   y="ΔDP (top-1 rate\nminus native men's)")
    fig.tight_layout()
    return fig


def figure_lippens_rates(findings: RealScoreFindings) -> Any:
    """Pooled top-k selection rate of every Lippens group (k = 1 and 2) with its 95% bootstrap interval over
    vacancies, groups ordered by their rate at k = 1, and for each k the rate at which a group's impact ratio is
    0.8 (four fifths of the reference group's rate). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from ..plotting import label_axes

    rates = findings.lippens_rates
    _require(rates, ["k", "group", "rate", "rate_low", "rate_high"], "findings.lippens_rates")
    rates = rates.sort_values(["k", "rate"])
    order = rates[rates["k"] == rates["k"].min()]["group"].tolist()
    fig, ax = plt.subplots(figsize=(8, 6))
    ks = sorted(set(rates["k"]))
    for i, k in enumerate(ks):
        part = rates[rates["k"] == k].set_index("group").loc[order]
        offset = (i - (len(ks) - 1) / 2) * 0.3
        y = [n + offset for n in range(len(order))]
        colour = ("tab:blue", "tab:orange", "tab:green")[i % 3]
        ax.errorbar(part["rate"], y, xerr=[part["rate"] - part["rate_low"], part["rate_high"] - part["rate"]],
                    fmt=("o", "s", "^")[i % 3], ms=5, color=colour, label=f"k = {k}")
        if "impact_ratio" in part:
            # the four-fifths rule in rate terms: 0.8 times the reference group's rate (impact ratio 1)
            reference = part.loc[(part["impact_ratio"] - 1.0).abs() < 1e-12, "rate"]
            if len(reference):
                ax.axvline(0.8 * float(reference.iloc[0]), color=colour, ls=(":", "--", "-.")[i % 3], lw=1.2,
                           label=f"impact ratio 0.8 at k = {k}")
    ax.set_yticks(range(len(order)), order)
    ax.legend(title=None, loc="lower right", fontsize=11)
    n_pools = findings.values.get("lippens_n_pools")
    where = f" over {n_pools:,} vacancies" if n_pools is not None else ""
    label_axes(ax, title=f"Top-k selection rate per group{where} (95% intervals)",
               x="selection rate (share of the group's candidates selected)", y="origin and sex")
    fig.tight_layout()
    return fig


def figure_ndcg(findings: RealScoreFindings) -> Any:
    """NDCG@N at k = 1 of each metric's ranking of systems against the ranking by ΔDP, one panel per ranking (re-cinq's
    models, its placebo edits, its prompting strategies): in-sample (solid) and held out (dashed), beside a random
    ordering (grey band: its mean to its 97.5th percentile) and the held-out NDCG of ΔDP's own ranking (black), the
    most a metric's ranking can be expected to reach. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    from ..plotting import METRIC_LABELS, label_axes

    ndcg = findings.ndcg
    _require(ndcg, ["ranking", "metric", "k", "n", "ndcg", "heldout_mean", "random_ndcg", "random_hi",
                    "gap_heldout_mean"], "findings.ndcg")
    at_1 = ndcg[ndcg["k"] == 1]
    nd = at_1.melt(id_vars=["ranking", "metric", "n"], value_vars=["ndcg", "heldout_mean"], var_name="control",
                   value_name="NDCG")
    nd["control"] = nd["control"].map({"ndcg": "in-sample", "heldout_mean": "held out"})
    nd["metric"] = nd["metric"].map(METRIC_LABELS)
    base = at_1[at_1["metric"] == ndcg["metric"].iloc[0]]
    rankings = list(dict.fromkeys(nd["ranking"]))
    fig, axes = plt.subplots(1, len(rankings), figsize=(11, 4.2), sharey=True, squeeze=False)
    for j, ranking in enumerate(rankings):
        ax = axes[0, j]
        part = base[base["ranking"] == ranking]
        ax.fill_between(part["n"], part["random_ndcg"], part["random_hi"], color="0.85", zorder=0)
        ax.plot(part["n"], part["gap_heldout_mean"], color="black", lw=1.2)
        sns.lineplot(nd[nd["ranking"] == ranking], x="n", y="NDCG", hue="metric", style="control",
                     palette=_metric_colours(), marker="o", ax=ax, legend=j == 0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        label_axes(ax, title=ranking, x="N (top places compared)",
                   y="NDCG@N against\nthe ranking by ΔDP" if j == 0 else "")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].get_legend().remove()
    keep = [i for i, label in enumerate(labels) if label not in ("metric", "control")]  # drop the section headers
    handles, labels = [handles[i] for i in keep], [labels[i] for i in keep]
    fig.suptitle("Ranking systems by a bias metric, at k = 1")
    fig.tight_layout()
    fig.legend([*handles, Line2D([], [], color="black"), Patch(color="0.85")],
               [*labels, "ΔDP's own ranking, held out", "random ordering: mean to 97.5th percentile"],
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, frameon=False)
    return fig


def figure_shapes(findings: RealScoreFindings) -> Any:
    """Skewness against excess kurtosis of each group's scores in each system, coloured by data set (groups whose
    scores are constant, without a shape, left out). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..plotting import label_axes

    _require(findings.shapes, ["data set", "skewness", "excess_kurtosis"], "findings.shapes")
    shapes = findings.shapes.dropna(subset=["skewness", "excess_kurtosis"])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sns.scatterplot(shapes, x="skewness", y="excess_kurtosis", hue="data set", s=14, alpha=0.6, ax=ax)
    ax.legend(title=None)
    label_axes(ax, title="Shape of each group's score distribution per system", x="skewness", y="excess kurtosis")
    fig.tight_layout()
    return fig
