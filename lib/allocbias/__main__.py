"""``python -m allocbias``: the ``allocbias`` command (:mod:`allocbias.cli`)."""

from .cli import main

raise SystemExit(main())
