"""Writing what the commands produce: whole or not at all, and never a control character on a screen or a page.

Every report, table and summary the commands write (``allocbias audit``, ``allocbias ll144``, the score store's
provenance) goes through :func:`write_atomic`: the bytes are written to a temporary file beside the target, flushed
to disk and renamed into place (``os.replace`` is atomic on POSIX and Windows), so a reader sees the old file or
the new one, never half of one. When the disk is full, or the folder is not writable, :class:`OutputError` names
the file that could not be written and the temporary file is removed; what was already in place stays.

:func:`printable` shows a label read from a user's file with its control characters escaped, so an escape sequence
in a category name cannot clear a terminal or hide text in a report.

>>> printable("Female\\x1b[2J")
'Female\\\\x1b[2J'

Pure standard library; no other module of the library is imported (a helper every layer may use).
"""

from __future__ import annotations

import errno
import os
import tempfile
import unicodedata
from pathlib import Path

__all__ = ["PARTIAL", "OutputError", "fsync_dir", "printable", "temporary_prefix", "write_atomic"]

#: What every temporary file written by :func:`write_atomic` holds in its name: a run killed between the write and
#: the rename leaves ``.<name>.partial-*`` behind, which the next run of a command can recognise and remove.
PARTIAL = ".partial-"


class OutputError(OSError):
    """A file could not be written; the message names it and says what was kept."""


def temporary_prefix(path: str | os.PathLike) -> str:
    """The prefix of the temporary files :func:`write_atomic` writes for ``path``.

    >>> temporary_prefix("out/report.html")
    '.report.html.partial-'
    """
    return f".{Path(path).name}{PARTIAL}"


def fsync_dir(path: str | os.PathLike) -> None:
    """Flush a folder's entries to disk (after a rename), where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # Windows cannot open a folder; its rename is durable enough
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno == errno.EDQUOT:
        return "the disk quota is used up"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "the folder is not writable"
    return exc.strerror or str(exc)


def write_atomic(path: str | os.PathLike, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` whole or not at all; return the path.

    The data go to ``.<name>.partial-<random>`` in the same folder, are flushed and fsynced, then renamed over
    ``path``. On any ``OSError`` (a full disk above all) the temporary file is removed, an existing ``path`` is
    left as it was, and :class:`OutputError` says which file could not be written and why.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(folder / "a.txt", "one").read_text()
    'one'
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt']
    """
    target = Path(path)
    raw = data.encode(encoding) if isinstance(data, str) else bytes(data)
    tmp_name: str | None = None
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=temporary_prefix(target), dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
        tmp_name = None
    except OSError as exc:
        kept = "the earlier file is kept unchanged" if target.exists() else "nothing was written in its place"
        raise OutputError(exc.errno, f"could not write {target}: {_why(exc)}; {kept}") from exc
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
    fsync_dir(target.parent)
    return target


def printable(text: object) -> str:
    """``text`` as a string with every control character (C0, C1, DEL; not tab) written as a Python escape.

    >>> printable("a\\tb\\x07c\\u009b")
    'a\\tb\\\\x07c\\\\x9b'
    """
    out = []
    for ch in str(text):
        if ch != "\t" and unicodedata.category(ch) == "Cc":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)
