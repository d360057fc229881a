"""One name matcher for every task: the listwise rankings (strict rule), the HiringBloomberg winner and the
pairwise answer read names the same way (``allocbias.audited.name_matching``)."""

from __future__ import annotations

import numpy as np
import pytest

from allocbias.audited import name_matching as M
from allocbias.audited import names as N
from allocbias.genderbench import first_mentioned
from allocbias.rankings import parse_ranking
from allocbias.scoring.engine import parse_pair_answer


def _rankings(text: str, names: list[str]) -> int | None:
    """The candidate the strict listwise parse puts first (``None``: the answer names nobody)."""
    try:
        rank, named = parse_ranking(text, names)
    except ValueError as exc:
        assert "names none of" in str(exc) or "names nobody" in str(exc), exc
        return None
    return int(np.argmin(rank)) if named.any() else None


def _genderbench(text: str, names: list[str]) -> int | None:
    return first_mentioned(text, names)


def _pairwise(text: str, names: list[str]) -> int | None:
    return {"a": 0, "b": 1, "undetected": None}[parse_pair_answer(text, names[0], names[1])]


CALLERS = {"rankings": _rankings, "genderbench": _genderbench, "pairwise": _pairwise}


def _swapped(name: str) -> str:
    """The second candidate: the first one's words in reverse order, so that no first or last name alone can
    pick either of them (the pairwise and HiringBloomberg callers then look for full names only, like the
    listwise one) and the three callers are compared on the matcher alone."""
    return " ".join(reversed(name.split()))


@pytest.mark.parametrize("text", [
    "I pick 'Mary Smith'.",
    'I pick "Mary Smith".',
    "I pick \u2018Mary Smith\u2019.",
    "I pick \u201cMary Smith\u201d.",
    "1. 'Mary Smith'\n2. 'Smith Mary'",
])
@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_a_name_in_quotes_is_found_by_every_caller(caller, text):
    assert CALLERS[caller](text, ["Mary Smith", "Smith Mary"]) == 0


# (first candidate's name, answer, the candidate found: 0 the first, 1 the second, None nobody)
CASES = [
    ("Mary Smith", "(mary smith) is the one", 0),  # punctuation and case
    ("Mary Smith", "**Mary Smith**: strong fit", 0),  # markdown emphasis
    ("Mary Smith", "Mary Smith's résumé is the strongest", 0),  # a possessive
    ("Mary Smith", "MARY\n   SMITH", 0),  # any whitespace between the words
    ("José Núñez", "Jose Nunez is the strongest", 0),  # diacritics dropped in the name
    ("Jose Nunez", "José Núñez is the strongest", 0),  # ... and in the answer
    ("José Núñez", "JOSÉ NÚÑEZ", 0),
    ("Cy O'Hara", "Cy OHara fits", 0),  # apostrophes inside a word dropped
    ("Cy O'Hara", "Cy O\u2019Hara fits", 0),  # straight and curly apostrophes alike
    ("Cy OHara", "I pick Cy O'Hara", 0),
    ("Zoë O\u2019Brien", "zoe o'brien", 0),
    ("Brien Cy", "O'Brien Cy is best", None),  # not after an elision
    ("Ann Lee", "Ann Leeson is best", None),  # not inside a longer word
    ("Ann Lee", "JoAnn Lee is best", None),
    ("Ann Lee-Smith", "Ann Lee-Smith is best", 0),  # a hyphenated name is found whole
    ("Ann Lee-Smith", "ann lee-smith", 0),
    ("Ann Lee", "Lee Ann, then Ann Lee", 1),  # two names in one answer: the first occurrence
    ("Ann Lee", "Ann Lee, then Lee Ann", 0),
    ("Ann Lee", "'Lee Ann' or 'Ann Lee'", 1),
    ("Ann Lee", "Nobody here fits.", None),
]
# A name inside a hyphenated name: refused by the listwise and HiringBloomberg callers; the pairwise parser keeps
# the hyphen as a boundary (its committed winners were parsed so), the one documented exception.
HYPHEN_CASES = [
    ("Ann Lee", "Ann Lee-Smith is best"),
    ("Ann Lee", "Mary-Ann Lee is best"),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES)
def test_every_caller_gives_the_same_answer(name, text, expected):
    names = [name, _swapped(name)]
    got = {caller: f(text, names) for caller, f in CALLERS.items()}
    assert got == dict.fromkeys(CALLERS, expected)


@pytest.mark.parametrize(("name", "text"), HYPHEN_CASES)
def test_a_name_inside_a_hyphenated_name(name, text):
    names = [name, _swapped(name)]
    assert _rankings(text, names) is None and _genderbench(text, names) is None
    assert _pairwise(text, names) == 0
    assert M.find_name(text, name) is None and M.name_spans(text, [name], hyphenated=True)[0] is not None


def test_the_matcher_returns_first_occurrences_in_the_folded_text():
    text = "Bo Kim, then 'Ann Lee', then Bo Kim again; not Cy Ong-Li."
    names = ["Ann Lee", "Bo Kim", "Cy Ong", None]
    assert M.first_mentions(text, names) == [14, 0, None, None]
    assert M.mention_order(text, names) == [1, 0]
    folded = M.fold_text(text)
    assert [folded[s:e] for s, e in filter(None, M.name_spans(text, names))] == ["ann lee", "bo kim"]
    # positions are in fold_text(text), which keeps lines and may differ in length from text
    assert M.fold_text("\ufb01 Ann Lee") == "fi ann lee" and M.find_name("\ufb01 Ann Lee", "Ann Lee") == 3
    assert M.mention_order("Ann Lee Smith is best", ["Ann Lee", "Ann Lee Smith"]) == [1, 0]  # the longer match
    assert M.names_pattern(["Ann Lee", "Ann Lee Smith"]).search(M.fold_text("Ann Lee Smith")).group(0) == (
        "ann lee smith")


def test_folding_and_the_re_export():
    assert N.fold_name is M.fold_name  # allocbias.audited.names.fold_name keeps working
    assert M.fold_name("  José\u0301  O’Brien ") == M.fold_name("jose obrien") == "jose obrien"
    assert M.fold_name("Mary's") == "mary's" and M.fold_marks("JAMES'S O'Hara") == "JAMES'S OHara"
    assert M.fold_text("1. ANN\n2. Bo") == "1. ann\n2. bo"


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="must be a string, got NoneType"):
        M.name_spans(None, ["Ann Lee"])
    with pytest.raises(ValueError, match="a name must have a character"):
        M.name_pattern("   ")
    with pytest.raises(ValueError, match="must be a string, got int"):
        M.fold_name(3)
    with pytest.raises(ValueError, match="names must be non-empty"):
        M.names_pattern([])


def test_names_with_one_fold_are_refused_as_duplicates():
    """Two names the matcher cannot tell apart are refused by the callers that check names."""
    with pytest.raises(ValueError, match="duplicates"):
        first_mentioned("x", ["Cy O'Hara", "Cy OHara"])
    with pytest.raises(ValueError, match="same name"):
        parse_pair_answer("x", "Cy O’Hara", "cy ohara")
