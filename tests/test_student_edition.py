"""The student edition's extension (book/_ext/student_edition.py) on small notebooks: the values glued only for a
solution leave with it, from the page and from the downloadable notebook, and nothing a student still reads loses
its value. The smoke book's student edition is checked chapter by chapter in tests/test_book_reading.py."""

from __future__ import annotations

import json

import nbformat

from .conftest import ROOT, load_script

se = load_script("student_edition", "book/_ext")


def _glue(key: str, value: str) -> dict:
    return nbformat.v4.new_output("display_data", data={"application/papermill.record/text/plain": repr(value)},
                                  metadata={"scrapbook": {"name": key, "mime_prefix": "application/papermill.record/"}})


def _chapter() -> dict:
    glue = nbformat.v4.new_code_cell("for key, value in findings.glue_values().items(): glue(key, value, display=False)")
    glue.outputs = [_glue(k, f"VALUE-OF-{k}") for k in ("shown", "secret", "gated_secret", "quoted_elsewhere")]
    gated = nbformat.v4.new_code_cell("print(answer)")
    nb = nbformat.v4.new_notebook(cells=[
        glue,
        nbformat.v4.new_markdown_cell("Findings: {glue:text}`shown:.2f`.\n\n```{exercise}\n:label: ex1\n\nDo it.\n```"),
        nbformat.v4.new_markdown_cell("```{solution} ex1\n:class: dropdown\n\n**Answer:** {glue:text}`secret:.3f` "
                                      "and {glue:text}`shown:.2f` and {glue:text}`quoted_elsewhere`.\n```"),
        nbformat.v4.new_markdown_cell("```{exercise}\n:label: ex2\n\nAnd this.\n```"),
        nbformat.v4.new_markdown_cell("```{solution-start} ex2\n:class: dropdown\n```"),
        gated,
        nbformat.v4.new_markdown_cell("**Answer:** {glue:md}`gated_secret`.\n\n```{solution-end}\n```"),
    ])
    return json.loads(nbformat.writes(nb))


def _glued(notebook: dict) -> set[str]:
    return {o["metadata"]["scrapbook"]["name"] for c in notebook["cells"] for o in c.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


def test_a_value_glued_only_for_a_solution_is_dropped_with_it():
    chapter = _chapter()
    assert se.solution_only_glue_keys(chapter) == {"secret", "gated_secret", "quoted_elsewhere"}
    stripped = se.strip_notebook(chapter)
    assert _glued(stripped) == {"shown"}
    assert "VALUE-OF-secret" not in json.dumps(stripped) and "VALUE-OF-shown" in json.dumps(stripped)
    assert _glued(chapter) == {"shown", "secret", "gated_secret", "quoted_elsewhere"}  # the input is not modified


def test_a_value_another_page_quotes_outside_its_solutions_stays():
    chapter = _chapter()
    pages = {"book/intro.md": "The book: {glue:text}`/build/notebooks/01_ex.ipynb::quoted_elsewhere`.\n"
                              "```{solution} x\n{glue:text}`/build/notebooks/01_ex.ipynb::secret`\n```\n",
             "build/notebooks/01_ex.ipynb": json.dumps(chapter)}
    kept = se.kept_cross_references(pages)
    assert kept == {"build/notebooks/01_ex.ipynb": {"quoted_elsewhere"}}  # the intro's solution quote does not count
    stripped = json.loads(se.strip_source("01_ex.ipynb", json.dumps(chapter), kept["build/notebooks/01_ex.ipynb"]))
    assert _glued(stripped) == {"shown", "quoted_elsewhere"}


def test_the_book_has_solution_only_values_and_finds_them_all():
    """The chapters' values glued only for a solution (found from the sources; the executed copies carry them)."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in (ROOT / "book").glob("*.md")}
    chapters = sorted((ROOT / "notebooks").glob("*.ipynb"))
    texts |= {f"build/notebooks/{p.name}": p.read_text(encoding="utf-8") for p in chapters}
    kept = se.kept_cross_references(texts)
    found = {p.stem: se.solution_only_glue_keys(json.loads(p.read_text(encoding="utf-8")),
                                                kept.get(f"build/notebooks/{p.name}", set())) for p in chapters}
    assert {"random_halfway"} <= found["05_model_selection"]
    assert {"ex_closest_metric", "ex_closest_share"} <= found["11_real_model_scores"]


def test_the_final_check_finds_a_left_directive_not_a_mention():
    """The build fails on a solution directive left in the output folder, not on prose that names one (running.md
    lists what the edition removes: every `{solution}` block, everything between a `{solution-start}` and ...)."""
    assert se.LEFTOVER.search('"source": ["```{solution} ex1\\n", ":class: dropdown\\n"]')
    assert se.LEFTOVER.search(":::{solution-start} ex2\n") and se.LEFTOVER.search("````{solution-end}\n````")
    mention = "- every `{solution}` block;\n- everything between a `{solution-start}` and its `{solution-end}`"
    assert not se.LEFTOVER.search(mention)
    assert not se.LEFTOVER.search('<code class="docutils literal"><span class="pre">{solution}</span></code>')
