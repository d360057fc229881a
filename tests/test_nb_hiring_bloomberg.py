"""Assertions on notebooks/09_hiring_bloomberg.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml`` (smoke: a fresh score folder, the retail job, one race, two orderings: 4
prompts answered live by the local model, about 30 CPU seconds, which are rows of the committed table's two-ordering
pilot; a second run reads them from the folder). The assertions hold under the smoke parameters and under the
defaults (which read the committed table in data/scores).
"""

from __future__ import annotations

import pytest

from allocbias import data
from allocbias.genderbench import ANSWER_RULES
from allocbias.scoring import catalog
from allocbias.scoring.systems import parse_system
from allocbias.study.hiring_bloomberg import chapter_items

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "09_hiring_bloomberg"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
METRICS = ("masculine_rate", "disparity", "stereotype_rate", "position_effect", "undetected_rate_attempts",
           "undetected_rate_items")
BOUNDS = {"stereotype_rate": (-0.5, 0.5), "disparity": (0.0, 0.5)}
STEREO_JOBS = {"software_engineer", "financial_analyst", "retail", "hr_specialist"}


executed, glued, params = chapter_fixtures(STEM)


def _answerers(params):
    return [s.replace("-", "_") for s in params["systems"]] + [f"ref_{r}" for r in ANSWER_RULES]


def test_runs_without_errors_or_stderr(executed):
    assert assert_clean_outputs(executed[0]) >= 3


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=30)


def test_design_counts(glued, params):
    n_races = len(params["races"])
    assert set(params["races"]) <= set(data.RACES)
    assert glued["n_jobs"] == len(params["jobs"])
    assert glued["n_races"] == n_races
    assert glued["n_orderings"] == params["n_orderings"]
    assert glued["n_attempts"] == n_races * params["n_orderings"] * 2 * len(params["jobs"])
    assert glued["n_items"] * 2 == glued["n_attempts"]
    assert glued["n_slots"] == 8
    assert glued["n_live"] + glued["n_stored"] == glued["n_attempts"]
    assert 1000 < glued["tokens_min"] <= glued["tokens_median"] <= glued["tokens_max"] < 8192
    assert glued["table_seconds_per_prompt"] > 0
    # the wording is not part of a HiringBloomberg system: both wordings address the same table
    assert glued["address_paper"] == glued["address_direct"]


def test_the_live_rows_are_the_committed_rows(glued, params):
    """The smoke profile answers its slice live (seed 0, two orderings: items of the committed table's two-ordering
    pilot, whatever the jobs and races), so every live answer is a committed answer, generated once more: the same
    prompt and, greedy, the same text (tests/test_committed_scores.py samples the rest of the table)."""
    if not (params["seed"] == 0 and params["scores_root"]):
        pytest.skip("only a run with its own score folder (the smoke profile) answers rows the committed table holds")
    ids = list(chapter_items(params["n_orderings"], params["seed"], params["jobs"], params["races"])["prompt_id"])
    assert len(ids) == glued["n_attempts"]
    for system_id in params["systems"]:
        system = parse_system(system_id)
        live = catalog.store_for(system, "hiring_bloomberg", catalog.resolve_scores_root(params["scores_root"])).read()
        committed = catalog.store_for(system, "hiring_bloomberg").read()
        assert set(ids) <= set(committed["prompt_id"]), "the smoke slice asks prompts the committed table lacks"
        live, committed = (t.set_index("prompt_id").loc[ids, "answer"].fillna("") for t in (live, committed))
        assert live.tolist() == committed.tolist(), system_id


def test_rates_lie_in_their_ranges_and_intervals_contain_the_estimates(glued, params):
    checked = 0
    for who in _answerers(params):
        for metric in METRICS:
            name = f"{who}_{metric}"
            if name not in glued:
                continue
            low, high = BOUNDS.get(metric, (0.0, 1.0))
            est, lo, hi = glued[name], glued[f"{name}_low"], glued[f"{name}_high"]
            assert low <= lo <= est <= hi <= high, (name, lo, est, hi)
            assert glued[f"{name}_n_items"] >= 1
            checked += 1
    assert checked >= 4 * 5  # the four reference answerers have every metric but (in the smoke) the stereotype rate


def test_every_answerer_has_undetected_rates(glued, params):
    for who in _answerers(params):
        assert f"{who}_undetected_rate_attempts" in glued
        assert f"{who}_undetected_rate_items" in glued
        # an undetected item has both attempts undetected
        assert glued[f"{who}_undetected_rate_items"] <= glued[f"{who}_undetected_rate_attempts"] + 1e-12
    main = params["systems"][0].replace("-", "_")
    detected = glued["n_detected_attempts"]
    assert glued[f"{main}_undetected_rate_attempts"] == pytest.approx(1 - detected / glued["n_attempts"])
    assert (f"{main}_masculine_rate" in glued) == (detected > 0)


def test_reference_answerers_behave_as_designed(glued, params):
    for rule, position in (("first", 1.0), ("last", 0.0)):
        assert glued[f"ref_{rule}_masculine_rate"] == 0.5
        assert glued[f"ref_{rule}_disparity"] == 0.0
        assert glued[f"ref_{rule}_position_effect"] == position
        assert glued[f"ref_{rule}_undetected_rate_attempts"] == 0.0
    assert glued["chance_share"] == pytest.approx(1 / 8)
    rnd = glued["ref_random_masculine_rate"]
    assert glued["ref_random_masculine_rate_low"] < rnd < glued["ref_random_masculine_rate_high"]
    if STEREO_JOBS <= set(params["jobs"]):
        assert glued["ref_stereotype_stereotype_rate"] == 0.5
        assert glued["ref_stereotype_masculine_rate"] == 0.5
        assert glued["ref_first_stereotype_rate"] == 0.0
    else:
        assert "ref_stereotype_stereotype_rate" not in glued
        assert glued["stereotype_text"].startswith("undefined")


def test_answer_statistics(glued):
    # the prose ("What the model answered", "What a tiny model can and cannot show", Summary) says that the
    # 135M model names no candidate: true of the committed table and of the smoke prompts; revise both together
    assert glued["n_detected_attempts"] == 0
    assert glued["main_masculine_text"].startswith("undefined")
    assert 1 <= glued["n_distinct_answers"] <= glued["n_attempts"]
    assert 0.0 <= glued["same_answer_share"] <= 1.0
    assert 1 <= glued["top_opening_count"] <= glued["n_attempts"]
    assert 1 <= glued["n_examples_shown"] <= glued["n_attempts"]


def test_sample_size_exercise(glued):
    # 1.96^2 / (8 * 0.05^2) = 192.08 items; the simulated interval is close to +-0.05
    assert glued["ex3_n_needed"] == 193
    assert 0.035 < glued["ex3_half_width"] < 0.065
    assert glued["ex3_hours"] > 0


def test_the_loyal_answerer_exercise(glued):
    """Exercise 1's solution computes and glues the name-loyal answerer's numbers: one name per item, so the two
    attempts always agree on the name and an item's rate is 0 or 1."""
    assert glued["ex_loyal_same_name"] == 1.0 and 0 <= glued["ex_loyal_same_slot"] <= 1
    assert glued["ex_loyal_rate_values"] in (1, 2)
    assert 0 <= glued["ex_loyal_position"] <= 1
    assert 0 <= glued["ex_loyal_masculine_low"] <= glued["ex_loyal_masculine"] <= glued["ex_loyal_masculine_high"] <= 1
