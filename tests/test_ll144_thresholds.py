"""The DI curve's thresholds are the documented order statistic, computed in integers.

``Q(p) = x_(k)``, ``k = max(1, ceil(n p))``: a float ``n * p`` lands just above an integer at some grid points
(``25 * 0.28 = 7.000000000000001``), which would take one order statistic too many.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias import ll144

# 25 candidates: 7 distinct low scores, then 5 tied at 8 (ranks 8-12), then 13 distinct high scores.
LOW = {"A": [1, 2, 3], "B": [4, 5], "C": [6, 7]}
TIED = {"A": [8, 8], "B": [8, 8], "C": [8]}
HIGH = {"A": [9, 10, 11, 12, 13], "B": [14, 15, 16, 17, 18, 19], "C": [20, 21]}


def _case_25() -> tuple[np.ndarray, np.ndarray]:
    scores, groups = [], []
    for part in (LOW, TIED, HIGH):
        for g, values in part.items():
            scores += values
            groups += [g] * len(values)
    return np.asarray(scores, dtype=float), np.asarray(groups)


def test_n25_p028_uses_the_seventh_order_statistic() -> None:
    """n p = 25 * 7/25 = 7: the threshold is x_(7) = 7, which selects A 7/10, B 8/10, C 3/5.

    ``np.quantile(..., method="inverted_cdf")`` computes 25 * 0.28 = 7.000000000000001 in floating point and
    takes x_(8) = 8, which gives A 0.833 / C 0.667 instead of 0.875 / 0.75.
    """
    scores, groups = _case_25()
    assert scores.size == 25
    assert ll144.pooled_quantiles(scores, [0.28]).tolist() == [7.0]
    expected = {"A": 0.875, "B": 1.0, "C": 0.75}
    assert ll144.di_curve(scores, groups, [0.0, 0.28, 1.0]).loc[0.28].to_dict() == pytest.approx(expected)
    # the default grid's p = 0.28 (np.linspace(0, 1, 1001)[280]) is the same point
    default = ll144.di_curve(scores, groups)
    assert default.iloc[280].to_dict() == pytest.approx(expected)
    assert ll144.impact_ratios_at(scores, groups, 7.0).to_dict() == pytest.approx(expected)


def test_1000_candidates_every_default_grid_point_is_its_rank() -> None:
    """With n = 1000, p = i/1000 must give x_(i) exactly (numpy's float n p misses 128 of the 1,001 points)."""
    x = np.arange(1.0, 1001.0)
    got = ll144.pooled_quantiles(x[::-1], ll144.default_grid())
    np.testing.assert_array_equal(got, np.maximum(np.arange(1001), 1).astype(float))


def _brute_force_curve(scores: np.ndarray, groups: np.ndarray, points: int) -> dict[str, list[float]]:
    """The curve at p_i = i / (points - 1) by counting: Q(p_i) is the smallest score x with
    #{s <= x} * (points - 1) >= n * i, then each group's share above Q, divided by the largest share."""
    n, m = scores.size, points - 1
    labels = sorted(set(groups.tolist()))
    out: dict[str, list[float]] = {g: [] for g in labels}
    for i in range(points):
        if i in (0, m):
            for g in labels:
                out[g].append(1.0)
            continue
        threshold = min(x for x in scores.tolist() if sum(s <= x for s in scores.tolist()) * m >= n * i)
        shares = {g: Fraction(int(np.sum((scores > threshold) & (groups == g))), int(np.sum(groups == g))) for g in labels}
        top = max(shares.values())
        for g in labels:
            out[g].append(float(shares[g] / top) if top > 0 else 1.0)
    return out


@st.composite
def _scored_groups(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    k = draw(st.integers(2, 3))
    sizes = draw(st.lists(st.integers(2, 14), min_size=k, max_size=k))
    n = sum(sizes)
    scores = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))  # ties on purpose
    groups = np.repeat([f"g{i}" for i in range(k)], sizes)
    perm = draw(st.permutations(range(n)))
    return np.asarray(scores, dtype=float), groups[list(perm)]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=_scored_groups(), points=st.sampled_from([11, 26, 51, 101, 201, 1001]))
def test_every_grid_point_matches_a_brute_force_count(data: tuple[np.ndarray, np.ndarray], points: int) -> None:
    scores, groups = data
    curve = ll144.di_curve(scores, groups, ll144.default_grid(points))
    expected = _brute_force_curve(scores, groups, points)
    for g, values in expected.items():
        # the ratios are fractions with denominators of at most 14 * 14: 1e-12 only absorbs the float division
        np.testing.assert_allclose(curve[g].to_numpy(), np.asarray(values), rtol=0, atol=1e-12, err_msg=f"group {g}")


def test_grid_values_off_any_simple_fraction_use_their_exact_value() -> None:
    """A p that is no simple fraction is taken at its exact binary value: 3 * (1/3 + 1e-9) is just above 1."""
    x = np.arange(1.0, 4.0)
    assert ll144.pooled_quantiles(x, [1 / 3, 1 / 3 + 1e-9, 2 / 3]).tolist() == [1.0, 2.0, 2.0]
