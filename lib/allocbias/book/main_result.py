"""The landing page's main result, as the README says it: the same words, with the numbers of a recorded build.

The landing page (``book/intro.md``) states the main result in an admonition titled "The main result" whose numbers
are glued from the executed chapters. The README cannot glue: it quotes the same paragraph with the values of one
build written into a record (``book/main_result.json``, by ``scripts/write_main_result.py`` from the executed
chapters of the default profile). These functions read the admonition, collect its glue references, take their
values from the executed chapters (:func:`main_result_record`) and write the README's paragraph from the record
(:func:`readme_paragraph`), so that neither the words nor the numbers are typed twice; ``tests/test_book_reading.py``
holds the README to the record and the record's keys to the landing page.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .reading import _GLUE_REF, _glued

__all__ = ["MAIN_RESULT_TITLE", "main_result_keys", "main_result_markdown", "main_result_record", "readme_paragraph"]

#: The title of the landing page's admonition that states the main result.
MAIN_RESULT_TITLE = "The main result"
#: The README's paragraph starts with these words.
README_LEAD = "**The main result**"
_ADMONITION = re.compile(r"^```\{admonition\}\s*(?P<title>.+?)\s*\n(?P<body>.*?)^```\s*$", re.M | re.S)
_DOC = re.compile(r"\{doc\}`(?:(?P<text>[^`<]+?)\s*<(?P<target>[^`>]+)>|(?P<plain>[^`]+))`")
_MATH = re.compile(r"\$([^$]+)\$")
_KEEP = "\x00"  # a space the README's line breaks leave alone
#: TeX a README can show as text: the main result's math is short ("$r =$"); anything else is refused.
_TEX_WORDS = {r"\Delta ": "Δ", r"\Delta": "Δ", r"\delta": "δ", r"\rho": "ρ", r"\approx": "≈", r"\times": "×"}


def main_result_markdown(intro: str) -> str:
    """The body of the landing page's admonition titled :data:`MAIN_RESULT_TITLE` (its option lines left out).

    >>> main_result_markdown("# T\\n\\n```{admonition} The main result\\n:class: important\\n**Gaps** at {glue:text}`x`.\\n```\\n")
    '**Gaps** at {glue:text}`x`.'
    """
    for m in _ADMONITION.finditer(intro):
        if m.group("title") == MAIN_RESULT_TITLE:
            lines = [line for line in m.group("body").splitlines() if not re.match(r"^:\w[\w-]*:", line)]
            return "\n".join(lines).strip()
    raise ValueError(f"the landing page has no admonition titled {MAIN_RESULT_TITLE!r}")


def main_result_keys(intro: str) -> list[tuple[str, str]]:
    """The glue references of the main result, as ``(chapter stem, key)`` in order of first appearance.

    >>> main_result_keys("```{admonition} The main result\\nOver {glue:text}`/build/notebooks/11_x.ipynb::n:,d`"
    ...                  " and {glue:text}`/build/notebooks/12_y.ipynb::r:.2f` ({glue:text}`/build/notebooks/11_x.ipynb::n:,d`).\\n```")
    [('11_x', 'n'), ('12_y', 'r')]
    """
    keys: list[tuple[str, str]] = []
    for ref in _GLUE_REF.findall(main_result_markdown(intro)):
        if "::" not in ref:
            raise ValueError(f"the main result's glue reference {ref!r} names no chapter (/build/notebooks/STEM.ipynb::key)")
        path, _, rest = ref.partition("::")
        key = (Path(path).stem, rest.split(":", 1)[0])
        if key not in keys:
            keys.append(key)
    return keys


def main_result_record(glued: Mapping[str, Mapping[str, Any]], intro: str) -> dict[str, dict[str, Any]]:
    """The values the main result quotes, by chapter stem and key, from ``glued`` (each executed chapter's glued
    values, :func:`allocbias.book.glued_values`); raises ``ValueError`` naming every key a chapter did not glue.

    >>> intro = "```{admonition} The main result\\nOver {glue:text}`/build/notebooks/11_x.ipynb::n:,d` vacancies.\\n```"
    >>> main_result_record({"11_x": {"n": 1920, "other": 0.5}}, intro)
    {'11_x': {'n': 1920}}
    """
    record: dict[str, dict[str, Any]] = {}
    missing = []
    for stem, key in main_result_keys(intro):
        if key not in glued.get(stem, {}):
            missing.append(f"{stem}::{key}")
            continue
        record.setdefault(stem, {})[key] = glued[stem][key]
    if missing:
        raise ValueError(f"the executed chapters do not glue what the main result quotes: {', '.join(missing)}")
    return record


def _plain(text: str) -> str:
    """Inline math as text ("$r =$" -> "r ="); refuses TeX it cannot write as text."""
    def one(m: re.Match) -> str:
        tex = m.group(1)
        for macro, word in _TEX_WORDS.items():
            tex = tex.replace(macro, word)
        if "\\" in tex or "{" in tex or "^" in tex or "_" in tex:
            raise ValueError(f"the main result's math {m.group(0)!r} has no plain-text form for the README")
        return tex
    return _MATH.sub(one, text)


def readme_paragraph(values: Mapping[str, Mapping[str, Any]], intro: str, *, chapters: Mapping[str, int],
                     record_path: str = "book/main_result.json", width: int = 116) -> str:
    """The README's main-result paragraph: the landing page's main result (:func:`main_result_markdown`) with each
    glue reference replaced by its value in ``values`` (formatted as the page formats it), inline math as text and
    each ``{doc}`` link to a chapter as a link to its notebook, named by its number in ``chapters`` (stem ->
    number); wrapped at ``width`` characters.

    >>> intro = ("```{admonition} The main result\\n**No metric** is shown, at $r =$ "
    ...          "{glue:text}`/build/notebooks/11_x.ipynb::r:.2f` ({doc}`/build/notebooks/11_x`).\\n```")
    >>> print(readme_paragraph({"11_x": {"r": 0.0487}}, intro, chapters={"11_x": 11}))
    **The main result** (the landing page's, with the numbers of the build recorded in `book/main_result.json`): **No
    metric** is shown, at r = 0.05 ([chapter 11](notebooks/11_x.ipynb)).
    """
    body = main_result_markdown(intro)
    if "{cite}" in body:
        raise ValueError("the main result cites a reference; the README has no bibliography to resolve it")

    def glue(m: re.Match) -> str:
        stem, key, text = _glued(m.group(1), None, values)
        if text == f"??{key}":
            raise ValueError(f"the record has no value for {stem}::{key}, which the main result quotes")
        return text

    def doc(m: re.Match) -> str:
        target = (m.group("target") or m.group("plain")).strip()
        stem = Path(target).name
        if stem not in chapters:
            raise ValueError(f"the main result links to {target!r}, which is not a numbered chapter")
        words = m.group("text") or f"chapter {chapters[stem]}"
        return f"[{words.replace(' ', _KEEP)}](notebooks/{stem}.ipynb)"  # a link's words stay on one line

    text = _DOC.sub(doc, _plain(_GLUE_REF.sub(glue, body)))
    text = " ".join(text.split())
    lead = (f"{README_LEAD} (the landing page's, with the numbers of the build recorded in `{record_path}`): ")
    return textwrap.fill(lead + text, width=width, break_long_words=False, break_on_hyphens=False).replace(_KEEP, " ")
