"""``python -m allocbias.store`` is ``allocbias store``; ``import allocbias.store`` gives :mod:`allocbias.scoring.store`."""

import sys

if __name__ == "__main__":
    from allocbias.cli import main

    raise SystemExit(main(["store", *sys.argv[1:]]))

from .scoring import store as _module

sys.modules[__name__] = _module
