"""The library's layers, and imports that point one way down them.

``allocbias`` is five subpackages and a few modules on top::

    audited   what is audited: names, jobs, résumés, essays, prompts, the public data sets and their loaders
    scoring   how it is scored: models, systems, the local engine, servers, the task registry and items, the store,
              the catalog of score tables (scoring.catalog) and the runner that scores what a table lacks
              (scoring.runs)
    measures  what is measured: metrics, selection, validity, Local Law 144, HiringBloomberg, rankings, intervals,
              the decision and gap tables (measures.tables) and simulated systems (measures.synthetic)
    book      the book's machinery: the papermill runner (book.runner) and how a built page reads (book.reading)
    study     the chapters' findings modules and their base (study.findings), nothing else
    audit, ll144_command, cli   the commands on top; checks, outputs, plotting, _renamed: helpers every layer may use

Who may import whom (besides itself and the helpers)::

    audited   -> nothing
    measures  -> audited
    scoring   -> audited, and from measures only the pool and item drawing (measures.selection, .genderbench)
    book      -> audited (the checkout's root); never scoring, measures, the study or plotting
    study     -> audited, scoring, measures (a findings module never imports the book runner or a command)
    commands  -> everything but the study: the audit and the CLI import nothing from allocbias.study (running the
                 book goes through allocbias.book); ``python -m allocbias.book`` (book.__main__) is a command

``measures`` never imports ``scoring`` or ``study`` (a metric never loads a model; the decision tables take a score
table, they do not read one), which is why the tables sit next to the measures and the catalog next to scoring;
nothing below the commands imports them. Inside scoring the catalog never imports the runner. Every ``import``
statement counts, those inside functions included (doctest examples do not). The old flat import paths users'
notebooks know are one-file aliases (tests/test_public_names.py); the study's old module paths are kept by
``allocbias._renamed.moved`` and leave no file in the study."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import allocbias

LIB = Path(allocbias.__file__).parent
LAYERS = ("audited", "scoring", "measures", "book", "study")
HELPERS = {"checks", "outputs", "plotting", "_renamed"}
COMMANDS = {"audit", "ll144_command", "cli", "__main__"}
#: The one-file aliases of the old flat import paths (they import their new place, nothing else).
ALIASES = {"metrics", "selection", "validity", "ll144", "genderbench", "rankings", "data", "store"}
#: Entry points inside a layer that are commands (``python -m allocbias.book`` runs the CLI).
ENTRY_POINTS = {"book.__main__"}


def _is_module(parts: list[str]) -> bool:
    path = LIB.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_path(module: str) -> Path:
    path = LIB.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imported(module: str) -> set[str]:
    """The allocbias modules that ``allocbias.<module>`` imports, as dotted names below ``allocbias``
    (``measures.metrics``; ``from .measures import metrics`` counts as ``measures.metrics``)."""
    path = _module_path(module)
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "allocbias":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                full = [*target, alias.name]
                out.add(".".join(full) if _is_module(full) else ".".join(target))
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".", 1)[1] for a in node.names if a.name.startswith("allocbias."))
    out.discard("")
    return out


def library_modules() -> list[str]:
    """Every module of the library as a dotted name below ``allocbias`` (``checks``, ``measures.metrics``)."""
    out = []
    for path in sorted(LIB.rglob("*.py")):
        parts = list(path.relative_to(LIB).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out.append(".".join(parts))
    return out


def layer(module: str) -> str:
    if module in ENTRY_POINTS:
        return "commands"
    head = module.split(".")[0]
    if head in LAYERS:
        return head
    if head in HELPERS:
        return "helpers"
    if head in COMMANDS:
        return "commands"
    if head in ALIASES:
        return "aliases"
    return "unknown"


def test_every_module_belongs_to_a_layer():
    assert [m for m in library_modules() if layer(m) == "unknown"] == []
    top = sorted(p.stem for p in LIB.glob("*.py"))
    assert set(top) <= HELPERS | COMMANDS | ALIASES | {"__init__"}, top


#: What each layer may import (besides itself and the helpers).
ALLOWED = {
    "helpers": set(),
    "audited": set(),
    "measures": {"audited"},
    "scoring": {"audited"},
    "book": {"audited"},
    "study": {"audited", "scoring", "measures"},
    "commands": {"audited", "scoring", "measures", "book", "study", "commands"},
}
#: What scoring takes from measures: the drawing of pools and of HiringBloomberg items (never a metric).
SCORING_FROM_MEASURES = {"measures.selection", "measures.genderbench"}


@pytest.mark.parametrize("module", [m for m in library_modules() if layer(m) not in ("aliases",)])
def test_imports_point_down_the_layers(module):
    own = layer(module)
    bad = set()
    for target in imported(module):
        other = layer(target)
        if other in (own, "helpers") or other in ALLOWED[own]:
            continue
        if own == "scoring" and target in SCORING_FROM_MEASURES:
            continue
        bad.add(target)
    assert not bad, f"allocbias.{module} ({own}) imports {sorted(bad)}"


def test_the_aliases_import_only_their_new_place():
    for alias in ALIASES:
        targets = imported(alias) - {"cli"}
        assert len(targets) == 1 and layer(targets.pop()) in LAYERS, (alias, imported(alias))


@pytest.mark.parametrize(("module", "forbidden"), [
    ("scoring.systems", {"study", "scoring.catalog", "scoring.runs"}),
    ("scoring.items", {"study", "scoring.catalog", "scoring.runs"}),
    ("scoring.catalog", {"scoring.runs"}),
    ("scoring.tasks", {"scoring.catalog", "scoring.runs", "scoring.systems"}),
    ("scoring.store", {"scoring"}),
    ("plotting", {"study", "book"}),
    ("book.runner", {"study", "scoring", "measures", "plotting"}),
    ("book.reading", {"study", "scoring", "measures", "plotting"}),
])
def test_imports_point_down_the_flow(module, forbidden):
    hits = {t for t in imported(module) for f in forbidden if t == f or t.startswith(f + ".")}
    assert not hits, f"allocbias.{module} imports {sorted(hits)}"


def _findings_modules() -> set[str]:
    from allocbias.study import FINDINGS

    return {f"study.{name}" for name in FINDINGS}


def test_the_study_holds_only_findings_modules_their_base_and_init():
    files = {p.relative_to(LIB / "study").as_posix() for p in (LIB / "study").rglob("*.py")}
    expected = {"__init__.py", "findings.py", *(f"{m.split('.', 1)[1]}.py" for m in _findings_modules())}
    assert files == expected, f"not a findings module: {sorted(files - expected)}; missing: {sorted(expected - files)}"


def test_findings_modules_never_import_the_book_or_the_commands():
    """A chapter's findings function computes; the papermill runner (``allocbias.book``) and the commands are above
    it."""
    for module in sorted(_findings_modules() | {"study.findings"}):
        bad = {t for t in imported(module) if layer(t) in ("book", "commands")}
        assert not bad, f"allocbias.{module} imports {sorted(bad)}"


def _reachable(module: str) -> set[str]:
    """Every allocbias module that importing ``module`` can import, following import statements transitively
    (a package's ``__init__`` counts for each of its modules)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        parts = current.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts)) if (LIB.joinpath(*parts[:i]) / "__init__.py").is_file()]
        todo.extend(imported(current) | set(parents))
    return seen


@pytest.mark.parametrize("command", ["audit", "cli"])
def test_the_audit_and_the_cli_import_nothing_from_the_study(command):
    assert not {t for t in imported(command) if layer(t) == "study"}, sorted(imported(command))
    reached = sorted(m for m in _reachable(command) if layer(m) == "study")
    assert reached == [], f"allocbias.{command} reaches {reached}"


def test_no_module_below_the_study_imports_it():
    users = [m for m in library_modules() if layer(m) in ("audited", "scoring", "measures", "book", "helpers")
             and any(layer(t) == "study" for t in imported(m))]
    assert users == [], f"modules below the study that import it: {users}"


def import_cycles() -> list[list[str]]:
    """The import cycles inside the library: every strongly connected component of more than one module (or a module
    that imports itself) of the graph ``module -> imported(module)``, found with Tarjan's algorithm; each as a sorted
    list of modules. Importing a package counts as importing its ``__init__``, and a package's ``__init__``
    re-exporting its own submodules is the package's own business (an edge into a package from one of its own
    submodules is left out: ``from . import x`` in ``pkg/y.py`` names ``pkg.x``, not ``pkg``)."""
    modules = library_modules()
    known = set(modules)

    def _inside(child: str, package: str) -> bool:
        return child.startswith(package + ".")

    graph = {m: sorted(t for t in imported(m) if t in known and not _inside(m, t)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph[node]:
                cycles.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_the_cycle_finder_finds_a_circle(monkeypatch):
    """The check below can fail: with an edge audited.datasets -> audited.data added, the old circle is found."""
    real = imported
    monkeypatch.setitem(globals(), "imported",
                        lambda m: real(m) | ({"audited.data"} if m == "audited.datasets" else set()))
    assert ["audited.data", "audited.datasets"] in import_cycles()


def test_no_import_cycles_inside_the_library():
    """No module imports, through any chain of imports (those inside functions included), a module that imports it
    back: a circle makes the import order matter and hides which module is below which."""
    assert import_cycles() == []


def test_an_upward_import_fails(tmp_path, monkeypatch):
    """The rule can fail: a measures module that imported scoring would be reported."""
    module = LIB / "measures" / "tables.py"
    text = module.read_text(encoding="utf-8") + "\nfrom ..scoring import catalog\n"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: text if self == module else
                        Path.open(self, encoding=encoding).read())
    with pytest.raises(AssertionError, match="scoring.catalog"):
        test_imports_point_down_the_layers("measures.tables")
