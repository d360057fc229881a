"""allocbias.study.scoring_checks: the phrases and the points rule on hand-computed cases, and the findings function
on a small synthetic scores table (passed as a frame: no score table is read and no model is loaded)."""

from __future__ import annotations

import doctest

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from allocbias import data  # noqa: E402
from allocbias.study import scoring_checks as sc  # noqa: E402

SYSTEM = "smollm2-fp32-paper"
#: The keys the chapter glues without pairwise systems (with them, pw_<stat>_<system> keys join).
CHAPTER_KEYS = {
    "resume_labels", "caps_yes_tokens", "caps_no_tokens", "yes_forms", "n_scored_live", "scoring_seconds",
    "first_system", "n_systems", "n_candidates", "n_rows", "score_min", "score_max", "score_mean", "first_score_min",
    "first_score_max", "ex_raw_yes", "ex_raw_no", "ex_mass", "ex_score", "low_mass", "mass_median", "mass_p05",
    "mass_min", "mass_max", "share_low_mass", "mass_group_low", "mass_group_high", "mass_group_spread",
    *(f"points_{c}_{s}" for c in ("consistent", "inconsistent", "tie", "mixed", "undetected") for s in "ab"),
    "pairwise_summary", "pairwise_takeaway", "n_pairwise_prompts", "models_loaded", "smollm2_description",
    "n_possible_systems", "precisions", "wordings", "audited_systems", "n_tables", "scores_root", "prov_rows",
    "prov_elapsed_min", "prov_per_prompt", "prov_created", "prov_cpu", "prov_versions", "prov_prompt_hash",
    "prov_command", "prov_command_md", "sd_within", "sd_between", "spread_statement", "order_statement",
    "sep_mean_high", "sep_mean_medium", "sep_mean_low", "sep_rabbi", "sep_p", "sep_rabbi_job_min",
    "sep_rabbi_job_max", "sep_job_min", "sep_job_max", "n_jobs_reversed", "n_jobs", "sep_verdict", "sep_sys_min",
    "sep_sys_min_system", "sep_sys_max", "sep_sys_max_system", "essay_status", "n_essays_graded",
}


def test_module_doctests():
    result = doctest.testmod(sc, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


# ----------------------------------------------------------------------------------------------------------------
# phrases
# ----------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p, verdict", [
    ((0.3, 0.2, 0.45), "ranks weak résumés above strong ones in every job"),
    ((0.6, 0.4, 0.7), "separates strong from weak résumés in some jobs and ranks them the wrong way round in others"),
    ((0.55, 0.4, 0.6), "barely separates strong from weak résumés"),
    ((0.7, 0.6, 0.8), "separates strong from weak résumés only moderately"),
    ((0.9, 0.85, 0.95), "separates strong from weak résumés well"),
])
def test_separation_verdict(p, verdict):
    assert sc.separation_verdict(*p) == verdict


def test_spread_and_order_statements():
    assert sc.spread_statement(0.31, 0.1).startswith("the score depends far more on the résumé")
    assert sc.spread_statement(0.3, 0.1).startswith("the name moves the score")  # exactly three times: not more
    assert "expected order" in sc.order_statement({"high": 3, "medium": 2, "low": 1})
    assert "not in the order" in sc.order_statement({"high": 3, "medium": 3, "low": 1})


def stats_frame(regular=(13.2, 0.0), first=(92.0, np.nan)) -> pd.DataFrame:
    return pd.DataFrame({"n_prompts": [6, 6], "n_pairs": [3, 3], "regular": list(regular), "tie": [0.0, 0.0],
                         "undetected": [100 - r for r in regular], "inconsistent": [20.0, 0.0],
                         "empty answers": [50.0, 0.0], "first-shown of named": list(first)}, index=["m1", "m2"])


def test_pairwise_summary_and_takeaway():
    summary = sc.pairwise_summary(stats_frame(), n_answers=12, rounds=1, pool_size=3, n_jobs=1, distinct=6)
    assert summary.startswith("This run has 12 answers, 6 per system (3 pairs from 1 pool per job of 3 candidates, 1 job,")
    assert "m1: 13.2 % of its answers named a candidate" in summary
    assert "92.0 % of its answers that name someone name the candidate shown first." in summary
    assert "m2: 0.0 % of its answers named a candidate" in summary and summary.endswith("two orders.")
    assert "no pairwise answers" in sc.pairwise_summary(None)
    takeaway = sc.pairwise_takeaway(stats_frame())
    assert takeaway.startswith("the share of answers that name a candidate is m1 13.2 %, m2 0.0 %, so the pairwise")
    # one system names someone in most answers and not mostly the first shown: no format warning
    assert sc.pairwise_takeaway(stats_frame(regular=(13.2, 80.0), first=(92.0, 50.0))).endswith("m2 80.0 %")


def test_essay_status():
    graded = pd.DataFrame({"system": ["s"] * 4, "rating": [1, 2, 3, 4], "score": [2.0, 2.5, 2.4, 3.0],
                           "label_mass": [0.001, 0.002, 0.003, 0.004]})
    text = sc.essay_status(graded, system="s", n_essays=4, n_systems=1)
    assert text.startswith("1 system graded the 4 demo essays. For s, the Spearman correlation")
    assert "is 0.80;" in text and "from 2.00 to 3.00" in text and "is 0.0025," in text
    assert sc.essay_status(None).startswith("This run grades no essays")


def test_pairwise_rule_hands_out_at_most_one_point_per_pair():
    rule = sc.pairwise_rule_table().set_index("pair")
    assert rule.loc["consistent win", ["points to a", "points to b"]].tolist() == [1.0, 0.0]
    assert rule.loc["inconsistent orders", ["points to a", "points to b"]].tolist() == [0.5, 0.5]
    assert rule.loc["a win and a tie", ["points to a", "points to b"]].tolist() == [0.75, 0.25]
    assert rule.loc["no answer", ["points to a", "points to b"]].tolist() == [0.0, 0.0]
    assert ((rule["points to a"] + rule["points to b"]) <= 1.0).all()


# ----------------------------------------------------------------------------------------------------------------
# the findings on a synthetic scores table
# ----------------------------------------------------------------------------------------------------------------
QUALITY_SCORE = {"high": 0.8, "medium": 0.5, "low": 0.2}


def synthetic_scores() -> pd.DataFrame:
    """One system's scores of the retail candidates (one name per group): the quality sets the score, the group
    adds a small step, so high > medium > low everywhere and the résumé moves the score far more than the name."""
    cands = data.candidate_table(["retail"], names_per_group=1, seed=0)
    step = {g: 0.005 * i for i, g in enumerate(data.GROUPS)}
    score = cands["quality"].map(QUALITY_SCORE) + cands["group"].map(step)
    mass = 0.5 + cands["group"].map(step)
    return cands.assign(system=SYSTEM, score=score, label_mass=mass, p_Yes=score, p_No=1 - score)


def provenance() -> pd.DataFrame:
    return pd.DataFrame([{"table": "t1", "kind": "resume_pointwise", "system": SYSTEM, "model_key": "m",
                          "prompt_hash": "0123456789ab", "params": "{}", "rows": 48, "elapsed_s": 120.0,
                          "created_utc": "2026-01-02T03:04:05", "updated_utc": "", "torch": "2", "transformers": "4",
                          "allocbias": "0.1", "cpu": "CPU", "cpu_count": 2, "gpu": "", "command": "cmd"}])


@pytest.fixture(scope="module")
def findings():
    return sc.scoring_checks_findings(systems=[SYSTEM], jobs=["retail"], names_per_group=1,
                                      scores=synthetic_scores(), provenance=provenance())


def test_glue_values_have_the_chapter_keys_and_plain_types(findings):
    values = findings.glue_values()
    assert set(values) == CHAPTER_KEYS
    for key, value in values.items():
        if key != "prov_command_md":
            assert type(value) in (int, float, str), (key, type(value))
    assert values["prov_command_md"].data == "`cmd`"


def test_findings_on_synthetic_scores_are_hand_computable(findings):
    v = findings.glue_values()
    assert v["n_rows"] == v["n_candidates"] == 6 * 8 and v["n_systems"] == 1 and v["first_system"] == SYSTEM
    assert v["n_scored_live"] == 0 and v["models_loaded"] == 0 and v["n_pairwise_prompts"] == 0
    assert v["sep_rabbi"] == 1.0 and v["sep_p"] == 1.0 and v["n_jobs_reversed"] == 0 and v["n_jobs"] == 1
    assert v["sep_verdict"] == "separates strong from weak résumés well"
    assert v["order_statement"] == "the mean scores come in the expected order, high above medium above low"
    assert v["spread_statement"] == "the score depends far more on the résumé than on the name"
    assert v["mass_group_low"] == data.GROUPS[0] and v["mass_group_high"] == data.GROUPS[-1]
    assert v["mass_group_spread"] == pytest.approx(0.005 * 7)
    assert v["ex_raw_yes"] + v["ex_raw_no"] == pytest.approx(v["ex_mass"])
    assert v["prov_elapsed_min"] == 2.0 and v["prov_per_prompt"] == 2.5 and v["prov_created"] == "2026-01-02"
    assert v["prov_cpu"] == "CPU (2 cores, GPU: none)" and v["scores_root"] == "data/scores"
    assert v["yes_forms"] == "'Yes', ' Yes', 'yes', ' yes'"
    assert v["pairwise_takeaway"] == "this run collected no pairwise answers"
    assert findings.pairwise_stats is None and findings.essays is None
    assert list(findings.separation_view.columns) == ["system", "job", "high vs low", "high vs medium",
                                                      "medium vs low"]


@pytest.mark.parametrize("draw", [sc.figure_label_mass, sc.figure_scores, sc.figure_resume_means])
def test_figures_have_titles_and_labels(findings, draw):
    fig = draw(findings)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert fig.axes[0].get_title() and fig.axes[0].get_xlabel() and fig.axes[0].get_ylabel()
    matplotlib.pyplot.close(fig)


def test_essay_figure_is_none_without_essays(findings):
    assert sc.figure_essays(findings) is None


@pytest.mark.parametrize("kwargs, name", [
    ({"backend": "grpc"}, "backend"), ({"backend": "openai"}, "model"),
    ({"pairwise_systems": [SYSTEM], "pairwise_rounds": 0}, "pairwise_rounds"),
    ({"pairwise_groups": ["Male White"]}, "pairwise_groups"), ({"rescore": True}, "live_scoring"),
    ({"low_mass": 2.0}, "low_mass"), ({"seed": -1}, "seed"), ({"names_per_group": 0}, "names_per_group"),
    ({"groups": ["Male Martian"]}, "groups: unknown group"), ({"groups": ["Male White"] * 2}, "groups names a group twice"),
])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        sc.scoring_checks_findings(**{"systems": [SYSTEM], "jobs": ["retail"], **kwargs})
