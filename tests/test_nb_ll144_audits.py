"""Assertions on notebooks/15_ll144_audits.ipynb executed through papermill (smoke profile).

The published-audit numbers do not depend on the smoke parameters (they read the committed data), so they are
checked against the paper's numbers (data/paper/auditing_the_audits.csv) and against the library run here.
"""

from __future__ import annotations


import pandas as pd
import pytest

from allocbias import data, ll144
from allocbias.study import ll144_audits

from .conftest import ROOT, assert_clean_outputs, assert_prose_glued, chapter_fixtures

pytestmark = pytest.mark.notebooks

STEM = "15_ll144_audits"
SOURCE = ROOT / "notebooks" / f"{STEM}.ipynb"
REQUIRED = ["audits_n", "audits_any_ir_below_0_8_share", "audits_any_ir_above_1_share", "results_ir_below_0_8_share",
            "audits_recomputed_ir_disagree_n"]

executed, glued, params = chapter_fixtures(STEM)


def test_runs_clean_with_three_figures(executed):
    assert assert_clean_outputs(executed[0]) >= 3


def test_every_glue_reference_in_the_prose_is_glued(glued):
    prose = assert_prose_glued(SOURCE, glued, more_than=40)
    for name in REQUIRED:
        assert name in glued and f"{{glue:text}}`{name}" in prose, name


def test_headlines_match_the_paper(glued):
    paper = pd.read_csv(data.data_dir() / "paper" / "auditing_the_audits.csv").set_index("quantity")["value"]
    assert glued["audits_n"] == paper["audits"] == 116
    assert round(glued["audits_any_ir_below_0_8_share"], 2) == paper["audits_any_ir_below"]
    assert round(glued["results_ir_below_0_8_share"], 2) == paper["tables_any_ir_below"]
    assert round(glued["audits_any_ir_above_1_share"], 2) == paper["audits_any_ir_above_1"]
    assert glued["sex_tables_below_n"] == paper["sex_tables_any_ir_below"] == 0
    assert glued["headlines_max_diff"] == 0


def test_disagreements_are_counted_and_classified(glued):
    reasons = ["reason_counts_n", "reason_rounded_n", "reason_comparator_n", "reason_unexplained_n"]
    assert sum(glued[r] for r in reasons) == glued["audits_recomputed_ir_disagree_n"]
    assert 0 < glued["audits_recomputed_ir_disagree_n"] < glued["compared_n"]
    audits = pd.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
    ours = ll144.compare_reported(audits, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                  selected="n_selected_or_n_above_median", reported_rate="result",
                                  reported_ratio="impact_ratio", by=list(ll144.AUDIT_TABLE),
                                  exclude_below=glued["exclude_below"], tol=glued["tol"])
    assert int(ours["disagrees"].sum()) == glued["audits_recomputed_ir_disagree_n"]


def test_bounds_and_simulation_are_consistent(glued):
    assert 0 < glued["bounds_could_fail_prop_n"] <= glued["bounds_could_fail_n"] <= glued["bounds_pass_n"]
    assert glued["bounds_pass_n"] <= glued["bounds_audits_n"] <= glued["audits_n"]
    assert glued["rows_lower_prop_below_share"] <= glued["rows_lower_below_share"]
    assert glued["sim_cut_error"] < 0.01  # every simulated sample reproduces its published ratio at the cut
    assert 0 <= glued["sim_pfair_min"] <= glued["sim_pfair_max"] <= 1
    assert glued["sim_pfair_min"] < glued["bound"] <= glued["sim_published_min"] + 0.2


def test_study_table(glued, params):
    assert glued["study_system"] == params["study_system"] and glued["study_rounds"] == params["study_rounds"]
    assert glued["study_parity"] == pytest.approx(params["study_k"] / 8)
    assert 0 <= glued["study_min_ir"] <= 1 and 0 <= glued["study_scoring_min_ir"] <= 1


def test_demo_table_is_bias_audit_of_the_published_counts(glued):
    """One path: the chapter's demo table is ll144.bias_audit of the demo audit's intersectional counts."""
    audits = pd.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
    demo_id = audits.loc[audits["protected_char_group"] == "intersectional", "audit_id"].iloc[0]
    demo = audits[(audits["audit_id"] == demo_id) & (audits["protected_char_group"] == "intersectional")]
    counts = demo.rename(columns={"race_ethnicity": "race", "number_of_applications": "applicants",
                                  "n_selected_or_n_above_median": "selected"})[["sex", "race", "applicants", "selected"]]
    table = ll144.bias_audit(counts, sex="sex", race="race", unknown=ll144.DEFAULT_UNKNOWN, tool="scoring").table
    inter = table[(table["table"] == "intersectional") & ~table["unknown"]]
    assert glued["demo_min_ir"] == inter.loc[~inter["excluded"], "impact_ratio"].min()
    assert glued["demo_excluded_n"] == int(inter["excluded"].sum())
    assert glued["demo_unknown_n"] == int(table.loc[table["table"] == "sex", "n_unknown"].iloc[0])


@pytest.fixture(scope="module")
def recomputed(glued):
    """The published audits' recomputed tables and their four-fifths characteristics (computed once: slow)."""
    audits = pd.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
    counts = ll144.published_audit_counts(audits)
    tables = ll144.impact_ratio_table(counts, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                      selected="n_selected_or_n_above_median", by=list(ll144.AUDIT_TABLE),
                                      margins=False, exclude_below=glued["exclude_below"])
    return audits, counts, tables, tables.join(ll144.table_characteristics(tables, by=list(ll144.AUDIT_TABLE),
                                                                           rates=True))


def test_audit_sizes_are_the_library_s(glued, recomputed):
    """Were the audits large enough: the glued counts follow from ll144.table_characteristics of the recomputed
    tables (one path), and the section has its label for chapter 12's pointer."""
    audits, counts, tables, ch = recomputed
    groups = ch[ch["status"].isin(["compared", "rate only"])]
    assert glued["size_groups_n"] == len(groups) and glued["size_whole_n"] == int((ch["status"] == "compared").sum())
    smallest = ll144_audits.smallest_groups(groups)
    assert glued["size_detect_den"] == len(smallest) <= glued["audits_n"]
    assert glued["size_detect_n"] == int((smallest["detectable_ratio"] >= glued["size_ratio"]).sum())
    flagged = groups[groups["four_fifths"]]
    assert glued["size_flagged_n"] == len(flagged)
    assert glued["size_flagged_often_n"] == int((flagged["false_flag_rate"] >= glued["size_false_flag"]).sum())
    assert glued["size_no_counts_n"] == len(audits) - len(counts)
    assert "(ll144-audit-size)=" in SOURCE.read_text()


def test_ties_are_exact_and_the_rules_are_stated(glued, recomputed):
    """A group tied with its table's comparator is decided on the counts as the file writes them (exact decimals,
    checked here with Python's fractions, not through the library's arithmetic); the glued counts and the spread of
    the false-flag rates are the library's."""
    from fractions import Fraction

    _, _, tables, ch = recomputed
    included = tables[~tables["unknown"] & ~tables["excluded"] & (tables["applicants"] > 0)]
    for _, part in included.groupby(list(ll144.AUDIT_TABLE)):
        rates = [Fraction(repr(float(s))) / Fraction(repr(float(a))) for s, a in zip(part["selected"],
                                                                                   part["applicants"])]
        assert part["comparator"].tolist() == [r == max(rates) for r in rates]
    groups = ch[ch["status"].isin(["compared", "rate only"])]
    with_groups = ch.set_index(list(ll144.AUDIT_TABLE)).index.isin(groups.set_index(list(ll144.AUDIT_TABLE)).index)
    comparators = ch[with_groups & (ch["status"] == "comparator")]
    assert glued["size_tied_comparators_n"] == len(comparators) - comparators.groupby(list(ll144.AUDIT_TABLE)).ngroups
    q = groups["false_flag_rate"].quantile([0.25, 0.5, 0.75]).tolist()
    assert glued["size_ffr_median"] == pytest.approx(q[1]) and glued["size_ffr_q1"] == pytest.approx(q[0])
    assert f"half below {ll144_audits.power_of_ten(q[1])}" in glued["size_ffr_spread"]
    source = SOURCE.read_text()
    for key in ("size_ffr_spread", "size_tied_comparators_n", "size_smallest_tie", "size_comparator_whole_differs_n"):
        assert f"{{glue:text}}`{key}" in source, key


def test_the_solutions_compute_and_glue_their_answers(glued):
    """Exercise 1 counts the audits by auditor, exercise 2 recomputes the tables without the 2% rule and exercise 4
    tabulates another study system at one seat with two seeds, each in its solution."""
    assert 0 < glued["ex_largest_auditor_n"] <= glued["ex_n_audits"]
    assert glued["ex_scoring_only"] and glued["ex_test_data"]
    assert glued["ex_disagree_rule"] == glued["audits_recomputed_ir_disagree_n"]  # the chapter's own comparison
    assert glued["ex_disagree_no_rule"] != glued["ex_disagree_rule"]  # the committed reports: the rule matters
    for key in ("ex_other_min_ir", "ex_other_min_ir_reseeded"):
        assert 0 <= glued[key] <= 1
    assert glued["ex_other_flags"] >= 0 and glued["ex_other_flags_reseeded"] >= 0
