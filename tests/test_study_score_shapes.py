"""allocbias.study.score_shapes: the score-shape chapter's findings on small synthetic scores.

The phrases are checked case by case; the findings function runs end to end on random pointwise scores of two
systems (the paper's tables as committed), and its pairwise branch on a temporary store filled by stand-in
engines (not models) whose answers have known output statistics."""

from __future__ import annotations

import doctest
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from allocbias import data
from allocbias.scoring import items
from allocbias.scoring import runs  # noqa: E402
from allocbias.study import score_shapes  # noqa: E402
from allocbias.study.score_shapes import (
    ScoreShapeFindings,
    between_words,
    check_verdict,
    pairwise_reasons,
    pairwise_verdict,
    per_system_words,
    score_shapes_findings,
    shape_words,
    skew_standard_errors,
    tendency,
)

from .conftest import assert_findings_glue  # noqa: E402

SYSTEMS, JOBS = ["sys-a", "sys-b"], ["retail", "hr_specialist"]


def test_module_doctests():
    result = doctest.testmod(score_shapes, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


def test_skew_standard_errors_approach_the_large_sample_values():
    se1, se2 = skew_standard_errors(10_000)
    assert se1 == pytest.approx(math.sqrt(6 / 10_000), rel=1e-3)
    assert se2 == pytest.approx(math.sqrt(24 / 10_000), rel=1e-3)
    with pytest.raises(ValueError, match="n must be"):
        skew_standard_errors(3)


def test_tendency_and_shape_words_at_the_boundaries():
    assert tendency(0.75, "m", "f", "x") == "m" and tendency(0.25, "m", "f", "x") == "f"
    assert tendency(0.5, "m", "f", "x") == "x"
    assert shape_words(0.75, 0.75)["shape_agreement"] == "agree with"
    assert shape_words(0.74, 0.75)["shape_agreement"] == "only partly agree with"
    assert shape_words(0.5, 0.5)["shape_agreement"] == "do not match"
    words = shape_words(0.9, 0.1)
    assert words["skew_words"].startswith("mostly left-skewed") and words["tail_words"].startswith("mostly lighter")


def test_per_system_words_and_between_words():
    assert per_system_words(pd.Series({"a": 0.1, "b": -0.2, "c": float("nan")})) == (
        "the median skewness is negative for b and zero or positive for a, c")
    assert per_system_words({}) == ("the median skewness is negative for no system and zero or positive for "
                                    "no system")
    assert between_words(0.5).startswith("where") and between_words(0.49).startswith("how the names")


def test_check_verdict():
    assert check_verdict(-0.6, 0, 6).startswith("So the skewed")  # a strong negative r counts too
    assert check_verdict(0.1, 4, 6).startswith("So the skewed")  # the average gap wins within most systems
    assert check_verdict(0.1, 3, 6) == "Here, as in the paper, the average gap is the weaker guide."


def test_pairwise_reasons_and_verdict():
    quiet = {"undetected": 10.0, "tie": 10.0, "first_shown": 60.0, "echo": 0.0}
    assert pairwise_reasons(quiet, "You are") == ""
    assert pairwise_reasons({**quiet, "tie": 50.0}, "You are") == "declares a tie in 50.0 % of its answers"
    echo = pairwise_reasons({**quiet, "echo": 80.0}, "You are")
    assert echo.startswith("opens 80.0 % of its answers with 'You are'")
    assert pairwise_reasons({**quiet, "first_shown": float("nan")}, "x") == ""  # nothing named: no position verdict
    both = pairwise_verdict({"a": "names nobody in 90.0 % of its answers",
                             "b": "declares a tie in 60.0 % of its answers"})
    assert both.startswith("a names nobody in 90.0 % of its answers; b declares a tie")
    assert "For every system read here" in both
    mixed = pairwise_verdict({"a": "names nobody in 90.0 % of its answers", "b": ""})
    assert "The answers of b name candidates" in mixed and "For every system" not in mixed


@pytest.fixture(scope="module")
def scores():
    cands = data.candidate_table(JOBS, names_per_group=2, seed=0)
    rng = np.random.default_rng(5)
    frames = []
    for i, system in enumerate(SYSTEMS):
        score = np.clip(1 - rng.exponential(0.15, len(cands)), 0.0, 1.0)  # left-skewed, heavy lower tail
        frames.append(cands.assign(system=system, model=f"model-{i}", score=score,
                                   label_mass=np.full(len(cands), 0.3 + 0.4 * i)))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def findings(scores):
    return score_shapes_findings(SYSTEMS, JOBS, names_per_group=2, scores=scores)


def test_findings_hold_the_chapter_keys_with_plain_types(findings):
    assert isinstance(findings, ScoreShapeFindings)
    values = findings.glue_values()
    assert_findings_glue(values, "08_score_shapes")
    assert not any(key.startswith("pw_") for key in values)  # no pairwise systems: the paper's table only


def test_findings_agree_with_the_synthetic_scores(findings, scores):
    values = findings.glue_values()
    assert (values["n_systems"], values["n_jobs"], values["n_groups"]) == (2, 2, 8)
    assert values["n_resumes"] == 6 and values["n_per_cell"] == 12 and values["n_rows"] == len(scores)
    assert values["n_shape_cells"] == 2 * 2 * 8 and len(findings.per_system) == 2
    assert values["se_skew"] == skew_standard_errors(12)[0]
    assert values["share_left"] >= 0.75 and values["skew_words"].startswith("mostly left-skewed")
    assert values["median_skew"] == findings.defined["skewness"].median()
    assert 0 <= values["between_share_min"] <= values["between_share_median"] <= values["between_share_max"] <= 1
    assert (values["mass_low_system"], values["mass_high_system"]) == ("sys-a", "sys-b")
    assert values["mass_medians"] == "sys-a 0.30, sys-b 0.70" and values["mass_share_below_half"] == 0.5
    assert findings.mass["count"].tolist() == [len(scores) // 2] * 2
    assert values["check_k"] == 1 and values["check_rounds"] == 2000 and values["check_paper_r_avg_gap"] == 0.13
    assert values["check_verdict"] == check_verdict(values["check_r_avg_gap"], values["check_n_avg_better"], 2)
    assert values["paper_n_models"] == 10 and values["paper_excluded"] == "Llama2 7B Chat and StableLM Zephyr 3B"
    assert values["pairs_per_pool"] == 28 and values["study_generations"] == 30 * 2 * 28 * 2
    assert values["n_pairwise_prompts"] == 0 and values["n_table2_rows"] == 10
    assert findings.behaviour is None
    assert not hasattr(findings, "exercises"), "the exercises' answers are computed by their solutions"


@pytest.mark.parametrize("figure", [score_shapes.figure_shapes, score_shapes.figure_skew_by_group,
                                    score_shapes.figure_label_mass, score_shapes.figure_pairwise])
def test_figures_have_titled_labelled_axes(findings, figure):
    fig = figure(findings)
    try:
        assert isinstance(fig, Figure)
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    finally:
        matplotlib.pyplot.close(fig)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"pairwise_systems": ["smollm2-fp32-paper"], "pairwise_rounds": 0}, "pairwise_rounds"),
    ({"pairwise_groups": ["Male White"]}, "pairwise_groups"),
    ({"pairwise_groups": ["Male White", "Nobody"]}, "pairwise_groups"),
    ({"names_per_group": 0}, "names_per_group"),
    ({"seed": -1}, "seed"),
])
def test_findings_reject_bad_parameters(scores, kwargs, message):
    with pytest.raises(ValueError, match=message):
        score_shapes_findings(SYSTEMS, JOBS, **{"names_per_group": 2, **kwargs}, scores=scores)


def test_findings_name_a_missing_column(scores):
    with pytest.raises(ValueError, match="label_mass"):
        score_shapes_findings(SYSTEMS, JOBS, names_per_group=2, scores=scores.drop(columns="label_mass"))


class StandIn:
    """Not a model: the candidate shown first ("first") or no answer at all ("silent")."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour

    def generate(self, prompts, **kw):
        if self.behaviour == "first":  # the name that opens the first résumé
            return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
        return ["" for _ in prompts]


def test_the_pairwise_branch_reads_known_answers(tmp_path, scores):
    cands = data.candidate_table(["retail"], names_per_group=1, seed=0)
    pools = items.pairwise_pools(cands, 1, 0)
    engines = {"smollm2-fp32-paper": "first", "gemma3-fp32-paper": "silent"}
    runs.pairwise_table(list(engines), pools, root=tmp_path, engine_for=lambda s: StandIn(engines[s.id]))
    found = score_shapes_findings(SYSTEMS, ["retail"], names_per_group=1, scores_root=str(tmp_path),
                                  pairwise_systems=list(engines), pairwise_rounds=1,
                                  scores=scores[scores["job"] == "retail"])
    values = found.glue_values()
    assert values["n_pairwise_prompts"] == 2 * 28 * 2 and values["n_table2_rows"] == 12
    assert (values["pw_regular_smollm2_fp32_paper"], values["pw_flipped_smollm2_fp32_paper"]) == (100.0, 100.0)
    assert (values["pw_undetected_gemma3_fp32_paper"], values["pw_empty_gemma3_fp32_paper"]) == (100.0, 100.0)
    assert values["pw_first_smollm2_fp32_paper"] == 100.0 and math.isnan(values["pw_first_gemma3_fp32_paper"])
    assert "smollm2-fp32-paper: 100.0 % regular" in values["pairwise_status"]
    assert "(above the paper's range)" in values["pairwise_status"] and values["n_pairwise_unread"] == 0
    assert values["pairwise_verdict"].startswith("smollm2-fp32-paper names the candidate shown first in 100.0 %")
    assert "gemma3-fp32-paper names nobody in 100.0 %" in values["pairwise_verdict"]
    assert values["pairwise_short"] == "smollm2-fp32-paper 100.0 %, gemma3-fp32-paper 0.0 %"
    assert list(found.behaviour["system"]) == list(engines)
    with pytest.raises(ValueError, match="smollm2-nf4-paper.*lacks 56 of the 56"):
        score_shapes_findings(SYSTEMS, ["retail"], names_per_group=1, scores_root=str(tmp_path),
                              pairwise_systems=["smollm2-nf4-paper"], pairwise_rounds=1,
                              scores=scores[scores["job"] == "retail"])
