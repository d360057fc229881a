"""Tests for allocbias.measures.synthetic: the score families, random systems, their evaluation, hand-picked systems and
the closed-form mechanism (percentiles, selection weights, expected dDP)."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import allocbias.measures.synthetic as synthetic
from allocbias.metrics import rabbi
from allocbias.measures.synthetic import (
    CASES,
    FAMILIES,
    REFERENCE,
    FamilySettings,
    dp_contribution,
    draw_group_params,
    draw_scores,
    draw_systems,
    evaluate_systems,
    expected_dp_gap,
    group_labels,
    hand_picked_system,
    percentiles,
    selection_weight,
    simulate_systems,
    with_low_outliers,
)

FAST = settings(max_examples=50, deadline=None)
scores_strategy = st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=30)


def test_doctests() -> None:
    result = doctest.testmod(synthetic, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 20
    assert result.failed == 0


# ---------------------------------------------------------------------------------------------- draw_scores
def test_draw_scores_follows_each_family_formula() -> None:
    eps = np.random.default_rng(7).standard_normal(50)
    np.testing.assert_allclose(draw_scores("shift", {"loc": 1.5}, 50, seed=7), 1.5 + eps)
    np.testing.assert_allclose(draw_scores("spread", {"loc": -1.0, "scale": 3.0}, 50, seed=7), -1.0 + 3.0 * eps)
    np.testing.assert_allclose(
        draw_scores("skew", {"loc": 0.5, "offset": 2.0, "slope": 1.5}, 50, seed=7),
        special.expit(2.0 + 1.5 * (0.5 + eps)),
    )
    t = np.random.default_rng(7).standard_t(2.5, size=50)
    np.testing.assert_allclose(draw_scores("heavy_tail", {"loc": 0.25, "df": 2.5}, 50, seed=7), 0.25 + t)


def test_draw_scores_hand_values_and_defaults() -> None:
    # default_rng(0).standard_normal(2) = [0.12573022, -0.13210486]
    np.testing.assert_allclose(draw_scores("shift", {}, 2, seed=0), [0.12573022, -0.13210486], atol=1e-8)
    np.testing.assert_allclose(draw_scores("spread", {"scale": 2.0}, 2, seed=0), [0.25146044, -0.26420972], atol=1e-8)
    logistic = draw_scores("skew", {"offset": 0.0, "slope": 1.0}, 2, seed=0)
    np.testing.assert_allclose(logistic, 1 / (1 + np.exp([-0.12573022, 0.13210486])), atol=1e-8)


def test_draw_scores_is_deterministic_in_seed() -> None:
    a = draw_scores("heavy_tail", {"df": 1.5}, 100, seed=3)
    b = draw_scores("heavy_tail", {"df": 1.5}, 100, seed=3)
    c = draw_scores("heavy_tail", {"df": 1.5}, 100, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_skew_scores_pile_up_at_the_ceiling() -> None:
    up = draw_scores("skew", {"offset": 4.0, "slope": 2.0}, 5000, seed=1)
    down = draw_scores("skew", {"offset": -4.0, "slope": 2.0}, 5000, seed=1)
    assert 0 < up.min() and up.max() < 1 and np.median(up) > 0.95
    assert np.median(down) < 0.05
    assert pd.Series(up).skew() < -1 < 1 < pd.Series(down).skew()  # left- and right-skewed


@pytest.mark.parametrize(
    ("family", "params", "n", "match"),
    [
        ("normal", {}, 5, "family must be one of"),
        ("shift", {"scale": 2.0}, 5, r"unknown key\(s\) \['scale'\]"),
        ("skew", {"offset": 1.0}, 5, "lacks 'slope'"),
        ("heavy_tail", {}, 5, "lacks 'df'"),
        ("spread", {"scale": 0.0}, 5, r"params\['scale'\] must be > 0"),
        ("heavy_tail", {"df": -1.0}, 5, r"params\['df'\] must be > 0"),
        ("shift", {"loc": float("nan")}, 5, r"params\['loc'\] must be a finite number"),
        ("shift", {"loc": "1"}, 5, r"params\['loc'\] must be a finite number"),
        ("shift", {}, 0, "n must be an integer >= 1"),
        ("shift", {}, 2.0, "n must be an integer >= 1"),
    ],
)
def test_draw_scores_rejects_bad_input(family, params, n, match) -> None:
    with pytest.raises(ValueError, match=match):
        draw_scores(family, params, n, seed=0)


def test_draw_scores_rejects_non_mapping_params() -> None:
    with pytest.raises(ValueError, match="params must be a mapping"):
        draw_scores("shift", [1.0], 3, seed=0)


# ---------------------------------------------------------------------------------------------- random systems
def test_group_labels() -> None:
    assert group_labels(2) == ["B", "A1"]
    assert group_labels(8)[-1] == "A7"
    with pytest.raises(ValueError, match="n_groups must be an integer >= 2"):
        group_labels(1)


@pytest.mark.parametrize("family", FAMILIES)
def test_draw_group_params_shape_and_ranges(family) -> None:
    p = draw_group_params(family, n_systems=50, n_groups=4, seed=1,
                          settings=FamilySettings(shift_sd=0.5, spread_ratio=4.0, ceiling_offset=(2.0, 3.0),
                                                  ceiling_slope=(1.0, 2.0), tail_df=(1.5, 2.5)))
    assert list(p.columns) == ["family", "system", "group", "loc", "scale", "offset", "slope", "df"]
    assert len(p) == 200 and (p["family"] == family).all()
    assert p["group"].tolist()[:4] == ["B", "A1", "A2", "A3"]
    per_system = p.groupby("system")
    if family == "spread":
        assert (p["loc"] == 0).all()
        assert p["scale"].between(0.5, 2.0).all()  # log scale in +-log(4)/2
        assert (per_system["scale"].max() / per_system["scale"].min()).max() <= 4.0
        assert p[["offset", "slope", "df"]].isna().all().all()
    else:
        assert p["scale"].isna().all()
        assert 0.3 < p["loc"].std() < 0.7
    if family == "skew":
        assert p["offset"].abs().between(2.0, 3.0).all() and p["slope"].between(1.0, 2.0).all()
        assert (per_system["offset"].nunique() == 1).all() and (per_system["slope"].nunique() == 1).all()
        assert (p["offset"] > 0).any() and (p["offset"] < 0).any()
    else:
        assert p["offset"].isna().all() and p["slope"].isna().all()
    if family == "heavy_tail":
        assert p["df"].between(1.5, 2.5).all() and (per_system["df"].nunique() == 1).all()
    else:
        assert p["df"].isna().all()


def test_zero_shift_sd_gives_equal_locations() -> None:
    p = draw_group_params("shift", 3, 4, seed=0, settings=FamilySettings(shift_sd=0.0))
    assert (p["loc"] == 0).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"shift_sd": -1.0}, "shift_sd must be >= 0"),
        ({"spread_ratio": 0.5}, "spread_ratio must be >= 1"),
        ({"ceiling_offset": (3.0, 2.0)}, "ceiling_offset must have low <= high"),
        ({"ceiling_offset": (-1.0, 2.0)}, r"ceiling_offset is a range of \|offset\|"),
        ({"ceiling_slope": (0.0, 2.0)}, "ceiling_slope must be positive"),
        ({"tail_df": 3.0}, r"tail_df must be a \(low, high\) pair"),
        ({"tail_df": (1.0, float("inf"))}, "tail_df must be a finite number"),
    ],
)
def test_family_settings_reject_bad_values_by_name(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        FamilySettings(**kwargs)


def test_family_settings_are_checked_once_and_frozen() -> None:
    s = FamilySettings(shift_sd=1, ceiling_offset=[0, 2], tail_df=[2, 4])
    assert (s.shift_sd, s.ceiling_offset, s.tail_df) == (1.0, (0.0, 2.0), (2.0, 4.0))
    assert isinstance(s.ceiling_offset, tuple) and FamilySettings() == FamilySettings(tail_df=(1, 3))
    with pytest.raises(AttributeError):
        s.shift_sd = 2.0  # type: ignore[misc]
    # the same settings given as lists or tuples, ints or floats, draw the same systems
    pd.testing.assert_frame_equal(draw_systems(2, ["skew"], 5, seed=1, settings=s)[0],
                                  draw_systems(2, ["skew"], 5, seed=1, settings=FamilySettings(
                                      shift_sd=1.0, ceiling_offset=(0.0, 2.0), tail_df=(2.0, 4.0)))[0],
                                  check_exact=True)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_systems": 0}, "n_systems must be an integer >= 1"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"family": "gamma"}, "family must be one of"),
        ({"settings": {"shift_sd": 1.0}}, "settings must be a FamilySettings, got dict"),
    ],
)
def test_draw_group_params_rejects_bad_arguments(kwargs, match) -> None:
    args = {"family": "skew", "n_systems": 2, "n_groups": 3, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        draw_group_params(**args)
    if "settings" in kwargs:
        with pytest.raises(ValueError, match=match):
            draw_systems(2, ["skew"], 5, seed=0, settings=kwargs["settings"])


def test_draw_systems_shapes_and_params() -> None:
    scores, params = draw_systems(3, ["shift", "heavy_tail"], n_per_group=7, seed=5, n_groups=4)
    assert list(scores.columns) == ["family", "system", "group", "candidate", "score"]
    assert len(scores) == 2 * 3 * 4 * 7
    assert (scores.groupby(["family", "system", "group"]).size() == 7).all()
    assert scores["candidate"].between(0, 6).all()
    pd.testing.assert_frame_equal(params[params["family"] == "heavy_tail"].reset_index(drop=True),
                                  draw_group_params("heavy_tail", 3, 4, seed=5))


def test_draw_systems_applies_the_group_parameters() -> None:
    scores, params = draw_systems(2, ["shift"], n_per_group=4000, seed=2, n_groups=3,
                                  settings=FamilySettings(shift_sd=2.0))
    means = scores.groupby(["system", "group"])["score"].mean()
    locs = params.set_index(["system", "group"])["loc"]
    np.testing.assert_allclose(means.loc[locs.index], locs, atol=0.06)  # 4 standard errors of a mean
    spread, sp = draw_systems(2, ["spread"], n_per_group=4000, seed=2, n_groups=3)
    sds = spread.groupby(["system", "group"])["score"].std()
    np.testing.assert_allclose(sds.loc[sp.set_index(["system", "group"]).index],
                               sp.set_index(["system", "group"])["scale"], rtol=0.05)


def test_draw_systems_family_draws_do_not_depend_on_the_other_families() -> None:
    alone, _ = draw_systems(2, ["skew"], 10, seed=9, n_groups=3)
    together, _ = draw_systems(2, ["shift", "skew"], 10, seed=9, n_groups=3)
    pd.testing.assert_frame_equal(alone, together[together["family"] == "skew"].reset_index(drop=True))
    again, _ = draw_systems(2, ["skew"], 10, seed=9, n_groups=3)
    other, _ = draw_systems(2, ["skew"], 10, seed=10, n_groups=3)
    pd.testing.assert_frame_equal(alone, again)
    assert not np.array_equal(alone["score"], other["score"])


@pytest.mark.parametrize(
    ("families", "match"),
    [([], "families is empty"), (["shift", "shift"], "more than once"), (["shift", "lognormal"], "family must be")],
)
def test_draw_systems_rejects_bad_families(families, match) -> None:
    with pytest.raises(ValueError, match=match):
        draw_systems(2, families, 5, seed=0)


# ---------------------------------------------------------------------------------------------- evaluation
def separated_system() -> pd.DataFrame:
    """A1 above everybody, B in the middle, A2 below everybody."""
    return pd.DataFrame(
        {"system": 0, "group": ["B", "B", "A1", "A1", "A2", "A2"], "score": [0.0, 1.0, 2.0, 3.0, -2.0, -1.0]}
    )


def test_evaluate_systems_hand_computed() -> None:
    out = evaluate_systems(separated_system(), k=[1, 2], rounds=40, seed=0, by=["system"]).set_index(["k", "group"])
    # k = 1: A1 always wins; k = 2: A1 and B are always selected, A2 never
    assert out.loc[(1, "A1"), ["phi", "phi_reference", "dDP"]].tolist() == [1.0, 0.0, 1.0]
    assert out.loc[(1, "A2"), "dDP"] == 0.0
    assert out.loc[(2, "A1"), "dDP"] == 0.0
    assert out.loc[(2, "A2"), ["phi", "phi_reference", "dDP"]].tolist() == [0.0, 1.0, -1.0]
    assert out.loc[(1, "A1"), "rabbi"] == 1.0 and out.loc[(1, "A2"), "rabbi"] == -1.0
    assert out.loc[(1, "A1"), "avg_gap"] == 2.0 and out.loc[(1, "A2"), "avg_gap"] == -2.0
    assert out.loc[(1, "A1"), "emd"] == pytest.approx(2.0)
    assert out.loc[(1, "A1"), "rounds"] == 40
    assert out.loc[(1, "A1"), "skewness"] == 0.0  # two points: symmetric


def test_evaluate_systems_columns_and_params_merge() -> None:
    scores, params = draw_systems(2, ["skew"], 20, seed=0, n_groups=3)
    out = evaluate_systems(scores, [1, 2], 30, seed=1, params=params)
    assert len(out) == 2 * 2 * 2
    for col in ["family", "system", "group", "reference", "k", "rabbi", "avg_gap", "jsd", "emd", "skewness",
                "excess_kurtosis", "phi", "phi_reference", "dDP", "rounds", "loc", "offset", "slope", "df"]:
        assert col in out.columns, col
    assert (out["reference"] == REFERENCE).all() and REFERENCE not in set(out["group"])
    merged = out.merge(params, on=["family", "system", "group"], suffixes=("", "_p"))
    np.testing.assert_array_equal(merged["loc"], merged["loc_p"])


def test_evaluate_systems_rejects_bad_input() -> None:
    df = separated_system()
    with pytest.raises(ValueError, match=r"no column\(s\) \['family'\]"):
        evaluate_systems(df, 1, 10, 0)
    with pytest.raises(ValueError, match="by must name"):
        evaluate_systems(df, 1, 10, 0, by=[])
    with pytest.raises(ValueError, match="must be a pandas DataFrame"):
        evaluate_systems(df.to_numpy(), 1, 10, 0, by=["system"])
    with pytest.raises(ValueError, match=r"k=4 is outside 1..3"):
        evaluate_systems(df, 4, 10, 0, by=["system"])
    with pytest.raises(ValueError, match=r"params has no column\(s\) \['group'\]"):
        evaluate_systems(df, 1, 10, 0, by=["system"], params=pd.DataFrame({"system": [0], "loc": [0.0]}))


def test_simulate_systems_shape_and_determinism() -> None:
    kwargs = dict(n_systems=4, families=["shift", "spread"], n_per_group=15, k=[1, 3], rounds=60, seed=3, n_groups=5)
    a = simulate_systems(**kwargs)
    b = simulate_systems(**kwargs)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 2 * 4 * (5 - 1) * 2
    assert a.groupby(["family", "k"]).size().eq(4 * 4).all()
    assert a["rabbi"].between(-1, 1).all() and a["dDP"].between(-1, 1).all()
    c = simulate_systems(**{**kwargs, "seed": 4})
    assert not np.array_equal(a["dDP"], c["dDP"])


def test_two_group_pool_gives_dp_close_to_rabbi() -> None:
    # a pool of two with k = 1: E[dDP] = RABBI exactly; the simulation adds noise of about 1 / sqrt(rounds)
    pts = simulate_systems(6, list(FAMILIES), 40, 1, 4000, seed=0, n_groups=2)
    assert np.abs(pts["dDP"] - pts["rabbi"]).max() < 5 / np.sqrt(4000)


# ---------------------------------------------------------------------------------------------- outliers
def test_with_low_outliers_hand_cases() -> None:
    assert with_low_outliers([3.0, 1.0, 2.0, 4.0], 0.5, drop=1.0).tolist() == [3.0, 0.0, 1.0, 4.0]
    out = with_low_outliers([3.0, 1.0, 2.0, 4.0], 0.25, mean=2.0)  # c = 4 * 0.5 / 1
    assert out.tolist() == [3.0, -1.0, 2.0, 4.0]
    assert with_low_outliers([5, 6], 0.01, drop=2.0).tolist() == [3.0, 6.0]  # at least one outlier
    assert with_low_outliers([5.0, 6.0], 0.5, mean=5.5).tolist() == [5.0, 6.0]  # c = 0


@FAST
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=40), st.floats(0.01, 1.0), st.floats(0.0, 50.0))
def test_with_low_outliers_preserves_order_and_hits_the_mean(values, share, drop) -> None:
    arr = np.array(values)
    out = with_low_outliers(arr, share, drop=drop)
    m = max(1, math.ceil(share * arr.size - 1e-9))
    assert (arr - out >= 0).all() and int((out != arr).sum()) <= m
    assert out.mean() == pytest.approx(arr.mean() - drop * m / arr.size, abs=1e-9)
    # the order is preserved: sorted by the old scores, the new scores are still sorted
    assert np.all(np.diff(out[np.argsort(arr, kind="stable")]) >= 0)
    target = arr.mean() - 1.0
    assert with_low_outliers(arr, share, mean=target).mean() == pytest.approx(target, abs=1e-9)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([1.0, 2.0], 0.5), {}, "exactly one of mean"),
        (([1.0, 2.0], 0.5), {"mean": 1.0, "drop": 1.0}, "exactly one of mean"),
        (([1.0, 2.0], 0.0), {"drop": 1.0}, r"share must lie in \(0, 1\]"),
        (([1.0, 2.0], 1.5), {"drop": 1.0}, r"share must lie in \(0, 1\]"),
        (([1.0, 2.0], 0.5), {"drop": -1.0}, "drop must be >= 0"),
        (([1.0, 2.0], 0.5), {"mean": 3.0}, "exceeds the scores' mean"),
        (([], 0.5), {"drop": 1.0}, "non-empty 1-D numeric"),
        ((["a", "b"], 0.5), {"drop": 1.0}, "non-empty 1-D numeric"),
        (([1.0, np.nan], 0.5), {"drop": 1.0}, "NaN or inf"),
    ],
)
def test_with_low_outliers_rejects_bad_input(args, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        with_low_outliers(*args, **kwargs)


# ---------------------------------------------------------------------------------------------- hand-picked
def focal_and_reference(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return df.loc[df["group"] == "A1", "score"].to_numpy(), df.loc[df["group"] == "B", "score"].to_numpy()


def test_hand_picked_hidden_advantage() -> None:
    df = hand_picked_system("hidden_advantage", n_groups=4, n_per_group=100, seed=2, shift=0.5, outlier_share=0.05)
    assert df.shape == (400, 4) and (df["case"] == "hidden_advantage").all()
    a, b = focal_and_reference(df)
    assert a.mean() == pytest.approx(b.mean(), abs=1e-12)
    keep = np.argsort(b, kind="stable")[5:]  # all but the 5 outliers are b + shift
    np.testing.assert_allclose(a[keep], b[keep] + 0.5)
    assert rabbi(a, b) > 0.15


def test_hand_picked_outlier_penalty_and_wider_spread() -> None:
    df = hand_picked_system("outlier_penalty", n_groups=3, n_per_group=200, seed=0, outlier_share=0.05,
                            outlier_drop=10.0)
    a, b = focal_and_reference(df)
    assert a.mean() - b.mean() == pytest.approx(-10.0 * 10 / 200)
    assert int((a != b).sum()) == 10 and abs(rabbi(a, b)) < 0.01
    df = hand_picked_system("wider_spread", n_groups=3, n_per_group=200, seed=0, spread=2.0)
    a, b = focal_and_reference(df)
    np.testing.assert_allclose(a - b.mean(), 2.0 * (b - b.mean()))
    assert a.mean() == pytest.approx(b.mean(), abs=1e-12)
    # the other groups are independent N(0, 1) draws
    others = df.loc[~df["group"].isin(["A1", "B"]), "score"].to_numpy()
    assert not np.array_equal(others, b)


def test_hand_picked_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="case must be one of"):
        hand_picked_system("outliers")
    with pytest.raises(ValueError, match="spread must be > 0"):
        hand_picked_system("wider_spread", spread=0.0)
    with pytest.raises(ValueError, match="n_per_group must be an integer >= 2"):
        hand_picked_system("wider_spread", n_per_group=1)
    assert set(CASES) == {"hidden_advantage", "outlier_penalty", "wider_spread"}


# ---------------------------------------------------------------------------------------------- mechanism
def test_percentiles_hand_case_with_ties() -> None:
    u = percentiles([2.0, 2.0, 0.0, 5.0], [1.0, 2.0, 2.0, 3.0])
    assert u.tolist() == [0.5, 0.5, 0.0, 1.0]  # (1 + 0.5 * 2) / 4 for the tied 2.0


@FAST
@given(scores_strategy, scores_strategy)
def test_rabbi_is_twice_the_mean_percentile_minus_one(a, b) -> None:
    assert 2 * percentiles(a, b).mean() - 1 == pytest.approx(rabbi(a, b), abs=1e-12)


def test_selection_weight_closed_forms_and_reference() -> None:
    u = np.linspace(0, 1, 11)
    np.testing.assert_allclose(selection_weight(u, pool=8, k=1), u**7)
    np.testing.assert_allclose(selection_weight(u, pool=2, k=1), u)
    # direct binomial sum: P(at most k - 1 of the pool - 1 others are above)
    pool, k = 6, 3
    direct = [sum(math.comb(pool - 1, j) * (1 - x) ** j * x ** (pool - 1 - j) for j in range(k)) for x in u]
    np.testing.assert_allclose(selection_weight(u, pool, k), direct)
    assert np.all(np.diff(selection_weight(u, pool, k)) >= 0)  # increasing in u


@pytest.mark.parametrize(("pool", "k"), [(2, 1), (8, 1), (8, 2), (8, 4), (8, 7), (10, 3)])
def test_selection_weight_averages_to_the_quota_share(pool, k) -> None:
    mid = (np.arange(20000) + 0.5) / 20000  # u ~ U(0, 1): a group distributed like the others
    assert selection_weight(mid, pool, k).mean() == pytest.approx(k / pool, abs=1e-6)
    assert expected_dp_gap(mid, pool, k) == pytest.approx(0.0, abs=1e-6)


def test_dp_contribution_of_a_pool_of_two_is_the_rabbi_score() -> None:
    u = np.linspace(0, 1, 7)
    np.testing.assert_allclose(dp_contribution(u, 2, 1), 2 * u - 1)
    np.testing.assert_allclose(dp_contribution([0.0, 1.0], 8, 1), [-1 / 7, 1.0])
    assert expected_dp_gap([1.0, 1.0, 0.0], 8, 1) == pytest.approx((1 + 1 - 1 / 7) / 3)


def test_expected_dp_gap_matches_the_selection_simulation() -> None:
    df = hand_picked_system("hidden_advantage", n_groups=4, n_per_group=300, seed=1)
    a, b = focal_and_reference(df)
    sim = evaluate_systems(df, [1, 2], 20000, seed=0, by=["case"]).set_index(["k", "group"])
    for k in (1, 2):
        # the other groups are fresh N(0, 1) samples, so the formula (with B's sample) is exact only in expectation
        assert sim.loc[(k, "A1"), "dDP"] == pytest.approx(expected_dp_gap(percentiles(a, b), 4, k), abs=0.03)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: selection_weight([0.5], pool=4, k=4), "k must be below the pool size 4"),
        (lambda: selection_weight([0.5], pool=1, k=1), "pool must be an integer >= 2"),
        (lambda: selection_weight([1.5], pool=4, k=1), r"u must hold percentiles in \[0, 1\]"),
        (lambda: dp_contribution([], pool=4, k=1), "u is empty"),
        (lambda: expected_dp_gap(["x"], pool=4, k=1), "u must be numeric"),
        (lambda: percentiles([], [1.0]), "a must be a non-empty 1-D array"),
        (lambda: percentiles([1.0], [np.inf]), "b must be a non-empty 1-D array of finite scores"),
    ],
)
def test_mechanism_functions_reject_bad_input(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()
