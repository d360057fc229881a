"""``allocbias.metrics``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.metrics`.

``import allocbias.metrics`` and ``from allocbias.metrics import name`` give the very module ``allocbias.measures.metrics``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import metrics as _module

sys.modules[__name__] = _module
