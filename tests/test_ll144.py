"""Tests for allocbias.ll144: hand-computed cases, properties, scipy references, bad input."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from allocbias import ll144
from allocbias.ll144 import (
    auc_di,
    curve_auc,
    curve_p_fair,
    di_avg,
    di_curve,
    di_median,
    di_threshold,
    four_fifths_flags,
    group_metric_summary,
    impact_ratios_at,
    ks_test,
    p_fair,
    pooled_quantiles,
    selection_rates,
    synthetic_components,
    synthetic_example,
)

# Running example: A = [1, 2, 3, 4], B = [3, 4, 5, 6]; pooled sorted [1,2,3,3,4,4,5,6].
S = [1, 2, 3, 4, 3, 4, 5, 6]
G = list("AAAABBBB")
GRID5 = [0.0, 0.25, 0.5, 0.75, 1.0]
SETTINGS = settings(max_examples=60, deadline=None)


def test_doctests_hold() -> None:
    """The package's examples, module by module (every module of the package has some)."""
    import allocbias.measures.ll144 as package

    attempted = 0
    for name in ("regression", "tables", "intervals", "power", "audit"):
        result = doctest.testmod(getattr(package, name))
        assert result.failed == 0, name
        assert result.attempted > 0, f"{name} has no example"
        attempted += result.attempted
    assert attempted >= 20


# --------------------------------------------------------------------------- hand-computed


@pytest.mark.parametrize(
    ("t", "sr_a", "sr_b"),
    [(3, 0.25, 0.75), (0, 1.0, 1.0), (6, 0.0, 0.0), (4, 0.0, 0.5), (3.5, 0.25, 0.75), (-np.inf, 1.0, 1.0)],
)
def test_selection_rates_hand(t: float, sr_a: float, sr_b: float) -> None:
    sr = selection_rates(S, G, t)
    assert list(sr.index) == ["A", "B"]
    assert sr.index.name == "group"
    assert sr.name == "selection_rate"
    assert sr["A"] == pytest.approx(sr_a)
    assert sr["B"] == pytest.approx(sr_b)


def test_selection_rate_is_strict() -> None:
    # a score equal to the threshold is not selected
    assert selection_rates([5, 5, 1, 1], ["x", "x", "y", "y"], 5).tolist() == [0.0, 0.0]
    assert selection_rates([5, 5, 1, 1], ["x", "x", "y", "y"], 4.999).tolist() == [1.0, 0.0]


def test_selection_rates_sorted_group_order_and_unsorted_input() -> None:
    sr = selection_rates([6, 1, 5, 2, 4, 3, 3, 4], list("BABABABA"), 3)
    assert list(sr.index) == ["A", "B"]
    assert sr.tolist() == [0.25, 0.75]


@pytest.mark.parametrize(
    ("t", "ir_a", "ir_b"),
    [(3, 1 / 3, 1.0), (4, 0.0, 1.0), (6, 1.0, 1.0), (0, 1.0, 1.0), (2, 0.5, 1.0)],
)
def test_impact_ratios_hand(t: float, ir_a: float, ir_b: float) -> None:
    ir = impact_ratios_at(S, G, t)
    assert ir["A"] == pytest.approx(ir_a)
    assert ir["B"] == pytest.approx(ir_b)
    assert di_threshold(S, G, t).tolist() == ir.tolist()
    assert di_threshold(S, G, t).name == "di_threshold"


def test_impact_ratios_three_groups() -> None:
    scores = S + [10, 10, 10]
    groups = G + ["C", "C", "C"]
    ir = impact_ratios_at(scores, groups, 3)
    assert ir.to_dict() == pytest.approx({"A": 0.25, "B": 0.75, "C": 1.0})


def test_four_fifths_flags_hand_and_boundary() -> None:
    assert four_fifths_flags(S, G, 3).to_dict() == {"A": True, "B": False}
    assert four_fifths_flags(S, G, 3, bound=0.3).to_dict() == {"A": False, "B": False}
    # IR exactly 0.8 is not flagged (strict <)
    scores = [0] * 6 + [1] * 4 + [0] * 5 + [1] * 5
    groups = ["a"] * 10 + ["b"] * 10
    assert impact_ratios_at(scores, groups, 0.5)["a"] == 0.8
    assert not four_fifths_flags(scores, groups, 0.5)["a"]
    assert four_fifths_flags(scores, groups, 0.5, bound=0.81)["a"]


def test_di_avg_hand() -> None:
    d = di_avg(S, G)
    assert d["A"] == pytest.approx(2.5 / 4.5)
    assert d["B"] == 1.0
    assert d.name == "di_avg"


@pytest.mark.parametrize("scores", [[-1, -2, 1, 2], [0, 0, 1, 2], [-3, -3, -1, -1]])
def test_di_avg_rejects_non_positive_means(scores: list[float]) -> None:
    with pytest.raises(ValueError, match="non-positive mean in group 'a'"):
        di_avg(scores, ["a", "a", "b", "b"])


def test_di_median_hand() -> None:
    # pooled median 3.5: A selects {4} of 4, B selects {4,5,6} of 4
    assert di_median(S, G).to_dict() == pytest.approx({"A": 1 / 3, "B": 1.0})
    # odd pooled size: median 3 is a data point and is not selected (strict >)
    d = di_median([1, 2, 3, 2, 3, 4, 5], list("AAABBBB"))
    assert d.to_dict() == pytest.approx({"A": 0.0, "B": 1.0})


def test_pooled_quantiles_are_inverted_cdf() -> None:
    x = [4, 1, 3, 2]
    assert pooled_quantiles(x, [0.0, 0.25, 0.26, 0.5, 0.51, 1.0]).tolist() == [1, 1, 2, 2, 3, 4]
    rng = np.random.default_rng(3)
    y = rng.integers(0, 7, 37).astype(float)
    p = np.linspace(0, 1, 101)
    idx = np.clip(np.ceil(len(y) * p).astype(int) - 1, 0, len(y) - 1)
    np.testing.assert_array_equal(pooled_quantiles(y, p), np.sort(y)[idx])


def test_di_curve_hand() -> None:
    c = di_curve(S, G, GRID5)
    assert c.index.name == "p"
    assert list(c.columns) == ["A", "B"]
    np.testing.assert_allclose(c["A"], [1.0, 0.5, 1 / 3, 0.0, 1.0])
    np.testing.assert_allclose(c["B"], [1.0] * 5)
    # p = 0 is set to 1 by definition even though the strict cut at the minimum
    # (score 1, only in A) gives A an impact ratio of 3/4
    assert impact_ratios_at(S, G, 1)["A"] == 0.75


def test_di_curve_default_grid() -> None:
    c = di_curve(S, G)
    assert len(c) == ll144.DEFAULT_GRID_POINTS == 1001
    np.testing.assert_allclose(c.index.to_numpy(), np.linspace(0, 1, 1001))
    assert c.loc[0.5, "A"] == pytest.approx(1 / 3)


def test_auc_and_p_fair_hand() -> None:
    # trapezoid with step 1/4 on A's curve [1, 1/2, 1/3, 0, 1]
    assert auc_di(S, G, grid=GRID5).to_dict() == pytest.approx({"A": 11 / 24, "B": 1.0})
    # indicator [1, 0, 0, 0, 1] -> 1/4 * (1/2 + 1/2)
    assert p_fair(S, G, grid=GRID5).to_dict() == pytest.approx({"A": 0.25, "B": 1.0})
    # bound 0.5: indicator [1, 1, 0, 0, 1] -> 1/4 * (1 + 1/2 + 1/2)
    assert p_fair(S, G, grid=GRID5, bound=0.5)["A"] == pytest.approx(0.5)
    assert auc_di(S, G, grid=GRID5).name == "auc_di"
    assert p_fair(S, G, grid=GRID5).name == "p_fair"


def test_prior_discrete_point_mass_gives_curve_value() -> None:
    prior = [0, 0, 1, 0, 0]
    assert auc_di(S, G, prior=prior, grid=GRID5)["A"] == pytest.approx(1 / 3)
    assert p_fair(S, G, prior=prior, grid=GRID5)["A"] == pytest.approx(0.0)
    # the scale of the prior does not matter (normalised on the grid)
    assert auc_di(S, G, prior=[0, 0, 7, 0, 0], grid=GRID5)["A"] == pytest.approx(1 / 3)


def test_prior_callable_hand() -> None:
    # pi(p) = 2p already integrates to 1 with the trapezoid rule on GRID5
    w = np.array([0, 0.5, 1, 1.5, 2])
    f = np.array([1, 0.5, 1 / 3, 0, 1]) * w
    expected = 0.25 * ((f[:-1] + f[1:]) / 2).sum()
    got = auc_di(S, G, prior=lambda p: 2 * p, grid=GRID5)
    assert got["A"] == pytest.approx(expected)
    assert got["A"] == pytest.approx(19 / 48)
    # a constant callable and a frozen scipy distribution reproduce the flat prior
    assert auc_di(S, G, prior=lambda p: 3.0, grid=GRID5)["A"] == pytest.approx(11 / 24)
    assert auc_di(S, G, prior=stats.uniform(), grid=GRID5)["A"] == pytest.approx(11 / 24)


def test_curve_helpers_match_functions() -> None:
    c = di_curve(S, G, GRID5)
    pd.testing.assert_series_equal(curve_auc(c), auc_di(S, G, grid=GRID5))
    pd.testing.assert_series_equal(curve_p_fair(c, bound=0.5), p_fair(S, G, grid=GRID5, bound=0.5))


def test_ks_test_hand_and_reference() -> None:
    r = ks_test(S, G, "A")
    assert r.statistic == pytest.approx(0.5)
    assert (r.n_group, r.n_rest, r.group) == (4, 4, "A")
    rng = np.random.default_rng(0)
    scores = rng.normal(size=300)
    groups = rng.choice(["x", "y", "z"], size=300)
    r = ks_test(scores, groups, "y")
    ref = stats.ks_2samp(scores[groups == "y"], scores[groups != "y"])
    assert r.statistic == pytest.approx(ref.statistic)
    assert r.pvalue == pytest.approx(ref.pvalue)
    assert r.n_group + r.n_rest == 300


def test_group_metric_summary_consistent_with_functions() -> None:
    rng = np.random.default_rng(1)
    scores = rng.gamma(2.0, 10.0, 400)
    groups = rng.choice(["p", "q", "r"], 400)
    grid = np.linspace(0, 1, 201)
    s = group_metric_summary(scores, groups, threshold=20.0, grid=grid)
    pd.testing.assert_series_equal(s["di_avg"], di_avg(scores, groups))
    pd.testing.assert_series_equal(s["di_median"], di_median(scores, groups))
    pd.testing.assert_series_equal(s["di_threshold"], di_threshold(scores, groups, 20.0))
    pd.testing.assert_series_equal(s["auc_di"], auc_di(scores, groups, grid=grid))
    pd.testing.assert_series_equal(s["p_fair"], p_fair(scores, groups, grid=grid))
    assert s["ks_statistic"]["q"] == pytest.approx(ks_test(scores, groups, "q").statistic)
    assert s["n"].tolist() == [int((groups == g).sum()) for g in ["p", "q", "r"]]
    for col in ["di_avg", "di_median", "di_threshold", "auc_di", "p_fair"]:
        assert (s[f"flag_{col}"] == (s[col] < 0.8)).all()
    assert "di_threshold" not in group_metric_summary(scores, groups, grid=grid).columns
    strict = group_metric_summary(scores, groups, grid=grid, bound=0.95)
    pd.testing.assert_series_equal(strict["p_fair"], p_fair(scores, groups, grid=grid, bound=0.95))
    assert (strict["flag_auc_di"] == (strict["auc_di"] < 0.95)).all()


# --------------------------------------------------------------------------- references


def test_curve_matches_masks_at_quantile_thresholds() -> None:
    """Reference: a plain per-threshold boolean-mask computation."""
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(50, 15, 700))  # ties on purpose
    groups = rng.choice(["g1", "g2", "g3", "g4"], 700)
    grid = np.linspace(0, 1, 301)
    c = di_curve(scores, groups, grid)
    thresholds = np.quantile(scores, grid, method="inverted_cdf")
    for j in [1, 37, 150, 151, 222, 299]:
        sel = scores > thresholds[j]
        sr = np.array([sel[groups == g].mean() for g in ["g1", "g2", "g3", "g4"]])
        ir = sr / sr.max() if sr.max() > 0 else np.ones(4)
        np.testing.assert_allclose(c.iloc[j].to_numpy(), ir)
        np.testing.assert_allclose(impact_ratios_at(scores, groups, thresholds[j]).to_numpy(), ir)


def test_di_median_is_impact_ratio_at_numpy_median() -> None:
    rng = np.random.default_rng(11)
    for n, top in [(40, 20), (41, 20), (200, 10_000), (201, 10_000)]:
        scores = rng.integers(0, top, n)
        groups = rng.choice(["u", "v"], n)
        groups[:2], groups[2:4] = "u", "v"
        pd.testing.assert_series_equal(
            di_median(scores, groups),
            impact_ratios_at(scores, groups, float(np.median(scores))).rename("di_median"),
        )
        assert di_median(scores, groups).tolist() == di_curve(scores, groups, [0, 0.5, 1]).loc[0.5].tolist()


def test_synthetic_selection_rates_match_population() -> None:
    """Reference: large-sample selection rates against the mixtures' survival functions."""
    for kind, param in [(1, 0.8), (2, 8.0), (3, 6.0)]:
        df = synthetic_example(kind, param, n=40_000, seed=5)
        comps = synthetic_components(kind, param)
        for t in [30.0, 50.0, 75.0]:
            sr = selection_rates(df["score"], df["group"], t)
            for g, mix in comps.items():
                pop = sum(w * stats.norm.sf(t, m, s) for w, m, s in mix)
                assert sr[g] == pytest.approx(pop, abs=0.012), (kind, t, g)


def test_synthetic_examples_shape_and_paper_claims() -> None:
    """The legal metrics stay near 1 where the distribution-wide ones fall (paper, section 5.1)."""
    grid = np.linspace(0, 1, 501)
    for kind, param in [(1, 1.0), (2, 5.0), (3, 3.0)]:
        df = synthetic_example(kind, param, n=20_000, seed=0)
        assert list(df.columns) == ["score", "group"]
        assert df["group"].value_counts().to_dict() == {"A": 20_000, "B": 20_000}
        s = group_metric_summary(df["score"], df["group"], grid=grid)
        assert s["di_median"].min() > 0.9, kind
        assert s["di_avg"].min() > 0.85, kind
        assert s["auc_di"].min() < 0.8, kind
        assert s["p_fair"].min() < 0.8, kind
    # example 1 with param 0 has identical groups: nothing is flagged
    df = synthetic_example(1, 0.0, n=20_000, seed=0)
    assert auc_di(df["score"], df["group"], grid=grid).min() > 0.9


def test_synthetic_is_deterministic_and_has_its_moments() -> None:
    a = synthetic_example(3, 5.0, n=1000, seed=42)
    b = synthetic_example(3, 5.0, n=1000, seed=42)
    c = synthetic_example(3, 5.0, n=1000, seed=43)
    pd.testing.assert_frame_equal(a, b)
    assert not a["score"].equals(c["score"])
    df = synthetic_example(1, 1.0, n=50_000, seed=0)
    sd = df.groupby("group")["score"].std()
    assert sd["A"] == pytest.approx(5.0, rel=0.03)
    assert sd["B"] == pytest.approx(25.0, rel=0.03)
    mean = synthetic_example(3, 5.0, n=50_000, seed=0).groupby("group")["score"].mean()
    assert mean["A"] == pytest.approx(50.0, abs=0.3)
    assert mean["B"] == pytest.approx(55.0, abs=0.3)
    assert synthetic_components(2, 7.0) == {"A": [(1.0, 50.0, 7.0)], "B": [(0.5, 20.0, 7.0), (0.5, 80.0, 7.0)]}
    assert synthetic_components(3, 4.0)["B"] == [(0.5, 30.0, 10.0), (0.5, 80.0, 4.0)]


# --------------------------------------------------------------------------- properties

small_scores = st.lists(st.integers(-50, 50), min_size=2, max_size=25)


@SETTINGS
@given(x=small_scores, k=st.integers(2, 4), t=st.integers(-55, 55))
def test_identical_groups_are_fair_everywhere(x: list[int], k: int, t: int) -> None:
    scores = np.tile(x, k)
    groups = np.repeat([f"g{i}" for i in range(k)], len(x))
    c = di_curve(scores, groups, np.linspace(0, 1, 201))
    assert (c.to_numpy() == 1.0).all()
    assert (auc_di(scores, groups) == 1.0).all()
    assert (p_fair(scores, groups) == 1.0).all()
    assert (di_median(scores, groups) == 1.0).all()
    assert (impact_ratios_at(scores, groups, t) == 1.0).all()
    assert not four_fifths_flags(scores, groups, t).any()


@st.composite
def scored_groups(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    k = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(2, 12), min_size=k, max_size=k))
    scores = draw(st.lists(st.integers(-50, 50), min_size=sum(sizes), max_size=sum(sizes)))
    groups = np.repeat([f"g{i}" for i in range(k)], sizes)
    perm = draw(st.permutations(range(sum(sizes))))
    return np.asarray(scores, dtype=float), groups[list(perm)]


TRANSFORMS = [
    lambda x: np.exp(x / 10.0),
    lambda x: x**3 + 2.0 * x,
    lambda x: np.arctan(x / 20.0),
    lambda x: 3.0 * x + 1000.0,
]


@SETTINGS
@given(data=scored_groups(), which=st.integers(0, len(TRANSFORMS) - 1), t=st.integers(-50, 50))
def test_invariance_under_increasing_transforms(data: tuple[np.ndarray, np.ndarray], which: int, t: int) -> None:
    scores, groups = data
    f = TRANSFORMS[which]
    grid = np.linspace(0, 1, 257)
    pd.testing.assert_frame_equal(di_curve(scores, groups, grid), di_curve(f(scores), groups, grid))
    pd.testing.assert_series_equal(di_median(scores, groups), di_median(f(scores), groups))
    pd.testing.assert_series_equal(auc_di(scores, groups, grid=grid), auc_di(f(scores), groups, grid=grid))
    pd.testing.assert_series_equal(p_fair(scores, groups, grid=grid), p_fair(f(scores), groups, grid=grid))
    pd.testing.assert_series_equal(
        impact_ratios_at(scores, groups, t), impact_ratios_at(f(scores), groups, f(np.float64(t)))
    )


@SETTINGS
@given(data=scored_groups(), t=st.integers(-50, 50))
def test_relabelling_groups_permutes_output(data: tuple[np.ndarray, np.ndarray], t: int) -> None:
    scores, groups = data
    mapping = {"g0": "zeta", "g1": "alpha", "g2": "mu", "g3": "beta"}
    new = np.array([mapping[g] for g in groups])
    grid = np.linspace(0, 1, 101)
    for fn in (di_median, lambda s, g: auc_di(s, g, grid=grid), lambda s, g: p_fair(s, g, grid=grid),
               lambda s, g: impact_ratios_at(s, g, t), lambda s, g: selection_rates(s, g, t)):
        old_out = fn(scores, groups)
        new_out = fn(scores, new)
        assert list(new_out.index) == sorted(new_out.index)
        np.testing.assert_array_equal(new_out[[mapping[g] for g in old_out.index]].to_numpy(), old_out.to_numpy())
    c_old, c_new = di_curve(scores, groups, grid), di_curve(scores, new, grid)
    np.testing.assert_array_equal(c_new[[mapping[g] for g in c_old.columns]].to_numpy(), c_old.to_numpy())


@SETTINGS
@given(
    top=st.lists(st.integers(61, 100), min_size=2, max_size=15),
    rest=st.lists(st.lists(st.integers(0, 60), min_size=2, max_size=15), min_size=1, max_size=3),
)
def test_dominating_group_has_ratio_one(top: list[int], rest: list[list[int]]) -> None:
    scores = np.concatenate([top] + rest).astype(float)
    groups = np.concatenate([["top"] * len(top)] + [[f"low{i}"] * len(r) for i, r in enumerate(rest)])
    c = di_curve(scores, groups)
    assert (c["top"] == 1.0).all()
    lows = c.drop(columns="top")
    assert (lows.to_numpy() <= 1.0).all()
    auc = auc_di(scores, groups)
    assert auc["top"] == 1.0
    assert (auc.drop("top") < 1.0).all()
    assert (p_fair(scores, groups).drop("top") < 1.0).all()
    # a cut between the groups selects only the top group
    ir = impact_ratios_at(scores, groups, 60.5)
    assert ir["top"] == 1.0
    assert (ir.drop("top") == 0.0).all()
    assert four_fifths_flags(scores, groups, 60.5).drop("top").all()


@SETTINGS
@given(data=scored_groups())
def test_ranges(data: tuple[np.ndarray, np.ndarray]) -> None:
    scores, groups = data
    c = di_curve(scores, groups, np.linspace(0, 1, 101))
    assert ((c.to_numpy() >= 0) & (c.to_numpy() <= 1)).all()
    assert (c.max(axis=1) == 1.0).all()  # some group is always the reference
    assert (c.iloc[[0, -1]].to_numpy() == 1.0).all()
    for s in (auc_di(scores, groups), p_fair(scores, groups)):
        assert ((s >= 0) & (s <= 1 + 1e-12)).all()
    assert (p_fair(scores, groups, bound=0.5) >= p_fair(scores, groups, bound=0.9)).all()


@pytest.mark.parametrize("p0", [0.3, 0.55, 0.9])
def test_concentrated_beta_prior_reads_the_curve(p0: float) -> None:
    df = synthetic_example(3, 5.0, n=20_000, seed=2)
    grid = np.linspace(0, 1, 2001)
    c = di_curve(df["score"], df["group"], grid)
    conc = 4000.0
    prior = stats.beta(p0 * conc, (1 - p0) * conc)
    auc = curve_auc(c, prior)
    for g in ["A", "B"]:
        assert auc[g] == pytest.approx(np.interp(p0, grid, c[g]), abs=0.01)
    # the default flat prior and Beta(1, 1) agree
    pd.testing.assert_series_equal(curve_auc(c), curve_auc(c, stats.beta(1, 1)))


def test_beta_prior_changes_auc_in_the_expected_direction() -> None:
    # example 3: the groups only differ above the median, so weighting high rejection
    # rates (Beta(18, 2), ~90% rejected) lowers A's AUC below the flat value
    df = synthetic_example(3, 5.0, n=20_000, seed=0)
    flat = auc_di(df["score"], df["group"])
    strict = auc_di(df["score"], df["group"], prior=stats.beta(18, 2))
    lenient = auc_di(df["score"], df["group"], prior=stats.beta(2, 18))
    assert strict["A"] < flat["A"] < lenient["A"]
    assert lenient["A"] > 0.95


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("scores", "groups", "match"),
    [
        ([1.0, np.nan, 2.0, 3.0], list("aabb"), "NaN or infinite value.*position 1"),
        ([1.0, np.inf, 2.0, 3.0], list("aabb"), "NaN or infinite"),
        (["1", "2", "3", "4"], list("aabb"), "scores must be numeric"),
        ([True, False, True, False], list("aabb"), "scores must be numeric"),
        (pd.Series(["x", "y", "z", "w"]), list("aabb"), "scores must be numeric"),
        (pd.Series([1.0, None, 2.0, 3.0], dtype="Float64"), list("aabb"), "NaN or infinite"),
        ([[1, 2], [3, 4]], list("aabb"), "one-dimensional"),
        ([1, 2, 3], list("aabb"), "length mismatch: 3 scores but 4"),
        ([1, 2, 3, 4], list("aaaa"), "at least two groups"),
        ([1, 2, 3, 4, 5], list("aabbc"), "at least 2 members.*'c' \\(1\\)"),
        ([1, 2, 3, 4], ["a", "a", None, "b"], "missing label"),
    ],
)
def test_bad_scores_and_groups(scores: object, groups: object, match: str) -> None:
    for fn in (
        lambda: selection_rates(scores, groups, 0.5),
        lambda: impact_ratios_at(scores, groups, 0.5),
        lambda: di_median(scores, groups),
        lambda: di_avg(scores, groups),
        lambda: di_curve(scores, groups),
        lambda: auc_di(scores, groups),
        lambda: p_fair(scores, groups),
        lambda: ks_test(scores, groups, "a"),
        lambda: group_metric_summary(scores, groups),
    ):
        with pytest.raises(ValueError, match=match):
            fn()


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        ([0, 0, 0, 0, 0], "integrate to a positive finite number"),
        ([1, -1, 1, 1, 1], "negative values, first at p=0.25"),
        ([1, np.nan, 1, 1, 1], "NaN or infinite"),
        (lambda p: np.where(p == 0, np.inf, 1.0), "NaN or infinite values, first at p=0"),
        ([1, 1, 1], "one value per grid point"),
        (["a", "b", "c", "d", "e"], "prior must give numeric values"),
        (lambda p: -np.ones_like(p), "negative values"),
    ],
)
def test_bad_prior(prior: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        auc_di(S, G, prior=prior, grid=GRID5)
    with pytest.raises(ValueError, match=match):
        p_fair(S, G, prior=prior, grid=GRID5)


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ([0.0, 0.5, 1.2], "grid must lie in \\[0, 1\\]"),
        ([-0.1, 0.5, 1.0], "grid must lie in \\[0, 1\\]"),
        ([0.0, 0.7, 0.5, 1.0], "strictly increasing"),
        ([0.0, 0.5, 0.5, 1.0], "strictly increasing"),
        ([0.5], "at least 2 points"),
        ([0.0, np.nan, 1.0], "NaN"),
        (["a", "b"], "grid must be numeric"),
    ],
)
def test_bad_grid(grid: object, match: str) -> None:
    for fn in (di_curve, auc_di, p_fair):
        with pytest.raises(ValueError, match=match):
            fn(S, G, grid=grid)


def test_bad_threshold_bound_group_and_curve() -> None:
    with pytest.raises(ValueError, match="threshold is NaN"):
        selection_rates(S, G, np.nan)
    with pytest.raises(ValueError, match="threshold must be a number"):
        impact_ratios_at(S, G, "high")
    for bound in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="bound must lie in \\(0, 1\\]"):
            four_fifths_flags(S, G, 3, bound=bound)
        with pytest.raises(ValueError, match="bound must lie"):
            p_fair(S, G, bound=bound)
    with pytest.raises(ValueError, match="group 'Z' not found"):
        ks_test(S, G, "Z")
    with pytest.raises(ValueError, match="curve must be a DataFrame"):
        curve_auc(np.ones((5, 2)))
    bad = di_curve(S, G, GRID5)
    bad.iloc[1, 0] = 1.5
    with pytest.raises(ValueError, match="impact ratios in \\[0, 1\\]"):
        curve_p_fair(bad)
    with pytest.raises(ValueError, match="grid points must be an integer >= 2"):
        ll144.default_grid(1)
    with pytest.raises(ValueError, match="p must lie in \\[0, 1\\]"):
        pooled_quantiles(S, [0.5, 1.5])


@pytest.mark.parametrize(
    ("kind", "param", "n", "match"),
    [
        (4, 1.0, 10, "kind must be one of"),
        (1, 1.5, 10, "0 <= param < 1.5"),
        (1, -0.1, 10, "0 <= param < 1.5"),
        (2, 0.0, 10, "positive standard deviation"),
        (3, -2.0, 10, "positive standard deviation"),
        (2, np.nan, 10, "param must be finite"),
        (2, 5.0, 1, "n \\(candidates per group\\) must be an integer >= 2"),
        (2, 5.0, 2.5, "must be an integer"),
    ],
)
def test_bad_synthetic(kind: int, param: float, n: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        synthetic_example(kind, param, n=n, seed=0)


def test_synthetic_sweep_matches_group_metric_summary() -> None:
    grid = np.linspace(0, 1, 101)
    sw = ll144.synthetic_sweep(2, [5.0, 20.0], n=800, seed=3, threshold=50.0, grid=grid, bound=0.9)
    assert list(sw.columns[:3]) == ["example", "param", "group"]
    assert sw["param"].tolist() == [5.0, 5.0, 20.0, 20.0]
    assert (sw["example"] == 2).all()
    df = synthetic_example(2, 20.0, n=800, seed=3)
    ref = group_metric_summary(df["score"], df["group"], threshold=50.0, grid=grid, bound=0.9)
    got = sw[sw["param"] == 20.0].set_index("group")[ref.columns]
    pd.testing.assert_frame_equal(got, ref, check_names=False)
    with pytest.raises(ValueError, match="params is empty"):
        ll144.synthetic_sweep(2, [])


# --------------------------------------------------------------------------- counts tables: odd labels (issue 21, item 8)


def _counts(**cols: object) -> pd.DataFrame:
    return pd.DataFrame(cols)


@pytest.mark.parametrize("spelling", ["unknown", "Unknown ", " UNKNOWN", "missing/unknown"])
@pytest.mark.parametrize("fn", [ll144.impact_ratio_table, ll144.missing_data_bounds])
def test_unknown_spellings_are_the_unknown_category(fn, spelling: str) -> None:
    c = _counts(sex=["F", "M", spelling], applicants=[100, 100, 50], selected=[40, 50, 0])
    t = fn(c, group="sex")
    assert t["unknown"].sum() == 1 and t.loc[t["unknown"], "applicants"].item() == 50
    known = t[~t["unknown"]].set_index("group")
    assert known["share"].to_dict() == {"F": 0.5, "M": 0.5}  # not diluted by the unknown applicants
    assert known.loc["F", "impact_ratio"] == pytest.approx(0.8)
    if fn is ll144.missing_data_bounds:
        assert known.loc["F", "rate_lower"] == pytest.approx(40 / 150)


def test_spaces_around_a_group_label_are_dropped() -> None:
    t = ll144.impact_ratio_table(_counts(sex=["F ", "M"], applicants=[10, 10], selected=[5, 10]), group="sex")
    assert t["group"].tolist() == ["F", "M"]


@pytest.mark.parametrize("fn", [ll144.impact_ratio_table, ll144.missing_data_bounds])
@pytest.mark.parametrize(("frame", "message"), [
    (_counts(sex=["F", "M", "total"], applicants=[10, 10, 20], selected=[5, 5, 10]),
     r"row 2, column 'sex': the label 'total' is a total row"),
    (_counts(sex=["F", "M", "TOTAL "], applicants=[10, 10, 20], selected=[5, 5, 10]),
     r"row 2, column 'sex': the label 'TOTAL ' is a total row"),
    (_counts(sex=["F", "M", "F"], applicants=[10, 10, 5], selected=[5, 5, 1]),
     r"rows 0 and 2 repeat the group sex='F'"),
    (_counts(sex=["F", "M", "F "], applicants=[10, 10, 5], selected=[5, 5, 1]),
     r"rows 0 and 2 repeat the group sex='F'"),
    (_counts(sex=["F", "M", "female"], race=["A", "A", "A"], applicants=[10, 10, 5], selected=[5, 5, 1]), None),
    (_counts(sex=["F", "M"], applicants=[10.0, np.inf], selected=[5, 5]),
     r"row 1 \(sex='M'\), column 'applicants': the count inf is not finite"),
    (_counts(sex=["F", "M"], applicants=[10.0, 10.0], selected=[5, -np.inf]),
     r"row 1 \(sex='M'\), column 'selected': the count -inf is not finite"),
    (_counts(sex=["female", "Female", "M"], applicants=[10, 10, 10], selected=[5, 5, 5]),
     r"column 'sex': the labels 'female' \(row 0\) and 'Female' \(row 1\) differ only in case"),
])
def test_odd_rows_are_refused_naming_row_and_column(fn, frame: pd.DataFrame, message: str | None) -> None:
    if message is None:  # distinct groups of another spelling are fine
        assert len(fn(frame, group="sex")) == 3
        return
    with pytest.raises(ValueError, match=message):
        fn(frame, group="sex")


def test_total_row_with_total_none_and_repeated_unknown_rows() -> None:
    c = _counts(sex=["F", "M", "Total"], applicants=[10, 10, 20], selected=[5, 5, 10])
    with pytest.raises(ValueError, match=r"row 2, column 'sex': the label 'Total' is a total row.*remove it"):
        ll144.impact_ratio_table(c, group="sex", total=None)
    # several unknown rows (any spelling) are one count of unknown applicants, as in a published table
    u = _counts(sex=["F", "M", "Unknown", "unknown"], applicants=[10, 10, 3, 4], selected=[5, 5, 0, 0])
    t = ll144.missing_data_bounds(u, group="sex")
    assert t["n_unknown"].dropna().unique().tolist() == [7]
