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
STUDY = {"systems", "items", "catalog", "runs", "tables"}


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
    ("catalog", {"runs", "tables", "book"}),
    ("runs", {"tables", "book"}),
    ("tables", {"catalog", "runs", "book"}),
    ("user_models", STUDY - {"systems"}),
    ("plotting", STUDY),
    ("book", STUDY),
])
def test_imports_point_down_the_flow(module, forbidden):
    assert not imported(module) & forbidden, f"allocbias.{module} imports {sorted(imported(module) & forbidden)}"


def test_the_old_study_module_is_gone_and_nothing_uses_it():
    """``study.py`` did five jobs; its names live in the five modules above, and no chapter reaches into it."""
    assert not (LIB / "study.py").exists()
    root = LIB.parent.parent
    users = [p.name for p in [*root.glob("notebooks/*.ipynb"), *LIB.glob("resources/*.ipynb"), *LIB.glob("*.py"),
                              *root.glob("scripts/*.py"), *root.glob("benchmarks/*.py")]
             if "allocbias.study" in p.read_text(encoding="utf-8")
             or any(line.strip().startswith("from allocbias import") and "study" in line.split("import", 1)[1].replace(",", " ").split()
                    for line in p.read_text(encoding="utf-8").replace('\\n"', "").replace('"', "").splitlines())]
    assert users == [], users
