"""The book: executing the study's notebooks and reading the built pages.

* :mod:`allocbias.book.runner` — the papermill runner (parameter profiles, parameter safety, executed copies);
* :mod:`allocbias.book.reading` — how a built page reads (visible code, findings first, nothing cut off).

The book is machinery, not the study: it imports only what is audited (the checkout's root) and knows nothing of the
study plan or the chapters' findings, so the commands (``allocbias book``, ``allocbias audit``'s report) use it
without importing the study. ``python -m allocbias.book ARGS`` is ``allocbias book ARGS``. The runner's names are
importable from here (``from allocbias.book import execute_notebook``), as before the book became a package.
"""

from .runner import *  # noqa: F401,F403
from .runner import __all__ as _RUNNER
from .runner import check_html, execute_all  # noqa: F401

__all__ = [*_RUNNER, "check_html", "execute_all"]
