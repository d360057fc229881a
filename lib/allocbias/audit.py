"""The audit of one system: score the study's prompts into a folder, then write a self-contained report.

:func:`run_audit` is what ``allocbias audit`` runs (:mod:`allocbias.cli`). For the system named by ``--model``
(a registry name, a local model folder, a ``.gguf`` file, or a served model:
:func:`allocbias.scoring.user_models.resolve_system`)
it

1. scores the parts asked for — ``pointwise`` always, ``pairwise`` and ``hiring_bloomberg`` on request — into
   resumable, content-addressed tables under ``OUT/scores`` (:mod:`allocbias.store`; interrupt it and run the
   same command again: finished rows are never scored twice). A study system reads the committed tables in
   ``data/scores``; rows they lack are scored into ``OUT/scores`` after the committed rows are copied there;
2. writes the tidy tables it scored as CSV (``OUT/tables``);
3. executes the report notebook (``allocbias/resources/audit_report.ipynb``) with papermill, which computes
   the report's tables with the functions below and writes them as CSV too, and exports the executed notebook
   to one self-contained ``OUT/report.html`` (figures embedded, no script or style sheet fetched from a network).

``OUT/audit.json`` records which system the folder audits; an audit of another system into the same folder is
refused (:class:`AuditError`), so two models' rows never mix. For a served model the record includes the server's
identity (address without credentials, the model id it reports, its ``GET /models`` entry, any
``system_fingerprint``): another server under the same ``--model`` name is refused naming both servers, in
``audit.json`` and in each score table's provenance. An audit holds ``OUT/.audit.lock`` (``fcntl.flock``) while it
runs, so two audits never write into one folder at once, and removes it when it ends (however it ends); it removes
the temporary files a killed run left (``.report.partial-*.ipynb``, ``.<name>.partial-*``) before it writes. Every
file it writes (``audit.json``, the tables, the executed notebook, ``report.html``) is written whole or not at all
(:func:`allocbias.outputs.write_atomic`: a temporary file renamed into place); a report that cannot be finished (a full
disk, Ctrl-C) leaves none of its files, and the message names the file and says what was kept. Nothing written to ``OUT`` holds a credential: URLs and
the command line go through :func:`allocbias.scoring.serving.redact_url` / :func:`~allocbias.scoring.serving.redact_command`.

The report's tables come from pure functions over the tidy score table (:func:`validity_table`,
:func:`screening_table`, :func:`label_mass_table`, :func:`selection_intervals`, :func:`metric_intervals`,
:func:`ll144_table`, :func:`system_comparison`); the formulas are on the book page "Definitions and notation".
Validity comes first: :func:`screening_verdict` decides whether the model screens at all (and whether the
intervals can be read); where it does not, the report says so first and withholds four-fifths verdicts and
"interval excludes 0" claims. Every user-controlled string in the report is escaped (:func:`html_table`,
:func:`escape_markdown`). The report's figures are drawn by the ``figure_*`` functions (each returns a matplotlib
Figure whose titles no axis or tick label runs into).
"""

from __future__ import annotations

import contextlib
import errno
import html
import json
import math
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .audited import data as D
from .audited.locations import has_data_dir
from .scoring import catalog, runs
from . import checks
from .scoring import items, systems, tasks
from .checks import require_columns
from .outputs import PARTIAL, OutputError, write_atomic
from .measures.tables import allocation_table, pool_selection_table, quality_separation, reference_gaps
from .scoring.store import run_resumable
from .scoring.systems import System
from .scoring.user_models import ServedSystem, UserSystem, resolve_system, system_label

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LOCK",
    "MANIFEST",
    "MIN_LABEL_MASS",
    "MIN_NAMES_FOR_INTERVALS",
    "MIN_P_BETTER",
    "PARTS",
    "AuditError",
    "ALL_JOBS",
    "AuditResult",
    "RELIABLE",
    "audit_size_table",
    "forecast_table",
    "forecast_view",
    "size_sentence",
    "size_view",
    "size_words",
    "escape_markdown",
    "export_html",
    "figure_comparison",
    "figure_di_curve",
    "figure_gaps",
    "figure_rabbi",
    "figure_screening",
    "format_interval",
    "interrupted_words",
    "interruptible",
    "html_table",
    "label_mass_table",
    "ll144_table",
    "metric_intervals",
    "min_n_boot",
    "outside_interval",
    "report_notebook",
    "run_audit",
    "screening_table",
    "screening_verdict",
    "selection_intervals",
    "system_comparison",
    "validity_table",
    "write_table",
]

#: Parts of an audit: ``pointwise`` is always run; the others on request.
PARTS: tuple[str, ...] = ("pointwise", "pairwise", "hiring_bloomberg")
#: The file that says which system an audit folder holds.
MANIFEST = "audit.json"
#: The lock file of an audit folder: one audit writes into a folder at a time (``fcntl.flock``).
LOCK = ".audit.lock"
#: Seconds a served model may take to answer one request (``--timeout``), its retries (at most two, on quick failures
#: such as a refused connection or HTTP 503) included: a hung server stops the audit after this long, not three times it.
DEFAULT_TIMEOUT_S = 60.0
#: Confidence of every interval of the report.
CONFIDENCE = 0.95
_TASK = {"pointwise": "resume_pointwise", "pairwise": "resume_pairwise", "hiring_bloomberg": "hiring_bloomberg"}
_BATCH = {"pointwise": 16, "pairwise": 28, "hiring_bloomberg": 4}  # rows per durable append (progress step)


class AuditError(ValueError):
    """A problem with the audit's input, in one sentence that names it and says what to do."""


@dataclass
class AuditResult:
    """What :func:`run_audit` produced: the folder, the system, the tables, the report and the timings."""

    out: Path
    system: str
    tables: dict[str, Path] = field(default_factory=dict)
    report: Path | None = None
    scored_rows: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------------------------
# validation and the folder's manifest
# ----------------------------------------------------------------------------------------------------------------
def min_n_boot(confidence: float = CONFIDENCE) -> int:
    """The fewest bootstrap resamples for a percentile interval at ``confidence``: each end of the interval
    needs at least one resample beyond it, ``n_boot * (1 - confidence) / 2 >= 1``.

    >>> min_n_boot(0.95), min_n_boot(0.9)
    (40, 20)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return int(math.ceil(round(2.0 / (1.0 - confidence), 9)))


def _check_options(jobs: Sequence[str], names_per_group: int, k: Sequence[int], rounds: int, parts: Sequence[str],
                   pairwise_rounds: int, orderings: int, n_boot: int, timeout: float) -> None:
    if not jobs:
        raise AuditError(f"the job list is empty: name at least one job with --jobs (known: {' '.join(D.JOBS)})")
    unknown = [j for j in jobs if j not in D.JOBS]
    if unknown:
        raise AuditError(f"unknown job(s) {unknown}: choose from {' '.join(D.JOBS)}")
    for name, value, low in (("--names-per-group", names_per_group, 1), ("--rounds", rounds, 1),
                             ("--pairwise-rounds", pairwise_rounds, 1), ("--orderings", orderings, 1),
                             ("--n-boot", n_boot, 1)):
        try:
            checks.count(value, name, low)
        except ValueError as exc:
            raise AuditError(str(exc)) from None
    if n_boot < min_n_boot():
        raise AuditError(
            f"--n-boot {n_boot} is too few resamples for the report's {CONFIDENCE:.0%} percentile intervals: each "
            f"end needs at least one resample beyond it, so give --n-boot {min_n_boot()} or more (default 200)"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise AuditError(f"--timeout must be a number of seconds > 0, got {timeout!r}")
    try:
        checks.quotas(list(k), name="--k", pool=len(D.GROUPS), below_pool=True)
    except ValueError as exc:
        raise AuditError(f"{exc}; a pool holds one candidate per group") from None
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise AuditError(f"unknown part(s) {bad}: choose from {' '.join(PARTS)}")


def _identity(system: System, server: Mapping[str, Any] | None) -> dict[str, Any]:
    ident: dict[str, Any] = {"system": system.id, "model_key": system.model_key}
    if isinstance(system, UserSystem):
        ident["path"] = str(Path(system.model).expanduser().resolve())
        ident["fingerprint"] = system.fingerprint
    if server is not None:
        ident["base_url"] = server["url"]  # credentials and secret query values redacted (serving.redact_url)
        ident["server"] = dict(server)
    return ident


def _server_words(server: Mapping[str, Any]) -> str:
    """A served identity in a few words, for a message naming two servers."""
    facts = [f"model {server.get('model')!r}"]
    if server.get("reported_model") not in (None, server.get("model")):
        facts.append(f"reported as {server['reported_model']!r}")
    if server.get("system_fingerprint"):
        facts.append(f"fingerprint {server['system_fingerprint']!r}")
    listed = server.get("listed") or {}
    facts += [f"{k} {listed[k]!r}" for k in ("owned_by", "root", "max_model_len", "meta") if k in listed]
    return f"{server.get('url')} ({', '.join(facts)})"


def _same_server(held: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    fields = ("url", "model", "reported_model", "system_fingerprint", "listed")
    return all(held.get(f) == new.get(f) for f in fields)


def _claim_folder(out: Path, identity: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    """Refuse a folder that holds another system's audit (or the same name from another server); record this
    one's identity and options. The caller holds the folder's lock."""
    manifest = out / MANIFEST
    if manifest.is_file():
        try:
            held = json.loads(manifest.read_text(encoding="utf-8")).get("identity", {})
        except json.JSONDecodeError:
            raise AuditError(f"{manifest} is not valid JSON: delete it or choose another --out") from None
        if held.get("system") != identity["system"] or held.get("model_key") != identity["model_key"]:
            raise AuditError(
                f"{out} holds the audit of {held.get('system')!r} ({held.get('model_key')}), not of "
                f"{identity['system']!r} ({identity['model_key']}): choose another --out folder"
            )
        new, old = identity.get("server"), held.get("server")
        if new is not None and old is None and held.get("base_url"):  # a manifest of an earlier version: its URL
            from .scoring.serving import redact_url

            old = {"url": redact_url(held["base_url"])}
            differs = old["url"] != new["url"]
        else:
            differs = new is not None and old is not None and not _same_server(old, new)
        if differs:
            raise AuditError(
                f"{out} holds scores of {identity['system']!r} from the server {_server_words(old)}, but the server "
                f"answering now is {_server_words(new)}: the same name may serve other weights, so its stored "
                "scores are not this server's; give this audit another --out folder"
            )
    elif any(p.name != LOCK for p in out.iterdir()):
        raise AuditError(f"{out} is not empty and holds no audit ({MANIFEST}): choose an empty or new --out folder")
    text = json.dumps({"identity": dict(identity), "options": dict(options)}, indent=2, sort_keys=True) + "\n"
    write_atomic(manifest, text)


@contextlib.contextmanager
def _folder_lock(out: Path):
    """Hold ``out/.audit.lock`` (``fcntl.flock``, released when the process ends, however it ends) for a block;
    another audit holding it stops this one with an :class:`AuditError`. The file is removed when the block ends
    (while it is still held); a lock taken on a file that the audit before removed meanwhile is taken again."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no advisory lock to take
        yield
        return
    path = out / LOCK
    for _ in range(20):
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held for the block)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = " ".join(handle.read().split())[:80] or "another process"
            handle.close()
            raise AuditError(
                f"another audit ({holder}) is writing into {out}: wait for it to finish and run this command again, "
                "or give this audit another --out folder"
            ) from None
        try:
            current = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        handle.close()  # the audit that held it removed this file as it ended: lock the one that is there now
    else:
        raise AuditError(f"could not take the lock {path}: other audits keep starting in {out}")
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # still held: an audit starting now finds no file, or a new one, never this lock
        handle.close()  # closing the descriptor releases the lock


def _remove_leftovers(out: Path) -> list[Path]:
    """Remove the temporary files that killed runs left in ``out`` and ``out/tables`` (the executed report's
    ``.report.partial-<pid>.ipynb``, :func:`~allocbias.outputs.write_atomic`'s ``.<name>.partial-*``). The caller
    holds the folder's lock, so none of them belongs to a running audit."""
    gone = []
    for folder in (out, out / "tables"):
        for path in sorted(folder.glob(f".*{PARTIAL}*")) if folder.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                gone.append(path)
    return gone


def _stored_rows(root: Path) -> int:
    """Rows stored in the score tables under ``root``: the data lines of their ``scores.csv`` (0 when none)."""
    total = 0
    for table in root.glob("*/scores.csv") if root.is_dir() else ():
        with table.open("rb") as handle:
            total += max(sum(1 for _ in handle) - 1, 0)
    return total


def _roll_back(out: Path, created: bool) -> None:
    """Remove what a failed first run put into ``out`` when no row was stored: the next run starts clean."""
    if _stored_rows(out / "scores"):
        return
    shutil.rmtree(out / "scores", ignore_errors=True)
    (out / MANIFEST).unlink(missing_ok=True)
    if created and not any(p.name != LOCK for p in out.iterdir()):
        (out / LOCK).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            out.rmdir()


_STALE = ("report.html", "report.ipynb", "report.failed.ipynb")


def _remove_stale_report(out: Path) -> list[Path]:
    """Remove the report files and report tables of an earlier run (they describe other scores or options)."""
    gone = [out / name for name in _STALE if (out / name).exists()]
    gone += sorted((out / "tables").glob("report_*.csv"))
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


# ----------------------------------------------------------------------------------------------------------------
# scoring
# ----------------------------------------------------------------------------------------------------------------
def _copy_committed(system: System, task: str, root: Path, ids: set[str], command: str) -> int:
    """Copy the committed rows of (system, task) whose ids are wanted into the same table under ``root``."""
    committed = catalog.store_for(system, task, catalog.scores_dir())
    if not committed.scores_path.exists():
        return 0
    rows = committed.read()
    rows = rows[rows["prompt_id"].isin(ids)]
    mine = catalog.store_for(system, task, root, command=command)
    if rows.empty:
        return 0
    model = committed.provenance.get("model")
    if isinstance(model, Mapping):
        mine.record_model(model)
    before = len(mine)
    lookup = rows.set_index("prompt_id", drop=False)
    run_resumable(mine, rows[["prompt_id"]], lambda b: lookup.loc[b["prompt_id"]].reset_index(drop=True),
                  batch_size=max(len(rows), 1), progress=False)
    return len(mine) - before


def _items(part: str, system: System, candidates: pd.DataFrame, pools: pd.DataFrame | None,
           attempts: pd.DataFrame | None) -> set[str]:
    if part == "pointwise":
        return set(items.resume_pointwise_items(candidates, system.wording)["prompt_id"])
    if part == "pairwise":
        return set(items.resume_pairwise_items(pools)["prompt_id"])
    return set(attempts["prompt_id"])


def _preflight(engine: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
    """Ask a served model one real prompt before anything is written: the server answers, serves the model and
    returns log-probabilities (a pointwise score needs them). Returns the server's identity
    (:meth:`allocbias.scoring.serving.OpenAIEngine.server_identity`). Problems become an :class:`AuditError`."""
    from .audited.prompts import RESUME_LABELS
    from .scoring.serving import NoLogprobsError, ServingError

    try:
        with engine.within(engine.timeout_s):  # GET /models and the prompt together: a hung server fails in --timeout
            try:
                listed: list[dict[str, Any]] | None = engine.listed_models()
            except (ServingError, ValueError):
                listed = None  # a server without GET /models (or one that is down: the prompt below says which)
            names = [str(m.get("id")) for m in listed or []]
            engine.pointwise([messages], RESUME_LABELS, progress=False)
    except NoLogprobsError:
        raise AuditError(
            f"the server at {engine.base_url} returns no logprobs for {engine.model!r}: a pointwise score needs "
            "them; serve the model with vLLM or llama.cpp's llama-server, which return top_logprobs"
        ) from None
    except ServingError as exc:
        if names and engine.model not in names:
            shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            raise AuditError(
                f"the server at {engine.base_url} serves no model named {engine.model!r} (it lists {shown}): "
                "give one of those names to --model"
            ) from None
        raise AuditError(
            f"no usable answer from the server at {engine.base_url} ({str(exc).splitlines()[0][:160]}): start it "
            "or fix --base-url, then run the same command again"
        ) from None
    return engine.server_identity(listed or [])


#: The scoring task of each part of an audit.
_PART_TASKS = {"pointwise": "resume_pointwise", "pairwise": "resume_pairwise", "hiring_bloomberg": "hiring_bloomberg"}


def _score_part(part: str, system: System, root: Path, engine: Any, served: Any, candidates: pd.DataFrame,
                pools: pd.DataFrame | None, attempts: pd.DataFrame | None, command: str,
                progress: bool) -> pd.DataFrame:
    task = tasks.task(_PART_TASKS[part])
    inputs = {"pointwise": candidates, "pairwise": pools, "hiring_bloomberg": attempts}[part]
    common = {"root": root, "batch_size": _BATCH[part], "command": command, "progress": progress}
    if served is not None and task.served:
        return runs.score(task, inputs, served=served, wording=system.wording, **common)
    # HiringBloomberg through a server: the served engine answers into the system's own table
    return runs.score(task, inputs, system=system, engine=served if served is not None else engine, **common)


def _record_served(served: Any, server: Mapping[str, Any], system: System, part: str, root: Path) -> None:
    """Write the served engine's description and the server's identity into the provenance of the table it fills;
    a table whose rows came from another server under the same name is refused, naming both."""
    if part == "hiring_bloomberg":
        store = catalog.store_for(system, "hiring_bloomberg", root)
    else:
        store = catalog.served_store(served, _TASK[part], system.wording if part == "pointwise" else "paper", root)
    held = (store.provenance.get("model") or {}).get("server") if store.provenance_path.is_file() else None
    if held is not None and len(store) > 0 and not _same_server(held, server):
        raise AuditError(
            f"{store.path} holds {len(store)} rows of {system.id!r} scored by the server {_server_words(held)}, "
            f"but the server answering now is {_server_words(server)}: its scores would mix with another "
            "server's; give this audit another --out folder"
        )
    described = {k: v for k, v in served.describe(query_server=False).items() if k != "reported_model"}
    store.record_model({**described, "server": dict(server)})


def run_audit(
    model: str,
    out: str | Path,
    *,
    base_url: str | None = None,
    precision: str = "fp32",
    wording: str = "paper",
    jobs: Sequence[str] = D.JOBS,
    names_per_group: int = 10,
    k: Sequence[int] = (1, 2, 3),
    rounds: int = 1000,
    seed: int = 0,
    device: str = "cpu",
    parts: Sequence[str] = ("pointwise",),
    pairwise_rounds: int = 30,
    orderings: int = 4,
    n_boot: int = 200,
    engine_batch_size: int = 8,
    prefill: str = "vllm",
    timeout: float = DEFAULT_TIMEOUT_S,
    rescore: bool = False,
    report: bool = True,
    progress: bool = True,
    command: str | None = None,
    engine: Any = None,
) -> AuditResult:
    """Score one system on the study's prompts into ``out`` and write ``out/report.html``.

    ``model`` is a registry name, a model folder or a ``.gguf`` file; with ``base_url`` the name of a model
    behind an OpenAI-compatible server (``timeout``: seconds one request may take in all, its retries included).
    ``parts`` adds ``pairwise`` (``pairwise_rounds`` pools per job, every pair in both orders) and
    ``hiring_bloomberg`` (``orderings`` per job and race) to ``pointwise``. ``k``, ``rounds`` and ``seed`` drive the selection simulation, ``n_boot``
    the bootstrap intervals over names (at least :func:`min_n_boot`). ``rescore`` scores a study system again
    into ``out`` instead of reading the committed tables. ``engine`` replaces the local engine (a stand-in with
    ``pointwise`` and ``generate``; tests). ``command`` is recorded with credentials redacted
    (:func:`allocbias.scoring.serving.redact_command`).

    The folder is locked while the audit runs (another audit into it stops with an :class:`AuditError`); a
    served model is asked one prompt before anything is written, and the server's identity
    (:meth:`allocbias.scoring.serving.OpenAIEngine.server_identity`) is recorded: scores of another server under the
    same name are refused, naming both. A first run that stops before storing a row leaves nothing behind; a
    run without a report removes the previous one (it described other scores).

    Raises :class:`AuditError` (one sentence: the problem and what to do) for bad input; rows already stored
    stay stored whatever stops the run.
    """
    from .scoring.serving import redact_command

    jobs, k, parts = list(jobs), [int(x) for x in k], list(dict.fromkeys(["pointwise", *parts]))
    _check_options(jobs, names_per_group, k, rounds, parts, pairwise_rounds, orderings, n_boot, timeout)
    if precision not in systems.PRECISIONS:
        raise AuditError(f"unknown --precision {precision!r}: choose from {' '.join(systems.PRECISIONS)}")
    if wording not in systems.WORDINGS:
        raise AuditError(f"unknown --wording {wording!r}: choose from {' '.join(systems.WORDINGS)}")
    try:
        system = resolve_system(model, precision, wording, served=base_url is not None)
    except ValueError as exc:
        raise AuditError(str(exc)) from None
    if base_url is not None and precision != "fp32":
        raise AuditError("--precision applies to local models; a served model's precision is the server's")
    out = Path(out).expanduser()
    if out.exists() and not out.is_dir():
        raise AuditError(f"--out {out} is a file: give a folder for the audit")
    if command is None:
        command = f"allocbias audit --model {shlex.quote(model)} --out {shlex.quote(str(out))}" + (
            f" --base-url {shlex.quote(base_url)}" if base_url is not None else "")
    command = redact_command(command)
    options = {"jobs": jobs, "names_per_group": names_per_group, "k": k, "rounds": rounds, "seed": seed,
               "parts": parts, "pairwise_rounds": pairwise_rounds, "orderings": orderings, "n_boot": n_boot,
               "precision": system.precision, "wording": wording, "device": device, "rescore": rescore,
               "command": command}
    if report and progress and names_per_group < MIN_NAMES_FOR_INTERVALS:
        print(f"note: with {names_per_group} name(s) per group the bootstrap over names is too lumpy to read; the "
              f"report will say so and withhold its verdicts (--names-per-group {MIN_NAMES_FOR_INTERVALS} or more "
              "gives readable intervals)", flush=True)
    candidates = D.candidate_table(jobs, names_per_group=names_per_group, seed=seed)
    pools = items.pairwise_pools(candidates, pairwise_rounds, seed) if "pairwise" in parts else None
    attempts = items.hiring_bloomberg_items(orderings, seed, jobs=jobs) if "hiring_bloomberg" in parts else None

    served, server = None, None
    if base_url is not None:
        from .scoring.serving import OpenAIEngine

        try:
            served = OpenAIEngine(base_url, system.model, prefill=prefill, max_retries=2, backoff_s=0.5,
                                  timeout_s=float(timeout))
        except ValueError as exc:
            raise AuditError(f"{exc}") from None
        first = items.resume_pointwise_items(candidates.head(1), wording)["messages"].iloc[0]
        server = _preflight(served, first)  # before anything is written: a wrong name leaves no folder behind
        options["timeout_s"] = float(timeout)
    elif engine is None:
        engine = runs.LazyEngine(system, batch_size=engine_batch_size, device=device)

    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    fresh = not (out / MANIFEST).is_file()
    with _folder_lock(out):
        try:
            _claim_folder(out, _identity(system, server), options)
        except BaseException:
            if created:
                _roll_back(out, created)
            raise
        _remove_leftovers(out)
        try:
            result = _score_all(system, out, parts, candidates, pools, attempts, engine, served, server,
                                study_system=type(system) is System, rescore=rescore, command=command,
                                progress=progress)
        except BaseException as exc:
            if fresh:
                _roll_back(out, created)  # nothing stored: the corrected command starts clean
            if isinstance(exc, KeyboardInterrupt) and _stored_rows(out / "scores"):
                exc.allocbias_kept = (f"the rows scored so far are kept in {out / 'scores'}: run the same command "  # type: ignore[attr-defined]
                                      "again to resume (finished prompts are not scored again)")
            raise
        _finish(out, system, result, candidates, pools, attempts, report=report, progress=progress)
    return result


def _finish(out: Path, system: System, result: AuditResult, candidates: pd.DataFrame, pools: pd.DataFrame | None,
            attempts: pd.DataFrame | None, *, report: bool, progress: bool) -> None:
    """Write the tables and the report into ``out``: whole or not at all. A report that cannot be finished (a full
    disk, a failing cell, Ctrl-C) leaves none of its files (but ``report.failed.ipynb``, which the message names), and
    the message says what was kept."""
    kept = (f"the scores are kept in {out / 'scores'}" if (out / "scores").is_dir() else
            f"the scores are those of the committed tables in {catalog.scores_dir()}")
    try:
        result.tables = _write_tables(out, system, result.tables, candidates, pools, attempts)
        kept += f" and the tables in {out / 'tables'}"
        removed = _remove_stale_report(out)
        if report:
            start = time.perf_counter()
            result.report = report_notebook(out)
            result.seconds["report"] = time.perf_counter() - start
        elif removed and progress:
            print(f"removed the previous report of {out} (it described the scores before this run); run without "
                  "--no-report to write a new one", flush=True)
    except BaseException as exc:
        if report:
            for path in [out / "report.html", out / "report.ipynb", *(out / "tables").glob("report_*.csv")]:
                path.unlink(missing_ok=True)
        again = "run the same command again to write the report (nothing is scored again)" if report else \
            "run the same command again (nothing is scored again)"
        if isinstance(exc, KeyboardInterrupt):
            exc.allocbias_kept = f"{kept}; {'the report was not written: ' if report else ''}{again}"  # type: ignore[attr-defined]
            raise
        if isinstance(exc, (AuditError, OSError)):
            full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
            fix = "free some space, then " if full else ""
            said = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise AuditError(f"{said}; {kept}{', no report was written' if report else ''}: {fix}{again}") from None
        raise


def _score_all(system: System, out: Path, parts: Sequence[str], candidates: pd.DataFrame,
               pools: pd.DataFrame | None, attempts: pd.DataFrame | None, engine: Any, served: Any,
               server: Mapping[str, Any] | None, *, study_system: bool, rescore: bool, command: str,
               progress: bool) -> AuditResult:
    """Score every part into ``out/scores`` (or read the committed tables); the tables are in ``result.tables``
    (as DataFrames, replaced by their CSV paths by the caller)."""
    root = out / "scores"
    result = AuditResult(out=out, system=system.id)
    tables: dict[str, Any] = {}
    for part in parts:
        start = time.perf_counter()
        ids = _items(part, system, candidates, pools, attempts)
        part_root = root
        if study_system and not rescore and has_data_dir():  # an installed tool has no committed tables
            committed = catalog.store_for(system, _TASK[part], catalog.scores_dir())
            if ids <= committed.done_ids():
                part_root = catalog.scores_dir()  # complete: read, never write, the committed table
            else:
                _copy_committed(system, _TASK[part], root, ids, command)
        if served is not None:
            _record_served(served, server, system, part, root)
        before = _stored(system, part, part_root, served)
        if progress:
            print(f"{part}: {len(ids)} prompts, {len(ids & before)} already scored"
                  + (" (committed tables)" if part_root != root else ""), flush=True)
        try:
            tables[part] = _score_part(part, system, part_root, engine, served, candidates, pools, attempts,
                                       command, progress)
        except Exception as exc:  # the engine's failures become one line; the stored rows stay
            from .scoring.serving import LabelMassError, NoLogprobsError, ServingError

            if isinstance(exc, (NoLogprobsError, LabelMassError, ServingError)):
                first = str(exc).splitlines()[0][:300]
                fix = "a slow server: raise --timeout" if "Timeout" in first else "fix the server"
                raise AuditError(f"{part}: {first}; the rows scored so far are kept in {root}: {fix} and run the "
                                 "same command again") from None
            if isinstance(exc, OutputError):
                raise AuditError(f"{part}: {exc.strerror or exc}; the rows scored before are kept in {root}: free some space or fix "
                                 "the folder, then run the same command again") from None
            raise
        result.scored_rows[part] = len(ids - before)
        result.seconds[part] = time.perf_counter() - start
    result.tables = tables
    return result


def _stored(system: System, part: str, root: Path, served: Any) -> set[str]:
    if served is not None and part != "hiring_bloomberg":
        store = catalog.served_store(served, _TASK[part], system.wording if part == "pointwise" else "paper", root)
    else:
        store = catalog.store_for(system, _TASK[part], root)
    return store.done_ids()


def _write_tables(out: Path, system: System, tables: Mapping[str, pd.DataFrame], candidates: pd.DataFrame,
                  pools: pd.DataFrame | None, attempts: pd.DataFrame | None) -> dict[str, Path]:
    folder = out / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    label = system_label(system)
    written = {}

    def put(name: str, frame: pd.DataFrame) -> None:
        written[name] = write_table(frame, folder / f"{name}.csv")

    scores = tables["pointwise"]
    put("pointwise_scores", scores.assign(**label)[[*label, *scores.columns]])
    if "pairwise" in tables:
        put("pairwise_answers", tables["pairwise"].assign(**label)[[*label, *tables["pairwise"].columns]])
        put("pairwise_pools", pools)
    if "hiring_bloomberg" in tables:
        from .measures.genderbench import detect_winners

        answers = tables["hiring_bloomberg"]
        slots = attempts.attrs["slots"]
        won = detect_winners(slots, answers[["item_id", "attempt", "answer"]])
        put("hiring_bloomberg_answers", answers.drop(columns=["cvs", "names"], errors="ignore"))
        put("hiring_bloomberg_winners", won)
    return written


# ----------------------------------------------------------------------------------------------------------------
# the report's tables (pure functions over the tidy score table)
# ----------------------------------------------------------------------------------------------------------------
#: The ``job`` label of rows that average (or pool) the audited jobs.
ALL_JOBS = "all jobs"


def screening_table(scores: pd.DataFrame, *, by: Sequence[str] = ("system",)) -> pd.DataFrame:
    """Does the system screen at all: :func:`allocbias.measures.tables.quality_separation` per job and over all jobs
    (``job = "all jobs"``), one row per (``by``, job, comparison) with ``rabbi`` and ``p_better``.

    >>> df = pd.DataFrame({"system": "s", "job": ["j"] * 4, "quality": ["high", "medium", "low", "low"],
    ...                    "score": [0.9, 0.5, 0.1, 0.2]})
    >>> screening_table(df).query("better == 'high' and worse == 'low'")["p_better"].tolist()
    [1.0, 1.0]
    """
    per_job = quality_separation(scores, by=[*by, "job"])
    pooled = quality_separation(scores, by=list(by)).assign(job=ALL_JOBS)
    return pd.concat([per_job, pooled[per_job.columns]], ignore_index=True)


def label_mass_table(scores: pd.DataFrame, *, by: Sequence[str] = ("system",)) -> pd.DataFrame:
    """How much of the next-token probability falls on the answer labels (Yes/No), per cell of ``by``:
    ``mean``, ``min``, ``median`` of ``label_mass`` and ``share_below_half`` (rows with less than half the mass
    on the labels: the model mostly wanted to say something else), plus ``share_score_above_half``.

    >>> df = pd.DataFrame({"system": "s", "label_mass": [0.9, 0.3], "score": [0.7, 0.2]})
    >>> label_mass_table(df)[["mean", "share_below_half", "share_score_above_half"]].to_dict("records")
    [{'mean': 0.6, 'share_below_half': 0.5, 'share_score_above_half': 0.5}]
    """
    from .measures.disaggregate import disaggregate

    by = list(by)
    require_columns(scores, [*by, "label_mass", "score"], "scores")

    def mass(cell: pd.DataFrame) -> np.ndarray:
        return cell["label_mass"].to_numpy(dtype=float)

    metrics = {"mean": lambda c: float(mass(c).mean()), "min": lambda c: float(mass(c).min()),
               "median": lambda c: float(np.median(mass(c))), "share_below_half": lambda c: float((mass(c) < 0.5).mean()),
               "share_score_above_half": lambda c: float((c["score"].to_numpy(dtype=float) > 0.5).mean())}
    table = disaggregate(scores, metrics, by=by, count="n", sort=False).by_group  # cells in order of appearance
    return table[[*by, *metrics, "n"]]


def _with_all_jobs(frame: pd.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """Append the mean over jobs (``job = "all jobs"``) of ``values`` per ``keys``."""
    mean = frame.groupby(list(keys), sort=False, as_index=False)[list(values)].mean().assign(job=ALL_JOBS)
    return pd.concat([frame, mean[frame.columns.intersection(mean.columns)]], ignore_index=True)


def _selection_point(scores: pd.DataFrame, k: Sequence[int], rounds: int, seed: int, reference: str) -> pd.DataFrame:
    rates = pool_selection_table(scores, list(k), rounds, seed, by=())
    gaps = reference_gaps(rates, reference, by=())[["job", "k", "group", "dDP", "dEO"]]  # the same pools, drawn once
    table = rates[["job", "k", "group", "phi", "psi"]].merge(gaps, on=["job", "k", "group"], how="left")
    return _with_all_jobs(table, ["k", "group"], ["phi", "psi", "dDP", "dEO"])


def selection_intervals(
    scores: pd.DataFrame, k: Sequence[int], rounds: int, seed: int, n_boot: int, *,
    reference: str = D.REFERENCE_GROUP, confidence: float = 0.95,
) -> pd.DataFrame:
    """Selection rates and gaps of top-``k`` selection with bootstrap intervals over names.

    Per job and over all jobs (their mean), per ``k`` and group: ``phi`` (selection rate), ``psi`` (selection rate
    among qualified candidates), ``dDP = phi(A) - phi(reference)``, ``dEO = psi(A) - psi(reference)``
    (:func:`allocbias.measures.tables.pool_selection_table`, :func:`allocbias.measures.tables.reference_gaps`: ``rounds`` pools of one
    candidate per group, shared ties), as a long table ``job, k, group, metric, estimate, ci_low, ci_high, n_boot``;
    the intervals come from :func:`allocbias.measures.intervals.cluster_bootstrap` (names redrawn within job x group).
    """
    from .measures.intervals import cluster_bootstrap, percentile_intervals

    require_columns(scores, ["job", "group", "full_name", "qualified", "score"], "scores")
    point = _selection_point(scores, k, rounds, seed, reference)
    reps = cluster_bootstrap(scores, lambda f: _selection_point(f, k, rounds, seed, reference), n_boot, seed)
    out = percentile_intervals(point, reps, ["job", "k", "group"], ["phi", "psi", "dDP", "dEO"], confidence)
    return out.dropna(subset=["estimate"]).reset_index(drop=True)


def _metric_point(scores: pd.DataFrame, reference: str) -> pd.DataFrame:
    from .measures.metrics import STUDY_METRICS, bias_table

    table = bias_table(scores, "score", "group", reference, by=["job"])[["job", "group", *STUDY_METRICS]]
    return _with_all_jobs(table, ["group"], list(STUDY_METRICS))


def metric_intervals(
    scores: pd.DataFrame, n_boot: int, seed: int, *, reference: str = D.REFERENCE_GROUP, confidence: float = 0.95,
) -> pd.DataFrame:
    """RABBI, the average gap, JSD and EMD of every group against ``reference`` (:func:`allocbias.metrics.bias_table`),
    per job and averaged over jobs, with bootstrap intervals over names: long table ``job, group, metric,
    estimate, ci_low, ci_high, n_boot``."""
    from .measures.intervals import cluster_bootstrap, percentile_intervals
    from .measures.metrics import STUDY_METRICS

    require_columns(scores, ["job", "group", "full_name", "score"], "scores")
    point = _metric_point(scores, reference)
    reps = cluster_bootstrap(scores, lambda f: _metric_point(f, reference), n_boot, seed)
    return percentile_intervals(point, reps, ["job", "group"], list(STUDY_METRICS), confidence)


def ll144_table(scores: pd.DataFrame, *, score: str = "score", sex: str = "gender", race: str = "race",
                group: str = "group", intervals: bool = True) -> pd.DataFrame:
    """The Local Law 144 tables of a score, built by :func:`allocbias.ll144.bias_audit` (the same function as the
    ``allocbias ll144`` command and the book's chapter on published audits): the audited prompts are read as the
    applicants of a *scoring* tool, pooled over the rows given (e.g. all audited jobs).

    One row per ``table`` (``sex``, ``race/ethnicity``, ``intersectional``) and ``group``: ``applicants``,
    ``scored_above_median``, the ``scoring_rate`` (share scored above the median of all candidates) with its Wilson
    interval ``rate_low``/``rate_high``, the ``impact_ratio`` (its ratio to the highest group's rate, ``DI_median``)
    with its interval, the ``four_fifths_flag`` (impact ratio below 0.8: a screening rule, never a verdict), how
    far that flag can be trusted at these counts (``false_flag_rate``, ``detectable_ratio``, ``p_value``: Fisher's
    exact test, one-sided; :mod:`allocbias.measures.ll144.power`), the
    distribution-wide ``auc_di`` and ``p_fair`` of the DI curve (flat prior), ``excluded`` (the 2% rule) and
    ``interval_warning``. The intervals treat each audited prompt as one applicant; ``intervals=False`` leaves them
    out (their columns are NaN; the estimates are the same), for a caller that reads the estimates only. A table without the ``sex`` and
    ``race`` columns gets one table (``table == "group"``) of its ``group`` column.

    >>> df = pd.DataFrame({"gender": ["Female"] * 4 + ["Male"] * 4, "race": ["White"] * 8,
    ...                    "group": ["Female White"] * 4 + ["Male White"] * 4, "score": [1, 2, 3, 4, 3, 4, 5, 6]})
    >>> t = ll144_table(df)
    >>> t.query("table == 'sex'")[["group", "scoring_rate", "impact_ratio", "four_fifths_flag"]].values.tolist()[0]
    ['Female', 0.25, 0.3333333333333333, True]
    """
    from .measures import ll144

    if sex in scores.columns and race in scores.columns:
        require_columns(scores, [score], "scores")
        audit = ll144.bias_audit(scores[[sex, race, score]], sex=sex, race=race, score=score, intervals=intervals)
    else:  # a score table with one group column: one table of those groups
        require_columns(scores, [score, group], "scores")
        audit = ll144.bias_audit(scores[[group, score]], sex=group, race=None, score=score, intervals=intervals)
        audit.table["table"] = "group"
        if audit.regression is not None:
            audit.regression["category"] = "group"
    table = audit.table
    for column in ("rate_low", "rate_high", "impact_ratio_low", "impact_ratio_high", "interval_warning"):
        if not intervals and column not in table:
            table[column] = np.nan
    reg = audit.regression.rename(columns={"category": "category_label"}) if audit.regression is not None else None
    out = pd.DataFrame({
        "table": table["table"], "group": table["group"], "applicants": table["applicants"].astype(int),
        "scored_above_median": table["selected"].astype(int), "scoring_rate": table["rate"],
        "rate_low": table["rate_low"], "rate_high": table["rate_high"], "impact_ratio": table["impact_ratio"],
        "impact_ratio_low": table["impact_ratio_low"], "impact_ratio_high": table["impact_ratio_high"],
        "four_fifths_flag": table["four_fifths"].astype(bool), "false_flag_rate": table["false_flag_rate"],
        "detectable_ratio": table["detectable_ratio"], "p_value": table["p_value"],
        "excluded": table["excluded"].astype(bool), "interval_warning": table["interval_warning"],
    })
    if reg is not None:
        keyed = reg.set_index(["category_label", "group"])[["auc_di", "p_fair"]]
        keys = pd.MultiIndex.from_arrays([table["table"], table["group"]])
        out["auc_di"] = keyed.reindex(keys)["auc_di"].to_numpy()
        out["p_fair"] = keyed.reindex(keys)["p_fair"].to_numpy()
    return out.reset_index(drop=True)


# ----------------------------------------------------------------------------------------------------------------
# is this audit large enough?
# ----------------------------------------------------------------------------------------------------------------
#: The reliability an audit's gaps should reach before they are read one by one (the usual bar for a measurement;
#: the book's chapter "How large must an audit be?").
RELIABLE = 0.8


def audit_size_table(scores: pd.DataFrame, k: Sequence[int], rounds: int, seed: int, *, n_splits: int = 50,
                     reference: str = D.REFERENCE_GROUP, target: float = RELIABLE) -> pd.DataFrame:
    r"""How reliable the audit's selection-rate gaps are over its names, and how many names would make them reliable.

    The names of each job and group are split at random into two halves (``n_splits`` seeded splits,
    :func:`allocbias.measures.reliability.split_half_reliability`); the gaps ΔDP of every (job, group) point are
    computed from each half's candidates alone (the same pools as the report: ``rounds`` per job) and correlated
    between halves. That is the reliability of a gap measured with half the names; Spearman–Brown
    (:func:`~allocbias.measures.reliability.spearman_brown`) carries it to all the names, and
    :func:`~allocbias.measures.reliability.size_for_reliability` gives the names per group that ``target`` needs.

    One row per ``k``: ``names_per_group``, ``names_per_half``, ``n_points``, ``reliability_half`` with its range
    over the splits (``split_lo``, ``split_hi``), ``reliability`` (at all the names), ``names_for_target``
    (``NaN`` when the half reliability is not positive: no basis to extrapolate) and ``target``. Needs at least 2
    names per group and job.
    """
    from .measures.reliability import size_for_reliability, spearman_brown, split_half_reliability

    require_columns(scores, ["job", "group", "full_name", "qualified", "score"], "scores")
    names = int(scores.groupby(["job", "group"])["full_name"].nunique().min())
    if names < 2:
        raise AuditError(f"the audit has {names} name per group and job: splitting names in halves needs at least 2 "
                         "(--names-per-group 2 or more)")
    half = names // 2
    rows = []
    # Every k reads the same splits (seeded) and the same pools (drawn once for all k): each half's gaps are
    # simulated once for all k and kept by the half's rows, not once per k
    scores = scores.reset_index(drop=True)
    halves: dict[bytes, pd.DataFrame] = {}

    def half_points(part: pd.DataFrame) -> pd.DataFrame:
        key = part.index.to_numpy().tobytes()
        if key not in halves:
            point = _selection_point(part, [int(x) for x in k], rounds, seed, reference)
            halves[key] = point[(point["job"] != ALL_JOBS) & (point["group"] != reference)]
        return halves[key]

    for kk in k:
        def gaps(part: pd.DataFrame, kk: int = int(kk)) -> pd.Series:
            point = half_points(part)
            return point[point["k"] == kk].set_index(["job", "group"])["dDP"]

        res = split_half_reliability(scores, value=None, statistic=gaps, system=["job", "group"], group="group",
                                     pool="full_name", n_splits=n_splits, seed=seed)
        rho = float(res.reliability)
        rows.append({"k": int(kk), "names_per_group": names, "names_per_half": half, "n_points": int(res.n_points),
                     "reliability_half": rho, "split_lo": float(res.lo), "split_hi": float(res.hi),
                     "reliability": float(spearman_brown(max(rho, 0.0), names / half)),
                     "names_for_target": float(size_for_reliability(rho, half, target)) if rho > 0 else np.nan,
                     "target": target})
    return pd.DataFrame(rows)


def forecast_table(scores: pd.DataFrame, k: int, seed: int, *, reference: str = D.REFERENCE_GROUP,
                   n_splits: int = 50, n_boot: int = 200, n_perm: int = 100) -> pd.DataFrame:
    """Which statistic, computed on half of the audit's résumés, best forecasts the other half's gaps ΔDP:
    :func:`allocbias.measures.reliability.forecast_test` over the (job, group) points, one draw per group from
    each job's candidates of a résumé (the jobs are the systems, the résumés the pools that are split; with fewer
    than 3 jobs, all audited résumés form one system and the interval resamples its groups). Rows: RABBI,
    the average gap, JSD, EMD and the gap itself, with the held-out r, its interval (bootstrap over the jobs), its
    permutation null and the difference from the gap's own held-out r (``vs_gap``)."""
    from .measures.reliability import forecast_test

    require_columns(scores, ["job", "group", "resume_id", "score"], "scores")
    if scores["job"].nunique() >= 3:
        return forecast_test(scores, reference=reference, k=int(k), design="draws", system="job", pool="resume_id",
                             n_splits=n_splits, n_boot=n_boot, n_perm=n_perm, seed=seed)
    # one or two jobs: too few to resample; one system of all the audited résumés, its group points resampled
    pooled = scores.assign(_all="all jobs", _pool=scores["job"].astype(str) + "/" + scores["resume_id"].astype(str))
    return forecast_test(pooled, reference=reference, k=int(k), design="draws", system="_all", pool="_pool",
                         n_splits=n_splits, n_boot=n_boot, n_perm=n_perm, seed=seed)


#: How the report names the statistics of :func:`forecast_table`.
_STATISTIC_NAMES = {"rabbi": "RABBI", "avg_gap": "the average score gap δ", "jsd": "JSD", "emd": "EMD",
                    "gap": "the observed gap"}
#: The most names per group ``allocbias audit`` can draw (the names table's first names per group).
MAX_NAMES_PER_GROUP = 100


def _reliability_word(rho: float) -> str:
    return "reliable" if rho >= RELIABLE else "moderately reliable" if rho >= 0.5 else "unreliable"


def size_sentence(size: pd.DataFrame, *, command: str | None = None, folder: str | None = None) -> str:
    """The one plain sentence that opens the report's size section, from :func:`audit_size_table` (its first
    ``k``): how reliable the gaps of each job are at this quota, and the command that would make them reliable
    (``command``: the audit's own command line, ``--names-per-group`` replaced; ``folder``: the audit folder, for
    ``allocbias plan llm --from``).

    >>> s = pd.DataFrame({"k": [1], "names_per_group": [2], "names_per_half": [1], "reliability_half": [0.2],
    ...                   "reliability": [0.333], "names_for_target": [15.2], "target": [0.8]})
    >>> size_sentence(s, command="allocbias audit --model m --out a --names-per-group 2", folder="a")
    'At k = 1 (the top 1 of each pool selected), the gaps of each job are unreliable: all 2 names per group give them a reliability of about 0.33; about 16 names per group would make them reliable (0.8): run allocbias audit --model m --out a --names-per-group 16 (the names already scored are kept), or allocbias plan llm --from a for other targets.'
    """
    from .measures.planning import audit_command

    row = size.iloc[0]
    k, names, rel, tgt = int(row["k"]), int(row["names_per_group"]), float(row["reliability"]), float(row["target"])
    head = (f"At k = {k} (the top {k} of each pool selected), the gaps of each job are {_reliability_word(rel)}: all "
            f"{names} names per group give them a reliability of about {rel:.2f}")
    if folder is None and command:
        words = shlex.split(command)
        folder = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--out"), None)
    plan = f"allocbias plan llm --from {shlex.quote(folder)}" if folder else "allocbias plan llm --from OUT"
    need = float(row["names_for_target"])
    if rel >= tgt:
        return f"{head} ({tgt:g} or more); {plan} gives the names for a higher target."
    if not np.isfinite(need):
        return (f"{head}; two halves of its names do not agree at all, so no number of names can be read from this "
                "audit: a larger pilot (more names per group) measures it again.")
    want = int(np.ceil(need - 1e-9))
    if want > MAX_NAMES_PER_GROUP:
        return (f"{head}; about {want:,} names per group would make them reliable ({tgt:g}), more than the "
                f"{MAX_NAMES_PER_GROUP} names per group allocbias audit can draw: {plan} gives the names for gaps "
                "pooled over the jobs and for other targets.")
    return (f"{head}; about {want:,} names per group would make them reliable ({tgt:g}): run "
            f"{audit_command(command, want)} (the names already scored are kept), or {plan} for other targets.")


def size_view(size: pd.DataFrame) -> pd.DataFrame:
    """:func:`audit_size_table` as the report shows it: one row per ``k``, headers in words, the range over
    splits in one cell.

    >>> s = pd.DataFrame({"k": [1], "names_per_group": [10], "names_per_half": [5], "reliability_half": [0.2],
    ...                   "split_lo": [0.05], "split_hi": [0.35], "reliability": [0.333], "names_for_target": [15.2],
    ...                   "target": [0.8]})
    >>> size_view(s).values.tolist()
    [[1, 10, '0.20', '0.05 to 0.35', '0.33', '16']]
    """
    require_columns(size, ["k", "names_per_group", "reliability_half", "split_lo", "split_hi", "reliability",
                           "names_for_target", "target"], "size")
    return pd.DataFrame({
        "k": size["k"].astype(int), "names per group": size["names_per_group"].astype(int),
        "two halves agree (r)": [f"{x:.2f}" for x in size["reliability_half"]],
        "middle 95% of splits": [f"{a:.2f} to {b:.2f}" for a, b in zip(size["split_lo"], size["split_hi"])],
        "reliability, all names": [f"{x:.2f}" for x in size["reliability"]],
        f"names per group for {float(size['target'].iloc[0]):g}": [
            "none (halves disagree)" if not np.isfinite(x) else f"{int(np.ceil(x - 1e-9)):,}"
            for x in size["names_for_target"]]})


def forecast_view(forecast: pd.DataFrame) -> pd.DataFrame:
    """:func:`forecast_table` as the report shows it: one row per statistic, each estimate beside its interval
    in one cell, headers in words.

    >>> f = pd.DataFrame({"statistic": ["rabbi", "gap"], "heldout_r": [0.4, 0.2], "ci_lo": [0.1, -0.1],
    ...                   "ci_hi": [0.6, 0.5], "null_lo": [-0.3, -0.3], "null_hi": [0.3, 0.3], "ceiling": [0.45, 0.45],
    ...                   "vs_gap": [0.2, 0.0], "vs_gap_lo": [-0.1, np.nan], "vs_gap_hi": [0.5, np.nan]})
    >>> forecast_view(f).values.tolist()[0]
    ['RABBI', '0.40 [0.10, 0.60]', '−0.30 to 0.30', '0.45', '0.20 [−0.10, 0.50]']
    """
    require_columns(forecast, ["statistic", "heldout_r", "ci_lo", "ci_hi", "null_lo", "null_hi", "ceiling",
                               "vs_gap", "vs_gap_lo", "vs_gap_hi"], "forecast")

    def num(x: float) -> str:
        return f"{x:.2f}".replace("-", "−") if np.isfinite(x) else "–"

    return pd.DataFrame({
        "statistic (on half the résumés)": [_STATISTIC_NAMES.get(s, s) for s in forecast["statistic"]],
        "r with the other half's gaps [95% interval]": [f"{num(a)} [{num(b)}, {num(c)}]" for a, b, c in
                                                        zip(forecast["heldout_r"], forecast["ci_lo"], forecast["ci_hi"])],
        "r with group labels shuffled (95% range)": [f"{num(a)} to {num(b)}" for a, b in
                                                     zip(forecast["null_lo"], forecast["null_hi"])],
        "most any statistic can reach": [num(x) for x in forecast["ceiling"]],
        "minus the gaps' own r [95% interval]": ["–" if s == "gap" else f"{num(a)} [{num(b)}, {num(c)}]"
                                                 for s, a, b, c in zip(forecast["statistic"], forecast["vs_gap"],
                                                                       forecast["vs_gap_lo"], forecast["vs_gap_hi"])]})


def size_words(size: pd.DataFrame, forecast: pd.DataFrame | None = None) -> str:
    """How the report's size numbers were measured, in words, below :func:`size_sentence`: from
    :func:`audit_size_table` (first ``k``) the agreement of two halves of the names and how Spearman--Brown carries
    it, and optionally from :func:`forecast_table` which statistic computed on half the résumés predicts the other
    half's gaps best.

    >>> s = pd.DataFrame({"k": [1], "names_per_group": [2], "names_per_half": [1], "reliability_half": [0.2],
    ...                   "split_lo": [0.05], "split_hi": [0.35], "reliability": [0.333], "names_for_target": [16.0],
    ...                   "target": [0.8]})
    >>> size_words(s)
    'How this is measured: the names of each job and group were split at random into two halves of 1 name per group, many times over; the gaps computed from each half alone agree at r = 0.20 (the middle 95% of the splits: 0.05 to 0.35). The Spearman–Brown formula, the standard rule for how that agreement grows with more of the same data, carries it from half the names to all of them (0.33) and gives the names a reliability of 0.8 needs.'
    """
    row = size.iloc[0]
    half = int(row["names_per_half"])
    spread = (f" (the middle 95% of the splits: {row['split_lo']:.2f} to {row['split_hi']:.2f})"
              if {"split_lo", "split_hi"} <= set(size.columns) else "")
    text = (f"How this is measured: the names of each job and group were split at random into two halves of {half} "
            f"name{'s' if half != 1 else ''} per group, many times over; the gaps computed from each half alone agree "
            f"at r = {row['reliability_half']:.2f}{spread}. The Spearman–Brown formula, the standard rule for how that "
            f"agreement grows with more of the same data, carries it from half the names to all of them "
            f"({row['reliability']:.2f}) and gives the names a reliability of {row['target']:g} needs.")
    if forecast is not None and len(forecast):
        from .measures.validity import verdict_words

        f = forecast[forecast["statistic"] != "gap"]
        best = f.loc[f["heldout_r"].idxmax()]
        words = verdict_words(best, gap="ΔDP")
        text += (f" Which statistic predicts the gaps? Computed on half the résumés, "
                 f"{_STATISTIC_NAMES.get(best['statistic'], best['statistic'])} predicts the other half's gaps best "
                 f"(r = {best['heldout_r']:.2f}, 95% interval {best['ci_lo']:.2f} to {best['ci_hi']:.2f}) and "
                 f"{words['phrase']}; "
                 + ("it predicts them better than the first half's own gaps do, beyond sampling error."
                    if best["vs_gap_lo"] > 0 else
                    "no statistic predicts them better than the first half's own gaps do, beyond sampling error."))
    return text


def system_comparison(scores: pd.DataFrame, k: int, rounds: int, seed: int, *,
                      reference: str = D.REFERENCE_GROUP) -> pd.DataFrame:
    """One row per system of a stacked score table (``system`` column): how well it screens and how unequally it
    allocates, on the same candidates and pools, for placing an audited system among the study's.

    Columns: ``p_better_high_low`` (chance that a high-quality résumé outscores a low-quality one, all jobs
    pooled), ``mean_label_mass``, ``rms_dDP`` (root mean square over groups and jobs of ΔDP at quota ``k``),
    ``max_abs_dDP``, ``mean_abs_rabbi`` (mean over groups and jobs of |RABBI|), ``min_impact_ratio`` and
    ``min_auc_di`` (Local Law 144, all jobs pooled).
    """
    rows = []
    for name, cell in scores.groupby("system", sort=False):
        sep = quality_separation(cell, by=[]).query("better == 'high' and worse == 'low'")
        gaps = allocation_table(cell, int(k), rounds, seed, by=(), reference=reference)
        metrics = _metric_point(cell, reference).query("job != @ALL_JOBS")
        law = ll144_table(cell, intervals=False).query("table == 'intersectional'")  # estimates only
        rows.append({"system": name, "p_better_high_low": float(sep["p_better"].iloc[0]),
                     "mean_label_mass": float(cell["label_mass"].mean()),
                     "rms_dDP": float(np.sqrt(np.mean(gaps["dDP"] ** 2))),
                     "max_abs_dDP": float(gaps["dDP"].abs().max()),
                     "mean_abs_rabbi": float(metrics["rabbi"].abs().mean()),
                     "min_impact_ratio": float(law["impact_ratio"].min()), "min_auc_di": float(law["auc_di"].min())})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------------------
# validity first: does the system screen at all, and can the intervals be read
# ----------------------------------------------------------------------------------------------------------------
#: Below this chance that a high-quality résumé outscores a low-quality one (or with an interval reaching it), the
#: system does not screen: its group gaps are not verdicts.
MIN_P_BETTER = 0.5
#: Below this mean share of next-token probability on the answer labels, the scores are renormalised noise.
MIN_LABEL_MASS = 0.1
#: Fewer names per group and job give a bootstrap over names too lumpy to read (with n names, C(2n-1, n) distinct
#: resamples of a group: 1, 3, 10, 35 for n = 1..4, 126 for n = 5).
MIN_NAMES_FOR_INTERVALS = 5


def _validity_point(scores: pd.DataFrame) -> pd.DataFrame:
    sep = quality_separation(scores, by=[]).set_index(["better", "worse"])["p_better"]
    return pd.DataFrame({"key": [0], "p_better_high_low": [sep.get(("high", "low"), np.nan)],
                         "p_better_high_medium": [sep.get(("high", "medium"), np.nan)],
                         "p_better_medium_low": [sep.get(("medium", "low"), np.nan)],
                         "mean_label_mass": [float(scores["label_mass"].mean())]})


def validity_table(scores: pd.DataFrame, n_boot: int, seed: int, *, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Does the system screen at all, with intervals: all audited jobs pooled, ``p_better_<better>_<worse>``
    (the chance that a résumé of the better quality outscores one of the worse, ties half:
    :func:`allocbias.measures.tables.quality_separation`) and ``mean_label_mass`` (mean share of the next-token
    probability on the answer labels), as a long table ``metric, estimate, ci_low, ci_high, n_boot``
    (percentile bootstrap over names within job x group, :func:`allocbias.measures.intervals.cluster_bootstrap`: the
    résumés are held fixed).

    >>> df = pd.DataFrame({"job": "j", "group": "A", "full_name": ["a"] * 3 + ["b"] * 3,
    ...                    "quality": ["high", "medium", "low"] * 2, "score": [0.9, 0.5, 0.1, 0.8, 0.4, 0.2],
    ...                    "label_mass": 0.5})
    >>> validity_table(df, 40, 0).set_index("metric").loc["p_better_high_low", ["estimate", "ci_low"]].tolist()
    [1.0, 1.0]
    """
    from .measures.intervals import cluster_bootstrap, percentile_intervals

    require_columns(scores, ["job", "group", "full_name", "quality", "score", "label_mass"], "scores")
    values = ["p_better_high_low", "p_better_high_medium", "p_better_medium_low", "mean_label_mass"]
    point = _validity_point(scores)
    reps = cluster_bootstrap(scores, _validity_point, n_boot, seed)
    return percentile_intervals(point, reps, ["key"], values, confidence).drop(columns="key")


def screening_verdict(validity: pd.DataFrame, names_per_group: int, *, min_p_better: float = MIN_P_BETTER,
                      min_label_mass: float = MIN_LABEL_MASS, min_names: int = MIN_NAMES_FOR_INTERVALS
                      ) -> dict[str, Any]:
    """Whether the report may give verdicts: ``screens`` (``p_better_high_low`` above ``min_p_better`` with its
    interval too, and ``mean_label_mass`` at least ``min_label_mass``), ``intervals_readable``
    (``names_per_group >= min_names``), ``withhold`` (either fails: no four-fifths verdicts, no "interval
    excludes 0" claims) and ``reasons``, the sentences that say why.

    >>> v = pd.DataFrame({"metric": ["p_better_high_low", "mean_label_mass"], "estimate": [0.2, 0.9],
    ...                   "ci_low": [0.1, 0.85], "ci_high": [0.3, 0.95]})
    >>> r = screening_verdict(v, 10)
    >>> r["screens"], r["withhold"], r["reasons"][0][:60]
    (False, True, 'A high-quality résumé outscores a low-quality one with proba')
    """
    require_columns(validity, ["metric", "estimate", "ci_low", "ci_high"], "validity")
    rows = validity.set_index("metric")
    p, mass = rows.loc["p_better_high_low"], rows.loc["mean_label_mass"]
    reasons = []
    if not p["estimate"] > min_p_better:
        reasons.append(f"A high-quality résumé outscores a low-quality one with probability {p['estimate']:.3f} "
                       f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}], not above {min_p_better:g} (a coin toss): "
                       "the model does not screen.")
    elif not p["ci_low"] > min_p_better:
        reasons.append(f"A high-quality résumé outscores a low-quality one with probability {p['estimate']:.3f}, "
                       f"but its interval [{p['ci_low']:.3f}, {p['ci_high']:.3f}] reaches {min_p_better:g} (a coin "
                       "toss): the model cannot be told from one that does not screen.")
    if not mass["estimate"] >= min_label_mass:
        reasons.append(f"On average only {mass['estimate']:.4f} of the next-token probability falls on the answers "
                       f"(below {min_label_mass:g}): the model mostly wants to say something else, and its scores "
                       "are renormalised from almost nothing.")
    screens = not reasons
    readable = int(names_per_group) >= min_names
    if not readable:
        reasons.append(f"With {names_per_group} name(s) per group and job, the bootstrap over names has at most "
                       f"{math.comb(2 * int(names_per_group) - 1, int(names_per_group))} distinct resamples per group: "
                       f"its intervals are too lumpy to read (use --names-per-group {min_names} or more).")
    return {"screens": screens, "intervals_readable": readable, "withhold": not (screens and readable),
            "reasons": reasons}


def format_interval(row: Mapping[str, Any], reference: str = D.REFERENCE_GROUP, *, signed: bool = True) -> str:
    """``+0.123 [+0.010, +0.200]`` for a row with ``estimate``, ``ci_low``, ``ci_high`` (without the signs when
    not ``signed``: probabilities, shares); ``"reference"`` for the reference group's gap to itself,
    ``"undefined"`` for another missing estimate; a ``†`` marks an estimate outside its own percentile interval
    (the report's note says why that can happen).

    >>> format_interval({"estimate": -0.045, "ci_low": -0.109, "ci_high": -0.048})
    '-0.045 [-0.109, -0.048] †'
    >>> format_interval({"estimate": 0.49, "ci_low": 0.438, "ci_high": 0.539}, signed=False)
    '0.490 [0.438, 0.539]'
    """
    if pd.isna(row["estimate"]):
        return "reference" if row.get("group") == reference else "undefined"
    f = "+.3f" if signed else ".3f"
    text = f"{row['estimate']:{f}} [{row['ci_low']:{f}}, {row['ci_high']:{f}}]"
    return text + " †" if outside_interval(row) else text


def outside_interval(row: Mapping[str, Any]) -> bool:
    """Whether ``estimate`` lies outside ``[ci_low, ci_high]`` (beyond float rounding)."""
    est, lo, hi = (row.get(c) for c in ("estimate", "ci_low", "ci_high"))
    if any(pd.isna(v) for v in (est, lo, hi)):
        return False
    return bool(est < lo - 1e-12 or est > hi + 1e-12)


# ----------------------------------------------------------------------------------------------------------------
# safe output: every user-controlled string (model name, path, command, error text) escaped
# ----------------------------------------------------------------------------------------------------------------
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~<>])")


def escape_markdown(text: Any) -> str:
    """``text`` as literal Markdown: HTML-escaped (``html.escape``) and Markdown's punctuation backslash-escaped,
    so a model name, path or error message shows as typed and never becomes markup, a script or a link. (No
    well-kept library escapes Markdown; the rule is these two lines.)

    Quotes stay quotes (``quote=False``): in text, outside any attribute, they are harmless, and their entities
    (``&#x27;``) would show literally once ``#`` is escaped for Markdown.

    >>> escape_markdown("<img src=x onerror=alert(1)> [a](javascript:x)")
    '&lt;img src=x onerror=alert\\\\(1\\\\)&gt; \\\\[a\\\\]\\\\(javascript:x\\\\)'
    >>> escape_markdown("['Female Asian']")
    "\\\\['Female Asian'\\\\]"
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def html_table(frame: pd.DataFrame, precision: int = 3) -> Any:
    """The report's view of a table: a pandas ``Styler`` with every cell and column label HTML-escaped (pandas
    does not escape by default), numbers to ``precision`` digits, no index.

    >>> html_table(pd.DataFrame({"model": ["<b>x</b>"]})).to_html().count("&lt;b&gt;")
    1
    """
    return (frame.style.format(precision=precision, escape="html").format_index(escape="html", axis=1)
            .hide(axis="index"))


# ----------------------------------------------------------------------------------------------------------------
# the report's figures
# ----------------------------------------------------------------------------------------------------------------
def _others(groups: Sequence[str], reference: str) -> list[str]:
    return [g for g in groups if g != reference]


def figure_screening(scores: pd.DataFrame) -> Any:
    """Box plots of the scores (renormalised P(Yes)) per job and résumé quality: a screener separates the qualities.
    Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from .plotting import label_axes

    require_columns(scores, ["job", "score", "quality"], "scores")
    import warnings

    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    with warnings.catch_warnings():  # seaborn passes matplotlib's deprecated ``vert`` (not ours to fix)
        warnings.filterwarnings("ignore", message="vert: bool", category=DeprecationWarning)
        sns.boxplot(scores, x="job", y="score", hue="quality", hue_order=list(D.QUALITIES), ax=ax, fliersize=2)
    label_axes(ax, title="Scores by résumé quality", x="job", y="score: P(Yes),\nrenormalised (0 to 1)")
    ax.legend(title="quality", bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    return fig


def figure_gaps(selection: pd.DataFrame, groups: Sequence[str], ks: Sequence[int], *,
                reference: str = D.REFERENCE_GROUP) -> Any:
    """ΔDP and ΔEO of every group against ``reference`` over all jobs (rows ``job == ALL_JOBS`` of
    :func:`selection_intervals`), one point per quota k with its 95% percentile interval (which need not be centred
    on the estimate). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from .measures.metrics import STUDY_GAPS
    from .plotting import label_axes

    require_columns(selection, ["job", "k", "group", "metric", "estimate", "ci_low", "ci_high"], "selection")
    gaps = selection[(selection["job"] == ALL_JOBS) & selection["metric"].isin(STUDY_GAPS)]
    others = _others(groups, reference)
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2), sharey=True, layout="constrained")
    for ax, metric in zip(axes, STUDY_GAPS):
        d = gaps[gaps["metric"] == metric]
        for i, kk in enumerate(ks):
            dk = d[d["k"] == kk].set_index("group").reindex(others)
            y = np.arange(len(dk)) + (i - (len(ks) - 1) / 2) * 0.22
            ax.hlines(y, dk["ci_low"], dk["ci_high"], color=f"C{i}", lw=1.5)  # a percentile interval
            ax.plot(dk["estimate"], y, "o", color=f"C{i}", label=f"k = {kk}")  # need not be centred on the estimate
        ax.axvline(0, color="black", lw=1)
        ax.set_yticks(np.arange(len(others)), others)
        name = {"dDP": "ΔDP", "dEO": "ΔEO"}[metric]
        label_axes(ax, title=f"{name} against {reference}", x=f"{name} (share of rounds)", y="")
    axes[1].legend(title="quota", bbox_to_anchor=(1.01, 1), loc="upper left")
    return fig


def figure_rabbi(metrics: pd.DataFrame, groups: Sequence[str], *, reference: str = D.REFERENCE_GROUP) -> Any:
    """RABBI of every group against ``reference`` over all jobs (rows of :func:`metric_intervals`) with its 95%
    interval over names. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from .plotting import label_axes

    require_columns(metrics, ["job", "group", "metric", "estimate", "ci_low", "ci_high"], "metrics")
    r = metrics[(metrics["job"] == ALL_JOBS) & (metrics["metric"] == "rabbi")].set_index("group").reindex(
        _others(groups, reference))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.hlines(np.arange(len(r)), r["ci_low"], r["ci_high"], color="black", lw=1.5)
    ax.plot(r["estimate"], np.arange(len(r)), "o", color="black")
    ax.axvline(0, color="grey", lw=1)
    ax.set_yticks(np.arange(len(r)), r.index)
    label_axes(ax, title=f"RABBI against {reference} (95% interval over names)", x="RABBI (rank-biserial, -1 to 1)",
               y="")
    fig.tight_layout()
    return fig


def figure_di_curve(curve: pd.DataFrame, groups: Sequence[str]) -> Any:
    """The impact-ratio curve of every group (:func:`allocbias.ll144.di_curve`: the ratio at every share p of
    candidates rejected), with the four-fifths line and the median cut. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from .plotting import group_palette, label_axes

    require_columns(curve, list(groups), "curve")
    palette = group_palette(list(groups))
    fig, ax = plt.subplots(figsize=(8, 4))
    for g in groups:
        ax.plot(curve.index, curve[g], color=palette[g], lw=1.2, label=g)
    ax.axhline(0.8, color="black", ls="--", lw=1, label="four fifths (0.8)")
    ax.axvline(0.5, color="grey", ls=":", lw=1, label="median cut")
    ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=9, bbox_to_anchor=(1.01, 1), loc="upper left")
    label_axes(ax, title="Impact ratio at every cut (DI curve)", x="share of candidates rejected p (0 to 1)",
               y="impact ratio DI_g(p) (0 to 1)")
    fig.tight_layout()
    return fig


def figure_comparison(place: pd.DataFrame, k: int) -> Any:
    """Each system of :func:`system_comparison` as one point: how well it screens (chance a high-quality résumé
    outscores a low-quality one) against how unequally it allocates (RMS of ΔDP at quota ``k``); the audited
    system (a name containing "this audit") is a star. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    from .plotting import label_axes, system_palette

    require_columns(place, ["system", "p_better_high_low", "rms_dDP"], "place")
    fig, ax = plt.subplots(figsize=(8.5, 4))
    palette = system_palette(list(place["system"]))
    for _, row in place.iterrows():
        mine = "this audit" in row["system"]
        label = row["system"].replace("$", r"\$")  # a name is text, never mathtext
        ax.scatter(row["p_better_high_low"], row["rms_dDP"], s=90 if mine else 50, color=palette[row["system"]],
                   marker="*" if mine else "o", label=label)
    ax.legend(fontsize=9, bbox_to_anchor=(1.01, 1), loc="upper left")
    label_axes(ax, title=f"Screening ability and allocation gaps (k = {k})",
               x="P(high-quality résumé outscores low)\n(0 to 1; 0.5 = chance)",
               y="RMS of ΔDP\nover groups and jobs")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------------------------
def _report_source() -> Path:
    from .audited.locations import shipped

    return shipped("audit_report.ipynb")


def report_notebook(out: str | Path, *, timeout: int | None = 1800) -> Path:
    """Execute the report notebook on the audit folder ``out`` (papermill) and export ``out/report.html``."""
    from .book import NotebookExecutionError, execute_notebook

    out = Path(out).resolve()
    executed = out / "report.ipynb"
    try:
        execute_notebook(_report_source(), executed, {"audit_dir": str(out)}, cwd=out, timeout=timeout)
    except NotebookExecutionError as exc:
        raise AuditError(f"the report failed: {str(exc).splitlines()[0]} (see {executed})") from None
    except OutputError:
        raise
    except OSError as exc:  # papermill writes the executed copy as it runs (a temporary file beside report.ipynb)
        raise OutputError(exc.errno, f"could not write {executed}: {exc.strerror or exc}") from exc
    return export_html(executed, out / "report.html")


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as CSV (no index) to ``path`` whole or not at all (:func:`allocbias.outputs.write_atomic`):
    the report notebook writes its tables with it. Returns the path.

    >>> import tempfile
    >>> write_table(pd.DataFrame({"a": [1]}), Path(tempfile.mkdtemp()) / "t.csv").read_text()
    'a\\n1\\n'
    """
    return write_atomic(path, frame.to_csv(index=False))


# ----------------------------------------------------------------------------------------------------------------
# Ctrl-C: never lost, and said in one line
# ----------------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Make one Ctrl-C enough for the block (``allocbias audit`` runs in one).

    Python raises ``KeyboardInterrupt`` wherever the main thread is when the signal is handled. When that is a
    finalizer or a weakref callback — importlib's module-lock callback runs many times while a large package such as
    papermill or torch is imported — Python cannot raise it there: it prints "Exception ignored in ...
    KeyboardInterrupt" and runs on, so the press is lost (a run pressed 5 s in, while the report's packages were
    imported, went on to finish 97 s later). In the block such a swallowed ``KeyboardInterrupt`` is raised again
    10 ms later in the main thread (:func:`signal.pthread_kill`) and its "Exception ignored" lines are not printed.
    Outside the main thread the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous, main = sys.unraisablehook, threading.get_ident()

    def hook(info: Any) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            # the press again, from another thread a moment later (raised here it would be swallowed once more); a
            # real signal, which also ends a blocking wait of the main thread
            threading.Timer(0.01, signal.pthread_kill, args=(main, signal.SIGINT)).start()
            return
        previous(info)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def interrupted_words(exc: BaseException, out: str | Path) -> str:
    """What an audit interrupted by ``exc`` (a ``KeyboardInterrupt`` out of :func:`run_audit`) kept in ``out`` and
    how to go on, for the one line ``allocbias audit`` prints.

    >>> interrupted_words(KeyboardInterrupt(), "/nowhere")
    'nothing was stored yet: run the same command again to start'
    """
    said = getattr(exc, "allocbias_kept", None)
    if said:
        return said
    scores = Path(out) / "scores"
    if _stored_rows(scores):
        return f"the rows scored before are kept in {scores}: run the same command again to resume"
    return "nothing was stored yet: run the same command again to start"


def export_html(notebook: str | Path, target: str | Path) -> Path:
    """Export an executed notebook to one self-contained HTML page: no input cells, figures as base64 ``data:``
    URIs, no MathJax or require.js fetched from a CDN. Raises ``ValueError`` if the page would still load a
    script, style sheet or image from the network."""
    import re

    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells = [c for c in nb.cells if "remove-cell" not in c.get("metadata", {}).get("tags", [])]
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, embed_images=True)
    exporter.mathjax_url = ""
    exporter.require_js_url = ""
    html, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": "Audit report"}})
    html = re.sub(r"<script[^>]*\bsrc=[\"'](?:https?://[^\"']*)?[\"'][^>]*>\s*</script>", "", html)
    # the template's optional loaders (mermaid diagrams) import modules from a CDN: this page has none to draw
    html = re.sub(r"<script\b[^>]*>(?:(?!</script>).)*?https?://(?:(?!</script>).)*?</script>", "", html, flags=re.S)
    remote = re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)=[\"']https?://[^\"']+", html)
    remote += re.findall(r"<script\b[^>]*>(?:(?!</script>).)*?https?://", html, flags=re.S)
    if remote:
        raise ValueError(f"the report would load {len(remote)} resource(s) from the network, e.g. {remote[0][:120]}")
    return write_atomic(target, html)
