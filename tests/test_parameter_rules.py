"""Parameters cannot silently un-seed or crash later (issue 14): None, empty lists, out-of-range values, a
profile's typo in a later chapter and ``_defaults`` are all settled before any kernel starts. Each test failed on
the main branch before this change (the value was accepted, or the run started)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from allocbias.book import runner as book
from allocbias.book import (
    PARAMETER_RULES,
    PARAMETERS_MARKER,
    NotebookExecutionError,
    execute_notebook,
    notebook_parameters,
    toc_notebooks,
    validate_parameters,
    validate_profile,
)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = toc_notebooks(root=ROOT)  # this checkout's, wherever pytest is started from
DECLARED = {nb.stem: notebook_parameters(nb) for nb in NOTEBOOKS}


def _check(stem, **given):
    validate_parameters(DECLARED[stem], given, notebook=f"{stem}.ipynb")


def test_null_seed_is_refused():
    with pytest.raises(ValueError, match=r"13_why_averages_fail.ipynb: parameter 'seed' is None .*default is 0"):
        _check("13_why_averages_fail", seed=None)


def test_none_is_accepted_where_the_default_is_none():
    validate_parameters({"limit": None}, {"limit": None}, notebook="x.ipynb")


def test_empty_jobs_list_is_refused():
    with pytest.raises(ValueError, match=r"03_decisions.ipynb: parameter 'jobs' is an empty list"):
        _check("03_decisions", jobs=[])


def test_empty_list_allowed_where_the_default_is_empty():
    _check("02_scoring", pairwise_groups=[])


def test_sweep_points_below_two_is_refused():
    with pytest.raises(ValueError, match=r"parameter 'sweep_points' must be an integer >= 2, got 1"):
        _check("14_local_law_144", sweep_points=1)


def test_empty_example_params_are_refused():
    with pytest.raises(ValueError, match=r"parameter 'example1_params' is an empty list"):
        _check("14_local_law_144", example1_params=[])


@pytest.mark.parametrize("name", ["prior_a", "prior_b"])
@pytest.mark.parametrize("value", [0, -1.0])
def test_non_positive_prior_is_refused(name, value):
    with pytest.raises(ValueError, match=rf"parameter '{name}' must be a number in \(0, inf\)"):
        _check("14_local_law_144", **{name: value})


def test_every_default_satisfies_its_rule_and_every_rule_names_a_declared_parameter():
    for stem, declared in DECLARED.items():
        validate_parameters(declared, declared, notebook=stem)
    names = set().union(*DECLARED.values())
    assert set(PARAMETER_RULES) <= names, set(PARAMETER_RULES) - names


def test_profile_typo_in_a_later_chapter_stops_before_any_kernel(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setenv("ALLOCBIAS_ROOT", str(ROOT))
    monkeypatch.setattr(book, "load_profile", lambda name, root=None: {"15_ll144_audits": {"sim_nn": 10}})
    monkeypatch.setattr(book, "execute_notebook", lambda nb, *a, **k: calls.append(nb.stem))
    with pytest.raises(ValueError, match=r"profiles/typo.yaml is invalid:\n  15_ll144_audits.ipynb has no parameter 'sim_nn'"):
        book.execute_all("typo", None, tmp_path)
    assert calls == []


def test_defaults_are_applied_to_every_chapter_that_declares_them():
    plan = validate_profile({"_defaults": {"seed": 3}, "03_decisions": {"seed": 5}}, NOTEBOOKS)
    for stem, declared in DECLARED.items():
        if "seed" in declared:
            assert plan[stem]["seed"] == (5 if stem == "03_decisions" else 3), stem


def test_defaults_naming_no_parameter_are_refused():
    with pytest.raises(ValueError, match=r"_defaults: no notebook declares 'sed'"):
        validate_profile({"_defaults": {"sed": 3}}, NOTEBOOKS)


def test_defaults_are_checked_like_any_parameter():
    with pytest.raises(ValueError, match=r"parameter 'seed' is None"):
        validate_profile({"_defaults": {"seed": None}}, NOTEBOOKS)


def _broken_notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(f"{PARAMETERS_MARKER}\nx = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("if x == 2:\n    raise ValueError('boom')")]
    nbformat.write(nb, path)


def test_a_failing_run_keeps_the_last_good_executed_copy(tmp_path):
    source, out = tmp_path / "ch.ipynb", tmp_path / "out" / "ch.ipynb"
    _broken_notebook(source)
    execute_notebook(source, out, {"x": 1}, cwd=tmp_path)
    good = out.read_bytes()
    with pytest.raises(NotebookExecutionError, match=r"(?s)ch.ipynb failed .*boom.*ch.failed.ipynb.*untouched"):
        execute_notebook(source, out, {"x": 2}, cwd=tmp_path)
    assert out.read_bytes() == good
    assert (tmp_path / "out" / "ch.failed.ipynb").exists()
    assert not list((tmp_path / "out").glob(".*partial*"))


def test_a_run_killed_mid_chapter_keeps_the_last_good_executed_copy(tmp_path):
    """SIGKILL of the runner while a chapter executes: on main papermill had already overwritten the output."""
    import os
    import signal
    import subprocess
    import sys
    import time

    source, out = tmp_path / "slow.ipynb", tmp_path / "out" / "slow.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(f"{PARAMETERS_MARKER}\nwait = 0.0")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('started', flush=True)"),
                nbformat.v4.new_code_cell("import time\ntime.sleep(wait)")]
    nbformat.write(nb, source)
    execute_notebook(source, out, {}, cwd=tmp_path)
    good = out.read_bytes()
    code = (f"from allocbias.book import execute_notebook\n"
            f"execute_notebook({str(source)!r}, {str(out)!r}, {{'wait': 60.0}}, cwd={str(tmp_path)!r})\n")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not any(b"started" in p.read_bytes()
                                                 for p in out.parent.glob(".slow.partial-*.ipynb")):
            time.sleep(0.2)
        assert list(out.parent.glob(".slow.partial-*.ipynb")), "the run never wrote its temporary copy"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its kernel, as a killed `make book` would be
        proc.wait()
    assert out.read_bytes() == good
