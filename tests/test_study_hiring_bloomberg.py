"""allocbias.study.hiring_bloomberg: the HiringBloomberg chapter's findings.

The phrases are checked on hand-made frames; the findings function is run end to end on the items of one job and
one ordering with synthetic answers (a system that always names the candidate on the last slot, and one that never
names anybody), so no score table is read or written and no model is run (only the tokenizer is loaded)."""

from __future__ import annotations

import doctest

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from allocbias import genderbench as G  # noqa: E402
from allocbias.scoring import items  # noqa: E402
from allocbias.study import hiring_bloomberg as H  # noqa: E402

from .conftest import ROOT, assert_findings_glue  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "09_hiring_bloomberg.ipynb"
LAST, SILENT = "smollm2-fp32-paper", "gemma3-fp32-paper"


def test_module_doctests():
    result = doctest.testmod(H, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def _overall(rows):
    return pd.DataFrame(rows, columns=["answerer", "metric", "estimate", "ci_low", "ci_high", "n_items"])


def test_describe_says_why_a_metric_is_undefined():
    o = _overall([("a", "stereotype_rate", 0.25, 0.0, 0.5, 12)])
    assert H.describe(o, "a", "stereotype_rate") == "0.250 (95% interval 0.000 to 0.500, 12 items)"
    assert H.describe(o, "b", "stereotype_rate").startswith("undefined: it needs a detected item in each")
    assert H.describe(o, "a", "masculine_rate") == "undefined: no detected item"
    with pytest.raises(ValueError, match="overall"):
        H.describe(pd.DataFrame({"answerer": ["a"]}), "a", "masculine_rate")


def test_slot_text_names_the_winning_slot():
    r = pd.DataFrame({"answerer": "a", "item_id": [0, 0, 1, 1], "attempt": [0, 1, 0, 1], "winner_slot": [3, 3, 3, 0]})
    assert H.slot_text(r, "a", 8) == "75% of its detected answers name the CV on slot 3"


def test_others_phrase_without_others():
    assert H.others_phrase(_overall([]), pd.DataFrame(columns=["answerer", "winner_slot"]), [], 8) == H.NO_OTHERS


def test_the_exercises_answers_are_not_handed_over():
    """Exercise 3's sample size is computed by its solution from genderbench's primitives (build_items,
    rule_answers, bootstrap_ci), not by a findings function."""
    assert not hasattr(H, "sample_size_check") and "sample_size" not in H.HiringBloombergFindings.__dataclass_fields__


def test_a_slice_of_jobs_and_races_asks_the_whole_design_s_prompts():
    """The smoke profile's slice (one job, one race) must ask prompts that a table of the whole design answers: the
    same prompts and candidates as the whole design's items of that job and race, renumbered from 0."""
    whole = items.hiring_bloomberg_items(1, 0)
    part = H.chapter_items(1, 0, ["retail", "hr_specialist"], ["Hispanic"])
    assert part["job"].tolist() == ["retail"] * 2 + ["hr_specialist"] * 2  # jobs in the order given
    assert part["item_id"].tolist() == [0, 0, 1, 1] and (part["race"] == "Hispanic").all()
    same = whole[whole["race"].eq("Hispanic") & whole["job"].isin(["retail", "hr_specialist"])]
    assert set(part["prompt_id"]) == set(same["prompt_id"])
    names = {pid: n for pid, n in zip(whole["prompt_id"], whole["names"])}
    assert all(names[pid] == n for pid, n in zip(part["prompt_id"], part["names"]))
    slots = part.attrs["slots"]
    assert sorted(set(slots["item_id"])) == [0, 1]
    first = slots[(slots["item_id"] == 0) & (slots["attempt"] == 0)]["full_name"].tolist()
    assert first == list(part["names"].iloc[0])


@pytest.fixture(scope="module")
def findings():
    attempts = H.chapter_items(1, 0, ["retail"], ["White", "Black", "Asian", "Hispanic"])
    slots = attempts.attrs["slots"]
    last = G.rule_answers(slots, "last", seed=0)
    silent = last.assign(answer="Here is a list of resumes for the job.")
    return H.hiring_bloomberg_findings(systems=[LAST, SILENT], n_orderings=1, jobs=["retail"], n_boot=50,
                                       scores_root="unused", answers={LAST: last, SILENT: silent})


def test_glue_values_have_the_chapter_s_keys_and_plain_types(findings):
    assert_findings_glue(findings.glue_values(), NOTEBOOK.stem)


def test_findings_recover_the_planted_answerers(findings):
    v = findings.glue_values()
    assert v["main"] == LAST and v["n_items"] == 4 and v["n_attempts"] == 8 and v["n_slots"] == 8
    # always the last slot: balanced by the swapped design, position effect 0, every answer detected
    key = H.glue_key(LAST)
    assert v[f"{key}_masculine_rate"] == 0.5 and v[f"{key}_position_effect"] == 0.0
    assert v[f"{key}_undetected_rate_attempts"] == 0.0 and v["n_detected_attempts"] == 8
    assert v["same_answer_share"] == 0.0  # the last slot holds another name in the second attempt
    # the silent system: everything undefined but its undetected rates, and the phrases say so
    assert v[f"{H.glue_key(SILENT)}_undetected_rate_items"] == 1.0
    assert f"{H.glue_key(SILENT)}_masculine_rate" not in v
    assert v["others_summary"].startswith(f"{SILENT}: undetected rate of attempts 1.000")
    assert "it names no candidate" in v["others_text"]
    assert v["stereotype_text"].startswith("undefined")  # one job only
    assert v["heatmap_answerers"] == f"{LAST} and reference: random"
    assert v["chance_share"] == 1 / 8
    assert v["n_live"] == 0 and v["n_stored"] == 8
    assert findings.overall["answerer"].tolist()[:2] == [LAST, SILENT]
    assert findings.agreement["items with both attempts detected"].dtype.kind == "i"


def test_figures_have_titled_axes_and_readable_legends(findings):
    for fig in (H.figure_masculine_rate_per_job(findings), H.figure_job_race_heatmap(findings),
                H.figure_winning_slots(findings)):
        assert isinstance(fig, plt.Figure)
        assert all(ax.get_title() for ax in fig.axes if ax.get_label() != "<colorbar>")
        for ax in fig.axes:
            if ax.get_legend():
                assert all(t.get_fontsize() >= 9 for t in ax.get_legend().get_texts())
        plt.close(fig)


@pytest.mark.parametrize("kwargs, name", [
    ({"n_orderings": 0}, "n_orderings"), ({"n_boot": 0}, "n_boot"), ({"n_examples": 0}, "n_examples"),
    ({"jobs": []}, "jobs"), ({"jobs": ["astronaut"]}, "jobs"), ({"races": []}, "races"),
    ({"races": ["Martian"]}, "races"), ({"systems": []}, "systems"),
    ({"n_orderings": 2}, "scores_root"), ({"systems": ["no-such-model"]}, "no-such-model")])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        H.hiring_bloomberg_findings(**kwargs)
