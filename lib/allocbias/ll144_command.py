"""``allocbias ll144 DATA --out FOLDER``: a Local Law 144 bias audit of an employer's own data, as files.

:func:`read_data` reads DATA (CSV, Parquet or Excel) with its rows numbered as a spreadsheet shows them (the
header is row 1, the first data row is row 2), so that every error names the file, the column and the row; a CSV
file's encoding and separator and an Excel file's sheet are detected or named in the error with the option that
sets them (:func:`load_data`), and a header that names a column twice is refused. :func:`check_filing` checks the
published summary's fields (ISO dates, no blank text, the reason for test data); :func:`allocbias.ll144.bias_audit`
computes the audit; :func:`write_audit` writes

* ``published_summary.md`` and ``published_summary.html``: what the DCWP rules require the published summary
  to show (the filing fields given as options, the applicants, those of unknown category, every category's rate
  and impact ratio, the excluded categories with their justification), and nothing else;
* ``summary.md`` and ``report.html``, the full technical report (every string that comes from the input is
  escaped: control characters as Python escapes everywhere, HTML through Jinja2's autoescape, Markdown by
  backslash-escaping its punctuation after HTML-escaping);
* ``tables/*.csv`` (rates and ratios as fractions; a text cell that a spreadsheet would read as a formula,
  starting with ``=``, ``+``, ``-`` or ``@``, is prefixed with ``'``);
* ``ll144.json`` (everything, machine-readable, with the input's SHA-256, the options, the tool's version and
  the list of files written with the SHA-256 of each).

Counts are whole numbers in the CSV files; every interval or bound column ends in ``_low``/``_high``
(:data:`OUTPUT_NAMES`); an excluded group's ratio is blank ("not compared" in the reports). The folder is
written under a temporary name beside ``--out`` (each file whole, :func:`allocbias.outputs.write_atomic`) and
renamed when complete: bad input, a full disk, Ctrl-C or any failure leaves ``--out`` as it was (absent, or the
previous audit), and what a killed run leaves is removed by the next (:func:`clean_leftovers`). Only files an
earlier run recorded writing, and not edited since, are replaced, and a published summary that was ready to
publish only when told to (it is then kept under its audit date): anything else is refused, naming the files.
"""

from __future__ import annotations

import codecs
import csv
import datetime
import errno
import functools
import html
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .measures import ll144
from .audited.datasets import file_sha256, sha256_bytes
from .outputs import PARTIAL, OutputError, fsync_dir, printable, temporary_prefix, write_atomic

__all__ = ["READERS", "DataFile", "Interrupted", "LL144CommandError", "Written", "check_filing", "clean_leftovers",
           "csv_encoding", "csv_separator", "filing_missing", "load_data", "output_table", "parse_date", "read_data",
           "render_published_html", "render_published_summary", "render_summary", "run_ll144", "tool_version",
           "write_audit"]

#: File endings DATA may have, and how each is read.
READERS = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "excel", ".xlsm": "excel"}
#: pandas' engine for Excel files (python-calamine, in the ``data`` extra).
EXCEL_ENGINE = "calamine"
#: The first data row's number (the header is row 1, as a spreadsheet shows it).
FIRST_ROW = 2
FOUR_FIFTHS_NOTE = ("The 0.8 line is the four-fifths rule, a screening rule: an impact ratio below it is a reason to "
                    "look closer, one above it is no proof of fairness, and neither is a verdict of compliance.")


class LL144CommandError(ValueError):
    """Bad input to ``allocbias ll144``: one line naming the file, the column and the row."""


@dataclass(frozen=True)
class DataFile:
    """DATA as read: the frame (indexed by spreadsheet row number) and how it was read."""

    frame: pd.DataFrame
    kind: str  # "csv", "parquet" or "excel"
    encoding: str | None = None  # CSV: the text encoding used
    sep: str | None = None  # CSV: the separator used
    sheet: str | int | None = None  # Excel: the sheet read
    notes: tuple[str, ...] = ()  # what was detected that the user did not say (printed, recorded in ll144.json)
    hint: str | None = None  # what an error about a missing column adds (the other sheets, the separator used)


#: The separators a CSV file may use, in the order a tie between them is decided.
SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
#: Byte-order marks and the encoding each one names (UTF-32's before UTF-16's: they start alike).
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: What reading an Excel file needs, and how to install it.
EXCEL_EXTRA = "reading an Excel file needs the data extra: pip install 'allocbias[data]'"


def _decodes(path: Path, encoding: str) -> bool:
    """Whether the whole file decodes as ``encoding`` (read in 1 MiB blocks, never held in memory at once)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                decoder.decode(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def csv_encoding(path: str | Path, encoding: str | None = None) -> tuple[str, str | None]:
    """The encoding to read a CSV file with, and a note when it was guessed rather than known.

    ``encoding`` (``--encoding``) wins; otherwise a byte-order mark names it (UTF-8, UTF-16, UTF-32), then UTF-8 if
    the whole file decodes as UTF-8, then Windows-1252 (what Excel on Windows writes; every Latin-1 letter is the
    same byte in it) or, for the five bytes it leaves undefined, Latin-1, with a note saying so. A file with NUL
    bytes and no byte-order mark (UTF-16 without one) is refused, naming the option that reads it.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_bytes("sex\\nFéminin\\n".encode("cp1252"))
    >>> csv_encoding(p)[0]
    'cp1252'
    """
    path = Path(path)
    name = printable(path.name)
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise LL144CommandError(f"--encoding {printable(encoding)}: no such encoding (e.g. utf-8, cp1252, "
                                    "latin-1, utf-16)") from None
        return encoding, None
    with path.open("rb") as f:
        head = f.read(4096)
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec, None
    if b"\x00" in head:
        raise LL144CommandError(f"{name}: holds NUL bytes, so it is not UTF-8 text: a UTF-16 file without a "
                                "byte-order mark? give --encoding utf-16-le (or utf-16-be)")
    if _decodes(path, "utf-8"):
        return "utf-8", None
    codec = "cp1252" if _decodes(path, "cp1252") else "latin-1"
    return codec, (f"{name} is not UTF-8: read as {'Windows-1252' if codec == 'cp1252' else 'Latin-1'} "
                   "(Western European); if its labels look wrong, give the file's --encoding")


def csv_separator(path: str | Path, encoding: str, sep: str | None = None) -> str:
    """The separator of a CSV file: ``sep`` (``--sep``) if given, else the one of comma, semicolon, tab and ``|``
    that splits the header into the most columns (a tie goes to the earlier of them; no separator: one column).

    The header decides, not the data rows (:class:`csv.Sniffer` weighs the rows too, and can pick a character a
    label holds); every data row must then have the header's number of columns.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_text("Applicant ID;Sex;Race/Ethnicity;Selected\\n1;F;A;yes\\n")
    >>> csv_separator(p, "utf-8")
    ';'
    """
    if sep is not None:
        sep = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";"}.get(sep, sep)
        if len(sep) != 1 or sep in "\"\r\n":
            raise LL144CommandError(f"--sep {printable(sep)!r}: give one character (',', ';', '|') or 'tab'")
        return sep
    with open(path, encoding=encoding, newline="") as f:
        header = ""
        for line in f:  # the first line that is not empty (pandas skips empty lines too)
            if line.strip():
                header = line
                break
    widths = {s: len(next(csv.reader([header], delimiter=s), [])) for s in SEPARATORS}
    return max(SEPARATORS, key=lambda s: (widths[s], -list(SEPARATORS).index(s)))


def csv_header(path: str | Path, encoding: str, sep: str) -> list[str]:
    """The header of a CSV file as written (pandas renames a repeated name ``Sex`` to ``Sex.1``; this does not)."""
    with open(path, encoding=encoding, newline="") as f:
        for row in csv.reader(f, delimiter=sep):
            if row and row != [""] and (len(row) > 1 or row[0].strip()):  # pandas skips empty lines too
                return row
    return []


def _duplicates(header: list[Any], name: str, where: str = "") -> None:
    """Refuse a header that names a column twice (surrounding spaces ignored), naming each such column."""
    seen: dict[str, list[int]] = {}
    for i, h in enumerate(header, start=1):
        if h is None or (not isinstance(h, str) and pd.isna(h)):
            continue
        label = str(h).strip()
        if label:
            seen.setdefault(label, []).append(i)
    twice = {h: at for h, at in seen.items() if len(at) > 1}
    if twice:
        shown = "; ".join(f"{printable(h)!r} (columns {', '.join(map(str, at))})" for h, at in twice.items())
        raise LL144CommandError(f"{name}{where}: the header names a column more than once: {shown}; rename or "
                                "remove the repeats (which one holds the data cannot be told)")


def _excel_sheets(path: Path, name: str) -> list[str]:
    """The sheet names of an Excel file (python-calamine, in the ``data`` extra)."""
    try:
        import python_calamine  # noqa: F401  (pandas' engine; its absence named with the extra that installs it)
    except ImportError:
        raise LL144CommandError(f"{name}: {EXCEL_EXTRA}") from None
    try:
        with pd.ExcelFile(path, engine=EXCEL_ENGINE) as book:
            return [str(s) for s in book.sheet_names]
    except ImportError:
        raise LL144CommandError(f"{name}: {EXCEL_EXTRA}") from None
    except Exception as exc:  # not a workbook
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise LL144CommandError(f"{name}: cannot read the excel file: {printable(detail)}") from None


def _read_sheet(path: Path, name: str, sheet: str | int) -> pd.DataFrame:
    """One sheet, its first row the header (checked for repeated names), as text and numbers."""
    where = f", sheet {printable(sheet)!r}"
    try:
        raw = pd.read_excel(path, sheet_name=sheet, header=None, dtype=object, engine=EXCEL_ENGINE,
                            keep_default_na=False, na_values=[""])
    except ImportError:
        raise LL144CommandError(f"{name}: {EXCEL_EXTRA}") from None
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise LL144CommandError(f"{name}{where}: cannot read the excel file: {printable(detail)}") from None
    if raw.empty:
        raise LL144CommandError(f"{name}{where}: the sheet is empty")
    header = [_header_cell(h, i) for i, h in enumerate(raw.iloc[0])]
    _duplicates(header, name, where)
    frame = raw.iloc[1:]
    frame.columns = header
    return frame


def _header_cell(value: Any, i: int) -> str:
    """A header cell as a column name: text as it is, a whole number without ``.0``, an empty cell as pandas
    names it (``Unnamed: 3``)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return f"Unnamed: {i}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _has_columns(frame: pd.DataFrame, needed: Sequence[str], outcome: Sequence[str]) -> bool:
    cols = {str(c).strip() for c in frame.columns}
    return all(c in cols for c in needed) and (not outcome or any(c in cols for c in outcome))


def _pick_sheet(path: Path, name: str, needed: Sequence[str],
                outcome: Sequence[str]) -> tuple[pd.DataFrame, str | int, str | None, str | None]:
    """The sheet to read when ``--sheet`` is not given, a note when it is not the first, and a hint for the error
    about missing columns: the first sheet, or, when it lacks the audit's columns, the one other sheet that has
    them (with a note); two or more such sheets are refused, naming them and ``--sheet``; when none has them, the
    first sheet is read and the hint names the others."""
    sheets = _excel_sheets(path, name)
    first = _read_sheet(path, name, sheets[0] if sheets else 0)
    if len(sheets) < 2 or not needed or _has_columns(first, needed, outcome):
        return first, sheets[0] if sheets else 0, None, None
    fits = {}
    for s in sheets[1:]:
        try:
            frame = _read_sheet(path, name, s)
        except LL144CommandError:
            continue
        if _has_columns(frame, needed, outcome):
            fits[s] = frame
    others = ", ".join(repr(printable(s)) for s in sheets[1:])
    if len(fits) == 1:
        (s, frame), = fits.items()
        return frame, s, (f"{name}: read sheet {printable(s)!r}: the first sheet, {printable(sheets[0])!r}, lacks "
                          "the columns (give --sheet to read another)"), None
    if fits:
        raise LL144CommandError(f"{name}: the first sheet, {printable(sheets[0])!r}, lacks the columns, and the "
                                f"sheets {', '.join(repr(printable(s)) for s in fits)} all have them: choose one "
                                "with --sheet")
    return first, sheets[0], None, (f"read the first sheet, {printable(sheets[0])!r}; the workbook's other "
                                    f"sheets are {others} (choose one with --sheet)")


def load_data(path: str | Path, *, sheet: str | int | None = None, encoding: str | None = None,
              sep: str | None = None, needed: Sequence[str] = (), outcome: Sequence[str] = ()) -> DataFile:
    """DATA read as :func:`read_data` says, with how it was read (:class:`DataFile`).

    ``needed`` (the category columns) and ``outcome`` (``selected`` or ``score``, either will do) let an Excel
    file without ``--sheet`` be read from the one sheet that has them when its first sheet does not.
    """
    path = Path(path)
    name = printable(path.name)
    if not path.is_file():
        raise LL144CommandError(f"{printable(path)}: no such file")
    kind = READERS.get(path.suffix.lower())
    if kind is None:
        raise LL144CommandError(f"{name}: unknown file type {printable(path.suffix)!r}; give a .csv, .parquet or "
                                ".xlsx file")
    if sheet is not None and kind != "excel":
        raise LL144CommandError(f"{name}: --sheet applies to Excel files only")
    if (encoding is not None or sep is not None) and kind != "csv":
        raise LL144CommandError(f"{name}: --{'encoding' if encoding is not None else 'sep'} applies to CSV files only")
    if path.stat().st_size == 0:
        raise LL144CommandError(f"{name}: the file is empty")
    notes: list[str] = []
    codec = separator = hint = None
    try:
        if kind == "csv":
            codec, note = csv_encoding(path, encoding)
            notes += [note] if note else []
            separator = csv_separator(path, codec, sep)
            _duplicates(csv_header(path, codec, separator), name)
            frame = pd.read_csv(path, dtype=object, keep_default_na=False, na_values=[""], skipinitialspace=False,
                                sep=separator, encoding=codec)
        elif kind == "parquet":
            frame = pd.read_parquet(path)
        elif sheet is None:
            frame, sheet, note, hint = _pick_sheet(path, name, needed, outcome)
            notes += [note] if note else []
        else:
            sheets = _excel_sheets(path, name)
            if isinstance(sheet, int) and 0 <= sheet < len(sheets):
                sheet = sheets[sheet]
            if str(sheet) not in sheets:
                raise LL144CommandError(f"{name}: no sheet {printable(sheet)!r}; the sheets are "
                                        f"{', '.join(repr(printable(s)) for s in sheets)} (give one with --sheet)")
            frame = _read_sheet(path, name, str(sheet))
    except (LL144CommandError, KeyboardInterrupt):
        raise
    except pd.errors.EmptyDataError:
        raise LL144CommandError(f"{name}: the file is empty") from None
    except UnicodeDecodeError as exc:
        raise LL144CommandError(f"{name}: cannot be read as {codec} (byte {exc.start}); give the file's --encoding "
                                "(e.g. utf-8, cp1252, utf-16)") from None
    except Exception as exc:  # any parser's error: one line naming the file
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise LL144CommandError(f"{name}: cannot read the {kind} file: {printable(detail)}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    _duplicates(list(frame.columns), name)  # "Sex" and "Sex " (and a Parquet file's own repeats)
    if kind == "csv" and any(other in c for c in frame.columns for other in SEPARATORS if other != separator):
        hint = (f"the file was read as {SEPARATORS[separator]}-separated ({separator!r}); if its separator is "
                "another, give --sep")
    if len(frame) == 0:
        raise LL144CommandError(f"{name}: the file has a header but no rows")
    frame.index = pd.RangeIndex(FIRST_ROW, FIRST_ROW + len(frame))
    return DataFile(frame, kind, codec, separator, sheet, tuple(notes), hint)


def read_data(path: str | Path, *, sheet: str | int | None = None, encoding: str | None = None,
              sep: str | None = None) -> pd.DataFrame:
    """DATA as a frame of text and numbers, indexed by spreadsheet row number (header = row 1).

    CSV cells are read as text in the file's encoding and with its separator (:func:`csv_encoding`,
    :func:`csv_separator`; ``encoding`` and ``sep`` override them); Excel cells as the sheet stores them, read by
    the ``calamine`` engine (python-calamine, in the ``data`` extra: about ten times faster than openpyxl); Parquet
    columns with their types. An empty cell is missing; ``NA``, ``N/A`` or ``null`` are text here, which the
    audit's list of non-answers (:data:`allocbias.ll144.NON_ANSWERS`) reads as unknown. A header that names a
    column twice is refused, naming it. Empty text and cells of spaces only are left as they are here: the audit
    reads every one of them, in every format, as the unknown category ``(blank)``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_text("sex,selected\\nF,yes\\nM,no\\n")
    >>> read_data(p).index.tolist()
    [2, 3]
    """
    return load_data(path, sheet=sheet, encoding=encoding, sep=sep).frame


# --------------------------------------------------------------------------- rendering

_MD_SPECIAL = re.compile(r"([\\`*\[\]|<>])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _md(value: Any) -> str:
    """An input-derived string made inert in Markdown yet readable as plain text: control characters written as
    escapes (:func:`allocbias.outputs.printable`: an escape sequence in a label never reaches a terminal that shows
    the file), ``&``, ``<`` and ``>`` HTML-escaped, and only the characters that can start markup backslash-escaped
    (backslash, backtick, ``*``, brackets, ``|``, and ``_`` at a word's edge); dots, parentheses, ``%`` and ``_``
    inside a word stay as typed.

    >>> print(_md("sel_yesno.csv (highest rate) 0.82% <b>|*x*"))
    sel_yesno.csv (highest rate) 0.82% &lt;b&gt;\\|\\*x\\*
    >>> print(_md("Female" + chr(27) + "[2J"))
    Female\\\\x1b\\[2J
    """
    text = html.escape(printable(value), quote=False)
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _num(v: Any, digits: int = 3) -> str:
    """A rate, ratio or share as a fraction with ``digits`` decimals (0.693, never 69.3%); empty when missing."""
    if v is None or pd.isna(v):
        return ""
    return f"{float(v):.{digits}f}"


def _count(v: Any) -> str:
    """A count: whole numbers with thousands separators, fractional ones (shared seats) with 3 decimals."""
    if v is None or pd.isna(v):
        return ""
    return f"{int(v):,}" if float(v).is_integer() else f"{float(v):,.3f}"


def _interval(lo: Any, hi: Any) -> str:
    return f"[{_num(lo)}, {_num(hi)}]" if pd.notna(lo) and pd.notna(hi) else ""


#: The library's bound columns (:func:`allocbias.ll144.missing_data_bounds`) as the command writes them: every
#: interval or bound is ``<quantity>_<kind>_low`` / ``_high`` beside the intervals ``rate_low``/``rate_high``.
OUTPUT_NAMES = {f"{q}_{w}{p}": f"{q}_{kind}_{side}" for q in ("rate", "impact_ratio")
                for w, side in (("lower", "low"), ("upper", "high"))
                for p, kind in (("", "worst"), ("_prop", "prop"))}
#: Counts written as whole numbers (2303, not 2303.0) when every one is whole.
COUNT_COLUMNS = ("applicants", "selected", "n_unknown", "n")
#: What an excluded group shows instead of a ratio.
NOT_COMPARED = "not compared"
_RATIO_COLUMNS = ("impact_ratio", "impact_ratio_low", "impact_ratio_high", "impact_ratio_lower", "impact_ratio_upper",
                  "impact_ratio_lower_prop", "impact_ratio_upper_prop")


def output_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as the command writes it: bound columns renamed (:data:`OUTPUT_NAMES`), whole counts as integers,
    and an excluded group's ratios blank (it is not compared; its rate stays).

    >>> t = pd.DataFrame({"applicants": [3.0, 4.0], "impact_ratio": [1.0, 1.2], "impact_ratio_lower": [0.5, 0.6],
    ...                   "excluded": [False, True]})
    >>> output_table(t).to_dict("list")
    {'applicants': [3, 4], 'impact_ratio': [1.0, nan], 'impact_ratio_worst_low': [0.5, nan], 'excluded': [False, True]}
    """
    out = frame.copy()
    if "excluded" in out.columns:
        ex = out["excluded"].astype(bool).to_numpy()
        for c in _RATIO_COLUMNS:
            if c in out.columns:
                out.loc[ex, c] = np.nan
        if "four_fifths" in out.columns:
            out.loc[ex, "four_fifths"] = False
    for c in COUNT_COLUMNS:
        if c in out.columns and pd.api.types.is_numeric_dtype(out[c]):
            v = out[c].to_numpy(dtype=float)
            ok = ~np.isnan(v)
            if (v[ok] == np.round(v[ok])).all():
                out[c] = pd.array(np.where(ok, v, 0).astype(np.int64), dtype="Int64")
                out.loc[~ok, c] = pd.NA
    return out.rename(columns=OUTPUT_NAMES)


_SHOWN = [("group", "group"), ("applicants", "applicants"), ("selected", "selected"), ("rate", "rate"),
          ("rate_ci", "rate 95% interval"), ("share", "share of known"), ("impact_ratio", "impact ratio"),
          ("impact_ratio_ci", "ratio 95% interval"), ("below_0_8", "below 0.8"),
          ("bounds", "ratio if unknowns joined (worst case)"), ("bounds_prop", "(proportional)"), ("note", "note")]


_KNOWN_COLUMNS = {"table", "category", "group", "applicants", "selected", "rate", "rate_low", "rate_high", "share",
                  "excluded", "unknown", "comparator", "impact_ratio", "impact_ratio_low", "impact_ratio_high",
                  "four_fifths", "n_unknown", *OUTPUT_NAMES, "four_fifths_possible", "four_fifths_certain", "note",
                  "interval_warning"}


def _columns(kind: str, extra: list[str]) -> list[tuple[str, str]]:
    """The shown columns, keys first (the group, its four-fifths flag and the columns that say how far the flag can
    be trusted, e.g. ``false_flag_rate``), then the counts, rates, ratios and bounds: at 1280 px the flag stays in
    view however many columns follow.

    >>> [h for _, h in _columns("selection", ["false_flag_rate"])][:4]
    ['group', 'below 0.8', 'false flag rate', 'applicants']
    """
    shown = [(k, "above the median" if k == "selected" and kind == "scoring" else h) for k, h in _SHOWN]
    first = [c for c in shown if c[0] in ("group", "below_0_8")]
    return first + [(c, c.replace("_", " ")) for c in extra] + [c for c in shown if c not in first]


def _extra_columns(table: pd.DataFrame, cols: list[str]) -> list[str]:
    """Columns of the audit table no heading here names (another measure added to the tables): shown as they are."""
    return [c for c in table.columns if c not in _KNOWN_COLUMNS and c not in cols]


def _heading(name: str, names: list[str]) -> str:
    """A category's heading: ``Sex``, ``Race/ethnicity``, ``Intersectional (sex × race/ethnicity)``."""
    if name == "intersectional":
        return f"Intersectional ({' × '.join(n for n in names if n != 'intersectional')})"
    return name[:1].upper() + name[1:]


def _display_rows(table: pd.DataFrame, kind: str) -> list[dict[str, str]]:
    """The cells of one category's table as display strings (raw: escaping is the renderer's job)."""
    rows = []
    for _, r in table.iterrows():
        note = "; ".join(x for x in [r["note"], r.get("interval_warning", "")] if isinstance(x, str) and x)
        rows.append({
            "group": str(r["group"]), "applicants": _count(r["applicants"]), "selected": _count(r["selected"]),
            "rate": _num(r["rate"]), "rate_ci": _interval(r.get("rate_low"), r.get("rate_high")),
            "share": _num(r["share"]), "impact_ratio": _num(r["impact_ratio"]),
            "impact_ratio_ci": _interval(r.get("impact_ratio_low"), r.get("impact_ratio_high")),
            "below_0_8": "below" if r["four_fifths"] else "",
            "bounds": _interval(r["impact_ratio_lower"], r["impact_ratio_upper"]),
            "bounds_prop": _interval(r["impact_ratio_lower_prop"], r["impact_ratio_upper_prop"]),
            "note": note,
        })
        if bool(r["excluded"]) and not bool(r["unknown"]):
            rows[-1].update(impact_ratio=NOT_COMPARED, impact_ratio_ci="", below_0_8="", bounds="", bounds_prop="")
        for col in table.columns:  # columns the renderer does not know (added by later versions) shown as they are
            if col not in _KNOWN_COLUMNS and col not in rows[-1]:
                v = r[col]
                rows[-1][col] = (_num(v) if isinstance(v, (float, np.floating)) else "" if v is None or
                                 (not isinstance(v, str) and pd.isna(v)) else str(v))
    return rows


def _exclude_rule(options: dict) -> str:
    """The 2% rule as this audit applied it, in words."""
    cut = options.get("exclude_below")
    if cut is None:
        return "No category was excluded for its size (the 2% rule was off)."
    base = ("of all applicants in the audit, those of unknown category included" if options.get("exclude_base") == "all"
            else "of the applicants whose category is known (unknown applicants belong to no category)")
    return (f"A category with less than {float(cut):.0%} {base} is excluded from the impact ratios "
            "(6 RCNY § 5-301: less than 2% of the data being used for the bias audit); its applicants and rate "
            "are still reported.")


def _size_reading(part: pd.DataFrame) -> str:
    """How far a category's four-fifths flags can be trusted at its counts: the one-line reading
    (:func:`allocbias.measures.ll144.four_fifths_reading`) of its smallest compared group; "" when none is compared."""
    if "false_flag_rate" not in part or part["false_flag_rate"].notna().sum() == 0:
        return ""
    compared = part[part["false_flag_rate"].notna()]
    small = compared.loc[compared["applicants"].idxmin()]
    comp = part[part["comparator"].astype(bool)]
    line = ll144.four_fifths_reading(small["applicants"], comp["applicants"].max(), small["false_flag_rate"],
                                     small["detectable_ratio"])
    return f"Smallest compared group ({small['group']}): {line}."


def _context(audit: ll144.BiasAudit, source: dict[str, Any], filing: dict[str, Any] | None = None) -> dict[str, Any]:
    rate_word = ("scoring rates (shares scored above the sample median)" if audit.kind == "scoring"
                 else "selection rates")
    tables = []
    names = [str(n) for n in audit.table["table"].unique()]
    cat_cols = [c for c in (audit.options.get("sex"), audit.options.get("race")) if c]
    extra = _extra_columns(audit.table, cat_cols)
    for name, part in audit.table.groupby("table", sort=False):
        flagged = part[part["four_fifths"] & ~part["excluded"]]
        tables.append({"name": str(name), "heading": _heading(str(name), names),
                       "rows": _display_rows(part, audit.kind),
                       "flagged": [str(g) for g in flagged["group"]], "reading": _size_reading(part),
                       "n_unknown": _count(part["n_unknown"].dropna().iloc[0]) if part["n_unknown"].notna().any() else "0"})
    regression = []
    if audit.regression is not None:
        for _, r in audit.regression.iterrows():
            def cell(name: str) -> str:
                ci = _interval(r.get(f"{name}_low"), r.get(f"{name}_high"))
                return _num(r[name]) + (f" {ci}" if ci else "")

            regression.append({"category": str(r["category"]), "group": str(r["group"]), "n": _count(r["n"]),
                               "mean": _num(r["mean"]), "ratio_of_means": cell("ratio_of_means"),
                               "di_median": cell("di_median"), "auc_di": cell("auc_di"), "p_fair": cell("p_fair"),
                               "ks_statistic": _num(r["ks_statistic"]), "ks_pvalue": f"{r['ks_pvalue']:.3g}"})
    return {
        "source": source, "kind": audit.kind, "shape": audit.shape, "rate_word": rate_word,
        "n_applicants": _count(audit.n_applicants), "median": None if audit.median is None else f"{audit.median:g}",
        "tables": tables,
        "columns": _columns(audit.kind, extra),
        "unknown": [{"category": str(r["category"]), "label": str(r["label"]), "n": _count(r["n_unknown"]),
                     "share": _num(r["share_unknown"])} for _, r in audit.unknown.iterrows()],
        "unknown_labels": [str(u) for u in audit.options["unknown"] if u != ll144.BLANK],
        "exclude_rule": _exclude_rule(audit.options),
        "version": tool_version(), "filing": filing or {},
        "excluded": [{"category": str(r["category"]), "group": str(r["group"]), "applicants": _count(r["applicants"]),
                      "share": _num(r["share"]), "reason": str(r["reason"])} for _, r in audit.excluded.iterrows()],
        "regression": regression, "warnings": [str(w) for w in audit.warnings],
        "options": {k: str(v) for k, v in audit.options.items()}, "four_fifths_note": FOUR_FIFTHS_NOTE,
        "intervals_note": ("Rate intervals: Wilson score intervals (95%). Ratio intervals: the central 95% of "
                           f"{audit.options['draws']} draws of every group's rate from its Jeffreys distribution "
                           "Beta(s + 1/2, n - s + 1/2), with the comparator recomputed in each draw, so that the "
                           "interval allows for the comparator being chosen by the data. Both treat applicants as "
                           "independent; the bounds for unknown applicants are a separate, deterministic worst case. "
                           "Regression alternatives: 95% percentile intervals from "
                           f"{audit.options['regression_boot']} bootstrap replicates (applicants resampled within "
                           "their groups), in brackets after each value."),
    }


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Local Law 144 bias audit: {{ source.file }}</title>
<style>body{font-family:system-ui,sans-serif;max-width:75rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;
text-align:right}td:first-child,th:first-child,td.t{text-align:left}.note{background:#fff6d5;padding:.5rem 1rem;
border-left:4px solid #e0b000}.flag{color:#a00;font-weight:600}</style></head><body>
<h1>Local Law 144 bias audit</h1>
<p class="note">{{ four_fifths_note }}</p>
<p>Input <code>{{ source.file }}</code> (SHA-256 <code>{{ source.sha256 }}</code>, {{ source.rows }} rows, one row per
{{ "applicant" if shape == "applicants" else "category" }}); a {{ kind }} tool: rates are {{ rate_word }}.
{{ n_applicants }} applicants{% if median %}; sample median score {{ median }}{% endif %}. Written by allocbias
{{ version }}; the published summary is <code>published_summary.html</code>.</p>
<p>Unknown category: empty cells and cells of spaces ("(blank)") and the labels {{ unknown_labels | join(", ") }};
each counted on its own line, none compared. {{ exclude_rule }}</p>
{% if warnings %}<h2>Warnings</h2><ul>{% for w in warnings %}<li>{{ w }}</li>{% endfor %}</ul>{% endif %}
{% for t in tables %}<h2>{{ t.heading }}</h2>
<p>{% if t.flagged %}Below 0.8: <span class="flag">{{ t.flagged | join(", ") }}</span>.{% else %}No included group
below 0.8.{% endif %} Applicants of unknown category: {{ t.n_unknown }}.{% if t.reading %} {{ t.reading }}{% endif %}</p>
<table><tr>{% for key, head in columns %}<th>{{ head }}</th>{% endfor %}</tr>
{% for r in t.rows %}<tr>{% for key, head in columns %}<td{% if key in ("group", "note") %} class="t"{% endif %}>{{ r[key] }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endfor %}
<h2>Applicants of unknown category</h2>
<table><tr><th>category</th><th>label</th><th>applicants</th><th>share of all</th></tr>
{% for u in unknown %}<tr><td>{{ u.category }}</td><td class="t">{{ u.label }}</td><td>{{ u.n }}</td><td>{{ u.share }}</td></tr>{% endfor %}</table>
<h2>Excluded from the comparison</h2>
{% if excluded %}<table><tr><th>category</th><th>group</th><th>applicants</th><th>share</th><th>why</th></tr>
{% for e in excluded %}<tr><td>{{ e.category }}</td><td class="t">{{ e.group }}</td><td>{{ e.applicants }}</td>
<td>{{ e.share }}</td><td class="t">{{ e.reason }}</td></tr>{% endfor %}</table>{% else %}<p>None.</p>{% endif %}
{% if regression %}<h2>Beyond one cut: the scores' regression alternatives</h2>
<p>Over the applicants of the included groups of each category: ratio of mean scores, impact ratio at the median,
area under the impact-ratio curve (AUC<sub>DI</sub>, flat prior on the rejected share), the prior probability that a
cut passes the four-fifths rule (P<sub>fair</sub>) and the two-sample Kolmogorov-Smirnov test of the group against the
rest.</p>
<table><tr><th>category</th><th>group</th><th>n</th><th>mean</th><th>ratio of means</th><th>DI median</th>
<th>AUC_DI</th><th>P_fair</th><th>KS D</th><th>KS p</th></tr>
{% for r in regression %}<tr><td>{{ r.category }}</td><td class="t">{{ r.group }}</td><td>{{ r.n }}</td><td>{{ r.mean }}</td>
<td>{{ r.ratio_of_means }}</td><td>{{ r.di_median }}</td><td>{{ r.auc_di }}</td><td>{{ r.p_fair }}</td>
<td>{{ r.ks_statistic }}</td><td>{{ r.ks_pvalue }}</td></tr>{% endfor %}</table>{% endif %}
<h2>How to read it</h2><p>{{ intervals_note }}</p>
<h2>Options</h2><table>{% for k, v in options.items() %}<tr><td>{{ k }}</td><td class="t">{{ v }}</td></tr>{% endfor %}</table>
</body></html>
"""


def render_html(audit: ll144.BiasAudit, source: dict[str, Any], *, context: dict[str, Any] | None = None) -> str:
    """``report.html``: one self-contained page; Jinja2 autoescape escapes every value from the input."""
    return _template(_HTML).render(**(context or _context(audit, source)))


@functools.lru_cache(maxsize=None)
def _template(source: str) -> Any:
    """A page's compiled template (compiled once per process): every value autoescaped, its control characters
    written as escapes first (:func:`allocbias.outputs.printable`), an undefined name an error."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             finalize=lambda v: printable(v) if isinstance(v, str) else v)
    return env.from_string(source)


def tool_version() -> str:
    """allocbias's version, from the installed package's metadata (``importlib.metadata``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("allocbias")
    except PackageNotFoundError:
        return "unknown (not installed)"


#: The fields of the published summary (6 RCNY § 5-303) the command takes as options, with their option names.
FILING_FIELDS = {"audit_date": "--audit-date", "data_source": "--data-source", "data_explanation": "--data-explanation",
                 "test_data_reason": "--test-data-reason", "distribution_date": "--distribution-date",
                 "employer": "--employer", "tool_name": "--tool-name", "auditor": "--auditor"}
#: The fields the rules require of every summary; with test data, :data:`TEST_DATA_REQUIRED` too. The others
#: (employer, tool, auditor) are shown when given.
FILING_REQUIRED = ("audit_date", "data_source", "data_explanation", "distribution_date")
#: With test data the summary must also explain why historical data were not used and describe how the test data
#: were generated and obtained (6 RCNY § 5-302): the reason is its own field, the explanation says the rest.
TEST_DATA_REQUIRED = ("test_data_reason",)
#: What the summary says of each source: only what the user said (the rules define both; nothing is added).
DATA_SOURCES = {"historical": "historical data", "test": "test data"}
FILING_DATES = ("audit_date", "distribution_date")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_date(text: str, option: str) -> str:
    """A filing date as ``YYYY-MM-DD`` (ISO 8601's calendar date, the one spelling every reader takes the same way),
    or :class:`LL144CommandError` naming ``option``.

    >>> parse_date(" 2026-03-01", "--audit-date")
    '2026-03-01'
    >>> parse_date("2026-13-45", "--audit-date")
    Traceback (most recent call last):
    ...
    allocbias.ll144_command.LL144CommandError: --audit-date '2026-13-45': not a date (month must be in 1..12); give it as YYYY-MM-DD, e.g. 2026-03-01
    """
    value = str(text).strip()
    if not _ISO_DATE.fullmatch(value):
        raise LL144CommandError(f"{option} {printable(value)!r}: give the date as YYYY-MM-DD, e.g. 2026-03-01")
    try:
        return datetime.date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise LL144CommandError(f"{option} {value!r}: not a date ({exc}); give it as YYYY-MM-DD, "
                                "e.g. 2026-03-01") from None


def _year_after(day: datetime.date) -> datetime.date:
    """The same day a year later (29 February: 28 February)."""
    return day.replace(year=day.year + 1, day=28 if (day.month, day.day) == (2, 29) else day.day)


def check_filing(filing: dict[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """The published summary's fields checked, and the notes on them that stop nothing.

    Refused (:class:`LL144CommandError`, naming the option): a date that is not ``YYYY-MM-DD`` or not a day of
    the calendar; a text field given but blank; a data source other than ``historical`` or ``test``;
    ``--test-data-reason`` without ``--data-source test``. Text fields have their runs of spaces and line breaks
    made one space. Noted: a distribution date more than a year after the audit date (Local Law 144 allows a tool's
    use only within a year after its bias audit), and historical data for a tool first distributed after its
    audit (then they can only be other employers' use of it, which the rules allow: the explanation should say
    so). A distribution date before the audit date is the usual case (a tool in use is audited again every year)
    and is not flagged. Absent fields are left out: the summary says which required ones are missing.

    >>> fields, notes = check_filing({"audit_date": "2026-03-01", "distribution_date": "2027-06-01"})
    >>> fields, [n.split(":")[0] for n in notes]
    ({'audit_date': '2026-03-01', 'distribution_date': '2027-06-01'}, ['the distribution date 2027-06-01 is more than a year after the audit date 2026-03-01'])
    """
    out: dict[str, str] = {}
    for key, value in (filing or {}).items():
        if value is None:
            continue
        option = FILING_FIELDS.get(key)
        if option is None:
            raise LL144CommandError(f"unknown filing field {key!r}; the fields are {list(FILING_FIELDS)}")
        if key in FILING_DATES:
            out[key] = parse_date(value, option)
        elif key == "data_source":
            if value not in DATA_SOURCES:
                raise LL144CommandError(f"{option} must be one of {list(DATA_SOURCES)}, got {printable(value)!r}")
            out[key] = str(value)
        else:
            text = " ".join(str(value).split())
            if not text:
                raise LL144CommandError(f"{option} is blank: give the text, or leave the option out (the "
                                        "published summary then says it is missing)")
            out[key] = text
    if "test_data_reason" in out and out.get("data_source") != "test":
        raise LL144CommandError("--test-data-reason (why historical data were not used) goes with --data-source "
                                "test only")
    notes = []
    audit, dist = out.get("audit_date"), out.get("distribution_date")
    if audit and dist:
        a, d = datetime.date.fromisoformat(audit), datetime.date.fromisoformat(dist)
        if d > _year_after(a):
            notes.append(f"the distribution date {dist} is more than a year after the audit date {audit}: Local Law "
                         "144 allows a tool to be used only within a year after its bias audit")
        if d > a and out.get("data_source") == "historical":
            notes.append(f"historical data: the tool was first distributed ({dist}) after the audit ({audit}), so "
                         "its historical data can only be other employers' use of it; say so in --data-explanation")
    return out, notes


def filing_missing(filing: dict[str, Any]) -> list[str]:
    """The options of the required fields ``filing`` lacks (with test data, the reason historical data were not
    used): the published summary is ready to publish when this is empty.

    >>> filing_missing({"audit_date": "2026-03-01", "data_source": "test"})
    ['--data-explanation', '--distribution-date', '--test-data-reason']
    """
    required = FILING_REQUIRED + (TEST_DATA_REQUIRED if filing.get("data_source") == "test" else ())
    return [FILING_FIELDS[k] for k in required if not filing.get(k)]


#: The published summary's lines, in order, with the field each shows.
_FIELD_LABELS = (("employer", "Employer or employment agency"), ("tool_name", "Automated employment decision tool"),
                 ("auditor", "Independent auditor"), ("audit_date", "Date of the bias audit"),
                 ("data_source", "Source of the data"), ("test_data_reason", "Why historical data were not used"),
                 ("data_explanation", "Explanation of the data"),
                 ("distribution_date", "Distribution date of the tool"))


def _published(audit: ll144.BiasAudit, filing: dict[str, Any]) -> dict[str, Any]:
    """What the published summary shows, as display strings: the filing fields as given (a missing required one
    says which option gives it; with test data, why historical data were not used and how the test data were
    made), the applicants, those of unknown category, each category's rate and ratio, and the excluded categories
    with their justification, applicants and rate."""
    test = filing.get("data_source") == "test"
    required = FILING_REQUIRED + (TEST_DATA_REQUIRED if test else ())

    def field(key: str) -> str:
        v = filing.get(key)
        if key == "data_source" and v:
            return DATA_SOURCES.get(str(v), str(v))
        return printable(v) if v else f"not given (pass {FILING_FIELDS[key]})"

    def label(key: str, text: str) -> str:
        if key == "data_explanation" and test:
            return "Explanation of the data (how the test data were generated and obtained)"
        return text

    rate = "scoring rate" if audit.kind == "scoring" else "selection rate"
    names = [str(n) for n in audit.table["table"].unique()]
    tables = []
    for name, part in audit.table.groupby("table", sort=False):
        rows = []
        for _, r in part[~part["unknown"]].iterrows():
            excluded = bool(r["excluded"])
            rows.append({"group": printable(r["group"]), "applicants": _count(r["applicants"]),
                         "rate": _num(r["rate"]), "ratio": NOT_COMPARED if excluded else _num(r["impact_ratio"])})
        n_unknown = part.loc[part["unknown"], "applicants"].sum()
        tables.append({"heading": _heading(str(name), names), "rows": rows, "n_unknown": _count(n_unknown)})
    excluded = [{"category": _heading(str(r["category"]), names), "group": printable(r["group"]),
                 "applicants": _count(r["applicants"]),
                 "rate": _num(audit.table.loc[(audit.table["table"] == r["category"])
                                              & (audit.table["group"] == r["group"]), "rate"].iloc[0]),
                 "reason": printable(r["reason"])} for _, r in audit.excluded.iterrows()]
    return {"fields": [(label(key, text), field(key)) for key, text in _FIELD_LABELS
                       if key in required or filing.get(key)],
            "missing": filing_missing(filing), "rate": rate, "n_applicants": _count(audit.n_applicants),
            "tables": tables, "excluded": excluded, "exclude_rule": _exclude_rule(audit.options),
            "version": tool_version(), "four_fifths_note": FOUR_FIFTHS_NOTE}


def render_published_summary(audit: ll144.BiasAudit, filing: dict[str, Any], *,
                             published: dict[str, Any] | None = None) -> str:
    """``published_summary.md``: exactly what the DCWP rules (6 RCNY § 5-300 ff.) require a published summary of
    the results of a bias audit to show, as plain Markdown (input-derived strings made inert by :func:`_md`)."""
    p = published or _published(audit, filing)
    out = ["# Summary of the results of a bias audit (NYC Local Law 144)", ""]
    if p["missing"]:
        out += [f"**Not ready to publish**: missing {', '.join(p['missing'])}.", ""]
    out += [f"- {label}: {_md(v)}" for label, v in p["fields"]]
    out += [f"- Number of applicants: {p['n_applicants']}", ""]
    out += [f"Rates are {p['rate']}s; the impact ratio of a category is its {p['rate']} divided by the highest "
            f"{p['rate']} of the compared categories. {p['exclude_rule']}", ""]
    for t in p["tables"]:
        out += [f"## {t['heading']}", "", f"Applicants in an unknown category: {t['n_unknown']}.", "",
                f"| category | applicants | {p['rate']} | impact ratio |", "| --- | --- | --- | --- |"]
        out += [f"| {_md(r['group'])} | {r['applicants']} | {r['rate']} | {r['ratio']} |" for r in t["rows"]] + [""]
    out += ["## Categories excluded from the impact ratios", ""]
    out += [f"- {e['category']}: {_md(e['group'])}, {e['applicants']} applicants, {p['rate']} {e['rate']}. "
            f"Justification: {_md(e['reason'])}." for e in p["excluded"]] or ["None."]
    out += ["", f"Computed by allocbias {p['version']}.", ""]
    return "\n".join(out)


_PUBLISHED_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Summary of the results of a bias audit</title>
<style>body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
td:first-child,th:first-child{text-align:left}.missing{color:#a00;font-weight:600}</style></head><body>
<h1>Summary of the results of a bias audit (NYC Local Law 144)</h1>
{% if missing %}<p class="missing">Not ready to publish: missing {{ missing | join(", ") }}.</p>{% endif %}
<ul>{% for label, v in fields %}<li>{{ label }}: {{ v }}</li>{% endfor %}<li>Number of applicants: {{ n_applicants }}</li></ul>
<p>Rates are {{ rate }}s; the impact ratio of a category is its {{ rate }} divided by the highest {{ rate }} of the
compared categories. {{ exclude_rule }}</p>
{% for t in tables %}<h2>{{ t.heading }}</h2><p>Applicants in an unknown category: {{ t.n_unknown }}.</p>
<table><tr><th>category</th><th>applicants</th><th>{{ rate }}</th><th>impact ratio</th></tr>
{% for r in t.rows %}<tr><td>{{ r.group }}</td><td>{{ r.applicants }}</td><td>{{ r.rate }}</td><td>{{ r.ratio }}</td></tr>
{% endfor %}</table>{% endfor %}
<h2>Categories excluded from the impact ratios</h2>
{% if excluded %}<ul>{% for e in excluded %}
<li>{{ e.category }}: {{ e.group }}, {{ e.applicants }} applicants, {{ rate }} {{ e.rate }}. Justification: {{ e.reason }}.</li>{% endfor %}</ul>{% else %}<p>None.</p>{% endif %}
<p>Computed by allocbias {{ version }}.</p>
</body></html>
"""


def render_published_html(audit: ll144.BiasAudit, filing: dict[str, Any], *,
                          published: dict[str, Any] | None = None) -> str:
    """``published_summary.html``: :func:`render_published_summary` as one self-contained page (autoescaped)."""
    return _template(_PUBLISHED_HTML).render(**(published or _published(audit, filing)))


_TEXT = {"group", "note", "category"}  # the cells that come from the input (numbers are formatted here)


def render_summary(audit: ll144.BiasAudit, source: dict[str, Any], *, context: dict[str, Any] | None = None) -> str:
    """``summary.md``: the same content as Markdown, every input-derived string made inert (:func:`_md`)."""
    c = context or _context(audit, source)
    out = ["# Local Law 144 bias audit", "", f"> {c['four_fifths_note']}", "",
           f"Input `{source['sha256']}` ({_md(source['file'])}, {source['rows']} rows, one row per "
           f"{'applicant' if audit.shape == 'applicants' else 'category'}); a {audit.kind} tool: rates are "
           f"{c['rate_word']}. {c['n_applicants']} applicants"
           + (f"; sample median score {c['median']}." if c["median"] else ".")
           + f" Written by allocbias {c['version']}; the published summary is published_summary.md.", "",
           "Unknown category: empty cells and cells of spaces ((blank)) and the labels "
           + ", ".join(_md(u) for u in c["unknown_labels"]) + "; each counted on its own line, none compared. "
           + c["exclude_rule"], ""]
    if c["warnings"]:
        out += ["## Warnings", ""] + [f"- {_md(w)}" for w in c["warnings"]] + [""]
    for t in c["tables"]:
        flagged = ", ".join(_md(g) for g in t["flagged"]) or "none"
        out += [f"## {_md(t['heading'])}", "", f"Included groups below 0.8: {flagged}. Applicants of unknown "
                f"category: {t['n_unknown']}." + (f" {_md(t['reading'])}" if t["reading"] else ""), "",
                "| " + " | ".join(h for _, h in c["columns"]) + " |",
                "|" + "|".join(" --- " for _ in c["columns"]) + "|"]
        out += ["| " + " | ".join(_md(r[k]) if k in _TEXT else r[k] for k, _ in c["columns"]) + " |"
                for r in t["rows"]] + [""]
    out += ["## Applicants of unknown category", "", "| category | label | applicants | share of all |",
            "| --- | --- | --- | --- |"]
    out += [f"| {_md(u['category'])} | {_md(u['label'])} | {u['n']} | {u['share']} |" for u in c["unknown"]] + [""]
    out += ["## Excluded from the comparison", ""]
    out += [f"- {_md(e['category'])}: {_md(e['group'])} ({e['applicants']} applicants, share {e['share']}): "
            f"{_md(e['reason'])}" for e in c["excluded"]] or ["None."]
    out += [""]
    if c["regression"]:
        keys = ["category", "group", "n", "mean", "ratio_of_means", "di_median", "auc_di", "p_fair", "ks_statistic",
                "ks_pvalue"]
        out += ["## Beyond one cut: the scores' regression alternatives", "",
                "| " + " | ".join(keys) + " |", "|" + "|".join(" --- " for _ in keys) + "|"]
        out += ["| " + " | ".join(_md(r[k]) if k in _TEXT else r[k] for k in keys) + " |"
                for r in c["regression"]] + [""]
    out += ["## How to read it", "", c["intervals_note"], ""]
    return "\n".join(out)


def _csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) get a leading ``'``, and
    control characters are written as escapes (:func:`allocbias.outputs.printable`)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].astype(object).map(_csv_cell)
    out.columns = [printable(c) for c in out.columns]
    return out


def _csv_cell(v: Any) -> Any:
    if not isinstance(v, str):
        return v
    v = printable(v)
    return "'" + v if v[:1] in ("=", "+", "-", "@") else v


def _records(frame: pd.DataFrame | None) -> list | None:
    return None if frame is None else json.loads(frame.to_json(orient="records", double_precision=15))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_") or "table"


@dataclass(frozen=True)
class Written:
    """What :func:`run_ll144` wrote."""

    out: Path
    audit: ll144.BiasAudit
    files: tuple[str, ...]
    #: earlier published summaries this run kept under their audit date (``--replace``)
    kept: tuple[str, ...] = ()
    #: what the command noticed and the user should know (how DATA was read, the filing's dates, leftovers removed)
    notes: tuple[str, ...] = ()
    #: the required filing fields the published summary lacks (empty: ready to publish)
    missing: tuple[str, ...] = ()


class Interrupted(KeyboardInterrupt):
    """Ctrl-C once the audit was in place: :attr:`message` says so (the command line prints it)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


#: The two files of the published summary: a re-run never replaces one that was filed (ready to publish, or
#: edited since it was written) unless told to (``replace``), and then keeps it under its audit date.
PUBLISHED = ("published_summary.md", "published_summary.html")
_OLD = ".old-"


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (another run's temporary folder is then left alone). Outside
    POSIX there is no cheap check, and every folder is left alone."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: another user's running process
        return True
    return True


def clean_leftovers(out: str | Path) -> list[str]:
    """Remove what runs killed before they finished left beside ``out`` and in it; return what was done.

    A run writes ``.OUT.partial-PID`` beside ``out``, moves an earlier ``out`` to ``.OUT.old-PID``, renames the
    first to ``out`` and removes the second. Of a run whose process is gone: a temporary folder is removed; a moved
    earlier output is put back when ``out`` is missing (the run was killed between its two renames), and removed
    otherwise; a temporary file of :func:`allocbias.outputs.write_atomic` (``.NAME.partial-*``) inside ``out`` is
    removed.
    """
    out = Path(os.path.abspath(out))
    parent = out.parent
    done: list[str] = []
    if not parent.is_dir():
        return done
    partial, old = temporary_prefix(out), f".{out.name}{_OLD}"
    entries = sorted(parent.iterdir(), key=lambda p: p.lstat().st_mtime, reverse=True)
    for entry in entries:
        for prefix in (partial, old):
            pid = entry.name[len(prefix):]
            if not entry.name.startswith(prefix) or not pid.isdigit() or _pid_alive(int(pid)):
                continue
            if prefix == old and not out.exists() and entry.is_dir() and not entry.is_symlink():
                entry.rename(out)
                done.append(f"put back {printable(out)} from {printable(entry.name)}, left by a run killed while "
                            "it replaced the folder")
            else:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
                done.append(f"removed {printable(entry.name)}, left by a run that did not finish")
    if out.is_dir():
        for path in sorted(out.rglob(f".*{PARTIAL}*")):
            if path.is_file() or path.is_symlink():
                path.unlink()
                done.append(f"removed {printable(path.relative_to(out).as_posix())}, a temporary file left by a "
                            "run that did not finish")
    return done


@dataclass(frozen=True)
class _Earlier:
    """What an earlier run left in ``--out``: its record and the state of the files it wrote."""

    present: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()  # files no run recorded writing
    edited: tuple[str, ...] = ()  # files whose bytes differ from the digest the run recorded
    kept: tuple[str, ...] = ()  # earlier published summaries a run kept (carried into every later output)
    ready: bool = False  # its published summary was ready to publish
    audit_date: str | None = None


def _earlier(out: Path) -> _Earlier:
    """The files in ``out`` (relative, ``/``-separated) and which of them an earlier ``allocbias ll144`` run wrote
    (``ll144.json``'s ``files``; an output of a version that recorded nothing owns its usual files), which of those
    were edited since (``digests``), which are kept summaries, and whether its published summary was ready."""
    if not out.is_dir():
        return _Earlier()
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink())
    doc: Any = None
    record = out / "ll144.json"
    if record.is_file():
        try:
            doc = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
    if not (isinstance(doc, dict) and doc.get("program") == "allocbias ll144"):
        return _Earlier(tuple(present), tuple(present))
    owned = {"ll144.json", *map(str, doc.get("files") or [])}
    if "files" not in doc:
        owned |= {f for f in present if f in ("summary.md", "report.html", *PUBLISHED)
                  or re.fullmatch(r"tables/[a-z0-9_]+\.csv", f)}
    digests = doc.get("digests") if isinstance(doc.get("digests"), dict) else {}
    edited = [f for f in present if f in digests and (out / f).is_file()
              and sha256_bytes((out / f).read_bytes()) != digests[f]]
    filing = doc.get("filing") if isinstance(doc.get("filing"), dict) else {}
    ready = bool(doc["ready"]) if "ready" in doc else all(filing.get(k) for k in FILING_REQUIRED)
    kept = [str(f) for f in doc.get("kept") or [] if str(f) in present]
    return _Earlier(tuple(present), tuple(f for f in present if f not in owned), tuple(edited), tuple(kept), ready,
                    filing.get("audit_date"))


def _named(files: Sequence[str]) -> str:
    shown = ", ".join(printable(f) for f in files[:10])
    return shown + (f" and {len(files) - 10} more" if len(files) > 10 else "")


def _kept_names(earlier: _Earlier, files: Sequence[str]) -> dict[str, str]:
    """Where each earlier published summary goes when replaced: ``published_summary-<audit date>.md`` (``undated``
    without one), with ``-2``, ``-3`` … when that name is taken."""
    stamp = earlier.audit_date if isinstance(earlier.audit_date, str) and _ISO_DATE.fullmatch(earlier.audit_date) \
        else "undated"
    taken = set(earlier.present)
    for n in range(1, 1000):
        name = stamp if n == 1 else f"{stamp}-{n}"
        names = {f: f"published_summary-{name}{Path(f).suffix}" for f in files}
        if not taken & set(names.values()):
            return names
    raise LL144CommandError("too many kept published summaries in one folder; move some of them")


def _carried(out: Path, earlier: _Earlier, files: dict[str, bytes], replace: bool) -> dict[str, str]:
    """Check what ``out`` holds against what this run writes; return the earlier published summaries to keep
    (old name -> kept name). Refused, naming the files, with nothing written: a file no run wrote; a file a run
    wrote and someone edited since (besides the published summary); a published summary that was ready to
    publish, or edited since, which this run would change, unless ``replace``."""
    if earlier.foreign:
        raise LL144CommandError(f"--out {printable(out)}: holds files allocbias ll144 did not write "
                                f"({_named(earlier.foreign)}); move them or choose another folder (nothing was "
                                "written)")
    edited = [f for f in earlier.edited if f not in PUBLISHED and f not in earlier.kept]
    if edited:
        it = "it" if len(edited) == 1 else "them"
        raise LL144CommandError(f"--out {printable(out)}: {_named(edited)}: edited since allocbias ll144 wrote {it} "
                                f"(the SHA-256 ll144.json records differs); move {it} out of the folder to keep the "
                                f"changes, or delete {it}, and run again (nothing was written)")
    at_stake = [f for f in PUBLISHED if f in earlier.present and (earlier.ready or f in earlier.edited)
                and (out / f).read_bytes() != files[f]]
    if not at_stake:
        return {}
    names = _kept_names(earlier, at_stake)
    if not replace:
        why = " and ".join(w for w in (
            f"was ready to publish (audit date {printable(earlier.audit_date or 'not given')})" if earlier.ready else "",
            f"was edited since allocbias ll144 wrote it ({_named([f for f in at_stake if f in earlier.edited])})"
            if set(at_stake) & set(earlier.edited) else "") if w)
        raise LL144CommandError(f"--out {printable(out)}: its published summary {why}, and this run would replace "
                                f"it: pass --replace to keep it as {_named(list(names.values()))} beside the new one, "
                                "or choose another --out (nothing was written)")
    return names


def _json_text(doc: dict[str, Any]) -> str:
    """``doc`` as JSON text (UTF-8, indented) with every control character escaped: JSON escapes C0 itself, and
    here DEL, the C1 characters and the line separators too, so that showing the file runs nothing.

    >>> _json_text({"g": "a" + chr(0x9b) + "b"}) == '{\\n  "g": "a\\\\u009bb"\\n}\\n'
    True
    """
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False, default=str)
    return re.sub("[\x7f-\x9f\u2028\u2029]", lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def _render_files(audit: ll144.BiasAudit, source: dict[str, Any], filing: dict[str, Any],
                  tables: dict[str, pd.DataFrame]) -> dict[str, bytes]:
    """Every file of the audit but ``ll144.json``, as bytes (UTF-8); ``tables`` are the category tables as written
    (:func:`output_table`)."""
    context, published = _context(audit, source), _published(audit, filing)
    files: dict[str, str] = {"summary.md": render_summary(audit, source, context=context),
                             "report.html": render_html(audit, source, context=context),
                             "published_summary.md": render_published_summary(audit, filing, published=published),
                             "published_summary.html": render_published_html(audit, filing, published=published)}
    for name, table in tables.items():
        files[f"tables/{_slug(name)}.csv"] = _csv_safe(table).to_csv(index=False)
    files["tables/unknown.csv"] = _csv_safe(output_table(audit.unknown)).to_csv(index=False)
    files["tables/excluded.csv"] = _csv_safe(output_table(audit.excluded)).to_csv(index=False)
    if audit.regression is not None:
        files["tables/regression.csv"] = _csv_safe(output_table(audit.regression)).to_csv(index=False)
    for name, curve in audit.curves.items():
        files[f"tables/curve_{_slug(name)}.csv"] = curve.rename(columns=str).reset_index().to_csv(index=False)
    return {k: v.encode("utf-8") for k, v in files.items()}


def _disk_error(exc: OSError, what: str, out: Path, existed: bool) -> OutputError:
    """One line naming the file that could not be written and what was kept."""
    cause = exc.__cause__ if isinstance(exc, OutputError) and isinstance(exc.__cause__, OSError) else exc
    why = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up"}.get(
        cause.errno, cause.strerror or str(cause))
    kept = (f"{printable(out)} is as it was (the earlier audit is kept)" if existed
            else f"nothing was written ({printable(out)} was not created)")
    return OutputError(cause.errno, f"could not write {printable(what)}: {why}; {kept}")


def write_audit(audit: ll144.BiasAudit, out: str | Path, source: dict[str, Any], command: str | None = None,
                filing: dict[str, Any] | None = None, *, replace: bool = False,
                notes: Sequence[str] = ()) -> Written:
    """Write the audit's files into ``out`` through a temporary folder renamed when complete.

    ``out`` may not exist yet, be an empty folder, or hold an earlier ``allocbias ll144`` output and nothing
    else: the files that run recorded in ``ll144.json`` are replaced. Refused before anything is written, naming
    the files: a folder holding any other file (a note of yours, another tool's output); a file the earlier run
    wrote and someone edited since (``ll144.json`` records every file's SHA-256); an earlier published summary that
    was ready to publish (or edited: signed, say) which this run would change, unless ``replace``: then it is kept
    beside the new one as ``published_summary-<its audit date>.md`` (and ``.html``), and every summary kept so is
    carried into later outputs. Each file is written whole (:func:`allocbias.outputs.write_atomic`); on a full disk
    the error names the file and ``out`` stays as it was. What killed runs left is removed first
    (:func:`clean_leftovers`).
    """
    out = Path(out)
    filing, _ = check_filing({k: v for k, v in (filing or {}).items() if v != ""})
    if out.exists() and not out.is_dir():
        raise LL144CommandError(f"--out {printable(out)}: exists and is not a folder; choose another folder")
    notes = [*notes, *clean_leftovers(out)]
    earlier = _earlier(out)
    tables = {str(n): output_table(p.drop(columns=["table"])) for n, p in audit.table.groupby("table", sort=False)}
    files = _render_files(audit, source, filing, tables)
    kept = _carried(out, earlier, files, replace)
    for old_name, new_name in kept.items():
        files[new_name] = (out / old_name).read_bytes()
    for name in earlier.kept:
        files.setdefault(name, (out / name).read_bytes())
    missing = filing_missing(filing)
    doc = {"program": "allocbias ll144", "version": tool_version(), "command": command, "input": source,
           "options": audit.options, "filing": filing, "ready": not missing, "missing": missing,
           "notes": list(notes), "kind": audit.kind, "shape": audit.shape,
           "n_applicants": audit.n_applicants, "median": audit.median, "four_fifths_note": FOUR_FIFTHS_NOTE,
           "exclude_rule": _exclude_rule(audit.options), "warnings": list(audit.warnings),
           "tables": {n: _records(t) for n, t in tables.items()},
           "unknown": _records(output_table(audit.unknown)), "excluded": _records(output_table(audit.excluded)),
           "regression": _records(None if audit.regression is None else output_table(audit.regression)),
           "kept": sorted({*earlier.kept, *kept.values()}),
           "files": sorted([*files, "ll144.json"]),
           "digests": {rel: sha256_bytes(data) for rel, data in sorted(files.items())}}
    files["ll144.json"] = _json_text(doc).encode("utf-8")
    _swap_in(out, files)
    return Written(out, audit, tuple(sorted(files)), tuple(kept.values()), tuple(notes), tuple(missing))


def _swap_in(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into ``.OUT.partial-PID`` beside ``out`` (each with :func:`allocbias.outputs.write_atomic`),
    then move an earlier ``out`` aside and rename the new folder into place: a reader, or a run killed at any
    point, sees the earlier output or the new one, never a mix (:func:`clean_leftovers` tidies up after a kill)."""
    existed = out.exists()
    parent = Path(os.path.abspath(out)).parent  # where clean_leftovers looks (a link in the path is not followed)
    tmp = parent / f"{temporary_prefix(out)}{os.getpid()}"
    old = parent / f".{out.name}{_OLD}{os.getpid()}"
    what = str(out)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        for rel, data in files.items():
            what = str(out / rel)
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            write_atomic(tmp / rel, data)
        what = str(out)
        if existed:
            shutil.rmtree(old, ignore_errors=True)  # an earlier run of this very process that did not finish
            out.rename(old)
        tmp.rename(out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not out.exists():
            old.rename(out)
        if isinstance(exc, OSError):
            raise _disk_error(exc, what, out, existed) from exc
        raise
    try:
        shutil.rmtree(old, ignore_errors=True)
        fsync_dir(parent)
    except KeyboardInterrupt:
        raise Interrupted(f"allocbias ll144: interrupted after the audit was written whole to {printable(out)}") \
            from None


def run_ll144(data: str | Path, out: str | Path, *, sex: str | None = "sex", race: str | None = "race_ethnicity",
              selected: str = "selected", score: str = "score", applicants: str = "applicants",
              unknown: Any = ll144.NON_ANSWERS, exclude_below: float | None = ll144.EXCLUDE_BELOW,
              exclude_base: str = "known", tool: str | None = None, sheet: str | int | None = None,
              encoding: str | None = None, sep: str | None = None, draws: int = 4000, seed: int = 0,
              command: str | None = None, filing: dict[str, Any] | None = None, replace: bool = False) -> Written:
    """Read DATA, audit it (:func:`allocbias.ll144.bias_audit`, whole counts only) and write the files to ``out``.

    Every problem with the input or the filing fields (:func:`check_filing`) raises :class:`LL144CommandError`
    naming the file (and the column and row) or the option before anything is written.
    """
    path = Path(data)
    filing, filing_notes = check_filing(filing)
    read = load_data(path, sheet=sheet, encoding=encoding, sep=sep, needed=[c for c in (sex, race) if c],
                     outcome=[selected, score, applicants])
    try:
        audit = ll144.bias_audit(read.frame, sex=sex, race=race, selected=selected, score=score,
                                 applicants=applicants, tool=tool, unknown=unknown, exclude_below=exclude_below,
                                 exclude_base=exclude_base, integer_counts=True, draws=draws, seed=seed)
    except ValueError as exc:
        hint = f"; {read.hint}" if read.hint else ""
        raise LL144CommandError(f"{printable(path.name)}: {' '.join(str(exc).split())}{hint}") from None
    source = {"file": path.name, "sha256": file_sha256(path), "bytes": path.stat().st_size, "rows": len(read.frame),
              "sheet": read.sheet, "encoding": read.encoding, "separator": read.sep}
    return write_audit(audit, out, source, command, filing, replace=replace, notes=[*read.notes, *filing_notes])
