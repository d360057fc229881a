"""Exact top-k selection rates (allocbias.selection.exact_pool_rates / exact_draw_rates / exact_gaps).

Checked against brute-force enumeration (every tie-break order of a fixed pool; every combination of one
candidate per group), against Monte Carlo (:func:`allocbias.selection.simulate` and random tie-breaks), on
hand-computed cases, and on heavily tied integer scores like those of real language models.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.selection import (
    draw_selection_probabilities,
    exact_draw_rates,
    exact_gaps,
    exact_pool_rates,
    select_top_k,
    simulate,
)

FAST = settings(max_examples=60, deadline=None)


# ----------------------------------------------------------------------------------------------------------
# brute force
# ----------------------------------------------------------------------------------------------------------
def brute_pool_probabilities(scores: list[int], k: int) -> list[float]:
    """Average over every tie-break order: sort by (score desc, order), take the first k."""
    n = len(scores)
    hits = [0] * n
    orders = list(itertools.permutations(range(n)))
    for order in orders:
        rank = {i: pos for pos, i in enumerate(order)}
        chosen = sorted(range(n), key=lambda i: (-scores[i], rank[i]))[:k]
        for i in chosen:
            hits[i] += 1
    return [h / len(orders) for h in hits]


def brute_draw_rates(groups: dict[str, list[int]], k: int) -> dict[str, float]:
    """Average over every pool of one candidate per group (each pool equally likely) of the shared-ties rule."""
    labels = sorted(groups)
    sums = {g: 0.0 for g in labels}
    pools = list(itertools.product(*(groups[g] for g in labels)))
    for pool in pools:
        sel = select_top_k(np.array(pool, dtype=float), min(k, len(labels)))
        for g, s in zip(labels, sel):
            sums[g] += s
    return {g: sums[g] / len(pools) for g in labels}


small_scores = st.integers(min_value=0, max_value=3)  # few values: heavy ties


@st.composite
def fixed_pools(draw):
    n_pools = draw(st.integers(1, 3))
    rows = []
    for p in range(n_pools):
        size = draw(st.integers(1, 6))
        for i in range(size):
            rows.append({"pool": p, "group": draw(st.sampled_from("ABC")), "score": draw(small_scores)})
    return pd.DataFrame(rows)


@st.composite
def group_draws(draw):
    n_groups = draw(st.integers(2, 4))
    return {g: draw(st.lists(small_scores, min_size=1, max_size=3)) for g in "ABCD"[:n_groups]}


# ----------------------------------------------------------------------------------------------------------
# fixed pools
# ----------------------------------------------------------------------------------------------------------
def test_pool_hand_computed_ties_at_the_cut():
    # pool 1: 9 > 7 = 7 > 3; k = 2: the 9 is in, the two 7s share one seat
    cands = pd.DataFrame({"pool": 1, "group": ["A", "B", "B", "A"], "score": [9, 7, 7, 3]})
    rates = exact_pool_rates(cands, k=[1, 2, 3])
    got = rates.set_index(["group", "k"])["rate"].to_dict()
    assert got == {("A", 1): 0.5, ("A", 2): 0.5, ("A", 3): 0.5,
                   ("B", 1): 0.0, ("B", 2): 0.5, ("B", 3): 1.0}


@FAST
@given(fixed_pools(), st.integers(1, 6))
def test_pool_rates_equal_brute_force_over_tie_break_orders(cands, k):
    rates = exact_pool_rates(cands, k=k).set_index("group")["rate"]
    prob = np.zeros(len(cands))
    for _, rows in cands.groupby("pool").indices.items():
        prob[rows] = brute_pool_probabilities(cands["score"].to_numpy()[rows].tolist(), k)
    expected = pd.Series(prob).groupby(cands["group"].to_numpy()).mean()
    np.testing.assert_allclose(rates.loc[expected.index].to_numpy(), expected.to_numpy(), atol=1e-12)


def test_pool_rates_match_monte_carlo_random_tie_breaks():
    rng = np.random.default_rng(1)
    n_pools, size, k = 40, 18, 2
    cands = pd.DataFrame({"pool": np.repeat(np.arange(n_pools), size), "group": np.tile(list("ABCDEF"), n_pools * 3),
                          "score": rng.integers(1, 5, n_pools * size)})  # four values over 18: heavy ties
    exact = exact_pool_rates(cands, k=k).set_index("group")["rate"]
    scores = cands["score"].to_numpy().reshape(n_pools, size).astype(float)
    rounds = 4000
    keys = scores[None] + rng.random((rounds, n_pools, size)) * 0.5  # random tie-break below one score unit
    cut = np.sort(keys, axis=2)[:, :, size - k][:, :, None]
    hits = (keys >= cut).mean(axis=0).ravel()
    mc = pd.Series(hits).groupby(cands["group"].to_numpy()).mean()
    np.testing.assert_allclose(exact.loc[mc.index].to_numpy(), mc.to_numpy(), atol=0.01)


def test_pool_rates_qualified_and_by():
    cands = pd.DataFrame({"system": ["s"] * 4 + ["t"] * 4, "pool": [1, 1, 2, 2] * 2, "group": ["A", "B"] * 4,
                          "score": [5, 3, 3, 3, 1, 2, 2, 2], "qualified": [True, False, False, True] * 2})
    rates = exact_pool_rates(cands, k=1, by="system", qualified="qualified")
    assert list(rates.columns) == ["system", "group", "k", "rate", "n", "rate_qualified", "n_qualified"]
    s = rates.set_index(["system", "group"])
    assert s.loc[("s", "A"), "rate"] == pytest.approx((1 + 0.5) / 2)
    assert s.loc[("s", "A"), "rate_qualified"] == pytest.approx(1.0)   # only the 5 is qualified
    assert s.loc[("s", "B"), "rate_qualified"] == pytest.approx(0.5)   # only the tied 3 of pool 2
    assert s.loc[("t", "B"), "rate"] == pytest.approx((1 + 0.5) / 2)


def test_pool_ids_repeat_across_cells_are_distinct_pools():
    cands = pd.DataFrame({"system": ["s", "s", "t", "t"], "pool": 1, "group": ["A", "B", "A", "B"], "score": [2, 1, 1, 2]})
    rates = exact_pool_rates(cands, k=1, by="system").set_index(["system", "group"])["rate"]
    assert rates.to_dict() == {("s", "A"): 1.0, ("s", "B"): 0.0, ("t", "A"): 0.0, ("t", "B"): 1.0}


# ----------------------------------------------------------------------------------------------------------
# one draw per group
# ----------------------------------------------------------------------------------------------------------
def test_draw_hand_computed():
    # A draws 2 or 1, B draws 2 or 0: pools (2,2) tie, (2,0) A, (1,2) B, (1,0) A -> A = (0.5 + 1 + 0 + 1) / 4
    cands = pd.DataFrame({"group": ["A", "A", "B", "B"], "score": [2, 1, 2, 0]})
    rates = exact_draw_rates(cands, k=[1, 2]).set_index(["group", "k"])["rate"]
    assert rates[("A", 1)] == pytest.approx(0.625)
    assert rates[("B", 1)] == pytest.approx(0.375)
    assert rates[("A", 2)] == rates[("B", 2)] == 1.0


@FAST
@given(group_draws(), st.integers(1, 4))
def test_draw_rates_equal_brute_force_enumeration(groups, k):
    cands = pd.DataFrame([{"group": g, "score": s} for g, v in groups.items() for s in v])
    rates = exact_draw_rates(cands, k=k).set_index("group")["rate"]
    brute = brute_draw_rates(groups, k)
    np.testing.assert_allclose([rates[g] for g in sorted(groups)], [brute[g] for g in sorted(groups)], atol=1e-12)


@FAST
@given(group_draws(), st.integers(1, 3))
def test_draw_rates_seats_add_up(groups, k):
    cands = pd.DataFrame([{"group": g, "score": s} for g, v in groups.items() for s in v])
    rates = exact_draw_rates(cands, k=k)
    assert rates["rate"].sum() == pytest.approx(min(k, len(groups)))  # every pool fills exactly k seats


def test_draw_rates_match_simulate_with_heavy_ties():
    rng = np.random.default_rng(3)
    groups = [f"g{i}" for i in range(8)]
    cands = pd.DataFrame({"job": np.repeat(["a", "b"], 80), "group": np.tile(np.repeat(groups, 10), 2),
                          "score": rng.integers(1, 6, 160).astype(float)})  # five values, eight groups
    cands["qualified"] = rng.random(160) < 0.5
    exact = exact_gaps(exact_draw_rates(cands, k=[1, 3], by="job", qualified="qualified"), reference="g0")
    mc = simulate(cands, "score", k=[1, 3], reference="g0", rounds=40_000, seed=0, by="job")
    both = mc.merge(exact, on=["job", "k", "group"], suffixes=("_mc", ""))
    assert len(both) == 2 * 2 * 7
    # standard error of a simulated gap at 40,000 rounds is at most about 0.004
    np.testing.assert_allclose(both["dDP_mc"], both["dDP"], atol=0.015)
    np.testing.assert_allclose(both["dEO_mc"], both["dEO"], atol=0.02)


def test_draw_probabilities_with_continuous_scores_need_no_tie_axis():
    rng = np.random.default_rng(0)
    shares = rng.random((3, 5))
    shares[:, :] = 0
    for g in range(3):
        shares[g, g::3] = 1  # disjoint values: no ties across groups
    shares /= shares.sum(axis=1, keepdims=True)
    p = draw_selection_probabilities(shares, [1])[0]
    # value 4 (the highest) belongs to group 1: it always wins
    assert p[1, 4] == pytest.approx(1.0)


def test_exact_gaps_adds_signed_gaps_per_cell():
    rates = pd.DataFrame({"job": ["a", "a", "b", "b"], "group": ["A", "B"] * 2, "k": 1, "rate": [0.7, 0.3, 0.2, 0.8],
                          "n": 2, "rate_qualified": [1.0, 0.5, 0.0, 0.25], "n_qualified": 1})
    out = exact_gaps(rates, reference="B").set_index(["job", "group"])
    assert out.loc[("a", "A"), "dDP"] == pytest.approx(0.4)
    assert out.loc[("b", "A"), "dDP"] == pytest.approx(-0.6)
    assert out.loc[("a", "A"), "dEO"] == pytest.approx(0.5)
    assert out.loc[("a", "B"), "dDP"] == 0.0


# ----------------------------------------------------------------------------------------------------------
# input errors
# ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(k=0), "k must be a positive int"),
    (dict(k=[]), "k is an empty sequence"),
    (dict(k=1, score="points"), "no column"),
    (dict(k=1, pool="vacancy"), "vacancy"),
])
def test_pool_input_errors(kwargs, message):
    cands = pd.DataFrame({"pool": [1, 1], "group": ["A", "B"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match=message):
        exact_pool_rates(cands, **kwargs)


def test_input_errors_name_the_column_group_and_reference():
    cands = pd.DataFrame({"job": ["a", "a", "b"], "group": ["A", "B", "A"], "score": [1.0, np.nan, 2.0]})
    with pytest.raises(ValueError, match="column 'score' of candidates has 1 missing"):
        exact_draw_rates(cands, k=1, by="job")
    cands["score"] = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="group 'B' has no candidate in job='b'"):
        exact_draw_rates(cands, k=1, by="job")
    cands["score"] = ["x", "y", "z"]
    with pytest.raises(ValueError, match="'score' must be numeric"):
        exact_draw_rates(cands, k=1)
    rates = pd.DataFrame({"group": ["A"], "k": 1, "rate": 0.5, "n": 1})
    with pytest.raises(ValueError, match="reference group 'Z'"):
        exact_gaps(rates, reference="Z")
