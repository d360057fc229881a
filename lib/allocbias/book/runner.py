"""Executing the study's notebooks: parameter profiles, parameter safety and the papermill runner.

The book is built in two steps (see the Makefile):

1. every notebook listed in ``_toc.yml`` is executed by papermill with the parameters of a *profile*
   (``profiles/<name>.yaml``: one mapping per notebook stem) into ``build/notebooks/``;
2. jupyter-book renders those executed copies (it never executes anything itself).

Parameter safety
----------------
papermill only *warns* when it is given a parameter that the notebook does not declare, and then runs with
the defaults: a silent wrong result. This module closes that hole twice:

* :func:`validate_parameters` checks a parameter mapping against the notebook's ``parameters`` cell before
  any kernel starts (used by :func:`execute_notebook` and the ``make`` targets);
* :func:`check_parameters`, called in the cell right after the ``parameters`` cell of every notebook,
  compares what papermill injected with what the notebook declares, so that a plain
  ``papermill nb.ipynb out.ipynb -p typo 1`` fails too, naming the parameter.

Both apply the same checks to every given value, before any work:

1. the name is declared by the notebook;
2. the value is the declared default's kind of literal (an int may stand for a float);
3. ``None`` (YAML ``null``) is refused unless the declared default is ``None``: ``seed: null`` would
   otherwise un-seed a chapter silently;
4. an empty list is refused where the declared default is a non-empty list (a default of ``[]`` means
   "none" or "all" and says so in its comment);
5. the per-parameter rule of :data:`PARAMETER_RULES`, if the name has one. A parameter name means the same
   thing in every chapter that declares it (``rounds``, ``seed``, ``sweep_points``...), so its rule is
   declared once, here; a test checks that every notebook's defaults satisfy the rules and that every rule
   names a declared parameter.

A profile is checked whole (every chapter's mapping, ``_defaults`` merged in) before the first kernel
starts. ``_defaults`` is a mapping of parameters applied to every chapter that declares them (a chapter's own
entry wins); a name in ``_defaults`` that no chapter declares is refused.

Which checkout
--------------
The runner executes the notebooks of the checkout it is run in: ``$ALLOCBIAS_ROOT`` if set, else the nearest
folder at or above the current directory that holds ``_toc.yml`` and ``notebooks/`` (:func:`checkout_root`),
never the checkout the installed package happens to come from. Outside a checkout it stops with a message that
says so. Every kernel it starts runs that checkout's code on that checkout's data: ``ALLOCBIAS_ROOT`` is set to
the checkout, ``ALLOCBIAS_DATA`` to its ``data/`` (unless already set), and its ``lib/`` comes first on
``PYTHONPATH`` (:func:`kernel_environment`).

Current copies are not re-run
-----------------------------
An executed copy records, in its metadata, a digest of everything it was computed from
(:func:`inputs_digest`: the source notebook, its parameters, the checkout's ``lib/`` and data folder, the
Python version and the installed distributions). ``execute`` skips a chapter whose executed copy records the
digest its inputs have now; ``--force`` re-runs it anyway.

Interrupted runs
----------------
:func:`execute_notebook` executes into a temporary file next to the output (``.<stem>.partial-<pid>.ipynb``,
hidden, and excluded from the book by ``_config.yml``) and renames it over the output only when the notebook
succeeded, so a run killed or failing mid-chapter never replaces the last good executed copy; a failing run's
copy (with the traceback) is kept as ``<stem>.failed.ipynb``. ``execute`` removes the partial copies that
processes no longer running left behind (a SIGKILL gives no chance to clean up).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..audited.data import repo_root

__all__ = [
    "PARAMETERS_MARKER",
    "PARAMETER_RULES",
    "NotACheckoutError",
    "NotebookExecutionError",
    "UnknownParameterError",
    "check_parameters",
    "checkout_root",
    "execute_notebook",
    "glued_values",
    "inputs_digest",
    "kernel_environment",
    "load_profile",
    "mark_profile",
    "notebook_parameters",
    "repo_root",
    "toc_chapters",
    "toc_chapter_table",
    "toc_notebooks",
    "validate_parameters",
    "validate_profile",
]

#: First line of every notebook's ``parameters`` cell (papermill's injected cell starts with ``# Parameters``).
PARAMETERS_MARKER = "# Parameters: override with papermill -p NAME VALUE (profiles/*.yaml hold the book's settings)"
_INJECTED_HEADER = "# Parameters"


class UnknownParameterError(ValueError):
    """A notebook was given a parameter that its ``parameters`` cell does not declare."""


class NotebookExecutionError(RuntimeError):
    """A notebook failed while executing; the message names the notebook and the cell."""


class NotACheckoutError(ValueError):
    """The runner was started outside an allocbias checkout (and ``ALLOCBIAS_ROOT`` names none)."""


# --------------------------------------------------------------------------------------------------------------
# Which checkout: the one the command runs in, not the one the package was installed from
# --------------------------------------------------------------------------------------------------------------
def _is_checkout(folder: Path) -> bool:
    return (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir()


def checkout_root(start: str | Path | None = None) -> Path:
    """The checkout whose notebooks the runner executes.

    ``$ALLOCBIAS_ROOT`` if set, else the nearest folder at or above ``start`` (default: the current directory)
    holding ``_toc.yml`` and a ``notebooks/`` folder. Unlike :func:`allocbias.data.repo_root` it never looks at
    where the package is installed from: with the package installed (editable) from one clone, running the book
    in another clone builds the other clone.

    Raises :class:`NotACheckoutError` saying which folder is not a checkout and what to do.

    >>> import tempfile
    >>> checkout_root(tempfile.mkdtemp()) if "ALLOCBIAS_ROOT" not in os.environ else None
    Traceback (most recent call last):
    ...
    allocbias.book.runner.NotACheckoutError: ... is not inside an allocbias checkout: ...
    """
    env = os.environ.get("ALLOCBIAS_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if not _is_checkout(root):
            raise NotACheckoutError(f"ALLOCBIAS_ROOT={env} is not an allocbias checkout (it holds no _toc.yml and "
                                    "notebooks/ folder); point it at the repository to build, or unset it")
        return root
    here = Path(start if start is not None else Path.cwd()).expanduser().resolve()
    for folder in (here, *here.parents):
        if _is_checkout(folder):
            return folder
    raise NotACheckoutError(
        f"{here} is not inside an allocbias checkout: no folder at or above it holds _toc.yml and notebooks/; "
        "run the command in the repository whose book you want, or set ALLOCBIAS_ROOT to it"
    )


@contextlib.contextmanager
def kernel_environment(root: str | Path) -> Iterator[dict[str, str]]:
    """Within the block, kernels started by this process run the checkout ``root``'s code on its data.

    Sets ``ALLOCBIAS_ROOT=root``, ``ALLOCBIAS_DATA=root/data`` (unless ``ALLOCBIAS_DATA`` is set: an explicit
    data folder wins), puts ``root/lib`` first on ``PYTHONPATH`` (when it holds the package) and sets
    ``HF_HUB_OFFLINE=1``; the previous environment is restored afterwards. Yields the variables it set.
    """
    root = Path(root).resolve()
    wanted = {"ALLOCBIAS_ROOT": str(root), "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    if not os.environ.get("ALLOCBIAS_DATA"):
        wanted["ALLOCBIAS_DATA"] = str(root / "data")
    if (root / "lib" / "allocbias").is_dir():
        rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != root / "lib"]
        wanted["PYTHONPATH"] = os.pathsep.join([str(root / "lib"), *rest])
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield dict(wanted)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _read_yaml(path: Path) -> Any:
    """``yaml.safe_load`` of a file; a syntax error becomes one ``ValueError`` naming the file, line and column."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        what = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        hint = " (YAML indents with spaces, never tabs)" if "\t" in str(exc.problem) else ""
        raise ValueError(f"{where}: not valid YAML: {what}{hint}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None


# --------------------------------------------------------------------------------------------------------------
# Reading a notebook's declared parameters
# --------------------------------------------------------------------------------------------------------------
_LITERAL_TYPES = (int, float, str, bool, type(None), list, tuple, dict)


def _assignments(source: str, *, where: str, literals_only: bool) -> dict[str, Any]:
    """Names assigned at top level in ``source`` with their literal values.

    Raises ``ValueError`` naming ``where`` when a statement is not ``name = literal`` (and ``literals_only``).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{where}: parameters cell is not valid Python: {exc}") from exc
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value_node = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value_node = node.target.id, node.value
        else:
            if literals_only:
                raise ValueError(
                    f"{where}: line {node.lineno} of the parameters cell is not a `name = literal` assignment"
                )
            continue
        try:
            values[name] = ast.literal_eval(value_node)
        except ValueError as exc:
            if literals_only:
                raise ValueError(
                    f"{where}: parameter {name!r} (line {node.lineno}) is not a literal; "
                    "derived values belong in the next cell"
                ) from exc
            values[name] = None
    return values


def _read_notebook(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"notebook not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid notebook JSON: {exc}") from exc


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def notebook_parameters(path: str | Path) -> dict[str, Any]:
    """The parameters a notebook declares, with their default values.

    The notebook must have exactly one code cell tagged ``parameters``; its first line is
    :data:`PARAMETERS_MARKER` and every other statement is ``name = literal``.

    Raises
    ------
    ValueError
        naming the notebook when there is not exactly one ``parameters`` cell, the marker line is missing or a
        statement is not a literal assignment.
    """
    path = Path(path)
    nb = _read_notebook(path)
    cells = [c for c in nb.get("cells", []) if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    cell = cells[0]
    if cell.get("cell_type") != "code":
        raise ValueError(f"{path.name}: the cell tagged 'parameters' is not a code cell")
    source = _source(cell)
    if source.splitlines()[:1] != [PARAMETERS_MARKER]:
        raise ValueError(f"{path.name}: the parameters cell must start with the line {PARAMETERS_MARKER!r}")
    return _assignments(source, where=path.name, literals_only=True)


def _compatible(default: Any, value: Any) -> bool:
    """Whether ``value`` may replace ``default`` (same kind of literal; ints may stand for floats; ``None`` only
    where the default is ``None``)."""
    if default is None:
        return True
    if value is None:
        return False
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _int_at_least(low: int) -> tuple[str, Callable[[Any], bool]]:
    return f"an integer >= {low}", lambda v: _is_int(v) and v >= low


def _number(low: float, high: float | None = None, *, low_open: bool = False,
            high_open: bool = False) -> tuple[str, Callable[[Any], bool]]:
    lo_s, hi_s = ("(" if low_open else "["), (")" if high_open else "]")
    says = f"a number in {lo_s}{low:g}, {'inf)' if high is None else f'{high:g}{hi_s}'}"

    def test(v: Any) -> bool:
        if not _is_num(v):
            return False
        ok_low = v > low if low_open else v >= low
        ok_high = high is None or (v < high if high_open else v <= high)
        return ok_low and ok_high

    return says, test


def _each(rule: tuple[str, Callable[[Any], bool]]) -> tuple[str, Callable[[Any], bool]]:
    says, test = rule
    return f"a non-empty list, each element {says}", lambda v: isinstance(v, (list, tuple)) and len(v) > 0 and all(
        test(x) for x in v)


def _range_pair(rule: tuple[str, Callable[[Any], bool]]) -> tuple[str, Callable[[Any], bool]]:
    says, test = rule
    return (f"a pair [low, high] with low <= high, each {says}",
            lambda v: isinstance(v, (list, tuple)) and len(v) == 2 and all(test(x) for x in v) and v[0] <= v[1])


#: Per-parameter rules: name -> (what the value must be, test). A name means the same in every chapter that
#: declares it; a test (tests/test_parameter_rules.py) checks every notebook's defaults against these rules.
PARAMETER_RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "seed": _int_at_least(0),
    **{name: _int_at_least(1) for name in (
        "names_per_group", "sample_per_group", "pool_rounds", "k", "k_eo", "rounds", "noise_redraws",
        "permutations", "n_orderings", "n_boot", "n_name_boot", "n_system_boot", "n_examples", "n_systems", "n_per_group",
        "sim_n", "study_k", "essay_k", "essay_rounds",
        "study_rounds")},
    "pairwise_rounds": _int_at_least(0),
    "essay_pool_size": _int_at_least(2),
    "n_groups": _int_at_least(2),
    "grid_points": _int_at_least(2),
    "sweep_points": _int_at_least(2),
    "ks": _each(_int_at_least(1)),
    "k_values": _each(_int_at_least(1)),
    "ndcg_n": _each(_int_at_least(1)),
    "confidence": _number(0, 1, low_open=True, high_open=True),
    "bound": _number(0, 1, low_open=True),
    "fair_bound": _number(0, 1, low_open=True),
    "prior_a": _number(0, low_open=True),
    "prior_b": _number(0, low_open=True),
    "low_mass": _number(0, 1),
    "tol": _number(0),
    "exclude_below": _number(0, 1, high_open=True),
    "shift_sd": _number(0),
    "spread_ratio": _number(0, low_open=True),
    "ce_spread": _number(0, low_open=True),
    "ce_outlier_share": _number(0, 1),
    "sim_spreads": _each(_number(0, low_open=True)),
    "tail_df": _range_pair(_number(0, low_open=True)),
    "ceiling_offset": _range_pair(_number(0)),
    "ceiling_slope": _range_pair(_number(0, low_open=True)),
    "example1_params": _each(_number(-1.5, 1.5, low_open=True, high_open=True)),  # sds 15 -/+ 10a stay > 0
    "example2_params": _each(_number(0, low_open=True)),
    "example3_params": _each(_number(0, low_open=True)),
}


def validate_parameters(declared: Mapping[str, Any], given: Mapping[str, Any], *, notebook: str) -> None:
    """Raise when ``given`` holds a parameter ``declared`` lacks, one of another type, ``None`` where the
    default is not ``None``, an empty list where the default is not, or a value its rule
    (:data:`PARAMETER_RULES`) refuses; each error names the notebook, the parameter and what it must be.

    >>> validate_parameters({"seed": 0}, {"seed": 3}, notebook="x.ipynb")
    >>> validate_parameters({"seed": 0}, {"sed": 3}, notebook="x.ipynb")
    Traceback (most recent call last):
    ...
    allocbias.book.runner.UnknownParameterError: x.ipynb has no parameter 'sed' (declared: seed)
    """
    unknown = sorted(set(given) - set(declared))
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        noun = "parameter" if len(unknown) == 1 else "parameters"
        raise UnknownParameterError(
            f"{notebook} has no {noun} {names} (declared: {', '.join(sorted(declared)) or 'none'})"
        )
    for name, value in given.items():
        default = declared[name]
        if value is None and default is not None:
            raise ValueError(
                f"{notebook}: parameter {name!r} is None (YAML null) but its declared default is {default!r}; "
                "None is accepted only where the default is None (omit the parameter to keep the default)"
            )
        if not _compatible(default, value):
            raise ValueError(
                f"{notebook}: parameter {name!r} expects a {type(default).__name__} like "
                f"{default!r}, got {type(value).__name__} {value!r}"
            )
        if isinstance(default, (list, tuple)) and default and not value:
            raise ValueError(f"{notebook}: parameter {name!r} is an empty list; it needs at least one element "
                             f"(default {default!r})")
        rule = PARAMETER_RULES.get(name)
        if rule is not None and value is not None and not rule[1](value):
            raise ValueError(f"{notebook}: parameter {name!r} must be {rule[0]}, got {value!r}")


def check_parameters() -> dict[str, Any]:
    """Fail the running notebook if papermill injected a parameter its ``parameters`` cell does not declare.

    Call it first thing in the cell that follows the ``parameters`` cell. It reads the kernel's input
    history (IPython's ``In``): the last executed cell starting with :data:`PARAMETERS_MARKER` is the
    declaration, and cells after it that start with papermill's ``# Parameters`` header are injections.
    Returns the parameters in force (declared defaults updated with injected values). Outside IPython it does
    nothing and returns ``{}``.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return {}
    shell = get_ipython()
    if shell is None:
        return {}
    history = list(shell.user_ns.get("In", []))
    declared_at = [i for i, src in enumerate(history) if src.splitlines()[:1] == [PARAMETERS_MARKER]]
    if not declared_at:
        raise RuntimeError(
            "check_parameters() found no executed parameters cell: run the cell tagged 'parameters' first"
        )
    start = declared_at[-1]
    declared = _assignments(history[start], where="this notebook", literals_only=False)
    injected: dict[str, Any] = {}
    for src in history[start + 1 :]:
        if src.splitlines()[:1] == [_INJECTED_HEADER]:
            injected.update(_assignments(src, where="injected parameters", literals_only=False))
    validate_parameters(declared, injected, notebook="this notebook")
    return {**declared, **injected}


# --------------------------------------------------------------------------------------------------------------
# Profiles and the table of contents
# --------------------------------------------------------------------------------------------------------------
def load_profile(name: str, *, root: Path | None = None) -> dict[str, dict[str, Any]]:
    """Parameters of a profile: ``profiles/<name>.yaml`` mapping notebook stem -> {parameter: value}.

    Raises ``ValueError`` naming the file for an unknown profile or a malformed file (a YAML syntax error: the
    line and column). ``root`` defaults to :func:`checkout_root`.
    """
    root = root or checkout_root()
    path = root / "profiles" / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in (root / "profiles").glob("*.yaml"))
        raise ValueError(f"unknown profile {name!r}: no {path} (known profiles: {', '.join(known)})")
    data = _read_yaml(path) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) or v is None for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of notebook name -> mapping of parameters")
    return {str(k): dict(v or {}) for k, v in data.items()}


def validate_profile(
    profile: Mapping[str, Mapping[str, Any]], notebooks: list[Path], *, name: str = "profile"
) -> dict[str, dict[str, Any]]:
    """Check a whole profile before any kernel starts; returns the parameters of every notebook.

    ``_defaults`` is applied to every notebook that declares each of its parameters (the notebook's own
    entry wins); a ``_defaults`` name that no notebook declares, a stem of no notebook and every error of
    :func:`validate_parameters` are reported together, in one ``ValueError`` naming the profile.

    >>> validate_profile({"_defaults": {"sed": 1}}, [], name="p.yaml")
    Traceback (most recent call last):
    ...
    ValueError: p.yaml is invalid:
      _defaults: no notebook declares 'sed'
    """
    declared = {nb.stem: notebook_parameters(nb) for nb in notebooks}
    defaults = dict(profile.get("_defaults") or {})
    errors = []
    for key in sorted(defaults):
        if not any(key in d for d in declared.values()):
            errors.append(f"_defaults: no notebook declares {key!r}")
    stray = sorted(set(profile) - set(declared) - {"_defaults"})
    if stray:
        errors.append(f"names notebooks that _toc.yml does not list: {', '.join(stray)}")
    plan: dict[str, dict[str, Any]] = {}
    for stem, params in declared.items():
        given = {**{k: v for k, v in defaults.items() if k in params}, **dict(profile.get(stem) or {})}
        try:
            validate_parameters(params, given, notebook=f"{stem}.ipynb")
        except ValueError as exc:
            errors.append(str(exc))
        plan[stem] = given
    if errors:
        raise ValueError(f"{name} is invalid:\n  " + "\n  ".join(errors))
    return plan


def toc_notebooks(*, root: Path | None = None) -> list[Path]:
    """Source notebooks (``notebooks/*.ipynb``) whose executed copies ``_toc.yml`` lists, in book order
    (``root`` defaults to :func:`checkout_root`)."""
    root = root or checkout_root()
    toc = _read_yaml(root / "_toc.yml")
    files: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    notebooks = []
    for entry in files:
        entry_path = Path(entry)
        if entry_path.parent == Path("build/notebooks"):
            source = root / "notebooks" / f"{entry_path.name}.ipynb"
            if not source.exists():
                raise FileNotFoundError(f"_toc.yml lists {entry} but {source} does not exist")
            notebooks.append(source)
    return notebooks


def _page_title(path: Path) -> str:
    """The first level-one heading of a notebook's markdown or of a Markdown page."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        lines = [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path} has no level-one heading ('# Title') to name it by")


def toc_chapters(*, root: Path | None = None) -> list[dict[str, Any]]:
    """Every page of ``_toc.yml`` in book order: its part's caption, its chapter number as the book prints it
    (numbered parts count on from one part to the next; ``None`` in an unnumbered part), its file as listed and its
    title (the page's first level-one heading; a chapter's from its source notebook in ``notebooks/``)."""
    root = root or checkout_root()
    toc = _read_yaml(root / "_toc.yml")
    pages: list[dict[str, Any]] = []
    number = 0
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            entry = Path(str(chapter["file"]))
            if entry.parent == Path("build/notebooks"):
                source = root / "notebooks" / f"{entry.name}.ipynb"
            else:
                source = root / entry.with_suffix(".md")
            if not source.exists():
                raise FileNotFoundError(f"_toc.yml lists {chapter['file']} but {source} does not exist")
            if part.get("numbered"):
                number += 1
            pages.append({"part": part.get("caption", ""), "number": number if part.get("numbered") else None,
                          "file": str(entry), "source": source, "title": _page_title(source)})
    return pages


def toc_chapter_table(*, root: Path | None = None) -> str:
    """The README's table of the book, one row per part of ``_toc.yml``, written from :func:`toc_chapters`: a
    numbered chapter as ``N title``, any other page by its title and its file (so the README's table cannot drift
    from the book's order or numbers)."""
    rows = ["| part | chapters |", "| --- | --- |"]
    parts: dict[str, list[str]] = {}
    for page in toc_chapters(root=root):
        if page["number"] is not None:
            words = f"{page['number']} {page['title']}"
        else:
            words = f"{page['title']} (`{page['source'].relative_to(root or checkout_root())}`)"
        parts.setdefault(page["part"], []).append(words.replace("|", "\\|"))
    rows += [f"| {part} | {' · '.join(words)} |" for part, words in parts.items()]
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExecutionResult:
    notebook: Path
    output: Path
    parameters: dict[str, Any]
    seconds: float


def execute_notebook(
    notebook: str | Path,
    output: str | Path,
    parameters: Mapping[str, Any] | None = None,
    *,
    cwd: str | Path | None = None,
    log_output: bool = False,
    timeout: int | None = None,
    root: str | Path | None = None,
    stamp: str | None = None,
) -> ExecutionResult:
    """Execute ``notebook`` with papermill into ``output`` after validating ``parameters``.

    The kernel runs in the environment of :func:`kernel_environment` for the checkout ``root`` (default: the
    checkout holding the notebook; a notebook outside any checkout, e.g. the audit report of an installed
    package, runs in the inherited environment), in the folder ``cwd`` (default ``root``, else the notebook's).
    ``stamp`` (an :func:`inputs_digest`) is recorded in the executed copy's metadata ``allocbias.inputs_sha256``.

    Raises
    ------
    UnknownParameterError
        before starting a kernel, for a parameter the notebook does not declare.
    NotebookExecutionError
        naming the notebook, the failing cell (its position and execution count) and the error.
    """
    import papermill as pm
    from traitlets.config import Config
    from papermill.exceptions import PapermillExecutionError

    notebook, output = Path(notebook), Path(output)
    parameters = dict(parameters or {})
    validate_parameters(notebook_parameters(notebook), parameters, notebook=notebook.name)
    if root is None:
        root = next((f for f in notebook.resolve().parents if _is_checkout(f)), None)
    output.parent.mkdir(parents=True, exist_ok=True)
    env_cwd = Path(cwd) if cwd is not None else Path(root) if root is not None else notebook.resolve().parent
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # papermill writes its output while it runs: write a temporary file, renamed over ``output`` on success only
    partial = output.with_name(f".{output.stem}.partial-{os.getpid()}.ipynb")
    failed = output.with_name(f"{output.stem}.failed.ipynb")
    # the kernel's IPC sockets in a folder of its own: jupyter_client's default, ``kernel-ipc-<n>`` in the current
    # folder, numbered by which files exist, lets two kernels started at once (pytest-xdist workers, two runs in one
    # checkout) take the same sockets
    sockets = Path(tempfile.mkdtemp(prefix="allocbias-kernel-"))
    start = time.perf_counter()
    try:
        with kernel_environment(root) if root is not None else contextlib.nullcontext():
            pm.execute_notebook(
                str(notebook),
                str(partial),
                parameters=parameters,
                kernel_name="python3",
                cwd=str(env_cwd),
                log_output=log_output,
                progress_bar=False,
                execution_timeout=timeout,
                # the kernel talks over local IPC sockets, not TCP: no unencrypted port, and no Jupyter warning
                config=Config({"KernelManager": {"transport": "ipc", "ip": str(sockets / "ipc")}}),
            )
        if stamp is not None:
            executed = _read_notebook(partial)
            executed.setdefault("metadata", {}).setdefault("allocbias", {})["inputs_sha256"] = stamp
            partial.write_text(json.dumps(executed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except PapermillExecutionError as exc:
        if partial.exists():
            os.replace(partial, failed)
        cell = _failing_cell(failed, exc.exec_count)
        kept = f"; the last good copy {output} is untouched" if output.exists() else ""
        raise NotebookExecutionError(
            f"{notebook.name} failed in cell {cell} (execution count {exc.exec_count}): "
            f"{exc.ename}: {exc.evalue}\n(executed copy with the traceback: {failed}{kept})"
        ) from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    os.replace(partial, output)
    failed.unlink(missing_ok=True)
    return ExecutionResult(notebook, output, parameters, time.perf_counter() - start)


# --------------------------------------------------------------------------------------------------------------
# What an executed copy was computed from
# --------------------------------------------------------------------------------------------------------------
def _folder_digest(folder: Path) -> str:
    """sha256 over the relative paths and bytes of every file under ``folder`` (hidden files and caches left out)."""
    h = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if not path.is_file() or any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            h.update(rel.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _environment_digest(root: Path) -> str:
    """The part of :func:`inputs_digest` shared by every chapter of a run: code, data and installed packages."""
    data = Path(os.environ.get("ALLOCBIAS_DATA") or root / "data")
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
                   if d.metadata["Name"])
    parts = {"lib": _folder_digest(root / "lib"), "data": _folder_digest(data), "python": platform.python_version(),
             "distributions": hashlib.sha256("\n".join(dists).encode()).hexdigest()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def inputs_digest(notebook: str | Path, parameters: Mapping[str, Any], *, root: str | Path,
                  environment: str | None = None) -> str:
    """sha256 of what a chapter's executed copy is computed from: the source notebook's bytes, its parameters,
    every file of the checkout's ``lib/`` and data folder (``$ALLOCBIAS_DATA`` or ``root/data``), the Python
    version and the installed distributions (``environment``, computed once per run, stands for the last three).

    Equal digests mean an executed copy is current: the runner does not execute it again.
    """
    env = environment if environment is not None else _environment_digest(Path(root))
    h = hashlib.sha256(Path(notebook).read_bytes())
    h.update(json.dumps(dict(parameters), sort_keys=True, default=repr).encode())
    h.update(env.encode())
    return h.hexdigest()


def _recorded_digest(output: Path) -> str | None:
    with contextlib.suppress(FileNotFoundError, ValueError, AttributeError):
        return _read_notebook(output).get("metadata", {}).get("allocbias", {}).get("inputs_sha256")
    return None


_PARTIAL = re.compile(r"^\.(?P<stem>.+)\.partial-(?P<pid>\d+)\.ipynb$")


def _remove_stale_partials(out_dir: Path) -> list[Path]:
    """Delete the ``.<stem>.partial-<pid>.ipynb`` files of ``out_dir`` whose process is no longer running."""
    removed = []
    for path in sorted(out_dir.glob(".*.partial-*.ipynb")):
        match = _PARTIAL.match(path.name)
        if match is None:
            continue
        pid = int(match["pid"])
        try:
            os.kill(pid, 0)
            alive = pid != os.getpid()
        except ProcessLookupError:
            alive = False
        except PermissionError:  # another user's live process
            alive = True
        if not alive:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _failing_cell(output: Path, exec_count: int | None) -> str:
    """Describe the failing cell: its 1-based position in the *source* notebook and its first line.

    papermill adds cells to the executed copy (the injected parameters, red error banners); they are skipped
    so that the position is the one a reader finds in ``notebooks/``.
    """
    try:
        nb = _read_notebook(output)
    except (FileNotFoundError, ValueError):
        return "?"
    added = {"injected-parameters", "papermill-error-cell-tag"}
    source_cells = [c for c in nb.get("cells", []) if not added & set(c.get("metadata", {}).get("tags", []))]
    for position, cell in enumerate(source_cells, start=1):
        if cell.get("cell_type") == "code" and cell.get("execution_count") == exec_count and exec_count:
            first = _source(cell).strip().splitlines()[:1]
            return f"#{position} ({first[0][:60]!r})" if first else f"#{position}"
    return "?"


_NUMPY_REPR = re.compile(r"^np\.(?:float|int|bool_?)\w*\((.*)\)$")


def glued_values(path: str | Path) -> dict[str, Any]:
    """Values glued with ``myst_nb.glue`` in an executed notebook, parsed from their ``text/plain`` form.

    Numbers and other literals come back as Python values; anything else as its text.
    """
    nb = _read_notebook(Path(path))
    values: dict[str, Any] = {}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) or []:
            meta = out.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            prefix = meta.get("mime_prefix", "")
            text = out.get("data", {}).get(prefix + "text/plain")
            if text is None:
                values[meta["name"]] = None
                continue
            text = "".join(text) if isinstance(text, list) else text
            match = _NUMPY_REPR.match(text.strip())
            candidate = match.group(1) if match else text
            try:
                values[meta["name"]] = ast.literal_eval(candidate)
            except (ValueError, SyntaxError):
                values[meta["name"]] = text
    return values


#: Tag of the note cell that :func:`mark_profile` puts at the top of a chapter executed with another profile.
PROFILE_BANNER_TAG = "profile-banner"


def mark_profile(output: str | Path, profile: str) -> bool:
    """Put a note naming ``profile`` under the title of the executed chapter ``output`` when the profile is not
    ``default`` (a smoke build's numbers come from small samples and read differently), and take an earlier note
    away otherwise. The note is a markdown cell tagged :data:`PROFILE_BANNER_TAG`, so that a chapter that is
    current under two profiles is marked for the one it was last built with. Returns whether a note is there.
    """
    path = Path(output)
    nb = _read_notebook(path)
    cells = [c for c in nb.get("cells", []) if PROFILE_BANNER_TAG not in c.get("metadata", {}).get("tags", [])]
    marked = profile != "default"
    if marked:
        note = (f"```{{admonition}} Built with the {profile} profile\n:class: warning\n"
                f"This page was executed with the parameters of `profiles/{profile}.yaml`, not the book's default "
                f"ones: its numbers come from smaller samples and fewer systems, so they show how the chapter runs, "
                f"not what it finds. `make book` builds it with the default profile.\n```")
        first = next((i for i, c in enumerate(cells) if c.get("cell_type") == "markdown"), -1)
        cells.insert(first + 1, {"cell_type": "markdown", "id": "profile-banner",
                                 "metadata": {"tags": [PROFILE_BANNER_TAG]}, "source": note})
    if cells != nb.get("cells"):
        nb["cells"] = cells
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return marked


# --------------------------------------------------------------------------------------------------------------
# What `allocbias book execute` and `allocbias book check-html` run (the command line is allocbias.cli)
# --------------------------------------------------------------------------------------------------------------
def execute_all(profile: str, only: list[str] | None, out: Path, *, force: bool = False) -> int:
    """Execute the notebooks of ``_toc.yml`` (or ``only`` those stems) with ``profile`` into ``out``, skipping
    chapters whose executed copy is current unless ``force``; prints one line per chapter, returns the exit status
    (1 when a chapter failed). A bad profile or ``--only`` raises ``ValueError`` before the first kernel starts."""
    root = checkout_root()
    out_dir = out if out.is_absolute() else root / out
    print(f"[allocbias.book] checkout {root}", flush=True)
    notebooks = toc_notebooks(root=root)
    stems = {nb.stem for nb in notebooks}
    # the whole profile is checked before the first kernel starts (a typo in the last chapter stops the run now)
    params = validate_profile(load_profile(profile, root=root), notebooks, name=f"profiles/{profile}.yaml")
    if only:
        missing = sorted(set(only) - stems)
        if missing:
            raise ValueError(f"--only names notebooks not in _toc.yml: {', '.join(missing)}")
        notebooks = [nb for nb in notebooks if nb.stem in only]
    if out_dir.is_dir():
        for path in _remove_stale_partials(out_dir):
            print(f"[allocbias.book] removed {path.name}, left by an interrupted run", flush=True)
    environment = _environment_digest(root)  # lib/, the data folder and the installed packages: once per run
    failures, skipped = [], 0
    total = time.perf_counter()
    for nb in notebooks:
        given = params.get(nb.stem, {})
        output = out_dir / nb.name
        stamp = inputs_digest(nb, given, root=root, environment=environment)
        if not force and _recorded_digest(output) == stamp:
            print(f"[allocbias.book] current {nb.name}: inputs unchanged since it was executed, not re-run "
                  "(--force re-runs it)", flush=True)
            mark_profile(output, profile)
            skipped += 1
            continue
        print(f"[allocbias.book] executing {nb.name} (profile {profile}: {given or 'defaults'})", flush=True)
        try:
            result = execute_notebook(nb, output, given, root=root, stamp=stamp)
        except (NotebookExecutionError, ValueError, FileNotFoundError) as exc:
            print(f"[allocbias.book] FAILED: {exc}", file=sys.stderr, flush=True)
            failures.append(nb.name)
            continue
        mark_profile(output, profile)
        print(f"[allocbias.book] done {nb.name} in {result.seconds:.1f} s", flush=True)
    executed = len(notebooks) - len(failures) - skipped
    print(f"[allocbias.book] {executed} notebook(s) executed, {skipped} current, {len(failures)} failed "
          f"in {time.perf_counter() - total:.1f} s (profile {profile}, into {out_dir})", flush=True)
    if failures:
        print(f"[allocbias.book] failed: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


def check_html(html_dir: Path) -> int:
    """Every page of ``_toc.yml`` exists in the built HTML."""
    root = checkout_root()
    toc = _read_yaml(root / "_toc.yml")
    pages: list[str] = [str(toc["root"])]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                pages.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    missing = [p for p in pages if not (html_dir / f"{p}.html").exists()]
    for page in pages:
        print(f"[allocbias.book] {'MISSING' if page in missing else 'ok     '} {page}.html")
    if missing:
        print(f"[allocbias.book] {len(missing)} page(s) of _toc.yml missing from {html_dir}", file=sys.stderr)
        return 1
    print(f"[allocbias.book] all {len(pages)} pages of _toc.yml are in {html_dir}")
    return 0
