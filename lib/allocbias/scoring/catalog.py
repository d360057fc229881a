"""The catalog of score tables: where each (system, task) table is kept, how to read it, and what made it.

Tables are content-addressed (:mod:`allocbias.store`): the address covers the model, the precision, the
template and the job texts, and the scoring parameters (:data:`TASK_PARAMS`) — **not** the set of candidates,
so a larger study adds rows to the same table and a smaller one reads a subset. :func:`store_for` addresses a
local system's table, :func:`served_store` a served model's; ``make book`` reuses the committed tables in
``data/scores/`` (:func:`scores_dir`). The readers (:func:`study_scores`, :func:`ellipse_scores`) load no model
and score nothing; :func:`provenance_table` lists what made every table. Scoring the missing rows of a table
is :mod:`allocbias.scoring.runs`.

The catalog sits in scoring (it was in the study): it addresses tables of the score store by the
task registry's parameters and the systems' names, all of scoring, and takes from the measures nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..audited import data as D
from ..scoring.items import ellipse_pointwise_items, resume_pointwise_items
from .store import PROVENANCE_FILE, ScoreStore, canonical_json
from .systems import MODELS, PRECISIONS, STUDY_SYSTEMS, SYSTEM_COLUMNS, WORDINGS, System, as_systems
from .systems import parse_served_system, parse_system, served_system_id
from .systems import systems as systems_grid
from .tasks import TASKS, Task, job_texts_hash, join_scores, task as _task

__all__ = [
    "PROVENANCE_COLUMNS",
    "TASK_PARAMS",
    "clear_tables",
    "ellipse_scores",
    "join_scores",
    "job_texts_hash",
    "provenance_table",
    "resolve_scores_root",
    "scores_dir",
    "served_pointwise_store",
    "served_store",
    "store_for",
    "study_scores",
    "with_system_columns",
]

#: Columns of :func:`provenance_table`.
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "table", "kind", "system", "model_key", "wording", "prompt_hash", "params", "rows", "elapsed_s", "runs",
    "created_utc", "updated_utc", "python", "torch", "transformers", "allocbias", "cpu", "cpu_count", "gpu",
    "command",
)


def scores_dir() -> Path:
    """Where the committed score tables live: ``data/scores`` under :func:`allocbias.data.data_dir`."""
    return D.data_dir() / "scores"


# ----------------------------------------------------------------------------------------------------------------
# Addresses
# ----------------------------------------------------------------------------------------------------------------
#: Scoring parameters that change the numbers, per task (part of each table's address; declared in
#: :data:`allocbias.scoring.tasks.TASKS`).
TASK_PARAMS: Mapping[str, Mapping[str, Any]] = {name: t.params for name, t in TASKS.items()}


def store_for(
    system: System, task: str | Task, root: str | Path | None = None, *, command: str | None = None,
    jobs: Mapping[str, D.Job] | None = None,
) -> ScoreStore:
    """The :class:`~allocbias.store.ScoreStore` of a (system, task): addressed by model@precision, the
    task's prompt hash (:meth:`allocbias.scoring.tasks.Task.prompt_hash`: template and job texts) and its
    parameters (:data:`allocbias.scoring.tasks.TASKS`). ``task`` is a :class:`~allocbias.scoring.tasks.Task` or
    its name."""
    t = _task(task)
    params = {**t.params, "wording": t.wording(system.wording)}
    return ScoreStore(root if root is not None else scores_dir(), kind=t.name, model_key=system.model_key,
                      prompt_hash=t.prompt_hash(system.wording, jobs), params=params, command=command)


def served_store(
    engine: Any, task: str | Task, wording: str = "paper", root: str | Path | None = None, *,
    command: str | None = None,
) -> ScoreStore:
    """The :class:`~allocbias.store.ScoreStore` of a served model (an :class:`allocbias.scoring.serving.OpenAIEngine`).

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
    t = _task(task)
    if not t.served:
        served = [name for name, other in TASKS.items() if other.served]
        raise ValueError(f"served scoring covers {' and '.join(repr(n) for n in served)}, not {t.name!r}")
    served_system_id(model, wording)  # validates the wording
    p_hash = t.prompt_hash(wording)  # a served task hashes the job texts
    params: dict[str, Any] = {k: v for k, v in t.params.items() if k != "engine"}
    params.update(backend="openai", prefill_mode=getattr(engine, "prefill", None),
                  extra_body=dict(getattr(engine, "extra_body", {}) or {}), wording=t.wording(wording))
    if t.labels is not None:  # a pointwise score reads the server's top logprobs
        params["top_logprobs"] = getattr(engine, "top_logprobs", None)
    return ScoreStore(root if root is not None else scores_dir(), kind=t.name, model_key=f"openai:{model}",
                      prompt_hash=p_hash, params=params, command=command)


def served_pointwise_store(system_id: str, root: str | Path | None = None) -> ScoreStore:
    """The stored pointwise table of a served system (``<model>-served-<wording>``, :func:`served_system_id`)
    under ``root``, found from the tables' provenance: model key ``openai:<model>``, that wording and the
    study's prompt hash. No table raises ``ValueError`` with the command that makes one; two tables (the
    same model served with different settings, e.g. prefill modes) raise naming both folders.
    """
    parsed = parse_served_system(system_id)
    if parsed is None:
        raise ValueError(f"{system_id!r} is not a served system id <model>-served-<wording>")
    model, wording = parsed
    base = Path(root) if root is not None else scores_dir()
    p_hash = TASKS["resume_pointwise"].prompt_hash(wording)
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
    return D.repo_root() / path


def clear_tables(
    systems: System | str | Iterable[System | str], tasks: str | Iterable[str], root: str | Path, *,
    served: Any = None,
) -> list[Path]:
    """Delete the tables of every (system, task) under ``root`` so that the next run scores every row again.

    With ``served`` (an OpenAI-compatible engine) the served model's tables for the systems' wordings are
    deleted instead (:func:`served_store`). Returns the directories removed (tables that do not exist are
    skipped). Refuses the committed ``data/scores``: a fresh run goes to another root.
    """
    chosen = as_systems(systems)
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


# ----------------------------------------------------------------------------------------------------------------
# Readers
# ----------------------------------------------------------------------------------------------------------------
def with_system_columns(frame: pd.DataFrame, system: str, model: str, precision: str, wording: str) -> pd.DataFrame:
    """``frame`` with the :data:`~allocbias.scoring.systems.SYSTEM_COLUMNS` in front (a copy)."""
    frame = frame.copy()
    for position, (col, value) in enumerate(zip(SYSTEM_COLUMNS, (system, model, precision, wording))):
        frame.insert(position, col, value)
    return frame


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
    :func:`allocbias.scoring.runs.pointwise_table` or ``scripts/score_study.py``). Columns as :func:`allocbias.scoring.runs.pointwise_table`.
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
        served = None if isinstance(entry, System) else parse_served_system(entry)
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
        table = join_scores(candidates, items, store.read())
        frames.append(with_system_columns(table, *labels))
    return pd.concat(frames, ignore_index=True)


def ellipse_scores(
    systems: System | str | Iterable[System | str] | None = None,
    essays: pd.DataFrame | None = None,
    *,
    root: str | Path | None = None,
    complete_only: bool = False,
) -> pd.DataFrame:
    """The stored ``ellipse_pointwise`` grades of ``systems`` on ``essays``, loading no model and scoring nothing.

    ``essays`` defaults to :func:`allocbias.data.load_ellipse` (the study's 1,000-essay sample); ``systems`` to
    every local system (:func:`allocbias.scoring.systems.systems` over all models and precisions, paper wording) whose table under
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
        systems = systems_grid(tuple(MODELS), tuple(PRECISIONS), ("paper",))
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
# Provenance
# ----------------------------------------------------------------------------------------------------------------
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
