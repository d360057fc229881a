"""Local Law 144 audit tables from counts (allocbias.ll144, the section after the curve metrics).

Hand-computed tables, the rules' 2% exclusion, missing-data bounds against the formulas of Gerchick et al.
(and the authors' own released bound columns), bad input, and the published audits' headline shares.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from allocbias import data, ll144

AUDITS = data.data_dir() / "ll144_audits" / "audits.csv"


@pytest.fixture(scope="module")
def audits():
    return pd.read_csv(AUDITS)


def counts(**cols):
    return pd.DataFrame(cols)


def test_hand_computed_table_with_margins_and_unknown():
    c = counts(sex=["F", "F", "M", "M", "Unknown"], race=["A", "B", "A", "B", "Unknown"],
               applicants=[40, 60, 50, 50, 20], selected=[10, 30, 20, 25, 5])
    t = ll144.impact_ratio_table(c, group=["sex", "race"])
    assert list(t["category"].unique()) == ["sex", "race", "sex × race"]
    sex = t[t["category"] == "sex"].set_index("group")
    assert sex.loc["F", "rate"] == pytest.approx(0.4) and sex.loc["M", "rate"] == pytest.approx(0.45)
    assert sex.loc["F", "impact_ratio"] == pytest.approx(0.4 / 0.45)
    assert sex.loc["F", "race"] == "Total"  # summed over race
    race = t[t["category"] == "race"].set_index("group")
    assert race.loc["A", "impact_ratio"] == pytest.approx((30 / 90) / (55 / 110))
    assert bool(race.loc["A", "four_fifths"])
    cross = t[t["category"] == "sex × race"].set_index("group")
    assert cross.loc["F A", "impact_ratio"] == pytest.approx(0.5)
    assert cross["comparator"].sum() == 2  # F B and M B tie at 0.5
    # the unknown category is counted, never a group
    unk = t[t["unknown"]]
    assert len(unk) == 3 and (unk["applicants"] == 20).all()
    assert unk["impact_ratio"].isna().all() and not unk["four_fifths"].any() and not unk["comparator"].any()
    assert (unk["note"].str.contains("unknown")).all()


def test_reported_margin_rows_are_used_as_reported():
    # a report's sex table (race Total) disagrees with the sum of its cross table: the reported rows win
    c = counts(sex=["F", "M", "F", "F", "M", "M"], race=["Total", "Total", "A", "B", "A", "B"],
               applicants=[100, 100, 40, 50, 50, 50], selected=[30, 60, 10, 15, 30, 30])
    t = ll144.impact_ratio_table(c, group=["sex", "race"])
    sex = t[t["category"] == "sex"].set_index("group")
    assert sex.loc["F", "applicants"] == 100 and sex.loc["F", "impact_ratio"] == pytest.approx(0.5)
    race = t[t["category"] == "race"].set_index("group")
    assert race.loc["A", "applicants"] == 90  # no reported race table: the cross table summed


def test_two_percent_exclusion_changes_the_comparator():
    c = counts(race=["A", "B", "C"], applicants=[1000, 1000, 10], selected=[500, 400, 9])
    t = ll144.impact_ratio_table(c, group="race").set_index("group")
    assert bool(t.loc["C", "excluded"]) and not bool(t.loc["C", "comparator"])
    assert bool(t.loc["A", "comparator"]) and t.loc["B", "impact_ratio"] == pytest.approx(0.8)
    assert t.loc["C", "impact_ratio"] == pytest.approx(0.9 / 0.5)  # informative, above 1, never flagged
    assert not bool(t.loc["C", "four_fifths"]) and "below 2%" in t.loc["C", "note"]
    kept = ll144.impact_ratio_table(c, group="race", exclude_below=None).set_index("group")
    assert bool(kept.loc["C", "comparator"]) and kept.loc["A", "impact_ratio"] == pytest.approx(0.5 / 0.9)


def test_by_separates_tables():
    c = counts(audit=["x", "x", "y", "y"], sex=["F", "M", "F", "M"], applicants=[10, 10, 10, 10],
               selected=[5, 10, 10, 5])
    t = ll144.impact_ratio_table(c, group="sex", by="audit")
    assert t[t["audit"] == "x"].set_index("group")["impact_ratio"].to_dict() == {"F": 0.5, "M": 1.0}
    assert t[t["audit"] == "y"].set_index("group")["impact_ratio"].to_dict() == {"F": 1.0, "M": 0.5}


def test_zero_comparator_rate_says_why():
    t = ll144.impact_ratio_table(counts(sex=["F", "M"], applicants=[10, 10], selected=[0, 0]), group="sex")
    assert t["impact_ratio"].isna().all()
    assert t["note"].str.contains("comparator's rate is 0").all()
    assert not t["four_fifths"].any()


@pytest.mark.parametrize(("frame", "message"), [
    (counts(sex=["F", "M"], applicants=[10, -1], selected=[1, 0]), r"row 1 \(sex='M'\), column 'applicants'.*negative"),
    (counts(sex=["F", "M"], applicants=[10, 10], selected=[11, 0]), r"row 0 \(sex='F'\): column 'selected' exceeds column 'applicants'"),
    (counts(sex=["F", "M"], applicants=[10, np.nan], selected=[1, 0]), r"'applicants'.*no count.*'M'"),
    (counts(sex=pd.Series([], dtype=object), applicants=[], selected=[]), r"no rows"),
    (counts(sex=["F", None], applicants=[10, 10], selected=[1, 1]), r"column 'sex'.*missing label"),
    (counts(sex=["Total", "Total"], applicants=[10, 10], selected=[1, 1]), r"no rows to compare"),
])
def test_bad_input_raises_naming_column_and_group(frame, message):
    with pytest.raises(ValueError, match=message):
        ll144.impact_ratio_table(frame, group="sex")


def test_every_group_excluded_raises_naming_the_groups():
    c = counts(race=list("ABCDEFGHIJ") * 6, applicants=[1] * 60, selected=[0] * 60)
    c["race"] = [f"{r}{i}" for i, r in enumerate(c["race"])]
    with pytest.raises(ValueError, match=r"every group of column\(s\) \['race'\].*excluded.*'A0'"):
        ll144.impact_ratio_table(c, group="race")


def test_missing_data_bounds_formulas():
    c = counts(sex=["F", "M", "Unknown"], applicants=[100, 300, 40], selected=[38, 150, 0])
    t = ll144.missing_data_bounds(c, group="sex").set_index("group")
    m, top = 40, 0.5
    assert t.loc["F", "rate_lower"] == pytest.approx(38 / 140)
    assert t.loc["F", "rate_upper"] == pytest.approx(78 / 140)
    assert t.loc["F", "impact_ratio_lower"] == pytest.approx(38 / 140 / top)
    p = 100 / 400
    assert t.loc["F", "rate_upper_prop"] == pytest.approx((38 + m * p) / (100 + m * p))
    assert t.loc["F", "impact_ratio_lower_prop"] == pytest.approx(38 / (100 + m * p) / top)
    assert bool(t.loc["F", "four_fifths_possible"]) and bool(t.loc["F", "four_fifths"])
    assert not bool(t.loc["F", "four_fifths_certain"])  # the upper bound passes
    for name in ["rate", "impact_ratio"]:
        for g in "FM":
            assert t.loc[g, f"{name}_lower"] <= t.loc[g, name] + 1e-12 <= t.loc[g, f"{name}_upper"] + 2e-12
            assert t.loc[g, f"{name}_lower"] <= t.loc[g, f"{name}_lower_prop"] + 1e-12
    # the scenario comparator: M's own bound moves the comparator, so its ratio never exceeds 1
    s = ll144.missing_data_bounds(c, group="sex", comparator="scenario").set_index("group")
    assert s.loc["M", "impact_ratio_upper"] == pytest.approx(1.0)
    assert s.loc["M", "impact_ratio_lower"] == pytest.approx((150 / 340) / max(150 / 340, 0.38))
    assert s.loc["F", "impact_ratio_upper"] == pytest.approx(1.0)  # (78/140) > 0.5: F becomes the top group


def test_bounds_need_an_unknown_count():
    t = ll144.missing_data_bounds(counts(sex=["F", "M"], applicants=[10, 10], selected=[5, 4]), group="sex")
    assert t["rate_lower"].isna().all() and t["note"].str.contains("reports no unknown").all()
    zero = ll144.missing_data_bounds(counts(sex=["F", "M", "Unknown"], applicants=[10, 10, 0], selected=[5, 4, 0]),
                                     group="sex").set_index("group")
    assert zero.loc["F", "rate_lower"] == zero.loc["F", "rate_upper"] == 0.5


def test_bounds_match_the_authors_released_columns(audits):
    """Our bounds, with the paper's comparator (the observed top rate) and its unknown count, equal the authors'
    released bound columns on every sex and race table with one rate definition, a reported unknown count and
    no excluded group."""
    single = audits.groupby("audit_id")["selection_or_scoring_rate"].transform("nunique") == 1
    rows = audits[single & (audits["protected_char_group"] != "intersectional")]
    known = ~((rows["sex"] == "Missing/Unknown") | (rows["race_ethnicity"] == "Missing/Unknown"))
    complete = rows[["number_of_applications", "n_selected_or_n_above_median", "result"]].notna().all(axis=1)
    rows = rows[~known | complete]
    known = known.loc[rows.index]
    has_known = known.groupby([rows[c] for c in ll144.AUDIT_TABLE]).transform("any")
    rows, known = rows[has_known], known[has_known]
    ours = ll144.missing_data_bounds(rows, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                     selected="n_selected_or_n_above_median", by=list(ll144.AUDIT_TABLE),
                                     margins=False, exclude_below=None)
    theirs = rows[known].set_index([*ll144.AUDIT_TABLE, *ll144.AUDIT_GROUPS])
    both = ours[~ours["unknown"]].set_index([*ll144.AUDIT_TABLE, *ll144.AUDIT_GROUPS]).join(
        theirs[["result_lower_bound", "result_upper_bound", "comparator_result", "result"]], how="inner")
    # the authors divide by the top *reported* rate; compare the rate bounds, which do not depend on it
    both = both.dropna(subset=["result_lower_bound", "rate_lower"])
    # where a table has two unknown rows, the authors' n_miss is the first row's count; ours is their sum
    n_unknown_rows = (~known).groupby([rows[c] for c in ll144.AUDIT_TABLE]).sum()
    several = n_unknown_rows[n_unknown_rows > 1].index
    split = both.index.droplevel(list(ll144.AUDIT_GROUPS)).isin(several)
    one = both[~split]
    assert len(one) > 200 and split.sum() > 0
    assert np.allclose(one["rate_lower"], one["result_lower_bound"], rtol=1e-6, atol=1e-9)
    assert np.allclose(one["rate_upper"], one["result_upper_bound"], rtol=1e-6, atol=1e-9)
    assert (both.loc[split, "rate_lower"] < both.loc[split, "result_lower_bound"]).all()  # more unknowns, wider


def test_allocation_counts_and_scoring_counts_feed_the_table():
    cands = pd.DataFrame({"sex": ["F", "M", "F", "M"], "race": ["A", "A", "B", "B"]})
    pools = np.array([[0, 1, 2, 3], [0, 1, 2, 3]])
    chosen = np.array([[1, 1, 0, 0], [0.5, 0.5, 1, 0]])
    got = ll144.allocation_counts(cands, pools, chosen, group=["sex", "race"])
    assert got["applicants"].tolist() == [2, 2, 2, 2] and got["selected"].tolist() == [1.5, 1.0, 1.5, 0.0]
    t = ll144.impact_ratio_table(got, group=["sex", "race"]).set_index(["category", "group"])
    assert t.loc[("sex", "M"), "impact_ratio"] == pytest.approx(1.5 / 2.5)
    with pytest.raises(ValueError, match="seat shares"):
        ll144.allocation_counts(cands, pools, chosen * 2, group="sex")
    df = ll144.synthetic_example(3, 6.0, n=500, seed=0)
    sc = ll144.scoring_counts(df, score="score", group="group")
    t = ll144.impact_ratio_table(sc, group="group", exclude_below=None).set_index("group")["impact_ratio"]
    assert t.to_dict() == pytest.approx(ll144.di_median(df["score"], df["group"]).to_dict())


def test_scores_consistent_with_rates_reproduce_the_rates():
    c = counts(sex=["F", "M"], applicants=[573856, 478161], selected=[271433.888, 222823.026])
    for spread in (None, {"F": 0.3}, {"M": 2.5}):
        sim = ll144.scores_consistent_with_rates(c, group="sex", n=4000, spread=spread, seed=3)
        rates = sim.groupby("sex")["score"].apply(lambda s: (s > 50).mean())
        assert rates["F"] == pytest.approx(0.473, abs=1e-3) and rates["M"] == pytest.approx(0.466, abs=1e-3)
        assert sim.equals(ll144.scores_consistent_with_rates(c, group="sex", n=4000, spread=spread, seed=3))
    with pytest.raises(ValueError, match="absent from column 'sex'"):
        ll144.scores_consistent_with_rates(c, group="sex", spread={"X": 1.0})


def test_compare_reported_reasons():
    base = dict(t=["a"] * 3, g=["A", "B", "C"], n=[200, 200, 200], s=[100, 80, 61])
    agree = counts(**base, rate=[0.5, 0.4, 0.305], ir=[1.0, 0.8, 0.61])
    assert (ll144.compare_reported(agree, group="g", applicants="n", selected="s", reported_rate="rate",
                                   reported_ratio="ir", by="t")["reason"] == "agrees").all()
    # every published ratio fits one comparator rate 0.625 that is not in the table
    other = counts(**base, rate=[0.5, 0.4, 0.305], ir=[0.8, 0.64, 0.49])
    got = ll144.compare_reported(other, group="g", applicants="n", selected="s", reported_rate="rate",
                                 reported_ratio="ir", by="t")
    assert set(got.loc[got["disagrees"], "reason"]) == {"another comparator"}
    # rates rounded to one decimal allow the published ratio
    rounded = counts(t=["a"] * 2, g=["A", "B"], n=[1000, 1000], s=[540, 360], rate=[0.5, 0.4], ir=[1.0, 0.8])
    got = ll144.compare_reported(rounded, group="g", applicants="n", selected="s", reported_rate="rate",
                                 reported_ratio="ir", by="t")
    assert got.loc[got["disagrees"], "reason"].tolist() == ["rounded rates"]
    wrong = counts(t=["a"] * 2, g=["A", "B"], n=[100, 100], s=[50, 20], rate=[0.5, 0.4], ir=[1.0, 0.8])
    got = ll144.compare_reported(wrong, group="g", applicants="n", selected="s", reported_rate="rate",
                                 reported_ratio="ir", by="t")
    assert got.loc[got["disagrees"], "reason"].tolist() == ["counts do not give the rate"]


def test_published_headlines_reproduce_the_paper(audits):
    paper = pd.read_csv(data.data_dir() / "paper" / "auditing_the_audits.csv").set_index("quantity")["value"]
    ours = ll144.published_audit_headlines(audits).set_index("quantity")["share"]
    for q in ["audits_any_ir_below", "tables_any_ir_below", "audits_any_ir_above_1", "audits_first_use_unknown",
              "audits_position_unknown", "audits_missing_demographics"]:
        assert round(ours[q], 2) == pytest.approx(paper[q]), q
    rows = ll144.published_audit_rows(audits)
    assert "Hackerrank" not in set(rows["deploying_entity"])
    assert not ((rows["tool_vendor"] == "dover") & (rows["selection_or_scoring_rate"] == "Scoring")).any()


def test_data_card_counts_match_the_file(audits):
    card = (AUDITS.parent / "README.md").read_text()
    assert f"{len(audits)} rows" in card and f"{audits.shape[1]} columns" in card
    for col, word in [("audit_id", "audits"), ("audit_report_id", "audit reports"),
                      ("deploying_entity", "deploying entities"), ("tool_vendor", "vendors"), ("auditor", "auditors")]:
        assert re.search(rf"\b{audits[col].nunique()} {word}", card), (col, word)
    assert "cef7c27398dc73852f06f20120500d361abbd37e" in card and "CC BY-NC 4.0" in card


def test_published_table_reads_strictly_and_sums_its_repeated_unknown_row(audits):
    """The committed table passes the strict reading (no total-like, repeated or case-clashing known labels; no
    infinite counts), and the one table with two unknown rows gets their sum as its count of unknown applicants."""
    rows = ll144.published_audit_counts(audits)
    t = ll144.missing_data_bounds(rows, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                  selected="n_selected_or_n_above_median", by=list(ll144.AUDIT_TABLE), margins=False)
    one = t[(t["audit_id"] == "morgan_stanley_eightfold_blds_llc_2024_audit_1")
            & (t["selection_or_scoring_rate"] == "Scoring") & (t["protected_char_group"] == "intersectional")]
    assert one["n_unknown"].dropna().unique().tolist() == [1093 + 19890]
    card = (AUDITS.parent / "README.md").read_text()
    assert "## Oddities of the upstream table" in card and "morgan_stanley_eightfold_blds_llc_2024_audit_1" in card
    # a known group listed twice would be refused, naming both rows
    twice = pd.concat([rows, rows[rows["sex"] == "Female"].head(1)], ignore_index=True)
    with pytest.raises(ValueError, match=rf"rows \d+ and {len(rows)} repeat the group sex='Female'"):
        ll144.impact_ratio_table(twice, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                 selected="n_selected_or_n_above_median", by=list(ll144.AUDIT_TABLE), margins=False)


def test_one_row_per_group_and_repeated_rows_give_the_same_table():
    """impact_ratio_table sums a table's rows per group; where each group is one row it only orders them. Both
    ways give one table: the unknown applicants written as two rows (summed) or as one, the labels text or
    numbers, fractional counts read as the decimals they are written as."""
    one = counts(audit=[2, 2, 2, 1, 1, 1], sex=["M", "F", "Unknown", 2, 1, 9],
                 applicants=[100, 80, 30, 40.5, 50, 6], selected=[40.1, 32.08, 3, 20, 25, 1])
    two = pd.concat([one.iloc[[0, 1, 3, 4, 5]], one.iloc[[2, 2]].assign(applicants=[10, 20], selected=[1, 2])])
    for frame in (one, two):
        t = ll144.impact_ratio_table(frame, group="sex", by="audit", unknown=["Unknown", 9])
        assert t["audit"].tolist() == [2, 2, 2, 1, 1, 1]  # cells in order of appearance, known groups first
        assert t["group"].tolist() == ["F", "M", "Unknown", "1", "2", "9"]
        assert t["comparator"].tolist() == [True, True, False, True, False, False]  # 32.08/80 == 40.1/100 exactly
        assert t.loc[2, "applicants"] == 30 and t.loc[2, "selected"] == 3
        assert t.loc[4, "impact_ratio"] == pytest.approx((20 / 40.5) / 0.5)
    pd.testing.assert_frame_equal(ll144.impact_ratio_table(one, group="sex", by="audit", unknown=["Unknown", 9]),
                                  ll144.impact_ratio_table(two, group="sex", by="audit", unknown=["Unknown", 9]),
                                  check_exact=True)


def test_table_characteristics_read_rows_by_position_not_label():
    """A table whose index is not 0..n-1 (a filtered or relabelled table) gets the characteristics of its rows:
    the whole-count check took row labels as positions (an IndexError, or another row's counts)."""
    t = ll144.impact_ratio_table(counts(sex=["F", "M", "F", "M"], tool=["a", "a", "b", "b"],
                                        applicants=[40, 400, 30, 300], selected=[4, 100, 3.5, 90]),
                                 group="sex", by="tool")
    plain = ll144.table_characteristics(t, by=["tool"], rates=True)
    relabelled = ll144.table_characteristics(t.set_index(t.index * 10 + 5), by=["tool"], rates=True)
    assert plain["status"].tolist() == ["compared", "comparator", "rate only", "comparator"]
    pd.testing.assert_frame_equal(relabelled.reset_index(drop=True), plain, check_exact=True)
