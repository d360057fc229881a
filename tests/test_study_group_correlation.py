"""allocbias.study.group_correlation: the per-group correlation chapter's findings on small synthetic scores.

The helpers are checked on hand-computable cases; the findings function runs end to end on synthetic scores of
three systems on two jobs (six points per group), and the spread's permutation test
(:func:`allocbias.validity.group_spread_test`) is checked against a brute-force loop and a planted difference."""

from __future__ import annotations

import doctest
import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from allocbias import data as D  # noqa: E402
from allocbias import validity  # noqa: E402

from .conftest import assert_findings_glue  # noqa: E402
from allocbias.study import group_correlation as gc  # noqa: E402

SYSTEMS = ["smollm2-fp32-paper", "smollm2-fp32-direct", "gemma3-fp32-paper"]
JOBS = ["retail", "hr_specialist"]
METRICS = ("rabbi", "avg_gap", "jsd", "emd")
GAPS = ("dDP", "dEO")


def synthetic_scores(seed: int = 0) -> pd.DataFrame:
    """Three systems x two jobs x the study's 8 groups (three names per group); strong résumés score higher."""
    cands = D.candidate_table(JOBS, names_per_group=3, seed=0)
    rng = np.random.default_rng(seed)
    quality = cands["quality"].map({"high": 0.3, "medium": 0.15, "low": 0.0}).to_numpy()
    return pd.concat([cands.assign(system=s, score=np.clip(0.4 + quality + rng.normal(0, 0.15, len(cands)), 0, 1))
                      for s in SYSTEMS], ignore_index=True)


@pytest.fixture(scope="module")
def findings():
    return gc.group_correlation_findings(SYSTEMS, JOBS, names_per_group=3, k=2, rounds=60, seed=0,
                                         permutations=50, n_perm=5, n_splits=3, scores=synthetic_scores())


def test_module_doctests():
    result = doctest.testmod(gc, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


def test_group_slug_and_fisher_width():
    assert gc.group_slug("Male Hispanic") == "male_hispanic"
    # 2 tanh(1.96 / sqrt(37)) for the paper's 40 points at 95%
    assert gc.fisher_width_at_zero(40, 0.95) == pytest.approx(2 * np.tanh(1.959964 / np.sqrt(37)), abs=1e-6)
    assert gc.fisher_width_at_zero(4, 0.95) > gc.fisher_width_at_zero(40, 0.95)
    with pytest.raises(ValueError, match="confidence"):
        gc.fisher_width_at_zero(10, 1.5)
    with pytest.raises(ValueError, match="n must be at least 4"):
        gc.fisher_width_at_zero(3, 0.95)


def test_ci_overlap_share_counts_pairs_per_gap_and_metric():
    t = pd.DataFrame({"gap": ["dDP"] * 3 + ["dEO"] * 2, "metric": "rabbi",
                      "ci_low": [0.0, 0.5, 2.0, 0.0, 0.1], "ci_high": [1.0, 1.5, 3.0, 1.0, 0.2]})
    assert gc.ci_overlap_share(t) == pytest.approx((1 / 3 + 1.0) / 2)


def test_group_spread_test_agrees_with_a_loop_and_finds_a_planted_difference():
    rng = np.random.default_rng(3)
    rows = []
    for s, j in itertools.product("abcdef", "xyz"):
        for grp in ("A", "B", "C"):
            m = rng.normal()
            gap = -m if grp == "C" else m + rng.normal(0, 0.1)  # group C's gap runs against its metric
            rows.append({"system": s, "job": j, "group": grp, "rabbi": m, "dDP": gap})
    pts = pd.DataFrame(rows)
    table, r = validity.group_spread_test(pts, ["rabbi"], ["dDP"], permutations=200, seed=1)
    for grp, part in pts.groupby("group"):
        expected = np.corrcoef(part["rabbi"], part["dDP"])[0, 1]
        assert float(r.set_index("group").loc[grp, "r"]) == pytest.approx(expected)
    row = table.iloc[0]
    assert row["spread"] == pytest.approx(r["r"].max() - r["r"].min())
    assert row["p_value"] == pytest.approx(1 / 201)  # no shuffle reaches a spread near 2
    assert row["null_mean"] <= row["null_q95"] < row["spread"]
    with pytest.raises(ValueError, match="permutations"):
        validity.group_spread_test(pts, ["rabbi"], ["dDP"], permutations=0)
    with pytest.raises(ValueError, match="exactly once"):
        validity.group_spread_test(pts.iloc[:-1], ["rabbi"], ["dDP"], permutations=5)


def test_findings_glue_the_chapters_keys_with_plain_types(findings):
    g = findings.glue_values()
    assert_findings_glue(g, "06_group_correlation")  # every key the prose quotes, ctl_n_tracks_* included
    for key in ("k", "rounds", "n_systems", "n_jobs", "n_others", "n_points", "n_per_group", "permutations",
                "n_perm", "n_splits", "n_models", "n_corr_min", "n_pooled", "n_below_005", "n_tests",
                "paper_n_per_group", "ctl_n_tracks_rabbi_dDP"):
        assert type(g[key]) is int, key
    for key in ("confidence_pct", "read_seconds", "spread_dDP_rabbi", "ci_width_at_zero", "overlap_pct", "r_check",
                "p_min", "sep_rabbi_mean", "r_dDP_rabbi_female_black", "ctl_heldout_min_rabbi_dDP"):
        assert type(g[key]) is float, key
    for key in ("reference", "group_min_dDP_rabbi", "narrowest_dDP", "widest_dEO", "p_min_where",
                "sep_rabbi_min_where"):
        assert type(g[key]) is str, key
    assert g["n_per_group"] == g["n_corr_min"] == g["n_corr_max"] == len(SYSTEMS) * len(JOBS)
    assert g["n_others"] == g["n_groups_correlated"] == len(D.GROUPS) - 1
    assert g["n_points"] == g["n_pooled"] == g["n_others"] * g["n_per_group"]
    assert g["n_models"] == 2 and g["reference"] == D.REFERENCE_GROUP
    assert g["r_check"] < 1e-9  # the permutation test's correlations agree with validity_table
    assert g["n_tests"] == len(GAPS) * len(METRICS)
    assert g["p_min"] >= 1 / 51
    for gap, metric in itertools.product(GAPS, METRICS):
        rs = [g[f"r_{gap}_{metric}_{gc.group_slug(grp)}"] for grp in findings.others]
        assert g[f"spread_{gap}_{metric}"] == pytest.approx(max(rs) - min(rs))


def test_findings_views_and_exercises(findings):
    view = findings.controls_view()
    assert set(view["metric"]) == {"RABBI", "mean gap δ"} and "verdict" in view.columns
    # the verdict column and the glued counts are validity.verdict_words of the same per-group rows
    part = findings.controls[findings.controls["metric"].isin(["rabbi", "avg_gap"])].reset_index(drop=True)
    assert view["verdict"].tolist() == [validity.verdict_words(r)["verdict"] for _, r in part.iterrows()]
    g = findings.glue_values()
    for metric, gap in itertools.product(("rabbi", "avg_gap"), GAPS):
        rows = part[(part["metric"] == metric) & (part["gap"] == gap)]
        assert g[f"ctl_n_tracks_{metric}_{gap}"] == sum(validity.verdict_words(r)["tracks"] for _, r in rows.iterrows())
    assert list(findings.separation_view().index) == SYSTEMS
    # the exercises' spreads are computed by their solutions (validity.validity_table, Spearman's and by quota)
    assert not {"spearman_spreads", "spreads_by_k"} & set(dir(gc))


@pytest.mark.filterwarnings("ignore:The set_bad function:PendingDeprecationWarning")  # seaborn's heatmap
def test_figures_have_titled_axes(findings):
    for make in (gc.figure_correlations, gc.figure_intervals):
        fig = make(findings)
        assert isinstance(fig, plt.Figure)
        for ax in fig.axes:
            if ax.get_label() != "<colorbar>":
                assert ax.get_title() and (ax.get_xlabel() or fig.get_supxlabel()), make.__name__
        plt.close(fig)


@pytest.mark.parametrize("kwargs, name", [
    ({"k": 0}, "k must be"), ({"k": 8}, "k must be"), ({"permutations": 0}, "permutations"),
    ({"confidence": 1.0}, "confidence"), ({"n_perm": 0}, "n_perm"), ({"n_splits": 0}, "n_splits"),
    ({"rounds": 0}, "rounds"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gc.group_correlation_findings(SYSTEMS, JOBS, **kwargs, scores=synthetic_scores())
    with pytest.raises(ValueError, match="at least 4"):
        gc.group_correlation_findings(SYSTEMS[:1], JOBS, scores=synthetic_scores())
