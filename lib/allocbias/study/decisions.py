r"""From scores to decisions: the findings of the chapter that turns the study's scores into top-k selections.

The chapter reads the committed pointwise scores of the study's systems (:func:`allocbias.scoring.catalog.study_scores`)
and, as Chen, Ji and Evans do, runs many selection rounds per job: a pool of one candidate per group, the best
:math:`k` selected, candidates tied at the cut sharing the remaining seats
(:func:`allocbias.selection.select_top_k`). From the same pools for every system it computes

* the selection rate of every group, :math:`\phi(X, k)` over all candidates and :math:`\psi(X, k)` over the
  qualified ones (:func:`allocbias.measures.tables.pool_selection_table`);
* the signed gaps against the reference group :math:`B` (White men), :math:`\Delta DP = \phi(A) - \phi(B)` and
  :math:`\Delta EO = \psi(A) - \psi(B)` (:func:`allocbias.measures.tables.allocation_table`), their direction per system
  (mean over the jobs, against two standard errors of the pool noise);
* the average score gap :math:`\delta = \bar s_A - \bar s_B` next to :math:`\Delta DP`, the paper's Figure 1.

The exercises' answers (every quota, matched pools) are not computed here: their solutions compute them from
:func:`allocbias.measures.tables.allocation_table` and :func:`allocbias.selection.simulate`.

:func:`decisions_findings` computes all of it and returns a :class:`DecisionFindings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..measures import tables
from ..scoring import runs
from .. import checks
from ..measures.metrics import STUDY_GAPS
from ..audited import data
from ..measures import metrics, selection
from ..plotting import GROUP_ORDER, count_text, group_palette, label_axes, system_palette
from .findings import Findings

__all__ = [
    "DecisionFindings",
    "decisions_findings",
    "direction_statement",
    "figure_direction",
    "figure_score_gap",
    "figure_selection_rates",
    "join_or",
]

#: The toy round of the section on ties: scores and seats.
TIE_EXAMPLE: tuple[tuple[float, ...], int] = ((0.9, 0.7, 0.7, 0.7, 0.2), 2)
#: The two groups the paper's Figure 1 names.
FIGURE1_GROUPS: tuple[str, ...] = ("Male Black", "Male Hispanic")


# --------------------------------------------------------------------------------------------------------------
# phrases
# --------------------------------------------------------------------------------------------------------------
def join_or(items: Sequence[Any], empty: str = "none") -> str:
    """The items joined by ", ", or ``empty`` when there are none.

    >>> join_or(["a", "b"]), join_or([], "no system")
    ('a, b', 'no system')
    """
    return ", ".join(str(item) for item in items) or empty


def direction_statement(mean_gaps: pd.Series | Sequence[float]) -> str:
    """What a system does to the reference group, from its mean gaps ΔDP of the other groups.

    More than half of the gaps positive: it selects White men less often than most other groups; more than half
    negative: more often; otherwise neither.

    >>> direction_statement([0.1, 0.2, -0.1])
    'selects White men less often than most other groups'
    >>> direction_statement([0.0, 0.1, -0.1])
    'selects White men neither more nor less often than most other groups'
    """
    gaps = np.asarray(mean_gaps, dtype=float)
    if (gaps > 0).sum() > gaps.size / 2:
        return "selects White men less often than most other groups"
    if (gaps < 0).sum() > gaps.size / 2:
        return "selects White men more often than most other groups"
    return "selects White men neither more nor less often than most other groups"


def _where(row: pd.Series) -> str:
    return f"{row['group']} ({row['job']})"


def _r(x: pd.Series, y: pd.Series) -> float:
    return float(np.corrcoef(x, y)[0, 1])


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class DecisionFindings(Findings):
    """Everything the chapter on decisions shows.

    Attributes
    ----------
    scores
        The scores read (one row per system and candidate).
    example_pool
        The first round of the first job for the first system, best first, with its ``selected`` seats.
    rates
        :func:`allocbias.measures.tables.pool_selection_table`: φ and ψ per (system, job, group).
    gaps
        :func:`allocbias.measures.tables.allocation_table`: ΔDP and ΔEO per (system, job, group), merged with the score
        metrics of :func:`allocbias.metrics.bias_table` (``avg_gap``, ``rabbi``...).
    rate_table
        The first system's φ and ψ, groups by jobs.
    gap_table
        The first system's ΔDP and ΔEO, groups by jobs.
    mean_gaps
        Mean ΔDP over the jobs, systems by groups (the direction figure).
    figure1
        The first system's δ and ΔDP per group, mean over the jobs (the paper's Figure 1).
    values, phrases
        The numbers and the result-dependent phrases the prose quotes, by glue key (:meth:`glue_values`).
    parameters
        The parameters the findings were computed with.
    """

    scores: pd.DataFrame
    example_pool: pd.DataFrame
    rates: pd.DataFrame
    gaps: pd.DataFrame
    rate_table: pd.DataFrame
    gap_table: pd.DataFrame
    mean_gaps: pd.DataFrame
    figure1: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def score_gap_table(self) -> pd.DataFrame:
        """The Figure 1 table with readable column names."""
        return self.figure1.rename(columns={"avg_gap": "δ (mean over jobs)", "dDP": "ΔDP (mean over jobs)"})


def decisions_findings(
    *,
    systems: Sequence[str],
    jobs: Sequence[str],
    names_per_group: int = 10,
    k: int = 2,
    rounds: int = 2000,
    seed: int = 0,
    scores_root: str = "",
    scores: pd.DataFrame | None = None,
    reference: str = data.REFERENCE_GROUP,
    groups: Sequence[str] = tuple(GROUP_ORDER),
) -> DecisionFindings:
    """The findings of the decisions chapter.

    Parameters
    ----------
    systems, jobs, names_per_group, seed, scores_root
        What to read (:func:`allocbias.scoring.catalog.study_scores`); the first system is the chapter's example.
    k
        Seats per round, from 1 to G - 1 (G groups, one candidate each per round).
    rounds
        Selection rounds per job.
    scores
        The scores as a frame (``system, job, group, full_name, resume_id, quality, qualified, score``), for tests
        on small synthetic data; default None reads the committed tables.
    reference, groups
        The reference group and every group in display order (default: the study's).
    """
    systems, jobs, groups = list(systems), list(jobs), list(groups)
    if not systems:
        raise ValueError("systems must name at least one system")
    if not jobs:
        raise ValueError("jobs must name at least one job")
    rounds = checks.count(rounds, "rounds")
    seed = checks.seed(seed)
    n_groups = len(groups)
    if not checks.is_int(k) or not 1 <= k < n_groups:
        raise ValueError(f"k must be between 1 and {n_groups - 1} (pools have {n_groups} candidates), got {k}")
    if reference not in groups:
        raise ValueError(f"reference {reference!r} is not one of the groups {groups}")
    others = [g for g in groups if g != reference]
    first = systems[0]
    if scores is None:
        n_candidates = len(data.candidate_table(jobs, names_per_group=names_per_group, seed=seed))
    else:
        checks.require_columns(scores, ["system", "job", "group", "score", "qualified"], "scores", nonempty=True)
        n_candidates = int((scores["system"] == first).sum())
    scores, seconds = runs.read_study_scores(systems, jobs, names_per_group=names_per_group, seed=seed,
                                             scores_root=scores_root, scores=scores)

    # one selection round
    mine = scores[scores["system"] == first].reset_index(drop=True)
    pools = selection.draw_group_pools(mine, rounds, seed, group="group", by="job")
    pool = mine.iloc[pools[0]].assign(selected=selection.select_top_k(mine["score"].to_numpy()[pools[0]], k))
    shown = [c for c in ("job", "group", "full_name", "resume_id", "quality", "score", "selected") if c in pool]
    example = pool[shown].sort_values("score", ascending=False)
    toy = selection.select_top_k(list(TIE_EXAMPLE[0]), TIE_EXAMPLE[1])

    # selection rates
    rates = tables.pool_selection_table(scores, k, rounds, seed)
    mine_rates = rates[rates["system"] == first]
    totals = rates.groupby(["system", "job", "k"])["phi"].sum()
    lo, hi = mine_rates.loc[mine_rates["phi"].idxmin()], mine_rates.loc[mine_rates["phi"].idxmax()]
    ref_rates = mine_rates[mine_rates["group"] == reference]
    present = [g for g in groups if g in set(mine_rates["group"])]
    rate_table = pd.concat({
        "φ (all candidates)": mine_rates.pivot(index="group", columns="job", values="phi").loc[present],
        "ψ (qualified candidates)": mine_rates.pivot(index="group", columns="job", values="psi").loc[present]},
        axis=1)

    # gaps
    dp_se = selection.dp_standard_error(k, n_groups, rounds)
    gaps = tables.allocation_table(scores, k, rounds, seed, reference=reference)
    mine_gaps = gaps[gaps["system"] == first]
    worst, best = mine_gaps.loc[mine_gaps["dDP"].idxmin()], mine_gaps.loc[mine_gaps["dDP"].idxmax()]
    gap_table = mine_gaps.pivot(index="group", columns="job", values=list(STUDY_GAPS)).loc[others]

    # direction: mean over the jobs
    mean_gaps = gaps.groupby(["system", "group"])["dDP"].mean().unstack("group")[others].reindex(systems)
    se_mean = dp_se / np.sqrt(len(jobs))
    mine_mean = mean_gaps.loc[first]
    n_pos_by, n_neg_by = (mean_gaps > 0).sum(axis=1), (mean_gaps < 0).sum(axis=1)

    # the paper's Figure 1
    deltas = metrics.bias_table(scores, "score", "group", reference, by=["system", "job"])
    both = deltas.merge(gaps, on=["system", "job", "group"])
    cells = both[both["system"] == first]
    fig1 = cells.groupby("group")[["avg_gap", "dDP"]].mean().loc[others]
    sign_flip = np.sign(fig1["avg_gap"]) != np.sign(fig1["dDP"])

    scalars: dict[str, Any] = {
        "k": int(k), "rounds": int(rounds), "n_groups": int(n_groups), "n_jobs": len(jobs),
        "n_systems": len(systems), "n_candidates": int(n_candidates), "names_per_group": int(names_per_group),
        "first_system": first, "reference": reference,
        "read_seconds": f"{seconds:.1f} s",  # a duration with its unit: tests/nbval_sanitize.cfg masks it
        "example_job": str(pool["job"].iloc[0]),
        "example_selected": " and ".join(pool.loc[pool["selected"] == 1, "group"]),
        "tie_share": float(toy[1]),
        "parity": k / n_groups,
        "max_total_error": float((totals - k).abs().max()),
        "n_rounds_all": int(rates.groupby(["system", "job"])["rounds"].first().sum()),
        "n_tied_rounds": int(rates.groupby(["system", "job"])["tied_rounds"].first().sum()),
        "phi_min": float(lo["phi"]), "phi_min_where": _where(lo),
        "phi_max": float(hi["phi"]), "phi_max_where": _where(hi),
        "dir_first_ref_below": int((ref_rates["phi"] < k / n_groups).sum()),
        "dp_se": dp_se,
        "dDP_min": float(worst["dDP"]), "dDP_min_where": _where(worst),
        "dDP_max": float(best["dDP"]), "dDP_max_where": _where(best),
        "n_cells": len(mine_gaps), "n_cells_negative": int((mine_gaps["dDP"] < 0).sum()),
        "dEO_min": float(mine_gaps["dEO"].min()), "dEO_max": float(mine_gaps["dEO"].max()),
        "r_dDP_dEO": _r(mine_gaps["dDP"], mine_gaps["dEO"]),
        "dir_se_mean": float(se_mean),
        "dir_first_n_pos": int((mine_mean > 0).sum()),
        "dir_first_n_clear": int((mine_mean > 2 * se_mean).sum()),
        "dir_all_n": int(mean_gaps.size),
        "dir_all_n_pos": int((mean_gaps > 0).to_numpy().sum()),
        "dir_all_n_clear_neg": int((mean_gaps < -2 * se_mean).to_numpy().sum()),
        "dir_n_systems_all_pos": int((mean_gaps > 0).all(axis=1).sum()),
        "n_others": len(others),
        "n_sign_flips": int(sign_flip.sum()),
        "n_cell_flips": int((np.sign(cells["avg_gap"]) != np.sign(cells["dDP"])).sum()),
        "r_delta_dDP": _r(cells["avg_gap"], cells["dDP"]),
        "r_rabbi_dDP": _r(cells["rabbi"], cells["dDP"]),
        "delta_abs_max": float(fig1["avg_gap"].abs().max()),
        "score_min": float(mine["score"].min()),
        "score_max": float(mine["score"].max()),
    }
    for g in FIGURE1_GROUPS:
        if g in fig1.index:
            scalars[f"fig1_delta_{g.replace(' ', '_').lower()}"] = float(fig1.loc[g, "avg_gap"])
            scalars[f"fig1_dDP_{g.replace(' ', '_').lower()}"] = float(fig1.loc[g, "dDP"])
    phrases = {
        "dir_first_pos_groups": join_or(mine_mean.index[mine_mean > 0]),
        "dir_first_statement": direction_statement(mine_mean),
        "dir_systems_ref_low": join_or(mean_gaps.index[n_pos_by > len(others) / 2], "no system"),
        "dir_systems_ref_high": join_or(mean_gaps.index[n_neg_by > len(others) / 2], "no system"),
        "sign_flip_groups": join_or(fig1.index[sign_flip]),
    }
    return DecisionFindings(
        scores=scores, example_pool=example, rates=rates, gaps=both, rate_table=rate_table, gap_table=gap_table,
        mean_gaps=mean_gaps, figure1=fig1, values=scalars, phrases=phrases,
        parameters={"systems": systems, "jobs": jobs, "names_per_group": names_per_group, "k": k,
                    "rounds": rounds, "seed": seed, "reference": reference, "groups": groups})


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_selection_rates(findings: DecisionFindings) -> plt.Figure:
    """Selection rate φ per group and job for the first system, with the equal share k / G dashed."""
    p = findings.parameters
    k, order, first = p["k"], p["groups"], p["systems"][0]
    n_groups = len(order)
    mine = findings.rates[findings.rates["system"] == first]
    grid = sns.catplot(mine, kind="bar", x="phi", y="group", order=order, hue="group", hue_order=order,
                       palette=group_palette(order), col="job", col_wrap=min(2, mine["job"].nunique()),
                       height=2.8, aspect=1.5, legend=False)
    for ax in grid.axes.flat:
        ax.axvline(k / n_groups, color="black", ls="--", lw=1)
    grid.set_titles("{col_name}")
    grid.set_axis_labels("", "group")
    grid.figure.supxlabel(f"selection rate φ: share of a group's appearances selected (top {k} of {n_groups})")
    grid.figure.suptitle(f"Selection rates by group and job, {first} (dashed: k / G, equal shares)", y=1.03)
    return grid.figure


def figure_direction(findings: DecisionFindings) -> plt.Figure:
    """Each system's mean ΔDP per group (mean over the jobs), with ±2 standard errors of the pool noise in grey."""
    p = findings.parameters
    systems, reference = p["systems"], p["reference"]
    se_mean = findings.values["dir_se_mean"]
    others = list(findings.mean_gaps.columns)
    long = findings.mean_gaps.stack().rename("dDP").reset_index()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    sns.stripplot(long, x="dDP", y="group", order=others, hue="system", hue_order=systems,
                  palette=system_palette(systems), size=7, jitter=0.2, ax=ax)
    ax.axvline(0, color="black", lw=0.8)
    ax.axvspan(-2 * se_mean, 2 * se_mean, color="grey", alpha=0.15, lw=0)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="system")
    label_axes(ax, title=f"ΔDP against {reference}, mean over {count_text(len(p['jobs']), 'job')} (grey: ±2 standard errors)",
               x=f"ΔDP (selection-rate gap, top {p['k']}; > 0: the group is selected more often)", y="group")
    return fig


def figure_score_gap(findings: DecisionFindings) -> plt.Figure:
    """The paper's Figure 1 for the first system: δ and ΔDP per group side by side, mean over the jobs."""
    p = findings.parameters
    fig1 = findings.figure1
    others = list(fig1.index)
    palette = group_palette(p["groups"])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
    labels = ["average score gap δ (score units)", f"ΔDP (selection-rate gap, top {p['k']})"]
    for ax, col, xlabel in zip(axes, ["avg_gap", "dDP"], labels):
        ax.barh(others, fig1[col], color=[palette[g] for g in others])
        ax.axvline(0, color="black", lw=0.8)
        ax.locator_params(axis="x", nbins=5)
        label_axes(ax, title=xlabel.split(" (")[0], x=xlabel, y="group" if col == "avg_gap" else "")
    axes[0].invert_yaxis()
    fig.suptitle(f"Bias against {p['reference']}, mean over {count_text(len(p['jobs']), 'job')}: {p['systems'][0]}")
    return fig
