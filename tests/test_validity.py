"""Tests of allocbias.validity: Pearson validity tables, RMS fairness rankings and NDCG."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import allocbias.validity
from allocbias.validity import (
    DEFAULT_ABS_GAP,
    PearsonResult,
    expected_random_ndcg,
    fairness_ranking,
    ndcg_at,
    ndcg_table,
    pearson,
    random_ndcg_values,
    rms_over_groups,
    validity_table,
)

SETTINGS = settings(max_examples=60, deadline=None)


# ------------------------------------------------------------------------------------------------------------
# pearson
# ------------------------------------------------------------------------------------------------------------
def test_pearson_hand_computed():
    # x = 1..5, y = (1, 2, 3, 5, 4): sxy = 9, sxx = syy = 10 -> r = 0.9
    res = pearson([1, 2, 3, 4, 5], [1, 2, 3, 5, 4])
    assert isinstance(res, PearsonResult)
    assert res.r == pytest.approx(0.9)
    assert res.n == 5 and res.confidence == 0.95
    # Fisher interval: tanh(atanh(0.9) +- 1.959964 / sqrt(2))
    z, half = np.arctanh(0.9), stats.norm.ppf(0.975) / np.sqrt(2)
    assert (res.ci_low, res.ci_high) == (pytest.approx(np.tanh(z - half)), pytest.approx(np.tanh(z + half)))
    # t-test p-value: t = r sqrt(n-2) / sqrt(1-r^2)
    t = 0.9 * np.sqrt(3) / np.sqrt(1 - 0.81)
    assert res.pvalue == pytest.approx(2 * stats.t.sf(t, 3))


def test_pearson_matches_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    res = pearson(pd.Series(x), y, confidence=0.9)
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(0.9)
    assert (res.r, res.pvalue, res.ci_low, res.ci_high) == pytest.approx((ref.statistic, ref.pvalue, ci.low, ci.high))


def test_pearson_bad_input():
    with pytest.raises(ValueError, match="at least 3 points, got 2"):
        pearson([1, 2], [2, 1])
    with pytest.raises(ValueError, match="x is constant"):
        pearson([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="y is constant"):
        pearson([1, 2, 3], [0, 0, 0])
    with pytest.raises(ValueError, match="same length"):
        pearson([1, 2, 3], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="x has 1 NaN"):
        pearson([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="y must be numeric"):
        pearson([1, 2, 3], ["a", "b", "c"])
    with pytest.raises(ValueError, match="confidence"):
        pearson([1, 2, 3], [1, 3, 2], confidence=95)


# ------------------------------------------------------------------------------------------------------------
# validity_table
# ------------------------------------------------------------------------------------------------------------
def _points(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 3 * 4 * 7
    d_dp = rng.normal(0, 0.1, n)
    d_eo = rng.normal(0, 0.1, n)
    return pd.DataFrame(
        {
            "model": np.repeat(["m1", "m2", "m3"], 28),
            "subtask": np.tile(np.repeat(["se", "hr", "fa", "re"], 7), 3),
            "group": np.tile([f"g{i}" for i in range(7)], 12),
            "dDP": d_dp,
            "dEO": d_eo,
            "rabbi": 3 * d_dp + rng.normal(0, 0.05, n),
            "avg_gap": rng.normal(0, 0.1, n),
            "jsd": np.abs(d_dp) + rng.uniform(0, 0.02, n),
            "emd": rng.uniform(0, 0.3, n),
            "rabbi_qualified": 2 * d_eo + rng.normal(0, 0.05, n),
            "avg_gap_qualified": rng.normal(0, 0.1, n),
            "jsd_qualified": np.abs(d_eo) + rng.uniform(0, 0.02, n),
            "emd_qualified": rng.uniform(0, 0.3, n),
            "k": 1,
        }
    )


def test_validity_table_columns_abs_and_qualified():
    pts = _points()
    table = validity_table(pts)
    assert list(table.columns) == [
        "metric", "gap", "metric_column", "gap_transform", "r", "pvalue", "ci_low", "ci_high", "n"
    ]
    assert len(table) == 4 * 2
    t = table.set_index(["metric", "gap"])
    # EO uses the qualified-candidate metric; JSD/EMD use |gap|
    assert t.loc[("rabbi", "dEO"), "metric_column"] == "rabbi_qualified"
    assert t.loc[("rabbi", "dDP"), "metric_column"] == "rabbi"
    assert t.loc[("jsd", "dDP"), "gap_transform"] == "abs"
    assert t.loc[("avg_gap", "dDP"), "gap_transform"] == "signed"
    assert t.loc[("rabbi", "dDP"), "r"] == pytest.approx(stats.pearsonr(pts["rabbi"], pts["dDP"]).statistic)
    assert t.loc[("rabbi", "dEO"), "r"] == pytest.approx(
        stats.pearsonr(pts["rabbi_qualified"], pts["dEO"]).statistic
    )
    assert t.loc[("jsd", "dEO"), "r"] == pytest.approx(
        stats.pearsonr(pts["jsd_qualified"], np.abs(pts["dEO"])).statistic
    )
    assert t.loc[("jsd", "dDP"), "r"] > 0.9 and t.loc[("rabbi", "dDP"), "r"] > 0.9
    assert (t["n"] == len(pts)).all()
    assert DEFAULT_ABS_GAP == {"jsd": True, "emd": True}


def test_validity_table_options():
    pts = _points()
    table = validity_table(pts, ["rabbi", "jsd"], ["dDP"], abs_gap={"rabbi": True}, qualified_gaps=())
    t = table.set_index("metric")
    assert t.loc["rabbi", "gap_transform"] == "abs" and t.loc["jsd", "gap_transform"] == "signed"
    assert t.loc["rabbi", "r"] == pytest.approx(stats.pearsonr(pts["rabbi"], np.abs(pts["dDP"])).statistic)
    both = pd.concat([pts, pts.assign(k=2, dDP=-pts["dDP"])], ignore_index=True)
    per_k = validity_table(both, ["rabbi"], ["dDP"], by=["k"])
    assert per_k["k"].tolist() == [1, 2]
    assert per_k["r"].iloc[0] == pytest.approx(-per_k["r"].iloc[1])


def test_validity_table_spearman_is_scipys_rank_correlation():
    pts = _points()
    pts.loc[:5, "dDP"] = 0.0  # ties in the gap: average ranks, as scipy's
    rho = validity_table(pts, ["rabbi", "jsd"], ["dDP", "dEO"], method="spearman").set_index(["metric", "gap"])
    for (metric, gap), x, y in [(("rabbi", "dDP"), pts["rabbi"], pts["dDP"]),
                                (("rabbi", "dEO"), pts["rabbi_qualified"], pts["dEO"]),
                                (("jsd", "dDP"), pts["jsd"], np.abs(pts["dDP"]))]:
        expected = stats.spearmanr(x, y)
        assert rho.loc[(metric, gap), "r"] == pytest.approx(expected.statistic, abs=1e-12)
        assert rho.loc[(metric, gap), "pvalue"] == pytest.approx(expected.pvalue, rel=1e-6)
        assert rho.loc[(metric, gap), "ci_low"] < expected.statistic < rho.loc[(metric, gap), "ci_high"]
    # a monotone but curved relation: Spearman 1, Pearson below
    curved = pts.assign(rabbi=np.exp(20 * pts["dDP"]))
    assert validity_table(curved, ["rabbi"], ["dDP"], method="spearman")["r"].iloc[0] == pytest.approx(1.0)
    assert validity_table(curved, ["rabbi"], ["dDP"])["r"].iloc[0] < 0.95
    with pytest.raises(ValueError, match="method must be 'pearson' or 'spearman', got 'kendall'"):
        validity_table(pts, ["rabbi"], ["dDP"], method="kendall")


def test_validity_table_bad_input():
    pts = _points()
    with pytest.raises(ValueError, match=r"no column\(s\) \['rabbi_qualified'\]"):
        validity_table(pts.drop(columns="rabbi_qualified"), ["rabbi"])
    with pytest.raises(ValueError, match=r"abs_gap names metric\(s\) \['jds'\]"):
        validity_table(pts, ["rabbi", "jsd"], abs_gap={"jds": True})
    with pytest.raises(ValueError, match="column 'rabbi' has 1 NaN"):
        validity_table(pts.assign(rabbi=np.where(np.arange(len(pts)) == 0, np.nan, pts["rabbi"])), ["rabbi"])
    with pytest.raises(ValueError, match="correlating 'emd' with 'dDP'.*x is constant"):
        validity_table(pts.assign(emd=0.0), ["emd"], ["dDP"])
    with pytest.raises(ValueError, match="at least one"):
        validity_table(pts, [], ["dDP"])
    with pytest.raises(ValueError, match="column 'group' must be numeric"):
        validity_table(pts, ["group"], ["dDP"])


# ------------------------------------------------------------------------------------------------------------
# RMS and rankings
# ------------------------------------------------------------------------------------------------------------
def test_rms_over_groups_hand_computed():
    df = pd.DataFrame({"model": ["m", "m", "n"], "subtask": "se", "dDP": [0.3, -0.4, 0.2]})
    out = rms_over_groups(df, "dDP", ["model", "subtask"])
    assert list(out.columns) == ["model", "subtask", "dDP", "n_groups"]
    assert out["dDP"].tolist() == pytest.approx([np.sqrt((0.09 + 0.16) / 2), 0.2])
    assert out["n_groups"].tolist() == [2, 1]
    overall = rms_over_groups(df, "dDP", [])
    assert overall["dDP"].iloc[0] == pytest.approx(np.sqrt((0.09 + 0.16 + 0.04) / 3))
    with pytest.raises(ValueError, match="must be numeric"):
        rms_over_groups(df, "model", ["subtask"])
    with pytest.raises(ValueError, match="must not also be in by"):
        rms_over_groups(df, "dDP", ["dDP"])


def test_fairness_ranking_per_subtask_and_ties():
    df = pd.DataFrame(
        {
            "subtask": ["se"] * 6 + ["hr"] * 6,
            "model": ["m3", "m3", "m1", "m1", "m2", "m2"] * 2,
            "rabbi": [0.1, -0.1, 0.5, 0.5, 0.1, 0.1] + [0.0, 0.0, 0.2, -0.2, 0.0, 0.0],
        }
    )
    out = fairness_ranking(df, "rabbi")
    assert list(out.columns) == ["subtask", "model", "rabbi", "n_groups", "rank"]
    se = out[out["subtask"] == "se"]
    hr = out[out["subtask"] == "hr"]
    # se: m2 and m3 tie at RMS 0.1 -> broken by model label; hr: m2 and m3 tie at 0
    assert se["model"].tolist() == ["m2", "m3", "m1"] and se["rank"].tolist() == [1, 2, 3]
    assert hr["model"].tolist() == ["m2", "m3", "m1"]
    assert se["rabbi"].tolist() == pytest.approx([0.1, 0.1, 0.5])
    with pytest.raises(ValueError, match="must not also be in by"):
        fairness_ranking(df, "rabbi", by=["model"])
    with pytest.raises(ValueError, match=r"no column\(s\) \['llm'\]"):
        fairness_ranking(df, "rabbi", model="llm")


# ------------------------------------------------------------------------------------------------------------
# NDCG
# ------------------------------------------------------------------------------------------------------------
def test_ndcg_hand_computed():
    ideal = ["m1", "m2", "m3", "m4"]  # relevances 3, 2, 1, 0
    disc = 1 / np.log2(np.arange(2, 6))
    assert ndcg_at(ideal, ideal, 4) == 1.0
    # reversed: rel (0, 1, 2, 3)
    reversed_dcg, ideal_dcg = np.array([0, 1, 2, 3]) @ disc, np.array([3, 2, 1, 0]) @ disc
    assert ndcg_at(ideal[::-1], ideal, 4) == pytest.approx(reversed_dcg / ideal_dcg)
    # NDCG@1 of a ranking whose top model is ideal rank 2: (4 - 2) / (4 - 1)
    assert ndcg_at(["m2", "m1", "m3", "m4"], ideal, 1) == pytest.approx(2 / 3)
    # worst model first: relevance 0
    assert ndcg_at(["m4", "m1", "m2", "m3"], ideal, 1) == 0.0


@SETTINGS
@given(st.permutations(list(range(7))), st.integers(1, 7))
def test_ndcg_is_one_iff_top_n_agree(perm, n):
    ideal = list(range(7))
    value = ndcg_at(perm, ideal, n)
    assert 0.0 <= value <= 1.0
    if list(perm[:n]) == ideal[:n]:
        assert value == pytest.approx(1.0)
    else:
        assert value < 1.0 - 1e-12


def test_ndcg_bad_input():
    ideal = ["m1", "m2", "m3"]
    with pytest.raises(ValueError, match=r"ranking has model\(s\) \['mX'\]"):
        ndcg_at(["m1", "m2", "mX"], ideal, 2)
    with pytest.raises(ValueError, match="ranking lists model 'm1' more than once"):
        ndcg_at(["m1", "m1", "m2"], ideal, 2)
    with pytest.raises(ValueError, match=r"ranking lacks model\(s\) \['m3'\]"):
        ndcg_at(["m1", "m2"], ideal, 2)
    with pytest.raises(ValueError, match="ideal lists model 'm2' more than once"):
        ndcg_at(ideal, ["m1", "m2", "m2"], 2)
    for n in (0, 4, 1.5, True):
        with pytest.raises(ValueError, match=r"n must be an integer in 1\.\.3"):
            ndcg_at(ideal, ideal, n)
    with pytest.raises(ValueError, match="at least 2 models"):
        ndcg_at(["m1"], ["m1"], 1)


def test_ndcg_table_hand_computed():
    # two subtasks, three models, one group each (RMS = |value|)
    pts = pd.DataFrame(
        {
            "subtask": ["se"] * 3 + ["hr"] * 3,
            "model": ["m1", "m2", "m3"] * 2,
            "group": "g",
            "dDP": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3],  # ideal: m1, m2, m3 in both
            "rabbi": [0.1, 0.2, 0.3, 0.3, 0.2, 0.1],  # agrees on se, reversed on hr
            "dEO": [0.3, 0.2, 0.1, 0.3, 0.2, 0.1],  # ideal: m3, m2, m1
            "rabbi_qualified": [-0.3, 0.2, 0.1, 0.3, -0.2, 0.1],  # RMS ranks m3, m2, m1: agrees with dEO
        }
    )
    table = ndcg_table(pts, ["rabbi"], ["dDP", "dEO"])
    assert list(table.columns) == ["metric", "gap", "n", "ndcg", "n_subtasks"]
    dp = table[table["gap"] == "dDP"].set_index("n")["ndcg"]
    reversed_ = [ndcg_at(["m3", "m2", "m1"], ["m1", "m2", "m3"], n) for n in (1, 2, 3)]
    assert dp.tolist() == pytest.approx([(1 + r) / 2 for r in reversed_])
    assert table.loc[table["gap"] == "dEO", "ndcg"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert (table["n_subtasks"] == 2).all()
    detail = ndcg_table(pts, ["rabbi"], ["dDP"], ns=[1], average=False)
    assert detail[["subtask", "ndcg"]].to_dict("list") == {"subtask": ["hr", "se"], "ndcg": [0.0, 1.0]}


def test_ndcg_with_the_exponential_gain_in_the_table_and_at_random():
    pts = _points()
    table = ndcg_table(pts, ["rabbi", "emd"], ["dDP"], ns=[1, 3], gain="exponential").set_index(["metric", "n"])
    ranks = {c: fairness_ranking(pts, c, ["subtask"]) for c in ("dDP", "emd")}
    by_hand = np.mean([ndcg_at(list(ranks["emd"].query("subtask == @st")["model"]),
                               list(ranks["dDP"].query("subtask == @st")["model"]), 3, gain="exponential")
                       for st in pts["subtask"].unique()])
    assert table.loc[("emd", 3), "ndcg"] == pytest.approx(by_hand)
    assert table.loc[("emd", 3), "ndcg"] != pytest.approx(ndcg_table(pts, ["emd"], ["dDP"], ns=[3])["ndcg"].iloc[0])
    for n_models, n in [(3, 1), (4, 2), (6, 6)]:  # every order of the models: the mean is the expectation
        values = random_ndcg_values(n_models, n, gain="exponential")
        assert values.mean() == pytest.approx(expected_random_ndcg(n_models, n, gain="exponential"), abs=1e-12)
        orders = itertools.permutations(range(n_models))
        assert sorted(values) == pytest.approx(sorted(ndcg_at(list(o), list(range(n_models)), n, gain="exponential")
                                                      for o in orders))
    # the exponential gain weighs the top places more: its random floor lies below the linear one
    assert expected_random_ndcg(6, 6, gain="exponential") < expected_random_ndcg(6, 6)
    for call in (lambda: ndcg_table(pts, gain="log"), lambda: expected_random_ndcg(3, 1, gain="log"),
                 lambda: random_ndcg_values(3, 1, gain="log")):
        with pytest.raises(ValueError, match="gain must be 'linear' or 'exponential', got 'log'"):
            call()


def test_ndcg_table_by_and_errors():
    pts = _points()
    table = ndcg_table(pts, by=["k"])
    assert set(table["n"]) == {1, 2, 3} and (table["k"] == 1).all()
    assert len(table) == 4 * 2 * 3
    assert table["ndcg"].between(0, 1).all()
    lacking = pts[~((pts["subtask"] == "hr") & (pts["model"] == "m2"))]
    with pytest.raises(ValueError, match=r"subtask 'hr' lacks model\(s\) \['m2'\]"):
        ndcg_table(lacking)
    with pytest.raises(ValueError, match=r"n must be an integer in 1\.\.3"):
        ndcg_table(pts, ns=[4])
    with pytest.raises(ValueError, match="must be distinct"):
        ndcg_table(pts, subtask="model")
    with pytest.raises(ValueError, match=r"no column\(s\) \['emd_qualified'\]"):
        ndcg_table(pts.drop(columns="emd_qualified"))


def test_docstring_examples():
    result = doctest.testmod(allocbias.validity)
    assert result.failed == 0 and result.attempted >= 6


def test_validity_table_dropna_leaves_out_undefined_points_only_where_they_are_undefined():
    pts = _points()
    holed = pts.assign(rabbi_qualified=np.where(np.arange(len(pts)) < 2, np.nan, pts["rabbi_qualified"]))
    got = validity_table(holed, ["rabbi"], ["dDP", "dEO"], dropna=True).set_index("gap")
    assert got.loc["dDP", "n"] == len(pts) and got.loc["dEO", "n"] == len(pts) - 2  # dDP uses rabbi, untouched
    full = validity_table(holed.iloc[2:], ["rabbi"], ["dEO"])
    assert got.loc["dEO", "r"] == pytest.approx(full["r"].iloc[0])
    with pytest.raises(ValueError, match="column 'rabbi_qualified' has 2 NaN"):
        validity_table(holed, ["rabbi"], ["dEO"])
