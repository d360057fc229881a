"""Tests for allocbias.selection: top-k with shared ties, pool drawing, selection rates and gaps."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import allocbias.selection as selection
from allocbias.selection import (
    allocation_gaps,
    draw_group_pools,
    draw_random_pools,
    select_top_k,
    selection_rates,
    simulate,
)

FAST = settings(max_examples=60, deadline=None)


def reference_row(row: list[float], k: int) -> list[float]:
    """Independent per-round reference: rank positions, then share the seats of the tied block."""
    order = sorted(range(len(row)), key=lambda i: -row[i])
    cut = row[order[k - 1]]
    above = [i for i in order if row[i] > cut]
    tied = [i for i in order if row[i] == cut]
    share = (k - len(above)) / len(tied)
    out = [0.0] * len(row)
    for i in above:
        out[i] = 1.0
    for i in tied:
        out[i] = share
    return out


def test_doctests() -> None:
    result = doctest.testmod(selection, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10
    assert result.failed == 0


# ---------------------------------------------------------------------------------------------- top-k
@pytest.mark.parametrize(
    ("scores", "k", "expected"),
    [
        ([3, 2, 2, 1], 2, [1, 0.5, 0.5, 0]),
        ([3, 2, 2, 1], 1, [1, 0, 0, 0]),
        ([3, 2, 2, 1], 3, [1, 1, 1, 0]),
        ([3, 2, 2, 1], 4, [1, 1, 1, 1]),
        ([5, 5, 5, 5], 1, [0.25, 0.25, 0.25, 0.25]),
        ([5, 5, 5, 5], 3, [0.75, 0.75, 0.75, 0.75]),
        ([1, 4, 4, 4, 0], 2, [0, 2 / 3, 2 / 3, 2 / 3, 0]),
        ([9, 1, 4, 4, 4, 0], 2, [1, 0, 1 / 3, 1 / 3, 1 / 3, 0]),
        ([-np.inf, 0.0, np.inf], 1, [0, 0, 1]),
        ([0.0, -0.0, 1.0], 2, [0.5, 0.5, 1]),
    ],
)
def test_select_top_k_hand_computed(scores, k, expected) -> None:
    got = select_top_k(np.array([scores], dtype=float), k)
    np.testing.assert_allclose(got, [expected], rtol=0, atol=1e-15)
    np.testing.assert_allclose(select_top_k(scores, k), expected, rtol=0, atol=1e-15)  # 1-D input


def test_select_top_k_rounds_are_independent() -> None:
    scores = np.array([[3, 2, 2, 1], [1, 1, 1, 1], [0, 5, 1, 5]], dtype=float)
    expected = [[1, 0.5, 0.5, 0], [0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1]]
    np.testing.assert_allclose(select_top_k(scores, 2), expected)


def test_select_top_k_quota_sweep_shape_and_order() -> None:
    scores = np.array([[3, 2, 2, 1], [4, 3, 2, 1]], dtype=float)
    swept = select_top_k(scores, [3, 1, 2])
    assert swept.shape == (3, 2, 4)
    for i, k in enumerate([3, 1, 2]):
        np.testing.assert_array_equal(swept[i], select_top_k(scores, k))
    assert select_top_k(scores, np.array([2])).shape == (1, 2, 4)


@pytest.mark.parametrize("k", [0, 5, -1])
def test_select_top_k_k_outside_pool(k) -> None:
    with pytest.raises(ValueError, match=rf"k={k}.*pool size 4"):
        select_top_k(np.zeros((3, 4)), k)


@pytest.mark.parametrize("k", [1.5, "2", True, [], [1, 2.0]])
def test_select_top_k_bad_k_type(k) -> None:
    with pytest.raises(ValueError, match="k"):
        select_top_k(np.zeros((3, 4)), k)


def test_select_top_k_rejects_nan_and_bad_shapes() -> None:
    with pytest.raises(ValueError, match="NaN in 1 round"):
        select_top_k([[1.0, np.nan], [1.0, 2.0]], 1)
    with pytest.raises(ValueError, match="shape"):
        select_top_k(np.zeros((2, 2, 2)), 1)
    with pytest.raises(ValueError, match="numeric"):
        select_top_k([["a", "b"]], 1)


tied_scores = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 30), st.integers(1, 10)),
    elements=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),  # few values -> many ties
)


@FAST
@given(scores=tied_scores, data=st.data())
def test_select_top_k_rows_sum_to_k_and_match_reference(scores, data) -> None:
    pool = scores.shape[1]
    ks = data.draw(st.lists(st.integers(1, pool), min_size=1, max_size=4))
    swept = select_top_k(scores, ks)
    for i, k in enumerate(ks):
        sel = swept[i]
        np.testing.assert_allclose(sel.sum(axis=1), k, rtol=0, atol=1e-12)
        assert ((sel >= 0) & (sel <= 1)).all()
        expected = np.array([reference_row(row, k) for row in scores.tolist()])
        np.testing.assert_array_equal(sel, expected)
        # equal scores always get equal selections; a higher score never gets less
        for row_s, row_sel in zip(scores, sel):
            order = np.argsort(row_s)
            assert (np.diff(row_sel[order]) >= 0).all()


@FAST
@given(scores=hnp.arrays(np.float64, (20, 6), elements=st.floats(-1e6, 1e6)), k=st.integers(1, 6))
def test_select_top_k_continuous_scores(scores, k) -> None:
    sel = select_top_k(scores, k)
    np.testing.assert_allclose(sel.sum(axis=1), k, atol=1e-12)
    expected = np.array([reference_row(row, k) for row in scores.tolist()])
    np.testing.assert_array_equal(sel, expected)


# ---------------------------------------------------------------------------------------------- pools
@pytest.fixture
def resumes() -> pd.DataFrame:
    """Two jobs x 3 resumes x 4 groups x 2 names; qualified = resume 0."""
    rows = []
    for job in ["hr", "swe"]:
        for resume in range(3):
            for group in ["Female Black", "Female White", "Male Black", "Male White"]:
                for name in range(2):
                    rows.append({"job": job, "resume": resume, "group": group, "name": f"{group}-{name}"})
    frame = pd.DataFrame(rows)
    frame["qualified"] = frame["resume"] == 0
    return frame


def test_group_pools_one_per_group_and_stratum(resumes) -> None:
    pools = draw_group_pools(resumes, rounds=50, seed=3, by="job")
    assert pools.shape == (100, 4)
    assert pools.dtype.kind == "i"
    groups = resumes["group"].to_numpy()[pools]
    assert (groups == np.array(sorted(resumes["group"].unique()))).all()
    jobs = resumes["job"].to_numpy()[pools]
    assert (jobs[:50] == "hr").all() and (jobs[50:] == "swe").all()
    assert (jobs == jobs[:, :1]).all()
    # independent draws by default: rounds mix resumes
    res = resumes["resume"].to_numpy()[pools]
    assert (res != res[:, :1]).any(axis=1).mean() > 0.5


def test_group_pools_match_shares_resume(resumes) -> None:
    pools = draw_group_pools(resumes, rounds=60, seed=3, by="job", match="resume")
    res = resumes["resume"].to_numpy()[pools]
    assert (res == res[:, :1]).all()
    assert set(res[:, 0]) == {0, 1, 2}  # every resume is drawn over the rounds


def test_group_pools_deterministic_and_seed_dependent(resumes) -> None:
    a = draw_group_pools(resumes, rounds=40, seed=11, by="job")
    b = draw_group_pools(resumes, rounds=40, seed=11, by="job")
    c = draw_group_pools(resumes, rounds=40, seed=12, by="job")
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_group_pools_roughly_uniform(resumes) -> None:
    pools = draw_group_pools(resumes, rounds=6000, seed=0)
    counts = np.bincount(pools.ravel(), minlength=len(resumes))
    # each group has 12 members; each member appears ~6000/12 = 500 times
    assert counts.min() > 400 and counts.max() < 600


def test_group_pools_errors(resumes) -> None:
    with pytest.raises(ValueError, match="no column"):
        draw_group_pools(resumes, rounds=5, seed=0, group="gender")
    with pytest.raises(ValueError, match="rounds"):
        draw_group_pools(resumes, rounds=0, seed=0)
    partial = resumes[~((resumes["job"] == "swe") & (resumes["group"] == "Male Black"))]
    with pytest.raises(ValueError, match=r"'Male Black'.*job='swe'"):
        draw_group_pools(partial, rounds=5, seed=0, by="job")
    with pytest.raises(ValueError, match="missing"):
        draw_group_pools(resumes.assign(group=resumes["group"].where(resumes.index > 0)), rounds=5, seed=0)


def test_random_pools(resumes) -> None:
    pools = draw_random_pools(resumes, rounds=300, pool_size=10, seed=5, by="job")
    assert pools.shape == (600, 10)
    assert all(len(set(row)) == 10 for row in pools.tolist())
    jobs = resumes["job"].to_numpy()[pools]
    assert (jobs[:300] == "hr").all() and (jobs[300:] == "swe").all()
    np.testing.assert_array_equal(pools, draw_random_pools(resumes, 300, 10, seed=5, by="job"))
    assert not np.array_equal(pools, draw_random_pools(resumes, 300, 10, seed=6, by="job"))
    # inclusion probability 10 / 24 per round
    counts = np.bincount(pools[:300].ravel(), minlength=len(resumes))[:24]
    assert abs(counts.mean() - 300 * 10 / 24) < 1e-9
    assert counts.min() > 80 and counts.max() < 170
    full = draw_random_pools(5, rounds=3, pool_size=5, seed=0)
    assert (np.sort(full, axis=1) == np.arange(5)).all()
    with pytest.raises(ValueError, match="pool_size=30 exceeds the 24 candidates of job='hr'"):
        draw_random_pools(resumes, rounds=3, pool_size=30, seed=0, by="job")


# ---------------------------------------------------------------------------------------------- rates and gaps
@pytest.fixture
def tiny() -> pd.DataFrame:
    """Six candidates, two groups, fixed scores."""
    return pd.DataFrame(
        {
            "group": ["A", "A", "A", "B", "B", "B"],
            "score": [0.9, 0.5, 0.2, 0.7, 0.5, 0.1],
            "qualified": [True, False, True, True, True, False],
        }
    )


def test_selection_rates_hand_computed(tiny) -> None:
    pools = np.array([[0, 3, 4], [1, 4, 5], [2, 3, 5]])
    sel = select_top_k(tiny["score"].to_numpy()[pools], 1)
    # round 1: 0.9 (A) wins; round 2: 0.5 (A) and 0.5 (B) tie -> 0.5 each; round 3: 0.7 (B) wins
    np.testing.assert_allclose(sel, [[1, 0, 0], [0.5, 0.5, 0], [0, 1, 0]])
    rates = selection_rates(tiny, pools, sel)
    assert rates["group"].tolist() == ["A", "B"]
    np.testing.assert_allclose(rates["appearances"], [3, 6])
    np.testing.assert_allclose(rates["selections"], [1.5, 1.5])
    np.testing.assert_allclose(rates["selection_rate"], [0.5, 0.25])
    q = selection_rates(tiny, pools, sel, qualified="qualified")
    # qualified appearances: A rows 0, 2 -> selections 1 + 0 over 2; B rows 3, 4 (x2 each) -> (0+1)+(0+.5) over 4
    np.testing.assert_allclose(q["appearances"], [2, 4])
    np.testing.assert_allclose(q["selection_rate"], [0.5, 1.5 / 4])
    swept = selection_rates(tiny, pools, select_top_k(tiny["score"].to_numpy()[pools], [1, 2]), k=[1, 2])
    assert swept["k"].tolist() == [1, 1, 2, 2]
    np.testing.assert_allclose(swept["selection_rate"], [0.5, 0.25, 1.0, 0.5])


def test_allocation_gaps_hand_computed(tiny) -> None:
    pools = np.array([[0, 3, 4], [1, 4, 5], [2, 3, 5]])
    gaps = allocation_gaps(tiny, "score", pools, k=[1, 2], reference="B")
    assert gaps[["k", "group", "reference"]].to_numpy().tolist() == [[1, "A", "B"], [2, "A", "B"]]
    # k=2: A is in the top two of every round (3/3); B fills the other seat each round (3/6)
    np.testing.assert_allclose(gaps["phi"], [0.5, 1.0])
    np.testing.assert_allclose(gaps["phi_reference"], [0.25, 0.5])
    np.testing.assert_allclose(gaps["dDP"], [0.25, 0.5])
    # k=2 qualified: A rows 0 (sel 1), 2 (round 3: 0.2 vs .7 vs .1 -> 1) -> 1.0;
    # B rows 3 (r1: 1, r3: 1), 4 (r1: 0, r2: 1) -> 3/4
    np.testing.assert_allclose(gaps["psi"], [0.5, 1.0])
    np.testing.assert_allclose(gaps["psi_reference"], [1.5 / 4, 0.75])
    np.testing.assert_allclose(gaps["dEO"], [0.5 - 1.5 / 4, 0.25])
    # reversing the reference flips the sign
    rev = allocation_gaps(tiny, "score", pools, k=[1, 2], reference="A")
    np.testing.assert_allclose(rev["dDP"], -gaps["dDP"])
    np.testing.assert_allclose(rev["dEO"], -gaps["dEO"])
    plain = allocation_gaps(tiny, "score", pools, k=1, reference="B", qualified=None)
    assert "dEO" not in plain.columns and plain["k"].tolist() == [1]


def test_allocation_gaps_errors(tiny) -> None:
    pools = np.array([[0, 3, 4], [1, 4, 5], [2, 3, 5]])
    with pytest.raises(ValueError, match="reference group 'C'"):
        allocation_gaps(tiny, "score", pools, 1, reference="C")
    with pytest.raises(ValueError, match=r"no column\(s\) \['points'\]"):
        allocation_gaps(tiny, "points", pools, 1, reference="B")
    with pytest.raises(ValueError, match="'A'.*never appear"):
        allocation_gaps(tiny, "score", np.array([[3, 4, 5]]), 1, reference="B")
    no_q = tiny.assign(qualified=[False, False, False, True, True, False])
    with pytest.raises(ValueError, match="'A'.*no qualified"):
        allocation_gaps(no_q, "score", pools, 1, reference="B")
    with pytest.raises(ValueError, match="'score' is NaN"):
        allocation_gaps(tiny.assign(score=[np.nan, 1, 1, 1, 1, 1]), "score", pools, 1, reference="B")
    # NaN outside the pools is fine
    allocation_gaps(tiny.assign(score=[0.9, 0.5, 0.2, np.nan, 0.5, 0.1]), "score", np.array([[0, 4, 5]]), 1,
                    reference="B", qualified=None)
    with pytest.raises(ValueError, match="k=4 is outside 1..3"):
        allocation_gaps(tiny, "score", pools, 4, reference="B")
    with pytest.raises(ValueError, match="positions outside"):
        allocation_gaps(tiny, "score", np.array([[0, 3, 9]]), 1, reference="B")
    with pytest.raises(ValueError, match="boolean or 0/1"):
        allocation_gaps(tiny.assign(qualified=["y", "n", "y", "n", "y", "n"]), "score", pools, 1, reference="B")


@FAST
@given(
    scores=hnp.arrays(np.float64, 16, elements=st.sampled_from([0.0, 0.3, 0.6, 1.0])),
    pools=hnp.arrays(np.int64, (25, 4), elements=st.integers(0, 15)),
    k=st.integers(1, 4),
)
def test_allocation_gaps_match_direct_count(scores, pools, k) -> None:
    cands = pd.DataFrame({"group": list("ABCD") * 4, "score": scores})
    assume(set(cands["group"].to_numpy()[pools].ravel()) == set("ABCD"))
    gaps = allocation_gaps(cands, "score", pools, k, reference="A", qualified=None)
    sel = select_top_k(scores[pools], k)
    rate = {}
    for g in "ABCD":
        mask = cands["group"].to_numpy()[pools] == g
        rate[g] = sel[mask].sum() / mask.sum()
    np.testing.assert_allclose(gaps["dDP"], [rate[g] - rate["A"] for g in "BCD"], atol=1e-12)
    # sum over groups of selections = k per round
    rates = selection_rates(cands, pools, sel)
    np.testing.assert_allclose(rates["selections"].sum(), k * len(pools))


def test_simulate_per_job_and_quota(resumes) -> None:
    # scores favour Male White strongly in hr, Female Black in swe; qualified resumes score higher
    base = np.where(resumes["qualified"], 0.6, 0.3)
    bonus = np.where(
        (resumes["job"] == "hr") & (resumes["group"] == "Male White"), 0.2,
        np.where((resumes["job"] == "swe") & (resumes["group"] == "Female Black"), 0.2, 0.0),
    )
    cands = resumes.assign(score=base + bonus)
    res = simulate(cands, "score", k=[1, 2], reference="Male White", rounds=400, seed=1, by="job")
    assert list(res.columns[:3]) == ["job", "k", "group"]
    assert len(res) == 2 * 2 * 3
    assert (res["rounds"] == 400).all()
    hr = res[res["job"] == "hr"]
    assert (hr["dDP"] < 0).all() and (hr["dEO"] < 0).all()
    swe = res[(res["job"] == "swe") & (res["group"] == "Female Black")]
    assert (swe["dDP"] > 0).all()
    again = simulate(cands, "score", k=[1, 2], reference="Male White", rounds=400, seed=1, by="job")
    pd.testing.assert_frame_equal(res, again)
    # matched rounds (same resume for everyone): in hr Male White always wins at k=1
    matched = simulate(cands, "score", k=1, reference="Male White", rounds=300, seed=2, by="job", match="resume")
    hr1 = matched[matched["job"] == "hr"]
    np.testing.assert_allclose(hr1["phi_reference"], 1.0)
    np.testing.assert_allclose(hr1["dDP"], -1.0)
    # equal pools through draw + allocation_gaps by hand
    pools = draw_group_pools(cands, rounds=400, seed=1, by="job")
    by_hand = allocation_gaps(cands, "score", pools[:400], [1, 2], "Male White")
    np.testing.assert_allclose(res[res["job"] == "hr"]["dDP"].to_numpy(), by_hand["dDP"].to_numpy())


def test_simulate_random_pools_and_errors(resumes) -> None:
    cands = resumes.assign(score=np.linspace(0, 1, len(resumes)))
    res = simulate(cands, "score", k=2, reference="Male White", rounds=200, seed=0, by=["job"], pool_size=10)
    assert res["job"].tolist() == ["hr"] * 3 + ["swe"] * 3
    with pytest.raises(ValueError, match="reference group 'Nobody'"):
        simulate(cands, "score", k=2, reference="Nobody", rounds=50, seed=0, by="job")
    no_ref = cands[~((cands["job"] == "swe") & (cands["group"] == "Male White"))]
    with pytest.raises(ValueError, match="subtask job='swe': reference group 'Male White'"):
        simulate(no_ref, "score", k=2, reference="Male White", rounds=50, seed=0, by="job", pool_size=10)
    with pytest.raises(ValueError, match="match only applies"):
        simulate(cands, "score", k=2, reference="Male White", rounds=5, seed=0, pool_size=4, match="resume")
    with pytest.raises(ValueError, match=r"no column\(s\) \['topic'\]"):
        simulate(cands, "score", k=2, reference="Male White", rounds=5, seed=0, by="topic")
