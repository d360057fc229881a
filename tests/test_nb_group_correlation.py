"""Assertions on notebooks/06_group_correlation.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``. Every assertion holds for any score tables: the number of points behind
each per-group correlation, correlations in [-1, 1], spreads that agree with the glued extremes, interval
widths that agree with Fisher's formula, and permutation p-values that are valid probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from allocbias import data
from allocbias.scoring import systems
from allocbias.plotting import GROUP_ORDER

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures, code_cells_by_place

pytestmark = pytest.mark.notebooks

STEM = "06_group_correlation"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")
OTHERS = [g for g in GROUP_ORDER if g != data.REFERENCE_GROUP]
SHORT = {"rabbi": "RABBI", "avg_gap": "mean gap δ", "jsd": "JSD", "emd": "EMD"}


executed, glued, params = chapter_fixtures(STEM)


def _slug(group):
    return group.lower().replace(" ", "_")


def test_runs_without_errors_or_warnings_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 2  # the heatmap and the intervals


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=40)


def test_each_group_correlation_uses_systems_times_jobs_points(glued, params):
    per_group = len(params["systems"]) * len(params["jobs"])
    for name in ("k", "rounds", "permutations"):
        assert glued[name] == params[name]
    assert glued["n_systems"] == len(params["systems"]) and glued["n_jobs"] == len(params["jobs"])
    assert glued["n_models"] == len({systems.parse_system(s).model for s in params["systems"]})
    assert glued["n_per_group"] == per_group
    assert glued["n_corr_min"] == glued["n_corr_max"] == per_group
    assert glued["n_others"] == glued["n_groups_correlated"] == len(OTHERS) == 7
    assert glued["n_points"] == glued["n_pooled"] == len(OTHERS) * per_group
    assert glued["reference"] == data.REFERENCE_GROUP
    assert glued["confidence_pct"] == pytest.approx(100 * params["confidence"])


def test_correlations_and_spreads(glued):
    for gap in GAPS:
        for metric in METRICS:
            rs = {g: glued[f"r_{gap}_{metric}_{_slug(g)}"] for g in OTHERS}
            assert all(-1.0 <= r <= 1.0 for r in rs.values())
            assert -1.0 <= glued[f"r_pooled_{gap}_{metric}"] <= 1.0
            assert glued[f"r_min_{gap}_{metric}"] == pytest.approx(min(rs.values()))
            assert glued[f"r_max_{gap}_{metric}"] == pytest.approx(max(rs.values()))
            assert rs[glued[f"group_min_{gap}_{metric}"]] == pytest.approx(min(rs.values()))
            assert rs[glued[f"group_max_{gap}_{metric}"]] == pytest.approx(max(rs.values()))
            assert glued[f"spread_{gap}_{metric}"] == pytest.approx(max(rs.values()) - min(rs.values()))
            assert 0.0 <= glued[f"spread_{gap}_{metric}"] <= 2.0
            assert 0.0 < glued[f"ci_width_mean_{gap}_{metric}"] <= 2.0
        spreads = {SHORT[m]: glued[f"spread_{gap}_{m}"] for m in METRICS}
        assert spreads[glued[f"narrowest_{gap}"]] == pytest.approx(min(spreads.values()))
        assert spreads[glued[f"widest_{gap}"]] == pytest.approx(max(spreads.values()))


def test_interval_widths_follow_fisher(glued, params):
    z = stats.norm.ppf((1 + params["confidence"]) / 2)
    n = len(params["systems"]) * len(params["jobs"])
    assert glued["ci_width_at_zero"] == pytest.approx(2 * np.tanh(z / np.sqrt(n - 3)))
    assert glued["paper_n_per_group"] == 40
    assert glued["paper_ci_width_at_zero"] == pytest.approx(2 * np.tanh(z / np.sqrt(40 - 3)))
    # Fisher intervals are widest at r = 0: no interval is wider than the one at zero
    assert 0.0 < glued["ci_width_min"] <= glued["ci_width_mean"] <= glued["ci_width_max"]
    assert glued["ci_width_max"] <= glued["ci_width_at_zero"] + 1e-9
    assert 0.0 <= glued["overlap_pct"] <= 100.0


def test_permutation_reference_is_a_valid_test(glued, params):
    assert glued["r_check"] < 1e-9  # the vectorised correlations agree with validity_table
    floor = 1 / (params["permutations"] + 1)
    for gap in GAPS:
        for metric in METRICS:
            assert floor - 1e-12 <= glued[f"p_value_{gap}_{metric}"] <= 1.0
            assert 0.0 <= glued[f"null_mean_{gap}_{metric}"] <= glued[f"null_q95_{gap}_{metric}"] + 1e-12
            assert glued[f"null_q95_{gap}_{metric}"] <= 2.0
    assert glued["n_tests"] == len(GAPS) * len(METRICS)
    assert 0 <= glued["n_below_005"] <= glued["n_tests"]
    assert glued["p_min"] == pytest.approx(min(glued[f"p_value_{g}_{m}"] for g in GAPS for m in METRICS))


def test_quality_separation(glued, params):
    assert -1.0 <= glued["sep_rabbi_min"] <= glued["sep_rabbi_mean"] <= glued["sep_rabbi_max"] <= 1.0
    assert glued["sep_p_better_mean"] == pytest.approx((1 + glued["sep_rabbi_mean"]) / 2)
    assert -1.0 <= glued["sep_mean_difference"] <= 1.0
    for key in ("sep_rabbi_min_where", "sep_rabbi_max_where"):
        system, job = glued[key].split(", ")
        assert system in params["systems"] and job in params["jobs"]


def test_each_groups_correlation_stands_beside_its_controls(glued, params):
    """Per group: how many correlations track the gap held out (validity.verdict_words), and, described, how many
    lie above their in-sample null (issues 22, 29)."""
    assert glued["n_perm"] == params["n_perm"] and glued["n_splits"] == params["n_splits"]
    for metric in ("rabbi", "avg_gap", "jsd", "emd"):
        for gap in ("dDP", "dEO"):
            t = f"{metric}_{gap}"
            n = glued[f"ctl_n_groups_{t}"]
            assert n == glued["n_others"]
            assert 0 <= glued[f"ctl_n_tracks_{t}"] <= n and 0 <= glued[f"ctl_n_above_{t}"] <= n
            assert 0 <= glued[f"ctl_n_testable_{t}"] <= n
            assert -1.0 <= glued[f"ctl_heldout_min_{t}"] <= glued[f"ctl_heldout_max_{t}"] <= 1.0


def test_code_cells_glue_once_and_define_nothing():
    """The chapter's computation lives in its study module: one glue loop, no def, class or lambda in a cell; an
    exercise's gated solution glues the answer it computes."""
    import ast

    kept, solutions = code_cells_by_place(SOURCE)
    assert sum(src.count("glue(") for src in kept) == 1
    assert solutions and all("glue(" in src for src in solutions)
    for src in kept + solutions:
        for node in ast.walk(ast.parse(src)):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)), src


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercises 1 and 3 compute their spreads with validity.validity_table (Spearman's; by quota) and glue them."""
    assert glued["ex_spread_pearson_rabbi"] == pytest.approx(glued["spread_dDP_rabbi"])
    assert 0 <= glued["ex_spread_spearman_rabbi"] <= 2 and 0 <= glued["ex_spread_largest_difference"] <= 2
    assert glued["ex_spread_largest_metric"] in set(SHORT.values()) and glued["ex_spread_largest_gap"] in {"ΔDP", "ΔEO"}
    for metric in ("rabbi", "avg_gap"):
        assert 0 <= glued[f"ex_spread_k_{metric}_min"] <= glued[f"ex_spread_k_{metric}_max"] <= 2
