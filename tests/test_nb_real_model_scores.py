"""Assertions on notebooks/11_real_model_scores.ipynb executed through papermill (smoke profile: fewer
permutations, splits and bootstrap samples; every point estimate is the same as under the default profile, so the
issue's glue keys are checked here against values computed independently from the committed tables)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from allocbias import metrics, selection, validity
from allocbias.audited import public_scores

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "11_real_model_scores"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
REQUIRED = ("lippens_n_scores", "lippens_n_pools", "lippens_min_ir_k1", "lippens_min_ir_k1_group",
            "lippens_r_rabbi_k1", "lippens_r_delta_k1", "lippens_null_r_rabbi_k1", "lippens_heldout_r_rabbi_k1",
            "lippens_gap_reliability_k1", "recinq_n_models", "recinq_n_results")

executed, glued, params = chapter_fixtures(STEM)


@pytest.fixture(scope="module")
def lippens():
    frame = public_scores.load_lippens()
    return frame, frame[frame["valid"].astype(bool)]


def test_runs_without_errors_or_stderr_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 4


def test_every_glue_reference_in_the_prose_is_glued_and_the_issue_s_keys_are_quoted(glued):
    prose = assert_prose_glued(SOURCE, glued, more_than=30)
    for name in REQUIRED:
        assert name in glued, name
        assert f"{{glue:text}}`{name}" in prose, name
    assert isinstance(glued["lippens_min_ir_k1_group"], str)
    for name in REQUIRED:
        if name != "lippens_min_ir_k1_group":
            assert isinstance(glued[name], (int, float)) and not isinstance(glued[name], bool), name


def test_counts_match_the_committed_tables(glued, lippens):
    frame, valid = lippens
    assert glued["lippens_n_scores"] == len(frame)
    assert glued["lippens_n_pools"] == valid["vacancy_id"].nunique()
    results = public_scores.load_recinq(kind="results")
    assert glued["recinq_n_results"] == len(results)
    assert glued["recinq_n_models"] == results["model"].nunique() == 11


def test_pooled_impact_ratio_matches_a_direct_count(glued, lippens):
    _, valid = lippens
    rates = selection.exact_pool_rates(valid, k=1, pool="vacancy_id", group="group", score="score")
    rate = rates.set_index("group")["rate"]
    ratio = (rate / rate[public_scores.LIPPENS_REFERENCE]).drop(public_scores.LIPPENS_REFERENCE)
    assert glued["lippens_min_ir_k1"] == pytest.approx(ratio.min())
    assert glued["lippens_min_ir_k1_group"] == ratio.idxmin()
    assert len(glued["lippens_min_ir_k1_group"].split()) >= 2  # "Origin Sex"


def test_in_sample_r_matches_the_points_computed_directly(glued, lippens):
    """RABBI and δ per (job type, group) from metrics.bias_table, ΔDP from the exact vacancy rates, then Pearson."""
    _, valid = lippens
    ref = public_scores.LIPPENS_REFERENCE
    bias = metrics.bias_table(valid, "score", "group", ref, by=["job_type"])
    gaps = selection.exact_gaps(selection.exact_pool_rates(valid, k=1, pool="vacancy_id", group="group",
                                                           score="score", by="job_type"), reference=ref)
    points = bias.merge(gaps[gaps["group"] != ref][["job_type", "group", "dDP"]], on=["job_type", "group"])
    assert len(points) == 64 * 17
    assert glued["lippens_r_rabbi_k1"] == pytest.approx(validity.pearson(points["rabbi"], points["dDP"]).r)
    assert glued["lippens_r_delta_k1"] == pytest.approx(validity.pearson(points["avg_gap"], points["dDP"]).r)


def test_controls_are_correlations_in_range_under_the_profile_s_parameters(glued, params):
    for name in ("lippens_null_r_rabbi_k1", "lippens_heldout_r_rabbi_k1", "lippens_gap_reliability_k1"):
        assert np.isfinite(glued[name]) and -1.0 <= glued[name] <= 1.0, name
    assert glued["n_perm"] == params["n_perm"] and glued["n_splits"] == params["n_splits"]


def test_the_landing_page_quotes_only_keys_this_chapter_glues(glued):
    """book/intro.md pastes this chapter's findings by cross-document glue; every key it names must exist here."""
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    refs = re.findall(rf"\{{glue:text\}}`/build/notebooks/{STEM}\.ipynb::([^`]+)`", intro)
    keys = [ref.split(":")[0] for ref in refs]
    assert len(keys) >= 8
    assert sorted(set(keys) - set(glued)) == []
    # myst-nb splits a cross-document reference at its last colon: without a format spec (":s" for text) the key
    # would be read as "<path>:" and nothing pasted
    assert [ref for ref in refs if ":" not in ref] == []
