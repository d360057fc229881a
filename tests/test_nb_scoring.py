"""Assertions on notebooks/02_scoring.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the smoke profile scores a small slice live (a fresh store under
``build/``), so the real model path runs. The assertions hold under the smoke parameters and the defaults.
"""

from __future__ import annotations

import math
import re

import pytest

from allocbias.scoring import catalog
from allocbias import data, metrics
from allocbias.scoring import items
from allocbias.scoring.systems import PRECISIONS, parse_system, systems
from allocbias.book import execute_notebook, glued_values, notebook_parameters

from .conftest import (
    ROOT,
    assert_clean_outputs,
    assert_prose_glued,
    chapter_fixtures,
    stored_pairwise_answers,
)

pytestmark = pytest.mark.notebooks

STEM = "02_scoring"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
VERDICTS = (
    "ranks weak résumés above strong ones in every job",
    "separates strong from weak résumés in some jobs and ranks them the wrong way round in others",
    "barely separates strong from weak résumés",
    "separates strong from weak résumés only moderately",
    "separates strong from weak résumés well",
)


executed, glued, params = chapter_fixtures(STEM)


def test_runs_without_errors_or_warnings_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 3


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=60)


def test_shapes_follow_the_parameters(glued, params):
    n_candidates = len(params["jobs"]) * 6 * len(params["groups"] or data.GROUPS) * params["names_per_group"]
    assert glued["n_candidates"] == n_candidates
    assert glued["n_systems"] == len(params["systems"])
    assert glued["n_rows"] == n_candidates * len(params["systems"])
    assert glued["first_system"] == params["systems"][0]
    assert glued["n_jobs"] == len(params["jobs"])
    if params["rescore"]:  # the smoke profile: every row of the slice was scored live, by the real model
        assert glued["n_scored_live"] == glued["n_rows"]
        keys = {parse_system(s).model_key for s in params["systems"] + params["pairwise_systems"]}
        assert glued["models_loaded"] == len(keys)  # one engine per model and precision, shared by both tasks
    assert glued["prov_rows"] >= n_candidates


def test_the_live_rows_are_the_committed_rows(glued, params):
    """The smoke profile scores its slice live (seed 0: the first names of the committed 10-name sample), so every
    live row is a row of the committed table, scored once more: the same prompt and, within the committed tables'
    tolerance, the same score (tests/test_committed_scores.py samples the rest)."""
    if not (params["rescore"] and params["seed"] == 0 and params["scores_root"]):
        pytest.skip("only a rescored run (the smoke profile) scores rows the committed tables hold")
    cands = data.candidate_table(params["jobs"], names_per_group=params["names_per_group"], seed=0)
    if params["groups"]:
        cands = cands[cands["group"].isin(params["groups"])]
    for system_id in params["systems"]:
        system = parse_system(system_id)
        ids = list(items.resume_pointwise_items(cands, system.wording)["prompt_id"])
        live = catalog.store_for(system, "resume_pointwise", catalog.resolve_scores_root(params["scores_root"])).read()
        committed = catalog.store_for(system, "resume_pointwise").read()
        live, committed = (t.set_index("prompt_id").loc[ids] for t in (live, committed))
        assert len(live) == len(ids) == glued["n_candidates"]
        assert (live["n_tokens"] == committed["n_tokens"]).all()
        assert (live["score"] - committed["score"]).abs().max() <= 1e-4, system_id


def test_scores_and_label_mass_are_probabilities(glued):
    assert 0.0 <= glued["score_min"] <= glued["score_mean"] <= glued["score_max"] <= 1.0
    assert 0.0 <= glued["mass_min"] <= glued["mass_p05"] <= glued["mass_median"] <= glued["mass_max"] <= 1.0
    assert 0.0 <= glued["share_low_mass"] <= 1.0
    # the worked example: score = P(Yes-forms) / label mass, and the two raw masses add up to the label mass
    assert glued["ex_raw_yes"] / glued["ex_mass"] == pytest.approx(glued["ex_score"], rel=1e-9)
    assert glued["ex_raw_yes"] + glued["ex_raw_no"] == pytest.approx(glued["ex_mass"], rel=1e-9)
    assert 0.0 <= glued["mass_group_spread"] <= 1.0
    assert {glued["mass_group_low"], glued["mass_group_high"]} <= set(data.GROUPS)


def test_label_forms(glued):
    assert glued["yes_forms"] == "'Yes', ' Yes', 'yes', ' yes'"
    assert glued["caps_yes_tokens"] == 2 and glued["caps_no_tokens"] == 1  # why all-capital forms are left out


def test_the_pairwise_rule_on_the_worked_example(glued):
    expected = {"consistent": (1.0, 0.0), "inconsistent": (0.5, 0.5), "tie": (0.5, 0.5), "mixed": (0.75, 0.25),
                "undetected": (0.5, 0.0)}
    for case, (a, b) in expected.items():
        assert (glued[f"points_{case}_a"], glued[f"points_{case}_b"]) == (a, b), case


def check_pairwise_answers(glued, params):
    """The glued pairwise numbers of one run, against the answers stored for its pools."""
    if not params["pairwise_systems"]:
        assert glued["n_pairwise_prompts"] == 0 and "no pairwise answers" in glued["pairwise_summary"]
        assert glued["pairwise_takeaway"] == "this run collected no pairwise answers"
        return
    groups = len(params["pairwise_groups"]) or len(data.GROUPS)
    per_system = 2 * math.comb(groups, 2) * params["pairwise_rounds"] * len(params["jobs"])
    assert glued["n_pairwise_prompts"] == per_system * len(params["pairwise_systems"])
    answers = stored_pairwise_answers(params)
    expected = metrics.pairwise_output_stats(answers, by=["system"]).set_index("system")
    for system in params["pairwise_systems"]:  # the summary covers every system
        key = system.replace("-", "_")
        assert glued[f"pw_regular_{key}"] + glued[f"pw_tie_{key}"] + glued[f"pw_undetected_{key}"] == pytest.approx(100.0)
        for col in ("regular", "tie", "undetected", "inconsistent", "empty"):
            assert 0.0 <= glued[f"pw_{col}_{key}"] <= 100.0, (system, col)
        for col in ("regular", "tie", "undetected", "inconsistent"):
            assert glued[f"pw_{col}_{key}"] == pytest.approx(expected.loc[system, col], abs=1e-9), (system, col)
        assert glued[f"pw_empty_{key}"] <= glued[f"pw_undetected_{key}"] + 1e-9  # an empty answer names nobody
        assert f"{system}: {expected.loc[system, 'regular']:.1f} % of its answers named a candidate" in glued["pairwise_summary"]
        assert f"{system} {expected.loc[system, 'regular']:.1f} %" in glued["pairwise_takeaway"]
    assert f"{per_system:,} per system" in glued["pairwise_summary"]


def test_pairwise_answers(glued, params):
    check_pairwise_answers(glued, params)


def test_quality_separation_is_a_rank_statistic(glued):
    assert -1.0 <= glued["sep_rabbi_job_min"] <= glued["sep_rabbi"] <= glued["sep_rabbi_job_max"] <= 1.0
    assert glued["sep_p"] == pytest.approx((1 + glued["sep_rabbi"]) / 2)
    assert 0 <= glued["n_jobs_reversed"] <= glued["n_jobs"]
    assert glued["sep_verdict"] in VERDICTS
    for q in data.QUALITIES:
        assert 0.0 <= glued[f"sep_mean_{q}"] <= 1.0
    assert glued["sd_within"] >= 0 and glued["sd_between"] >= 0


def test_systems_and_provenance(glued, params):
    assert glued["n_possible_systems"] == len(systems(precisions=PRECISIONS))
    assert glued["audited_systems"] == ", ".join(params["systems"])
    assert glued["scores_root"] == (params["scores_root"] or "data/scores")
    assert re.fullmatch(r"[0-9a-f]{12}", glued["prov_prompt_hash"])
    assert glued["n_tables"] >= 1 and glued["prov_elapsed_min"] >= 0
    assert "2 cores" in glued["prov_cpu"] or "cores" in glued["prov_cpu"]
    assert glued["prov_command"].startswith(("papermill notebooks/02_scoring.ipynb", "python scripts/score_study.py"))


@pytest.mark.slow
def test_default_parameters_reuse_the_committed_table_and_load_no_model(tmp_path):
    """With the book's settings every row comes from data/scores (skipped while a table is incomplete): the
    pointwise scores and the study-scale pairwise answers, 6,720 prompts per pairwise system."""
    defaults = notebook_parameters(SOURCE)
    assert defaults["pairwise_systems"] == ["smollm2-fp32-paper", "gemma3-fp32-paper"]
    assert defaults["pairwise_rounds"] == 30 and defaults["pairwise_groups"] == []
    chosen = [parse_system(s) for s in defaults["systems"]]
    cands = data.candidate_table(defaults["jobs"], names_per_group=10, seed=0)
    for system in chosen:
        ids = set(items.resume_pointwise_items(cands, system.wording)["prompt_id"])
        if not ids <= catalog.store_for(system, "resume_pointwise").done_ids():
            pytest.skip(f"the committed table of {system.id} does not hold every row yet: the run would score live")
    pair_items = items.resume_pairwise_items(items.pairwise_pools(cands, defaults["pairwise_rounds"], 0))
    assert len(pair_items) == 6720  # 30 pools per job x 4 jobs x 28 pairs x 2 orders (a pair in two pools: one prompt)
    pair_ids = set(pair_items["prompt_id"])
    for system in defaults["pairwise_systems"]:
        if not pair_ids <= catalog.store_for(parse_system(system), "resume_pairwise").done_ids():
            pytest.skip(f"the committed pairwise table of {system} does not hold every row yet: the run would score live")
    result = execute_notebook(SOURCE, tmp_path / "default.ipynb", {}, cwd=ROOT)
    glued = glued_values(result.output)
    assert glued["n_scored_live"] == 0 and glued["n_rows"] == len(chosen) * len(cands)
    assert glued["models_loaded"] == 0
    assert assert_clean_outputs(result.output) >= 3
    assert glued["n_pairwise_prompts"] == 6720 * len(defaults["pairwise_systems"])
    check_pairwise_answers(glued, defaults)


def test_the_essay_path_grades_every_demo_essay(glued, params):
    graded = len(params["essay_systems"]) * len(data.load_demo_essays())
    assert glued["n_essays_graded"] == (graded if params["backend"] == "local" else 0)
    assert -1.0 <= glued["sep_sys_min"] <= glued["sep_sys_max"] <= 1.0
