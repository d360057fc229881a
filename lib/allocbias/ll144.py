"""``allocbias.ll144``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.ll144`.

``import allocbias.ll144`` and ``from allocbias.ll144 import name`` give the very module ``allocbias.measures.ll144``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import ll144 as _module

sys.modules[__name__] = _module
