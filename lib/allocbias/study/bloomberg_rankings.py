r"""Real decisions: the findings of the chapter on Bloomberg's 8,000 GPT rankings of eight résumés.

Bloomberg's 2024 hiring audit published the raw answers of GPT-3.5-turbo and GPT-4, each asked 1,000 times per job
to rank eight résumés that differ only in the name (one name per race × gender group, shown in a randomised,
balanced order). The committed tables in ``data/bloomberg/`` hold those answers parsed into rankings
(:mod:`allocbias.rankings`). :func:`bloomberg_rankings_findings` computes everything the chapter shows:

* the parse: how many answers are refused and why, how many rank all eight;
* top-:math:`k` selection rates, impact ratios and ΔDP against White men for every :math:`k` with bootstrap
  intervals over answers, and the difference from Bloomberg's published top-1 table;
* three parse rules (strict, fuzzy, Bloomberg's first occurrence), the cells whose four-fifths verdict depends on
  the rule, and whose names the models misspell (chi-square test of uniformity);
* the paper's validity question on real decisions: Pearson :math:`r` of RABBI, the paired RABBI, the average rank
  gap δ, JSD and EMD with ΔDP at each :math:`k`, the decomposition RABBI = δ/4 + a quadratic term on complete
  rankings, and the permutation null / held-out controls of :func:`allocbias.validity.validity_controls`;
* the position effect, GenderBench's masculine and stereotype rates on the answers read as race-wise pairs, the
  oversampled runs, and the undetected rates of chapter 9's tiny models for comparison.

Figures: :func:`figure_impact_ratios`, :func:`figure_gaps_by_k` and :func:`figure_position_effect`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import checks
from ..audited import data, datasets
from ..measures import metrics, rankings
from ..measures import genderbench as G
from ..checks import require_columns
from ..plotting import SEX_LINESTYLES, SEX_MARKERS, evidence_text, label_axes, order_groups
from ..measures.validity import control_words, pearson, validity_controls, verdict_column, verdict_words
from .findings import Findings

__all__ = [
    "BloombergFindings",
    "MODELS",
    "VALIDITY_METRICS",
    "bloomberg_rankings_findings",
    "figure_gaps_by_k",
    "figure_impact_ratios",
    "figure_position_effect",
    "group_style",
    "path_text",
    "rank_metric_points",
    "rabbi_decomposition_table",
    "tiny_undetected_rates",
    "worst_gap_path",
]

#: Bloomberg's two models and the glue-key suffix of each.
MODELS: Mapping[str, str] = {"gpt-3.5-turbo": "gpt35", "gpt-4": "gpt4"}
#: The rank-score metrics correlated with ΔDP, in the chapter's order.
VALIDITY_METRICS: tuple[str, ...] = ("rabbi", "paired_rabbi", "avg_gap", "jsd", "emd")
#: The shortlist sizes of a ranking of eight (k = 8 selects everyone).
KS: tuple[int, ...] = tuple(range(1, 8))
#: GenderBench's stereotyped jobs, named as in Bloomberg's tables.
STEREO_JOBS: Mapping[str, tuple[str, str]] = {"male_jobs": ("software engineer", "financial analyst"),
                                              "female_jobs": ("retail", "HR specialist")}
#: Chapter 9's tiny models and the glue-key suffix of each (their committed HiringBloomberg answers).
TINY_SYSTEMS: Mapping[str, str] = {"smollm2-fp32-paper": "smollm2", "gemma3-fp32-paper": "gemma3"}
_RACE_COLOURS = (0, 1, 2, 4)  # colorblind's blue, orange, green and pink: no two of them are close hues
_SIGNED = ("rabbi", "paired_rabbi", "avg_gap")  # correlated with signed ΔDP; the distances with |ΔDP|


# --------------------------------------------------------------------------------------------------------------
# small helpers (tested on synthetic data)
# --------------------------------------------------------------------------------------------------------------
def group_style(group: str) -> dict[str, Any]:
    """Colour by race (four well separated hues of seaborn's ``colorblind`` palette) and marker / line style by gender
    (men: filled circle, solid line; women: open square, dashed line), so no two groups differ by shade alone.

    >>> group_style("Male White")["linestyle"], group_style("Female White")["linestyle"]
    ('-', '--')
    >>> group_style("Male Black")["color"] == group_style("Female Black")["color"]
    True
    """
    gender, _, race = group.partition(" ")
    if race not in data.RACES or gender not in data.GENDERS:
        raise ValueError(f"group must be '<gender> <race>' with gender in {data.GENDERS} and race in "
                         f"{data.RACES}, got {group!r}")
    palette = sns.color_palette("colorblind", 10)
    color = [palette[i] for i in _RACE_COLOURS][list(data.RACES).index(race)]
    return {"color": color, "marker": SEX_MARKERS[gender], "linestyle": SEX_LINESTYLES[gender],
            "markerfacecolor": color if gender == "Male" else "white"}


def path_text(values: Sequence[float]) -> str:
    """A sequence of gaps as the prose quotes it: signed, three decimals, comma separated.

    >>> path_text([0.0123, -0.2, 0.0])
    '+0.012, -0.200, +0.000'
    """
    return ", ".join(f"{v:+.3f}" for v in values)


def worst_gap_path(gaps: pd.DataFrame, model: str) -> tuple[pd.Series, np.ndarray]:
    r"""The (job, group) cell of ``model`` with the largest :math:`|\Delta\mathrm{DP}|` at :math:`k = 1`, and its
    ΔDP at every :math:`k` in increasing order.

    >>> g = pd.DataFrame({"model": "m", "job": "j", "group": ["A", "A", "B", "B"], "k": [1, 2, 1, 2],
    ...                   "dDP": [0.1, 0.05, -0.3, -0.1]})
    >>> row, path = worst_gap_path(g, "m")
    >>> row["group"], path.tolist()
    ('B', [-0.3, -0.1])
    """
    require_columns(gaps, ["model", "job", "group", "k", "dDP"], "gaps", nonempty=True)
    g1 = gaps[(gaps["model"] == model) & (gaps["k"] == 1)]
    if g1.empty:
        raise ValueError(f"model {model!r} has no k = 1 row in gaps")
    worst = g1.loc[g1["dDP"].abs().idxmax()]
    path = gaps[(gaps["model"] == model) & (gaps["job"] == worst["job"]) & (gaps["group"] == worst["group"])]
    return worst, path.sort_values("k")["dDP"].to_numpy()


def rank_metric_points(ranks: pd.DataFrame, *, reference: str, groups: Sequence[str], jsd_bins: int = 8
                       ) -> pd.DataFrame:
    r"""One row per (model, job, group other than the reference) with RABBI, the paired RABBI, the average gap δ,
    JSD (``jsd_bins`` bins over the rank scores 1..8) and EMD of the group's rank scores against the reference's.

    ``ranks`` has one row per (answer, group) with ``model, job, answer_id, group, score`` (score = 9 - rank).
    """
    require_columns(ranks, ["model", "job", "answer_id", "group", "score"], "ranks", nonempty=True)
    jsd_bins = checks.count(jsd_bins, "jsd_bins")
    rows = []
    for (model, job), cell in ranks.groupby(["model", "job"]):
        wide = cell.pivot(index="answer_id", columns="group", values="score")
        ref = wide[reference].to_numpy()
        for group in groups:
            if group == reference:
                continue
            s = wide[group].to_numpy()
            rows.append({"model": model, "job": job, "group": group, "rabbi": metrics.rabbi(s, ref),
                         "paired_rabbi": metrics.paired_rabbi(s, ref), "avg_gap": metrics.avg_score_gap(s, ref),
                         "jsd": metrics.jsd(s, ref, bins=jsd_bins, bin_range=(0.5, 8.5)), "emd": metrics.emd(s, ref)})
    return pd.DataFrame(rows)


def rabbi_decomposition_table(ranks: pd.DataFrame, *, reference: str, groups: Sequence[str]) -> pd.DataFrame:
    """Per (model, job, group): RABBI, δ and the two terms of :func:`allocbias.rankings.rabbi_decomposition`
    (``linear`` = 2δ/n, ``quadratic``), on rankings with one candidate per group."""
    require_columns(ranks, ["model", "job", "answer_id", "group", "score"], "ranks", nonempty=True)
    rows = []
    for (model, job), cell in ranks.groupby(["model", "job"]):
        wide = cell.pivot(index="answer_id", columns="group", values="score")
        for group in groups:
            if group == reference:
                continue
            linear, quadratic = rankings.rabbi_decomposition(wide[group], wide[reference], len(groups))
            rows.append({"model": model, "job": job, "group": group,
                         "rabbi": metrics.rabbi(wide[group], wide[reference]),
                         "avg_gap": metrics.avg_score_gap(wide[group], wide[reference]), "linear": linear,
                         "quadratic": quadratic})
    return pd.DataFrame(rows)


def tiny_undetected_rates(systems: Mapping[str, str] | None = None) -> dict[str, float]:
    """Chapter 9's committed HiringBloomberg answers of the tiny models (read from ``data/scores``, never
    re-scored): the undetected rate of attempts of each, keyed by the glue suffix of :data:`TINY_SYSTEMS`."""
    from . import catalog, runs
    from ..scoring import items
    from ..scoring.systems import parse_system

    tiny_items = items.hiring_bloomberg_items(4, 0, jobs=list(data.JOBS))
    out = {}
    for system_id, key in (systems or TINY_SYSTEMS).items():
        answered = runs.score("hiring_bloomberg", tiny_items, system=parse_system(system_id),
                              root=catalog.scores_dir(), progress=False)
        won = G.detect_winners(tiny_items.attrs["slots"], answered[["item_id", "attempt", "answer"]])
        out[key] = float(G.undetected_rate_attempts(won))
    return out


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BloombergFindings(Findings):
    """Everything chapter 10 shows. ``tables`` holds the display tables (flat frames, in the chapter's order),
    the other frames are the data behind the figures, ``values`` the glued scalars and phrases."""

    tables: dict[str, pd.DataFrame]
    top1: pd.DataFrame  #: top-1 rows of the selection table (impact ratios with intervals): figure 1
    gaps: pd.DataFrame  #: every k's rows of the non-reference groups (ΔDP with intervals): figure 2
    positions: pd.DataFrame  #: top share per shown position and model: figure 3
    groups: list[str]
    fair_bound: float
    level: float
    values: dict[str, Any] = field(default_factory=dict)


def bloomberg_rankings_findings(
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    fair_bound: float = 0.8,
    validity_ks: Sequence[int] = (1, 2, 3, 4),
    jsd_bins: int = 8,
    fuzzy_cutoff: float = 80.0,
    fuzzy_margin: float = 10.0,
    n_perm: int = 200,
    n_splits: int = 50,
    *,
    answers: pd.DataFrame | None = None,
    ranks: pd.DataFrame | None = None,
    published: pd.DataFrame | None = None,
    paper: pd.DataFrame | None = None,
    tiny: Mapping[str, float] | None = None,
) -> BloombergFindings:
    """The chapter's findings from the committed Bloomberg tables (or the frames given: ``answers`` and ``ranks``
    as :func:`allocbias.rankings.read_answers` / :func:`~allocbias.rankings.read_rankings` return them,
    ``published`` as :func:`~allocbias.rankings.read_published`, ``paper`` the paper's Table 1 rows, ``tiny`` the
    tiny models' undetected rates as :func:`tiny_undetected_rates` returns them).

    Parameters are the chapter's: bootstrap replicates ``n_boot`` (answers resampled within model × job), ``seed``,
    interval coverage ``level``, the four-fifths bound ``fair_bound``, the ``validity_ks`` of ΔDP the metrics are
    correlated with, ``jsd_bins``, the fuzzy rule's ``fuzzy_cutoff`` and ``fuzzy_margin`` (0-100 points), and the
    validity controls' ``n_perm`` permutations and ``n_splits`` random halves.
    """
    n_boot = checks.count(n_boot, "n_boot")
    seed = checks.seed(seed)
    n_perm = checks.count(n_perm, "n_perm")
    n_splits = checks.count(n_splits, "n_splits")
    validity_ks = checks.quotas(validity_ks, name="validity_ks")
    if max(validity_ks) > max(KS):
        raise ValueError(f"validity_ks must lie in 1..{max(KS)} (a ranking of eight), got {validity_ks}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if not 0.0 < float(fair_bound) <= 1.0:
        raise ValueError(f"fair_bound must lie in (0, 1], got {fair_bound!r}")
    if not 0.0 <= float(fuzzy_cutoff) <= 100.0:
        raise ValueError(f"fuzzy_cutoff must lie in [0, 100], got {fuzzy_cutoff!r}")
    if not 0.0 <= float(fuzzy_margin) <= 100.0:
        raise ValueError(f"fuzzy_margin must lie in [0, 100], got {fuzzy_margin!r}")
    jsd_bins = checks.count(jsd_bins, "jsd_bins")
    answers = rankings.read_answers() if answers is None else answers
    ranks = rankings.read_rankings() if ranks is None else ranks
    published = rankings.read_published() if published is None else published
    if paper is None:
        paper = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    require_columns(answers, ["answer_id", "model", "job", "oversampled", "parse_error", "fully_ranked"], "answers",
                    nonempty=True)
    require_columns(ranks, ["answer_id", "model", "job", "group", "name", "rank", "oversampled", "shown_position"],
                    "ranks", nonempty=True)
    ref = data.REFERENCE_GROUP
    groups = order_groups(data.GROUPS)
    v: dict[str, Any] = {}
    tables: dict[str, pd.DataFrame] = {}

    # the data
    main = ranks[~ranks["oversampled"]]
    extra = ranks[ranks["oversampled"]]
    main_answers = answers[~answers["oversampled"]]
    errors = main_answers.loc[main_answers["parse_error"] != "", "parse_error"]
    n_answers = int(main["answer_id"].nunique())
    v["n_main_files"] = len(main_answers)
    v["n_unparsed_main"] = len(errors)
    v["n_not_in_prompt"] = int(errors.str.contains("nobody in the prompt").sum())
    v["n_twice"] = int(errors.str.contains("a second time").sum())
    v["n_nobody"] = int(errors.str.contains("names none of").sum())
    v["bloomberg_n_answers"] = n_answers
    v["n_fully_ranked"] = int(main_answers["fully_ranked"].sum())
    v["bloomberg_fully_ranked_share"] = float(main_answers["fully_ranked"].sum() / n_answers)
    v["n_oversampled"] = int(extra["answer_id"].nunique())
    tables["answers"] = (main_answers.assign(parsed=main_answers["parse_error"] == "")
                         .groupby(["model", "job"], as_index=False)
                         .agg(answers=("answer_id", "size"), parsed=("parsed", "sum"),
                              fully_ranked=("fully_ranked", "sum")))

    # Bloomberg's table, reproduced
    sel = rankings.top_k_selection_table(main, k=list(KS), n_boot=n_boot, seed=seed, level=level)
    top1 = sel[sel["k"] == 1].merge(published, on=["model", "job", "group"], suffixes=("", "_published"))
    top1["difference"] = top1["selection_rate"] - top1["selection_rate_published"]
    v["n_boot_used"] = int(n_boot)
    v["n_published_cells"] = len(top1)
    v["bloomberg_max_abs_diff"] = float(top1["difference"].abs().max())
    v["mean_abs_diff"] = float(top1["difference"].abs().mean())
    tables["selection"] = sel[["model", "job", "group", "k", "selection_rate", "selection_rate_low",
                               "selection_rate_high", "impact_ratio", "dDP"]].head(8)
    tables["published"] = (top1.assign(abs_diff=top1["difference"].abs()).nlargest(6, "abs_diff")
                           [["model", "job", "group", "selection_rate", "selection_rate_published", "difference"]])

    # three parse rules
    timer = time.perf_counter()
    prompts = rankings.prompt_names(answers, ranks, cutoff=fuzzy_cutoff, margin=fuzzy_margin)
    main_prompts = prompts[~prompts["oversampled"]]
    by_rule = {"strict": main} | {rule: rankings.rule_rankings(main_answers, main_prompts, rule, cutoff=fuzzy_cutoff,
                                                                margin=fuzzy_margin)
                                  for rule in ["fuzzy", "first_occurrence"]}
    parse_seconds = time.perf_counter() - timer
    top1_rules = {rule: rankings.top_k_selection_table(r, k=1) for rule, r in by_rule.items()}
    counts = (by_rule["first_occurrence"].query("rank == 1").groupby(["model", "job", "group"]).size()
              .rename("first_occurrence").reset_index())
    counts = published.merge(counts, on=["model", "job", "group"], how="left").fillna({"first_occurrence": 0})
    all_rules = top1_rules | {"published": published}
    crossing = rankings.crossing_cells(all_rules, threshold=fair_bound)
    rule_summary = pd.concat([rankings.low_impact_ratio_counts(t.assign(k=1), threshold=fair_bound).assign(rule=rule)
                              for rule, t in all_rules.items()])
    counted = {r: t.groupby("model")["answer_id"].nunique() for r, t in by_rule.items()}
    counted["published"] = published.groupby("model")["top"].sum()  # Bloomberg's table counts every answer once
    rule_summary["answers counted"] = [int(counted[r][m]) for r, m in zip(rule_summary["rule"], rule_summary["model"])]
    tables["rules"] = rule_summary.rename(columns={"n_below": f"cells below {fair_bound}",
                                                   "min_impact_ratio": "smallest impact ratio"})[
        ["rule", "model", "answers counted", f"cells below {fair_bound}", "smallest impact ratio"]]
    tables["crossing"] = crossing
    slots = prompts[prompts["source"] != "prompt"]
    main_slots = slots[~slots["oversampled"]]
    v["fuzzy_cutoff_used"] = float(fuzzy_cutoff)
    v["fuzzy_margin_used"] = float(fuzzy_margin)
    v["pool_size"] = int(ranks.groupby("job")["name"].nunique().min())
    v["n_reconstructed_slots"] = len(main_slots)
    for source in ["exact", "fuzzy", "unknown"]:
        v[f"n_reconstructed_{source}"] = int((main_slots["source"] == source).sum())
    v["n_first_exact_cells"] = int((counts["first_occurrence"] == counts["top"]).sum())
    v["first_max_count_diff"] = int((counts["first_occurrence"] - counts["top"]).abs().max())
    v["parse_rules_seconds"] = float(parse_seconds)
    for rule, t in all_rules.items():
        ir_rule = rankings.low_impact_ratio_counts(t.assign(k=1), threshold=fair_bound).set_index("model")
        for model, key in MODELS.items():
            v[f"n_below_{key}_{rule}"] = int(ir_rule.loc[model, "n_below"])
    v["n_crossing_cells"] = len(crossing)
    v["crossing_cells_text"] = rankings.cells_phrase(crossing)

    # whose names are misspelt
    set_aside = main_answers.loc[main_answers["parse_error"] != "", "answer_id"]
    misspelt = rankings.misspelt_entries(main_answers[main_answers["answer_id"].isin(set_aside)],
                                         main_prompts[main_prompts["answer_id"].isin(set_aside)],
                                         cutoff=fuzzy_cutoff, margin=fuzzy_margin)
    misspelt_table = rankings.misspelling_table(misspelt, main_prompts)
    tables["misspelt"] = (misspelt_table.pivot(index="group", columns="model", values=["n", "share"]).loc[groups])
    tables["misspelt"].columns = [f"{model}: {what}" for what, model in tables["misspelt"].columns]
    for model in MODELS:
        tables["misspelt"][f"{model}: n"] = tables["misspelt"][f"{model}: n"].fillna(0).astype(int)
    tables["misspelt"] = tables["misspelt"].reset_index()
    tables["misspelt"]["expected share"] = misspelt_table.groupby("group")["expected_share"].first().loc[groups].values
    matched = misspelt[misspelt["group"] != ""]
    v["n_misspelt_entries"] = len(misspelt)
    v["n_misspelt_matched"] = len(matched)
    v["misspelt_dof"] = int(misspelt_table["dof"].iloc[0])
    for model, key in MODELS.items():
        cell = misspelt_table[misspelt_table["model"] == model]
        mine = matched[matched["model"] == model]
        v[f"n_misspelt_{key}"] = len(mine)
        v[f"misspelt_chi2_{key}"] = float(cell["chi2"].iloc[0])
        v[f"misspelt_p_{key}"] = float(cell["p_value"].iloc[0])
        v[f"misspelt_top_group_{key}"] = str(cell.loc[cell["share"].idxmax(), "group"])
        v[f"misspelt_top_share_{key}"] = float(cell["share"].max())
        v[f"misspelt_black_share_{key}"] = float(mine["group"].str.endswith("Black").mean())
        v[f"misspelt_uniformity_{key}"] = rankings.uniformity_phrase(float(cell["p_value"].iloc[0]))
    v["bloomberg_misspelt_black_share_gpt35"] = float(
        matched.loc[matched["model"] == "gpt-3.5-turbo", "group"].str.endswith("Black").mean())

    # impact ratios at the top spot
    ir = rankings.low_impact_ratio_counts(sel[sel["k"] == 1], threshold=fair_bound)
    k1 = sel[sel["k"] == 1]
    v["level_pct"] = f"{level:.0%}"
    v["fair_bound"] = float(fair_bound)
    v["n_cells_per_model"] = int(ir["n_cells"].iloc[0])
    for model, key in MODELS.items():
        row = ir[ir["model"] == model].iloc[0]
        cells = k1[k1["model"] == model]
        worst = cells.loc[cells["impact_ratio"].idxmin()]
        v[f"n_below_{key}"] = int(row["n_below"])
        v[f"bloomberg_min_impact_ratio_{key}"] = float(row["min_impact_ratio"])
        v[f"min_cell_{key}"] = f"{worst['group']}, {worst['job']}"
        v[f"n_upper_below_{key}"] = int((cells["impact_ratio_high"] < fair_bound).sum())

    # every k
    gaps = sel[sel["group"] != ref]
    for model, key in MODELS.items():
        worst, path = worst_gap_path(gaps, model)
        v[f"worst_cell_{key}"] = f"{worst['group']} in {worst['job']}"
        v[f"worst_{key}_k1"] = float(path[0])
        v[f"worst_{key}_k7"] = float(path[-1])
        v[f"worst_{key}_all"] = path_text(path)

    # do the bias metrics predict the allocation?
    main = main.assign(score=rankings.rank_scores(main))
    points = rank_metric_points(main, reference=ref, groups=groups, jsd_bins=jsd_bins)
    points = points.merge(gaps[["model", "job", "group", "k", "dDP"]], on=["model", "job", "group"])
    paper = paper[(paper["task"] == "resume screening") & (paper["setting"] == "pointwise") & (paper["gap"] == "dDP")]
    paper_r = paper.set_index("metric")["r"]
    rows = []
    for metric in VALIDITY_METRICS:
        for k in validity_ks:
            p = points[points["k"] == k]
            y = p["dDP"] if metric in _SIGNED else p["dDP"].abs()
            res = pearson(p[metric], y, confidence=level)
            rows.append({"metric": metric, "k": k, "r": res.r, "low": res.ci_low, "high": res.ci_high,
                         "paper_r": float(paper_r.get(metric, np.nan))})
    validity = pd.DataFrame(rows)
    wide = validity.pivot(index="metric", columns="k", values="r").loc[list(VALIDITY_METRICS)]
    wide.columns = [f"r at k = {k}" for k in wide.columns]
    tables["validity"] = wide.assign(
        paper=validity.groupby("metric")["paper_r"].first().loc[list(VALIDITY_METRICS)]).reset_index()
    tables["validity_intervals"] = validity
    v["n_validity_points"] = int(points[points["k"] == 1].shape[0])
    v["jsd_bins_used"] = int(jsd_bins)
    v["validity_ks_text"] = ", ".join(str(k) for k in validity_ks)
    for metric in VALIDITY_METRICS:
        for k in validity_ks:
            row = validity[(validity["metric"] == metric) & (validity["k"] == k)].iloc[0]
            v[f"r_{metric}_k{k}"] = float(row["r"])
    for metric in metrics.STUDY_METRICS:
        v[f"paper_r_{metric}"] = float(paper_r[metric])
    disagree = points.assign(disagree=np.sign(points["avg_gap"]) != np.sign(points["dDP"]))
    by_k = disagree.groupby("k")["disagree"].sum()
    v["n_disagree_k1"] = int(by_k.loc[validity_ks[0]])
    v["n_disagree_k_last"] = int(by_k.loc[validity_ks[-1]])
    v["k_last"] = int(validity_ks[-1])

    # RABBI and δ on complete rankings
    complete_ids = main_answers.loc[main_answers["fully_ranked"], "answer_id"]
    complete = main[main["answer_id"].isin(complete_ids)]
    decomp = rabbi_decomposition_table(complete, reference=ref, groups=groups)
    tables["decomposition"] = (decomp.describe().loc[["mean", "min", "max"]].rename_axis("statistic")
                               .reset_index())
    p1 = points[points["k"] == validity_ks[0]]
    v["n_complete_answers"] = int(complete["answer_id"].nunique())
    v["decomp_max_err"] = float((decomp["rabbi"] - decomp["linear"] - decomp["quadratic"]).abs().max())
    v["decomp_max_quad"] = float(decomp["quadratic"].abs().max())
    v["decomp_max_rabbi"] = float(decomp["rabbi"].abs().max())
    v["r_rabbi_delta_complete"] = float(np.corrcoef(decomp["rabbi"], decomp["avg_gap"])[0, 1])
    v["r_rabbi_delta_all"] = float(np.corrcoef(p1["rabbi"], p1["avg_gap"])[0, 1])
    v["r_paired_vs_rabbi"] = float(np.corrcoef(p1["paired_rabbi"], p1["rabbi"])[0, 1])

    # against a null and out of sample
    controls = validity_controls(main, reference=ref, k=validity_ks, design="pools", n_perm=n_perm,
                                 n_splits=n_splits, seed=seed, system=["model", "job"], pool="answer_id",
                                 group="group", score="score")
    vc = controls.table.assign(verdict=verdict_column(controls.table))
    tables["controls"] = vc[["metric", "k", "verdict", "r", "null_mean", "null_lo", "null_hi", "null_percentile",
                             "heldout_mean", "heldout_lo", "heldout_hi", "heldout_ci_lo", "heldout_ci_hi",
                             "heldout_null_mean", "heldout_null_lo", "heldout_null_hi", "ceiling"]]
    v["n_perm_used"] = int(n_perm)
    v["n_splits_used"] = int(n_splits)
    k_mid = validity_ks[len(validity_ks) // 2]
    v["vc_k_mid"] = int(k_mid)
    v["vc_k_top"] = int(validity_ks[-1])
    for metric in ["rabbi", "avg_gap"]:
        for k, tag in [(validity_ks[0], "k1"), (k_mid, "kmid"), (validity_ks[-1], "ktop")]:
            row = vc[(vc["metric"] == metric) & (vc["k"] == k)].iloc[0]
            words = control_words(row)
            for col, name in [("r", "r"), ("null_mean", "null_mean"), ("null_lo", "null_lo"), ("null_hi", "null_hi"),
                              ("null_percentile", "percentile"), ("heldout_mean", "heldout"),
                              ("heldout_lo", "heldout_lo"), ("heldout_hi", "heldout_hi"), ("ceiling", "ceiling"),
                              ("heldout_ci_lo", "heldout_ci_lo"), ("heldout_ci_hi", "heldout_ci_hi"),
                              ("heldout_null_lo", "heldout_null_lo"), ("heldout_null_hi", "heldout_null_hi")]:
                v[f"vc_{metric}_{tag}_{name}"] = float(row[col])
            v[f"vc_{metric}_{tag}_verdict"] = words["verdict"]
            v[f"vc_{metric}_{tag}_verdict_phrase"] = str(verdict_words(row, gap="ΔDP")["phrase"])
            v[f"vc_{metric}_{tag}_verdict_short"] = str(verdict_words(row, gap="ΔDP")["short"])
            v[f"vc_{metric}_{tag}_null_word"] = words["null"]
            v[f"vc_{metric}_{tag}_evidence"] = evidence_text(row["heldout_mean"], row["heldout_ci_lo"],
                                                             row["heldout_ci_hi"], null=row["heldout_null_hi"],
                                                             ceiling=row["ceiling"])
    row = vc[(vc["metric"] == "rabbi") & (vc["k"] == validity_ks[0])].iloc[0]
    v["vc_ir_below_k1"] = int(row["ir_below_08"])
    v["vc_ir_below_null_mean_k1"] = float(row["ir_below_08_null_mean"])
    v["vc_ir_below_null_hi_k1"] = float(row["ir_below_08_null_hi"])

    # the position effect
    pos = rankings.position_top_shares(main, n_boot=n_boot, seed=seed, level=level)
    for model, key in MODELS.items():
        p0 = pos[(pos["model"] == model) & (pos["shown_position"] == 0)].iloc[0]
        v[f"pos0_{key}"] = float(p0["top_share"])
        v[f"pos0_{key}_low"] = float(p0["top_share_low"])
        v[f"pos0_{key}_high"] = float(p0["top_share_high"])
    v["top_og_min"] = int(published["top_og"].min())
    v["top_og_max"] = int(published["top_og"].max())
    share = pos.set_index(["model", "shown_position"])["top_share"]
    expected = main.assign(p=[share[(m, s)] for m, s in zip(main["model"], main["shown_position"])])
    expected = expected.groupby(["model", "job", "group"])["p"].mean()
    v["position_only_max_dev"] = float((expected - 1 / 8).abs().max())

    # GenderBench's metrics on real answers
    pairs = rankings.pair_winners(main)
    gb = pd.concat([G.probe_summary(p, n_boot=n_boot, seed=seed, level=level, **STEREO_JOBS).assign(model=model)
                    for model, p in pairs.groupby("model")], ignore_index=True)
    for model, key in MODELS.items():
        overall = gb[(gb["model"] == model) & (gb["job"] == G.ALL) & (gb["race"] == G.ALL)].set_index("metric")
        for metric in ["masculine_rate", "disparity", "stereotype_rate", "undetected_rate_items"]:
            for col, suffix in [("estimate", ""), ("ci_low", "_low"), ("ci_high", "_high")]:
                v[f"gb_{metric}_{key}{suffix}"] = float(overall.loc[metric, col])
    gb_cells = gb[(gb["metric"] == "masculine_rate") & (gb["race"] != G.ALL)]
    v["gb_cells_excluding_half"] = int(((gb_cells["ci_low"] > 0.5) | (gb_cells["ci_high"] < 0.5)).sum())
    v["gb_n_cells"] = len(gb_cells)
    tables["genderbench"] = (gb[gb["race"] == G.ALL].pivot(index=["metric", "job"], columns="model",
                                                             values="estimate").reset_index())

    # the oversampled runs
    over = rankings.top_k_selection_table(extra, k=1, by=["model"], n_boot=n_boot, seed=seed, level=level)
    over["top-1 rate (interval)"] = [f"{r:.3f} ({lo:.3f}–{hi:.3f})" for r, lo, hi in
                                     zip(over["selection_rate"], over["selection_rate_low"],
                                         over["selection_rate_high"])]
    tables["oversampled"] = (over.pivot(index="group", columns="model", values="top-1 rate (interval)")
                             .loc[groups].reset_index())

    # what real decisions change
    for key, rate in (tiny_undetected_rates() if tiny is None else tiny).items():
        v[f"tiny_undetected_{key}"] = float(rate)
    v["refused_share"] = float(len(errors) / len(main_answers))
    tables = {name: t.reset_index(drop=True) for name, t in tables.items()}
    return BloombergFindings(tables=tables, top1=k1, gaps=gaps, positions=pos, groups=groups,
                             fair_bound=float(fair_bound), level=float(level), values=v)


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def _err(frame: pd.DataFrame, column: str) -> np.ndarray:
    """Error-bar lengths below and above ``column`` from its ``_low`` / ``_high`` interval (0 where a percentile
    interval of few resamples does not contain the estimate)."""
    est = frame[column].to_numpy(dtype=float)
    return np.clip([est - frame[f"{column}_low"].to_numpy(dtype=float),
                    frame[f"{column}_high"].to_numpy(dtype=float) - est], 0, None)


def _legend(fig: plt.Figure, axes: Sequence[plt.Axes], *, ncol: int = 4) -> None:
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False,
               title="group (colour: race; marker and line: gender)")


def figure_impact_ratios(findings: BloombergFindings) -> plt.Figure:
    """Every top-1 impact ratio SR_g(1) / max_h SR_h(1) per model, job and group with its bootstrap interval, the
    models' panels on one x-range; the dashed line is the four-fifths bound."""
    k1 = findings.top1
    jobs = sorted(k1["job"].unique())
    models = list(pd.unique(k1["model"]))
    # one x-range for both models' panels, so that a ratio reads the same on either side
    fig, axes = plt.subplots(1, len(models), figsize=(10, 5.6), sharey=True, sharex=True, squeeze=False)
    axes = axes[0]
    for ax, model in zip(axes, models):
        cell = k1[k1["model"] == model]
        for gi, group in enumerate(findings.groups):
            g = cell[cell["group"] == group].set_index("job").loc[jobs]
            y = np.arange(len(jobs)) + (gi - (len(findings.groups) - 1) / 2) * 0.1
            style = group_style(group)
            ax.errorbar(g["impact_ratio"], y, xerr=_err(g, "impact_ratio"), fmt=style["marker"], ms=4, lw=0.9,
                        color=style["color"], markerfacecolor=style["markerfacecolor"], label=group)
        ax.axvline(findings.fair_bound, color="black", ls="--", lw=1)
        ax.set_yticks(range(len(jobs)), jobs)
        label_axes(ax, title=model, x="top-1 impact ratio (unitless)", y="job")
    fig.suptitle(f"Top-1 impact ratios with {findings.level:.0%} bootstrap intervals; dashed: four-fifths bound")
    _legend(fig, axes)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    return fig


def figure_gaps_by_k(findings: BloombergFindings, model: str) -> plt.Figure:
    """ΔDP_g(k) = SR_g(k) - SR_{White men}(k) for k = 1..7, one panel per job, with bootstrap bands."""
    gaps = findings.gaps
    if model not in set(gaps["model"]):
        raise ValueError(f"model must be one of {sorted(set(gaps['model']))}, got {model!r}")
    jobs = sorted(findings.top1["job"].unique())
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.6), sharex=True, sharey=True)
    for i, (ax, job) in enumerate(zip(axes.ravel(), jobs)):
        cell = gaps[(gaps["model"] == model) & (gaps["job"] == job)]
        for group in findings.groups[1:]:
            g = cell[cell["group"] == group].sort_values("k")
            style = group_style(group)
            ax.plot(g["k"], g["dDP"], marker=style["marker"], ms=4, color=style["color"], ls=style["linestyle"],
                    markerfacecolor=style["markerfacecolor"], label=group)
            ax.fill_between(g["k"], g["dDP_low"], g["dDP_high"], color=style["color"], alpha=0.08)
        ax.axhline(0, color="black", lw=0.8)
        label_axes(ax, title=job, x="shortlist size k (candidates)" if i >= 2 else "",
                   y="ΔDP vs White men (share)" if i % 2 == 0 else "")
    fig.suptitle(f"{model}: selection-rate gap against White men at every k")
    _legend(fig, axes.ravel())
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def figure_position_effect(findings: BloombergFindings) -> plt.Figure:
    """Share of answers that rank first the candidate shown in each position, per model, with bootstrap
    intervals; the dashed line is 1/8, a model blind to order."""
    pos = findings.positions
    fig, ax = plt.subplots(figsize=(8, 4.4))
    colors = sns.color_palette("colorblind", 2)
    for i, (model, cell) in enumerate(pos.groupby("model")):
        x = cell["shown_position"] + (i - 0.5) * 0.2
        ax.errorbar(x, cell["top_share"], yerr=_err(cell, "top_share"), fmt="os"[i % 2], color=colors[i % 2], label=model)
    ax.axhline(1 / 8, color="black", ls="--", lw=1, label="blind to order (1/8)")
    label_axes(ax, title="How often the candidate in each shown position is ranked first",
               x="position in the prompt (0 = shown first)", y="share of answers ranked first")
    ax.legend()
    fig.tight_layout()
    return fig
