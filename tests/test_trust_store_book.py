"""Issue 21, items 9-14: the score store and the book runner refuse bad input with an error that names it, and
the book is built from the checkout it is run in. Each test failed on the code before the change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allocbias.store import RowCheckError, ScoreStore

LIB = Path(__file__).resolve().parents[1] / "lib"
LABELS = {"No": 0, "Yes": 1}
KEY = dict(kind="resume_pointwise", model_key="toy@fp32", prompt_hash="p", params={"labels": LABELS})


def _rows(start, n):
    p_yes = np.linspace(0.2, 0.8, n)
    return pd.DataFrame({"prompt_id": [f"job/r{i}" for i in range(start, start + n)], "score": p_yes,
                         "label_mass": np.full(n, 0.5), "p_No": 1 - p_yes, "p_Yes": p_yes})


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("ALLOCBIAS_ROOT", "ALLOCBIAS_DATA")}
    env["PYTHONPATH"] = os.pathsep.join([str(LIB), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**env, **extra}


# ------------------------------------------------------------------------------------- item 9: append validates
def test_append_refuses_rows_the_reader_would_refuse_and_keeps_what_is_stored(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(_rows(0, 3))
    before = (store.scores_path.read_bytes(), store.provenance_path.read_bytes())
    bad = _rows(3, 3)
    bad.loc[1, ["score", "p_No", "p_Yes"]] = 1.0  # the label probabilities of job/r4 sum to 2
    with pytest.raises(RowCheckError) as err:
        store.append(bad)
    msg = str(err.value)
    for part in (str(store.scores_path), "system 'toy@fp32'", "resume_pointwise", "'job/r4'", "do not sum to 1",
                 "nothing was written", "3 row(s) already stored"):
        assert part in msg, (part, msg)
    assert (store.scores_path.read_bytes(), store.provenance_path.read_bytes()) == before
    assert ScoreStore(tmp_path, **KEY).read()["prompt_id"].tolist() == ["job/r0", "job/r1", "job/r2"]
    # a refused first append leaves no table behind
    fresh = ScoreStore(tmp_path / "fresh", **KEY)
    with pytest.raises(RowCheckError, match="'job/r4'.*do not sum to 1.*0 row"):
        fresh.append(bad)
    assert not fresh.scores_path.exists() and not fresh.provenance_path.exists()


# ---------------------------------------------------------------------------- item 13: check names every table
def test_store_check_names_every_bad_table_without_a_traceback(tmp_path):
    good = ScoreStore(tmp_path, **KEY)
    good.append(_rows(0, 3))
    edited = ScoreStore(tmp_path, **{**KEY, "model_key": "edited"})
    edited.append(_rows(0, 3))
    edited.scores_path.write_text(edited.scores_path.read_text().replace("0.5,", "0.25,", 1))
    orphan = ScoreStore(tmp_path, **{**KEY, "model_key": "orphan"})
    orphan.append(_rows(0, 3))
    orphan.provenance_path.unlink()
    run = subprocess.run([sys.executable, "-m", "allocbias.store", "check", str(tmp_path)],
                         capture_output=True, text=True, env=_env())
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "Traceback" not in out, out
    assert f"ok        {good.path.name}: 3 rows" in out
    assert f"BAD       {edited.path.name}: " in out and "content digest mismatch" in out
    assert f"BAD       {orphan.path.name}: " in out and "no provenance.json" in out
    assert "3 table(s)" in out and "1 good, 2 bad" in out
    with_tb = subprocess.run([sys.executable, "-m", "allocbias.store", "check", str(tmp_path), "--traceback"],
                             capture_output=True, text=True, env=_env())
    assert with_tb.returncode == 1 and with_tb.stderr.count("Traceback") == 2, with_tb.stderr
