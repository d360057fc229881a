"""The course's assignments (assignments/, scripts/build_assignments.py): the master notebooks' structure, and the
check that keeps solutions, hidden tests and answer values out of the student folder.

`make assignments` (run by CI) builds, grades and checks the real assignments; these tests hold the masters to their
format and the leak check to what it must find, on small fixtures, in well under a second.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, load_script
build = load_script("build_assignments")

MASTERS = {name: ROOT / "assignments" / name / f"{name}.ipynb" for name in build.ASSIGNMENTS}


def _cells(name: str) -> list[dict]:
    return json.loads(MASTERS[name].read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return build._source(cell)


def _questions(cells: list[dict]) -> list[dict]:
    """Each question's config and cells, from otter's raw BEGIN/END QUESTION cells."""
    questions, current = [], None
    for cell in cells:
        text = _source(cell)
        if cell["cell_type"] == "raw" and text.startswith("# BEGIN QUESTION"):
            current = {"config": yaml.safe_load(text.split("\n", 1)[1]), "cells": []}
        elif cell["cell_type"] == "raw" and text.startswith("# END QUESTION"):
            questions.append(current)
            current = None
        elif current is not None:
            current["cells"].append(cell)
    return questions


@pytest.mark.parametrize("name", build.ASSIGNMENTS)
def test_every_master_is_an_otter_assignment_of_four_to_six_timed_questions(name):
    cells = _cells(name)
    config = yaml.safe_load(_source(cells[0]).split("\n", 1)[1])
    assert _source(cells[0]).startswith("# ASSIGNMENT CONFIG") and config["name"] == name
    assert config["run_tests"] is True, "otter assign must grade the solutions"
    assert "wheel" in config["autograder_files"] and "README.md" in config["files"]
    assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), "masters are committed without outputs"
    assert not any(re.match(r"\s*def ", line) for c in cells if c["cell_type"] == "code" for line in _source(c).splitlines())
    questions = _questions(cells)
    assert 4 <= len(questions) <= 6
    for q in questions:
        prompt = next(_source(c) for c in q["cells"] if c["cell_type"] == "markdown")
        assert re.search(r"about \d+ minutes", prompt), f"{name} {q['config']['name']}: the prompt says no time"
        if q["config"].get("manual"):
            assert any("**Rubric (" in _source(c) for c in q["cells"]), f"{name} {q['config']['name']}: no rubric"
            continue
        tests = [_source(c) for c in q["cells"] if c["cell_type"] == "code" and "# SOLUTION" not in _source(c)]
        hidden = [t for t in tests if "hidden: true" in t]
        assert hidden and len(hidden) < len(tests), f"{name} {q['config']['name']}: needs public and hidden tests"


@pytest.mark.parametrize("name", build.ASSIGNMENTS)
def test_every_solution_line_assigns_a_name_the_answer_key_records(name):
    master = json.loads(MASTERS[name].read_text(encoding="utf-8"))
    names = build.answer_names(master)
    assert len(names) >= 8
    assert all(n.isidentifier() for n in names)


def test_the_data_writers_cover_every_assignment_and_its_data_files():
    for name in build.ASSIGNMENTS:
        config = yaml.safe_load(_source(_cells(name)[0]).split("\n", 1)[1])
        data = [f for f in config["files"] if f.endswith(".csv")]
        assert data and name in build.DATA_WRITERS
        assert all(f in build.DATA_WRITERS[name].__doc__ for f in data), f"{name}: {data} not written by its writer"
        assert (ROOT / "assignments" / name / "README.md").is_file()


def _student_folder(tmp_path: Path, notebook_text: str) -> Path:
    folder = tmp_path / "student"
    folder.mkdir()
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": notebook_text}]
    (folder / "a9.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (folder / "data.csv").write_text("score\n0.3123456\n")  # an input that happens to hold an answer's digits
    return folder


ANSWERS = {"r_rabbi": 0.31234567, "flags": [0.5, 0.25], "label": "RABBI"}
HIDDEN = ["assert np.isclose(r_rabbi, np.corrcoef(expected['rabbi'], expected['dDP'])[0, 1])"]


def test_a_clean_student_folder_gives_nothing_away(tmp_path):
    folder = _student_folder(tmp_path, "r_rabbi = ...\ngrader.check('q1')\n# rates lie in [0, 1]; 0.25 of the seats\n")
    assert build.student_leaks(folder, answers=ANSWERS, hidden_tests=HIDDEN, data_files=["data.csv"]) == []


@pytest.mark.parametrize("text, finding", [
    ("r_rabbi = np.corrcoef(x, y)[0, 1]  # SOLUTION\n", "marker '# SOLUTION'"),
    ("# BEGIN SOLUTION\nr_rabbi = 1\n# END SOLUTION\n", "marker '# BEGIN SOLUTION'"),
    ("**Rubric (3 points).** one point for ...\n", "marker 'Rubric'"),
    ('{"code": ">>> assert x", "hidden": true}\n', r'\\"hidden'),  # a test's JSON escaped in a cell
    ("assert np.isclose(r_rabbi, np.corrcoef(expected['rabbi'], expected['dDP'])[0, 1])\n", "a line of a hidden test"),
    ("print('r = 0.312')\n", "the value of r_rabbi (0.312)"),
    ("# the answer is 0.3123\n", "the value of r_rabbi (0.3123)"),
])
def test_the_leak_check_finds_a_solution_a_hidden_test_and_an_answer_value(tmp_path, text, finding):
    folder = _student_folder(tmp_path, text)
    leaks = build.student_leaks(folder, answers=ANSWERS, hidden_tests=HIDDEN, data_files=["data.csv"])
    assert any(finding in leak for leak in leaks), leaks


def test_an_answer_value_inside_a_longer_number_is_not_a_leak(tmp_path):
    folder = _student_folder(tmp_path, "x = 10.3124\ny = 0.31239\n")
    assert build.student_leaks(folder, answers=ANSWERS, hidden_tests=[], data_files=["data.csv"]) == []


def test_hidden_test_bodies_reads_only_the_hidden_cases_of_an_autograder_zip(tmp_path):
    test_file = ("OK_FORMAT = True\ntest = {'name': 'q1', 'points': 2, 'suites': [{'cases': ["
                 "{'code': '>>> assert public', 'hidden': False}, {'code': '>>> assert secret', 'hidden': True}]}]}\n")
    path = tmp_path / "a9-autograder.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("tests/q1.py", test_file)
        zf.writestr("otter_config.json", "{}")
    assert build.hidden_test_bodies(path) == [">>> assert secret"]


@pytest.mark.parametrize("name", build.ASSIGNMENTS)
def test_an_assignment_states_its_total_time_and_the_teaching_page_quotes_it(name):
    cells = _cells(name)
    intro = next(_source(c) for c in cells if c["cell_type"] == "markdown")
    total = re.search(r"About (\d+) hours? (\d+)\s+minutes: (\d+) minutes to\s+read", intro)
    assert total, f"{name}: the introduction states no total time"
    questions = sum(int(re.search(r"about (\d+) minutes", next(_source(c) for c in q["cells"]
                                                                if c["cell_type"] == "markdown")).group(1))
                    for q in _questions(cells))
    stated = 60 * int(total.group(1)) + int(total.group(2))
    assert stated == int(total.group(3)) + questions, f"{name}: {stated} min stated, reading and questions add up " \
                                                      f"to {int(total.group(3)) + questions}"
    teaching = (ROOT / "book" / "teaching.md").read_text(encoding="utf-8")
    row = re.search(rf"\| {name.upper()} \*[^|]*about (\d+) h (\d+) min \|", teaching)
    assert row and 60 * int(row.group(1)) + int(row.group(2)) == stated, f"teaching.md quotes another time for {name}"
