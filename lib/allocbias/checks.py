"""The one place that validates the library's inputs: one wording for one mistake, wherever it is made.

Every library function that takes a top-``k`` quota, a number of rounds, resamples or items, a seed, or a
DataFrame of given columns checks it here, so a bad value gets the same one-line ``ValueError`` naming the
parameter (or the frame and its missing columns) wherever it is passed:

- :func:`count`: an integer ``>= minimum`` (``rounds``, ``n_boot``, ``n_perm``, ``names_per_group``...);
  booleans, floats and strings are refused, numpy integers accepted;
- :func:`seed`: a non-negative integer (what ``numpy.random.default_rng`` and ``SeedSequence`` accept);
- :func:`quotas` / :func:`quota`: one quota or a non-empty sequence of them, each in ``1..pool`` (or
  ``1..pool - 1`` where ``k = pool`` would select everybody);
- :func:`is_int`: whether a value is an integer (Python or numpy), not a boolean;
- :func:`pairwise_design`: a chapter's pairwise parameters (systems that answer pairs need pools; the groups
  of those pools are all of them or at least two named ones);
- :func:`require_columns`: a DataFrame holding the columns named (and, if asked, at least one row).

>>> import pandas as pd
>>> require_columns(pd.DataFrame({"score": [0.5]}), ["score", "group"], "scores")
Traceback (most recent call last):
...
ValueError: scores has no column(s) ['group']; its columns: ['score']

Pure functions; no other module of the library is imported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["count", "is_int", "pairwise_design", "proportion", "quota", "quotas", "require_columns", "seed"]


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or numpy), not a boolean.

    >>> is_int(3), is_int(np.int64(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an ``int`` after checking that it is an integer ``>= minimum``.

    >>> count(3, "rounds"), count(np.int64(0), "pairwise_rounds", 0)
    (3, 0)
    >>> count(0, "rounds")
    Traceback (most recent call last):
    ...
    ValueError: rounds must be an integer >= 1, got 0
    >>> count(1, "n_perm", 2)
    Traceback (most recent call last):
    ...
    ValueError: n_perm must be an integer >= 2, got 1
    """
    if not is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def proportion(value: Any, name: str) -> float:
    """``value`` as a ``float`` after checking that it is a number strictly between 0 and 1 (a rate, a share, a
    probability).

    >>> proportion(0.25, "comparator_rate")
    0.25
    >>> proportion(1, "ll144_ratio")
    Traceback (most recent call last):
    ...
    ValueError: ll144_ratio must be a number in (0, 1), got 1
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real) or not 0 < value < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def seed(value: Any, name: str = "seed") -> int:
    """``value`` as an ``int`` after checking that it is a non-negative integer (a seed of numpy's generators).

    >>> seed(0)
    0
    >>> seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a non-negative integer, got -1
    """
    if not is_int(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def quotas(
    k: Any, *, name: str = "k", pool: int | None = None, below_pool: bool = False, distinct: bool = False
) -> list[int]:
    """The quota(s) ``k`` (an integer or a non-empty sequence of integers) as a list of ints, in the order given
    (``distinct=True``: sorted, duplicates dropped).

    Each must be ``>= 1``; with ``pool`` given, at most ``pool`` (``below_pool=True``: below it, where
    ``k = pool`` would select everybody).

    >>> quotas(2), quotas([3, 1, 3], distinct=True), quotas(np.array([1, 2]), pool=8)
    ([2], [1, 3], [1, 2])
    >>> quotas(4, pool=3)
    Traceback (most recent call last):
    ...
    ValueError: k must be integers in 1..3: k=4 is outside 1..3 (pool size 3)
    >>> quotas([1, 8], pool=8, below_pool=True)
    Traceback (most recent call last):
    ...
    ValueError: k must be below the pool size 8: k=8 is outside 1..7 (k = pool selects everybody)
    """
    values = [k] if is_int(k) else list(np.atleast_1d(np.asarray(k, dtype=object)))
    if not values:
        raise ValueError(f"{name} is an empty sequence; pass at least one quota")
    top = None if pool is None else int(pool) - 1 if below_pool else int(pool)
    out = []
    for v in values:
        if not is_int(v) or (top is None and v < 1):
            raise ValueError(f"{name} must be a positive int or a sequence of positive ints, got {v!r}")
        if top is not None and not 1 <= v <= top:
            if below_pool:
                raise ValueError(f"{name} must be below the pool size {pool}: {name}={int(v)} is outside 1..{top} "
                                 f"({name} = pool selects everybody)")
            raise ValueError(f"{name} must be integers in 1..{top}: {name}={int(v)} is outside 1..{top} (pool size {pool})")
        out.append(int(v))
    return sorted(set(out)) if distinct else out


def quota(k: Any, *, name: str = "k", pool: int | None = None, below_pool: bool = False) -> int:
    """One quota ``k`` (an integer, not a sequence), checked as by :func:`quotas`.

    >>> quota(2, pool=8)
    2
    >>> quota([1, 2])
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer, got [1, 2]
    """
    if not is_int(k):
        raise ValueError(f"{name} must be an integer, got {k!r}")
    return quotas(k, name=name, pool=pool, below_pool=below_pool)[0]


def pairwise_design(systems: Sequence[Any], rounds: Any, groups: Sequence[str], known: Sequence[str]) -> None:
    """Check a chapter's pairwise parameters: ``pairwise_systems``, ``pairwise_rounds``, ``pairwise_groups``.

    Systems that answer pairwise comparisons need at least one pool per job (``rounds >= 1``); ``groups``, the
    groups the pools draw from, is empty (every group of ``known``) or names at least two of ``known``.

    >>> pairwise_design(["s"], 30, [], ["A", "B", "C"])
    >>> pairwise_design(["s"], 30, ["A"], ["A", "B", "C"])
    Traceback (most recent call last):
    ...
    ValueError: pairwise_groups must name at least two of ['A', 'B', 'C'], got ['A']
    """
    if list(systems) and (not is_int(rounds) or rounds < 1):
        raise ValueError(f"pairwise_systems needs pairwise_rounds >= 1 (pools per job), got {rounds!r}")
    if set(groups) - set(known) or len(groups) == 1:
        raise ValueError(f"pairwise_groups must name at least two of {list(known)}, got {list(groups)}")


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
