"""One employer's Local Law 144 bias audit (:func:`bias_audit`), from the employer's own data in either shape:
one row per applicant, or one row per category with counts.

The steps reuse the rest of the package: the counts go to :func:`~allocbias.measures.ll144.tables.missing_data_bounds`
(the impact-ratio tables), the intervals to :mod:`~allocbias.measures.ll144.intervals`, the scores of a scoring tool
to the curve metrics of :mod:`~allocbias.measures.ll144.regression`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .power import POWER, detectable_ratio, false_flag_rate, fisher_p_value
from .intervals import (INTERVAL_MIN_COUNT, REGRESSION_BOOT, REGRESSION_BOOT_MAX_N, _regression_intervals,
                        rate_intervals, ratio_intervals)
from .regression import (FOUR_FIFTHS, QUANTILE_METHOD, Prior, _check_bound, _check_grid, _curve_matrix, _di_avg,
                         _di_median, _ks_all, _prepare, curve_auc, curve_p_fair)
from .tables import BLANK, EXCLUDE_BELOW, NON_ANSWERS, _at, _clean_labels, _fold, _label, _unknown_list, missing_data_bounds

__all__ = ["BiasAudit", "bias_audit", "table_characteristics"]

_YES = {"yes", "y", "true", "1", "1.0"}
_NO = {"no", "n", "false", "0", "0.0"}


@dataclass(frozen=True)
class BiasAudit:
    """A Local Law 144 bias audit of one tool (:func:`bias_audit`).

    Attributes
    ----------
    kind : ``"selection"`` or ``"scoring"``.
    shape : ``"applicants"`` (one row per applicant) or ``"counts"`` (one row per category).
    table : one row per category (``sex``, ``race/ethnicity``, their intersection) and group: the columns of
        :func:`missing_data_bounds` plus ``rate_low``, ``rate_high`` (Wilson), ``impact_ratio_low``,
        ``impact_ratio_high`` (:func:`ratio_intervals`), ``interval_warning``, and for each compared group
        ``false_flag_rate``, ``detectable_ratio`` and ``p_value`` (Fisher's exact, one-sided) at its counts
        (:mod:`~allocbias.measures.ll144.power`). Rates and ratios are fractions.
    unknown : one line per category and unknown label (``label``: a non-answer such as "Decline to answer", or
        :data:`BLANK` for empty cells): the applicants (``n_unknown``) and their share of all applicants.
    excluded : the groups left out of the comparison (the 2% rule, or no applicants), with ``reason``.
    regression : scoring tools: per category and group, ``n``, ``mean``, ``ratio_of_means`` (:func:`di_avg`),
        ``di_median``, ``auc_di``, ``p_fair``, ``ks_statistic``, ``ks_pvalue`` (group against the rest), over the
        applicants of the included groups; ``None`` for a selection tool or counts.
    curves : scoring tools: per category, the impact-ratio curve :func:`di_curve` (index ``p``).
    median : scoring tools with applicant rows: the sample median the scoring rates use.
    warnings : what the reader must know before reading the numbers (small categories, metrics not computed).
    options : the options the audit ran with.
    """

    kind: str
    shape: str
    n_applicants: float
    table: pd.DataFrame
    unknown: pd.DataFrame
    excluded: pd.DataFrame
    regression: pd.DataFrame | None
    curves: dict
    median: float | None
    warnings: tuple
    options: dict

    def flagged(self) -> pd.DataFrame:
        """The included groups whose impact ratio is below the four-fifths bound (screening evidence only)."""
        return self.table[self.table["four_fifths"]]


def _category_names(cols: list[str], names: dict[str, str]) -> dict[str, str]:
    out = {c: names.get(c, c) for c in cols}
    if len(cols) > 1:
        out[" × ".join(cols)] = "intersectional"
    return out


def _yes_no(values: pd.Series, col: str) -> np.ndarray:
    """``selected`` as 0/1: booleans, 0/1, or yes/no, y/n, true/false in any case; anything else is refused."""
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=np.int64)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        k = int(np.argmax(codes < 0))
        raise ValueError(f"row {_at(values.index[k])}, column {col!r}: empty; expected yes or no")
    lookup = np.empty(len(uniques), dtype=np.int64)
    for j, u in enumerate(uniques):  # a handful of distinct spellings, never the rows
        text = str(u).strip().casefold()
        if text in _YES:
            lookup[j] = 1
        elif text in _NO:
            lookup[j] = 0
        else:
            k = int(np.argmax(codes == j))
            raise ValueError(f"row {_at(values.index[k])}, column {col!r}: {u!r} is not yes or no")
    return lookup[codes]


def _fill_unknown(frame: pd.DataFrame, cols: list[str], label: Any = BLANK) -> pd.DataFrame:
    """Empty category cells (missing, empty text or spaces only, in any file format) are the unknown category
    ``label`` (:data:`BLANK`): the applicant did not say. Looked up over the distinct labels, never the rows.

    >>> _fill_unknown(pd.DataFrame({"sex": ["F", "", "  ", None, " M"]}), ["sex"])["sex"].tolist()
    ['F', '(blank)', '(blank)', '(blank)', ' M']
    """
    out = frame
    for c in cols:
        codes, uniques = pd.factorize(frame[c].astype(object), use_na_sentinel=True)
        blank = np.array([isinstance(u, str) and not u.strip() for u in uniques], dtype=bool)
        if (codes < 0).any() or blank.any():
            if out is frame:
                out = frame.copy()
            labels = np.array(list(uniques), dtype=object)
            labels[blank] = label
            out[c] = np.where(codes >= 0, labels[np.maximum(codes, 0)] if len(labels) else label, label)
    return out


#: Words that mark a label as a non-answer whatever its spelling (:func:`_looks_unknown`).
_NON_ANSWER_WORDS = ("declin", "prefer not", "not disclos", "undisclos", "not specif", "unspecif", "unknown",
                     "not provid", "no answer", "not answer", "self-identif", "self identif", "missing", "n/a",
                     "not stated", "withheld")


def _looks_unknown(label: Any, unknown: list) -> bool:
    """Whether a compared label reads like a non-answer: it holds a non-answer word, or is within a fuzzy ratio of
    85 (rapidfuzz, case and punctuation ignored) of a declared unknown label or of :data:`NON_ANSWERS`.

    >>> _looks_unknown("Declined to state", ["Unknown"]), _looks_unknown("Asian", ["Unknown"])
    (True, False)
    """
    from rapidfuzz import fuzz, process, utils

    if not isinstance(label, str):
        return False
    text = label.casefold()
    if any(w in text for w in _NON_ANSWER_WORDS):
        return True
    choices = [str(u) for u in dict.fromkeys([*unknown, *NON_ANSWERS]) if isinstance(u, str)]
    hit = process.extractOne(label, choices, scorer=fuzz.ratio, processor=utils.default_process, score_cutoff=85)
    return hit is not None


def _label_warnings(table: pd.DataFrame, unk: list, warnings: list[str]) -> None:
    """Warnings about the groups compared: a category with a single group (nothing to compare it with), and a
    compared label that reads like a non-answer (say it with ``unknown``)."""
    for name, part in table.groupby("table", sort=False):
        known = part[~part["unknown"] & (part["applicants"] > 0)]
        if len(known) == 1:
            warnings.append(f"{name}: one group only ({known['group'].iloc[0]}): its impact ratio is 1 by definition "
                            "and nothing is compared")
        if name in ("intersectional",):
            continue
        odd = [str(g) for g in known["group"] if _looks_unknown(g, unk)]
        if odd:
            warnings.append(f"{name}: {', '.join(repr(g) for g in odd)} read(s) like a non-answer but is compared "
                            "as a group; if it is one, list it with --unknown (unknown=...)")


def bias_audit(
    data: pd.DataFrame,
    *,
    sex: str | None = "sex",
    race: str | None = "race_ethnicity",
    selected: str = "selected",
    score: str = "score",
    applicants: str = "applicants",
    tool: str | None = None,
    unknown: Any = NON_ANSWERS,
    exclude_below: float | None = EXCLUDE_BELOW,
    exclude_base: str = "known",
    bound: float = FOUR_FIFTHS,
    integer_counts: bool = False,
    intervals: bool = True,
    confidence: float = 0.95,
    draws: int = 4000,
    seed: int = 0,
    grid: Any = None,
    prior: Prior = None,
    regression_boot: int = REGRESSION_BOOT,
) -> BiasAudit:
    r"""A Local Law 144 bias audit from an employer's data, in either shape, as one :class:`BiasAudit`.

    ``data`` is one of

    * **one row per applicant** with the category columns ``sex`` and ``race`` and either ``selected`` (yes/no: a
      selection tool) or ``score`` (a number: a scoring tool, whose *scoring rate* is the share of a group scored
      above the sample median, :func:`scoring_counts`; any real number, negative ones too: the scoring rate uses
      only the order, and only the ratio of means needs positive scores); an empty category cell (missing, empty
      text, spaces only) is the unknown category :data:`BLANK`, on its own line of ``unknown``, beside each label
      of ``unknown`` (default :data:`NON_ANSWERS`);
    * **one row per category** with counts: the category columns, ``applicants`` and ``selected`` (for a scoring
      tool, the number scored above the median). Every row is one category: a total row, a repeated category, a
      negative or infinite count or more selected than applicants is refused, naming the row and column (the
      index labels of ``data``), and so is a fractional count when ``integer_counts``. Counts cannot tell a
      selection tool from a scoring tool: say ``tool="scoring"`` for the latter (only the wording changes).

    It returns, for sex, race/ethnicity and their intersection (:func:`missing_data_bounds`, which calls
    :func:`impact_ratio_table`): rates and impact ratios ``IR_g = r_g / max_{h in I} r_h`` (fractions), the
    four-fifths flag ``IR_g < bound`` (a screening rule, never a verdict of compliance), the groups the 2% rule
    excludes and why, the applicants of unknown category and the worst-case and proportional bounds for them,
    Wilson intervals for the rates (:func:`rate_intervals`) and simulated intervals for the ratios
    (:func:`ratio_intervals`), with a warning for a group with fewer than :data:`INTERVAL_MIN_COUNT` selected or
    not selected. The intervals treat applicants as independent draws: for counts from simulated rounds that reuse
    the same candidates they are too narrow (pass ``intervals=False``). For a scoring tool given per applicant it
    adds the seed paper's alternatives over the applicants of the included groups of each category: the ratio of
    mean scores (:func:`di_avg`), the impact-ratio curve (:func:`di_curve`), its area :func:`auc_di`,
    :func:`p_fair` and the two-sample KS test of each group against the rest (:func:`ks_test`), with percentile
    intervals from ``regression_boot`` bootstrap replicates (applicants resampled within groups) up to
    :data:`REGRESSION_BOOT_MAX_N` applicants, and a warning instead above.

    Examples
    --------
    >>> rows = pd.DataFrame({"sex": ["F"] * 50 + ["M"] * 50, "race_ethnicity": ["A", "B"] * 50,
    ...                      "selected": ["yes"] * 20 + ["no"] * 30 + ["yes"] * 25 + ["no"] * 25})
    >>> a = bias_audit(rows)
    >>> sex = a.table[a.table["category"] == "sex"]
    >>> sex[["group", "rate", "impact_ratio"]].values.tolist()
    [['F', 0.4, 0.8], ['M', 0.5, 1.0]]
    >>> a.kind, a.shape, len(a.table)
    ('selection', 'applicants', 8)
    """
    cols, b, unk = _check_options(data, sex, race, tool, bound, unknown)
    warnings: list[str] = []
    if applicants in data.columns:
        counts, kind = _counts_from_category_rows(data, cols, applicants, selected, tool, unk, integer_counts)
        shape, median, scores_frame = "counts", None, None
    else:
        counts, kind, median, scores_frame = _counts_from_applicant_rows(data, cols, selected, score, applicants,
                                                                         tool, unk)
        shape = "applicants"
    table = missing_data_bounds(counts, group=cols, applicants="applicants", selected="selected", unknown=unk,
                                total=None, exclude_below=exclude_below, exclude_base=exclude_base, margins=True,
                                bound=b)
    names = _category_names(cols, {sex: "sex", race: "race/ethnicity"} if race else {sex: "sex"})
    table.insert(0, "table", table["category"].map(names))
    if intervals:
        table = _with_intervals(table, confidence, draws, seed, warnings)
    table = _with_four_fifths_characteristics(table, b, warnings)
    _label_warnings(table, unk, warnings)
    unknown_frame, excluded, n_all = _unknown_and_excluded(table, names, counts)
    regression, curves = None, {}
    if scores_frame is not None:
        regression, curves = _regression_alternatives(table, names, scores_frame, grid, prior, b, intervals,
                                                      regression_boot, confidence, seed, warnings)
    options = dict(sex=sex, race=race, selected=selected, score=score, applicants=applicants, tool=kind,
                   unknown=list(unk),
                   exclude_below=exclude_below, exclude_base=exclude_base, bound=b, integer_counts=integer_counts, intervals=intervals,
                   confidence=confidence, draws=draws, seed=seed, regression_boot=regression_boot,
                   grid_points=None if scores_frame is None else int(_check_grid(grid).size))
    return BiasAudit(kind=kind, shape=shape, n_applicants=n_all, table=table.reset_index(drop=True),
                     unknown=unknown_frame, excluded=excluded, regression=regression, curves=curves, median=median,
                     warnings=tuple(warnings), options=options)


# --------------------------------------------------------------------------- the steps of bias_audit


_SYNONYMS = {"sex": ("gender",), "race_ethnicity": ("race", "ethnicity", "race/ethnicity"), "race": ("ethnicity",),
             "selected": ("hired", "selection", "outcome", "advanced"), "score": ("rating", "points")}


def _close_names(data: pd.DataFrame, name: str) -> str:
    """`` (did you mean 'Gender'?)`` for a column ``name`` that ``data`` lacks: known synonyms, then names within
    a rapidfuzz WRatio of 75 (case and punctuation ignored); empty when none is close."""
    from rapidfuzz import fuzz, process, utils

    have = [str(c) for c in data.columns]
    close = [h for h in have if h.strip().casefold() in _SYNONYMS.get(str(name).casefold(), ())]
    close += [m[0] for m in process.extract(str(name), have, scorer=fuzz.WRatio, processor=utils.default_process,
                                              limit=3, score_cutoff=75) if m[0] not in close]
    return f" (did you mean {' or '.join(repr(x) for x in close[:3])}?)" if close else ""


def _check_columns(data: pd.DataFrame, needed: list[str], what: str) -> None:
    """Every column of ``needed`` that ``data`` lacks, named at once, each with the close names it has
    (``'Gender'`` for ``'sex'``)."""
    missing = [c for c in needed if c not in data.columns]
    if missing:
        parts = [f"{c!r}{_close_names(data, c)}" for c in missing]
        raise ValueError(f"no {what} column {', '.join(parts)}; the columns are {[str(c) for c in data.columns]}")


def _check_options(data: Any, sex: str | None, race: str | None, tool: str | None, bound: float,
                   unknown: Any) -> tuple[list[str], float, list]:
    """The category columns, the four-fifths bound and the unknown labels, checked before anything is computed."""
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    cols = [c for c in (sex, race) if c is not None]
    if not cols:
        raise ValueError("give at least one category column (sex or race)")
    if len(set(cols)) < len(cols):
        raise ValueError(f"sex and race name the same column {cols[0]!r}")
    _check_columns(data, cols, "category")
    if len(data) == 0:
        raise ValueError("no rows: nothing to audit")
    if tool not in (None, "selection", "scoring"):
        raise ValueError(f"tool must be 'selection', 'scoring' or None (from the columns), got {tool!r}")
    b = _check_bound(bound)
    unk = _unknown_list(unknown)
    if not unk:
        raise ValueError("unknown must name at least one label (e.g. 'Unknown')")
    if BLANK not in unk:
        unk = [*unk, BLANK]
    return cols, b, unk


def _counts_from_category_rows(data: pd.DataFrame, cols: list[str], applicants: str, selected: str,
                               tool: str | None, unk: list, integer_counts: bool) -> tuple[pd.DataFrame, str]:
    """One row per category: the counts checked (numbers, present, whole where asked) and the tool's kind."""
    if selected not in data.columns:
        raise ValueError(f"no column {selected!r}: counts need {applicants!r} and {selected!r}")
    kind = tool or "selection"
    counts = _fill_unknown(data[[*cols, applicants, selected]], cols).rename(
        columns={applicants: "applicants", selected: "selected"})
    for col, name in ((applicants, "applicants"), (selected, "selected")):
        v = pd.to_numeric(counts[name], errors="coerce")
        bad = v.isna() & counts[name].notna()
        if bad.any():
            k = int(np.argmax(bad.to_numpy()))
            raise ValueError(f"row {_at(data.index[k])}, column {col!r}: {counts[name].iloc[k]!r} is not a count")
        counts[name] = v.astype(float)
    is_unknown = counts[cols].astype(object).map(_fold).isin({_fold(u) for u in unk}).any(axis=1).to_numpy()
    for col, name in ((applicants, "applicants"), (selected, "selected")):
        v = counts[name].to_numpy()
        empty = np.isnan(v) & (~is_unknown if name == "selected" else True)
        if empty.any():
            k = int(np.argmax(empty))
            raise ValueError(f"row {_at(data.index[k])}, column {col!r}: no count")
        if integer_counts:
            frac = np.isfinite(v) & (v != np.round(v))
            if frac.any():
                k = int(np.argmax(frac))
                raise ValueError(f"row {_at(data.index[k])}, column {col!r}: {v[k]:g} is not a whole number")
    return counts, kind


def _counts_from_applicant_rows(data: pd.DataFrame, cols: list[str], selected: str, score: str, applicants: str,
                                tool: str | None, unk: list
                                ) -> tuple[pd.DataFrame, str, float | None, pd.DataFrame | None]:
    """One row per applicant: the counts per category, the tool's kind, and for a scoring tool the sample median
    and the applicants' scores (the regression alternatives need them)."""
    has_score, has_selected = score in data.columns, selected in data.columns
    if has_score and has_selected:
        raise ValueError(f"both {selected!r} and {score!r} columns: keep {selected!r} for a selection tool or "
                         f"{score!r} for a scoring tool")
    if not (has_score or has_selected):
        raise ValueError(f"no column {selected!r}{_close_names(data, selected)} (yes/no) or {score!r}"
                         f"{_close_names(data, score)}: one row per applicant needs one of them, and one row per "
                         f"category needs {applicants!r} and {selected!r}")
    rows = _clean_labels(_fill_unknown(data[[*cols]], cols), cols, unk, None, [], duplicates=False)
    if tool is not None and tool != ("selection" if has_selected else "scoring"):
        raise ValueError(f"tool={tool!r} but the data have a {selected if has_selected else score!r} column")
    median = None
    scores_frame = None
    if has_selected:
        kind = "selection"
        work = rows.assign(_sel=_yes_no(data[selected], selected))
    else:
        kind = "scoring"
        s = pd.to_numeric(data[score], errors="coerce")
        bad = s.isna().to_numpy() | ~np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"row {_at(data.index[k])}, column {score!r}: {data[score].iloc[k]!r} is not a number")
        s = s.to_numpy(dtype=float)
        median = float(np.quantile(s, 0.5, method=QUANTILE_METHOD))
        work = rows.assign(_sel=(s > median).astype(np.int64))
        scores_frame = rows.assign(_score=s)
    counts = (work.groupby(cols, sort=True, observed=True)["_sel"].agg(["size", "sum"])
              .rename(columns={"size": "applicants", "sum": "selected"}).reset_index())
    counts[["applicants", "selected"]] = counts[["applicants", "selected"]].astype(float)
    return counts, kind, median, scores_frame


def _with_intervals(table: pd.DataFrame, confidence: float, draws: int, seed: int,
                    warnings: list[str]) -> pd.DataFrame:
    """Wilson intervals of the rates, simulated intervals of the ratios (one seed per category) and a warning for a
    group with fewer than :data:`INTERVAL_MIN_COUNT` selected or not selected (appended to ``warnings``)."""
    known = ~table["unknown"].to_numpy() & (table["applicants"].to_numpy() > 0)
    lo, hi = rate_intervals(table["selected"], table["applicants"], confidence)
    table.insert(table.columns.get_loc("rate") + 1, "rate_low", np.where(known, lo, np.nan))
    table.insert(table.columns.get_loc("rate_low") + 1, "rate_high", np.where(known, hi, np.nan))
    ir_lo = np.full(len(table), np.nan)
    ir_hi = np.full(len(table), np.nan)
    for k, (cat, part) in enumerate(table.groupby("category", sort=False)):  # three tables
        idx = part.index.to_numpy()
        ok = known[idx] & part["impact_ratio"].notna().to_numpy()
        inc = ok & ~part["excluded"].to_numpy()
        if inc.any():
            l, h = ratio_intervals(part["selected"].to_numpy()[ok], part["applicants"].to_numpy()[ok], inc[ok],
                                   confidence, draws, seed + k)
            ir_lo[idx[ok]], ir_hi[idx[ok]] = l, h
    at = table.columns.get_loc("impact_ratio") + 1
    table.insert(at, "impact_ratio_low", ir_lo)
    table.insert(at + 1, "impact_ratio_high", ir_hi)
    s_, n_ = table["selected"].to_numpy(dtype=float), table["applicants"].to_numpy(dtype=float)
    small = known & ((s_ < INTERVAL_MIN_COUNT) | (n_ - s_ < INTERVAL_MIN_COUNT))
    table["interval_warning"] = np.where(
        small, f"fewer than {INTERVAL_MIN_COUNT} selected or not selected: the interval is rough", "")
    for name, part in table[small].groupby("table", sort=False):
        warnings.append(f"{name}: fewer than {INTERVAL_MIN_COUNT} selected or not selected in "
                        f"{', '.join(map(str, part['group']))}: their intervals are rough")
    return table


def table_characteristics(table: pd.DataFrame, *, by: Any = ("category",), rates: bool = False,
                          bound: float = FOUR_FIFTHS, power: float = POWER) -> pd.DataFrame:
    """The four-fifths rule's operating characteristics of every compared group of impact-ratio tables
    (:func:`~allocbias.measures.ll144.tables.impact_ratio_table`, one table per value of the columns ``by``), at
    its counts against its table's comparator, the comparator's true rate its observed rate
    (:func:`~allocbias.measures.ll144.power.false_flag_rate`, :func:`~allocbias.measures.ll144.power.detectable_ratio`,
    :func:`~allocbias.measures.ll144.power.fisher_p_value`; not ``four_fifths_characteristics``, which needs whole
    selected counts, since the rows of status ``"rate only"`` have none).

    Returns one row per row of ``table`` (same index): ``status``, the comparator's ``comparator_applicants``,
    ``comparator_selected`` and ``comparator_rate``, ``false_flag_rate``, ``detectable_ratio`` and ``p_value``
    (Fisher's exact, one-sided). The rows of status ``"compared"`` (an included group other than the comparator,
    with applicants and a ratio, in a table whose counts are whole numbers) get all three; with ``rates=True``, the
    rows of status ``"rate only"`` (whole applicant counts, but a fractional number selected somewhere in the
    table, e.g. rebuilt from a published, rounded rate) get the false-flag rate and the detectable ratio, which
    need only the applicants and the comparator's rate, and no p-value. The others say why they get none:
    ``"unknown"``, ``"excluded"``, ``"comparator"`` (a group with the top rate; of a tied top rate, the one with
    most applicants is the others' comparator), ``"no ratio"`` (no applicants, or a comparator rate of 0) or
    ``"counts not whole"``.

    >>> t = pd.DataFrame({"category": "sex", "group": ["F", "M"], "applicants": [40.0, 400.0],
    ...                   "selected": [4.0, 100.0], "excluded": False, "unknown": False,
    ...                   "comparator": [False, True], "impact_ratio": [0.4, 1.0]})
    >>> table_characteristics(t)[["status", "false_flag_rate", "detectable_ratio"]].round(3).values.tolist()
    [['compared', 0.242, 0.601], ['comparator', nan, nan]]
    """
    by = [by] if isinstance(by, str) else list(by)
    need = [*by, "applicants", "selected", "excluded", "unknown", "comparator", "impact_ratio"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}: expected an impact_ratio_table")
    unknown = table["unknown"].astype(bool).to_numpy()
    excluded = table["excluded"].astype(bool).to_numpy()
    is_top = table["comparator"].astype(bool).to_numpy()
    applicants = table["applicants"].to_numpy()
    selected = table["selected"].to_numpy()
    status = np.where(unknown, "unknown", np.where(excluded, "excluded", "no ratio")).astype(object)
    comparator_columns = np.full((len(table), 3), np.nan)  # applicants, selected, rate of each row's comparator
    whole_a = np.isclose(table["applicants"] % 1, 0)
    whole_s = np.isclose(table["selected"] % 1, 0)
    candidates = ~unknown & ~excluded & ~is_top & (table["applicants"] > 0).to_numpy() \
        & table["impact_ratio"].notna().to_numpy()
    cells = table.groupby(by, sort=False, dropna=False).indices.values() if by else [np.arange(len(table))]
    for rows in cells:  # positions of one table's rows, in table order
        top = rows[is_top[rows]]
        if top.size == 0:
            continue
        comp = top[np.nanargmax(applicants[top])]  # the first of the tied comparators with most applicants
        status[top] = "comparator"
        compared = rows[candidates[rows]]
        if compared.size == 0:
            continue
        both = np.append(compared, comp)
        if whole_a[both].all() and whole_s[both].all():
            kind = "compared"
        elif whole_a[both].all() and rates:
            kind = "rate only"
        else:
            status[compared] = "counts not whole"
            continue
        n_c, x_c = float(applicants[comp]), float(selected[comp])
        status[compared] = kind
        comparator_columns[compared] = [round(n_c), round(x_c) if kind == "compared" else x_c, x_c / n_c]
    out = pd.DataFrame({"status": status, "comparator_applicants": comparator_columns[:, 0],
                        "comparator_selected": comparator_columns[:, 1], "comparator_rate": comparator_columns[:, 2],
                        "false_flag_rate": np.nan, "detectable_ratio": np.nan, "p_value": np.nan}, index=table.index)
    some = out["status"].isin(["compared", "rate only"]).to_numpy()
    if some.any():
        n_g = table.loc[some, "applicants"].round().to_numpy()
        n_c = out.loc[some, "comparator_applicants"].to_numpy()
        r_c = out.loc[some, "comparator_rate"].to_numpy()
        out.loc[some, "false_flag_rate"] = np.atleast_1d(false_flag_rate(n_g, n_c, r_c, bound=bound))
        out.loc[some, "detectable_ratio"] = np.atleast_1d(detectable_ratio(n_g, n_c, r_c, power=power, bound=bound))
    full = (out["status"] == "compared").to_numpy()
    if full.any():
        out.loc[full, "p_value"] = np.atleast_1d(fisher_p_value(
            table.loc[full, "selected"].round().to_numpy(), table.loc[full, "applicants"].round().to_numpy(),
            out.loc[full, "comparator_selected"].to_numpy(), out.loc[full, "comparator_applicants"].to_numpy()))
    return out


def _with_four_fifths_characteristics(table: pd.DataFrame, bound: float, warnings: list[str]) -> pd.DataFrame:
    """How far each compared group's flag can be trusted at its counts (:func:`table_characteristics`):
    ``false_flag_rate`` (a fair process flagged), ``detectable_ratio`` (the true ratio flagged 80% of the time)
    and ``p_value`` (Fisher's exact test, one-sided, against the comparator), after ``four_fifths``. Counts that
    are not whole numbers (expected counts of simulated rounds) get none, with a warning."""
    ch = table_characteristics(table, by=["category"], bound=bound)
    if (ch["status"] == "counts not whole").any():
        warnings.append("counts that are not whole numbers: no false-flag rates, detectable ratios or p-values")
    at = table.columns.get_loc("four_fifths") + 1
    table.insert(at, "false_flag_rate", ch["false_flag_rate"].to_numpy(dtype=float))
    table.insert(at + 1, "detectable_ratio", ch["detectable_ratio"].to_numpy(dtype=float))
    table.insert(at + 2, "p_value", ch["p_value"].to_numpy(dtype=float))
    return table


def _unknown_and_excluded(table: pd.DataFrame, names: dict[str, str],
                          counts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """The applicants of unknown category per category (count and share), the excluded groups with their reason,
    and the number of applicants."""
    n_all = float(counts["applicants"].sum())
    unk_rows = table[table["unknown"]]
    unknown_frame = pd.DataFrame({"category": unk_rows["table"].to_numpy(), "label": unk_rows["group"].to_numpy(),
                                  "n_unknown": unk_rows["applicants"].to_numpy(dtype=float)})
    unknown_frame["share_unknown"] = unknown_frame["n_unknown"] / n_all if n_all > 0 else np.nan
    ex = table[~table["unknown"] & table["excluded"]]
    excluded = pd.DataFrame({"category": ex["table"], "group": ex["group"], "applicants": ex["applicants"],
                             "share": ex["share"], "reason": ex["note"].str.split(";").str[0]}).reset_index(drop=True)
    return unknown_frame, excluded, n_all


def _regression_alternatives(table: pd.DataFrame, names: dict[str, str], scores_frame: pd.DataFrame, grid: Any,
                             prior: Prior, b: float, intervals: bool, regression_boot: int, confidence: float,
                             seed: int, warnings: list[str]) -> tuple[pd.DataFrame | None, dict]:
    """A scoring tool's regression alternatives per category over its included groups' applicants: the ratio of
    means, DI_median, AUC_DI, P_fair with bootstrap intervals, the KS test; and each category's curve."""
    g = _check_grid(grid)
    parts = []
    curves: dict = {}
    for cat, part in table.groupby("category", sort=False):
        label = names[cat]
        cat_cols = cat.split(" × ")
        inc = part[~part["unknown"] & ~part["excluded"]]
        grouped = scores_frame.groupby(cat_cols, sort=True, observed=True)
        labels = np.array([_label(v if isinstance(v, tuple) else (v,)) for v in grouped.size().index], dtype=object)
        codes = grouped.ngroup().to_numpy()
        mask = np.isin(labels, inc["group"].astype(str).to_numpy())[codes]
        key = labels[codes]
        if inc.shape[0] < 2 or (inc["applicants"] < 2).any():
            warnings.append(f"{label}: the regression alternatives need two included groups of at least 2 "
                            "applicants; not computed")
            continue
        prep = _prepare(scores_frame["_score"].to_numpy()[mask], key[mask])
        curve = pd.DataFrame(_curve_matrix(prep, g).T, index=pd.Index(g, name="p"), columns=prep.labels.copy())
        curves[label] = curve
        out = pd.DataFrame(index=prep.labels.copy())
        out["n"] = prep.counts
        out["mean"] = np.bincount(prep.codes, weights=prep.scores) / prep.counts
        try:
            out["ratio_of_means"] = _di_avg(prep)
        except ValueError:
            out["ratio_of_means"] = np.nan
            warnings.append(f"{label}: a group's mean score is not positive; the ratio of means is undefined")
        out["di_median"] = _di_median(prep)
        out["auc_di"] = curve_auc(curve, prior)
        out["p_fair"] = curve_p_fair(curve, prior, b)
        if intervals and regression_boot and prep.scores.size <= REGRESSION_BOOT_MAX_N:
            ci = _regression_intervals(prep, g, prior, b, int(regression_boot), confidence, seed + 100 + len(parts))
            for name, (lo, hi) in ci.items():
                at = out.columns.get_loc(name) + 1
                out.insert(at, f"{name}_low", lo)
                out.insert(at + 1, f"{name}_high", hi)
        elif intervals and regression_boot:
            warnings.append(f"{label}: no intervals for the regression alternatives above "
                            f"{REGRESSION_BOOT_MAX_N:,} applicants (a bootstrap would take minutes); at "
                            f"{prep.scores.size:,} applicants their sampling error is small")
        ks = _ks_all(prep)
        out["ks_statistic"] = [r.statistic for r in ks]
        out["ks_pvalue"] = [r.pvalue for r in ks]
        parts.append(out.rename_axis("group").reset_index().assign(category=label))
    if not parts:
        return None, curves
    regression = pd.concat(parts, ignore_index=True)
    return regression[["category", *[c for c in regression.columns if c != "category"]]], curves
