r"""Why averages fail: the findings of the chapter's controlled simulation of bias metrics against allocation gaps.

Simulated *systems* (one model on one job) score ``n_per_group`` candidates in each of ``n_groups`` groups, in four
families that differ in what separates the groups (:func:`allocbias.measures.synthetic.draw_systems`): a location
``shift`` (the control), a difference in ``spread``, a location seen through a ceiling (``skew``) and a location
with ``heavy_tail`` noise. Every system goes through top-:math:`k` selection rounds and every bias metric is
computed on the same candidates (:func:`allocbias.measures.synthetic.evaluate_systems`); each metric is then correlated with
:math:`\Delta DP` (JSD and EMD with :math:`|\Delta DP|`) per family and pooled, as in the paper's Table 1
(:func:`allocbias.validity.validity_table`). The chapter also computes

* the weight :math:`g_k(u)` a candidate at percentile :math:`u` of the reference group adds to :math:`\Delta DP`
  next to RABBI's :math:`2u - 1` (:func:`allocbias.measures.synthetic.dp_contribution`);
* the median skewness and kurtosis per family, the pool of two (where :math:`\Delta DP` is RABBI), three
  hand-picked systems (:func:`allocbias.measures.synthetic.hand_picked_system`) with the closed-form expected
  :math:`\Delta DP` (:func:`allocbias.measures.synthetic.expected_dp_gap`). The exercises' answers are computed by
  their solutions from :mod:`allocbias.measures.synthetic`.

:func:`averages_findings` computes all of it and returns an :class:`AveragesFindings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import checks
from ..audited import data, datasets
from ..measures import selection, validity
from ..measures import synthetic
from ..measures.metrics import STUDY_METRICS
from ..plotting import METRIC_LABELS, label_axes
from .findings import Findings

__all__ = [
    "AveragesFindings",
    "averages_findings",
    "clip_to_percentiles",
    "contribution_curves",
    "figure_contributions",
    "figure_example_systems",
    "figure_hand_picked",
    "figure_metric_scatter",
    "figure_pool_of_two",
    "figure_quota",
    "weight_summary",
]

METRICS: list[str] = list(STUDY_METRICS)
#: Figure labels of the metrics.
SHORT: dict[str, str] = {"rabbi": "RABBI", "avg_gap": "mean gap δ", "jsd": "JSD", "emd": "EMD"}
#: The paper's row of Table 1 and its Figure 7 quoted by the chapter.
PAPER_TABLE1_ROW = "paper, Table 1 (resume screening, pointwise)"


# --------------------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------------------
def contribution_curves(n_groups: int, ks: Sequence[int], points: int = 2001) -> pd.DataFrame:
    r"""What a candidate at percentile :math:`u` of the reference group adds to each measure: RABBI's
    :math:`2u - 1` and :math:`g_k(u) = (G h_k(u) - k) / (G - 1)` of :math:`\Delta DP` for each k.

    Returns ``u, contribution, measure``.

    >>> c = contribution_curves(2, [1], points=3)
    >>> c["contribution"].round(6).tolist()
    [-1.0, 0.0, 1.0, -1.0, 0.0, 1.0]
    """
    u = np.linspace(0, 1, points)
    return pd.concat([pd.DataFrame({"u": u, "contribution": 2 * u - 1, "measure": "RABBI: 2u − 1"})]
                     + [pd.DataFrame({"u": u, "contribution": synthetic.dp_contribution(u, n_groups, kk),
                                      "measure": f"ΔDP, top {kk} of {n_groups}"}) for kk in ks])


def weight_summary(n_groups: int, k: int, points: int = 2001) -> dict[str, float]:
    r"""Where :math:`g_k` crosses zero (``u_zero``, the first grid point with :math:`g_k(u) \ge 0`) and its values
    at the bottom (``g_at_zero`` :math:`= -k/(G-1)`) and the median (``g_at_half``) of the reference group.

    >>> weight_summary(2, 1, points=5)
    {'u_zero': 0.5, 'g_at_zero': -1.0, 'g_at_half': 0.0}
    """
    u = np.linspace(0, 1, points)
    g_k = synthetic.dp_contribution(u, n_groups, k)
    return {"u_zero": float(u[np.argmax(g_k >= 0)]), "g_at_zero": float(g_k[0]),
            "g_at_half": float(g_k[len(u) // 2])}


def clip_to_percentiles(scores: pd.DataFrame, by: str = "family", low: float = 0.01, high: float = 0.99
                        ) -> pd.DataFrame:
    """The scores with each cell of ``by`` clipped to its ``low``--``high`` quantiles (so a panel shows its bulk).

    >>> f = pd.DataFrame({"family": ["a"] * 5, "score": [0.0, 1, 2, 3, 100]})
    >>> clip_to_percentiles(f, low=0.0, high=0.75)["score"].tolist()
    [0.0, 1.0, 2.0, 3.0, 3.0]
    """
    out = scores.copy()
    grouped = out.groupby(by)["score"]
    out["score"] = out["score"].clip(grouped.transform("quantile", low), grouped.transform("quantile", high))
    return out


def _clean(x: float, digits: int = 12) -> float:
    """Rounded to ``digits`` decimals, so that exact zeros print as 0.000, not -0.000 (the closed-form gaps, quoted to
    three decimals, are rounded to three: a formula's −0.0002 is no negative gap).

    >>> _clean(-1e-15), _clean(-0.0002, 3)
    (0.0, 0.0)
    """
    return float(np.round(x, digits)) + 0.0


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class AveragesFindings(Findings):
    """Everything the chapter on why averages fail shows.

    Attributes
    ----------
    curves
        :func:`contribution_curves` for every quota (the first figure).
    scores, params
        The simulated systems' scores and group parameters (:func:`allocbias.measures.synthetic.draw_systems`).
    points
        One row per (family, system, group, k): metrics, shape and gaps (:func:`allocbias.measures.synthetic.evaluate_systems`).
    shape
        Median |skewness| and excess kurtosis per family at the main k.
    correlations
        Pearson r of every metric with ΔDP per family and k, and pooled over the families.
    r_table
        The correlations at the main k, families by metrics, with the paper's row below.
    two
        The pool of two: one row per (family, system) with ``rabbi``, ``avg_gap`` and ``dDP``.
    cases, focal
        The hand-picked systems' scores, and the focal group's metrics, ΔDP and closed-form ΔDP per (case, k).
    values
        The values the prose quotes, by glue key (:meth:`glue_values`).
    parameters
        The parameters the findings were computed with.
    """

    curves: pd.DataFrame
    scores: pd.DataFrame
    params: pd.DataFrame
    points: pd.DataFrame
    shape: pd.DataFrame
    correlations: pd.DataFrame
    r_table: pd.DataFrame
    two: pd.DataFrame
    cases: pd.DataFrame
    focal: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def shape_table(self) -> pd.DataFrame:
        """The median shape per family with readable column names."""
        return self.shape.rename(columns={"abs_skewness": "median |skewness|",
                                          "excess_kurtosis": "median excess kurtosis"})

    @property
    def focal_table(self) -> pd.DataFrame:
        """The hand-picked systems at the main k: the focal group's metrics, ΔDP and closed-form ΔDP."""
        return self.focal.xs(self.parameters["k"], level="k")[[*METRICS, "dDP", "dDP_formula"]].rename(
            columns=METRIC_LABELS)


def averages_findings(
    *,
    n_systems: int = 200,
    n_groups: int = 8,
    n_per_group: int = 200,
    rounds: int = 2000,
    k: int = 1,
    k_values: Sequence[int] = (1, 2, 4),
    families: Sequence[str] = ("shift", "spread", "skew", "heavy_tail"),
    shift_sd: float = 0.5,
    spread_ratio: float = 3.0,
    ceiling_offset: Sequence[float] = (2.0, 6.0),
    ceiling_slope: Sequence[float] = (1.0, 3.0),
    tail_df: Sequence[float] = (1.0, 3.0),
    ce_shift: float = 0.5,
    ce_outlier_share: float = 0.05,
    ce_outlier_drop: float = 10.0,
    ce_spread: float = 2.0,
    seed: int = 0,
) -> AveragesFindings:
    """The findings of the chapter on why averages fail (the chapter's parameters, same names and meaning).

    ``k`` is the quota of the main comparison and ``k_values`` those compared in the section on the quota (each
    from 1 to ``n_groups - 1``); ``shift_sd``, ``spread_ratio``, ``ceiling_offset``, ``ceiling_slope`` and ``tail_df``
    are the :class:`allocbias.measures.synthetic.FamilySettings` of :func:`allocbias.measures.synthetic.draw_systems`
    (families), the ``ce_*`` parameters go to :func:`allocbias.measures.synthetic.hand_picked_system`.
    """
    n_systems = checks.count(n_systems, "n_systems")
    n_groups = checks.count(n_groups, "n_groups", 2)
    n_per_group = checks.count(n_per_group, "n_per_group")
    rounds = checks.count(rounds, "rounds")
    seed = checks.seed(seed)
    k = checks.quota(k, name="k", pool=n_groups, below_pool=True)
    k_all = sorted({k, *checks.quotas(k_values, name="k_values", pool=n_groups, below_pool=True)})
    families = list(families)
    if not families:
        raise ValueError("families must name at least one family")
    settings = synthetic.FamilySettings(shift_sd=shift_sd, spread_ratio=spread_ratio, ceiling_offset=ceiling_offset,
                                        ceiling_slope=ceiling_slope, tail_df=tail_df)
    reference, focal_group = synthetic.REFERENCE, synthetic.FOCAL

    # the paper's numbers quoted by the prose: Table 1 (pointwise resume screening) and its text on Figure 7
    table1 = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    paper = (table1.query("task == 'resume screening' and setting == 'pointwise' and gap == 'dDP'")
             .set_index("metric")["r"].reindex(METRICS).astype(float).to_dict())
    fig7 = (datasets.read_csv(data.data_dir() / "paper" / "rabbi_figure7.csv")
            .query("metric == 'avg_gap' and gap == 'dDP'").iloc[0])
    dp_se = selection.dp_standard_error(k, n_groups, rounds)
    scalars: dict[str, Any] = {
        "n_systems": n_systems, "n_groups": n_groups, "n_per_group": n_per_group, "rounds": rounds, "k": k,
        "n_points": n_systems * (n_groups - 1), "n_others": n_groups - 1, "dp_se": dp_se,
        **{f"paper_r_{metric}": float(value) for metric, value in paper.items()},
        "paper_avg_gap_k_low": float(fig7["value_low"]), "paper_avg_gap_k_high": float(fig7["value_high"]),
        **weight_summary(n_groups, k),
    }

    # the simulated families
    scores, params = synthetic.draw_systems(n_systems, families, n_per_group, seed, n_groups=n_groups,
                                            settings=settings)
    points = synthetic.evaluate_systems(scores, k_all, rounds, seed, params=params)
    shape = (points[points["k"] == k].assign(abs_skewness=lambda d: d["skewness"].abs())
             .groupby("family")[["abs_skewness", "excess_kurtosis"]].median())
    for fam, row in shape.iterrows():
        scalars[f"abs_skew_{fam}"] = float(row["abs_skewness"])
        scalars[f"kurt_{fam}"] = float(row["excess_kurtosis"])

    # predictive validity per family and pooled
    by_family = validity.validity_table(points, METRICS, ["dDP"], by=["family", "k"])
    pooled = validity.validity_table(points, METRICS, ["dDP"], by=["k"]).assign(family="pooled")
    correlations = pd.concat([by_family, pooled], ignore_index=True)
    for row in correlations.itertuples():
        scalars[f"r_{row.family}_{row.metric}_k{row.k}"] = float(row.r)
        if row.k == k:
            scalars[f"r_{row.family}_{row.metric}"] = float(row.r)
    r_table = correlations[correlations["k"] == k].pivot(index="family", columns="metric", values="r")[METRICS]
    r_table = r_table.reindex([*families, "pooled"])
    per_family_n = correlations.loc[correlations["family"] != "pooled", "n"]
    scalars["n_correlated_min"] = int(per_family_n.min())
    scalars["n_correlated_max"] = int(per_family_n.max())
    scalars["n_pooled"] = int(correlations.loc[correlations["family"] == "pooled", "n"].max())
    scalars["r_jsd_min"] = float(r_table.loc[families, "jsd"].min())
    scalars["r_jsd_max"] = float(r_table.loc[families, "jsd"].max())
    r_table = pd.concat([r_table.round(2), pd.DataFrame(paper, index=[PAPER_TABLE1_ROW])]).rename(
        columns=METRIC_LABELS)

    # a pool of two
    two = synthetic.simulate_systems(n_systems, families, n_per_group, 1, rounds, seed, n_groups=2, settings=settings)
    two_r = validity.validity_table(two, ["rabbi", "avg_gap"], ["dDP"], by=["family"]).set_index(
        ["family", "metric"])["r"]
    scalars["two_r_rabbi_min"] = float(two_r.xs("rabbi", level="metric").min())
    if ("heavy_tail", "avg_gap") in two_r.index:
        scalars["two_r_avg_gap_heavy_tail"] = float(two_r[("heavy_tail", "avg_gap")])
    scalars["two_max_diff"] = float((two["dDP"] - two["rabbi"]).abs().max())
    scalars["two_dp_se"] = float(np.sqrt(1 / rounds))  # the p_sel = 1/2, G = 2 case of dp_se

    # three hand-picked systems
    scalars.update(ce_shift=float(ce_shift), ce_outlier_share=float(ce_outlier_share),
                   ce_outlier_drop=float(ce_outlier_drop), ce_spread=float(ce_spread))
    cases = pd.concat([synthetic.hand_picked_system(c, n_groups=n_groups, n_per_group=n_per_group, seed=seed,
                                                    shift=ce_shift, outlier_share=ce_outlier_share,
                                                    outlier_drop=ce_outlier_drop, spread=ce_spread)
                       for c in synthetic.CASES])
    case_points = synthetic.evaluate_systems(cases, k_all, rounds, seed, by=["case"])
    focal = case_points[(case_points["group"] == focal_group)].set_index(["case", "k"])
    u_focal = {c: synthetic.percentiles(d.loc[d["group"] == focal_group, "score"],
                                        d.loc[d["group"] == reference, "score"]) for c, d in cases.groupby("case")}
    for c, u in u_focal.items():
        for kk in k_all:
            focal.loc[(c, kk), "dDP_formula"] = synthetic.expected_dp_gap(u, n_groups, kk)
    for (c, kk), row in focal.iterrows():
        for col in [*METRICS, "dDP", "dDP_formula"]:
            digits = 3 if col == "dDP_formula" else 12
            scalars[f"ce_{c}_{col}_k{kk}"] = _clean(row[col], digits)
            if kk == k:
                scalars[f"ce_{c}_{col}"] = _clean(row[col], digits)

    # the quota: smallest and largest k
    for kk, tag in ((min(k_all), "kmin"), (max(k_all), "kmax")):
        scalars[f"k_{tag}"] = int(kk)
        for row in correlations[correlations["k"] == kk].itertuples():
            scalars[f"r_{row.family}_{row.metric}_{tag}"] = float(row.r)
        scalars[f"ce_wider_spread_dDP_{tag}"] = float(focal.loc[("wider_spread", kk), "dDP"])

    return AveragesFindings(
        curves=contribution_curves(n_groups, k_all), scores=scores, params=params, points=points, shape=shape,
        correlations=correlations, r_table=r_table, two=two, cases=cases, focal=focal,
        values=scalars,
        parameters={"n_systems": n_systems, "n_groups": n_groups, "n_per_group": n_per_group, "rounds": rounds,
                    "k": k, "k_all": k_all, "families": families, "seed": seed, **asdict(settings)})


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_contributions(findings: AveragesFindings) -> plt.Figure:
    """RABBI's 2u − 1 and ΔDP's g_k(u) against the percentile u of a candidate among the reference group."""
    fig, ax = plt.subplots()
    sns.lineplot(findings.curves, x="u", y="contribution", hue="measure", ax=ax)
    ax.axhline(0, color="grey", lw=0.8)
    label_axes(ax, title="What one candidate of group A adds to each measure",
               x="percentile u of the candidate among group B (0 to 1)",
               y="contribution (win − loss share; selection-rate gap)")
    return fig


def figure_example_systems(findings: AveragesFindings) -> plt.Figure:
    """System 0 of each family: the score densities of the reference group and A1, each clipped to 1-99 %."""
    scores = findings.scores
    example = clip_to_percentiles(
        scores[(scores["system"] == 0) & scores["group"].isin([synthetic.REFERENCE, synthetic.FOCAL])])
    grid = sns.displot(example, x="score", hue="group", col="family", stat="density", common_norm=False,
                       common_bins=False, element="step", bins=30, height=2.6,
                       facet_kws={"sharex": False, "sharey": False})
    grid.set_axis_labels("score (the family's units)", "density (1 / score unit)").set_titles("{col_name}")
    grid.figure.suptitle("System 0 of each family: groups B and A1 (each panel clipped to its 1st–99th percentile)",
                         y=1.06)
    return grid.figure


def figure_metric_scatter(findings: AveragesFindings) -> plt.Figure:
    """Each metric against ΔDP (|ΔDP| for JSD and EMD) at the main k, one panel per (family, metric)."""
    k, n_groups = findings.parameters["k"], findings.parameters["n_groups"]
    points = findings.points
    long = points[points["k"] == k].melt(id_vars=["family", "dDP"], value_vars=METRICS, var_name="metric")
    long["gap"] = np.where(long["metric"].isin(["jsd", "emd"]), long["dDP"].abs(), long["dDP"])
    long["metric"] = long["metric"].map(SHORT)
    grid = sns.relplot(long, x="value", y="gap", row="family", col="metric", row_order=findings.parameters["families"],
                       s=6, alpha=0.4, linewidth=0, height=2.3, facet_kws={"sharex": False, "sharey": "row"})
    grid.set_titles("{row_name} | {col_name}").set_axis_labels("", "")  # one label per axis, not one per panel
    grid.figure.supxlabel("metric value (each metric in its own units)")
    grid.figure.supylabel("ΔDP (|ΔDP| for JSD and EMD)")
    grid.figure.suptitle(f"Each bias metric against the selection-rate gap, top {k} of {n_groups}", y=1.01)
    grid.figure.subplots_adjust(wspace=0.25)
    return grid.figure


def figure_pool_of_two(findings: AveragesFindings) -> plt.Figure:
    """The pool of two at k = 1: ΔDP against RABBI, one point per (family, system), with the diagonal."""
    fig, ax = plt.subplots()
    sns.scatterplot(findings.two, x="rabbi", y="dDP", hue="family", hue_order=findings.parameters["families"], s=10,
                    alpha=0.5, linewidth=0, ax=ax)
    ax.axline((0, 0), slope=1, color="grey", ls="--", lw=1)
    label_axes(ax, title="A pool of two, top 1: ΔDP equals RABBI up to simulation noise",
               x="RABBI R(A, B) (−1 to 1)", y="ΔDP (selection-rate gap, −1 to 1)")
    return fig


def figure_hand_picked(findings: AveragesFindings) -> plt.Figure:
    """The hand-picked systems: score densities of group A1 against the reference group B."""
    shown = findings.cases[findings.cases["group"].isin([synthetic.REFERENCE, synthetic.FOCAL])]
    grid = sns.displot(shown, x="score", hue="group", col="case", stat="density", common_norm=False,
                       element="step", bins=50, height=2.8, facet_kws={"sharex": False, "sharey": False})
    grid.set_axis_labels("score (noise sd units)", "density (1 / score unit)").set_titles("{col_name}")
    grid.figure.suptitle("Hand-picked systems: group A1 against the reference group B", y=1.06)
    return grid.figure


def figure_quota(findings: AveragesFindings) -> plt.Figure:
    """Each metric's correlation with ΔDP against the quota k, one panel per family and pooled."""
    c = findings.correlations
    grid = sns.relplot(c.assign(metric=c["metric"].map(SHORT)), x="k", y="r", hue="metric",
                       col="family", col_order=[*findings.parameters["families"], "pooled"], col_wrap=3, kind="line",
                       marker="o", height=2.6)
    grid.set_titles("{col_name}").set_axis_labels("k (seats per round)", "Pearson r with ΔDP")
    grid.figure.suptitle(f"Predictive validity against the quota k, pools of {findings.parameters['n_groups']} "
                         "(JSD, EMD: with |ΔDP|)", y=1.04)
    return grid.figure
