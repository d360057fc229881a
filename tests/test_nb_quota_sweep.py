"""Assertions on notebooks/07_quota_sweep.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the glued values are read back with ``allocbias.book.glued_values``.
The parameters checked against are the notebook's defaults updated with what papermill injected (recorded in
the executed copy), so the assertions hold for any profile and any score tables: shapes, ranges, words that
follow the numbers, the paper's stated numbers, and two exact identities (the mirror symmetry of the quota and
the linearity of the selection weight), never the direction of a result.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from allocbias import data

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_run_fixtures

pytestmark = pytest.mark.notebooks

STEM = "07_quota_sweep"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")
# the only numbers the text of Chen, Ji, Evans (2024), Section 5.2, states about its Figure 7
AVG_GAP_SENTENCE = ("The average score gap remains poorly correlated (within the range between 0.13 to 0.19) across "
                    "all k values for the resume screening task.")
PLATEAU_SENTENCE = "Most bias metrics show increasing correlation with ΔDP as k increases and plateaus when k ≃ 3."
PAPER_K1_DP = {"rabbi": 0.86, "avg_gap": 0.13, "jsd": -0.19, "emd": -0.09}  # Table 1, pointwise resume screening


executed, glued, nb, params = chapter_run_fixtures(STEM)


@pytest.fixture(scope="module")
def quotas(params):
    return sorted(params["ks"])


def test_the_paper_file_holds_only_stated_numbers():
    figure7 = pd.read_csv(data.data_dir() / "paper" / "rabbi_figure7.csv")
    assert len(figure7) == 2
    avg = figure7[figure7["metric"] == "avg_gap"].iloc[0]
    assert (avg["task"], avg["setting"], avg["gap"], avg["value_low"], avg["value_high"]) == (
        "resume screening", "pointwise", "dDP", 0.13, 0.19)
    assert (avg["k_min"], avg["k_max"]) == (1, 5)
    assert avg["quote"] == AVG_GAP_SENTENCE
    plateau = figure7[figure7["metric"] == "most metrics"].iloc[0]
    assert plateau["value_low"] == plateau["value_high"] == 3 and plateau["quote"] == PLATEAU_SENTENCE
    assert figure7["source"].str.startswith("Chen, Ji, Evans 2024, Section 5.2").all()


def test_runs_without_errors_or_warnings_and_shows_its_figures(nb):
    assert assert_clean_outputs(nb) >= 2  # the gaps against k by group, and r against k with the paper's values


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=50)


def test_shapes_follow_the_parameters(glued, params, quotas):
    n_systems, n_jobs = len(params["systems"]), len(params["jobs"])
    assert glued["rounds"] == params["rounds"]
    assert glued["n_systems"] == n_systems and glued["n_jobs"] == n_jobs
    assert glued["n_groups"] == 8 and glued["n_others"] == 7 and glued["half_k"] == 4
    assert glued["n_points"] == n_systems * n_jobs * 7
    assert glued["n_correlated_min"] == glued["n_correlated_max"] == glued["n_points"]
    assert glued["n_ks"] == len(quotas)
    assert (glued["k_first"], glued["k_last"]) == (quotas[0], quotas[-1])
    assert glued["ks_text"] == ", ".join(str(q) for q in quotas)
    assert 0 <= glued["n_sign_change"] <= glued["n_points"]


def test_correlations_per_quota(glued, quotas):
    for metric in METRICS:
        for gap in GAPS:
            values = {q: glued[f"r_{metric}_{gap}_k{q}"] for q in quotas}
            assert all(-1.0 <= v <= 1.0 for v in values.values())
            assert glued[f"r_{metric}_{gap}_min"] == min(values.values())
            assert glued[f"r_{metric}_{gap}_max"] == max(values.values())
            assert glued[f"r_{metric}_{gap}_first"] == values[quotas[0]]
            assert glued[f"r_{metric}_{gap}_last"] == values[quotas[-1]]
            assert values[glued[f"best_k_{metric}_{gap}"]] == max(values.values())
            change = values[quotas[-1]] - values[quotas[0]]
            threshold = glued["trend_threshold"]
            expected = "rises" if change > threshold else "falls" if -change > threshold else "stays flat"
            assert glued[f"trend_{metric}_{gap}"] == expected
    for gap in GAPS:
        best = [max(METRICS, key=lambda m: glued[f"r_{m}_{gap}_k{q}"]) for q in quotas]
        assert glued[f"n_k_rabbi_best_{gap}"] == best.count("rabbi")


def test_noise_per_quota(glued, params, quotas):
    shares = []
    for q in quotas:
        p = q / 8
        assert glued[f"parity_k{q}"] == pytest.approx(p)
        assert glued[f"dp_se_k{q}"] == pytest.approx(math.sqrt(2 * p * (1 - p) * 8 / 7 / params["rounds"]))
        assert 0.0 <= glued[f"noise_share_k{q}"] <= 1.0 and glued[f"sd_dDP_k{q}"] >= 0.0
        shares.append(glued[f"noise_share_k{q}"])
    assert (glued["noise_share_min"], glued["noise_share_max"]) == (min(shares), max(shares))


def test_the_paper_values_shown_are_the_stated_ones(glued, nb):
    assert (glued["paper_avg_low"], glued["paper_avg_high"], glued["paper_plateau_k"]) == (0.13, 0.19, 3)
    for metric, r in PAPER_K1_DP.items():
        assert glued[f"paper_r_{metric}_dDP"] == r
    assert 0 <= glued["n_avg_in_band"] <= glued["n_ks"]
    texts = ["".join(out.get("data", {}).get("text/html", "")) for cell in nb["cells"] for out in cell.get("outputs", [])]
    assert any("0.13 to 0.19" in t for t in texts), "the paper's sentence is shown in the table of stated numbers"


def test_mirror_symmetry_and_linearity(glued):
    # top k of s is the complement of the top G - k of -s, ties included: every gap flips sign exactly
    assert glued["max_symmetry_error"] < 1e-9
    assert glued["rabbi_mirror_error"] < 1e-9
    # g_k(u) is closest to RABBI's 2u - 1 at half the pool, whatever the data
    assert glued["most_linear_k"] == 4


def test_the_sweep_stands_beside_its_controls(glued, params):
    """Permutation null, held-out r and the gap's reliability at every quota (issue 22)."""
    from allocbias.validity import control_words, order_word

    quotas = sorted(set(params["ks"]))
    assert glued["n_perm"] == params["n_perm"] and glued["n_splits"] == params["n_splits"]
    for metric in METRICS:
        for gap in GAPS:
            verdicts, held, ceiling = [], [], []
            for q in quotas:
                t = f"{metric}_{gap}_k{q}"
                assert glued[f"ctl_null_lo_{t}"] <= glued[f"ctl_null_mean_{t}"] <= glued[f"ctl_null_hi_{t}"]
                assert glued[f"ctl_heldout_lo_{t}"] <= glued[f"ctl_heldout_mean_{t}"] <= glued[f"ctl_heldout_hi_{t}"]
                assert glued[f"ctl_ceiling_{t}"] == pytest.approx(math.sqrt(max(glued[f"ctl_reliability_{t}"], 0.0)))
                words = control_words({key: glued[f"ctl_{key}_{t}"] for key in (
                    "r", "null_lo", "null_hi", "heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_lo",
                    "heldout_null_hi", "ceiling")})
                assert glued[f"ctl_verdict_{t}"] == words["verdict"]
                verdicts.append(words["verdict"])
                held.append(glued[f"ctl_heldout_mean_{t}"])
                ceiling.append(glued[f"ctl_ceiling_{t}"])
            assert glued[f"ctl_n_k_tracks_{metric}_{gap}"] == verdicts.count("tracks")
            assert glued[f"ctl_heldout_min_{metric}_{gap}"] == pytest.approx(min(held))
            assert glued[f"ctl_heldout_max_{metric}_{gap}"] == pytest.approx(max(held))
            assert glued[f"ctl_ceiling_min_{metric}_{gap}"] == pytest.approx(min(ceiling))
    first = quotas[0]
    assert glued["ctl_heldout_order_first"] == order_word(glued[f"ctl_heldout_mean_rabbi_dDP_k{first}"],
                                                          glued[f"ctl_heldout_mean_avg_gap_dDP_k{first}"])


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercise 1 computes the correlations at every quota and exercise 3 the linearity of g_k(u) in their cells."""
    assert glued["ex_last_k"] == 7
    for key in ("ex_r_rabbi_last_k", "ex_r_avg_gap_last_k", "ex_r_rabbi_k1", "ex_r_avg_gap_k1"):
        assert -1 <= glued[key] <= 1
    assert glued["ex_r_rabbi_k1"] == pytest.approx(glued["r_rabbi_dDP_k1"])  # the same points at k = 1
    assert glued["ex_linearity_k1"] < glued["ex_linearity_max"] <= 1
