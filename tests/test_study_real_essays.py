"""allocbias.study.real_essays: the real-essays chapter's findings on a small synthetic ELLIPSE-like sample.

Two systems grade 80 synthetic essays: ``copycat`` returns the human score (plus a tiny tie-breaking jitter),
``contrarian`` its mirror image, so the agreement and the sign of the correlations are known."""

from __future__ import annotations

import doctest

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from allocbias import data  # noqa: E402
from allocbias.study import real_essays  # noqa: E402
from allocbias.study.real_essays import (
    RealEssayFindings,
    agreement_list,
    figure_agreement,
    figure_gaps,
    no_negative_zero,
    real_essays_findings,
    status_phrase,
)

N = 80
SMALL = dict(ks=[1, 2], k_main=2, pool_size=8, rounds=100, n_boot=5, min_prompt_essays=5, seed=0)


def synthetic_essays(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    race = list(data.ELLIPSE_GROUPINGS["race_ethnicity"])
    sample = pd.DataFrame({
        "essay_id": [f"e{i:03d}" for i in range(N)], "order": range(N),
        "topic": [f"prompt {i % 4}" for i in range(N)],
        "rating": rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0], size=N),
        "race_ethnicity": [race[i % 4] for i in range(N)],
        "gender": ["Male" if i % 2 else "Female" for i in range(N)],
        "SES": ["Economically disadvantaged" if i % 3 else "Not economically disadvantaged" for i in range(N)],
    })
    sample["qualified"] = sample["rating"] >= sample.groupby("topic")["rating"].transform("median")
    frames = []
    for system, sign in (("copycat", 1.0), ("contrarian", -1.0)):
        score = 3.0 + sign * (sample["rating"] - 3.0) + rng.normal(0, 0.01, N)
        frames.append(sample.assign(system=system, score=score.clip(1, 5), label_mass=0.2 if sign > 0 else 0.1))
    return pd.concat(frames, ignore_index=True), sample


@pytest.fixture(scope="module")
def findings() -> RealEssayFindings:
    scores, sample = synthetic_essays()
    return real_essays_findings(scores=scores, sample=sample, **SMALL)


def test_module_doctests():
    result = doctest.testmod(real_essays)
    assert result.attempted >= 4 and result.failed == 0


def test_phrases():
    assert no_negative_zero(-0.004) == "0.00" and no_negative_zero(0.126) == "0.13"
    complete = status_phrase(["a"], pd.Series([4]), 4, 4)
    assert complete == "Here 1 systems (a) have graded every essay of the study sample."
    partial = status_phrase(["a", "b"], pd.Series([3, 4]), 5, 3)
    assert "between 3 and 4 of the 5 essays" in partial and "uses the 3" in partial
    table = pd.DataFrame({"system": ["a", "b"], "spearman": [0.5, -0.25], "qwk": [0.1, 0.0]})
    assert agreement_list(table) == "a: ρ = 0.50, QWK = 0.10; b: ρ = -0.25, QWK = 0.00"


def test_glue_values_have_the_chapter_keys_and_plain_types(findings):
    v = findings.glue_values()
    for key in ("sample_n", "essay_n_essays", "essay_n_systems", "essay_best_spearman", "essay_best_system",
                "essay_best_qwk_text", "agreement_verdict", "agreement_list", "essay_status", "vs_human_n",
                "vs_human_clear_n", "human_max_dDP_race", "human_max_dDP_race_group", "validity_points_n",
                "ours_rabbi_dDP_r", "paper_rabbi_dDP_r", "max_abs_rabbi_model", "spearman_copycat", "qwk_contrarian",
                *(f"max_{m}_{g}" for m in ("dDP", "dEO") for g in data.ELLIPSE_GROUPINGS)):
        assert key in v, key
    for key, value in v.items():
        assert type(value) in (int, float, str), (key, type(value))


def test_agreement_is_known(findings):
    v = findings.glue_values()
    assert v["sample_n"] == v["essay_n_essays"] == N and v["essay_n_systems"] == 2
    assert v["essay_best_system"] == "copycat" and v["essay_best_spearman"] > 0.99
    assert v["spearman_contrarian"] < -0.99
    assert "every essay of the study sample" in v["essay_status"]
    assert v["essay_min_mass"] == pytest.approx(0.1) and v["essay_max_mass"] == pytest.approx(0.2)
    assert v["prompt_n"] == 4 and v["min_prompt_essays"] == 5


def test_gaps_and_tables(findings):
    v = findings.glue_values()
    assert v["vs_human_n"] == 5 * 2  # 3 race/ethnicity groups + 1 + 1, per system
    assert 0 <= v["vs_human_widen_n"] <= v["vs_human_clear_n"] <= v["vs_human_n"]
    assert v["validity_points_n"] == 5 * 2
    assert set(findings.gaps["grader"]) == {"human", "copycat", "contrarian"}
    assert len(findings.largest) == 6 and set(findings.largest["system"]) <= {"copycat", "contrarian"}
    assert list(findings.gap_table.columns) == ["grouping", "grader", "k", "group", "phi", "psi", "dDP", "dEO",
                                                "dDP_minus_human"]
    assert set(findings.groups["grouping"]) == {"race/ethnicity", "gender", "economic status"}
    # the copycat selects as the human score does: its ΔDP equals the human's, up to ties broken by the jitter
    at_k = findings.gaps[(findings.gaps["k"] == 2) & (findings.gaps["grader"] == "copycat")]
    assert at_k["dDP_minus_human"].abs().max() < 0.2


def test_figures_have_titles(findings):
    for draw in (figure_agreement, figure_gaps):
        fig = draw(findings)
        assert isinstance(fig, matplotlib.figure.Figure)
        assert all(ax.get_title() for ax in fig.axes), draw.__name__
        matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("kwargs, name", [
    ({"k_main": 3}, "k_main"), ({"ks": [0]}, "ks"), ({"rounds": 0}, "rounds"), ({"n_boot": 0}, "n_boot"),
    ({"seed": -1}, "seed"), ({"max_essays": -1}, "max_essays"), ({"min_prompt_essays": 0}, "min_prompt_essays"),
    ({"pool_size": 1}, "pool_size"),
])
def test_bad_parameters_name_themselves(kwargs, name):
    scores, sample = synthetic_essays()
    with pytest.raises(ValueError, match=name):
        real_essays_findings(scores=scores, sample=sample, **{**SMALL, **kwargs})


def test_no_grades_is_an_error():
    scores, sample = synthetic_essays()
    with pytest.raises(ValueError, match="no system has graded"):
        real_essays_findings(scores=scores.iloc[:0], sample=sample, **SMALL)
