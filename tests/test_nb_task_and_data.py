"""Assertions on notebooks/01_task_and_data.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml`` (its defaults until the profile names it); glued values are read back
with ``allocbias.book.glued_values``. The assertions hold under the smoke and the default parameters alike.
"""

from __future__ import annotations

import re

import pytest

from allocbias import data
from allocbias.audited import prompts
from allocbias.audited.names import DEFAULT_RULE
from allocbias.plotting import GROUP_ORDER

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "01_task_and_data"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"


executed, glued, params = chapter_fixtures(STEM)


def test_runs_without_errors_or_warnings_and_shows_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 3


def test_every_glue_reference_in_the_prose_is_glued(glued):
    prose = assert_prose_glued(SOURCE, glued, more_than=40)
    exercises = {"task-ex1", "task-ex2", "task-ex3", "task-ex4"}
    assert exercises <= set(re.findall(r":label: (task-ex\d)", prose))


def test_design_counts(glued, params):
    assert glued["n_jobs"] == len(data.JOBS) == 4
    assert glued["resumes_per_job"] == 6
    assert glued["n_resumes"] == 24
    assert glued["n_qualified_resumes"] == 8
    assert glued["n_groups"] == 8
    assert glued["groups"] == list(GROUP_ORDER)
    assert glued["reference_group"] == "Male White"
    assert glued["n_demo_essays"] == 30
    assert glued["icnale_reference"] == "ENS" and glued["n_icnale_l2"] == 10


def test_name_counts_and_rule(glued):
    assert set(glued["first_names_per_group"]) == set(data.GROUPS)
    assert all(n >= 100 for n in glued["first_names_per_group"].values())
    assert all(n >= 100 for n in glued["surnames_per_group"].values())
    assert all(glued["eligible_per_group"][g] >= glued["first_names_per_group"][g] for g in data.GROUPS)
    assert glued["fewest_eligible"] == min(glued["eligible_per_group"].values())
    assert glued["n_rerun_same"] == glued["n_first_total"] == 800  # the rule reproduces the committed names
    assert glued["asian_first_min"] == DEFAULT_RULE.first_race_min["Asian"]
    assert glued["black_last_min"] == DEFAULT_RULE.last_race_min["Black"]
    assert glued["sex_share_min"] == DEFAULT_RULE.sex_share_min
    assert [glued["ssa_first_year"], glued["ssa_last_year"]] == list(DEFAULT_RULE.ssa_years)
    coverage = [glued[f"coverage_{g.lower().replace(' ', '_')}"] for g in data.GROUPS]
    assert all(0.0 < c < 1.0 for c in coverage)


def test_cross_check_agreement(glued):
    for key in ("xcheck_plurality", "xcheck_share_ge_half"):
        assert set(glued[key]) == set(data.GROUPS)
        assert all(0.0 <= v <= 1.0 for v in glued[key].values())
    assert all(0 <= n <= 100 for n in glued["xcheck_covered"].values())
    # the card's caveat: Male Black agrees least with Tzioumis, and well below every other group
    assert glued["worst_group"] == "Male Black"
    assert glued["worst_plurality"] == min(glued["xcheck_plurality"].values()) < 0.5
    assert glued["plurality_others_min"] > 0.8
    assert glued["worst_covered"] == glued["xcheck_covered"]["Male Black"]
    assert 0 < glued["n_worst_disagree"] <= glued["worst_covered"]
    assert glued["surname_plurality_min"] == 1.0


def test_candidate_table_and_pools(glued, params):
    n = params["names_per_group"]
    assert glued["names_per_group"] == n
    assert glued["n_candidates"] == 4 * 6 * 8 * n
    assert glued["n_full_names_per_job"] == 8 * n
    assert glued["candidate_columns"] == list(data.CANDIDATE_COLUMNS)
    assert glued["pool_size"] == 8
    assert glued["n_pools"] == 4 * params["pool_rounds"]
    assert glued["n_pools_one_per_group"] == glued["n_pools"]


def test_rendered_resumes_and_prompts(glued, params):
    assert glued["example_name_counts"] == [1, 1, 1]  # the name occurs once in each rendered résumé
    assert glued["wording"] == params["wording"]
    for key, template in prompts.TEMPLATES.items():
        assert glued["hash_" + re.sub(r"\W", "_", key)] == prompts.prompt_hash(template)[:12]
    examples = [glued[f"hash_example_{k}"] for k in ("pointwise", "pairwise", "listwise")]
    assert all(re.fullmatch(r"[0-9a-f]{12}", h) for h in examples) and len(set(examples)) == 3
    assert glued["hb_slots"] == glued["hb_swapped_slots"] == 8
    assert glued["hb_race"] in data.RACES
    assert glued["hb_chars"] > 8 * 500  # eight rendered CVs and the ad


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercise 4's solution re-runs the name rule with the lower Asian threshold: the names it adds are new and
    belong to the two Asian groups; exercise 2's résumé names its candidate once and only the user message changes."""
    assert glued["ex_added_n"] > 0 and glued["ex_added_female"] + glued["ex_added_male"] == glued["ex_added_n"]
    assert glued["ex_name_occurrences"] == 1 and glued["ex_roles_differ"] == "user"
    assert 0 < glued["ex_worst_top_category_n"] <= glued["ex_worst_disagreeing"]
    assert glued["white_first_min"] <= glued["ex_added_share_min"] <= glued["ex_added_share_max"] < glued["asian_first_min"]
