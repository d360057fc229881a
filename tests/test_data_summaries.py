"""Summaries of the names table (names_summary) and the data-card readers (card_section, card_bullets)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias import data as D
from allocbias.audited.names import DEFAULT_RULE


@pytest.fixture(scope="module")
def names() -> pd.DataFrame:
    return D.load_names()


def _table(rows: list[tuple]) -> pd.DataFrame:
    cols = ["kind", "name", "group", "race", "race_share", "sex_share", "ssa_births", "frequency"]
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------------------------------------
# names_summary
# ----------------------------------------------------------------------------------------------


def test_names_summary_hand_computed():
    t = _table(
        [
            ("first", "Ann", "Female White", "White", 0.90, 0.99, 1000, 0.010),
            ("first", "Eve", "Female White", "White", 0.80, 0.97, 300, 0.002),
            ("first", "Bo", "Male Asian", "Asian", 0.95, 0.96, 150, 0.030),
            ("last", "Smith", None, "White", 0.85, None, None, 0.5),
            ("last", "Jones", None, "White", 0.81, None, None, 0.4),
            ("last", "Wu", None, "Asian", 0.99, None, None, 0.1),
        ]
    )
    out = D.names_summary(t)
    assert list(out["group"]) == ["Female White", "Male Asian"]  # GROUPS order
    fw = out.set_index("group").loc["Female White"]
    assert (fw["gender"], fw["race"]) == ("Female", "White")
    assert (int(fw["first_names"]), int(fw["surnames"])) == (2, 2)
    assert float(fw["race_share_min"]) == 0.8
    assert float(fw["race_share_median"]) == pytest.approx(0.85)
    assert float(fw["sex_share_min"]) == 0.97
    assert float(fw["ssa_births_median"]) == 650.0
    assert float(fw["race_frequency_sum"]) == pytest.approx(0.012)
    ma = out.set_index("group").loc["Male Asian"]
    assert (int(ma["first_names"]), int(ma["surnames"])) == (1, 1)
    assert float(ma["race_share_median"]) == 0.95


def test_names_summary_of_the_study_names(names):
    out = D.names_summary(names)
    assert list(out["group"]) == list(D.GROUPS)
    assert (out["first_names"] == DEFAULT_RULE.n_first).all()
    assert (out["surnames"] == DEFAULT_RULE.n_last).all()
    thresholds = out["race"].map(DEFAULT_RULE.first_race_min)
    assert (out["race_share_min"] >= thresholds).all()
    assert (out["race_share_median"] >= out["race_share_min"]).all()
    assert (out["sex_share_min"] >= DEFAULT_RULE.sex_share_min).all()
    assert (out["ssa_births_median"] >= DEFAULT_RULE.ssa_min_births).all()
    # race_frequency_sum is the share of the race's voters covered: a probability, below 1
    first = names[names["kind"] == "first"]
    expected = first.groupby("group")["frequency"].sum()
    got = out.set_index("group")["race_frequency_sum"]
    np.testing.assert_allclose(got.to_numpy(), expected.reindex(got.index).to_numpy())
    assert ((got > 0) & (got < 1)).all()
    assert D.names_summary().equals(out)  # default: the committed table


group_rows = st.tuples(
    st.sampled_from(D.GROUPS),
    st.floats(0.5, 1.0),
    st.floats(0.5, 1.0),
    st.integers(1, 10**6),
    st.floats(0.0, 0.1),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(group_rows, min_size=1, max_size=30), st.lists(st.sampled_from(D.RACES), max_size=10))
def test_names_summary_properties(rows, surname_races):
    t = _table(
        [("first", f"N{i}", g, g.split()[1], r, s, b, f) for i, (g, r, s, b, f) in enumerate(rows)]
        + [("last", f"L{i}", None, race, 0.9, None, None, 0.1) for i, race in enumerate(surname_races)]
    )
    out = D.names_summary(t)
    present = {g for g, *_ in rows}
    assert list(out["group"]) == [g for g in D.GROUPS if g in present]
    assert int(out["first_names"].sum()) == len(rows)
    assert out["race_frequency_sum"].sum() == pytest.approx(sum(r[4] for r in rows))
    assert (out["race_share_min"] <= out["race_share_median"] + 1e-12).all()
    for _, row in out.iterrows():
        assert row["surnames"] == surname_races.count(row["race"])
        assert row["group"] == f"{row['gender']} {row['race']}"


def test_names_summary_errors():
    good = _table([("first", "Ann", "Female White", "White", 0.9, 0.99, 1000, 0.01)])
    with pytest.raises(ValueError, match="lacks columns.*frequency"):
        D.names_summary(good.drop(columns="frequency"))
    with pytest.raises(ValueError, match="no first names"):
        D.names_summary(good.assign(kind="last"))
    with pytest.raises(ValueError, match="unknown group.*Female Martian"):
        D.names_summary(good.assign(group="Female Martian"))
    with pytest.raises(ValueError, match="'sex_share' is missing for first names \\['Ann'\\]"):
        D.names_summary(good.assign(sex_share=np.nan))
    with pytest.raises(ValueError, match="DataFrame"):
        D.names_summary([1, 2])


# ----------------------------------------------------------------------------------------------
# card_section and card_bullets
# ----------------------------------------------------------------------------------------------

CARD = """# Data card: toy

Lead paragraph.

- lead bullet

## Sources

Text of sources.

### Details

- first item
  continues here
  - nested item
- second item

A paragraph after the list.

- third item after a paragraph

```bash
# not a heading
python build.py
```

## Limits

- one limit
"""


@pytest.fixture
def card(tmp_path):
    path = tmp_path / "toy.md"
    path.write_text(CARD, encoding="utf-8")
    return path


def test_card_section_levels_and_lead(card):
    assert D.card_section(card) == "Lead paragraph.\n\n- lead bullet"
    sources = D.card_section(card, "Sources")
    assert sources.startswith("Text of sources.") and "### Details" in sources  # subsections included
    assert "# not a heading" in sources and "one limit" not in sources  # fenced code does not end it
    assert D.card_section(card, "Details").startswith("- first item")
    assert D.card_section(card, "  Limits ") == "- one limit"


def test_card_section_relative_to_data_dir(card, monkeypatch):
    monkeypatch.setenv("ALLOCBIAS_DATA", str(card.parent))
    assert D.card_section("toy.md", "Limits") == "- one limit"


def test_card_section_errors(card, tmp_path):
    with pytest.raises(ValueError, match="data card not found"):
        D.card_section(tmp_path / "absent.md")
    with pytest.raises(ValueError, match=r"has no heading 'Nope' \(headings: Data card: toy; Sources; Details; Limits\)"):
        D.card_section(card, "Nope")
    with pytest.raises(ValueError, match="has no heading 'not a heading'"):  # a fenced '# ...' line is none
        D.card_section(card, "not a heading")
    twice = tmp_path / "twice.md"
    twice.write_text("# T\n\n## A\nx\n\n## A\ny\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 2 headings 'A'"):
        D.card_section(twice, "A")


def test_card_section_without_headings(tmp_path):
    plain = tmp_path / "plain.md"
    plain.write_text("\nJust text.\n", encoding="utf-8")
    assert D.card_section(plain) == "Just text."


def test_card_bullets(card):
    assert D.card_bullets(card, "Details") == [
        "first item continues here - nested item",
        "second item",
        "third item after a paragraph",
    ]
    assert D.card_bullets(card) == ["lead bullet"]
    assert D.card_bullets(card, "Limits") == ["one limit"]


@pytest.mark.parametrize("card_name", ["names.md", "jobs/README.md", "essays_demo/README.md"])
def test_every_study_card_has_a_lead_and_limits(card_name):
    assert D.card_section(card_name)
    limits = [h for h in ("Limits", "Limits (DEMO)") if h in _headings(card_name)]
    assert limits and D.card_bullets(card_name, limits[0])


def _headings(card_name: str) -> list[str]:
    text = D.card_path(card_name).read_text(encoding="utf-8")
    return re.findall(r"^#+\s+(.*?)\s*$", text, flags=re.M)


def test_names_card_plurality_lists_match_the_table(names):
    """The card's list of names whose Tzioumis plurality is another race = the table's xcheck_plurality == False."""
    first = names[names["kind"] == "first"]
    listed = {}
    for bullet in D.card_bullets("names.md", "Cross-check"):
        group, sep, rest = bullet.partition(": ")
        if sep and group in D.GROUPS:
            listed[group] = re.findall(r"([A-Z][a-z]+) \(", rest)
    disagree = first[first["xcheck_plurality"].eq(False).fillna(False)]
    expected = {g: list(sub["name"]) for g, sub in disagree.groupby("group", sort=False)}
    assert listed == expected
    assert "Male Black" in listed
