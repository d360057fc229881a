r"""The shape of the scores: the findings of the chapter on the raw material of every bias metric.

Chen, Ji and Evans describe their scores in an appendix: Figure 13 gives the skewness and excess kurtosis of every
pointwise score distribution, Table 2 how often the pairwise answers are usable, ties, or flip with the order of the
candidates. This module computes the same descriptions for the study's systems (the stored score tables; no model
is run):

* per (system, group, job) cell, the sample skewness :math:`g_1 = m_3 / m_2^{3/2}` and excess kurtosis
  :math:`g_2 = m_4 / m_2^2 - 3` (:func:`allocbias.metrics.score_shape`), their shares and medians, per system and
  per group, and the standard errors of :math:`g_1, g_2` for normal scores;
* the share of a cell's score variance that lies between its résumés' mean scores;
* whether the average score gap fails on these systems: its Pearson :math:`r` with :math:`\Delta DP` at
  :math:`k = 1` pooled and within each system, beside RABBI's and the paper's;
* the label mass :math:`M = m_\text{Yes} + m_\text{No}` per system;
* the paper's Table 2 and, for ``pairwise_systems``, the same statistics of the stored pairwise answers
  (:func:`allocbias.metrics.pairwise_output_stats`), and what those answers are (empty, first-shown, an echo of
  the prompt).

:func:`score_shapes_findings` computes all of it and returns a :class:`ScoreShapeFindings`; the ``figure_*``
functions draw the chapter's figures from it, and the phrases the prose quotes come from the small functions below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
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
from ..scoring import items
from ..measures import metrics, validity
from ..plotting import GROUP_ORDER, LEGEND_POINTS, count_text, group_palette, label_axes, system_palette
from ..scoring.systems import parse_system
from .findings import Findings

__all__ = [
    "CHECK_K",
    "CHECK_ROUNDS",
    "PAPER_EXCLUSION",
    "ScoreShapeFindings",
    "between_words",
    "check_verdict",
    "figure_label_mass",
    "figure_pairwise",
    "figure_shapes",
    "figure_skew_by_group",
    "pairwise_reasons",
    "pairwise_verdict",
    "per_system_words",
    "score_shapes_findings",
    "shape_words",
    "skew_standard_errors",
    "tendency",
]

#: The quota of the paper's Table 1 and the selection rounds of the study's chapters (the average-gap check).
CHECK_K, CHECK_ROUNDS = 1, 2000
#: Figure 3 of the paper: models with more than 55 % inconsistent outputs are excluded.
PAPER_EXCLUSION = 55.0
#: Pools per job of a study-scale pairwise table (scripts/score_study.py's default).
STUDY_PAIRWISE_ROUNDS = 30
#: The superseded pairwise pilot: pools per job and groups per pool, on every job.
PILOT_ROUNDS, PILOT_GROUPS = 2, 4
#: The Table 2 statistics, in the paper's order.
PAIRWISE_COLUMNS = ("regular", "tie", "undetected", "flipped", "inconsistent")


# --------------------------------------------------------------------------------------------------------------
# phrases and small formulas
# --------------------------------------------------------------------------------------------------------------
def skew_standard_errors(n: int) -> tuple[float, float]:
    r"""Standard errors of the sample skewness and excess kurtosis of ``n`` normal scores:

    .. math:: se(g_1) = \sqrt{\frac{6 n (n - 1)}{(n - 2)(n + 1)(n + 3)}}, \qquad
              se(g_2) = \sqrt{\frac{24 n (n - 1)^2}{(n - 3)(n - 2)(n + 3)(n + 5)}} .

    >>> [round(x, 3) for x in skew_standard_errors(60)]
    [0.309, 0.608]
    """
    if n < 4:
        raise ValueError(f"n must be at least 4 scores per cell for both standard errors, got {n}")
    return (float(np.sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3)))),
            float(np.sqrt(24 * n * (n - 1) ** 2 / ((n - 3) * (n - 2) * (n + 3) * (n + 5)))))


def tendency(share: float, most: str, few: str, mixed: str) -> str:
    """``most`` when at least 3 of 4 cells qualify (``share >= 0.75``), ``few`` when at most 1 of 4, else ``mixed``.

    >>> tendency(0.8, "most", "few", "mixed"), tendency(0.2, "most", "few", "mixed"), tendency(0.5, "a", "b", "c")
    ('most', 'few', 'c')
    """
    return most if share >= 0.75 else few if share <= 0.25 else mixed


def shape_words(share_left: float, share_heavy: float) -> dict[str, str]:
    """The words for the cells' shape against the paper's description of résumé scores ("highly left-skewed with
    heavy tails"): ``skew_words``, ``tail_words`` and ``shape_agreement`` (how many of the two features most
    cells share).

    >>> shape_words(0.9, 0.8)["shape_agreement"], shape_words(0.9, 0.5)["shape_agreement"]
    ('agree with', 'only partly agree with')
    >>> shape_words(0.1, 0.5)["skew_words"]
    "mostly right-skewed, unlike the paper's"
    """
    matches = (share_left >= 0.75) + (share_heavy >= 0.75)  # features of the paper's description most cells share
    return {
        "skew_words": tendency(share_left, "mostly left-skewed, as the paper's are", "mostly right-skewed, unlike "
                               "the paper's", "left-skewed in some cells and right-skewed in others"),
        "tail_words": tendency(share_heavy, "mostly heavier-tailed than a normal distribution, as the paper's are",
                               "mostly lighter-tailed than a normal distribution, unlike the paper's",
                               "heavier-tailed in some cells and lighter-tailed in others"),
        "shape_agreement": ["do not match", "only partly agree with", "agree with"][matches],
    }


def per_system_words(median_skewness: Mapping[str, float] | pd.Series) -> str:
    """Which systems have a negative median skewness and which a zero or positive one, in the given order.

    >>> per_system_words({"a": -0.5, "b": 0.2})
    'the median skewness is negative for a and zero or positive for b'
    >>> per_system_words({"a": -0.5})
    'the median skewness is negative for a and zero or positive for no system'
    """
    median_skewness = dict(median_skewness)
    left = [s for s, v in median_skewness.items() if v < 0]
    right = [s for s in median_skewness if s not in left]
    return (f"the median skewness is negative for {', '.join(left) or 'no system'} and zero or positive for "
            f"{', '.join(right) or 'no system'}")


def between_words(median_share: float) -> str:
    """What the shape of a typical cell describes, given the median share of its variance between résumés.

    >>> between_words(0.8)
    "where the résumés' levels sit relative to each other"
    """
    return ("where the résumés' levels sit relative to each other" if median_share >= 0.5
            else "how the names spread the scores around each résumé's level")


def check_verdict(r_avg_gap: float, n_avg_better: int, n_systems: int) -> str:
    """Whether the shape makes the average gap fail here: it does not when the pooled ``|r| >= 0.5`` with
    :math:`\\Delta DP` or the average gap beats RABBI within more than half of the systems.

    >>> check_verdict(0.7, 0, 6)[:24], check_verdict(0.2, 1, 6)
    ('So the skewed, heavy-tai', 'Here, as in the paper, the average gap is the weaker guide.')
    """
    if abs(r_avg_gap) >= 0.5 or n_avg_better > n_systems / 2:
        return ("So the skewed, heavy-tailed shape does not make the average gap fail on these systems: the paper's "
                "explanation is not tested by them.")
    return "Here, as in the paper, the average gap is the weaker guide."


def pairwise_reasons(row: Mapping[str, float], opening: str) -> str:
    """What decides a system's pairwise answers, where it is most of them: naming nobody or declaring a tie in at
    least half of the answers, naming the first-shown candidate in at least 75 % of the named ones, or opening at
    least half of them with the system prompt's first words (``opening``). Empty when none holds.

    ``row`` holds the percentages ``undetected``, ``tie``, ``first_shown`` and ``echo``.

    >>> print(pairwise_reasons({"undetected": 80.0, "tie": 0.0, "first_shown": 90.0, "echo": 0.0}, "You are"))
    names nobody in 80.0 % of its answers and names the candidate shown first in 90.0 % of the answers that
    name someone
    >>> pairwise_reasons({"undetected": 0.0, "tie": 0.0, "first_shown": 50.0, "echo": 0.0}, "You are")
    ''
    """
    found = [f"names nobody in {row['undetected']:.1f} % of its answers"] if row["undetected"] >= 50 else []
    found += [f"declares a tie in {row['tie']:.1f} % of its answers"] if row["tie"] >= 50 else []
    found += ([f"names the candidate shown first in {row['first_shown']:.1f} % of the answers that name someone"]
              if row["first_shown"] >= 75 else [])
    found += ([f"opens {row['echo']:.1f} % of its answers with {opening!r}, the first words of the system prompt, "
               "which it continues instead of answering"] if row["echo"] >= 50 else [])
    return " and ".join(found)


def pairwise_verdict(reasons: Mapping[str, str]) -> str:
    """The chapter's verdict on the pairwise answers from :func:`pairwise_reasons` per system (in order).

    >>> pairwise_verdict({"a": "names nobody in 100.0 % of its answers"})[:60]
    'a names nobody in 100.0 % of its answers. For every system r'
    >>> print(pairwise_verdict({"a": ""}))
    The answers of a name candidates and do not mostly follow the position, so their pairwise points can be
    read, with the inconsistent share in mind.
    """
    bound = [s for s, why in reasons.items() if why]  # systems whose answers the format or the position decides
    return "; ".join(f"{s} {reasons[s]}" for s in bound) + (". " if bound else "") + (
        "For every system read here, then, the pairwise points are decided by the answer format (an answer that "
        "names nobody earns nobody a point, a tie gives both candidates the same) or by the position (a pair whose "
        "two orders each name the first-shown candidate gives both candidates half a point), not by the candidates"
        if len(bound) == len(reasons)
        else f"The answers of {', '.join(s for s in reasons if s not in bound)} name candidates and do not "
        "mostly follow the position, so their pairwise points can be read, with the inconsistent share in mind"
    ) + "."


def _range_word(value: float, low: float, high: float) -> str:
    return "within" if low <= value <= high else "above" if value > high else "below"


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreShapeFindings(Findings):
    """Everything the score-shape chapter shows.

    * ``scores``: the pointwise scores read; ``shape``: :func:`allocbias.metrics.score_shape` per (system, model,
      job, group), ``defined``: its cells with a defined shape; ``per_system``: shares and medians per system;
    * ``between``: per system, the median share of a cell's variance between its résumés;
    * ``check_within``: RABBI's and the average gap's :math:`r` with :math:`\\Delta DP` within each system;
    * ``mass``: the label mass per system (quantiles, share below 0.5);
    * ``paper``: the paper's Table 2 (with ``other = 100 - regular - tie``); ``table2``: the paper's rows and
      ours; ``behaviour``: what our systems answer (``None`` without ``pairwise_systems``);
    * ``values``: the scalars and phrases the prose quotes (:meth:`glue_values`); ``parameters``: what produced it.
    """

    scores: pd.DataFrame
    shape: pd.DataFrame
    defined: pd.DataFrame
    per_system: pd.DataFrame
    between: pd.Series
    check_within: pd.DataFrame
    mass: pd.DataFrame
    paper: pd.DataFrame
    table2: pd.DataFrame
    behaviour: pd.DataFrame | None
    values: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def _check(systems: Sequence[str], jobs: Sequence[str], pairwise_systems: Sequence[str], pairwise_rounds: int,
           pairwise_groups: Sequence[str]) -> None:
    if not list(systems) or not list(jobs):
        raise ValueError(f"systems and jobs must each name at least one, got systems={systems}, jobs={jobs}")
    checks.pairwise_design(pairwise_systems, pairwise_rounds, pairwise_groups, data.GROUPS)


def score_shapes_findings(
    systems: Sequence[str],
    jobs: Sequence[str],
    names_per_group: int = 10,
    seed: int = 0,
    scores_root: str = "",
    pairwise_systems: Sequence[str] = (),
    pairwise_rounds: int = 30,
    pairwise_groups: Sequence[str] = (),
    *,
    scores: pd.DataFrame | None = None,
    paper_table1: pd.DataFrame | None = None,
    paper_table2: pd.DataFrame | None = None,
) -> ScoreShapeFindings:
    """The score-shape chapter's findings, from the chapter's parameters.

    ``scores`` (default: the stored pointwise scores of ``systems`` on ``jobs``,
    :func:`allocbias.scoring.catalog.study_scores`; the committed tables when ``scores_root`` is empty) needs the columns
    ``system, model, job, resume_id, group, qualified, score, label_mass``. The pairwise answers of
    ``pairwise_systems`` are read from the tables under ``scores_root`` for ``pairwise_rounds`` pools per job of
    ``pairwise_groups`` (empty: all eight); a table lacking a prompt of those pools stops the chapter. The paper's
    tables default to ``data/paper/rabbi_table1.csv`` and ``rabbi_table2.csv``.
    """
    systems, jobs = list(systems), list(jobs)
    pairwise_systems, pairwise_groups = list(pairwise_systems), list(pairwise_groups)
    _check(systems, jobs, pairwise_systems, pairwise_rounds, pairwise_groups)
    names_per_group, seed = checks.count(names_per_group, "names_per_group"), checks.seed(seed)
    root = catalog.resolve_scores_root(scores_root)
    seconds = 0.0
    if scores is None:
        scores, seconds = runs.timed(catalog.study_scores, systems, jobs=jobs, names_per_group=names_per_group,
                                     seed=seed, root=root if scores_root else None)  # None: the committed tables
    checks.require_columns(scores, ["system", "model", "job", "resume_id", "group", "qualified", "score",
                                    "label_mass"], "scores", nonempty=True)
    if paper_table1 is None:
        paper_table1 = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    if paper_table2 is None:
        paper_table2 = datasets.read_csv(data.data_dir() / "paper" / "rabbi_table2.csv")
    checks.require_columns(paper_table2, ["model", "regular", "tie", "flipped", "inconsistent", "source"],
                           "the paper's Table 2", nonempty=True)
    values: dict[str, Any] = {}
    n_resumes = int(scores.groupby("job")["resume_id"].nunique().iloc[0])
    for name, value in dict(n_systems=len(systems), n_jobs=len(jobs), n_groups=len(data.GROUPS), n_rows=len(scores),
                            names_per_group=names_per_group, n_resumes=n_resumes,
                            n_per_cell=n_resumes * names_per_group).items():
        values[name] = int(value)
    values["read_seconds"] = float(seconds)

    # skewness and kurtosis per (system, group, job)
    shape = metrics.score_shape(scores, "score", "group", by=["system", "model", "job"], on_constant="nan")
    defined = shape.dropna(subset=["skewness", "excess_kurtosis"])
    values["se_skew"], values["se_kurt"] = skew_standard_errors(n_resumes * names_per_group)
    values["n_shape_cells"] = len(shape)
    values["n_constant_cells"] = int(len(shape) - len(defined))
    per_system = defined.groupby("system").agg(
        cells=("skewness", "size"), median_skewness=("skewness", "median"),
        share_left_skewed=("skewness", lambda g: float((g < 0).mean())),
        median_excess_kurtosis=("excess_kurtosis", "median"),
        share_heavy_tailed=("excess_kurtosis", lambda k: float((k > 0).mean()))).reindex(systems)
    share_left = float((defined["skewness"] < 0).mean())
    share_heavy = float((defined["excess_kurtosis"] > 0).mean())
    share_both = float(((defined["skewness"] < 0) & (defined["excess_kurtosis"] > 0)).mean())
    for name, value in dict(share_left=share_left, share_heavy=share_heavy, share_both=share_both,
                            median_skew=defined["skewness"].median(), median_kurt=defined["excess_kurtosis"].median(),
                            skew_min=defined["skewness"].min(), skew_max=defined["skewness"].max(),
                            kurt_min=defined["excess_kurtosis"].min(),
                            kurt_max=defined["excess_kurtosis"].max()).items():
        values[name] = float(value)
    values.update(shape_words(share_left, share_heavy))
    values["per_system_words"] = per_system_words(per_system["median_skewness"])
    group_skew = defined.groupby("group")["skewness"].median()
    values["group_skew_low"] = str(group_skew.idxmin())
    values["group_skew_low_value"] = float(group_skew.min())
    values["group_skew_high"] = str(group_skew.idxmax())
    values["group_skew_high_value"] = float(group_skew.max())

    # the share of a cell's variance between its résumés
    resume_mean = scores.groupby(["system", "job", "group", "resume_id"], observed=True)["score"].transform("mean")
    parts = scores.assign(between=resume_mean).groupby(["system", "job", "group"], observed=True).agg(
        total=("score", lambda s: s.var(ddof=0)), between=("between", lambda s: s.var(ddof=0)))
    parts = parts[parts["total"] > 0]
    between_share = parts["between"] / parts["total"]
    values["between_share_median"] = float(between_share.median())
    values["between_share_min"] = float(between_share.min())
    values["between_share_max"] = float(between_share.max())
    values["between_words"] = between_words(between_share.median())
    between = between_share.groupby("system").median().reindex(systems).rename(
        "median share of variance between résumés")

    # does the shape make the average gap fail here? its correlation with ΔDP, pooled and per system
    check_points = tables.study_points(scores, CHECK_K, CHECK_ROUNDS, seed)
    check_pooled = validity.validity_table(check_points, ["rabbi", "avg_gap"], ["dDP"]).set_index("metric")["r"]
    check_within = validity.validity_table(check_points, ["rabbi", "avg_gap"], ["dDP"], by=["system"]).pivot(
        index="system", columns="metric", values="r")
    n_better = int((check_within["avg_gap"].abs() > check_within["rabbi"].abs()).sum())
    paper_r = float(paper_table1[(paper_table1["task"] == "resume screening")
                                 & (paper_table1["setting"] == "pointwise") & (paper_table1["metric"] == "avg_gap")
                                 & (paper_table1["gap"] == "dDP")]["r"].iloc[0])
    values["check_k"] = CHECK_K
    values["check_rounds"] = CHECK_ROUNDS
    values["check_r_avg_gap"] = float(check_pooled["avg_gap"])
    values["check_r_rabbi"] = float(check_pooled["rabbi"])
    values["check_n_avg_better"] = n_better
    values["check_paper_r_avg_gap"] = paper_r
    values["check_verdict"] = check_verdict(check_pooled["avg_gap"], n_better, len(systems))

    # the label mass
    mass = scores.groupby("system")["label_mass"].describe(percentiles=[0.05, 0.5, 0.95]).reindex(systems)
    mass["share below 0.5"] = scores.groupby("system")["label_mass"].apply(lambda m: float((m < 0.5).mean()))
    values["mass_median_all"] = float(scores["label_mass"].median())
    values["mass_low_system"] = str(mass["50%"].idxmin())
    values["mass_low_median"] = float(mass["50%"].min())
    values["mass_high_system"] = str(mass["50%"].idxmax())
    values["mass_high_median"] = float(mass["50%"].max())
    values["mass_share_below_half"] = float((scores["label_mass"] < 0.5).mean())
    values["mass_medians"] = ", ".join(f"{s} {mass.loc[s, '50%']:.2f}" for s in systems)
    mass = mass[["count", "5%", "50%", "95%", "min", "max", "share below 0.5"]].astype({"count": int})
    mass = mass.rename_axis("system").reset_index()

    # the paper's Table 2
    paper = paper_table2.assign(other=lambda t: (100 - t["regular"] - t["tie"]).round(2)).set_index("model")
    excluded = paper.index[paper["inconsistent"] > PAPER_EXCLUSION]
    values["paper_n_models"] = len(paper)
    values["paper_exclusion"] = PAPER_EXCLUSION
    values["paper_n_excluded"] = len(excluded)
    values["paper_excluded"] = " and ".join(excluded)
    for col in ("regular", "flipped", "inconsistent", "other"):
        values[f"paper_{col}_min"] = float(paper[col].min())
        values[f"paper_{col}_max"] = float(paper[col].max())
    values["paper_inconsistent_min_model"] = str(paper["inconsistent"].idxmin())
    values["paper_inconsistent_max_model"] = str(paper["inconsistent"].idxmax())

    # our pairwise statistics
    values["study_pairwise_rounds"] = STUDY_PAIRWISE_ROUNDS
    values["pairs_per_pool"] = comb(len(data.GROUPS), 2)
    values["study_generations"] = STUDY_PAIRWISE_ROUNDS * len(jobs) * comb(len(data.GROUPS), 2) * 2
    values["pointwise_prompts"] = len(scores) // len(systems)
    values["pilot_rounds"] = PILOT_ROUNDS
    values["pilot_groups"] = PILOT_GROUPS
    values["pilot_prompts"] = PILOT_ROUNDS * len(data.JOBS) * comb(PILOT_GROUPS, 2) * 2
    combined = paper.drop(columns=["source"]).assign(undetected=np.nan, source="paper, Table 2 (as reported)")
    # "other" = 100 - regular - tie for every row: for our rows it is the undetected share
    answers, behaviour = pd.DataFrame(), None
    if pairwise_systems:
        answers, behaviour, combined = _pairwise(values, combined, paper, systems=pairwise_systems, jobs=jobs,
                                                 names_per_group=names_per_group, seed=seed, root=root,
                                                 rounds=pairwise_rounds, groups=pairwise_groups)
    else:
        values["pairwise_status"] = (
            "This run computes no pairwise statistics of its own (the parameter pairwise_systems is empty). The "
            "table and the figure below show the paper's values only; set pairwise_systems (with pairwise_rounds "
            "and pairwise_groups as in the scoring chapter) to put stored answers next to them, for instance the "
            "committed study-scale answers of smollm2-fp32-paper and gemma3-fp32-paper.")
        values["pairwise_verdict"] = ("This run reads no pairwise answers of its own (pairwise_systems is empty), so "
                                      "there is nothing to describe here.")
        values["pairwise_short"] = "none read in this run"
    values["n_pairwise_prompts"] = len(answers)
    values["n_table2_rows"] = len(combined)
    table2 = combined[["source", "regular", "tie", "undetected", "flipped", "inconsistent", "other"]]
    return ScoreShapeFindings(
        scores=scores, shape=shape, defined=defined, per_system=per_system.reset_index(), between=between,
        check_within=check_within, mass=mass, paper=paper, table2=table2, behaviour=behaviour,
        values=values,
        parameters={"systems": systems, "jobs": jobs, "names_per_group": names_per_group, "seed": seed,
                    "pairwise_systems": pairwise_systems, "pairwise_rounds": pairwise_rounds,
                    "pairwise_groups": pairwise_groups})


def _pairwise(values: dict[str, Any], combined: pd.DataFrame, paper: pd.DataFrame, *, systems: list[str],
              jobs: list[str], names_per_group: int, seed: int, root: Any, rounds: int, groups: list[str]
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Read the stored pairwise answers of ``systems`` (never scoring them); fill ``values``; return the answers,
    what the systems answer, and Table 2 with our rows under the paper's."""
    cands = data.candidate_table(jobs, names_per_group=names_per_group, seed=seed)
    pools = items.pairwise_pools(cands[cands["group"].isin(groups)] if groups else cands, rounds, seed)
    pair_items = items.resume_pairwise_items(pools)
    stores = {s: catalog.store_for(parse_system(s), "resume_pairwise", root) for s in systems}
    for system, store in stores.items():  # this chapter reads answers, it never scores them
        missing = int((~pair_items["prompt_id"].isin(store.done_ids())).sum())
        if missing:
            raise ValueError(f"system {system!r}: its pairwise table under {root} lacks {missing} of the "
                             f"{len(pair_items)} prompts of these pools; score them with notebooks/02_scoring.ipynb "
                             "and the same pairwise parameters (or scripts/score_study.py resume_pairwise when "
                             "pairwise_groups is empty)")
    answers = runs.pairwise_table(systems, pools, root=root)
    ours = metrics.pairwise_output_stats(answers, by=["system"]).set_index("system").reindex(systems)
    ours_rows = ours.drop(columns=["n_prompts", "n_pairs"]).assign(source="this study")
    combined = pd.concat([combined, ours_rows.assign(other=100 - ours_rows["regular"] - ours_rows["tie"])])
    low, high = paper["inconsistent"].min(), paper["inconsistent"].max()
    shares = metrics.pairwise_answer_shares(answers, by=["system"]).set_index("system").reindex(systems)
    empty = shares["empty"]
    prov = catalog.provenance_table(root).set_index("table").loc[[st.path.name for st in stores.values()]]
    hardware = sorted(set(prov["gpu"].where(prov["gpu"] != "", prov["cpu"] + " (no GPU)")))
    distinct = pair_items["prompt_id"].nunique()  # a pair drawn into two pools of a job is asked once
    unread = int(prov["rows"].sum()) - distinct * len(systems)  # stored prompts these pools do not ask
    values["pairwise_status"] = (
        f"This run reads the stored pairwise answers of {count_text(len(systems), 'system')}, {len(answers):,} in all "
        f"({len(answers) // len(systems):,} per system: {count_text(rounds, 'pool')} per job of {len(groups) or len(data.GROUPS)} "
        f"candidates, {count_text(len(jobs), 'job')}, every pair in both orders; a pair drawn into two pools is asked once, so "
        f"they come from {distinct:,} distinct prompts per system), scored (as their provenance records) on "
        f"{' and '.join(hardware)}; the tables hold {count_text(unread, 'more row')} that these pools do not ask. The table "
        "below puts them under the paper's rows. " + "; ".join(
            f"{s}: {r.regular:.1f} % regular, {r.tie:.1f} % tie, {r.undetected:.1f} % undetected, {r.flipped:.1f} % "
            f"flipped and {r.inconsistent:.1f} % inconsistent pairs ({_range_word(r.inconsistent, low, high)} the "
            f"paper's range), {empty[s]:.1f} % of its answers empty"
            for s, r in ours.iterrows()) + ".")
    values["n_pairwise_unread"] = unread
    for s, r in ours.iterrows():
        for col in PAIRWISE_COLUMNS:
            values[f"pw_{col}_{s.replace('-', '_')}"] = float(r[col])
        values[f"pw_empty_{s.replace('-', '_')}"] = float(empty[s])

    # what the systems answer
    text = answers["answer"].fillna("").str.strip()
    opening = " ".join(pair_items["messages"].iloc[0][0]["content"].split()[:2])  # the system prompt's first words
    by = answers["system"]
    behaviour = pd.DataFrame({
        "named": ours["regular"],
        "first_shown": shares["first_shown"],
        "empty": shares["empty"],
        "echo": 100 * text.str.startswith(opening).groupby(by).mean(),
        "common": text[text.ne("")].str.replace(r"\s+", " ", regex=True).str[:48].groupby(by[text.ne("")]).agg(
            lambda t: t.mode().iloc[0])}).reindex(systems)
    for s, r in behaviour.iterrows():
        values[f"pw_first_{s.replace('-', '_')}"] = float(r["first_shown"])
        values[f"pw_echo_{s.replace('-', '_')}"] = float(r["echo"])
    reasons = {s: pairwise_reasons(r, opening) for s, r in behaviour.join(ours[["undetected", "tie"]]).iterrows()}
    values["pairwise_verdict"] = pairwise_verdict(reasons)
    values["pairwise_short"] = ", ".join(f"{s} {ours.loc[s, 'regular']:.1f} %" for s in systems)
    behaviour = behaviour.rename(columns={
        "named": "names a candidate (%)", "first_shown": "of those, the first-shown (%)", "empty": "empty (%)",
        "echo": f"opens with {opening!r} (%)", "common": "most frequent non-empty answer"})
    return answers, behaviour.rename_axis("system").reset_index(), combined


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_shapes(findings: ScoreShapeFindings) -> Figure:
    """Skewness against excess kurtosis, one point per (system, group, job) cell (the paper's Figure 13)."""
    systems = findings.parameters["systems"]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    sns.scatterplot(findings.defined, x="skewness", y="excess_kurtosis", hue="system", hue_order=systems,
                    palette=system_palette(systems), style="model", s=30, alpha=0.75, ax=ax)
    ax.axvline(0, color="grey", lw=0.8)
    ax.axhline(0, color="grey", lw=0.8)
    label_axes(ax, title="Shape of the pointwise scores: one point per (system, group, job)",
               x="skewness g1 (no unit; below 0: long lower tail)",
               y="excess kurtosis g2 (no unit; above 0: heavier tails than normal)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=LEGEND_POINTS)
    return fig


def figure_skew_by_group(findings: ScoreShapeFindings) -> Figure:
    """The cells' skewness by group (one point per system and job)."""
    order = list(GROUP_ORDER)
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.stripplot(findings.defined, x="skewness", y="group", hue="group", order=order, hue_order=order,
                  palette=group_palette(), size=5, jitter=0.2, alpha=0.8, legend=False, ax=ax)
    ax.axvline(0, color="grey", lw=0.8)
    label_axes(ax, title="Skewness of the scores by group (one point per system and job)",
               x="skewness g1 (no unit; below 0: long lower tail)", y="group")
    return fig


def figure_label_mass(findings: ScoreShapeFindings) -> Figure:
    """The empirical distribution of the label mass per system."""
    systems = findings.parameters["systems"]
    fig, ax = plt.subplots(figsize=(8, 5))
    sns.ecdfplot(findings.scores, x="label_mass", hue="system", hue_order=systems, palette=system_palette(systems),
                 ax=ax)
    label_axes(ax, title="How much next-token probability lands on Yes or No, per system",
               x="label mass M (probability, 0 to 1)", y="share of candidates with at most this mass (0 to 1)")
    ax.set_xlim(0, 1)
    if ax.get_legend() is not None:
        plt.setp(ax.get_legend().get_texts(), fontsize=LEGEND_POINTS)
    return fig


def figure_pairwise(findings: ScoreShapeFindings) -> Figure:
    """Flipped and inconsistent pairs and answers naming nobody, for the paper's models and our systems, beside
    the paper's cut-off for inconsistent pairs."""
    bars = {"flipped": "flipped pairs", "inconsistent": "inconsistent pairs", "other": "answers naming nobody (no tie)"}
    table2 = findings.table2
    long = table2.reset_index().rename(columns={"index": "model"}).rename(columns=bars).melt(
        id_vars=["model", "source"], value_vars=list(bars.values()), var_name="statistic", value_name="percent")
    fig, ax = plt.subplots(figsize=(10, 0.4 * len(table2) + 1.5))
    sns.barplot(long, y="model", x="percent", hue="statistic", orient="h", ax=ax)
    ax.axvline(PAPER_EXCLUSION, color="black", ls="--", lw=1)
    label_axes(ax, title="Can the pairwise answers be used? (dashed: the paper's cut-off for inconsistent pairs)",
               x="percent of pairs (flipped, inconsistent) or of prompts (naming nobody)",
               y="paper's model (reported) or our system")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=LEGEND_POINTS)
    ax.set_xlim(0, 100)
    return fig
