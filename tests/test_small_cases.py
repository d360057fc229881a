"""The smaller cases of issue 14; each test failed on the main branch before this change."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

import pandas as pd
import pytest

from allocbias import data as D
from allocbias.book import repo_root
from allocbias.genderbench import first_mentioned
from allocbias.metrics import bias_table
from allocbias.audited.names import fold_name
from allocbias.scoring.engine import parse_pair_answer

ROOT = repo_root()


def test_batch_size_zero_is_an_error():
    """Main read --batch-size 0 as "the default" and ran."""
    run = subprocess.run([sys.executable, "scripts/score_study.py", "resume_pointwise", "--systems",
                          "smollm2-fp32-paper", "--jobs", "retail", "--batch-size", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--batch-size: expected a number >= 1, got 0" in run.stderr


@pytest.mark.parametrize("written", ["Jose Alvarez", "JOSÉ ÁLVAREZ", unicodedata.normalize("NFD", "José Álvarez")])
def test_pairwise_answers_match_names_after_unicode_folding(written):
    assert parse_pair_answer(f"{written} is the better fit.", "Greg Baker", "José Álvarez") == "b"


@pytest.mark.parametrize("written", ["Jose Alvarez", unicodedata.normalize("NFD", "José Álvarez")])
def test_ranking_answers_match_names_after_unicode_folding(written):
    names = ["Greg Baker", "José Álvarez", "Emily Walsh"]
    assert first_mentioned(f"1. {written}\n2. Greg Baker", names) == 1


def test_fold_name_is_nfc_and_accent_insensitive():
    assert fold_name("José Álvarez") == fold_name("Jose Alvarez") == fold_name(unicodedata.normalize("NFD", "José Álvarez"))


def test_bias_table_with_one_group_raises():
    df = pd.DataFrame({"group": ["W"] * 3, "score": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match=r"only the reference group 'W' is present in column 'group'"):
        bias_table(df, "score", "group", "W")


def test_bias_table_names_the_cell_with_one_group():
    df = pd.DataFrame({"job": ["a"] * 4 + ["b"] * 2, "group": ["W", "B", "W", "B", "W", "W"],
                       "score": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    with pytest.raises(ValueError, match=r"only the reference group 'W' is present in cell \{'job': 'b'\}"):
        bias_table(df, "score", "group", "W", by=["job"])


def test_names_per_group_11_extends_the_10_name_sample():
    ten = D.candidate_table(["retail"], names_per_group=10, seed=0)
    eleven = D.candidate_table(["retail"], names_per_group=11, seed=0)
    for group in D.GROUPS:
        a = ten.loc[ten["group"] == group, "full_name"].unique().tolist()
        b = eleven.loc[eleven["group"] == group, "full_name"].unique().tolist()
        assert b[:10] == a and len(b) == 11, group


def test_fewer_names_per_group_are_a_prefix_of_the_10_name_sample():
    ten = D.candidate_table(["retail"], names_per_group=10, seed=0)
    three = D.candidate_table(["retail"], names_per_group=3, seed=0)
    for group in D.GROUPS:
        a = ten.loc[ten["group"] == group, "full_name"].unique().tolist()
        assert three.loc[three["group"] == group, "full_name"].unique().tolist() == a[:3]
