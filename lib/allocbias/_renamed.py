"""Old public names kept working after a rename: a module-level ``__getattr__`` (PEP 562) that returns the
new object with a :class:`DeprecationWarning` naming the new name.

A module that renamed ``old`` to ``new`` ends with ``__getattr__ = renamed(__name__, {"old": "new"})``; then
``allocbias.module.old`` and ``from allocbias.module import old`` still give ``new``, with a warning that says
what to write instead.

>>> import sys, types, warnings
>>> m = sys.modules["demo"] = types.ModuleType("demo")
>>> m.new = 42
>>> m.__getattr__ = renamed("demo", {"old": "new"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     value = m.old
>>> value, str(caught[0].message)
(42, 'demo.old is deprecated: use demo.new')
>>> del sys.modules["demo"]

A module that moved to another package keeps its old import path with :func:`moved`: the old package calls
``moved(__name__, {"old": "allocbias.new.place"})`` once, and ``import package.old`` (or ``from package import old``)
gives the module at its new place, with a warning naming it; no file is left at the old path.

>>> pkg = sys.modules["demo_pkg"] = types.ModuleType("demo_pkg")
>>> pkg.__path__ = []
>>> moved("demo_pkg", {"old_json": "json"})
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     import demo_pkg.old_json
>>> import json
>>> demo_pkg.old_json is json, json.__spec__.name, str(caught[0].message)
(True, 'json', 'demo_pkg.old_json is deprecated: use json')
>>> for name in ("demo_pkg", "demo_pkg.old_json"):
...     del sys.modules[name]
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["moved", "renamed"]


def renamed(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module`` that resolves each old name of ``names`` (old -> new) to the module's
    ``new`` object, warning with :class:`DeprecationWarning`; any other name raises :class:`AttributeError`."""
    table = dict(names)

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = table[name]
        warnings.warn(f"{module}.{name} is deprecated: use {module}.{new}", DeprecationWarning, stacklevel=2)
        return getattr(sys.modules[module], new)

    return __getattr__


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old dotted names of moved modules; loading one warns and gives the module at its new place."""

    def __init__(self) -> None:
        self.table: dict[str, str] = {}
        self.specs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.table:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        new = self.table[spec.name]
        warnings.warn(f"{spec.name} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self.specs[new] = module.__spec__
        return module

    def exec_module(self, module: Any) -> None:
        """The module at its new place is already executed; the import machinery set its ``__spec__`` to the old
        name's, so give it back its own (its relative imports resolve against it)."""
        module.__spec__ = self.specs[module.__name__]


_MOVED = _Moved()


def moved(package: str, modules: Mapping[str, str]) -> None:
    """Keep the old import paths ``package.<old>`` of the modules that moved (old -> new dotted name) working:
    importing one gives the module at its new place with a :class:`DeprecationWarning` naming it."""
    _MOVED.table.update({f"{package}.{old}": new for old, new in modules.items()})
    if _MOVED not in sys.meta_path:
        sys.meta_path.append(_MOVED)
