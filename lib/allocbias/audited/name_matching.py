"""Finding a candidate's name in a model's answer: one rule for every task that reads names back.

The listwise rankings (:func:`allocbias.rankings.parse_ranking`, strict and fuzzy rules), the HiringBloomberg
winner (:func:`allocbias.genderbench.first_mentioned`) and the pairwise answer
(:func:`allocbias.scoring.parse_pair_answer`) all find names with the functions below, so one answer gives one
reading whichever task it comes from. The callers differ only in *which* strings they look for (a full name; an
unambiguous first name; a first or last name the other candidate does not share) and in what a mention means
for their task.

**The rule.** A name is *mentioned* at the first place where it occurs

- as whole words: not inside a longer word ("Ann" is not in "JoAnn" or "Annette"), not as part of a hyphenated
  name ("Mary" is not in "Mary-Jane", "Lee" not in "Lee-Smith") and not after an elision ("Brien" is not in
  "O'Brien"); a possessive is allowed ("Mary's résumé");
- case-insensitively (Unicode case folding: ``str.casefold``);
- with diacritics dropped (NFKD, combining marks removed: "Jose Nunez" finds "José Núñez" and back);
- with apostrophes inside a word dropped (straight ``'``, curly ``’`` and the modifier letter ``ʼ``, except a
  possessive ``'s``): "O'Connell", "O’Connell" and "OConnell" are one name;
- with any run of whitespace between its words (a line break included);
- whatever quotes, brackets, markdown emphasis or punctuation stand around it (``'Mary Smith'``,
  ``"Mary Smith"``, ``“Mary Smith”``, ``(Mary Smith)``, ``**Mary Smith**:``).

Formally, with ``fold(x) = casefold(drop_inner_apostrophes(NFC(strip_marks(NFKD(x)))))``, a name ``w1 ... wn``
is found in a text ``t`` at the first ``i`` where ``fold(t)[i:]`` starts with ``fold(w1) \\s+ ... \\s+ fold(wn)``,
the character before ``i`` is neither a word character, a hyphen nor an apostrophe that follows a word
character, and the character after the match is neither a word character, a hyphen nor an apostrophe that
starts anything but a possessive ``'s``. Positions are positions in ``fold_text(t)``: they order the mentions
of several names in one text. When two names are first found at one position, the longer match is the
mention (a full name beats its own first name).

One exception is kept on purpose: the pairwise parser (:func:`allocbias.scoring.parse_pair_answer`) passes
``hyphenated=True``, under which a hyphen is a boundary like a space ("Bolden" is found in "Diaz-Bolden"), the
rule its committed winners were parsed with (one stored pairwise answer, "Diaz-Bolden is a highly skilled
...", names its candidate Davion Bolden only so); the listwise and HiringBloomberg callers keep hyphenated
names whole.

Bloomberg's *first-occurrence* rule (``parse_ranking(..., rule="first_occurrence")``) is deliberately **not**
this matcher: it is a plain case-insensitive substring search (``str.find`` on lower-cased text, no word
boundaries, apostrophes and accents as written), the rule of Bloomberg's own code, and it reproduces their
published top-1 table exactly; it stays as it is.

Pure functions of the standard library (``re``, ``unicodedata``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "APOSTROPHES",
    "find_name",
    "first_mentions",
    "fold_marks",
    "fold_name",
    "fold_text",
    "mention_order",
    "name_pattern",
    "name_spans",
    "names_pattern",
]

#: The characters read as an apostrophe: straight, right single quotation mark, modifier letter apostrophe.
APOSTROPHES = "'\u2019\u02bc"
_APOS = "[" + APOSTROPHES + "]"
# an apostrophe between two word characters, unless it starts a possessive 's (either case)
_INNER_APOSTROPHE = re.compile(r"(?<=\w)" + _APOS + r"(?=\w)(?![sS]\b)")
# Boundaries of a name: not after a word character, a hyphen or an elision (O'|Brien); not before a word
# character, a hyphen or an apostrophe that continues the word (a possessive 's is fine).
_BEFORE = r"(?<![\w-])(?<!\w" + _APOS + r")"
_AFTER = r"(?![\w-])(?!" + _APOS + r"(?![sS]\b)\w)"
# the same with a hyphen as a boundary (``hyphenated=True``)
_BEFORE_HYPHENATED = r"(?<!\w)(?<!\w" + _APOS + r")"
_AFTER_HYPHENATED = r"(?!\w)(?!" + _APOS + r"(?![sS]\b)\w)"


def fold_marks(text: str) -> str:
    """``text`` with diacritics and apostrophes inside words dropped, case and whitespace kept: the form a
    name is *shown* in after folding (the fuzzy rule of :mod:`allocbias.rankings` compares these).

    ``NFC(strip_marks(NFKD(text)))``, then every apostrophe (:data:`APOSTROPHES`) between two word characters
    removed unless it starts a possessive ``'s``.

    >>> fold_marks("Hải O'Connell's CV")
    "Hai OConnell's CV"
    """
    if not isinstance(text, str):
        raise ValueError(f"a name or answer must be a string, got {type(text).__name__}")
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))
    return _INNER_APOSTROPHE.sub("", stripped)


def fold_text(text: str) -> str:
    """An answer in the form names are searched in: :func:`fold_marks`, then case-folded; whitespace and line
    breaks are kept, so numbered lines stay lines.

    >>> fold_text("1. JOSÉ Núñez\\n2. Cy O’Hara")
    '1. jose nunez\\n2. cy ohara'
    """
    return fold_marks(text).casefold()


def fold_name(text: str) -> str:
    """A name (or an answer to search for names) in the form names are matched in: Unicode-normalised
    (NFKD, combining accents dropped, NFC), case-folded, apostrophes inside words dropped (not a possessive
    ``'s``) and runs of whitespace made one space.

    ``fold(x) = casefold(drop_inner_apostrophes(NFC(strip_marks(NFKD(x)))))``, whitespace collapsed. Two names
    with one fold cannot be told apart in an answer, so the callers refuse them as duplicates; every place that
    matches a candidate's name (this module's functions) folds both sides, so "Jose Alvarez" finds
    "José Álvarez", and a name typed with a combining accent (NFD) finds the same name typed precomposed (NFC).

    >>> fold_name("José  ÁLVAREZ") == fold_name("Jose Alvarez") == fold_name("Jose\u0301 A\u0301lvarez")
    True
    >>> fold_name("José  ÁLVAREZ"), fold_name("Cy O’Hara")
    ('jose alvarez', 'cy ohara')
    """
    return " ".join(fold_text(text).split())


@functools.lru_cache(maxsize=16384)
def name_pattern(name: str, hyphenated: bool = False) -> re.Pattern[str]:
    """The compiled pattern of ``name`` under the module's rule, to search in :func:`fold_text` output;
    ``hyphenated=True``: a hyphen next to the name is a boundary (the pairwise parser's exception).

    >>> bool(name_pattern("Mary Smith").search(fold_text("I pick 'Mary  Smith'.")))
    True
    >>> bool(name_pattern("Mary").search(fold_text("Mary-Jane Smith")))
    False
    >>> bool(name_pattern("Mary", hyphenated=True).search(fold_text("Mary-Jane Smith")))
    True
    """
    parts = fold_name(name).split()
    if not parts:
        raise ValueError(f"a name must have a character other than whitespace in it, got {name!r}")
    before, after = (_BEFORE_HYPHENATED, _AFTER_HYPHENATED) if hyphenated else (_BEFORE, _AFTER)
    return re.compile(before + r"\s+".join(re.escape(p) for p in parts) + after)


def names_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """One pattern that finds any of ``names`` (longest first, so a name is not cut to a shorter one), with
    the boundaries of :func:`name_pattern`, to search in :func:`fold_text` output.

    >>> [m.group(0) for m in names_pattern(["Ann Lee", "Bo Kim"]).finditer(fold_text("BO KIM, then Ann Leeson"))]
    ['bo kim']
    """
    alts = sorted({r"\s+".join(re.escape(p) for p in fold_name(n).split()) for n in names}, key=len, reverse=True)
    if not alts or "" in alts:
        raise ValueError(f"names must be non-empty names, got {list(names)!r}")
    return re.compile(_BEFORE + "(?:" + "|".join(alts) + ")" + _AFTER)


def name_spans(
    text: str, names: Sequence[str | None], *, folded: bool = False, hyphenated: bool = False
) -> list[tuple[int, int] | None]:
    """The first mention of each of ``names`` in ``text``: its ``(start, end)`` in ``fold_text(text)``, or
    ``None`` where the name is not mentioned (a ``None`` name is a name nobody knows: never mentioned).

    ``folded=True`` says that ``text`` is already :func:`fold_text` (or :func:`fold_name`) output, so positions
    are in ``text`` itself. ``hyphenated=True`` makes a hyphen a boundary (see the module's docstring).

    >>> name_spans("Bo Kim, then Ann Leeson, then 'Ann Lee'", ["Ann Lee", "Bo Kim", None])
    [(31, 38), (0, 6), None]
    """
    if not isinstance(text, str):
        raise ValueError(f"the answer must be a string, got {type(text).__name__}")
    haystack = text if folded else fold_text(text)
    out: list[tuple[int, int] | None] = []
    for name in names:
        m = None if name is None else name_pattern(name, hyphenated).search(haystack)
        out.append(None if m is None else m.span())
    return out


def first_mentions(text: str, names: Sequence[str | None]) -> list[int | None]:
    """Where each of ``names`` is first mentioned in ``text`` (a position in ``fold_text(text)``), or ``None``.

    >>> first_mentions("Candidates: “Mary Smith”, Bo Kim.", ["Bo Kim", "Mary Smith", "Ann Lee"])
    [26, 13, None]
    """
    return [None if s is None else s[0] for s in name_spans(text, names)]


def find_name(text: str, name: str) -> int | None:
    """Where ``name`` is first mentioned in ``text`` (a position in ``fold_text(text)``), or ``None``.

    >>> find_name("The pick: (Zoë O’Brien).", "Zoe O'Brien"), find_name("Annette Lee", "Ann Lee")
    (11, None)
    """
    return first_mentions(text, [name])[0]


def mention_order(text: str, names: Sequence[str | None]) -> list[int]:
    """Indices of the ``names`` mentioned in ``text``, by first mention (the longer match first at one
    position, then the lower index); names never mentioned are left out.

    >>> mention_order("I pick 'Bo Kim', then Ann Lee; not Cy Ong-Li.", ["Ann Lee", "Bo Kim", "Cy Ong"])
    [1, 0]
    >>> mention_order("Ann Lee Smith is best", ["Ann Lee", "Ann Lee Smith"])
    [1, 0]
    """
    spans = name_spans(text, names)
    found = sorted((s[0], s[0] - s[1], i) for i, s in enumerate(spans) if s is not None)
    return [i for _, _, i in found]
