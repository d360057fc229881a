"""Sphinx extension for the student edition of the book: no exercise solution anywhere in the built folder.

A solution is removed from every place a reader could find it:

* from each source as Sphinx reads it (``source-read``): ``{solution}`` blocks, and everything between a
  ``{solution-start}`` and its ``{solution-end}`` (markdown and code cells, with their outputs), are cut from the
  notebooks (and Markdown pages) before myst-nb parses them, so no page, search index entry or image holds them;
* from the downloadable copies: Sphinx copies each *original* source to ``_sources/`` (the page's download
  button serves it), so every ``_sources`` file is rewritten with the same function once the build finishes;
* the values glued only for a solution go with it: a glue key that only removed text references (``{glue:text}``,
  ``{glue:md}``, ``{glue:figure}`` ... in a solution, never in the text a student keeps, nor in another page's kept
  text as ``path::key``) has its glue output dropped from the notebook's code cells, so its value is in no page, no
  search index and no downloadable notebook (:func:`solution_only_glue_keys`, :func:`drop_glue`);
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
#: What the final check looks for in the built folder: a solution directive's opening fence (backtick or colon), in
#: a source or a notebook's JSON; prose that names a directive in inline code (`{solution}`, as running.md does) is
#: not one. A solution that reached a page as a rendered node is removed by :class:`RemoveSolutions`.
LEFTOVER = re.compile(r"(?:`{3,}|:{3,})\{solution(?:-start|-end)?\}")
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


def strip_notebook(notebook: dict, kept_elsewhere: set[str] | frozenset[str] = frozenset()) -> dict:
    """The notebook (nbformat 4 JSON as a dict) without its solutions: solution directives are cut from markdown
    cells, and every cell between a ``{solution-start}`` and its ``{solution-end}`` is dropped, outputs and all;
    the glue outputs of the keys only the solutions quote are dropped too (:func:`solution_only_glue_keys`).
    Cells left empty are dropped; the input is not modified."""
    return drop_glue(_strip_solutions(notebook), solution_only_glue_keys(notebook, kept_elsewhere))


def _strip_solutions(notebook: dict) -> dict:
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


#: A glue reference in MyST text: the role form ``{glue:text}`key:.3f``` (any glue role) and the directive form
#: ``{glue:figure} key``; a key may name another page, ``/build/notebooks/x.ipynb::key``.
_GLUE_ROLE = re.compile(r"\{glue(?::[\w-]+)?\}`(?P<ref>[^`]+)`")
_GLUE_DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{glue(?::[\w-]+)?\}[ \t]+(?P<ref>\S+)", re.MULTILINE)


def glue_references(text: str) -> list[tuple[str, str]]:
    """Every glue reference of MyST text as ``(page, key)``: ``page`` is ``""`` for the page's own keys, else the
    path before ``::``; the key's format spec (after ``:``) is dropped.

    >>> glue_references("r = {glue:text}`r_rabbi:.2f`, {glue:md}`/build/notebooks/a.ipynb::choice:s`")
    [('', 'r_rabbi'), ('/build/notebooks/a.ipynb', 'choice')]
    >>> glue_references("```{glue:figure} fig_rates\\n:name: f\\n```")
    [('', 'fig_rates')]
    """
    refs = []
    for pattern in (_GLUE_ROLE, _GLUE_DIRECTIVE):
        for match in pattern.finditer(text):
            page, _, key = match["ref"].rpartition("::")
            refs.append((page, key.split(":")[0]))
    return refs


def _markdown(notebook: dict) -> str:
    return "\n".join(_text(c) for c in notebook.get("cells", []) if c.get("cell_type") in ("markdown", "raw"))


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def solution_only_glue_keys(notebook: dict, kept_elsewhere: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The glue keys of the notebook that only its solutions quote: referenced (without a page) in its text, no
    longer referenced once the solutions are cut, and not in ``kept_elsewhere`` (the keys of this notebook that
    another page's kept text quotes as ``page::key``)."""
    before = {key for page, key in glue_references(_markdown(notebook)) if not page}
    after = {key for page, key in glue_references(_markdown(_strip_solutions(notebook))) if not page}
    return before - after - set(kept_elsewhere)


def drop_glue(notebook: dict, keys: set[str]) -> dict:
    """The notebook without the glue outputs (``metadata.scrapbook.name``) of ``keys``; the input is not modified."""
    if not keys:
        return notebook
    cells = []
    for cell in notebook.get("cells", []):
        outputs = cell.get("outputs")
        if outputs:
            kept = [o for o in outputs if o.get("metadata", {}).get("scrapbook", {}).get("name") not in keys]
            if len(kept) != len(outputs):
                cell = {**cell, "outputs": kept}
        cells.append(cell)
    return {**notebook, "cells": cells}


def strip_source(path: str | Path, text: str, kept_elsewhere: set[str] | frozenset[str] = frozenset()) -> str:
    """The text of the source file ``path`` (a notebook's JSON or MyST Markdown) without its solutions, and a
    notebook without the values glued only for them (``kept_elsewhere``: see :func:`solution_only_glue_keys`)."""
    if str(path).endswith(".ipynb"):
        return json.dumps(strip_notebook(json.loads(text), kept_elsewhere), indent=1, ensure_ascii=False) + "\n"
    return strip_text(text)[0]


def kept_cross_references(texts: dict[str, str]) -> dict[str, set[str]]:
    """Which keys of which page other pages' kept text quotes: ``texts`` maps each page's source path (relative to
    the book's root, ``/`` separators) to its source text; returns source path -> keys quoted as ``page::key``
    outside every solution.

    >>> kept_cross_references({"book/intro.md": "{glue:text}`/build/notebooks/a.ipynb::r:.2f`",
    ...                         "build/notebooks/a.ipynb": "{}"})
    {'build/notebooks/a.ipynb': {'r'}}
    """
    kept: dict[str, set[str]] = {}
    for path, text in texts.items():
        stripped = strip_source(path, text)
        body = _markdown(json.loads(stripped)) if path.endswith(".ipynb") else stripped
        for page, key in glue_references(body):
            if page:
                kept.setdefault(page.lstrip("/"), set()).add(key)
    return kept


class RemoveSolutions(SphinxPostTransform):
    """Delete every solution (plain or gated) from the document."""

    default_priority = 1  # before sphinx-exercise's post-transforms (5 and above)

    def run(self, **kwargs) -> None:
        for cls in (solution_node, solution_start_node, solution_end_node):
            for node in list(self.document.findall(cls)):
                node.parent.remove(node)


def _book_cross_references(app) -> dict[str, set[str]]:
    """:func:`kept_cross_references` of every source file of the book (computed once per process)."""
    cached = getattr(app, "_student_edition_cross_references", None)
    if cached is None:
        root = Path(app.srcdir)
        texts = {}
        for docname in sorted(app.env.found_docs):
            path = Path(app.env.doc2path(docname))
            if path.is_file():
                texts[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        cached = kept_cross_references(texts)
        app._student_edition_cross_references = cached
    return cached


def _kept_elsewhere(app, path: Path) -> set[str]:
    return _book_cross_references(app).get(Path(path).resolve().relative_to(Path(app.srcdir).resolve()).as_posix(),
                                           set())


def _strip_on_read(app, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname))
    source[0] = strip_source(path, source[0], _kept_elsewhere(app, path))


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
                original = Path(app.srcdir) / path.parent.relative_to(sources) / name
                kept = _kept_elsewhere(app, original) if original.is_file() else set()
                path.write_text(strip_source(name, path.read_text(encoding="utf-8"), kept), encoding="utf-8")
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
