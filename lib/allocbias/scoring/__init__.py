"""How it is scored: the model registry and loading (:mod:`.models`), the systems under audit (:mod:`.systems`),
the local engine (:mod:`.engine`), OpenAI-compatible servers (:mod:`.serving`), users' own models
(:mod:`.user_models`), the tasks (:mod:`.tasks`) and their prompt items (:mod:`.items`), and the content-addressed
score store (:mod:`.store`).

``allocbias.scoring`` itself re-exports the local engine's public names (``LocalEngine``, ``parse_pair_answer``,
...), the import path of the library before it had subpackages.
"""

from .engine import *  # noqa: F403  (the engine's public names, listed in its __all__)
from .engine import __all__  # noqa: F401
