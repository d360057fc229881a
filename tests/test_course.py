"""The course around the book (issue 36): every exercise says how long it takes, the teaching page's module adds up
the chapters' own times, and the library a student installs with the light `.[course]` extra imports without torch.
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from allocbias.study import FINDINGS

from .conftest import ROOT

CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXERCISE = re.compile(r"```\{exercise\}\n:label: (\S+)\n(.*?)\n```[ \t]*(?:\n|$)", re.S)
EXERCISE_TIME = re.compile(r"\*Time: about (\d+) minutes\.\*")
READING_TIME = re.compile(r"\*\*Time[:.]\*\*:? (?:About )?(\d+) minutes to read")


def _markdown(path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_says_how_long_it_takes(chapter):
    text = _markdown(chapter)
    exercises = EXERCISE.findall(text)
    assert exercises, f"{chapter.name} has no exercise"
    untimed = [label for label, body in exercises if not EXERCISE_TIME.search(body)]
    assert not untimed, f"{chapter.name}: exercises {untimed} do not say how long they take"


SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution(?P<gated>-start)?\} (?P<label>\S+)\n(?P<body>.*?)"
                      r"(?:^(?P=fence)[ \t]*$)", re.S | re.M)
GATED_END = re.compile(r"^(?:`{3,}|:{3,})\{solution-end\}", re.M)
ANSWER = "**Answer:**"


def solution_texts(text: str) -> dict[str, str]:
    """The prose of every solution of a chapter's markdown, by exercise label: a ``{solution}`` block's body, or all
    the text from a ``{solution-start}`` to its ``{solution-end}`` (the gated form, whose code cells compute the
    answer the prose then states)."""
    found = {}
    for match in SOLUTION.finditer(text):
        if match["gated"]:
            end = GATED_END.search(text, match.end())
            found[match["label"]] = text[match.end():end.start() if end else len(text)]
        else:
            found[match["label"]] = match["body"]
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_solution_states_its_answer(chapter):
    """Issue 36 item 4: every exercise has a solution, and every solution states its answer in a sentence that
    begins **Answer:** (the number or the verdict, glued where a solution computes it)."""
    text = _markdown(chapter)
    labels = [label for label, _ in EXERCISE.findall(text)]
    solutions = solution_texts(text)
    assert set(labels) <= set(solutions), f"{chapter.name}: no solution for {sorted(set(labels) - set(solutions))}"
    unanswered = [label for label in labels if ANSWER not in solutions[label]]
    assert not unanswered, f"{chapter.name}: the solutions of {unanswered} state no answer ({ANSWER} ...)"


def test_the_solution_finder_reads_both_forms():
    text = ("```{exercise}\n:label: a\n\nQ\n```\n\n```{solution} a\n:class: dropdown\n\nWhy. **Answer:** 1.\n```\n"
            "```{exercise}\n:label: b\n\nQ\n```\n\n```{solution-start} b\n:class: dropdown\n```\n"
            "Computed.\n\n```{solution-end}\n```\n````{solution} c\n:class: dropdown\n\n```python\nx\n```\n"
            "**Answer:** x.\n````\n")
    found = solution_texts(text)
    assert ANSWER in found["a"] and ANSWER not in found["b"] and "Computed." in found["b"]
    assert ANSWER in found["c"]  # a solution with a fenced block inside ends at its own, longer fence


def _minutes(cell: str) -> int:
    hours = re.search(r"(\d+) h", cell)
    minutes = re.search(r"(\d+) min", cell)
    return 60 * int(hours.group(1) if hours else 0) + int(minutes.group(1) if minutes else 0)


def test_the_teaching_page_adds_up_the_times_its_chapters_state():
    rows = [line for line in (ROOT / "book" / "teaching.md").read_text(encoding="utf-8").splitlines()
            if re.match(r"\| \d\. ", line)]
    assert len(rows) == 3, "the module has three weeks"
    times = {p.stem: _markdown(p) for p in CHAPTERS}
    for row in rows:
        week, chapters, reading, exercises, assignment = [c.strip() for c in row.strip("|").split("|")]
        stems = re.findall(r"\{doc\}`[^`<]*<?/build/notebooks/(\w+)>?`", chapters)
        assert stems and all(s in times for s in stems), row
        stated_reading = sum(int(READING_TIME.search(times[s]).group(1)) for s in stems)
        stated_exercises = sum(int(m) for s in stems for m in EXERCISE_TIME.findall(times[s]))
        assert _minutes(reading) == stated_reading, f"{week}: reading {reading}, the chapters say {stated_reading} min"
        assert _minutes(exercises) == stated_exercises, f"{week}: exercises {exercises}, the chapters say {stated_exercises}"
        assert re.match(r"A\d \*", assignment), row


def test_the_teaching_page_is_in_the_book_and_the_readme_links_it():
    assert "file: book/teaching" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "book/teaching.md" in (ROOT / "README.md").read_text(encoding="utf-8")


#: What the light install (`pip install ".[course]"`) leaves out: importing any of these fails there.
MODEL_PACKAGES = {"torch", "transformers", "accelerate", "bitsandbytes", "safetensors", "gguf", "llama_cpp"}
LIB = ROOT / "lib"


def _module_file(name: str):
    base = LIB.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _import_time_imports(name: str) -> set[str]:
    """The modules ``allocbias`` module ``name`` imports when it is imported: its import statements outside any
    function or class body (inside ``try``/``if`` blocks too), relative imports resolved, each with its parents."""
    path = _module_file(name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)  # a submodule imported by name
            for field in ("body", "orelse", "finalbody", "handlers"):
                visit(getattr(node, field, []) or [])

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    with_parents = set()
    for module in found:
        parts = module.split(".")
        with_parents.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return with_parents


def imported_at_import_time(roots) -> set[str]:
    """Every module that importing ``roots`` imports, following allocbias's own modules transitively."""
    seen, todo, outside = set(), list(roots), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for module in _import_time_imports(name):
            if module.split(".")[0] == "allocbias":
                if _module_file(module) is not None:
                    todo.append(module)
            else:
                outside.add(module.split(".")[0])
    return outside


def test_the_import_graph_follows_a_lazy_import_into_a_module_level_one():
    assert "torch" not in _import_time_imports("allocbias.scoring.engine")  # engine imports torch inside functions
    assert {"allocbias.measures", "allocbias.measures.selection"} <= _import_time_imports("allocbias.selection")
    assert "numpy" in imported_at_import_time(["allocbias.selection"])


def test_the_library_and_every_findings_module_import_without_the_model_packages():
    """What a student imports with the light install: `allocbias`, the modules the assignments use and every
    chapter's findings module (no chapter loads a model at its default parameters) import no model package when
    they are imported (scripts/check_course_install.sh runs them in an environment without these packages)."""
    roots = ["allocbias", "allocbias.selection", "allocbias.metrics", "allocbias.ll144", "allocbias.measures.reliability",
             "allocbias.book", *(f"allocbias.study.{m}" for m in FINDINGS)]
    assert imported_at_import_time(roots) & MODEL_PACKAGES == set()
