"""The library's import layering: the study's modules import one way, down the flow of the audit.

``systems`` and ``items`` import no module of the study; ``tables`` reads no score table (no catalog or runner);
``plotting`` and ``book`` import no module of the study; the study's modules never import the papermill runner
(``book``). Every ``import`` statement counts, those inside functions included (doctest examples do not)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import allocbias

LIB = Path(allocbias.__file__).parent
STUDY = {"systems", "items", "catalog", "runs", "tables", "study"}


def imported(module: str) -> set[str]:
    """The allocbias modules that ``allocbias.<module>`` imports (relative or absolute)."""
    tree = ast.parse((LIB / f"{module}.py").read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import y
                out.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import x, y
                out.update(alias.name for alias in node.names)
            elif node.module and node.module.split(".")[0] == "allocbias":
                parts = node.module.split(".")
                out.update([parts[1]] if len(parts) > 1 else [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("allocbias."))
    return out


@pytest.mark.parametrize(("module", "forbidden"), [
    ("systems", STUDY),
    ("items", STUDY),
    ("catalog", {"runs", "tables", "study", "book"}),
    ("runs", {"tables", "study", "book"}),
    ("tables", {"catalog", "runs", "study", "book"}),
    ("user_models", STUDY - {"systems"}),
    ("plotting", STUDY),
    ("book", STUDY),
    ("study", {"book"}),
])
def test_imports_point_down_the_flow(module, forbidden):
    assert not imported(module) & forbidden, f"allocbias.{module} imports {sorted(imported(module) & forbidden)}"


def test_library_outside_the_facade_does_not_use_it():
    users = sorted(p.stem for p in LIB.glob("*.py") if p.stem != "study" and "study" in imported(p.stem))
    assert users == [], f"modules importing the compatibility facade allocbias.study: {users}"


def test_facade_reexports_the_same_objects():
    from allocbias import catalog, items, runs, study, systems, tables

    homes = (systems, items, catalog, runs, tables)
    for name in study.__all__:
        obj = getattr(study, name)
        owners = [m for m in homes if getattr(m, name, None) is obj]
        assert owners or name in {"MissingRowsError", "ScoreStore", "content_hash", "run_resumable",
                                  "set_live_scoring"}, name
