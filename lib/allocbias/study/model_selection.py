r"""Does a metric pick the least harmful system? The findings of the chapter on model selection.

Chen, Ji and Evans (their Section 5.2, Figures 4, 5, 8 and 9) rank models per subtask by the root mean square
over groups of each bias metric, rank them again by the allocation gaps ΔDP and ΔEO (the *ideal* ranking), and
score each metric's ranking against the ideal one with NDCG. The chapter does the same for the study's systems:

* the RMS over groups :math:`\overline{X}_M = \sqrt{\tfrac{1}{|\mathcal G| - 1}\sum_{A \ne B} X_M(A, B)^2}` per
  system and job (:func:`allocbias.validity.fairness_ranking`) and the pool noise of the ideal ranking;
* rankings per job (Figure 5), over all jobs (Figure 8) and by ΔEO with more seats (Figure 9);
* NDCG@N of each metric's ranking (:func:`allocbias.validity.ndcg_table`, :func:`allocbias.validity.ndcg_at`)
  beside a random ranking's expectation :math:`\mathbb E[\mathrm{NDCG@}N]` and the ideal ranking redrawn from
  fresh pools; beside a permutation null and out of sample (:func:`allocbias.validity.ndcg_controls`);
* the essay panel on real ELLIPSE essays, and the paper's numbers (``data/paper/rabbi_ndcg.csv``) next to ours.

:func:`model_selection_findings` computes all of it and returns a :class:`ModelSelectionFindings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..measures import tables
from ..scoring import catalog, runs
from .. import checks
from ..audited import data, datasets
from ..measures import selection, validity
from ..measures.metrics import STUDY_GAPS, STUDY_METRICS
from ..plotting import METRIC_SHORT, count_text, fixed_text, interval_text, label_axes, metric_palette, system_palette
from ..scoring.systems import parse_system
from .findings import Findings

__all__ = [
    "GAPS",
    "LABELS",
    "METRICS",
    "ModelSelectionFindings",
    "averages_verdict",
    "best_metrics",
    "essay_note",
    "figure_ndcg",
    "figure_overall_ranking",
    "figure_ranks_per_job",
    "model_selection_findings",
    "paper_counterpart",
    "ranks_by",
]

METRICS: list[str] = list(STUDY_METRICS)
GAPS: list[str] = list(STUDY_GAPS)
#: figure and prose labels of the metrics and of the ideal rankings
LABELS: Mapping[str, str] = {**METRIC_SHORT, "dDP": "ΔDP (ideal)", "dEO": "ΔEO (ideal)", "rabbi": "RABBI",
                             "avg_gap": "mean gap δ", "jsd": "JSD", "emd": "EMD"}
PAPER_TABLE = ("paper", "rabbi_ndcg.csv")


# --------------------------------------------------------------------------------------------------------------
# rankings and phrases
# --------------------------------------------------------------------------------------------------------------
def ranks_by(frame: pd.DataFrame, columns: Sequence[str], by: Sequence[str] = ("job",)) -> pd.DataFrame:
    """Rank of every system (1 = least biased) by the RMS over groups of each column, within each cell of ``by``:
    one column per entry of ``columns``, indexed by ``(*by, system)``.

    >>> pts = pd.DataFrame({"system": ["a", "a", "b", "b"], "job": "j", "group": ["X", "Y"] * 2,
    ...                     "dDP": [0.1, 0.1, 0.3, 0.0], "rabbi": [0.5, 0.5, 0.1, 0.1]})
    >>> ranks_by(pts, ["dDP", "rabbi"]).to_dict("list")
    {'dDP': [1, 2], 'rabbi': [2, 1]}
    """
    ranked = {c: validity.fairness_ranking(frame, c, list(by), model="system") for c in columns}
    return pd.concat({c: r.set_index([*by, "system"])["rank"] for c, r in ranked.items()}, axis=1)


def best_metrics(values: pd.Series) -> str:
    """The labels of the metrics with the largest value (ties joined by "and"), in the order of ``values``.

    >>> best_metrics(pd.Series({"rabbi": 0.9, "avg_gap": 0.9, "jsd": 0.5}))
    'RABBI and mean gap δ'
    """
    return " and ".join(LABELS[m] for m in values[values >= values.max() - 1e-12].index)


def averages_verdict(pooled: Mapping[str, float], within: pd.DataFrame) -> str:
    """Whether the paper's in-sample finding (the mean gap δ correlates with ΔDP far less than RABBI) holds on these
    systems, from the pooled in-sample correlations with ΔDP (``pooled["rabbi"]``, ``pooled["avg_gap"]``) and the
    per-system ones (``within``: columns rabbi, avg_gap). An in-sample comparison, said as one: whether either
    metric tracks ΔDP out of sample is the held-out verdict of :func:`allocbias.validity.verdict_words`
    (chapter 4), not this.

    >>> w = pd.DataFrame({"rabbi": [0.9, 0.8], "avg_gap": [0.1, 0.2]})
    >>> averages_verdict({"rabbi": 0.9, "avg_gap": 0.2}, w)
    "in line with the paper's in-sample finding that the average gap correlates with ΔDP less than RABBI"
    >>> averages_verdict({"rabbi": 0.5, "avg_gap": 0.6}, w)
    "so the paper's in-sample finding that the average gap fails is not reproduced on these systems"
    """
    n_better = int((within["avg_gap"].abs() > within["rabbi"].abs()).sum())
    if n_better > len(within) / 2 or abs(pooled["avg_gap"]) >= abs(pooled["rabbi"]):
        return "so the paper's in-sample finding that the average gap fails is not reproduced on these systems"
    if abs(pooled["avg_gap"]) >= 0.5:
        return ("so RABBI's in-sample correlation is higher pooled, but the average gap does not fail here as it "
                "does in the paper")
    return "in line with the paper's in-sample finding that the average gap correlates with ΔDP less than RABBI"


def essay_note(full: pd.Series | None, n_essay: int, bound: float = float("nan")) -> str:
    """The sentence that opens the essay panel's paragraph: RABBI's full-ranking NDCG against ΔDP and ΔEO
    (``full`` indexed by (gap, metric)) beside the paper's bound and the random floor, or why there is no panel.

    >>> essay_note(None, 1)
    'only 1 system has graded every ELLIPSE essay of the study sample, and a ranking needs at least two'
    """
    if full is None or n_essay < 2:
        return (f"only {count_text(n_essay, 'system')} {'has' if n_essay == 1 else 'have'} graded every ELLIPSE essay of the study sample, and a "
                "ranking needs at least two")
    return (f"RABBI's full-ranking NDCG is {full[('dDP', 'rabbi')]:.3f} against ΔDP and "
            f"{full[('dEO', 'rabbi')]:.3f} against ΔEO here, the paper's bound is NDCG@10 ≥ {bound:.2f}; "
            f"with {n_essay} systems a random order already scores "
            f"{validity.expected_random_ndcg(n_essay, n_essay):.3f} on average")


def paper_counterpart(row: Any, *, full: pd.Series, dp_ranks: pd.DataFrame, jobs: Sequence[str], n_systems: int,
                      n_max: int, random_max: float, emd_vs_gap: pd.Series, essay: Mapping[str, Any] | None) -> str:
    """Our closest counterpart of one claim (a row of ``data/paper/rabbi_ndcg.csv``), as a short phrase.

    ``full``: NDCG at the full cut-off by (gap, metric); ``dp_ranks``: ranks per (job, system) by ΔDP and each
    metric; ``essay``: ``{"n", "full", "top1"}`` of the essay panel, or None when there is none.

    >>> from types import SimpleNamespace as Row
    >>> paper_counterpart(Row(task="resume_screening", claim="other", subtask="", gap="dDP", metric="rabbi"),
    ...                   full=pd.Series(dtype=float), dp_ranks=pd.DataFrame(), jobs=[], n_systems=6, n_max=6,
    ...                   random_max=0.8, emd_vs_gap=pd.Series(dtype=float), essay=None)
    '-'
    """
    if row.task == "essay_grading":
        if essay is None:
            return "fewer than 2 systems have graded every ELLIPSE essay"
        n_essay = essay["n"]
        if row.claim.startswith("top1_"):
            return f"ideal ΔEO rank of the first pick, per grouping: {essay['top1'][row.metric]} (of {n_essay})"
        gaps = [g for g in GAPS if g in row.gap]
        return "; ".join(f"ELLIPSE, RABBI NDCG@{n_essay} vs {g}: {essay['full'][(g, 'rabbi')]:.3f}" for g in gaps) + \
            f" ({n_essay} systems; random {validity.expected_random_ndcg(n_essay, n_essay):.3f})"
    if row.claim.startswith(("rabbi_ndcg10", "rb_ndcg10")):
        gaps = [g for g in GAPS if g in row.gap]
        return "; ".join(f"RABBI NDCG@{n_max} vs {g}: {full[(g, 'rabbi')]:.3f}" for g in gaps) + \
            f" ({n_systems} systems; random {random_max:.3f})"
    if row.claim.startswith("bottom2_"):
        if row.subtask not in jobs:
            return "job not in this run"
        picked = dp_ranks.loc[row.subtask]
        return f"{int((picked.loc[picked[row.metric] <= 2, 'dDP'] >= n_systems - 1).sum())} of 2 ({n_systems} systems)"
    if row.claim == "emd_equals_avg_gap_ndcg":
        return f"largest |difference| over N and gaps: {float(emd_vs_gap.max()):.3f}"
    return "-"


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class ModelSelectionFindings(Findings):
    """Everything the chapter shows. Tables: ``rms`` (RMS of ΔDP per system and job), ``dp_ranks``,
    ``eo_ranks`` (ranks per job), ``overall`` (ranks over all jobs), ``ndcg`` (NDCG per gap, metric and cut-off
    with the random expectation, the share of random rankings at least as high and the redrawn ideal),
    ``controls`` (:func:`allocbias.validity.ndcg_controls`), ``essay_ndcg`` (None without an essay panel) and
    ``paper`` (the paper's claims with our counterpart in ``ours``); the chapter's ``parameters``; the glued
    ``values``."""

    points: pd.DataFrame
    points_eo: pd.DataFrame
    scores: pd.DataFrame
    rms: pd.DataFrame
    dp_ranks: pd.DataFrame
    eo_ranks: pd.DataFrame
    overall: pd.DataFrame
    ndcg: pd.DataFrame
    noise: pd.Series
    expected: dict[int, float]
    controls: pd.DataFrame
    essay_ndcg: pd.DataFrame | None
    paper: pd.DataFrame
    parameters: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)

    def rms_view(self) -> pd.DataFrame:
        """RMS over groups of ΔDP, systems (rows) by jobs (columns)."""
        p = self.parameters
        return self.rms.pivot(index="system", columns="job", values="dDP").loc[p["systems"], p["jobs"]]

    def ndcg_view(self, column: str = "ndcg") -> pd.DataFrame:
        """NDCG (or ``share_random_at_least``) per (gap, N), one column per metric, with the random and redrawn
        references beside the NDCG."""
        wide = self.ndcg.pivot(index=["gap", "n"], columns="metric", values=column)[METRICS].rename(columns=LABELS)
        if column == "ndcg":
            wide["random ranking (expected)"] = self.ndcg.groupby(["gap", "n"])["random"].first()
            wide["ideal, pools redrawn"] = self.ndcg.groupby(["gap", "n"])["ideal_redrawn"].first()
        return wide.reset_index()

    def controls_view(self) -> pd.DataFrame:
        """NDCG at the full cut-off beside its random range, permutation null and held-out value."""
        c, n_max = self.controls, self.parameters["n_max"]
        # each estimate beside its range in one cell, so that the table fits the text column (issue 39)
        return pd.DataFrame({
            "ideal ranking by": c["gap"].map(LABELS), "metric": c["metric"].map(LABELS),
            f"NDCG@{n_max}; null mean [95%]": [f"{fixed_text(x, 3)}; null {interval_text(m, lo, hi, 3)}" for x, m, lo, hi
                                               in zip(c["ndcg"], c["null_mean"], c["null_lo"], c["null_hi"])],
            "random: expected; 97.5%": [f"{fixed_text(e, 3)}; {fixed_text(h, 3)}"
                                        for e, h in zip(c["random_ndcg"], c["random_hi"])],
            "held-out NDCG [95% over splits]": [interval_text(m, lo, hi, 3) for m, lo, hi
                                                in zip(c["heldout_mean"], c["heldout_lo"], c["heldout_hi"])],
            "gap's own held-out NDCG": c["gap_heldout_mean"]})

    def paper_view(self) -> pd.DataFrame:
        """The paper's claims next to ours, in four readable columns: who claims it, the task, the claim in words
        (the quantity, its relation and value, for which metric and gap) and our counterpart (issue 39: the table
        inside the text column; the full claims are ``paper``)."""
        p = self.paper
        sources = {"chen2024mismeasure": "Chen, Ji, Evans (2024)", "cyberey2025prevalent": "Cyberey, Ji, Evans (2025)"}
        gaps = [" and ".join(METRIC_SHORT.get(g, g) for g in str(gap).split(" and ")) for gap in p["gap"]]
        claim = [f"{q} {rel} {v} ({LABELS.get(m, m)}; {g})"
                 for q, rel, v, m, g in zip(p["quantity"], p["relation"], p["value"], p["metric"], gaps)]
        return pd.DataFrame({"source": p["source"].map(lambda s: sources.get(s, s)),
                             "task": p["task"].str.replace("_", " "), "the paper's claim": claim, "ours": p["ours"]})

    def essay_view(self) -> pd.DataFrame | None:
        """The essay panel's NDCG per (gap, N), one column per metric, with the random expectation."""
        if self.essay_ndcg is None:
            return None
        e = self.essay_ndcg
        shown = e.pivot(index=["gap", "n"], columns="metric", values="ndcg")[METRICS].rename(columns=LABELS)
        shown["random ranking (expected)"] = e.groupby(["gap", "n"])["random"].first()
        return shown.reset_index()


def _check(systems: list[str], k: int, k_eo: int, ndcg_n: Sequence[int], noise_redraws: int, n_perm: int,
           n_splits: int) -> None:
    n_systems, n_groups = len(systems), len(data.GROUPS)
    for name, value in dict(k=k, k_eo=k_eo).items():
        if not 1 <= value < n_groups:
            raise ValueError(f"{name} must be between 1 and {n_groups - 1} (pools have {n_groups} candidates), got "
                             f"{value}")
    if n_systems < 2 or len(set(systems)) != n_systems:
        raise ValueError(f"systems must name at least 2 distinct systems to rank, got {systems}")
    if not ndcg_n or any(not 1 <= n <= n_systems for n in ndcg_n):
        raise ValueError(f"ndcg_n must list cut-offs from 1 to {n_systems} (the number of systems), got {ndcg_n}")
    if noise_redraws < 1:
        raise ValueError(f"noise_redraws must be at least 1, got {noise_redraws}")
    if n_perm < 1 or n_splits < 1:
        raise ValueError(f"n_perm and n_splits must be at least 1, got n_perm={n_perm}, n_splits={n_splits}")


def model_selection_findings(
    systems: Sequence[str], jobs: Sequence[str], *, names_per_group: int = 10, k: int = 2, k_eo: int = 3,
    rounds: int = 2000, seed: int = 0, ndcg_n: Sequence[int] = (1, 3, 6), noise_redraws: int = 5,
    scores_root: str = "", n_perm: int = 200, n_splits: int = 50, scores: pd.DataFrame | None = None,
    essay_scores: pd.DataFrame | None = None,
) -> ModelSelectionFindings:
    """The chapter's findings from the stored scores of ``systems`` on ``jobs`` (or from ``scores``, shaped like
    :func:`allocbias.scoring.catalog.study_scores`) and the ELLIPSE essay scores (or ``essay_scores``, shaped like
    :func:`allocbias.scoring.catalog.ellipse_scores`; an empty frame gives no essay panel). Raises ``ValueError`` naming
    a bad parameter."""
    systems, jobs = list(systems), list(jobs)
    _check(systems, k, k_eo, ndcg_n, noise_redraws, n_perm, n_splits)
    checks.count(rounds, "rounds")
    n_systems, n_groups = len(systems), len(data.GROUPS)
    ns = sorted(set(ndcg_n))
    scores, seconds = runs.read_study_scores(systems, jobs, names_per_group=names_per_group, seed=seed,
                                             scores_root=scores_root, scores=scores)
    points_all = tables.study_points(scores, sorted({k, k_eo}), rounds, seed)
    points = points_all[points_all["k"] == k].reset_index(drop=True)
    g: dict[str, Any] = {name: int(value) for name, value in dict(
        k=k, k_eo=k_eo, rounds=rounds, n_systems=n_systems, n_jobs=len(jobs), n_groups=n_groups,
        n_others=n_groups - 1, n_points=len(points), names_per_group=names_per_group,
        n_models=len({parse_system(s).model for s in systems}), n_max=max(ns), noise_redraws=noise_redraws,
        n_perm=n_perm, n_splits=n_splits).items()}
    g.update(read_seconds=float(seconds), reference=data.REFERENCE_GROUP)

    # does RABBI or the mean gap correlate more with ΔDP in-sample, pooled over systems and within each?
    pooled = validity.validity_table(points, ["rabbi", "avg_gap"], ["dDP"]).set_index("metric")["r"]
    within = validity.validity_table(points, ["rabbi", "avg_gap"], ["dDP"], by=["system"]).pivot(
        index="system", columns="metric", values="r")
    g.update(pooled_r_rabbi=float(pooled["rabbi"]), pooled_r_avg_gap=float(pooled["avg_gap"]),
             n_systems_avg_better=int((within["avg_gap"].abs() > within["rabbi"].abs()).sum()),
             averages_verdict=averages_verdict(pooled, within))

    # RMS over groups and the pool noise
    dp_se = selection.dp_standard_error(k, n_groups, rounds)
    rms = validity.fairness_ranking(points, "dDP", ["job"], model="system")
    lo, hi = rms.loc[rms["dDP"].idxmin()], rms.loc[rms["dDP"].idxmax()]
    g.update(dp_se=dp_se, rms_dDP_min=float(lo["dDP"]), rms_dDP_min_where=f"{lo['system']} ({lo['job']})",
             rms_dDP_max=float(hi["dDP"]), rms_dDP_max_where=f"{hi['system']} ({hi['job']})", n_cells=len(rms),
             n_cells_near_noise=int((rms["dDP"] < 2 * dp_se).sum()))

    # rankings per job (Figure 5)
    dp_ranks = ranks_by(points, ["dDP", *METRICS])
    for job in jobs:
        for col in ["dDP", *METRICS]:
            g[f"order_{col}_{job}"] = ", ".join(dp_ranks.loc[job][col].sort_values().index)
    for m in METRICS:
        top = dp_ranks.loc[dp_ranks[m] == 1, "dDP"]  # ideal rank of the system the metric puts first, per job
        g[f"top1_hits_{m}"] = int((top == 1).sum())
        g[f"top1_ideal_mean_{m}"] = float(top.mean())
        bottom = (dp_ranks.loc[dp_ranks[m] <= 2, "dDP"] >= n_systems - 1).groupby(level="job").sum()
        g[f"bottom2_jobs_{m}"] = int((bottom == 2).sum())
    g["n_jobs_emd_same_as_gap"] = int((dp_ranks["emd"] == dp_ranks["avg_gap"]).groupby(level="job").all().sum())
    g["n_ranked_min"] = int(dp_ranks.groupby(level="job").size().min())
    g["n_ranked_max"] = int(dp_ranks.groupby(level="job").size().max())

    # NDCG@N (Figure 4), the random expectation and the ideal ranking from fresh pools
    ndcg = validity.ndcg_table(points, METRICS, GAPS, ns=ns, subtask="job", model="system")
    self_check = pd.concat([validity.ndcg_table(points, [gap], [gap], ns=ns, subtask="job", model="system",
                                                qualified_gaps=()) for gap in GAPS])
    g.update(ndcg_ideal_min=float(self_check["ndcg"].min()), ndcg_ideal_max=float(self_check["ndcg"].max()))
    rng = np.random.default_rng(seed)
    random_ndcg = {n: validity.random_ndcg_values(n_systems, n, seed=seed) for n in ns}
    expected = {n: validity.expected_random_ndcg(n_systems, n) for n in ns}
    draws = {n: rng.choice(random_ndcg[n], size=(20_000, len(jobs))).mean(axis=1) for n in ns}
    ndcg["random"] = ndcg["n"].map(expected)
    ndcg["share_random_at_least"] = [float((draws[n] >= v - 1e-12).mean()) for n, v in zip(ndcg["n"], ndcg["ndcg"])]
    one_job = np.unique(np.round(validity.random_ndcg_values(n_systems, 1, seed=seed), 12))
    sums = np.zeros(1)
    for _ in jobs:  # every value the average of NDCG@1 over the jobs can take
        sums = np.unique(np.round(sums[:, None] + one_job[None, :], 9))
    g.update(n_values_n1=len(one_job), n_values_n1_avg=len(sums), n_permutations=len(random_ndcg[ns[0]]),
             n_min=min(ns), random_n_min=expected[min(ns)], random_n_max=expected[max(ns)],
             random_formula_error=float(max(abs(random_ndcg[n].mean() - expected[n]) for n in ns)),
             random_paper_full=validity.expected_random_ndcg(10, 10),
             random_paper_n1=validity.expected_random_ndcg(10, 1))
    fresh = pd.concat([tables.allocation_table(scores, k, rounds, seed + i).assign(redraw=i)
                       for i in range(1, noise_redraws + 1)])
    paired = fresh.rename(columns={"dDP": "redrawn", "dEO": "redrawn_qualified"})[
        ["redraw", "system", "job", "group", "redrawn", "redrawn_qualified"]].merge(
        points[["system", "job", "group", *GAPS]], on=["system", "job", "group"], validate="many_to_one")
    noise = (validity.ndcg_table(paired, ["redrawn"], GAPS, ns=ns, subtask="job", model="system", by=["redraw"])
             .groupby(["gap", "n"])["ndcg"].mean())
    ndcg["ideal_redrawn"] = [float(noise.loc[(gap, n)]) for gap, n in zip(ndcg["gap"], ndcg["n"])]
    g.update(seed_first_redraw=seed + 1, seed_last_redraw=seed + noise_redraws)
    for row in ndcg.itertuples():
        cut = [f"n{row.n}"] + (["nmax"] if row.n == max(ns) else []) + (["nmin"] if row.n == min(ns) else [])
        for c in cut:
            g[f"ndcg_{row.gap}_{row.metric}_{c}"] = float(row.ndcg)
            g[f"share_random_{row.gap}_{row.metric}_{c}"] = float(row.share_random_at_least)
    for gap in GAPS:
        full = ndcg[(ndcg["gap"] == gap) & (ndcg["n"] == max(ns))].set_index("metric")["ndcg"]
        g[f"best_{gap}"] = best_metrics(full)
        g[f"n_above_random_{gap}"] = int((full > expected[max(ns)] + 1e-12).sum())
        g[f"noise_{gap}_n_max"] = float(noise.loc[(gap, max(ns))])
        g[f"noise_{gap}_n_min"] = float(noise.loc[(gap, min(ns))])
    emd_vs_gap = (ndcg[ndcg["metric"] == "emd"].set_index(["gap", "n"])["ndcg"]
                  - ndcg[ndcg["metric"] == "avg_gap"].set_index(["gap", "n"])["ndcg"]).abs()
    g.update(emd_minus_gap_max=float(emd_vs_gap.max()), ndcg_min=float(ndcg["ndcg"].min()),
             ndcg_max=float(ndcg["ndcg"].max()))

    # NDCG beside a permutation null and out of sample
    controls = pd.concat([
        validity.ndcg_controls(scores, reference=data.REFERENCE_GROUP, k=k, gap=gap, design="draws", model="system",
                               subtask="job", pool="resume_id", qualified="qualified", n_perm=n_perm,
                               n_splits=n_splits, seed=seed, ns=[max(ns)])
        for gap in GAPS], ignore_index=True)
    for row in controls.itertuples():
        t = f"{row.gap}_{row.metric}"
        for name in ("ndcg", "random_hi", "null_mean", "null_lo", "null_hi", "heldout_mean", "heldout_lo",
                     "heldout_hi"):
            g[f"ctl_{name}_{t}"] = float(getattr(row, name))
        for key, word in validity.ndcg_words(row._asdict()).items():
            g[f"ctl_{key}_word_{t}"] = word
    for gap, value in controls.groupby("gap", sort=False)["gap_heldout_mean"].first().items():
        g[f"ctl_gap_heldout_{gap}"] = float(value)  # one value per gap, shared by the metrics

    # the overall ranking (Figure 8)
    overall = ranks_by(points, ["dDP", *METRICS], by=())
    ideal_overall = list(overall["dDP"].sort_values().index)
    for col in ["dDP", *METRICS]:
        g[f"overall_order_{col}"] = ", ".join(overall[col].sort_values().index)
    for m in METRICS:
        g[f"overall_ndcg_{m}"] = validity.ndcg_at(list(overall[m].sort_values().index), ideal_overall, n_systems)
        g[f"overall_first_{m}"] = str(overall[m].idxmin())
        g[f"overall_first_ideal_rank_{m}"] = int(overall.loc[overall[m].idxmin(), "dDP"])
    g["overall_first_dDP"] = ideal_overall[0]

    # equal opportunity with more seats (Figure 9)
    points_eo = points_all[points_all["k"] == k_eo].reset_index(drop=True)
    eo_ranks = ranks_by(points_eo, ["dEO", *[f"{m}_qualified" for m in METRICS]])
    ndcg_eo = validity.ndcg_table(points_eo, METRICS, ["dEO"], ns=[n_systems], subtask="job", model="system")
    for row in ndcg_eo.itertuples():
        g[f"ndcg_keo_{row.metric}"] = float(row.ndcg)
    for m in METRICS:
        top = eo_ranks.loc[eo_ranks[f"{m}_qualified"] == 1, "dEO"]
        g[f"top1_hits_keo_{m}"] = int((top == 1).sum())
    for job in jobs:
        g[f"order_dEO_keo_{job}"] = ", ".join(eo_ranks.loc[job]["dEO"].sort_values().index)

    essay_ndcg, essay = _essay_panel(g, k=k, rounds=rounds, seed=seed, essay_scores=essay_scores)

    # the paper's claims next to ours
    paper = datasets.read_csv(data.data_dir().joinpath(*PAPER_TABLE), keep_default_na=False)
    eo2 = ranks_by(points, ["dEO", *[f"{m}_qualified" for m in METRICS]])
    full = ndcg[ndcg["n"] == max(ns)].set_index(["gap", "metric"])["ndcg"]
    paper["ours"] = [paper_counterpart(row, full=full, dp_ranks=dp_ranks, jobs=jobs, n_systems=n_systems,
                                       n_max=max(ns), random_max=expected[max(ns)], emd_vs_gap=emd_vs_gap,
                                       essay=essay) for row in paper.itertuples()]
    for m in ("rabbi", "jsd"):  # per job, the ideal dEO rank of the system that the metric ranks first
        firsts = eo2.loc[eo2[f"{m}_qualified"] == 1, "dEO"].droplevel("system")
        g[f"top1_eo_ideal_ranks_{m}"] = "; ".join(f"{job.replace('_', ' ')} {int(firsts[job])}" for job in jobs)
    g.update(paper_n_models=int(paper["n_models"].max()), paper_k=int(paper["k"].iloc[0]),
             paper_ndcg10_bound=float(paper.loc[paper["claim"] == "rabbi_ndcg10_resume_screening", "value"].iloc[0]),
             paper_n_claims=len(paper))
    parameters = dict(systems=systems, jobs=jobs, names_per_group=names_per_group, k=k, k_eo=k_eo, rounds=rounds,
                      seed=seed, ns=ns, n_max=max(ns), noise_redraws=noise_redraws, n_perm=n_perm, n_splits=n_splits)
    return ModelSelectionFindings(points=points, points_eo=points_eo, scores=scores, rms=rms, dp_ranks=dp_ranks,
                                  eo_ranks=eo_ranks, overall=overall, ndcg=ndcg, noise=noise, expected=expected,
                                  controls=controls, essay_ndcg=essay_ndcg, paper=paper, parameters=parameters,
                                  values=g)


def _essay_panel(g: dict[str, Any], *, k: int, rounds: int, seed: int, essay_scores: pd.DataFrame | None
                 ) -> tuple[pd.DataFrame | None, dict[str, Any] | None]:
    """The essay panel of Figure 4 on ELLIPSE (every system whose table holds the whole study sample): adds its
    glue keys to ``g``; returns its NDCG table and ``{"n", "full", "top1"}`` (None, None without a panel)."""
    from ..measures import essays

    if essay_scores is None:
        essay_scores = catalog.ellipse_scores(None, data.load_ellipse("study"), complete_only=True)
    essay_systems = list(dict.fromkeys(essay_scores["system"])) if len(essay_scores) else []
    n_essay = len(essay_systems)
    g.update(essay_n_systems=n_essay, essay_systems=", ".join(essay_systems) if essay_systems else "none yet")
    if n_essay < 2:  # nothing to rank: every number of the essay panel is undefined (NaN), and the note says why
        for gap in GAPS:
            for m in METRICS:
                g[f"essay_ndcg_{gap}_{m}"] = float("nan")
                g[f"essay_ndcg1_{gap}_{m}"] = float("nan")
            g[f"essay_best_{gap}"] = "no metric"
        g.update(essay_random_full=float("nan"), essay_random_worst=float("nan"), paper_essay_bound=float("nan"),
                 essay_n_orders=max(n_essay, 1), essay_n_subtasks=0, essay_note=essay_note(None, n_essay))
        return None, None
    essay_table = essays.grader_table(essay_scores)
    essay_points = essays.essay_points(essay_table, essay_systems, k=k, rounds=rounds, pool_size=10,
                                       seed=seed).rename(columns={"grader": "system"})
    essay_ndcg = validity.ndcg_table(essay_points, METRICS, GAPS, ns=sorted({1, n_essay}), subtask="grouping",
                                     model="system")
    essay_ndcg["random"] = [validity.expected_random_ndcg(n_essay, n) for n in essay_ndcg["n"]]
    essay_full = essay_ndcg[essay_ndcg["n"] == n_essay].set_index(["gap", "metric"])["ndcg"]
    essay_one = essay_ndcg[essay_ndcg["n"] == 1].set_index(["gap", "metric"])["ndcg"]
    for (gap, m), v in essay_full.items():
        g[f"essay_ndcg_{gap}_{m}"] = float(v)
        g[f"essay_ndcg1_{gap}_{m}"] = float(essay_one[(gap, m)])
    for gap in GAPS:
        g[f"essay_best_{gap}"] = best_metrics(essay_full[gap])
    orders = validity.random_ndcg_values(n_essay, n_essay, seed=seed)
    essay_eo = ranks_by(essay_points.rename(columns={"grouping": "job"}), ["dEO", *[f"{m}_qualified" for m in METRICS]])
    top1 = {m: "; ".join(f"{grp} {int(r)}" for grp, r in essay_eo.loc[essay_eo[f"{m}_qualified"] == 1, "dEO"]
                         .droplevel("system").items()) for m in METRICS}
    bound = float(datasets.read_csv(data.data_dir().joinpath(*PAPER_TABLE)).set_index("claim")
                  .loc["rabbi_ndcg10_essay_grading", "value"])
    g.update(essay_random_full=validity.expected_random_ndcg(n_essay, n_essay), essay_random_worst=float(min(orders)),
             essay_n_orders=len(orders), essay_n_subtasks=int(essay_ndcg["n_subtasks"].iloc[0]),
             paper_essay_bound=bound, essay_note=essay_note(essay_full, n_essay, bound))
    return essay_ndcg, {"n": n_essay, "full": essay_full, "top1": top1}


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def _draw_ranks(ax: plt.Axes, ranks: pd.DataFrame, systems: Sequence[str], title: str) -> None:
    """Slope chart: one line per system across the rankings (the columns of ``ranks``), rank 1 at the top."""
    colours = system_palette(list(systems))
    for system, row in ranks.loc[list(systems)].iterrows():
        ax.plot(range(ranks.shape[1]), row.to_numpy(), marker="o", color=colours[system], label=system)
    ax.set_xticks(range(ranks.shape[1]), [LABELS[c.removesuffix("_qualified")] for c in ranks.columns], rotation=35,
                  ha="right")
    ax.set_yticks(range(1, len(ranks) + 1))
    ax.set_ylim(len(ranks) + 0.5, 0.5)
    label_axes(ax, title=title, x="ranked by (RMS over groups)", y="rank (1 = least biased)")


def figure_ranks_per_job(findings: ModelSelectionFindings, gap: str = "dDP") -> plt.Figure:
    """The fairness rankings per job (the paper's Figure 5 for ΔDP with k seats, Figure 9 for ΔEO with k_eo)."""
    if gap not in GAPS:
        raise ValueError(f"gap must be one of {GAPS}, got {gap!r}")
    p = findings.parameters
    systems, jobs, n_groups = p["systems"], p["jobs"], len(data.GROUPS)
    ranks = findings.dp_ranks if gap == "dDP" else findings.eo_ranks
    title = (f"Fairness ranking of the systems per job, top {p['k']} of {n_groups} selected "
             "(first column: ideal, by ΔDP)"
             if gap == "dDP" else f"Fairness ranking per job, top {p['k_eo']} of {n_groups} selected "
             "(first column: ideal, by ΔEO; metrics on qualified candidates)")
    cols = min(len(jobs), 2)
    rows = -(-len(jobs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.6 * rows), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, job in zip(axes.flat, jobs):
        _draw_ranks(ax, ranks.loc[job], systems, job.replace("_", " "))
    for ax in list(axes.flat)[len(jobs):]:
        ax.set_visible(False)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncol=min(len(systems), 3),
               title="system")
    fig.suptitle(title)
    return fig


def figure_overall_ranking(findings: ModelSelectionFindings) -> plt.Figure:
    """The fairness ranking over all jobs (the paper's Figure 8)."""
    p = findings.parameters
    fig, ax = plt.subplots(figsize=(8, 5.5))
    _draw_ranks(ax, findings.overall, p["systems"],
                f"Overall fairness ranking, all {len(p['jobs'])} jobs, top {p['k']} of {len(data.GROUPS)} selected")
    ax.legend(title="system", loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig


def figure_ndcg(findings: ModelSelectionFindings) -> plt.Figure:
    """NDCG@N of each metric against the ideal rankings by ΔDP and ΔEO (the paper's Figure 4), with the random
    expectation (dashed) and the ideal ranking from redrawn pools (dotted)."""
    p, ndcg, noise = findings.parameters, findings.ndcg, findings.noise
    palette = metric_palette(METRICS)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, gap in zip(axes, GAPS):
        part = ndcg[ndcg["gap"] == gap].assign(metric=ndcg["metric"].map(LABELS))
        sns.barplot(part, x="n", y="ndcg", hue="metric", hue_order=[LABELS[m] for m in METRICS],
                    palette={LABELS[m]: c for m, c in palette.items()}, ax=ax, legend=False)
        for i, n in enumerate(p["ns"]):
            ax.hlines(findings.expected[n], i - 0.4, i + 0.4, color="black", ls="--", lw=1.5,
                      label="random ranking (expected)" if i == 0 else None)
            ax.hlines(noise.loc[(gap, n)], i - 0.4, i + 0.4, color="dimgrey", ls=":", lw=2,
                      label="ideal ranking, pools redrawn" if i == 0 else None)
        ax.set_ylim(0, 1.05)
        who = "metrics on qualified candidates" if gap == "dEO" else "metrics on all candidates"
        label_axes(ax, title=f"ideal ranking by {LABELS[gap].split()[0]}, k = {p['k']} ({who})",
                   x="cut-off N (systems at the top)", y=f"NDCG@N, mean over {len(p['jobs'])} jobs (0 to 1)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in palette.values()]
    lines, names = axes[0].get_legend_handles_labels()
    fig.legend(handles + lines, [LABELS[m] for m in METRICS] + names, loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=3)
    fig.suptitle(f"How well each metric's fairness ranking of {len(p['systems'])} systems matches the ideal ranking")
    return fig
