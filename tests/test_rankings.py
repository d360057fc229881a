"""Tests of allocbias.rankings: the listwise parser, the readers, the statistics and the data script."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from allocbias import rankings as R
from allocbias.data import GROUPS

from .conftest import ROOT

NAMES = ["Ann Lee", "Bo Kim", "Cy O'Hara", "Di Vu"]


def test_parse_numbered_list_ignores_prose_and_fills_mean_ranks():
    rank, named = R.parse_ranking("Ranking:\n1. Di Vu\n2) BO KIM\nNote: Ann Lee is also good.", NAMES)
    assert rank.tolist() == [3.5, 2.0, 3.5, 1.0]
    assert named.tolist() == [False, True, False, True]


def test_parse_prose_by_first_mention_and_whole_names_only():
    rank, named = R.parse_ranking("Cy OHara first, then Ann Leeson? No: Ann Lee. Cy O'Hara again.", NAMES)
    assert rank.tolist() == [2.0, 3.5, 1.0, 3.5]
    assert named.sum() == 2


def test_parse_ignores_accents_and_empty_entries():
    rank, _ = R.parse_ranking("1. Dí Vũ\n2. Ann Lee\n3. Bo Kim\n4. Cy O'Hara\n5.", NAMES)
    assert rank.tolist() == [2.0, 3.0, 4.0, 1.0]


@pytest.mark.parametrize(("answer", "message"), [
    ("1. Ann Lee\n2. Ann Lee", "names Ann Lee a second time"),
    ("1. Ann Lee\n2. Zed Zed", "entry 2 '2. Zed Zed' names nobody in the prompt"),
    ("1. Ann Lee and Bo Kim", "names 2 candidates"),
    ("Nobody here fits.", "names none of the 4 candidates"),
])
def test_parse_refuses_and_names_the_file_and_entry(answer, message):
    with pytest.raises(ValueError, match="run_7.json") as err:
        R.parse_ranking(answer, NAMES, where="gpt-4/retail/1121/run_7.json")
    assert message in str(err.value)


def test_selection_matrix_fills_exactly_k_seats():
    rank = np.array([[1.0, 2.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0], np.arange(1.0, 9.0)])
    sel = R.selection_matrix(rank, list(range(1, 9)))
    assert np.allclose(sel.sum(axis=1), np.arange(1, 9))
    assert np.allclose(sel[0, 2:, 2], 1 / 6)
    with pytest.raises(ValueError, match="k must be integers"):
        R.selection_matrix(rank, 0)


def test_vectorised_bootstrap_equals_a_per_replicate_loop():
    rng = np.random.default_rng(1)
    values = rng.random((50, 3))
    w = R.bootstrap_weights(50, 40, seed=3)
    idx = np.random.default_rng(3).integers(0, 50, size=(40, 50))
    loop = np.array([values[i].mean(axis=0) for i in idx])
    assert np.allclose(w @ values / 50, loop)


def _tiny_rankings():
    rows = []
    for a in range(40):
        order = np.random.default_rng(a).permutation(8)
        for pos, g in enumerate(GROUPS):
            rows.append({"model": "m", "job": "j", "answer_id": f"a{a}", "group": g, "shown_position": pos,
                         "rank": float(order[pos] + 1)})
    return pd.DataFrame(rows)


def test_top_k_selection_table_rates_sum_to_k_and_intervals_contain_estimates():
    t = R.top_k_selection_table(_tiny_rankings(), k=[1, 3], n_boot=200, seed=0)
    assert np.allclose(t.groupby("k")["selection_rate"].sum().to_numpy(), [1, 3])
    assert (t["selection_rate_low"] <= t["selection_rate"] + 1e-12).all()
    assert (t["selection_rate"] <= t["selection_rate_high"] + 1e-12).all()
    assert (t.loc[t["group"] == "Male White", "dDP"] == 0).all()
    with pytest.raises(ValueError, match="reference group 'Nobody'"):
        R.top_k_selection_table(_tiny_rankings(), reference="Nobody")


def test_position_shares_and_pair_winners():
    r = _tiny_rankings()
    pos = R.position_top_shares(r)
    assert pos["top_share"].sum() == pytest.approx(1.0)
    pw = R.pair_winners(r)
    assert len(pw) == 40 * 4 and set(pw["winner_gender"]) <= {"Female", "Male"}


def test_readers_accept_the_committed_tables():
    ranks, answers = R.read_rankings(), R.read_answers()
    parsed = answers[answers["parse_error"] == ""]
    assert ranks["answer_id"].nunique() == len(parsed) == len(ranks) // 8
    assert set(ranks["answer_id"]) == set(parsed["answer_id"])
    assert (answers.loc[answers["parse_error"] != "", "n_named"] == 0).all()
    assert len(answers) == 8316 and (~answers["oversampled"]).sum() == 8000
    assert len(R.read_published()) == 64


def test_readers_refuse_wrong_columns_and_group_labels(tmp_path):
    ranks = R.read_rankings().head(16)
    bad = tmp_path / "bad.csv"
    ranks.rename(columns={"group": "demo"}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match=r"missing \['group'\], unexpected \['demo'\]"):
        R.read_rankings(bad)
    ranks.assign(group=ranks["group"].replace("Male White", "White Men")).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="'White Men'"):
        R.read_rankings(bad)
    R.read_answers().head(3).drop(columns="answer").to_csv(bad, index=False)
    with pytest.raises(ValueError, match=r"missing \['answer'\]"):
        R.read_answers(bad)


def test_build_tables_names_the_file_of_a_bad_record():
    rec = {"context": {"job": "retail", "default_order": NAMES * 2, "demo_order": ["W_W"] * 8},
           "choices": [{"message": {"content": "1. Ann Lee"}}]}
    with pytest.raises(ValueError, match="resume_ranking/gpt-4/retail/1121/run_1.json"):
        R.build_tables([("data/intermediary/resume_ranking/gpt-4/retail/1121/run_1.json", rec)])


def test_script_check_regenerates_the_committed_tables_byte_for_byte():
    source = os.environ.get("BLOOMBERG_HIRING_SOURCE")
    if not source:
        pytest.skip("no fetched copy of BloombergGraphics/2024-openai-gpt-hiring-racial-discrimination: "
                    "set BLOOMBERG_HIRING_SOURCE to its clone or git directory to run this check")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_bloomberg_rankings.py"), "--source", source,
                          "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------------------------------------
# parse rules, prompt reconstruction, misspellings, the RABBI decomposition
# ---------------------------------------------------------------------------------------------------------
MISSPELT = "Intro about Bo Kim.\n1. Ann Lee\n2. Dusting Schmidt - great\n3. Bo Kim\n4. Di Vu"
PROMPT = ["Ann Lee", "Bo Kim", "Dustin Schmidt", "Di Vu"]


def test_three_parse_rules_on_a_misspelt_list():
    with pytest.raises(ValueError, match="entry 2 '2. Dusting Schmidt - great' names nobody"):
        R.parse_ranking(MISSPELT, PROMPT)
    assert R.parse_ranking(MISSPELT, PROMPT, rule="fuzzy")[0].tolist() == [1.0, 3.0, 2.0, 4.0]
    # Bloomberg's rule: first occurrence anywhere (the intro's "Bo Kim" comes first), a missing name unranked
    rank, named = R.parse_ranking(MISSPELT, PROMPT, rule="first_occurrence")
    assert rank.tolist() == [2.0, 1.0, 4.0, 3.0] and named.tolist() == [True, True, False, True]
    # substring, case-insensitive, no word boundary (as Bloomberg's code), unlike the strict rule
    assert R.parse_ranking("BO KIMBALL, then ann lee", PROMPT, rule="first_occurrence")[0].tolist()[:2] == [2.0, 1.0]
    with pytest.raises(ValueError, match="unknown parse rule 'loose'"):
        R.parse_ranking(MISSPELT, PROMPT, rule="loose")


def test_fuzzy_refuses_far_and_ambiguous_matches_and_unknown_names_stay_unranked():
    names = ["Gabriela Huerta", "Gabriel Huerto", "Ann Lee"]
    assert R.fuzzy_candidate("Gabriel Huerta", names)[0] is None  # two candidates within the margin
    assert R.fuzzy_candidate("Gabriel Huerta", names, margin=0)[0] in (0, 1)
    assert R.fuzzy_candidate("Zed Zimmer", names)[0] is None
    assert R.fuzzy_candidate("Ann Le", ["x", "Ann Lee"], owners=[0, 0])[0] == 0  # spellings of one candidate
    with pytest.raises(ValueError, match="entry 2 '2. Gabriel Huerta' names nobody"):
        R.parse_ranking("1. Ann Lee\n2. Gabriel Huerta", names, rule="fuzzy")
    rank, named = R.parse_ranking("1. Ann Lee\n2. Bo Kim", ["Ann Lee", None, "Bo Kim"], rule="first_occurrence")
    assert rank.tolist() == [1.0, 3.0, 2.0] and not named[1]
    with pytest.raises(ValueError, match="owners must have one entry per name"):
        R.fuzzy_candidate("Ann", ["Ann Lee"], owners=[0, 1])


def test_first_occurrence_rule_reproduces_bloomberg_s_published_top_counts_exactly():
    answers, ranks = R.read_answers(), R.read_rankings()
    prompts = R.prompt_names(answers, ranks)
    assert len(prompts) == 8 * len(answers)
    refused = prompts[prompts["source"] != "prompt"]
    assert refused["answer_id"].nunique() == (answers["parse_error"] != "").sum()
    main = answers[~answers["oversampled"]]
    first = R.rule_rankings(main, prompts[~prompts["oversampled"]], "first_occurrence")
    assert first["answer_id"].nunique() == len(main)  # every answer is counted under Bloomberg's rule
    top = first[first["rank"] == 1].groupby(["model", "job", "group"]).size().rename("ours").reset_index()
    pub = R.read_published().merge(top, on=["model", "job", "group"], how="left").fillna({"ours": 0})
    assert (pub["ours"] == pub["top"]).all()
    strict = R.rule_rankings(main, prompts[~prompts["oversampled"]], "strict")
    expected = ranks[~ranks["oversampled"]].sort_values(["answer_id", "group"])
    got = strict.sort_values(["answer_id", "group"])
    assert got["rank"].tolist() == expected["rank"].tolist()  # the strict rule is the committed table


def test_misspelt_entries_and_the_uniformity_test_against_scipy():
    from scipy import stats

    answers = pd.DataFrame({"answer_id": ["a", "b"], "answer": [MISSPELT, "1. Di Vu\n2. Ann Lea\n3. Jane Doe"]})
    prompts = pd.DataFrame({"answer_id": np.repeat(["a", "b"], 4), "model": "m", "job": "j", "oversampled": False,
                            "group": list(GROUPS[:4]) * 2, "name": PROMPT * 2})
    e = R.misspelt_entries(answers, prompts)
    assert e[["answer_id", "entry", "name"]].to_numpy().tolist() == [
        ["a", 2, "Dustin Schmidt"], ["b", 2, "Ann Lee"], ["b", 3, ""]]
    t = R.misspelling_table(e, prompts)
    assert t["n"].tolist() == [1, 0, 1, 0] and t["expected_share"].tolist() == [0.25] * 4
    assert t["p_value"].iloc[0] == pytest.approx(stats.chisquare([1, 0, 1, 0], [0.5] * 4).pvalue)


def test_crossing_cells_and_phrase():
    t = {"strict": pd.DataFrame({"model": "m", "job": "j", "group": ["x", "y", "z"], "impact_ratio": [0.7, 0.85, 0.6]}),
         "fuzzy": pd.DataFrame({"model": "m", "job": "j", "group": ["x", "y", "z"], "impact_ratio": [0.82, 0.79, 0.6]})}
    c = R.crossing_cells(t)
    assert c["group"].tolist() == ["x", "y"] and c["below"].tolist() == ["strict", "fuzzy"]
    assert R.cells_phrase(c) == "m, j, x; m, j, y"


def test_rabbi_is_two_delta_over_n_plus_the_quadratic_term_and_paired_rabbi():
    from allocbias import metrics

    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(1, 9, size=30), rng.integers(1, 9, size=25)
        lin, quad = R.rabbi_decomposition(a, b, 8)
        assert lin == pytest.approx(metrics.avg_score_gap(a, b) / 4)
        assert lin + quad == pytest.approx(metrics.rabbi(a, b))
    with pytest.raises(ValueError, match="integers in 1..8"):
        R.rabbi_decomposition([0.5, 2], [1, 2], 8)
    assert metrics.paired_rabbi([8, 7, 1, 6], [1, 2, 8, 5]) == 0.5
    # unpaired RABBI compares across pools too: here every pool is won by A, yet A's scores overlap B's
    assert metrics.paired_rabbi([2, 4], [1, 3]) == 1.0 and metrics.rabbi([2, 4], [1, 3]) == 0.5
    with pytest.raises(ValueError, match="must be paired"):
        metrics.paired_rabbi([1, 2], [1])


def test_rule_helpers_name_what_is_wrong():
    answers = pd.DataFrame({"answer_id": ["a"], "answer": ["1. Ann Lee"]})
    with pytest.raises(ValueError, match=r"answers: missing columns \['job', 'model', 'oversampled', 'parse_error'\]"):
        R.prompt_names(answers, R.read_rankings().head(8))
    with pytest.raises(ValueError, match="unknown parse rule 'loose'"):
        R.rule_rankings(answers, pd.DataFrame(), "loose")
    with pytest.raises(ValueError, match=r"tables\['a'\]: missing columns \['impact_ratio'\]"):
        R.crossing_cells({"a": pd.DataFrame(columns=["model", "job", "group"])})
    with pytest.raises(ValueError, match="p_value must be in"):
        R.uniformity_phrase(1.5)
