"""allocbias.study.ll144_metrics: the Local Law 144 chapter's findings on small synthetic samples.

The findings function runs end to end on a few hundred candidates per group and a coarse grid (a second or two);
the toy example and the helpers are checked against hand-computed values, and the findings against
``allocbias.ll144`` called directly."""

from __future__ import annotations

import doctest

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from allocbias import ll144  # noqa: E402
from allocbias.study import ll144_metrics  # noqa: E402
from allocbias.study.ll144_metrics import (
    figure_prior,
    figures_example,
    flag_table,
    ll144_metrics_findings,
    pvalue_text,
    strongest,
    styled,
    weakest,
)

SMALL = dict(n_per_group=300, grid_points=51, sweep_points=3, example1_params=[0.0, 1.0],
             example2_params=[5.0, 25.0], example3_params=[3.0, 20.0])


@pytest.fixture(scope="module")
def findings():
    return ll144_metrics_findings(**SMALL)


def test_module_doctests():
    result = doctest.testmod(ll144_metrics, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def test_strongest_and_weakest_settings():
    assert strongest(1, [0.5, 0.0, 1.0]) == 1.0 and weakest(1, [0.5, 0.0, 1.0]) == 0.0
    for kind in (2, 3):
        assert strongest(kind, [10.0, 5.0, 25.0]) == 5.0 and weakest(kind, [10.0, 5.0, 25.0]) == 25.0


def test_pvalue_text():
    assert pvalue_text(0.4361) == "4.4e-01"
    assert pvalue_text(1e-200) == "1.0e-200"
    assert pvalue_text(0.0) == "below 1e-300"


def test_flag_table_marks_values_below_the_bound_only():
    values = pd.DataFrame({"di_median": [0.95, 0.8], "auc_di": [0.79999, 0.5]})
    out = flag_table(values, 0.8)
    assert out["di_median"].tolist() == ["0.95", "0.8"]  # equal to the bound: not flagged
    assert out["auc_di"].tolist() == ["0.8 (flag)", "0.5 (flag)"]


def test_styled_is_deterministic_html_without_index():
    frame = pd.DataFrame({"group": ["A", "B"], "value": [1 / 3, 0.5]})
    first, second = styled(frame, uuid="t"), styled(frame, uuid="t")
    assert first.data == second.data and repr(first) == repr(second)
    assert "0.333" in first.data and "0.333333" not in first.data
    assert 'class="blank' not in first.data and "row_heading" not in first.data


def test_toy_example_matches_the_hand_computation(findings):
    g = findings.glue_values()
    assert g["toy_median"] == 3.5
    assert g["toy_di_median_A"] == pytest.approx(1 / 3)
    assert g["toy_auc_A"] == pytest.approx(11 / 24)  # trapezoid of 1, 1/2, 1/3, 0, 1 on steps of 1/4
    toy = findings.toy.set_index("group")
    assert toy.loc["A", "mean"] == 2.5 and toy.loc["B", "di_avg"] == 1.0
    assert bool(toy.loc["A", "flag_di_median"]) and not bool(toy.loc["B", "flag_di_median"])


def test_glue_values_have_the_chapter_keys_and_plain_types(findings):
    g = findings.glue_values()
    for key in ["fair_bound", "grid_points", "grid_step", "n_per_group", "toy_median", "n_examples", "n_flag_legal",
                "n_flag_distribution", "fixed_threshold", "prior_a", "prior_b", "prior_mean"]:
        assert key in g, key
    for kind in (1, 2, 3):
        for suffix in ["param", "di_avg", "di_median", "di_threshold", "auc_di", "p_fair", "auc_di_A", "p_fair_B",
                       "p_fair_fail_A", "p_any_fail", "sweep_params", "sweep_auc_di", "sweep_di_avg", "auc_beta_A",
                       "pfair_beta_B"]:
            assert f"ex{kind}_{suffix}" in g, (kind, suffix)
        for setting in ("strongest", "weakest"):
            for suffix in ("param", "D", "pvalue", "pvalue_text"):
                assert f"ks_ex{kind}_{setting}_{suffix}" in g
    assert len(g) == 122
    for key, value in g.items():
        if isinstance(value, list):
            assert all(type(v) is float for v in value), key
        else:
            assert type(value) in (int, float, str), (key, type(value))
    assert type(g["grid_points"]) is int and type(g["n_examples"]) is int and type(g["fair_bound"]) is float
    assert g["grid_step"] == pytest.approx(1 / 50)


def test_strongest_setting_matches_ll144_directly(findings):
    g = findings.glue_values()
    grid = ll144.default_grid(SMALL["grid_points"])
    df = ll144.synthetic_example(2, 5.0, n=SMALL["n_per_group"], seed=0)
    summary = ll144.group_metric_summary(df["score"], df["group"], threshold=50.0, grid=grid)
    assert g["ex2_param"] == 5.0
    assert g["ex2_auc_di_A"] == pytest.approx(summary.loc["A", "auc_di"])
    assert g["ex2_di_median"] == pytest.approx(summary["di_median"].min())
    assert g["ex2_p_fair_fail_B"] == pytest.approx(1 - summary.loc["B", "p_fair"])
    curve = ll144.di_curve(df["score"], df["group"], grid)
    assert g["ex2_p_any_fail"] == pytest.approx(float((curve.min(axis=1) < 0.8).mean()), abs=0.05)
    assert g["ex2_sweep_params"] == [5.0, 15.0, 25.0]
    ks = ll144.ks_test(df["score"], df["group"], "A")
    assert g["ks_ex2_strongest_D"] == pytest.approx(ks.statistic)


def test_flag_counts_and_tables(findings):
    g = findings.glue_values()
    assert g["n_examples"] == 3
    assert 0 <= g["n_flag_legal"] <= g["n_flag_distribution"] <= 3
    assert len(findings.flags) == 3 and findings.flags["example"].iloc[0] == "example 1 (param 1)"
    assert list(findings.flags.columns) == ["example", *ll144_metrics.METRICS]
    assert len(findings.priors) == 6 and {"example", "group", "auc_di (flat)", "p_fair (Beta(18, 2))"} <= set(
        findings.priors.columns)
    assert g["ex3_auc_beta_A"] == findings.priors.set_index(["example", "group"]).loc[(3, "A"), "auc_di (Beta(18, 2))"]
    assert findings.ks["setting"].tolist() == ["strongest", "weakest"] * 3
    assert g["prior_mean"] == pytest.approx(18 / 20)
    assert findings.prior_density.index[0] == 0.0 and len(findings.prior_density) == SMALL["grid_points"]


def test_figures_return_titled_axes(findings):
    for kind in (1, 2, 3):
        figs = figures_example(findings, kind)
        assert len(figs) == 3 and all(isinstance(f, Figure) for f in figs)
        for fig in figs:
            assert fig.get_suptitle().startswith(f"Example {kind}")
            assert all(ax.get_title() and ax.get_xlabel() for ax in fig.axes)
            plt.close(fig)
    fig = figure_prior(findings)
    assert "Beta(18, 2)" in fig.axes[0].get_title() and fig.axes[1].get_ylabel()
    assert "\n" in fig.axes[0].get_title()  # on two lines: clear of the second axis' label
    plt.close(fig)
    with pytest.raises(ValueError, match="kind"):
        figures_example(findings, 4)


@pytest.mark.parametrize(("name", "value"), [
    ("n_per_group", 0), ("grid_points", 1), ("seed", -1), ("sweep_points", 1), ("example1_params", []),
    ("example2_params", ["x"]), ("fair_bound", 0), ("prior_a", -1.0), ("prior_b", float("nan")),
    ("fixed_threshold", "fifty"),
])
def test_bad_parameters_raise_naming_them(name, value):
    with pytest.raises(ValueError, match=name):
        ll144_metrics_findings(**{**SMALL, name: value})


def test_same_seed_same_findings():
    a = ll144_metrics_findings(**SMALL).glue_values()
    b = ll144_metrics_findings(**SMALL).glue_values()
    assert a == b
    assert np.isfinite([v for v in a.values() if isinstance(v, float)]).all()
