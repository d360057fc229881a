"""``allocbias.genderbench``: the import path users' notebooks know, kept as an alias of :mod:`allocbias.measures.genderbench`.

``import allocbias.genderbench`` and ``from allocbias.genderbench import name`` give the very module ``allocbias.measures.genderbench``
(the same object: names, private helpers and patches included).
"""

import sys

from .measures import genderbench as _module

sys.modules[__name__] = _module
