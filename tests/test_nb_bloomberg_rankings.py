"""Assertions on notebooks/10_bloomberg_rankings.ipynb executed through papermill (smoke profile)."""

from __future__ import annotations

import pandas as pd
import pytest

from allocbias import rankings as R
from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks
STEM = "10_bloomberg_rankings"
executed, glued, params = chapter_fixtures(STEM)
REQUIRED = ["bloomberg_max_abs_diff", "bloomberg_min_impact_ratio_gpt35", "bloomberg_min_impact_ratio_gpt4",
            "bloomberg_n_answers", "bloomberg_fully_ranked_share"]


def _number(text: str) -> float:
    return float(str(text).replace(",", "").strip("'\""))


def test_required_values_are_glued(glued):
    missing = [name for name in REQUIRED if name not in glued]
    assert not missing, missing


def test_glued_values_match_the_library(glued):
    ranks = R.read_rankings(ROOT / "data" / "bloomberg" / "rankings.csv")
    main = ranks[~ranks["oversampled"]]
    top1 = R.selection_rates(main, 1)
    for model, short in {"gpt-3.5-turbo": "gpt35", "gpt-4": "gpt4"}.items():
        expected = top1.loc[top1["model"] == model, "impact_ratio"].min()
        assert _number(glued[f"bloomberg_min_impact_ratio_{short}"]) == pytest.approx(expected, abs=5e-4)
    assert _number(glued["bloomberg_n_answers"]) == main["answer_id"].nunique()
    published = pd.read_csv(ROOT / "data" / "bloomberg" / "published_top1.csv")
    published = published.assign(group=published["demo"].map(R.BLOOMBERG_GROUPS))
    diff = top1.merge(published, on=["model", "job", "group"])
    assert len(diff) == 64
    assert _number(glued["bloomberg_max_abs_diff"]) == pytest.approx(
        (diff["rate"] - diff["selection_rate"]).abs().max(), abs=5e-4)
    assert 0 < _number(glued["bloomberg_max_abs_diff"]) < 0.05  # reproduced up to the refused answers


def test_clean_outputs_figures_and_prose_glued(executed, glued):
    assert assert_clean_outputs(executed[0]) >= 3
    assert_prose_glued(ROOT / "notebooks" / f"{STEM}.ipynb", glued, more_than=15)
