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


def _module_path(module: str) -> Path:
    """The source file of ``allocbias.<module>`` (dotted for a subpackage's module; a package's ``__init__``)."""
    path = LIB.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imported(module: str) -> set[str]:
    """The top-level allocbias modules (or subpackages) that ``allocbias.<module>`` imports, relative or absolute.

    ``module`` may be dotted (``study.real_scores``): a relative import is resolved against its package, so
    ``from ..validity import x`` in ``allocbias.study.real_scores`` counts as ``validity`` and ``from . import y``
    as ``study``."""
    path = _module_path(module)
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else list(package)
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    out.add(target[0])
                else:  # from . import x, y at the top of the library
                    out.update(alias.name for alias in node.names)
            elif node.module and node.module.split(".")[0] == "allocbias":
                parts = node.module.split(".")
                out.update([parts[1]] if len(parts) > 1 else [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("allocbias."))
    return out


def library_modules() -> list[str]:
    """Every module of the library as a dotted name below ``allocbias`` (``metrics``, ``study.real_scores``)."""
    out = []
    for path in sorted(LIB.rglob("*.py")):
        parts = list(path.relative_to(LIB).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out.append(".".join(parts))
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


def test_the_old_study_module_is_gone():
    """``study.py`` was a facade that did five jobs; its names live in the five modules above. ``study`` is now the
    subpackage of chapter findings functions, never a module of its own."""
    assert not (LIB / "study.py").exists()


def test_study_is_a_package_on_top_of_the_analysis():
    """``allocbias.study`` holds one findings function per chapter: it imports the analysis modules, never the
    papermill runner or the command line, and no other module of the library imports it (the flow is one way)."""
    assert (LIB / "study" / "__init__.py").is_file()
    findings = [m for m in library_modules() if m.startswith("study.")]
    assert findings, "allocbias.study holds no findings module"
    for module in findings:
        assert not imported(module) & {"book", "cli", "audit"}, f"allocbias.{module} imports {sorted(imported(module))}"
    users = [m for m in library_modules() if m != "study" and not m.startswith("study.") and "study" in imported(m)]
    assert users == [], f"library modules that import allocbias.study: {users}"


def _study_imports(text: str) -> list[str]:
    """The names that a notebook's or script's source takes from ``allocbias.study`` (``from allocbias.study import
    x`` gives ``x``; ``from allocbias.study.x import f`` and ``import allocbias.study.x`` give ``x``)."""
    out = []
    for line in text.replace('\\n"', "").replace('"', "").splitlines():
        words = line.strip().replace(",", " ").split()
        if len(words) >= 4 and words[0] == "from" and words[2] == "import":
            if words[1] == "allocbias.study":
                out.extend(w for w in words[3:] if w not in ("as", "(", ")"))
            elif words[1].startswith("allocbias.study."):
                out.append(words[1].split(".")[2])
            elif words[1] == "allocbias" and "study" in words[3:]:
                out.append("study")
        elif len(words) >= 2 and words[0] == "import" and words[1].startswith("allocbias.study"):
            out.append(words[1].split(".")[2] if words[1].count(".") >= 2 else "study")
    return out


def test_notebooks_and_scripts_use_only_findings_modules_of_study():
    """What the chapters take from ``allocbias.study`` is one of its findings modules (or a name such a module
    re-exports), never a name of the old facade (``from allocbias import study`` then ``study.load_scores``)."""
    root = LIB.parent.parent
    package = {m.split(".")[1] for m in library_modules() if m.startswith("study.")}
    exported = set(getattr(__import__("allocbias.study", fromlist=["__all__"]), "__all__", []))
    bad = {}
    for p in [*root.glob("notebooks/*.ipynb"), *LIB.glob("resources/*.ipynb"), *root.glob("scripts/*.py"),
              *root.glob("benchmarks/*.py")]:
        names = [n for n in _study_imports(p.read_text(encoding="utf-8")) if n not in package | exported]
        if names:
            bad[p.name] = names
    assert bad == {}, bad
