"""Issue 21, items 9-14: the score store and the book runner refuse bad input with an error that names it, and
the book is built from the checkout it is run in. Each test failed on the code before the change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allocbias.store import RowCheckError, ScoreStore

LIB = Path(__file__).resolve().parents[1] / "lib"
LABELS = {"No": 0, "Yes": 1}
KEY = dict(kind="resume_pointwise", model_key="toy@fp32", prompt_hash="p", params={"labels": LABELS})


def _rows(start, n):
    p_yes = np.linspace(0.2, 0.8, n)
    return pd.DataFrame({"prompt_id": [f"job/r{i}" for i in range(start, start + n)], "score": p_yes,
                         "label_mass": np.full(n, 0.5), "p_No": 1 - p_yes, "p_Yes": p_yes})


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("ALLOCBIAS_ROOT", "ALLOCBIAS_DATA")}
    env["PYTHONPATH"] = os.pathsep.join([str(LIB), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**env, **extra}


# ------------------------------------------------------------------------------------- item 9: append validates
def test_append_refuses_rows_the_reader_would_refuse_and_keeps_what_is_stored(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(_rows(0, 3))
    before = (store.scores_path.read_bytes(), store.provenance_path.read_bytes())
    bad = _rows(3, 3)
    bad.loc[1, ["score", "p_No", "p_Yes"]] = 1.0  # the label probabilities of job/r4 sum to 2
    with pytest.raises(RowCheckError) as err:
        store.append(bad)
    msg = str(err.value)
    for part in (str(store.scores_path), "system 'toy@fp32'", "resume_pointwise", "'job/r4'", "do not sum to 1",
                 "nothing was written", "3 row(s) already stored"):
        assert part in msg, (part, msg)
    assert (store.scores_path.read_bytes(), store.provenance_path.read_bytes()) == before
    assert ScoreStore(tmp_path, **KEY).read()["prompt_id"].tolist() == ["job/r0", "job/r1", "job/r2"]
    # a refused first append leaves no table behind
    fresh = ScoreStore(tmp_path / "fresh", **KEY)
    with pytest.raises(RowCheckError, match="'job/r4'.*do not sum to 1.*0 row"):
        fresh.append(bad)
    assert not fresh.scores_path.exists() and not fresh.provenance_path.exists()


# ---------------------------------------------------------------------------- item 13: check names every table
def test_store_check_names_every_bad_table_without_a_traceback(tmp_path):
    good = ScoreStore(tmp_path, **KEY)
    good.append(_rows(0, 3))
    edited = ScoreStore(tmp_path, **{**KEY, "model_key": "edited"})
    edited.append(_rows(0, 3))
    edited.scores_path.write_text(edited.scores_path.read_text().replace("0.5,", "0.25,", 1))
    orphan = ScoreStore(tmp_path, **{**KEY, "model_key": "orphan"})
    orphan.append(_rows(0, 3))
    orphan.provenance_path.unlink()
    run = subprocess.run([sys.executable, "-m", "allocbias.store", "check", str(tmp_path)],
                         capture_output=True, text=True, env=_env())
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "Traceback" not in out, out
    assert f"ok        {good.path.name}: 3 rows" in out
    assert f"BAD       {edited.path.name}: " in out and "content digest mismatch" in out
    assert f"BAD       {orphan.path.name}: " in out and "no provenance.json" in out
    assert "3 table(s)" in out and "1 good, 2 bad" in out
    with_tb = subprocess.run([sys.executable, "-m", "allocbias.store", "check", str(tmp_path), "--traceback"],
                             capture_output=True, text=True, env=_env())
    assert with_tb.returncode == 1 and with_tb.stderr.count("Traceback") == 2, with_tb.stderr


# ------------------------------------------------------------- items 10-12, 14: the book runner and its checkout
ENV_NOTEBOOK_CELLS = [
    ("code", ["parameters"], "# Parameters: override with papermill -p NAME VALUE (profiles/*.yaml hold the book's "
                             "settings)\nseed = 0  # a seed"),
    ("code", [], "import os\nimport allocbias\nfrom myst_nb import glue\n"
                 "glue('root', os.environ['ALLOCBIAS_ROOT'], display=False)\n"
                 "glue('data', os.environ['ALLOCBIAS_DATA'], display=False)\n"
                 "glue('package', allocbias.__file__, display=False)\n"
                 "glue('cwd', os.getcwd(), display=False)\nglue('seed', seed, display=False)"),
]


def _checkout(folder: Path) -> Path:
    """A minimal allocbias checkout: one chapter that glues the environment its kernel sees, its own package."""
    import nbformat

    (folder / "notebooks").mkdir(parents=True)
    (folder / "profiles").mkdir()
    (folder / "data").mkdir()
    (folder / "lib" / "allocbias").mkdir(parents=True)
    (folder / "lib" / "allocbias" / "__init__.py").write_text('"""This checkout\'s package."""\n')
    (folder / "data" / "table.csv").write_text("a\n1\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: build/notebooks/01_env\n")
    (folder / "profiles" / "p.yaml").write_text("01_env:\n  seed: 7\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for kind, tags, source in ENV_NOTEBOOK_CELLS:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.write(nb, folder / "notebooks" / "01_env.ipynb")
    return folder


def _book(args, cwd, **env):
    return subprocess.run([sys.executable, "-m", "allocbias.book", *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(**env), timeout=600)


def test_book_runs_the_checkout_it_is_run_in_with_its_code_and_data_and_skips_current_copies(tmp_path):
    from allocbias.book import glued_values

    other = _checkout(tmp_path / "other clone")
    executed = other / "build" / "notebooks" / "01_env.ipynb"
    # run from a subfolder of the other clone, with the package imported from this one (as an editable install)
    run = _book(["execute", "--profile", "p"], cwd=other / "notebooks")
    assert run.returncode == 0, run.stdout + run.stderr
    glued = glued_values(executed)
    assert glued["root"] == str(other.resolve()) and glued["data"] == str((other / "data").resolve())
    assert glued["package"] == str((other / "lib" / "allocbias" / "__init__.py").resolve())
    assert glued["cwd"] == str(other.resolve()) and glued["seed"] == 7
    # item 11: a current executed copy is not re-run; a leftover partial copy of a dead process is deleted (item 12)
    first = executed.read_bytes()
    leftover = executed.with_name(".01_env.partial-999999999.ipynb")
    leftover.write_text("{}")
    again = _book(["execute", "--profile", "p"], cwd=other)
    assert again.returncode == 0, again.stderr
    assert "current 01_env.ipynb" in again.stdout and "0 notebook(s) executed, 1 current" in again.stdout
    assert executed.read_bytes() == first
    assert not leftover.exists() and "removed .01_env.partial-999999999.ipynb" in again.stdout
    # a changed data file makes the copy stale
    (other / "data" / "table.csv").write_text("a\n2\n")
    third = _book(["execute", "--profile", "p"], cwd=other)
    assert third.returncode == 0 and "1 notebook(s) executed, 0 current" in third.stdout, third.stdout + third.stderr


def test_book_outside_a_checkout_says_so(tmp_path):
    run = _book(["execute", "--profile", "p"], cwd=tmp_path)
    assert run.returncode == 2
    assert f"{tmp_path.resolve()} is not inside an allocbias checkout" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "executing" not in run.stdout


@pytest.mark.parametrize(("text", "where"), [
    ("01_env:\n\tseed: 7\n", "line 2, column 1"),         # a tab
    ("01_env: {seed: [1, 2\n", "line 2, column 1"),       # an unclosed bracket
])
def test_malformed_profile_is_one_paragraph_naming_file_line_and_column(tmp_path, text, where):
    root = _checkout(tmp_path / "clone")
    (root / "profiles" / "bad.yaml").write_text(text)
    run = _book(["execute", "--profile", "bad"], cwd=tmp_path, ALLOCBIAS_ROOT=str(root))  # the root named
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert f"{root.resolve() / 'profiles' / 'bad.yaml'}, {where}: not valid YAML" in run.stderr, run.stderr
    assert "nothing executed" in run.stderr and not (root / "build").exists()


def test_sphinx_ignores_a_leftover_partial_copy():
    """Sphinx's own file discovery, with the exclude patterns jupyter-book derives from _config.yml."""
    from jupyter_book.config import get_final_config
    from sphinx.util.matching import get_matching_files

    root = Path(__file__).resolve().parents[1]
    config = get_final_config(user_yaml=root / "_config.yml", cli_config={"latex_individualpages": False},
                              sourcedir=root)[0]
    tree = {"build/notebooks/01_task_and_data.ipynb", "build/notebooks/.01_task_and_data.partial-4242.ipynb"}
    with tempfile.TemporaryDirectory() as tmp:
        for rel in tree:
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / rel).write_text("{}")
        found = set(get_matching_files(tmp, ["**"], config["exclude_patterns"]))
    assert found == {"build/notebooks/01_task_and_data.ipynb"}


# ----------------------------------------------------------------- item 11: the student edition holds no solution
SECRETS = ("SECRET-GATED-TEXT", "SECRET-GATED-OUTPUT", "SECRET-PLAIN-TEXT")


def _student_book(folder: Path) -> Path:
    """A one-chapter book whose executed notebook has a gated solution (text, code, output) and a plain one."""
    import nbformat

    ext = Path(__file__).resolve().parents[1] / "book" / "_ext"
    (folder / "build" / "notebooks").mkdir(parents=True)
    (folder / "_config.yml").write_text(
        "title: t\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: 'off'\n"
        "parse:\n  myst_enable_extensions: [colon_fence]\n"
        f"sphinx:\n  local_extensions:\n    student_edition: {ext}/\n  extra_extensions: [sphinx_exercise]\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: build/notebooks/01_ex\n")
    (folder / "intro.md").write_text("# Intro\n\nThe book.\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    code = nbformat.v4.new_code_cell("print('SECRET-GATED-' + 'OUTPUT')", execution_count=1)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="SECRET-GATED-OUTPUT\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Chapter\n\nVisible text.\n\n```{exercise}\n:label: ex1\n\nDo it.\n```"),
        nbformat.v4.new_markdown_cell("```{solution-start} ex1\n:class: dropdown\n```"),
        code,
        nbformat.v4.new_markdown_cell("SECRET-GATED-TEXT explains.\n\n```{solution-end}\n```"),
        nbformat.v4.new_markdown_cell("```{exercise}\n:label: ex2\n\nAnd this.\n```\n\n"
                                      "```{solution} ex2\n:class: dropdown\n\nSECRET-PLAIN-TEXT\n```\n\nAfter."),
    ]
    nbformat.write(nb, folder / "build" / "notebooks" / "01_ex.ipynb")
    return folder


def test_student_edition_holds_no_solution_anywhere_in_its_folder(tmp_path):
    book = _student_book(tmp_path / "book")
    jb = Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run([str(jb), "build", str(book), "--path-output", str(tmp_path / "out"), "-W", "-n",
                          "--keep-going"], capture_output=True, text=True, env=_env(), timeout=600)
    html = tmp_path / "out" / "_build" / "html"
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    page = (html / "build" / "notebooks" / "01_ex.html").read_text()
    assert "Visible text." in page and "Do it." in page and "After." in page  # the exercises stay
    assert (html / "_sources" / "build" / "notebooks" / "01_ex.ipynb").exists()  # the download link still works
    holding = sorted({f"{p.relative_to(html)}: {s}" for p in html.rglob("*") if p.is_file()
                      for s in SECRETS if s.encode() in p.read_bytes()})
    assert holding == [], holding


# --------------------------------------------------- issue 23 item 4: one command line, `allocbias book` / `store`
def test_allocbias_book_and_store_subcommands_run_the_same_mains(tmp_path, monkeypatch, capsys):
    from allocbias.cli import main

    store = ScoreStore(tmp_path / "scores", **KEY)
    store.append(_rows(0, 2))
    store.provenance_path.unlink()
    assert main(["store", "check", str(tmp_path / "scores")]) == 1
    out = capsys.readouterr()
    assert f"BAD       {store.path.name}: " in out.out and "1 good" not in out.out and "0 good, 1 bad" in out.out
    monkeypatch.delenv("ALLOCBIAS_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["book", "execute", "--profile", "p"]) == 2
    assert "is not inside an allocbias checkout" in capsys.readouterr().err


def test_allocbias_store_repair_keeps_the_rows_the_digests_vouch_for(tmp_path, capsys):
    from allocbias import cli

    store = ScoreStore(tmp_path, **KEY)
    store.append(_rows(0, 3))
    with store.scores_path.open("a") as f:
        f.write(_rows(3, 1).to_csv(index=False, header=False, lineterminator="\n"))  # a row added by hand
    assert cli.main(["store", "check", str(tmp_path)]) == 1
    assert cli.main(["store", "repair", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert f"repaired  {store.path}: kept 3 rows the digests vouch for, removed 1 ('job/r3')" in out, out
    assert cli.main(["store", "check", str(tmp_path)]) == 0
