"""Local Law 144 tables decide ties and flags exactly, on the counts as fractions (issue 38 item 7): a group whose rate
equals the top rate is a comparator even where floating-point division sets the two rates a hair apart, and a ratio
of exactly 0.8 is not flagged even where floating-point division puts it a hair below."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from allocbias import ll144
from allocbias.study import ll144_audits


def table(rows: list[tuple[str, float, float]], **kw) -> pd.DataFrame:
    counts = pd.DataFrame(rows, columns=["sex", "applicants", "selected"])
    return ll144.impact_ratio_table(counts, group="sex", exclude_below=None, **kw).set_index("group")


def test_equal_rates_are_a_tie_whatever_the_floats_say():
    # 0.7 / 7 is 0.09999999999999999 in floating point, 0.1 / 1 is 0.1: as fractions both are 1/10
    assert 0.7 / 7 != 0.1 / 1
    t = table([("A", 7, 0.7), ("B", 1, 0.1), ("C", 10, 0.5)])
    assert t["comparator"].to_dict() == {"A": True, "B": True, "C": False}
    assert t.loc["A", "impact_ratio"] == 1.0 and t.loc["C", "impact_ratio"] == 0.5
    # rebuilt counts of a published audit: 15,099 x 0.34 as the file writes it is a hair above 0.34; read as the
    # decimal it is written as, it is not a tie, and a count written 5133.66 is
    assert table([("F", 7504, 2551.36), ("M", 15099, 5133.66)])["comparator"].all()
    assert table([("F", 7504, 2551.36), ("M", 15099, 5133.660000000001)])["comparator"].tolist() == [False, True]


def test_a_ratio_of_exactly_the_bound_is_not_flagged():
    # 1/3 against 5/12 is 4/5 exactly; in floating point (1/3) / (5/12) is 0.7999999999999999
    assert (1 / 3) / (5 / 12) < 0.8 and Fraction(1, 3) / Fraction(5, 12) == Fraction(4, 5)
    t = table([("A", 3, 1), ("B", 12, 5), ("C", 300, 99)])
    assert not t.loc["A", "four_fifths"] and t.loc["C", "four_fifths"]  # 0.33 / (5/12) = 0.792
    assert t.loc["A", "impact_ratio"] == 0.8


def test_whole_counts_need_no_fractions_and_missing_counts_stay_missing():
    t = table([("A", 10**9, 3 * 10**8), ("B", 3, 1), ("Unknown", 5, float("nan"))])
    assert t["comparator"].to_dict() == {"A": False, "B": True, "Unknown": False}
    assert pd.isna(t.loc["Unknown", "impact_ratio"])


def test_chapter_15_rules():
    sizes = pd.DataFrame({"audit_id": ["a", "a", "b", "b"], "applicants": [3, 3, 3, 40],
                          "false_flag_rate": [0.1, 0.25, 0.2, 0.01]})
    smallest = ll144_audits.smallest_groups(sizes)
    assert smallest.index.tolist() == [1, 2]  # of equally small groups, the one flagged most often
    assert ll144_audits.tie_phrase(2, 3).startswith("one of 2 compared groups with 3 applicants")
    text = ll144_audits.spread_phrase(pd.Series([1e-40, 1e-21, 3e-21, 1e-6, 0.2]))
    assert "half below 3 × 10⁻²¹" in text and "80% are below 1%" in text and "20% at or above 5%" in text
    with pytest.raises(ValueError):
        ll144_audits.power_of_ten(-1.0)
