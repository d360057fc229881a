"""Renamed public names keep working: users' notebooks import ``allocbias.metrics``, ``selection``, ``validity``,
``ll144``, ``genderbench``, ``rankings`` and ``data``, so each old name of those modules still resolves — to the
new object, with a :class:`DeprecationWarning` that names the new name. So does every other renamed name
(``tables``, ``names``, ``items``)."""

from __future__ import annotations

import importlib

import pytest

#: (module, old name, new name) of every rename in the public modules.
RENAMED = [
    ("rankings", "selection_table", "top_k_selection_table"),
    ("rankings", "impact_ratios", "low_impact_ratio_counts"),
    ("ll144", "impact_ratios", "impact_ratios_at"),
    ("ll144", "summary", "group_metric_summary"),
    ("genderbench", "summary", "probe_summary"),
    ("names", "SEXES", "GENDERS"),
    ("items", "pairwise_rounds", "pairwise_pools"),
    ("tables", "selection_table", "pool_selection_table"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_old_name_gives_the_new_object_with_a_warning(module, old, new):
    mod = importlib.import_module(f"allocbias.{module}")
    with pytest.warns(DeprecationWarning, match=rf"allocbias\.{module}\.{old} is deprecated: use allocbias\.{module}\.{new}$"):
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
