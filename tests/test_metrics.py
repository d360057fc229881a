"""Tests of allocbias.metrics: hand-computed cases, hypothesis properties, reference checks against scipy."""

from __future__ import annotations

import doctest

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.spatial.distance import jensenshannon

import allocbias.metrics
from allocbias.metrics import (
    RabbiTest,
    avg_score_gap,
    bias_table,
    emd,
    excess_kurtosis,
    jsd,
    pairwise_gap_table,
    pairwise_output_stats,
    pairwise_points,
    pairwise_win_share,
    rabbi,
    rabbi_test,
    score_shape,
    skewness,
)

SETTINGS = settings(max_examples=60, deadline=None)
small_ints = st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=25)


def brute_rabbi(a, b) -> float:
    """The definition: mean over A x B of sign(s_a - s_b), as an explicit double loop."""
    total = 0
    for x in a:
        for y in b:
            total += int(x > y) - int(x < y)
    return total / (len(a) * len(b))


# ------------------------------------------------------------------------------------------------------------
# RABBI
# ------------------------------------------------------------------------------------------------------------
def test_rabbi_hand_computed():
    # pairs (3,1)+ (3,2)+ (2,1)+ (2,2)0 -> 3/4
    assert rabbi([3, 2], [1, 2]) == 0.75
    assert rabbi([1, 2], [3, 2]) == -0.75
    assert rabbi([5], [5]) == 0.0
    assert rabbi([1, 1, 1], [1, 1]) == 0.0
    # W = [0.9, 0.8, 0.7], B = [0.8, 0.6, 0.5]: 0.8 vs W -> -1 + 0 + 1; 0.6, 0.5 lose all -> -6 / 9
    assert rabbi([0.8, 0.6, 0.5], [0.9, 0.8, 0.7]) == pytest.approx(-2 / 3)


def test_rabbi_accepts_series_and_ints():
    assert rabbi(pd.Series([3, 4]), np.array([1, 2], dtype=np.int8)) == 1.0


@SETTINGS
@given(small_ints, small_ints)
def test_rabbi_equals_brute_force_pair_mean(a, b):
    assert rabbi(a, b) == pytest.approx(brute_rabbi(a, b), abs=1e-12)


@SETTINGS
@given(small_ints, small_ints)
def test_rabbi_antisymmetric_and_bounded(a, b):
    r = rabbi(a, b)
    assert -1.0 <= r <= 1.0
    assert rabbi(b, a) == pytest.approx(-r, abs=1e-12)


@SETTINGS
@given(small_ints, small_ints)
def test_rabbi_is_one_when_a_dominates(a, b):
    shifted = [x + 5 for x in a]  # every shifted A score exceeds every B score (B <= 4)
    assert rabbi(shifted, b) == 1.0
    assert rabbi(b, shifted) == -1.0


@SETTINGS
@given(small_ints, small_ints)
def test_rabbi_invariant_under_strictly_increasing_transform(a, b):
    def f(x):
        return np.exp(np.asarray(x, dtype=float) / 2.0) + np.asarray(x, dtype=float) ** 3

    assert rabbi(f(a), f(b)) == pytest.approx(rabbi(a, b), abs=1e-12)


@SETTINGS
@given(small_ints, small_ints)
def test_rabbi_mann_whitney_identity(a, b):
    u = stats.mannwhitneyu(a, b).statistic
    assert rabbi(a, b) == pytest.approx(2 * u / (len(a) * len(b)) - 1, abs=1e-12)


def test_rabbi_test_matches_scipy():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 6, 40), rng.integers(1, 7, 30)
    for alternative in ("two-sided", "greater", "less"):
        res = rabbi_test(a, b, alternative=alternative)
        ref = stats.mannwhitneyu(a, b, alternative=alternative)
        assert res.pvalue == pytest.approx(ref.pvalue)
        assert res.statistic == pytest.approx(2 * ref.statistic / (40 * 30) - 1)
        assert (res.n_a, res.n_b, res.alternative) == (40, 30, alternative)
        assert res.ci_low is None and res.ci_high is None and res.n_boot == 0


def test_rabbi_test_bootstrap_matches_explicit_resampling():
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.3, 1, 25), rng.normal(0, 1, 20)
    res = rabbi_test(a, b, n_boot=300, seed=7, confidence=0.9)
    draw = np.random.default_rng(7)
    ia, ib = draw.integers(0, 25, size=(300, 25)), draw.integers(0, 20, size=(300, 20))
    boot = [brute_rabbi(a[i], b[j]) for i, j in zip(ia, ib)]
    low, high = np.quantile(boot, [0.05, 0.95])
    assert (res.ci_low, res.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert res.ci_low <= res.statistic <= res.ci_high
    assert res.n_boot == 300 and res.confidence == 0.9
    assert rabbi_test(a, b, n_boot=300, seed=7) == rabbi_test(a, b, n_boot=300, seed=7)
    assert isinstance(res, RabbiTest)


def test_rabbi_test_all_ties_has_pvalue_one():
    res = rabbi_test([1, 1], [1, 1, 1])
    assert res.statistic == 0.0 and res.pvalue == 1.0


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([], [1.0], "a is empty"),
        ([1.0], [], "b is empty"),
        ([1.0, np.nan], [1.0], "a contains 1 non-finite"),
        ([1.0], [np.inf], "b contains 1 non-finite"),
        (["x", "y"], [1.0], "a must hold numeric"),
        ([True, False], [1.0], "a must hold numeric"),
        ([[1.0, 2.0]], [1.0], "a must be a 1-D"),
        (pd.Series(["x"]), [1.0], "a must hold numeric"),
        (pd.Series([1.0, None]), [1.0], "a contains 1 non-finite"),
    ],
)
def test_bad_scores_raise(a, b, match):
    for fn in (rabbi, avg_score_gap, jsd, emd, rabbi_test):
        with pytest.raises(ValueError, match=match):
            fn(a, b)


def test_rabbi_test_bad_parameters():
    with pytest.raises(ValueError, match="alternative"):
        rabbi_test([1], [2], alternative="bigger")
    with pytest.raises(ValueError, match="n_boot"):
        rabbi_test([1], [2], n_boot=-1)
    with pytest.raises(ValueError, match="confidence"):
        rabbi_test([1], [2], n_boot=10, confidence=1.5)


# ------------------------------------------------------------------------------------------------------------
# average gap, JSD, EMD
# ------------------------------------------------------------------------------------------------------------
def test_avg_score_gap_hand_computed():
    assert avg_score_gap([0.9, 0.7], [0.5, 0.6]) == pytest.approx(0.25)
    assert avg_score_gap([1, 2, 3], [2]) == 0.0


def test_jsd_hand_computed():
    # P = (1/2, 1/2), Q = (1, 0), M = (3/4, 1/4)
    kl_pm = 0.5 * np.log2(0.5 / 0.75) + 0.5 * np.log2(0.5 / 0.25)
    kl_qm = np.log2(1 / 0.75)
    assert jsd([0, 1], [0, 0], bins=2) == pytest.approx(0.5 * (kl_pm + kl_qm))
    assert jsd([0, 0], [1, 1]) == 1.0
    assert jsd([0.2, 0.4], [0.4, 0.2]) == 0.0
    assert jsd([3, 3], [3]) == 0.0  # a single value: one bin


def test_jsd_shared_pooled_binning():
    # the edges come from the pooled sample: 10 equal bins over [0, 1]
    a, b = [0.0, 0.05], [0.95, 1.0]
    assert jsd(a, b) == 1.0
    # with 1 bin everything is in the same bin
    assert jsd(a, b, bins=1) == 0.0
    assert jsd(a, b, bins=[0.0, 0.5, 1.0]) == 1.0
    assert jsd(a, b, bins=2, bin_range=(0.0, 4.0)) == 0.0  # edges 0, 2, 4: one occupied bin


@SETTINGS
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40),
    st.sampled_from([1, 3, 10, "auto", "sturges"]),
)
def test_jsd_matches_scipy_jensenshannon_squared(a, b, bins):
    edges = np.histogram_bin_edges(np.concatenate([a, b]), bins=bins)
    p = np.histogram(a, edges)[0] / len(a)
    q = np.histogram(b, edges)[0] / len(b)
    value = jsd(a, b, bins=bins)
    assert value == pytest.approx(jensenshannon(p, q, base=2) ** 2, abs=1e-12)
    assert 0.0 <= value <= 1.0
    assert jsd(b, a, bins=bins) == pytest.approx(value, abs=1e-12)


def test_jsd_bad_bins():
    with pytest.raises(ValueError, match="outside the bins"):
        jsd([0.0, 2.0], [1.0], bin_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="outside the bins"):
        jsd([0.0, 2.0], [1.0], bins=[0.0, 1.0])
    with pytest.raises(ValueError, match="bins must be >= 1"):
        jsd([0.0], [1.0], bins=0)
    with pytest.raises(ValueError, match="bin_range"):
        jsd([0.0], [1.0], bin_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="invalid bins"):
        jsd([0.0], [1.0], bins="nonsense")


def test_emd_hand_computed_and_scipy():
    assert emd([0, 1], [1, 2]) == 1.0
    assert emd([0, 0, 3], [0, 0, 3]) == 0.0
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=50), rng.normal(0.5, 2, size=70)
    assert emd(a, b) == pytest.approx(stats.wasserstein_distance(a, b))
    assert emd(a, b) == pytest.approx(emd(b, a))


# ------------------------------------------------------------------------------------------------------------
# shape
# ------------------------------------------------------------------------------------------------------------
def test_skewness_kurtosis_hand_computed():
    # x = (0, 0, 0, 1): mean 1/4, m2 = 3/16, m3 = 3/32, m4 = 21/256
    m2, m3, m4 = 3 / 16, 3 / 32, 21 / 256
    assert skewness([0, 0, 0, 1]) == pytest.approx(m3 / m2**1.5)
    assert excess_kurtosis([0, 0, 0, 1]) == pytest.approx(m4 / m2**2 - 3)
    assert skewness([1, 2, 3]) == pytest.approx(0.0)


@SETTINGS
@given(st.lists(st.integers(0, 6), min_size=4, max_size=30).filter(lambda v: len(set(v)) > 1), st.booleans())
def test_shape_matches_scipy(values, bias):
    assert skewness(values, bias=bias) == pytest.approx(stats.skew(values, bias=bias), abs=1e-9)
    assert excess_kurtosis(values, bias=bias) == pytest.approx(
        stats.kurtosis(values, fisher=True, bias=bias), abs=1e-9
    )


def test_score_shape_per_group_matches_scipy():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "model": np.repeat(["m1", "m2"], 60),
            "group": np.tile(["W", "B", "A"], 40),
            "score": rng.beta(5, 1, 120),
        }
    )
    table = score_shape(df, "score", "group", by=["model"], bias=False)
    assert list(table.columns) == ["model", "group", "n", "mean", "skewness", "excess_kurtosis"]
    assert len(table) == 6
    for row in table.itertuples():
        x = df.loc[(df["model"] == row.model) & (df["group"] == row.group), "score"]
        assert row.n == len(x)
        assert row.skewness == pytest.approx(stats.skew(x, bias=False))
        assert row.excess_kurtosis == pytest.approx(stats.kurtosis(x, bias=False))


def test_score_shape_constant_and_small_groups():
    df = pd.DataFrame({"g": ["x", "x", "y", "y"], "s": [1.0, 1.0, 0.0, 1.0]})
    with pytest.raises(ValueError, match=r"constant in 1 cell\(s\).*'x'"):
        score_shape(df, "s", "g")
    table = score_shape(df, "s", "g", on_constant="nan")
    assert table["skewness"].isna().tolist() == [True, False]
    with pytest.raises(ValueError, match="at least 4 scores"):
        score_shape(df, "s", "g", bias=False, on_constant="nan")
    with pytest.raises(ValueError, match="constant"):
        skewness([2.0, 2.0])
    with pytest.raises(ValueError, match="on_constant"):
        score_shape(df, "s", "g", on_constant="skip")
    with pytest.raises(ValueError, match="no column"):
        score_shape(df, "score", "g")
    with pytest.raises(ValueError, match="NaN/inf value.*'y'"):
        score_shape(df.assign(s=[0.0, 1.0, np.nan, 1.0]), "s", "g")


# ------------------------------------------------------------------------------------------------------------
# bias_table
# ------------------------------------------------------------------------------------------------------------
def _candidates(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 240
    return pd.DataFrame(
        {
            "model": np.repeat(["m1", "m2"], n // 2),
            "job": np.tile(np.repeat(["se", "hr"], n // 4), 2),
            "group": np.tile(["WM", "BF", "AM"], n // 3),
            "score": rng.integers(0, 5, n) / 4.0,
            "qualified": rng.random(n) < 0.5,
        }
    )


def test_bias_table_hand_computed():
    df = pd.DataFrame({"group": ["W"] * 3 + ["B"] * 3, "score": [0.9, 0.8, 0.7, 0.8, 0.6, 0.5]})
    row = bias_table(df, "score", "group", "W").iloc[0]
    assert row["group"] == "B" and row["reference"] == "W"
    assert (row["n_group"], row["n_reference"]) == (3, 3)
    assert row["rabbi"] == pytest.approx(-2 / 3)
    assert row["avg_gap"] == pytest.approx(-1 / 6)
    assert row["emd"] == pytest.approx(stats.wasserstein_distance([0.8, 0.6, 0.5], [0.9, 0.8, 0.7]))
    assert row["rabbi_pvalue"] == pytest.approx(stats.mannwhitneyu([0.8, 0.6, 0.5], [0.9, 0.8, 0.7]).pvalue)


def test_bias_table_matches_scalar_functions():
    df = _candidates()
    table = bias_table(df, "score", "group", "WM", by=["model", "job"], qualified="qualified")
    assert len(table) == 2 * 2 * 2
    assert list(table.columns[:4]) == ["model", "job", "group", "reference"]
    for suffix in ("", "_qualified"):
        for c in ("n_group", "n_reference", "rabbi", "rabbi_pvalue", "avg_gap", "jsd", "emd"):
            assert c + suffix in table.columns
    assert not table.isna().any().any()
    for row in table.itertuples():
        cell = df[(df["model"] == row.model) & (df["job"] == row.job)]
        a = cell.loc[cell["group"] == row.group]
        b = cell.loc[cell["group"] == "WM"]
        assert row.rabbi == pytest.approx(rabbi(a["score"], b["score"]))
        assert row.avg_gap == pytest.approx(avg_score_gap(a["score"], b["score"]))
        assert row.jsd == pytest.approx(jsd(a["score"], b["score"]))
        assert row.emd == pytest.approx(emd(a["score"], b["score"]))
        assert row.rabbi_pvalue == pytest.approx(rabbi_test(a["score"], b["score"]).pvalue)
        qa, qb = a.loc[a["qualified"], "score"], b.loc[b["qualified"], "score"]
        assert row.n_group_qualified == len(qa) and row.n_reference_qualified == len(qb)
        assert row.rabbi_qualified == pytest.approx(rabbi(qa, qb))
        assert row.avg_gap_qualified == pytest.approx(avg_score_gap(qa, qb))


def test_bias_table_groups_and_jsd_options():
    df = _candidates()
    table = bias_table(df, "score", "group", "WM", by=["model"], groups=["AM"], jsd_bins=4, jsd_range=(0, 1))
    assert table["group"].unique().tolist() == ["AM"]
    a = df.loc[(df["model"] == "m1") & (df["group"] == "AM"), "score"]
    b = df.loc[(df["model"] == "m1") & (df["group"] == "WM"), "score"]
    assert table["jsd"].iloc[0] == pytest.approx(jsd(a, b, bins=4, bin_range=(0, 1)))


def test_bias_table_bad_input():
    df = _candidates()
    with pytest.raises(ValueError, match=r"reference group 'XX' not found .*groups present: \['WM', 'BF', 'AM'\]"):
        bias_table(df, "score", "group", "XX")
    one_cell_without_ref = df[~((df["model"] == "m2") & (df["group"] == "WM"))]
    with pytest.raises(ValueError, match=r"reference group 'WM' is missing in cell \{'model': 'm2'\}.*'BF'"):
        bias_table(one_cell_without_ref, "score", "group", "WM", by=["model"])
    with pytest.raises(ValueError, match=r"score column 'score' has 1 NaN/inf value\(s\) in group\(s\) \['BF'\]"):
        bias_table(df.assign(score=np.where(np.arange(len(df)) == 1, np.nan, df["score"])), "score", "group", "WM")
    with pytest.raises(ValueError, match=r"unknown group label\(s\) \['ZZ'\]"):
        bias_table(df, "score", "group", "WM", groups=["ZZ"])
    with pytest.raises(ValueError, match="must not contain the reference"):
        bias_table(df, "score", "group", "WM", groups=["WM"])
    with pytest.raises(ValueError, match="score column 'group' must be numeric"):
        bias_table(df, "group", "group", "WM")
    with pytest.raises(ValueError, match="no column"):
        bias_table(df, "points", "group", "WM")
    with pytest.raises(ValueError, match="qualified column 'job' must be boolean"):
        bias_table(df, "score", "group", "WM", qualified="job")
    no_qualified_bf = df.assign(qualified=df["qualified"] & (df["group"] != "BF"))
    with pytest.raises(ValueError, match="group 'BF' has no qualified candidates"):
        bias_table(no_qualified_bf, "score", "group", "WM", qualified="qualified")
    with pytest.raises(ValueError, match="group 'AM' is missing in cell"):
        bias_table(df[~((df["model"] == "m2") & (df["group"] == "AM"))], "score", "group", "WM", by=["model"],
                   groups=["AM"])
    with pytest.raises(ValueError, match="empty"):
        bias_table(df.iloc[:0], "score", "group", "WM")
    with pytest.raises(ValueError, match="key columns must be complete"):
        bias_table(df.assign(model=None), "score", "group", "WM", by=["model"])


# ------------------------------------------------------------------------------------------------------------
# pairwise
# ------------------------------------------------------------------------------------------------------------
def _pairs(outcomes, cands=None, **extra) -> pd.DataFrame:
    """Tidy pairwise frame from a list of (winner in order ab, winner in order ba) per pair."""
    rows = []
    for i, (w_ab, w_ba) in enumerate(outcomes):
        ca, cb = cands[i] if cands is not None else (f"a{i}", f"b{i}")
        rows.append({"pair_id": i, "cand_a": ca, "cand_b": cb, "order": "ab", "winner": w_ab, **extra})
        rows.append({"pair_id": i, "cand_a": ca, "cand_b": cb, "order": "ba", "winner": w_ba, **extra})
    return pd.DataFrame(rows)


RULE = {  # (answer ab, answer ba) -> (points cand_a, points cand_b), the documented scoring rule
    ("a", "a"): (1.0, 0.0),
    ("b", "b"): (0.0, 1.0),
    ("a", "b"): (0.5, 0.5),
    ("b", "a"): (0.5, 0.5),
    ("tie", "tie"): (0.5, 0.5),
    ("a", "tie"): (0.75, 0.25),
    ("tie", "a"): (0.75, 0.25),
    ("b", "tie"): (0.25, 0.75),
    ("a", "undetected"): (0.5, 0.0),
    ("undetected", "b"): (0.0, 0.5),
    ("tie", "undetected"): (0.25, 0.25),
    ("undetected", "undetected"): (0.0, 0.0),
}


@pytest.mark.parametrize(("outcome", "expected"), list(RULE.items()))
def test_pairwise_points_rule(outcome, expected):
    points = pairwise_points(_pairs([outcome])).set_index("candidate")["score"]
    assert (points["a0"], points["b0"]) == expected


def test_pairwise_points_sums_over_pairs_with_by():
    # x beats y consistently (1), x vs z flipped (0.5 each), y vs z tie in one order (y 0.75, z 0.25)
    df = _pairs([("a", "a"), ("a", "b"), ("a", "tie")], cands=[("x", "y"), ("x", "z"), ("y", "z")], model="m")
    both = pd.concat([df, df.assign(model="n", winner="undetected")], ignore_index=True)
    out = pairwise_points(both, by=["model"])
    assert list(out.columns) == ["model", "candidate", "score", "n_pairs"]
    m = out[out["model"] == "m"].set_index("candidate")
    assert m["score"].to_dict() == {"x": 1.5, "y": 0.75, "z": 0.75}
    assert m["n_pairs"].tolist() == [2, 2, 2]
    assert out.loc[out["model"] == "n", "score"].tolist() == [0.0, 0.0, 0.0]
    # pair ids repeat across models: without by the frame is ambiguous
    with pytest.raises(ValueError, match="exactly one 'ab' and one 'ba'.*by="):
        pairwise_points(both)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "tie", "undetected"]),
                          st.sampled_from(["a", "b", "tie", "undetected"])), min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_pairwise_points_match_pair_by_pair_rule(outcomes, rnd):
    names = ["p", "q", "r", "s", "t"]
    cands = [tuple(rnd.sample(names, 2)) for _ in outcomes]
    df = _pairs(outcomes, cands=cands).sample(frac=1.0, random_state=rnd.randint(0, 10**6))
    expected: dict[str, float] = {}
    for (w_ab, w_ba), (ca, cb) in zip(outcomes, cands):
        pa = 0.5 * (w_ab == "a") + 0.5 * (w_ba == "a") + 0.25 * (w_ab == "tie") + 0.25 * (w_ba == "tie")
        pb = 0.5 * (w_ab == "b") + 0.5 * (w_ba == "b") + 0.25 * (w_ab == "tie") + 0.25 * (w_ba == "tie")
        expected[ca] = expected.get(ca, 0.0) + pa
        expected[cb] = expected.get(cb, 0.0) + pb
    got = pairwise_points(df).set_index("candidate")["score"].to_dict()
    assert got == pytest.approx(expected)
    detected = sum((w != "undetected") for pair in outcomes for w in pair)
    assert sum(got.values()) == pytest.approx(0.5 * detected)


def test_pairwise_bad_input():
    good = _pairs([("a", "b")])
    with pytest.raises(ValueError, match=r"column 'winner' has value\(s\) \['A'\]"):
        pairwise_points(good.assign(winner=["A", "b"]))
    with pytest.raises(ValueError, match=r"column 'order' has value\(s\) \['ab2'\]"):
        pairwise_points(good.assign(order=["ab", "ab2"]))
    with pytest.raises(ValueError, match="exactly one 'ab' and one 'ba'"):
        pairwise_points(good.iloc[:1])
    with pytest.raises(ValueError, match="exactly one 'ab' and one 'ba'"):
        pairwise_points(good.assign(order="ab"))
    with pytest.raises(ValueError, match="different cand_a/cand_b"):
        pairwise_points(good.assign(cand_b=["b0", "zz"]))
    with pytest.raises(ValueError, match="with itself"):
        pairwise_points(good.assign(cand_b="a0"))
    with pytest.raises(ValueError, match=r"no column\(s\) \['winner'\]"):
        pairwise_points(good.drop(columns="winner"))
    with pytest.raises(ValueError, match="missing value"):
        pairwise_points(good.assign(winner=[None, "a"]))
    with pytest.raises(ValueError, match="empty"):
        pairwise_points(good.iloc[:0])


def test_pairwise_gap_table_hand_computed():
    # W = {w1, w2}, B = {b1, b2}, H = {h1}
    cands = [("w1", "b1"), ("b1", "w2"), ("w1", "b2"), ("b2", "w2"), ("h1", "w1"), ("b1", "b2")]
    outcomes = [("b", "b"), ("a", "b"), ("b", "b"), ("a", "a"), ("tie", "tie"), ("a", "a")]
    df = _pairs(outcomes, cands=cands)
    group_of = {"w1": "W", "w2": "W", "b1": "B", "b2": "B", "h1": "H"}
    table = pairwise_gap_table(df, group_of, "W")
    # B vs W: 4 pairs, B wins consistently in pairs 0, 2, 3 -> 3/4; H vs W: 1 pair, tie -> 0; B vs B ignored
    assert table.to_dict("list") == {
        "group": ["B", "H"], "reference": ["W", "W"], "win_share": [0.75, 0.0], "n_pairs": [4, 1]
    }
    assert pairwise_win_share(df, group_of, "B", "W") == 0.75
    assert pairwise_win_share(df, pd.Series(group_of), "H", "W") == 0.0
    # W against B as reference: W wins consistently only in pair 1? no (flipped) -> 0 / 4
    assert pairwise_win_share(df, group_of, "W", "B") == 0.0


def test_pairwise_gap_table_by_and_errors():
    df = _pairs([("a", "a")], cands=[("x", "y")], model="m1")
    df = pd.concat([df, df.assign(model="m2", winner="b")], ignore_index=True)
    group_of = {"x": "A", "y": "B"}
    table = pairwise_gap_table(df, group_of, "B", by=["model"])
    assert table[["model", "win_share"]].to_dict("list") == {"model": ["m1", "m2"], "win_share": [1.0, 0.0]}
    with pytest.raises(ValueError, match=r"no group for candidate\(s\) \['y'\]"):
        pairwise_gap_table(df, {"x": "A"}, "B", by=["model"])
    with pytest.raises(ValueError, match="reference group 'C' not found"):
        pairwise_gap_table(df, group_of, "C", by=["model"])
    with pytest.raises(ValueError, match=r"unknown group label\(s\) \['Z'\]"):
        pairwise_gap_table(df, group_of, "B", by=["model"], groups=["Z"])
    no_cross = _pairs([("a", "a"), ("b", "b")], cands=[("y", "y2"), ("x", "z")])
    with pytest.raises(ValueError, match=r"no pair between group\(s\) \['A'\] and the reference group 'B'"):
        pairwise_gap_table(no_cross, {"y": "B", "y2": "B", "x": "A", "z": "C"}, "B", groups=["A"])
    with pytest.raises(ValueError, match="no pair between the reference group 'B' and any other group"):
        pairwise_gap_table(no_cross.iloc[:2], {"y": "B", "y2": "B"}, "B")
    with pytest.raises(ValueError, match="must not contain the reference"):
        pairwise_win_share(df[df["model"] == "m1"], group_of, "B", "B")


def test_pairwise_output_stats_table2_categories():
    outcomes = [
        ("a", "a"),  # regular, consistent
        ("a", "b"),  # flipped (and inconsistent)
        ("b", "a"),  # flipped (and inconsistent)
        ("tie", "tie"),  # tie prompts; same answer in both orders: not inconsistent
        ("a", "tie"),  # inconsistent, not flipped
        ("undetected", "b"),  # inconsistent, not flipped
        ("undetected", "undetected"),  # not inconsistent
        ("b", "b"),  # regular, consistent
    ]
    df = _pairs(outcomes, model="m1")
    out = pairwise_output_stats(df).iloc[0]
    assert out["model"] == "m1"
    assert (out["n_prompts"], out["n_pairs"]) == (16, 8)
    assert out["regular"] == pytest.approx(100 * 10 / 16)
    assert out["tie"] == pytest.approx(100 * 3 / 16)
    assert out["undetected"] == pytest.approx(100 * 3 / 16)
    assert out["flipped"] == pytest.approx(100 * 2 / 8)
    assert out["inconsistent"] == pytest.approx(100 * 4 / 8)


def test_pairwise_output_stats_per_model_and_keys():
    m1 = _pairs([("a", "b"), ("a", "a")], model="m1", job="se")
    m1b = _pairs([("a", "a")], model="m1", job="hr")  # pair_id 0 again, another job
    m2 = _pairs([("tie", "a")], model="m2", job="se")
    df = pd.concat([m1, m1b, m2], ignore_index=True)
    out = pairwise_output_stats(df, pair_keys=["job"]).set_index("model")
    assert out.loc["m1", "flipped"] == pytest.approx(100 / 3)
    assert out.loc["m1", "inconsistent"] == pytest.approx(100 / 3)
    assert out.loc["m2", "tie"] == 50.0 and out.loc["m2", "inconsistent"] == 100.0
    assert out.loc["m2", "flipped"] == 0.0
    with pytest.raises(ValueError, match="exactly one 'ab' and one 'ba'"):
        pairwise_output_stats(df)
    with pytest.raises(ValueError, match="by must name"):
        pairwise_output_stats(df, by=[])
    with pytest.raises(ValueError, match="both by and pair_keys"):
        pairwise_output_stats(df, pair_keys=["model"])


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "tie", "undetected"]),
                          st.sampled_from(["a", "b", "tie", "undetected"])), min_size=1, max_size=30))
def test_pairwise_output_stats_properties(outcomes):
    out = pairwise_output_stats(_pairs(outcomes, model="m")).iloc[0]
    assert out["regular"] + out["tie"] + out["undetected"] == pytest.approx(100.0)
    assert 0.0 <= out["flipped"] <= out["inconsistent"] <= 100.0
    expected_inconsistent = 100 * np.mean([w1 != w2 for w1, w2 in outcomes])
    assert out["inconsistent"] == pytest.approx(expected_inconsistent)


def test_all_outcome_pairs_covered_by_rule_table():
    # every (ab, ba) combination scores to at most one point in total and is symmetric under swapping a and b
    swap = {"a": "b", "b": "a", "tie": "tie", "undetected": "undetected"}
    for w_ab, w_ba in itertools.product(["a", "b", "tie", "undetected"], repeat=2):
        pts = pairwise_points(_pairs([(w_ab, w_ba)])).set_index("candidate")["score"]
        swapped = pairwise_points(_pairs([(swap[w_ab], swap[w_ba])])).set_index("candidate")["score"]
        assert pts["a0"] + pts["b0"] <= 1.0
        assert (pts["a0"], pts["b0"]) == (swapped["b0"], swapped["a0"])


def test_docstring_examples():
    result = doctest.testmod(allocbias.metrics)
    assert result.failed == 0 and result.attempted >= 14


def test_pairwise_answer_shares_by_hand():
    from allocbias.metrics import pairwise_answer_shares

    df = pd.DataFrame({
        "model": ["pos"] * 4 + ["mute"] * 2,
        "order": ["ab", "ba", "ab", "ba", "ab", "ba"],
        "winner": ["a", "b", "a", "b", "undetected", "undetected"],  # "pos" always names the first-shown
        "answer": ["Ann", "Bo", "Ann", "Cy", "", None],
    })
    got = pairwise_answer_shares(df).set_index("model")
    assert got.loc["pos", "first_shown"] == 100.0 and got.loc["pos", "empty"] == 0.0
    assert math.isnan(got.loc["mute", "first_shown"]) and got.loc["mute", "empty"] == 100.0
    assert got["n_prompts"].to_dict() == {"mute": 2, "pos": 4} and got["n_regular"].to_dict() == {"mute": 0, "pos": 4}
    with pytest.raises(ValueError, match="column 'order' must hold"):
        pairwise_answer_shares(df.assign(order="AB"))
    with pytest.raises(ValueError, match=r"no column\(s\) \['answer'\]"):
        pairwise_answer_shares(df.drop(columns="answer"))
