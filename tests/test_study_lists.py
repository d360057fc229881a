"""The study's metric and gap lists are defined once (``allocbias.metrics``) and used by the library and the
chapters, never redefined as literals."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

import allocbias
from allocbias import audit, metrics, validity
from allocbias.metrics import ABS_GAP_METRICS, STUDY_GAPS, STUDY_METRICS
from allocbias.study import real_scores

LIB = Path(allocbias.__file__).parent
ROOT = LIB.parent.parent
_LIST = r"""[\[(]\s*(?:"rabbi",\s*"avg_gap",\s*"jsd",\s*"emd"|"dDP",\s*"dEO")\s*,?\s*[\])]"""
#: a line that only defines names as the metric or gap list spelt out: ``METRICS, GAPS = [...], [...]``
LITERAL_DEFINITION = re.compile(rf"^\s*\w+(?:\s*,\s*\w+)*\s*=\s*{_LIST}(?:\s*,\s*{_LIST})*\s*(?:#.*)?$", re.MULTILINE)


def test_the_lists():
    assert STUDY_METRICS == ("rabbi", "avg_gap", "jsd", "emd") and STUDY_GAPS == ("dDP", "dEO")
    assert set(ABS_GAP_METRICS) < set(STUDY_METRICS) and ABS_GAP_METRICS == ("jsd", "emd")


def test_the_library_uses_them():
    for fn in (validity.validity_table, validity.validity_decomposition, validity.ndcg_table):
        params = inspect.signature(fn).parameters
        assert params["metrics"].default == STUDY_METRICS and params["gaps"].default == STUDY_GAPS, fn.__name__
    assert validity.CONTROL_METRICS == STUDY_METRICS and real_scores.METRICS == STUDY_METRICS
    assert dict(validity.DEFAULT_ABS_GAP) == dict.fromkeys(ABS_GAP_METRICS, True)
    scores = pd.DataFrame({"job": "j", "group": ["A", "B"] * 6, "full_name": [f"n{i}" for i in range(12)],
                           "score": np.arange(12.0)})
    table = metrics.bias_table(scores, "score", "group", "B")
    assert set(STUDY_METRICS) <= set(table.columns)
    assert list(audit.metric_intervals(scores, 20, 0, reference="B")["metric"].unique()) == list(STUDY_METRICS)


def test_no_module_or_chapter_redefines_them():
    """The literal lists appear only where they are defined; chapters take the library's constants."""
    literal = []
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
                values = tuple(e.value for e in node.elts)
                if values in (STUDY_METRICS, STUDY_GAPS) and path.name != "metrics.py":
                    literal.append(f"{path.relative_to(LIB).as_posix()}:{node.lineno}")
    assert literal == [], f"the metric or gap list spelt out in the library: {literal}"
    chapters = {}
    for path in [*sorted(ROOT.glob("notebooks/*.ipynb")), *sorted(LIB.glob("resources/*.ipynb"))]:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        bad = [m.group(0).strip() for m in LITERAL_DEFINITION.finditer(code)]
        if bad:
            chapters[path.name] = bad
    assert chapters == {}, chapters
