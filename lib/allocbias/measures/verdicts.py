"""The study's verdict words, from one rule (:func:`verdict_words`): does a metric track the allocation gap out of
sample, at this size? The held-out r's 95% sampling interval against its own permutation null, and the gap's
ceiling; plus the words and glue values built on it for the chapters' controls tables
(:func:`allocbias.measures.validity.validity_controls`) and the forecast test
(:func:`allocbias.measures.reliability.forecast_test`). Split from :mod:`~allocbias.measures.validity`, which
re-exports every name, so that the computation and its wording live apart."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..checks import require_columns
from .metrics import ABS_GAP_METRICS

#: JSD and EMD are tested against |gap| (they have no sign).
_ABS_GAP: Mapping[str, bool] = dict.fromkeys(ABS_GAP_METRICS, True)

#: the verdict column's words (:func:`verdict_words`)
VERDICT_TRACKS = "tracks"
VERDICT_NOT_SHOWN = "not shown at this size"
VERDICT_TOO_NOISY = "not shown: gap too noisy to test"
VERDICTS = (VERDICT_TRACKS, VERDICT_NOT_SHOWN, VERDICT_TOO_NOISY)

#: the columns :func:`verdict_words` reads, in a row of :func:`validity_controls` and of
#: :func:`allocbias.measures.reliability.forecast_test`: held-out r, its sampling interval, its null's 2.5th and 97.5th
#: percentiles, the ceiling (square root of the reliability of the gap the metric is tested against)
_VERDICT_COLUMNS = {
    "controls": ("heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_lo", "heldout_null_hi", "ceiling"),
    "forecast": ("heldout_r", "ci_lo", "ci_hi", "null_lo", "null_hi", "ceiling"),
}


#: the reliability bands of the book's words (:func:`reliability_word`): *reliable* from 0.8, *moderately reliable*
#: from 0.5, *unreliable* below
RELIABLE = 0.8
MODERATELY_RELIABLE = 0.5
#: the only words the book uses for how reliable a statistic is
RELIABILITY_WORDS = ("reliable", "moderately reliable", "unreliable")


def _num(x: float, digits: int = 2) -> str:
    """``x`` to ``digits`` decimals, with a true minus sign and never "-0.00".

    >>> _num(-0.001), _num(-0.25), _num(0.215)
    ('0.00', '−0.25', '0.21')
    """
    text = f"{x:.{digits}f}"
    return text.lstrip("-") if float(text) == 0 else text.replace("-", "−")


def reliability_word(rho: float) -> str:
    """How reliable a statistic with split-half reliability ``rho`` is, in the book's only three words:
    ``"reliable"`` (0.8 or more), ``"moderately reliable"`` (0.5 to 0.8) or ``"unreliable"`` (below 0.5, a
    reliability of 0 or less included: the halves do not agree).

    >>> [reliability_word(r) for r in (0.85, 0.8, 0.6, 0.5, 0.05, -0.02)]
    ['reliable', 'reliable', 'moderately reliable', 'moderately reliable', 'unreliable', 'unreliable']
    """
    if rho is None or not np.isfinite(float(rho)):
        raise ValueError(f"rho must be a finite number, got {rho!r}")
    return ("reliable" if rho >= RELIABLE else "moderately reliable" if rho >= MODERATELY_RELIABLE
            else "unreliable")


def reliability_phrase(rho: float, *, ceiling: float | None = None, gap: str = "the gap", size: str = "") -> str:
    """A gap described by its measured reliability and what it allows: "ΔDP agrees with itself at r = 0.05,
    unreliable, so no statistic can forecast it above r ≈ 0.22". ``ceiling`` defaults to the square root of
    ``rho`` (0 when ``rho`` is not positive); ``size`` (e.g. ``"30 vacancies per half"``) says what the reliability
    was measured at.

    >>> reliability_phrase(0.05, gap="ΔDP", size="30 vacancies per half")
    'ΔDP agrees with itself at r = 0.05 (30 vacancies per half), unreliable, so no statistic can forecast it above r ≈ 0.22'
    >>> reliability_phrase(0.9)
    'the gap agrees with itself at r = 0.90, reliable, so no statistic can forecast it above r ≈ 0.95'
    """
    word = reliability_word(rho)
    if ceiling is None or not np.isfinite(ceiling):
        ceiling = float(np.sqrt(max(float(rho), 0.0)))
    at = f" ({size})" if size else ""
    return (f"{gap} agrees with itself at r = {_num(rho)}{at}, {word}, so no statistic can forecast it above "
            f"r ≈ {_num(ceiling)}")


def _verdict_inputs(row: Mapping[str, float] | pd.Series) -> tuple[float, ...]:
    for cols in _VERDICT_COLUMNS.values():
        if all(c in row for c in cols):
            return tuple(float(row[c]) for c in cols)
    raise ValueError("row has neither the columns of validity_controls' table "
                     f"{_VERDICT_COLUMNS['controls']} nor those of forecast_test {_VERDICT_COLUMNS['forecast']}: "
                     "the verdict needs the held-out r, its sampling interval, its permutation null and the ceiling")


def verdict_words(row: Mapping[str, float] | pd.Series, *, gap: str = "the gap") -> dict[str, object]:
    r"""The verdict on one metric: does it track the gap out of sample, at this size? The one source of the
    study's verdict words ("tracks", "not shown at this size"), in tables and sentences alike.

    ``row`` is a row of :attr:`ValidityControls.table` (``heldout_mean``, its sampling interval
    ``heldout_ci_lo, heldout_ci_hi``, its own permutation null ``heldout_null_lo, heldout_null_hi``, ``ceiling``)
    or of :func:`allocbias.measures.reliability.forecast_test` (``heldout_r, ci_lo, ci_hi, null_lo, null_hi, ceiling``).
    The rule, with :math:`[c_{lo}, c_{hi}]` the held-out r's 95% sampling interval (bootstrap over systems or
    pools), :math:`[n_{lo}, n_{hi}]` the 2.5th and 97.5th percentiles of the held-out r's permutation null and
    :math:`\sqrt{
ho}` the ceiling (:math:`
ho` the split-half reliability of the gap the metric is tested
    against, ``|gap|`` for JSD and EMD):

    * **tracks** when :math:`c_{lo} > \max(n_{hi}, 0)`: the whole interval lies above the null's range;
    * otherwise **not shown at this size**; and when :math:`\sqrt{
ho} \le n_{hi}` (even a metric that
      forecast all of the gap that can be forecast would have an expected held-out r inside the null) the gap
      itself is too noisy for any metric to be tested: **not shown: gap too noisy to test**.

    The in-sample r and its null play no part: a real signal can fall inside or below its in-sample null (with
    one draw per group the metric and the gap share noise of either sign), and noise shared by a metric and a gap
    computed from the same scores can lift the in-sample r above it. Undefined inputs (NaN) give "not shown".

    Returns ``verdict`` (one of :data:`VERDICTS`), ``tracks`` (bool), ``interval`` (``"above"``, ``"inside"``,
    ``"below"``: the sampling interval against the null's range: above its 97.5th percentile, below its 2.5th,
    or overlapping it), ``testable`` (bool: ceiling above the null's 97.5th percentile), ``phrase``, the
    verdict as a clause after the metric's name with its reason, naming the gap as ``gap``, and ``short``, the
    same clause without the reason ("tracks ΔDP", "is not shown to track ΔDP at this size").

    >>> row = {"heldout_r": 0.42, "ci_lo": 0.21, "ci_hi": 0.60, "null_lo": -0.15, "null_hi": 0.16, "ceiling": 0.8}
    >>> w = verdict_words(row)
    >>> w["verdict"], w["interval"]
    ('tracks', 'above')
    >>> verdict_words(row | {"ci_lo": 0.05})["verdict"]
    'not shown at this size'
    >>> verdict_words(row | {"ci_lo": 0.05, "ceiling": 0.1}, gap="ΔDP")["phrase"][:62]
    'is not shown to track ΔDP at this size: ΔDP itself is too nois'
    >>> verdict_words(row | {"ci_lo": 0.05, "ceiling": 0.22, "null_hi": 0.14}, gap="ΔDP")["phrase"].split(" (")[1]
    "ΔDP agrees with itself at r = 0.05, unreliable, so no statistic can forecast it above r ≈ 0.22, which clears the null's 97.5th percentile, 0.14)"
    """
    held, lo, hi, null_lo, null_hi, ceiling = _verdict_inputs(row)
    known = np.isfinite([held, lo, hi, null_lo, null_hi]).all()
    tracks = bool(known and lo > max(null_hi, 0.0))
    interval = ("above" if tracks else "below" if known and hi < null_lo else "inside")
    testable = bool(np.isfinite(ceiling) and np.isfinite(null_hi) and ceiling > null_hi)
    short = (f"tracks {gap}" if tracks else f"is not shown to track {gap} at this size" if testable
             else f"is not shown to track {gap} at this size (the gap is too noisy to test)")
    rho = float(row["reliability"]) if "reliability" in row else (ceiling ** 2 if np.isfinite(ceiling) else np.nan)
    agrees = reliability_phrase(rho, ceiling=ceiling, gap=gap) if np.isfinite(rho) else ""
    if tracks:
        verdict = VERDICT_TRACKS
        phrase = (f"tracks {gap} out of sample: the 95% interval of its held-out r lies above the 97.5th "
                  "percentile of its held-out permutation null")
    elif testable:
        verdict = VERDICT_NOT_SHOWN
        phrase = (f"is not shown to track {gap} at this size: the 95% interval of its held-out r reaches into its "
                  "held-out permutation null"
                  + (f" ({agrees}, which clears the null's 97.5th percentile, {_num(null_hi)})" if agrees else ""))
    else:
        verdict = VERDICT_TOO_NOISY
        phrase = (f"is not shown to track {gap} at this size: {gap} itself is too noisy for any metric to be "
                  "tested" + (f" ({agrees}, which does not clear the held-out permutation null's 97.5th percentile, "
                              f"{_num(null_hi)})" if agrees and np.isfinite(null_hi) else
                              " (its ceiling, the square root of its split-half reliability, does not clear the "
                              "held-out permutation null)"))
    return {"verdict": verdict, "tracks": tracks, "interval": interval, "testable": testable, "phrase": phrase,
            "short": short}


def verdict_column(table: pd.DataFrame) -> pd.Series:
    """:func:`verdict_words`' ``verdict`` for every row of a controls or forecast table (index kept), for a
    table's verdict column.

    >>> t = pd.DataFrame({"heldout_r": [0.4, 0.0], "ci_lo": [0.2, -0.3], "ci_hi": [0.6, 0.3],
    ...                   "null_lo": [-0.2, -0.2], "null_hi": [0.15, 0.2], "ceiling": [0.8, 0.1]})
    >>> verdict_column(t).tolist()
    ['tracks', 'not shown: gap too noisy to test']
    """
    return pd.Series([verdict_words(row)["verdict"] for _, row in table.iterrows()], index=table.index,
                     name="verdict", dtype=object)


def control_words(row: Mapping[str, float] | pd.Series) -> dict[str, object]:
    """The words a chapter uses for one row of :attr:`ValidityControls.table`: the in-sample null as a
    described control, and the verdict of :func:`verdict_words`.

    * ``null``: where the in-sample r stands against its permutation null: ``"above"`` (beyond the null's 97.5th
      percentile), ``"below"`` (under its 2.5th) or ``"inside"``. A description, not a verdict: beating it is
      neither necessary nor sufficient for a metric to track the gap;
    * ``verdict``, ``tracks``, ``interval``, ``testable``, ``phrase``: :func:`verdict_words` of the row.

    >>> row = {"r": 0.9, "null_lo": 0.5, "null_hi": 0.8, "heldout_mean": 0.3, "heldout_ci_lo": 0.1,
    ...        "heldout_ci_hi": 0.5, "heldout_null_lo": -0.2, "heldout_null_hi": 0.2, "ceiling": 0.7}
    >>> w = control_words(row)
    >>> w["null"], w["verdict"]
    ('above', 'not shown at this size')
    """
    for key in ("r", "null_lo", "null_hi"):
        if key not in row:
            raise ValueError(f"row has no {key!r}: pass a row of ValidityControls.table")
    r, lo, hi = (float(row[k]) for k in ("r", "null_lo", "null_hi"))
    null = "above" if r > hi else "below" if r < lo else "inside"
    return {"null": null, **verdict_words(row)}


def order_word(x: float, y: float, *, tolerance: float = 0.0) -> str:
    """``"higher than"``, ``"lower than"`` or ``"equal to"``: how ``x`` compares with ``y`` (within ``tolerance``).

    >>> order_word(0.42, 0.40), order_word(0.40, 0.42), order_word(0.40, 0.41, tolerance=0.02)
    ('higher than', 'lower than', 'equal to')
    """
    if not (np.isfinite(x) and np.isfinite(y)):
        raise ValueError(f"order_word needs two finite numbers, got {x!r} and {y!r}")
    return "higher than" if x - y > tolerance else "lower than" if y - x > tolerance else "equal to"


_GLUE_FIELDS = ("r", "null_mean", "null_lo", "null_hi", "null_percentile", "heldout_mean", "heldout_lo",
                "heldout_hi", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_mean", "heldout_null_lo",
                "heldout_null_hi", "reliability", "ceiling")


_GAP_WORDS = {"dDP": "ΔDP", "dEO": "ΔEO"}


def controls_glue(table: pd.DataFrame, *, prefix: str = "ctl", group: str = "group") -> dict[str, object]:
    """The scalars and words a chapter glues from a (concatenated) :attr:`ValidityControls.table`.

    Per row (metric, gap and, when the table holds several quotas, ``k``): ``{prefix}_{field}_{metric}_{gap}[_k{k}]``
    for the fields ``r, null_mean, null_lo, null_hi, null_percentile, heldout_mean, heldout_lo, heldout_hi,
    heldout_ci_lo, heldout_ci_hi, heldout_null_mean, heldout_null_lo, heldout_null_hi, reliability, ceiling``;
    the words of :func:`control_words`: ``null_word`` (the in-sample r against its null, a described control),
    ``verdict``, ``verdict_phrase`` and ``verdict_short`` (:func:`verdict_words`' ``verdict``, ``phrase`` and
    ``short``, the gap named ΔDP or ΔEO, in bars for JSD and EMD), ``interval_word``
    (the held-out interval against its null); and ``ir_below``, ``ir_null_mean``, ``ir_null_hi``. Per (gap[, k]):
    ``{prefix}_heldout_order_{gap}[_k{k}]``, RABBI's held-out r against δ's (:func:`order_word`), when both are in
    the table. A table with a ``group`` column (``per_group=True``) gives instead, per (metric, gap[, k]), the
    number of groups whose in-sample r is above its null (``n_above``, described), whose verdict is "tracks"
    (``n_tracks``), whose gap's ceiling clears its held-out null, so that a metric can be tested at all (``n_testable``), the groups counted (``n_groups``) and
    the smallest and largest held-out mean (``heldout_min``, ``heldout_max``).

    >>> t = pd.DataFrame({"metric": ["rabbi"], "gap": ["dDP"], "k": [1], "r": [0.9], "null_mean": [0.6],
    ...                   "null_lo": [0.5], "null_hi": [0.7], "null_percentile": [100.0], "heldout_mean": [0.4],
    ...                   "heldout_lo": [0.2], "heldout_hi": [0.6], "heldout_ci_lo": [0.25], "heldout_ci_hi": [0.55],
    ...                   "heldout_null_mean": [0.0], "heldout_null_lo": [-0.2], "heldout_null_hi": [0.2],
    ...                   "reliability": [0.5], "ceiling": [0.71],
    ...                   "ir_below_08": [3], "ir_below_08_null_mean": [1.5], "ir_below_08_null_hi": [4.0]})
    >>> g = controls_glue(t)
    >>> g["ctl_heldout_mean_rabbi_dDP"], g["ctl_verdict_rabbi_dDP"], g["ctl_ir_below_rabbi_dDP"]
    (0.4, 'tracks', 3)
    >>> g["ctl_verdict_phrase_rabbi_dDP"][:21]
    'tracks ΔDP out of sam'
    """
    needed = ["metric", "gap", "k", *_GLUE_FIELDS, "ir_below_08", "ir_below_08_null_mean", "ir_below_08_null_hi"]
    require_columns(table, needed, "table", nonempty=True)
    multi_k = table["k"].nunique() > 1
    out: dict[str, object] = {}

    def tag(row: Mapping) -> str:
        return f"{row['metric']}_{row['gap']}" + (f"_k{int(row['k'])}" if multi_k else "")

    if group in table.columns:
        for (metric, gap, k), part in table.groupby(["metric", "gap", "k"], sort=False):
            words = [control_words(row) for _, row in part.iterrows()]
            t = tag({"metric": metric, "gap": gap, "k": k})
            out[f"{prefix}_n_above_{t}"] = sum(w["null"] == "above" for w in words)
            out[f"{prefix}_n_tracks_{t}"] = sum(bool(w["tracks"]) for w in words)
            out[f"{prefix}_n_testable_{t}"] = sum(bool(w["testable"]) for w in words)
            out[f"{prefix}_n_groups_{t}"] = len(part)
            out[f"{prefix}_heldout_min_{t}"] = float(part["heldout_mean"].min())
            out[f"{prefix}_heldout_max_{t}"] = float(part["heldout_mean"].max())
        return out
    if table.duplicated(["metric", "gap", "k"]).any():
        raise ValueError("table has more than one row per (metric, gap, k); pass per-group tables with their group column")
    for _, row in table.iterrows():
        t = tag(row)
        for field in _GLUE_FIELDS:
            out[f"{prefix}_{field}_{t}"] = float(row[field])
        words = control_words(row)
        name = _GAP_WORDS.get(str(row["gap"]), str(row["gap"]))
        label = f"|{name}|" if _ABS_GAP.get(row["metric"], False) else name
        out[f"{prefix}_null_word_{t}"] = words["null"]
        out[f"{prefix}_interval_word_{t}"] = words["interval"]
        out[f"{prefix}_verdict_{t}"] = words["verdict"]
        labelled = verdict_words(row, gap=label)
        out[f"{prefix}_verdict_phrase_{t}"] = labelled["phrase"]
        out[f"{prefix}_verdict_short_{t}"] = labelled["short"]
        out[f"{prefix}_ir_below_{t}"] = int(row["ir_below_08"])
        out[f"{prefix}_ir_null_mean_{t}"] = float(row["ir_below_08_null_mean"])
        out[f"{prefix}_ir_null_hi_{t}"] = float(row["ir_below_08_null_hi"])
    for (gap, k), part in table.groupby(["gap", "k"], sort=False):
        held = part.set_index("metric")["heldout_mean"]
        if {"rabbi", "avg_gap"} <= set(held.index):
            suffix = f"{gap}" + (f"_k{int(k)}" if multi_k else "")
            out[f"{prefix}_heldout_order_{suffix}"] = order_word(float(held["rabbi"]), float(held["avg_gap"]))
    return out


def ndcg_words(row: Mapping[str, float] | pd.Series) -> dict[str, str]:
    """Words for one row of :func:`ndcg_controls`: ``"above"`` or ``"within"`` a random ordering's range (its
    97.5th percentile ``random_hi``) for the observed NDCG (``observed``) and the held-out mean (``heldout``), and
    ``"above"``, ``"inside"`` or ``"below"`` the permutation null's 95% range (``null``).

    >>> ndcg_words({"ndcg": 0.95, "random_hi": 0.9, "null_lo": 0.8, "null_hi": 0.97, "heldout_mean": 0.85})
    {'observed': 'above', 'null': 'inside', 'heldout': 'within'}
    """
    for key in ("ndcg", "random_hi", "null_lo", "null_hi", "heldout_mean"):
        if key not in row:
            raise ValueError(f"row has no {key!r}: pass a row of ndcg_controls' table")
    ndcg, rand_hi, lo, hi, held = (float(row[k]) for k in ("ndcg", "random_hi", "null_lo", "null_hi", "heldout_mean"))
    return {"observed": "above" if ndcg > rand_hi else "within",
            "null": "above" if ndcg > hi else "below" if ndcg < lo else "inside",
            "heldout": "above" if held > rand_hi else "within"}
