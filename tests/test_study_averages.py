"""allocbias.study.averages: the why-averages-fail chapter's findings on a tiny simulation, and its helpers on
hand-computable cases."""

from __future__ import annotations

import doctest

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from allocbias.measures import synthetic  # noqa: E402
from allocbias.study import averages  # noqa: E402
from allocbias.study.averages import (
    AveragesFindings,
    averages_findings,
    clip_to_percentiles,
    contribution_curves,
    figure_contributions,
    figure_example_systems,
    figure_hand_picked,
    figure_metric_scatter,
    figure_pool_of_two,
    figure_quota,
    weight_summary,
)

FAMILIES = ["shift", "spread", "skew", "heavy_tail"]
METRICS = ["rabbi", "avg_gap", "jsd", "emd"]
SMALL = dict(n_systems=6, n_groups=4, n_per_group=40, rounds=200, k=1, k_values=[1, 2], families=FAMILIES, seed=0)


@pytest.fixture(scope="module")
def findings() -> AveragesFindings:
    return averages_findings(**SMALL)


def test_module_doctests():
    result = doctest.testmod(averages)
    assert result.attempted >= 3 and result.failed == 0


def test_weight_function_in_closed_form():
    # g_1(u) = (G u^(G-1) - 1) / (G - 1): at u = 0 it is -1 / (G - 1), it crosses 0 at G^(-1 / (G - 1))
    w = weight_summary(4, 1)
    assert w["g_at_zero"] == pytest.approx(-1 / 3)
    assert w["g_at_half"] == pytest.approx((4 * 0.5 ** 3 - 1) / 3)
    assert w["u_zero"] == pytest.approx(4 ** (-1 / 3), abs=1e-3)
    # a pool of two: g_1(u) = 2u - 1, RABBI's weight
    curves = contribution_curves(2, [1], points=11)
    rabbi, dp = (curves[curves["measure"] == m]["contribution"].to_numpy() for m in curves["measure"].unique())
    assert np.allclose(rabbi, dp)


def test_clip_to_percentiles_clips_each_family_separately():
    f = pd.DataFrame({"family": ["a"] * 3 + ["b"] * 3, "score": [0.0, 1.0, 10.0, 5.0, 6.0, 7.0]})
    out = clip_to_percentiles(f, low=0.0, high=0.5)
    assert out["score"].tolist() == [0.0, 1.0, 1.0, 5.0, 6.0, 6.0]


def test_glue_values_are_plain_and_consistent(findings):
    v = findings.glue_values()
    for key, value in v.items():
        assert type(value) in (int, float), (key, type(value))
    for name in ("n_systems", "n_groups", "n_per_group", "rounds", "k"):
        assert v[name] == SMALL[name]
    assert v["n_points"] == 6 * 3 and v["n_others"] == 3
    assert v["n_correlated_min"] == v["n_correlated_max"] == v["n_points"]
    assert v["n_pooled"] == 4 * v["n_points"]
    assert v["k_kmin"] == 1 and v["k_kmax"] == 2
    for family in (*FAMILIES, "pooled"):
        for metric in METRICS:
            assert v[f"r_{family}_{metric}"] == v[f"r_{family}_{metric}_k1"] == v[f"r_{family}_{metric}_kmin"]
            assert v[f"r_{family}_{metric}_kmax"] == v[f"r_{family}_{metric}_k2"]
    for case in ("hidden_advantage", "outlier_penalty", "wider_spread"):
        for col in (*METRICS, "dDP", "dDP_formula"):
            assert v[f"ce_{case}_{col}"] == v[f"ce_{case}_{col}_k1"]
    for metric in METRICS:
        assert -1 <= v[f"paper_r_{metric}"] <= 1
    assert abs(v["ce_hidden_advantage_avg_gap"]) < 1e-9 and abs(v["ce_wider_spread_avg_gap"]) < 1e-9
    assert v["two_dp_se"] == pytest.approx(np.sqrt(1 / 200))


def test_a_pool_of_two_is_rabbi(findings):
    assert findings.glue_values()["two_r_rabbi_min"] > 0.8
    assert set(findings.two["family"]) == set(FAMILIES)


def test_tables(findings):
    assert list(findings.r_table.index) == [*FAMILIES, "pooled", averages.PAPER_TABLE1_ROW]
    assert list(findings.shape_table.columns) == ["median |skewness|", "median excess kurtosis"]
    assert findings.focal_table.shape == (3, 6)
    # the exercises' answers are computed by their solutions, not handed over by the findings
    assert not {"transform_check", "wider_spread_by_k", "light_tails"} & set(dir(findings))
    # exercise 1's answer: a strictly increasing change of the scores leaves RABBI and ΔDP exactly unchanged
    few = findings.scores[findings.scores["system"] < 2]
    before = synthetic.evaluate_systems(few, 1, 50, 0)
    after = synthetic.evaluate_systems(few.assign(score=np.exp(3 * few["score"])), 1, 50, 0)
    assert (after["rabbi"] == before["rabbi"]).all() and (after["dDP"] == before["dDP"]).all()
    assert (after["avg_gap"] != before["avg_gap"]).any()


def test_figures_have_titles(findings):
    for draw in (figure_contributions, figure_example_systems, figure_metric_scatter, figure_pool_of_two,
                 figure_hand_picked, figure_quota):
        fig = draw(findings)
        assert isinstance(fig, matplotlib.figure.Figure)
        assert any(ax.get_title() for ax in fig.axes), draw.__name__
        matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("kwargs, name", [
    ({"k": 4}, "k"), ({"k_values": [0]}, "k_values"), ({"n_systems": 0}, "n_systems"), ({"rounds": 0}, "rounds"),
    ({"n_groups": 1}, "n_groups"), ({"seed": -1}, "seed"), ({"families": []}, "families"),
])
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        averages_findings(**{**SMALL, **kwargs})
