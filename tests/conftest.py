"""Shared fixtures: notebooks executed once per test session under the smoke profile."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from allocbias.book import execute_notebook, glued_values, load_profile, notebook_parameters, repo_root  # noqa: E402

ROOT = repo_root()
GLUE_TEXT = re.compile(r"\{glue:text\}`([^`:]+)")


@pytest.fixture(scope="session")
def smoke_notebook(tmp_path_factory):
    """Execute a notebook (by stem) with the smoke profile once per session; returns (path, glued values)."""
    cache: dict[str, tuple[Path, dict]] = {}
    out_dir = tmp_path_factory.mktemp("executed")
    profile = load_profile("smoke", root=ROOT)

    def run(stem: str) -> tuple[Path, dict]:
        if stem not in cache:
            source = ROOT / "notebooks" / f"{stem}.ipynb"
            result = execute_notebook(source, out_dir / source.name, profile.get(stem, {}), cwd=ROOT)
            cache[stem] = (result.output, glued_values(result.output))
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


def assert_findings_glue(values: dict, stem: str, *, types: tuple[type, ...] = (int, float, str),
                         unquoted: re.Pattern | None = None) -> None:
    """Assert that a findings object's ``values`` (its ``glue_values()``) hold every key the prose of chapter
    ``stem`` quotes (``{glue:text}`key```; keys matching ``unquoted`` aside, glued only for some parameters),
    each as a plain value of one of ``types``."""
    quoted = {k for k in GLUE_TEXT.findall(markdown_text(ROOT / "notebooks" / f"{stem}.ipynb"))
              if not (unquoted and unquoted.match(k))}
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
