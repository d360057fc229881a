"""The scoring runners: score the missing rows of a (system, task) table, locally or through a server.

Every runner goes through one path: the items of the task (:mod:`allocbias.items`), the
table that keeps their scores (:mod:`allocbias.catalog`: :func:`~allocbias.catalog.store_for` for a local system,
:func:`~allocbias.catalog.served_store` for a served model, addressed by what the served engine says of itself —
model name, prefill mode, ``top_logprobs``, extra request fields), and an engine asked only for the rows the table
lacks (:func:`allocbias.store.run_resumable`). Pointwise tasks ask the engine's ``pointwise`` (label
probabilities), the others its greedy ``generate``. A local model is loaded on first use only
(:class:`LazyEngine`), so reading a complete table loads nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .catalog import TASK_PARAMS, join_scores, served_store, store_for, with_system_columns
from .items import (
    ellipse_pointwise_items,
    essay_pointwise_items,
    require_columns,
    resume_pairwise_items,
    resume_pointwise_items,
)
from .prompts import ESSAY_LABELS, RESUME_LABELS
from .store import ScoreStore, run_resumable
from .systems import System, as_systems, served_system_id

__all__ = [
    "LazyEngine",
    "pairwise_table",
    "pointwise_table",
    "score_ellipse_pointwise",
    "score_essays_pointwise",
    "score_hiring_bloomberg",
    "score_resume_pairwise",
    "score_resume_pairwise_served",
    "score_resume_pointwise",
    "score_resume_pointwise_served",
    "timed",
]


class _TableEngine:
    """The engine that fills one local score table (named apart from the public :class:`LazyEngine`, which it may
    wrap): made on first use (so reading a complete stored table never loads a model) —
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


def _score_missing(
    store: ScoreStore, engine: Any, items: pd.DataFrame, *, labels: Mapping[str, float] | None = None,
    max_new_tokens: int | None = None, batch_size: int, progress: bool,
) -> pd.DataFrame:
    """The one scoring path of every runner: score the ``items`` (``prompt_id``, ``messages``) that ``store``
    lacks with ``engine`` — its ``pointwise`` with ``labels`` (columns ``score``, ``label_mass``, ``p_<label>``,
    ``n_tokens``), else its greedy ``generate`` of ``max_new_tokens`` (column ``answer``) — and return the stored
    table (one row per prompt id ever scored into it). ``engine`` is an engine (a served one) or the
    :class:`_TableEngine` of a local system, made on first use."""
    get = engine.get if isinstance(engine, _TableEngine) else (lambda: engine)

    def score(batch: pd.DataFrame) -> pd.DataFrame:
        if labels is not None:
            frame = pd.DataFrame(get().pointwise(list(batch["messages"]), labels, progress=False))
            frame.insert(0, "prompt_id", batch["prompt_id"].to_numpy())
            return frame
        answers = get().generate(list(batch["messages"]), max_new_tokens=max_new_tokens, progress=False)
        return pd.DataFrame({"prompt_id": batch["prompt_id"].to_numpy(), "answer": answers})

    return run_resumable(store, items[["prompt_id", "messages"]], score, batch_size=batch_size, progress=progress)


def _local(
    system: System, task: str, root: str | Path | None, command: str | None, engine: Any, engine_batch_size: int
) -> tuple[ScoreStore, _TableEngine]:
    """The table of a local (system, task) and the engine that fills it (made on first use)."""
    store = store_for(system, task, root, command=command)
    return store, _TableEngine(system, engine, engine_batch_size, store)


def _pairwise_answers(items: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The pairwise ``items`` joined to their stored answers, with the ``winner`` parsed and the ``pair_id``."""
    from .scoring import parse_pair_answer

    out = items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out["answer"] = out["answer"].fillna("")
    out["winner"] = [parse_pair_answer(t, a, b) for t, a, b in zip(out["answer"], out["name_a"], out["name_b"])]
    out["pair_id"] = out["job"] + "|" + out["round"].astype(str) + "|" + out["cand_a"] + "|" + out["cand_b"]
    return out


# ----------------------------------------------------------------------------------------------------------------
# Local systems
# ----------------------------------------------------------------------------------------------------------------
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
    store, lazy = _local(system, "resume_pointwise", root, command, engine, engine_batch_size)
    table = _score_missing(store, lazy, items, labels=RESUME_LABELS, batch_size=batch_size, progress=progress)
    return join_scores(candidates, items, table)


def score_resume_pairwise(
    system: System,
    pools: pd.DataFrame,
    *,
    root: str | Path | None = None,
    engine: Any = None,
    batch_size: int = 56,
    engine_batch_size: int = 8,
    command: str | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Answers of ``system`` to every pairwise prompt of ``pools`` (see :func:`allocbias.items.resume_pairwise_items`).

    Returns one row per (job, round, pair, order) with the raw ``answer`` and the ``winner`` parsed by
    :func:`allocbias.scoring.parse_pair_answer` (``a``/``b``/``tie``/``undetected`` relative to cand_a/cand_b)
    — the input of :func:`allocbias.metrics.pairwise_points`.
    """
    items = resume_pairwise_items(pools)
    store, lazy = _local(system, "resume_pairwise", root, command, engine, engine_batch_size)
    table = _score_missing(store, lazy, items.drop_duplicates("prompt_id"),
                           max_new_tokens=TASK_PARAMS["resume_pairwise"]["max_new_tokens"], batch_size=batch_size,
                           progress=progress)
    return _pairwise_answers(items, table)


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
    return _graded(system, "essay_pointwise", essay_pointwise_items(essays), root, engine, batch_size,
                   engine_batch_size, command, progress)


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
    return _graded(system, "ellipse_pointwise", ellipse_pointwise_items(essays), root, engine, batch_size,
                   engine_batch_size, command, progress)


def _graded(system, task, items, root, engine, batch_size, engine_batch_size, command, progress) -> pd.DataFrame:
    """The essay items of ``task`` with their grades (one store, missing rows scored), one row per essay."""
    store, lazy = _local(system, task, root, command, engine, engine_batch_size)
    table = _score_missing(store, lazy, items, labels=ESSAY_LABELS, batch_size=batch_size, progress=progress)
    table = table[table["prompt_id"].isin(set(items["prompt_id"]))]
    return items.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="one_to_one")


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
    store, lazy = _local(system, "hiring_bloomberg", root, command, engine, engine_batch_size)
    unique = attempts[["prompt_id", "messages"]].drop_duplicates("prompt_id")
    table = _score_missing(store, lazy, unique, max_new_tokens=TASK_PARAMS["hiring_bloomberg"]["max_new_tokens"],
                           batch_size=batch_size, progress=progress)
    table = table[table["prompt_id"].isin(set(unique["prompt_id"]))]
    out = attempts.drop(columns=["messages"]).merge(table, on="prompt_id", how="left", validate="many_to_one")
    out.attrs = attempts.attrs
    return out


# ----------------------------------------------------------------------------------------------------------------
# Served models (an OpenAI-compatible server)
# ----------------------------------------------------------------------------------------------------------------
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
    :func:`~allocbias.catalog.served_store`. ``engine`` is an :class:`allocbias.serving.OpenAIEngine` (or anything with its
    ``model`` attribute and ``pointwise`` method).

    >>> import tempfile
    >>> from allocbias import data as D
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
    table = _score_missing(store, engine, items, labels=RESUME_LABELS, batch_size=batch_size, progress=progress)
    return join_scores(candidates, items, table)


def score_resume_pairwise_served(
    engine: Any,
    pools: pd.DataFrame,
    *,
    root: str | Path | None = None,
    batch_size: int = 56,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """:func:`score_resume_pairwise` through a served model (greedy ``generate``), store of
    :func:`~allocbias.catalog.served_store`.

    >>> import tempfile
    >>> from allocbias import data as D
    >>> from allocbias.items import pairwise_pools
    >>> class Served:  # a stand-in server that answers nothing usable
    ...     model, prefill, top_logprobs, extra_body = "tiny", "vllm", 20, {}
    ...     def generate(self, prompts, **kw):
    ...         return ["" for _ in prompts]
    >>> pools = pairwise_pools(D.candidate_table(["retail"], names_per_group=1), 1, 0)
    >>> answers = score_resume_pairwise_served(Served(), pools, root=tempfile.mkdtemp())
    >>> len(answers), set(answers["winner"])
    (56, {'undetected'})
    """
    items = resume_pairwise_items(pools)
    store = served_store(engine, "resume_pairwise", "paper", root, command=command)
    table = _score_missing(store, engine, items.drop_duplicates("prompt_id"),
                           max_new_tokens=TASK_PARAMS["resume_pairwise"]["max_new_tokens"], batch_size=batch_size,
                           progress=progress)
    return _pairwise_answers(items, table)


# ----------------------------------------------------------------------------------------------------------------
# Several systems at once
# ----------------------------------------------------------------------------------------------------------------
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

    Columns: :data:`~allocbias.systems.SYSTEM_COLUMNS` (``system`` id, ``model``, ``precision``, ``wording``), the candidate's
    columns, then ``prompt_id``, ``score``, ``label_mass``, ``p_No``, ``p_Yes``, ``n_tokens`` — the output of
    :func:`score_resume_pointwise` per system, stacked in the order of ``systems``. Each system's rows come
    from its table under ``root`` (default: the committed ``data/scores``); only missing rows are scored,
    and a system's model is loaded only when one of its rows is missing.

    ``served``: an :class:`allocbias.serving.OpenAIEngine`; then every listed system contributes only its
    *wording*, the served model answers (:func:`score_resume_pointwise_served`), and the rows are labelled
    :func:`~allocbias.systems.served_system_id` with precision ``"server"``. ``engine_for``: optional callable
    ``System -> engine`` for local systems (e.g. a :class:`LazyEngine` shared by calls, or a stand-in).

    >>> import tempfile
    >>> from allocbias import data as D
    >>> class Half:  # a stand-in engine: every candidate gets 0.5
    ...     def pointwise(self, prompts, labels, **kw):
    ...         return [{"score": 0.5, "label_mass": 1.0, "p_No": 0.5, "p_Yes": 0.5, "n_tokens": 9} for _ in prompts]
    >>> cands = D.candidate_table(["retail"], names_per_group=1)
    >>> root = tempfile.mkdtemp()
    >>> pair = ["smollm2-fp32-paper", "smollm2-fp32-direct"]
    >>> table = pointwise_table(pair, cands, root=root, engine_for=lambda s: Half())
    >>> table.groupby("system").size().to_dict(), list(table.columns[:4])
    ({'smollm2-fp32-direct': 48, 'smollm2-fp32-paper': 48}, ['system', 'model', 'precision', 'wording'])
    >>> from allocbias.catalog import clear_tables
    >>> len(clear_tables(["smollm2-fp32-paper"], "resume_pointwise", root))  # the next run scores again
    1
    """
    chosen = as_systems(systems)
    require_columns(candidates, ["job", "resume_id", "full_name", "group"], "candidates")
    if served is not None and engine_for is not None:
        raise ValueError("pass either served (an OpenAI-compatible engine) or engine_for (local engines), not both")
    frames = []
    if served is not None:
        wordings = list(dict.fromkeys(s.wording for s in chosen))
        for wording in wordings:
            table = score_resume_pointwise_served(served, candidates, wording=wording, root=root, command=command,
                                                  progress=progress)
            frames.append(with_system_columns(table, served_system_id(served.model, wording), served.model, "server",
                                          wording))
    else:
        for system in chosen:
            engine = engine_for(system) if engine_for is not None else None
            table = score_resume_pointwise(system, candidates, root=root, engine=engine, command=command,
                                           progress=progress)
            frames.append(with_system_columns(table, system.id, system.model, system.precision, system.wording))
    return pd.concat(frames, ignore_index=True)


def pairwise_table(
    systems: System | str | Iterable[System | str],
    pools: pd.DataFrame,
    *,
    root: str | Path | None = None,
    served: Any = None,
    engine_for: Any = None,
    command: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Pairwise answers of several systems as one tidy table: one row per (system, job, round, pair, order).

    Columns: :data:`~allocbias.systems.SYSTEM_COLUMNS` then those of :func:`score_resume_pairwise` (``prompt_id``, ``job``,
    ``round``, ``cand_a``, ``cand_b``, ``name_a``, ``name_b``, ``order``, ``answer``, ``winner``, ``pair_id``).
    The pairwise prompt has one wording (the paper's), so ``wording`` is ``"paper"`` and two systems that
    differ only in their pointwise wording share one table. ``served`` and ``engine_for`` as in
    :func:`pointwise_table`.

    >>> import tempfile
    >>> from allocbias import data as D
    >>> from allocbias.items import pairwise_pools
    >>> class First:  # a stand-in engine that always names the candidate shown first
    ...     def generate(self, prompts, **kw):
    ...         return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
    >>> pools = pairwise_pools(D.candidate_table(["retail"], names_per_group=1), 1, 0)
    >>> answers = pairwise_table("smollm2-fp32-paper", pools, root=tempfile.mkdtemp(), engine_for=lambda s: First())
    >>> len(answers), sorted(set(answers["winner"]))  # 28 pairs, both orders: the "winner" follows the order
    (56, ['a', 'b'])
    """
    chosen = as_systems(systems)
    require_columns(pools, ["job", "round", "candidate", "resume_id", "full_name"], "pools")
    if served is not None and engine_for is not None:
        raise ValueError("pass either served (an OpenAI-compatible engine) or engine_for (local engines), not both")
    frames = []
    if served is not None:
        table = score_resume_pairwise_served(served, pools, root=root, command=command, progress=progress)
        frames.append(with_system_columns(table, served_system_id(served.model, "paper"), served.model, "server",
                                      "paper"))
    else:
        for system in chosen:
            engine = engine_for(system) if engine_for is not None else None
            table = score_resume_pairwise(system, pools, root=root, engine=engine, command=command,
                                          progress=progress)
            frames.append(with_system_columns(table, system.id, system.model, system.precision, "paper"))
    return pd.concat(frames, ignore_index=True)


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    """``(fn(*args, **kwargs), seconds)``: a wall-clock measurement for the chapters' run reports."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start
