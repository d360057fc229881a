r"""The task and its data: everything the chapter on the study's design shows, computed from the committed data.

The chapter fixes what the study audits and how it asks a model. Nothing here runs a model; it reads the committed
tables and data cards (``allocbias.audited.data``), re-runs the name rule (``allocbias.audited.names``) and renders
the prompts (``allocbias.audited.prompts``):

* the design: jobs x résumés (qualified = high quality) x groups x names per group and job, the groups' table and
  the essay path (ICNALE groups, the DEMO essays and their data card);
* the names: the rule's thresholds, a re-run of the rule on the source tables (which must select the committed
  names), per-group counts, commonness (the share of the race's voters whose first name is on the list) and the
  cross-check against Tzioumis (2018), with the group that agrees least;
* jobs, résumés and their criteria, one rendered résumé per quality level, the candidate table and the selection
  pools (one candidate per group, :func:`allocbias.measures.selection.draw_group_pools`);
* the prompts: the pointwise templates, the pointwise, pairwise and HiringBloomberg (listwise) example prompts and
  the prompt hashes (:func:`allocbias.audited.prompts.prompt_hash`) of every template and example.

:func:`task_and_data_findings` computes all of it and returns a :class:`TaskAndDataFindings`; the figures are drawn
by :func:`figure_race_shares`, :func:`figure_name_frequency` and :func:`figure_tzioumis_shares`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import to_hex
from pandas.io.formats.style import Styler

from ..audited.data import group_slug  # re-exported: the glue keys' group suffix
from .. import checks
from ..audited import data, prompts
from ..audited import names as name_rule
from ..measures.genderbench import build_items, pivot_attempts
from ..measures.selection import draw_group_pools
from ..plotting import GROUP_ORDER, SEX_MARKERS, group_handles, group_palette, label_axes, with_sex
from .findings import Findings

__all__ = [
    "TaskAndDataFindings",
    "elide_ad",
    "fenced",
    "figure_name_frequency",
    "figure_race_shares",
    "figure_tzioumis_shares",
    "group_slug",
    "groups_styler",
    "task_and_data_findings",
]

#: Paragraphs of the job ad the chapter shows.
EXCERPT_PARAGRAPHS = 4
#: The columns of the name sample, and how the chapter names them.
SAMPLE_COLUMNS: Mapping[str, str] = {"rank": "rank in group", "race_share": "P(race | name)",
                                     "sex_share": "P(sex | name), SSA", "ssa_births": "SSA births",
                                     "frequency": "P(name | race)", "xcheck_share": "P(race | name), Tzioumis"}


# --------------------------------------------------------------------------------------------------------------
# small text helpers
# --------------------------------------------------------------------------------------------------------------

def fenced(title: str, text: str) -> str:
    """A titled block of plain text, as Markdown.

    >>> fenced("user", "Hi")
    '**user**\\n\\n```text\\nHi\\n```'
    """
    return f"**{title}**\n\n```text\n{text}\n```"


def elide_ad(text: str, ad: str, title: str) -> str:
    """``text`` with the job ad replaced by a placeholder naming the job and the ad's length (the ad is long and
    shared by every candidate of the job).

    >>> elide_ad("Ad: AAAA. Name: Jo", "AAAA", "Clerk")
    "Ad: [job ad of 'Clerk': 4 characters]. Name: Jo"
    """
    return text.replace(ad, f"[job ad of '{title}': {len(ad)} characters]")


def _messages_markdown(messages: list[dict], ad: str, title: str) -> str:
    """A prompt's chat messages as the chapter prints them: one titled block per message, the job ad elided.

    >>> print(_messages_markdown([{"role": "user", "content": "Ad: AAAA"}], "AAAA", "Clerk"))
    **user**
    <BLANKLINE>
    ```text
    Ad: [job ad of 'Clerk': 4 characters]
    ```
    """
    return "\n\n".join(fenced(m["role"], elide_ad(m["content"], ad, title)) for m in messages)


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskAndDataFindings(Findings):
    """What the chapter on the task and its data shows.

    Tables (DataFrames): ``groups`` (group, gender, race, reference), ``demo_essays`` (DEMO essays per topic and
    group), ``thresholds`` (the rule's minimum race shares), ``names_summary`` (per group: names, eligible pool,
    commonness), ``name_sample``, ``cross_check`` (per group, against Tzioumis), ``worst_tzioumis`` (the disagreeing
    names of the least agreeing group with Tzioumis' six shares), ``jobs``, ``resumes``, ``candidates``,
    ``pool_members`` (the first rounds of the shown job, one column per round), ``hb_item`` (the first
    HiringBloomberg item) and ``hashes``. Figure data: ``first_names`` (the committed first names). Texts
    (Markdown or plain): ``texts``. Inputs the exercises reuse: ``names``, ``sources``, ``rule``, ``job``,
    ``examples``, ``example_name``. ``values``: every glued value (:meth:`glue_values`).
    """

    groups: pd.DataFrame
    demo_essays: pd.DataFrame
    thresholds: pd.DataFrame
    names_summary: pd.DataFrame
    name_sample: pd.DataFrame
    cross_check: pd.DataFrame
    worst_tzioumis: pd.DataFrame
    jobs: pd.DataFrame
    resumes: pd.DataFrame
    candidates: pd.DataFrame
    pool_members: pd.DataFrame
    hb_item: pd.DataFrame
    hashes: pd.DataFrame
    first_names: pd.DataFrame
    texts: dict[str, str]
    names: pd.DataFrame
    sources: Any
    rule: name_rule.NameRule
    job: Any
    examples: dict[str, Any]
    example_name: str
    values: dict[str, Any] = field(default_factory=dict)


def _check(names_per_group: Any, seed: Any, sample_per_group: Any, job: Any, wording: Any, pool_rounds: Any) -> None:
    checks.count(names_per_group, "names_per_group")
    checks.seed(seed)
    checks.count(sample_per_group, "sample_per_group")
    checks.count(pool_rounds, "pool_rounds")
    if wording not in prompts.RESUME_WORDINGS:
        raise ValueError(f"wording must be one of {list(prompts.RESUME_WORDINGS)}, got {wording!r}")
    if job not in data.JOBS:
        raise ValueError(f"job must be one of {list(data.JOBS)}, got {job!r}")


def task_and_data_findings(*, names_per_group: int = 10, seed: int = 0, sample_per_group: int = 5,
                           job: str = "software_engineer", wording: str = "paper", pool_rounds: int = 3
                           ) -> TaskAndDataFindings:
    """Everything the chapter shows, for its parameters (the notebook's parameters cell, same names).

    ``names_per_group`` names per group and job make the candidate table; ``seed`` seeds every draw (candidate
    names, name sample, pools, HiringBloomberg item); ``sample_per_group`` names per group are shown; ``job`` is
    the job whose ad, résumés and prompts are shown, in the pointwise ``wording``; ``pool_rounds`` selection rounds
    are drawn per job. Raises ``ValueError`` naming a bad parameter.
    """
    _check(names_per_group, seed, sample_per_group, job, wording, pool_rounds)
    order = list(GROUP_ORDER)
    rule = name_rule.DEFAULT_RULE
    names = data.load_names()
    first = names[names["kind"] == "first"]
    jobs = data.load_jobs()
    shown = data.load_jobs([job])[job]
    cands = data.candidate_table(names_per_group=names_per_group, seed=seed, names=names, job_data=jobs)
    s: dict[str, Any] = {}
    texts: dict[str, str] = {}

    # the design: jobs, résumés, groups
    resumes = data.resume_table(jobs)
    s["n_jobs"] = len(jobs)
    s["job_titles"] = ", ".join(j.title for j in jobs.values())
    s["resumes_per_job"] = int(resumes.groupby("job").size().iloc[0])
    s["n_resumes"] = len(resumes)
    s["n_qualified_resumes"] = int(resumes["qualified"].sum())
    s["n_groups"] = len(data.GROUPS)
    s["groups"] = list(order)
    s["reference_group"] = data.REFERENCE_GROUP
    groups = pd.DataFrame({"group": order, "gender": [g.split()[0] for g in order],
                           "race": [g.split()[1] for g in order],
                           "reference": [g == data.REFERENCE_GROUP for g in order]})

    # the essay path: ELLIPSE, the real essays the book grades (chapter 16), then the code's demo set
    ellipse_all = data.load_ellipse(sample="all")
    ellipse = data.load_ellipse()
    s["n_ellipse_essays"] = len(ellipse_all)
    s["n_ellipse_study"] = len(ellipse)
    s["n_ellipse_prompts"] = int(ellipse_all["topic"].nunique())
    s["ellipse_groups"] = ", ".join(data.ELLIPSE_GROUPINGS["race_ethnicity"])
    s["ellipse_reference"] = data.ELLIPSE_REFERENCE_GROUPS["race_ethnicity"]
    demo = data.load_demo_essays()
    s["n_demo_essays"] = len(demo)
    s["demo_groups"] = ", ".join(data.DEMO_GROUPS)
    s["icnale_reference"] = data.ICNALE_REFERENCE_GROUP
    icnale_l2 = [g for g in data.ICNALE_GROUPS if g != data.ICNALE_REFERENCE_GROUP]
    s["icnale_l2"] = ", ".join(icnale_l2)
    s["n_icnale_l2"] = len(icnale_l2)
    texts["demo_card"] = "> " + data.card_section("essays_demo/README.md").split("\n\n")[0].replace("\n", "\n> ")
    demo_table = demo.groupby(["topic", "group"]).agg(essays=("essay_id", "size"), qualified=("qualified", "sum"),
                                                      mean_rating=("rating", "mean")).reset_index()

    # the name rule and its re-run
    s["ssa_first_year"] = int(rule.ssa_years[0])
    s["ssa_last_year"] = int(rule.ssa_years[1])
    s["ssa_min_births"] = int(rule.ssa_min_births)
    s["sex_share_min"] = float(rule.sex_share_min)
    s["max_frequency_ratio"] = float(rule.max_frequency_ratio)
    s["n_first"] = int(rule.n_first)
    s["n_last"] = int(rule.n_last)
    s["asian_first_min"] = float(rule.first_race_min["Asian"])
    s["black_last_min"] = float(rule.last_race_min["Black"])
    s["white_last_min"] = float(rule.last_race_min["White"])
    s["white_first_min"] = float(rule.first_race_min["White"])
    thresholds = pd.DataFrame({"first name: min P(race | name)": rule.first_race_min,
                               "surname: min P(race | name)": rule.last_race_min}).rename_axis("race").reset_index()
    sources = name_rule.load_sources()
    eligible = name_rule.first_name_candidates(sources, rule)
    rerun = name_rule.select_first_names(sources, rule)
    s["n_first_total"] = len(first)
    s["n_rerun_same"] = len(rerun.merge(first, on=["group", "name", "rank"]))

    # counts per group
    summary = data.names_summary(names).set_index("group").loc[order]
    summary.insert(3, "eligible", eligible.groupby("group").size().reindex(order))
    s["first_names_per_group"] = {g: int(v) for g, v in summary["first_names"].items()}
    s["surnames_per_group"] = {g: int(v) for g, v in summary["surnames"].items()}
    s["eligible_per_group"] = {g: int(v) for g, v in summary["eligible"].items()}
    s["fewest_eligible_group"] = str(summary["eligible"].idxmin())
    s["fewest_eligible"] = int(summary["eligible"].min())
    s["min_first_names"] = int(summary["first_names"].min())
    for g in order:
        s[f"coverage_{group_slug(g)}"] = float(summary.loc[g, "race_frequency_sum"])
    s["sample_per_group"] = int(sample_per_group)
    sample = first.groupby("group").sample(sample_per_group, random_state=seed)
    sample = sample.assign(group=pd.Categorical(sample["group"], order, ordered=True)).sort_values(["group", "rank"])
    columns = {**SAMPLE_COLUMNS, "ssa_births": f"SSA births {rule.ssa_years[0]}–{rule.ssa_years[1]}"}
    sample = sample.assign(ssa_births=sample["ssa_births"].round().astype("Int64"))
    sample = sample[["group", "name", *columns]].rename(columns=columns)

    # the cross-check with Tzioumis
    xcheck = name_rule.cross_check_summary(names)
    check = xcheck[xcheck["kind"] == "first"].drop(columns="kind").set_index("group").loc[order]
    s["xcheck_plurality"] = {g: float(v) for g, v in check["plurality"].items()}
    s["xcheck_share_ge_half"] = {g: float(v) for g, v in check["share_ge_half"].items()}
    s["xcheck_covered"] = {g: int(v) for g, v in check["covered"].items()}
    worst = str(check["plurality"].idxmin())
    s["worst_group"] = worst
    s["worst_plurality"] = float(check.loc[worst, "plurality"])
    s["worst_covered"] = int(check.loc[worst, "covered"])
    s["worst_mean_share"] = float(check.loc[worst, "mean_share"])
    s["female_black_covered"] = int(check.loc["Female Black", "covered"])
    s["plurality_others_min"] = float(check["plurality"].drop(worst).min())
    s["surname_plurality_min"] = float(xcheck.loc[xcheck["kind"] == "last", "plurality"].min())
    race = worst.split()[1]
    texts["worst_card"] = "\n\n".join("> " + b for b in data.card_bullets("names.md", "Cross-check")
                                      if b.startswith((f"**{race} first names**", f"{worst}:")))
    odd = first[(first["group"] == worst) & first["xcheck_plurality"].eq(False).fillna(False)].set_index("name")
    s["n_worst_disagree"] = len(odd)
    tzioumis = sources.tzioumis.reindex(odd.index.str.upper()).set_axis(odd.index)
    tzioumis.insert(0, f"P({race} | name), voter files", odd["race_share"])

    # jobs and résumés
    jobs_table = pd.DataFrame([{"job": j.key, "title": j.title, "GenderBench role": j.role,
                                "ad (words)": len(j.ad.split()), "key skills": ", ".join(j.key_skills.values())}
                               for j in jobs.values()])
    s["job_title"] = shown.title
    s["ad_words"] = len(shown.ad.split())
    paragraphs = shown.ad.split("\n\n")
    texts["ad_excerpt"] = ("\n\n".join(paragraphs[:EXCERPT_PARAGRAPHS])
                           + f"\n\n[... {len(paragraphs) - EXCERPT_PARAGRAPHS} more paragraphs]")
    s["n_key_skills"] = int(resumes["key_skills_total"].max())
    s["high_min_years"] = int(resumes.loc[resumes["quality"] == "high", "relevant_years"].min())
    s["low_max_years"] = int(resumes.loc[resumes["quality"] == "low", "relevant_years"].max())
    example_name = str(cands.loc[(cands["job"] == job) & (cands["group"] == data.REFERENCE_GROUP), "full_name"].iloc[0])
    examples = {q: next(r for r in shown.resumes if r.quality == q) for q in data.QUALITIES}
    rendered = {q: data.render_resume(r, example_name) for q, r in examples.items()}
    s["example_name"] = example_name
    word = re.compile(rf"\b{re.escape(example_name)}\b")
    s["example_name_counts"] = [len(word.findall(t)) for t in rendered.values()]
    texts["resumes"] = "\n\n".join(fenced(f"{q} quality ({r.id}, qualified: {r.qualified})", rendered[q])
                                   for q, r in examples.items())

    # candidates and pools
    s["names_per_group"] = int(names_per_group)
    s["n_candidates"] = len(cands)
    s["n_full_names_per_job"] = int(cands.groupby("job")["full_name"].nunique().min())
    s["candidate_columns"] = list(cands.columns)
    texts["candidate_shape"] = f"candidate table: {cands.shape[0]} rows x {cands.shape[1]} columns"
    pools = draw_group_pools(cands, rounds=pool_rounds, seed=seed, by="job")
    pool_groups = cands["group"].to_numpy()[pools]
    s["pool_rounds"] = int(pool_rounds)
    s["pool_size"] = int(pools.shape[1])
    s["n_pools"] = int(pools.shape[0])
    s["n_pools_one_per_group"] = int(sum(len(set(row)) == len(data.GROUPS) for row in pool_groups))
    in_job = pools[cands["job"].to_numpy()[pools[:, 0]] == job]
    members = cands.iloc[in_job.ravel()].assign(round=np.repeat(np.arange(len(in_job)), in_job.shape[1]))
    members = members.assign(candidate=members["full_name"] + " (" + members["resume_id"] + ")").pivot(
        index="group", columns="round", values="candidate").loc[order]
    members = members.rename(columns=lambda r: f"round {r}").reset_index()

    # the prompts: templates, pointwise and pairwise examples
    s["resume_labels"] = ", ".join(f"{k} = {v:g}" for k, v in prompts.RESUME_LABELS.items())
    texts["templates"] = "\n\n".join(fenced(f"{w}: {part}", prompts.TEMPLATES[f"resume_pointwise/{w}"][part])
                                     for w in prompts.RESUME_WORDINGS for part in ("system", "user", "prefill"))
    round0 = cands.iloc[in_job[0]].set_index("group")
    cand_a, cand_b = round0.loc[order[0]], round0.loc[order[1]]
    resume_a = data.render_resume(shown.resume(cand_a["resume_id"]), cand_a["full_name"])
    resume_b = data.render_resume(shown.resume(cand_b["resume_id"]), cand_b["full_name"])
    s["wording"] = wording
    pointwise = prompts.resume_pointwise_messages(shown.ad, resume_a, wording=wording)
    texts["pointwise"] = _messages_markdown(pointwise, shown.ad, shown.title)
    pairwise = prompts.resume_pairwise_messages(shown.ad, resume_a, resume_b)
    s["pair_a"] = f"{cand_a['full_name']} ({cand_a.name})"
    s["pair_b"] = f"{cand_b['full_name']} ({cand_b.name})"
    texts["pairwise"] = _messages_markdown(pairwise, shown.ad, shown.title)

    # the listwise HiringBloomberg probe
    hb_names = data.hiring_bloomberg_names(seed=seed, names=names)
    items = build_items(hb_names, [job], n_orderings=1, seed=seed, n_cvs=len(shown.resumes))
    item = items[items["item_id"] == 0]
    item = item.assign(resume=[shown.resumes[c].id for c in item["cv"]],
                       candidate=item["full_name"] + " (" + item["gender"] + ")")
    s["hb_race"] = str(item["race"].iloc[0])
    s["hb_slots"] = int(item["slot"].nunique())
    s["hb_swapped_slots"] = int((item.pivot(index="slot", columns="attempt", values="gender").nunique(axis=1)
                                 == 2).sum())
    hb_item = item.pivot(index=["slot", "resume"], columns="attempt", values="candidate").add_prefix("attempt ")
    row = pivot_attempts(items).iloc[0]
    cvs = [data.render_resume(shown.resumes[c], n) for c, n in zip(row["cvs"], row["names"])]
    listwise = prompts.hiring_bloomberg_messages(shown.role, shown.ad, cvs)
    text = listwise[0]["content"]
    s["hb_chars"] = len(text)
    head = text.split(prompts.HB_SEPARATOR)[0]
    texts["listwise_head"] = (elide_ad(head, shown.ad, shown.title)
                              + f"\n<hr>\n[... {len(cvs) - 1} more CVs separated by <hr>; {len(text)} characters in all]")

    # prompt hashes
    hashes = pd.DataFrame({"template": list(prompts.TEMPLATES),
                           "source": [t["source"] for t in prompts.TEMPLATES.values()],
                           "prompt_hash": [prompts.prompt_hash(t)[:12] for t in prompts.TEMPLATES.values()]})
    for key, h in zip(hashes["template"], hashes["prompt_hash"]):
        s["hash_" + re.sub(r"\W", "_", key)] = h
    for kind, messages in {"pointwise": pointwise, "pairwise": pairwise, "listwise": listwise}.items():
        s[f"hash_example_{kind}"] = prompts.prompt_hash(messages)[:12]

    return TaskAndDataFindings(
        groups=groups, demo_essays=demo_table, thresholds=thresholds,
        names_summary=summary.drop(columns=["gender", "race"]).reset_index(), name_sample=sample,
        cross_check=check.reset_index(), worst_tzioumis=tzioumis.reset_index(), jobs=jobs_table,
        resumes=resumes, candidates=cands, pool_members=members, hb_item=hb_item.reset_index(), hashes=hashes,
        first_names=first, texts=texts, names=names, sources=sources, rule=rule, job=shown, examples=examples,
        example_name=example_name, values=s)


# --------------------------------------------------------------------------------------------------------------
# tables and figures
# --------------------------------------------------------------------------------------------------------------
def groups_styler(findings: TaskAndDataFindings) -> Styler:
    """The groups' table with every group in the colour the book's figures give it."""
    palette = group_palette()
    return findings.groups.style.hide(axis="index").apply(
        lambda col: [f"background-color: {to_hex(palette[g])}" for g in col], subset=["group"])


def _strip(findings: TaskAndDataFindings, x: str, ax: plt.Axes) -> None:
    order = list(GROUP_ORDER)
    sns.stripplot(findings.first_names, x=x, y="group", order=order, hue="group", hue_order=order,
                  palette=group_palette(), size=3.5, jitter=0.25, legend=False, ax=ax)


def figure_race_shares(findings: TaskAndDataFindings) -> plt.Figure:
    """Voter-file race share :math:`P(r \\mid n)` of every chosen first name, by group, with the rule's threshold
    :math:`t_r` of the group's race as a dashed mark."""
    order = list(GROUP_ORDER)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    _strip(findings, "race_share", ax)
    ax.vlines([findings.rule.first_race_min[g.split()[1]] for g in order], np.arange(len(order)) - 0.4,
              np.arange(len(order)) + 0.4, color="black", ls="--")
    label_axes(ax, title="Race share of the chosen first names (dashed: the rule's threshold)",
               x="P(race | first name) in the voter files (share, 0 to 1)", y="group")
    return fig


def figure_name_frequency(findings: TaskAndDataFindings) -> plt.Figure:
    """Frequency :math:`P(n \\mid r)` of each chosen first name among its race's voters, by rank within the group
    (log scale)."""
    order = list(GROUP_ORDER)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    sns.lineplot(with_sex(findings.first_names), x="rank", y="frequency", hue="group", hue_order=order,
                 palette=group_palette(), style="sex", style_order=list(SEX_MARKERS), legend=False, ax=ax)
    ax.set_yscale("log")
    ax.legend(handles=list(group_handles(order, kind="line").values()), title="group", loc="upper left",
              bbox_to_anchor=(1.01, 1))
    label_axes(ax, title="How common the chosen first names are, by rank within the group",
               x="rank of the name within its group (1 = most common)",
               y="P(name | race), voter files (share, log scale)")
    return fig


def figure_tzioumis_shares(findings: TaskAndDataFindings) -> plt.Figure:
    """Tzioumis' (2018) race share of the chosen first names it covers, by group (dashed: one half), with the
    number of names found per group in the tick labels."""
    order = list(GROUP_ORDER)
    check = findings.cross_check.set_index("group")
    found = check["covered"].astype(str) + "/" + check["n"].astype(str)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    _strip(findings, "xcheck_share", ax)
    ax.axvline(0.5, color="black", ls="--", lw=1)
    ax.set_yticks(range(len(order)), [f"{g} ({found[g]} found)" for g in order])
    label_axes(ax, title="The same names in Tzioumis (2018) (dashed: a share of one half)",
               x="P(race | first name) in Tzioumis' mortgage data (share, 0 to 1)",
               y="group (names found in Tzioumis)")
    return fig
