"""allocbias.study.findings.Findings: the one glue_values() of every chapter's findings (values and phrases merged,
a key in both an error naming it)."""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Any

import pytest

import allocbias.study as study
from allocbias.study.findings import NO_PHRASES, Findings


@dataclass
class WithPhrases(Findings):
    table: object
    values: dict[str, Any] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ValuesOnly(Findings):
    table: object
    values: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def test_glue_values_is_a_new_dict_of_the_values():
    f = ValuesOnly(table=None, values={"n": 3, "shares": [0.5, 0.25]}, parameters={"k": 2})
    glued = f.glue_values()
    assert glued == {"n": 3, "shares": [0.5, 0.25]}
    assert glued is not f.values
    glued["n"] = 4
    glued["extra"] = 1
    assert f.values == {"n": 3, "shares": [0.5, 0.25]}
    assert "k" not in glued  # the parameters are not glued


def test_phrases_are_merged_with_the_values():
    f = WithPhrases(table=None, values={"n": 3, "r": 0.5}, phrases={"verdict": "no change", "direction": "up"})
    assert f.glue_values() == {"n": 3, "r": 0.5, "verdict": "no change", "direction": "up"}
    assert WithPhrases(table=None).glue_values() == {}


def test_a_key_in_values_and_phrases_raises_naming_it():
    f = WithPhrases(table=None, values={"n": 3, "verdict": 1.0, "also": 2}, phrases={"verdict": "x", "also": "y",
                                                                                   "fine": "z"})
    with pytest.raises(ValueError, match=r"WithPhrases: glue keys both in values and in phrases: \['also', 'verdict'\]"):
        f.glue_values()


def test_without_a_phrases_field_no_phrases_are_glued():
    f = ValuesOnly(table=None, values={"n": 1})
    assert "phrases" not in {x.name for x in dataclasses.fields(f)}
    assert f.phrases is NO_PHRASES and dict(f.phrases) == {}
    with pytest.raises(TypeError):
        NO_PHRASES["x"] = "y"  # type: ignore[index]


def _chapter_classes() -> list[type]:
    return [getattr(importlib.import_module(f"allocbias.study.{module}"), result)
            for module, (_, result) in study.FINDINGS.items()]


def _fill(cls: type, **given: Any) -> Any:
    """An instance of a findings dataclass with None in every field that has no default."""
    required = {f.name: None for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return cls(**{**required, **given})


@pytest.mark.parametrize("cls", _chapter_classes(), ids=lambda c: c.__name__)
def test_every_chapter_glues_its_values_and_phrases_through_the_base(cls):
    names = {f.name for f in dataclasses.fields(cls)}
    values = {"n": 3, "prov_command": "cmd"}
    phrases = {"verdict": "no change"} if "phrases" in names else {}
    f = _fill(cls, values=values, **({"phrases": phrases} if phrases else {}))
    glued = f.glue_values()
    assert {k: glued[k] for k in [*values, *phrases]} == {**values, **phrases}
    assert set(glued) - set(values) - set(phrases) <= {"prov_command_md"}  # the scoring chapter's Markdown command
    if phrases:
        clash = _fill(cls, values={**values, "verdict": 1.0}, phrases=phrases)
        with pytest.raises(ValueError, match=rf"{cls.__name__}: glue keys both in values and in phrases: \['verdict'\]"):
            clash.glue_values()


def test_only_the_scoring_chapter_adds_to_the_base_glue_values():
    """One glue_values for all chapters; the scoring chapter extends it (a Markdown object, not a plain value)."""
    own = sorted(c.__name__ for c in _chapter_classes() if "glue_values" in vars(c))
    assert own == ["ScoringFindings"]
