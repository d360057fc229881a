"""Assertions on notebooks/05_model_selection.ipynb executed through papermill (smoke profile).

The notebook is executed once per session by the ``smoke_notebook`` fixture (tests/conftest.py) with the
parameters of ``profiles/smoke.yaml``; the glued values are read back with ``allocbias.book.glued_values``.
Every assertion holds for any score tables: shapes, NDCG ranges, rankings that are permutations of the
systems, and glued numbers that must agree with each other (NDCG recomputed from the glued rankings).
The paper's numbers in ``data/paper/rabbi_ndcg.csv`` are checked for completeness and provenance.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from allocbias import data, validity
from allocbias.scoring.systems import parse_system

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures, code_cells_by_place

pytestmark = pytest.mark.notebooks

STEM = "05_model_selection"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
PAPER_TABLE = ROOT / "data" / "paper" / "rabbi_ndcg.csv"
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")


executed, glued, params = chapter_fixtures(STEM)


def _order(glued, key):
    return glued[key].split(", ")


def test_runs_without_errors_or_warnings_and_shows_its_figures(executed):
    # rankings per job (dDP), NDCG bars, overall ranking, rankings per job (dEO)
    assert assert_clean_outputs(executed[0]) >= 4


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=60)


def test_shapes_follow_the_parameters(glued, params):
    n_systems, n_jobs = len(params["systems"]), len(params["jobs"])
    for name in ("k", "k_eo", "rounds", "names_per_group", "noise_redraws"):
        assert glued[name] == params[name]
    assert glued["n_systems"] == n_systems and glued["n_jobs"] == n_jobs
    assert glued["n_groups"] == len(data.GROUPS) and glued["n_others"] == len(data.GROUPS) - 1
    assert glued["n_points"] == n_systems * n_jobs * glued["n_others"]
    assert glued["n_models"] == len({parse_system(s).model for s in params["systems"]})
    assert glued["n_max"] == max(params["ndcg_n"]) and glued["n_min"] == min(params["ndcg_n"])
    assert glued["n_cells"] == n_systems * n_jobs
    assert 0 <= glued["n_cells_near_noise"] <= glued["n_cells"]
    assert glued["reference"] == data.REFERENCE_GROUP
    assert glued["seed_first_redraw"] == params["seed"] + 1
    assert glued["seed_last_redraw"] == params["seed"] + params["noise_redraws"]


def test_rankings_are_permutations_of_the_systems(glued, params):
    systems = sorted(params["systems"])
    assert glued["n_ranked_min"] == glued["n_ranked_max"] == len(systems)
    keys = [f"order_{col}_{job}" for job in params["jobs"] for col in ("dDP", *METRICS)]
    keys += [f"order_dEO_keo_{job}" for job in params["jobs"]]
    keys += [f"overall_order_{col}" for col in ("dDP", *METRICS)]
    for key in keys:
        assert sorted(_order(glued, key)) == systems, key


def test_ndcg_lies_in_unit_interval_and_is_one_for_the_ideal_ranking(glued, params):
    assert glued["ndcg_ideal_min"] == pytest.approx(1.0) and glued["ndcg_ideal_max"] == pytest.approx(1.0)
    for gap in GAPS:
        for metric in METRICS:
            for n in params["ndcg_n"]:
                assert 0.0 <= glued[f"ndcg_{gap}_{metric}_n{n}"] <= 1.0
                assert 0.0 <= glued[f"share_random_{gap}_{metric}_n{n}"] <= 1.0
            assert glued[f"ndcg_{gap}_{metric}_nmax"] == glued[f"ndcg_{gap}_{metric}_n{max(params['ndcg_n'])}"]
            assert glued[f"ndcg_{gap}_{metric}_nmin"] == glued[f"ndcg_{gap}_{metric}_n{min(params['ndcg_n'])}"]
    assert 0.0 <= glued["ndcg_min"] <= glued["ndcg_max"] <= 1.0
    for key in ("overall_ndcg_rabbi", "overall_ndcg_avg_gap", "overall_ndcg_jsd", "overall_ndcg_emd",
                "ndcg_keo_rabbi", "ndcg_keo_avg_gap", "ndcg_keo_jsd", "ndcg_keo_emd",
                "noise_dDP_n_max", "noise_dDP_n_min", "noise_dEO_n_max", "noise_dEO_n_min"):
        assert 0.0 <= glued[key] <= 1.0, key
    assert 0.0 <= glued["emd_minus_gap_max"] <= 1.0


def test_full_ranking_ndcg_agrees_with_the_glued_rankings(glued, params):
    """The dDP NDCG at the largest cut-off is the mean over jobs of ndcg_at on the rankings the chapter glued."""
    n = max(params["ndcg_n"])
    for metric in METRICS:
        per_job = [validity.ndcg_at(_order(glued, f"order_{metric}_{job}"), _order(glued, f"order_dDP_{job}"), n)
                   for job in params["jobs"]]
        assert glued[f"ndcg_dDP_{metric}_n{n}"] == pytest.approx(float(np.mean(per_job)))
        overall = validity.ndcg_at(_order(glued, f"overall_order_{metric}"), _order(glued, "overall_order_dDP"),
                                   len(params["systems"]))
        assert glued[f"overall_ndcg_{metric}"] == pytest.approx(overall)


def test_first_picks_agree_with_the_glued_rankings(glued, params):
    jobs, n_systems = params["jobs"], len(params["systems"])
    for metric in METRICS:
        ideal_ranks = [_order(glued, f"order_dDP_{job}").index(_order(glued, f"order_{metric}_{job}")[0]) + 1
                       for job in jobs]
        assert glued[f"top1_hits_{metric}"] == sum(r == 1 for r in ideal_ranks)
        assert glued[f"top1_ideal_mean_{metric}"] == pytest.approx(np.mean(ideal_ranks))
        top_two = {job: set(_order(glued, f"order_{metric}_{job}")[:2]) for job in jobs}
        reversed_jobs = sum(top_two[job] == set(_order(glued, f"order_dDP_{job}")[-2:]) for job in jobs)
        assert glued[f"bottom2_jobs_{metric}"] == reversed_jobs
        assert 0 <= glued[f"top1_hits_keo_{metric}"] <= len(jobs)
        assert glued[f"overall_first_{metric}"] == _order(glued, f"overall_order_{metric}")[0]
        assert glued[f"overall_first_ideal_rank_{metric}"] == (
            _order(glued, "overall_order_dDP").index(glued[f"overall_first_{metric}"]) + 1)
        assert 1 <= glued[f"overall_first_ideal_rank_{metric}"] <= n_systems
    same = sum(_order(glued, f"order_emd_{job}") == _order(glued, f"order_avg_gap_{job}") for job in jobs)
    assert glued["n_jobs_emd_same_as_gap"] == same
    assert glued["overall_first_dDP"] == _order(glued, "overall_order_dDP")[0]


def test_random_ranking_baseline(glued, params):
    n_systems, n_jobs = len(params["systems"]), len(params["jobs"])
    ideal = list(range(n_systems))
    orders = list(itertools.permutations(ideal))  # every order of the systems: the exact expectation
    for key, n in (("random_n_min", min(params["ndcg_n"])), ("random_n_max", max(params["ndcg_n"]))):
        assert glued[key] == pytest.approx(np.mean([validity.ndcg_at(o, ideal, n) for o in orders]))
    if min(params["ndcg_n"]) == 1:
        assert glued["random_n_min"] == pytest.approx(0.5)  # the first pick's relevance averages half the best
    assert glued["random_formula_error"] < 1e-9
    assert glued["n_permutations"] == math.factorial(n_systems)
    assert glued["n_values_n1"] == n_systems  # NDCG@1 = (n - rank) / (n - 1), one value per ideal rank
    assert glued["n_values_n1_avg"] == n_jobs * (n_systems - 1) + 1
    d = 1 / np.log2(np.arange(2, 12))  # ten models, full ranking: E = (9 / 2) sum d / sum (10 - i) d
    assert glued["random_paper_full"] == pytest.approx(4.5 * d.sum() / ((10 - np.arange(1, 11)) @ d))
    # exercise 1's solution computes the formula at the full cut-off and checks it against every order of the systems
    full = np.mean([validity.ndcg_at(o, ideal, n_systems) for o in orders])
    assert glued["ex_random_formula"] == pytest.approx(full) and glued["ex_random_mean"] == pytest.approx(full)
    assert glued["ex_random_orders"] == math.factorial(n_systems)
    assert glued["random_halfway"] == pytest.approx((1 + full) / 2)
    for gap in GAPS:
        assert 0 <= glued[f"n_above_random_{gap}"] <= len(METRICS)


def test_best_metric_names_are_the_maxima(glued, params):
    names = {"rabbi": "RABBI", "avg_gap": "mean gap δ", "jsd": "JSD", "emd": "EMD"}
    for gap in GAPS:
        values = {m: glued[f"ndcg_{gap}_{m}_nmax"] for m in METRICS}
        best = [names[m] for m in METRICS if values[m] >= max(values.values()) - 1e-12]
        assert glued[f"best_{gap}"] == " and ".join(best)


def test_paper_table_is_complete_and_sourced(glued):
    paper = pd.read_csv(PAPER_TABLE, keep_default_na=False)
    columns = ["claim", "source", "location", "task", "setting", "subtask", "gap", "k", "metric", "quantity",
               "relation", "value", "n_models", "note", "source_sentence"]
    assert list(paper.columns) == columns
    assert paper["claim"].is_unique
    assert (paper[[c for c in columns if c != "note"]].astype(str).apply(lambda s: s.str.strip() != "")).all().all()
    assert set(paper["relation"]) <= {">=", "="}
    assert set(paper["metric"]) <= set(METRICS)
    assert np.isfinite(paper["value"].to_numpy(dtype=float)).all()
    bib = (ROOT / "book" / "references.bib").read_text()
    for key in set(paper["source"]):
        assert f"{{{key}," in bib, f"{key} is not in book/references.bib"
    for row in paper.itertuples():
        if "NDCG@10" in row.quantity:
            assert "NDCG@10" in row.source_sentence and f"{row.value:g}" in row.source_sentence, row.claim
    assert glued["paper_n_models"] == int(paper["n_models"].max())
    bound = paper.loc[paper["claim"] == "rabbi_ndcg10_resume_screening", "value"].iloc[0]
    assert glued["paper_ndcg10_bound"] == pytest.approx(bound)
    assert glued["paper_n_claims"] == len(paper)


def test_ndcg_stands_beside_its_controls(glued, params):
    """NDCG beside a random ordering, its permutation null and its held-out value (issue 22)."""
    from allocbias.validity import expected_random_ndcg, ndcg_words

    assert glued["n_perm"] == params["n_perm"] and glued["n_splits"] == params["n_splits"]
    n_systems = len(params["systems"])
    for gap in ("dDP", "dEO"):
        assert 0.0 <= glued[f"ctl_gap_heldout_{gap}"] <= 1.0
        for metric in ("rabbi", "avg_gap", "jsd", "emd"):
            t = f"{gap}_{metric}"
            assert glued[f"ctl_null_lo_{t}"] <= glued[f"ctl_null_mean_{t}"] <= glued[f"ctl_null_hi_{t}"]
            assert glued[f"ctl_heldout_lo_{t}"] <= glued[f"ctl_heldout_mean_{t}"] <= glued[f"ctl_heldout_hi_{t}"]
            assert glued[f"ctl_random_hi_{t}"] > expected_random_ndcg(n_systems, n_systems)
            words = ndcg_words({key: glued[f"ctl_{key}_{t}"] for key in ("ndcg", "random_hi", "null_lo", "null_hi",
                                                                         "heldout_mean")})
            for key, word in words.items():
                assert glued[f"ctl_{key}_word_{t}"] == word


def test_code_cells_glue_once_and_define_nothing():
    """The chapter's computation lives in its study module: one glue loop, no def, class or lambda in a cell; an
    exercise's gated solution glues the answer it computes."""
    import ast

    kept, solutions = code_cells_by_place(SOURCE)
    assert sum(src.count("glue(") for src in kept) == 1
    assert solutions and all("glue(" in src for src in solutions)
    for src in kept + solutions:
        for node in ast.walk(ast.parse(src)):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)), src


def test_the_solutions_compute_and_glue_their_answers(glued, params):
    """Exercises 2 and 3 compute their NDCG with validity.ndcg_table (exponential gain; pools redrawn) and glue it."""
    n_systems = len(params["systems"])
    names = {"RABBI", "mean gap δ", "JSD", "EMD"}
    assert set(glued["ex_best_linear"].split(" and ")) <= names and set(glued["ex_best_exponential"].split(" and ")) <= names
    assert glued["ex_best_linear"] == glued["best_dDP"] or max(params["ndcg_n"]) != n_systems
    assert glued["ex_random_linear"] == pytest.approx(validity.expected_random_ndcg(n_systems, n_systems))
    assert 0 < glued["ex_random_exponential"] < glued["ex_random_linear"]
    assert glued["ex_few_rounds"] < params["rounds"] < glued["ex_many_rounds"] == 4 * params["rounds"]
    for key in ("ex_redrawn_n1_few", "ex_redrawn_n1_many", "ex_redrawn_full_few", "ex_redrawn_full_many"):
        assert 0 <= glued[key] <= 1
