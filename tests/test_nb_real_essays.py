"""Assertions on notebooks/16_real_essays.ipynb executed through papermill (smoke profile).

The chapter reads the stored ELLIPSE grades (data/scores/ellipse_pointwise-*); the glued agreement and gap numbers
are recomputed here from the same tables with the library, so a chapter that glued something else fails.
"""

from __future__ import annotations


import pandas as pd
import pytest

from allocbias.measures import agreement, essays
from allocbias.scoring import catalog
from allocbias import data
from allocbias.scoring.systems import parse_system

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "16_real_essays"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
REQUIRED = ["essay_n_essays", "essay_n_systems", "essay_best_spearman"]

executed, glued, params = chapter_fixtures(STEM)


@pytest.fixture(scope="module")
def table(params):
    sample = data.load_ellipse("study")
    root = params["scores_root"] or None
    scores = catalog.ellipse_scores(params["systems"] or None, sample, root=root, complete_only=not params["systems"])
    if scores.empty and not params["systems"]:
        scores = catalog.ellipse_scores(None, sample, root=root)
    t = essays.grader_table(scores)
    return t.head(params["max_essays"]) if params["max_essays"] else t


def _systems(table: pd.DataFrame) -> list[str]:
    out = []
    for col in table.columns:
        try:
            out.append(parse_system(col).id)
        except ValueError:
            continue
    return out


def test_runs_clean_with_two_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 2


def test_every_glue_reference_in_the_prose_is_glued(glued):
    prose = assert_prose_glued(SOURCE, glued, more_than=30)
    for name in REQUIRED:
        assert name in glued and f"{{glue:text}}`{name}" in prose, name


def test_counts_and_best_spearman_match_the_tables(glued, table):
    systems = _systems(table)
    assert glued["essay_n_essays"] == len(table) > 0
    assert glued["essay_n_systems"] == len(systems) >= 1
    long = table.melt(id_vars=["essay_id", "rating"], value_vars=systems, var_name="system", value_name="score")
    ours = agreement.agreement_table(long, "score", "rating", by=["system"])
    assert glued["essay_best_spearman"] == pytest.approx(ours["spearman"].max())
    assert glued["essay_best_qwk"] == pytest.approx(ours["qwk"].max())
    assert -1.0 <= glued["essay_best_spearman"] <= 1.0


def test_largest_gaps_match_the_library(glued, table, params):
    graders = [essays.HUMAN] + _systems(table)
    for grouping in data.ELLIPSE_GROUPINGS:
        gaps = essays.essay_gaps(table, graders, grouping, k=params["ks"], rounds=params["rounds"],
                                 pool_size=params["pool_size"], seed=params["seed"])
        at_k = gaps[(gaps["k"] == params["k_main"]) & (gaps["grader"] != essays.HUMAN)]
        for m in ("dDP", "dEO"):
            assert glued[f"max_{m}_{grouping}"] == pytest.approx(at_k.loc[at_k[m].abs().idxmax(), m])
        if grouping == "race_ethnicity":
            human = gaps[(gaps["k"] == params["k_main"]) & (gaps["grader"] == essays.HUMAN)]
            assert glued["human_max_dDP_race"] == pytest.approx(human.loc[human["dDP"].abs().idxmax(), "dDP"])
    assert 0 <= glued["vs_human_clear_n"] <= glued["vs_human_n"]
    assert glued["vs_human_n"] == 5 * (len(graders) - 1)  # 3 race/ethnicity groups + 1 + 1, per system


def test_status_says_whether_tables_are_complete(glued):
    status = glued["essay_status"]
    assert ("every essay of the study sample" in status) or ("still being filled" in status)
    assert isinstance(pd.Series([glued["essay_systems"]]).iloc[0], str)
