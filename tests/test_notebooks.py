"""House rules for every notebook of the book, and papermill parameter safety.

Each notebook listed in ``_toc.yml``: exactly one ``parameters`` cell of literals, committed without outputs,
kernel ``python3``, executes under the smoke profile, and fails (naming the parameter) when papermill injects a
parameter it does not declare.
"""

from __future__ import annotations

import json

import pytest

from allocbias.book import (
    NotebookExecutionError,
    UnknownParameterError,
    execute_notebook,
    load_profile,
    notebook_parameters,
    toc_notebooks,
    validate_parameters,
)

from .conftest import ROOT

NOTEBOOKS = toc_notebooks(root=ROOT)
IDS = [nb.stem for nb in NOTEBOOKS]


def test_toc_lists_every_notebook():
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(IDS) == on_disk, "every notebook in notebooks/ must be a chapter of _toc.yml"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_house_rules(notebook):
    nb = json.loads(notebook.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), (
        f"{notebook.name} is committed with outputs: strip them"
    )
    params = notebook_parameters(notebook)  # raises unless exactly one literal-only parameters cell
    assert params, f"{notebook.name} declares no parameters"
    position = next(i for i, c in enumerate(nb["cells"]) if "parameters" in c["metadata"].get("tags", []))
    follower = "".join(nb["cells"][position + 1]["source"])
    assert "check_parameters()" in follower, f"{notebook.name}: the cell after the parameters cell must call check_parameters()"
    headings = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for section in ("## Overview", "## Prerequisites", "## Summary", "## Exercises"):
        assert section in headings, f"{notebook.name} lacks the section {section!r}"


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_profiles_name_declared_parameters(profile):
    params = load_profile(profile, root=ROOT)
    assert set(params) <= set(IDS), "a profile names a notebook that is not in _toc.yml"
    for nb in NOTEBOOKS:
        validate_parameters(notebook_parameters(nb), params.get(nb.stem, {}), notebook=nb.name)


def test_runner_rejects_unknown_parameter_before_starting(tmp_path):
    nb = NOTEBOOKS[0]
    with pytest.raises(UnknownParameterError, match="no parameter 'not_a_parameter'"):
        execute_notebook(nb, tmp_path / "out.ipynb", {"not_a_parameter": 1})
    assert not (tmp_path / "out.ipynb").exists(), "no kernel may start for an invalid parameter"


@pytest.mark.notebooks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_plain_papermill_fails_on_unknown_parameter(notebook, tmp_path, caplog):
    """papermill itself only logs a warning about an undeclared parameter; check_parameters() makes the run fail."""
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    with pytest.raises(PapermillExecutionError, match="typo_parameter") as info:
        pm.execute_notebook(
            str(notebook), str(tmp_path / "out.ipynb"), parameters={"typo_parameter": 3},
            kernel_name="python3", cwd=str(ROOT), progress_bar=False,
        )
    assert "Passed unknown parameter: typo_parameter" in caplog.text  # papermill alone would stop here
    assert info.value.ename == "UnknownParameterError"
    assert "has no parameter 'typo_parameter'" in info.value.evalue


@pytest.mark.notebooks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_executes_under_smoke_profile(notebook, smoke_notebook):
    path, glued = smoke_notebook(notebook.stem)
    assert path.exists()
    assert glued, f"{notebook.name} glues no values: numbers in prose must come from glue"
    cells = json.loads(path.read_text())["cells"]
    figures = sum("image/png" in out.get("data", {}) for c in cells for out in c.get("outputs", []))
    assert figures >= 1, f"{notebook.name} shows no figure (is a non-inline matplotlib backend forced?)"
    errors = [out for c in cells for out in c.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors, f"{notebook.name} has error outputs"


def test_failing_notebook_names_the_cell(tmp_path):
    """A notebook that raises is reported with its name and the failing cell."""
    import nbformat

    from allocbias.book import PARAMETERS_MARKER

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(f"{PARAMETERS_MARKER}\nx = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("from allocbias.book import check_parameters\ncheck_parameters()"),
                nbformat.v4.new_code_cell("raise ValueError('boom in cell three')")]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(NotebookExecutionError, match=r"broken\.ipynb failed in cell #3 .*boom in cell three"):
        execute_notebook(path, tmp_path / "out.ipynb", {"x": 2}, cwd=tmp_path)
