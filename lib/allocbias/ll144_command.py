"""``allocbias ll144 DATA --out FOLDER``: a Local Law 144 bias audit of an employer's own data, as files.

:func:`read_data` reads DATA (CSV, Parquet or Excel) with its rows numbered as a spreadsheet shows them (the
header is row 1, the first data row is row 2), so that every error names the file, the column and the row;
:func:`allocbias.ll144.bias_audit` computes the audit; :func:`write_audit` writes

* ``published_summary.md`` and ``published_summary.html``: what the DCWP rules require the published summary
  to show (the filing fields given as options, the applicants, those of unknown category, every category's rate
  and impact ratio, the excluded categories with their justification), and nothing else;
* ``summary.md`` and ``report.html``, the full technical report (every string that comes from the input is escaped: HTML through Jinja2's
  autoescape, Markdown by backslash-escaping its punctuation after HTML-escaping);
* ``tables/*.csv`` (rates and ratios as fractions; a text cell that a spreadsheet would read as a formula,
  starting with ``=``, ``+``, ``-`` or ``@``, is prefixed with ``'``);
* ``ll144.json`` (everything, machine-readable, with the input's SHA-256, the options, the tool's version and
  the list of files written).

Counts are whole numbers in the CSV files; every interval or bound column ends in ``_low``/``_high``
(:data:`OUTPUT_NAMES`); an excluded group's ratio is blank ("not compared" in the reports). The folder is
written under a temporary name beside ``--out`` and renamed when complete: bad input, or any failure, leaves
``--out`` as it was (absent, or the previous audit). Only files an earlier run recorded writing are replaced: a
folder holding anything else is refused, naming those files.
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

__all__ = ["READERS", "LL144CommandError", "output_table", "read_data", "render_published_html",
           "render_published_summary", "render_summary", "run_ll144", "tool_version", "write_audit"]

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

_MD_SPECIAL = re.compile(r"([\\`*\[\]|<>])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _md(value: Any) -> str:
    """An input-derived string made inert in Markdown yet readable as plain text: ``&``, ``<`` and ``>``
    HTML-escaped, and only the characters that can start markup backslash-escaped (backslash, backtick, ``*``,
    brackets, ``|``, and ``_`` at a word's edge); dots, parentheses, ``%`` and ``_`` inside a word stay as typed.

    >>> print(_md("sel_yesno.csv (highest rate) 0.82% <b>|*x*"))
    sel_yesno.csv (highest rate) 0.82% &lt;b&gt;\\|\\*x\\*
    """
    text = html.escape(str(value), quote=False)
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text).replace("\n", " ")


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


def render_html(audit: ll144.BiasAudit, source: dict[str, Any]) -> str:
    """``report.html``: one self-contained page; Jinja2 autoescape escapes every value from the input."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_HTML).render(**_context(audit, source))


def tool_version() -> str:
    """allocbias's version, from the installed package's metadata (``importlib.metadata``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("allocbias")
    except PackageNotFoundError:
        return "unknown (not installed)"


#: The fields of the published summary (6 RCNY § 5-303) the command takes as options, with their option names.
FILING_FIELDS = {"audit_date": "--audit-date", "data_source": "--data-source", "data_explanation": "--data-explanation",
                 "distribution_date": "--distribution-date", "employer": "--employer", "tool_name": "--tool-name",
                 "auditor": "--auditor"}
#: The fields the rules require; the others (employer, tool, auditor) are shown when given.
FILING_REQUIRED = ("audit_date", "data_source", "data_explanation", "distribution_date")
DATA_SOURCES = {"historical": "historical data (the employer's own use of the tool)",
                "test": "test data (historical data were insufficient)"}


def _published(audit: ll144.BiasAudit, filing: dict[str, Any]) -> dict[str, Any]:
    """What the published summary shows, as display strings: the filing fields (a missing required one says
    which option gives it), the applicants, those of unknown category, each category's rate and ratio, and the
    excluded categories with their justification, applicants and rate."""
    missing = [FILING_FIELDS[k] for k in FILING_REQUIRED if not filing.get(k)]
    def field(key: str) -> str:
        v = filing.get(key)
        if key == "data_source" and v:
            return DATA_SOURCES.get(str(v), str(v))
        return str(v) if v else f"not given (pass {FILING_FIELDS[key]})"
    rate = "scoring rate" if audit.kind == "scoring" else "selection rate"
    names = [str(n) for n in audit.table["table"].unique()]
    tables = []
    for name, part in audit.table.groupby("table", sort=False):
        rows = []
        for _, r in part[~part["unknown"]].iterrows():
            excluded = bool(r["excluded"])
            rows.append({"group": str(r["group"]), "applicants": _count(r["applicants"]),
                         "rate": _num(r["rate"]), "ratio": NOT_COMPARED if excluded else _num(r["impact_ratio"])})
        n_unknown = part.loc[part["unknown"], "applicants"].sum()
        tables.append({"heading": _heading(str(name), names), "rows": rows, "n_unknown": _count(n_unknown)})
    excluded = [{"category": _heading(str(r["category"]), names), "group": str(r["group"]),
                 "applicants": _count(r["applicants"]),
                 "rate": _num(audit.table.loc[(audit.table["table"] == r["category"])
                                              & (audit.table["group"] == r["group"]), "rate"].iloc[0]),
                 "reason": str(r["reason"])} for _, r in audit.excluded.iterrows()]
    return {"fields": [(label, field(key)) for key, label in (
                ("employer", "Employer or employment agency"), ("tool_name", "Automated employment decision tool"),
                ("auditor", "Independent auditor"), ("audit_date", "Date of the bias audit"),
                ("data_source", "Source of the data"), ("data_explanation", "Explanation of the data"),
                ("distribution_date", "Distribution date of the tool")) if key in FILING_REQUIRED or filing.get(key)],
            "missing": missing, "rate": rate, "n_applicants": _count(audit.n_applicants), "tables": tables,
            "excluded": excluded, "exclude_rule": _exclude_rule(audit.options), "version": tool_version(),
            "four_fifths_note": FOUR_FIFTHS_NOTE}


def render_published_summary(audit: ll144.BiasAudit, filing: dict[str, Any]) -> str:
    """``published_summary.md``: exactly what the DCWP rules (6 RCNY § 5-300 ff.) require a published summary of
    the results of a bias audit to show, as plain Markdown (input-derived strings made inert by :func:`_md`)."""
    p = _published(audit, filing)
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


def render_published_html(audit: ll144.BiasAudit, filing: dict[str, Any]) -> str:
    """``published_summary.html``: :func:`render_published_summary` as one self-contained page (autoescaped)."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_PUBLISHED_HTML).render(**_published(audit, filing))


_TEXT = {"group", "note", "category"}  # the cells that come from the input (numbers are formatted here)


def render_summary(audit: ll144.BiasAudit, source: dict[str, Any]) -> str:
    """``summary.md``: the same content as Markdown, every input-derived string made inert (:func:`_md`)."""
    c = _context(audit, source)
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


def _earlier_files(out: Path) -> list[str]:
    """The files in ``out`` (relative, ``/``-separated) that no earlier ``allocbias ll144`` run recorded writing
    there (``ll144.json``'s ``files``); an output of a version that recorded nothing owns its usual files."""
    present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() or p.is_symlink())
    owned: set[str] = set()
    record = out / "ll144.json"
    if record.is_file():
        try:
            doc = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and doc.get("program") == "allocbias ll144":
            owned = {"ll144.json", *map(str, doc.get("files") or [])}
            if "files" not in doc:
                owned |= {f for f in present if f in ("summary.md", "report.html")
                          or re.fullmatch(r"tables/[a-z0-9_]+\.csv", f)}
    return [f for f in present if f not in owned]


def write_audit(audit: ll144.BiasAudit, out: str | Path, source: dict[str, Any], command: str | None = None,
                filing: dict[str, Any] | None = None) -> Written:
    """Write the audit's files into ``out`` through a temporary folder renamed when complete.

    ``out`` may not exist yet, be an empty folder, or hold an earlier ``allocbias ll144`` output and nothing
    else: the files that run recorded in ``ll144.json`` are replaced. A folder holding any other file (a note of
    yours, another tool's output) is refused, naming those files, before anything is written.
    """
    out = Path(out)
    filing = {k: v for k, v in (filing or {}).items() if v not in (None, "")}
    if out.exists() and not out.is_dir():
        raise LL144CommandError(f"--out {out}: exists and is not a folder; choose another folder")
    if out.is_dir():
        foreign = _earlier_files(out)
        if foreign:
            shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
            raise LL144CommandError(f"--out {out}: holds files allocbias ll144 did not write ({shown}); move them "
                                    "or choose another folder (nothing was written)")
    files: dict[str, str | bytes] = {"summary.md": render_summary(audit, source),
                                     "report.html": render_html(audit, source),
                                     "published_summary.md": render_published_summary(audit, filing),
                                     "published_summary.html": render_published_html(audit, filing)}
    for name, part in audit.table.groupby("table", sort=False):
        files[f"tables/{_slug(str(name))}.csv"] = _csv_safe(output_table(part.drop(columns=["table"]))).to_csv(index=False)
    files["tables/unknown.csv"] = _csv_safe(output_table(audit.unknown)).to_csv(index=False)
    files["tables/excluded.csv"] = _csv_safe(output_table(audit.excluded)).to_csv(index=False)
    if audit.regression is not None:
        files["tables/regression.csv"] = _csv_safe(output_table(audit.regression)).to_csv(index=False)
    for name, curve in audit.curves.items():
        files[f"tables/curve_{_slug(name)}.csv"] = curve.rename(columns=str).reset_index().to_csv(index=False)
    doc = {"program": "allocbias ll144", "version": tool_version(), "command": command, "input": source,
           "options": audit.options, "filing": filing, "kind": audit.kind, "shape": audit.shape,
           "n_applicants": audit.n_applicants, "median": audit.median, "four_fifths_note": FOUR_FIFTHS_NOTE,
           "exclude_rule": _exclude_rule(audit.options), "warnings": list(audit.warnings),
           "tables": {str(n): _records(output_table(p.drop(columns=["table"])))
                      for n, p in audit.table.groupby("table", sort=False)},
           "unknown": _records(output_table(audit.unknown)), "excluded": _records(output_table(audit.excluded)),
           "regression": _records(None if audit.regression is None else output_table(audit.regression)),
           "files": sorted([*files, "ll144.json"])}
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
              unknown: Any = ll144.NON_ANSWERS, exclude_below: float | None = ll144.EXCLUDE_BELOW,
              exclude_base: str = "known", tool: str | None = None, sheet: str | int | None = None, draws: int = 4000,
              seed: int = 0, command: str | None = None, filing: dict[str, Any] | None = None) -> Written:
    """Read DATA, audit it (:func:`allocbias.ll144.bias_audit`, whole counts only) and write the files to ``out``.

    Every problem with the input raises :class:`LL144CommandError` naming the file (and the column and row)
    before anything is written.
    """
    path = Path(data)
    frame = read_data(path, sheet=sheet)
    try:
        audit = ll144.bias_audit(frame, sex=sex, race=race, selected=selected, score=score, applicants=applicants,
                                 tool=tool, unknown=unknown, exclude_below=exclude_below, exclude_base=exclude_base,
                                 integer_counts=True,
                                 draws=draws, seed=seed)
    except ValueError as exc:
        raise LL144CommandError(f"{path.name}: {' '.join(str(exc).split())}") from None
    source = {"file": path.name, "sha256": file_sha256(path), "bytes": path.stat().st_size, "rows": len(frame),
              "sheet": sheet}
    if filing and filing.get("data_source") not in (None, *DATA_SOURCES):
        raise LL144CommandError(f"--data-source must be one of {list(DATA_SOURCES)}, got {filing['data_source']!r}")
    return write_audit(audit, out, source, command, filing)
