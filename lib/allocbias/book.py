"""``python -m allocbias.book`` is ``allocbias book``; ``import allocbias.book`` gives :mod:`allocbias.study.book`."""

import sys

if __name__ == "__main__":
    from allocbias.cli import main

    raise SystemExit(main(["book", *sys.argv[1:]]))

from .study import book as _module

sys.modules[__name__] = _module
