"""How the built book reads (issue: findings first, code out of the way, nothing cut off).

Fast tests check the measures on small hand-written pages. The ``notebooks`` test builds the smoke book (every
chapter executed under the smoke profile, rendered by jupyter-book) into a temporary folder and checks every
chapter page: visible code at most 20% of the text, the findings admonition before the first section, and no
element past the article column at 1280 and 800 px in headless Chromium (skipped, saying so, without Chromium).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from allocbias.book import toc_notebooks
from allocbias.book.reading import (SIZE_WORDS, chromium, findings_first, glued_sentences, horizontal_overflow,
                                    horizontal_overflows, read_page, reliability_word_problems, visible_code_share,
                                    word_problems)
from allocbias.plotting import min_display_scale

from .conftest import ROOT, markdown_text

MAX_CODE_SHARE = 0.20
WIDTHS = (1280, 800)

PAGE = ('<html><body><nav><p>navigation text is not counted</p></nav><article class="bd-article">'
        '<section><h1>Title</h1><p>{intro}</p>{findings}<section><h2>Overview</h2><p>prose prose</p>'
        '<div class="cell docutils container"><div class="cell_input docutils container"><pre>{code}</pre></div>'
        '<div class="cell_output"><pre>output</pre></div></div>'
        '<div class="cell tag_hide-input"><details class="admonition hide above-input"><summary>Show code</summary>'
        '<div class="cell_input"><pre>{hidden}</pre></div></details></div></section></section></article>'
        '</body></html>')
FINDINGS = '<div class="admonition-findings admonition"><p class="admonition-title">Findings</p><p>x</p></div>'


def test_visible_code_counts_open_inputs_only():
    page = PAGE.format(intro="abcd", findings="", code="print(1)", hidden="secret_plumbing()")
    reading = read_page(page)
    # text: Title(5) abcd(4) Overview(8) proseprose(10) print(1)(8) output(6) Showcode(8) secret_plumbing()(17)
    assert reading["text"] == 66
    assert reading["code"] == len("print(1)")
    assert visible_code_share(page) == pytest.approx(8 / 66)


def test_more_visible_code_raises_the_share():
    small = visible_code_share(PAGE.format(intro="a", findings="", code="x", hidden=""))
    large = visible_code_share(PAGE.format(intro="a", findings="", code="x = compute(everything) " * 20, hidden=""))
    assert large > MAX_CODE_SHARE > small


def test_findings_must_come_before_the_first_section():
    assert findings_first(PAGE.format(intro="a", findings=FINDINGS, code="", hidden=""))
    assert not findings_first(PAGE.format(intro="a", findings="", code="", hidden=""))
    late = PAGE.format(intro="a", findings="", code="", hidden="").replace("<p>prose prose</p>", FINDINGS)
    assert not findings_first(late)


def test_a_page_without_an_article_is_refused():
    with pytest.raises(ValueError, match="bd-article"):
        read_page("<html><body><p>no book here</p></body></html>")


NO_CHROMIUM = pytest.mark.skipif(chromium() is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")
_HEADS = "".join(f"<th>column {i}</th>" for i in range(12))
#: hand-written pages for the measuring script, all laid out at 1280 px in one Chromium (one launch for all)
HAND_PAGES = {
    "column": '<html><head><style>article{width:600px}</style></head><body><article class="bd-article">'
              '<p>fits</p><div style="width:900px">too wide</div>'
              '<div style="overflow-x:auto;width:500px"><table style="width:2000px"><tr><td>scrolls</td></tr>'
              '</table></div></article></body></html>',
    "full_width": '<html><head><style>article{width:600px}</style></head><body><article class="bd-article">'
                  '<div class="cell tag_full-width" style="width:900px">figure in the margin</div>'
                  '<div class="cell tag_full-width" style="width:1500px">past the window</div></article></body></html>',
    "key_column": '<html><head><style>article{width:600px} th{min-width:120px}</style></head><body>'
                  '<article class="bd-article"><div style="overflow-x:auto;width:580px"><table><tr>'
                  f'<th>data set</th><th>verdict</th>{_HEADS}<th>below 0.8</th></tr></table></div></article>'
                  '</body></html>',
    "wide_tables": '<html><head><style>article{width:600px} th{min-width:120px}</style></head><body>'
                   '<article class="bd-article"><div style="overflow-x:auto;width:580px"><table><tr><th>data set</th>'
                   f'{_HEADS}</tr></table></div><div style="overflow-x:auto"><table><tr><th>fits</th><th>r</th></tr>'
                   '</table></div><table style="display:block;max-width:100%;overflow-x:auto"><tr><th>scrolls in '
                   f'itself</th>{_HEADS}</tr></table></article></body></html>',
}


@pytest.fixture(scope="module")
def hand_laid_out(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("pages")
    pages = {}
    for name, html in HAND_PAGES.items():
        pages[name] = folder / f"{name}.html"
        pages[name].write_text(html, encoding="utf-8")
    found = horizontal_overflows(list(pages.values()), 1280)
    assert not list(folder.glob(".measure-*")), "the probe copies are removed"
    return {name: found[page] for name, page in pages.items()}


@NO_CHROMIUM
def test_overflow_finds_what_passes_the_column_and_spares_what_scrolls(hand_laid_out):
    found = hand_laid_out["column"]
    assert len(found["offenders"]) == 1 and '"too wide"' in found["offenders"][0], found


@NO_CHROMIUM
def test_a_full_width_cell_may_pass_the_column_but_not_the_window(hand_laid_out):
    found = hand_laid_out["full_width"]
    assert len(found["offenders"]) == 1 and '"past the window"' in found["offenders"][0], found


@NO_CHROMIUM
def test_a_key_column_past_the_visible_width_is_found(hand_laid_out):
    found = hand_laid_out["key_column"]
    assert len(found["hidden_keys"]) == 1 and '"below 0.8"' in found["hidden_keys"][0], found
    assert found["offenders"] == [] and found["figures"] == []


@NO_CHROMIUM
def test_every_table_wider_than_the_text_column_is_counted(hand_laid_out):
    """Issue 39: a table that scrolls inside its box is not "past the column", but its right-hand columns are out of
    view all the same; the check counts every such table, key columns or not, and a table that fits is not counted."""
    found = hand_laid_out["wide_tables"]
    assert found["offenders"] == [] and found["hidden_keys"] == [] and found["first_admonition_bottom"] is None
    assert [t["first"] for t in found["wide_tables"]] == ["data set", "scrolls in itself"], found["wide_tables"]
    for wide in found["wide_tables"]:
        assert wide["headers_out_of_view"] >= 8 and wide["width"] > wide["column"]


@NO_CHROMIUM
def test_one_page_alone_is_measured_and_a_page_without_a_body_is_refused_naming_it(tmp_path):
    """horizontal_overflow, the one-page wrapper other callers use; a file that is not a page is named."""
    page = tmp_path / "page.html"
    page.write_text(HAND_PAGES["column"], encoding="utf-8")
    found = horizontal_overflow(page, 1280)
    assert found["viewport"] == 1280 and len(found["offenders"]) == 1, found
    broken = tmp_path / "broken.html"
    broken.write_text("<html><p>no body end", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.html: no </body>"):
        horizontal_overflows([page, broken], 800)
    assert not list(tmp_path.glob(".measure-*")), "the probe copies are removed"


@pytest.fixture(scope="module")
def smoke_book(smoke_notebook, tmp_path_factory) -> Path:
    """The smoke book, built into a temporary folder from the session's smoke-executed chapters."""
    root = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, root / name)
    for name in ("book", "_static"):
        shutil.copytree(ROOT / name, root / name)
    out = root / "build" / "notebooks"
    out.mkdir(parents=True)
    for source in toc_notebooks(root=ROOT):
        executed, _ = smoke_notebook(source.stem)
        shutil.copy(executed, out / source.name)
    jb = Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run([str(jb), "build", str(root), "-W", "-n", "--keep-going"], capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return root / "_build" / "html"


@pytest.mark.notebooks
def test_every_chapter_reads_findings_first_with_little_visible_code(smoke_book):
    problems = []
    for source in toc_notebooks(root=ROOT):
        page = smoke_book / "build" / "notebooks" / f"{source.stem}.html"
        reading = read_page(page.read_text(encoding="utf-8"))
        if reading["share"] > MAX_CODE_SHARE:
            problems.append(f"{source.stem}: visible code is {reading['share']:.1%} of the text "
                            f"(at most {MAX_CODE_SHARE:.0%})")
        if not reading["findings_first"]:
            problems.append(f"{source.stem}: no findings admonition before the first section")
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def laid_out(smoke_book) -> dict[int, dict[Path, dict]]:
    """Every page of the smoke book laid out at each of WIDTHS: one Chromium per width, the two at once."""
    pages = sorted(smoke_book.glob("build/notebooks/*.html")) + sorted(smoke_book.glob("book/*.html"))
    assert len(pages) >= len(toc_notebooks(root=ROOT))
    with ThreadPoolExecutor(len(WIDTHS)) as pool:
        return dict(zip(WIDTHS, pool.map(lambda width: horizontal_overflows(pages, width, processes=1), WIDTHS)))


@pytest.mark.notebooks
@NO_CHROMIUM
def test_no_page_is_cut_off_on_the_right_and_every_figure_reads(smoke_book, laid_out):
    problems = []
    for page in laid_out[WIDTHS[0]]:
        for width in WIDTHS:
            found = laid_out[width][page]
            if found["scrollWidth"] > found["viewport"] or found["offenders"]:
                problems.append(f"{page.relative_to(smoke_book)} at {width} px: page width {found['scrollWidth']}, "
                                f"past the column: {found['offenders'][:3]}")
            name = str(page.relative_to(smoke_book).with_suffix("")).replace("build/notebooks/", "")
            if width == 1280 and found["wide_tables"]:
                problems.append(f"{page.relative_to(smoke_book)} at {width} px: {len(found['wide_tables'])} tables "
                                f"wider than the text column: {found['wide_tables'][:3]}")
            if width == 1280 and found["hidden_keys"]:
                problems.append(f"{page.relative_to(smoke_book)} at {width} px: key columns out of view: "
                                f"{found['hidden_keys'][:3]}")
            if width == 1280 and name == "book/intro" and not (found["first_admonition_bottom"] or 10**6) <= 800:
                problems.append(f"book/intro at 1280 x 800: the main result ends at {found['first_admonition_bottom']} px, "
                                "below the first screen (issue 39 item 5)")
            small = [f for f in found["figures"] if f["scale"] < min_display_scale()]
            if width == 1280 and small:
                problems.append(f"{page.relative_to(smoke_book)} at {width} px: figures shown under "
                                f"{min_display_scale():.3f} of their drawn width (legends under 9 pt): {small[:3]}")
    assert not problems, "\n".join(problems)


@pytest.mark.notebooks
@NO_CHROMIUM
def test_pages_laid_out_together_measure_as_each_page_alone(smoke_book, laid_out):
    """The book's pages are laid out many to a Chromium, each in a frame of the window's size: two of them, each
    alone in the window (one Chromium each, the way every page was measured before), measure exactly the same.
    The full comparison, every page at both widths, was run by hand when the frames came in (identical)."""
    chapter = min(smoke_book.glob("build/notebooks/*.html"), key=lambda p: p.stat().st_size)
    landing = smoke_book / "book" / "intro.html"
    with ThreadPoolExecutor(2) as pool:
        alone = dict(zip([(chapter, 800), (landing, 1280)], pool.map(
            lambda job: horizontal_overflows([job[0]], job[1], framed=False)[job[0]], [(chapter, 800), (landing, 1280)])))
    for (page, width), found in alone.items():
        assert found == laid_out[width][page], f"{page.name} at {width} px"
    assert alone[(landing, 1280)]["first_admonition_bottom"] and alone[(chapter, 800)]["figures"]


@pytest.mark.notebooks
def test_the_student_edition_keeps_exercises_and_drops_every_solution(smoke_book):
    """``make book-student``: the same build with book/_ext/student_edition.py, which removes the solutions."""
    root = smoke_book.parent.parent
    config = (root / "_config.yml").read_text(encoding="utf-8")
    assert "\nsphinx:\n" in config
    student = root / "_config_student.yml"
    student.write_text(config.replace("\nsphinx:\n", f"\nsphinx:\n  local_extensions:\n    student_edition: "
                                                   f"{root / 'book' / '_ext'}/\n", 1), encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run([str(jb), "build", str(root), "--config", str(student), "--path-output", str(root / "student"),
                          "-W", "-n", "--keep-going"], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    problems = []
    for source in toc_notebooks(root=ROOT):
        full = (smoke_book / "build" / "notebooks" / f"{source.stem}.html").read_text(encoding="utf-8")
        page = (root / "student" / "_build" / "html" / "build" / "notebooks" / f"{source.stem}.html").read_text(
            encoding="utf-8")
        if full.count('class="exercise') != page.count('class="exercise'):
            problems.append(f"{source.stem}: exercises differ from the full book")
        if 'class="solution' in page:
            problems.append(f"{source.stem}: a solution is left in the student edition")
        if 'class="solution' not in full:
            problems.append(f"{source.stem}: the full book shows no solution to compare with")
    problems += _solution_only_values_left(smoke_book, root / "student" / "_build" / "html")
    assert not problems, "\n".join(problems)


def _solution_only_values_left(full: Path, student: Path) -> list[str]:
    """The values glued only for a solution (book/_ext/student_edition.py) must be in the full book's downloadable
    notebooks and in none of the student edition's."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("student_edition", ROOT / "book" / "_ext" / "student_edition.py")
    edition = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(edition)
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in (ROOT / "book").glob("*.md")}
    texts |= {f"build/notebooks/{p.name}": p.read_text(encoding="utf-8") for p in toc_notebooks(root=ROOT)}
    kept = edition.kept_cross_references(texts)
    problems, n_keys = [], 0
    for source in toc_notebooks(root=ROOT):
        keys = edition.solution_only_glue_keys(json.loads(source.read_text(encoding="utf-8")),
                                               kept.get(f"build/notebooks/{source.name}", set()))
        n_keys += len(keys)
        for book, should_hold in ((full, True), (student, False)):
            copy = json.loads((book / "_sources" / "build" / "notebooks" / source.name).read_text(encoding="utf-8"))
            glued = {o["metadata"]["scrapbook"]["name"] for c in copy["cells"] for o in c.get("outputs", [])
                     if "scrapbook" in o.get("metadata", {})}
            wrong = sorted(keys - glued) if should_hold else sorted(keys & glued)
            if wrong:
                problems.append(f"{source.stem}: the {'full book lacks' if should_hold else 'student edition holds'} "
                                f"the solution-only value(s) {wrong} in its downloadable notebook")
    if n_keys == 0:
        problems.append("no chapter has a value glued only for a solution: the check has nothing to check")
    return problems


def test_a_build_with_another_profile_names_it_on_every_chapter(tmp_path):
    from allocbias.book.runner import PROFILE_BANNER_TAG, mark_profile

    page = tmp_path / "ch.ipynb"
    page.write_text(json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Title"},
                                          {"cell_type": "code", "metadata": {}, "source": "1", "outputs": []}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    assert mark_profile(page, "smoke") and mark_profile(page, "smoke")
    cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
    banners = [c for c in cells if PROFILE_BANNER_TAG in c["metadata"].get("tags", [])]
    assert len(banners) == 1 and cells[1] is not None and cells[1]["id"] == "profile-banner"
    assert "smoke profile" in banners[0]["source"] and cells[0]["source"] == "# Title"
    assert not mark_profile(page, "default")
    assert [c["source"] for c in json.loads(page.read_text(encoding="utf-8"))["cells"]] == ["# Title", "1"]


def test_every_chapter_has_one_summary():
    for source in toc_notebooks(root=ROOT):
        cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
        heads = [line for c in cells if c["cell_type"] == "markdown"
                 for line in "".join(c["source"]).splitlines() if line.strip() == "## Summary"]
        assert len(heads) == 1, f"{source.stem} has {len(heads)} Summary sections"


CROSS_GLUE = re.compile(r"\{glue:text\}`/build/notebooks/([^`]+?)\.ipynb::([^`]+)`")


def test_the_book_pages_quote_only_numbers_their_chapters_glue():
    """book/*.md (the landing page, the limits) paste results from the chapters by cross-document glue; each key
    must carry a format spec (myst-nb splits at the last colon) and be quoted by its chapter's own prose, which the
    chapter's findings test holds to its findings object (conftest.assert_findings_glue)."""
    refs = 0
    for page in sorted((ROOT / "book").glob("*.md")):
        for stem, ref in CROSS_GLUE.findall(page.read_text(encoding="utf-8")):
            refs += 1
            assert ":" in ref, f"{page.name}: {ref!r} has no format spec"
            key = ref.rsplit(":", 1)[0]
            chapter = ROOT / "notebooks" / f"{stem}.ipynb"
            assert chapter.exists(), f"{page.name} quotes {stem}, which is not a chapter"
            prose = "".join("".join(c["source"]) for c in json.loads(chapter.read_text(encoding="utf-8"))["cells"]
                            if c["cell_type"] == "markdown")
            assert re.search(rf"\{{glue:text\}}`{re.escape(key)}[`:]", prose), f"{page.name}: {stem} never quotes {key}"
    assert refs >= 20


def test_the_make_book_time_is_the_recorded_measurement_and_within_the_goal():
    """book/running.md includes book/make_book_time.md, which scripts/time_book.py writes from its measurement
    record (book/make_book_time.json): the page says what was measured, not a number typed by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("time_book", ROOT / "scripts" / "time_book.py")
    time_book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(time_book)
    record = json.loads((ROOT / "book" / "make_book_time.json").read_text(encoding="utf-8"))
    assert (ROOT / "book" / "make_book_time.md").read_text(encoding="utf-8") == time_book.fragment(record)
    assert "{include} make_book_time.md" in (ROOT / "book" / "running.md").read_text(encoding="utf-8")
    assert set(record["chapters_seconds"]) == {p.stem for p in toc_notebooks(root=ROOT)}
    assert record["total_seconds"] <= record["goal_minutes"] * 60


#: One quantity that two chapters measure, each with its own glue key (issue 39 item 2): where their glued values
#: differ, every sentence that quotes either names the size it was measured at.
SAME_QUANTITY = {
    "a Lippens job type's top-1 gap reliability": {"11_real_model_scores": "lippens_gap_reliability_k1",
                                                   "12_audit_size": "lippens_jobtype_gap_reliability_k1"},
    "re-cinq's top-1 gap reliability": {"11_real_model_scores": "recinq_gap_reliability_k1",
                                        "12_audit_size": "recinq_gap_reliability"},
}
#: keys that name a quantity of a public data set (the same data in every chapter that quotes it): two chapters that
#: glue one of these keys must glue one value (a chapter's other keys are its own names)
DATASET_KEYS = re.compile(r"(lippens|recinq|jderbysh|bloomberg)_\w+")


def _book_prose(glued: dict) -> dict[str, list[dict]]:
    pages = {stem: glued_sentences(markdown_text(path), glued, page=stem) for stem, path in glued["_paths"].items()}
    for page in sorted((ROOT / "book").glob("*.md")):
        pages[f"book/{page.name}"] = glued_sentences(page.read_text(encoding="utf-8"), glued)
    return pages


def quantity_problems(glued: dict, pages: dict[str, list[dict]]) -> list[str]:
    """Two chapters' different values of one quantity quoted without a size; one key glued with different values
    by two chapters."""
    problems = []
    for name, keys in SAME_QUANTITY.items():
        values = {stem: glued.get(stem, {}).get(key) for stem, key in keys.items()}
        if None in values.values() or len({round(float(v), 2) for v in values.values()}) == 1:
            continue
        quoted = set(keys.items())
        for page, sentences in pages.items():
            for s in sentences:
                if quoted & set(s["keys"]) and not SIZE_WORDS.search(s["text"]):
                    problems.append(f"{page}: {name} ({values}) quoted without its size: {s['text'][:200]}")
    by_key: dict[str, dict] = {}
    for stem, values in glued.items():
        if stem.startswith("_"):
            continue
        for key, value in values.items():
            if isinstance(value, (int, float, str)) and DATASET_KEYS.fullmatch(key):
                by_key.setdefault(key, {})[stem] = value
    for key, per in by_key.items():
        if len(per) > 1 and len({round(v, 6) if isinstance(v, float) else v for v in per.values()}) > 1:
            problems.append(f"{key} is glued with different values by {sorted(per)}: {per}")
    return problems


def test_the_reliability_checks_fail_on_the_words_of_issue_39():
    """The checks below can fail: the old verdict clause, and a 0.05 gap called reliable; two chapters' numbers for
    one quantity without a size."""
    old = glued_sentences("RABBI {glue:text}`v`.", {"c": {"v": "is not shown to track ΔDP at this size: the 95% "
                          "interval reaches into its null, although ΔDP is reliable enough for a metric to be tested"}},
                          page="c")
    assert reliability_word_problems(old)
    low = glued_sentences("The gap is reliable: $r =$ {glue:text}`lippens_gap_reliability_k1:.2f`.",
                          {"c": {"lippens_gap_reliability_k1": 0.05}}, page="c")
    assert reliability_word_problems(low) and not reliability_word_problems(
        glued_sentences("The gap is unreliable: $r =$ {glue:text}`lippens_gap_reliability_k1:.2f`.",
                        {"c": {"lippens_gap_reliability_k1": 0.05}}, page="c"))
    glued = {"11_real_model_scores": {"lippens_gap_reliability_k1": 0.05},
             "12_audit_size": {"lippens_jobtype_gap_reliability_k1": 0.043}}
    bare = {"a": glued_sentences("It agrees at {glue:text}`lippens_gap_reliability_k1:.2f`.", glued,
                                 page="11_real_model_scores")}
    sized = {"a": glued_sentences("From 15 vacancies per half it agrees at {glue:text}`lippens_gap_reliability_k1:.2f`.",
                                  glued, page="11_real_model_scores")}
    assert quantity_problems(glued, bare) and not quantity_problems(glued, sized)
    assert quantity_problems({"a": {"lippens_n_pools": 3}, "b": {"lippens_n_pools": 4}}, {})
    assert not quantity_problems({"a": {"n_per_group": 3}, "b": {"n_per_group": 4}}, {})


@pytest.mark.notebooks
def test_no_gap_under_0_8_is_called_reliable_one_quantity_has_one_number_and_counts_read(smoke_notebook):
    """Issue 39 items 1 and 2, on every executed chapter (smoke profile) and every book page with the chapters'
    glued values pasted in: "reliable" only beside a reliability of 0.8 or more, never "reliable enough"; a quantity
    two chapters measure is quoted with its size wherever their values differ, and a key two chapters glue holds
    one value."""
    glued: dict = {"_paths": {}}
    for source in toc_notebooks(root=ROOT):
        path, values = smoke_notebook(source.stem)
        glued[source.stem] = values
        glued["_paths"][source.stem] = path
    pages = _book_prose(glued)
    problems = [f"{page}: {p}" for page, sentences in pages.items() for p in reliability_word_problems(sentences)]
    problems += quantity_problems(glued, pages)
    # and the prose's words for numbers: no "(s)", "1 points", "nan" or "-0.00" (issue 39 item 4)
    problems += [f"{page}: {p}" for page, sentences in pages.items() for p in word_problems(sentences)]
    assert sum(len(s) for s in pages.values()) > 1000
    assert not problems, "\n".join(problems)


def _write_main_result():
    from .conftest import load_script

    return load_script("write_main_result")


def test_the_readme_states_the_landing_page_s_main_result_with_the_recorded_numbers():
    """Issue 39 item 5 and the house rule: the README's main result was typed by hand. It is now the landing page's
    paragraph (book/intro.md) written by scripts/write_main_result.py from book/main_result.json, the values the
    default build's chapters glued; the record holds exactly the glue keys the landing page quotes."""
    from allocbias.book.main_result import main_result_keys, readme_paragraph

    script = _write_main_result()
    record = json.loads((ROOT / "book" / "main_result.json").read_text(encoding="utf-8"))
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert record["profile"] == "default"
    assert [(s, k) for s, values in record["values"].items() for k in values] == main_result_keys(intro), (
        "book/main_result.json does not hold the glue keys the landing page's main result quotes: after `make book`, "
        "run python scripts/write_main_result.py")
    assert set(record["chapters"]) == set(record["values"])
    paragraph = readme_paragraph(record["values"], intro, chapters=script.chapter_numbers(),
                                 record_path="book/main_result.json")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"{script.START}\n{paragraph}\n{script.END}" in readme, (
        "README.md's main result is not the landing page's with the recorded numbers: run python "
        "scripts/write_main_result.py --readme")
    assert script.main(["--check"]) == 0
    assert "{glue" not in paragraph and "$" not in paragraph and "{doc}" not in paragraph


def test_the_main_result_is_read_only_from_chapters_of_the_named_profile(tmp_path):
    """A record is written from executed chapters of the profile it names: a chapter executed with other
    parameters, or one that does not glue a value the landing page quotes, is refused, naming it."""
    from allocbias.book.main_result import main_result_record

    script = _write_main_result()

    def chapter(stem: str, parameters: dict, glued: dict) -> None:
        outputs = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
                    "data": {"text/plain": repr(v)}} for k, v in glued.items()]
        nb = {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": outputs, "execution_count": 1}],
              "metadata": {"papermill": {"parameters": parameters}, "allocbias": {"inputs_sha256": "abc"}},
              "nbformat": 4, "nbformat_minor": 5}
        (tmp_path / f"{stem}.ipynb").write_text(json.dumps(nb), encoding="utf-8")

    chapter("11_real_model_scores", {}, {"lippens_n_pools": 1920})
    chapter("12_audit_size", {"n_splits": 10}, {"lippens_curve_max_size": 15})
    read = script.read_chapters(tmp_path, ["11_real_model_scores"], "default", root=ROOT)
    assert read["11_real_model_scores"] == {"glued": {"lippens_n_pools": 1920}, "parameters": {}, "inputs_sha256": "abc"}
    with pytest.raises(SystemExit, match=r"12_audit_size.ipynb: executed with parameters \{'n_splits': 10\}"):
        script.read_chapters(tmp_path, ["11_real_model_scores", "12_audit_size"], "default", root=ROOT)
    with pytest.raises(SystemExit, match="no executed chapter"):
        script.read_chapters(tmp_path, ["16_real_essays"], "default", root=ROOT)
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="11_real_model_scores::lippens_r_rabbi_k1"):
        main_result_record({"11_real_model_scores": {"lippens_n_pools": 1920}}, intro)
