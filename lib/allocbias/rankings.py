"""``allocbias.rankings``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.rankings`.

``import allocbias.rankings`` and ``from allocbias.rankings import name`` give the very module ``allocbias.measures.rankings``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import rankings as _module

sys.modules[__name__] = _module
