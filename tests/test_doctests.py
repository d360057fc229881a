"""The doctests of every module of the library: each docstring's example is a test (the formulas' tiny examples
must stay true). One test per module, so a failure names it."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import allocbias

#: Every module of the library, subpackages included; the one-file aliases of the old flat paths
#: (``allocbias.metrics`` is ``allocbias.measures.metrics``) are tested at their new place.
MODULES = sorted(m.name for m in pkgutil.walk_packages(allocbias.__path__, "allocbias.")
                 if not m.name.endswith("__main__") and importlib.import_module(m.name).__name__ == m.name)


def test_every_module_is_listed():
    assert {"allocbias.measures.metrics", "allocbias.measures.ll144", "allocbias.measures.rankings",
            "allocbias.scoring.store", "allocbias.scoring.tasks", "allocbias.scoring.catalog"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed"
