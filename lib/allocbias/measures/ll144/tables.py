"""Local Law 144 audit tables from counts: impact-ratio tables, the 2% rule, bounds for unknown categories,
the counts of simulated allocations and scoring tools, and the check of published tables against their counts
(Gerchick et al.'s published audits).

A Local Law 144 bias audit publishes, per category (sex, race/ethnicity and their intersection), the number of
applicants, the number selected (or scored above the median), the selection (or scoring) rate and the impact ratio
against the category with the highest rate. Reading and naming the labels of a category (unknown, total, case
and spaces) is done once here (:func:`_clean_labels`) for every entry point.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from ..disaggregate import cell_frames
from .regression import FOUR_FIFTHS, QUANTILE_METHOD, _as_scores, _check_bound

__all__: list[str] = []

__all__: list[str] = []

# =========================================================================== audit tables from counts
#
# A Local Law 144 bias audit publishes, per category (sex, race/ethnicity and their intersection), the number of
# applicants, the number selected (or scored above the median), the selection (or scoring) rate and the impact
# ratio against the category with the highest rate. The functions below compute that table from counts (a CSV of
# counts, or an allocation simulated by the study), apply the rules' option to exclude categories below 2% of the
# data, bound the ratios for applicants whose category is unknown, and check published tables against their counts.

__all__ += [
    "DEFAULT_TOTAL",
    "BLANK",
    "DEFAULT_UNKNOWN",
    "EXCLUDE_BASES",
    "NON_ANSWERS",
    "EXCLUDE_BELOW",
    "allocation_counts",
    "compare_reported",
    "impact_ratio_table",
    "missing_data_bounds",
    "published_audit_headlines",
    "published_audit_rows",
    "scores_consistent_with_rates",
    "scoring_counts",
]

#: Category labels that mean "unknown race or sex": counted, never compared as a group.
DEFAULT_UNKNOWN: tuple[str, ...] = ("Unknown", "Missing/Unknown")
#: The non-answers an employer's applicant file commonly holds: each is unknown (counted on its own line of the
#: unknown table, never compared). ``allocbias ll144`` and :func:`~allocbias.measures.ll144.bias_audit` use them
#: unless told otherwise. Matched with case and surrounding spaces ignored: the placeholders a spreadsheet or a
#: database export writes for nothing (``NA``, ``N/A``, ``#N/A``, ``NaN``, ``null``, ``None``, ``-``, ``?``) are
#: non-answers too, never a group of applicants.
NON_ANSWERS: tuple[str, ...] = ("Unknown", "Missing/Unknown", "Missing", "Decline to answer", "Declined to answer",
                                "Decline to state", "Declined to state", "Declined", "Prefer not to say", "Prefer not to answer",
                                "Not disclosed", "Undisclosed", "Did not self-identify", "Not specified",
                                "Not provided", "No answer", "N/A", "NA", "#N/A", "NaN", "null", "None", "-", "?")
#: What the 2% rule's share is of ("less than 2% of the data being used for the bias audit", 6 RCNY § 5-301):
#: ``"known"`` the applicants of known category (the default: an unknown applicant belongs to no category and
#: the share of a category among those whose category is known), ``"all"`` every applicant, unknowns included
#: (the stricter reading of "the data being used": it excludes more groups when many are unknown).
EXCLUDE_BASES: tuple[str, ...] = ("known", "all")
#: The label of an empty category cell (missing, empty text or spaces only): unknown, on its own line.
BLANK = "(blank)"
#: Label of a row that sums over a category (the sex table of a report has race "Total").
DEFAULT_TOTAL = "Total"
#: The rules' option: a category below this share of the applicants may be left out of the impact ratios.
EXCLUDE_BELOW = 0.02

_TABLE_COLUMNS = ["category", "group", "applicants", "selected", "rate", "share", "excluded", "unknown",
                  "comparator", "impact_ratio", "four_fifths", "note"]


def _as_columns(cols: Any, what: str) -> list[str]:
    if cols is None:
        return []
    out = [cols] if isinstance(cols, str) else list(cols)
    if not out and what == "group":
        raise ValueError("group names no column: give one column name or several")
    return out


def _unknown_list(unknown: Any) -> list:
    if unknown is None:
        return []
    return [unknown] if isinstance(unknown, str) else list(dict.fromkeys(unknown))


def _unknown_set(unknown: Any) -> set:
    return set(_unknown_list(unknown))


def _at(label: Any) -> str:
    """A row's index label as an error names it: ``7``, not ``np.int64(7)``."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def _fold(label: Any) -> Any:
    """A label as it is compared with the unknown and total labels: surrounding spaces dropped, case folded."""
    return label.strip().casefold() if isinstance(label, str) else label


def _clean_labels(frame: pd.DataFrame, cols: list[str], unknown: Any, total: Any, by: list[str],
                  duplicates: bool = True) -> pd.DataFrame:
    """Normalise the label spellings of ``cols`` and refuse labels that cannot be counted as groups.

    * every spelling of an unknown label that differs only in case or surrounding spaces (``unknown``,
      ``Unknown ``, ``MISSING/UNKNOWN``) becomes the label as ``unknown`` gives it;
    * surrounding spaces are dropped from every other text label (``"Female "`` is ``"Female"``);
    * a label that reads "total" but is not ``total`` itself (a lowercase ``total`` row, or any total row when
      ``total`` is None) is refused: it sums other rows, and counting it as a group doubles the applicants;
    * two labels of one column that differ only in case are refused (``female`` and ``Female``);
    * two rows with the same labels in every column of ``cols`` (within a cell of ``by``) are refused, unless
      the row holds no known label (unknown or total in every column): unknown rows are summed into the count
      of unknown applicants (``duplicates=False`` skips this check: rows of applicants, not of groups).
    """
    unk = _unknown_list(unknown)
    canon = {_fold(u): u for u in reversed(unk)}  # the first spelling given wins
    total_fold = _fold(total) if total is not None else None
    out = frame
    for col in cols:
        values = frame[col]
        mapping = {}
        folded: dict[Any, list] = {}
        for v in values.unique():  # the distinct labels, never the rows
            if not isinstance(v, str):
                folded.setdefault(v, []).append(v)
                continue
            f = _fold(v)
            if f in canon:
                if v != canon[f]:
                    mapping[v] = canon[f]
                continue
            if f == "total" or (total_fold is not None and f == total_fold):
                if v == total:
                    continue
                row = frame.index[(values == v).to_numpy()][0]
                hint = (f"write it {total!r} (it then sums the other rows) or remove it" if total is not None
                        else "remove it: the margins are computed from the categories' rows")
                raise ValueError(f"row {_at(row)}, column {col!r}: the label {v!r} is a total row, not a group; {hint}")
            stripped = v.strip()
            if stripped != v:
                mapping[v] = stripped
            folded.setdefault(f, []).append(stripped)
        for spellings in folded.values():
            distinct = list(dict.fromkeys(spellings))
            if len(distinct) > 1:
                rows = [frame.index[(values.map(lambda x: x.strip() if isinstance(x, str) else x) == d).to_numpy()][0]
                        for d in distinct[:2]]
                raise ValueError(f"column {col!r}: the labels {distinct[0]!r} (row {_at(rows[0])}) and {distinct[1]!r} "
                                 f"(row {_at(rows[1])}) differ only in case: spell each group one way")
        if mapping:
            if out is frame:
                out = frame.copy()
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
            renamed = np.array([mapping.get(u, u) if isinstance(u, str) else u for u in uniques], dtype=object)
            out[col] = np.where(codes >= 0, renamed[np.maximum(codes, 0)] if len(renamed) else None, None)
    if not duplicates:
        return out
    labels = out[cols].astype(object)
    no_known = (labels.isin(set(unk)) | (labels.eq(total) if total is not None else False)).all(axis=1)
    dup = out.duplicated([*by, *cols], keep=False).to_numpy() & ~no_known.to_numpy()
    if dup.any():
        rows = out.index[dup]
        first = out.loc[[rows[0]], [*by, *cols]].iloc[0]
        same = out.index[(out[[*by, *cols]] == first).all(axis=1).to_numpy()]
        raise ValueError(f"rows {_at(same[0])} and {_at(same[1])} repeat the group "
                         f"{', '.join(f'{c}={first[c]!r}' for c in cols)}"
                         f"{_where(by, tuple(first[c] for c in by))} (columns {cols}): list each group once "
                         "(duplicate rows are not summed)")
    return out


def _row(frame: pd.DataFrame, k: int, cols: list[str]) -> str:
    """``row 7 (sex='F', race='A')``: a row of ``frame`` by its index label and its group labels."""
    labels = ", ".join(f"{c}={frame[c].iloc[k]!r}" for c in cols)
    return f"row {_at(frame.index[k])} ({labels})"


def _check_count_frame(frame: Any, group: list[str], applicants: str, selected: str, by: list[str],
                       unknown: Any = None, total: Any = None) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in [*by, *group, applicants, selected] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}; it has {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(f"frame has no rows: group column(s) {group} name no group")
    for col in [*by, *group]:
        if frame[col].isna().any():
            raise ValueError(f"column {col!r} has {int(frame[col].isna().sum())} missing label(s), "
                             f"first at row {frame.index[frame[col].isna().to_numpy()][0]!r}")
    for col in (applicants, selected):
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            raise ValueError(f"column {col!r} must hold numeric counts, got dtype {frame[col].dtype}")
        v = frame[col].to_numpy(dtype=float)
        for bad, what in ((np.isinf(v), "is not finite"), (v < 0, "is negative")):
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{_row(frame, k, group)}, column {col!r}: the count {v[k]:g} {what}")
    a = frame[applicants].to_numpy(dtype=float)
    s = frame[selected].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        over = s > a * (1 + 1e-9) + 1e-9
    if over.any():
        k = int(np.flatnonzero(over)[0])
        raise ValueError(f"{_row(frame, k, group)}: column {selected!r} exceeds column {applicants!r}: {s[k]:g} "
                         f"selected of {a[k]:g} applicants")
    return _clean_labels(frame, group, unknown, total, by)


def _label(values: Sequence[Any]) -> str:
    return " ".join(str(v) for v in values)


def _where(by: list[str], key: tuple) -> str:
    return f" (in {', '.join(f'{c}={v!r}' for c, v in zip(by, key))})" if by else ""


def _analyses(cell: pd.DataFrame, group: list[str], total: Any, margins: bool,
              unknown: set) -> list[tuple[list[str], pd.DataFrame]]:
    """The tables of one cell: (columns compared, rows) for each margin and for the cross table."""
    is_total = {c: cell[c].eq(total).to_numpy() if total is not None else np.zeros(len(cell), bool) for c in group}
    # a column with no known label other than Total is summed over in this cell (a report's sex table has race
    # "Total", and its row of unknown sex may say "unknown" for race too)
    active = [c for c in group if (~is_total[c] & ~cell[c].astype(object).isin(unknown).to_numpy()).any()]
    if not active:
        return []
    cross = ~np.any([is_total[c] for c in active], axis=0)
    plans = [[c] for c in active] if len(active) > 1 and margins else []
    plans.append(active)
    out = []
    for cols in plans:
        if len(cols) == 1 and len(active) > 1:
            c = cols[0]
            reported = ~is_total[c] & np.all([is_total[o] for o in active if o != c], axis=0)
            rows = cell[reported] if reported.any() else cell[cross]  # a reported margin, else the sum of the cross table
        elif len(cols) == 1:
            rows = cell[~is_total[cols[0]]]
        else:
            rows = cell[cross]
        if len(rows):
            out.append((cols, rows))
    return out


def _exact(value: Any) -> Fraction | None:
    """A count as an exact fraction: the decimal number it is written as (the shortest decimal that reads back as
    the same float, ``repr``), so ``5133.66`` is 513366/100 and not the binary float nearest to it; ``None`` for a
    missing count."""
    x = float(value)
    if not np.isfinite(x):
        return None
    return Fraction(int(x)) if x.is_integer() else Fraction(repr(x))


def _exact_sums(rows: pd.DataFrame, keys: list[str], columns: list[str], grouped: pd.DataFrame
                ) -> dict[str, list[Fraction | None]]:
    """The sums of ``columns`` per group of ``keys`` as exact fractions, in the order of ``grouped`` (the float
    group-by's sums, ``sum(min_count=1)``). Whole counts (every count a whole number below 2**53) are summed exactly
    by the float sum itself, so its sums are taken as they are; other counts are read as the decimals they are
    written as and summed as fractions."""
    out: dict[str, list[Fraction | None]] = {}
    for col in columns:
        v = rows[col].to_numpy(dtype=float)
        finite = v[np.isfinite(v)]
        if np.all(finite == np.floor(finite)) and (np.abs(finite) < 2**53).all():
            sums = grouped[col]
        else:
            sums = rows.groupby(keys, sort=True, dropna=False)[col].agg(
                lambda s: None if s.isna().all() else sum((_exact(x) for x in s.dropna()), Fraction(0)))
            sums = sums.reindex(grouped.index)
        out[col] = [None if x is None or (isinstance(x, float) and not np.isfinite(x)) else
                    x if isinstance(x, Fraction) else Fraction(int(x)) for x in sums.tolist()]
    return out


def _sortable(values: np.ndarray, dtype: Any) -> bool:
    """Whether the labels of one column sort in Python as the group-by sorts them: all text, or a numeric column."""
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return isinstance(dtype, np.dtype)
    return all(type(v) is str for v in values)


def _group_counts(rows: pd.DataFrame, cols: list[str], applicants: str, selected: str, unknown: set
                  ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, list, list]:
    """The rows of one analysis summed per group (its labels in ``cols``, unknown or not): the labels of each group
    per column, whether it is known, its float sums of ``applicants`` and ``selected`` (``sum(min_count=1)`` of a
    group-by sorted by the labels) and their exact sums (:func:`_exact_sums`); the known groups first, then the
    unknown ones, each in the group-by's order.

    A table lists each group once (only unknown rows may repeat): where every group is one row and the labels sort
    in Python as the group-by sorts them, the rows are only put in that order (the sum of one count is the count),
    without building a group-by, which costs more than the table itself; otherwise the group-by sums them."""
    labels = [rows[c].to_numpy() for c in cols]
    is_unknown = np.zeros(len(rows), dtype=bool)
    for c, values in zip(cols, labels):
        is_unknown |= rows[c].astype(object).isin(unknown).to_numpy()
    keys = list(zip(*labels, is_unknown.tolist()))
    if len(set(keys)) == len(keys) and all(_sortable(v, rows[c].dtype) for c, v in zip(cols, labels)):
        order = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
        order = order[np.argsort(is_unknown[order], kind="stable")]
        a = rows[applicants].to_numpy(dtype=float)[order] + 0.0  # a sum of one count (-0.0 is 0.0, as the sum)
        s = rows[selected].to_numpy(dtype=float)[order] + 0.0
        exact = {col: _exact_column(v) for col, v in ((applicants, a), (selected, s))}
        return ({c: v[order] for c, v in zip(cols, labels)}, ~is_unknown[order], a, s, exact[applicants],
                exact[selected])
    keyed = rows[[*cols, applicants, selected]].assign(_unknown=is_unknown)
    grouped = keyed.groupby([*cols, "_unknown"], sort=True, dropna=False)[[applicants, selected]].sum(min_count=1)
    exact = _exact_sums(keyed, [*cols, "_unknown"], [applicants, selected], grouped)
    unknown_level = grouped.index.get_level_values("_unknown").to_numpy(dtype=bool)
    order = np.argsort(unknown_level, kind="stable")
    return ({c: grouped.index.get_level_values(c)[order].to_numpy() for c in cols}, ~unknown_level[order],
            grouped[applicants].to_numpy(dtype=float)[order], grouped[selected].to_numpy(dtype=float)[order],
            [exact[applicants][k] for k in order], [exact[selected][k] for k in order])


def _exact_column(v: np.ndarray) -> list[Fraction | None]:
    """One count per group as the exact fraction :func:`_exact_sums` gives for a group of one row."""
    finite = v[np.isfinite(v)]
    if np.all(finite == np.floor(finite)) and (np.abs(finite) < 2**53).all():
        return [Fraction(int(x)) if np.isfinite(x) else None for x in v.tolist()]
    return [_exact(x) for x in v.tolist()]


def _one_table(rows: pd.DataFrame, cols: list[str], group: list[str], applicants: str, selected: str,
               unknown: set, total: Any, exclude_below: float | None, bound: float, where: str,
               exclude_base: str = "known", keys: dict[str, Any] | None = None) -> pd.DataFrame:
    """The audit table of one analysis (rows already validated), after the columns ``keys`` (name: the cell's
    value) that label its cell."""
    levels, known, a, s, ea, es = _group_counts(rows, cols, applicants, selected, unknown)
    n_rows = len(known)
    category = " × ".join(cols)
    names = [_label(v) for v in zip(*(levels[c] for c in cols))]
    for k in np.flatnonzero(known):
        if np.isnan(a[k]) or np.isnan(s[k]):
            col = applicants if np.isnan(a[k]) else selected
            raise ValueError(f"column {col!r} has no count for group {names[k]!r} of {category!r}{where}")
    for col, v in ((applicants, a), (selected, s)):
        neg = np.flatnonzero(v < 0)
        if neg.size:
            raise ValueError(f"column {col!r} has a negative count ({v[neg[0]]:g}) for group {names[neg[0]]!r} "
                             f"of {category!r}{where}")
    over = np.flatnonzero(s > a * (1 + 1e-9) + 1e-9)
    if over.size:
        k = over[0]
        raise ValueError(f"column {selected!r} exceeds column {applicants!r} for group {names[k]!r} of "
                         f"{category!r}{where}: {s[k]:g} selected of {a[k]:g} applicants")
    known_total = a[known].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(known & (a > 0), s / np.where(a > 0, a, 1.0), np.nan)
        share = np.where(known, a / known_total if known_total > 0 else np.nan, np.nan)
    cut = 0.0 if exclude_below is None else float(exclude_below)
    all_total = np.nansum(a)
    base = share if exclude_base == "known" else np.where(known, a / all_total if all_total > 0 else np.nan, np.nan)
    excluded = known & ((base < cut) | (a <= 0))
    included = known & ~excluded
    if not included.any():
        detail = ", ".join(f"{names[k]!r} ({share[k]:.1%})" for k in np.flatnonzero(known)) or "none known"
        raise ValueError(f"every group of column(s) {cols} in {category!r}{where} is excluded (below "
                         f"exclude_below={cut:g} of the applicants, or without applicants): {detail}; "
                         "nothing is left to compare")
    # ties and flags are decided on the exact counts (fractions of whole numbers), never on floating-point rates
    # that two equal fractions can round differently: a group tied with the top rate is a comparator, and a
    # ratio of exactly the bound is not flagged
    exact_rate = [es[k] / ea[k] if included[k] else None for k in range(n_rows)]
    top_exact = max(r for r in exact_rate if r is not None)
    top = float(top_exact)
    comparator = np.array([r is not None and r == top_exact for r in exact_rate], dtype=bool)
    notes = np.array([""] * n_rows, dtype=object)
    of = "of all applicants, unknowns included" if exclude_base == "all" else "of the applicants of known category"
    notes[excluded & (a > 0)] = [f"excluded: {base[k]:.2%} {of}, below {cut:.0%}" for k in
                                 np.flatnonzero(excluded & (a > 0))]
    notes[known & (a <= 0)] = "no applicants: rate undefined"
    notes[~known] = "unknown category: counted, not compared"
    if top_exact > 0:
        exact_ratio = [es[k] / ea[k] / top_exact if known[k] and a[k] > 0 else None for k in range(n_rows)]
        ratio = np.array([float(r) if r is not None else np.nan for r in exact_ratio])
        notes[comparator] = "comparator (highest rate)"
        b = Fraction(bound).limit_denominator(10**6)
        flagged = np.array([r is not None and r < b for r in exact_ratio], dtype=bool)
    else:
        flagged = np.zeros(n_rows, dtype=bool)
        ratio = np.full(n_rows, np.nan)
        notes[known & (a > 0)] = [
            (notes[k] + "; " if notes[k] else "") + "impact ratio undefined: the comparator's rate is 0 (no "
            "applicant of any included group was selected)" for k in np.flatnonzero(known & (a > 0))]
    columns: dict[str, Any] = dict(keys or {})
    columns["category"] = category
    for c in group:
        columns[c] = levels[c] if c in cols else (total if total is not None else "Total")
    columns.update(group=names, applicants=a, selected=s, rate=rate, share=share, excluded=excluded,
                   unknown=~known, comparator=comparator, impact_ratio=ratio, four_fifths=included & flagged,
                   note=notes)
    return pd.DataFrame(columns, index=range(n_rows))


def impact_ratio_table(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str = "applicants",
    selected: str = "selected",
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    exclude_base: str = "known",
    margins: bool = True,
    bound: float = FOUR_FIFTHS,
) -> pd.DataFrame:
    r"""A Local Law 144 audit table from counts: rates, impact ratios, four-fifths flags, 2% exclusions.

    For each category ``c`` (one column of ``group``, or their intersection) and each group ``g`` of it,

    .. math::

        r_g = s_g / n_g, \qquad \text{share}_g = n_g / \sum_{h\ \text{known}} n_h, \qquad
        IR_g = r_g / \max_{h \in I} r_h, \qquad \text{flag}_g = [IR_g < 0.8],\ g \in I,

    with ``n_g`` applicants and ``s_g`` selected (for a scoring tool: scored above the median, so ``r_g`` is the
    scoring rate). ``I`` holds the *included* groups: known, with applicants, and (the rules' option) at least
    ``exclude_below`` of the known applicants (``exclude_base="known"``; ``"all"``: of every applicant, unknowns
    included, see :data:`EXCLUDE_BASES`); the comparator is the included group with the highest rate.
    An excluded group keeps its rate and a ratio against the comparator (which may exceed 1) but is never the
    comparator and never flagged. Rows whose label is in ``unknown`` are reported as counts, never as a group.

    Labels are read leniently where that is safe and strictly where it is not: a spelling of an ``unknown`` label
    that differs in case or surrounding spaces (``unknown``, ``Unknown ``) is that unknown label, and surrounding
    spaces are dropped from every label; a label reading "total" other than ``total`` itself (a lowercase
    ``total`` row), two rows with the same group labels (several unknown rows are summed into one count of
    unknown applicants), two labels of a column differing only in case, and an infinite count are refused with a
    ``ValueError`` naming the row (its index label) and the column.

    ``group`` may name several columns: the table then holds each column's own table (``margins=True``) and the
    intersectional one, in one call. A column's table uses the rows that sum over the other columns (labelled
    ``total``, as in a published report's sex table) when there are such rows, and otherwise the sum of the
    intersectional rows; a column that is ``total`` throughout a cell of ``by`` is left out there. ``by`` names
    columns that separate independent tables (an audit, a tool, a job). Counts may be fractional (shared seats of
    a simulated allocation, or counts rebuilt from rounded rates).

    A comparator rate of 0 (nobody in any included group selected) leaves every ratio undefined: ``NaN`` with
    the reason in ``note`` (the curve functions above set ``0/0 := 1`` instead, because at ``p = 1`` nobody is
    selected by construction; in an audit table it is a fact worth reporting). A flag is screening evidence of a
    selection-rate gap, never proof of discrimination, and no flag is no proof of fairness.

    Returns
    -------
    pandas.DataFrame
        One row per (``by``, category, group): ``by`` columns, ``category``, the ``group`` columns (``total``
        where a column is summed over), ``group`` (the label), ``applicants``, ``selected``, ``rate``, ``share``,
        ``excluded``, ``unknown``, ``comparator``, ``impact_ratio``, ``four_fifths`` and ``note``.

    Raises
    ------
    ValueError
        naming the row or group and the column: negative or infinite counts, ``selected`` above ``applicants``, a
        missing count or label, a total row other than ``total``, a repeated group, a frame without rows, or a table
        whose every group is excluded.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "F", "M", "M", "Unknown"], "race": ["A", "B", "A", "B", "Unknown"],
    ...                        "applicants": [40, 60, 50, 50, 20], "selected": [10, 30, 20, 25, 5]})
    >>> t = impact_ratio_table(counts, group=["sex", "race"])
    >>> t[t["category"] == "sex"][["group", "rate", "impact_ratio", "four_fifths"]].round(3).values.tolist()
    [['F', 0.4, 0.889, False], ['M', 0.45, 1.0, False], ['Unknown', nan, nan, False]]
    >>> t[t["category"] == "sex × race"][["group", "impact_ratio", "four_fifths"]].round(3).values.tolist()[:2]
    [['F A', 0.5, True], ['F B', 1.0, False]]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    frame = _check_count_frame(frame, cols, applicants, selected, by_cols, unknown, total)
    b = _check_bound(bound)
    if exclude_below is not None and not 0.0 <= float(exclude_below) < 1.0:
        raise ValueError(f"exclude_below must lie in [0, 1) or be None, got {exclude_below!r}")
    if exclude_base not in EXCLUDE_BASES:
        raise ValueError(f"exclude_base must be one of {EXCLUDE_BASES}, got {exclude_base!r}")
    unk = _unknown_set(unknown)
    parts = []
    for key, cell in cell_frames(frame, by_cols, sort=False, dropna=False):
        where = _where(by_cols, key)
        analyses = _analyses(cell, cols, total, margins, unk)
        if not analyses:
            raise ValueError(f"group column(s) {cols} have no rows to compare{where}: no label other than {total!r} or an unknown category")
        for used, rows in analyses:
            parts.append(_one_table(rows, used, cols, applicants, selected, unk, total, exclude_below, b, where,
                                    exclude_base, dict(zip(by_cols, key))))
    return pd.concat(parts, ignore_index=True)


def missing_data_bounds(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str = "applicants",
    selected: str = "selected",
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    exclude_base: str = "known",
    margins: bool = True,
    bound: float = FOUR_FIFTHS,
    comparator: str = "observed",
) -> pd.DataFrame:
    r""":func:`impact_ratio_table` plus bounds on each rate and ratio for the applicants of unknown category.

    With ``m`` applicants of unknown category in a table (the sum of its unknown rows), group ``g`` could hold
    all of them (Gerchick et al.'s worst and best cases), none selected or all selected:

    .. math::

        r^{lo}_g = \frac{s_g}{n_g + m}, \qquad r^{hi}_g = \frac{s_g + m}{n_g + m},

    or only its share ``p_g = n_g / \sum_{h\ known} n_h`` of them (the *proportional* variant, ``_prop``):

    .. math:: r^{lo,prop}_g = \frac{s_g}{n_g + m p_g}, \qquad r^{hi,prop}_g = \frac{s_g + m p_g}{n_g + m p_g}.

    The ratio bounds divide by the comparator's observed rate (``comparator="observed"``, as in the paper), or
    by the highest included rate *in that scenario*, where only ``g``'s rate moves
    (``comparator="scenario"``: :math:`r^{lo}_g / \max(r^{lo}_g, \max_{h \in I, h \ne g} r_h)`, which never
    exceeds 1). ``four_fifths_possible`` says the lower ratio bound is below ``bound`` (an included group that
    could fail the rule), ``four_fifths_certain`` that even the upper one is. A table without an unknown row, or
    whose unknown count is missing, gets no bounds (``NaN``, with the reason in ``note``): an unreported count is
    not a count of zero.

    Every keyword but ``comparator`` is passed on to :func:`impact_ratio_table` and means what it means there; the
    returned table is that table with the bound columns added.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "M", "Unknown"], "applicants": [100, 100, 50], "selected": [40, 45, 0]})
    >>> t = missing_data_bounds(counts, group="sex")
    >>> t[["group", "rate_lower", "rate_upper", "impact_ratio_lower", "impact_ratio_upper"]].round(3).values.tolist()[:2]
    [['F', 0.267, 0.6, 0.593, 1.333], ['M', 0.3, 0.633, 0.667, 1.407]]
    >>> bool(t.loc[0, "four_fifths_possible"]), bool(t.loc[0, "four_fifths"])
    (True, False)
    """
    if comparator not in ("observed", "scenario"):
        raise ValueError(f"comparator must be 'observed' or 'scenario', got {comparator!r}")
    table = impact_ratio_table(frame, group=group, applicants=applicants, selected=selected, by=by, unknown=unknown,
                               total=total, exclude_below=exclude_below, margins=margins, bound=bound,
                               exclude_base=exclude_base)
    keys = [*_as_columns(by, "by"), "category"]
    unk_rows = table["unknown"].to_numpy()
    has_unknown = pd.Series(unk_rows).groupby([table[k] for k in keys], sort=False).transform("any").to_numpy()
    m_sum = (table["applicants"].where(table["unknown"]).groupby([table[k] for k in keys], sort=False)
             .transform(lambda v: v.sum(min_count=1)))
    m_nan = table["applicants"].where(table["unknown"]).isna() & table["unknown"]
    any_nan = m_nan.groupby([table[k] for k in keys], sort=False).transform("any").to_numpy()
    m = np.where(has_unknown & ~any_nan, m_sum.to_numpy(dtype=float), np.nan)
    known = ~unk_rows & (table["applicants"].to_numpy() > 0)
    n = table["applicants"].to_numpy(dtype=float)
    s = table["selected"].to_numpy(dtype=float)
    p = table["share"].to_numpy(dtype=float)
    included = known & ~table["excluded"].to_numpy()
    out = table.copy()
    out.insert(out.columns.get_loc("note"), "n_unknown", m)
    rates = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        rates["rate_lower"] = s / (n + m)
        rates["rate_upper"] = (s + m) / (n + m)
        rates["rate_lower_prop"] = s / (n + m * p)
        rates["rate_upper_prop"] = (s + m * p) / (n + m * p)
    for name, v in rates.items():
        rates[name] = np.where(known, v, np.nan)
    # the comparator: the observed top rate of the table, or the top rate with g's rate moved
    rate = out["rate"].where(pd.Series(included)).to_numpy(dtype=float)
    grouped = pd.Series(rate).groupby([out[k] for k in keys], sort=False)
    top = grouped.transform("max").to_numpy(dtype=float)
    # the highest included rate among the *other* groups of the table (the second-highest where g is the top)
    def _top_other(v: pd.Series) -> pd.Series:
        arr = v.to_numpy(dtype=float)
        res = np.full(arr.size, np.nan)
        for i in range(arr.size):  # tables hold at most a few dozen groups
            others = np.delete(arr, i)
            others = others[~np.isnan(others)]
            res[i] = others.max() if others.size else np.nan
        return pd.Series(res, index=v.index)
    top_other = grouped.transform(_top_other).to_numpy(dtype=float)
    ratios = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, v in rates.items():
            if comparator == "observed":
                den = top
            else:
                den = np.where(included, np.fmax(v, top_other), top)
            ratios[name.replace("rate", "impact_ratio")] = np.where(known & (den > 0), v / den, np.nan)
    for name in ["rate_lower", "rate_upper", "impact_ratio_lower", "impact_ratio_upper",
                 "rate_lower_prop", "rate_upper_prop", "impact_ratio_lower_prop", "impact_ratio_upper_prop"]:
        out.insert(out.columns.get_loc("note"), name, rates.get(name, ratios.get(name)))
    b = _check_bound(bound)
    lo = out["impact_ratio_lower"].to_numpy(dtype=float)
    hi = out["impact_ratio_upper"].to_numpy(dtype=float)
    out.insert(out.columns.get_loc("note"), "four_fifths_possible", included & (lo < b))
    out.insert(out.columns.get_loc("note"), "four_fifths_certain", included & (hi < b))
    no_count = known & np.isnan(m)
    reason = np.where(has_unknown, "no bounds: the count of unknown applicants is missing",
                      "no bounds: the table reports no unknown applicants")
    notes = out["note"].to_numpy(dtype=object).copy()
    for k in np.flatnonzero(no_count):
        notes[k] = (notes[k] + "; " if notes[k] else "") + reason[k]
    out["note"] = notes
    return out


def allocation_counts(candidates: pd.DataFrame, pools: Any, selected: Any, *, group: str | Sequence[str]) -> pd.DataFrame:
    """Applicant and selection counts per group from simulated selection rounds (input to :func:`impact_ratio_table`).

    Each round is a pool of row positions of ``candidates`` (``pools``, shape ``(rounds, pool size)``, as drawn by
    :func:`allocbias.selection.draw_group_pools`) and the share of a seat each got (``selected``, same shape, as
    returned by :func:`allocbias.selection.select_top_k`: 1, 0, or a fraction for tied candidates). A candidate
    counts as one applicant per appearance; ``selected`` sums the seat shares, so it may be fractional.

    .. math:: n_g = \\#\\{(r, j) : c_{rj} \\in g\\}, \\qquad s_g = \\sum_{(r, j) : c_{rj} \\in g} x_{rj}

    Examples
    --------
    >>> cands = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["A", "A", "B"]})
    >>> allocation_counts(cands, [[0, 1], [1, 2]], [[1, 0], [0.5, 0.5]], group=["sex", "race"]).values.tolist()
    [['F', 'A', 1, 1.0], ['F', 'B', 1, 0.5], ['M', 'A', 2, 0.5]]
    """
    cols = _as_columns(group, "group")
    if not isinstance(candidates, pd.DataFrame):
        raise ValueError(f"candidates must be a pandas DataFrame, got {type(candidates).__name__}")
    missing = [c for c in cols if c not in candidates.columns]
    if missing:
        raise ValueError(f"candidates has no column(s) {missing}")
    idx = np.asarray(pools)
    x = np.asarray(selected, dtype=float)
    if idx.ndim != 2 or idx.dtype.kind not in "iu":
        raise ValueError(f"pools must be a 2-d array of row positions, got shape {idx.shape} and dtype {idx.dtype}")
    if x.shape != idx.shape:
        raise ValueError(f"selected must have the shape of pools {idx.shape}, got {x.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= len(candidates)):
        raise ValueError(f"pools hold row positions outside 0..{len(candidates) - 1}")
    if not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
        raise ValueError("selected must hold seat shares in [0, 1]")
    n = len(candidates)
    counts = candidates[cols].copy()
    counts["applicants"] = np.bincount(idx.ravel(), minlength=n)
    counts["selected"] = np.bincount(idx.ravel(), weights=x.ravel(), minlength=n)
    out = counts.groupby(cols, sort=True)[["applicants", "selected"]].sum().reset_index()
    return out[out["applicants"] > 0].reset_index(drop=True)


def scoring_counts(frame: pd.DataFrame, *, score: str, group: str | Sequence[str],
                   by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Applicants and applicants scored above the pooled median per group: the counts behind a scoring rate.

    The median is ``Q(0.5)`` of the pooled scores of each cell of ``by`` (``np.quantile``,
    ``method="inverted_cdf"``, the cut of :func:`di_median`), and "above" is strict, so the scoring rates of
    :func:`impact_ratio_table` on this frame give exactly :func:`di_median`'s impact ratios.

    Examples
    --------
    >>> df = pd.DataFrame({"score": [1, 2, 3, 4, 3, 4, 5, 6], "g": list("AAAABBBB")})
    >>> scoring_counts(df, score="score", group="g").values.tolist()
    [['A', 4, 1, 3.0], ['B', 4, 3, 3.0]]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in [*by_cols, *cols, score] if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}")
    if len(frame) == 0:
        raise ValueError("frame has no rows")
    values = _as_scores(frame[score])
    med = (pd.Series(values, index=frame.index).groupby([frame[c] for c in by_cols], sort=False)
           .transform(lambda v: np.quantile(v.to_numpy(), 0.5, method=QUANTILE_METHOD))
           if by_cols else pd.Series(np.quantile(values, 0.5, method=QUANTILE_METHOD), index=frame.index))
    work = frame[[*by_cols, *cols]].assign(applicants=1, selected=(values > med.to_numpy()).astype(np.int64),
                                           median=med.to_numpy())
    return (work.groupby([*by_cols, *cols], sort=True)
            .agg(applicants=("applicants", "sum"), selected=("selected", "sum"), median=("median", "first"))
            .reset_index())


def _decimals(values: np.ndarray) -> int:
    """Number of decimals the finite values are written with (at most 6): 0.47 -> 2, 0.473 -> 3."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 6
    scaled = np.round(finite * 1e6).astype(np.int64)
    for d in range(7):
        if np.all(scaled % 10 ** (6 - d) == 0):
            return d
    return 6


#: Why a published impact ratio and the one recomputed from its counts disagree (:func:`compare_reported`).
DIFFERENCE_REASONS = ("counts do not give the rate", "rounded rates", "another comparator", "unexplained")
__all__ += ["DIFFERENCE_REASONS"]


def compare_reported(
    frame: pd.DataFrame,
    *,
    group: str | Sequence[str],
    applicants: str,
    selected: str,
    reported_rate: str,
    reported_ratio: str,
    by: str | Sequence[str] | None = None,
    unknown: Any = DEFAULT_UNKNOWN,
    total: Any = DEFAULT_TOTAL,
    exclude_below: float | None = EXCLUDE_BELOW,
    tol: float = 0.01,
) -> pd.DataFrame:
    r"""Recompute a published audit table from its counts and say why a published ratio differs.

    Every table (a cell of ``by``; ``group`` names its columns, without margins) is recomputed with
    :func:`impact_ratio_table`; a row *disagrees* when :math:`|IR^{ours}_g - IR^{pub}_g| > tol`. A disagreement
    gets the first reason that explains it:

    1. ``"counts do not give the rate"``: :math:`|s_g / n_g - r^{pub}_g| > h`, where ``h`` is half a unit of the
       last decimal the table writes its rates with (0.005 for 0.47);
    2. ``"rounded rates"``: the published ratio lies within what the published, rounded rates allow against our
       comparator ``c``: :math:`[(r_g - h)/(r_c + h) - h', (r_g + h)/(r_c - h) + h']` (``h'`` the same for ratios);
    3. ``"another comparator"``: one comparator rate :math:`\rho` fits every published ratio of the table
       within rounding, :math:`\rho \in \bigcap_g [(r_g - h)/(IR^{pub}_g + h'), (r_g + h)/(IR^{pub}_g - h')]`,
       but it is not our comparator's rate (a group below 2% kept, or a comparator from other data);
    4. ``"unexplained"``.

    Rows whose count, published ratio or recomputed ratio is missing are not compared (``reason`` says which).
    Within a table, two rows with the same labels raise ``ValueError``.

    Returns
    -------
    pandas.DataFrame
        The known groups of :func:`impact_ratio_table` with ``reported_rate``, ``reported_impact_ratio``,
        ``ratio_difference`` (ours minus published), ``disagrees`` and ``reason``.

    Examples
    --------
    >>> pub = pd.DataFrame({"g": ["A", "B", "C"], "n": [200, 200, 200], "s": [100, 80, 61],
    ...                     "rate": [0.5, 0.4, 0.305], "ir": [1.0, 0.8, 0.45]})
    >>> c = compare_reported(pub, group="g", applicants="n", selected="s", reported_rate="rate", reported_ratio="ir")
    >>> c[["group", "impact_ratio", "reported_impact_ratio", "disagrees", "reason"]].values.tolist()
    [['A', 1.0, 1.0, False, 'agrees'], ['B', 0.8, 0.8, False, 'agrees'], ['C', 0.61, 0.45, True, 'unexplained']]
    """
    cols = _as_columns(group, "group")
    by_cols = _as_columns(by, "by")
    missing = [c for c in (reported_rate, reported_ratio) if c not in frame.columns]
    if missing:
        raise ValueError(f"frame has no column(s) {missing}")
    unk = _unknown_set(unknown)
    keys = [*by_cols, *cols]
    is_unknown = frame[cols].astype(object).isin(unk).any(axis=1)
    known_rows = frame[~is_unknown]
    dup = known_rows.duplicated(keys, keep=False)
    if dup.any():
        first = known_rows[dup].iloc[0]
        raise ValueError(f"two rows share the labels {dict(first[keys])}: a table must list each group once")
    countable = known_rows[applicants].notna() & known_rows[selected].notna()
    usable = known_rows[countable]
    if by_cols:  # a table none of whose groups has counts is not recomputed
        cells = pd.MultiIndex.from_frame(usable[by_cols]) if len(by_cols) > 1 else pd.Index(usable[by_cols[0]])
        mine = pd.MultiIndex.from_frame(frame[by_cols]) if len(by_cols) > 1 else pd.Index(frame[by_cols[0]])
        unknown_rows = frame[is_unknown.to_numpy() & mine.isin(cells)]
    else:
        unknown_rows = frame[is_unknown] if len(usable) else frame.iloc[:0]
    if len(usable) == 0:
        raise ValueError(f"no known group of column(s) {cols} has both {applicants!r} and {selected!r} counts")
    table = impact_ratio_table(pd.concat([usable, unknown_rows]), group=cols,
                               applicants=applicants, selected=selected, by=by_cols, unknown=unknown, total=total,
                               exclude_below=exclude_below, margins=False)
    table = table[~table["unknown"]].drop(columns=["unknown"])
    reported = known_rows[keys + [reported_rate, reported_ratio]].rename(
        columns={reported_rate: "reported_rate", reported_ratio: "reported_impact_ratio"})
    out = reported.merge(table, on=keys, how="left", validate="one_to_one")
    out = out[[c for c in table.columns] + ["reported_rate", "reported_impact_ratio"]]
    labels = pd.Series([_label(v) for v in known_rows[cols].itertuples(index=False)], index=out.index)
    out["group"] = out["group"].fillna(labels)
    out["ratio_difference"] = out["impact_ratio"] - out["reported_impact_ratio"]
    out["disagrees"] = out["ratio_difference"].abs() > tol
    reason = np.full(len(out), "agrees", dtype=object)
    reason[out["reported_impact_ratio"].isna().to_numpy()] = "not reported"
    reason[(out["reported_impact_ratio"].notna() & out["impact_ratio"].isna()).to_numpy()] = "not computable"
    cell_keys = [*by_cols] or None
    cells = out.groupby(cell_keys, sort=False, dropna=False).indices if cell_keys else {(): np.arange(len(out))}
    for idx in cells.values():
        part = out.iloc[idx]
        r_pub = part["reported_rate"].to_numpy(dtype=float)
        n = part["applicants"].to_numpy(dtype=float)
        s = part["selected"].to_numpy(dtype=float)
        ir_pub = part["reported_impact_ratio"].to_numpy(dtype=float)
        h = 0.5 * 10.0 ** -_decimals(r_pub) if np.isfinite(r_pub).any() else 0.0
        h_ir = 0.5 * 10.0 ** -_decimals(ir_pub)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_cnt = np.where(n > 0, s / np.where(n > 0, n, 1.0), np.nan)
        r = np.where(np.isfinite(r_pub), r_pub, r_cnt)
        comp = part["comparator"].to_numpy(dtype=bool)
        r_c = np.nanmax(np.where(comp, r, np.nan)) if comp.any() else np.nan
        eps = 1e-9
        with np.errstate(invalid="ignore", divide="ignore"):
            lo = (r - h) / (r_c + h) - h_ir - eps
            hi = np.where(r_c - h > 0, (r + h) / (r_c - h), np.inf) + h_ir + eps
            usable = np.isfinite(r) & np.isfinite(ir_pub) & (ir_pub > 0)
            c_lo = np.where(usable, (r - h) / (ir_pub + h_ir), -np.inf)
            c_hi = np.where(usable & (ir_pub - h_ir > 0), (r + h) / np.where(ir_pub - h_ir > 0, ir_pub - h_ir, 1.0),
                            np.inf)
        one_comparator = usable.any() and c_lo.max() <= c_hi.min() + eps
        dis = part["disagrees"].to_numpy(dtype=bool)
        for j in np.flatnonzero(dis):
            if np.isfinite(r_pub[j]) and abs(r_cnt[j] - r_pub[j]) > h + eps:
                why = DIFFERENCE_REASONS[0]
            elif lo[j] <= ir_pub[j] <= hi[j]:
                why = DIFFERENCE_REASONS[1]
            elif one_comparator:
                why = DIFFERENCE_REASONS[2]
            else:
                why = DIFFERENCE_REASONS[3]
            reason[idx[j]] = why
    out["reason"] = reason
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- the published audits of Gerchick et al.

#: Columns that identify one published table in Gerchick et al.'s data (an audit, a rate definition, a category).
AUDIT_TABLE = ("audit_id", "selection_or_scoring_rate", "protected_char_group")
#: Category columns of their data.
AUDIT_GROUPS = ("sex", "race_ethnicity")
__all__ += ["AUDIT_GROUPS", "AUDIT_TABLE"]


def _r_any(values: pd.Series) -> Any:
    """R's ``any()`` without ``na.rm``: True if any True, else NA if any NA, else False."""
    v = values.astype("boolean")
    if v.fillna(False).any():
        return True
    return pd.NA if v.isna().any() else False


def published_audit_rows(audits: pd.DataFrame, recomputed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows of Gerchick et al.'s audit data their impact-ratio analysis keeps, with the ratio it analyses.

    Their inclusion rules (Section 4.2.2 of the paper; ``code/paper_results.Rmd`` of their repository):

    * leave out the HackerRank audits (there, being selected is the negative outcome);
    * leave out the scoring rows of the one audit (Dover) that reports both selection and scoring rates;
    * analyse the published ratio, except where a table publishes no ratio of 1 and a row's ratio is missing
      (HiredScore publishes none; a comparator below 2% in an NYU Langone table): there use the ratio recomputed
      from the counts. ``recomputed`` is :func:`impact_ratio_table` of the same data (with ``by=AUDIT_TABLE``,
      ``group=AUDIT_GROUPS``, ``margins=False``); without it the ratios come from the published rates.

    Adds ``table_any_ir_is_one`` (a published ratio of 1 in the table), ``impact_ratio_for_analysis`` and
    ``table_has_comparator`` (R's ``any()`` of the authors' ``comparator_group`` over the table: ``NA`` when no
    row is marked True and some are unmarked).
    """
    need = ["deploying_entity", "tool_vendor", "impact_ratio", "comparator_group", "number_of_applications",
            *AUDIT_TABLE, *AUDIT_GROUPS]
    missing = [c for c in need if c not in audits.columns]
    if missing:
        raise ValueError(f"audits has no column(s) {missing}: expected Gerchick et al.'s audits_full.csv")
    keep = (audits["deploying_entity"] != "Hackerrank") & ~(
        (audits["tool_vendor"] == "dover") & (audits["selection_or_scoring_rate"] == "Scoring"))
    rows = audits[keep].copy()
    table = list(AUDIT_TABLE)
    rows["table_any_ir_is_one"] = rows["impact_ratio"].eq(1).groupby([rows[c] for c in table]).transform("any")
    if recomputed is not None:
        ours = recomputed[[*table, *AUDIT_GROUPS, "impact_ratio"]].rename(columns={"impact_ratio": "_ours"})
        rows = rows.merge(ours, on=[*table, *AUDIT_GROUPS], how="left", validate="many_to_one")
    else:
        top = rows.groupby(table)["result"].transform("max")
        rows["_ours"] = rows["result"] / top
    fill = ~rows["table_any_ir_is_one"] & rows["impact_ratio"].isna()
    rows["impact_ratio_for_analysis"] = rows["impact_ratio"].where(~fill, rows["_ours"])
    rows["table_has_comparator"] = rows.groupby(table)["comparator_group"].transform(_r_any)
    return rows.drop(columns=["_ours"]).reset_index(drop=True)


def published_audit_headlines(audits: pd.DataFrame, recomputed: pd.DataFrame | None = None,
                              bound: float = FOUR_FIFTHS) -> pd.DataFrame:
    """Gerchick et al.'s headline shares, recomputed with their inclusion rules (see :func:`published_audit_rows`).

    * ``audits_any_ir_below``: audits (with at least one analysed ratio) with a ratio below ``bound`` in a row
      with applicants (their Section 4.2.2);
    * ``tables_any_ir_below``: tables (audit x rate definition x category) with a marked comparator and a ratio
      below ``bound`` -- the paper's "group level results" (Section 4.2.2);
    * ``audits_any_ir_above_1``: audits with a ratio above 1 (Section 4.2.2);
    * ``audits_first_use_unknown`` and ``audits_position_unknown``: audits whose date of first use, or position,
      is missing or "Unknown" (Section 4.2.4; all audits, before the exclusions above);
    * ``audits_missing_demographics``: among audits with an unknown-category row, those reporting applicants
      there (Section 4.2.4; an audit whose unknown counts are all missing counts in the denominator).

    Returns one row per quantity: ``quantity``, ``numerator``, ``denominator``, ``share``.
    """
    b = _check_bound(bound)
    rows = published_audit_rows(audits, recomputed)
    ir = rows["impact_ratio_for_analysis"]
    rows["_below"] = (ir < b) & (rows["number_of_applications"] != 0) & rows["number_of_applications"].notna()
    rows["_above"] = ir > 1
    analysed = rows[ir.notna()]
    per_audit = rows.groupby("audit_id")[["_below", "_above"]].any().loc[analysed["audit_id"].unique()]
    tables = rows.groupby(list(AUDIT_TABLE))["_below"].transform("any")
    has_comp = rows["table_has_comparator"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    in_tables = rows[ir.notna().to_numpy() & has_comp].assign(_tb=tables).drop_duplicates(list(AUDIT_TABLE))
    out = [("audits_any_ir_below", int(per_audit["_below"].sum()), len(per_audit)),
           ("tables_any_ir_below", int(in_tables["_tb"].sum()), len(in_tables)),
           ("audits_any_ir_above_1", int(per_audit["_above"].sum()), len(per_audit))]
    for name, col in (("audits_first_use_unknown", "date_of_first_use"), ("audits_position_unknown", "position")):
        if col not in audits.columns:
            raise ValueError(f"audits has no column {col!r}")
        meta = audits[["audit_id", col]].drop_duplicates()
        unknown = meta[col].isna() | meta[col].astype(str).str.contains("unknown", case=False)
        out.append((name, int(unknown.sum()), len(meta)))
    miss = audits[(audits["sex"] == "Missing/Unknown") | (audits["race_ethnicity"] == "Missing/Unknown")]
    per = miss.groupby("audit_id")["number_of_applications"].apply(lambda v: _r_any((v > 0).where(v.notna())) is True)
    out.append(("audits_missing_demographics", int(per.sum()), len(per)))
    frame = pd.DataFrame(out, columns=["quantity", "numerator", "denominator"])
    frame["share"] = frame["numerator"] / frame["denominator"]
    return frame


def scores_consistent_with_rates(
    counts: pd.DataFrame,
    *,
    group: str,
    applicants: str = "applicants",
    selected: str = "selected",
    spread: Any = None,
    n: int = 20_000,
    cut: float = 50.0,
    scale: float = 10.0,
    seed: int = 0,
) -> pd.DataFrame:
    r"""Simulated scores whose share above ``cut`` in each group is the group's reported scoring rate.

    A published scoring-rate table gives, per group, only how many applicants scored above the median. This draws
    one of the many score distributions consistent with it: the groups keep their relative sizes in a sample of
    about ``n`` (at least 2 per group), and group ``g`` gets ``m_g = round(n_g r_g)`` scores above the cut and the
    rest below,

    .. math:: s = \text{cut} \pm \text{scale} \cdot \sigma_g \cdot |Z|, \qquad Z \sim N(0, 1),

    with the spread ``\sigma_g`` of ``spread`` (1 where not given). The reported numbers fix ``m_g / n_g`` and
    nothing else: the spreads are free, and so is everything the curve of :func:`di_curve` sees away from the
    cut. The published audits contain no scores, so any conclusion drawn from these samples is about what the
    reported numbers *allow*, not about the tool. ``cut`` stands for the audit's median; the simulated sample's
    own pooled median can differ when applicants of unknown category (not simulated) scored differently.

    Examples
    --------
    >>> counts = pd.DataFrame({"sex": ["F", "M"], "applicants": [300, 100], "selected": [120, 60]})
    >>> sim = scores_consistent_with_rates(counts, group="sex", n=400, spread={"F": 0.5}, seed=1)
    >>> sim.groupby("sex")["score"].apply(lambda s: float((s > 50).mean())).to_dict()
    {'F': 0.4, 'M': 0.6}
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive, got {scale!r}")
    table = impact_ratio_table(counts, group=group, applicants=applicants, selected=selected, exclude_below=None,
                               margins=False)
    table = table[~table["unknown"] & (table["applicants"] > 0)]
    spread = dict(spread or {})
    unknown_groups = set(spread) - set(table[group])
    if unknown_groups:
        raise ValueError(f"spread names group(s) {sorted(map(str, unknown_groups))} absent from column {group!r}")
    bad = {k: v for k, v in spread.items() if not (np.isfinite(v) and v > 0)}
    if bad:
        raise ValueError(f"spread must be positive for every group, got {bad}")
    rng = np.random.default_rng(seed)
    total = table["applicants"].sum()
    parts = []
    for label, size, rate in zip(table[group], table["applicants"], table["rate"]):  # a handful of groups
        n_g = max(2, int(round(n * size / total)))
        m_g = int(round(n_g * rate))
        sigma = float(spread.get(label, 1.0))
        mag = np.abs(rng.standard_normal(n_g)) * scale * sigma
        sign = np.r_[np.ones(m_g), -np.ones(n_g - m_g)]
        mag[mag == 0] = np.finfo(float).tiny  # a score exactly at the cut would count as below
        parts.append(pd.DataFrame({"score": cut + sign * mag, group: label}))
    return pd.concat(parts, ignore_index=True)


def published_audit_counts(audits: pd.DataFrame) -> pd.DataFrame:
    """The rows of Gerchick et al.'s data an audit table can be recomputed from.

    Keeps the known-category rows that report both counts (``number_of_applications`` and
    ``n_selected_or_n_above_median``) and the unknown-category rows of every table (:data:`AUDIT_TABLE`) that
    keeps at least one known row; the result goes to :func:`impact_ratio_table` or :func:`missing_data_bounds`
    with ``by=AUDIT_TABLE``, ``group=AUDIT_GROUPS`` and ``margins=False``.
    """
    missing = [c for c in [*AUDIT_TABLE, *AUDIT_GROUPS, "number_of_applications", "n_selected_or_n_above_median"]
               if c not in audits.columns]
    if missing:
        raise ValueError(f"audits has no column(s) {missing}: expected Gerchick et al.'s audits_full.csv")
    unknown = audits[list(AUDIT_GROUPS)].isin(_unknown_set(DEFAULT_UNKNOWN)).any(axis=1)
    complete = audits[["number_of_applications", "n_selected_or_n_above_median"]].notna().all(axis=1)
    rows = audits[unknown | complete]
    known = ~unknown.loc[rows.index]
    has_known = known.groupby([rows[c] for c in AUDIT_TABLE]).transform("any")
    return rows[has_known.to_numpy()].reset_index(drop=True)


__all__ += ["published_audit_counts"]
