"""allocbias.study: every chapter has one findings function, listed once, and each chapter calls its own.

The notebooks are thin (issue 23 item 1): no function definitions, one glue call, and the book's code in all
chapters stays small enough to read. An exercise's gated solution (issue 36 items 3 and 4) computes its answer from
library primitives and glues it where it computes it: its cells are counted apart, each small and defining nothing."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path

import pytest

import allocbias.study as study
from allocbias.study.findings import Findings

from .conftest import code_cells_by_place

ROOT = Path(__file__).resolve().parents[1]
PLAN = {"catalog", "runs", "tables", "synthetic", "book", "reading"}
BASE = {"findings"}  #: the base every findings class inherits (allocbias.study.findings.Findings)
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _code(path: Path) -> str:
    """The chapter's code a reader runs: every code cell outside the exercises' gated solutions."""
    return "\n".join(code_cells_by_place(path)[0])


def _solution_cells(path: Path) -> list[str]:
    return code_cells_by_place(path)[1]


def _lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_every_findings_module_is_listed_and_resolves():
    modules = {p.stem for p in Path(study.__file__).parent.glob("*.py")} - PLAN - BASE - {"__init__"}
    assert modules == set(study.FINDINGS)
    for module, (function, result) in study.FINDINGS.items():
        mod = importlib.import_module(f"allocbias.study.{module}")
        assert callable(getattr(mod, function)) and isinstance(getattr(mod, result), type), module
        assert getattr(study, function) is getattr(mod, function)
        assert issubclass(getattr(mod, result), Findings), f"{result} does not inherit Findings"
        assert dataclasses.is_dataclass(getattr(mod, result)), f"{result} is not a dataclass"
        fields = {f.name for f in dataclasses.fields(getattr(mod, result))}
        assert "values" in fields and not fields & {"scalars", "settings"}, (result, sorted(fields))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        study.nothing  # noqa: B018


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_calls_one_findings_function_and_defines_nothing(path):
    code = _code(path)
    assert len(re.findall(r"\bglue\(", code)) == 1, "one glue call site"
    assert not re.search(r"^\s*(def|class)\s|\blambda\b", code, flags=re.MULTILINE)
    called = [f for f, _ in study.FINDINGS.values() if re.search(rf"\b{f}\(", code)]
    assert len(called) == 1, called
    for cell in _solution_cells(path):  # a solution computes its answer with the library, glues it, defines nothing
        assert not re.search(r"^\s*(def|class)\s|\blambda\b", cell, flags=re.MULTILINE), cell
        assert re.search(r"\bglue\(", cell), cell
        assert not any(re.search(rf"\b{f}\(", cell) for f, _ in study.FINDINGS.values()), cell
        assert _lines(cell) <= 30, cell


def test_each_findings_function_is_called_by_one_chapter():
    """Chapters and findings functions match one to one: no chapter borrows another's findings."""
    callers = {f: [p.stem for p in CHAPTERS if re.search(rf"\b{f}\(", _code(p))] for f, _ in study.FINDINGS.values()}
    assert all(len(stems) == 1 for stems in callers.values()), callers
    assert len(CHAPTERS) == len(study.FINDINGS)


def test_the_book_s_code_stays_small():
    """All chapters together: at most 1,000 code lines (blank and comment lines aside) and 60 glue calls, the
    exercises' solutions aside (each at most 30 lines, above)."""
    total = sum(_lines(_code(p)) for p in CHAPTERS)
    glues = sum(len(re.findall(r"\bglue\(", _code(p))) for p in CHAPTERS)
    assert total <= 1000, total
    assert glues <= 60, glues


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_cell_hides_its_code_and_is_full_width(path):
    """A cell that draws a figure (calls a findings module's figure_* or figures_* function) is tagged hide-input and
    full-width: the page shows the figure, not its call, and lets a multi-panel figure run into the right margin so
    that its legends read at 9 pt at 1280 px (scripts/check_reading.py measures it on the built book)."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    drawing = [c for c in cells if re.search(r"\bfigures?_\w+\(", "".join(c["source"]))
               and not re.search(r"^\s*(from|import)\s", "".join(c["source"]), flags=re.MULTILINE)]
    assert drawing, "no figure cell found"
    untagged = ["".join(c["source"])[:60] for c in drawing
                if not {"hide-input", "full-width"} <= set(c["metadata"].get("tags", []))]
    assert not untagged, untagged
