"""allocbias.rankings: the listwise answer parser (hand-written answers) and the committed Bloomberg tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allocbias.rankings import RankingParseError, parse_ranking, read_answers, read_rankings

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["Ana Ruiz", "Bo Li", "José Álvarez", "Di Lee"]


def test_numbered_list_is_ranked_in_order_and_unnamed_share_the_rest():
    rank, named = parse_ranking("Here you go:\n1. Di Lee\n2) jose alvarez", NAMES)
    assert rank.tolist() == [3.5, 3.5, 2.0, 1.0] and named.tolist() == [False, False, True, True]
    assert rank.sum() == pytest.approx(10.0)


def test_prose_answer_ranks_by_first_mention():
    rank, _ = parse_ranking("Bo Li stands out; Ana Ruiz next. Bo Li again.", NAMES)
    assert rank.tolist() == [2.0, 1.0, 3.5, 3.5]


@pytest.mark.parametrize("answer, message", [
    ("1. Bo Li\n2. Zed Zed", r"run_9\.json: list item 2 \('Zed Zed'\) names nobody of the prompt"),
    ("1. Bo Li\n2. Ana Ruiz\n3. Bo Li", r"run_9\.json: the answer names 'Bo Li' twice"),
    ("I cannot rank people by their names.", r"run_9\.json: the answer names nobody of the prompt"),
    ("1. Bo Li and Ana Ruiz\n2. Di Lee", r"list item 1 .* names 2 candidates"),
])
def test_bad_answers_are_refused_naming_file_and_answer(answer, message):
    with pytest.raises(RankingParseError, match=message):
        parse_ranking(answer, NAMES, source="run_9.json")


def test_partial_name_is_not_a_whole_name_match():
    with pytest.raises(RankingParseError, match="names nobody"):
        parse_ranking("Bo Lipton is best", NAMES)


def test_committed_tables_read_and_agree():
    rankings = read_rankings(ROOT / "data" / "bloomberg" / "rankings.csv")
    answers = read_answers(ROOT / "data" / "bloomberg" / "answers.csv")
    main = answers[~answers["oversampled"]]
    assert len(main) == 8000 and (main.groupby(["model", "job"]).size() == 1000).all()
    parsed = answers[~answers["status"].str.startswith("unparsed")]
    assert set(rankings["answer_id"]) == set(parsed["answer_id"])
    assert (rankings.groupby("answer_id")["named"].sum().loc[parsed["answer_id"]].to_numpy()
            == parsed["n_named"].to_numpy()).all()
    # every parsed answer is re-parsed to the same ranks from its raw text
    sample = parsed.sample(200, random_state=0)
    for aid, text in zip(sample["answer_id"], sample["answer"]):
        rows = rankings[rankings["answer_id"] == aid].sort_values("shown_position")
        rank, named = parse_ranking(text, rows["name"].tolist())
        np.testing.assert_allclose(rank, rows["rank"].to_numpy(), atol=1e-3)


def test_reader_refuses_a_wrong_group_label_and_a_renamed_column(tmp_path):
    table = pd.read_csv(ROOT / "data" / "bloomberg" / "rankings.csv", nrows=16)
    bad = table.assign(group=table["group"].replace("Male White", "White man"))
    bad.to_csv(tmp_path / "r.csv", index=False)
    with pytest.raises(ValueError, match=r"r\.csv: column 'group' has labels \['White man'\]"):
        read_rankings(tmp_path / "r.csv")
    table.rename(columns={"rank": "position"}).to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(ValueError, match=r"s\.csv: columns differ .*missing \['rank'\]"):
        read_rankings(tmp_path / "s.csv")


@pytest.mark.skipif(not os.environ.get("BLOOMBERG_SOURCE"),
                    reason="BLOOMBERG_SOURCE is not set: no fetched copy of Bloomberg's repository to check against")
def test_build_script_regenerates_the_committed_tables_byte_for_byte():
    run = subprocess.run([sys.executable, "scripts/build_bloomberg.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
