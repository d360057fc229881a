"""Assertions on notebooks/14_local_law_144.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the glued values are read back with ``allocbias.book.glued_values``.
The assertions hold under the smoke and the default parameters alike.
"""

from __future__ import annotations

import re

import pytest

from allocbias.book import load_profile

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "14_local_law_144"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
EXAMPLES = (1, 2, 3)
RATIO_KEY = re.compile(r"(di_avg|di_median|di_threshold|auc_di|p_fair|pfair|auc_beta|p_any_fail)")


executed, glued = chapter_fixtures(STEM, with_params=False)


def test_runs_with_the_smoke_parameters_and_no_errors_or_warnings(executed, glued):
    assert_clean_outputs(executed[0])
    smoke = load_profile("smoke", root=ROOT).get(STEM, {})
    for name in ("n_per_group", "grid_points"):
        if name in smoke:
            assert glued[name] == smoke[name]


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=30)


def test_ratios_lie_in_unit_interval(glued):
    checked = 0
    for key, value in glued.items():
        if RATIO_KEY.search(key) and not key.startswith("ks_"):
            values = value if isinstance(value, list) else [value]
            assert all(0.0 <= v <= 1.0 + 1e-12 for v in values), (key, value)
            checked += 1
    assert checked > 40


def test_toy_example_matches_hand_computation(glued):
    assert glued["toy_median"] == 3.5
    assert glued["toy_di_median_A"] == pytest.approx(1 / 3)
    assert glued["toy_auc_A"] == pytest.approx(11 / 24)


@pytest.mark.parametrize("kind", EXAMPLES)
def test_legal_metrics_pass_while_distribution_metrics_flag(glued, kind):
    bound = glued["fair_bound"]
    # the paper's claim: Local Law 144's metrics stay above the bound ...
    assert glued[f"ex{kind}_di_avg"] >= bound
    assert glued[f"ex{kind}_di_median"] >= bound
    assert glued[f"ex{kind}_di_median"] > 0.9
    # ... while the distribution-wide metrics fall below it
    assert glued[f"ex{kind}_auc_di"] < bound
    assert glued[f"ex{kind}_p_fair"] < bound
    for g in "AB":
        assert glued[f"ex{kind}_p_fair_fail_{g}"] == pytest.approx(1 - glued[f"ex{kind}_p_fair_{g}"])
    fails = [glued[f"ex{kind}_p_fair_fail_{g}"] for g in "AB"]
    assert max(fails) - 1e-9 <= glued[f"ex{kind}_p_any_fail"] <= sum(fails) + 1e-9


def test_flag_table_counts(glued):
    assert glued["n_examples"] == 3
    assert glued["n_flag_legal"] == 0
    assert glued["n_flag_distribution"] == 3


def _trend(values, direction, tol):
    """Monotone up to ``tol`` step-to-step noise, and a clear overall change."""
    steps = [b - a for a, b in zip(values, values[1:])]
    return all(direction * s >= -tol for s in steps) and direction * (values[-1] - values[0]) > 0.05


@pytest.mark.parametrize(("kind", "direction"), [(1, -1), (2, +1), (3, +1)])
def test_distribution_metrics_track_the_parameter(glued, kind, direction):
    params = glued[f"ex{kind}_sweep_params"]
    assert params == sorted(params) and len(params) >= 3
    auc = glued[f"ex{kind}_sweep_auc_di"]
    pfair = glued[f"ex{kind}_sweep_p_fair"]
    assert len(auc) == len(pfair) == len(params)
    assert _trend(auc, direction, tol=0.02), auc
    assert _trend(pfair, direction, tol=0.03), pfair
    # the legal metrics do not move across the whole sweep
    for metric in ("di_avg", "di_median"):
        legal = glued[f"ex{kind}_sweep_{metric}"]
        assert min(legal) >= glued["fair_bound"], (metric, legal)
        assert max(legal) - min(legal) < 0.1, (metric, legal)


def test_identical_groups_are_not_flagged(glued):
    # example 1 at a = 0 draws both groups from N(50, 15)
    assert glued["ex1_sweep_params"][0] == 0.0
    assert glued["ex1_sweep_auc_di"][0] > 0.9
    assert glued["ex1_sweep_p_fair"][0] > 0.9
    assert glued["ks_ex1_weakest_D"] < 0.1


def test_beta_prior_moves_the_metrics_towards_strict_cuts(glued):
    assert glued["prior_mean"] == pytest.approx(glued["prior_a"] / (glued["prior_a"] + glued["prior_b"]))
    # example 3: the gap against A is at strict cuts, where Beta(18, 2) puts its weight
    assert glued["ex3_auc_beta_A"] < glued["ex3_auc_di_A"] - 0.2
    assert glued["ex3_pfair_beta_A"] < glued["ex3_p_fair_A"]
    # example 1: B is harmed at lenient cuts only, so the selective prior clears B and condemns A
    assert glued["ex1_auc_beta_B"] > glued["ex1_auc_di_B"]
    assert glued["ex1_auc_beta_A"] < glued["ex1_auc_di_A"]


@pytest.mark.parametrize("kind", EXAMPLES)
def test_ks_statistic_grows_with_the_difference(glued, kind):
    assert glued[f"ks_ex{kind}_strongest_D"] > glued[f"ks_ex{kind}_weakest_D"]
    assert glued[f"ks_ex{kind}_strongest_D"] > 0.2
    assert 0.0 <= glued[f"ks_ex{kind}_strongest_pvalue"] < 1e-6
    assert 0.0 <= glued[f"ks_ex{kind}_weakest_pvalue"] <= 1.0


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercise 2's solution reads AUC_DI under Beta(200, 200) and DI_median; exercise 3's constructs the pair of
    distributions its answer states: DI_median flags group A while AUC_DI and P_fair with a flat prior pass it."""
    assert 0 <= glued["ex_auc_half_A"] <= 1 and 0 <= glued["ex_di_median_A"] <= 1
    assert glued["ex_band_di_median"] < glued["fair_bound"] < min(glued["ex_band_auc"], glued["ex_band_p_fair"])
