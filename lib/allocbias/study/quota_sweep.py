r"""The quota sweep: the findings of the chapter on predictive validity from one seat to five.

A round of the study draws one candidate per group (:math:`G = 8`) and selects the top :math:`k`. The paper's
Table 1 tests the bias metrics at :math:`k = 1`; its Figure 7 repeats the test for :math:`k = 1, \dots, 5`. This
module sweeps the quota over the same (system, job, group) points of the study's stored scores
(:func:`allocbias.measures.tables.study_points`, the same pools for every :math:`k`) and computes

* each group's selection-rate gap :math:`\Delta DP` per quota, and how many points change its sign over the quotas;
* the simulation noise of :math:`\Delta DP` per quota (:func:`allocbias.selection.dp_standard_error`) against the
  spread of the gaps over the points;
* every metric's Pearson :math:`r` with :math:`\Delta DP` and :math:`\Delta EO` per quota
  (:func:`allocbias.validity.validity_table` with ``by=["k"]``), pooled and within one system;
* the same sweep beside its controls (:func:`allocbias.validity.validity_controls`: permutation null, held-out
  :math:`r`, the gap's split-half reliability);
* the numbers the paper states about its Figure 7 (``data/paper/rabbi_figure7.csv``) and its Table 1's
  :math:`k = 1` values. The exercises' answers (every quota from 1 to :math:`G - 1`, the mirror symmetry of
  top-:math:`k` selection, the linearity of the selection weight :math:`g_k(u)`) are computed by their solutions.

:func:`quota_sweep_findings` computes all of it and returns a :class:`QuotaSweepFindings`; the ``figure_*``
functions draw the chapter's figures from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..measures import tables
from ..scoring import catalog
from .. import checks
from ..audited import data, datasets
from ..measures import selection, validity
from ..measures.metrics import STUDY_GAPS, STUDY_METRICS
from ..plotting import (GROUP_ORDER, LEGEND_POINTS, METRIC_SHORT, SEX_MARKERS, group_handles, group_palette,
                        label_axes, metric_palette, with_sex)
from .findings import Findings

__all__ = [
    "GAP_LABEL",
    "TREND",
    "QuotaSweepFindings",
    "averages_verdict",
    "figure_controls",
    "figure_gaps_by_quota",
    "figure_sweep",
    "noise_table",
    "quota_sweep_findings",
    "trend_word",
]

#: How the chapter writes each allocation gap.
GAP_LABEL: Mapping[str, str] = {"dDP": "ΔDP", "dEO": "ΔEO"}
#: A change of r smaller than this from the first to the last quota counts as flat.
TREND = 0.05


# --------------------------------------------------------------------------------------------------------------
# small, tested pieces
# --------------------------------------------------------------------------------------------------------------
def trend_word(first: float, last: float, threshold: float = TREND) -> str:
    """How a correlation moves from the first quota to the last: ``"rises"`` when ``last - first > threshold``,
    ``"falls"`` when ``first - last > threshold``, else ``"stays flat"``.

    >>> trend_word(0.2, 0.4), trend_word(0.4, 0.2), trend_word(0.40, 0.42)
    ('rises', 'falls', 'stays flat')
    """
    return "rises" if last - first > threshold else "falls" if first - last > threshold else "stays flat"


def averages_verdict(ours: Sequence[float] | pd.Series, low: float, high: float) -> str:
    """Whether the average gap fails on these systems as in the paper, whose text puts its :math:`r` with
    :math:`\\Delta DP` in ``[low, high]`` at every quota: ``ours`` holds our pooled :math:`r` per quota.

    >>> averages_verdict([0.6, 0.7], 0.13, 0.19)
    'the average gap does not fail on these systems as it does in the paper'
    >>> averages_verdict([0.15, 0.7], 0.13, 0.19)
    "the average gap falls in the paper's band at some quota"
    >>> averages_verdict([0.05, 0.7], 0.13, 0.19)
    "the average gap does worse than the paper's band"
    """
    ours = pd.Series(ours, dtype=float)
    in_band = ours.between(low, high)
    if not in_band.any() and ours.min() > high:
        return "the average gap does not fail on these systems as it does in the paper"
    if in_band.any():
        return "the average gap falls in the paper's band at some quota"
    return "the average gap does worse than the paper's band"


def noise_table(points: pd.DataFrame, quotas: Sequence[int], n_groups: int, rounds: int) -> pd.DataFrame:
    r"""Per quota, the simulation noise of :math:`\Delta DP` against the spread of the gaps over the points.

    For two groups treated alike the gap's standard error is :math:`\sqrt{2 p (1 - p) G / (G - 1) / R}` with
    :math:`p = k / G` (:func:`allocbias.selection.dp_standard_error`); the noise share of the variance is
    :math:`\min(1, se^2 / sd^2)` with :math:`sd` the standard deviation of :math:`\Delta DP` over the points (1 when
    the gaps do not vary).

    >>> pts = pd.DataFrame({"k": [1, 1, 1], "dDP": [0.0, 0.1, 0.2]})
    >>> t = noise_table(pts, [1], 8, 100)
    >>> t.index.tolist(), round(float(t.loc[1, "sd of ΔDP over points"]), 3)
    ([1], 0.1)
    """
    rows = []
    for q in quotas:
        p_sel = q / n_groups
        se = selection.dp_standard_error(q, n_groups, rounds)
        sd = float(points.loc[points["k"] == q, "dDP"].std())
        share = min(1.0, se**2 / sd**2) if sd > 0 else 1.0
        rows.append({"k": q, "share selected k/G": p_sel, "standard error of ΔDP": se, "sd of ΔDP over points": sd,
                     "noise share of the variance": share})
    return pd.DataFrame(rows).set_index("k")


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuotaSweepFindings(Findings):
    """Everything the quota chapter shows.

    * ``points``: the study points at every quota (:func:`allocbias.measures.tables.study_points`);
    * ``gaps_by_group``: mean :math:`\\Delta DP` per system, group and quota over the jobs (the first figure);
    * ``noise``: :func:`noise_table`; ``sweep``: :func:`allocbias.validity.validity_table` by quota;
      ``sweep_view``: its :math:`r` per gap, metric and quota (one row per gap and metric);
    * ``controls``: :attr:`allocbias.validity.ValidityControls.table` of both gaps at every quota;
      ``controls_view``: its columns a reader needs;
    * ``paper_k1``: the paper's Table 1 (pointwise résumé screening), ``figure7``: the numbers its text states
      about Figure 7; ``within``: RABBI's and the average gap's :math:`r` within each (quota, system);
    * ``values``: the scalars and phrases the prose quotes (:meth:`glue_values`); ``parameters``: what produced it.
    """

    points: pd.DataFrame
    gaps_by_group: pd.DataFrame
    noise: pd.DataFrame
    sweep: pd.DataFrame
    sweep_view: pd.DataFrame
    controls: pd.DataFrame
    controls_view: pd.DataFrame
    paper_k1: pd.DataFrame
    figure7: pd.DataFrame
    within: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def _paper_tables(table1: pd.DataFrame | None, figure7: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    if table1 is None:
        table1 = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    if figure7 is None:
        figure7 = datasets.read_csv(data.data_dir() / "paper" / "rabbi_figure7.csv")
    checks.require_columns(table1, ["task", "setting", "metric", "gap", "r"], "the paper's Table 1", nonempty=True)
    checks.require_columns(figure7, ["metric", "gap", "k_min", "k_max", "value_low", "value_high"],
                           "the paper's Figure 7 numbers", nonempty=True)
    paper_k1 = table1[(table1["task"] == "resume screening") & (table1["setting"] == "pointwise")]
    return paper_k1.set_index(["metric", "gap"]), figure7


def quota_sweep_findings(
    systems: Sequence[str],
    jobs: Sequence[str],
    names_per_group: int = 10,
    ks: Sequence[int] = (1, 2, 3, 4, 5),
    rounds: int = 2000,
    seed: int = 0,
    scores_root: str = "",
    n_perm: int = 200,
    n_splits: int = 50,
    *,
    scores: pd.DataFrame | None = None,
    paper_table1: pd.DataFrame | None = None,
    paper_figure7: pd.DataFrame | None = None,
) -> QuotaSweepFindings:
    r"""The quota chapter's findings, from the chapter's parameters.

    ``scores`` (default: the stored scores of ``systems`` on ``jobs``, :func:`allocbias.scoring.catalog.study_scores`
    under ``scores_root``) needs the columns ``system, job, resume_id, group, qualified, score``;
    ``paper_table1`` and ``paper_figure7`` default to ``data/paper/rabbi_table1.csv`` and
    ``rabbi_figure7.csv``. ``ks`` lists at least two distinct quotas between 1 and :math:`G - 1`.
    """
    n_groups = len(data.GROUPS)
    systems, jobs = list(systems), list(jobs)
    if not systems or not jobs:
        raise ValueError(f"systems and jobs must each name at least one, got systems={systems}, jobs={jobs}")
    quotas = sorted({int(q) for q in ks})
    if len(quotas) != len(ks) or len(quotas) < 2 or not all(1 <= q < n_groups for q in quotas):
        raise ValueError(f"ks must list at least two distinct quotas between 1 and {n_groups - 1}, got {ks}")
    if n_perm < 1 or n_splits < 1:
        raise ValueError(f"n_perm and n_splits must be at least 1, got n_perm={n_perm}, n_splits={n_splits}")
    rounds, seed = checks.count(rounds, "rounds"), checks.seed(seed)
    names_per_group = checks.count(names_per_group, "names_per_group")
    if scores is None:
        root = catalog.resolve_scores_root(scores_root)
        scores = catalog.study_scores(systems, jobs=jobs, names_per_group=names_per_group, seed=seed, root=root)
    checks.require_columns(scores, ["system", "job", "resume_id", "group", "qualified", "score"], "scores",
                           nonempty=True)
    paper_k1, figure7 = _paper_tables(paper_table1, paper_figure7)
    reference = data.REFERENCE_GROUP
    others = [g for g in GROUP_ORDER if g != reference]
    metrics_, gaps = list(STUDY_METRICS), list(STUDY_GAPS)
    k_first, k_last = quotas[0], quotas[-1]
    points = tables.study_points(scores, quotas, rounds, seed)
    values: dict[str, Any] = {}
    for name, value in dict(rounds=rounds, n_groups=n_groups, n_others=len(others), n_jobs=len(jobs),
                            n_systems=len(systems), n_points=int((points["k"] == k_first).sum()), n_ks=len(quotas),
                            k_first=k_first, k_last=k_last, half_k=n_groups // 2, n_perm=n_perm,
                            n_splits=n_splits).items():
        values[name] = int(value)
    values["ks_text"] = ", ".join(str(q) for q in quotas)
    values["trend_threshold"] = float(TREND)

    # the gaps by group and quota; points whose gap changes sign over the quotas
    gaps_by_group = points.groupby(["system", "group", "k"], observed=True)["dDP"].mean().reset_index()
    signs = np.sign(points.pivot_table(index=["system", "job", "group"], columns="k", values="dDP"))
    values["n_sign_change"] = int((signs.nunique(axis=1) > 1).sum())

    # simulation noise per quota
    noise = noise_table(points, quotas, n_groups, rounds)
    for q, row in noise.iterrows():
        for key, column in (("parity", "share selected k/G"), ("dp_se", "standard error of ΔDP"),
                            ("sd_dDP", "sd of ΔDP over points"), ("noise_share", "noise share of the variance")):
            values[f"{key}_k{q}"] = float(row[column])
    values["noise_share_min"] = float(noise["noise share of the variance"].min())
    values["noise_share_max"] = float(noise["noise share of the variance"].max())

    # the sweep
    sweep = validity.validity_table(points, metrics_, gaps, by=["k"])
    for row in sweep.itertuples():
        values[f"r_{row.metric}_{row.gap}_k{row.k}"] = float(row.r)
    values["n_correlated_min"] = int(sweep["n"].min())
    values["n_correlated_max"] = int(sweep["n"].max())
    r = sweep.set_index(["metric", "gap", "k"])["r"].sort_index()
    for metric in metrics_:
        for gap in gaps:
            first, last = r[(metric, gap, k_first)], r[(metric, gap, k_last)]
            values[f"trend_{metric}_{gap}"] = trend_word(first, last)
            values[f"best_k_{metric}_{gap}"] = int(r.loc[(metric, gap)].idxmax())
            values[f"r_{metric}_{gap}_first"] = float(first)
            values[f"r_{metric}_{gap}_last"] = float(last)
            values[f"r_{metric}_{gap}_min"] = float(r.loc[(metric, gap)].min())
            values[f"r_{metric}_{gap}_max"] = float(r.loc[(metric, gap)].max())
    for gap in gaps:
        winners = r.xs(gap, level="gap").unstack("metric").idxmax(axis=1)
        values[f"n_k_rabbi_best_{gap}"] = int((winners == "rabbi").sum())
    sweep_view = (sweep.assign(gap=sweep["gap"].map(GAP_LABEL), metric=sweep["metric"].map(METRIC_SHORT))
                  .pivot_table(index=["gap", "metric"], columns="k", values="r", sort=False)
                  .rename(columns=lambda k: f"r at k = {k}").rename_axis(columns=None).reset_index())

    # the sweep beside its controls
    controls = pd.concat([validity.validity_controls(scores, reference=reference, k=quotas, gap=gap, design="draws",
                                                     system=["system", "job"], pool="resume_id",
                                                     qualified="qualified", n_perm=n_perm, n_splits=n_splits,
                                                     seed=seed).table
                          for gap in gaps], ignore_index=True)
    glued = validity.controls_glue(controls)
    values.update(glued)
    values["ctl_heldout_order_first"] = glued[f"ctl_heldout_order_dDP_k{k_first}"]
    for (metric, gap), part in controls.groupby(["metric", "gap"]):
        values[f"ctl_n_k_tracks_{metric}_{gap}"] = int((validity.verdict_column(part) == validity.VERDICT_TRACKS).sum())
        values[f"ctl_heldout_min_{metric}_{gap}"] = float(part["heldout_mean"].min())
        values[f"ctl_heldout_max_{metric}_{gap}"] = float(part["heldout_mean"].max())
        values[f"ctl_ceiling_min_{metric}_{gap}"] = float(part["ceiling"].min())
        values[f"ctl_ceiling_max_{metric}_{gap}"] = float(part["ceiling"].max())
    controls_view = controls.assign(gap=controls["gap"].map(GAP_LABEL), metric=controls["metric"].map(METRIC_SHORT),
                                    verdict=validity.verdict_column(controls))[
        ["gap", "metric", "k", "verdict", "r", "null_mean", "null_hi", "heldout_mean", "heldout_ci_lo", "heldout_ci_hi",
         "heldout_null_hi", "ceiling"]]

    # next to the paper's Figure 7
    avg_band = figure7[(figure7["metric"] == "avg_gap") & (figure7["gap"] == "dDP")].iloc[0]
    values["paper_avg_low"] = float(avg_band["value_low"])
    values["paper_avg_high"] = float(avg_band["value_high"])
    values["paper_plateau_k"] = int(figure7[figure7["metric"] == "most metrics"].iloc[0]["value_low"])
    for metric in metrics_:
        values[f"paper_r_{metric}_dDP"] = float(paper_k1.loc[(metric, "dDP"), "r"])
    ours_avg = r.loc[("avg_gap", "dDP")]
    values["n_avg_in_band"] = int(ours_avg.between(avg_band["value_low"], avg_band["value_high"]).sum())

    # within one system: RABBI against the mean gap
    within = validity.validity_table(points, ["rabbi", "avg_gap"], ["dDP"], by=["k", "system"]).pivot(
        index=["k", "system"], columns="metric", values="r")
    avg_better = within["avg_gap"].abs() > within["rabbi"].abs()
    values["n_within_avg_better"] = int(avg_better.sum())
    values["n_within_cells"] = len(avg_better)
    values["n_within_avg_better_first"] = int(avg_better.xs(k_first, level="k").sum())
    values["averages_verdict"] = averages_verdict(ours_avg, avg_band["value_low"], avg_band["value_high"])

    return QuotaSweepFindings(
        points=points, gaps_by_group=gaps_by_group, noise=noise, sweep=sweep, sweep_view=sweep_view,
        controls=controls, controls_view=controls_view, paper_k1=paper_k1, figure7=figure7, within=within,
        values=values,
        parameters={"systems": systems, "jobs": jobs, "quotas": quotas, "rounds": rounds, "seed": seed,
                    "n_groups": n_groups, "others": others, "n_perm": n_perm, "n_splits": n_splits})


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def _pool_axis(findings: QuotaSweepFindings) -> str:
    return f"k (seats per round, pool of {findings.parameters['n_groups']})"


def figure_gaps_by_quota(findings: QuotaSweepFindings) -> Figure:
    """Each group's mean :math:`\\Delta DP` against White men per quota, one panel per system (a selection-rate
    difference, no unit; dashed lines: women)."""
    p = findings.parameters
    gaps = with_sex(findings.gaps_by_group)
    # a group's sex is its line style as well as its shade, so the two shades of one colour stay apart
    grid = sns.relplot(gaps, x="k", y="dDP", hue="group", hue_order=p["others"], palette=group_palette(),
                       style="sex", style_order=list(SEX_MARKERS), col="system", col_order=p["systems"], col_wrap=3,
                       kind="line", marker="o", height=2.9, aspect=1.15, legend=False)
    for ax in grid.axes.flat:
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(p["quotas"])
    grid.set_titles("{col_name}").set_axis_labels(_pool_axis(findings), "ΔDP vs White men")
    grid.add_legend(legend_data=group_handles(p["others"], kind="line"), title="group")  # colour and dash each
    grid.figure.suptitle(f"How each group's selection-rate gap changes with the quota (mean over {len(p['jobs'])} "
                         f"jobs, {p['rounds']} rounds per job)", y=1.03)
    return grid.figure


def figure_sweep(findings: QuotaSweepFindings) -> Figure:
    """Every metric's Pearson r with each gap per quota (95% intervals), with the paper's Table 1 values at
    k = 1 and the band its text gives for the average gap."""
    p, sweep, metrics_ = findings.parameters, findings.sweep, list(STUDY_METRICS)
    colours = metric_palette(metrics_)
    avg_band = findings.figure7[(findings.figure7["metric"] == "avg_gap") & (findings.figure7["gap"] == "dDP")].iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    for ax, gap in zip(axes, STUDY_GAPS):
        for i, m in enumerate(metrics_):
            part = sweep[(sweep["metric"] == m) & (sweep["gap"] == gap)].sort_values("k")
            ax.errorbar(part["k"] + (i - 1.5) * 0.07, part["r"],
                        yerr=[part["r"] - part["ci_low"], part["ci_high"] - part["r"]], color=colours[m], marker="o",
                        capsize=2, label=f"{METRIC_SHORT[m]}: ours")
            if 1 in p["quotas"]:
                ax.scatter([1 - 0.25], [findings.paper_k1.loc[(m, gap), "r"]], marker="D", s=60, facecolors="none",
                           edgecolors=colours[m], linewidths=1.5, label=f"{METRIC_SHORT[m]}: paper, Table 1 (k = 1)")
        if gap == "dDP":
            ax.fill_between([avg_band["k_min"], avg_band["k_max"]], avg_band["value_low"], avg_band["value_high"],
                            color=colours["avg_gap"], alpha=0.2,
                            label="average gap δ: paper's text, r in this band for k = 1 to 5")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(p["quotas"])
        ax.set_ylim(-1.05, 1.05)
        label_axes(ax, title=f"Correlation with {GAP_LABEL[gap]}" + (
            " (the paper's Figure 7)" if gap == "dDP" else " (not in the paper's Figure 7)"), x=_pool_axis(findings),
            y="Pearson r over the points (bars: 95% interval)" if gap == "dDP" else "")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=LEGEND_POINTS)
    fig.suptitle(f"Predictive validity against the quota k: {findings.values['n_points']} points per k "
                 "(JSD, EMD: against |gap|)")
    return fig


def figure_controls(findings: QuotaSweepFindings) -> Figure:
    """Per gap and quota, each metric's in-sample r, its permutation null (95% band) and its held-out r, under
    the ceiling set by the gap's split-half reliability."""
    controls, metrics_ = findings.controls, list(STUDY_METRICS)
    colours = metric_palette(metrics_)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, gap in zip(axes, STUDY_GAPS):
        for m in metrics_:
            part = controls[(controls["metric"] == m) & (controls["gap"] == gap)].sort_values("k")
            ax.plot(part["k"], part["r"], color=colours[m], marker="o", label=f"{METRIC_SHORT[m]}: in-sample r")
            ax.fill_between(part["k"], part["null_lo"], part["null_hi"], color=colours[m], alpha=0.12)
            ax.errorbar(part["k"], part["heldout_mean"],
                        yerr=[part["heldout_mean"] - part["heldout_lo"], part["heldout_hi"] - part["heldout_mean"]],
                        color=colours[m], marker="s", ls="--", capsize=2, label=f"{METRIC_SHORT[m]}: held-out r")
        signed = controls[(controls["metric"] == "rabbi") & (controls["gap"] == gap)].sort_values("k")
        ax.plot(signed["k"], signed["ceiling"], color="black", lw=1.2, ls=":",
                label="ceiling: √(reliability of the gap)")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(findings.parameters["quotas"])
        label_axes(ax, title=f"{GAP_LABEL[gap]}: in-sample, null (bands: 95% range) and held-out",
                   x=_pool_axis(findings), y="Pearson r" if gap == "dDP" else "")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=LEGEND_POINTS)
    fig.suptitle("Predictive validity against the quota, beside its controls (JSD, EMD: against |gap|)")
    return fig
