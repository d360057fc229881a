"""Tests of allocbias.audited.public_scores (the three public audits' committed tables) and of their build scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allocbias.audited import public_scores as P
from allocbias.data import data_dir
from allocbias.audited.datasets import DigestError

from .conftest import ROOT, load_script


def _script(name: str):
    """A build script imported as a module (its functions are tested without a fetched source)."""
    return load_script(name)


# ----------------------------------------------------------------------------------------------------
# the committed tables: the counts the issue and the data cards state
# ----------------------------------------------------------------------------------------------------
def test_lippens_counts_pools_and_groups():
    s = P.load_lippens()
    assert len(s) == 34_560
    assert s["vacancy_id"].nunique() == 1_920 and s["job_type"].nunique() == 64
    assert s.groupby("job_type")["vacancy_id"].nunique().eq(30).all()
    per_pool = s.groupby("vacancy_id")["group"].agg(["size", "nunique"])
    assert (per_pool["size"] == 18).all() and (per_pool["nunique"] == 18).all()
    assert set(s["origin"]) == set(P.LIPPENS_ORIGINS) and set(s["sex"]) == {"Male", "Female"}
    assert P.LIPPENS_REFERENCE in set(s["group"]) and s["group"].value_counts().eq(1_920).all()
    assert s["valid"].all() and s["score"].between(1, 100).all() and (s["score"] % 1 == 0).all()
    assert int((~s["bare_output"]).sum()) == 1_050
    assert int(s["recoded"].sum()) == 3  # three bare "0" answers, outside the 1-100 scale, scored 1 by Lippens
    assert not (s["recoded"] & s["bare_output"]).any()
    assert s.groupby("job_type")["experience"].first().isin([0, 2, 5]).all()


def test_recinq_results_counts_flags_and_groups():
    r = P.load_recinq()
    assert len(r) == 32_215
    assert (r["model"].nunique(), r["job"].nunique(), r["variant"].nunique(), r["run"].nunique()) == (11, 17, 37, 5)
    bad = r[~r["valid"]]
    assert len(bad) == 22 and set(bad["model"]) == {"mistral-large"}
    assert bad["score"].isna().all() and (bad["interview"] == "").all() and (bad["problem"] != "").all()
    assert r.loc[r["valid"], "score"].between(1, 10).all()
    assert set(r.loc[r["valid"], "interview"]) == {"yes", "maybe", "no"}
    names = r[r["axis"] == "firstName"]
    assert names.groupby("variant")["group"].first().to_dict() == P.RECINQ_NAME_GROUPS
    assert P.RECINQ_REFERENCE in set(r["variant"])
    # placebos: 7 variants, only the seven non-Claude models, collected after everything else
    plac = r[r["placebo"]]
    assert plac["variant"].nunique() == 7 and plac["model"].nunique() == 7
    assert not plac["model"].str.startswith("claude").any()
    assert plac["timestamp"].min() > r.loc[~r["placebo"], "timestamp"].max()
    assert (r.loc[r["axis"] == "baseline", "group"] == "baseline").all()


def test_recinq_prompt_lab_and_clean():
    lab = P.load_recinq("prompt_lab")
    assert len(lab) == 5_280 and lab["strategy"].nunique() == 6 and lab["valid"].all()
    assert lab.groupby(["strategy", "model", "job", "variant"]).size().eq(10).all()
    clean = P.load_recinq("clean")
    assert len(clean) == 2_720 and set(clean["model"]) == {"claude-opus", "claude-sonnet", "claude-haiku",
                                                           "claude-fable-5"}
    assert clean["variant"].nunique() == 8 and clean["placebo"].sum() == 4 * 17 * 7 * 5
    assert "strategy" not in clean.columns


def test_jderbysh_counts_missing_and_qualified():
    j = P.load_jderbysh()
    assert len(j) == 14_580
    per = j.groupby("model")["valid"].agg(["size", "sum"])
    assert per.loc["gpt-3.5-turbo-0125"].tolist() == [2_916, 2_761]
    assert per.loc["gpt-5.1-2025-11-13"].tolist() == [11_664, 11_664]
    assert j.groupby("group")["name"].nunique().eq(9).all() and j["name"].nunique() == 36
    assert j["pair"].nunique() == 81 and j.loc[j["qualified"], "pair"].nunique() == 27
    assert (j["qualified"] == (j["job"].str[3] == j["resume"].str[6])).all()
    ok = j[j["valid"]]
    assert (ok["score"] == ok[["experience", "skills", "achievements", "resume_quality"]].sum(axis=1)).all()
    assert j.loc[~j["valid"], ["experience", "score"]].isna().all().all()
    # gpt-5.1: runs 1-3 asked the 27 same-industry pairs only, runs 4-6 all 81
    g5 = j[j["model"].str.startswith("gpt-5.1")]
    assert g5.groupby("run")["pair"].nunique().to_dict() == {1: 27, 2: 27, 3: 27, 4: 81, 5: 81, 6: 81}
    assert not j.duplicated(["model", "run", "pair", "name"]).any()


# ----------------------------------------------------------------------------------------------------
# refusals of bad tables: a user's copy (path=) is checked column by column, naming file, column and line
# ----------------------------------------------------------------------------------------------------
def _copy(tmp_path: Path, rel: str, edit) -> Path:
    frame = pd.read_csv(data_dir() / rel, dtype=str, keep_default_na=False)
    frame = edit(frame)
    out = tmp_path / Path(rel).name
    frame.to_csv(out, index=False)
    return out


def _set(row: int, column: str, value: str):
    def edit(frame):
        frame.loc[row, column] = value
        return frame
    return edit


@pytest.mark.parametrize(("rel", "loader", "edit", "message"), [
    ("lippens/scores.csv", P.load_lippens, _set(4, "score", "101"), r"column 'score', line 6: '101' is outside"),
    ("lippens/scores.csv", P.load_lippens, _set(2, "score", "sixty"), r"column 'score', line 4: 'sixty' is not a number"),
    ("lippens/scores.csv", P.load_lippens, _set(0, "origin", "Dutch"), r"column 'origin', line 2: 'Dutch' is not one of"),
    ("lippens/scores.csv", P.load_lippens, _set(7, "sex", "M"), r"column 'sex', line 9"),
    ("lippens/scores.csv", P.load_lippens, _set(3, "bare_output", "yes"), r"column 'bare_output', line 5: 'yes' is not True/False"),
    ("lippens/scores.csv", P.load_lippens, lambda f: f.drop(columns="temperature"), r"missing \['temperature'\]"),
    ("lippens/scores.csv", P.load_lippens, _set(1, "origin", "Belgian"), r"line 3 repeats the key"),
    ("lippens/scores.csv", P.load_lippens, _set(5, "job_type", "adm-emp_exp2"), r"column 'job_type', line 7"),
    ("recinq/results.csv", P.load_recinq, _set(3, "score", "11"), r"column 'score', line 5: '11' is outside \[1, 10\]"),
    ("recinq/results.csv", P.load_recinq, _set(3, "score", ""), r"column 'problem', line 5: '' disagrees with the score"),
    ("recinq/results.csv", P.load_recinq, _set(3, "interview", "hire"), r"column 'interview', line 5: 'hire'"),
    ("recinq/results.csv", P.load_recinq, _set(3, "level", "chile"), r"column 'variant', line 5"),
    ("recinq/results.csv", P.load_recinq, _set(1, "run", "1"), r"line 3 repeats the key"),
    ("jderbysh/scores.csv", P.load_jderbysh, _set(0, "skills", "26"), r"column 'skills', line 2: '26' is outside \[0, 25\]"),
    ("jderbysh/scores.csv", P.load_jderbysh, _set(0, "score", "68"), r"column 'score', line 2: '68' is not the sum"),
    ("jderbysh/scores.csv", P.load_jderbysh, _set(0, "missing", "True"), r"column 'missing', line 2: 'True' disagrees"),
    ("jderbysh/scores.csv", P.load_jderbysh, _set(0, "race", "Black"), r"column 'race', line 2: 'Black' is not one of"),
    ("jderbysh/scores.csv", P.load_jderbysh, _set(0, "job", "job1"), r"column 'job', line 2: 'job1'"),
])
def test_loaders_name_file_column_and_line_of_a_bad_value(tmp_path, rel, loader, edit, message):
    path = _copy(tmp_path, rel, edit)
    with pytest.raises(ValueError, match=message) as info:
        loader(path=path)
    assert str(path) in str(info.value)


def test_recinq_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match=r"kind must be one of \['results', 'prompt_lab', 'clean'\], got 'audit'"):
        P.load_recinq("audit")


def test_a_changed_committed_table_is_refused_by_its_digest(tmp_path):
    folder = tmp_path / "jderbysh"
    shutil.copytree(data_dir() / "jderbysh", folder)
    table = folder / "scores.csv"
    table.write_bytes(table.read_bytes().replace(b",67,False\n", b",66,False\n", 1))
    with pytest.raises(DigestError, match="does not match its data card"):
        P.load_jderbysh(path=table)


def test_a_user_table_is_read_and_flags_a_missing_score(tmp_path):
    path = _copy(tmp_path, "lippens/scores.csv", _set(0, "score", ""))
    scores = P.load_lippens(path=path)
    assert np.isnan(scores.loc[0, "score"]) and not scores.loc[0, "valid"] and scores["valid"].sum() == 34_559


# ----------------------------------------------------------------------------------------------------
# the build scripts' own logic, without a fetched source
# ----------------------------------------------------------------------------------------------------
def test_jderbysh_alignment_keeps_a_missing_call_as_a_flagged_row():
    build = _script("build_jderbysh")
    names = [("Emily", "Female", "White"), ("Jamal", "Male", "African American")]
    calls = build.expected(names, 1, matched_only=False)
    assert len(calls) == 2 * 81 and calls[0] == (1, "job11", "resume11", "Emily")
    rows = pd.DataFrame([(n, j + ".txt", r + ".txt") for _, j, r, n in calls],
                        columns=["name", "job_file", "resume_file"]).drop(index=[5, 100]).reset_index(drop=True)
    aligned = build.align("x.csv", rows, calls)
    assert [i for i, r in enumerate(aligned) if r is None] == [5, 100]
    with pytest.raises(SystemExit, match="out of simulation.py's order"):
        build.align("x.csv", rows.iloc[::-1].reset_index(drop=True), calls)
    assert len(build.expected(names, 3, matched_only=True)) == 3 * 2 * 27


@pytest.mark.parametrize(("response", "problem"), [
    ({"score": 7, "recommend_interview": "yes"}, ""),
    ({}, "empty answer"),
    ({"No": "x"}, "no score in answer (keys: No)"),
    ({"score": 0, "recommend_interview": "no"}, "score 0 outside 1-10"),
    ({"score": "7", "recommend_interview": "no"}, "score '7' outside 1-10"),
    ({"score": 5, "recommend_interview": "perhaps"}, "interview 'perhaps' not yes/maybe/no"),
    (None, "response is not an object"),
])
def test_recinq_problem_of_each_kind_of_answer(response, problem):
    assert _script("build_recinq").problem_of(response) == problem


# ----------------------------------------------------------------------------------------------------
# the committed tables regenerate byte for byte from a fetched copy of each repository
# ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("env", "script", "repo"), [
    ("LIPPENS_SOURCE", "build_lippens", "llippens/computersaysno"),
    ("RECINQ_SOURCE", "build_recinq", "re-cinq/hiring-bias"),
    ("JDERBYSH_SOURCE", "build_jderbysh", "jderbysh/AIHiringBias"),
])
def test_script_check_regenerates_the_committed_tables_byte_for_byte(env, script, repo):
    source = os.environ.get(env)
    if not source:
        pytest.skip(f"no fetched copy of {repo}: set {env} to its clone or git directory to run this check")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / f"{script}.py"), "--source", source, "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "DIFFERS" not in out.stdout and "identical" in out.stdout
