"""``allocbias.data``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.audited.data`.

``import allocbias.data`` and ``from allocbias.data import name`` give the very module ``allocbias.audited.data``
(the same object: names, private helpers and patches included).
"""

import sys

from .audited import data as _module

sys.modules[__name__] = _module
