"""allocbias.study.task_and_data: the helpers on small hand-made cases, the figures on a tiny synthetic findings
object, parameter errors, and the findings function once on the committed data (it reads no score table: the
design, the names and the prompts are fixed files of the project)."""

from __future__ import annotations

import doctest
import re

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from allocbias import data  # noqa: E402
from allocbias.audited import prompts  # noqa: E402
from allocbias.audited.names import DEFAULT_RULE  # noqa: E402
from allocbias.plotting import GROUP_ORDER  # noqa: E402
from .conftest import ROOT, markdown_text  # noqa: E402
from allocbias.study import task_and_data as td  # noqa: E402

#: The keys the chapter glues (its prose quotes them).
CHAPTER_KEYS = {
    "n_jobs", "job_titles", "resumes_per_job", "n_resumes", "n_qualified_resumes", "n_groups", "groups",
    "reference_group", "n_ellipse_essays", "n_ellipse_study", "n_ellipse_prompts", "ellipse_groups",
    "ellipse_reference", "n_demo_essays", "demo_groups", "icnale_reference", "icnale_l2", "n_icnale_l2",
    "ssa_first_year", "ssa_last_year", "ssa_min_births", "sex_share_min", "max_frequency_ratio", "n_first", "n_last",
    "asian_first_min", "black_last_min", "white_last_min", "white_first_min", "n_first_total", "n_rerun_same",
    "first_names_per_group", "surnames_per_group", "eligible_per_group", "fewest_eligible_group", "fewest_eligible",
    "min_first_names", "sample_per_group", "xcheck_plurality", "xcheck_share_ge_half", "xcheck_covered",
    "worst_group", "worst_plurality", "worst_covered", "worst_mean_share", "female_black_covered",
    "plurality_others_min", "surname_plurality_min", "n_worst_disagree", "job_title", "ad_words", "n_key_skills",
    "high_min_years", "low_max_years", "example_name", "example_name_counts", "names_per_group", "n_candidates",
    "n_full_names_per_job", "candidate_columns", "pool_rounds", "pool_size", "n_pools", "n_pools_one_per_group",
    "resume_labels", "wording", "pair_a", "pair_b", "hb_race", "hb_slots", "hb_swapped_slots", "hb_chars",
    "hash_example_pointwise", "hash_example_pairwise", "hash_example_listwise",
    *(f"coverage_{td.group_slug(g)}" for g in data.GROUPS),
    *("hash_" + re.sub(r"\W", "_", k) for k in prompts.TEMPLATES),
}


def test_module_doctests():
    result = doctest.testmod(td, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


def test_text_helpers():
    assert td.group_slug("Female Hispanic") == "female_hispanic"
    assert td.fenced("system", "a\nb") == "**system**\n\n```text\na\nb\n```"
    assert td.elide_ad("X AD Y AD", "AD", "Job") == "X [job ad of 'Job': 2 characters] Y [job ad of 'Job': 2 characters]"
    assert td.elide_ad("no ad here", "ZZZ", "Job") == "no ad here"


# ----------------------------------------------------------------------------------------------------------------
# a tiny synthetic findings object for the figures and the styled table
# ----------------------------------------------------------------------------------------------------------------
def tiny_findings() -> td.TaskAndDataFindings:
    order = list(GROUP_ORDER)
    first = pd.DataFrame([{"group": g, "name": f"N{g[:3]}{r}", "rank": r, "race_share": 0.85 + 0.01 * r,
                           "frequency": 0.01 / r, "xcheck_share": 0.4 + 0.1 * r} for g in order for r in (1, 2, 3)])
    check = pd.DataFrame({"group": order, "n": 3, "covered": [3, 2] * 4})
    groups = pd.DataFrame({"group": order, "gender": [g.split()[0] for g in order],
                           "race": [g.split()[1] for g in order], "reference": [g == "Male White" for g in order]})
    empty = pd.DataFrame()
    return td.TaskAndDataFindings(
        groups=groups, demo_essays=empty, thresholds=empty, names_summary=empty, name_sample=empty,
        cross_check=check, worst_tzioumis=empty, jobs=empty, resumes=empty, candidates=empty, pool_members=empty,
        hb_item=empty, hashes=empty, first_names=first, texts={}, names=first, sources=None, rule=DEFAULT_RULE,
        job=None, examples={}, example_name="", values={"n_jobs": 4, "worst_group": "Male Black"})


@pytest.mark.parametrize("draw", [td.figure_race_shares, td.figure_name_frequency, td.figure_tzioumis_shares])
def test_figures_have_titled_labelled_axes(draw):
    fig = draw(tiny_findings())
    assert isinstance(fig, matplotlib.figure.Figure)
    for ax in fig.axes:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    matplotlib.pyplot.close(fig)


def test_tzioumis_figure_names_the_coverage_in_its_ticks():
    fig = td.figure_tzioumis_shares(tiny_findings())
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[0] == "Male White (3/3 found)" and labels[1] == "Female White (2/3 found)"
    matplotlib.pyplot.close(fig)


def test_groups_styler_colours_every_group():
    html = td.groups_styler(tiny_findings()).to_html()
    assert html.count("background-color: #") == len(GROUP_ORDER)


def test_glue_values_is_a_copy_of_the_values():
    f = tiny_findings()
    values = f.glue_values()
    assert values == f.values and values is not f.values


# ----------------------------------------------------------------------------------------------------------------
# parameter errors
# ----------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, name", [
    ({"names_per_group": 0}, "names_per_group"), ({"seed": -1}, "seed"), ({"sample_per_group": 1.5}, "sample_per_group"),
    ({"pool_rounds": 0}, "pool_rounds"), ({"wording": "chatty"}, "wording"), ({"job": "astronaut"}, "job"),
])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        td.task_and_data_findings(**kwargs)


# ----------------------------------------------------------------------------------------------------------------
# the findings on the committed data (about 20 seconds: it re-runs the name rule)
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def findings():
    return td.task_and_data_findings(names_per_group=2, seed=1, sample_per_group=3, job="retail", wording="direct",
                                     pool_rounds=2)


def test_glue_values_have_the_chapter_keys_and_plain_types(findings):
    values = findings.glue_values()
    assert set(values) == CHAPTER_KEYS
    for key, value in values.items():
        assert type(value) in (int, float, str, list, dict), (key, type(value))
        if isinstance(value, dict):
            assert all(type(v) in (int, float) for v in value.values()), key


def test_findings_follow_the_parameters(findings):
    v = findings.glue_values()
    assert v["n_candidates"] == len(findings.candidates) == 4 * 6 * 8 * 2
    assert v["n_pools"] == 4 * 2 and v["n_pools_one_per_group"] == v["n_pools"] and v["pool_size"] == 8
    assert list(findings.pool_members.columns) == ["group", "round 0", "round 1"]
    assert len(findings.name_sample) == 3 * 8
    assert v["wording"] == "direct" and v["job_title"] == findings.job.title
    assert v["n_rerun_same"] == v["n_first_total"]
    assert findings.texts["ad_excerpt"].endswith("more paragraphs]")
    examples = [v[f"hash_example_{k}"] for k in ("pointwise", "pairwise", "listwise")]
    assert all(re.fullmatch(r"[0-9a-f]{12}", h) for h in examples) and len(set(examples)) == 3


def test_the_essay_data_the_book_grades_is_ellipse(findings):
    """Issue 39 item 5: chapter 1 names the essays the book uses (ELLIPSE, chapter 16), not ICNALE or the demo set."""
    v = findings.glue_values()
    assert (v["n_ellipse_essays"], v["n_ellipse_study"]) == (2571, 1000) and v["n_ellipse_prompts"] > 30
    assert v["ellipse_reference"] == "White" and "Black/African American" in v["ellipse_groups"]
    prose = markdown_text(ROOT / "notebooks" / "01_task_and_data.ipynb")
    overview = prose.split("## Overview", 1)[1].split("##", 1)[0]
    assert "ELLIPSE" in overview and "ICNALE" not in overview
    assert "the book does not use it" in prose


def test_the_exercises_answers_are_not_handed_over():
    """Exercise 4's names are found by its solution with names.select_first_names and dataclasses.replace."""
    assert not hasattr(td, "names_added_at_threshold")
