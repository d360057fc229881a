"""Assertions on notebooks/12_audit_size.ipynb executed through papermill (smoke profile: fewer splits, bootstrap
replicates and permutations, and fewer sizes; the counts are the same as under the default profile, and the glued
reliabilities are checked here against direct calls of the library on the committed tables)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from allocbias.audited import public_scores
from allocbias.measures import reliability, selection

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "12_audit_size"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
REQUIRED = ("lippens_vacancies_for_reliability_08_k1", "lippens_pooled_gap_reliability_k1",
            "lippens_pooled_heldout_r_rabbi_k1", "lippens_pooled_heldout_r_gap_k1")

executed, glued, params = chapter_fixtures(STEM)


@pytest.fixture(scope="module")
def lippens():
    frame = public_scores.load_lippens()
    valid = frame[frame["valid"].astype(bool)].reset_index(drop=True)
    codes = valid.groupby("vacancy_id").ngroup().to_numpy()
    return valid.assign(p1=selection.pool_selection_probabilities(codes, valid["score"].to_numpy(float), [1])[0],
                        pooled="all")


def test_runs_without_errors_or_stderr_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 3


def test_every_glue_reference_in_the_prose_is_glued_and_the_issue_s_keys_are_quoted(glued):
    prose = assert_prose_glued(SOURCE, glued, more_than=40)
    for name in REQUIRED:
        assert f"{{glue:text}}`{name}" in prose, name
        assert isinstance(glued[name], float) and np.isfinite(glued[name]), name
    assert glued["n_splits"] == smoke_splits()


def smoke_splits() -> int:
    from .conftest import smoke_parameters

    return smoke_parameters(STEM)["n_splits"]


def test_counts_match_the_committed_tables(glued, lippens):
    assert glued["lippens_n_pools"] == lippens["vacancy_id"].nunique() == 1920
    assert glued["lippens_n_job_types"] == lippens["job_type"].nunique() == 64
    assert glued["lippens_n_other_groups"] == 17 and glued["lippens_pooled_points_k1"] == 17


def test_reliabilities_match_direct_calls(glued, params, lippens):
    size = max(params["lippens_sizes"])
    ref = public_scores.LIPPENS_REFERENCE
    for system, key in (("job_type", "jobtype"), ("pooled", "pooled")):
        direct = reliability.split_half_reliability(lippens, value="p1", reference=ref, system=system,
                                                    within="job_type", pool="vacancy_id", size=size,
                                                    n_splits=params["n_splits"], seed=params["seed"])
        assert glued[f"lippens_{key}_gap_reliability_k1"] == pytest.approx(direct.reliability, abs=1e-12)
    rho = glued["lippens_jobtype_gap_reliability_k1"]
    assert glued["lippens_vacancies_for_reliability_08_k1"] == pytest.approx(
        reliability.size_for_reliability(rho, size, 0.8))
    # the gap's held-out r in the forecast test is its split-half reliability on the very same splits
    if size in params["forecast_sizes"]:
        assert glued["lippens_pooled_heldout_r_gap_k1"] == pytest.approx(glued["lippens_pooled_gap_reliability_k1"],
                                                                        abs=1e-12)


def test_every_held_out_r_is_a_correlation_with_its_interval(glued):
    for key, value in glued.items():
        if re.match(r"lippens_\w+_heldout_r_\w+_k\d$", key):
            lo, hi = glued[key.replace("heldout_r", "heldout_lo")], glued[key.replace("heldout_r", "heldout_hi")]
            assert -1.0 <= lo <= hi <= 1.0, key
            assert -1.0 <= value <= 1.0, key


def test_the_chapter_follows_chapter_11_in_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert toc.index("build/notebooks/11_real_model_scores") < toc.index("build/notebooks/12_audit_size") < toc.index(
        "build/notebooks/13_why_averages_fail")


def test_ll144_planning_sizes_are_the_library_s(glued, params):
    from allocbias import ll144

    rate = params.get("ll144_rate", 0.25)
    assert glued["ll144_rate"] == rate
    n_fair = int(glued["ll144_false_flag_n"].replace(",", ""))
    n_detect = int(glued["ll144_detect_n"].replace(",", ""))
    sizes = np.arange(1, glued["ll144_search_max"] + 1)
    ffr = ll144.false_flag_rate(sizes, sizes, rate)
    det = ll144.detectable_ratio(sizes, sizes, rate)
    assert ffr[n_fair - 2] >= glued["ll144_false_flag"] and (ffr[n_fair - 1:] < glued["ll144_false_flag"]).all()
    assert det[n_detect - 2] < glued["ll144_ratio"] and (det[n_detect - 1:] >= glued["ll144_ratio"]).all()
    assert "{ref}`ll144-audit-size`" in SOURCE.read_text()


def test_the_ll144_sizes_quoted_are_rows_of_the_grid(glued, params):
    from allocbias.measures import planning

    grid = planning.ll144_size_grid([params["ll144_rate"]], [1], search_max=params["ll144_search_max"])
    row = grid.iloc[0]
    assert glued["ll144_false_flag_n"] == f"{int(row['false_flag_n']):,}"
    assert glued["ll144_detect_n"] == f"{int(row['detect_n']):,}"
    low = min(params["ll144_rates"])
    assert glued["ll144_low_rate"] == f"{low:.0%}"
    assert glued[f"ll144_false_flag_n_r{round(100 * low):g}_c1"] == glued["ll144_low_rate_false_flag_n"]


def test_the_shipped_reliability_is_the_chapter_s_computation(lippens):
    """allocbias plan's Lippens job-type reliability, recomputed from the committed table at the splits and seed the
    shipped table records (the chapter compares all of them at the default profile: its shipped_phrase)."""
    from allocbias.measures import planning

    shipped = planning.measured_reliability().loc["lippens-job-type"]
    direct = reliability.split_half_reliability(lippens, value="p1", reference=public_scores.LIPPENS_REFERENCE,
                                                system="job_type", within="job_type", pool="vacancy_id",
                                                size=int(shipped["size per half"]), n_splits=int(shipped["n_splits"]),
                                                seed=int(shipped["seed"]))
    assert shipped["reliability"] == direct.reliability
    assert shipped["lo"] == direct.lo and shipped["hi"] == direct.hi


def test_the_solutions_compute_and_glue_their_answers(glued, params):
    """Exercise 1 computes the sizes for 0.9 with size_for_reliability, exercise 3 the impact ratio's split-half
    reliability at the pooled level (reliability.split_half_reliability with contrast="ratio"): with one system the
    reference's rate is one number per half, so the ratio correlates between the halves exactly as the gap does."""
    assert glued["ex_size_factor"] == pytest.approx(2.25)
    assert 0 <= glued["ex_size_09_levels"] <= 3
    if glued["ex_size_09_levels"]:
        assert 0 < glued["ex_size_09_min"] <= glued["ex_size_09_max"]
    assert glued["ex_ir_size"] == max(params["lippens_sizes"])
    assert glued["ex_ir_gap_reliability"] == pytest.approx(glued["lippens_pooled_gap_reliability_k1"])
    assert glued["ex_ir_reliability"] == pytest.approx(glued["ex_ir_gap_reliability"])
    assert glued["ex_ir_reliability_lo"] <= glued["ex_ir_reliability"] <= glued["ex_ir_reliability_hi"]
