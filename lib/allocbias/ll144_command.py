"""``allocbias ll144 DATA --out FOLDER``: a Local Law 144 bias audit of an employer's own data, as files.

:func:`read_data` reads DATA (CSV, Parquet or Excel) with its rows numbered as a spreadsheet shows them (the
header is row 1, the first data row is row 2), so that every error names the file, the column and the row;
:func:`allocbias.ll144.bias_audit` computes the audit; :func:`write_audit` writes

* ``summary.md`` and ``report.html`` (every string that comes from the input is escaped: HTML through Jinja2's
  autoescape, Markdown by backslash-escaping its punctuation after HTML-escaping);
* ``tables/*.csv`` (rates and ratios as fractions; a text cell that a spreadsheet would read as a formula,
  starting with ``=``, ``+``, ``-`` or ``@``, is prefixed with ``'``);
* ``ll144.json`` (everything, machine-readable, with the input's SHA-256 and the options).

The folder is written under a temporary name beside ``--out`` and renamed when complete: bad input, or any
failure, leaves ``--out`` as it was (absent, or the previous audit).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .measures import ll144
from .audited.datasets import file_sha256

__all__ = ["READERS", "LL144CommandError", "read_data", "render_summary", "run_ll144", "write_audit"]

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


def read_data(path: str | Path, *, sheet: str | int | None = None) -> pd.DataFrame:
    """DATA as a frame of text and numbers, indexed by spreadsheet row number (header = row 1).

    CSV cells are read as text (an empty cell is missing; ``NA`` or ``N/A`` is a label like any other, which the
    audit's list of non-answers may name); Excel cells as the sheet stores them, read by the ``calamine`` engine
    (python-calamine: about ten times faster than openpyxl), with the same rule for empty and ``N/A`` cells;
    Parquet columns with their types. Empty text and cells of spaces only are left as they are here: the audit
    reads every one of them, in every format, as the unknown category ``(blank)``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> _ = p.write_text("sex,selected\\nF,yes\\nM,no\\n")
    >>> read_data(p).index.tolist()
    [2, 3]
    """
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise LL144CommandError(f"{path}: no such file")
    kind = READERS.get(path.suffix.lower())
    if kind is None:
        raise LL144CommandError(f"{name}: unknown file type {path.suffix!r}; give a .csv, .parquet or .xlsx file")
    if path.stat().st_size == 0:
        raise LL144CommandError(f"{name}: the file is empty")
    try:
        if kind == "csv":
            frame = pd.read_csv(path, dtype=object, keep_default_na=False, na_values=[""], skipinitialspace=False)
        elif kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_excel(path, sheet_name=0 if sheet is None else sheet, dtype=object, engine=EXCEL_ENGINE,
                                  keep_default_na=False, na_values=[""])
    except pd.errors.EmptyDataError:
        raise LL144CommandError(f"{name}: the file is empty") from None
    except Exception as exc:  # any parser's error: one line naming the file (and the sheet)
        where = f", sheet {sheet!r}" if kind == "excel" and sheet is not None else ""
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise LL144CommandError(f"{name}{where}: cannot read the {kind} file: {detail}") from None
    if sheet is not None and kind != "excel":
        raise LL144CommandError(f"{name}: --sheet applies to Excel files only")
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(frame) == 0:
        raise LL144CommandError(f"{name}: the file has a header but no rows")
    frame.index = pd.RangeIndex(FIRST_ROW, FIRST_ROW + len(frame))
    return frame


# --------------------------------------------------------------------------- rendering

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def _md(value: Any) -> str:
    """An input-derived string made inert in Markdown: HTML-escaped, then Markdown punctuation backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=True)).replace("\n", " ")


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


_SHOWN = [("group", "group"), ("applicants", "applicants"), ("selected", "selected"), ("rate", "rate"),
          ("rate_ci", "rate 95% interval"), ("share", "share of known"), ("impact_ratio", "impact ratio"),
          ("impact_ratio_ci", "ratio 95% interval"), ("below_0_8", "below 0.8"),
          ("bounds", "ratio if unknowns joined (worst case)"), ("bounds_prop", "(proportional)"), ("note", "note")]


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
    return rows


def _context(audit: ll144.BiasAudit, source: dict[str, Any]) -> dict[str, Any]:
    rate_word = ("scoring rates (shares scored above the sample median)" if audit.kind == "scoring"
                 else "selection rates")
    tables = []
    for name, part in audit.table.groupby("table", sort=False):
        flagged = part[part["four_fifths"]]
        tables.append({"name": str(name), "rows": _display_rows(part, audit.kind),
                       "flagged": [str(g) for g in flagged["group"]],
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
        "columns": [(k, "above the median" if k == "selected" and audit.kind == "scoring" else h) for k, h in _SHOWN],
        "unknown": [{"category": str(r["category"]), "n": _count(r["n_unknown"]), "share": _num(r["share_unknown"])}
                    for _, r in audit.unknown.iterrows()],
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
{{ n_applicants }} applicants{% if median %}; sample median score {{ median }}{% endif %}.</p>
{% if warnings %}<h2>Warnings</h2><ul>{% for w in warnings %}<li>{{ w }}</li>{% endfor %}</ul>{% endif %}
{% for t in tables %}<h2>By {{ t.name }}</h2>
<p>{% if t.flagged %}Below 0.8: <span class="flag">{{ t.flagged | join(", ") }}</span>.{% else %}No included group
below 0.8.{% endif %} Applicants of unknown category: {{ t.n_unknown }}.</p>
<table><tr>{% for key, head in columns %}<th>{{ head }}</th>{% endfor %}</tr>
{% for r in t.rows %}<tr>{% for key, head in columns %}<td{% if key in ("group", "note") %} class="t"{% endif %}>{{ r[key] }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endfor %}
<h2>Applicants of unknown category</h2>
<table><tr><th>category</th><th>applicants</th><th>share of all</th></tr>
{% for u in unknown %}<tr><td>{{ u.category }}</td><td>{{ u.n }}</td><td>{{ u.share }}</td></tr>{% endfor %}</table>
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


def render_html(audit: ll144.BiasAudit, source: dict[str, Any]) -> str:
    """``report.html``: one self-contained page; Jinja2 autoescape escapes every value from the input."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_HTML).render(**_context(audit, source))


_TEXT = {"group", "note", "category"}  # the cells that come from the input (numbers are formatted here)


def render_summary(audit: ll144.BiasAudit, source: dict[str, Any]) -> str:
    """``summary.md``: the same content as Markdown, every input-derived string made inert (:func:`_md`)."""
    c = _context(audit, source)
    out = ["# Local Law 144 bias audit", "", f"> {c['four_fifths_note']}", "",
           f"Input `{source['sha256']}` ({_md(source['file'])}, {source['rows']} rows, one row per "
           f"{'applicant' if audit.shape == 'applicants' else 'category'}); a {audit.kind} tool: rates are "
           f"{c['rate_word']}. {c['n_applicants']} applicants"
           + (f"; sample median score {c['median']}." if c["median"] else "."), ""]
    if c["warnings"]:
        out += ["## Warnings", ""] + [f"- {_md(w)}" for w in c["warnings"]] + [""]
    for t in c["tables"]:
        flagged = ", ".join(_md(g) for g in t["flagged"]) or "none"
        out += [f"## By {_md(t['name'])}", "", f"Included groups below 0.8: {flagged}. Applicants of unknown "
                f"category: {t['n_unknown']}.", "",
                "| " + " | ".join(h for _, h in c["columns"]) + " |",
                "|" + "|".join(" --- " for _ in c["columns"]) + "|"]
        out += ["| " + " | ".join(_md(r[k]) if k in _TEXT else r[k] for k, _ in c["columns"]) + " |"
                for r in t["rows"]] + [""]
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
    """Text cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first) get a leading ``'``."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].astype(object).map(lambda v: "'" + v if isinstance(v, str) and v[:1] in ("=", "+", "-", "@") else v)
    return out


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


def write_audit(audit: ll144.BiasAudit, out: str | Path, source: dict[str, Any], command: str | None = None) -> Written:
    """Write the audit's files into ``out`` through a temporary folder renamed when complete.

    ``out`` may not exist yet, be an empty folder, or hold a previous ``allocbias ll144`` output (``ll144.json``),
    which is replaced; any other existing path is refused before anything is written.
    """
    out = Path(out)
    if out.exists() and not (out.is_dir() and (not any(out.iterdir()) or (out / "ll144.json").is_file())):
        raise LL144CommandError(f"--out {out}: exists and is not an empty folder or an earlier ll144 output; "
                                "choose another folder")
    files: dict[str, str | bytes] = {"summary.md": render_summary(audit, source),
                                     "report.html": render_html(audit, source)}
    for name, part in audit.table.groupby("table", sort=False):
        files[f"tables/{_slug(str(name))}.csv"] = _csv_safe(part.drop(columns=["table"])).to_csv(index=False)
    files["tables/unknown.csv"] = _csv_safe(audit.unknown).to_csv(index=False)
    files["tables/excluded.csv"] = _csv_safe(audit.excluded).to_csv(index=False)
    if audit.regression is not None:
        files["tables/regression.csv"] = _csv_safe(audit.regression).to_csv(index=False)
    for name, curve in audit.curves.items():
        files[f"tables/curve_{_slug(name)}.csv"] = curve.rename(columns=str).reset_index().to_csv(index=False)
    doc = {"program": "allocbias ll144", "command": command, "input": source, "options": audit.options,
           "kind": audit.kind, "shape": audit.shape, "n_applicants": audit.n_applicants, "median": audit.median,
           "four_fifths_note": FOUR_FIFTHS_NOTE, "warnings": list(audit.warnings),
           "tables": {str(n): _records(p.drop(columns=["table"])) for n, p in audit.table.groupby("table", sort=False)},
           "unknown": _records(audit.unknown), "excluded": _records(audit.excluded),
           "regression": _records(audit.regression)}
    files["ll144.json"] = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{out.name}.partial-{os.getpid()}"
    old = parent / f".{out.name}.old-{os.getpid()}"
    try:
        for rel, text in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if out.exists():
            out.rename(old)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not out.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return Written(out, audit, tuple(sorted(files)))


def run_ll144(data: str | Path, out: str | Path, *, sex: str | None = "sex", race: str | None = "race_ethnicity",
              selected: str = "selected", score: str = "score", applicants: str = "applicants",
              unknown: Any = ll144.NON_ANSWERS, exclude_below: float | None = ll144.EXCLUDE_BELOW, tool: str | None = None,
              sheet: str | int | None = None, draws: int = 4000, seed: int = 0, command: str | None = None) -> Written:
    """Read DATA, audit it (:func:`allocbias.ll144.bias_audit`, whole counts only) and write the files to ``out``.

    Every problem with the input raises :class:`LL144CommandError` naming the file (and the column and row)
    before anything is written.
    """
    path = Path(data)
    frame = read_data(path, sheet=sheet)
    try:
        audit = ll144.bias_audit(frame, sex=sex, race=race, selected=selected, score=score, applicants=applicants,
                                 tool=tool, unknown=unknown, exclude_below=exclude_below, integer_counts=True,
                                 draws=draws, seed=seed)
    except ValueError as exc:
        raise LL144CommandError(f"{path.name}: {' '.join(str(exc).split())}") from None
    source = {"file": path.name, "sha256": file_sha256(path), "bytes": path.stat().st_size, "rows": len(frame),
              "sheet": sheet}
    return write_audit(audit, out, source, command)
