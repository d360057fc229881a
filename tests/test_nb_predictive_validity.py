"""Assertions on notebooks/04_predictive_validity.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the glued values are read back with ``allocbias.book.glued_values``.
The parameters checked against are the notebook's defaults updated with what papermill injected (recorded in
the executed copy), so the assertions hold for any profile and any score tables: they test relations (shapes,
ranges, consistency of the glued words with the glued numbers), never the direction of a result.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from allocbias import data, selection
from allocbias.plotting import METRIC_SHORT as SHORT

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_run_fixtures, code_cells_by_place

pytestmark = pytest.mark.notebooks

STEM = "04_predictive_validity"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")
# Chen, Ji, Evans (2024), Table 1: (task, setting, metric, gap) -> (r, asterisk: p > 0.01)
PAPER_TABLE1 = {
    ("resume screening", "pointwise", "jsd", "dDP"): (-0.19, False),
    ("resume screening", "pointwise", "jsd", "dEO"): (0.48, False),
    ("resume screening", "pointwise", "emd", "dDP"): (-0.09, True),
    ("resume screening", "pointwise", "emd", "dEO"): (-0.06, True),
    ("resume screening", "pointwise", "avg_gap", "dDP"): (0.13, True),
    ("resume screening", "pointwise", "avg_gap", "dEO"): (-0.02, True),
    ("resume screening", "pointwise", "rabbi", "dDP"): (0.86, False),
    ("resume screening", "pointwise", "rabbi", "dEO"): (0.88, False),
    ("resume screening", "pairwise", "avg_gap", "dDP"): (0.85, False),
    ("resume screening", "pairwise", "avg_gap", "dEO"): (0.68, False),
    ("resume screening", "pairwise", "rabbi", "dDP"): (0.86, False),
    ("resume screening", "pairwise", "rabbi", "dEO"): (0.90, False),
    ("essay grading", "pointwise", "jsd", "dDP"): (0.79, False),
    ("essay grading", "pointwise", "jsd", "dEO"): (-0.19, True),
    ("essay grading", "pointwise", "emd", "dDP"): (0.86, False),
    ("essay grading", "pointwise", "emd", "dEO"): (0.48, False),
    ("essay grading", "pointwise", "avg_gap", "dDP"): (0.89, False),
    ("essay grading", "pointwise", "avg_gap", "dEO"): (0.70, False),
    ("essay grading", "pointwise", "rabbi", "dDP"): (0.94, False),
    ("essay grading", "pointwise", "rabbi", "dEO"): (0.89, False),
    ("essay grading", "pairwise", "avg_gap", "dDP"): (0.84, False),
    ("essay grading", "pairwise", "avg_gap", "dEO"): (0.64, False),
    ("essay grading", "pairwise", "rabbi", "dDP"): (0.85, False),
    ("essay grading", "pairwise", "rabbi", "dEO"): (0.74, False),
}


executed, glued, nb, params = chapter_run_fixtures(STEM)


def _shown(r: float, table: str) -> bool:
    """Whether ``r`` is in a table's HTML to two decimals, with a hyphen or with the true minus the book's tables use."""
    text = f"{r:.2f}"
    return text in table or text.replace("-", "−") in table


def _outputs_text(nb) -> list[str]:
    texts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            bundle = out.get("data", {})
            texts.append("".join(bundle.get("text/html", bundle.get("text/plain", ""))))
    return texts


def test_the_paper_file_copies_table_1():
    table = pd.read_csv(data.data_dir() / "paper" / "rabbi_table1.csv")
    assert list(table.columns) == ["task", "setting", "metric", "gap", "r", "p_gt_001", "source"]
    got = {(t.task, t.setting, t.metric, t.gap): (t.r, bool(t.p_gt_001)) for t in table.itertuples()}
    assert got == PAPER_TABLE1
    assert set(table["source"]) == {"Chen, Ji, Evans 2024, Table 1"}


def test_runs_without_errors_or_warnings_and_shows_its_figures(nb):
    assert assert_clean_outputs(nb) >= 3  # the two Figure 2 counterparts and the per-system view


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=60)


def test_shapes_follow_the_parameters(glued, params):
    n_systems, n_jobs = len(params["systems"]), len(params["jobs"])
    assert glued["k"] == params["k"] and glued["rounds"] == params["rounds"]
    assert glued["names_per_group"] == params["names_per_group"]
    assert glued["n_systems"] == n_systems and glued["n_jobs"] == n_jobs
    assert glued["n_groups"] == len(data.GROUPS) == 8 and glued["n_others"] == 7
    assert glued["reference"] == data.REFERENCE_GROUP
    # one point per (system, job, non-reference group), and every correlation uses all of them
    assert glued["n_points"] == n_systems * n_jobs * 7
    assert glued["n_correlated_min"] == glued["n_correlated_max"] == glued["n_points"]
    assert glued["n_resumes"] == 6
    assert glued["n_candidates"] == n_jobs * 6 * 8 * params["names_per_group"]
    assert glued["n_rows"] == glued["n_candidates"] * n_systems
    assert glued["qualified_share"] == pytest.approx(2 / 6)
    assert glued["paper_points"] == 10 * 4 * 7
    assert glued["n_sys_points"] == n_jobs * 7
    assert glued["n_loo_points"] == glued["n_points"] - n_jobs * 7


def test_correlations_are_correlations(glued):
    for metric in METRICS:
        for gap in GAPS:
            r, p = glued[f"r_{metric}_{gap}"], glued[f"p_{metric}_{gap}"]
            assert -1.0 <= r <= 1.0 and 0.0 <= p <= 1.0
            assert glued[f"ci_low_{metric}_{gap}"] <= r <= glued[f"ci_high_{metric}_{gap}"]
    for key in ("sys_r_rabbi", "sys_r_avg", "loo_rabbi_dDP", "loo_rabbi_dEO", "loo_avg_gap_dDP", "loo_avg_gap_dEO"):
        assert -1.0 <= glued[f"{key}_min"] <= glued[f"{key}_max"] <= 1.0, key
    n_systems = glued["n_systems"]
    for key in ("n_sys_rabbi_higher", "n_loo_rabbi_higher_dDP", "n_loo_rabbi_higher_dEO"):
        assert 0 <= glued[key] <= n_systems


def test_words_follow_the_numbers(glued):
    for gap in GAPS:
        r = {m: glued[f"r_{m}_{gap}"] for m in METRICS}
        assert glued[f"best_{gap}"] == SHORT[max(r, key=r.get)]
        expected = "higher than" if r["rabbi"] > r["avg_gap"] else "lower than" if r["rabbi"] < r["avg_gap"] else "equal to"
        assert glued[f"rabbi_vs_avg_{gap}"] == expected
        lo = {m: glued[f"ci_low_{m}_{gap}"] for m in ("rabbi", "avg_gap")}
        hi = {m: glued[f"ci_high_{m}_{gap}"] for m in ("rabbi", "avg_gap")}
        apart = lo["rabbi"] > hi["avg_gap"] or lo["avg_gap"] > hi["rabbi"]
        assert glued[f"ci_overlap_{gap}"] == ("do not overlap" if apart else "overlap")
    rabbi_top = all(glued[f"best_{gap}"] == "RABBI" for gap in GAPS)
    assert glued["order_sentence"].startswith("As in the paper") == rabbi_top


def test_the_paper_comparison_shows_both_columns(glued, nb):
    for (task, setting, metric, gap), (r, _) in PAPER_TABLE1.items():
        if task == "resume screening" and setting == "pointwise":
            assert glued[f"paper_r_{metric}_{gap}"] == r
    assert glued["n_compared"] == 8
    assert glued["n_paper_ns"] == 4  # the asterisks of the resume pointwise rows
    for key in ("n_same_sign", "n_paper_in_ci", "n_ours_ns"):
        assert 0 <= glued[key] <= glued["n_compared"], key
    tables = [t for t in _outputs_text(nb) if "paper r" in t and "ours r" in t and "JSD" in t]
    assert len(tables) == 1, "one table shows the paper's pointwise r and ours side by side"
    assert "Chen, Ji, Evans 2024, Table 1" in tables[0]


def test_the_pairwise_half(glued, nb, params):
    jobs, rounds = params["jobs"], params["pairwise_rounds"]
    assert glued["pw_pairs"] == 28 and glued["pw_rounds"] == rounds and glued["pw_jobs"] == len(jobs)
    assert glued["pw_generations"] == rounds * len(jobs) * 28 * 2
    assert glued["n_paper_pairwise"] == 8
    for (task, setting, metric, gap), (r, _) in PAPER_TABLE1.items():
        if setting == "pairwise":
            assert glued[f"paper_pair_r_{task.split()[0]}_{metric}_{gap}"] == r
    kept = glued["pw_n_kept"]
    assert 0 <= kept <= glued["pw_n_systems"] == len(params["pairwise_systems"])
    assert glued["pw_dp_se"] == pytest.approx(selection.dp_standard_error(params["k"], 8, max(rounds, 1)))
    side_by_side = [t for t in _outputs_text(nb) if "paper r" in t and "ours r" in t]
    assert len(side_by_side) == 2, "pointwise and pairwise tables show the paper's r and ours"
    assert sum("ours n" in t for t in side_by_side) == 1  # the pairwise one, with the points behind each r
    if kept:
        assert glued["pw_n_points"] == kept * len(jobs) * 7
        for metric in ("rabbi", "avg_gap"):
            for gap in GAPS:
                assert glued[f"pw_ci_low_{metric}_{gap}"] <= glued[f"pw_r_{metric}_{gap}"] <= glued[f"pw_ci_high_{metric}_{gap}"]
        assert 0.0 <= glued["pw_consistent_share"] <= 1.0 and 0.0 <= glued["pw_avg_gap_max"] <= 1.0
        assert 0 <= glued["pw_n_gap_zero"] <= glued["pw_n_points"]
        assert 0.0 <= glued["pw_n_undefined_max"] <= glued["pw_n_points"]
        assert glued["pw_kept"] in glued["pw_summary"]
    else:
        assert glued["pw_n_points"] == 0 and glued["pw_kept"] == "none"


def test_points_and_separation_are_in_range(glued):
    n = glued["n_points"]
    assert 0 <= glued["n_flip_rabbi"] <= n and 0 <= glued["n_flip_avg_gap"] <= n
    assert 0.0 <= glued["small_gap_abs_dDP_max"] <= glued["abs_dDP_max"] <= 1.0
    # the mean over (system, job) cells is the mean of the per-system means (every system has every job)
    assert -1.0 <= glued["sep_min"] <= glued["sep_max"] <= 1.0
    assert glued["sep_min"] - 1e-12 <= glued["sep_mean"] <= glued["sep_max"] + 1e-12
    assert glued["p_better_min"] == pytest.approx((1 + glued["sep_min"]) / 2)
    assert glued["p_better_max"] == pytest.approx((1 + glued["sep_max"]) / 2)


def test_noise_and_attenuation(glued, params):
    p = params["k"] / 8
    assert glued["dp_se"] == pytest.approx(math.sqrt(2 * p * (1 - p) * 8 / 7 / params["rounds"]))
    assert 0.0 <= glued["noise_share"] <= 1.0
    assert glued["attenuation"] == pytest.approx(math.sqrt(1 - glued["noise_share"]))
    assert glued["sd_dDP"] >= 0.0


def test_systems_named_in_the_prose_are_audited(glued, params):
    for key in ("sep_min_system", "sep_max_system", "loo_most_influential"):
        assert glued[key] in params["systems"], key


def test_table_1_both_ways(glued, nb):
    """The paper's text and its released code: JSD and the pairwise delta computed both ways, next to the paper."""
    assert glued["jsd_text_disjoint"] == 1.0 and glued["jsd_code_disjoint"] == 0.0
    assert -1.0 <= glued["jsd_text_code_r"] <= 1.0
    kept = glued["pw_n_kept"] > 0
    for gap in GAPS:
        assert -1.0 <= glued[f"r_code_jsd_{gap}"] <= 1.0
        if kept:
            assert -1.0 <= glued[f"pw_r_code_avg_gap_{gap}"] <= 1.0
        else:
            assert math.isnan(glued[f"pw_r_code_avg_gap_{gap}"])
    assert glued["n_code_rows"] == (4 if kept else 2)
    assert 0 <= glued["n_code_closer"] <= glued["n_code_rows"]
    assert 0 <= glued["n_code_sign_flips"] <= glued["n_code_rows"]
    tables = [t for t in _outputs_text(nb) if "ours, text" in t and "ours, code" in t]
    assert len(tables) == 1, "one table shows Table 1 both ways"
    # the text's column is the chapter's Table 1 (the default variant), the code's column differs in the JSD rows
    for metric in METRICS:
        for gap in GAPS:
            assert _shown(glued[f"r_{metric}_{gap}"], tables[0])
    for gap in GAPS:
        assert _shown(glued[f"r_code_jsd_{gap}"], tables[0])
    assert tables[0].count("differ") == 4  # JSD and the pairwise delta, against each gap


def test_within_system_and_bootstrap_glue_is_consistent(glued):
    metrics_ = ("rabbi", "avg_gap", "jsd", "emd")
    for metric in metrics_:
        for gap in GAPS:
            for key in ("dec_med", "dec_centred"):
                assert -1.0 <= glued[f"{key}_{metric}_{gap}"] <= 1.0
            for who in ("nb", "sb"):
                assert -1.0 <= glued[f"{who}_lo_{metric}_{gap}"] <= glued[f"{who}_hi_{metric}_{gap}"] <= 1.0
                assert glued[f"{who}_wlo_{metric}_{gap}"] <= glued[f"{who}_whi_{metric}_{gap}"]
    pooled_order = glued["r_rabbi_dDP"] > glued["r_avg_gap_dDP"]
    within_order = glued["dec_med_rabbi_dDP"] > glued["dec_med_avg_gap_dDP"]
    assert glued["within_order_word"] == ("the same as pooled" if pooled_order == within_order else "reversed")
    assert glued["diff_pooled"] == pytest.approx(glued["r_rabbi_dDP"] - glued["r_avg_gap_dDP"])
    assert glued["diff_within"] == pytest.approx(glued["dec_med_rabbi_dDP"] - glued["dec_med_avg_gap_dDP"])
    assert glued["n_sys_avg_higher"] + glued["n_sys_rabbi_higher"] <= glued["n_systems"]
    assert glued["dec_n_clusters"] == glued["n_systems"]
    inside = glued["nb_lo_avg_gap_dDP"] <= glued["paper_r_avg_gap_dDP"] <= glued["nb_hi_avg_gap_dDP"]
    assert glued["avg_gap_paper_in_ci_word"] == ("lies inside" if inside else "lies outside")


def test_the_previous_chapters_noise_is_the_same_formula(glued, params):
    assert glued["dp_se"] == pytest.approx(selection.dp_standard_error(params["k"], 8, params["rounds"]))
    assert glued["dp_se_prev"] == pytest.approx(selection.dp_standard_error(glued["k_prev"], 8, params["rounds"]))


def test_the_essay_rows_take_every_complete_system(glued):
    for (task, setting, metric, gap), (r, _) in PAPER_TABLE1.items():
        if task == "essay grading" and setting == "pointwise":
            assert glued[f"essay_paper_r_{metric}_{gap}"] == r
            if glued["essay_n_systems_val"]:
                assert -1.0 <= glued[f"essay_r_{metric}_{gap}"] <= 1.0
    assert glued["essay_n_systems_val"] >= 2  # two systems' essay tables are committed complete
    assert len(glued["essay_systems_val"].split(", ")) == glued["essay_n_systems_val"]
    assert glued["essay_n_essays_val"] == 1000
    assert glued["essay_n_rows"] == 8 and 0 <= glued["essay_n_in_ci"] <= 8


def test_the_model_part_word_follows_the_shares(glued):
    small = abs(glued["model_share_rabbi_dDP"]) < abs(glued["dec_share_rabbi_dDP"]) / 2
    assert glued["model_part_word"].startswith("little") == small
    for metric in ("rabbi", "avg_gap"):
        assert -1.0 <= glued[f"model_centred_{metric}_dDP"] <= 1.0


def test_the_name_intervals_that_miss_their_estimate_are_counted(glued):
    assert glued["nb_n_intervals"] == 2 * (4 * 2 + 2)  # (4 metrics x 2 gaps + 2 differences) x (pooled, within)
    assert 0 <= glued["nb_n_outside"] <= glued["nb_n_intervals"]


def test_every_correlation_stands_beside_its_controls(glued, params, nb):
    """The permutation null, the held-out r and the gap's reliability beside every r of Table 1 (issue 22); every
    glued verdict is validity.verdict_words of the glued row (issue 32)."""
    from allocbias.validity import control_words, order_word, verdict_words

    assert glued["n_perm"] == params["n_perm"] and glued["n_splits"] == params["n_splits"]
    for metric in METRICS:
        for gap in GAPS:
            t = f"{metric}_{gap}"
            assert -1.0 <= glued[f"ctl_r_{t}"] <= 1.0
            assert glued[f"ctl_null_lo_{t}"] <= glued[f"ctl_null_mean_{t}"] <= glued[f"ctl_null_hi_{t}"]
            assert glued[f"ctl_heldout_lo_{t}"] <= glued[f"ctl_heldout_mean_{t}"] <= glued[f"ctl_heldout_hi_{t}"]
            assert 0.0 <= glued[f"ctl_null_percentile_{t}"] <= 100.0
            assert glued[f"ctl_ceiling_{t}"] == pytest.approx(math.sqrt(max(glued[f"ctl_reliability_{t}"], 0.0)))
            keys = ("r", "null_lo", "null_hi", "heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_lo",
                    "heldout_null_hi", "ceiling")
            words = control_words({key: glued[f"ctl_{key}_{t}"] for key in keys})
            assert glued[f"ctl_verdict_{t}"] == words["verdict"] and glued[f"ctl_null_word_{t}"] == words["null"]
            gap_word = ("|Δ" if metric in ("jsd", "emd") else "Δ") + gap[1:] + ("|" if metric in ("jsd", "emd") else "")
            assert glued[f"ctl_verdict_short_{t}"] == verdict_words(
                {key: glued[f"ctl_{key}_{t}"] for key in keys}, gap=gap_word)["short"]
            assert glued[f"ctl_heldout_null_lo_{t}"] <= glued[f"ctl_heldout_null_hi_{t}"]
            assert 0 <= glued[f"ctl_ir_below_{t}"] <= glued["n_points"]
            assert glued[f"ctl_ir_null_mean_{t}"] <= glued[f"ctl_ir_null_hi_{t}"] + 1e-9
    for gap in GAPS:
        assert glued[f"ctl_heldout_order_{gap}"] == order_word(glued[f"ctl_heldout_mean_rabbi_{gap}"],
                                                               glued[f"ctl_heldout_mean_avg_gap_{gap}"])
    # one table shows the verdicts with their evidence in readable cells (issue 39)
    assert sum("held-out r [95%]; null 97.5%; ceiling" in t and "in-sample r; null mean [95%]" in t
               for t in _outputs_text(nb)) == 1


def test_a_permutation_count_below_one_fails(tmp_path):
    from allocbias.book import execute_notebook

    with pytest.raises(Exception, match="n_perm"):
        execute_notebook(SOURCE, tmp_path / "out.ipynb", {"n_perm": 0, "rounds": 50, "n_name_boot": 2,
                                                          "n_system_boot": 10, "essay_rounds": 50}, cwd=ROOT)


def test_the_notebook_glues_once_and_defines_nothing():
    """Every computation lives in allocbias.study.predictive_validity: one glue loop, no def, class or lambda; an
    exercise's gated solution glues the answer it computes."""
    import re

    kept, solutions = code_cells_by_place(SOURCE)
    assert "\n".join(kept).count("glue(") == 1
    assert solutions and all("glue(" in src for src in solutions)
    assert not re.search(r"^\s*(def|class)\s|\blambda\b", "\n".join(kept + solutions), flags=re.M)


def test_the_solutions_compute_and_glue_their_answers(glued, params):
    """The exercises' answers are computed by their solutions from validity.validity_table (not handed over by the
    findings) and glued where they are computed: Spearman's against Pearson's, per model, with more rounds."""
    assert glued["ex_rank_metric"] in set(SHORT.values()) and glued["ex_rank_gap"] in {"ΔDP", "ΔEO"}
    assert -1 <= glued["ex_rank_spearman"] <= 1 and -1 <= glued["ex_rank_pearson"] <= 1
    assert glued["ex_rank_pearson"] == pytest.approx(glued[f"r_{_key(glued['ex_rank_metric'])}_{_gap(glued)}"])
    assert glued["ex_pooled_pairs"] == 4 and 0 <= glued["ex_pooled_outside"] <= 4
    assert glued["ex_more_rounds"] == 4 * params["rounds"]
    assert 0 <= glued["ex_more_rounds_change"] <= 2 and glued["ex_more_rounds_best_dDP"] in set(SHORT.values())


def _key(label: str) -> str:
    return next(k for k, v in SHORT.items() if v == label)


def _gap(glued) -> str:
    return {"ΔDP": "dDP", "ΔEO": "dEO"}[glued["ex_rank_gap"]]
