r"""Published Local Law 144 audits, recomputed, checked and bounded: the findings of the chapter on LL144 audits.

Gerchick et al. collected the public bias audits of New York City's Local Law 144 and extracted their tables
(``data/ll144_audits``; the paper's headline numbers in ``data/paper/auditing_the_audits.csv``).
:func:`ll144_audits_findings` reads them and computes, with :mod:`allocbias.ll144`:

* what the audits are (tools, data, auditors) and one audit's table from its counts (``ll144.bias_audit``);
* every published impact ratio recomputed from its counts (``ll144.compare_reported``), each disagreement with
  the first reason that explains it;
* the paper's headline shares with its inclusion rules (``ll144.published_audit_headlines``);
* the worst-case bounds of each ratio for the applicants of unknown race or sex (``ll144.missing_data_bounds``);
* a simulation of score distributions that reproduce each scoring-tool sex table
  (``ll144.scores_consistent_with_rates``) and what their DI curves allow;
* whether the audits were large enough: the four-fifths rule's false-flag rate and detectable ratio of every
  compared group at its published counts (``ll144.table_characteristics``);
* the LL144 table of one of this study's systems from its simulated top-k selections.

It returns a :class:`LL144AuditsFindings`; the ``figure_*`` functions draw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from ..scoring import catalog
from .. import checks
from ..audited import data, datasets
from ..measures import ll144, selection
from ..plotting import label_axes, number_text, show_table
from .findings import Findings

__all__ = [
    "COLUMN_WORDS",
    "COUNTS",
    "HEADLINE_WORDS",
    "LL144AuditsFindings",
    "audit_label",
    "audit_sizes",
    "figure_audit_sizes",
    "figure_bounds",
    "figure_impact_ratios",
    "figure_simulation",
    "interval_text",
    "ll144_audits_findings",
    "per_audit_bounds",
    "read_audits",
    "read_paper",
    "power_of_ten",
    "share_words",
    "sim_view",
    "smallest_groups",
    "smallest_view",
    "spread_phrase",
    "tie_phrase",
    "versus_view",
    "table_view",
]

#: The columns of the published audits that hold the counts, by their role in ``ll144``'s functions.
COUNTS: dict[str, str] = {"applicants": "number_of_applications", "selected": "n_selected_or_n_above_median"}
#: The columns naming one published table, and the group columns of a row.
TABLE, GROUPS = list(ll144.AUDIT_TABLE), list(ll144.AUDIT_GROUPS)
#: The glue key of each headline quantity whose key is not ``<quantity>_share``.
HEADLINE_KEYS: dict[str, str] = {"audits_any_ir_below": "audits_any_ir_below_0_8_share",
                                 "tables_any_ir_below": "results_ir_below_0_8_share",
                                 "audits_any_ir_above_1": "audits_any_ir_above_1_share"}
#: The auditor whose reports hold most of the unexplained ratios.
DCI = "DCI Consulting Group"
#: The pool size of the study's selection rounds (one candidate per group).
POOL = 8
#: The score cut of the simulated scoring tables (``ll144.scores_consistent_with_rates`` centres them there).
SIM_CUT = 50.0
#: Metrics of the lower-rate group kept from each simulated table.
SIM_METRICS = ["di_threshold", "di_median", "di_avg", "auc_di", "p_fair"]
#: A published rate is rounded to two decimals at most: a comparator rate that differs from it by more than this
#: (half a unit of the second decimal, and a hair) is another rate, not a rounding.
ROUNDING = 0.0051
#: Rows of the table of the audits' smallest groups.
SMALLEST_ROWS = 10
#: Why a row of the recomputed tables has no false-flag rate or detectable ratio (``table_characteristics``).
SIZE_LEFT_OUT: dict[str, str] = {"unknown": "unknown category (counted, never compared)",
                                 "excluded": "excluded by the 2% rule",
                                 "comparator": "the table's comparator (highest rate)",
                                 "no ratio": "no applicants, or a comparator rate of 0",
                                 "counts not whole": "applicant counts not whole numbers"}


# --------------------------------------------------------------------------------------------------------------
# inputs and small helpers
# --------------------------------------------------------------------------------------------------------------
def read_audits() -> pd.DataFrame:
    """The committed published audits, one row per group-level result (``data/ll144_audits/audits.csv``)."""
    return datasets.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")


def read_paper() -> pd.DataFrame:
    """The paper's headline numbers, indexed by ``quantity`` (``data/paper/auditing_the_audits.csv``)."""
    return datasets.read_csv(data.data_dir() / "paper" / "auditing_the_audits.csv").set_index("quantity")


def audit_label(rows: pd.DataFrame) -> str:
    """How the prose names an audit: deploying entity, tool and year of its first row.

    >>> audit_label(pd.DataFrame({"deploying_entity": ["Acme"], "tool_id": ["T1"], "year_of_audit_result": [2023]}))
    'Acme, T1, 2023'
    """
    first = rows.iloc[0]
    return f"{first['deploying_entity']}, {first['tool_id']}, {first['year_of_audit_result']}"


def interval_text(low: Any, high: Any, *, digits: int = 3) -> str:
    """An interval ``low``–``high`` as text, empty where either end is missing.

    >>> interval_text(0.81234, 1.2), interval_text(float("nan"), 1.0)
    ('0.812–1.200', '')
    """
    if pd.isna(low) or pd.isna(high):
        return ""
    return f"{low:.{digits}f}–{high:.{digits}f}"


def _integral(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts as integers: every float column whose values are all whole numbers (missing ones aside) becomes an
    integer column (nullable where values are missing), so 529810.0 shows as 529810."""
    out = frame.copy()
    for col in out.columns:
        values = out[col]
        if pd.api.types.is_float_dtype(values) and values.notna().any() and \
                np.all(np.mod(values.dropna(), 1) == 0):
            out[col] = values.astype("Int64")
    return out


#: The chapter's code-named columns in words (:func:`table_view`).
COLUMN_WORDS: dict[str, str] = {"four_fifths": "below 0.8", "impact_ratio": "impact ratio", "audit_id": "audit"}
#: The paper's headline quantities (``ll144.published_audit_headlines``) in words.
HEADLINE_WORDS: dict[str, str] = {
    "audits_any_ir_below": "audits with an impact ratio below 0.8",
    "tables_any_ir_below": "tables with an impact ratio below 0.8",
    "audits_any_ir_above_1": "audits with an impact ratio above 1",
    "audits_first_use_unknown": "audits whose date of first use is unknown",
    "audits_position_unknown": "audits whose position is unknown",
    "audits_missing_demographics": "audits with an unknown-category row that count applicants there",
}


def table_view(frame: pd.DataFrame, *, precision: int = 3, digits: Mapping[str, int] | None = None,
               wrap: Sequence[str] = (), uuid: str | None = None, first: Sequence[str] = (),
               caption: str | None = None, dash_note: str | None = None) -> Any:
    """A table as the chapter shows it: :func:`allocbias.plotting.show_table` (no index, flag columns first,
    booleans as yes/no, whole numbers as integers with thousands separators, other numbers to ``precision``
    decimals, or ``digits`` for the columns it names, intervals joined, a dash with ``dash_note`` for a value that
    does not exist) with the chapter's code-named columns in words (:data:`COLUMN_WORDS`); the text columns in
    ``wrap`` wrap within their cell.

    >>> html = table_view(pd.DataFrame({"n": [529810.0], "note": ["a long note"]}), wrap=["note"], uuid="t").to_html()
    >>> ">529,810<" in html and "white-space: normal" in html
    True
    """
    digits = dict(digits or {})
    for what, names in (("wrap", list(wrap)), ("digits", list(digits)), ("first", list(first))):
        missing = [c for c in names if c not in frame.columns]
        if missing:
            raise ValueError(f"{what} names columns {missing} that the table does not have")
    style = show_table(_integral(frame), precision, digits=digits, wrap=wrap, first=first, caption=caption,
                       dash_note=dash_note, labels={c: w for c, w in COLUMN_WORDS.items() if c in frame.columns})
    return style if uuid is None else style.set_uuid(uuid)


def versus_view(findings: LL144AuditsFindings) -> pd.DataFrame:
    """The paper's headline shares beside ours (``findings.versus``), each quantity in words
    (:data:`HEADLINE_WORDS`)."""
    versus = findings.versus
    checks.require_columns(versus, ["quantity"], "findings.versus")
    return versus.assign(quantity=versus["quantity"].map(lambda q: HEADLINE_WORDS.get(q, q)))


def sim_view(findings: LL144AuditsFindings) -> pd.DataFrame:
    """The simulated scoring tables' AUC_DI and P_fair by spread (``findings.sim_table``), each audit named as the
    prose names it (:func:`audit_label`: deploying entity, tool, year), by its id where two audits share a label."""
    table = findings.sim_table
    checks.require_columns(table, ["audit_id"], "findings.sim_table")
    rows = findings.audits.drop_duplicates("audit_id").set_index("audit_id")
    labels = {a: audit_label(rows.loc[[a]]) if a in rows.index else a for a in table["audit_id"]}
    if len(set(labels.values())) < len(labels):  # two audits with one label: their ids tell them apart
        labels = {a: a for a in labels}
    return table.assign(audit_id=table["audit_id"].map(labels)).rename(columns={"audit_id": "audit"})


def smallest_view(findings: LL144AuditsFindings) -> pd.DataFrame:
    """The audits' smallest compared groups (``findings.smallest``) in the columns that fit the page: a group's and
    its comparator's applicants in one cell ("3 : 14", as the planning tables write group : comparator), and no
    category column (a group's name says it: "Asian" is a race/ethnicity, "Female Asian" intersectional).

    >>> from types import SimpleNamespace
    >>> t = pd.DataFrame({"audit": ["A, t, 2023"], "category": ["race/ethnicity"], "group": ["Asian"],
    ...                   "applicants": [3], "comparator's applicants": [1400], "comparator's rate": [0.93],
    ...                   "impact ratio": [0.72], "false-flag rate": [0.183], "detectable ratio": [0.5972]})
    >>> v = smallest_view(SimpleNamespace(smallest=t))
    >>> list(v.columns[:3]), v.iloc[0, 2]
    (['audit', 'group', 'applicants, group : comparator'], '3 : 1,400')
    """
    t = findings.smallest
    checks.require_columns(t, ["applicants", "comparator's applicants"], "findings.smallest")
    both = [f"{number_text(a)} : {number_text(c)}" for a, c in zip(t["applicants"], t["comparator's applicants"])]
    out = t.drop(columns=["applicants", "comparator's applicants", "category"], errors="ignore")
    out.insert(list(out.columns).index("group") + 1 if "group" in out else 0, "applicants, group : comparator", both)
    return out


def per_audit_bounds(bounds: pd.DataFrame, bound: float) -> pd.DataFrame:
    """One row per audit from the included, known groups of ``ll144.missing_data_bounds``: whether it passes the
    four-fifths rule on its known applicants, whether it has bounds, whether it could fail within the bounds
    (worst case; ``could_fail_prop``: the proportional variant) and its lowest ratio and lower bounds.

    >>> b = pd.DataFrame({"audit_id": [1, 1], "unknown": False, "excluded": False, "impact_ratio": [1.0, 0.9],
    ...                   "four_fifths": False, "impact_ratio_lower": [0.9, 0.7],
    ...                   "impact_ratio_lower_prop": [0.95, 0.85], "four_fifths_possible": [False, True]})
    >>> per_audit_bounds(b, 0.8)[["passes", "could_fail", "could_fail_prop", "min_lower"]].to_dict("records")
    [{'passes': True, 'could_fail': True, 'could_fail_prop': False, 'min_lower': 0.7}]
    """
    checks.require_columns(bounds, ["audit_id", "unknown", "excluded", "impact_ratio", "four_fifths",
                                    "impact_ratio_lower", "impact_ratio_lower_prop", "four_fifths_possible"],
                           "bounds")
    ok = bounds[~bounds["unknown"] & ~bounds["excluded"] & bounds["impact_ratio"].notna()]
    grouped = ok.groupby("audit_id")
    return pd.DataFrame({
        "passes": ~grouped["four_fifths"].any().astype(bool),
        "has_bounds": grouped["impact_ratio_lower"].count() > 0,
        "could_fail": grouped["four_fifths_possible"].any().astype(bool),
        "could_fail_prop": (ok["impact_ratio_lower_prop"] < bound).groupby(ok["audit_id"]).any(),
        "min_ir": grouped["impact_ratio"].min(), "min_lower": grouped["impact_ratio_lower"].min(),
        "min_lower_prop": grouped["impact_ratio_lower_prop"].min()})


def _share(flags: pd.Series, valid: pd.Series) -> float:
    """Share of ``flags`` among the rows where ``valid``."""
    return float(flags[valid].mean())


def share_words(k: int, n: int) -> str:
    """How the prose names ``k`` of ``n``: "all", "all but one", "most", "half", "a minority", "one" or "none".

    >>> [share_words(k, 10) for k in (10, 9, 6, 5, 3, 1, 0)]
    ['all', 'all but one', 'most', 'half', 'a minority', 'one', 'none']
    """
    if isinstance(k, bool) or isinstance(n, bool) or not 0 <= k <= n or n < 1:
        raise ValueError(f"k and n must be counts with 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    if k == n:
        return "all"
    if k == 0:
        return "none"
    if k == n - 1 and n > 2:
        return "all but one"
    if k == 1:
        return "one"
    return "most" if 2 * k > n else "half" if 2 * k == n else "a minority"


def power_of_ten(x: float) -> str:
    """A small positive number as one digit times a power of ten, in words a reader of prose can read.

    >>> power_of_ten(4.18e-21), power_of_ten(2.7e-7), power_of_ten(0.043), power_of_ten(0.0)
    ('4 × 10⁻²¹', '3 × 10⁻⁷', '0.04', '0')
    """
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"x must be a number >= 0, got {x!r}")
    if x == 0:
        return "0"
    if x >= 0.001:
        return f"{x:.1g}"
    mantissa, exponent = f"{x:.0e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mantissa} × 10{str(int(exponent)).translate(sup)}"


def spread_phrase(rates: pd.Series, *, low: float = 0.01, high: float = 0.05) -> str:
    """How the false-flag rates of many groups spread, in words: the quartiles (one digit: the middle of a
    distribution this skewed moves by orders of magnitude between neighbouring groups) and the shares below
    ``low`` and at or above ``high``.

    >>> spread_phrase(pd.Series([1e-30, 1e-20, 1e-10, 0.002, 0.3]))
    'a quarter of the groups have a false-flag rate below 1 × 10⁻²⁰, half below 1 × 10⁻¹⁰ and three quarters below 0.002; 80% are below 1% and 20% at or above 5%'
    """
    r = pd.to_numeric(rates, errors="coerce").dropna()
    if r.empty:
        raise ValueError("rates must hold at least one false-flag rate")
    q1, q2, q3 = (float(r.quantile(q)) for q in (0.25, 0.5, 0.75))
    return (f"a quarter of the groups have a false-flag rate below {power_of_ten(q1)}, half below "
            f"{power_of_ten(q2)} and three quarters below {power_of_ten(q3)}; {(r < low).mean():.0%} are below "
            f"{low:.0%} and {(r >= high).mean():.0%} at or above {high:.0%}")


def tie_phrase(n_tied: int, applicants: int) -> str:
    """How the smallest group of all was chosen, in words, when ``n_tied`` compared groups have as few
    ``applicants`` (:func:`smallest_groups`' rule).

    >>> tie_phrase(1, 3)
    'no other compared group has as few as 3 applicants'
    >>> tie_phrase(2, 3)
    'one of 2 compared groups with 3 applicants: of equally small groups, the one a fair process flags most often is shown, here and in each audit’s row below'
    """
    if n_tied < 1:
        raise ValueError(f"n_tied must be at least 1, got {n_tied!r}")
    if n_tied == 1:
        return f"no other compared group has as few as {applicants:,} applicants"
    return (f"one of {n_tied} compared groups with {applicants:,} applicants: of equally small groups, the one a "
            "fair process flags most often is shown, here and in each audit’s row below")


def smallest_groups(sizes: pd.DataFrame) -> pd.DataFrame:
    """Each audit's smallest compared group: the one with fewest applicants; of groups with equally few, the one a
    fair process flags most often (the highest false-flag rate), then the first in the table. Sorted the same way
    over the audits (fewest applicants first), so the first row is the smallest group of all.

    >>> t = pd.DataFrame({"audit_id": [1, 1, 2], "applicants": [5, 5, 9], "false_flag_rate": [0.1, 0.3, 0.2]})
    >>> smallest_groups(t).index.tolist()
    [1, 2]
    """
    checks.require_columns(sizes, ["audit_id", "applicants", "false_flag_rate"], "sizes", nonempty=True)
    order = ["applicants", "false_flag_rate"]
    ranked = sizes.sort_values(["audit_id", *order], ascending=[True, True, False], kind="stable")
    first = ranked.groupby("audit_id", sort=False).head(1)
    return first.sort_values([*order, "audit_id"], ascending=[True, False, True], kind="stable")


def audit_sizes(audits: pd.DataFrame, *, bound: float = ll144.FOUR_FIFTHS,
                exclude_below: float | None = ll144.EXCLUDE_BELOW,
                power: float = ll144.POWER) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Were the published audits large enough? Every compared group of every recomputed table
    (``ll144.impact_ratio_table`` of ``ll144.published_audit_counts``, one table per :data:`TABLE`) with the
    four-fifths rule's false-flag rate and detectable ratio at its published applicant counts against its table's
    comparator, the comparator's true rate its observed rate (``ll144.table_characteristics``, ``rates=True``:
    where the number selected was rebuilt from a rounded rate, the rate is the published one and there is no
    p-value), and the rows left out with the reason.

    The comparator is the recomputed table's (its highest rate among the included groups; a group whose rate equals
    it exactly, as fractions of the counts, is a comparator too and is not compared; of tied comparators, the one
    with most applicants is the others') and its rate is the one its counts give, ``comparator_rate``. Where the
    counts were rebuilt from a published rate, that is the published rate; ``comparator_published_rate`` shows the
    published one (the column ``result``; NaN where ``audits`` has none) beside it.

    Returns ``(groups, left_out)``: ``groups`` one row per compared group (``counts`` says ``"whole"`` or
    ``"rate only"``; ``comparator_ties``: the other groups tied with the comparator, left out), ``left_out`` the number
    of rows per reason (the published rows without both counts first).
    """
    checks.require_columns(audits, [*TABLE, *GROUPS, *COUNTS.values()], "audits", nonempty=True)
    counts = ll144.published_audit_counts(audits)
    tables = ll144.impact_ratio_table(counts, group=GROUPS, **COUNTS, by=TABLE, margins=False,
                                      exclude_below=exclude_below)
    ch = ll144.table_characteristics(tables, by=TABLE, rates=True, bound=bound, power=power)
    full = tables.join(ch)
    # the published rate of each table's comparator (the tied comparator with most applicants, as
    # table_characteristics takes it), beside the rate its counts give
    published = (counts if "result" in counts.columns else counts.assign(result=np.nan))[
        [*TABLE, *GROUPS, "result"]].drop_duplicates([*TABLE, *GROUPS])
    full = full.merge(published, on=[*TABLE, *GROUPS], how="left", validate="many_to_one").set_index(full.index)
    comparators = (full[full["status"] == "comparator"].sort_values("applicants", ascending=False, kind="stable")
                   .drop_duplicates(TABLE)[[*TABLE, "result"]].rename(columns={"result": "comparator_published_rate"}))
    ties = (full[full["status"] == "comparator"].groupby(TABLE).size() - 1).rename("comparator_ties").reset_index()
    groups = (full[full["status"].isin(["compared", "rate only"])].merge(comparators, on=TABLE, how="left")
              .merge(ties, on=TABLE, how="left"))
    groups["counts"] = np.where(groups["status"] == "compared", "whole", "rate only")
    groups = groups[[*TABLE, "group", "applicants", "comparator_applicants", "comparator_rate",
                     "comparator_published_rate", "comparator_ties", "impact_ratio", "four_fifths", "false_flag_rate",
                     "detectable_ratio", "p_value", "counts"]]
    status = full["status"].value_counts()
    left_out = pd.DataFrame(
        [{"reason": "published without both counts (rates or ratios only)", "rows": len(audits) - len(counts)}]
        + [{"reason": text, "rows": int(status.get(key, 0))} for key, text in SIZE_LEFT_OUT.items()])
    return groups.reset_index(drop=True), left_out[left_out["rows"] > 0].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class LL144AuditsFindings(Findings):
    """Everything the chapter shows.

    ``kinds`` audits by type of tool and data; ``demo_counts`` and ``demo`` one audit's intersectional counts and
    the sex rows of its ``ll144.bias_audit`` table; ``by_auditor`` disagreements by auditor and reason;
    ``compared`` every recomputed ratio; ``versus`` the headline shares against the paper's; ``ratios`` the
    published ratios by category (histogram); ``bounds`` one row per audit with its lowest ratio and bounds;
    ``sims`` the simulated scoring tables, ``sim_table`` their AUC_DI and P_fair by spread, ``sim_curves`` the DI
    curves of the largest table by spread and ``sim_cut`` its rejected share at the cut; ``study`` the LL144 table
    of the study system; ``sizes`` every compared group of the published audits with its false-flag rate and
    detectable ratio (:func:`audit_sizes`), ``smallest`` the audits' smallest groups, ``size_left_out`` the rows
    without them and why; ``audits`` the published audits; ``values`` the glued values, ``phrases`` the glued
    words; ``parameters`` the four-fifths ``bound``, the simulated ``spreads`` and the ``size_ratio`` the figures
    read.
    """

    audits: pd.DataFrame
    kinds: pd.DataFrame
    demo_counts: pd.DataFrame
    demo: pd.DataFrame
    compared: pd.DataFrame
    by_auditor: pd.DataFrame
    versus: pd.DataFrame
    ratios: pd.DataFrame
    bounds: pd.DataFrame
    sims: pd.DataFrame
    sim_table: pd.DataFrame
    sim_curves: dict[float, pd.Series]
    sim_cut: float
    study: pd.DataFrame
    sizes: pd.DataFrame
    smallest: pd.DataFrame
    size_left_out: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def _check(bound: Any, tol: Any, exclude_below: Any, sim_spreads: Any) -> list[float]:
    for name, value, low in (("bound", bound, 0.0), ("tol", tol, 0.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= low:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    if exclude_below is not None and (isinstance(exclude_below, bool) or not isinstance(exclude_below, (int, float))
                                      or not 0 <= exclude_below < 1):
        raise ValueError(f"exclude_below must be None or a share in [0, 1), got {exclude_below!r}")
    try:
        spreads = [float(s) for s in sim_spreads]
    except (TypeError, ValueError):
        raise ValueError(f"sim_spreads must be a non-empty list of positive numbers, got {sim_spreads!r}") from None
    if not spreads or not all(np.isfinite(s) and s > 0 for s in spreads):
        raise ValueError(f"sim_spreads must be a non-empty list of positive numbers, got {sim_spreads!r}")
    return list(sim_spreads)


def ll144_audits_findings(
    *, bound: float = ll144.FOUR_FIFTHS, tol: float = 0.01, exclude_below: float | None = ll144.EXCLUDE_BELOW,
    sim_n: int = 20000, sim_spreads: Sequence[float] = (0.3, 1.0, 3.0), grid_points: int = ll144.DEFAULT_GRID_POINTS,
    seed: int = 0, study_system: str = "smollm2-fp32-paper", study_k: int = 2, study_rounds: int = 2000,
    size_ratio: float = 0.7, size_false_flag: float = 0.2,
    audits: pd.DataFrame | None = None, paper: pd.DataFrame | None = None, study: pd.DataFrame | None = None,
) -> LL144AuditsFindings:
    r"""The chapter's findings from the published audits (``audits``, default :func:`read_audits`) and the paper's
    numbers (``paper``, default :func:`read_paper`).

    A published ratio *disagrees* when it differs from the one recomputed from its counts by more than ``tol``
    (the rules' option ``exclude_below`` leaves small groups out of the comparator); an audit *could fail* when
    the lower bound of one of its ratios, all unknown applicants put into that group and none selected, is below
    ``bound``. Each usable scoring-tool sex table is simulated with ``sim_n`` applicants at each spread of
    ``sim_spreads`` (the lower-rate group's, the other keeping 1), its DI curve read on
    ``ll144.default_grid(grid_points)``. The study table counts the top ``study_k`` of eight candidates of
    ``study_system`` over ``study_rounds`` rounds per job (``study``: a frame of scores with ``job, group, sex,
    race, score`` instead of the catalog's). Were the audits large enough (:func:`audit_sizes`): an audit
    *could detect* a true ratio of ``size_ratio`` when the detectable ratio of its smallest compared group is at
    least ``size_ratio`` (that ratio is flagged at least 80% of the time); a flagged group is one *a fair process
    flags often* when its false-flag rate is at least ``size_false_flag``. Bad parameters raise ``ValueError``
    naming the parameter.
    """
    spreads = _check(bound, tol, exclude_below, sim_spreads)
    size_ratio, size_false_flag = checks.proportion(size_ratio, "size_ratio"), \
        checks.proportion(size_false_flag, "size_false_flag")
    sim_n = checks.count(sim_n, "sim_n", 2)
    points = checks.count(grid_points, "grid_points", 2)
    seed = checks.seed(seed)
    k = checks.quota(study_k, name="study_k", pool=POOL)
    rounds = checks.count(study_rounds, "study_rounds")
    audits = read_audits() if audits is None else audits
    paper = read_paper() if paper is None else paper
    checks.require_columns(audits, [*TABLE, *GROUPS, *COUNTS.values(), "audit_report_id", "deploying_entity",
                                    "tool_vendor", "auditor", "type_of_tool", "data_type", "tool_id",
                                    "year_of_audit_result", "result", "impact_ratio"], "audits", nonempty=True)
    scalars: dict[str, Any] = {name: float(value) for name, value in
                               dict(bound=bound, tol=tol, exclude_below=exclude_below).items()}
    for name, col in dict(audits_n="audit_id", reports_n="audit_report_id", entities_n="deploying_entity",
                          vendors_n="tool_vendor", auditors_n="auditor").items():
        scalars[name] = int(audits[col].nunique())
    scalars["rows_n"] = len(audits)
    for q, v in paper["value"].items():
        scalars[f"paper_{q}"] = float(v)

    # what the audits are
    per_audit = audits.drop_duplicates("audit_id")
    kinds = pd.crosstab(per_audit["type_of_tool"], per_audit["data_type"], margins=True, margins_name="all")
    kinds = kinds.rename_axis(index="tool", columns=None).reset_index()
    top_auditors = per_audit["auditor"].value_counts()
    scalars.update(audits_scoring_n=int((per_audit["type_of_tool"] == "scoring").sum()),
                   audits_test_n=int((per_audit["data_type"] == "test").sum()),
                   audits_historical_n=int((per_audit["data_type"] == "historical").sum()),
                   top_auditor=top_auditors.index[0], top_auditor_n=int(top_auditors.iloc[0]))

    # one audit's table from its counts
    demo_id = audits.loc[audits["protected_char_group"] == "intersectional", "audit_id"].iloc[0]
    demo_rows = audits[(audits["audit_id"] == demo_id) & (audits["protected_char_group"] == "intersectional")]
    demo_rows = demo_rows.rename(columns={"race_ethnicity": "race", **{v: k for k, v in COUNTS.items()}})
    demo_counts = demo_rows[["sex", "race", "applicants", "selected"]].reset_index(drop=True)
    table = ll144.bias_audit(demo_counts, sex="sex", race="race", unknown=ll144.DEFAULT_UNKNOWN, tool="scoring").table
    demo_sex = table[table["category"] == "sex"].set_index("group")
    inter = table[(table["category"] == "sex × race") & ~table["unknown"]]
    scalars.update(demo_audit=audit_label(demo_rows),
                   demo_unknown_n=int(demo_sex["n_unknown"].dropna().iloc[0]),
                   demo_known_n=int(demo_sex.loc[~demo_sex["unknown"], "applicants"].sum()),
                   demo_excluded_n=int(inter["excluded"].sum()), demo_groups_n=len(inter),
                   demo_min_ir=float(inter.loc[~inter["excluded"], "impact_ratio"].min()))
    sex = table[table["category"] == "sex"]
    demo = pd.DataFrame({
        "group": sex["group"], "applicants": sex["applicants"], "rate": sex["rate"],
        "impact ratio": sex["impact_ratio"],
        "95% interval": [interval_text(lo, hi) for lo, hi in zip(sex["impact_ratio_low"], sex["impact_ratio_high"])],
        "bounds for the unknown": [interval_text(lo, hi) for lo, hi in
                                   zip(sex["impact_ratio_lower"], sex["impact_ratio_upper"])],
        "note": sex["note"].fillna("")})

    # every published ratio recomputed
    compared = ll144.compare_reported(audits, group=GROUPS, **COUNTS, reported_rate="result",
                                      reported_ratio="impact_ratio", by=TABLE, exclude_below=exclude_below, tol=tol)
    both = compared[compared["reported_impact_ratio"].notna() & compared["impact_ratio"].notna()]
    scalars.update(compared_n=len(both), audits_recomputed_ir_disagree_n=int(both["disagrees"].sum()),
                   not_computable_n=int((compared["reason"] == "not computable").sum()))
    for key, reason in zip(["counts", "rounded", "comparator", "unexplained"], ll144.DIFFERENCE_REASONS):
        scalars[f"reason_{key}_n"] = int((both["reason"] == reason).sum())
    both = both.merge(per_audit[["audit_id", "auditor"]], on="audit_id")
    unexplained = both[both["reason"] == "unexplained"]
    scalars.update(unexplained_dci_share=float((unexplained["auditor"] == DCI).mean()),
                   unexplained_audits_n=int(unexplained["audit_id"].nunique()))
    differ = both[both["disagrees"]]
    by_auditor = pd.crosstab(differ["auditor"], differ["reason"])
    by_auditor = by_auditor.loc[by_auditor.sum(axis=1).sort_values(ascending=False).index]
    by_auditor = by_auditor.rename_axis(columns=None).reset_index()

    # the paper's headline numbers
    headlines = ll144.published_audit_headlines(audits, recomputed=compared, bound=bound).set_index("quantity")
    for q, row in headlines.iterrows():
        scalars[HEADLINE_KEYS.get(q, f"{q}_share")] = float(row["share"])
        scalars[f"{q}_num"] = int(row["numerator"])
        scalars[f"{q}_den"] = int(row["denominator"])
    versus = headlines.join(paper[["value", "source"]]).rename(columns={"share": "ours", "value": "paper"})
    versus["source"] = versus["source"].str.replace(r" \(stated in .*\)", "", regex=True)
    scalars["headlines_max_diff"] = float((versus["ours"].round(2) - versus["paper"]).abs().max())
    versus = versus.rename_axis("quantity").reset_index()[["quantity", "numerator", "denominator", "ours", "paper",
                                                           "source"]]
    rows = ll144.published_audit_rows(audits, recomputed=compared)
    ratio = rows["impact_ratio_for_analysis"]
    with_applicants = rows["number_of_applications"] != 0
    sex_below = rows[(rows["protected_char_group"] == "sex") & (ratio < bound) & with_applicants]
    scalars["sex_tables_below_n"] = int(sex_below[TABLE].drop_duplicates().shape[0])
    scalars["results_rows_below_share"] = _share((ratio < bound) & with_applicants, ratio.notna())
    ratios = rows[ratio.notna() & with_applicants]

    # missing demographic data: one rate definition per audit ("top" for three-tier tools), no HackerRank
    several = audits.groupby("audit_id")["selection_or_scoring_rate"].transform("nunique") > 1
    first_rate = audits["selection_or_scoring_rate"].isin(["Selection", "Selection, top"])
    pmb = audits[(~several | first_rate) & (audits["deploying_entity"] != "Hackerrank")]
    bounds = ll144.missing_data_bounds(ll144.published_audit_counts(pmb), group=GROUPS, **COUNTS, by=TABLE,
                                       margins=False, exclude_below=exclude_below, bound=bound)
    ok = bounds[~bounds["unknown"] & ~bounds["excluded"] & bounds["impact_ratio"].notna()]
    per = per_audit_bounds(bounds, bound)
    judged = per[per["passes"] & per["has_bounds"]]
    scalars.update(bounds_audits_n=int(per["has_bounds"].sum()), bounds_pass_n=len(judged),
                   bounds_could_fail_n=int(judged["could_fail"].sum()),
                   bounds_could_fail_prop_n=int(judged["could_fail_prop"].sum()),
                   rows_lower_below_share=_share(ok["impact_ratio_lower"] < bound, ok["impact_ratio_lower"].notna()),
                   rows_lower_prop_below_share=_share(ok["impact_ratio_lower_prop"] < bound,
                                                      ok["impact_ratio_lower_prop"].notna()))
    per_bounds = per[per["has_bounds"]].sort_values("min_ir").reset_index()

    # what a scoring rate leaves open: simulated scores consistent with each scoring-tool sex table
    scalars["sim_spreads_text"] = ", ".join(f"{s:g}" for s in spreads)
    score_rows = ll144.published_audit_counts(audits[(audits["selection_or_scoring_rate"] == "Scoring")
                                                     & (audits["protected_char_group"] == "sex")])
    score_tables = ll144.impact_ratio_table(score_rows, group=GROUPS, **COUNTS, by=TABLE, margins=False,
                                            exclude_below=exclude_below)
    known = score_tables[~score_tables["unknown"] & (score_tables["applicants"] > 0)]
    inside = known["rate"].between(0, 1, inclusive="neither").groupby(known["audit_id"]).transform("all")
    size = known.groupby("audit_id")["rate"].transform("size")
    usable = known[(size == 2) & inside]
    grid = ll144.default_grid(points)
    sims, curves = [], {}
    for audit_id, t in usable.groupby("audit_id"):
        lower = t.loc[t["rate"].idxmin(), "sex"]
        for spread in spreads:
            sim = ll144.scores_consistent_with_rates(t, group="sex", spread={lower: spread}, n=sim_n, seed=seed)
            s = ll144.group_metric_summary(sim["score"], sim["sex"], threshold=SIM_CUT, grid=grid, bound=bound)
            sims.append({"audit_id": audit_id, "spread": spread, "lower_group": lower,
                         "published_ir": float(t["impact_ratio"].min()), **s.loc[lower, SIM_METRICS]})
            curves[(audit_id, spread)] = ll144.di_curve(sim["score"], sim["sex"], grid)[lower]
    sims = pd.DataFrame(sims)
    published = sims.groupby("audit_id")["published_ir"].first()
    largest = usable.groupby("audit_id")["applicants"].sum().idxmax()
    largest_sim = ll144.scores_consistent_with_rates(usable[usable["audit_id"] == largest], group="sex", n=sim_n,
                                                     seed=seed)
    sim_cut = float((largest_sim["score"] <= SIM_CUT).mean())
    scalars.update(
        sim_tables_n=int(sims["audit_id"].nunique()),
        sim_cut_error=float((sims["di_threshold"] - sims["published_ir"]).abs().max()),
        sim_median_error=float((sims["di_median"] - sims["published_ir"]).abs().max()),
        sim_pfair_min=float(sims["p_fair"].min()), sim_pfair_max=float(sims["p_fair"].max()),
        sim_auc_min=float(sims["auc_di"].min()), sim_auc_max=float(sims["auc_di"].max()),
        sim_published_min=float(sims["published_ir"].min()),
        sim_fail_pfair_n=int(sims[sims["published_ir"] >= bound].groupby("audit_id")["p_fair"].min().lt(bound).sum()),
        sim_pass_n=int((published >= bound).sum()), sim_di_avg_min=float(sims["di_avg"].min()),
        sim_example_cut=sim_cut,
        sim_example=audits.loc[audits["audit_id"] == largest, "deploying_entity"].iloc[0])
    sim_table = sims.pivot_table(index="audit_id", columns="spread", values=["auc_di", "p_fair"]).round(2)
    sim_table.columns = [f"{'AUC_DI' if m == 'auc_di' else 'P_fair'}, spread {s:g}" for m, s in sim_table.columns]
    sim_table = sim_table.assign(**{"published IR": published.round(3)}).reset_index()

    # an LL144 table for a study system
    if study is None:
        study = catalog.study_scores([study_system], jobs=list(data.JOBS), names_per_group=10, seed=0)
        study = study.rename(columns={"gender": "sex"}).reset_index(drop=True)
    checks.require_columns(study, ["job", "group", "sex", "race", "score"], "study", nonempty=True)
    pools = selection.draw_group_pools(study, rounds, seed, group="group", by="job")
    seats = selection.select_top_k(study["score"].to_numpy()[pools], k)
    study_counts = ll144.allocation_counts(study, pools, seats, group=["sex", "race"])
    study_table = ll144.bias_audit(study_counts, sex="sex", race="race", intervals=False).table
    included = study_table[~study_table["excluded"]]
    worst = included.loc[included["impact_ratio"].idxmin()]
    point_table = ll144.bias_audit(study[["sex", "race", "score"]], sex="sex", race="race", intervals=False).table
    scalars.update(study_system=study_system, study_k=int(study_k), study_rounds=int(study_rounds),
                   study_min_ir=float(worst["impact_ratio"]), study_min_group=f"{worst['group']} ({worst['category']})",
                   study_flags_n=int(study_table["four_fifths"].sum()), study_parity=study_k / 8,
                   study_scoring_min_ir=float(point_table["impact_ratio"].min()),
                   study_scoring_flags_n=int(point_table["four_fifths"].sum()))
    study_view = study_table[["category", "group", "applicants", "selected", "rate", "impact_ratio", "four_fifths"]]

    # were the audits large enough? the four-fifths rule's error rates at the published counts
    sizes, size_left_out = audit_sizes(audits, bound=bound, exclude_below=exclude_below)
    sizes = sizes.merge(per_audit[["audit_id", "deploying_entity", "tool_id", "year_of_audit_result"]], on="audit_id")
    smallest = smallest_groups(sizes)
    detect = smallest["detectable_ratio"] >= size_ratio  # NaN (nothing is flagged 80% of the time): cannot
    flagged = sizes[sizes["four_fifths"]]
    often = flagged["false_flag_rate"] >= size_false_flag
    left = size_left_out.set_index("reason")["rows"]
    tiniest = smallest.iloc[0]
    diff = (sizes["comparator_rate"] - sizes["comparator_published_rate"]).abs()
    rebuilt_diff, whole_diff = diff[sizes["counts"] == "rate only"].dropna(), diff[sizes["counts"] == "whole"].dropna()
    tied_comparators = int(sizes.drop_duplicates(TABLE)["comparator_ties"].sum())
    scalars.update(
        size_ratio=float(size_ratio), size_false_flag=float(size_false_flag),
        size_groups_n=len(sizes), size_audits_n=int(sizes["audit_id"].nunique()),
        size_whole_n=int((sizes["counts"] == "whole").sum()),
        size_rate_only_n=int((sizes["counts"] == "rate only").sum()),
        size_no_counts_n=int(left.iloc[0]) if left.index[0].startswith("published without") else 0,
        size_left_out_n=int(left.sum()),
        size_detect_n=int(detect.sum()), size_detect_den=len(smallest),
        size_flagged_n=len(flagged), size_flagged_often_n=int(often.sum()),
        size_ffr_median=float(sizes["false_flag_rate"].median()),
        size_ffr_q1=float(sizes["false_flag_rate"].quantile(0.25)),
        size_ffr_q3=float(sizes["false_flag_rate"].quantile(0.75)),
        size_ffr_below_1pct_share=float((sizes["false_flag_rate"] < 0.01).mean()),
        size_smallest_tied_n=int((sizes["applicants"] == tiniest["applicants"]).sum()),
        size_audits_smallest_tied_n=int(sizes.groupby("audit_id")["applicants"].apply(
            lambda a: int((a == a.min()).sum()) > 1).sum()),
        size_tied_comparators_n=int(tied_comparators),
        size_comparator_rebuilt_max_diff=float(rebuilt_diff.max()) if len(rebuilt_diff) else 0.0,
        size_comparator_whole_differs_n=int((whole_diff > ROUNDING).sum()),
        size_comparator_whole_differs_tables_n=int(
            sizes.loc[whole_diff.index[whole_diff > ROUNDING], TABLE].drop_duplicates().shape[0]),
        size_dr_median=float(sizes["detectable_ratio"].median()),
        size_smallest_median=float(smallest["applicants"].median()),
        size_smallest_detect_median=float(smallest["detectable_ratio"].median()),
        size_applicants_min=int(sizes["applicants"].min()))
    phrases = {
        "size_detect_words": share_words(int(detect.sum()), len(smallest)),
        "size_flagged_often_words": share_words(int(often.sum()), len(flagged)) if len(flagged) else "none",
        "size_smallest_reading": ll144.four_fifths_reading(tiniest["applicants"], tiniest["comparator_applicants"],
                                                           tiniest["false_flag_rate"], tiniest["detectable_ratio"]),
        "size_smallest_audit": audit_label(tiniest.to_frame().T),
        "size_ffr_spread": spread_phrase(sizes["false_flag_rate"]),
        "size_smallest_tie": tie_phrase(int((sizes["applicants"] == tiniest["applicants"]).sum()),
                                        int(tiniest["applicants"]))}
    smallest_view = pd.DataFrame({
        "audit": [audit_label(r.to_frame().T) for _, r in smallest.iterrows()],
        "category": smallest["protected_char_group"], "group": smallest["group"],
        "applicants": smallest["applicants"], "comparator's applicants": smallest["comparator_applicants"],
        "comparator's rate": smallest["comparator_rate"], "impact ratio": smallest["impact_ratio"],
        "false-flag rate": smallest["false_flag_rate"], "detectable ratio": smallest["detectable_ratio"]})
    return LL144AuditsFindings(
        audits=audits, kinds=kinds, demo_counts=demo_counts, demo=demo.reset_index(drop=True), compared=compared,
        by_auditor=by_auditor, versus=versus, ratios=ratios, bounds=per_bounds, sims=sims, sim_table=sim_table,
        sim_curves={s: curves[(largest, s)] for s in spreads}, sim_cut=sim_cut,
        study=study_view.reset_index(drop=True), sizes=sizes, smallest=smallest_view.head(SMALLEST_ROWS)
        .reset_index(drop=True), size_left_out=size_left_out,
        parameters={"bound": float(bound), "spreads": spreads, "size_ratio": float(size_ratio)},
        values=scalars, phrases=phrases)


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_impact_ratios(findings: LL144AuditsFindings) -> Figure:
    """Histogram of the published impact ratios (ours where none is published) by category, with the bound."""
    order = ["sex", "race/ethnicity", "intersectional"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.histplot(findings.ratios, x="impact_ratio_for_analysis", hue="protected_char_group", hue_order=order,
                 multiple="layer", element="step", stat="count", common_norm=False, binrange=(0, 1.6),
                 binwidth=0.025, ax=ax)
    ax.get_legend().set_title("category")
    ax.axvline(findings.parameters["bound"], color="black", ls="--", lw=1)
    label_axes(ax, title="Published impact ratios by category (dashed: four-fifths bound)",
               x="impact ratio (published; ours where none)", y="group-level results (count)")
    return fig


def figure_bounds(findings: LL144AuditsFindings) -> Figure:
    """Each audit's lowest impact ratio (dot; blue: passes, red: fails) down to its worst-case lower bound for the
    unknown applicants (line) and its proportional lower bound (dash), audits sorted by their lowest ratio."""
    plot = findings.bounds
    colors = np.where(plot["passes"], "tab:blue", "tab:red")
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.vlines(plot.index, plot["min_lower"], plot["min_ir"], color=colors, lw=1.2)
    ax.scatter(plot.index, plot["min_ir"], c=colors, s=10, zorder=3)
    ax.scatter(plot.index, plot["min_lower_prop"], marker="_", color="black", s=30, zorder=3)
    ax.axhline(findings.parameters["bound"], color="black", ls="--", lw=1)
    label_axes(ax, title="Lowest impact ratio per audit and its lower bound for unknown applicants",
               x="audit (sorted by its lowest ratio; blue: passes, red: fails)",
               y="impact ratio (dash: proportional bound)")
    ax.set_ylim(0, 1.3)
    return fig


def figure_simulation(findings: LL144AuditsFindings) -> Figure:
    """The DI curves of the lower-rate sex of the largest scoring table, one per simulated spread, with the bound
    (dashed) and the rejected share at the audit's cut (dotted)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    for spread, curve in findings.sim_curves.items():
        ax.plot(curve.index, curve.to_numpy(), label=f"spread {spread:g}")
    ax.axhline(findings.parameters["bound"], color="black", ls="--", lw=1)
    ax.axvline(findings.sim_cut, color="grey", ls=":", lw=1)
    label_axes(ax, title="One published scoring table, three score distributions that reproduce it\n"
                         "(dotted: its cut)",
               x="share of applicants rejected p", y="impact ratio of the lower-rate sex DI(p)")
    ax.legend(title="lower-rate group", loc="lower left")
    return fig


def figure_audit_sizes(findings: LL144AuditsFindings) -> Figure:
    """The detectable ratio of every compared group of the published audits against its applicants (log scale),
    one marker and colour per category, with the four-fifths bound (dashed) and the ratio an audit should detect
    (dotted): a group below the dotted line cannot reliably see a true ratio that low."""
    plot = findings.sizes.dropna(subset=["detectable_ratio"])
    fig, ax = plt.subplots(figsize=(7, 4.0))
    for (category, marker), color in zip([("sex", "o"), ("race/ethnicity", "s"), ("intersectional", "^")],
                                         ["tab:blue", "tab:orange", "tab:green"]):
        part = plot[plot["protected_char_group"] == category]
        ax.scatter(part["applicants"], part["detectable_ratio"], marker=marker, s=14, alpha=0.6, color=color,
                   label=f"{category} ({len(part)})")
    ax.set_xscale("log")
    ax.axhline(findings.parameters["bound"], color="black", ls="--", lw=1)
    ax.axhline(findings.parameters["size_ratio"], color="black", ls=":", lw=1)
    label_axes(ax, title="Detectable ratio of each compared group (flagged 80% of the time)\n"
                         f"(dashed: {findings.parameters['bound']:g}; dotted: {findings.parameters['size_ratio']:g})",
               x="applicants of the group (log scale)", y="detectable ratio")
    ax.legend(title="category", loc="lower right")
    return fig
