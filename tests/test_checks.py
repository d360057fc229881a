"""One place checks k, rounds and seeds (``allocbias.checks``): the same one-line error, naming the parameter,
from every function that takes them."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from allocbias import checks, rankings, selection, validity
from allocbias.measures import synthetic
from allocbias import data as D
from allocbias.study import real_scores


@pytest.mark.parametrize(("value", "ok"), [(3, True), (np.int64(3), True), (True, False), (np.bool_(True), False),
                                           (3.0, False), ("3", False), (None, False)])
def test_is_int(value, ok):
    assert checks.is_int(value) is ok


def test_count_names_the_parameter_and_the_bound():
    assert checks.count(np.int32(4), "rounds") == 4 and type(checks.count(np.int32(4), "rounds")) is int
    assert checks.count(0, "pairwise_rounds", 0) == 0
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match=rf"^rounds must be an integer >= 1, got {bad!r}$"):
            checks.count(bad, "rounds")
    with pytest.raises(ValueError, match=r"^n_perm must be an integer >= 2, got 1$"):
        checks.count(1, "n_perm", 2)


def test_seed_is_a_non_negative_integer():
    assert checks.seed(0) == 0 and checks.seed(np.uint8(7)) == 7
    for bad in (-1, 1.0, True, None):
        with pytest.raises(ValueError, match=rf"^seed must be a non-negative integer, got {bad!r}$"):
            checks.seed(bad)


def test_quotas():
    assert checks.quotas(3) == [3] and checks.quotas([2, 1, 2]) == [2, 1, 2]
    assert checks.quotas((2, 1, 2), distinct=True) == [1, 2]
    assert checks.quotas(np.array([1, 8]), pool=8) == [1, 8]
    assert checks.quota(np.int64(7), pool=8, below_pool=True) == 7
    with pytest.raises(ValueError, match="k is an empty sequence"):
        checks.quotas([])
    with pytest.raises(ValueError, match="k must be a positive int or a sequence of positive ints, got 1.5"):
        checks.quotas([1, 1.5])
    with pytest.raises(ValueError, match="k must be a positive int or a sequence of positive ints, got 0"):
        checks.quotas(0)
    with pytest.raises(ValueError, match=r"k=9 is outside 1\.\.8 \(pool size 8\)"):
        checks.quotas([1, 9], pool=8)
    with pytest.raises(ValueError, match=r"^k must be below the pool size 8: k=8 is outside 1\.\.7 \(k = pool selects"):
        checks.quota(8, pool=8, below_pool=True)
    with pytest.raises(ValueError, match=r"k must be an integer, got \[1\]"):
        checks.quota([1])


def test_pairwise_design_one_wording_for_three_chapters():
    groups = ["A", "B", "C"]
    checks.pairwise_design([], 0, [], groups)  # no pairwise systems: no pools needed
    checks.pairwise_design(["s"], np.int64(2), ["C", "A"], groups)
    for rounds in (0, 1.0, True):
        with pytest.raises(ValueError, match=rf"^pairwise_systems needs pairwise_rounds >= 1 \(pools per job\), got {rounds!r}$"):
            checks.pairwise_design(["s"], rounds, [], groups)
    for bad in (["A"], ["A", "Z"]):
        with pytest.raises(ValueError, match="^" + re.escape(f"pairwise_groups must name at least two of ['A', 'B', 'C'], got {bad!r}")):
            checks.pairwise_design(["s"], 2, bad, groups)
    # the three chapters' findings give that error for their parameters
    from allocbias.study import predictive_validity, score_shapes, scoring_checks
    with pytest.raises(ValueError, match="pairwise_groups must name at least two"):
        score_shapes.score_shapes_findings(["smollm2-fp32-paper"], ["retail"], pairwise_systems=["smollm2-fp32-paper"],
                                           pairwise_groups=["Female Asian"])
    with pytest.raises(ValueError, match="pairwise_groups must name at least two"):
        scoring_checks.scoring_checks_findings(systems=["smollm2-fp32-paper"], jobs=["retail"],
                                               pairwise_systems=["smollm2-fp32-paper"], pairwise_groups=["Female Asian"])
    with pytest.raises(ValueError, match=r"pairwise_rounds >= 1 \(pools per job\), got 0"):
        predictive_validity.predictive_validity_findings(["smollm2-fp32-paper", "smollm2-fp32-direct"], ["retail"],
                                                         pairwise_systems=["smollm2-fp32-paper"], pairwise_rounds=0)


def _tiny() -> pd.DataFrame:
    return pd.DataFrame({"group": ["A", "B", "A", "B"], "score": [0.9, 0.1, 0.2, 0.8], "pool": [0, 0, 1, 1]})


@pytest.mark.parametrize(("call", "message"), [
    # k: the same message wherever a quota is out of range
    (lambda: selection.select_top_k(np.ones((1, 3)), 4), r"k must be integers in 1\.\.3: k=4 is outside 1\.\.3"),
    (lambda: rankings.selection_matrix(np.array([[1.0, 2.0, 3.0]]), 4),
     r"k must be integers in 1\.\.3: k=4 is outside 1\.\.3"),
    (lambda: selection.dp_standard_error(8, 8, 10), r"k must be below the pool size 8: k=8 is outside 1\.\.7"),
    (lambda: synthetic.expected_dp_gap(np.array([0.5]), 8, 8), r"k must be below the pool size 8: k=8 is outside 1\.\.7"),
    (lambda: selection.exact_pool_rates(_tiny(), k=1.5),
     "k must be a positive int or a sequence of positive ints, got 1.5"),
    (lambda: real_scores.pooled_selection_rates(_tiny(), reference="A", k=[1, 0], n_boot=2),
     "k must be a positive int or a sequence of positive ints, got 0"),
    # rounds and other counts
    (lambda: selection.dp_standard_error(1, 8, 0), r"rounds must be an integer >= 1, got 0"),
    (lambda: selection.draw_random_pools(4, 0, 2, seed=0), r"rounds must be an integer >= 1, got 0"),
    (lambda: D.hiring_bloomberg_names(names_per_gender=0), r"names_per_gender must be an integer >= 1, got 0"),
    # seeds
    (lambda: D.candidate_table(["retail"], names_per_group=1, seed=-1), "seed must be a non-negative integer, got -1"),
    (lambda: synthetic.hand_picked_system("wider_spread", seed=-3), "seed must be a non-negative integer, got -3"),
    (lambda: synthetic.draw_systems(1, ["shift"], 5, seed=-3), "seed must be a non-negative integer, got -3"),
])
def test_callers_give_the_checks_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_validity_controls_check_their_counts_and_seed():
    rows = pd.DataFrame({"system": "s", "pool": np.repeat(np.arange(4), 2), "group": ["A", "B"] * 4,
                         "score": np.arange(8.0)})
    for kwargs, message in [({"n_perm": 0}, "n_perm must be an integer >= 1, got 0"),
                            ({"seed": -1}, "seed must be a non-negative integer, got -1")]:
        with pytest.raises(ValueError, match=message):
            validity.validity_controls(rows, reference="A", k=1, **kwargs)
