r"""Planning an audit before it runs: how many applicants a Local Law 144 audit needs, and how many names, jobs
and runs an LLM audit needs. What ``allocbias plan`` prints, and what the book's chapter on audit size tabulates.

**Local Law 144.** The four-fifths rule flags a group whose selection rate is below 0.8 of its comparator's. At
given counts its two error rates are exact (:mod:`allocbias.measures.ll144.power`): the *false-flag rate* (a group
whose true rate equals the comparator's flagged) and the *detectable ratio* (the true impact ratio flagged with
probability 0.8). The comparator is written as a multiple of the group, its *size ratio* :math:`c` (comparator
applicants per applicant of the group: ``1`` for equal groups, ``10`` for "1:10"), and has :math:`\max(1,
\mathrm{round}(c\,n))` applicants when the group has :math:`n`.

* :func:`ll144_at`: both error rates at given numbers of applicants per group;
* :func:`ll144_size_needed`: the applicants per group from which a fair process is flagged less than
  ``false_flag`` of the time, and from which a true impact ratio of ``ratio`` is flagged at least ``power`` of the
  time. Both rates saw-tooth with the counts (the bound falls between whole numbers of selected differently at
  each size), so the answer is the size from which on *every* size up to ``search_max`` meets the condition.
  Because the flag probability falls as the true ratio rises, "the detectable ratio is at least ``ratio``" is the
  same condition as "a true ratio of ``ratio`` is flagged at least ``power`` of the time"; the search evaluates
  the second, one exact sum per size, instead of solving for the detectable ratio at every size;
* :func:`ll144_size_grid`: those sizes over several selection rates and size ratios.

**An LLM audit.** A selection-rate gap measured on :math:`u` units (names, jobs, runs; a vacancy, an answer) has
a reliability :math:`\rho_u`; from a reliability :math:`\rho` measured on :math:`m` units, one unit's is
:math:`\rho_1 = \rho / (m - (m-1)\rho)` (Spearman--Brown down to one unit,
:func:`allocbias.measures.reliability.spearman_brown` with factor :math:`1/m`), and a target :math:`t` needs
:math:`u^* = \lceil m\,t(1-\rho)/(\rho(1-t)) \rceil` units (:func:`allocbias.measures.reliability.size_for_reliability`,
rounded up). A design of ``names`` names per group, ``jobs`` jobs and ``runs`` runs gives each gap pooled over its
jobs ``names × jobs × runs`` units, and a gap of one job ``names × runs``; every added unit is assumed as
informative as those measured (the prophecy's assumption, checked by the book only for the unit each data set
varies).

* :func:`per_unit_reliability`, :func:`units_needed`, :func:`names_needed` and :func:`llm_plan`;
* :func:`measured_reliability`: the reliabilities the book measured on four public audits (shipped with the
  package, ``resources/measured_reliability.csv``, written by ``scripts/build_measured_reliability.py`` from the
  chapter's own computation), one of which an auditor may assume before a pilot audit;
* :func:`audit_reliability`: the reliability an earlier ``allocbias audit`` measured over its names (its
  ``tables/report_audit_size.csv``).

Pure functions except :func:`measured_reliability`, which reads the shipped table through its digest check.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import checks
from . import reliability
from .ll144 import power as ll144_power
from .ll144.regression import FOUR_FIFTHS

__all__ = [
    "LL144_SEARCH_MAX",
    "MEASURED_COLUMNS",
    "MEASURED_FILE",
    "TARGETS",
    "audit_command",
    "audit_reliability",
    "comparator_applicants",
    "group_ratio_label",
    "ll144_at",
    "ll144_size_grid",
    "ll144_size_needed",
    "llm_plan",
    "measured_reliability",
    "names_needed",
    "parse_group_ratio",
    "per_unit_reliability",
    "units_needed",
]

#: Every applicants per group from 1 to this is checked by :func:`ll144_size_needed` (default).
LL144_SEARCH_MAX = 3000
#: The reliabilities a plan aims at: moderately reliable from 0.5, reliable from 0.8.
TARGETS: tuple[float, ...] = (0.5, 0.8)
#: The shipped table of the book's measured reliabilities (``allocbias/resources/``).
MEASURED_FILE = "measured_reliability.csv"
#: Its columns: a key to name it by, the data set, the level of its gap, the unit, the quota, how many units per
#: half the reliability was measured on, the reliability (mean over splits) and its 95% range over splits, one
#: unit's reliability (Spearman--Brown), the splits and seed, and a sentence that says what one unit is.
MEASURED_COLUMNS: tuple[str, ...] = ("key", "data set", "level", "unit", "k", "size per half", "reliability", "lo",
                                     "hi", "reliability of one unit", "n_splits", "seed", "one unit is")


# --------------------------------------------------------------------------------------------------------------
# Local Law 144
# --------------------------------------------------------------------------------------------------------------
def parse_group_ratio(value: Any) -> float:
    """The comparator's applicants per applicant of the group, from a number (``4``, ``"0.5"``) or a ratio written
    group : comparator (``"1:4"``, ``"2:3"``).

    >>> parse_group_ratio("1:4"), parse_group_ratio("2:3"), parse_group_ratio(10), parse_group_ratio("1")
    (4.0, 1.5, 10.0, 1.0)
    >>> parse_group_ratio("4:0")
    Traceback (most recent call last):
    ...
    ValueError: group ratio must be a positive number or GROUP:COMPARATOR of positive numbers (1:4 = a comparator four times the group), got '4:0'
    """
    text = str(value).strip()
    try:
        if ":" in text:
            group, comparator = (float(part) for part in text.split(":"))
            ratio = comparator / group if group > 0 else float("nan")
            ratio = ratio if comparator > 0 else float("nan")
        else:
            ratio = float(text)
    except ValueError:
        ratio = float("nan")
    if not (np.isfinite(ratio) and ratio > 0):
        raise ValueError("group ratio must be a positive number or GROUP:COMPARATOR of positive numbers (1:4 = a "
                         f"comparator four times the group), got {value!r}")
    return ratio


def group_ratio_label(ratio: float) -> str:
    """A size ratio as the plan prints it: group : comparator.

    >>> group_ratio_label(1), group_ratio_label(10), group_ratio_label(1.5), group_ratio_label(0.5)
    ('1:1', '1:10', '1:1.5', '1:0.5')
    """
    return f"1:{float(ratio):g}"


def comparator_applicants(applicants: Any, group_ratio: float = 1.0) -> np.ndarray:
    """The comparator's applicants for groups of ``applicants``: ``max(1, round(group_ratio * n))``.

    >>> comparator_applicants([10, 25, 101], 1.5).tolist()
    [15, 38, 152]
    """
    ratio = parse_group_ratio(group_ratio)
    n = np.atleast_1d(np.asarray(applicants, dtype=float))
    if not np.isfinite(n).all() or (n < 1).any() or (n != np.round(n)).any():
        raise ValueError(f"applicants must be whole numbers >= 1, got {applicants!r}")
    # round half up (np.rint rounds half to even, which would make 1:1.5 at 25 applicants 37 rather than 38)
    return np.maximum(1, np.floor(ratio * n + 0.5)).astype(np.int64)


def ll144_at(applicants: Sequence[int] | int, rate: float, *, group_ratio: float = 1.0,
             comparator: Sequence[int] | int | None = None, bound: float = FOUR_FIFTHS,
             power: float = ll144_power.POWER) -> pd.DataFrame:
    """The four-fifths rule's false-flag rate and detectable ratio for groups of ``applicants`` against a
    comparator selected at ``rate``: the comparator has ``comparator`` applicants (one number, or one per group) or,
    without it, ``group_ratio`` times the group's (:func:`comparator_applicants`).

    Columns: ``applicants per group``, ``comparator's applicants``, ``comparator's selection rate``,
    ``false-flag rate`` (:func:`allocbias.measures.ll144.power.false_flag_rate`) and ``detectable ratio``
    (:func:`~allocbias.measures.ll144.power.detectable_ratio`; NaN where no true ratio is flagged ``power`` of the
    time).

    >>> ll144_at([40, 400], 0.25, group_ratio=10).round(3).values.tolist()
    [[40.0, 400.0, 0.25, 0.242, 0.601], [400.0, 4000.0, 0.25, 0.011, 0.732]]
    """
    rate = checks.proportion(rate, "rate")
    n = np.atleast_1d(np.asarray(applicants))
    if n.size == 0:
        raise ValueError("applicants must name at least one number of applicants per group")
    if comparator is None:
        nc = comparator_applicants(n, group_ratio)
    else:
        nc = np.broadcast_to(ll144_power._counts(comparator, "comparator"), n.shape)
        if (nc < 1).any():
            raise ValueError(f"comparator must be at least 1 applicant, got {comparator!r}")
    n = comparator_applicants(n, 1.0)  # checks whole numbers >= 1
    return pd.DataFrame({
        "applicants per group": n, "comparator's applicants": nc, "comparator's selection rate": rate,
        "false-flag rate": np.atleast_1d(ll144_power.false_flag_rate(n, nc, rate, bound=bound)),
        "detectable ratio": np.atleast_1d(ll144_power.detectable_ratio(n, nc, rate, power=power, bound=bound))})


def _from_on(ok: np.ndarray) -> int | None:
    """The smallest 1-based size from which every larger size of the search also meets the condition."""
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(bad[-1] + 2) if bad.size else 1


def ll144_size_needed(rate: float, *, group_ratio: float = 1.0, comparator: int | None = None,
                      false_flag: float = 0.05, ratio: float = 0.7, search_max: int = LL144_SEARCH_MAX,
                      bound: float = FOUR_FIFTHS, power: float = ll144_power.POWER) -> dict[str, int | None]:
    """The smallest applicants per group (the comparator ``group_ratio`` times as many, or ``comparator``
    applicants whatever the group's size, selected at ``rate``) from which a fair process is flagged less than
    ``false_flag`` of the time (``"false_flag_n"``), and from which a true impact ratio of ``ratio`` is flagged at
    least ``power`` of the time, i.e. the detectable ratio is at least ``ratio`` (``"detect_n"``). Every size from
    1 to ``search_max`` is computed exactly; the answer is the size from which on every size up to ``search_max``
    meets the condition, ``None`` where ``search_max`` does not.

    >>> ll144_size_needed(0.25, search_max=600)
    {'false_flag_n': 328, 'detect_n': 307}
    >>> ll144_size_needed(0.25, group_ratio=4, search_max=600)
    {'false_flag_n': 227, 'detect_n': 204}
    >>> ll144_size_needed(0.25, comparator=5000, search_max=600)
    {'false_flag_n': 203, 'detect_n': 167}
    """
    rate = checks.proportion(rate, "rate")
    checks.proportion(false_flag, "false_flag")
    checks.proportion(ratio, "ratio")
    checks.proportion(power, "power")
    n = np.arange(1, checks.count(search_max, "search_max", 2) + 1)
    nc = comparator_applicants(n, group_ratio) if comparator is None else \
        np.full(n.size, checks.count(comparator, "comparator"), dtype=np.int64)
    outcomes = ll144_power._Outcomes(n, nc, np.full(n.size, rate), ll144_power._check_bound(bound))
    fair = outcomes.flag(np.full(n.size, rate))
    at_ratio = outcomes.flag(np.full(n.size, ratio * rate))
    return {"false_flag_n": _from_on(fair < false_flag), "detect_n": _from_on(at_ratio >= power)}


def ll144_size_grid(rates: Sequence[float], group_ratios: Sequence[float], *, false_flag: float = 0.05,
                    ratio: float = 0.7, search_max: int = LL144_SEARCH_MAX, bound: float = FOUR_FIFTHS,
                    power: float = ll144_power.POWER) -> pd.DataFrame:
    """:func:`ll144_size_needed` for every selection rate and size ratio: one row per (rate, ratio) with
    ``selection rate``, ``group ratio`` (comparator applicants per group applicant), ``false_flag_n`` and
    ``detect_n`` (nullable integers: missing where ``search_max`` is not enough), and the ``search_max``.

    >>> ll144_size_grid([0.25], [1, 4], search_max=600)[["group ratio", "false_flag_n", "detect_n"]].values.tolist()
    [[1.0, 328, 307], [4.0, 227, 204]]
    """
    rates = [checks.proportion(r, "rates") for r in rates]
    ratios = [parse_group_ratio(r) for r in group_ratios]
    if not rates or not ratios:
        raise ValueError("rates and group_ratios must each name at least one value")
    rows = []
    for r in rates:
        for c in ratios:
            need = ll144_size_needed(r, group_ratio=c, false_flag=false_flag, ratio=ratio, search_max=search_max,
                                     bound=bound, power=power)
            rows.append({"selection rate": r, "group ratio": c, **need})
    out = pd.DataFrame(rows)
    for col in ("false_flag_n", "detect_n"):
        out[col] = out[col].astype("Int64")
    out["search_max"] = int(search_max)
    return out


# --------------------------------------------------------------------------------------------------------------
# an LLM audit: names per group x jobs x runs
# --------------------------------------------------------------------------------------------------------------
def _reliability_in(rho: Any, name: str = "rho") -> float:
    try:
        value = float(rho)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {rho!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {rho!r}: a reliability of 0 or less gives Spearman–Brown "
                         "nothing to extrapolate, and 1 needs no planning")
    return value


def per_unit_reliability(rho: float, size: float) -> float:
    r"""One unit's reliability from a reliability ``rho`` measured on ``size`` units: Spearman--Brown with the
    factor ``1 / size``, :math:`\rho / (m - (m-1)\rho)`.

    >>> round(per_unit_reliability(0.5, 4), 4), per_unit_reliability(0.3, 1)
    (0.2, 0.3)
    """
    rho = _reliability_in(rho)
    if not (np.isfinite(size) and size > 0):
        raise ValueError(f"size must be a positive number of units, got {size!r}")
    return float(reliability.spearman_brown(rho, 1.0 / float(size)))


def units_needed(rho: float, size: float, target: float) -> int:
    """The units a gap needs for the reliability ``target``, from ``rho`` measured on ``size`` units:
    :func:`allocbias.measures.reliability.size_for_reliability` rounded up to a whole unit (a result within
    ``1e-9`` of a whole number is that number, so rounding error never adds a unit).

    >>> units_needed(0.5, 10, 0.8), units_needed(0.2, 1, 0.8), units_needed(0.9, 4, 0.5)
    (40, 16, 1)
    """
    rho = _reliability_in(rho)
    target = _reliability_in(target, "target")
    exact = float(reliability.size_for_reliability(rho, size, target))
    return max(1, math.ceil(exact - 1e-9))


def names_needed(units: int, *, jobs: int = 1, runs: int = 1) -> int:
    """Names per group that give ``units`` units with ``jobs`` jobs and ``runs`` runs per prompt (rounded up).

    >>> names_needed(58, jobs=4), names_needed(58), names_needed(58, jobs=4, runs=5)
    (15, 58, 3)
    """
    units = checks.count(units, "units")
    per_name = checks.count(jobs, "jobs") * checks.count(runs, "runs")
    return -(-units // per_name)


def llm_plan(rho: float, size: float, *, targets: Sequence[float] = TARGETS, jobs: Sequence[int] = (1, 4),
             runs: int = 1) -> pd.DataFrame:
    """For each reliability target, the units a gap needs (:func:`units_needed` from ``rho`` measured on ``size``
    units) and the names per group that give them with each number of ``jobs`` (a gap pooled over that many jobs;
    ``jobs = 1``: a gap of one job) at ``runs`` runs per prompt.

    Columns: ``target``, ``units``, then ``names per group, J job(s)`` for each J.

    >>> llm_plan(0.12, 2, jobs=(1, 4)).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'target': 0.5, 'units': 15, 'names per group, 1 job': 15, 'names per group, 4 jobs': 4},
     {'target': 0.8, 'units': 59, 'names per group, 1 job': 59, 'names per group, 4 jobs': 15}]
    """
    jobs = [checks.count(j, "jobs") for j in jobs]
    if not jobs:
        raise ValueError("jobs must name at least one number of jobs")
    rows = []
    for t in targets:
        u = units_needed(rho, size, t)
        row: dict[str, Any] = {"target": float(t), "units": u}
        for j in jobs:
            row[f"names per group, {j} job" + ("" if j == 1 else "s")] = names_needed(u, jobs=j, runs=runs)
        rows.append(row)
    return pd.DataFrame(rows)


def measured_reliability() -> pd.DataFrame:
    """The reliabilities the book measured on four public LLM audits (chapter "How large must an audit be?"), one
    row per gap: :data:`MEASURED_COLUMNS`, indexed by ``key``. Read from the package's
    ``resources/measured_reliability.csv`` after its digest check.

    >>> table = measured_reliability()
    >>> sorted(table.index)
    ['bloomberg', 'jderbysh', 'lippens-job-type', 'lippens-occupation', 'lippens-pooled', 'recinq']
    >>> table.loc["recinq", ["size per half", "reliability", "reliability of one unit"]].round(3).tolist()
    [2.0, 0.12, 0.064]
    """
    from ..audited import datasets
    from ..audited.locations import shipped

    table = datasets.read_csv(shipped(MEASURED_FILE))
    checks.require_columns(table, MEASURED_COLUMNS, MEASURED_FILE, nonempty=True)
    return table.set_index("key")


def audit_command(command: str | None, names: int) -> str:
    """An ``allocbias audit`` command line with ``--names-per-group`` set to ``names`` (added when absent);
    without a ``command``, a template with ``MODEL`` and ``OUT`` to fill in.

    >>> audit_command("allocbias audit --model m --out 'my audit' --names-per-group 10", 39)
    "allocbias audit --model m --out 'my audit' --names-per-group 39"
    >>> audit_command(None, 15)
    'allocbias audit --model MODEL --out OUT --names-per-group 15'
    """
    import shlex

    names = checks.count(names, "names")
    words = shlex.split(command or "allocbias audit --model MODEL --out OUT")
    for i, w in enumerate(words):
        if w == "--names-per-group" and i + 1 < len(words):
            words[i + 1] = str(names)
            return shlex.join(words)
        if w.startswith("--names-per-group="):
            words[i] = f"--names-per-group={names}"
            return shlex.join(words)
    return shlex.join([*words, "--names-per-group", str(names)])


def audit_reliability(size_table: pd.DataFrame, k: int | None = None) -> dict[str, Any]:
    """The reliability an ``allocbias audit`` measured over its names, from its ``report_audit_size.csv``
    (:func:`allocbias.audit.audit_size_table`): the row of quota ``k`` (default the first), as ``k``,
    ``reliability`` (two halves of the names, split within each job and group), ``size`` (names per group in a
    half), ``names_per_group`` and ``n_points`` (the (job, group) points correlated; None when not recorded).

    >>> t = pd.DataFrame({"k": [1, 2], "names_per_group": [10, 10], "names_per_half": [5, 5], "n_points": [28, 28],
    ...                   "reliability_half": [0.3, 0.4]})
    >>> audit_reliability(t, k=2)
    {'k': 2, 'reliability': 0.4, 'size': 5, 'names_per_group': 10, 'n_points': 28}
    """
    checks.require_columns(size_table, ["k", "names_per_group", "names_per_half", "reliability_half"],
                           "the audit's report_audit_size.csv", nonempty=True)
    if k is None:
        row = size_table.iloc[0]
    else:
        match = size_table[size_table["k"] == int(k)]
        if match.empty:
            raise ValueError(f"the audit measured no reliability at k = {k}: its quotas are "
                             f"{', '.join(str(int(x)) for x in size_table['k'])}")
        row = match.iloc[0]
    return {"k": int(row["k"]), "reliability": float(row["reliability_half"]), "size": int(row["names_per_half"]),
            "names_per_group": int(row["names_per_group"]),
            "n_points": int(row["n_points"]) if "n_points" in row.index else None}
