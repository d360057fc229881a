"""Committed data tables that vouch for themselves: one loader that checks each file's SHA-256 digest against the
one recorded in its data card before anything reads it.

Every table committed under ``data/`` (outside ``data/scores/``, whose score tables carry their own digests in
``provenance.json``) or shipped with the package in ``lib/allocbias/resources/`` has a data card: ``<stem>.md`` beside
it (``names.csv`` → ``names.md``) or else the folder's ``README.md``. The card ends with a section ``## Digests``: a
Markdown table with one row per file,

    | file | sha256 | bytes |
    | --- | --- | --- |
    | `rankings.csv` | `3f2a…` | 1234567 |

:func:`read_bytes` reads a file once, hashes those bytes and returns them only when they match the card;
:func:`read_csv` parses the same bytes with pandas (so what is checked is what is read). A mismatch raises
:class:`DigestError` naming the file, both digests and how to restore it. A regeneration script calls
:func:`record` after it writes a table, so the card always describes the committed bytes.

>>> from allocbias.audited.locations import shipped
>>> path = shipped("names.csv")
>>> read_bytes(path)[:10]
b'kind,name,'
"""
from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import pandas as pd

from .locations import data_dir, has_data_dir, resources_dir


__all__ = ["DigestError", "card_for", "recorded_digests", "sha256_bytes", "file_sha256", "read_bytes", "read_csv", "verify",
           "record", "write_or_check", "source_files", "digest_section", "committed_tables", "check_all"]

DIGEST_HEADING = "Digests"
_ROW = re.compile(r"^\|\s*`?(?P<file>[^`|]+?)`?\s*\|\s*`?(?P<sha>[0-9a-f]{64})`?\s*\|\s*(?P<bytes>\d+)\s*\|\s*$")
#: File endings of committed data tables (data cards themselves are Markdown and are not tables).
TABLE_SUFFIXES = (".csv", ".parquet", ".tsv", ".json", ".yaml")


class DigestError(ValueError):
    """A committed data file does not match the digest its data card records, or has no recorded digest."""


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``.

    >>> sha256_bytes(b"")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks (a large file is never held in memory at once):
    the fingerprint of a ``.gguf`` model or of an audited input table.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "table.csv"
    >>> _ = path.write_bytes(b"a,b")
    >>> file_sha256(path) == sha256_bytes(b"a,b")
    True
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def card_for(path: str | Path) -> Path:
    """The data card of a data file: ``<stem>.md`` beside it if present, else ``README.md`` in its folder.

    >>> from allocbias.audited.locations import data_dir, shipped
    >>> card_for(shipped("names.csv")).name, card_for(data_dir() / "bloomberg" / "rankings.csv").name
    ('names.md', 'README.md')
    """
    path = Path(path)
    own = path.with_suffix(".md")
    return own if own.is_file() else path.parent / "README.md"


def recorded_digests(card: str | Path) -> dict[str, tuple[str, int]]:
    """``{file name: (sha256, bytes)}`` from the ``## Digests`` section of a data card ({} if it has none)."""
    card = Path(card)
    if not card.is_file():
        return {}
    lines = card.read_text(encoding="utf-8").splitlines()
    out: dict[str, tuple[str, int]] = {}
    inside = False
    for line in lines:
        if line.startswith("#"):
            inside = line.lstrip("#").strip() == DIGEST_HEADING
            continue
        match = _ROW.match(line.strip()) if inside else None
        if match:
            out[match["file"].strip()] = (match["sha"], int(match["bytes"]))
    return out


def _restore_hint(path: Path) -> str:
    return (f"restore the committed file (git checkout -- {path.name} in {path.parent}) or regenerate it with the "
            f"script its data card names; a deliberate change must record its new digest "
            f"(python -m allocbias.audited.datasets record {path})")


def read_bytes(path: str | Path, required: bool = True) -> bytes:
    """The bytes of a committed data file, after checking them against the digest its data card records.

    Raises :class:`DigestError` (a ``ValueError``) naming the file, the card, and both digests when they differ,
    and naming the card when it records no digest for the file; ``FileNotFoundError`` for a missing file.
    ``required=False`` is for a table the *user* names (a loader's explicit ``path=``): it is still refused when
    a card beside it records another digest, but read (and left to the loader's own column checks) when no card
    records one.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file not found: {path}")
    data = path.read_bytes()
    if required or path.name in recorded_digests(card_for(path)):
        verify(path, data)
    return data


def verify(path: str | Path, data: bytes | None = None) -> str:
    """Check ``path`` (or the given bytes read from it) against its card; return the digest.

    >>> from allocbias.audited.locations import shipped
    >>> len(verify(shipped("names.csv")))
    64
    """
    path = Path(path)
    data = path.read_bytes() if data is None else data
    card = card_for(path)
    recorded = recorded_digests(card).get(path.name)
    if recorded is None:
        raise DigestError(
            f"{path}: its data card {card} records no digest for {path.name!r} (section '## {DIGEST_HEADING}'); "
            f"an unrecorded table is not read — record one with python -m allocbias.audited.datasets record {path}")
    actual = sha256_bytes(data)
    if actual != recorded[0]:
        raise DigestError(
            f"{path} does not match its data card {card.name}: recorded sha256 {recorded[0]} ({recorded[1]} bytes), "
            f"file sha256 {actual} ({len(data)} bytes); {_restore_hint(path)}")
    return actual


def read_csv(path: str | Path, required: bool = True, **kwargs) -> pd.DataFrame:
    """:func:`pandas.read_csv` of a committed table whose bytes were first checked by :func:`read_bytes`
    (``required`` as there).

    >>> from allocbias.audited.locations import shipped
    >>> read_csv(shipped("names.csv")).columns[:2].tolist()
    ['kind', 'name']
    """
    return pd.read_csv(io.BytesIO(read_bytes(path, required)), **kwargs)


def record(path: str | Path) -> str:
    """Write (or update) the digest row of ``path`` in its data card; return the digest.

    The section ``## Digests`` is created at the end of the card if absent. Rows stay sorted by file name.
    """
    path = Path(path)
    data = path.read_bytes()
    digest = sha256_bytes(data)
    card = card_for(path)
    if not card.is_file():
        raise DigestError(f"{path}: no data card ({card}) to record its digest in; write the card first")
    rows = recorded_digests(card)
    rows[path.name] = (digest, len(data))
    section = digest_section(rows).splitlines()
    lines = card.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("#") and line.lstrip("#").strip() == DIGEST_HEADING), None)
    if start is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", *section]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
        lines[start:end] = section + ([""] if end < len(lines) else [])
    card.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return digest


def digest_section(rows: dict[str, tuple[str, int] | bytes]) -> str:
    """The ``## Digests`` section of a data card for ``{file name: bytes or (sha256, size)}``, rows sorted.

    >>> print(digest_section({"a.csv": b""}).splitlines()[-1])
    | `a.csv` | `e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855` | 0 |
    """
    table = ["| file | sha256 | bytes |", "| --- | --- | --- |"]
    for name in sorted(rows):
        value = rows[name]
        sha, size = (sha256_bytes(value), len(value)) if isinstance(value, bytes) else value
        table.append(f"| `{name}` | `{sha}` | {size} |")
    return "\n".join([f"## {DIGEST_HEADING}", "",
                      "The SHA-256 of each file as committed; `allocbias.audited.datasets` refuses to read a file that differs.",
                      "", *table])


def write_or_check(tables: dict[Path, bytes], *, check: bool) -> int:
    """What a regeneration script does with the tables it derived: with ``check``, compare each with the file on
    disk byte for byte and print ``identical``/``DIFFERS`` (exit status 0 only if all are identical); otherwise
    write each and record its digest in its data card (:func:`record`). Returns the script's exit status.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "README.md").write_text("# card\\n")
    >>> write_or_check({folder / "t.csv": b"a\\n1\\n"}, check=False)  # doctest: +ELLIPSIS
    wrote /...t.csv (4 bytes; digest recorded in its data card)
    0
    >>> write_or_check({folder / "t.csv": b"a\\n2\\n"}, check=True)  # doctest: +ELLIPSIS
    /...t.csv: DIFFERS
    1
    >>> verify(folder / "t.csv") == sha256_bytes(b"a\\n1\\n")
    True
    """
    if check:
        same = True
        for path, data in tables.items():
            ok = Path(path).is_file() and Path(path).read_bytes() == data
            print(f"{path}: {'identical' if ok else 'DIFFERS'}")
            same &= ok
        return 0 if same else 1
    for path, data in tables.items():
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        record(path)
        print(f"wrote {path} ({len(data)} bytes; digest recorded in its data card)")
    return 0


def source_files(source: str | Path, commit: str, prefix: str,
                 suffix: str = ".json") -> tuple[list[tuple[str, bytes]], str]:
    """``(path, bytes)`` of every file ending in ``suffix`` below ``prefix`` of a fetched copy of a public repository,
    and the commit read — for the regeneration scripts. ``source`` is a clone or a bare git directory (read at
    ``commit`` with one ``git cat-file --batch``, in ``git ls-tree`` order) or a plain folder (sorted paths; the
    commit is then ``""``). ``ValueError`` names a source that is neither.
    """
    import subprocess

    source = Path(source)
    git_dir = source / ".git" if (source / ".git").exists() else source
    if (git_dir / "HEAD").exists() and (git_dir / "objects").exists():
        git = ["git", f"--git-dir={git_dir}"]
        sha = subprocess.run([*git, "rev-parse", commit], check=True, capture_output=True, text=True).stdout.strip()
        listing = subprocess.run([*git, "ls-tree", "-r", "-z", sha, "--", prefix], check=True,
                                 capture_output=True).stdout.decode().split("\0")
        blobs = [(line.split("\t", 1)[1], line.split()[2]) for line in listing if line and line.endswith(suffix)]
        proc = subprocess.run([*git, "cat-file", "--batch"], check=True, capture_output=True,
                              input="".join(f"{b}\n" for _, b in blobs).encode())
        out, pos, files = proc.stdout, 0, []
        for path, blob in blobs:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            if header[0].decode() != blob:
                raise ValueError(f"git cat-file returned {header!r} for {path} in {git_dir}")
            size = int(header[2])
            files.append((path, out[end + 1: end + 1 + size]))
            pos = end + 1 + size + 1
        return files, sha
    base = source / prefix
    if not base.is_dir():
        raise ValueError(f"{source} is neither a git repository nor a folder with {prefix}")
    return [(prefix + f.relative_to(base).as_posix(), f.read_bytes()) for f in sorted(base.rglob(f"*{suffix}"))], ""


def committed_tables(root: str | Path | None = None) -> list[Path]:
    """Every data table under ``root`` outside ``scores/``; by default those shipped with the package
    (:func:`~allocbias.audited.locations.resources_dir`: names, jobs, the ``allocbias ll144`` examples) and, in a
    checkout, those of the book's :func:`~allocbias.audited.locations.data_dir`.

    >>> sorted(p.name for p in committed_tables() if p.parent.name == "ll144_example")
    ['applicants.csv', 'scores.csv']
    """
    if root is None:
        roots = [resources_dir(), *([data_dir()] if has_data_dir() else [])]
        return [p for r in roots for p in committed_tables(r)]
    root = Path(root)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in TABLE_SUFFIXES
                  and "scores" not in p.relative_to(root).parts[:1])


def check_all(root: str | Path | None = None) -> list[str]:
    """One line per committed table that fails :func:`verify` (empty when all match)."""
    problems = []
    for path in committed_tables(root):
        try:
            verify(path)
        except DigestError as exc:
            problems.append(str(exc))
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m allocbias.audited.datasets check [ROOT]`` or ``record PATH...``."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("check", "record"):
        print("usage: python -m allocbias.audited.datasets check [DATA_DIR] | record PATH [PATH ...]", file=sys.stderr)
        return 2
    if args[0] == "record":
        for p in args[1:]:
            print(f"{p}: sha256 {record(p)}")
        return 0
    problems = check_all(args[1] if len(args) > 1 else None)
    for line in problems:
        print(line, file=sys.stderr)
    n = len(committed_tables(args[1] if len(args) > 1 else None))
    print(f"{n - len(problems)} of {n} committed data tables match their data cards")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
