"""Assertions on notebooks/08_score_shapes.ipynb executed through papermill.

Three executions:

* the smoke profile (``profiles/smoke.yaml``; the chapter's defaults), on the committed score tables: the
  assertions hold for any scores (counts, ranges, consistency between the glued numbers and the words), and the
  pairwise statistics of the committed study-scale run are recomputed from the stored answers;
* the pairwise branch on a temporary score store filled by stand-in engines (not models) whose answers have
  known output statistics: a system that always names the candidate shown first, one that never answers, one
  that always answers "tie" and one that names a candidate whatever the order;
* the same store with a pairwise table missing: the chapter must stop, name the problem and write nothing.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from math import comb

import pandas as pd
import pytest

from allocbias.scoring import catalog, runs
from allocbias import data, metrics
from allocbias.scoring import items, systems
from allocbias.book import NotebookExecutionError, execute_notebook, glued_values, notebook_parameters

from .conftest import (
    ROOT,
    assert_clean_outputs,
    assert_prose_glued,
    chapter_fixtures,
    notebook_outputs,
    stored_pairwise_answers,
)

pytestmark = pytest.mark.notebooks

STEM = "08_score_shapes"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
TABLE2 = ROOT / "data" / "paper" / "rabbi_table2.csv"

# Chen, Ji & Evans (2024), Appendix E, Table 2, resume screening columns, typed from the paper:
# model: (Regular, Tie, Flipped, Inconsistent), in %.
PAPER_TABLE2 = {
    "Gemma 2B IT": (98.95, 0.00, 37.91, 39.37),
    "Gemma 7B IT": (99.91, 0.00, 28.15, 28.30),
    "Llama2 13B Chat": (93.61, 6.33, 22.58, 28.41),
    "Llama2 7B Chat": (100.00, 0.00, 56.29, 56.30),
    "Llama3 70B IT": (88.37, 7.91, 8.75, 16.93),
    "Llama3 8B IT": (98.99, 0.00, 40.20, 40.80),
    "StableLM Zephyr 3B": (88.17, 4.12, 49.47, 63.62),
    "StableLM2 Zephyr 1.6B": (99.99, 0.00, 28.79, 28.81),
    "StarlingLM 7B": (96.72, 3.28, 19.55, 22.54),
    "TinyLlama 1.1B Chat": (95.46, 0.50, 42.64, 48.15),
}


# ------------------------------------------------------------------------------------------------------------
# The smoke profile, on the committed tables
# ------------------------------------------------------------------------------------------------------------
executed, glued, params = chapter_fixtures(STEM)


def test_runs_without_errors_or_warnings_and_shows_its_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 4


def test_every_glue_reference_in_the_prose_is_glued(glued):
    assert_prose_glued(SOURCE, glued, more_than=50)


def test_the_default_systems_are_the_study_systems():
    assert notebook_parameters(SOURCE)["systems"] == list(systems.STUDY_SYSTEMS)


def test_one_shape_point_per_system_group_and_job(glued, params):
    n_systems, n_jobs = len(params["systems"]), len(params["jobs"])
    assert glued["n_systems"] == n_systems and glued["n_jobs"] == n_jobs
    assert glued["n_groups"] == len(data.GROUPS) == 8
    assert glued["n_shape_cells"] == n_systems * 8 * n_jobs
    assert 0 <= glued["n_constant_cells"] < glued["n_shape_cells"]
    assert glued["n_per_cell"] == glued["n_resumes"] * params["names_per_group"]
    assert glued["n_rows"] == n_systems * n_jobs * 8 * glued["n_per_cell"]
    assert glued["pointwise_prompts"] == glued["n_rows"] // n_systems


def test_shape_numbers_are_finite_and_consistent(glued):
    for key in ("median_skew", "skew_min", "skew_max", "median_kurt", "kurt_min", "kurt_max", "se_skew", "se_kurt"):
        assert math.isfinite(glued[key]), key
    assert glued["skew_min"] <= glued["median_skew"] <= glued["skew_max"]
    assert -2.0 <= glued["kurt_min"] <= glued["median_kurt"] <= glued["kurt_max"]  # m4 >= m2^2, so g2 >= -2
    for key in ("share_left", "share_heavy", "share_both"):
        assert 0.0 <= glued[key] <= 1.0, key
    assert glued["share_both"] <= min(glued["share_left"], glued["share_heavy"]) + 1e-12
    n = glued["n_per_cell"]
    assert glued["se_skew"] == pytest.approx(math.sqrt(6 * n * (n - 1) / ((n - 2) * (n + 1) * (n + 3))))
    assert glued["se_skew"] == pytest.approx(math.sqrt(6 / n), rel=0.15)
    assert glued["se_kurt"] == pytest.approx(math.sqrt(24 / n), rel=0.25)
    # the group medians are medians of cells, hence within the range of the cells
    assert glued["skew_min"] <= glued["group_skew_low_value"] <= glued["group_skew_high_value"] <= glued["skew_max"]
    assert {glued["group_skew_low"], glued["group_skew_high"]} <= set(data.GROUPS)
    assert 0.0 <= glued["between_share_min"] <= glued["between_share_median"] <= glued["between_share_max"] <= 1.0


def test_the_comparison_with_the_paper_follows_the_shares(glued):
    left, heavy = glued["share_left"], glued["share_heavy"]
    assert ("mostly left-skewed" in glued["skew_words"]) == (left >= 0.75)
    assert ("mostly right-skewed" in glued["skew_words"]) == (left <= 0.25)
    assert ("mostly heavier-tailed" in glued["tail_words"]) == (heavy >= 0.75)
    assert ("mostly lighter-tailed" in glued["tail_words"]) == (heavy <= 0.25)
    matches = int(left >= 0.75) + int(heavy >= 0.75)
    expected = {2: "agree with", 1: "only partly agree with", 0: "do not match"}[matches]
    assert glued["shape_agreement"] == expected


def test_label_mass_medians(glued, params):
    low, high, pooled = glued["mass_low_median"], glued["mass_high_median"], glued["mass_median_all"]
    assert 0.0 <= low <= high <= 1.0
    assert low - 1e-9 <= pooled <= high + 1e-9  # a pooled median lies between the systems' medians
    assert 0.0 <= glued["mass_share_below_half"] <= 1.0
    assert {glued["mass_low_system"], glued["mass_high_system"]} <= set(params["systems"])
    listed = dict(item.rsplit(" ", 1) for item in glued["mass_medians"].split(", "))
    assert list(listed) == params["systems"]
    assert all(low - 0.005 <= float(v) <= high + 0.005 for v in listed.values())


def test_the_table2_file_is_the_papers_table():
    table = pd.read_csv(TABLE2)
    assert list(table.columns) == ["model", "regular", "tie", "flipped", "inconsistent", "source"]
    assert (table["source"] == "Chen, Ji, Evans 2024, Table 2").all()
    rows = {r.model: (r.regular, r.tie, r.flipped, r.inconsistent) for r in table.itertuples()}
    assert rows == PAPER_TABLE2


def test_the_chapter_shows_the_papers_rows(executed, glued):
    assert glued["paper_n_models"] == len(PAPER_TABLE2)
    values = pd.DataFrame(PAPER_TABLE2, index=["regular", "tie", "flipped", "inconsistent"]).T
    for col in ("regular", "flipped", "inconsistent"):
        assert glued[f"paper_{col}_min"] == pytest.approx(values[col].min())
        assert glued[f"paper_{col}_max"] == pytest.approx(values[col].max())
    assert glued["paper_other_max"] == pytest.approx((100 - values["regular"] - values["tie"]).max())
    # the paper excludes models above 55 % inconsistent pairs: two on resume screening (its Figure 4 caption)
    assert glued["paper_n_excluded"] == 2
    assert glued["paper_excluded"] == "Llama2 7B Chat and StableLM Zephyr 3B"
    html = "".join("".join(out.get("data", {}).get("text/html", "")) for out in notebook_outputs(executed[0]))
    for model in PAPER_TABLE2:
        assert f">{model}<" in html, model  # a row label (the book shows a named index as a column)


def test_study_scale_pairwise_cost(glued, params):
    assert glued["pairs_per_pool"] == 28
    assert glued["study_generations"] == glued["study_pairwise_rounds"] * len(params["jobs"]) * 28 * 2


def test_the_defaults_read_the_study_scale_pairwise_run():
    """The book shows the study-scale pairwise tables (30 pools per job of all eight groups), not the pilot."""
    defaults = notebook_parameters(SOURCE)
    assert defaults["pairwise_systems"] == ["smollm2-fp32-paper", "gemma3-fp32-paper"]
    assert defaults["pairwise_rounds"] == 30 and defaults["pairwise_groups"] == []


def test_pairwise_statistics_follow_the_stored_answers(glued, params):
    """Under the smoke profile (the defaults) the chapter reads the committed study-scale pairwise tables, 6,720
    prompts per system; every glued statistic must be the one recomputed from the stored answers. With no
    pairwise systems it shows the paper's table only (the stand-in tests below cover both branches on known
    answers)."""
    if not params["pairwise_systems"]:
        assert glued["n_pairwise_prompts"] == 0 and glued["n_table2_rows"] == len(PAPER_TABLE2)
        assert "pairwise_systems" in glued["pairwise_status"] and "paper's values only" in glued["pairwise_status"]
        assert not any(key.startswith("pw_") for key in glued)
        return
    n_groups = len(params["pairwise_groups"]) or 8
    per_system = params["pairwise_rounds"] * len(params["jobs"]) * comb(n_groups, 2) * 2
    if (params["pairwise_rounds"], n_groups, len(params["jobs"])) == (30, 8, 4):  # the study-scale run
        assert per_system == 6720
    assert glued["n_pairwise_prompts"] == len(params["pairwise_systems"]) * per_system
    assert glued["n_table2_rows"] == len(PAPER_TABLE2) + len(params["pairwise_systems"])
    answers = stored_pairwise_answers(params)
    assert len(answers) == glued["n_pairwise_prompts"]
    expected = metrics.pairwise_output_stats(answers, by=["system"]).set_index("system")
    for system in params["pairwise_systems"]:
        key = system.replace("-", "_")
        parts = [glued[f"pw_{c}_{key}"] for c in ("regular", "tie", "undetected")]
        assert sum(parts) == pytest.approx(100.0) and all(0.0 <= x <= 100.0 for x in parts)
        assert 0.0 <= glued[f"pw_flipped_{key}"] <= glued[f"pw_inconsistent_{key}"] <= 100.0
        for col in ("regular", "tie", "undetected", "flipped", "inconsistent"):
            assert glued[f"pw_{col}_{key}"] == pytest.approx(expected.loc[system, col], abs=1e-9), (system, col)
        assert expected.loc[system, "n_prompts"] == per_system
        mine = answers[answers["system"] == system]
        empty = 100 * mine["answer"].fillna("").str.strip().eq("").mean()
        assert glued[f"pw_empty_{key}"] == pytest.approx(empty)
        named = mine[mine["winner"].isin(["a", "b"])]
        first = [(w == "a") == (o == "ab") for w, o in zip(named["winner"], named["order"])]  # "ab": a shown first
        if first:
            assert glued[f"pw_first_{key}"] == pytest.approx(100 * sum(first) / len(first))
        assert f"{system}: {expected.loc[system, 'regular']:.1f} % regular" in glued["pairwise_status"]
        assert f"{system} {expected.loc[system, 'regular']:.1f} %" in glued["pairwise_short"]
    # the rows the pools do not ask (the superseded pilot's, in the committed tables) are counted, not read
    root = catalog.resolve_scores_root(params["scores_root"])
    names = [catalog.store_for(systems.parse_system(s), "resume_pairwise", root).path.name for s in params["pairwise_systems"]]
    tables = catalog.provenance_table(root).query("table in @names")
    distinct = answers.groupby("system")["prompt_id"].nunique()  # a pair drawn into two pools is asked once
    assert glued["n_pairwise_unread"] == tables["rows"].sum() - distinct.sum() >= 0
    assert f"{distinct.iloc[0]:,} distinct prompts per system" in glued["pairwise_status"]
    for gpu in set(tables["gpu"]) - {""}:  # the hardware the provenance records is named
        assert gpu in glued["pairwise_status"]


def test_the_pairwise_verdict_follows_the_answers(glued, params):
    """The verdict on what the pairwise scores can show is computed from the answers: a system is called
    format- or position-bound exactly when most of its answers name nobody or tie, most of its named answers
    name the first-shown candidate, or most of its answers open like the system prompt."""
    if not params["pairwise_systems"]:
        assert "pairwise_systems is empty" in glued["pairwise_verdict"]
        return
    for system in params["pairwise_systems"]:
        key = system.replace("-", "_")
        first = glued[f"pw_first_{key}"]
        bound = (glued[f"pw_undetected_{key}"] >= 50 or glued[f"pw_tie_{key}"] >= 50
                 or (isinstance(first, float) and first >= 75) or glued[f"pw_echo_{key}"] >= 50)
        assert (f"{system} names" in glued["pairwise_verdict"] or f"{system} declares" in glued["pairwise_verdict"]
                or f"{system} opens" in glued["pairwise_verdict"]) == bound, system


# ------------------------------------------------------------------------------------------------------------
# The pairwise branch, on stand-in answers with known statistics
# ------------------------------------------------------------------------------------------------------------
SMALL = {"systems": ["smollm2-fp32-paper"], "jobs": ["retail"], "names_per_group": 1, "seed": 0}
ROUNDS = 2
ENGINES = {"smollm2-fp32-paper": "first", "gemma3-fp32-paper": "silent", "smollm2-int8-paper": "tie",
           "gemma3-int8-paper": "judge"}
NAME_LINE = re.compile(r"^(.+)\n.+\n\nSUMMARY$", re.M)  # a résumé opens with the name, a headline, then SUMMARY


class StandIn:
    """Not a model: deterministic answers with known output statistics (and hash-based pointwise scores)."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour

    def pointwise(self, prompts, labels, **kw):
        rows = []
        for p in prompts:
            h = zlib.crc32(json.dumps(p).encode())
            score, mass = (h % 9973) / 9973, 0.2 + 0.7 * ((h >> 16) % 101) / 100
            rows.append({"score": score, "label_mass": mass, "p_No": 1 - score, "p_Yes": score, "n_tokens": 10})
        return rows

    def generate(self, prompts, **kw):
        if self.behaviour == "first":  # the candidate shown first: its name opens the first résumé
            return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
        if self.behaviour == "tie":
            return ["Both candidates are equally qualified." for _ in prompts]
        if self.behaviour == "judge":  # a name whatever the order: the one that sorts first
            return [min(NAME_LINE.findall(m[1]["content"])) for m in prompts]
        return ["" for _ in prompts]  # silent: ends its turn at once


@pytest.fixture(scope="module")
def stand_in_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("scores-stand-in")
    cands = data.candidate_table(SMALL["jobs"], names_per_group=SMALL["names_per_group"], seed=SMALL["seed"])
    runs.pointwise_table(SMALL["systems"], cands, root=root, engine_for=lambda s: StandIn("first"))
    pools = items.pairwise_pools(cands, ROUNDS, SMALL["seed"])
    runs.pairwise_table(list(ENGINES), pools, root=root, engine_for=lambda s: StandIn(ENGINES[s.id]))
    return root


@pytest.fixture(scope="module")
def stand_in(stand_in_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("executed-stand-in") / f"{STEM}.ipynb"
    parameters = {**SMALL, "scores_root": str(stand_in_root), "pairwise_systems": list(ENGINES),
                  "pairwise_rounds": ROUNDS, "pairwise_groups": []}
    result = execute_notebook(SOURCE, out, parameters, cwd=ROOT)
    return result.output, glued_values(result.output)


def test_pairwise_branch_reports_known_statistics(stand_in):
    path, glued = stand_in
    assert_clean_outputs(path)
    expected = {  # (regular, tie, undetected, flipped, inconsistent)
        "smollm2_fp32_paper": (100.0, 0.0, 0.0, 100.0, 100.0),  # the first-shown candidate: every pair flips
        "gemma3_fp32_paper": (0.0, 0.0, 100.0, 0.0, 0.0),  # no answer: the same (non-)answer in both orders
        "smollm2_int8_paper": (0.0, 100.0, 0.0, 0.0, 0.0),  # tie in both orders is consistent
        "gemma3_int8_paper": (100.0, 0.0, 0.0, 0.0, 0.0),  # the same name in both orders
    }
    for system, values in expected.items():
        for col, value in zip(("regular", "tie", "undetected", "flipped", "inconsistent"), values):
            assert glued[f"pw_{col}_{system}"] == pytest.approx(value), (system, col)
    assert glued["n_pairwise_prompts"] == len(ENGINES) * ROUNDS * len(SMALL["jobs"]) * comb(8, 2) * 2
    assert glued["n_table2_rows"] == len(PAPER_TABLE2) + len(ENGINES)
    assert "smollm2-fp32-paper: 100.0 % regular" in glued["pairwise_status"]
    assert "(above the paper's range)" in glued["pairwise_status"]  # 100 % inconsistent > 63.62 %
    assert "(below the paper's range)" in glued["pairwise_status"]  # 0 % < 16.93 %
    # the first-shown share of named answers: all of them for "first", half for "judge" (each pair once each way)
    assert glued["pw_first_smollm2_fp32_paper"] == pytest.approx(100.0)
    assert glued["pw_first_gemma3_int8_paper"] == pytest.approx(50.0)
    assert all(math.isnan(float(glued[f"pw_first_{s}"])) for s in ("gemma3_fp32_paper", "smollm2_int8_paper"))
    verdict = glued["pairwise_verdict"]
    assert "smollm2-fp32-paper names the candidate shown first in 100.0 %" in verdict
    assert "gemma3-fp32-paper names nobody in 100.0 %" in verdict
    assert "smollm2-int8-paper declares a tie in 100.0 %" in verdict
    assert "gemma3-int8-paper" not in verdict.split(". The answers of")[0]  # not format-bound ...
    assert "The answers of gemma3-int8-paper name candidates" in verdict  # ... so its points can be read
    assert "For every system read here" not in verdict
    assert glued["n_pairwise_unread"] == 0  # the stand-in tables hold exactly the prompts of these pools
    # the pointwise part follows the small parameters: one point per (system, group, job)
    assert glued["n_shape_cells"] == 8 and glued["n_per_cell"] == 6


def test_a_missing_pairwise_table_stops_the_chapter_and_writes_nothing(stand_in_root, tmp_path):
    before = sorted(p.name for p in stand_in_root.iterdir())
    parameters = {**SMALL, "scores_root": str(stand_in_root), "pairwise_systems": ["smollm2-nf4-paper"],
                  "pairwise_rounds": ROUNDS, "pairwise_groups": []}
    with pytest.raises(NotebookExecutionError, match="smollm2-nf4-paper.*lacks 112 of the 112"):
        execute_notebook(SOURCE, tmp_path / f"{STEM}.ipynb", parameters, cwd=ROOT)
    assert sorted(p.name for p in stand_in_root.iterdir()) == before
