r"""How large must an audit be? The findings of the chapter on the reliability of selection-rate gaps.

Chapter 11 found that on real large models' scores the top-1 selection-rate gap of a Lippens job type barely agrees
with itself between two halves of its vacancies. This chapter measures that agreement as a function of the audit's
size and level of aggregation, carries it to other sizes with Spearman--Brown, and asks which statistic computed
on one half of an audit best forecasts the gap of the other half (:mod:`allocbias.measures.reliability`):

* **Lippens** (1,920 vacancies, 64 job types of 30, 18 CVs each): the reliability curve of the top-1 and top-2
  gaps against the vacancies per job type in each half, at three levels (job type; occupation; all vacancies
  pooled into the 17 origin x sex groups against native Belgian men), the vacancies needed for a reliability of
  0.5 and 0.8, and at each level the forecast test for RABBI, δ, JSD, EMD and the gap itself.
* **re-cinq** (11 models x 17 jobs, one name per group, 5 runs): the reliability against runs per cell.
* **Bloomberg** (GPT-3.5 and GPT-4 ranking 8 names, about 950 answers per model x job): against answers per cell.
* **jderbysh** (2 models x 9 jobs, 9 résumés under 36 names): against résumés per cell.
* Planning (:mod:`allocbias.measures.planning`, which ``allocbias plan`` runs too): which measured reliability to
  assume for which audit, the names per group ``allocbias audit`` needs under each (its units are names x its four
  jobs: it scores each prompt once at temperature 0, so runs add nothing), and for a Local Law 144 audit the
  applicants per group from which the four-fifths rule rarely flags a fair process and often flags a true ratio,
  over selection rates and group : comparator size ratios, with both error rates at given counts
  (:mod:`allocbias.measures.ll144.power`). The measured reliabilities are shipped with the package
  (:func:`measured_reliability_table`, ``scripts/build_measured_reliability.py``).

:func:`audit_size_findings` computes all of it and returns an :class:`AuditSizeFindings`; the ``figure_*``
functions draw the chapter's figures from it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import checks
from ..checks import require_columns
from ..measures import ll144, metrics, planning, reliability, selection
from ..measures.verdicts import reliability_word, verdict_words  # the book's one set of words (reliability_word re-exported)
from .findings import Findings

__all__ = [
    "AuditSizeFindings",
    "FORECAST_DASH",
    "MEASURED_UNITS",
    "RELIABILITY_DASH",
    "audit_designs",
    "audit_phrase",
    "audit_size_findings",
    "comparison_phrase",
    "curve_phrase",
    "figure_curves",
    "figure_forecast",
    "figure_units",
    "forecast_phrase",
    "forecast_view",
    "ll144_planning_table",
    "ll144_size_needed",
    "ll144_size_view",
    "measured_reliability_table",
    "reliability_guidance",
    "reliability_view",
    "reliability_word",
    "shipped_phrase",
    "size_phrase",
]

#: The statistics of the forecast test, in the chapter's order, and how the prose names them.
STATISTIC_NAMES: Mapping[str, str] = {"rabbi": "RABBI", "avg_gap": "δ", "jsd": "JSD", "emd": "EMD",
                                      "gap": "the gap itself"}
METRICS: tuple[str, ...] = metrics.STUDY_METRICS
#: Lippens' levels of aggregation: the label and the column that makes a system (None: every vacancy in one).
LEVELS: Mapping[str, str | None] = {"job type": "job_type", "occupation": "occupation", "all vacancies": None}
#: Lippens audited this many vacancies per job type.
LIPPENS_PER_JOB_TYPE = 30


# --------------------------------------------------------------------------------------------------------------
# words that depend on the results
# --------------------------------------------------------------------------------------------------------------
def _fmt(x: float, digits: int = 2) -> str:
    text = f"{x:.{digits}f}"
    return text.lstrip("-") if float(text) == 0 else text.replace("-", "−")


def size_phrase(rho: float, n: float, target: float, *, unit: str, audited: float | None = None) -> str:
    """The size Spearman--Brown needs for ``target`` from a reliability ``rho`` measured on ``n`` units, in words
    (:func:`allocbias.measures.reliability.size_for_reliability`), set beside the ``audited`` size when given.

    >>> size_phrase(0.04, 15, 0.8, unit="vacancies per job type", audited=30)
    'about 1,440 vacancies per job type, 48 times the 30 audited'
    >>> size_phrase(0.9, 15, 0.8, unit="runs", audited=30)
    'about 7 runs, fewer than the 30 audited'
    >>> size_phrase(-0.01, 15, 0.8, unit="runs")
    'no number of runs: the measured reliability is not positive, so Spearman–Brown has nothing to extrapolate'
    """
    if not np.isfinite(float(rho)) or rho <= 0:
        return (f"no number of {unit}: the measured reliability is not positive, so Spearman–Brown has nothing to "
                "extrapolate")
    if rho >= 1:
        return f"any number of {unit}: the measured reliability is already 1"
    need = float(reliability.size_for_reliability(rho, n, target))
    text = f"about {need:,.0f} {unit}"
    if audited is None:
        return text
    ratio = need / audited
    if ratio >= 1.5:
        return f"{text}, {ratio:,.0f} times the {audited:,.0f} audited"
    return f"{text}, {'fewer than' if ratio < 1 else 'about'} the {audited:,.0f} audited"


def curve_phrase(curve: pd.DataFrame, *, unit: str, singular: str | None = None) -> str:
    """Whether the Spearman--Brown prediction from the smallest size holds at the largest, in words: the prediction
    within the measured range over splits, above it or below it.

    ``curve`` is a :func:`allocbias.measures.reliability.reliability_curve` table (``size, reliability, lo, hi,
    predicted``); ``singular`` names one unit (default ``unit``), used when the smallest size is 1.

    >>> c = pd.DataFrame({"size": [1, 15], "reliability": [0.01, 0.12], "lo": [-0.1, 0.02], "hi": [0.1, 0.22],
    ...                   "predicted": [0.01, 0.13]})
    >>> curve_phrase(c, unit="vacancies", singular="vacancy")
    'the Spearman–Brown prediction from 1 vacancy (0.13 at 15) lies within the range measured at 15 (0.02 to 0.22)'
    """
    require_columns(curve, ["size", "reliability", "lo", "hi", "predicted"], "curve", nonempty=True)
    first, last = curve.iloc[0], curve.iloc[-1]
    if int(first["size"]) == 1 and singular:
        unit = singular
    if not np.isfinite(last["predicted"]):
        return (f"no Spearman–Brown prediction can be made from {int(first['size'])} {unit}: the reliability "
                f"measured there ({_fmt(first['reliability'])}) is not positive")
    where = ("above" if last["predicted"] > last["hi"] else "below" if last["predicted"] < last["lo"] else "within")
    return (f"the Spearman–Brown prediction from {int(first['size'])} {unit} ({_fmt(last['predicted'])} at "
            f"{int(last['size'])}) lies {where} the range measured at {int(last['size'])} ({_fmt(last['lo'])} to "
            f"{_fmt(last['hi'])})")


def forecast_phrase(table: pd.DataFrame, *, statistic: str = "rabbi") -> str:
    """One forecast-test comparison in words: the statistic's held-out r with its sampling interval and permutation
    null beside the gap's own, and whether their paired difference (``vs_gap``) is within sampling error.

    ``table`` holds the rows of one (level, k, size) of :func:`allocbias.measures.reliability.forecast_test`.

    >>> t = pd.DataFrame({"statistic": ["gap", "rabbi"], "heldout_r": [0.19, 0.47], "ci_lo": [-0.45, -0.08],
    ...                   "ci_hi": [0.71, 0.83], "null_mean": [0.0, -0.02], "null_lo": [-0.5, -0.45],
    ...                   "null_hi": [0.48, 0.44], "ceiling": [0.6, 0.6],
    ...                   "vs_gap": [0.0, 0.28], "vs_gap_lo": [np.nan, -0.2], "vs_gap_hi": [np.nan, 0.7]})
    >>> forecast_phrase(t)
    'RABBI from one half forecasts the other half’s gap at r = 0.47 (95% interval −0.08 to 0.83; its interval reaching into its permutation null: not shown at this size, whose 97.5th percentile is 0.44); the gap itself does at r = 0.19 (−0.45 to 0.71); the difference, 0.28 (−0.20 to 0.70), is within sampling error'
    >>> forecast_phrase(t.assign(vs_gap_lo=[np.nan, 0.05])).rsplit("; ", 1)[1]
    'RABBI forecasts the other half’s gap better than the gap itself (difference 0.28, 0.05 to 0.70)'
    """
    require_columns(table, ["statistic", "heldout_r", "ci_lo", "ci_hi", "null_mean", "null_lo", "null_hi", "ceiling",
                            "vs_gap", "vs_gap_lo", "vs_gap_hi"], "table", nonempty=True)
    rows = {}
    for name in (statistic, "gap"):
        part = table[table["statistic"] == name]
        if len(part) != 1:
            raise ValueError(f"table must hold exactly one row of statistic {name!r}, has {len(part)}")
        rows[name] = part.iloc[0]
    s, g = rows[statistic], rows["gap"]
    label = STATISTIC_NAMES.get(statistic, statistic)
    # the book's one verdict rule (measures.verdicts.verdict_words): shown only when the whole interval clears the null
    shown = verdict_words(s)["tracks"]
    null = ("its interval above its permutation null" if shown else
            "its interval reaching into its permutation null: not shown at this size")
    head = (f"{label} from one half forecasts the other half’s gap at r = {_fmt(s['heldout_r'])} (95% interval "
            f"{_fmt(s['ci_lo'])} to {_fmt(s['ci_hi'])}; {null}, whose 97.5th percentile is "
            f"{_fmt(s['null_hi'])}); the gap itself does at r = {_fmt(g['heldout_r'])} ({_fmt(g['ci_lo'])} to "
            f"{_fmt(g['ci_hi'])})")
    diff = f"{_fmt(s['vs_gap'])}, {_fmt(s['vs_gap_lo'])} to {_fmt(s['vs_gap_hi'])}"
    if s["vs_gap_lo"] > 0:
        return f"{head}; {label} forecasts the other half’s gap better than the gap itself (difference {diff})"
    if s["vs_gap_hi"] < 0:
        return f"{head}; {label} forecasts the other half’s gap worse than the gap itself (difference {diff})"
    return (f"{head}; the difference, {_fmt(s['vs_gap'])} ({_fmt(s['vs_gap_lo'])} to {_fmt(s['vs_gap_hi'])}), is "
            "within sampling error")


def audit_phrase(units: int | None, *, jobs: int = 4, max_names: int = 100) -> str:
    """What ``allocbias audit`` needs for ``units`` units per gap, in words: names per group over its ``jobs`` jobs
    (a gap pooled over them), with the option that runs it, or why it cannot.

    >>> audit_phrase(59)
    '59 units: 15 names per group over the 4 jobs (allocbias audit --names-per-group 15), or 59 for a gap of one job'
    >>> audit_phrase(1325)
    '1,325 units, more than the 100 names per group × 4 jobs (400) that allocbias audit can give a gap'
    >>> audit_phrase(None)
    'no number of names: the measured reliability is not positive'
    """
    if not units:
        return "no number of names: the measured reliability is not positive"
    pooled = planning.names_needed(units, jobs=jobs)
    if pooled > max_names:
        return (f"{units:,} units, more than the {max_names} names per group × {jobs} jobs ({max_names * jobs:,}) "
                "that allocbias audit can give a gap")
    one = f"{units:,} for a gap of one job" if units <= max_names else \
        f"more than its {max_names} names for a gap of one job"
    return (f"{units:,} units: {pooled:,} names per group over the {jobs} jobs (allocbias audit --names-per-group "
            f"{pooled}), or {one}")


def shipped_phrase(max_diff: float) -> str:
    """Whether the reliabilities ``allocbias plan`` ships are this run's, in words, from their largest difference
    (NaN: this run's splits, seed or sizes are not those the shipped values were measured with).

    >>> shipped_phrase(0.0)
    'they are the values allocbias plan ships (the largest difference is 0)'
    >>> shipped_phrase(float("nan"))[:60]
    'this run’s settings are not those the shipped values were me'
    """
    if not np.isfinite(max_diff):
        return ("this run’s settings are not those the shipped values were measured with (the book’s default "
                "profile), so they are not compared here")
    if max_diff < 1e-12:
        return "they are the values allocbias plan ships (the largest difference is 0)"
    return (f"they differ from the values allocbias plan ships by up to {max_diff:.3g}: run "
            "scripts/build_measured_reliability.py to ship this run's")


def comparison_phrase(n_better: int, n_worse: int, n: int) -> str:
    """How many of ``n`` paired comparisons (a metric's held-out r against the gap's own) come out better or worse
    outside sampling error (the interval of the difference excludes 0), in words.

    >>> comparison_phrase(0, 0, 48)
    'in none of the 48 comparisons does a metric forecast the other half’s gap better or worse than the gap itself beyond sampling error'
    >>> comparison_phrase(3, 1, 48)
    'in 3 of the 48 comparisons a metric forecasts the other half’s gap better than the gap itself, in 1 worse, and in the other 44 the difference is within sampling error'
    """
    n_better, n_worse, n = int(n_better), int(n_worse), int(n)
    if n < 1 or n_better < 0 or n_worse < 0 or n_better + n_worse > n:
        raise ValueError(f"need 0 <= n_better + n_worse <= n and n >= 1, got {n_better}, {n_worse}, {n}")
    if n_better == n_worse == 0:
        return (f"in none of the {n} comparisons does a metric forecast the other half’s gap better or worse than "
                "the gap itself beyond sampling error")
    rest = n - n_better - n_worse
    return (f"in {n_better} of the {n} comparisons a metric forecasts the other half’s gap better than the gap "
            f"itself, in {n_worse} worse, and in the other {rest} the difference is within sampling error")


def forecast_view(findings: AuditSizeFindings, *, k: int = 1, size: int | None = None) -> pd.DataFrame:
    """The forecast test at quota ``k`` and one size (default the largest) as the chapter shows it: one row per
    (data set, level, statistic), the numbers in the columns :func:`allocbias.plotting.show_table` joins into
    readable cells.

    Columns: ``data set, level, per half, statistic``; ``heldout_r, ci_lo, ci_hi`` (the held-out r and its bootstrap
    interval over the systems), ``null_hi`` (97.5th percentile of its permutation null) and ``ceiling`` (√
    reliability of the gap tested against), which ``show_table`` shows as one cell, "0.05 [−0.08, 0.16]; null 0.04;
    ceiling 0.18"; ``minus the gap's own`` and ``disattenuated``, each with its interval (`` lo``, `` hi``).
    :data:`FORECAST_DASH` says why a cell is a dash.

    >>> from allocbias.plotting import show_table
    >>> fc = pd.DataFrame({"data set": ["Lippens"], "level": ["job type"], "k": [1], "size": [15],
    ...     "statistic": ["rabbi"], "heldout_r": [0.05], "ci_lo": [-0.08], "ci_hi": [0.16], "null_mean": [0.0],
    ...     "null_lo": [-0.1], "null_hi": [0.04], "ceiling": [0.18], "vs_gap": [0.01], "vs_gap_lo": [-0.09],
    ...     "vs_gap_hi": [0.1], "disattenuated": [0.86], "dis_lo": [-2.1], "dis_hi": [8.3]})
    >>> from types import SimpleNamespace
    >>> show_table(forecast_view(SimpleNamespace(forecast=fc))).data.iloc[0].tolist()
    ['Lippens', 'job type', '15', 'RABBI', '0.05 [−0.08, 0.16]; null 0.04; ceiling 0.18', '0.01 [−0.09, 0.10]', '0.86 [−2.10, 8.30]']
    """
    fc = findings.forecast
    require_columns(fc, ["data set", "level", "k", "size", "statistic", "heldout_r", "ci_lo", "ci_hi", "null_hi",
                         "ceiling", "vs_gap", "vs_gap_lo", "vs_gap_hi", "disattenuated", "dis_lo", "dis_hi"],
                    "findings.forecast")
    part = fc[fc["k"] == k]
    lip = part["data set"] == "Lippens"
    top = int(part.loc[lip, "size"].max()) if size is None else int(size)
    largest = part.groupby("data set")["size"].transform("max")
    part = part[(lip & (part["size"] == top)) | (~lip & (part["size"] == largest))]
    words = {"vs_gap": "minus the gap's own", "vs_gap_lo": "minus the gap's own lo",
             "vs_gap_hi": "minus the gap's own hi", "dis_lo": "disattenuated lo", "dis_hi": "disattenuated hi"}
    out = part[["data set", "level", "size", "statistic", "heldout_r", "ci_lo", "ci_hi", "null_hi", "ceiling",
                "vs_gap", "vs_gap_lo", "vs_gap_hi", "disattenuated", "dis_lo", "dis_hi"]].rename(
        columns={"size": "per half", **words})
    itself = (out["statistic"] == "gap").to_numpy()  # the gap against itself: no difference to show
    out.loc[itself, ["minus the gap's own", "minus the gap's own lo", "minus the gap's own hi"]] = np.nan
    return out.assign(**{"per half": out["per half"].astype(int),
                         "statistic": out["statistic"].map(STATISTIC_NAMES)}).reset_index(drop=True)


#: Why a cell of the forecast table is a dash.
FORECAST_DASH = ("a dash: the gap itself is not compared with its own r, and a disattenuated r needs both "
                 "reliabilities positive")
#: Why a size or one unit's reliability is a dash in the chapter's tables of measured reliabilities.
RELIABILITY_DASH = "a dash: the measured reliability is not positive, so Spearman–Brown gives no size"


def reliability_view(table: pd.DataFrame) -> pd.DataFrame:
    """A table of measured reliabilities (the findings' ``lippens_levels`` or ``needed``) as the chapter shows it:
    each reliability beside its 95% range over the splits (``reliability lo``/``hi``, which
    :func:`allocbias.plotting.show_table` joins into one cell) and the units Spearman--Brown needs as whole numbers,
    rounded as the text's "about N" rounds them.

    >>> t = pd.DataFrame({"data set": ["re-cinq"], "reliability": [0.118], "lo": [0.079], "hi": [0.179],
    ...                   "units for 0.5": [14.905], "units for 0.8": [59.62]})
    >>> from allocbias.plotting import show_table
    >>> show_table(reliability_view(t)).data.to_dict("records")
    [{'data set': 're-cinq', 'reliability [95%]': '0.12 [0.08, 0.18]', 'units for 0.5': '15', 'units for 0.8': '60'}]
    """
    require_columns(table, ["reliability", "lo", "hi", "units for 0.5", "units for 0.8"], "table")
    out = table.rename(columns={"lo": "reliability lo", "hi": "reliability hi"})
    for c in ("units for 0.5", "units for 0.8"):
        out[c] = out[c].round()
    return out


# --------------------------------------------------------------------------------------------------------------
# planning
# --------------------------------------------------------------------------------------------------------------
#: The book's measured reliabilities as ``allocbias plan`` offers them (:func:`measured_reliability_table`): for each
#: key, the data set and level it comes from, its unit, what one unit is and the audits it stands for.
MEASURED_UNITS: Mapping[str, Mapping[str, str]] = {
    "lippens-job-type": {"data set": "Lippens", "level": "job type", "unit": "vacancy",
                         "one unit is": "one vacancy: gpt-3.5 scoring 18 CVs, one per origin × sex group, for one "
                                        "job ad, toward a job type's gap",
                         "use for": "gaps per job or job type, adding job ads (vacancies) to each"},
    "lippens-occupation": {"data set": "Lippens", "level": "occupation", "unit": "vacancy",
                           "one unit is": "one vacancy per job type, toward an occupation's gap (a few job types "
                                          "pooled)",
                           "use for": "gaps per occupation (several related jobs pooled), adding job ads"},
    "lippens-pooled": {"data set": "Lippens", "level": "all vacancies", "unit": "vacancy",
                       "one unit is": "one vacancy per job type, toward one gap per group over all 64 job types",
                       "use for": "one gap per group pooled over many jobs, adding job ads"},
    "recinq": {"data set": "re-cinq", "level": "model × job", "unit": "run",
               "one unit is": "one run: a model scoring one résumé under one name per group, sampled anew",
               "use for": "repeated runs of the same prompts, answered with sampling (temperature above 0)"},
    "bloomberg": {"data set": "Bloomberg", "level": "model × job", "unit": "answer",
                  "one unit is": "one answer: GPT-3.5 or GPT-4 ranking eight fresh names, one per race × sex group",
                  "use for": "adding names, each scored once (what allocbias audit adds with --names-per-group)"},
    "jderbysh": {"data set": "jderbysh", "level": "model × job", "unit": "résumé",
                 "one unit is": "one résumé scored under names of four race × sex groups",
                 "use for": "adding résumés, each shown under the same names"},
}
#: What ``allocbias audit`` can give a gap: names per group (the names table holds 100 first names per group) and jobs.
AUDIT_MAX_NAMES = 100
AUDIT_JOBS = 4
#: Selection rates and group : comparator size ratios of the Local Law 144 planning table.
LL144_RATES: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5)
LL144_GROUP_RATIOS: tuple[float, ...] = (1, 2, 5, 10)
#: Applicants per group of the Local Law 144 rows of false-flag rates and detectable ratios (comparator as many).
LL144_APPLICANTS: tuple[int, ...] = (25, 50, 100, 250, 500, 1000, 5000)
LL144_SEARCH_MAX = planning.LL144_SEARCH_MAX


def measured_reliability_table(findings: AuditSizeFindings) -> pd.DataFrame:
    """The chapter's measured reliabilities in the form ``allocbias plan`` reads them
    (:func:`allocbias.measures.planning.measured_reliability`, columns
    :data:`~allocbias.measures.planning.MEASURED_COLUMNS` and ``use for``): for each key of :data:`MEASURED_UNITS`,
    the gap's split-half reliability at the largest size measured (k = 1), its 95% range over splits, one unit's
    reliability (Spearman--Brown), and the splits and seed. ``scripts/build_measured_reliability.py`` writes it into
    the package; the findings hold it as ``measured``.
    """
    return findings.measured.copy()


def _measured(lippens_levels: pd.DataFrame, needed: pd.DataFrame, n_splits: int, seed: int) -> pd.DataFrame:
    rows = []
    for key, about in MEASURED_UNITS.items():
        if about["data set"] == "Lippens":
            row = _one(lippens_levels, level=about["level"], k=1)
        else:
            row = _one(needed, **{"data set": about["data set"]})
        rows.append({"key": key, "data set": about["data set"], "level": about["level"], "unit": about["unit"],
                     "k": 1, "size per half": int(row["size per half"]), "reliability": float(row["reliability"]),
                     "lo": float(row["lo"]), "hi": float(row["hi"]),
                     "reliability of one unit": float(row["reliability of one unit"]),
                     "n_splits": int(n_splits), "seed": int(seed),
                     "one unit is": about["one unit is"], "use for": about["use for"]})
    return pd.DataFrame(rows)[[*planning.MEASURED_COLUMNS, "use for"]]


def _names_cell(units: int, jobs: int) -> str:
    names = planning.names_needed(units, jobs=jobs)
    return f"{names:,}" if names <= AUDIT_MAX_NAMES else f"{names:,} (over {AUDIT_MAX_NAMES})"


def audit_designs(measured: pd.DataFrame, *, targets: Sequence[float] = planning.TARGETS,
                  jobs: int = AUDIT_JOBS) -> pd.DataFrame:
    """What ``allocbias audit`` needs under each measured reliability: for each row of ``measured``
    (:func:`measured_reliability_table`) and each target, the units a gap needs (Spearman--Brown from the largest
    size measured, :func:`allocbias.measures.planning.units_needed`), the names per group that give them to a gap of
    one job and to a gap pooled over ``jobs`` jobs (``allocbias audit`` scores each prompt once, so its units are
    names × jobs), and the option that runs it, or why it cannot (more names per group than the names table
    holds).

    >>> m = pd.DataFrame({"key": ["recinq"], "size per half": [2], "reliability": [0.12]})
    >>> audit_designs(m, targets=[0.8]).values.tolist()
    [['re-cinq: a run', '0.8, reliable', '59', '59', '15', '--names-per-group 15']]
    >>> audit_designs(m, targets=[0.8]).columns[-1]
    'option, gap over 4 jobs'
    """
    require_columns(measured, ["key", "size per half", "reliability"], "measured", nonempty=True)
    rows = []
    for _, m in measured.iterrows():
        about = MEASURED_UNITS.get(str(m["key"]), {"data set": str(m["key"]), "unit": "unit", "level": ""})
        label = f"{about['data set']}{', ' + about['level'] if about['data set'] == 'Lippens' else ''}: " \
                f"a{'n' if about['unit'][0] in 'aeiou' else ''} {about['unit']}"
        for t in targets:
            ok = np.isfinite(m["reliability"]) and 0 < m["reliability"] < 1
            u = planning.units_needed(float(m["reliability"]), float(m["size per half"]), t) if ok else None
            pooled = planning.names_needed(u, jobs=jobs) if u else None
            rows.append({
                "assumed unit": label, "target": f"{t:g}, {reliability_word(t)}",
                "units": f"{u:,}" if u else "–", "names, one job": _names_cell(u, 1) if u else "–",
                f"names, {jobs} jobs": _names_cell(u, jobs) if u else "–",
                f"option, gap over {jobs} jobs": ("no size: the measured reliability is not positive" if not u else
                                    f"--names-per-group {pooled}" if pooled <= AUDIT_MAX_NAMES else
                                    f"beyond its {AUDIT_MAX_NAMES} names per group")})
    return pd.DataFrame(rows)


def reliability_guidance(measured: pd.DataFrame) -> pd.DataFrame:
    """Which measured reliability to assume for which audit: one row per key of ``measured``
    (:func:`measured_reliability_table`) with the audit it stands for, the unit, one unit's reliability and the
    units a gap needs for 0.8.

    >>> m = pd.DataFrame({"key": ["recinq"], "size per half": [2], "reliability": [0.12],
    ...                   "reliability of one unit": [0.0638]})
    >>> reliability_guidance(m).values.tolist()
    [['repeated runs of the same prompts, answered with sampling (temperature above 0)', 're-cinq: a run', '0.064', '59']]
    """
    require_columns(measured, ["key", "size per half", "reliability", "reliability of one unit"], "measured",
                    nonempty=True)
    rows = []
    for _, m in measured.iterrows():
        about = MEASURED_UNITS[str(m["key"])]
        ok = np.isfinite(m["reliability"]) and 0 < m["reliability"] < 1
        rows.append({"your audit": about["use for"],
                     "assume": f"{about['data set']}{', ' + about['level'] if about['data set'] == 'Lippens' else ''}"
                               f": a{'n' if about['unit'][0] in 'aeiou' else ''} {about['unit']}",
                     "one unit's reliability": _fmt(float(m["reliability of one unit"]), 3) if ok else "–",
                     "units for 0.8": f"{planning.units_needed(float(m['reliability']), float(m['size per half']), 0.8):,}"
                     if ok else "–"})
    return pd.DataFrame(rows)


def ll144_planning_table(applicants: Sequence[int] = LL144_APPLICANTS, comparator_rate: float = 0.25, *,
                         bound: float = ll144.FOUR_FIFTHS, power: float = ll144.POWER) -> pd.DataFrame:
    r"""The Local Law 144 rows of false-flag rates and detectable ratios: for each number of applicants per group
    (the comparator as many, selected at ``comparator_rate``), the four-fifths rule's false-flag rate (a fair
    process flagged) and detectable ratio (the true impact ratio flagged with probability ``power``), exact
    (:func:`allocbias.measures.planning.ll144_at`).

    >>> ll144_planning_table([40, 400], 0.25).round(3).to_dict("list")
    {'applicants per group': [40, 400], 'comparator rate': [0.25, 0.25], 'false-flag rate': [0.276, 0.035], 'detectable ratio': [0.534, 0.712]}
    """
    rate = checks.proportion(comparator_rate, "comparator_rate")
    sizes = np.array([checks.count(n, "ll144_applicants") for n in applicants], dtype=np.int64)
    if sizes.size == 0:
        raise ValueError("ll144_applicants must name at least one number of applicants per group")
    at = planning.ll144_at(sizes, rate, bound=bound, power=power)
    return pd.DataFrame({"applicants per group": sizes, "comparator rate": rate,
                         "false-flag rate": at["false-flag rate"].to_numpy(),
                         "detectable ratio": at["detectable ratio"].to_numpy()})


def ll144_size_needed(comparator_rate: float = 0.25, *, false_flag: float = 0.05, ratio: float = 0.7,
                      search_max: int = LL144_SEARCH_MAX, bound: float = ll144.FOUR_FIFTHS,
                      power: float = ll144.POWER, group_ratio: float = 1.0) -> dict[str, int | None]:
    """The chapter's name for :func:`allocbias.measures.planning.ll144_size_needed` (which ``allocbias plan``
    calls too).

    >>> ll144_size_needed(0.25, search_max=600)
    {'false_flag_n': 328, 'detect_n': 307}
    """
    return planning.ll144_size_needed(comparator_rate, group_ratio=group_ratio, false_flag=false_flag, ratio=ratio,
                                      search_max=search_max, bound=bound, power=power)


def ll144_size_view(grid: pd.DataFrame, *, false_flag: float, ratio: float) -> pd.DataFrame:
    """The Local Law 144 planning grid (:func:`allocbias.measures.planning.ll144_size_grid`) as the chapter shows
    it: one row per selection rate and group : comparator size ratio, the two threshold sizes in words ("more than
    3,000" where the search was not enough).

    >>> g = pd.DataFrame({"selection rate": [0.25], "group ratio": [4.0], "false_flag_n": [227], "detect_n": [None],
    ...                   "search_max": [600]})
    >>> ll144_size_view(g, false_flag=0.05, ratio=0.7).values.tolist()
    [['25%', '1:4', '227', 'more than 600']]
    """
    require_columns(grid, ["selection rate", "group ratio", "false_flag_n", "detect_n", "search_max"], "grid")

    def size(n: Any, top: int) -> str:
        return f"more than {int(top):,}" if pd.isna(n) else f"{int(n):,}"

    return pd.DataFrame({
        "selection rate": [f"{r:.0%}" for r in grid["selection rate"]],
        "group : comparator": [planning.group_ratio_label(c) for c in grid["group ratio"]],
        f"fair group flagged under {false_flag:.0%} from": [size(n, m) for n, m in zip(grid["false_flag_n"],
                                                                                         grid["search_max"])],
        f"ratio {ratio:g} flagged 80% of the time from": [size(n, m) for n, m in zip(grid["detect_n"],
                                                                                    grid["search_max"])]})


# --------------------------------------------------------------------------------------------------------------
# the findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditSizeFindings(Findings):
    """Everything the chapter on audit size shows.

    Attributes
    ----------
    lippens_curves
        The reliability curves of the Lippens gaps: one row per (level, k, size) with ``size`` (vacancies per job
        type in each half), ``reliability, lo, hi`` (mean and 95% range over splits), ``predicted`` (Spearman--Brown
        from the smallest size), ``n_points``.
    lippens_levels
        Per (level, k): the gap's reliability at the largest size, its range, the reliability of the full audit
        (Spearman--Brown to twice the half), and the vacancies per job type needed for 0.5 and 0.8.
    forecast
        The forecast test (:func:`allocbias.measures.reliability.forecast_test`) of every data set, level, k and
        size: one row per statistic (the metrics and the gap itself).
    units
        re-cinq (runs), Bloomberg (answers) and jderbysh (résumés): the gap's reliability at each measured size per
        half, the Spearman--Brown prediction from the smallest, and the per-unit reliability.
    needed
        Per data set: the unit, the size measured, its reliability, the reliability of one unit, and the units
        needed for 0.5 and 0.8.
    measured
        :func:`measured_reliability_table`: each measured gap's reliability in the form ``allocbias plan`` ships it.
    guidance
        :func:`reliability_guidance`: which measured reliability to assume for which kind of audit.
    designs
        :func:`audit_designs`: the names per group ``allocbias audit`` needs under each measured reliability.
    ll144_planning
        :func:`ll144_planning_table`: applicants per group of a Local Law 144 audit, and the four-fifths rule's
        false-flag rate and detectable ratio at each.
    ll144_sizes
        :func:`allocbias.measures.planning.ll144_size_grid`: the applicants per group from which a fair process is
        flagged rarely and a true ratio is flagged often, over selection rates and group : comparator size ratios.
    values, phrases, parameters
        The numbers the prose quotes, the result-dependent sentences, and the parameters.
    """

    lippens_curves: pd.DataFrame
    lippens_levels: pd.DataFrame
    forecast: pd.DataFrame
    units: pd.DataFrame
    needed: pd.DataFrame
    measured: pd.DataFrame
    guidance: pd.DataFrame
    designs: pd.DataFrame
    ll144_planning: pd.DataFrame
    ll144_sizes: pd.DataFrame
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def _loaders() -> dict[str, Any]:
    from ..audited import public_scores
    from ..measures import rankings

    return {"lippens": public_scores.load_lippens, "recinq": lambda: public_scores.load_recinq(kind="results"),
            "jderbysh": public_scores.load_jderbysh, "bloomberg": rankings.read_rankings}


def _default_references() -> dict[str, Hashable]:
    from ..audited import data, public_scores

    return {"lippens": public_scores.LIPPENS_REFERENCE, "recinq": public_scores.RECINQ_REFERENCE,
            "jderbysh": public_scores.JDERBYSH_REFERENCE, "bloomberg": data.REFERENCE_GROUP}


def _lippens(frame: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """The valid Lippens scores with every candidate's exact top-k selection probability (``p1``, ``p2``, ...) in
    its vacancy and a constant ``pooled`` column (the level that puts every vacancy in one system)."""
    require_columns(frame, ["vacancy_id", "job_type", "occupation", "group", "score", "valid"], "the Lippens table",
                    nonempty=True)
    lip = frame[frame["valid"].astype(bool)].reset_index(drop=True)
    codes = pd.factorize(lip["vacancy_id"], sort=True)[0]
    prob = selection.pool_selection_probabilities(codes, lip["score"].to_numpy(float), list(ks))
    return lip.assign(**{f"p{k}": prob[i] for i, k in enumerate(ks)}, pooled="all vacancies")


def _level_column(level: str) -> str:
    return LEVELS[level] or "pooled"


def _curve_rows(curve: pd.DataFrame, **labels: Any) -> pd.DataFrame:
    out = curve.copy()
    for i, (key, value) in enumerate(labels.items()):
        out.insert(i, key, value)
    return out


def _units_curve(forecast: pd.DataFrame, dataset: str, unit: str) -> pd.DataFrame:
    """The gap rows of a forecast table over sizes as a reliability curve with Spearman--Brown from the smallest."""
    gap = forecast[(forecast["statistic"] == "gap") & (forecast["k"] == 1)].sort_values("size")
    sizes = gap["size"].astype(int).to_numpy()
    rel = gap["heldout_r"].to_numpy(float)
    predicted = (reliability.spearman_brown(min(rel[0], 1.0), sizes / sizes[0]) if rel[0] > 0
                 else np.full(sizes.size, np.nan))
    return pd.DataFrame({"data set": dataset, "unit": unit, "size": sizes, "reliability": rel,
                         "lo": gap["split_lo"].to_numpy(float), "hi": gap["split_hi"].to_numpy(float),
                         "predicted": predicted, "n_points": gap["n_points"].to_numpy()})


def _needed_row(dataset: str, unit: str, size: int, rho: float, lo: float, hi: float, audited: int) -> dict:
    ok = np.isfinite(rho) and 0 < rho < 1
    one = float(reliability.spearman_brown(rho, 1.0 / size)) if ok else float("nan")
    return {"data set": dataset, "unit": unit, "size per half": int(size), "reliability": float(rho),
            "lo": float(lo), "hi": float(hi), "audited": int(audited),
            "reliability audited": float(reliability.spearman_brown(rho, audited / size)) if ok else float("nan"),
            "reliability of one unit": one,
            "units for 0.5": float(reliability.size_for_reliability(rho, size, 0.5)) if ok else float("nan"),
            "units for 0.8": float(reliability.size_for_reliability(rho, size, 0.8)) if ok else float("nan")}


def audit_size_findings(
    *,
    lippens_sizes: Sequence[int] = (1, 2, 4, 8, 15),
    forecast_sizes: Sequence[int] = (5, 15),
    ks: Sequence[int] = (1, 2),
    n_splits: int = 200,
    n_boot: int = 1000,
    n_perm: int = 200,
    seed: int = 0,
    ll144_applicants: Sequence[int] = LL144_APPLICANTS,
    ll144_rate: float = 0.25,
    ll144_false_flag: float = 0.05,
    ll144_ratio: float = 0.7,
    ll144_rates: Sequence[float] = LL144_RATES,
    ll144_group_ratios: Sequence[float] = LL144_GROUP_RATIOS,
    ll144_search_max: int = LL144_SEARCH_MAX,
    frames: Mapping[str, pd.DataFrame] | None = None,
    references: Mapping[str, Hashable] | None = None,
) -> AuditSizeFindings:
    """The findings of the audit-size chapter, computed from the four public data sets.

    Parameters
    ----------
    lippens_sizes
        Vacancies per job type in each half at which the Lippens reliability curves are measured (at most 15:
        half of a job type's 30).
    forecast_sizes
        Vacancies per job type in each half at which the Lippens forecast test runs (at each level and k).
    ks
        Quotas of the top-k selection (Lippens; the other data sets use k = 1).
    n_splits, n_boot, n_perm
        Random half splits (reliability and held-out r), bootstrap replicates of the systems (the sampling
        intervals) and label permutations (the held-out r's null).
    seed
        Seed of every random step.
    ll144_applicants, ll144_rate
        The Local Law 144 planning rows: applicants per group (the comparator as many) and the comparator's
        selection rate.
    ll144_false_flag, ll144_ratio
        The smallest applicants per group (:func:`ll144_size_needed`) from which a fair process is flagged less
        than ``ll144_false_flag`` of the time, and from which a true impact ratio of ``ll144_ratio`` is flagged 80%
        of the time.
    ll144_rates, ll144_group_ratios, ll144_search_max
        The Local Law 144 planning grid: those two sizes for each selection rate and group : comparator size ratio
        (comparator applicants per applicant of the group), every size up to ``ll144_search_max`` checked. It must
        hold ``ll144_rate`` at 1:1 (the row the text quotes).
    frames
        The data sets as tidy frames (keys ``lippens``, ``recinq``, ``jderbysh``, ``bloomberg``), for tests on small
        synthetic data; default: the committed tables.
    references
        The reference group of each data set (default: the loaders').

    Returns
    -------
    AuditSizeFindings
    """
    n_splits = checks.count(n_splits, "n_splits", 2)
    n_boot = checks.count(n_boot, "n_boot", 2)
    n_perm = checks.count(n_perm, "n_perm", 2)
    seed = checks.seed(seed)
    ks = checks.quotas(ks, distinct=True)
    if 1 not in ks:
        raise ValueError(f"ks must include 1 (the chapter's main quota), got {ks}")
    for name, value in (("ll144_rate", ll144_rate), ("ll144_false_flag", ll144_false_flag),
                        ("ll144_ratio", ll144_ratio)):
        checks.proportion(value, name)
    ll144_planning = ll144_planning_table(ll144_applicants, ll144_rate)
    ll144_sizes = planning.ll144_size_grid(ll144_rates, ll144_group_ratios, false_flag=ll144_false_flag,
                                           ratio=ll144_ratio, search_max=ll144_search_max)
    quoted = ll144_sizes[(ll144_sizes["selection rate"] == ll144_rate) & (ll144_sizes["group ratio"] == 1)]
    if len(quoted) != 1:
        raise ValueError(f"ll144_rates and ll144_group_ratios must hold ll144_rate={ll144_rate!r} at 1:1 (the "
                         f"row the chapter quotes), got rates {list(ll144_rates)} and ratios {list(ll144_group_ratios)}")
    lippens_sizes = sorted({checks.count(s, "lippens_sizes") for s in lippens_sizes})
    forecast_sizes = sorted({checks.count(s, "forecast_sizes") for s in forecast_sizes})
    if frames is None:
        frames = {name: load() for name, load in _loaders().items()}
    missing = [k for k in ("lippens", "recinq", "jderbysh", "bloomberg") if k not in frames]
    if missing:
        raise ValueError(f"frames lacks the data set(s) {missing}")
    references = {**_default_references(), **(references or {})}
    control = {"n_splits": n_splits, "n_boot": n_boot, "n_perm": n_perm, "seed": seed}

    # Lippens: curves and forecast tests at three levels
    lip = _lippens(frames["lippens"], ks)
    ref = references["lippens"]
    curves, levels, forecasts = [], [], []
    for level in LEVELS:
        system = _level_column(level)
        for k in ks:
            curve = reliability.reliability_curve(lip, sizes=lippens_sizes, value=f"p{k}", reference=ref,
                                                  system=system, within="job_type", pool="vacancy_id",
                                                  n_splits=n_splits, seed=seed)
            curves.append(_curve_rows(curve, level=level, k=k))
            last = curve.iloc[-1]
            row = _needed_row("Lippens", "vacancies per job type", int(last["size"]), float(last["reliability"]),
                              float(last["lo"]), float(last["hi"]), LIPPENS_PER_JOB_TYPE)
            levels.append({"level": level, "k": k, "points": int(last["n_points"]), **row})
        for size in forecast_sizes:
            t = reliability.forecast_test(lip, reference=ref, k=list(ks), metrics=METRICS, system=system,
                                          within="job_type", pool="vacancy_id", size=size, **control)
            forecasts.append(_curve_rows(t, **{"data set": "Lippens", "level": level}))

    # re-cinq: one name per group, runs are the pools of each model x job
    rc = frames["recinq"]
    require_columns(rc, ["model", "job", "variant", "axis", "run", "score", "valid"], "the re-cinq table",
                    nonempty=True)
    names = rc[rc["valid"].astype(bool) & (rc["axis"] == "firstName")].assign(group=lambda f: f["variant"])
    rc_runs = int(names.groupby(["model", "job"])["run"].nunique().min())
    rc_forecast = pd.concat([
        _curve_rows(reliability.forecast_test(names, reference=references["recinq"], k=1, metrics=METRICS,
                                              design="draws", system=["model", "job"], pool="run", size=size,
                                              **control),
                    **{"data set": "re-cinq", "level": "model × job"})
        for size in range(1, rc_runs // 2 + 1)], ignore_index=True)

    # jderbysh: résumés are the pools of each model x job
    jd = frames["jderbysh"]
    require_columns(jd, ["model", "job", "resume", "group", "score", "valid"], "the jderbysh table", nonempty=True)
    jd = jd[jd["valid"].astype(bool)]
    jd_resumes = int(jd.groupby(["model", "job"])["resume"].nunique().min())
    jd_sizes = sorted({s for s in (1, 2, 4, jd_resumes // 2) if 1 <= s <= jd_resumes // 2})
    jd_forecast = pd.concat([
        _curve_rows(reliability.forecast_test(jd, reference=references["jderbysh"], k=1, metrics=METRICS,
                                              design="draws", system=["model", "job"], pool="resume", size=size,
                                              **control),
                    **{"data set": "jderbysh", "level": "model × job"})
        for size in jd_sizes], ignore_index=True)

    # Bloomberg: answers are pools of eight names; a name ranked first is selected at k = 1
    bb = frames["bloomberg"]
    require_columns(bb, ["answer_id", "model", "job", "group", "rank", "oversampled"], "the Bloomberg rankings",
                    nonempty=True)
    bb = bb[~bb["oversampled"].astype(bool)].assign(top1=lambda f: (f["rank"] <= 1).astype(float))
    bb_answers = int(bb.groupby(["model", "job"])["answer_id"].nunique().min())
    bb_sizes = sorted({s for s in (1, 4, 16, 64, bb_answers // 2) if 1 <= s <= bb_answers // 2})
    bb_curve = reliability.reliability_curve(bb, sizes=bb_sizes, value="top1", reference=references["bloomberg"],
                                             system=["model", "job"], pool="answer_id", n_splits=n_splits, seed=seed)

    units = pd.concat([
        _units_curve(rc_forecast, "re-cinq", "runs per cell"),
        _units_curve(jd_forecast, "jderbysh", "résumés per cell"),
        _curve_rows(bb_curve.drop(columns="n_splits"), **{"data set": "Bloomberg", "unit": "answers per cell"}),
    ], ignore_index=True)
    audited = {"re-cinq": rc_runs, "jderbysh": jd_resumes, "Bloomberg": bb_answers}
    needed_rows = [{k: v for k, v in levels[0].items() if k not in ("level", "k", "points")}]
    for dataset, part in units.groupby("data set", sort=False):
        last = part.iloc[-1]
        needed_rows.append(_needed_row(dataset, str(last["unit"]), int(last["size"]), float(last["reliability"]),
                                       float(last["lo"]), float(last["hi"]), audited[dataset]))
    needed = pd.DataFrame(needed_rows)
    lippens_levels = pd.DataFrame(levels)
    measured = _measured(lippens_levels, needed, n_splits, seed)

    findings = AuditSizeFindings(
        lippens_curves=pd.concat(curves, ignore_index=True), lippens_levels=lippens_levels,
        forecast=pd.concat([*forecasts, rc_forecast, jd_forecast], ignore_index=True), units=units, needed=needed,
        measured=measured, guidance=reliability_guidance(measured), designs=audit_designs(measured),
        ll144_planning=ll144_planning, ll144_sizes=ll144_sizes,
        parameters={"lippens_sizes": lippens_sizes, "forecast_sizes": forecast_sizes, "ks": ks, **control})
    values, phrases = _values_and_phrases(findings, lip, rc_runs, bb_answers, jd_resumes)
    values.update(recinq_n_models=int(names["model"].nunique()), recinq_n_jobs=int(names["job"].nunique()),
                  bloomberg_n_cells=int(bb.groupby(["model", "job"]).ngroups),
                  jderbysh_n_cells=int(jd.groupby(["model", "job"]).ngroups))
    values.update(ll144_rate=float(ll144_rate), ll144_false_flag=float(ll144_false_flag),
                  ll144_ratio=float(ll144_ratio), ll144_search_max=int(ll144_search_max))
    view = ll144_size_view(ll144_sizes, false_flag=ll144_false_flag, ratio=ll144_ratio)
    for (_, row), (_, shown) in zip(ll144_sizes.iterrows(), view.iterrows()):
        tag = f"r{round(100 * row['selection rate']):g}_c{row['group ratio']:g}".replace(".", "_")
        phrases[f"ll144_false_flag_n_{tag}"] = shown.iloc[2]
        phrases[f"ll144_detect_n_{tag}"] = shown.iloc[3]
    phrases["ll144_false_flag_n"] = view.iloc[quoted.index[0], 2]
    phrases["ll144_detect_n"] = view.iloc[quoted.index[0], 3]
    hardest = ll144_sizes.sort_values(["selection rate", "group ratio"], ascending=[True, True]).iloc[0]
    phrases["ll144_low_rate"] = f"{hardest['selection rate']:.0%}"
    phrases["ll144_low_rate_false_flag_n"] = view.iloc[hardest.name, 2]
    phrases["ll144_low_rate_detect_n"] = view.iloc[hardest.name, 3]
    findings.values.update(values)
    findings.phrases.update(phrases)
    return findings


def _one(frame: pd.DataFrame, **where: Any) -> pd.Series:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in where.items():
        mask &= (frame[key] == value).to_numpy()
    if mask.sum() != 1:
        raise ValueError(f"expected one row where {where}, found {int(mask.sum())}")
    return frame[mask].iloc[0]


def _reliability_values(row: pd.Series, prefix: str, suffix: str = "") -> dict[str, float]:
    """The glued reliability of one gap: its split-half value with interval, and at the audited size."""
    return {f"{prefix}_gap_reliability{suffix}": float(row["reliability"]),
            f"{prefix}_gap_reliability_lo{suffix}": float(row["lo"]),
            f"{prefix}_gap_reliability_hi{suffix}": float(row["hi"]),
            f"{prefix}_audited_reliability{suffix}": float(row["reliability audited"])}


def _values_and_phrases(f: AuditSizeFindings, lip: pd.DataFrame, rc_runs: int, bb_answers: int, jd_resumes: int
                        ) -> tuple[dict[str, Any], dict[str, str]]:
    v: dict[str, Any] = {}
    p: dict[str, str] = {}
    tags = {"job type": "jobtype", "occupation": "occupation", "all vacancies": "pooled"}
    top = max(f.parameters["forecast_sizes"])
    v["lippens_n_pools"] = int(lip["vacancy_id"].nunique())
    v["lippens_n_job_types"] = int(lip["job_type"].nunique())
    v["lippens_n_occupations"] = int(lip["occupation"].nunique())
    v["lippens_n_groups"] = int(lip["group"].nunique())
    v["lippens_n_other_groups"] = int(lip["group"].nunique() - 1)
    v["lippens_per_job_type"] = LIPPENS_PER_JOB_TYPE
    v["lippens_curve_max_size"] = int(f.lippens_curves["size"].max())
    v["lippens_curve_min_size"] = int(f.lippens_curves["size"].min())
    v["forecast_size"] = int(top)
    for level, tag in tags.items():
        for k in f.parameters["ks"]:
            row = _one(f.lippens_levels, level=level, k=k)
            v.update(_reliability_values(row, f"lippens_{tag}", f"_k{k}"))
            v[f"lippens_{tag}_points_k{k}"] = int(row["points"])
            p[f"lippens_{tag}_word_k{k}"] = reliability_word(float(row["reliability"]))
            for target, t in ((0.5, "05"), (0.8, "08")):
                v[f"lippens_{tag}_vacancies_for_{t}_k{k}"] = float(row[f"units for {target}"])
                p[f"lippens_{tag}_size_{t}_phrase_k{k}"] = size_phrase(
                    float(row["reliability"]), float(row["size per half"]), target, unit="vacancies per job type",
                    audited=LIPPENS_PER_JOB_TYPE)
            curve = f.lippens_curves[(f.lippens_curves["level"] == level) & (f.lippens_curves["k"] == k)]
            p[f"lippens_{tag}_curve_phrase_k{k}"] = curve_phrase(curve, unit="vacancies per job type",
                                                                 singular="vacancy per job type")
            t = f.forecast[(f.forecast["data set"] == "Lippens") & (f.forecast["level"] == level)
                           & (f.forecast["k"] == k) & (f.forecast["size"] == top)]
            for name, short in (("rabbi", "rabbi"), ("avg_gap", "delta"), ("jsd", "jsd"), ("emd", "emd"),
                                ("gap", "gap")):
                row = _one(t, statistic=name)
                v[f"lippens_{tag}_heldout_r_{short}_k{k}"] = float(row["heldout_r"])
                v[f"lippens_{tag}_heldout_lo_{short}_k{k}"] = float(row["ci_lo"])
                v[f"lippens_{tag}_heldout_hi_{short}_k{k}"] = float(row["ci_hi"])
                v[f"lippens_{tag}_null_hi_{short}_k{k}"] = float(row["null_hi"])
            p[f"lippens_{tag}_forecast_rabbi_k{k}"] = forecast_phrase(t, statistic="rabbi")
            p[f"lippens_{tag}_forecast_delta_k{k}"] = forecast_phrase(t, statistic="avg_gap")
    # the names for the main numbers
    v["lippens_vacancies_for_reliability_08_k1"] = v["lippens_jobtype_vacancies_for_08_k1"]
    v["lippens_vacancies_for_reliability_05_k1"] = v["lippens_jobtype_vacancies_for_05_k1"]
    for name in ("rabbi", "gap"):
        part = f.forecast[(f.forecast["data set"] == "Lippens") & (f.forecast["k"] == 1)
                          & (f.forecast["statistic"] == name)]
        v[f"lippens_n_levels_above_null_{name}_k1"] = int((part["heldout_r"] > part["null_hi"]).sum())
        v[f"lippens_n_tests_{name}_k1"] = int(len(part))
    better = f.forecast[(f.forecast["data set"] == "Lippens") & (f.forecast["statistic"] != "gap")]
    v["lippens_n_forecast_tests"] = int(len(better))
    v["lippens_n_better_than_gap"] = int((better["vs_gap_lo"] > 0).sum())
    v["lippens_n_worse_than_gap"] = int((better["vs_gap_hi"] < 0).sum())
    p["lippens_comparison_phrase"] = comparison_phrase(v["lippens_n_better_than_gap"], v["lippens_n_worse_than_gap"],
                                                       v["lippens_n_forecast_tests"])
    # the other data sets
    for dataset, tag, audited in (("re-cinq", "recinq", rc_runs), ("Bloomberg", "bloomberg", bb_answers),
                                  ("jderbysh", "jderbysh", jd_resumes)):
        row = _one(f.needed, **{"data set": dataset})
        v[f"{tag}_size_per_half"] = int(row["size per half"])
        v[f"{tag}_audited"] = int(audited)
        v.update(_reliability_values(row, tag))
        v[f"{tag}_one_unit_reliability"] = float(row["reliability of one unit"])
        v[f"{tag}_units_for_08"] = float(row["units for 0.8"])
        p[f"{tag}_word"] = reliability_word(float(row["reliability"]))
        p[f"{tag}_size_08_phrase"] = size_phrase(float(row["reliability"]), float(row["size per half"]), 0.8,
                                                 unit=str(row["unit"]), audited=audited)
        curve = f.units[f.units["data set"] == dataset]
        one = {"re-cinq": "run per cell", "Bloomberg": "answer per cell", "jderbysh": "résumé per cell"}[dataset]
        p[f"{tag}_curve_phrase"] = curve_phrase(curve, unit=str(row["unit"]), singular=one)
    rc = f.forecast[(f.forecast["data set"] == "re-cinq") & (f.forecast["size"] == f.forecast.loc[
        f.forecast["data set"] == "re-cinq", "size"].max())]
    p["recinq_forecast_rabbi"] = forecast_phrase(rc, statistic="rabbi")
    v["recinq_heldout_r_rabbi"] = float(_one(rc, statistic="rabbi")["heldout_r"])
    five = f.units[(f.units["data set"] == "re-cinq")]
    v["recinq_reliability_5_runs"] = (float(reliability.spearman_brown(v["recinq_gap_reliability"],
                                                                         5 / int(five["size"].max())))
                                      if 0 <= v["recinq_gap_reliability"] <= 1 else float("nan"))
    # planning: what allocbias audit needs for 0.8 under each measured reliability, and the shipped values
    for _, m in f.measured.iterrows():
        tag = str(m["key"]).replace("-", "_")
        ok = np.isfinite(m["reliability"]) and 0 < m["reliability"] < 1
        units = planning.units_needed(m["reliability"], m["size per half"], 0.8) if ok else None
        p[f"audit_08_{tag}"] = audit_phrase(units)
        if units:
            v[f"units_08_{tag}"] = int(units)
    shipped = _shipped_or_none()
    same = shipped is not None and all(
        (shipped["n_splits"] == f.parameters["n_splits"]) & (shipped["seed"] == f.parameters["seed"]))
    if same:
        mine = f.measured.set_index("key")
        diff = float(np.nanmax(np.abs(mine["reliability"] - shipped.loc[mine.index, "reliability"])))
        same = same and bool((mine["size per half"] == shipped.loc[mine.index, "size per half"]).all())
    if same:
        v["shipped_reliability_max_diff"] = diff
    p["shipped_phrase"] = shipped_phrase(diff if same else float("nan"))
    return v, p


def _shipped_or_none() -> pd.DataFrame | None:
    try:
        return planning.measured_reliability()
    except (ValueError, FileNotFoundError):
        return None


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def _guides(ax: Any) -> None:
    """The 0.5 and 0.8 reliability lines, labelled with their words at the left edge."""
    for guide, word in ((0.5, "0.5: moderately reliable"), (0.8, "0.8: reliable")):
        ax.axhline(guide, color="0.35", lw=0.9, ls=":")
        ax.annotate(word, (0.01, guide), xycoords=("axes fraction", "data"), xytext=(0, 2),
                    textcoords="offset points", fontsize=9, color="0.25", va="bottom")
    ax.axhline(0, color="0.6", lw=0.6)


def _drawn_out(ax: Any, size: float, rho: float, colour: str, marker: str, label: str, *, above: bool = False
               ) -> float | None:
    """The Spearman--Brown curve through a reliability ``rho`` measured on ``size`` units, drawn from ``size`` out
    to 1.4 times the size it needs for 0.8, with that size marked; returns the size (None for ``rho`` not in
    (0, 1))."""
    if not (np.isfinite(rho) and 0 < rho < 1):
        return None
    need = float(planning.units_needed(rho, size, 0.8))
    grid = np.geomspace(size, max(1.4 * need, 2 * size), 80)
    ax.plot(grid, reliability.spearman_brown(rho, grid / size), color=colour, ls="--", lw=1.3, label=label)
    ax.plot([need], [0.8], marker=marker, mfc="white", color=colour, ms=8, ls="none")
    ax.annotate(f"{need:,.0f}", (need, 0.8), xytext=(-4, 7) if above else (0, -15), textcoords="offset points",
                ha="right" if above else "center", fontsize=9, color=colour)
    return need


def figure_curves(findings: AuditSizeFindings) -> Any:
    """The Lippens reliability curves drawn out to the sizes they recommend: the gap's split-half reliability
    (mean and 95% range over splits) against vacancies per job type in each half (log scale), one panel per level,
    k = 1 and 2 told apart by colour and marker, the Spearman--Brown curve through the largest size measured
    carried on (dashed) to the size it needs for 0.8 (open marker, its size written below), and the 0.5 and 0.8
    lines labelled. Returns the Figure."""
    import matplotlib.pyplot as plt

    from ..plotting import label_axes

    curves = findings.lippens_curves
    require_columns(curves, ["level", "k", "size", "reliability", "lo", "hi"], "findings.lippens_curves")
    levels = list(dict.fromkeys(curves["level"]))
    fig, axes = plt.subplots(1, len(levels), figsize=(3.7 * len(levels), 4.0), sharey=True, squeeze=False)
    styles = {1: ("tab:blue", "o"), 2: ("tab:orange", "s"), 3: ("tab:green", "^")}
    for ax, level in zip(axes[0], levels):
        for k, part in curves[curves["level"] == level].groupby("k"):
            colour, marker = styles.get(int(k), ("tab:grey", "D"))
            ax.errorbar(part["size"], part["reliability"], yerr=[part["reliability"] - part["lo"],
                                                                 part["hi"] - part["reliability"]],
                        color=colour, marker=marker, ms=5, capsize=3, ls="none", label=f"k = {k}, measured")
            last = part.iloc[-1]
            _drawn_out(ax, float(last["size"]), float(last["reliability"]), colour, marker,
                       f"k = {k}, Spearman–Brown", above=int(k) != 1)
        _guides(ax)
        ax.set_xscale("log")
        ax.set_ylim(-0.45, 1.05)
        label_axes(ax, title=level, x="", y="split-half reliability of ΔDP")
    fig.supxlabel("vacancies per job type (log scale; open marker: the size for 0.8, written beside it)", y=0.1)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.suptitle("How reliable the Lippens selection-rate gap is, by the vacancies it rests on")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def figure_forecast(findings: AuditSizeFindings, *, k: int = 1) -> Any:
    """The forecast test at the largest size and quota ``k``: each statistic's held-out r with its 95% bootstrap
    interval, beside its permutation null (grey band: 2.5th to 97.5th percentile) and the ceiling √reliability of
    the gap it is tested against (black tick), one panel per Lippens level. Returns the Figure."""
    import matplotlib.pyplot as plt

    from ..plotting import label_axes

    fc = findings.forecast
    require_columns(fc, ["data set", "level", "k", "size", "statistic", "heldout_r", "ci_lo", "ci_hi", "null_lo",
                         "null_hi", "ceiling"], "findings.forecast")
    top = max(findings.parameters["forecast_sizes"])
    part = fc[(fc["data set"] == "Lippens") & (fc["k"] == k) & (fc["size"] == top)]
    levels = list(dict.fromkeys(part["level"]))
    order = [s for s in STATISTIC_NAMES if s in set(part["statistic"])]
    fig, axes = plt.subplots(1, len(levels), figsize=(3.5 * len(levels), 3.8), sharey=True, squeeze=False)
    for ax, level in zip(axes[0], levels):
        rows = part[part["level"] == level].set_index("statistic").loc[order]
        y = np.arange(len(order))
        for i, (_, row) in enumerate(rows.iterrows()):
            ax.fill_betweenx([i - 0.35, i + 0.35], row["null_lo"], row["null_hi"], color="0.88", zorder=0)
            ax.plot([row["ceiling"]] * 2, [i - 0.35, i + 0.35], color="black", lw=1.5)
        ax.errorbar(rows["heldout_r"], y, xerr=[rows["heldout_r"] - rows["ci_lo"], rows["ci_hi"] - rows["heldout_r"]],
                    fmt="o", color="tab:blue", capsize=3)
        ax.axvline(0, color="0.5", lw=0.8)
        ax.set_yticks(y, [STATISTIC_NAMES[s] for s in order])
        label_axes(ax, title=level, x="", y="")
    fig.supxlabel("held-out r with the other half's ΔDP, every panel")  # one label: three would run together
    fig.suptitle(f"Forecasting one half's top-{k} gap from the other ({top} vacancies per job type each)\n"
                 "grey: permutation null, black: ceiling")
    fig.tight_layout()
    return fig


def figure_units(findings: AuditSizeFindings) -> Any:
    """re-cinq, jderbysh and Bloomberg: the gap's measured split-half reliability against units per cell in each half
    (runs, résumés, answers; log scale), with the Spearman--Brown curve through the largest size measured carried
    on to the size it needs for 0.8 (open marker, its size written below), and the 0.5 and 0.8 lines labelled.
    Returns the Figure."""
    import matplotlib.pyplot as plt

    from ..plotting import label_axes

    units = findings.units
    require_columns(units, ["data set", "unit", "size", "reliability", "lo", "hi"], "findings.units")
    sets = list(dict.fromkeys(units["data set"]))
    fig, axes = plt.subplots(1, len(sets), figsize=(3.7 * len(sets), 4.0), sharey=True, squeeze=False)
    for ax, dataset in zip(axes[0], sets):
        part = units[units["data set"] == dataset]
        ax.errorbar(part["size"], part["reliability"], yerr=[part["reliability"] - part["lo"],
                                                             part["hi"] - part["reliability"]],
                    fmt="o", color="tab:blue", capsize=3, label="measured")
        last = part.iloc[-1]
        need = _drawn_out(ax, float(last["size"]), float(last["reliability"]), "tab:blue", "o", "Spearman–Brown")
        if need is None:
            ax.annotate("not positive at the largest size:\nno size for 0.8", (0.5, 0.25), xycoords=("axes fraction",
                        "data"), ha="center", va="center", fontsize=9, color="0.25")
        _guides(ax)
        ax.set_xscale("log")
        ticks = [*part["size"].astype(int), *([round(need)] if need else [])]
        ax.set_xticks(ticks, [f"{t:,}" for t in ticks], rotation=45 if len(ticks) > 4 else 0)
        ax.minorticks_off()
        ax.set_ylim(-0.6, 1.05)
        label_axes(ax, title=dataset, x=f"{part['unit'].iloc[0]} (log scale)", y="split-half reliability of ΔDP")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.suptitle("Runs, answers and résumés: the measured reliability drawn out to the size for 0.8\n"
                 "(open marker: the size for 0.8)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
