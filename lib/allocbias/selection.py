"""``allocbias.selection``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.selection`.

``import allocbias.selection`` and ``from allocbias.selection import name`` give the very module ``allocbias.measures.selection``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import selection as _module

sys.modules[__name__] = _module
