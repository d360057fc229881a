"""``python -m allocbias.book ARGS`` is ``allocbias book ARGS`` (``execute ...``, ``check-html DIR``)."""

import sys

from allocbias.cli import main

raise SystemExit(main(["book", *sys.argv[1:]]))
