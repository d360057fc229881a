"""``allocbias.validity``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.validity`.

``import allocbias.validity`` and ``from allocbias.validity import name`` give the very module ``allocbias.measures.validity``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import validity as _module

sys.modules[__name__] = _module
