"""Shared fixtures: notebooks executed once per test session under the smoke profile."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs two workers on a 2-core machine. torch's default of one thread per core gives four busy
    # threads on two cores, and its OpenMP threads spin while they wait: the same scoring took 124 CPU s in 119 s
    # with two threads against 56 CPU s in 64 s with one, side by side on one loaded machine. One thread per worker
    # (inherited by the notebook kernels a worker starts); a run without workers keeps torch's default.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from allocbias.book.runner import _environment_digest, _recorded_digest  # noqa: E402
from allocbias.book import (  # noqa: E402
    execute_notebook,
    glued_values,
    inputs_digest,
    load_profile,
    notebook_parameters,
    repo_root,
    toc_notebooks,
    validate_profile,
)

ROOT = repo_root()
GLUE_TEXT = re.compile(r"\{glue:text\}`([^`:]+)")


# Where the tests' smoke executions go: the runner's folder for `allocbias.book execute --profile smoke --out
# build/smoke`, so `make test-nbval` and CI's smoke book find these copies current and do not execute them again.
SMOKE_OUT = ROOT / "build" / "smoke"


@pytest.fixture(scope="session")
def smoke_notebook():
    """Execute a notebook (by stem) with the smoke profile once per run; returns (path, glued values).

    The executed copy goes to ``build/smoke/`` stamped with the runner's :func:`allocbias.book.inputs_digest`, as
    ``python -m allocbias.book execute --profile smoke --out build/smoke`` would write it; a copy already there
    with the same digest (same notebook, smoke parameters, ``lib/``, data folder and installed packages) is read
    back, not executed again: the runner's own rule. A lock per chapter makes pytest-xdist workers that need the
    same chapter wait for one execution instead of running it twice.
    """
    cache: dict[str, tuple[Path, dict]] = {}
    # the runner's plan: profiles/smoke.yaml with its _defaults applied, checked as `allocbias.book execute` does
    plan = validate_profile(load_profile("smoke", root=ROOT), toc_notebooks(root=ROOT), name="profiles/smoke.yaml")
    environment: list[str] = []

    def run(stem: str) -> tuple[Path, dict]:
        if stem not in cache:
            if not environment:
                environment.append(_environment_digest(ROOT))
            source = ROOT / "notebooks" / f"{stem}.ipynb"
            output = SMOKE_OUT / source.name
            given = plan[stem]
            stamp = inputs_digest(source, given, root=ROOT, environment=environment[0])
            SMOKE_OUT.mkdir(parents=True, exist_ok=True)
            with open(SMOKE_OUT / f".{stem}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if _recorded_digest(output) != stamp:
                    execute_notebook(source, output, given, cwd=ROOT, root=ROOT, stamp=stamp)
            cache[stem] = (output, glued_values(output))
        return cache[stem]

    return run


def smoke_parameters(stem: str) -> dict:
    """A chapter's parameters under the smoke profile: the notebook's defaults updated with ``profiles/smoke.yaml``."""
    source = ROOT / "notebooks" / f"{stem}.ipynb"
    return {**notebook_parameters(source), **load_profile("smoke", root=ROOT).get(stem, {})}


def chapter_fixtures(stem: str, *, with_params: bool = True) -> tuple:
    """The module fixtures of a chapter's test module: ``executed``, ``glued`` and (unless ``with_params`` is
    false) ``params``.

    Use as ``executed, glued, params = chapter_fixtures(STEM)`` at module level: pytest registers a fixture by the
    name it is bound to in the test module, so the names on the left are the fixture names.
    """

    @pytest.fixture(scope="module")
    def executed(smoke_notebook):
        return smoke_notebook(stem)

    @pytest.fixture(scope="module")
    def glued(executed):
        return executed[1]

    if not with_params:
        return executed, glued

    @pytest.fixture(scope="module")
    def params():
        return smoke_parameters(stem)

    return executed, glued, params


def chapter_run_fixtures(stem: str) -> tuple:
    """Like :func:`chapter_fixtures`, plus ``nb`` (the executed notebook, loaded), and ``params`` read from the run
    itself: the notebook's defaults updated with the parameters papermill injected (so the assertions hold for any
    profile). Use as ``executed, glued, nb, params = chapter_run_fixtures(STEM)``."""
    executed, glued = chapter_fixtures(stem, with_params=False)
    source = ROOT / "notebooks" / f"{stem}.ipynb"

    @pytest.fixture(scope="module")
    def nb(executed):
        return json.loads(executed[0].read_text())

    @pytest.fixture(scope="module")
    def params(nb):
        return {**notebook_parameters(source), **nb["metadata"].get("papermill", {}).get("parameters", {})}

    return executed, glued, nb, params


def load_script(name: str, folder: str = "scripts"):
    """A script of ``folder`` (default ``scripts/``; ``book/_ext`` holds the book's extension) imported as a module
    (scripts are not a package), for tests of its functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook_outputs(notebook: Path | dict) -> list[dict]:
    """Every cell output of a notebook (a path to an .ipynb file, or the notebook already loaded)."""
    nb = notebook if isinstance(notebook, dict) else json.loads(Path(notebook).read_text())
    return [out for cell in nb["cells"] for out in cell.get("outputs", [])]


def assert_clean_outputs(notebook: Path | dict) -> int:
    """Assert that no output of an executed notebook is an error or text on stderr; return the number of figures."""
    outputs = notebook_outputs(notebook)
    for out in outputs:
        assert out["output_type"] != "error", out.get("evalue")
        assert not (out["output_type"] == "stream" and out["name"] == "stderr"), "".join(out["text"])
    return sum("image/png" in out.get("data", {}) for out in outputs)


def markdown_text(source: Path) -> str:
    """The markdown cells of the notebook ``source``, joined: the prose a reader reads."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


_SOLUTION_START = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{solution-start\}", re.M)
_SOLUTION_END = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{solution-end\}", re.M)


def code_cells_by_place(source: Path) -> tuple[list[str], list[str]]:
    """The code cells of the notebook ``source``: (those a reader of the chapter runs, those inside an exercise's
    gated solution, between a ``{solution-start}`` and its ``{solution-end}``, which compute and glue the answer)."""
    kept: list[str] = []
    solutions: list[str] = []
    gated = False
    for cell in json.loads(source.read_text(encoding="utf-8"))["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code":
            (solutions if gated else kept).append(text)
        elif _SOLUTION_START.search(text) or _SOLUTION_END.search(text):
            starts = [m.start() for m in _SOLUTION_START.finditer(text)]
            ends = [m.start() for m in _SOLUTION_END.finditer(text)]
            gated = max(starts, default=-1) > max(ends, default=-1)
    return kept, solutions


def assert_findings_glue(values: dict, stem: str, *, types: tuple[type, ...] = (int, float, str),
                         unquoted: re.Pattern | None = None) -> None:
    """Assert that a findings object's ``values`` (its ``glue_values()``) hold every key the prose of chapter
    ``stem`` quotes (``{glue:text}`key```; keys matching ``unquoted`` aside, glued only for some parameters),
    each as a plain value of one of ``types``. A key the notebook's own cells glue (an exercise's solution glues the
    answer it computes, ``glue("key", ...)``) is not the findings' to hold."""
    source = ROOT / "notebooks" / f"{stem}.ipynb"
    own = {k for c in json.loads(source.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"
           for k in re.findall(r"\bglue\(\s*[\"']([\w-]+)[\"']", "".join(c["source"]))}
    quoted = {k for k in GLUE_TEXT.findall(markdown_text(source))
              if not (unquoted and unquoted.match(k)) and k not in own}
    assert quoted <= set(values), sorted(quoted - set(values))
    for key, value in values.items():
        assert type(value) in types, (key, type(value))


def assert_prose_glued(source: Path, glued: dict, more_than: int) -> str:
    """Assert that the markdown of ``source`` quotes more than ``more_than`` glued values and that every one it
    quotes (``{glue:text}`key```) is glued; return the markdown text."""
    prose = markdown_text(source)
    referenced = set(GLUE_TEXT.findall(prose))
    assert len(referenced) > more_than
    missing = sorted(referenced - set(glued))
    assert not missing, f"prose quotes numbers that are never glued: {missing}"
    return prose


def stored_pairwise_answers(params):
    """The pairwise answers of a chapter run's pools (its ``params``), read back from the score store without the
    notebook; the tables must hold every prompt of those pools, so reading them loads no model."""
    from allocbias.scoring import catalog, runs
    from allocbias import data
    from allocbias.scoring import items, systems

    cands = data.candidate_table(params["jobs"], names_per_group=params["names_per_group"], seed=params["seed"])
    groups = params["pairwise_groups"]
    pools = items.pairwise_pools(cands[cands["group"].isin(groups)] if groups else cands, params["pairwise_rounds"],
                                  params["seed"])
    root = catalog.resolve_scores_root(params["scores_root"])
    ids = set(items.resume_pairwise_items(pools)["prompt_id"])
    for system in params["pairwise_systems"]:  # complete tables: reading them loads no model
        assert ids <= catalog.store_for(systems.parse_system(system), "resume_pairwise", root).done_ids(), system
    return runs.pairwise_table(params["pairwise_systems"], pools, root=root)


_STEM = re.compile(r'^STEM = "([^"]+)"', flags=re.MULTILINE)
_SMOKE_CASE = "tests/test_notebooks.py::test_notebook_executes_under_smoke_profile["


@functools.cache
def _module_stem(path: str) -> str | None:
    """The chapter a ``tests/test_nb_*.py`` module checks (its ``STEM``), read from its text."""
    file = ROOT / path
    found = _STEM.search(file.read_text(encoding="utf-8")) if file.name.startswith("test_nb_") else None
    return found.group(1) if found else None


def _xdist_scope(nodeid: str) -> tuple[int, str]:
    """The pytest-xdist scope of a test (``make test`` runs ``-n 2 --dist loadscope``) and its rank in the run.

    A chapter's ``tests/test_nb_*.py`` module and its case of tests/test_notebooks.py's smoke execution form one
    scope, so one worker executes the chapter and the other is not left waiting on its lock; these scopes go
    first, as they take longest. The smoke book (tests/test_book_reading.py, every chapter) comes next, built while
    the other worker runs the library's tests; every other test stays with its module (xdist's own loadscope), so
    a module's fixtures are computed once.
    """
    path = nodeid.split("::", 1)[0]
    if nodeid.startswith(_SMOKE_CASE):
        return 0, "chapter-" + nodeid[len(_SMOKE_CASE):].rstrip("]")
    stem = _module_stem(path)
    if stem:
        return 0, f"chapter-{stem}"
    if path.endswith("test_book_reading.py"):
        return 1, path
    return 2, path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the chapter scopes first, then the smoke book, then the rest (collection order within each)."""
    items.sort(key=lambda item: _xdist_scope(item.nodeid)[0])  # stable


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """With ``--dist loadscope``, xdist's scheduler with the scopes of :func:`_xdist_scope` (whole scopes to one
    worker, in the order collected: give ``--no-loadscope-reorder``)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ChapterScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _xdist_scope(nodeid)[1]

    return ChapterScopes(config, log)


@pytest.fixture(autouse=True)
def legends_read_in_the_book(request, monkeypatch):
    """Every figure a chapter's findings module draws (tests/test_study_*.py) is drawn here in the book's style, and
    its legends must be drawn at the book's legend size or larger: the reading check of CI
    (scripts/check_reading.py) only lets a figure be shrunk as far as text of that size stays readable, so a
    smaller legend would read under 9 pt on the page. Closed figures keep their artists, so the figures are
    collected as they are made and checked after the test."""
    if not request.module.__name__.rpartition(".")[2].startswith("test_study_"):
        yield
        return
    import matplotlib.pyplot as plt

    from allocbias.plotting import LEGEND_POINTS, smallest_legend_points, use_book_style

    made = []
    make = plt.figure

    def figure(*args, **kwargs):
        made.append(make(*args, **kwargs))
        return made[-1]

    with plt.rc_context():
        use_book_style()
        monkeypatch.setattr(plt, "figure", figure)
        yield
    small = [(fig.axes[0].get_title() if fig.axes else "", smallest_legend_points(fig)) for fig in made
             if smallest_legend_points(fig) < LEGEND_POINTS]
    assert not small, f"legends drawn under {LEGEND_POINTS} pt (figure title, size): {small}"
