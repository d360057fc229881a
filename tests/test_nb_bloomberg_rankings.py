"""Assertions on notebooks/10_bloomberg_rankings.ipynb executed through papermill (smoke profile: fewer
bootstrap replicates; every point estimate is the same as under the default profile, so the numbers the issue
names are checked here against values computed independently from the committed tables)."""

from __future__ import annotations

import pytest

from allocbias import rankings

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "10_bloomberg_rankings"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
REQUIRED = ("bloomberg_max_abs_diff", "bloomberg_min_impact_ratio_gpt35", "bloomberg_min_impact_ratio_gpt4",
            "bloomberg_n_answers", "bloomberg_fully_ranked_share", "bloomberg_misspelt_black_share_gpt35")

executed, glued, params = chapter_fixtures(STEM)


def test_runs_without_errors_or_stderr(executed):
    assert assert_clean_outputs(executed[0]) >= 4


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=40)


def test_the_issue_s_values_are_glued_and_match_an_independent_count(glued):
    for name in REQUIRED:
        assert name in glued, name
    answers = rankings.read_answers()
    main = answers[~answers["oversampled"]]
    parsed = main[main["parse_error"] == ""]
    assert glued["bloomberg_n_answers"] == len(parsed)
    assert glued["bloomberg_fully_ranked_share"] == pytest.approx(main["fully_ranked"].sum() / len(parsed))
    # top-1 rates by a plain count of rank-1 rows, against the published table
    ranks = rankings.read_rankings()
    top = ranks[~ranks["oversampled"] & (ranks["rank"] == 1.0)]
    n = ranks[~ranks["oversampled"]].groupby(["model", "job"])["answer_id"].nunique()
    rate = top.groupby(["model", "job", "group"]).size().div(n).rename("ours").reset_index()
    pub = rankings.read_published().merge(rate, on=["model", "job", "group"], how="left").fillna({"ours": 0.0})
    assert glued["bloomberg_max_abs_diff"] == pytest.approx((pub["ours"] - pub["selection_rate"]).abs().max())
    assert glued["bloomberg_max_abs_diff"] < 0.02  # parsing differences only
    for model, key in (("gpt-3.5-turbo", "gpt35"), ("gpt-4", "gpt4")):
        r = rate[rate["model"] == model]
        ratio = r["ours"] / r.groupby("job")["ours"].transform("max")
        assert glued[f"bloomberg_min_impact_ratio_{key}"] == pytest.approx(ratio.min())


def test_intervals_contain_estimates_and_correlations_are_bounded(glued):
    for key in ("gpt35", "gpt4"):
        assert glued[f"pos0_{key}_low"] <= glued[f"pos0_{key}"] <= glued[f"pos0_{key}_high"]
        for metric in ("masculine_rate", "stereotype_rate"):
            assert glued[f"gb_{metric}_{key}_low"] <= glued[f"gb_{metric}_{key}"] <= glued[f"gb_{metric}_{key}_high"]
        assert glued[f"gb_undetected_rate_items_{key}"] < 0.01  # large models answer the probe
    for metric in ("rabbi", "paired_rabbi", "avg_gap", "jsd", "emd"):
        assert all(-1 <= glued[f"r_{metric}_k{k}"] <= 1 for k in (1, 2, 3, 4))
    assert glued["n_validity_points"] == 2 * 4 * 7
    assert glued["position_only_max_dev"] < 0.02  # the balanced design neutralises the position effect


def test_parse_rules_reproduce_bloomberg_and_name_the_cells_that_cross(glued):
    # Bloomberg's first-occurrence rule gives their published top-1 counts in every cell
    assert glued["n_first_exact_cells"] == glued["n_published_cells"] == 64
    assert glued["first_max_count_diff"] == 0
    published = rankings.read_published()
    for model, key in (("gpt-3.5-turbo", "gpt35"), ("gpt-4", "gpt4")):
        pub = published[published["model"] == model]
        assert glued[f"n_below_{key}_published"] == int((pub["impact_ratio"] < 0.8).sum())
        assert glued[f"n_below_{key}_strict"] == glued[f"n_below_{key}"]
    assert (glued["n_below_gpt4_published"], glued["n_below_gpt4_strict"]) == (5, 4)  # the issue's counts
    assert glued["n_crossing_cells"] >= 1 and glued["crossing_cells_text"].startswith("gpt-4, ")
    # the set-aside answers by reason, counted from the committed parse errors
    answers = rankings.read_answers()
    errors = answers.loc[~answers["oversampled"] & (answers["parse_error"] != ""), "parse_error"]
    assert glued["n_unparsed_main"] == len(errors) == glued["n_not_in_prompt"] + glued["n_twice"] + glued["n_nobody"]
    assert glued["n_twice"] == int(errors.str.endswith("a second time").sum())
    assert glued["n_reconstructed_slots"] == 8 * len(errors)


def test_misspellings_and_the_glue_key(glued):
    share = glued["bloomberg_misspelt_black_share_gpt35"]
    n = glued["n_misspelt_gpt35"]
    assert 0 < share < 1 and n > 0
    assert share * n == pytest.approx(round(share * n))  # a share of whole entries
    assert glued["n_misspelt_gpt35"] + glued["n_misspelt_gpt4"] == glued["n_misspelt_matched"]
    assert glued["n_misspelt_matched"] <= glued["n_misspelt_entries"]
    assert 0 <= glued["misspelt_p_gpt35"] <= 1 and glued["misspelt_dof"] == 7
    assert glued["misspelt_uniformity_gpt35"] == rankings.uniformity_phrase(glued["misspelt_p_gpt35"])


def test_rabbi_is_delta_over_four_on_complete_rankings(glued):
    assert glued["decomp_max_err"] < 1e-12
    assert glued["decomp_max_quad"] < glued["decomp_max_rabbi"] / 10
    assert glued["r_rabbi_delta_complete"] > 0.999
    assert -1 <= glued["r_paired_vs_rabbi"] <= 1


def test_validity_controls_sit_beside_the_correlations(glued):
    from allocbias.validity import control_words, verdict_words

    # validity_controls computes the same in-sample r as the chapter's own Pearson over the points
    assert glued["vc_rabbi_k1_r"] == pytest.approx(glued["r_rabbi_k1"])
    assert glued["vc_avg_gap_k1_r"] == pytest.approx(glued["r_avg_gap_k1"])
    for metric in ("rabbi", "avg_gap"):
        for tag in ("k1", "kmid"):
            v = {k: glued[f"vc_{metric}_{tag}_{k}"] for k in ("r", "null_lo", "null_mean", "null_hi", "heldout",
                                                                 "heldout_lo", "ceiling", "verdict", "heldout_ci_lo",
                                                                 "heldout_ci_hi", "heldout_null_lo", "heldout_null_hi")}
            v["heldout_mean"] = v["heldout"]
            assert v["null_lo"] <= v["null_mean"] <= v["null_hi"]
            assert v["heldout"] <= v["r"]  # out of sample the r falls
            assert 0 <= v["ceiling"] <= 1
            assert v["verdict"] == control_words(v)["verdict"]
            # the sentences' verdict clauses are the same function's, on the same row (issue 32)
            assert glued[f"vc_{metric}_{tag}_verdict_short"] == verdict_words(v, gap="ΔDP")["short"]
            assert glued[f"vc_{metric}_{tag}_verdict_phrase"] == verdict_words(v, gap="ΔDP")["phrase"]
    assert glued["vc_ir_below_null_mean_k1"] <= glued["vc_ir_below_null_hi_k1"]


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercise 1's solution re-parses the answers at three fuzzy cutoffs (its own cutoff gives the chapter's count)
    and exercise 2's reads the position shares of the figure."""
    assert glued["ex_matched_main"] == glued["n_misspelt_matched"]
    for cutoff in ("70", "main", "90"):
        assert 0 <= glued[f"ex_black_share_{cutoff}"] <= 1 and glued[f"ex_matched_{cutoff}"] >= 0
    assert glued["ex_moved_70"] >= 0 and glued["ex_moved_90"] >= 0
    assert glued["ex_fixed_first"] == pytest.approx(glued["pos0_gpt35"])
    assert 0 <= glued["ex_fixed_ir_min"] <= glued["ex_fixed_ir_max"]
