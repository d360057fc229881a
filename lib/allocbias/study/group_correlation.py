r"""Is a metric biased across groups? The findings of the chapter on per-group correlations (the paper's Figure 6).

For every group :math:`A` other than the reference (White men) and every metric :math:`m`, the Pearson r between
the metric and the allocation gap runs over the (system, job) points of that group,

.. math:: r_A(m, \Delta) = \mathrm{corr}_{(M, j)}\big(m_{M,j}(A, B),\ \Delta_{M,j}(A, B)\big),

with ``|Δ|`` for the non-directional JSD and EMD and the metric on qualified candidates for :math:`\Delta EO`
(:func:`allocbias.validity.validity_table` with ``by=["group"]``). The chapter then asks how precise each r is
(Fisher intervals), whether the spread :math:`\max_A r_A - \min_A r_A` exceeds what shuffling the groups within
each (system, job) gives (:func:`allocbias.validity.group_spread_test`), whether each metric tracks the gap for
each group out of sample (:func:`allocbias.validity.validity_controls` with ``per_group=True``, read by
:func:`allocbias.validity.verdict_words`),
and how well the systems separate strong from weak résumés (:func:`allocbias.measures.tables.quality_separation`).
:func:`group_correlation_findings` computes all of it and returns a :class:`GroupCorrelationFindings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from scipy import stats

from ..measures import tables
from ..scoring import runs
from ..audited.data import group_slug  # re-exported: the glue keys' group suffix
from .. import checks
from ..audited import data
from ..measures import validity
from ..measures.metrics import STUDY_GAPS, STUDY_METRICS
from ..plotting import GROUP_ORDER, METRIC_SHORT, label_axes, metric_palette
from ..scoring.systems import parse_system
from .findings import Findings

__all__ = [
    "GAPS",
    "GroupCorrelationFindings",
    "METRICS",
    "PAPER_PER_GROUP",
    "ci_overlap_share",
    "figure_correlations",
    "figure_intervals",
    "fisher_width_at_zero",
    "group_correlation_findings",
    "group_slug",
    "spread_summary",
]

METRICS: list[str] = list(STUDY_METRICS)
GAPS: list[str] = list(STUDY_GAPS)
#: the paper's points per group in its Figure 6: ten models x four jobs (its Appendix B and Section 4.1)
PAPER_PER_GROUP = 10 * 4



def fisher_width_at_zero(n: int, confidence: float) -> float:
    r"""Width of the Fisher interval of a correlation r = 0 from ``n`` points: :math:`2 \tanh(z / \sqrt{n - 3})`.

    >>> round(fisher_width_at_zero(40, 0.95), 4)
    0.623
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if n < 4:
        raise ValueError(f"n must be at least 4 for a Fisher interval, got {n}")
    z = float(stats.norm.ppf((1 + confidence) / 2))  # two-sided normal quantile
    return float(2 * np.tanh(z / np.sqrt(n - 3)))


def ci_overlap_share(table: pd.DataFrame) -> float:
    """Mean over (gap, metric) of the share of pairs of groups whose confidence intervals overlap.

    >>> t = pd.DataFrame({"gap": "dDP", "metric": "rabbi", "ci_low": [0.0, 0.5, 2.0], "ci_high": [1.0, 1.5, 3.0]})
    >>> round(ci_overlap_share(t), 4)  # (0,1) and (0.5,1.5) overlap; neither meets (2, 3)
    0.3333
    """
    checks.require_columns(table, ["gap", "metric", "ci_low", "ci_high"], "table", nonempty=True)
    overlap = [((lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None]))[np.triu_indices(len(lo), 1)].mean()
               for lo, hi in (part[["ci_low", "ci_high"]].to_numpy().T
                              for _, part in table.groupby(["gap", "metric"]))]
    return float(np.mean(overlap))


def spread_summary(table: pd.DataFrame, pooled: pd.DataFrame) -> pd.DataFrame:
    """Per (gap, metric): the pooled r, the smallest and largest per-group r and their groups, the spread
    (largest minus smallest) and the mean width of the groups' intervals. Indexed by (gap, metric).

    >>> t = pd.DataFrame({"gap": "dDP", "metric": "rabbi", "group": ["A", "B"], "r": [0.2, 0.5],
    ...                   "ci_low": [0.0, 0.2], "ci_high": [0.4, 0.8]})
    >>> p = pd.DataFrame({"gap": ["dDP"], "metric": ["rabbi"], "r": [0.3]}).set_index(["gap", "metric"])
    >>> s = spread_summary(t, p).iloc[0]
    >>> s["group_min"], s["group_max"], round(float(s["spread"]), 3), round(float(s["ci_width_mean"]), 3)
    ('A', 'B', 0.3, 0.5)
    """
    rows = []
    for (gap, metric), part in table.groupby(["gap", "metric"]):
        lo, hi = part.loc[part["r"].idxmin()], part.loc[part["r"].idxmax()]
        rows.append(dict(gap=gap, metric=metric, r_pooled=float(pooled.loc[(gap, metric), "r"]), r_min=float(lo["r"]),
                         group_min=lo["group"], r_max=float(hi["r"]), group_max=hi["group"],
                         spread=float(hi["r"] - lo["r"]),
                         ci_width_mean=float((part["ci_high"] - part["ci_low"]).mean())))
    return pd.DataFrame(rows).set_index(["gap", "metric"])


@dataclass
class GroupCorrelationFindings(Findings):
    """Everything the chapter shows: ``table`` (per-group r with intervals), ``pooled`` (r over all groups,
    indexed by gap and metric), ``spread`` (:func:`spread_summary`), ``chance`` (the spread's permutation test,
    indexed by gap and metric), ``controls`` (per-group permutation null and held-out r), ``strong_weak`` (the
    quality separation of strong against weak résumés), ``points``, ``scores``, the
    chapter's ``parameters`` and the glued ``values``."""

    table: pd.DataFrame
    pooled: pd.DataFrame
    spread: pd.DataFrame
    chance: pd.DataFrame
    controls: pd.DataFrame
    strong_weak: pd.DataFrame
    points: pd.DataFrame
    scores: pd.DataFrame
    others: list[str]
    parameters: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)

    def controls_view(self) -> pd.DataFrame:
        """RABBI's and δ's per-group controls, as the chapter shows them."""
        part = self.controls[self.controls["metric"].isin(["rabbi", "avg_gap"])]
        shown = part.assign(metric=part["metric"].map(METRIC_SHORT), gap=part["gap"].map(METRIC_SHORT),
                            verdict=validity.verdict_column(part))
        return shown[["gap", "metric", "group", "verdict", "r", "null_mean", "null_hi", "heldout_mean",
                      "heldout_ci_lo", "heldout_ci_hi", "heldout_null_hi", "ceiling"]].reset_index(drop=True)

    def separation_view(self) -> pd.DataFrame:
        """Strong-against-weak separation R per system (rows) and job (columns)."""
        p = self.parameters
        return self.strong_weak.pivot(index="system", columns="job", values="rabbi").loc[p["systems"], p["jobs"]]


def group_correlation_findings(
    systems: Sequence[str], jobs: Sequence[str], *, names_per_group: int = 10, k: int = 2, rounds: int = 2000,
    seed: int = 0, confidence: float = 0.95, permutations: int = 2000, scores_root: str = "", n_perm: int = 200,
    n_splits: int = 50, scores: pd.DataFrame | None = None,
) -> GroupCorrelationFindings:
    """The chapter's findings from the stored scores of ``systems`` on ``jobs`` (or from ``scores``, a frame
    shaped like :func:`allocbias.scoring.catalog.study_scores`, for tests). Raises ``ValueError`` naming a bad parameter."""
    systems, jobs = list(systems), list(jobs)
    n_groups = len(data.GROUPS)
    if not 1 <= k < n_groups:
        raise ValueError(f"k must be between 1 and {n_groups - 1} (pools have {n_groups} candidates), got {k}")
    if len(systems) * len(jobs) < 4:
        raise ValueError(f"need at least 4 (system, job) points per group for a correlation with an interval, got "
                         f"{len(systems)} systems x {len(jobs)} jobs")
    if permutations < 1 or not 0 < confidence < 1:
        raise ValueError(f"permutations must be >= 1 and confidence in (0, 1), got {permutations} and {confidence}")
    if n_perm < 1 or n_splits < 1:
        raise ValueError(f"n_perm and n_splits must be at least 1, got n_perm={n_perm}, n_splits={n_splits}")
    checks.count(rounds, "rounds")
    reference = data.REFERENCE_GROUP
    others = [g for g in GROUP_ORDER if g != reference]
    scores, seconds = runs.read_study_scores(systems, jobs, names_per_group=names_per_group, seed=seed,
                                             scores_root=scores_root, scores=scores)
    points = tables.study_points(scores, k, rounds, seed)
    n_per_group = len(systems) * len(jobs)
    g: dict[str, Any] = {name: int(value) for name, value in dict(
        k=k, rounds=rounds, n_systems=len(systems), n_jobs=len(jobs), n_others=len(others), n_points=len(points),
        n_per_group=n_per_group, permutations=permutations, n_perm=n_perm, n_splits=n_splits,
        n_models=len({parse_system(s).model for s in systems})).items()}
    g.update(confidence_pct=float(100 * confidence), read_seconds=float(seconds), reference=reference)

    # one correlation per group (Figure 6) and pooled over the groups
    table = validity.validity_table(points, METRICS, GAPS, by=["group"], confidence=confidence)
    pooled = validity.validity_table(points, METRICS, GAPS, confidence=confidence).set_index(["gap", "metric"])
    g.update(n_corr_min=int(table["n"].min()), n_corr_max=int(table["n"].max()), n_pooled=int(pooled["n"].min()),
             n_groups_correlated=int(table["group"].nunique()))
    for row in table.itertuples():
        g[f"r_{row.gap}_{row.metric}_{group_slug(row.group)}"] = float(row.r)
    spread = spread_summary(table, pooled)
    for (gap, metric), row in spread.iterrows():
        for col in ("r_pooled", "r_min", "r_max", "spread", "ci_width_mean"):
            g[f"{col}_{gap}_{metric}"] = float(row[col])
        g[f"group_min_{gap}_{metric}"] = row["group_min"]
        g[f"group_max_{gap}_{metric}"] = row["group_max"]
    for gap in GAPS:
        s = spread.loc[gap, "spread"]
        g[f"narrowest_{gap}"] = METRIC_SHORT[s.idxmin()]
        g[f"widest_{gap}"] = METRIC_SHORT[s.idxmax()]

    # precision of a correlation from so few points
    width = table["ci_high"] - table["ci_low"]
    g.update(ci_width_mean=float(width.mean()), ci_width_min=float(width.min()), ci_width_max=float(width.max()),
             ci_width_at_zero=fisher_width_at_zero(n_per_group, confidence), paper_n_per_group=PAPER_PER_GROUP,
             paper_ci_width_at_zero=fisher_width_at_zero(PAPER_PER_GROUP, confidence),
             overlap_pct=float(100 * ci_overlap_share(table)))

    # a chance reference for the spread: groups shuffled within each (system, job)
    chance, observed = validity.group_spread_test(points, METRICS, GAPS, permutations=permutations, seed=seed)
    chance = chance.set_index(["gap", "metric"])
    own = table.sort_values(["gap", "metric", "group"]).set_index(["gap", "metric", "group"])["r"]
    g["r_check"] = float(max(np.abs(part["r"].to_numpy() - own.loc[(gap, metric)].to_numpy()).max()
                             for (gap, metric), part in observed.groupby(["gap", "metric"], sort=False)))
    for (gap, metric), row in chance.iterrows():
        for col in ("null_mean", "null_q95", "p_value"):
            g[f"{col}_{gap}_{metric}"] = float(row[col])
    where = chance["p_value"].idxmin()
    g.update(n_below_005=int((chance["p_value"] < 0.05).sum()), n_tests=len(chance),
             p_min=float(chance["p_value"].min()), p_min_where=f"{METRIC_SHORT[where[1]]} vs {METRIC_SHORT[where[0]]}")

    # each group's correlation against a permutation null and out of sample
    controls = pd.concat([validity.validity_controls(scores, reference=reference, k=k, gap=gap, design="draws",
                                                     system=["system", "job"], pool="resume_id",
                                                     qualified="qualified", n_perm=n_perm, n_splits=n_splits,
                                                     seed=seed, per_group=True).table
                          for gap in GAPS], ignore_index=True)
    g.update(validity.controls_glue(controls))

    # how well the systems separate strong from weak résumés
    sep = tables.quality_separation(scores)
    strong_weak = sep[(sep["better"] == "high") & (sep["worse"] == "low")].reset_index(drop=True)
    lo, hi = strong_weak.loc[strong_weak["rabbi"].idxmin()], strong_weak.loc[strong_weak["rabbi"].idxmax()]
    g.update(sep_rabbi_mean=float(strong_weak["rabbi"].mean()), sep_rabbi_min=float(lo["rabbi"]),
             sep_rabbi_min_where=f"{lo['system']}, {lo['job']}", sep_rabbi_max=float(hi["rabbi"]),
             sep_rabbi_max_where=f"{hi['system']}, {hi['job']}",
             sep_p_better_mean=float(strong_weak["p_better"].mean()),
             sep_mean_difference=float(strong_weak["mean_difference"].mean()))
    parameters = dict(systems=systems, jobs=jobs, names_per_group=names_per_group, k=k, rounds=rounds, seed=seed,
                      confidence=confidence, permutations=permutations, n_perm=n_perm, n_splits=n_splits)
    return GroupCorrelationFindings(table=table, pooled=pooled, spread=spread, chance=chance, controls=controls,
                                    strong_weak=strong_weak, points=points, scores=scores, others=others,
                                    parameters=parameters, values=g)


def figure_correlations(findings: GroupCorrelationFindings) -> plt.Figure:
    """Heatmaps of the per-group r of each metric with ΔDP and with ΔEO (the paper's Figure 6)."""
    p, others = findings.parameters, findings.others
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, gap in zip(axes, GAPS):
        part = findings.table[findings.table["gap"] == gap]
        grid = part.pivot(index="group", columns="metric", values="r").loc[others, METRICS]
        sns.heatmap(grid.rename(columns=METRIC_SHORT), annot=True, fmt=".2f", cmap="RdBu_r", center=0, vmin=-1,
                    vmax=1, ax=ax, cbar=gap == GAPS[-1], cbar_kws={"label": "Pearson r (−1 to 1)"})
        who = "qualified candidates" if gap == "dEO" else "all candidates"
        label_axes(ax, title=f"metric vs {METRIC_SHORT[gap]} (metrics on {who})", x="bias metric",
                   y=f"group A (against {data.REFERENCE_GROUP})" if gap == GAPS[0] else "")
    fig.suptitle(f"Correlation of each metric with the allocation gap, per group: {len(p['systems'])} systems x "
                 f"{len(p['jobs'])} jobs, top {p['k']} of {len(data.GROUPS)}")
    return fig


def figure_intervals(findings: GroupCorrelationFindings) -> plt.Figure:
    """Per-group r with ΔDP and its confidence interval, one panel per metric (dashed: all groups pooled). The
    groups are named on the vertical axis, so each panel takes its metric's colour."""
    palette, others = metric_palette(METRICS), findings.others
    fig, axes = plt.subplots(1, len(METRICS), figsize=(2.8 * len(METRICS), 3.8), sharey=True)
    for ax, metric in zip(axes, METRICS):
        t = findings.table
        part = t[(t["gap"] == "dDP") & (t["metric"] == metric)].set_index("group").loc[others]
        for y, (group, row) in enumerate(part.iterrows()):
            ax.errorbar(row["r"], y, xerr=[[row["r"] - row["ci_low"]], [row["ci_high"] - row["r"]]], fmt="o",
                        color=palette[metric], capsize=3)
        ax.axvline(0, color="black", lw=0.8)
        ax.axvline(findings.pooled.loc[("dDP", metric), "r"], color="grey", ls="--", lw=1)
        ax.set_xlim(-1.05, 1.05)
        ax.set_yticks(range(len(others)), others)
        label_axes(ax, title=METRIC_SHORT[metric], x="", y="group A" if metric == METRICS[0] else "")
    axes[0].invert_yaxis()
    fig.supxlabel("Pearson r with ΔDP (−1 to 1), every panel")  # one label: four would run into each other
    fig.suptitle(f"Per-group correlation with ΔDP and its {100 * findings.parameters['confidence']:.0f}% interval "
                 "(dashed: all groups pooled)")
    return fig
