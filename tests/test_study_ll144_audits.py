"""allocbias.study.ll144_audits: the published-audits chapter's findings on a small subset and synthetic data.

The helpers are checked on hand-made frames; the findings function runs end to end on six published audits
(three of them scoring-tool sex tables), with few simulated applicants and a synthetic study system of 48
candidates, so it needs no model and runs in seconds."""

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
from allocbias.study import ll144_audits  # noqa: E402
from allocbias.study.ll144_audits import (
    audit_label,
    figure_bounds,
    figure_impact_ratios,
    figure_simulation,
    interval_text,
    ll144_audits_findings,
    per_audit_bounds,
    read_audits,
    table_view,
)

SMALL = dict(sim_n=300, grid_points=51, study_rounds=50, sim_spreads=[0.5, 2.0])


def study_like(seed: int = 0) -> pd.DataFrame:
    """Two jobs x eight sex-race groups x three candidates; men score one point higher on average."""
    rng = np.random.default_rng(seed)
    rows = [dict(job=job, group=f"{sex} {race}", sex=sex, race=race, score=float(rng.normal(5 + (sex == "Male"), 1)))
            for job in ("j1", "j2") for sex in ("Female", "Male") for race in ("White", "Black", "Asian", "Hispanic")
            for _ in range(3)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def subset():
    audits = read_audits()
    scoring = audits[(audits["selection_or_scoring_rate"] == "Scoring")
                     & (audits["protected_char_group"] == "sex")]["audit_id"].unique()[:3]
    keep = list(audits["audit_id"].drop_duplicates()[:6]) + list(scoring)
    return audits[audits["audit_id"].isin(keep)]


@pytest.fixture(scope="module")
def findings(subset):
    return ll144_audits_findings(**SMALL, audits=subset, study=study_like())


def test_module_doctests():
    result = doctest.testmod(ll144_audits, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


def test_helpers():
    assert interval_text(0.5, 1.0, digits=2) == "0.50–1.00"
    assert interval_text(None, 1.0) == ""
    rows = pd.DataFrame({"deploying_entity": ["X", "Y"], "tool_id": ["t", "u"], "year_of_audit_result": [2024, 2023]})
    assert audit_label(rows) == "X, t, 2024"


def test_table_view_shows_counts_as_integers_and_wraps_text():
    frame = pd.DataFrame({"group": ["F", "M"], "applicants": [529810.0, 10.0], "selected": [2.5, 1.0],
                          "rate": [1 / 3, 0.1], "note": ["a rather long note that should wrap", ""]})
    html = table_view(frame, wrap=["note"]).to_html()
    assert ">529,810<" in html and "529810" not in html  # whole-number counts as integers, thousands separated
    assert ">2.500<" in html  # a shared seat keeps its fraction
    assert ">0.333<" in html
    assert "white-space: normal" in html and "row_heading" not in html
    with pytest.raises(ValueError, match="wrap"):
        table_view(frame, wrap=["missing"])
    html = table_view(frame, precision=2, digits={"rate": 4}).to_html()
    assert ">0.3333<" in html and ">2.50<" in html
    with pytest.raises(ValueError, match="digits"):
        table_view(frame, digits={"missing": 1})


def test_table_view_is_the_book_s_table_with_the_chapter_s_words():
    """Issue 39: the chapter's tables showed code (``four_fifths``, ``tables_any_ir_below``, ``audit_id``) and,
    through the display hook, lost the digits a table asked for. table_view is show_table's table: headers and
    values in words, a dash with its note, the digits it is given."""
    frame = pd.DataFrame({"group": ["F", "M"], "four_fifths": [True, False], "impact_ratio": [0.7, float("nan")],
                          "detectable ratio": [0.59721, 0.6]})
    style = table_view(frame, digits={"detectable ratio": 4}, dash_note="a dash: not compared")
    assert style.data.to_dict("list") == {"group": ["F", "M"], "below 0.8": ["yes", "no"], "impact ratio": ["0.700", "–"],
                                          "detectable ratio": ["0.5972", "0.6000"]}
    assert "a dash: not compared" in style.to_html() and getattr(style, "_allocbias_book", False)


def test_the_chapter_s_views_say_their_quantities_and_audits_in_words(findings):
    versus = ll144_audits.versus_view(findings)
    assert not versus["quantity"].str.contains("_").any()
    assert set(ll144_audits.HEADLINE_WORDS) >= set(findings.versus["quantity"])
    sim = ll144_audits.sim_view(findings)
    assert sim.columns[0] == "audit" and not sim["audit"].isin(findings.sim_table["audit_id"]).any()
    assert sim["audit"].is_unique and sim.drop(columns="audit").equals(findings.sim_table.drop(columns="audit_id"))
    small = ll144_audits.smallest_view(findings)
    assert "category" not in small and len(small) == len(findings.smallest)
    group, comparator = findings.smallest.iloc[0][["applicants", "comparator's applicants"]].astype(int)
    assert small["applicants, group : comparator"].iloc[0] == f"{group:,} : {comparator:,}"


def test_per_audit_bounds_by_hand():
    bounds = pd.DataFrame({
        "audit_id": ["a", "a", "a", "b", "b"], "unknown": [False, False, True, False, False],
        "excluded": False, "impact_ratio": [1.0, 0.7, np.nan, 1.0, 0.9], "four_fifths": [False, True, False, False, False],
        "impact_ratio_lower": [0.9, 0.5, np.nan, np.nan, np.nan], "impact_ratio_lower_prop": [0.95, 0.6, np.nan, np.nan, np.nan],
        "four_fifths_possible": [False, True, False, False, False]})
    per = per_audit_bounds(bounds, 0.8)
    assert per.loc["a"].to_dict() == {"passes": False, "has_bounds": True, "could_fail": True, "could_fail_prop": True,
                                      "min_ir": 0.7, "min_lower": 0.5, "min_lower_prop": 0.6}
    assert bool(per.loc["b", "passes"]) and not bool(per.loc["b", "has_bounds"])
    with pytest.raises(ValueError, match="bounds"):
        per_audit_bounds(bounds.drop(columns="four_fifths"), 0.8)


def test_glue_values_have_the_chapter_keys_and_plain_types(findings, subset):
    g = findings.glue_values()
    for key in ["audits_n", "reports_n", "rows_n", "compared_n", "audits_recomputed_ir_disagree_n", "reason_rounded_n",
                "reason_unexplained_n", "unexplained_dci_share", "audits_any_ir_below_0_8_share",
                "results_ir_below_0_8_share", "audits_any_ir_above_1_share", "audits_missing_demographics_share",
                "headlines_max_diff", "sex_tables_below_n", "bounds_pass_n", "bounds_could_fail_n", "sim_tables_n",
                "sim_pfair_min", "sim_example", "sim_spreads_text", "study_system", "study_min_group", "study_parity",
                "demo_audit", "demo_min_ir", "paper_audits", "top_auditor", "size_detect_n", "size_detect_den",
                "size_flagged_n", "size_flagged_often_n", "size_ffr_median", "size_dr_median", "size_detect_words"]:
        assert key in g, key
    assert len(g) == 119  # 87 + the size section: 26 values, 6 phrases
    for key in ("size_ffr_spread", "size_smallest_tie", "size_tied_comparators_n", "size_comparator_rebuilt_max_diff",
                "size_comparator_whole_differs_n", "size_ffr_q1", "size_ffr_q3"):
        assert key in g, key
    for key, value in g.items():
        assert type(value) in (int, float, str), (key, type(value))
    assert g["audits_n"] == subset["audit_id"].nunique() == 6 and g["rows_n"] == len(subset)
    assert g["sim_spreads_text"] == "0.5, 2" and g["study_parity"] == 0.25 and g["study_rounds"] == 50


def test_findings_agree_with_ll144_directly(findings, subset):
    g = findings.glue_values()
    compared = ll144.compare_reported(subset, group=list(ll144.AUDIT_GROUPS), **ll144_audits.COUNTS,
                                      reported_rate="result", reported_ratio="impact_ratio",
                                      by=list(ll144.AUDIT_TABLE), exclude_below=0.02, tol=0.01)
    assert g["audits_recomputed_ir_disagree_n"] == int(compared.loc[compared["impact_ratio"].notna()
                                                                     & compared["reported_impact_ratio"].notna(),
                                                                     "disagrees"].sum())
    reasons = ["reason_counts_n", "reason_rounded_n", "reason_comparator_n", "reason_unexplained_n"]
    assert sum(g[r] for r in reasons) == g["audits_recomputed_ir_disagree_n"]
    assert findings.by_auditor.drop(columns="auditor").to_numpy().sum() == g["audits_recomputed_ir_disagree_n"]
    assert g["sim_cut_error"] < 0.05  # the simulated samples reproduce their tables at the cut (300 applicants)
    assert 0 <= g["sim_pfair_min"] <= g["sim_pfair_max"] <= 1
    assert g["bounds_could_fail_prop_n"] <= g["bounds_could_fail_n"] <= g["bounds_pass_n"] <= g["bounds_audits_n"]


def test_tables_are_narrow_and_readable(findings):
    assert list(findings.demo.columns) == ["group", "applicants", "rate", "impact ratio", "95% interval",
                                           "bounds for the unknown", "note"]
    assert (findings.demo["applicants"] % 1 == 0).all()
    assert findings.demo["note"].map(type).eq(str).all()
    assert "auditor" in findings.by_auditor.columns and "tool" in findings.kinds.columns
    assert list(findings.versus.columns) == ["quantity", "numerator", "denominator", "ours", "paper", "source"]
    assert findings.sim_table.columns[0] == "audit_id" and findings.sim_table.columns[-1] == "published IR"
    assert len(findings.sim_table.columns) == 2 + 2 * len(SMALL["sim_spreads"])
    assert set(findings.study["category"]) == {"sex", "race", "sex × race"}


def test_figures_return_titled_axes(findings):
    for draw in (figure_impact_ratios, figure_bounds, figure_simulation):
        fig = draw(findings)
        assert isinstance(fig, Figure)
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        plt.close(fig)


@pytest.mark.parametrize(("name", "value"), [
    ("bound", 0), ("tol", -0.1), ("exclude_below", 1.5), ("sim_n", 0), ("sim_spreads", []), ("grid_points", 1),
    ("seed", -1), ("study_k", 9), ("study_rounds", 0),
])
def test_bad_parameters_raise_naming_them(name, value, subset):
    with pytest.raises(ValueError, match=name):
        ll144_audits_findings(**{**SMALL, name: value}, audits=subset, study=study_like())


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="audits"):
        ll144_audits_findings(**SMALL, audits=pd.DataFrame({"audit_id": [1]}), study=study_like())


def test_share_words():
    assert [ll144_audits.share_words(k, 4) for k in (4, 3, 2, 1, 0)] == ["all", "all but one", "half", "one", "none"]
    assert ll144_audits.share_words(7, 10) == "most" and ll144_audits.share_words(3, 10) == "a minority"
    with pytest.raises(ValueError, match="k and n"):
        ll144_audits.share_words(5, 4)


def test_audit_sizes_by_hand():
    """Two tables of one audit: whole counts (with p-values) and a rebuilt rate (without); rows without counts and
    the comparators are left out and counted."""
    base = dict(audit_id="a", selection_or_scoring_rate="Selection", race_ethnicity="Total")
    rows = [dict(base, protected_char_group="sex", sex="Female", number_of_applications=40,
                 n_selected_or_n_above_median=4),
            dict(base, protected_char_group="sex", sex="Male", number_of_applications=400,
                 n_selected_or_n_above_median=100),
            dict(base, protected_char_group="sex", sex="Unknown", number_of_applications=np.nan,
                 n_selected_or_n_above_median=np.nan),
            dict(base, protected_char_group="race/ethnicity", sex="Total", race_ethnicity="White",
                 number_of_applications=200, n_selected_or_n_above_median=96.0),
            dict(base, protected_char_group="race/ethnicity", sex="Total", race_ethnicity="Asian",
                 number_of_applications=60, n_selected_or_n_above_median=14.4),
            dict(base, protected_char_group="race/ethnicity", sex="Total", race_ethnicity="Black",
                 number_of_applications=np.nan, n_selected_or_n_above_median=np.nan)]
    groups, left = ll144_audits.audit_sizes(pd.DataFrame(rows))
    assert groups["group"].tolist() == ["Female", "Asian"] and groups["counts"].tolist() == ["whole", "rate only"]
    assert groups["false_flag_rate"].tolist() == pytest.approx(
        [ll144.false_flag_rate(40, 400, 0.25), ll144.false_flag_rate(60, 200, 0.48)], abs=1e-12)
    assert groups["detectable_ratio"].iloc[1] == pytest.approx(ll144.detectable_ratio(60, 200, 0.48), abs=1e-9)
    assert not np.isnan(groups["p_value"].iloc[0]) and np.isnan(groups["p_value"].iloc[1])
    left = left.set_index("reason")["rows"]
    assert left.iloc[0] == 1 and left.index[0].startswith("published without")  # the Black row; Unknown is kept
    assert left["the table's comparator (highest rate)"] == 2 and left["unknown category (counted, never compared)"] == 1


def test_size_findings_agree_with_the_library(findings, subset):
    g = findings.glue_values()
    sizes = findings.sizes
    assert g["size_groups_n"] == len(sizes) and g["size_audits_n"] == sizes["audit_id"].nunique()
    assert g["size_whole_n"] + g["size_rate_only_n"] == g["size_groups_n"]
    smallest = ll144_audits.smallest_groups(sizes)
    assert g["size_detect_den"] == len(smallest)
    assert (smallest.groupby("audit_id")["applicants"].first() == sizes.groupby("audit_id")["applicants"].min()).all()
    assert g["size_detect_n"] == int((smallest["detectable_ratio"] >= g["size_ratio"]).sum())
    assert g["size_detect_words"] == ll144_audits.share_words(g["size_detect_n"], g["size_detect_den"])
    flagged = sizes[sizes["four_fifths"]]
    assert g["size_flagged_n"] == len(flagged) and g["size_flagged_often_n"] == int(
        (flagged["false_flag_rate"] >= g["size_false_flag"]).sum())
    assert g["size_dr_median"] == pytest.approx(sizes["detectable_ratio"].median())
    # one path: a whole-count group's numbers are ll144's at its counts against its table's comparator
    row = sizes[sizes["counts"] == "whole"].iloc[0] if (sizes["counts"] == "whole").any() else sizes.iloc[0]
    assert row["false_flag_rate"] == pytest.approx(ll144.false_flag_rate(
        row["applicants"], row["comparator_applicants"], row["comparator_rate"]), abs=1e-12)
    assert (sizes["detectable_ratio"].dropna() <= 0.8 + 1e-9).all()
    assert g["size_left_out_n"] == findings.size_left_out["rows"].sum()
    assert len(findings.smallest) <= ll144_audits.SMALLEST_ROWS
    assert findings.smallest["applicants"].is_monotonic_increasing
    assert g["size_smallest_reading"].startswith(f"with {int(findings.smallest['applicants'].iloc[0]):,} applicants")
    fig = ll144_audits.figure_audit_sizes(findings)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_title() and len(ax.collections) >= 1
    plt.close(fig)


@pytest.mark.parametrize("name", ["size_ratio", "size_false_flag"])
def test_bad_size_parameters_raise_naming_them(name, subset):
    for value in (0, 1.5, True):
        with pytest.raises(ValueError, match=name):
            ll144_audits_findings(**{**SMALL, name: value}, audits=subset, study=study_like())
