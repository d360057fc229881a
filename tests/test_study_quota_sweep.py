"""allocbias.study.quota_sweep: the quota chapter's findings on small synthetic scores.

The helpers are checked on hand-computable cases; the findings function runs end to end on random scores of two
systems and two jobs (two names per group), with a planted disadvantage of one group, and must give every glue key
the chapter quotes, with plain types and values that agree with the tables it returns."""

from __future__ import annotations

import doctest
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from allocbias import data  # noqa: E402
from allocbias.study import quota_sweep  # noqa: E402
from allocbias.study.quota_sweep import (
    QuotaSweepFindings,
    averages_verdict,
    noise_table,
    quota_sweep_findings,
    trend_word,
)

from .conftest import assert_findings_glue  # noqa: E402

SYSTEMS, JOBS, KS = ["sys-a", "sys-b"], ["retail", "hr_specialist"], [1, 2, 4]
METRICS, GAPS = ("rabbi", "avg_gap", "jsd", "emd"), ("dDP", "dEO")


def test_module_doctests():
    result = doctest.testmod(quota_sweep, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 6 and result.failed == 0


def test_trend_word_uses_the_threshold_both_ways():
    assert trend_word(0.10, 0.16) == "rises" and trend_word(0.16, 0.10) == "falls"
    assert trend_word(0.10, 0.14) == "stays flat" and trend_word(0.14, 0.10) == "stays flat"
    assert trend_word(0.10, 0.16, threshold=0.1) == "stays flat"


@pytest.mark.parametrize(("ours", "expected"), [
    ([0.5, 0.6], "the average gap does not fail on these systems as it does in the paper"),
    ([0.15, 0.6], "the average gap falls in the paper's band at some quota"),
    ([0.1, 0.6], "the average gap does worse than the paper's band"),
    ([0.1, 0.12], "the average gap does worse than the paper's band"),
])
def test_averages_verdict(ours, expected):
    assert averages_verdict(ours, 0.13, 0.19) == expected


def test_noise_table_hand_computed():
    pts = pd.DataFrame({"k": [1, 1, 2, 2], "dDP": [0.0, 0.2, 0.1, 0.1]})
    t = noise_table(pts, [1, 2], 8, 100)
    se1 = math.sqrt(2 * (1 / 8) * (7 / 8) * 8 / 7 / 100)
    assert t.loc[1, "share selected k/G"] == 1 / 8 and t.loc[2, "share selected k/G"] == 2 / 8
    assert t.loc[1, "standard error of ΔDP"] == pytest.approx(se1)
    assert t.loc[1, "sd of ΔDP over points"] == pytest.approx(math.sqrt(0.02))
    assert t.loc[1, "noise share of the variance"] == pytest.approx(min(1.0, se1**2 / 0.02))
    assert t.loc[2, "noise share of the variance"] == 1.0  # no spread: all of it is noise


@pytest.fixture(scope="module")
def scores():
    cands = data.candidate_table(JOBS, names_per_group=2, seed=0)
    rng = np.random.default_rng(3)
    frames = []
    for i, system in enumerate(SYSTEMS):
        score = rng.random(len(cands)) + 0.3 * cands["qualified"].to_numpy(dtype=float)
        score = score - (0.25 + 0.1 * i) * (cands["group"] == "Female Black").to_numpy(dtype=float)  # a planted disadvantage
        frames.append(cands.assign(system=system, score=score))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def findings(scores):
    return quota_sweep_findings(SYSTEMS, JOBS, names_per_group=2, ks=KS, rounds=60, seed=0, n_perm=3, n_splits=2,
                                scores=scores)


def test_findings_hold_the_chapter_keys_with_plain_types(findings):
    assert isinstance(findings, QuotaSweepFindings)
    values = findings.glue_values()
    assert_findings_glue(values, "07_quota_sweep")
    for q in KS:
        for key in ("parity", "dp_se", "sd_dDP", "noise_share"):
            assert f"{key}_k{q}" in values
        for metric in METRICS:
            for gap in GAPS:
                assert f"r_{metric}_{gap}_k{q}" in values and f"ctl_verdict_{metric}_{gap}_k{q}" in values
    assert values["ks_text"] == "1, 2, 4" and (values["k_first"], values["k_last"], values["n_ks"]) == (1, 4, 3)


def test_findings_agree_with_their_tables(findings):
    values = findings.glue_values()
    n_points = len(SYSTEMS) * len(JOBS) * 7
    assert values["n_points"] == n_points == values["n_correlated_min"] == values["n_correlated_max"]
    assert len(findings.points) == n_points * len(KS)
    assert 0 <= values["n_sign_change"] <= n_points
    sweep = findings.sweep.set_index(["metric", "gap", "k"])["r"]
    for metric in METRICS:
        for gap in GAPS:
            rs = [sweep[(metric, gap, q)] for q in KS]
            assert values[f"r_{metric}_{gap}_min"] == min(rs) and values[f"r_{metric}_{gap}_max"] == max(rs)
            assert values[f"best_k_{metric}_{gap}"] == KS[int(np.argmax(rs))]
            assert values[f"trend_{metric}_{gap}"] == trend_word(rs[0], rs[-1])
    assert values["noise_share_max"] == findings.noise["noise share of the variance"].max()
    assert values["n_within_cells"] == len(KS) * len(SYSTEMS)
    assert (values["paper_avg_low"], values["paper_avg_high"], values["paper_plateau_k"]) == (0.13, 0.19, 3)
    assert values["paper_r_rabbi_dDP"] == 0.86
    # the exercises' answers are computed by their solutions, not handed over by the findings
    assert not {"max_symmetry_error", "rabbi_mirror_error", "most_linear_k"} & set(values)
    assert not {"every_k", "linearity"} & set(dir(findings))
    assert len(findings.controls_view) == len(KS) * len(METRICS) * len(GAPS)
    # every verdict, in the table and in the glued counts, is validity.verdict_words of the same controls row
    from allocbias.validity import verdict_words

    assert findings.controls_view["verdict"].tolist() == [verdict_words(r)["verdict"]
                                                          for _, r in findings.controls.iterrows()]
    for (metric, gap), part in findings.controls.groupby(["metric", "gap"]):
        assert values[f"ctl_n_k_tracks_{metric}_{gap}"] == sum(verdict_words(r)["tracks"] for _, r in part.iterrows())
    # the planted disadvantage: Female Black's mean gap is negative at the first quota in every system
    gaps = findings.gaps_by_group
    first = gaps[(gaps["group"] == "Female Black") & (gaps["k"] == 1)]
    assert (first["dDP"] < 0).all()


def test_findings_are_deterministic(scores, findings):
    again = quota_sweep_findings(SYSTEMS, JOBS, names_per_group=2, ks=KS, rounds=60, seed=0, n_perm=3, n_splits=2,
                                 scores=scores)
    assert again.glue_values() == findings.glue_values()


@pytest.mark.parametrize("figure", [quota_sweep.figure_gaps_by_quota, quota_sweep.figure_sweep,
                                    quota_sweep.figure_controls])
def test_figures_have_titled_labelled_axes(findings, figure):
    fig = figure(findings)
    try:
        assert isinstance(fig, Figure)
        axes = [ax for ax in fig.axes if ax.has_data()]
        assert axes and all(ax.get_title() for ax in axes)
        assert any(ax.get_xlabel() for ax in axes) and any(ax.get_ylabel() for ax in axes)
    finally:
        matplotlib.pyplot.close(fig)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ks": [1]}, "ks must list"),
    ({"ks": [1, 1, 2]}, "ks must list"),
    ({"ks": [1, 8]}, "ks must list"),
    ({"n_perm": 0}, "n_perm"),
    ({"n_splits": 0}, "n_splits"),
    ({"rounds": 0}, "rounds"),
    ({"seed": -1}, "seed"),
])
def test_findings_reject_bad_parameters(scores, kwargs, message):
    with pytest.raises(ValueError, match=message):
        quota_sweep_findings(SYSTEMS, JOBS, **{"names_per_group": 2, "ks": KS, "rounds": 60, "n_perm": 3,
                                               "n_splits": 2, **kwargs}, scores=scores)


def test_findings_name_a_missing_column(scores):
    with pytest.raises(ValueError, match="qualified"):
        quota_sweep_findings(SYSTEMS, JOBS, ks=KS, rounds=60, n_perm=3, n_splits=2,
                             scores=scores.drop(columns="qualified"))
