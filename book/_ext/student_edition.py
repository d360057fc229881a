"""Sphinx extension for the student edition of the book: no exercise solution anywhere in the built folder.

A solution is removed from every place a reader could find it:

* from each source as Sphinx reads it (``source-read``): ``{solution}`` blocks, and everything between a
  ``{solution-start}`` and its ``{solution-end}`` (markdown and code cells, with their outputs), are cut from the
  notebooks (and Markdown pages) before myst-nb parses them, so no page, search index entry or image holds them;
* from the downloadable copies: Sphinx copies each *original* source to ``_sources/`` (the page's download
  button serves it), so every ``_sources`` file is rewritten with the same function once the build finishes;
* a last check scans every text file of the output folder for a solution directive and fails the build if one
  is left.

The post-transform below stays as a second guard: it deletes any solution node (plain or gated) that reached a
document some other way. sphinx-exercise's own ``hide_solutions`` option is not used: it fails on the gated
``{solution-start}``/``{solution-end}`` form the chapters use (its end node is left without a writer).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

#: The opening line of a solution directive (backtick or colon fence).
_OPENING = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{(?P<name>solution(?:-start|-end)?)\}")
#: What the final check looks for in the built folder.
LEFTOVER = re.compile(r"\{solution(?:-start|-end)?\}")
_TEXT_SUFFIXES = {".html", ".js", ".json", ".ipynb", ".md", ".txt", ".xml", ".py"}


def strip_text(text: str, gated: bool = False) -> tuple[str, bool]:
    """Remove the solution directives of MyST text; ``gated`` says whether the text starts inside a
    ``{solution-start}``..``{solution-end}`` span (everything in it is removed). Returns the text and whether it
    ends inside such a span.

    A directive ends at the first line holding only its fence character, at least as many times (CommonMark's
    rule, so a solution with a fenced code block inside needs a longer outer fence, as MyST asks anyway).

    >>> strip_text("a\\n```{solution} ex\\nsecret\\n```\\nb\\n")
    ('a\\nb\\n', False)
    >>> strip_text("a\\n```{solution-start} ex\\n```\\nsecret\\n")
    ('a\\n', True)
    >>> strip_text("secret\\n```{solution-end}\\n```\\nb\\n", gated=True)
    ('b\\n', False)
    """
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    i = 0
    while i < len(lines):
        match = _OPENING.match(lines[i])
        if match is None:
            if not gated:
                kept.append(lines[i])
            i += 1
            continue
        fence = match["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        if match["name"] == "solution-start":
            gated = True
        elif match["name"] == "solution-end":
            gated = False
        i = j + 1
    return "".join(kept), gated


def strip_notebook(notebook: dict) -> dict:
    """The notebook (nbformat 4 JSON as a dict) without its solutions: solution directives are cut from markdown
    cells, and every cell between a ``{solution-start}`` and its ``{solution-end}`` is dropped, outputs and all.
    Cells left empty are dropped; the input is not modified."""
    cells, gated = [], False
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") in ("markdown", "raw"):
            text, gated_after = strip_text(source, gated)
            if text.strip():
                cells.append({**cell, "source": text})
            gated = gated_after
        elif not gated:
            cells.append(cell)
    return {**notebook, "cells": cells}


def strip_source(path: str | Path, text: str) -> str:
    """The text of the source file ``path`` (a notebook's JSON or MyST Markdown) without its solutions."""
    if str(path).endswith(".ipynb"):
        return json.dumps(strip_notebook(json.loads(text)), indent=1, ensure_ascii=False) + "\n"
    return strip_text(text)[0]


class RemoveSolutions(SphinxPostTransform):
    """Delete every solution (plain or gated) from the document."""

    default_priority = 1  # before sphinx-exercise's post-transforms (5 and above)

    def run(self, **kwargs) -> None:
        for cls in (solution_node, solution_start_node, solution_end_node):
            for node in list(self.document.findall(cls)):
                node.parent.remove(node)


def _strip_on_read(app, docname: str, source: list[str]) -> None:
    source[0] = strip_source(app.env.doc2path(docname), source[0])


def _strip_outputs(app, exception) -> None:
    """Rewrite the downloadable ``_sources`` copies, then check that no solution is left in the output folder."""
    if exception is not None:
        return
    outdir = Path(app.outdir)
    sources = outdir / "_sources"
    if sources.is_dir():
        for path in sources.rglob("*"):
            if path.is_file() and path.suffix in (".ipynb", ".md", ".txt"):
                name = path.name[: -len(".txt")] if path.name.endswith((".ipynb.txt", ".md.txt")) else path.name
                path.write_text(strip_source(name, path.read_text(encoding="utf-8")), encoding="utf-8")
    left = sorted(str(p.relative_to(outdir)) for p in outdir.rglob("*")
                  if p.is_file() and p.suffix in _TEXT_SUFFIXES
                  and LEFTOVER.search(p.read_text(encoding="utf-8", errors="replace")))
    if left:
        raise ExtensionError(f"student edition: a solution directive is left in {', '.join(left)}")


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.add_post_transform(RemoveSolutions)
    app.connect("source-read", _strip_on_read)
    app.connect("build-finished", _strip_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
