"""Input checks shared by the library's modules: one wording for one mistake, wherever it is made.

>>> import pandas as pd
>>> require_columns(pd.DataFrame({"score": [0.5]}), ["score", "group"], "scores")
Traceback (most recent call last):
...
ValueError: scores has no column(s) ['group']; its columns: ['score']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

__all__ = ["require_columns"]


def require_columns(frame: Any, columns: Iterable[str], what: str, *, nonempty: bool = False) -> None:
    """Raise ``ValueError`` unless ``frame`` is a DataFrame holding every one of ``columns`` (and, with
    ``nonempty``, at least one row); the message names ``what`` the frame is, the missing columns and those it has.

    >>> require_columns(pd.DataFrame({"a": []}), ["a"], "table", nonempty=True)
    Traceback (most recent call last):
    ...
    ValueError: table has no rows
    >>> require_columns([1, 2], ["a"], "table")
    Traceback (most recent call last):
    ...
    ValueError: table must be a pandas DataFrame, got list
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} has no column(s) {missing}; its columns: {list(frame.columns)}")
    if nonempty and frame.empty:
        raise ValueError(f"{what} has no rows")
