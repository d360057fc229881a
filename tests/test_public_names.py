"""Renamed public names keep working: users' notebooks import ``allocbias.metrics``, ``selection``, ``validity``,
``ll144``, ``genderbench``, ``rankings`` and ``data``, so each old name of those modules still resolves — to the
new object, with a :class:`DeprecationWarning` that names the new name. So does every other renamed name
(``tables``, ``names``, ``items``). Since the modules moved into subpackages, the warning names the module's
new place (``allocbias.measures.rankings``); the old paths are the same module objects (tested below)."""

from __future__ import annotations

import importlib
import re

import pytest

#: (module, old name, new name) of every rename in the public modules.
RENAMED = [
    ("measures.rankings", "selection_table", "top_k_selection_table"),
    ("measures.rankings", "impact_ratios", "low_impact_ratio_counts"),
    ("measures.ll144", "impact_ratios", "impact_ratios_at"),
    ("measures.ll144", "summary", "group_metric_summary"),
    ("measures.genderbench", "summary", "probe_summary"),
    ("audited.names", "SEXES", "GENDERS"),
    ("scoring.items", "pairwise_rounds", "pairwise_pools"),
    ("measures.tables", "selection_table", "pool_selection_table"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_old_name_gives_the_new_object_with_a_warning(module, old, new):
    mod = importlib.import_module(f"allocbias.{module}")
    dotted = module.replace(".", r"\.")
    with pytest.warns(DeprecationWarning, match=rf"allocbias\.{dotted}\.{old} is deprecated: use allocbias\.{dotted}\.{new}$"):
        got = getattr(mod, old)
    assert got is getattr(mod, new)
    assert old not in getattr(mod, "__all__", ())


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_from_import_of_the_old_name_works(module, old, new):
    namespace: dict = {}
    with pytest.warns(DeprecationWarning, match=new):
        exec(f"from allocbias.{module} import {old}", namespace)
    assert namespace[old] is getattr(importlib.import_module(f"allocbias.{module}"), new)


def test_an_unknown_name_is_still_an_attribute_error():
    from allocbias import rankings

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        rankings.no_such_name  # noqa: B018


# ---------------------------------------------- issue 23 item 4: the flat import paths after the move to subpackages
#: The import paths users' notebooks know, and where each module lives now.
MOVED = {
    "metrics": "measures.metrics",
    "selection": "measures.selection",
    "validity": "measures.validity",
    "ll144": "measures.ll144",
    "genderbench": "measures.genderbench",
    "rankings": "measures.rankings",
    "data": "audited.data",
    "store": "scoring.store",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_import_path_is_the_module_at_its_new_place(old, new):
    """``import allocbias.metrics`` gives the very module ``allocbias.measures.metrics``: every public name (and every
    private one a user's patch may touch) works from the old path."""
    moved = importlib.import_module(f"allocbias.{new}")
    assert importlib.import_module(f"allocbias.{old}") is moved
    namespace: dict = {}
    exported = list(getattr(moved, "__all__", []))
    assert exported, new
    exec(f"from allocbias.{old} import {', '.join(exported)}", namespace)
    assert all(namespace[name] is getattr(moved, name) for name in exported)
    exec(f"from allocbias import {old}", namespace)
    assert namespace[old] is moved


def test_the_engine_keeps_its_import_path():
    """``allocbias.scoring`` was the local engine's module; it is now the scoring subpackage, which re-exports the
    engine's public names."""
    from allocbias.scoring import engine

    import allocbias.scoring as scoring

    assert engine.__all__ and all(getattr(scoring, name) is getattr(engine, name) for name in engine.__all__)


@pytest.mark.parametrize("old", ["book", "store"])
def test_python_dash_m_of_the_old_commands_runs_the_subcommand(old, tmp_path):
    """``python -m allocbias.book`` and ``python -m allocbias.store`` are one-line aliases of ``allocbias book`` and
    ``allocbias store``: the same help, the same exit status for a bad command line."""
    import subprocess
    import sys

    alias = subprocess.run([sys.executable, "-m", f"allocbias.{old}", "--help"], capture_output=True, text=True)
    sub = subprocess.run([sys.executable, "-m", "allocbias", old, "--help"], capture_output=True, text=True)
    assert alias.returncode == sub.returncode == 0
    assert alias.stdout == sub.stdout and f"allocbias {old}" in alias.stdout
    bad = subprocess.run([sys.executable, "-m", f"allocbias.{old}", "no-such-command"], capture_output=True, text=True)
    assert bad.returncode == 2


# ------------------------------------------- issue 31 item 1: the study's shared machinery moved out of the study
#: The study's old module paths and the module each gives now (allocbias._renamed.moved).
STUDY_MOVED = {
    "catalog": "allocbias.scoring.catalog",
    "runs": "allocbias.scoring.runs",
    "tables": "allocbias.measures.tables",
    "synthetic": "allocbias.measures.synthetic",
    "book": "allocbias.book.runner",
    "reading": "allocbias.book.reading",
}


@pytest.mark.parametrize(("old", "new"), sorted(STUDY_MOVED.items()))
def test_the_study_s_old_module_paths_give_the_moved_module_with_a_warning(old, new):
    import sys

    moved = importlib.import_module(new)
    sys.modules.pop(f"allocbias.study.{old}", None)
    message = re.escape(f"allocbias.study.{old} is deprecated: use {new}")
    with pytest.warns(DeprecationWarning, match=f"^{message}$"):
        got = importlib.import_module(f"allocbias.study.{old}")
    assert got is moved and moved.__spec__.name == new  # its relative imports still resolve at its new place
    sys.modules.pop(f"allocbias.study.{old}", None)
    namespace: dict = {}
    with pytest.warns(DeprecationWarning, match=re.escape(new)):
        exec(f"from allocbias.study.{old} import {moved.__all__[0]}", namespace)
    assert namespace[moved.__all__[0]] is getattr(moved, moved.__all__[0])


def test_the_book_package_gives_the_runner_s_names():
    """``from allocbias.book import execute_notebook`` works as when ``allocbias.book`` was one module."""
    import allocbias.book as book
    from allocbias.book import runner

    assert {"execute_notebook", "glued_values", "repo_root", "execute_all", "check_html"} <= set(book.__all__)
    assert all(getattr(book, name) is getattr(runner, name) for name in book.__all__)
