"""The systems under audit: a model of the study at a numeric precision, asked with one prompt wording.

A *system under audit* (:class:`System`) is a model × numeric precision × prompt wording: the same weights
at 8-bit answer differently from fp32, and a reworded question is a different screening tool. Its id is
``<model short name>-<precision>-<wording>`` (``smollm2-int8-paper``); a model behind an OpenAI-compatible
server is labelled ``<served name>-served-<wording>`` (:func:`served_system_id`). Systems for models outside
the study (a local folder, a ``.gguf`` file, a served model) are made by :mod:`allocbias.scoring.user_models`.

This module imports no other module of the study: items, catalog, runs and tables build on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MODELS",
    "PRECISIONS",
    "STUDY_SYSTEMS",
    "SYSTEM_COLUMNS",
    "WORDINGS",
    "System",
    "as_systems",
    "parse_served_system",
    "parse_system",
    "served_system_id",
    "systems",
]

#: Models of the study (registry names of :mod:`allocbias.scoring.models`) and their short names in system ids.
MODELS: dict[str, str] = {"smollm2-135m-instruct": "smollm2", "gemma3-270m": "gemma3"}

#: Numeric precisions: name in system ids -> ``quantization`` argument of :func:`allocbias.scoring.models.load_model`.
PRECISIONS: dict[str, str | None] = {"fp32": None, "int8": "8bit", "nf4": "4bit"}

#: Pointwise prompt wordings (see :data:`allocbias.audited.prompts.TEMPLATES`).
WORDINGS: tuple[str, ...] = ("paper", "direct")

#: The systems of the study whose pointwise tables are committed (complete: 1,920 rows each) in data/scores.
STUDY_SYSTEMS: tuple[str, ...] = (
    "smollm2-fp32-paper",
    "smollm2-fp32-direct",
    "smollm2-int8-paper",
    "smollm2-nf4-paper",
    "gemma3-fp32-paper",
    "gemma3-fp32-direct",
)

#: Columns that identify a system in the tidy tables of :func:`allocbias.scoring.runs.pointwise_table` and
#: :func:`allocbias.scoring.runs.pairwise_table`.
SYSTEM_COLUMNS: tuple[str, ...] = ("system", "model", "precision", "wording")


@dataclass(frozen=True)
class System:
    """One system under audit: a model, a numeric precision and a prompt wording.

    >>> s = System("smollm2-135m-instruct", "int8", "direct")
    >>> s.id
    'smollm2-int8-direct'
    >>> parse_system(s.id) == s
    True
    """

    model: str
    precision: str = "fp32"
    wording: str = "paper"

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}; the study's models: {sorted(MODELS)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; known: {list(PRECISIONS)}")
        if self.wording not in WORDINGS:
            raise ValueError(f"unknown wording {self.wording!r}; known: {list(WORDINGS)}")

    @property
    def id(self) -> str:
        """``<model short name>-<precision>-<wording>``."""
        return f"{MODELS[self.model]}-{self.precision}-{self.wording}"

    @property
    def model_key(self) -> str:
        """The store's model key: registry name and precision (the wording is part of the prompt hash)."""
        return f"{self.model}@{self.precision}"

    def load(self, device: str = "cpu") -> Any:
        """Load the model at this precision (fp32 compute) with :func:`allocbias.scoring.models.load_model`, on
        ``device`` (``"cpu"`` or e.g. ``"cuda"``)."""
        from .models import load_model

        return load_model(self.model, dtype="float32", quantization=PRECISIONS[self.precision], device=device)

def systems(
    models: Iterable[str] = tuple(MODELS), precisions: Iterable[str] = ("fp32",), wordings: Iterable[str] = WORDINGS
) -> list[System]:
    """Every combination of the given models, precisions and wordings, in that nesting order.

    >>> [s.id for s in systems(["smollm2-135m-instruct"], ["fp32", "int8"], ["paper"])]
    ['smollm2-fp32-paper', 'smollm2-int8-paper']
    """
    return [System(m, p, w) for m, p, w in itertools.product(models, precisions, wordings)]

def parse_system(system_id: str) -> System:
    """The :class:`System` of an id such as ``"gemma3-nf4-paper"``; ``ValueError`` lists the valid parts."""
    parts = str(system_id).split("-")
    short = {v: k for k, v in MODELS.items()}
    if len(parts) != 3 or parts[0] not in short:
        raise ValueError(
            f"system id {system_id!r} is not <model>-<precision>-<wording> with model in {sorted(short)}, "
            f"precision in {list(PRECISIONS)}, wording in {list(WORDINGS)}"
        )
    return System(short[parts[0]], parts[1], parts[2])


def as_systems(systems: System | str | Iterable[System | str]) -> list[System]:
    """Systems (objects or ids) as a list of :class:`System`; empty or repeated ids raise ``ValueError``."""
    if isinstance(systems, (str, System)):
        systems = [systems]
    out = [s if isinstance(s, System) else parse_system(s) for s in systems]
    if not out:
        raise ValueError("systems is empty: name at least one system id, e.g. 'smollm2-fp32-paper'")
    ids = [s.id for s in out]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"systems lists {repeated} more than once")
    return out

def served_system_id(model: str, wording: str) -> str:
    """Label of a model behind an OpenAI-compatible server asked with one pointwise wording.

    >>> served_system_id("smollm2-1.7b", "paper")
    'smollm2-1.7b-served-paper'
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string (the served model name), got {model!r}")
    if wording not in WORDINGS:
        raise ValueError(f"unknown wording {wording!r}; known: {list(WORDINGS)}")
    return f"{model}-served-{wording}"

def parse_served_system(system_id: str) -> tuple[str, str] | None:
    """``(model, wording)`` of a served system id ``<model>-served-<wording>``, else ``None``.

    >>> parse_served_system("smollm2-1.7b-served-direct"), parse_served_system("smollm2-fp32-paper")
    (('smollm2-1.7b', 'direct'), None)
    """
    model, sep, wording = str(system_id).rpartition("-served-")
    return (model, wording) if sep and model and wording in WORDINGS else None
