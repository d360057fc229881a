"""What every chapter's findings share: the values its prose quotes, glued one way.

A chapter's findings function returns a dataclass that inherits :class:`Findings`. Every one of them keeps the
same fields under the same names: ``values`` (glue key -> the plain int, float, string or list the prose quotes),
``phrases`` where the chapter glues words computed from its results (glue key -> a phrase), and ``parameters``
where it keeps the parameters that produced it. The chapter glues :meth:`Findings.glue_values` with one loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: The phrases of a chapter that glues none (read-only, shared by every such findings object).
NO_PHRASES: Mapping[str, str] = MappingProxyType({})


class Findings:
    """The base of the chapter findings dataclasses: :meth:`glue_values` from their ``values`` and ``phrases``.

    It declares no dataclass fields, so each chapter's dataclass keeps its own field order and its own ``frozen``;
    a subclass declares ``values`` and, if its prose quotes computed phrases, ``phrases`` (both with a default,
    ``field(default_factory=dict)``). Without a ``phrases`` field a chapter glues none (:data:`NO_PHRASES`).

    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Toy(Findings):
    ...     values: dict = field(default_factory=dict)
    ...     phrases: dict = field(default_factory=dict)
    >>> Toy(values={"n": 3}, phrases={"verdict": "no change"}).glue_values()
    {'n': 3, 'verdict': 'no change'}
    >>> Toy(values={"n": 3}, phrases={"n": "three"}).glue_values()
    Traceback (most recent call last):
    ...
    ValueError: Toy: glue keys both in values and in phrases: ['n']
    """

    values: dict[str, Any]
    phrases: Mapping[str, str] = NO_PHRASES

    def glue_values(self) -> dict[str, Any]:
        """The chapter's glue keys and their values: a new dict of ``values`` and ``phrases`` (no key may stand in
        both; a ``ValueError`` names those that do)."""
        clash = self.values.keys() & self.phrases.keys()
        if clash:
            raise ValueError(f"{type(self).__name__}: glue keys both in values and in phrases: {sorted(clash)}")
        return {**self.values, **self.phrases}
