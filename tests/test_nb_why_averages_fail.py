"""Assertions on notebooks/13_why_averages_fail.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the glued values are read back with ``allocbias.book.glued_values``.
The assertions hold under the smoke parameters (n_systems=30, n_per_group=100, rounds=1000) and the defaults.
"""

from __future__ import annotations


import pytest

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures, smoke_parameters

pytestmark = pytest.mark.notebooks

STEM = "13_why_averages_fail"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
FAMILIES = ("shift", "spread", "skew", "heavy_tail")
METRICS = ("rabbi", "avg_gap", "jsd", "emd")


executed, glued = chapter_fixtures(STEM, with_params=False)


def test_runs_with_the_smoke_parameters_and_no_errors_or_warnings(executed, glued):
    assert_clean_outputs(executed[0])
    params = smoke_parameters(STEM)
    for name in ("n_systems", "n_groups", "n_per_group", "rounds", "k"):
        assert glued[name] == params[name]
    assert glued["n_points"] == params["n_systems"] * (params["n_groups"] - 1)
    # every per-family correlation uses one point per (system, non-reference group); pooled: all families
    assert glued["n_correlated_min"] == glued["n_correlated_max"] == glued["n_points"]
    assert glued["n_pooled"] == len(params["families"]) * glued["n_points"]


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=50)


def test_correlations_are_correlations(glued):
    keys = [key for key in glued if key.startswith(("r_", "two_r_"))]
    assert len(keys) > 60
    for key in keys:
        assert -1.0 <= glued[key] <= 1.0, (key, glued[key])
    for family in (*FAMILIES, "pooled"):
        for metric in METRICS:
            assert glued[f"r_{family}_{metric}"] == glued[f"r_{family}_{metric}_k{glued['k']}"]


def test_the_control_family_is_predicted_by_every_directional_metric(glued):
    assert glued["r_shift_rabbi"] > 0.8
    assert glued["r_shift_avg_gap"] > 0.8
    assert glued["r_shift_emd"] > 0.6


def test_rabbi_beats_the_averages_on_ceilings_and_heavy_tails(glued):
    for family in ("skew", "heavy_tail"):
        assert glued[f"r_{family}_rabbi"] > 0.8
        assert glued[f"r_{family}_rabbi"] > glued[f"r_{family}_avg_gap"] + 0.05
        assert glued[f"r_{family}_rabbi"] > glued[f"r_{family}_emd"] + 0.2
    # a few systems with very heavy tails (df near 1) decide the mean gap's r: it varies a lot with the seed
    assert glued["r_heavy_tail_avg_gap"] < glued["r_heavy_tail_rabbi"] - 0.1
    assert glued["r_pooled_rabbi"] > glued["r_pooled_avg_gap"] + 0.15
    assert glued["r_pooled_rabbi"] > glued["r_pooled_emd"] + 0.3


def test_spread_is_the_blind_spot_of_the_location_metrics(glued):
    # equal centres, k = 1 of 8: neither RABBI nor the mean gap sees the allocation gap; the distances do
    assert glued["k"] == 1
    assert glued["r_spread_rabbi"] < 0.6 and glued["r_spread_avg_gap"] < 0.6
    assert glued["r_spread_emd"] > glued["r_spread_rabbi"] + 0.2
    # with more seats per round the spread stops mattering and RABBI recovers
    assert glued["r_spread_rabbi_kmax"] > glued["r_spread_rabbi_kmin"] + 0.2


def test_rabbi_improves_with_k_in_every_family(glued):
    assert glued["k_kmin"] < glued["k_kmax"]
    for family in FAMILIES:
        assert glued[f"r_{family}_rabbi_kmax"] >= glued[f"r_{family}_rabbi_kmin"] - 0.02


def test_a_pool_of_two_makes_dp_equal_to_rabbi(glued):
    assert glued["two_r_rabbi_min"] > 0.9
    assert glued["two_max_diff"] < 5 * glued["two_dp_se"]


def test_weight_function_of_one_seat(glued):
    g = glued["n_groups"]
    assert glued["g_at_zero"] == pytest.approx(-glued["k"] / (g - 1))
    if glued["k"] == 1:  # g_1(u) = (G u^(G-1) - 1) / (G - 1) crosses 0 at u = G^(-1 / (G - 1))
        assert glued["u_zero"] == pytest.approx(g ** (-1 / (g - 1)), abs=1e-3)


def test_hand_picked_systems(glued):
    se = glued["dp_se"]
    # hidden advantage: the mean gap is 0 by construction, the allocation gap is large
    assert abs(glued["ce_hidden_advantage_avg_gap"]) < 1e-9
    assert glued["ce_hidden_advantage_rabbi"] > 0.1
    assert glued["ce_hidden_advantage_dDP"] > 5 * se
    # outlier penalty: a large negative mean gap, an allocation gap within noise of 0
    assert glued["ce_outlier_penalty_avg_gap"] == pytest.approx(
        -glued["ce_outlier_drop"] * glued["ce_outlier_share"], rel=0.2
    )
    assert abs(glued["ce_outlier_penalty_avg_gap"]) > 0.3
    assert abs(glued["ce_outlier_penalty_dDP"]) < 4 * se
    assert abs(glued["ce_outlier_penalty_rabbi"]) < 0.05
    # the mean gap ranks the two systems the wrong way round, RABBI the right way
    assert abs(glued["ce_outlier_penalty_avg_gap"]) > abs(glued["ce_hidden_advantage_avg_gap"])
    assert abs(glued["ce_outlier_penalty_dDP"]) < abs(glued["ce_hidden_advantage_dDP"])
    assert abs(glued["ce_outlier_penalty_rabbi"]) < abs(glued["ce_hidden_advantage_rabbi"])
    # wider spread: RABBI's blind spot at k = 1
    assert abs(glued["ce_wider_spread_avg_gap"]) < 1e-9
    assert abs(glued["ce_wider_spread_rabbi"]) < 0.1
    assert glued["ce_wider_spread_dDP"] > 5 * se
    assert glued["ce_wider_spread_dDP_kmax"] < glued["ce_wider_spread_dDP_kmin"]
    # the closed form agrees with the simulation (other groups are fresh samples: allow their sampling error)
    for case in ("hidden_advantage", "outlier_penalty", "wider_spread"):
        assert glued[f"ce_{case}_dDP"] == pytest.approx(glued[f"ce_{case}_dDP_formula"], abs=4 * se + 0.03)


def test_shapes_match_the_families(glued):
    for family in ("shift", "spread"):
        assert abs(glued[f"kurt_{family}"]) < 0.5
        assert glued[f"abs_skew_{family}"] < 0.5
    assert glued["abs_skew_skew"] > 1.0 and glued["kurt_skew"] > 2.0
    assert glued["kurt_heavy_tail"] > 3.0


def test_the_solutions_compute_and_glue_their_answers(glued):
    """The exercises' answers are computed in their solutions from allocbias.measures.synthetic and glued there."""
    assert glued["ex_exp_change_rabbi"] == 0 and glued["ex_exp_change_dDP"] == 0 < glued["ex_exp_change_avg_gap"]
    assert glued["ex_wider_last_k"] == glued["n_groups"] - 1
    assert 0 <= glued["ex_wider_n_positive"] <= glued["ex_wider_last_k"]
    # the chapter glues its formula values to three decimals (averages_findings), the solution its own unrounded
    assert glued["ex_wider_dDP_k1"] == pytest.approx(glued["ce_wider_spread_dDP_formula_k1"], abs=5e-4)
    assert -1 <= glued["ex_light_r_avg_gap"] <= 1 and -1 <= glued["ex_light_r_rabbi"] <= 1
