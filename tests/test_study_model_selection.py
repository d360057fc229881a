"""allocbias.study.model_selection: the model-selection chapter's findings on small synthetic scores.

The phrases and helpers are checked on hand-computable cases; the findings function runs end to end on synthetic
scores of three systems on two jobs (no essay panel), and its glued numbers must agree with each other."""

from __future__ import annotations

import doctest
import itertools
import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from allocbias import data as D  # noqa: E402
from allocbias import validity  # noqa: E402
from allocbias.study import model_selection as ms  # noqa: E402

SYSTEMS = ["smollm2-fp32-paper", "smollm2-fp32-direct", "gemma3-fp32-paper"]
JOBS = ["retail", "hr_specialist"]
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")


def synthetic_scores(seed: int = 0) -> pd.DataFrame:
    """Three systems x two jobs x the study's 8 groups (three names per group); each system penalises one group
    by a different amount, so the systems differ in bias."""
    cands = D.candidate_table(JOBS, names_per_group=3, seed=0)
    rng = np.random.default_rng(seed)
    quality = cands["quality"].map({"high": 0.3, "medium": 0.15, "low": 0.0}).to_numpy()
    frames = []
    for i, s in enumerate(SYSTEMS):
        penalty = np.where(cands["group"] == "Female Black", 0.1 * i, 0.0)
        frames.append(cands.assign(system=s, score=np.clip(0.4 + quality - penalty
                                                           + rng.normal(0, 0.1, len(cands)), 0, 1)))
    return pd.concat(frames, ignore_index=True)


PARAMS = dict(names_per_group=3, k=2, k_eo=3, rounds=60, seed=0, ndcg_n=[1, 3], noise_redraws=2, n_perm=4,
              n_splits=3)


@pytest.fixture(scope="module")
def findings():
    return ms.model_selection_findings(SYSTEMS, JOBS, **PARAMS, scores=synthetic_scores(),
                                       essay_scores=pd.DataFrame())


def _order(g, key):
    return g[key].split(", ")


def test_module_doctests():
    result = doctest.testmod(ms, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 7 and result.failed == 0


def test_ndcg_at_with_the_exponential_gain():
    # ideal a > b > c: relevances 2, 1, 0 -> gains 3, 1, 0; ranking b, a, c at N = 2
    d = 1 / np.log2([2, 3])
    assert validity.ndcg_at(["b", "a", "c"], ["a", "b", "c"], 2, gain="exponential") == pytest.approx(
        (1 * d[0] + 3 * d[1]) / (3 * d[0] + 1 * d[1]))
    assert validity.ndcg_at(["a", "b", "c"], ["a", "b", "c"], 3, gain="exponential") == 1.0
    with pytest.raises(ValueError, match="gain"):
        validity.ndcg_at(["a", "b"], ["a", "b"], 2, gain="square")


def test_phrases():
    w = pd.DataFrame({"rabbi": [0.9, 0.8, 0.7], "avg_gap": [0.95, 0.9, 0.1]})  # δ better within 2 of 3 systems
    assert "not reproduced" in ms.averages_verdict({"rabbi": 0.9, "avg_gap": 0.3}, w)
    w = pd.DataFrame({"rabbi": [0.9, 0.8], "avg_gap": [0.1, 0.2]})
    assert ms.averages_verdict({"rabbi": 0.9, "avg_gap": 0.6}, w).startswith("so RABBI's in-sample correlation is higher pooled")
    assert ms.best_metrics(pd.Series({"rabbi": 0.5, "jsd": 0.7})) == "JSD"
    full = pd.Series({("dDP", "rabbi"): 0.91234, ("dEO", "rabbi"): 0.8})
    note = ms.essay_note(full, 3, 0.95)
    assert note.startswith("RABBI's full-ranking NDCG is 0.912 against ΔDP and 0.800 against ΔEO")
    assert f"{validity.expected_random_ndcg(3, 3):.3f}" in note and "≥ 0.95" in note


def test_paper_counterpart_branches():
    common = dict(full=pd.Series({("dDP", "rabbi"): 0.9, ("dEO", "rabbi"): 0.8}), jobs=["retail"], n_systems=3,
                  n_max=3, random_max=0.7, emd_vs_gap=pd.Series([0.0, 0.02]), essay=None)
    ranks = pd.DataFrame({"dDP": [3, 2, 1], "rabbi": [1, 2, 3]},
                         index=pd.MultiIndex.from_product([["retail"], ["a", "b", "c"]], names=["job", "system"]))
    row = SimpleNamespace(task="resume_screening", claim="rabbi_ndcg10_resume_screening", subtask="", gap="dDP, dEO",
                          metric="rabbi")
    assert ms.paper_counterpart(row, dp_ranks=ranks, **common) == \
        "RABBI NDCG@3 vs dDP: 0.900; RABBI NDCG@3 vs dEO: 0.800 (3 systems; random 0.700)"
    row = SimpleNamespace(task="resume_screening", claim="bottom2_x", subtask="retail", gap="dDP", metric="rabbi")
    assert ms.paper_counterpart(row, dp_ranks=ranks, **common) == "2 of 2 (3 systems)"
    row.subtask = "nurse"
    assert ms.paper_counterpart(row, dp_ranks=ranks, **common) == "job not in this run"
    row = SimpleNamespace(task="resume_screening", claim="emd_equals_avg_gap_ndcg", subtask="", gap="", metric="")
    assert ms.paper_counterpart(row, dp_ranks=ranks, **common) == "largest |difference| over N and gaps: 0.020"
    row = SimpleNamespace(task="essay_grading", claim="top1_x", subtask="", gap="dEO", metric="rabbi")
    assert ms.paper_counterpart(row, dp_ranks=ranks, **common).startswith("fewer than 2 systems")
    essay = {"n": 2, "full": common["full"], "top1": {"rabbi": "race 1"}}
    assert ms.paper_counterpart(row, dp_ranks=ranks, **{**common, "essay": essay}) == \
        "ideal ΔEO rank of the first pick, per grouping: race 1 (of 2)"


def test_findings_glue_consistent_values_with_plain_types(findings):
    g = findings.glue_values()
    n = len(SYSTEMS)
    for key, value in g.items():
        assert type(value) in (int, float, str), key
    for key in ("k", "k_eo", "n_systems", "n_points", "n_max", "n_min", "n_cells", "top1_hits_rabbi",
                "n_permutations", "essay_n_systems", "paper_n_claims", "overall_first_ideal_rank_rabbi"):
        assert type(g[key]) is int, key
    assert g["n_points"] == n * len(JOBS) * (len(D.GROUPS) - 1) and g["n_cells"] == n * len(JOBS)
    assert g["ndcg_ideal_min"] == pytest.approx(1.0) and g["ndcg_ideal_max"] == pytest.approx(1.0)
    assert g["random_n_min"] == pytest.approx(0.5) and g["n_permutations"] == math.factorial(n)
    assert g["n_values_n1"] == n and g["n_values_n1_avg"] == len(JOBS) * (n - 1) + 1
    assert g["seed_first_redraw"] == 1 and g["seed_last_redraw"] == 2
    for job, col in itertools.product(JOBS, ("dDP", *METRICS)):
        assert sorted(_order(g, f"order_{col}_{job}")) == sorted(SYSTEMS)
    for metric in METRICS:
        per_job = [validity.ndcg_at(_order(g, f"order_{metric}_{job}"), _order(g, f"order_dDP_{job}"), n)
                   for job in JOBS]
        assert g[f"ndcg_dDP_{metric}_n3"] == g[f"ndcg_dDP_{metric}_nmax"] == pytest.approx(np.mean(per_job))
        assert g[f"overall_first_{metric}"] == _order(g, f"overall_order_{metric}")[0]
    values = {m: g[f"ndcg_dDP_{m}_nmax"] for m in METRICS}
    assert g["best_dDP"] == " and ".join(ms.LABELS[m] for m in METRICS if values[m] >= max(values.values()) - 1e-12)
    for gap, metric in itertools.product(GAPS, METRICS):
        t = f"{gap}_{metric}"
        assert g[f"ctl_null_lo_{t}"] <= g[f"ctl_null_mean_{t}"] <= g[f"ctl_null_hi_{t}"]
    # no essay panel: its numbers are NaN and the note says why
    assert g["essay_n_systems"] == 0 and g["essay_systems"] == "none yet" and math.isnan(g["essay_ndcg_dDP_rabbi"])
    assert g["essay_note"].startswith("only 0 systems") and findings.essay_view() is None
    assert (findings.paper["ours"] != "").all()


def test_findings_views_and_exercises(findings):
    assert list(findings.rms_view().index) == SYSTEMS and list(findings.rms_view().columns) == JOBS
    assert set(findings.ndcg_view()["n"]) == {1, 3}
    assert len(findings.controls_view()) == len(GAPS) * len(METRICS)
    # the exercises' answers are computed by their solutions (validity.ndcg_table, expected_random_ndcg)
    assert not {"exponential_gain_ndcg", "redrawn_rounds_ndcg"} & set(dir(ms))
    assert "random_halfway" not in findings.glue_values()


def test_figures_have_titled_axes(findings):
    for make in (lambda f: ms.figure_ranks_per_job(f, "dDP"), lambda f: ms.figure_ranks_per_job(f, "dEO"),
                 ms.figure_ndcg, ms.figure_overall_ranking):
        fig = make(findings)
        assert isinstance(fig, plt.Figure)
        for ax in fig.axes:
            if ax.get_visible():
                assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        plt.close(fig)
    with pytest.raises(ValueError, match="gap"):
        ms.figure_ranks_per_job(findings, "dXX")


@pytest.mark.parametrize("kwargs, name", [
    ({"k": 0}, "k must be"), ({"k_eo": 8}, "k_eo must be"), ({"ndcg_n": [4]}, "ndcg_n"), ({"ndcg_n": []}, "ndcg_n"),
    ({"noise_redraws": 0}, "noise_redraws"), ({"n_perm": 0}, "n_perm"), ({"rounds": 0}, "rounds"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ms.model_selection_findings(SYSTEMS, JOBS, **{**PARAMS, **kwargs}, scores=synthetic_scores(),
                                    essay_scores=pd.DataFrame())
    with pytest.raises(ValueError, match="systems"):
        ms.model_selection_findings(SYSTEMS[:1], JOBS, scores=synthetic_scores(), essay_scores=pd.DataFrame())
