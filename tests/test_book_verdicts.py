"""The landing page's and the limits page's result sentences take their verdict words from the chapters' glued
verdicts, which are allocbias.validity.verdict_words of the chapters' verdict tables (tests/test_study_*.py tie
each glued verdict to its table); no verdict word is typed by hand in those sentences (issue 32, item 1)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLUE = re.compile(r"\{glue:text\}`/build/notebooks/([^`:]+)\.ipynb::([^`]+)`")
#: the glued keys that carry a verdict, per chapter: each is verdict_words (or a count or choice built on it) of
#: that chapter's verdict table
VERDICT_KEYS = {
    "04_predictive_validity": re.compile(r"ctl_verdict(_short|_phrase)?_\w+"),
    "10_bloomberg_rankings": re.compile(r"vc_\w+_verdict(_short|_phrase)?"),
    "11_real_model_scores": re.compile(r"survival_(k1|all)|choice_k1|lippens_rabbi_verdict(_short)?_k1"),
}
#: words that state a verdict on a metric
VERDICT_WORDS = re.compile(r"\b(tracks?|survives?|predicts|leads|positive held out|with confidence)\b", re.I)


def _findings_admonition() -> str:
    """The landing page's main result (its first screen) and its findings across the book."""
    text = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    parts = []
    for head in ("```{admonition} The main result", "```{admonition} Findings across the book"):
        start = text.index(head)
        parts.append(text[start:text.index("```\n", start + 10)])
    return "\n".join(parts)


def test_the_landing_page_opens_with_the_main_result_and_chapter_12s_sizes():
    """Issue 39 item 5: the first thing under the title is the main result with its numbers, glued, chapter 12's
    audit sizes among them (the smoke-book test checks that it fits the first screen at 1280 x 800)."""
    text = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    title_end = text.index("\n", text.index("# "))
    first = text[title_end:].lstrip()
    assert first.startswith("```{admonition} The main result")
    main = first[:first.index("```\n", 10)]
    keys = _keys(main)
    assert {("12_audit_size", "lippens_jobtype_size_08_phrase_k1"), ("12_audit_size", "recinq_size_08_phrase"),
            ("12_audit_size", "bloomberg_size_08_phrase"), ("12_audit_size", "lippens_jobtype_gap_reliability_k1"),
            ("11_real_model_scores", "lippens_heldout_r_rabbi_k1"),
            ("11_real_model_scores", "lippens_rabbi_verdict_short_k1")} <= keys
    # the model's name and the target reliability aside, no number is typed by hand
    typed = re.sub(r"gpt-3\.5|reliability of 0\.8", "", GLUE.sub("", main))
    assert not re.search(r"\d\.\d|\d,\d", typed), "a number typed by hand in the main result"


def _limits_paragraphs() -> str:
    text = (ROOT / "book" / "limits.md").read_text(encoding="utf-8")
    start = text.index("**What the method can show with them.**")
    return text[start:text.index("**Six systems from two models.**")]


def _keys(text: str) -> set[tuple[str, str]]:
    return {(stem, ref.rsplit(":", 1)[0]) for stem, ref in GLUE.findall(text)}


def _verdict_keys(text: str) -> set[tuple[str, str]]:
    return {(stem, key) for stem, key in _keys(text) if stem in VERDICT_KEYS and VERDICT_KEYS[stem].fullmatch(key)}


def test_landing_page_findings_quote_the_chapters_verdicts_and_type_none():
    text = _findings_admonition()
    quoted = _verdict_keys(text)
    assert {("04_predictive_validity", "ctl_verdict_short_rabbi_dDP"),
            ("10_bloomberg_rankings", "vc_rabbi_k1_verdict_short"),
            ("11_real_model_scores", "survival_k1"), ("11_real_model_scores", "choice_k1"),
            ("11_real_model_scores", "lippens_rabbi_verdict_short_k1")} <= quoted
    typed = VERDICT_WORDS.findall(GLUE.sub("", text))
    assert typed == [], f"verdict words typed by hand in the landing page's findings: {typed}"


def test_limits_page_result_sentences_quote_the_chapters_verdicts():
    text = _limits_paragraphs()
    assert {("04_predictive_validity", "ctl_verdict_short_rabbi_dDP"),
            ("04_predictive_validity", "ctl_verdict_short_avg_gap_dDP"),
            ("11_real_model_scores", "survival_k1"), ("11_real_model_scores", "choice_k1"),
            ("10_bloomberg_rankings", "vc_rabbi_k1_verdict_short")} <= _verdict_keys(text)
    # the only verdict word typed by hand is the rule itself ("a metric tracks the gap only when ...")
    rest = GLUE.sub("", text).replace("a metric tracks the gap only when", "")
    assert VERDICT_WORDS.findall(rest) == []


def test_every_cross_page_reference_has_a_format():
    """myst-nb splits a cross-document glue reference at its last colon: a key without ':s' or a number format
    would paste nothing."""
    for page in ("intro.md", "limits.md"):
        text = (ROOT / "book" / page).read_text(encoding="utf-8")
        assert [ref for _, ref in GLUE.findall(text) if ":" not in ref] == [], page
