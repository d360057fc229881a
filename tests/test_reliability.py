"""Tests of allocbias.measures.reliability: Spearman--Brown, split-half reliability, reliability curves and the
forecast test.

The formulas are checked against their closed forms (and a round trip with hypothesis); the measured statistics
on synthetic systems whose reliability is known by construction: true per-point effects of variance tau^2 plus
independent per-pool noise of variance sigma^2, so a half of m pools has reliability tau^2 / (tau^2 + sigma^2 / m).
"""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from allocbias.measures import reliability, validity
from allocbias.measures.reliability import (
    disattenuate,
    forecast_test,
    half_split_masks,
    reliability_curve,
    size_for_reliability,
    spearman_brown,
    split_half_reliability,
)

SETTINGS = settings(max_examples=80, deadline=None)


def test_module_doctests():
    result = doctest.testmod(reliability, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 20 and result.failed == 0


# ------------------------------------------------------------------------------------------------------------
# Spearman--Brown, the size formula, Spearman's correction
# ------------------------------------------------------------------------------------------------------------
def test_spearman_brown_closed_forms():
    assert spearman_brown(0.5, 2) == pytest.approx(2 / 3)
    assert spearman_brown(0.25, 3) == pytest.approx(0.75 / 1.5)
    assert spearman_brown(0.37, 1) == pytest.approx(0.37)  # m = 1: unchanged
    assert spearman_brown(2 / 3, 0.5) == pytest.approx(0.5)  # stepping down undoes stepping up
    assert spearman_brown(1.0, 7) == 1.0 and spearman_brown(0.0, 7) == 0.0
    assert spearman_brown(1.0, 0.1) == 1.0  # no rounding above 1
    np.testing.assert_allclose(spearman_brown([0.1, 0.5, 0.9], [2, 4, 0.5]),
                               [0.2 / 1.1, 2.0 / 2.5, 0.45 / 0.55])


def test_size_for_reliability_closed_forms():
    # rho = 0.5 on 10 units: 0.8 needs m = 4 times the data
    assert size_for_reliability(0.5, 10, 0.8) == pytest.approx(40.0)
    # n* = n t (1 - rho) / (rho (1 - t))
    assert size_for_reliability(0.04, 15, 0.8) == pytest.approx(15 * 0.8 * 0.96 / (0.04 * 0.2))
    assert size_for_reliability(0.8, 10, 0.5) == pytest.approx(10 * 0.5 * 0.2 / (0.8 * 0.5))  # fewer are enough
    np.testing.assert_allclose(size_for_reliability(np.array([0.2, 0.5]), 10, 0.5), [40.0, 10.0])


@given(rho=st.floats(0.01, 0.99), n=st.floats(1, 1000), target=st.floats(0.01, 0.99))
@SETTINGS
def test_size_round_trip(rho, n, target):
    n_star = size_for_reliability(rho, n, target)
    assert spearman_brown(rho, n_star / n) == pytest.approx(target, rel=1e-9, abs=1e-12)


@given(rho=st.floats(0.0, 1.0), m1=st.floats(0.1, 50), m2=st.floats(0.1, 50))
@SETTINGS
def test_spearman_brown_composes(rho, m1, m2):
    # m1 times the data, then m2 times that, is m1 m2 times the data
    assert spearman_brown(spearman_brown(rho, m1), m2) == pytest.approx(spearman_brown(rho, m1 * m2), abs=1e-12)
    assert 0.0 <= spearman_brown(rho, m1) <= 1.0


@pytest.mark.parametrize("rho", [0.0, -0.1, 1.0, 1.2])
def test_size_for_reliability_rejects_rho(rho):
    with pytest.raises(ValueError, match="rho must lie in"):
        size_for_reliability(rho, 10, 0.8)


@pytest.mark.parametrize("target", [0.0, 1.0, 1.5, -0.2])
def test_size_for_reliability_rejects_target(target):
    with pytest.raises(ValueError, match="target must lie in"):
        size_for_reliability(0.4, 10, target)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="rho must lie in"):
        spearman_brown(-0.2, 2)
    with pytest.raises(ValueError, match="m must be positive"):
        spearman_brown(0.5, 0)
    with pytest.raises(ValueError, match="n must be positive"):
        size_for_reliability(0.5, 0, 0.8)
    with pytest.raises(ValueError, match="rel_y must lie in"):
        disattenuate(0.3, 0.5, 0.0)
    with pytest.raises(ValueError, match="rho must be finite"):
        spearman_brown(float("nan"), 2)


def test_disattenuate_formula():
    assert disattenuate(0.3, 0.5, 0.5) == pytest.approx(0.6)
    assert disattenuate(0.3, 1.0, 1.0) == pytest.approx(0.3)
    np.testing.assert_allclose(disattenuate([0.2, -0.2], [0.4, 0.4], 0.1), [1.0, -1.0])


# ------------------------------------------------------------------------------------------------------------
# random halves
# ------------------------------------------------------------------------------------------------------------
def test_half_split_masks_partition_each_stratum():
    strata = np.repeat([0, 1, 2], [6, 7, 2])
    a, b = half_split_masks(strata, 50, seed=3)
    assert not (a & b).any() and (a | b).all()
    for s, n in ((0, 6), (1, 7), (2, 2)):
        assert (a[:, strata == s].sum(axis=1) == n // 2).all()
    a2, b2 = half_split_masks(strata, 50, seed=3)
    assert (a == a2).all() and (b == b2).all()
    assert not (half_split_masks(strata, 50, seed=4)[0] == a).all()
    # every pool lands in half A about half the time (uniform splits)
    assert abs(half_split_masks(strata, 4000, seed=0)[0][:, strata == 0].mean() - 0.5) < 0.03


def test_half_split_masks_at_a_size():
    strata = np.repeat([0, 1], [10, 5])
    a, b = half_split_masks(strata, 20, seed=0, size=2)
    assert (a[:, :10].sum(1) == 2).all() and (b[:, 10:].sum(1) == 2).all() and not (a & b).any()
    with pytest.raises(ValueError, match="size=3 needs at least 6 pools in every stratum; stratum 1 has 5"):
        half_split_masks(strata, 5, size=3)
    with pytest.raises(ValueError, match="stratum 1 has 1 pool"):
        half_split_masks(np.array([0, 0, 1]), 5)


def test_validity_uses_the_same_split():
    rng = np.random.default_rng(5)
    rows = [dict(system=s, pool=p, group=g, score=float(rng.integers(0, 5))) for s in range(4) for p in range(5)
            for g in "AB"]
    lay = validity._control_setup(pd.DataFrame(rows), "A", 1, ["rabbi"], "dDP", "pools", 2, 2, 0, ["system"], "pool",
                                  "group", "score", None)[3]
    got = validity._split_halves(lay, np.random.default_rng(9), 7)
    want = half_split_masks(lay.pool_cell, 7, np.random.default_rng(9))[0][:, lay.pool]
    assert (got == want).all()


# ------------------------------------------------------------------------------------------------------------
# split-half reliability on systems with known reliability
# ------------------------------------------------------------------------------------------------------------
def known_reliability_rows(n_systems=300, n_groups=1, n_pools=16, tau=1.0, sigma=2.0, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    true = rng.normal(0, tau, (n_systems, n_groups))
    s, g, p = np.meshgrid(np.arange(n_systems), np.arange(n_groups), np.arange(n_pools), indexing="ij")
    value = true[s, g] + rng.normal(0, sigma, s.shape)
    return pd.DataFrame({"system": s.ravel(), "group": g.ravel(), "pool": p.ravel(), "value": value.ravel()})


@pytest.mark.parametrize("size", [1, 4, 8])
def test_split_half_reliability_matches_its_construction(size):
    rows = known_reliability_rows()
    expected = 1.0 / (1.0 + 4.0 / size)  # tau^2 / (tau^2 + sigma^2 / m)
    res = split_half_reliability(rows, size=size, n_splits=100, seed=1)
    assert res.reliability == pytest.approx(expected, abs=0.08)
    assert res.lo <= res.reliability <= res.hi and res.n_points == 300 and res.values.shape == (100,)


def test_no_signal_gives_no_reliability():
    rows = known_reliability_rows(tau=0.0)
    res = split_half_reliability(rows, n_splits=100, seed=2)
    assert abs(res.reliability) < 0.05 and res.lo < 0 < res.hi


def test_gap_against_a_reference():
    # group 0 is the reference; the gap of group g is true[s, g] - true[s, 0] plus the two groups' noise
    rows = known_reliability_rows(n_systems=400, n_groups=2, n_pools=8, tau=1.0, sigma=1.0, seed=3)
    res = split_half_reliability(rows, reference=0, size=4, n_splits=100, seed=0)
    # var(true gap) = 2 tau^2; noise of a half's gap = 2 sigma^2 / 4
    assert res.n_points == 400
    assert res.reliability == pytest.approx(2.0 / (2.0 + 0.5), abs=0.06)
    absolute = split_half_reliability(rows, reference=0, absolute=True, size=4, n_splits=100, seed=0)
    assert absolute.reliability < res.reliability  # |gap| keeps less of the signal than the signed gap


def test_callable_statistic_agrees_with_the_value_column():
    rows = known_reliability_rows(n_systems=30, n_groups=2, n_pools=6, seed=4)

    def mean(half: pd.DataFrame) -> pd.Series:
        return half.groupby(["system", "group"])["value"].mean()

    by_value = split_half_reliability(rows, size=2, n_splits=20, seed=7)
    by_callable = split_half_reliability(rows, value=None, statistic=mean, size=2, n_splits=20, seed=7)
    np.testing.assert_allclose(by_callable.values, by_value.values, rtol=1e-12)
    assert by_callable.n_points == by_value.n_points == 60


def test_a_ratio_against_the_reference_is_the_callable_ratio():
    """contrast="ratio": each group's half mean over the reference's (an impact ratio of selection probabilities)
    gives the same splits as a statistic computing that ratio itself."""
    rows = known_reliability_rows(n_systems=40, n_groups=3, n_pools=6, seed=6)
    rows = rows.assign(value=1.0 / (1.0 + np.exp(-rows["value"])))  # positive, like selection probabilities

    def ratio(half: pd.DataFrame) -> pd.Series:
        means = half.groupby(["system", "group"])["value"].mean().unstack("group")
        return means.drop(columns=0).div(means[0], axis=0).stack()

    by_option = split_half_reliability(rows, reference=0, contrast="ratio", size=3, n_splits=20, seed=3)
    by_callable = split_half_reliability(rows, value=None, statistic=ratio, size=3, n_splits=20, seed=3)
    np.testing.assert_allclose(by_option.values, by_callable.values, rtol=1e-12)
    assert by_option.n_points == 80
    gap = split_half_reliability(rows, reference=0, size=3, n_splits=20, seed=3)
    assert not np.allclose(gap.values, by_option.values)  # a ratio is not the difference
    with pytest.raises(ValueError, match="contrast='ratio' needs a reference group"):
        split_half_reliability(rows, contrast="ratio")
    with pytest.raises(ValueError, match="contrast must be 'difference' or 'ratio', got 'quotient'"):
        split_half_reliability(rows, reference=0, contrast="quotient")


def test_strata_other_than_the_system():
    # one system with 40 groups; pools nested in 5 strata: the halves split each stratum
    rows = known_reliability_rows(n_systems=5, n_groups=40, n_pools=8, seed=5)
    pooled = rows.assign(stratum=rows["system"], system="all", pool=rows["system"] * 100 + rows["pool"])
    # a pool holds one row of every group of its stratum; group effects differ per stratum, so the pooled point
    # (all, g) averages 5 strata: true variance tau^2 / 5, noise sigma^2 / (5 m)
    res = split_half_reliability(pooled, within="stratum", size=4, n_splits=50, seed=0)
    assert res.n_points == 40
    assert res.reliability == pytest.approx(0.2 / (0.2 + 4 / 20), abs=0.2)


def test_split_half_seeds_reproduce_and_differ():
    rows = known_reliability_rows(n_systems=50)
    a = split_half_reliability(rows, n_splits=30, seed=11)
    b = split_half_reliability(rows, n_splits=30, seed=11)
    c = split_half_reliability(rows, n_splits=30, seed=12)
    assert (a.values == b.values).all() and not (a.values == c.values).all()


def test_split_half_bad_input():
    rows = known_reliability_rows(n_systems=5, n_pools=4)
    with pytest.raises(ValueError, match="exactly one of value"):
        split_half_reliability(rows, value=None)
    with pytest.raises(ValueError, match="'pool'"):
        split_half_reliability(rows.drop(columns="pool"))
    with pytest.raises(ValueError, match="reference group 'X' is not in column 'group'"):
        split_half_reliability(rows, reference="X")
    with pytest.raises(ValueError, match="size=3 needs at least 6 pools"):
        split_half_reliability(rows, size=3)
    with pytest.raises(ValueError, match="'value' has 1 missing"):
        split_half_reliability(rows.assign(value=rows["value"].where(rows.index != 0)))


# ------------------------------------------------------------------------------------------------------------
# the reliability curve
# ------------------------------------------------------------------------------------------------------------
def test_reliability_curve_follows_spearman_brown_on_parallel_pools():
    rows = known_reliability_rows(n_systems=400, n_pools=16, seed=6)
    curve = reliability_curve(rows, sizes=[8, 1, 2, 4], n_splits=60, seed=0)
    assert curve["size"].tolist() == [1, 2, 4, 8]
    truth = 1.0 / (1.0 + 4.0 / curve["size"].to_numpy())
    np.testing.assert_allclose(curve["reliability"], truth, atol=0.07)
    np.testing.assert_allclose(curve["predicted"], curve["reliability"], atol=0.07)
    assert curve["predicted"].iloc[0] == curve["reliability"].iloc[0]
    assert (curve["lo"] <= curve["reliability"]).all() and (curve["reliability"] <= curve["hi"]).all()
    with pytest.raises(ValueError, match="distinct"):
        reliability_curve(rows, sizes=[2, 2])


# ------------------------------------------------------------------------------------------------------------
# the forecast test on systems with known true gaps
# ------------------------------------------------------------------------------------------------------------
def pair_pools(n_systems: int, n_pools: int, spread: float, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Pools of one A and one B candidate, normal scores, B shifted by delta_s ~ N(0, spread^2) in system s.

    At k = 1 a pool selects B with probability Phi(delta_s / sqrt 2), so the true gap is 2 Phi(delta_s / sqrt 2) - 1
    and one pool's gap (+1 or -1) has variance 1 - gap^2."""
    rng = np.random.default_rng(seed)
    delta = rng.normal(0, spread, n_systems) if spread > 0 else np.zeros(n_systems)
    s, p = np.meshgrid(np.arange(n_systems), np.arange(n_pools), indexing="ij")
    a = rng.normal(0, 1, s.shape)
    b = rng.normal(0, 1, s.shape) + delta[s]
    frame = pd.DataFrame({"system": np.concatenate([s.ravel(), s.ravel()]),
                          "pool": np.concatenate([p.ravel(), p.ravel()]),
                          "group": ["A"] * s.size + ["B"] * s.size, "score": np.concatenate([a.ravel(), b.ravel()])})
    return frame, 2 * stats.norm.cdf(delta / np.sqrt(2)) - 1


def test_forecast_test_recovers_a_known_reliability():
    frame, gap = pair_pools(n_systems=200, n_pools=40, spread=0.6, seed=0)
    size = 10
    expected = gap.var() / (gap.var() + (1 - gap**2).mean() / size)
    t = forecast_test(frame, reference="A", k=1, metrics=["rabbi", "avg_gap", "jsd"], size=size, n_splits=40,
                      n_boot=200, n_perm=100, seed=0)
    assert t["statistic"].tolist() == ["rabbi", "avg_gap", "jsd", "gap"]
    row = t.set_index("statistic")
    assert row.loc["gap", "heldout_r"] == pytest.approx(expected, abs=0.08)
    assert row.loc["gap", "reliability"] == row.loc["gap", "heldout_r"]  # the gap's held-out r is its reliability
    assert row.loc["jsd", "tested_against"] == "|gap|" and row.loc["rabbi", "tested_against"] == "gap"
    for name in ("rabbi", "avg_gap", "gap"):
        r = row.loc[name]
        assert r["heldout_r"] > r["null_hi"] and r["p_null"] < 0.05
        assert abs(r["null_mean"]) < 0.1 and r["null_lo"] < 0 < r["null_hi"]  # the null is centred near 0
        assert r["ci_lo"] < r["heldout_r"] < r["ci_hi"] and r["bootstrap"] == "systems"
        assert r["heldout_r"] <= r["ceiling"] + 0.05
    # RABBI and delta from a half measure the same true shift as the gap, so Spearman's correction is near 1
    for name in ("rabbi", "avg_gap"):
        r = row.loc[name]
        assert r["dis_lo"] < 1.0 < r["dis_hi"] and r["disattenuated"] == pytest.approx(1.0, abs=0.15)
    assert np.isnan(row.loc["gap", "disattenuated"])
    # paired comparison with the gap's own forecast: the difference of the two held-out r, with its interval
    r = row.loc["rabbi"]
    assert r["vs_gap"] == pytest.approx(r["heldout_r"] - row.loc["gap", "heldout_r"])
    assert r["vs_gap_lo"] < r["vs_gap"] < r["vs_gap_hi"] and np.isnan(row.loc["gap", "vs_gap_lo"])
    assert (t["size"] == size).all() and (t["n_points"] == 200).all()


def test_forecast_test_without_signal():
    frame, _ = pair_pools(n_systems=60, n_pools=20, spread=0.0, seed=1)
    t = forecast_test(frame, reference="A", k=1, metrics=["rabbi"], n_splits=30, n_boot=100, n_perm=100, seed=3)
    for _, r in t.iterrows():
        assert abs(r["heldout_r"]) < 0.15 and r["ci_lo"] < 0 < r["ci_hi"] and r["p_null"] > 0.05


def test_forecast_test_seeds_reproduce():
    frame, _ = pair_pools(n_systems=12, n_pools=10, spread=0.5, seed=2)
    kwargs = dict(reference="A", k=[1], metrics=["rabbi", "emd"], n_splits=5, n_boot=20, n_perm=20)
    a, b = forecast_test(frame, seed=4, **kwargs), forecast_test(frame, seed=4, **kwargs)
    pd.testing.assert_frame_equal(a, b)
    assert not forecast_test(frame, seed=5, **kwargs)["heldout_r"].equals(a["heldout_r"])


def test_forecast_test_one_system_resamples_points():
    frame, _ = pair_pools(n_systems=6, n_pools=10, spread=1.0, seed=3)
    # the six systems pooled into one, each former system's pair a group of its own against one reference
    rows = frame.assign(group=np.where(frame["group"] == "A", "A", "B" + frame["system"].astype(str)),
                        stratum=frame["system"], pool=frame["system"] * 100 + frame["pool"], system="all")
    ref = rows[rows["group"] == "A"].groupby("pool").head(1)
    rows = pd.concat([rows[rows["group"] != "A"], ref]).reset_index(drop=True)
    t = forecast_test(rows, reference="A", k=1, metrics=["rabbi"], within="stratum", n_splits=5, n_boot=30,
                      n_perm=10, seed=0)
    assert (t["bootstrap"] == "points").all() and (t["n_points"] == 6).all()


def test_forecast_test_bad_input():
    frame, _ = pair_pools(n_systems=2, n_pools=4, spread=0.5, seed=4)
    with pytest.raises(ValueError, match="one system or at least 3"):
        forecast_test(frame, reference="A", k=1, metrics=["rabbi"], n_splits=2, n_boot=5, n_perm=5)
    frame, _ = pair_pools(n_systems=4, n_pools=4, spread=0.5, seed=4)
    with pytest.raises(ValueError, match="size=3 needs at least 6 pools"):
        forecast_test(frame, reference="A", k=1, metrics=["rabbi"], size=3, n_splits=2, n_boot=5, n_perm=5)
    with pytest.raises(ValueError, match="spans several strata"):
        forecast_test(frame.assign(stratum=frame["group"] == "A"), reference="A", k=1, metrics=["rabbi"],
                      within="stratum", n_splits=2, n_boot=5, n_perm=5)


def test_forecast_gap_row_is_the_split_half_reliability_of_the_selection_probabilities():
    """The same seed and splits: the gap's held-out r of the forecast test is split_half_reliability of each
    candidate's exact selection probability against the reference."""
    from allocbias.measures import selection

    frame, _ = pair_pools(n_systems=30, n_pools=12, spread=0.7, seed=6)
    frame["score"] = np.round(frame["score"])  # ties, broken uniformly at random in expectation
    codes = frame.groupby(["system", "pool"]).ngroup().to_numpy()
    frame["p"] = selection.pool_selection_probabilities(codes, frame["score"].to_numpy(), [1])[0]
    for size in (None, 3):
        t = forecast_test(frame, reference="A", k=1, metrics=["rabbi"], size=size, n_splits=15, n_boot=10, n_perm=5,
                          seed=8)
        rel = split_half_reliability(frame, value="p", reference="A", size=size, n_splits=15, seed=8)
        assert t.set_index("statistic").loc["gap", "heldout_r"] == pytest.approx(rel.reliability, abs=1e-12)
