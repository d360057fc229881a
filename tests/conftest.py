"""Shared fixtures: notebooks executed once per test session under the smoke profile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from allocbias.book import execute_notebook, glued_values, load_profile, repo_root  # noqa: E402

ROOT = repo_root()


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
