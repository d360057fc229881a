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
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed"]


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
