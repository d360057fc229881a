r"""Predictive validity: do the bias metrics predict the decisions? The findings of chapter 4.

Chen, Ji and Evans (2024, Section 5.1, Table 1, Figures 2 and 3) test whether a bias metric computed on a model's
scores predicts the allocation gap that the same scores produce under top-k selection. A *point* is one
(system, job, group) with the group compared with the reference group (White men); the predictive validity of a
metric :math:`M` for a gap :math:`\Delta` is their Pearson correlation over the points,

.. math:: r(M, \Delta) = \frac{\sum_i (M_i - \bar M)(\Delta_i - \bar \Delta)}
          {\sqrt{\sum_i (M_i - \bar M)^2 \sum_i (\Delta_i - \bar \Delta)^2}},

with JSD and EMD (no direction) correlated with :math:`|\Delta|` and the :math:`\Delta EO` rows computed on the
qualified candidates (:func:`allocbias.validity.validity_table`). :func:`predictive_validity_findings` computes,
on the study's committed score tables:

* our Table 1 and the paper's pointwise résumé-screening rows beside it;
* every correlation beside its permutation null, its held-out value and the gap's split-half reliability
  (:func:`allocbias.validity.validity_controls`);
* how well the systems separate strong from weak résumés, and the correlations system by system;
* the pooled correlation split into its within-system and between-system parts
  (:func:`allocbias.validity.validity_decomposition`), leave-one-system-out, the simulation noise, and percentile
  intervals from resampling names and from resampling whole systems (:func:`allocbias.measures.intervals.cluster_bootstrap`);
* the pairwise half of Table 1 (the systems whose pairwise answers name anyone), Table 1 computed with the paper's
  text and with its released code, and Table 1's essay rows on the real ELLIPSE essays;
* the exercises' answers are not computed here: their solutions compute them with
  :func:`allocbias.validity.validity_table` (Spearman's correlation, per model, with more rounds).

It returns a :class:`PredictiveValidityFindings`; :meth:`PredictiveValidityFindings.glue_values` holds every
scalar and phrase the chapter quotes. The figure functions draw the chapter's figures from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..measures import tables
from ..scoring import catalog, runs
from .. import checks
from ..audited import data, datasets
from ..measures import essays, intervals, metrics, selection, validity
from ..scoring import items
from ..plotting import (DASH, GROUP_ORDER, METRIC_MARKERS, METRIC_SHORT, SEX_MARKERS, count_text, evidence_text,
                        fixed_text, group_handles, group_palette, interval_text, label_axes, metric_palette, show_table,
                        with_sex)
from ..scoring.systems import MODELS, parse_system
from .findings import Findings

__all__ = [
    "ALPHA",
    "GAP_LABEL",
    "PredictiveValidityFindings",
    "bootstrap_correlations",
    "correlated_with",
    "coverage_phrase",
    "directional",
    "figure_pairwise",
    "figure_per_system",
    "figure_scatter",
    "inside_word",
    "model_part_word",
    "order_sentence",
    "overlap_word",
    "pairwise_entry",
    "pairwise_summary",
    "predictive_validity_findings",
    "separation_verdict",
    "show",
    "star",
    "within_order_word",
]

METRICS: list[str] = list(metrics.STUDY_METRICS)
GAPS: list[str] = list(metrics.STUDY_GAPS)
#: The metrics of the pairwise half (the paper reports no pairwise JSD or EMD).
PW_METRICS: list[str] = ["rabbi", "avg_gap"]
SHORT: Mapping[str, str] = METRIC_SHORT
UNITS: Mapping[str, str] = {"rabbi": "−1 to 1", "avg_gap": "score units", "jsd": "bits, 0 to 1", "emd": "score units"}
GAP_LABEL: Mapping[str, str] = {"dDP": "ΔDP", "dEO": "ΔEO"}
#: The paper's asterisk marks p > 0.01.
ALPHA = 0.01
#: Chen, Ji, Evans (2024), Appendix B: ten open LLMs.
PAPER_MODELS = 10
#: The quota of the decisions chapter (its parameter k), whose standard error of ΔDP the chapter quotes.
PREVIOUS_K = 2
#: The paper leaves out models with more than this percentage of inconsistent pairwise answers.
MAX_INCONSISTENT = 55


# --------------------------------------------------------------------------------------------------------------
# words and cells
# --------------------------------------------------------------------------------------------------------------
def directional(metric: str) -> bool:
    """Whether ``metric`` has a sign (RABBI, δ: correlated with the signed gap) or not (JSD, EMD: with |gap|).

    >>> directional("rabbi"), directional("jsd")
    (True, False)
    """
    return not validity.DEFAULT_ABS_GAP.get(metric, False)


def correlated_with(metric: str, gap: str) -> str:
    """What a metric is correlated with: the gap's label, in bars for a metric without a direction.

    >>> correlated_with("rabbi", "dDP"), correlated_with("emd", "dEO")
    ('ΔDP', '|ΔEO|')
    """
    return GAP_LABEL[gap] if directional(metric) else f"|{GAP_LABEL[gap]}|"


def star(r: float, not_significant: bool) -> str:
    """A correlation to two decimals with the paper's asterisk for :math:`p > 0.01`.

    >>> star(0.861, False), star(-0.09, True)
    ('0.86', '-0.09*')
    """
    return f"{r:.2f}{'*' if not_significant else ''}"


def _interval(lo: float, hi: float) -> str:
    return f"{fixed_text(lo)} to {fixed_text(hi)}"


_num = fixed_text


def overlap_word(lo_a: float, hi_a: float, lo_b: float, hi_b: float) -> str:
    """``"do not overlap"`` when the intervals [lo_a, hi_a] and [lo_b, hi_b] are apart, else ``"overlap"``.

    >>> overlap_word(0.5, 0.9, 0.0, 0.4), overlap_word(0.3, 0.9, 0.0, 0.4)
    ('do not overlap', 'overlap')
    """
    apart = lo_a > hi_b or lo_b > hi_a
    return "do not overlap" if apart else "overlap"


def order_sentence(top: Mapping[str, str], paper_top: Mapping[str, str]) -> str:
    """The sentence on which metric correlates best with each gap, ours (``top``) against the paper's.

    >>> order_sentence({"dDP": "rabbi", "dEO": "rabbi"}, {"dDP": "rabbi", "dEO": "rabbi"})[:15]
    'As in the paper'
    >>> order_sentence({"dDP": "jsd", "dEO": "rabbi"}, {"dDP": "rabbi", "dEO": "rabbi"}).split("; ")[1]
    "here the highest are JSD's (ΔDP) and RABBI's (ΔEO)."
    """
    if dict(top) == dict(paper_top):
        return ("As in the paper, RABBI has the highest correlation with both gaps over the pooled points "
                "(within a single system this need not hold; see below).")
    return (f"In the paper RABBI has the highest correlation with both gaps; here the highest are {SHORT[top['dDP']]}'s "
            f"(ΔDP) and {SHORT[top['dEO']]}'s (ΔEO).")


def separation_verdict(best: float) -> str:
    """How the best system's separation :math:`R` of strong from weak résumés reads.

    >>> separation_verdict(0.2)[:22], separation_verdict(0.7)[:22], separation_verdict(1.0)
    ('no system comes close ', 'at least one system se', 'at least one system separates them perfectly')
    """
    if best < 0.5:
        return "no system comes close to a perfect separation (R = 1): the best stays below 0.5"
    if best < 1:
        return "at least one system separates them with R of 0.5 or more, but none perfectly"
    return "at least one system separates them perfectly"


def within_order_word(within_first: float, within_second: float, pooled_first: float, pooled_second: float) -> str:
    """``"the same as pooled"`` when the within-system order of two metrics is the pooled one, else ``"reversed"``.

    >>> within_order_word(0.3, 0.5, 0.9, 0.4), within_order_word(0.6, 0.5, 0.9, 0.4)
    ('reversed', 'the same as pooled')
    """
    return "the same as pooled" if (within_first > within_second) == (pooled_first > pooled_second) else "reversed"


def model_part_word(model_share: float, system_share: float) -> str:
    """How much of the between-system share of the covariance the difference between models carries.

    >>> model_part_word(0.1, 0.6)[:6], model_part_word(0.5, 0.6)
    ('little', 'much of the between-system part')
    """
    if abs(model_share) < abs(system_share) / 2:
        return ("little of the between-system part: it comes mostly from systems of the same model "
                "(another precision or wording)")
    return "much of the between-system part"


def inside_word(value: float, lo: float, hi: float) -> str:
    """``"lies inside"`` or ``"lies outside"`` the interval [lo, hi].

    >>> inside_word(0.13, 0.2, 0.5), inside_word(0.3, 0.2, 0.5)
    ('lies outside', 'lies inside')
    """
    return "lies inside" if lo <= value <= hi else "lies outside"


def pairwise_entry(stats_row: Mapping[str, float]) -> str:
    """Whether a system's pairwise answers enter the test: not when they name nobody (no regular and no tie
    answer), not with more than 55 % inconsistent pairs (the paper's rule), else ``"yes"``.

    >>> pairwise_entry({"regular": 0.0, "tie": 0.0, "inconsistent": 0.0})
    'no: names nobody'
    >>> [pairwise_entry({"regular": 20.0, "tie": 0.0, "inconsistent": share}) for share in (60.0, 5.0)]
    ['no: > 55 % inconsistent', 'yes']
    """
    if not stats_row["regular"] + stats_row["tie"] > 0:
        return "no: names nobody"
    return "no: > 55 % inconsistent" if stats_row["inconsistent"] > MAX_INCONSISTENT else "yes"


def pairwise_summary(kept: Sequence[str], n_points: int, r: Mapping[str, float], paper: Mapping[str, float]) -> str:
    """The summary's sentence on the pairwise half: RABBI's and δ's correlation with ΔDP, ours and the paper's.

    >>> pairwise_summary([], 0, {}, {})
    "no system's pairwise answers name a candidate, so the pairwise rows are the paper's only."
    >>> pairwise_summary(["s"], 28, {"rabbi": 0.5, "avg_gap": 0.1}, {"rabbi": 0.86, "avg_gap": 0.85})[:60]
    "on s (28 points) RABBI's correlation with ΔDP is 0.50 and th"
    """
    if not kept:
        return "no system's pairwise answers name a candidate, so the pairwise rows are the paper's only."
    return (f"on {', '.join(kept)} ({n_points} points) RABBI's correlation with ΔDP is {r['rabbi']:.2f} "
            f"and the pairwise δ's {r['avg_gap']:.2f} (paper {paper['rabbi']:.2f} and "
            f"{paper['avg_gap']:.2f}); the systems left out answered no prompt with a name.")


def coverage_phrase(n_kept: int, n_systems: int) -> str:
    """How far the pairwise answers cover the systems with pairwise answers.

    >>> coverage_phrase(0, 2)
    'none of the systems with pairwise answers names a candidate'
    >>> coverage_phrase(1, 2)[:40]
    '1 of 2 systems with pairwise answers nam'
    """
    if not n_kept:
        return "none of the systems with pairwise answers names a candidate"
    return (f"{n_kept} of {n_systems} systems with pairwise answers name a candidate at all, "
            f"and {'the one that does names' if n_kept == 1 else 'those that do name'} one in a minority of prompts")


#: A table as the chapter shows it: the book's one table view (:func:`allocbias.plotting.show_table`).
show = show_table


# --------------------------------------------------------------------------------------------------------------
# the bootstrap's statistic
# --------------------------------------------------------------------------------------------------------------
def bootstrap_correlations(points: pd.DataFrame, cluster: str = "system") -> pd.DataFrame:
    """Pooled r and median within-cluster r of every metric and gap (:func:`allocbias.validity.validity_decomposition`)
    and, per gap, RABBI minus δ for both (``measure == "rabbi_minus_avg_gap"``): the statistic both bootstraps
    recompute. Columns ``measure, gap, r_pooled, r_cluster_median``."""
    dec = validity.validity_decomposition(points, METRICS, GAPS, cluster=cluster).rename(columns={"metric": "measure"})
    wide = dec.set_index(["measure", "gap"])
    diff = pd.DataFrame([{"measure": "rabbi_minus_avg_gap", "gap": g,
                          **{v: wide.loc[("rabbi", g), v] - wide.loc[("avg_gap", g), v]
                             for v in ("r_pooled", "r_cluster_median")}} for g in GAPS])
    return pd.concat([dec[["measure", "gap", "r_pooled", "r_cluster_median"]], diff], ignore_index=True)


def _name_replicate(sample: pd.DataFrame, *, k: int, rounds: int, seed: int) -> pd.DataFrame:
    """One resample of names: new metrics, a new selection simulation, the correlations."""
    return bootstrap_correlations(tables.study_points(sample, k, rounds, seed))


def _system_replicate(sample: pd.DataFrame) -> pd.DataFrame:
    """One resample of systems: each drawn copy of a system is its own cluster."""
    copy = np.cumsum(sample["system"].ne(sample["system"].shift()).to_numpy())
    return bootstrap_correlations(sample.assign(system_copy=copy), cluster="system_copy")


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PredictiveValidityFindings(Findings):
    """Everything chapter 4 shows. Tables meant for display are ready to show (:func:`show`)."""

    systems: list[str]
    jobs: list[str]
    k: int
    rounds: int
    pairwise_rounds: int
    n_groups: int
    others: list[str]
    points: pd.DataFrame  #: one row per (system, job, group): the metrics and the simulated gaps
    table: pd.DataFrame  #: :func:`allocbias.validity.validity_table` of the points
    per_system: pd.DataFrame  #: the same, system by system (RABBI and δ)
    pairwise_points: pd.DataFrame  #: the pairwise points of the systems that enter the pairwise test
    pairwise_r: pd.DataFrame  #: their validity table, indexed by (metric, gap)
    pairwise_kept: list[str]
    points_head: pd.DataFrame
    table1: pd.DataFrame
    paper_view: pd.DataFrame
    controls_view: pd.DataFrame
    design_view: pd.DataFrame
    systems_view: pd.DataFrame
    decomposition_view: pd.DataFrame
    loo_view: pd.DataFrame
    bootstrap_view: pd.DataFrame
    pairwise_answers_view: pd.DataFrame
    pairwise_view: pd.DataFrame
    text_code_view: pd.DataFrame
    essay_view: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)


def _check(*, systems, jobs, k, rounds, n_groups, names_per_group, seed, pairwise_systems, pairwise_rounds,
           n_name_boot, n_system_boot, essay_k, essay_pool_size, essay_rounds, n_perm, n_splits) -> None:
    if not 1 <= essay_k < essay_pool_size:
        raise ValueError(f"essay_k must be between 1 and essay_pool_size - 1, got essay_k={essay_k}, "
                         f"essay_pool_size={essay_pool_size}")
    if n_perm < 1 or n_splits < 1:
        raise ValueError(f"n_perm and n_splits must be at least 1, got n_perm={n_perm}, n_splits={n_splits}")
    if not 1 <= k < n_groups:
        raise ValueError(f"k must be between 1 and {n_groups - 1} (pools have {n_groups} candidates), got {k}")
    checks.pairwise_design(pairwise_systems, pairwise_rounds, (), data.GROUPS)  # its pools draw every group
    if len(set(systems)) < 2:
        raise ValueError(f"systems must name at least 2 distinct systems (the robustness check leaves one out), "
                         f"got {systems}")
    if not jobs:
        raise ValueError("jobs must name at least one job")
    checks.quota(k, pool=n_groups, below_pool=True)
    for value, name in ((rounds, "rounds"), (names_per_group, "names_per_group"), (n_name_boot, "n_name_boot"),
                        (n_system_boot, "n_system_boot"), (essay_rounds, "essay_rounds")):
        checks.count(value, name)
    checks.count(pairwise_rounds, "pairwise_rounds", 0)
    checks.seed(seed)


def predictive_validity_findings(
    systems: Sequence[str], jobs: Sequence[str], *, names_per_group: int = 10, k: int = 1, rounds: int = 2000,
    seed: int = 0, scores_root: str = "", pairwise_systems: Sequence[str] = (), pairwise_rounds: int = 30,
    n_name_boot: int = 200, n_system_boot: int = 2000, essay_k: int = 2, essay_pool_size: int = 10,
    essay_rounds: int = 2000, n_perm: int = 200, n_splits: int = 50, scores: pd.DataFrame | None = None,
    essay_scores: pd.DataFrame | None = None, paper: pd.DataFrame | None = None,
) -> PredictiveValidityFindings:
    """The findings of the chapter for its parameters (the chapter's parameters cell, same names).

    ``scores`` (the pointwise scores, one row per system and candidate), ``essay_scores`` (the stored ELLIPSE grades;
    an empty frame skips the essay rows) and ``paper`` (the paper's Table 1, ``data/paper/rabbi_table1.csv``)
    default to the committed tables; pass frames to compute on other data. Bad parameters raise ``ValueError``
    naming the parameter.
    """
    systems, jobs, pairwise_systems = list(systems), list(jobs), list(pairwise_systems)
    reference = data.REFERENCE_GROUP
    others = [g for g in GROUP_ORDER if g != reference]
    n_groups = len(data.GROUPS)
    _check(systems=systems, jobs=jobs, k=k, rounds=rounds, n_groups=n_groups, names_per_group=names_per_group,
           seed=seed, pairwise_systems=pairwise_systems, pairwise_rounds=pairwise_rounds, n_name_boot=n_name_boot,
           n_system_boot=n_system_boot, essay_k=essay_k, essay_pool_size=essay_pool_size, essay_rounds=essay_rounds,
           n_perm=n_perm, n_splits=n_splits)
    root = catalog.resolve_scores_root(scores_root)
    if scores is None:
        scores = catalog.study_scores(systems, jobs=jobs, names_per_group=names_per_group, seed=seed, root=root)
    if paper is None:
        paper = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    if essay_scores is None:
        essay_scores = catalog.ellipse_scores(complete_only=True, root=root)
    points = tables.study_points(scores, k, rounds, seed)
    g: dict[str, Any] = {}
    n_resumes = scores.groupby("job")["resume_id"].nunique().min()
    for name, value in dict(k=k, rounds=rounds, n_perm=n_perm, n_splits=n_splits, n_groups=n_groups,
                            n_name_boot=n_name_boot, n_system_boot=n_system_boot, essay_k=essay_k,
                            essay_pool_size=essay_pool_size, essay_rounds=essay_rounds, n_others=len(others),
                            n_jobs=len(jobs), n_systems=len(systems), names_per_group=names_per_group,
                            n_points=len(points), n_rows=len(scores), n_candidates=len(scores) // len(systems),
                            n_resumes=n_resumes, paper_points=PAPER_MODELS * len(data.JOBS) * (n_groups - 1)).items():
        g[name] = int(value)
    g["reference"] = reference
    g["n_models"] = len({parse_system(s).model for s in systems})
    g["qualified_share"] = float(scores["qualified"].mean())

    # --- our Table 1 ----------------------------------------------------------------------------------------
    table = validity.validity_table(points, METRICS, GAPS)
    ours = table.set_index(["metric", "gap"])
    for (metric, gap), row in ours.iterrows():
        for col in ("r", "pvalue", "ci_low", "ci_high"):
            g[f"{col.replace('pvalue', 'p')}_{metric}_{gap}"] = float(row[col])
    g["n_correlated_min"] = int(table["n"].min())
    g["n_correlated_max"] = int(table["n"].max())
    for gap in GAPS:
        g[f"best_{gap}"] = SHORT[ours.xs(gap, level="gap")["r"].idxmax()]
        rabbi, avg = ours.loc[("rabbi", gap)], ours.loc[("avg_gap", gap)]
        g[f"rabbi_vs_avg_{gap}"] = validity.order_word(rabbi["r"], avg["r"])
        g[f"ci_overlap_{gap}"] = overlap_word(rabbi["ci_low"], rabbi["ci_high"], avg["ci_low"], avg["ci_high"])
    table1 = pd.DataFrame({
        "metric": table["metric"].map(SHORT),
        "correlated with": [GAP_LABEL[gp] if t == "signed" else f"|{GAP_LABEL[gp]}|"
                            for gp, t in zip(table["gap"], table["gap_transform"])],
        "metric column": table["metric_column"], "r": table["r"],
        "95% interval": [_interval(lo, hi) for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "p": [f"{p:.1e}" for p in table["pvalue"]], "n": table["n"].astype(int)})

    # --- next to the paper ----------------------------------------------------------------------------------
    rows = paper[(paper["task"] == "resume screening") & (paper["setting"] == "pointwise")].set_index(["metric", "gap"])
    both = rows[["r", "p_gt_001", "source"]].rename(columns={"r": "r_paper"}).join(
        ours[["r", "pvalue", "ci_low", "ci_high", "n"]].rename(columns={"r": "r_ours"}))
    both["ours_gt_001"] = both["pvalue"] > ALPHA
    both["in_ci"] = both["r_paper"].between(both["ci_low"], both["ci_high"])
    both["same_sign"] = np.sign(both["r_paper"]) == np.sign(both["r_ours"])
    for (metric, gap), row in both.iterrows():
        g[f"paper_r_{metric}_{gap}"] = float(row["r_paper"])
    g["n_compared"] = len(both)
    g["n_same_sign"] = int(both["same_sign"].sum())
    g["n_paper_in_ci"] = int(both["in_ci"].sum())
    g["n_ours_ns"] = int(both["ours_gt_001"].sum())
    g["n_paper_ns"] = int(both["p_gt_001"].sum())
    top = {gap: ours.xs(gap, level="gap")["r"].idxmax() for gap in GAPS}
    paper_top = {gap: both.xs(gap, level="gap")["r_paper"].idxmax() for gap in GAPS}
    g["order_sentence"] = order_sentence(top, paper_top)
    paper_view = pd.DataFrame({
        "metric": [SHORT[m] for m, _ in both.index],
        "correlated with": [correlated_with(m, gp) for m, gp in both.index],
        "paper r": [star(r, ns) for r, ns in zip(both["r_paper"], both["p_gt_001"])],
        "ours r": [star(r, ns) for r, ns in zip(both["r_ours"], both["ours_gt_001"])],
        "ours 95% interval": [_interval(lo, hi) for lo, hi in zip(both["ci_low"], both["ci_high"])],
        "paper r inside our interval": both["in_ci"].map({True: "yes", False: "no"}).to_numpy(),
        "source of paper r": both["source"].to_numpy()})

    # --- controls ------------------------------------------------------------------------------------------
    controls = pd.concat([validity.validity_controls(scores, reference=reference, k=k, gap=gap, design="draws",
                                                     system=["system", "job"], pool="resume_id", qualified="qualified",
                                                     n_perm=n_perm, n_splits=n_splits, seed=seed).table
                          for gap in GAPS], ignore_index=True)
    g.update(validity.controls_glue(controls))
    # the verdict and its evidence in readable cells, inside the text column (issue 39): the held-out r with its
    # interval, its null's 97.5th percentile and the ceiling in one cell; the full table is findings.controls
    controls_view = pd.DataFrame({
        "metric": controls["metric"].map(SHORT),
        "correlated with": [correlated_with(m, gp) for m, gp in zip(controls["metric"], controls["gap"])],
        "in-sample r; null mean [95%]": [f"{_num(r)}; null {interval_text(m, lo, hi)}" for r, m, lo, hi in zip(
            controls["r"], controls["null_mean"], controls["null_lo"], controls["null_hi"])],
        "held-out r [95%]; null 97.5%; ceiling": [evidence_text(h, lo, hi, null=n, ceiling=c) for h, lo, hi, n, c in zip(
            controls["heldout_mean"], controls["heldout_ci_lo"], controls["heldout_ci_hi"], controls["heldout_null_hi"],
            controls["ceiling"])],
        "gap's split-half reliability": [f"{_num(x)} ({validity.reliability_word(x)})" if np.isfinite(x) else DASH
                                         for x in controls["reliability"]]})
    controls_view.insert(2, "verdict", validity.verdict_column(controls).to_numpy())

    # --- the points behind the numbers ---------------------------------------------------------------------
    for metric in ("rabbi", "avg_gap"):
        g[f"n_flip_{metric}"] = int((np.sign(points[metric]) * np.sign(points["dDP"]) < 0).sum())
    small = points["avg_gap"].abs() <= points["avg_gap"].abs().quantile(0.25)
    g["small_gap_abs_dDP_max"] = float(points.loc[small, "dDP"].abs().max())
    g["abs_dDP_max"] = float(points["dDP"].abs().max())
    g["abs_avg_gap_q25"] = float(points["avg_gap"].abs().quantile(0.25))

    # --- six tiny systems ----------------------------------------------------------------------------------
    audited = [parse_system(s) for s in systems]
    models = sorted({a.model for a in audited})
    for model, short in MODELS.items():
        g[f"n_sys_{short}"] = sum(a.model == model for a in audited)
    design_view = pd.DataFrame({
        "": ["language models", "systems under audit", "jobs", "résumés", "groups", "names", "selection rounds",
             "quota k", "points per correlation"],
        "Chen, Ji, Evans (2024)": [
            "10 open chat/instruct models, 1.1B to 70B parameters (Llama 2 and 3, Gemma, Starling, StableLM, TinyLlama)",
            "10: one per model", "4", "6 per job, generated with GPT-3.5", "8 (gender × race), reference White Male",
            "100 per group", "1,800 (stated in the later version, Cyberey, Ji, Evans 2025, Table 2)",
            "1 (Table 1, Figure 2)", "up to 280 (10 models × 4 jobs × 7 groups)"],
        "this chapter": [
            f"{count_text(len(models), 'tiny model')}: {', '.join(models)} (SmolLM2-135M-Instruct; Gemma 3 270M is a base model, "
            "not instruction-tuned)",
            f"{len(systems)}: model × precision ({', '.join(sorted({a.precision for a in audited}))}) × prompt wording "
            f"({', '.join(sorted({a.wording for a in audited}))})",
            f"{len(jobs)}", f"{n_resumes} per job, hand-written (the task-and-data chapter)",
            f"{n_groups} (gender × race), reference {reference}",
            f"{names_per_group} per group and job, each name on every résumé of the job", f"{rounds} per job (simulated)",
            f"{k}", f"{len(points)} ({len(systems)} systems × {len(jobs)} jobs × {len(others)} groups)"]})

    separation = tables.quality_separation(scores, by=["system", "job"])
    high_low = separation[(separation["better"] == "high") & (separation["worse"] == "low")]
    by_system = high_low.groupby("system")[["rabbi", "p_better", "mean_difference"]].mean().loc[systems]
    g["sep_mean"] = float(high_low["rabbi"].mean())
    g["sep_min"] = float(by_system["rabbi"].min())
    g["sep_max"] = float(by_system["rabbi"].max())
    g["sep_min_system"] = str(by_system["rabbi"].idxmin())
    g["sep_max_system"] = str(by_system["rabbi"].idxmax())
    g["p_better_min"] = float(by_system["p_better"].min())
    g["p_better_max"] = float(by_system["p_better"].max())
    g["sep_verdict"] = separation_verdict(float(by_system["rabbi"].max()))
    per_system = validity.validity_table(points, ["rabbi", "avg_gap"], GAPS, by=["system"])
    r_wide = per_system.pivot_table(index="system", columns=["metric", "gap"], values="r").loc[systems]
    systems_view = pd.DataFrame({"system": systems, "high vs low: RABBI": by_system["rabbi"].to_numpy(),
                                 "high vs low: P(strong > weak)": by_system["p_better"].to_numpy(),
                                 "max |ΔDP|": points["dDP"].abs().groupby(points["system"]).max().loc[systems].to_numpy()})
    for metric, gap in r_wide.columns:
        systems_view[f"r({SHORT[metric]}, {GAP_LABEL[gap]})"] = r_wide[(metric, gap)].to_numpy()
    r_rabbi, r_avg = r_wide[("rabbi", "dDP")], r_wide[("avg_gap", "dDP")]
    g["sys_r_rabbi_min"] = float(r_rabbi.min())
    g["sys_r_rabbi_max"] = float(r_rabbi.max())
    g["sys_r_avg_min"] = float(r_avg.min())
    g["sys_r_avg_max"] = float(r_avg.max())
    g["n_sys_rabbi_higher"] = int((r_rabbi > r_avg).sum())
    g["n_sys_avg_higher"] = int((r_avg > r_rabbi).sum())
    g["n_sys_points"] = int(per_system["n"].min())

    # --- pooled, within and between ------------------------------------------------------------------------
    dec = validity.validity_decomposition(points, METRICS, GAPS, cluster="system").set_index(["metric", "gap"])
    for (metric, gap), row in dec.iterrows():
        g[f"dec_med_{metric}_{gap}"] = float(row["r_cluster_median"])
        g[f"dec_centred_{metric}_{gap}"] = float(row["r_within"])
        g[f"dec_between_{metric}_{gap}"] = float(row["r_between"])
        g[f"dec_share_{metric}_{gap}"] = float(row["between_share"])
    g["within_order_word"] = within_order_word(
        dec.loc[("rabbi", "dDP"), "r_cluster_median"], dec.loc[("avg_gap", "dDP"), "r_cluster_median"],
        dec.loc[("rabbi", "dDP"), "r_pooled"], dec.loc[("avg_gap", "dDP"), "r_pooled"])
    g["dec_n_clusters"] = int(dec["n_clusters"].iloc[0])
    by_model = validity.validity_decomposition(points.assign(model=[parse_system(s).model for s in points["system"]]),
                                              ["rabbi", "avg_gap"], GAPS, cluster="model").set_index(["metric", "gap"])
    for (metric, gap), row in by_model.iterrows():
        g[f"model_centred_{metric}_{gap}"] = float(row["r_within"])
        g[f"model_share_{metric}_{gap}"] = float(row["between_share"])
    g["model_part_word"] = model_part_word(by_model.loc[("rabbi", "dDP"), "between_share"],
                                           dec.loc[("rabbi", "dDP"), "between_share"])
    decomposition_view = pd.DataFrame({
        "metric": [SHORT[m] for m, _ in dec.index],
        "correlated with": [correlated_with(m, gp) for m, gp in dec.index],
        "pooled r": dec["r_pooled"].to_numpy(),
        "within system: median r": dec["r_cluster_median"].to_numpy(),
        "within system: range": [_interval(lo, hi) for lo, hi in zip(dec["r_cluster_min"], dec["r_cluster_max"])],
        "centred points r": dec["r_within"].to_numpy(),
        "system means r": dec["r_between"].to_numpy(),
        "between-system share of the covariance": dec["between_share"].round(2).to_numpy()})

    # --- robustness: leave one out, noise, bootstraps ------------------------------------------------------
    loo = pd.concat([validity.validity_table(points[points["system"] != s], ["rabbi", "avg_gap"], GAPS).assign(left_out=s)
                     for s in systems], ignore_index=True)
    for (metric, gap), row in loo.groupby(["metric", "gap"])["r"].agg(["min", "max"]).iterrows():
        g[f"loo_{metric}_{gap}_min"] = float(row["min"])
        g[f"loo_{metric}_{gap}_max"] = float(row["max"])
    g["n_loo_points"] = int(loo["n"].min())
    loo_wide = loo.pivot_table(index="left_out", columns=["metric", "gap"], values="r")
    for gap in GAPS:
        g[f"n_loo_rabbi_higher_{gap}"] = int((loo_wide[("rabbi", gap)] > loo_wide[("avg_gap", gap)]).sum())
    g["loo_most_influential"] = str((loo_wide[("rabbi", "dDP")] - ours.loc[("rabbi", "dDP"), "r"]).abs().idxmax())
    loo_view = loo_wide.loc[systems].set_axis([f"r({SHORT[m]}, {GAP_LABEL[gp]})" for m, gp in loo_wide.columns], axis=1)
    loo_view = loo_view.rename_axis("system left out").reset_index()

    dp_se = selection.dp_standard_error(k, n_groups, rounds)
    noise_share = min(1.0, dp_se**2 / float(points["dDP"].var()))
    g["dp_se"] = dp_se
    g["k_prev"] = PREVIOUS_K
    g["dp_se_prev"] = selection.dp_standard_error(PREVIOUS_K, n_groups, rounds)
    g["sd_dDP"] = float(points["dDP"].std())
    g["noise_share"] = float(noise_share)
    g["attenuation"] = float(np.sqrt(1 - noise_share))

    estimate = bootstrap_correlations(points)
    name_reps = intervals.cluster_bootstrap(scores, partial(_name_replicate, k=k, rounds=rounds, seed=seed),
                                            n_name_boot, seed, strata=("job", "group"), cluster="full_name")
    system_reps = intervals.cluster_bootstrap(points, _system_replicate, n_system_boot, seed, strata=(), cluster="system")
    boot = pd.concat([intervals.percentile_intervals(estimate, reps, ["measure", "gap"], ["r_pooled", "r_cluster_median"])
                      .assign(resampled=who) for who, reps in (("names", name_reps), ("systems", system_reps))],
                     ignore_index=True)
    ci = boot.set_index(["resampled", "metric", "measure", "gap"])
    prefix = {"names": "nb", "systems": "sb"}
    for (who, value, measure, gap), row in ci.iterrows():
        if measure == "rabbi_minus_avg_gap":
            if gap == "dDP":
                scope = "pooled" if value == "r_pooled" else "within"
                g[f"{prefix[who]}_lo_diff_{scope}"] = float(row["ci_low"])
                g[f"{prefix[who]}_hi_diff_{scope}"] = float(row["ci_high"])
        else:
            lo, hi = ("lo", "hi") if value == "r_pooled" else ("wlo", "whi")
            g[f"{prefix[who]}_{lo}_{measure}_{gap}"] = float(row["ci_low"])
            g[f"{prefix[who]}_{hi}_{measure}_{gap}"] = float(row["ci_high"])
    est = estimate.set_index(["measure", "gap"])
    g["diff_pooled"] = float(est.loc[("rabbi_minus_avg_gap", "dDP"), "r_pooled"])
    g["diff_within"] = float(est.loc[("rabbi_minus_avg_gap", "dDP"), "r_cluster_median"])
    paper_avg = float(paper.set_index(["task", "setting", "metric", "gap"]).loc[
        ("resume screening", "pointwise", "avg_gap", "dDP"), "r"])
    names_avg = ci.loc[("names", "r_pooled", "avg_gap", "dDP")]
    g["avg_gap_paper_in_ci_word"] = inside_word(paper_avg, names_avg["ci_low"], names_avg["ci_high"])
    outside = boot[(boot["resampled"] == "names") & ~boot["estimate"].between(boot["ci_low"], boot["ci_high"])]
    g["nb_n_outside"] = len(outside)
    g["nb_n_intervals"] = int((boot["resampled"] == "names").sum())
    bootstrap_view = _bootstrap_view(boot, est)

    # --- the pairwise half ---------------------------------------------------------------------------------
    pw_pairs = n_groups * (n_groups - 1) // 2
    pw_pools = items.pairwise_pools(data.candidate_table(jobs, names_per_group=names_per_group, seed=seed),
                                    max(pairwise_rounds, 1), seed)
    pw_answers = runs.pairwise_table(pairwise_systems, pw_pools, root=root) if pairwise_systems else pd.DataFrame()
    for name, value in dict(pw_rounds=pairwise_rounds, pw_pairs=pw_pairs, pw_jobs=len(jobs),
                            pw_n_systems=len(pairwise_systems),
                            pw_generations=pairwise_rounds * len(jobs) * pw_pairs * 2).items():
        g[name] = int(value)
    if pairwise_systems:
        pw_stats = metrics.pairwise_output_stats(pw_answers, by=["system"]).set_index("system").loc[pairwise_systems]
        pw_stats["empty answers"] = metrics.pairwise_answer_shares(pw_answers, by=["system"]).set_index("system")["empty"]
        pw_stats["enters the test"] = [pairwise_entry(row) for _, row in pw_stats.iterrows()]
        pw_kept = [s for s in pairwise_systems if pw_stats.loc[s, "enters the test"] == "yes"]
    else:
        pw_stats = pd.DataFrame(columns=["regular", "tie", "undetected", "empty answers", "inconsistent", "n_prompts",
                                         "enters the test"])
        pw_kept = []
    g["pw_kept"] = ", ".join(pw_kept) if pw_kept else "none"
    g["pw_n_kept"] = len(pw_kept)
    excluded = [f"{s} ({pw_stats.loc[s, 'enters the test'][4:]})" for s in pairwise_systems if s not in pw_kept]
    g["pw_excluded"] = "; ".join(excluded) if excluded else "none"
    answers_view = pw_stats[["regular", "tie", "undetected", "empty answers", "inconsistent", "n_prompts",
                             "enters the test"]].rename_axis("system").reset_index()
    answers_view["n_prompts"] = answers_view["n_prompts"].astype(int)

    paper_pw = paper[(paper["task"] == "resume screening") & (paper["setting"] == "pairwise")].set_index(["metric", "gap"])
    for row in paper[paper["setting"] == "pairwise"].itertuples():
        g[f"paper_pair_r_{'resume' if row.task == 'resume screening' else 'essay'}_{row.metric}_{row.gap}"] = float(row.r)
    g["n_paper_pairwise"] = int((paper["setting"] == "pairwise").sum())
    pw_points = pd.DataFrame()
    pw_ours = pd.DataFrame()
    if pw_kept:
        kept_answers = pw_answers[pw_answers["system"].isin(pw_kept)]
        pw_points = tables.pairwise_study_points(kept_answers, pw_pools, k)
        pw_ours = validity.validity_table(pw_points, PW_METRICS, GAPS, dropna=True).set_index(["metric", "gap"])
        pw_ours["n_undefined"] = len(pw_points) - pw_ours["n"]  # a qualified-candidate metric needs qualified pairs
        for (metric, gap), row in pw_ours.iterrows():
            for col in ("r", "ci_low", "ci_high"):
                g[f"pw_{col}_{metric}_{gap}"] = float(row[col])
        g["pw_n_points"] = len(pw_points)
        g["pw_n_undefined_max"] = int(pw_ours["n_undefined"].max())
        pw_view = paper_pw[["r", "p_gt_001", "source"]].rename(columns={"r": "r_paper"}).join(pw_ours, how="left")
        pairwise_view = pd.DataFrame({
            "metric": [SHORT[m] for m, _ in pw_view.index], "correlated with": [GAP_LABEL[gp] for _, gp in pw_view.index],
            "paper r": [star(r, ns) for r, ns in zip(pw_view["r_paper"], pw_view["p_gt_001"])],
            "ours r": [star(r, p > ALPHA) for r, p in zip(pw_view["r"], pw_view["pvalue"])],
            "ours 95% interval": [_interval(lo, hi) for lo, hi in zip(pw_view["ci_low"], pw_view["ci_high"])],
            "ours n": pw_view["n"].astype(int).to_numpy(), "source of paper r": pw_view["source"].to_numpy()})
        won = kept_answers.pivot_table(index=["system", "pair_id"], columns="order", values="winner", aggfunc="first")
        g["pw_consistent_share"] = float(((won["ab"] == won["ba"]) & won["ab"].isin(["a", "b"])).mean())
        g["pw_avg_gap_max"] = float(pw_points["avg_gap"].max())
        g["pw_n_gap_zero"] = int((pw_points["avg_gap"] == 0).sum())
        g["pw_dp_se"] = selection.dp_standard_error(k, n_groups, pairwise_rounds)
        g["pw_abs_dDP_max"] = float(pw_points["dDP"].abs().max())
        g["pw_summary"] = pairwise_summary(
            pw_kept, len(pw_points), {m: pw_ours.loc[(m, "dDP"), "r"] for m in PW_METRICS},
            {m: paper_pw.loc[(m, "dDP"), "r"] for m in PW_METRICS})
    else:
        g["pw_n_points"] = 0
        pairwise_view = pd.DataFrame({
            "metric": [SHORT[m] for m, _ in paper_pw.index], "correlated with": [GAP_LABEL[gp] for _, gp in paper_pw.index],
            "paper r": [star(r, ns) for r, ns in zip(paper_pw["r"], paper_pw["p_gt_001"])],
            "ours r": "no system enters the test", "source of paper r": paper_pw["source"].to_numpy()})
        for name in ("pw_consistent_share", "pw_avg_gap_max", "pw_abs_dDP_max"):
            g[name] = float("nan")
        g["pw_n_gap_zero"] = 0
        g["pw_dp_se"] = selection.dp_standard_error(k, n_groups, max(pairwise_rounds, 1))
        g["pw_summary"] = pairwise_summary([], 0, {}, {})
    g["pw_coverage"] = coverage_phrase(len(pw_kept), len(pairwise_systems))

    # --- the paper's text and the paper's code -------------------------------------------------------------
    code_pointwise = metrics.bias_table(scores, "score", "group", reference, by=["system", "job"], qualified="qualified",
                                        jsd_variant="authors")[["system", "job", "group", "jsd", "jsd_qualified"]]
    code_points = points.drop(columns=["jsd", "jsd_qualified"]).merge(code_pointwise, on=["system", "job", "group"],
                                                                      how="left", validate="many_to_one")
    code_ours = validity.validity_table(code_points, METRICS, GAPS).set_index(["metric", "gap"])
    pw_code_ours = pd.DataFrame(columns=["r"], index=pd.MultiIndex.from_product([PW_METRICS, GAPS], names=["metric", "gap"]))
    if pw_kept:
        pw_code_points = _code_pairwise_points(pw_points, kept_answers, pw_pools, reference)
        pw_code_ours = validity.validity_table(pw_code_points, PW_METRICS, GAPS, dropna=True).set_index(["metric", "gap"])
    both_ways = pd.concat([
        ours[["r"]].assign(code=code_ours["r"], setting="pointwise"),
        (pw_ours[["r"]] if pw_kept else pw_code_ours[["r"]]).assign(code=pw_code_ours["r"], setting="pairwise")])
    both_ways = both_ways.reset_index().merge(
        paper.loc[paper["task"] == "resume screening", ["setting", "metric", "gap", "r", "p_gt_001"]],
        on=["setting", "metric", "gap"], suffixes=("", "_paper"))
    both_ways["differ"] = (both_ways["metric"] == "jsd") | ((both_ways["setting"] == "pairwise")
                                                          & (both_ways["metric"] == "avg_gap"))
    text_code_view = pd.DataFrame({
        "setting": both_ways["setting"], "metric": both_ways["metric"].map(SHORT),
        "correlated with": [correlated_with(m, gp) for m, gp in zip(both_ways["metric"], both_ways["gap"])],
        "paper": [star(r, ns) for r, ns in zip(both_ways["r_paper"], both_ways["p_gt_001"])],
        "ours, text": [f"{r:.2f}" for r in both_ways["r"]], "ours, code": [f"{r:.2f}" for r in both_ways["code"]],
        "text and code": both_ways["differ"].map({True: "differ", False: "agree"})})
    g["jsd_text_disjoint"] = metrics.jsd([0.0, 0.1], [0.9, 1.0])
    g["jsd_code_disjoint"] = metrics.jsd([0.0, 0.1], [0.9, 1.0], variant="authors")
    g["jsd_text_code_r"] = float(np.corrcoef(points["jsd"], code_points["jsd"])[0, 1])
    for gap in GAPS:
        g[f"r_code_jsd_{gap}"] = float(code_ours.loc[("jsd", gap), "r"])
        g[f"pw_r_code_avg_gap_{gap}"] = float(pw_code_ours.loc[("avg_gap", gap), "r"])
    changed = both_ways[both_ways["differ"]].dropna(subset=["r", "code"])
    closer = (changed["code"] - changed["r_paper"]).abs() < (changed["r"] - changed["r_paper"]).abs()
    g["n_code_rows"] = len(changed)
    g["n_code_closer"] = int(closer.sum())
    g["n_code_sign_flips"] = int((np.sign(changed["code"]) != np.sign(changed["r"])).sum())

    # --- essays --------------------------------------------------------------------------------------------
    essay_view = _essays(essay_scores, paper, ours, both, g, essay_k=essay_k, essay_rounds=essay_rounds,
                         essay_pool_size=essay_pool_size, seed=seed)

    return PredictiveValidityFindings(
        systems=systems, jobs=jobs, k=int(k), rounds=int(rounds), pairwise_rounds=int(pairwise_rounds),
        n_groups=n_groups, others=others, points=points, table=table, per_system=per_system,
        pairwise_points=pw_points, pairwise_r=pw_ours, pairwise_kept=pw_kept,
        points_head=points[["system", "job", "group", "rabbi", "avg_gap", "jsd", "emd", "rabbi_qualified", "dDP",
                            "dEO"]].head(),
        table1=table1, paper_view=paper_view, controls_view=controls_view, design_view=design_view,
        systems_view=systems_view, decomposition_view=decomposition_view, loo_view=loo_view,
        bootstrap_view=bootstrap_view, pairwise_answers_view=answers_view, pairwise_view=pairwise_view,
        text_code_view=text_code_view, essay_view=essay_view, values=g)


def _bootstrap_view(boot: pd.DataFrame, est: pd.DataFrame) -> pd.DataFrame:
    """One row per correlation (and per RABBI − δ difference): estimates and both bootstrap intervals."""
    label = {**SHORT, "rabbi_minus_avg_gap": "RABBI − δ"}
    view = boot.assign(interval=[_interval(lo, hi) for lo, hi in zip(boot["ci_low"], boot["ci_high"])])
    view = view.pivot_table(index=["measure", "gap"], columns=["metric", "resampled"], values="interval", aggfunc="first")
    view.insert(0, ("r_cluster_median", "estimate"), est["r_cluster_median"].reindex(view.index))
    view.insert(0, ("r_pooled", "estimate"), est["r_pooled"].reindex(view.index))
    view = view.reindex(columns=[(v, w) for v in ("r_pooled", "r_cluster_median") for w in ("estimate", "names", "systems")])
    view.columns = [f"{'pooled' if v == 'r_pooled' else 'median within system'}: "
                    f"{w if w == 'estimate' else f'95% interval, {w} resampled'}" for v, w in view.columns]
    view = view.reindex([(m, gp) for m in [*METRICS, "rabbi_minus_avg_gap"] for gp in GAPS])
    view.insert(0, "correlation", [f"{label[m]} vs {GAP_LABEL[gp]}" for m, gp in view.index])
    return view.reset_index(drop=True)


def _code_pairwise_points(pw_points: pd.DataFrame, answers: pd.DataFrame, pools: pd.DataFrame,
                          reference: str) -> pd.DataFrame:
    """The pairwise points with δ computed as the paper's code does (wins minus losses over all prompts)."""
    members = pools.drop_duplicates("candidate").set_index("candidate")

    def code_delta(part: pd.DataFrame, column: str) -> pd.DataFrame:
        net = metrics.pairwise_gap_table(part, members["group"], reference, by=["system", "job"], variant="authors")
        return net.rename(columns={"net_win_share": column})[["system", "job", "group", column]]

    both_q = (members.loc[answers["cand_a"], "qualified"].to_numpy()
              & members.loc[answers["cand_b"], "qualified"].to_numpy())
    return (pw_points.drop(columns=["avg_gap", "avg_gap_qualified"])
            .merge(code_delta(answers, "avg_gap"), on=["system", "job", "group"], how="left")
            .merge(code_delta(answers[both_q], "avg_gap_qualified"), on=["system", "job", "group"], how="left"))


def _essays(essay_scores: pd.DataFrame, paper: pd.DataFrame, ours: pd.DataFrame, both: pd.DataFrame,
            g: dict[str, Any], *, essay_k: int, essay_rounds: int, essay_pool_size: int, seed: int) -> pd.DataFrame:
    """Table 1's essay rows on the stored ELLIPSE grades (glued into ``g``), next to the paper's and our résumé rows."""
    essay_systems = list(dict.fromkeys(essay_scores["system"])) if not essay_scores.empty else []
    essay_paper = paper[(paper["task"] == "essay grading") & (paper["setting"] == "pointwise")].set_index(["metric", "gap"])
    if len(essay_systems) >= 1:
        graded = essays.grader_table(essay_scores)
        essay_points = essays.essay_points(graded, essay_systems, k=essay_k, rounds=essay_rounds,
                                           pool_size=essay_pool_size, seed=seed)
        essay_ours = validity.validity_table(essay_points, METRICS, GAPS, dropna=True).set_index(["metric", "gap"])
        n_essays = len(graded)
    else:
        essay_points, n_essays = pd.DataFrame(), 0
        essay_ours = pd.DataFrame({"r": np.nan, "ci_low": np.nan, "ci_high": np.nan, "pvalue": np.nan, "n": 0},
                                  index=essay_paper.index)
    g["essay_n_systems_val"] = len(essay_systems)
    g["essay_systems_val"] = ", ".join(essay_systems) if essay_systems else "none yet"
    g["essay_n_essays_val"] = int(n_essays)
    g["essay_n_points"] = len(essay_points)
    for (metric, gap), row in essay_paper.iterrows():
        g[f"essay_paper_r_{metric}_{gap}"] = float(row["r"])
        g[f"essay_r_{metric}_{gap}"] = float(essay_ours.loc[(metric, gap), "r"])
    essay_both = essay_paper[["r", "p_gt_001"]].rename(columns={"r": "r_paper"}).join(
        essay_ours[["r", "pvalue", "ci_low", "ci_high", "n"]])
    essay_both["in_ci"] = essay_both["r_paper"].between(essay_both["ci_low"], essay_both["ci_high"])
    g["essay_n_in_ci"] = int(essay_both["in_ci"].sum())
    g["essay_n_rows"] = len(essay_both)
    g["essay_n_same_sign"] = int((np.sign(essay_both["r"]) == np.sign(essay_both["r_paper"])).sum())
    essay_top = essay_ours.xs("dDP", level="gap")["r"].idxmax() if essay_systems else None
    g["essay_best_dDP"] = SHORT[essay_top] if essay_top else "none"
    return pd.DataFrame({
        "metric": [SHORT[m] for m, _ in essay_both.index],
        "correlated with": [correlated_with(m, gp) for m, gp in essay_both.index],
        "paper, essays": [star(r, ns) for r, ns in zip(essay_both["r_paper"], essay_both["p_gt_001"])],
        "ours, essays": [star(r, p > ALPHA) for r, p in zip(essay_both["r"], essay_both["pvalue"])],
        "ours, essays: 95% interval": [_interval(lo, hi) for lo, hi in zip(essay_both["ci_low"], essay_both["ci_high"])],
        "ours, essays: n": essay_both["n"].astype(int).to_numpy(),
        "ours, résumés": [f"{ours.loc[(m, gp), 'r']:.2f}" for m, gp in essay_both.index],
        "paper, résumés": [f"{both.loc[(m, gp), 'r_paper']:.2f}" for m, gp in essay_both.index]})


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_scatter(findings: PredictiveValidityFindings, gap: str) -> Figure:
    """The paper's Figure 2 on our points: one panel per metric (x: the metric, on the qualified candidates for
    ΔEO; y: the gap, |gap| for JSD and EMD), every point one (system, job, group) coloured by its group, each panel
    titled with its Pearson r."""
    if gap not in GAP_LABEL:
        raise ValueError(f"gap must be one of {sorted(GAP_LABEL)}, got {gap!r}")
    points, ours = findings.points, findings.table.set_index(["metric", "gap"])
    column = {m: m if gap == "dDP" else f"{m}_qualified" for m in METRICS}
    long = pd.concat([points[["system", "job", "group"]].assign(
        metric=m, value=points[column[m]], gap=points[gap] if directional(m) else points[gap].abs()) for m in METRICS],
        ignore_index=True)
    who = "all candidates" if gap == "dDP" else "qualified candidates"
    grid = sns.relplot(with_sex(long), x="value", y="gap", col="metric", col_order=METRICS, col_wrap=2, hue="group",
                       hue_order=findings.others, palette=group_palette(), style="sex", markers=SEX_MARKERS,
                       style_order=list(SEX_MARKERS), s=24, alpha=0.8, height=3.2, aspect=1.35, legend=False,
                       facet_kws={"sharex": False, "sharey": False})
    grid.add_legend(legend_data=group_handles(findings.others), title="group")
    for ax, m in zip(grid.axes.flat, METRICS):
        label_axes(ax, title=f"{SHORT[m]}, {who}: r = {ours.loc[(m, gap), 'r']:.2f}", x=f"{SHORT[m]} ({UNITS[m]})",
                   y=f"{correlated_with(m, gap)} (rate gap, top {findings.k} of {findings.n_groups})")
    grid.tight_layout()
    grid.figure.suptitle(f"Bias metrics against {GAP_LABEL[gap]}: {len(points)} points ({len(findings.systems)} "
                         f"systems × {len(findings.jobs)} jobs × {len(findings.others)} groups)", y=1.03)
    return grid.figure


def figure_per_system(findings: PredictiveValidityFindings) -> Figure:
    """RABBI's and δ's Pearson r with each gap, system by system, with 95% (Fisher) intervals."""
    systems, per_system = findings.systems, findings.per_system
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    y = np.arange(len(systems))
    for ax, gap in zip(axes, GAPS):
        for i, (metric, colour) in enumerate(metric_palette(["rabbi", "avg_gap"]).items()):
            part = per_system[(per_system["gap"] == gap) & (per_system["metric"] == metric)].set_index("system").loc[systems]
            ax.errorbar(part["r"], y + (i - 0.5) * 0.3, xerr=[part["r"] - part["ci_low"], part["ci_high"] - part["r"]],
                        fmt=METRIC_MARKERS[metric], color=colour, capsize=3, label=SHORT[metric])
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, systems)
        ax.set_xlim(-1.05, 1.05)
        label_axes(ax, title=f"Correlation with {GAP_LABEL[gap]}, system by system", x="Pearson r (bars: 95% interval)",
                   y="system" if gap == "dDP" else "")
    axes[0].invert_yaxis()
    axes[1].legend(title="metric", loc="lower left")
    fig.suptitle(f"Predictive validity within each system ({len(findings.jobs)} jobs × {len(findings.others)} groups "
                 f"per system, top {findings.k} of {findings.n_groups})")
    return fig


def figure_pairwise(findings: PredictiveValidityFindings) -> Figure | None:
    """The paper's Figure 3 on our pairwise points: RABBI and the pairwise δ against ΔDP and ΔEO (None when no
    system enters the pairwise test)."""
    if not findings.pairwise_kept:
        return None
    pw_points, pw_ours = findings.pairwise_points, findings.pairwise_r
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    for row_axes, gap in zip(axes, GAPS):
        for ax, metric in zip(row_axes, PW_METRICS):
            column = metric if gap == "dDP" else f"{metric}_qualified"
            sns.scatterplot(with_sex(pw_points), x=column, y=gap, hue="group", hue_order=findings.others,
                            palette=group_palette(), style="sex", markers=SEX_MARKERS, style_order=list(SEX_MARKERS),
                            s=40, ax=ax, legend=False)
            label_axes(ax, title=f"{SHORT[metric]} vs {GAP_LABEL[gap]}: r = {pw_ours.loc[(metric, gap), 'r']:.2f}",
                       x=f"pairwise {SHORT[metric]}" + (" (qualified)" if gap == "dEO" else "")
                       + (" (share won both ways)" if metric == "avg_gap" else ", −1 to 1"),
                       y=f"{GAP_LABEL[gap]} (rate gap, top {findings.k} of {findings.n_groups})")
    axes[0, 1].legend(handles=list(group_handles(findings.others).values()), title="group", bbox_to_anchor=(1.02, 1),
                      loc="upper left")
    fig.suptitle(f"Pairwise bias metrics against the allocation gaps: {len(pw_points)} points "
                 f"({', '.join(findings.pairwise_kept)}; {findings.pairwise_rounds} pools per job)")
    fig.tight_layout()
    return fig
