"""The doctests of every module of the library: each docstring's example is a test (the formulas' tiny examples
must stay true). One test per module, so a failure names it."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import allocbias

MODULES = sorted(m.name for m in pkgutil.iter_modules(allocbias.__path__, "allocbias.") if m.name != "allocbias.__main__")


def test_every_module_is_listed():
    assert {"allocbias.metrics", "allocbias.ll144", "allocbias.rankings", "allocbias.store"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed"
