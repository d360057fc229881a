"""Score tables that vouch for themselves (issue 14): each case below was read silently on the main branch
before this change (or failed with a message that named no file, system or row)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from allocbias.scoring import catalog
from allocbias.store import ScoreStore, TableCheckError

LABELS = {"No": 0, "Yes": 1}
KEY = dict(kind="resume_pointwise", model_key="toy@fp32", prompt_hash="p", params={"labels": LABELS},
           command="python scripts/score_study.py resume_pointwise --systems toy")


def _rows(n=4):
    p_yes = np.linspace(0.2, 0.8, n)
    return pd.DataFrame({"prompt_id": [f"job/r{i}/Name {i}" for i in range(n)], "score": p_yes,
                         "label_mass": np.full(n, 0.5), "p_No": 1 - p_yes, "p_Yes": p_yes, "n_tokens": 10 + np.arange(n)})


def _store(tmp_path):
    store = ScoreStore(tmp_path, **KEY)
    store.append(_rows())
    return store


def _rewrite(store, edit, *, redigest):
    """Edit scores.csv as text; with ``redigest`` also record the new digest (as buggy code would have), so that
    the content checks, not the digest, must catch the edit."""
    text = edit(store.scores_path.read_text())
    store.scores_path.write_text(text)
    if redigest:
        prov = json.loads(store.provenance_path.read_text())
        prov.update(content_sha256=hashlib.sha256(text.encode()).hexdigest(), content_bytes=len(text.encode()))
        store.provenance_path.write_text(json.dumps(prov))
    return ScoreStore(store.root, **KEY)


def test_a_clean_table_reads(tmp_path):
    store = _store(tmp_path)
    assert len(ScoreStore(tmp_path, **KEY).read()) == 4
    assert store.provenance["content_bytes"] == len(store.scores_path.read_bytes())


def test_score_out_of_range_names_path_system_row_and_restore(tmp_path):
    store = _store(tmp_path)
    again = _rewrite(store, lambda t: t.replace("\njob/r1/Name 1,0.4,", "\njob/r1/Name 1,7.5,"), redigest=True)
    with pytest.raises(TableCheckError) as err:
        again.read()
    msg = str(err.value)
    for part in (str(store.scores_path), "'toy@fp32'", "'job/r1/Name 1'", "score", "git checkout --",
                 "python scripts/score_study.py resume_pointwise --systems toy"):
        assert part in msg, (part, msg)


def test_conflicting_duplicate_prompt_id_is_refused(tmp_path):
    store = _store(tmp_path)
    again = _rewrite(store, lambda t: t + t.splitlines()[2].replace("0.4", "0.9", 1) + "\n", redigest=True)
    with pytest.raises(TableCheckError, match=r"first offending prompt_id 'job/r1/Name 1'.*more than one row"):
        again.read()


def test_swapped_score_and_p_no_columns_are_refused(tmp_path):
    store = _store(tmp_path)

    def swap(text):
        return text.replace("prompt_id,score,label_mass,p_No,", "prompt_id,p_No,label_mass,score,", 1)

    again = _rewrite(store, swap, redigest=True)
    with pytest.raises(TableCheckError, match=r"first offending prompt_id 'job/r0/Name 0'"):
        again.read()


def test_label_probabilities_not_summing_to_one_are_refused(tmp_path):
    store = _store(tmp_path)
    again = _rewrite(store, lambda t: t.replace(",0.5,0.8,0.2,", ",0.5,0.9,0.2,"), redigest=True)
    with pytest.raises(TableCheckError, match=r"do not sum to 1"):
        again.read()


def test_another_tables_rows_under_this_provenance_fail_the_digest(tmp_path):
    store = _store(tmp_path)
    other = _rows().assign(p_Yes=lambda d: d["p_Yes"] / 2).assign(score=lambda d: d["p_Yes"], p_No=lambda d: 1 - d["p_Yes"])
    store.scores_path.write_text(other.to_csv(index=False, lineterminator="\n"))  # consistent rows, wrong table
    with pytest.raises(TableCheckError, match=r"content digest mismatch.*copied from another table"):
        ScoreStore(tmp_path, **KEY).read()


def test_renamed_header_names_the_columns(tmp_path):
    store = _store(tmp_path)
    again = _rewrite(store, lambda t: t.replace("label_mass", "mass", 1), redigest=False)
    with pytest.raises(TableCheckError, match=r"header .*'mass'.* differs from the columns the provenance declares"):
        again.read()


def test_missing_provenance_says_so(tmp_path):
    store = _store(tmp_path)
    store.provenance_path.unlink()
    with pytest.raises(TableCheckError, match=r"has scores.csv but no provenance.json"):
        ScoreStore(tmp_path, **KEY).read()


def test_table_without_digest_is_refused_until_migrated_and_migration_leaves_rows_untouched(tmp_path):
    store = _store(tmp_path)
    prov = json.loads(store.provenance_path.read_text())
    del prov["content_sha256"], prov["content_bytes"]
    store.provenance_path.write_text(json.dumps(prov, indent=2, sort_keys=True) + "\n")
    before = store.scores_path.read_bytes()
    with pytest.raises(TableCheckError, match=r"no content digest.*record-digests"):
        ScoreStore(tmp_path, **KEY).read()
    out = subprocess.run([sys.executable, "-m", "allocbias.store", "record-digests", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "recorded" in out
    assert store.scores_path.read_bytes() == before
    assert len(ScoreStore(tmp_path, **KEY).read()) == 4


def test_committed_tables_carry_digests_and_pass_every_check():
    tables = sorted(catalog.scores_dir().glob("*/provenance.json"))
    assert tables
    for prov_path in tables:
        prov = json.loads(prov_path.read_text())
        assert len(prov["content_sha256"]) == 64, prov_path
        store = ScoreStore(prov_path.parent.parent, kind=prov["kind"], model_key=prov["model_key"],
                           prompt_hash=prov["prompt_hash"], params=prov["params"])
        assert len(store.read()) == prov["rows"], prov_path


def test_missing_scores_root_folder_says_so(tmp_path):
    with pytest.raises(ValueError, match=r"scores_root .*nope does not exist \(no such folder\)"):
        catalog.study_scores("smollm2-fp32-paper", jobs=["retail"], root=tmp_path / "nope")


def test_kill_between_rows_and_digest_keeps_the_rows(tmp_path, monkeypatch):
    """An append killed after its rows were fsync-ed but before the provenance recorded their digest."""
    from allocbias.scoring import store as store_module

    store = _store(tmp_path)
    written, real = [], store_module._atomic_write_text
    monkeypatch.setattr(store_module, "_atomic_write_text", lambda path, text: (written.append(text), real(path, text)))
    store.append(_rows(6).iloc[4:])
    store.provenance_path.write_text(written[-2])  # the provenance as the killed append left it: rows announced
    assert len(ScoreStore(tmp_path, **KEY).read()) == 6
