"""Scoring the missing rows of a (system, task) table, locally or through a server, and several systems at once.

Every task (:mod:`allocbias.scoring.tasks`) is scored through one path: the items of the task (:mod:`allocbias.scoring.items`), the
table that keeps their scores (:mod:`allocbias.scoring.catalog`: :func:`~allocbias.scoring.catalog.store_for` for a local system,
:func:`~allocbias.scoring.catalog.served_store` for a served model, addressed by what the served engine says of itself —
model name, prefill mode, ``top_logprobs``, extra request fields), and an engine asked only for the rows the table
lacks (:func:`allocbias.store.run_resumable`). Pointwise tasks ask the engine's ``pointwise`` (label
probabilities), the others its greedy ``generate``. A local model is loaded on first use only
(:class:`LazyEngine`), so reading a complete table loads nothing.

The runner sits in scoring (it was in the study), next to the catalog, the tasks and the store it
ties together; the audit and ``allocbias score`` use it without importing the study.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .catalog import resolve_scores_root, served_store, store_for, study_scores, with_system_columns
from .items import require_columns
from .store import ScoreStore, run_resumable
from .systems import System, as_systems, served_system_id
from .tasks import Task, batch_scorer, task

__all__ = ["LazyEngine", "TableEngine", "pairwise_table", "pointwise_table", "read_study_scores", "score", "score_missing",
           "timed"]


class TableEngine:
    """The engine that fills one local score table (it may wrap a :class:`LazyEngine`): made on first use (so reading a complete stored table never loads a model) —
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


def score_missing(
    store: ScoreStore, engine: Any, items: pd.DataFrame, *, labels: Mapping[str, float] | None = None,
    max_new_tokens: int | None = None, batch_size: int, progress: bool,
) -> pd.DataFrame:
    """The one scoring path of every task (:func:`score`): score the ``items`` (``prompt_id``, ``messages``) that ``store``
    lacks with ``engine`` — its ``pointwise`` with ``labels`` (columns ``score``, ``label_mass``, ``p_<label>``,
    ``n_tokens``), else its greedy ``generate`` of ``max_new_tokens`` (column ``answer``): the task registry's
    :func:`~allocbias.scoring.tasks.batch_scorer` — and return the stored
    table (one row per prompt id ever scored into it). ``engine`` is an engine (a served one) or the
    :class:`TableEngine` of a local system, made on first use."""
    get = engine.get if isinstance(engine, TableEngine) else (lambda: engine)
    score_batch = batch_scorer(get, labels=labels, max_new_tokens=max_new_tokens)
    return run_resumable(store, items[["prompt_id", "messages"]], score_batch, batch_size=batch_size, progress=progress)


# ----------------------------------------------------------------------------------------------------------------
# The one runner of every task
# ----------------------------------------------------------------------------------------------------------------
def score(
    name: str | Task,
    inputs: pd.DataFrame,
    *,
    system: Any = None,
    served: Any = None,
    engine: Any = None,
    wording: str | None = None,
    root: str | Path | None = None,
    batch_size: int | None = None,
    engine_batch_size: int | None = None,
    command: str | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """The result table of task ``name`` on ``inputs``: read its score table, score only the prompts it lacks.

    Local scoring: ``system`` (a :class:`~allocbias.scoring.systems.System`) addresses the table
    (:func:`allocbias.scoring.catalog.store_for`) and ``engine`` scores it (default: the system's model, loaded on first
    use only, so reading a complete table loads nothing). Served scoring: ``served`` (an
    :class:`allocbias.scoring.serving.OpenAIEngine`) both addresses the table (:func:`allocbias.scoring.catalog.served_store`)
    and scores it, with ``wording`` (default ``"paper"``); a task that a server cannot score raises. The defaults
    of ``batch_size``, ``engine_batch_size`` and ``progress`` are the task's.

    >>> import tempfile
    >>> from allocbias import data as D
    >>> class Half:  # a stand-in engine: every candidate gets 0.5
    ...     def pointwise(self, prompts, labels, **kw):
    ...         return [{"score": 0.5, "label_mass": 1.0, "p_No": 0.5, "p_Yes": 0.5, "n_tokens": 9} for _ in prompts]
    >>> from allocbias.scoring.systems import System
    >>> cands = D.candidate_table(["retail"], names_per_group=1)
    >>> table = score("resume_pointwise", cands, system=System("smollm2-135m-instruct"), engine=Half(),
    ...               root=tempfile.mkdtemp(), progress=False)
    >>> len(table), float(table["score"].mean())
    (48, 0.5)
    """
    t = task(name)
    batch_size = t.batch_size if batch_size is None else batch_size
    engine_batch_size = t.engine_batch_size if engine_batch_size is None else engine_batch_size
    progress = t.progress if progress is None else progress
    if served is not None:
        if system is not None or engine is not None:
            raise ValueError("pass served (a server that scores and addresses the table) or system and engine, "
                             "not both")
        if not t.served:
            raise ValueError(f"task {t.name!r} is scored by local models only, not through a server")
        wording = "paper" if wording is None else wording
        items = t.items(inputs, wording)
        store = served_store(served, t, t.wording(wording), root, command=command)
        filler: Any = served
    else:
        if system is None:
            raise ValueError(f"task {t.name!r}: pass system (the model that scores) or served (a server)")
        wording = system.wording if wording is None else wording
        items = t.items(inputs, wording)
        store = store_for(system, t, root, command=command)
        filler = TableEngine(system, engine, engine_batch_size, store)
    table = score_missing(store, filler, items.drop_duplicates("prompt_id"), labels=t.labels,
                          max_new_tokens=t.max_new_tokens, batch_size=batch_size, progress=progress)
    return t.result(inputs, items, table)


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
                from ..scoring.engine import LocalEngine

                self._engine = LocalEngine(self.system.load(device=self._device), batch_size=self._batch_size)
        return self._engine

    def pointwise(self, *args: Any, **kwargs: Any) -> Any:
        """``engine().pointwise(...)``."""
        return self.engine().pointwise(*args, **kwargs)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """``engine().generate(...)``."""
        return self.engine().generate(*args, **kwargs)

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

    Columns: :data:`~allocbias.scoring.systems.SYSTEM_COLUMNS` (``system`` id, ``model``, ``precision``, ``wording``), the candidate's
    columns, then ``prompt_id``, ``score``, ``label_mass``, ``p_No``, ``p_Yes``, ``n_tokens`` — the output of
    :func:`score` of ``resume_pointwise`` per system, stacked in the order of ``systems``. Each system's rows come
    from its table under ``root`` (default: the committed ``data/scores``); only missing rows are scored,
    and a system's model is loaded only when one of its rows is missing.

    ``served``: an :class:`allocbias.scoring.serving.OpenAIEngine`; then every listed system contributes only its
    *wording*, the served model answers, and the rows are labelled
    :func:`~allocbias.scoring.systems.served_system_id` with precision ``"server"``. ``engine_for``: optional callable
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
    >>> from allocbias.scoring.catalog import clear_tables
    >>> len(clear_tables(["smollm2-fp32-paper"], "resume_pointwise", root))  # the next run scores again
    1
    """
    chosen = as_systems(systems)
    require_columns(candidates, ["job", "resume_id", "full_name", "group"], "candidates")
    return _stacked("resume_pointwise", candidates, chosen, lambda s: s.wording, served=served, engine_for=engine_for,
                    root=root, command=command, progress=progress)


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

    Columns: :data:`~allocbias.scoring.systems.SYSTEM_COLUMNS` then those of the ``resume_pairwise`` task's result (``prompt_id``, ``job``,
    ``round``, ``cand_a``, ``cand_b``, ``name_a``, ``name_b``, ``order``, ``answer``, ``winner``, ``pair_id``).
    The pairwise prompt has one wording (the paper's), so ``wording`` is ``"paper"`` and two systems that
    differ only in their pointwise wording share one table. ``served`` and ``engine_for`` as in
    :func:`pointwise_table`.

    >>> import tempfile
    >>> from allocbias import data as D
    >>> from allocbias.scoring.items import pairwise_pools
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
    return _stacked("resume_pairwise", pools, chosen, lambda s: "paper", served=served, engine_for=engine_for,
                    root=root, command=command, progress=progress)


def _stacked(task_name: str, inputs: pd.DataFrame, chosen: list[System], wording_of: Any, *, served: Any,
             engine_for: Any, root: str | Path | None, command: str | None, progress: bool) -> pd.DataFrame:
    """:func:`score` of ``task_name`` per system, stacked with the system columns in front (the body of
    :func:`pointwise_table` and :func:`pairwise_table`). ``wording_of(system)`` is the wording a row is labelled
    with; with ``served``, the server answers once per distinct wording (and the row's system id names the served
    model and that wording); without, each local system scores with its own wording (engine ``engine_for(system)``
    when given)."""
    if served is not None and engine_for is not None:
        raise ValueError("pass either served (an OpenAI-compatible engine) or engine_for (local engines), not both")
    frames = []
    if served is not None:
        for wording in dict.fromkeys(wording_of(s) for s in chosen):
            table = score(task_name, inputs, served=served, wording=wording, root=root, command=command,
                          progress=progress)
            frames.append(with_system_columns(table, served_system_id(served.model, wording), served.model, "server",
                                              wording))
    else:
        for system in chosen:
            engine = engine_for(system) if engine_for is not None else None
            table = score(task_name, inputs, system=system, engine=engine, root=root, command=command,
                          progress=progress)
            frames.append(with_system_columns(table, system.id, system.model, system.precision, wording_of(system)))
    return pd.concat(frames, ignore_index=True)


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    """``(fn(*args, **kwargs), seconds)``: a wall-clock measurement for the chapters' run reports."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def read_study_scores(
    systems: Sequence[str], jobs: Sequence[str], *, names_per_group: int, seed: int, scores_root: str | Path,
    scores: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, float]:
    """A chapter's score table and the seconds it took to read: ``scores`` as given (0 seconds; a test's synthetic
    table), else the stored scores of ``systems`` on ``jobs`` under ``scores_root``
    (:func:`allocbias.scoring.catalog.resolve_scores_root`, ``""`` for the committed tables), read by
    :func:`allocbias.scoring.catalog.study_scores` and timed with :func:`timed`.

    >>> frame = pd.DataFrame({"score": [0.5]})
    >>> read_study_scores(["smollm2-fp32-paper"], ["retail"], names_per_group=1, seed=0, scores_root="",
    ...                   scores=frame)[1]
    0.0
    """
    if scores is not None:
        return scores, 0.0
    return timed(study_scores, systems, jobs=jobs, names_per_group=names_per_group, seed=seed,
                 root=resolve_scores_root(scores_root))
