r"""Grading real essays: the findings of the chapter that audits the study's systems on the ELLIPSE corpus.

The chapter reads the stored grades of the study's systems on the ELLIPSE sample
(:func:`allocbias.scoring.catalog.ellipse_scores`, no model is loaded) into a grader table
(:func:`allocbias.measures.essays.grader_table`: one row per essay, the human score
``human`` and one column per system), and computes

* the groups (race/ethnicity, gender, economic status), their mean human score and qualified share;
* each system's agreement with the human score: Spearman's :math:`\rho` and quadratic-weighted kappa, overall and
  per writing prompt (:func:`allocbias.measures.agreement.agreement_table`, :func:`allocbias.measures.agreement.agreement_verdict`);
* selection in random pools: selection rates, :math:`\Delta DP`, :math:`\Delta EO` and the system-minus-human gap
  for the human score and every system on the same pools (:func:`allocbias.measures.essays.essay_gaps`), with bootstrap
  intervals over essays (:func:`allocbias.measures.essays.essay_gap_intervals`);
* RABBI, δ, JSD and EMD of the grades (:func:`allocbias.metrics.bias_table`) and the paper's Table 1 essay rows:
  each metric's Pearson r with the gaps over (system, group) points (:func:`allocbias.validity.validity_table`).

:func:`real_essays_findings` computes all of it and returns a :class:`RealEssayFindings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..measures import agreement, essays, metrics, validity
from ..scoring import catalog
from .. import checks
from ..measures.metrics import STUDY_GAPS
from ..audited import data, datasets
from ..plotting import label_axes, system_palette
from .findings import Findings

__all__ = [
    "GROUPING_NAMES",
    "RealEssayFindings",
    "agreement_list",
    "figure_agreement",
    "figure_gaps",
    "no_negative_zero",
    "real_essays_findings",
    "status_phrase",
]

#: How the prose names each grouping.
GROUPING_NAMES: dict[str, str] = {"race_ethnicity": "race/ethnicity", "gender": "gender", "SES": "economic status"}


# --------------------------------------------------------------------------------------------------------------
# phrases
# --------------------------------------------------------------------------------------------------------------
def no_negative_zero(x: float) -> str:
    """``x`` with two decimals, never "-0.00".

    >>> no_negative_zero(-0.001), no_negative_zero(-0.25)
    ('0.00', '-0.25')
    """
    return f"{x:.2f}".replace("-0.00", "0.00")


def status_phrase(system_ids: Sequence[str], n_graded: pd.Series, n_sample: int, n_used: int) -> str:
    """Whether the systems read have graded the whole sample, and if not how many essays the chapter uses.

    >>> status_phrase(["a", "b"], pd.Series([5, 5]), 5, 5)
    'Here 2 systems (a, b) have graded every essay of the study sample.'
    >>> status_phrase(["a"], pd.Series([3]), 5, 3)[:40]
    'The score tables are still being filled:'
    """
    names = ", ".join(system_ids)
    if bool((n_graded == n_sample).all()):
        return f"Here {len(system_ids)} systems ({names}) have graded every essay of the study sample."
    return (f"The score tables are still being filled: the systems read here ({names}) have graded between "
            f"{n_graded.min()} and {n_graded.max()} of the {n_sample} essays, and the chapter uses the {n_used} "
            f"that all of them have graded.")


def agreement_list(overall: pd.DataFrame) -> str:
    """One "system: ρ = …, QWK = …" item per row of an agreement table, joined by "; ".

    >>> agreement_list(pd.DataFrame({"system": ["a"], "spearman": [0.123], "qwk": [0.05]}))
    'a: ρ = 0.12, QWK = 0.05'
    >>> agreement_list(pd.DataFrame({"system": ["b"], "spearman": [-0.13], "qwk": [-0.004]}))  # never "-0.00"
    'b: ρ = -0.13, QWK = 0.00'
    """
    def two(x: float) -> str:
        return f"{round(float(x), 2) + 0.0:.2f}"  # + 0.0 turns a rounded -0.0 into 0.0

    return "; ".join(f"{r['system']}: ρ = {two(r['spearman'])}, QWK = {two(r['qwk'])}" for _, r in overall.iterrows())


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class RealEssayFindings(Findings):
    """Everything the chapter on real essays shows.

    Attributes
    ----------
    table
        The grader table used (one row per essay graded by every system).
    graded
        The same, long: one row per (essay, system) with the system's ``score``.
    groups
        Per grouping and group: essays, mean human score (``mean Overall``) and qualified share.
    overall, per_prompt
        Agreement with the human score per system (``label mass`` added), and per (system, prompt) for prompts
        with at least ``min_prompt_essays`` essays.
    gaps, intervals
        :func:`allocbias.measures.essays.essay_gaps` and :func:`allocbias.measures.essays.essay_gap_intervals` for every grouping.
    largest
        The largest model gap per grouping and metric at ``k_main``, with its group and system.
    score_metrics
        RABBI, δ, JSD and EMD per (grouping, grader, group).
    validity
        Table 1's essay rows: our r with its interval beside the paper's.
    values, phrases
        The numbers and the result-dependent phrases the prose quotes, by glue key (:meth:`glue_values`).
    parameters
        The parameters the findings were computed with (and ``graders``).
    """

    table: pd.DataFrame
    graded: pd.DataFrame
    groups: pd.DataFrame
    overall: pd.DataFrame
    per_prompt: pd.DataFrame
    gaps: pd.DataFrame
    intervals: pd.DataFrame
    largest: pd.DataFrame
    score_metrics: pd.DataFrame
    validity: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def gap_table(self) -> pd.DataFrame:
        """Every grader, group and k: φ, ψ, ΔDP, ΔEO and the system-minus-human ΔDP."""
        return self.gaps[["grouping", "grader", "k", "group", "phi", "psi", "dDP", "dEO", "dDP_minus_human"]]


def real_essays_findings(
    *,
    systems: Sequence[str] = (),
    scores_root: str = "",
    max_essays: int = 0,
    ks: Sequence[int] = (1, 2, 3),
    k_main: int = 2,
    pool_size: int = 10,
    rounds: int = 2000,
    n_boot: int = 200,
    min_prompt_essays: int = 10,
    seed: int = 0,
    scores: pd.DataFrame | None = None,
    sample: pd.DataFrame | None = None,
) -> RealEssayFindings:
    """The findings of the real-essays chapter (the chapter's parameters, same names and meaning).

    Parameters
    ----------
    systems
        Systems to read; empty: those whose tables hold the whole sample (if none yet, all that started).
    scores_root
        Folder of the score tables; empty: the committed ``data/scores``.
    max_essays
        0: every essay all systems have graded; n: only the first n of the scoring order.
    ks, k_main
        Seats per pool, and the k of the headline numbers (one of ``ks``).
    pool_size, rounds, n_boot, seed
        Essays per pool, pools per grouping, bootstrap replicates, seed of the pools and of the bootstrap.
    min_prompt_essays
        Per-prompt agreement only for prompts with at least this many graded essays.
    scores, sample
        The stored grades (as :func:`allocbias.scoring.catalog.ellipse_scores` returns them) and the essay sample, for
        tests on small synthetic data; default None reads the committed ones.
    """
    pool_size = checks.count(pool_size, "pool_size", 2)
    ks = checks.quotas(ks, name="ks", pool=pool_size)
    if k_main not in ks:
        raise ValueError(f"k_main={k_main} must be one of ks={ks}")
    rounds = checks.count(rounds, "rounds")
    n_boot = checks.count(n_boot, "n_boot")
    min_prompt_essays = checks.count(min_prompt_essays, "min_prompt_essays")
    max_essays = checks.count(max_essays, "max_essays", 0)
    seed = checks.seed(seed)
    systems = list(systems)
    groupings, references = data.ELLIPSE_GROUPINGS, data.ELLIPSE_REFERENCE_GROUPS
    if sample is None:
        sample = data.load_ellipse("study")
    if scores is None:
        root = scores_root or None
        scores = catalog.ellipse_scores(systems or None, sample, root=root, complete_only=not systems)
        if scores.empty and not systems:  # no table is complete yet: read every table that has started
            scores = catalog.ellipse_scores(None, sample, root=root)
    if scores.empty:
        raise ValueError("no system has graded any ELLIPSE essay: run scripts/score_study.py ellipse_pointwise")
    table = essays.grader_table(scores)
    if max_essays:
        table = table.head(max_essays)
    graders = [essays.HUMAN] + list(dict.fromkeys(scores["system"]))
    system_ids = graders[1:]
    graded = table.melt(id_vars=[c for c in table.columns if c not in system_ids], value_vars=system_ids,
                        var_name="system", value_name="score")
    n_graded = scores.groupby("system")["essay_id"].nunique()

    # the essays and their groups
    rows = []
    for grouping, members in groupings.items():
        sub = table[table[grouping].isin(members)]
        for g, cell in sub.groupby(grouping):
            rows.append({"grouping": GROUPING_NAMES.get(grouping, grouping), "group": g, "essays": len(cell),
                         "mean Overall": cell["rating"].mean(), "qualified": cell["qualified"].mean()})
    groups = pd.DataFrame(rows)

    # agreement with the human score
    overall = agreement.agreement_table(graded, "score", "rating", by=["system"])
    overall["label mass"] = scores.groupby("system")["label_mass"].median().reindex(overall["system"]).to_numpy()
    best = overall.loc[overall["spearman"].idxmax()]
    per_prompt = agreement.agreement_table(graded, "score", "rating", by=["system", "topic"])
    per_prompt = per_prompt[per_prompt["n"] >= min_prompt_essays]

    # selection in random pools
    gap_kwargs = dict(k=ks, rounds=rounds, pool_size=pool_size)
    gaps = pd.concat([essays.essay_gaps(table, graders, grouping, seed=seed, **gap_kwargs)
                      for grouping in groupings], ignore_index=True)
    intervals = pd.concat([essays.essay_gap_intervals(table, graders, grouping, n_boot=n_boot, seed=seed,
                                                      **gap_kwargs) for grouping in groupings], ignore_index=True)
    main = intervals[intervals["k"] == k_main]
    diff = main[(main["metric"] == "dDP_minus_human") & (main["grader"] != essays.HUMAN)]
    clear = diff[(diff["ci_low"] > 0) | (diff["ci_high"] < 0)]
    at_k = gaps[gaps["k"] == k_main]
    human_race = at_k[(at_k["grader"] == essays.HUMAN) & (at_k["grouping"] == "race_ethnicity")]
    largest = []
    for grouping in groupings:
        models = at_k[(at_k["grader"] != essays.HUMAN) & (at_k["grouping"] == grouping)]
        for m in STUDY_GAPS:
            row = models.loc[models[m].abs().idxmax()]
            largest.append({"grouping": GROUPING_NAMES.get(grouping, grouping), "metric": m, "gap": row[m],
                            "group": row["group"], "system": row["grader"], "key": f"max_{m}_{grouping}"})
    largest = pd.DataFrame(largest)

    # score-level metrics and Table 1's essay rows
    long = table.melt(id_vars=[c for c in table.columns if c not in graders], value_vars=graders,
                      var_name="grader", value_name="given_grade")
    frames = []
    for grouping, members in groupings.items():
        sub = long[long[grouping].isin(members)]
        bt = metrics.bias_table(sub, "given_grade", grouping, references[grouping], by=["grader"],
                                qualified="qualified")
        frames.append(bt.rename(columns={grouping: "group"}).assign(grouping=grouping))
    all_metrics = pd.concat(frames, ignore_index=True)
    score_metrics = all_metrics[["grouping", "grader", "group", "rabbi", "avg_gap", "jsd", "emd"]].assign(
        grouping=all_metrics["grouping"].map(lambda g: GROUPING_NAMES.get(g, g)))
    models_at_k = at_k[at_k["grader"] != essays.HUMAN]
    points = all_metrics[all_metrics["grader"] != essays.HUMAN].merge(
        models_at_k[["grouping", "grader", "group", "dDP", "dEO"]], on=["grouping", "grader", "group"],
        validate="one_to_one")
    ours = validity.validity_table(points, ["jsd", "emd", "avg_gap", "rabbi"], list(STUDY_GAPS), dropna=True)
    paper = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    paper = paper[(paper["task"] == "essay grading") & (paper["setting"] == "pointwise")]
    side = ours[["metric", "gap", "r", "ci_low", "ci_high", "n"]].merge(
        paper[["metric", "gap", "r"]].rename(columns={"r": "paper r"}), on=["metric", "gap"], how="left")
    rabbi_ddp = side[(side["metric"] == "rabbi") & (side["gap"] == "dDP")].iloc[0]

    scalars: dict[str, Any] = {
        "sample_n": len(sample), "pool_size": int(pool_size), "essay_k_main": int(k_main),
        "essay_n_essays": len(table), "essay_n_systems": len(system_ids),
        "qualified_share": float(table["qualified"].mean()),
        "essay_best_spearman": float(best["spearman"]), "essay_best_system": str(best["system"]),
        "essay_best_qwk": float(overall["qwk"].max()),
        "essay_min_mass": float(overall["label mass"].min()), "essay_max_mass": float(overall["label mass"].max()),
        **{f"spearman_{r['system']}": float(r["spearman"]) for _, r in overall.iterrows()},
        **{f"qwk_{r['system']}": float(r["qwk"]) for _, r in overall.iterrows()},
        "prompt_n": int(per_prompt["topic"].nunique()), "min_prompt_essays": int(min_prompt_essays),
        "prompt_rho_median": float(per_prompt["spearman"].median()) if len(per_prompt) else float("nan"),
        "rounds": int(rounds), "n_boot": int(n_boot),
        "vs_human_n": len(diff), "vs_human_clear_n": len(clear), "vs_human_widen_n": int((clear["estimate"] < 0).sum()),
        **{row["key"]: float(row["gap"]) for _, row in largest.iterrows()},
        "max_abs_rabbi_model": float(score_metrics.loc[score_metrics["grader"] != essays.HUMAN, "rabbi"].abs().max()),
        "max_abs_rabbi_human": float(score_metrics.loc[score_metrics["grader"] == essays.HUMAN, "rabbi"].abs().max()),
        "validity_points_n": len(points), "ours_rabbi_dDP_r": float(rabbi_ddp["r"]),
        "paper_rabbi_dDP_r": float(rabbi_ddp["paper r"]),
    }
    phrases = {
        "essay_systems": ", ".join(system_ids),
        "essay_status": status_phrase(system_ids, n_graded, len(sample), len(table)),
        "essay_best_qwk_text": no_negative_zero(overall["qwk"].max()),
        "agreement_verdict": agreement.agreement_verdict(overall["spearman"]),
        "agreement_list": agreement_list(overall),
    }
    if len(human_race):
        worst_h = human_race.loc[human_race["dDP"].abs().idxmax()]
        scalars["human_max_dDP_race"] = float(worst_h["dDP"])
        phrases["human_max_dDP_race_group"] = str(worst_h["group"])
    return RealEssayFindings(
        table=table, graded=graded, groups=groups, overall=overall, per_prompt=per_prompt, gaps=gaps,
        intervals=intervals, largest=largest.drop(columns="key"), score_metrics=score_metrics, validity=side,
        values=scalars, phrases=phrases,
        parameters={"systems": system_ids, "graders": graders, "ks": ks, "k_main": k_main, "pool_size": pool_size,
                    "rounds": rounds, "n_boot": n_boot, "min_prompt_essays": min_prompt_essays, "seed": seed,
                    "max_essays": max_essays})


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_agreement(findings: RealEssayFindings) -> plt.Figure:
    """Each system's mean expected grade per human score (95% intervals), and its Spearman ρ per prompt."""
    palette = system_palette(findings.parameters["systems"])
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.6), gridspec_kw={"width_ratios": [1.6, 1]})
    sns.pointplot(findings.graded, x="rating", y="score", hue="system", palette=palette, errorbar=("ci", 95),
                  dodge=0.4, linestyle="none", markersize=4, ax=axes[0])
    label_axes(axes[0], title="Expected grade by human score", x="human Overall (1-5)",
               y="expected grade (1-5), mean")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[0].get_legend().remove()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    if len(findings.per_prompt):
        shown = [s for s in findings.parameters["systems"] if s in set(findings.per_prompt["system"])]
        boxes = axes[1].boxplot([findings.per_prompt.loc[findings.per_prompt["system"] == s, "spearman"]
                                 for s in shown], tick_labels=shown, patch_artist=True,
                                medianprops={"color": "white", "lw": 1.5})
        for box, system in zip(boxes["boxes"], shown):
            box.set_facecolor(palette[system])
        axes[1].axhline(0, color="0.4", lw=0.8)
        axes[1].tick_params(axis="x", labelrotation=60, labelsize=9)
    label_axes(axes[1], title="Per prompt", x="", y="Spearman ρ with Overall")
    return fig


def figure_gaps(findings: RealEssayFindings) -> plt.Figure:
    """ΔDP and ΔEO at ``k_main`` per group and grader, with 95% bootstrap intervals (the human score in dark grey)."""
    p = findings.parameters
    graders, k_main = p["graders"], p["k_main"]
    colors = {essays.HUMAN: "0.2", **system_palette(p["systems"])}
    main = findings.intervals[(findings.intervals["k"] == k_main) & findings.intervals["metric"].isin(list(STUDY_GAPS))]
    shown = main.assign(label=[f"{g}\n({GROUPING_NAMES.get(x, x)})" for g, x in zip(main["group"], main["grouping"])])
    order = list(dict.fromkeys(shown["label"]))
    offsets = {gr: (i - (len(graders) - 1) / 2) * 0.16 for i, gr in enumerate(graders)}
    panels = list(dict.fromkeys(shown["metric"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels) + 1.6, 0.5 * len(order) + 2.2),
                             sharex=True, sharey=True, squeeze=False)
    for ax, metric in zip(axes.flat, panels):
        part = shown[shown["metric"] == metric]
        for gr in graders:
            d = part[part["grader"] == gr]
            ys = [order.index(label) + offsets[gr] for label in d["label"]]
            # a percentile interval need not contain the estimate (few replicates): such a side is drawn as 0
            xerr = np.clip([d["estimate"] - d["ci_low"], d["ci_high"] - d["estimate"]], 0, None)
            ax.errorbar(d["estimate"], ys, xerr=xerr, fmt="o", ms=4, color=colors[gr], label=gr)
        ax.set_yticks(range(len(order)), order, fontsize=9)
        ax.axvline(0, color="0.5", lw=0.8)
        label_axes(ax, title=f"{metric} at k = {k_main}", x="", y="group (grouping)" if ax is axes.flat[0] else "")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.supxlabel("gap in selection rate, group − reference (share of appearances selected)", fontsize=10)
    fig.suptitle("Selection-rate gaps against the reference group, with 95% intervals")
    return fig
