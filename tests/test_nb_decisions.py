"""Assertions on notebooks/03_decisions.ipynb executed through papermill (smoke profile).

Executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with ``profiles/smoke.yaml``.
Under the smoke profile the chapter reads the committed tables of every study system with fewer rounds (no model
is loaded). The assertions hold under the smoke parameters and the defaults.
"""

from __future__ import annotations


import math

import pytest

from allocbias import data

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "03_decisions"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"


executed, glued, params = chapter_fixtures(STEM)


def test_runs_without_errors_or_warnings_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 2


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=40)


def test_shapes_follow_the_parameters(glued, params):
    assert glued["k"] == params["k"] and glued["rounds"] == params["rounds"]
    assert glued["n_groups"] == len(data.GROUPS) == 8
    assert glued["n_others"] == glued["n_groups"] - 1 == 7  # every group against the reference, White men
    assert glued["reference"] == data.REFERENCE_GROUP
    assert glued["n_jobs"] == len(params["jobs"])
    assert glued["n_cells"] == 7 * len(params["jobs"])
    assert glued["n_candidates"] == len(params["jobs"]) * 6 * 8 * params["names_per_group"]
    assert glued["n_rounds_all"] == params["rounds"] * len(params["jobs"]) * len(params["systems"])
    assert glued["example_job"] in params["jobs"]
    assert len(glued["example_selected"].split(" and ")) == params["k"]


def test_selection_rates_fill_k_seats(glued, params):
    assert glued["parity"] == pytest.approx(params["k"] / 8)
    assert glued["max_total_error"] < 1e-9  # the rates of a job add up to k
    assert 0.0 <= glued["phi_min"] <= glued["parity"] <= glued["phi_max"] <= 1.0
    assert 0 <= glued["n_tied_rounds"] <= glued["n_rounds_all"]
    assert glued["tie_share"] == pytest.approx(1 / 3)  # (k - m) / t with k = 2, m = 1, t = 3


def test_gaps_are_signed_rate_differences(glued, params):
    assert -1.0 <= glued["dDP_min"] <= glued["dDP_max"] <= 1.0
    assert -1.0 <= glued["dEO_min"] <= glued["dEO_max"] <= 1.0
    assert 0 <= glued["n_cells_negative"] <= glued["n_cells"]
    p = params["k"] / 8
    assert glued["dp_se"] == pytest.approx(math.sqrt(2 * p * (1 - p) * 8 / 7 / params["rounds"]))
    for key in ("r_dDP_dEO", "r_delta_dDP", "r_rabbi_dDP"):
        assert -1.0 - 1e-12 <= glued[key] <= 1.0 + 1e-12, key


def test_the_figure_1_counterpart(glued):
    assert 0 <= glued["n_sign_flips"] <= glued["n_others"]
    assert 0 <= glued["n_cell_flips"] <= glued["n_cells"]
    assert (glued["sign_flip_groups"] == "none") == (glued["n_sign_flips"] == 0)
    for group in ("male_black", "male_hispanic"):
        assert -1.0 <= glued[f"fig1_delta_{group}"] <= 1.0 and -1.0 <= glued[f"fig1_dDP_{group}"] <= 1.0
    assert abs(glued["fig1_delta_male_black"]) <= glued["delta_abs_max"]
    assert 0.0 <= glued["score_min"] <= glued["score_max"] <= 1.0
