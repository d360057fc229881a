"""The audit of one system: score the study's prompts into a folder, then write a self-contained report.

:func:`run_audit` is what ``allocbias audit`` runs (:mod:`allocbias.cli`). For the system named by ``--model``
(a registry name, a local model folder, a ``.gguf`` file, or a served model:
:func:`allocbias.user_models.resolve_system`)
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
refused (:class:`AuditError`), so two models' rows never mix.

The report's tables come from pure functions over the tidy score table (:func:`screening_table`,
:func:`label_mass_table`, :func:`selection_intervals`, :func:`metric_intervals`, :func:`ll144_table`,
:func:`system_comparison`); the formulas are on the book page "Definitions and notation".
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import data as D
from . import catalog, items, runs, systems
from .tables import allocation_table, quality_separation, selection_table
from .store import run_resumable
from .systems import System
from .user_models import ServedSystem, UserSystem, resolve_system, system_label

__all__ = [
    "MANIFEST",
    "PARTS",
    "AuditError",
    "ALL_JOBS",
    "AuditResult",
    "export_html",
    "label_mass_table",
    "ll144_table",
    "metric_intervals",
    "report_notebook",
    "run_audit",
    "screening_table",
    "selection_intervals",
    "system_comparison",
]

#: Parts of an audit: ``pointwise`` is always run; the others on request.
PARTS: tuple[str, ...] = ("pointwise", "pairwise", "hiring_bloomberg")
#: The file that says which system an audit folder holds.
MANIFEST = "audit.json"
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
def _check_options(jobs: Sequence[str], names_per_group: int, k: Sequence[int], rounds: int, parts: Sequence[str],
                   pairwise_rounds: int, orderings: int, n_boot: int) -> None:
    if not jobs:
        raise AuditError(f"the job list is empty: name at least one job with --jobs (known: {' '.join(D.JOBS)})")
    unknown = [j for j in jobs if j not in D.JOBS]
    if unknown:
        raise AuditError(f"unknown job(s) {unknown}: choose from {' '.join(D.JOBS)}")
    for name, value, low in (("--names-per-group", names_per_group, 1), ("--rounds", rounds, 1),
                             ("--pairwise-rounds", pairwise_rounds, 1), ("--orderings", orderings, 1),
                             ("--n-boot", n_boot, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise AuditError(f"{name} must be an integer >= {low}, got {value!r}")
    if not k or any(not 1 <= int(x) < len(D.GROUPS) for x in k):
        raise AuditError(f"--k must list quotas between 1 and {len(D.GROUPS) - 1} (a pool holds one candidate per "
                         f"group, {len(D.GROUPS)} in all), got {list(k)}")
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise AuditError(f"unknown part(s) {bad}: choose from {' '.join(PARTS)}")


def _identity(system: System, base_url: str | None) -> dict[str, Any]:
    ident: dict[str, Any] = {"system": system.id, "model_key": system.model_key}
    if isinstance(system, UserSystem):
        ident["path"] = str(Path(system.model).expanduser().resolve())
        ident["fingerprint"] = system.fingerprint
    if isinstance(system, ServedSystem):
        ident["base_url"] = base_url
    return ident


def _claim_folder(out: Path, identity: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    """Refuse a folder that holds another system's audit; record this one's identity and options."""
    if out.exists() and not out.is_dir():
        raise AuditError(f"--out {out} is a file: give a folder for the audit")
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
    elif out.is_dir() and any(out.iterdir()):
        raise AuditError(f"{out} is not empty and holds no audit ({MANIFEST}): choose an empty or new --out folder")
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"identity": dict(identity), "options": dict(options)}, indent=2, sort_keys=True) + "\n"
    manifest.write_text(text, encoding="utf-8")


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


def _preflight(engine: Any, messages: list[dict[str, str]]) -> None:
    """Ask a served model one real prompt before the audit starts: the server answers, knows the model and returns
    log-probabilities (a pointwise score needs them). Problems become an :class:`AuditError`."""
    from .prompts import RESUME_LABELS
    from .serving import NoLogprobsError, ServingError

    try:
        engine.pointwise([messages], RESUME_LABELS, progress=False)
    except NoLogprobsError:
        raise AuditError(
            f"the server at {engine.base_url} returns no logprobs for {engine.model!r}: a pointwise score needs "
            "them; serve the model with vLLM or llama.cpp's llama-server, which return top_logprobs"
        ) from None
    except ServingError as exc:
        raise AuditError(
            f"no usable answer from the server at {engine.base_url} ({str(exc).splitlines()[0][:160]}): start it "
            "or fix --base-url, then run the same command again"
        ) from None


def _score_part(part: str, system: System, root: Path, engine: Any, served: Any, candidates: pd.DataFrame,
                pools: pd.DataFrame | None, attempts: pd.DataFrame | None, command: str,
                progress: bool) -> pd.DataFrame:
    batch = _BATCH[part]
    if served is not None:
        if part == "pointwise":
            return runs.score_resume_pointwise_served(served, candidates, wording=system.wording, root=root,
                                                       batch_size=batch, command=command, progress=progress)
        if part == "pairwise":
            return runs.score_resume_pairwise_served(served, pools, root=root, batch_size=batch, command=command,
                                                      progress=progress)
        return runs.score_hiring_bloomberg(system, attempts, root=root, engine=served, batch_size=batch,
                                            command=command, progress=progress)
    if part == "pointwise":
        return runs.score_resume_pointwise(system, candidates, root=root, engine=engine, batch_size=batch,
                                            command=command, progress=progress)
    if part == "pairwise":
        return runs.score_resume_pairwise(system, pools, root=root, engine=engine, batch_size=batch,
                                           command=command, progress=progress)
    return runs.score_hiring_bloomberg(system, attempts, root=root, engine=engine, batch_size=batch,
                                        command=command, progress=progress)


def _record_served(served: Any, system: System, part: str, root: Path) -> None:
    """Write the served engine's description into the provenance of the table it fills."""
    if part == "hiring_bloomberg":
        store = catalog.store_for(system, "hiring_bloomberg", root)
    else:
        store = catalog.served_store(served, _TASK[part], system.wording if part == "pointwise" else "paper", root)
    store.record_model({k: v for k, v in served.describe(query_server=False).items() if k != "reported_model"})


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
    rescore: bool = False,
    report: bool = True,
    progress: bool = True,
    command: str | None = None,
    engine: Any = None,
) -> AuditResult:
    """Score one system on the study's prompts into ``out`` and write ``out/report.html``.

    ``model`` is a registry name, a model folder or a ``.gguf`` file; with ``base_url`` the name of a model
    behind an OpenAI-compatible server. ``parts`` adds ``pairwise`` (``pairwise_rounds`` pools per job, every
    pair in both orders) and ``hiring_bloomberg`` (``orderings`` per job and race) to ``pointwise``. ``k``,
    ``rounds`` and ``seed`` drive the selection simulation, ``n_boot`` the bootstrap intervals over names.
    ``rescore`` scores a study system again into ``out`` instead of reading the committed tables. ``engine``
    replaces the local engine (a stand-in with ``pointwise`` and ``generate``; tests).

    Raises :class:`AuditError` (one sentence: the problem and what to do) for bad input; rows already stored
    stay stored whatever stops the run.
    """
    jobs, k, parts = list(jobs), [int(x) for x in k], list(dict.fromkeys(["pointwise", *parts]))
    _check_options(jobs, names_per_group, k, rounds, parts, pairwise_rounds, orderings, n_boot)
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
    command = command or f"allocbias audit --model {shlex.quote(model)} --out {shlex.quote(str(out))}"
    options = {"jobs": jobs, "names_per_group": names_per_group, "k": k, "rounds": rounds, "seed": seed,
               "parts": parts, "pairwise_rounds": pairwise_rounds, "orderings": orderings, "n_boot": n_boot,
               "precision": system.precision, "wording": wording, "device": device, "rescore": rescore,
               "command": command}
    _claim_folder(out, _identity(system, base_url), options)
    root = out / "scores"
    study_system = type(system) is System
    result = AuditResult(out=out, system=system.id)

    served = None
    if base_url is not None:
        from .serving import OpenAIEngine

        try:
            served = OpenAIEngine(base_url, system.model, prefill=prefill, max_retries=2, backoff_s=0.5)
        except ValueError as exc:
            raise AuditError(f"{exc}") from None
    elif engine is None:
        engine = runs.LazyEngine(system, batch_size=engine_batch_size, device=device)

    candidates = D.candidate_table(jobs, names_per_group=names_per_group, seed=seed)
    pools = items.pairwise_rounds(candidates, pairwise_rounds, seed) if "pairwise" in parts else None
    attempts = items.hiring_bloomberg_items(orderings, seed, jobs=jobs) if "hiring_bloomberg" in parts else None
    if served is not None:
        first = items.resume_pointwise_items(candidates.head(1), wording)["messages"].iloc[0]
        _preflight(served, first)

    tables: dict[str, pd.DataFrame] = {}
    for part in parts:
        start = time.perf_counter()
        ids = _items(part, system, candidates, pools, attempts)
        part_root = root
        if study_system and not rescore:
            committed = catalog.store_for(system, _TASK[part], catalog.scores_dir())
            if ids <= committed.done_ids():
                part_root = catalog.scores_dir()  # complete: read, never write, the committed table
            else:
                _copy_committed(system, _TASK[part], root, ids, command)
        if served is not None:
            _record_served(served, system, part, root)
        before = _stored(system, part, part_root, served)
        if progress:
            print(f"{part}: {len(ids)} prompts, {len(ids & before)} already scored"
                  + (" (committed tables)" if part_root != root else ""), flush=True)
        try:
            tables[part] = _score_part(part, system, part_root, engine, served, candidates, pools, attempts,
                                       command, progress)
        except Exception as exc:  # the engine's failures become one line; the stored rows stay
            from .serving import LabelMassError, NoLogprobsError, ServingError

            if isinstance(exc, (NoLogprobsError, LabelMassError, ServingError)):
                raise AuditError(f"{part}: {str(exc).splitlines()[0][:300]}; the rows scored so far are kept in "
                                 f"{root}: fix the server and run the same command again") from None
            raise
        result.scored_rows[part] = len(ids - before)
        result.seconds[part] = time.perf_counter() - start

    result.tables = _write_tables(out, system, tables, candidates, pools, attempts)
    if report:
        start = time.perf_counter()
        result.report = report_notebook(out)
        result.seconds["report"] = time.perf_counter() - start
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
        path = folder / f"{name}.csv"
        frame.to_csv(path, index=False)
        written[name] = path

    scores = tables["pointwise"]
    put("pointwise_scores", scores.assign(**label)[[*label, *scores.columns]])
    if "pairwise" in tables:
        put("pairwise_answers", tables["pairwise"].assign(**label)[[*label, *tables["pairwise"].columns]])
        put("pairwise_pools", pools)
    if "hiring_bloomberg" in tables:
        from .genderbench import detect_winners

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


def _require(frame: Any, columns: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what} must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {missing}")


def screening_table(scores: pd.DataFrame, *, by: Sequence[str] = ("system",)) -> pd.DataFrame:
    """Does the system screen at all: :func:`allocbias.tables.quality_separation` per job and over all jobs
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
    by = list(by)
    _require(scores, [*by, "label_mass", "score"], "scores")
    grouped = scores.groupby(by, sort=False) if by else [((), scores)]
    rows = []
    for key, cell in grouped:
        key = key if isinstance(key, tuple) else (key,)
        mass = cell["label_mass"].to_numpy(dtype=float)
        rows.append([*key, float(mass.mean()), float(mass.min()), float(np.median(mass)),
                     float((mass < 0.5).mean()), float((cell["score"].to_numpy(dtype=float) > 0.5).mean()), len(cell)])
    return pd.DataFrame(rows, columns=[*by, "mean", "min", "median", "share_below_half", "share_score_above_half",
                                       "n"])


def _with_all_jobs(frame: pd.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """Append the mean over jobs (``job = "all jobs"``) of ``values`` per ``keys``."""
    mean = frame.groupby(list(keys), sort=False, as_index=False)[list(values)].mean().assign(job=ALL_JOBS)
    return pd.concat([frame, mean[frame.columns.intersection(mean.columns)]], ignore_index=True)


def _selection_point(scores: pd.DataFrame, k: Sequence[int], rounds: int, seed: int, reference: str) -> pd.DataFrame:
    rates = selection_table(scores, list(k), rounds, seed, by=())[["job", "k", "group", "phi", "psi"]]
    gaps = allocation_table(scores, list(k), rounds, seed, by=(), reference=reference)[
        ["job", "k", "group", "dDP", "dEO"]]
    table = rates.merge(gaps, on=["job", "k", "group"], how="left")
    return _with_all_jobs(table, ["k", "group"], ["phi", "psi", "dDP", "dEO"])


def selection_intervals(
    scores: pd.DataFrame, k: Sequence[int], rounds: int, seed: int, n_boot: int, *,
    reference: str = D.REFERENCE_GROUP, confidence: float = 0.95,
) -> pd.DataFrame:
    """Selection rates and gaps of top-``k`` selection with bootstrap intervals over names.

    Per job and over all jobs (their mean), per ``k`` and group: ``phi`` (selection rate), ``psi`` (selection rate
    among qualified candidates), ``dDP = phi(A) - phi(reference)``, ``dEO = psi(A) - psi(reference)``
    (:func:`allocbias.tables.selection_table`, :func:`allocbias.tables.allocation_table`: ``rounds`` pools of one
    candidate per group, shared ties), as a long table ``job, k, group, metric, estimate, ci_low, ci_high, n_boot``;
    the intervals come from :func:`allocbias.intervals.cluster_bootstrap` (names redrawn within job x group).
    """
    from .intervals import cluster_bootstrap, percentile_intervals

    _require(scores, ["job", "group", "full_name", "qualified", "score"], "scores")
    point = _selection_point(scores, k, rounds, seed, reference)
    reps = cluster_bootstrap(scores, lambda f: _selection_point(f, k, rounds, seed, reference), n_boot, seed)
    out = percentile_intervals(point, reps, ["job", "k", "group"], ["phi", "psi", "dDP", "dEO"], confidence)
    return out.dropna(subset=["estimate"]).reset_index(drop=True)


def _metric_point(scores: pd.DataFrame, reference: str) -> pd.DataFrame:
    from .metrics import bias_table

    table = bias_table(scores, "score", "group", reference, by=["job"])[["job", "group", "rabbi", "avg_gap", "jsd",
                                                                           "emd"]]
    return _with_all_jobs(table, ["group"], ["rabbi", "avg_gap", "jsd", "emd"])


def metric_intervals(
    scores: pd.DataFrame, n_boot: int, seed: int, *, reference: str = D.REFERENCE_GROUP, confidence: float = 0.95,
) -> pd.DataFrame:
    """RABBI, the average gap, JSD and EMD of every group against ``reference`` (:func:`allocbias.metrics.bias_table`),
    per job and averaged over jobs, with bootstrap intervals over names: long table ``job, group, metric,
    estimate, ci_low, ci_high, n_boot``."""
    from .intervals import cluster_bootstrap, percentile_intervals

    _require(scores, ["job", "group", "full_name", "score"], "scores")
    point = _metric_point(scores, reference)
    reps = cluster_bootstrap(scores, lambda f: _metric_point(f, reference), n_boot, seed)
    return percentile_intervals(point, reps, ["job", "group"], ["rabbi", "avg_gap", "jsd", "emd"], confidence)


def ll144_table(scores: pd.DataFrame, *, score: str = "score", group: str = "group") -> pd.DataFrame:
    """The Local Law 144 table of a score: per group, the ``scoring_rate`` (share scored above the median of
    all candidates), the ``impact_ratio`` (its ratio to the highest group's rate, ``DI_median``), the
    ``four_fifths_flag`` (impact ratio below 0.8), and the distribution-wide ``auc_di`` and ``p_fair`` of the DI
    curve (:func:`allocbias.ll144.summary`, flat prior). Pooled over the rows given (e.g. all audited jobs).

    >>> df = pd.DataFrame({"group": list("AAAABBBB"), "score": [1, 2, 3, 4, 3, 4, 5, 6]})
    >>> ll144_table(df)[["group", "scoring_rate", "impact_ratio", "four_fifths_flag"]].to_dict("records")[0]
    {'group': 'A', 'scoring_rate': 0.25, 'impact_ratio': 0.3333333333333333, 'four_fifths_flag': True}
    """
    from . import ll144

    _require(scores, [score, group], "scores")
    values, groups = scores[score].to_numpy(dtype=float), scores[group].to_numpy()
    median = float(ll144.pooled_quantiles(values, [0.5])[0])
    summ = ll144.summary(values, groups)
    out = pd.DataFrame({
        "n": summ["n"],
        "scoring_rate": ll144.selection_rates(values, groups, median),
        "impact_ratio": summ["di_median"],
        "four_fifths_flag": ll144.four_fifths_flags(values, groups, median),
        "auc_di": summ["auc_di"],
        "p_fair": summ["p_fair"],
    })
    out.index.name = group
    return out.reset_index()


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
        law = ll144_table(cell)
        rows.append({"system": name, "p_better_high_low": float(sep["p_better"].iloc[0]),
                     "mean_label_mass": float(cell["label_mass"].mean()),
                     "rms_dDP": float(np.sqrt(np.mean(gaps["dDP"] ** 2))),
                     "max_abs_dDP": float(gaps["dDP"].abs().max()),
                     "mean_abs_rabbi": float(metrics["rabbi"].abs().mean()),
                     "min_impact_ratio": float(law["impact_ratio"].min()), "min_auc_di": float(law["auc_di"].min())})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------------------
# the report
# ----------------------------------------------------------------------------------------------------------------
def _report_source() -> Path:
    return Path(__file__).with_name("resources") / "audit_report.ipynb"


def report_notebook(out: str | Path, *, timeout: int | None = 1800) -> Path:
    """Execute the report notebook on the audit folder ``out`` (papermill) and export ``out/report.html``."""
    from .book import NotebookExecutionError, execute_notebook

    out = Path(out).resolve()
    executed = out / "report.ipynb"
    try:
        execute_notebook(_report_source(), executed, {"audit_dir": str(out)}, cwd=out, timeout=timeout)
    except NotebookExecutionError as exc:
        raise AuditError(f"the report failed: {str(exc).splitlines()[0]} (see {executed})") from None
    return export_html(executed, out / "report.html")


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
    target = Path(target)
    target.write_text(html, encoding="utf-8")
    return target
