"""Tests for allocbias.store: resumable, content-addressed score tables."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.scoring import store as store_module
from allocbias.store import (
    ScoreStore,
    TableCheckError,
    _valid_prefix_length,
    canonical_json,
    content_hash,
    find_table,
    run_resumable,
    table_address,
)

KEY = {
    "kind": "pointwise",
    "model_key": "toy/model-1",
    "prompt_hash": "abc123",
    "params": {"labels": {"No": 0, "Yes": 1}},
}

# A scoring job as the study runs it: a deterministic fake model that takes a little time per batch.
WORKER = textwrap.dedent(
    """
    import hashlib, sys, time
    import pandas as pd
    from allocbias.store import ScoreStore, run_resumable

    root, n, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    items = pd.DataFrame({"prompt_id": [f"r{i:03d}" for i in range(n)], "text": [f"resume {i}" for i in range(n)]})

    def score(batch_df):
        time.sleep(0.03)
        h = [int(hashlib.sha256(p.encode()).hexdigest()[:8], 16) for p in batch_df["prompt_id"]]
        return pd.DataFrame({
            "prompt_id": batch_df["prompt_id"].to_numpy(),
            "score": [x / 2**32 for x in h],
            "label_mass": [0.5 + (x % 1000) / 2000 for x in h],
            "n_tokens": [len(t) for t in batch_df["text"]],
            "answer": [f'says "{x % 7}",\\nthen stops' for x in h],
            "detected": [x % 3 == 0 for x in h],
        })

    store = ScoreStore(root, kind="pointwise", model_key="toy/model-1", prompt_hash="abc123",
                       params={"labels": {"No": 0, "Yes": 1}}, command="python worker.py")
    run_resumable(store, items, score, batch_size=batch, progress=False)
    print("FINISHED", flush=True)
    """
)


def _run_worker(script: Path, root: Path, n: int, batch: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), str(root), str(n), str(batch)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def _rows_on_disk(store: ScoreStore) -> int:
    try:
        data = store.scores_path.read_bytes()
    except FileNotFoundError:
        return 0
    return max(data[: _valid_prefix_length(data)].count(b"\n") - 1, 0) // 2  # each row holds one quoted newline


def test_sigkill_mid_run_then_resume_equals_uninterrupted_run(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    n, batch = 60, 3

    reference_root = tmp_path / "reference"
    out = _run_worker(script, reference_root, n, batch)
    assert "FINISHED" in out.stdout
    reference = ScoreStore(reference_root, **KEY)

    root = tmp_path / "killed"
    store = ScoreStore(root, **KEY)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(root), str(n), str(batch)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while _rows_on_disk(store) < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        assert proc.poll() is None, "the worker finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    partial = ScoreStore(root, **KEY).read()
    assert 12 <= len(partial) < n

    out = _run_worker(script, root, n, batch)
    assert "FINISHED" in out.stdout
    resumed = ScoreStore(root, **KEY)
    table = resumed.read()
    assert table["prompt_id"].is_unique and len(table) == n
    pd.testing.assert_frame_equal(table, reference.read())
    # the raw files agree byte for byte too: nothing torn or duplicated was kept
    assert resumed.scores_path.read_bytes() == reference.scores_path.read_bytes()
    assert sorted(p.name for p in resumed.path.iterdir()) == ["provenance.json", "scores.csv"]

    prov, ref_prov = resumed.provenance, reference.provenance
    timing = {"created_utc", "updated_utc", "elapsed_s", "runs"}
    assert {k: v for k, v in prov.items() if k not in timing} == {k: v for k, v in ref_prov.items() if k not in timing}
    assert len(prov["runs"]) == 2 and len(ref_prov["runs"]) == 1
    assert prov["runs"][1]["rows_before"] == len(partial)
    assert prov["runs"][1]["rows_added"] == n - len(partial)
    assert prov["rows"] == n
    # elapsed accumulates over both runs: at least 0.03 s per completed batch
    assert prov["elapsed_s"] >= 0.03 * (n // batch) * 0.9
    assert prov["elapsed_s"] == pytest.approx(sum(r["elapsed_s"] for r in prov["runs"]), abs=0.01)


def test_torn_trailing_line_is_dropped_then_repaired(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(pd.DataFrame({"prompt_id": ["a", "b"], "score": [0.1, 0.2]}))
    with open(store.scores_path, "ab") as f:
        f.write(b"c,0.3")  # a write cut before its newline
    assert store.read()["prompt_id"].tolist() == ["a", "b"]
    assert store.done_ids() == {"a", "b"}
    store.append(pd.DataFrame({"prompt_id": ["c", "d"], "score": [0.3, 0.4]}))
    assert store.scores_path.read_text() == "prompt_id,score\na,0.1\nb,0.2\nc,0.3\nd,0.4\n"
    assert store.read()["score"].tolist() == [0.1, 0.2, 0.3, 0.4]


def test_torn_write_inside_a_quoted_newline_is_dropped(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(pd.DataFrame({"prompt_id": ["a"], "answer": ["one\nline"]}))
    with open(store.scores_path, "ab") as f:
        f.write(b'b,"two\n')  # ends with a newline, but inside an open quote: still torn
    assert store.read()["answer"].tolist() == ["one\nline"]
    store.append(pd.DataFrame({"prompt_id": ["b"], "answer": ['two\n"lines"']}))
    assert store.read()["answer"].tolist() == ["one\nline", 'two\n"lines"']


def test_torn_header_is_rewritten(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.path.mkdir(parents=True)
    store.scores_path.write_bytes(b"prompt_i")
    assert store.read().empty and store.done_ids() == set()
    store.append(pd.DataFrame({"prompt_id": ["a"], "score": [1.0]}))
    assert store.scores_path.read_text() == "prompt_id,score\na,1.0\n"


_text = st.text(alphabet=st.sampled_from(list('ab,"\n\r é;')), max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(_text, min_size=1, max_size=6),
    cut=st.floats(0, 1),
)
def test_any_cut_point_keeps_exactly_the_complete_rows(tmp_path_factory, texts, cut):
    root = tmp_path_factory.mktemp("cut")
    rows = pd.DataFrame(
        {
            "prompt_id": [f"id{i}" for i in range(len(texts))],
            "answer": texts,
            "score": np.linspace(0, 1, len(texts)) / 3,
        }
    )
    store = ScoreStore(root, **KEY)
    written, real = [], store_module._atomic_write_text
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "_atomic_write_text", lambda path, text: (written.append(text), real(path, text)))
        store.append(rows)
    full = store.scores_path.read_bytes()
    header_len = len(rows.head(0).to_csv(index=False, lineterminator="\n").encode())
    ends = header_len + np.cumsum(
        [len(rows.iloc[[i]].to_csv(index=False, header=False, lineterminator="\n").encode()) for i in range(len(rows))]
    )
    assert ends[-1] == len(full)
    at = int(round(cut * len(full)))
    store.scores_path.write_bytes(full[:at])
    # a kill during the append leaves the provenance as the append wrote it before its rows: the digest of the
    # (empty) table, which the append seals again only after its rows are on disk, and the rows it announced
    store.provenance_path.write_text(written[-2])
    assert json.loads(written[-2])["content_bytes"] == 0 and json.loads(written[-2])["pending"]["after_bytes"] == 0
    kept = int(np.sum(ends <= at)) if at >= header_len else 0
    table = ScoreStore(root, **KEY).read()
    assert table["prompt_id"].tolist() == rows["prompt_id"].tolist()[:kept]
    if kept:
        assert table["answer"].tolist() == texts[:kept]
    # resuming writes the rest and restores the whole table
    again = ScoreStore(root, **KEY)
    again.append(rows.iloc[kept:])
    pd.testing.assert_frame_equal(again.read(), store.read())
    assert again.read()["answer"].tolist() == texts


def test_column_kinds_round_trip(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    rows = pd.DataFrame(
        {
            "prompt_id": ["001", "1", "1.0"],
            "score": [1 / 3, np.nan, 1e-300],
            "n_tokens": [12, 7, 3],
            "detected": [True, False, True],
            "answer": ["001", "", "NA"],
        }
    )
    store.append(rows)
    got = store.read()
    assert got["prompt_id"].tolist() == ["001", "1", "1.0"]
    assert got["score"].iloc[0] == 1 / 3 and np.isnan(got["score"].iloc[1]) and got["score"].iloc[2] == 1e-300
    assert got["n_tokens"].tolist() == [12, 7, 3] and pd.api.types.is_integer_dtype(got["n_tokens"])
    assert got["detected"].tolist() == [True, False, True] and got["detected"].dtype == bool
    assert got["answer"].tolist() == ["001", "", "NA"]
    assert store.provenance["columns"] == {
        "prompt_id": "str",
        "score": "float",
        "n_tokens": "int",
        "detected": "bool",
        "answer": "str",
    }


def test_content_addressing(tmp_path):
    a = ScoreStore(tmp_path, **KEY)
    b = ScoreStore(tmp_path, **{**KEY, "params": {"labels": {"Yes": 1.0, "No": 0.0}}})
    assert a.address == b.address and a.path == b.path
    for change in (
        {"params": {"labels": {"No": 0, "Yes": 1}, "top_logprobs": 20}},
        {"params": {"labels": {"No": 0, "Yes": 2}}},
        {"prompt_hash": "abc124"},
        {"model_key": "toy/model-2"},
        {"kind": "pairwise"},
    ):
        other = ScoreStore(tmp_path, **{**KEY, **change})
        assert other.address != a.address and other.path != a.path
    assert (
        a.address
        == table_address(**KEY)
        == content_hash(
            {
                "kind": "pointwise",
                "model_key": "toy/model-1",
                "prompt_hash": "abc123",
                "params": {"labels": {"No": 0, "Yes": 1}},
            }
        )
    )
    assert a.path.name == f"pointwise-toy_model-1-{a.address[:16]}"
    assert len(a.address) == 64


def test_canonical_json_rules():
    assert canonical_json({"b": [1.0, 2.5], "a": np.int64(3)}) == '{"a":3,"b":[1,2.5]}'
    assert canonical_json({1: "x"}) == '{"1":"x"}'
    with pytest.raises(ValueError, match="non-finite"):
        canonical_json({"x": float("nan")})
    with pytest.raises(ValueError, match="set"):
        canonical_json({"x": {1, 2}})
    with pytest.raises(ValueError, match="collide"):
        canonical_json({1: "a", "1": "b"})
    frame = pd.DataFrame({"prompt_id": ["a"], "messages": [[{"role": "user", "content": "x"}]], "v": [np.nan]})
    assert canonical_json(frame) == (
        '{"columns":["prompt_id","messages","v"],"rows":[["a",[{"content":"x","role":"user"}],null]]}'
    )
    assert content_hash(frame) == content_hash(frame.copy()) != content_hash(frame.assign(v=1.0))


def test_provenance_fields(tmp_path):
    store = ScoreStore(tmp_path, **KEY, command="make scores MODEL=toy")
    items = pd.DataFrame({"prompt_id": ["a", "b", "c"]})
    run_resumable(store, items, lambda b: b.assign(score=0.5), batch_size=2, progress=False)
    prov = json.loads(store.provenance_path.read_text())
    for field in (
        "address",
        "kind",
        "model_key",
        "prompt_hash",
        "params",
        "command",
        "created_utc",
        "updated_utc",
        "elapsed_s",
        "rows",
        "columns",
        "versions",
        "hardware",
        "runs",
    ):
        assert field in prov, field
    assert prov["rows"] == 3 and prov["command"] == "make scores MODEL=toy"
    assert prov["params"] == {"labels": {"No": 0, "Yes": 1}}
    assert {"python", "allocbias", "numpy", "pandas"} <= set(prov["versions"])
    assert prov["hardware"]["cpu_count"] == os.cpu_count() and prov["hardware"]["cpu"]
    assert prov["created_utc"].endswith("+00:00")
    assert prov["runs"][0]["rows_before"] == 0 and prov["runs"][0]["rows_added"] == 3


def test_duplicates_and_bad_rows_are_rejected(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(pd.DataFrame({"prompt_id": ["a", "b"], "score": [0.1, 0.2]}))
    with pytest.raises(ValueError, match=r"already stored: \['b'\]"):
        store.append(pd.DataFrame({"prompt_id": ["c", "b"], "score": [0.3, 0.2]}))
    assert store.done_ids() == {"a", "b"}  # nothing of the rejected batch was written
    with pytest.raises(ValueError, match=r"repeat prompt_id values: \['c'\]"):
        store.append(pd.DataFrame({"prompt_id": ["c", "c"], "score": [0.3, 0.3]}))
    with pytest.raises(ValueError, match="no 'prompt_id' column"):
        store.append(pd.DataFrame({"id": ["c"], "score": [0.3]}))
    with pytest.raises(ValueError, match="differ from the stored header"):
        store.append(pd.DataFrame({"prompt_id": ["c"], "mass": [0.3]}))
    with pytest.raises(ValueError, match="missing prompt_id"):
        store.append(pd.DataFrame({"prompt_id": [None], "score": [0.3]}))
    with pytest.raises(ValueError, match="stored as float"):
        store.append(pd.DataFrame({"prompt_id": ["c"], "score": ["high"]}))
    with pytest.raises(ValueError, match="DataFrame"):
        store.append([{"prompt_id": "c"}])  # type: ignore[arg-type]
    store.append(pd.DataFrame({"score": [0.3], "prompt_id": ["c"]}))  # column order does not matter
    assert store.read()["prompt_id"].tolist() == ["a", "b", "c"]


def test_bad_keys_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="kind"):
        ScoreStore(tmp_path, **{**KEY, "kind": "point wise"})
    with pytest.raises(ValueError, match="model_key"):
        ScoreStore(tmp_path, **{**KEY, "model_key": ""})
    with pytest.raises(ValueError, match="params must be a mapping"):
        ScoreStore(tmp_path, **{**KEY, "params": [1, 2]})
    with pytest.raises(ValueError, match=r"params\.x"):
        ScoreStore(tmp_path, **{**KEY, "params": {"x": float("inf")}})


def test_mismatching_provenance_names_the_field(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(pd.DataFrame({"prompt_id": ["a"], "score": [0.1]}))
    prov = json.loads(store.provenance_path.read_text())
    prov["params"]["labels"]["Yes"] = 2
    store.provenance_path.write_text(json.dumps(prov))
    with pytest.raises(ValueError, match=r"'params\.labels'"):
        ScoreStore(tmp_path, **KEY)
    prov["params"]["labels"]["Yes"] = 1
    prov["model_key"] = "other"
    store.provenance_path.write_text(json.dumps(prov))
    with pytest.raises(ValueError, match="'model_key'"):
        find_table(tmp_path, **KEY)


def test_find_table(tmp_path):
    assert find_table(tmp_path, **KEY) is None
    store = ScoreStore(tmp_path, **KEY)
    store.append(pd.DataFrame({"prompt_id": ["a"], "score": [0.1]}))
    assert find_table(tmp_path, **KEY) == store.path
    assert find_table(tmp_path, **{**KEY, "prompt_hash": "zzz"}) is None


def test_run_resumable_checks_its_inputs(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    items = pd.DataFrame({"prompt_id": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="batch_size"):
        run_resumable(store, items, lambda b: b, batch_size=0, progress=False)
    with pytest.raises(ValueError, match=r"repeat prompt_id values: \['a'\]"):
        run_resumable(store, pd.DataFrame({"prompt_id": ["a", "a"]}), lambda b: b, batch_size=1, progress=False)
    with pytest.raises(ValueError, match="'prompt_id' column"):
        run_resumable(store, pd.DataFrame({"id": ["a"]}), lambda b: b, batch_size=1, progress=False)
    with pytest.raises(ValueError, match=r"missing \['b'\]"):
        run_resumable(store, items, lambda b: b.iloc[:1].assign(score=1.0), batch_size=2, progress=False)
    assert store.done_ids() == set()
    # a score function that fails half way keeps the finished batches
    calls = []

    def flaky(batch: pd.DataFrame) -> pd.DataFrame:
        calls.append(len(batch))
        if len(calls) == 2:
            raise RuntimeError("server went away")
        return batch.assign(score=1.0)

    with pytest.raises(RuntimeError, match="went away"):
        run_resumable(store, items, flaky, batch_size=2, progress=False)
    assert store.done_ids() == {"a", "b"}
    table = run_resumable(store, items, flaky, batch_size=2, progress=False)
    assert table["prompt_id"].tolist() == ["a", "b", "c"] and calls == [2, 1, 1]
    # nothing left to do: the score function is not called again
    assert run_resumable(store, items, flaky, batch_size=2, progress=False).equals(table) and calls == [2, 1, 1]


def test_record_model_is_kept_and_a_different_model_is_refused(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    meta = {"model": "toy", "package": "toy-pkg", "package_version": "1.0", "source_sha256": "ab" * 32,
            "dtype": "float32", "quantization": None}
    store.record_model(meta)
    run_resumable(store, pd.DataFrame({"prompt_id": ["a"]}), lambda b: b.assign(score=0.5), batch_size=1,
                  progress=False)
    assert json.loads(store.provenance_path.read_text())["model"] == meta
    reopened = ScoreStore(tmp_path, **KEY)
    reopened.record_model(meta)  # the same facts: accepted, nothing changes
    with pytest.raises(ValueError, match="package_version.*'1.0'.*'2.0'"):
        reopened.record_model({**meta, "package_version": "2.0"})
    with pytest.raises(ValueError, match="mapping"):
        reopened.record_model(["not", "a", "mapping"])
    assert json.loads(store.provenance_path.read_text())["model"]["package_version"] == "1.0"


def test_hardware_seen_after_the_run_began_is_recorded(tmp_path, monkeypatch):
    """A GPU becomes visible only once the scorer has imported torch (after the run began): the run's
    hardware is refreshed as rows arrive, so a GPU run is never recorded as a CPU-only one."""
    import allocbias.store as store_module

    seen = {"gpu": None}
    monkeypatch.setattr(store_module, "_hardware", lambda: {"cpu": "x", "cpu_count": 1, "gpu": seen["gpu"]})
    store = ScoreStore(tmp_path, **KEY)

    def score(batch):
        seen["gpu"] = ["Some GPU"]  # the model is loaded inside the first batch
        return batch.assign(score=0.5)

    run_resumable(store, pd.DataFrame({"prompt_id": ["a", "b", "c"]}), score, batch_size=2, progress=False)
    prov = json.loads(store.provenance_path.read_text())
    assert prov["runs"][0]["hardware"]["gpu"] == ["Some GPU"] and prov["hardware"]["gpu"] == ["Some GPU"]


# ------------------------------------------------------------------ a store that trusts only what it wrote (issue 38.4)
def _labelled(ids, p_yes):
    p = np.asarray(p_yes, dtype=float)
    return pd.DataFrame({"prompt_id": ids, "score": p, "label_mass": 0.5, "p_No": 1 - p, "p_Yes": p})


def test_a_row_added_by_hand_is_refused_and_never_sealed(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(_labelled(["a", "b", "c"], [0.2, 0.4, 0.6]))
    sealed = json.loads(store.provenance_path.read_text())
    made_up = _labelled(["d"], [0.95]).to_csv(index=False, header=False, lineterminator="\n")  # consistent, invented
    with store.scores_path.open("a") as f:
        f.write(made_up)
    again = ScoreStore(tmp_path, **KEY)
    with pytest.raises(TableCheckError, match=r"first offending prompt_id 'd': row 4 \(line 5 of scores.csv\) lies "
                                              r"after the 3 row\(s\) sealed .*not a row the scoring code announced"):
        again.read()
    # the next append (and a resumed run) refuses too, so the digest never comes to cover it
    with pytest.raises(TableCheckError, match="prompt_id 'd'"):
        again.append(_labelled(["e"], [0.5]))
    items = pd.DataFrame({"prompt_id": list("abcde")})
    with pytest.raises(TableCheckError, match="prompt_id 'd'"):
        run_resumable(again, items, lambda b: _labelled(b["prompt_id"], [0.5] * len(b)), batch_size=2, progress=False)
    assert json.loads(store.provenance_path.read_text())["content_sha256"] == sealed["content_sha256"]
    # repair keeps what the digests vouch for; the invented row's prompt is scored like any missing one
    assert again.repair() == (3, ["d"])
    table = run_resumable(again, items, lambda b: _labelled(b["prompt_id"], [0.5] * len(b)), batch_size=2,
                          progress=False)
    assert table["prompt_id"].tolist() == list("abcde") and table.set_index("prompt_id").loc["d", "score"] == 0.5


def test_rows_a_kill_left_still_read_but_a_row_added_after_them_does_not(tmp_path, monkeypatch):
    store = ScoreStore(tmp_path, **KEY)
    store.append(_labelled(["a", "b"], [0.2, 0.4]))
    written, real = [], store_module._atomic_write_text
    monkeypatch.setattr(store_module, "_atomic_write_text", lambda path, text: (written.append(text), real(path, text)))
    store.append(_labelled(["c", "d"], [0.6, 0.8]))
    monkeypatch.undo()
    store.provenance_path.write_text(written[-2])  # killed after the rows' fsync, before the seal
    assert ScoreStore(tmp_path, **KEY).read()["prompt_id"].tolist() == list("abcd")
    with store.scores_path.open("a") as f:
        f.write(_labelled(["z"], [0.9]).to_csv(index=False, header=False, lineterminator="\n"))
    with pytest.raises(TableCheckError, match=r"prompt_id 'z': row 5 .*lies after the 2 row\(s\) sealed"):
        ScoreStore(tmp_path, **KEY).read()
    assert ScoreStore(tmp_path, **KEY).repair() == (4, ["z"])  # the announced rows c and d are kept, and sealed
    prov = json.loads(store.provenance_path.read_text())
    assert "pending" not in prov and prov["rows"] == 4 and len(prov["record_sha256"]) == 5


@pytest.mark.parametrize("edit, where", [
    (lambda lines: lines[:2] + [lines[2].replace("0.4", "0.45")] + lines[3:], r"prompt_id 'b': .*row 2 \(line 3"),
    (lambda lines: lines[:1] + [lines[2], lines[1]] + lines[3:], r"prompt_id 'b': .*row 1 \(line 2"),
    (lambda lines: lines[:-1], r"ends after row 2, but provenance.json seals 3 rows"),
    (lambda lines: [lines[0].replace("label_mass,p_No", "p_No,label_mass")] + lines[1:], "the header line"),
])
def test_a_failed_digest_names_the_first_row_that_differs(tmp_path, edit, where):
    store = ScoreStore(tmp_path, **{**KEY, "params": {}})  # no label checks: only the digests can see the edit
    store.append(_labelled(["a", "b", "c"], [0.2, 0.4, 0.6]))
    lines = store.scores_path.read_text().splitlines(keepends=True)
    store.scores_path.write_text("".join(edit(lines)))
    with pytest.raises(TableCheckError, match="content digest mismatch: .*" if "header" in where else where) as err:
        ScoreStore(tmp_path, **{**KEY, "params": {}}).read()
    assert re.search(where, str(err.value)), str(err.value)


def test_the_repair_a_copied_table_suggests_names_its_own_folder(tmp_path):
    old, new = tmp_path / "audit-old", tmp_path / "audit-new"
    command = f"allocbias audit --model m --out {old} --jobs retail"
    ScoreStore(old / "scores", **KEY, command=command).append(_labelled(["a", "b"], [0.2, 0.4]))
    shutil.copytree(old, new)
    copied = ScoreStore(new / "scores", **KEY)
    copied.scores_path.write_text(copied.scores_path.read_text().replace("0.4", "0.3", 1).replace("0.6", "0.7", 1))
    with pytest.raises(TableCheckError) as err:
        ScoreStore(new / "scores", **KEY).read()
    message = str(err.value)
    assert f"allocbias store repair {copied.path}" in message and f"--out {new} " in message, message
    assert str(old) not in message, message


def test_the_committed_tables_carry_a_digest_for_every_record():
    from allocbias.scoring.catalog import scores_dir

    tables = sorted(scores_dir().glob("*/provenance.json"))
    assert tables
    for path in tables:
        prov = json.loads(path.read_text())
        assert len(prov["record_sha256"]) == prov["rows"] + 1 and "pending" not in prov, path
    small = min(tables, key=lambda p: (p.parent / "scores.csv").stat().st_size)
    prov = json.loads(small.read_text())
    assert store_module._record_digests(prov["address"], (small.parent / "scores.csv").read_bytes()) == \
        prov["record_sha256"]


def test_a_full_disk_during_an_append_names_the_file_and_keeps_the_stored_rows(tmp_path, monkeypatch):
    import errno

    store = ScoreStore(tmp_path, **KEY)
    store.append(_labelled(["a", "b"], [0.2, 0.4]))

    class Disk:  # os as the store sees it, on a disk that fills up after a few bytes
        def __getattr__(self, attr):
            return getattr(os, attr)

        @staticmethod
        def write(fd, data):
            os.write(fd, data[:10])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module, "os", Disk())
    with pytest.raises(OSError, match=r"could not write \S*scores\.csv: No space left on device; the 2 row\(s\) "
                                      r"stored before are kept"):
        store.append(_labelled(["c", "d"], [0.6, 0.8]))
    monkeypatch.undo()
    assert ScoreStore(tmp_path, **KEY).read()["prompt_id"].tolist() == ["a", "b"]  # the torn bytes are never read
    store.append(_labelled(["c", "d"], [0.6, 0.8]))
    assert ScoreStore(tmp_path, **KEY).read()["prompt_id"].tolist() == list("abcd")
