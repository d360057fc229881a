"""`make test` re-executes the fast chapters with nbval and compares every output (tests/nbval_sanitize.cfg masks
timings only), so a chapter that stops being deterministic fails.

The machinery is tested on two tiny notebooks executed the way the book executes its chapters
(``allocbias.book.execute_notebook``, papermill with injected parameters) and then re-executed by nbval with the
options of the Makefile: a seeded one that also glues a timing passes; the same one unseeded fails.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from allocbias.book import PARAMETERS_MARKER, execute_notebook, toc_notebooks

from .conftest import ROOT

pytestmark = pytest.mark.notebooks

SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"


def _makefile_rule(target: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, flags=re.MULTILINE)
    assert match, f"the Makefile has no rule {target!r}"
    return match.group(1).replace("\\\n", " ")


def test_make_test_runs_nbval_on_the_fast_chapters() -> None:
    assert "$(MAKE) --no-print-directory test-nbval" in _makefile_rule("test")
    rule = _makefile_rule("test-nbval")
    assert "-m allocbias.book execute --profile smoke --only $(NBVAL_CHAPTERS) --out build/smoke" in rule
    for option in ("--nbval ", "--nbval-current-env", "-p tests.nbval_history",
                   "--nbval-sanitize-with tests/nbval_sanitize.cfg"):
        assert option in rule, option
    assert "--nbval-lax" not in rule  # every output is compared, not only the cells marked for it
    chapters = re.search(r"^NBVAL_CHAPTERS := (.*)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE).group(1)
    stems = {nb.stem for nb in toc_notebooks(root=ROOT)}
    assert {"03_decisions", "13_why_averages_fail", "14_local_law_144"} <= set(chapters.split()) <= stems
    assert len(set(chapters.split())) >= 6  # issue 23: nbval guards at least six chapters


def test_the_sanitize_config_masks_only_timings_and_the_random_ids_of_styled_tables() -> None:
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8"))
    assert len(patterns) == 3

    def clean(text: str) -> str:
        for regex, replace in patterns:
            text = re.sub(regex, replace, text)
        return text

    assert clean("'1.3 s'") == clean("'12 s'") == "'<seconds> s'"
    html = '<style type="text/css">#T_3f2a1_row0_col0 {color: red}</style><table id="T_3f2a1">'
    assert clean(html) == '<style type="text/css">#T_<id>_row0_col0 {color: red}</style><table id="T_<id>">'
    assert clean("<pandas.io.formats.style.Styler at 0x7f3c2a1b9d50>") == "<pandas.io.formats.style.Styler at 0x<address>>"
    # values are never masked: numbers, words, a cell's text that merely looks like an id
    for other in ("1.3", "0.8333333333333334", "'retail'", "'1.3 s and more'", "[1.3, 2.0]", "<td>0.125</td>",
                  "T_3f2a1x", "<object at 0x7f3c2a1b9d50>"):
        assert clean(other) == other


def _notebook(seeded: bool) -> dict:
    rng = "np.random.default_rng(seed)" if seeded else "np.random.default_rng()"
    cells = [
        (f"{PARAMETERS_MARKER}\nseed = 0  # random seed", ["parameters"]),
        ("from allocbias.book import check_parameters\n\ncheck_parameters()\n"
         "import time\n\nimport numpy as np\nfrom myst_nb import glue\n\nstart = time.perf_counter()", []),
        (f"values = {rng}.normal(size=3)\nprint(values.round(6).tolist())\n"
         "glue('took', f'{time.perf_counter() - start + 0.01:.2f} s', display=False)", []),
    ]
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {"tags": tags},
                   "outputs": [], "source": src} for i, (src, tags) in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def _executed_then_nbval(tmp_path: Path, seeded: bool) -> subprocess.CompletedProcess:
    source = tmp_path / "source.ipynb"
    source.write_text(json.dumps(_notebook(seeded)), encoding="utf-8")
    executed = execute_notebook(source, tmp_path / "executed.ipynb", {"seed": 3}, cwd=ROOT).output
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.nbval_history", "--nbval",
         "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE), "--rootdir", str(tmp_path), str(executed)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )


def test_nbval_passes_a_deterministic_notebook_with_a_timing(tmp_path: Path) -> None:
    run = _executed_then_nbval(tmp_path, seeded=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout  # the parameters cell, the injected one, and the two cells above


def test_nbval_fails_a_notebook_that_is_not_deterministic(tmp_path: Path) -> None:
    run = _executed_then_nbval(tmp_path, seeded=False)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 3 passed" in run.stdout
    assert "Cell outputs differ" in run.stdout
