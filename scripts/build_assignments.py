"""Build the course's assignments (``make assignments``): otter-grader's student and autograder versions, an answer
key for the instructor, and the checks that keep answers out of the students' hands.

For each master notebook ``assignments/<name>/<name>.ipynb`` (otter-grader's assignment format: questions, solutions,
public and hidden tests, rubrics):

1. stage it in ``build/assignments/<name>/`` with its data, written from the checkout's committed tables by the
   library's loaders (:data:`DATA_WRITERS`; nothing is downloaded), its data card (``README.md``) and a wheel of
   ``allocbias`` for the Gradescope autograder (its ``requirements.txt`` installs the wheel from the zip);
2. run ``otter assign`` into ``dist/assignments/<name>/{student,autograder}``; otter runs every test against the
   solutions and fails the build unless they score full marks;
3. grade the solutions and the unmodified student notebook with ``otter run`` (otter's own grading, no Docker):
   the solutions must score full marks, the student notebook at most :data:`STUDENT_MAX_SHARE` of them;
4. execute the solutions into ``dist/assignments/answer_key/<name>_solutions.ipynb`` (the instructor's answer key,
   outputs and all) and record every answer value the solutions assign (``<name>_answers.json``);
5. check the student folder (:func:`student_leaks`): no solution or rubric marker, no hidden test, and no answer
   value written anywhere in its notebooks, tests or texts.

Any failure exits non-zero naming the assignment and what failed. ``--only a1`` builds one assignment.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ("a1", "a2", "a3")
#: The unmodified student notebook may score at most this share of the points (its answers are all ``...``).
STUDENT_MAX_SHARE = 0.25
#: What a student file must never hold: otter's solution, test and question markers, a rubric, a hidden test flag.
MARKERS = re.compile(r"#\s*(?:BEGIN|END)\s+(?:SOLUTION|TESTS|QUESTION|TEST CONFIG)\b|#\s*SOLUTION\b|\bRubric\b"
                     r"|\bhidden:\s*true\b|\\?\"hidden\\?\":\s*true|'hidden':\s*True", re.IGNORECASE)
#: Student files searched for answer values and hidden tests (the data files are inputs, not answers).
SEARCHED_SUFFIXES = {".ipynb", ".py", ".md", ".txt", ".json", ".otter", ".yml", ".yaml"}


# --------------------------------------------------------------------------------------------------------------
# the assignments' data: written from the committed tables by the library
# --------------------------------------------------------------------------------------------------------------
def _write_csv(frame, path: Path) -> None:
    from allocbias.outputs import write_atomic

    write_atomic(path, frame.to_csv(index=False, lineterminator="\n"))


def write_a1_data(folder: Path) -> None:
    """``scores.csv``: the committed pointwise scores of ``smollm2-fp32-paper`` on the study's candidates."""
    from allocbias.scoring import catalog

    table = catalog.study_scores("smollm2-fp32-paper")
    _write_csv(table[["job", "resume_id", "quality", "qualified", "group", "full_name", "score"]], folder / "scores.csv")


def write_a2_data(folder: Path) -> None:
    """``audit.csv``: the selection-rate rows of one published Local Law 144 audit (Gerchick et al.'s data)."""
    import pandas as pd

    from allocbias.audited import data as D
    from allocbias.audited import datasets

    audits = datasets.read_csv(D.data_dir() / "ll144_audits" / "audits.csv")
    rows = audits[(audits["audit_id"] == A2_AUDIT) & (audits["selection_or_scoring_rate"] == "Selection")]
    if rows.empty:
        raise SystemExit(f"a2: audit {A2_AUDIT!r} has no selection-rate rows in data/ll144_audits/audits.csv")
    out = pd.DataFrame({
        "table": rows["protected_char_group"], "sex": rows["sex"], "race_ethnicity": rows["race_ethnicity"],
        "applicants": rows["number_of_applications"], "selected": rows["n_selected_or_n_above_median"],
        "published_rate": rows["result"], "published_impact_ratio": rows["impact_ratio"]})
    _write_csv(out, folder / "audit.csv")


#: The published audit of assignment 2: a selection tool's table with whole counts and groups under 2%.
A2_AUDIT = "cigna_unknown_unknown_2023_audit_1"


def write_a3_data(folder: Path) -> None:
    """``lippens.csv``: Lippens's scores (vacancy, job type, group, score), CC BY 4.0."""
    from allocbias.audited.public_scores import load_lippens

    scores = load_lippens().query("valid")
    _write_csv(scores[["vacancy_id", "job_type", "group", "score"]], folder / "lippens.csv")


DATA_WRITERS: dict[str, Callable[[Path], None]] = {"a1": write_a1_data, "a2": write_a2_data, "a3": write_a3_data}


# --------------------------------------------------------------------------------------------------------------
# answers and leaks
# --------------------------------------------------------------------------------------------------------------
def answer_names(master: dict) -> list[str]:
    """The names the solutions assign: every target of a line marked ``# SOLUTION`` in the master's code cells."""
    names: list[str] = []
    for cell in master.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for line in _source(cell).splitlines():
            if re.search(r"#\s*SOLUTION\s*$", line):
                try:
                    tree = ast.parse(line.split("# SOLUTION")[0].strip() or "pass")
                except SyntaxError:
                    raise SystemExit(f"a line marked # SOLUTION must be a whole statement (otter replaces it alone): "
                                     f"{line.strip()!r}") from None
                for node in ast.walk(tree):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(names))


def value_forms(value: float) -> list[str]:
    """How an answer value may be written in a file: 3, 4 and 6 decimals and Python's repr, for a value that is not
    a round number, each with three significant digits or more (a value with at most two decimals, such as 0.5 or 2,
    or the form 0.001 of 0.0012, says nothing on its own).

    >>> value_forms(0.31234567)
    ['0.312', '0.3123', '0.312346', '0.31234567']
    >>> value_forms(0.25), value_forms(3.0), value_forms(float("nan")), value_forms(0.0012)
    ([], [], [], ['0.001200'])
    """
    if not math.isfinite(value) or abs(value * 100 - round(value * 100)) < 1e-9:
        return []
    forms = [f"{value:.3f}", f"{value:.4f}", f"{value:.6f}", repr(float(value))]
    return list(dict.fromkeys(f for f in forms if len(f.lstrip("-0.").replace(".", "")) >= 3))


def _numbers(value) -> list[float]:
    """The numbers of an answer value as recorded in the answers file (a number, a list, or nested lists)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _numbers(item)]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _numbers(item)]
    return []


def _searched_files(folder: Path) -> Iterable[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SEARCHED_SUFFIXES)


def student_leaks(student: Path, *, answers: dict, hidden_tests: Iterable[str], data_files: Iterable[str] = ()
                  ) -> list[str]:
    """What the student folder gives away, one line per finding (empty when nothing): a solution, test, question or
    rubric marker; a line of a hidden test; an answer value (any of :func:`value_forms` of a number the solutions
    assign, as a whole number in the text). ``data_files`` (names relative to the folder) are inputs and are not
    searched for values."""
    skip = {student / name for name in data_files}
    found: list[str] = []
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in _searched_files(student) if p not in skip}
    for path, text in texts.items():
        rel = path.relative_to(student)
        for match in MARKERS.finditer(text):
            found.append(f"{rel}: marker {match.group(0)!r}")
        for test in hidden_tests:
            lines = [ln.strip() for ln in test.splitlines() if len(ln.strip()) > 20 and "TEST CONFIG" not in ln]
            for line in lines:
                if line in text:
                    found.append(f"{rel}: a line of a hidden test: {line[:80]!r}")
                    break
        for name, value in answers.items():
            for number in _numbers(value):
                for form in value_forms(number):
                    if re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", text):
                        found.append(f"{rel}: the value of {name} ({form})")
                        break
    return list(dict.fromkeys(found))


def hidden_test_bodies(autograder_zip: Path) -> list[str]:
    """The code of every hidden test case in an otter autograder zip (OK-format test files under ``tests/``)."""
    bodies: list[str] = []
    with zipfile.ZipFile(autograder_zip) as zf:
        for name in zf.namelist():
            if name.startswith("tests/") and name.endswith(".py"):
                scope: dict = {}
                exec(compile(zf.read(name).decode("utf-8"), name, "exec"), scope)  # the file only assigns `test`
                for suite in scope.get("test", {}).get("suites", []):
                    bodies += [case["code"] for case in suite.get("cases", []) if case.get("hidden")]
    return bodies


# --------------------------------------------------------------------------------------------------------------
# steps
# --------------------------------------------------------------------------------------------------------------
def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _run(cmd: list[str], *, cwd: Path | None = None, what: str) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed (exit {done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def build_wheel(out: Path) -> Path:
    """A wheel of the checkout's ``allocbias`` (no dependencies) for the autograder zips."""
    shutil.rmtree(out, ignore_errors=True)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
         what="building the allocbias wheel")
    wheels = sorted(out.glob("allocbias-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one allocbias wheel in {out}, found {[w.name for w in wheels]}")
    return wheels[0]


def stage(name: str, wheel: Path, staging: Path) -> Path:
    """The master notebook, its data card, its data and the wheel in a fresh folder; returns the master's path."""
    source = ROOT / "assignments" / name
    folder = staging / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file():
            shutil.copy2(path, folder / path.name)
    (folder / "wheel").mkdir()
    shutil.copy2(wheel, folder / "wheel" / wheel.name)
    # Gradescope unpacks the autograder zip into /autograder/source, with the files of `autograder_files` in files/
    (folder / "requirements.txt").write_text(f"/autograder/source/files/wheel/{wheel.name}\n", encoding="utf-8")
    DATA_WRITERS[name](folder)
    return folder / f"{name}.ipynb"


def otter_run(autograder_zip: Path, notebook: Path, out: Path) -> tuple[float, float]:
    """Grade ``notebook`` with otter's own grading (``otter run``, no container): (score, possible points)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    _run([str(Path(sys.executable).with_name("otter")), "run", "--no-logo", "-a", str(autograder_zip), "-o", str(out),
          str(notebook)], what=f"otter run on {notebook}")
    results = json.loads((out / "results.json").read_text())
    graded = [t for t in results.get("tests", []) if "max_score" in t]  # one entry per question, and the public summary
    return sum(float(t.get("score") or 0) for t in graded), sum(float(t["max_score"]) for t in graded)


ANSWERS_CELL = """\
import json as _json, numpy as _np, pandas as _pd
def _plain(v):
    if isinstance(v, _pd.DataFrame):
        return {str(c): _plain(v[c]) for c in v.columns if _pd.api.types.is_numeric_dtype(v[c])}
    if isinstance(v, (_pd.Series, _np.ndarray, list, tuple)):
        return [_plain(x) for x in list(_np.asarray(v, dtype=object).ravel())[:500]]
    if isinstance(v, (bool, _np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, _np.integer, _np.floating)):
        return float(v)
    if hasattr(v, "reliability"):
        return float(v.reliability)
    return str(v)
print("ANSWERS" + _json.dumps({n: _plain(globals()[n]) for n in NAMES if n in globals()}))
"""


def answer_key(name: str, autograder: Path, names: list[str], out: Path) -> dict:
    """Execute the solutions notebook in the autograder folder into the answer key; return the answer values."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(autograder / f"{name}.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(ANSWERS_CELL.replace("NAMES", repr(names))))
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(autograder)}}
                   ).execute()
    probe = notebook.cells.pop()
    text = "".join(o.get("text", "") for o in probe.get("outputs", []) if o.get("output_type") == "stream")
    match = re.search(r"^ANSWERS(.*)$", text, flags=re.MULTILINE)
    if match is None:
        raise SystemExit(f"{name}: the answer key's last cell printed no answers: {text[-2000:]}")
    answers = json.loads(match.group(1))
    missing = sorted(set(names) - set(answers))
    if missing:
        raise SystemExit(f"{name}: the solutions never assign {missing}")
    out.mkdir(parents=True, exist_ok=True)
    from allocbias.outputs import write_atomic

    write_atomic(out / f"{name}_solutions.ipynb", nbformat.writes(notebook))
    write_atomic(out / f"{name}_answers.json", json.dumps(answers, indent=1, sort_keys=True) + "\n")
    return answers


def build(name: str, wheel: Path, *, staging: Path, dist: Path) -> dict:
    """Build, grade and check one assignment; returns what was measured."""
    start = time.monotonic()
    master = stage(name, wheel, staging)
    result = dist / name
    shutil.rmtree(result, ignore_errors=True)
    _run([str(Path(sys.executable).with_name("otter")), "assign", "-v", str(master), str(result)], cwd=master.parent,
         what=f"otter assign {name} (the solutions must pass every test)")
    autograder, student = result / "autograder", result / "student"
    zips = sorted(autograder.glob(f"{name}-autograder_*.zip"))
    if len(zips) != 1:
        raise SystemExit(f"{name}: expected one autograder zip in {autograder}, found {[z.name for z in zips]}")
    grading = staging / f"{name}-grading"
    solved, possible = otter_run(zips[0], autograder / f"{name}.ipynb", grading / "solutions")
    if possible <= 0 or solved < possible:
        raise SystemExit(f"{name}: the solutions score {solved} of {possible} under otter run, not full marks")
    blank, _ = otter_run(zips[0], student / f"{name}.ipynb", grading / "student")
    if blank > STUDENT_MAX_SHARE * possible:
        raise SystemExit(f"{name}: the unmodified student notebook scores {blank} of {possible} "
                         f"(more than {STUDENT_MAX_SHARE:.0%}): a public test passes without an answer")
    master_nb = json.loads(master.read_text(encoding="utf-8"))
    answers = answer_key(name, autograder, answer_names(master_nb), dist / "answer_key")
    data_files = [p.name for p in master.parent.iterdir() if p.suffix in (".csv",)]
    leaks = student_leaks(student, answers=answers, hidden_tests=hidden_test_bodies(zips[0]), data_files=data_files)
    if leaks:
        raise SystemExit(f"{name}: the student folder gives answers away:\n  " + "\n  ".join(leaks))
    return {"assignment": name, "solutions": solved, "student": blank, "possible": possible,
            "answers": len(answers), "seconds": round(time.monotonic() - start, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=ASSIGNMENTS, help="build these assignments only")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist" / "assignments")
    parser.add_argument("--staging", type=Path, default=ROOT / "build" / "assignments")
    args = parser.parse_args(argv)
    args.staging.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(args.staging / "wheel")
    for name in args.only or ASSIGNMENTS:
        report = build(name, wheel, staging=args.staging, dist=args.dist)
        print(f"{name}: solutions {report['solutions']:g}/{report['possible']:g} points, unmodified student notebook "
              f"{report['student']:g}/{report['possible']:g}, {report['answers']} answer values kept out of the student "
              f"folder ({report['seconds']} s)")
    print(f"student folders: {args.dist}/<name>/student; autograder zips: {args.dist}/<name>/autograder; "
          f"answer key: {args.dist}/answer_key")
    return 0


if __name__ == "__main__":
    sys.exit(main())
