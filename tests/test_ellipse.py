"""The ELLIPSE essays: the committed file and its fetch script, the loader, the prompt items, the score reader,
quadratic-weighted kappa (hand-computed) and selection on graded essays (allocbias.measures.essays)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allocbias.measures import agreement, essays
from allocbias.scoring import catalog
from allocbias import data
from allocbias.scoring import systems
from allocbias.scoring.items import ellipse_pointwise_items
from allocbias.store import ScoreStore

ROOT = Path(__file__).resolve().parents[1]
CSV = data.data_dir() / "essays" / "ellipse.csv"
SOURCE = os.environ.get("ELLIPSE_SOURCE")


@pytest.fixture(scope="module")
def all_essays():
    return data.load_ellipse("all")


@pytest.fixture(scope="module")
def sample():
    return data.load_ellipse("study")


# -- the committed file --------------------------------------------------------------------------------------------
def test_committed_file_has_the_source_counts():
    raw = pd.read_csv(CSV, dtype={"text_id_kaggle": str}, keep_default_na=False)
    assert list(raw.columns) == ["text_id_kaggle", "prompt", "full_text", "Overall", "gender", "race_ethnicity",
                                 "SES", "grade"]
    assert len(raw) == 2571 and raw["text_id_kaggle"].is_unique and raw["prompt"].nunique() == 44
    race = raw["race_ethnicity"].value_counts()
    assert race.to_dict() == {"Hispanic/Latino": 1868, "Asian/Pacific Islander": 310, "Black/African American": 194,
                              "White": 185, "Two or more races/Other": 10, "American Indian/Alaskan Native": 4}
    assert (raw["SES"] == "Economically disadvantaged").sum() == 1798
    assert set(raw["Overall"]) <= set(np.arange(1.0, 5.01, 0.5))


@pytest.mark.skipif(not SOURCE, reason="set ELLIPSE_SOURCE to a fetched copy of scrosseye/ELLIPSE-Corpus")
def test_fetch_script_check_is_byte_identical():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_ellipse.py"), "--source", SOURCE, "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "byte-identical" in done.stdout


# -- the loader ----------------------------------------------------------------------------------------------------
def test_load_all_keeps_every_essay_and_the_writer_columns(all_essays):
    assert len(all_essays) == 2571 and all_essays["essay_id"].is_unique
    for col in (*data.ESSAY_COLUMNS, "gender", "race_ethnicity", "SES", "grade", "order"):
        assert col in all_essays.columns
    assert (all_essays["group"] == all_essays["race_ethnicity"]).all()
    assert sorted(all_essays["order"]) == list(range(2571))


def test_qualified_is_at_or_above_the_prompt_median(all_essays):
    median = all_essays.groupby("topic")["rating"].transform("median")
    assert (all_essays["qualified"] == (all_essays["rating"] >= median)).all()
    at_median = all_essays["rating"] == median
    assert at_median.any() and all_essays.loc[at_median, "qualified"].all()  # ties at the median are qualified


def test_study_sample_keeps_three_groups_whole_and_stratifies_the_rest(all_essays, sample):
    assert len(sample) == 1000 and sample["essay_id"].is_unique
    for group in ("Black/African American", "White", "Asian/Pacific Islander"):
        assert (sample["race_ethnicity"] == group).sum() == (all_essays["race_ethnicity"] == group).sum()
    kept = ["Black/African American", "White", "Asian/Pacific Islander"]
    rest_all = all_essays[~all_essays["race_ethnicity"].isin(kept)]["topic"].value_counts()
    rest_got = sample[~sample["race_ethnicity"].isin(kept)]["topic"].value_counts().reindex(rest_all.index, fill_value=0)
    share = rest_all * 311 / rest_all.sum()
    assert ((rest_got - share).abs() < 1).all()  # proportional to within one essay per prompt
    assert sample["order"].tolist() == list(range(1000))
    # qualified is judged against the whole prompt, not the sample
    full = all_essays.set_index("essay_id")["qualified"]
    assert (sample.set_index("essay_id")["qualified"] == full.loc[sample["essay_id"]]).all()


def test_sample_is_seeded(sample):
    again = data.load_ellipse("study", seed=0)
    other = data.load_ellipse("study", seed=1)
    assert again["essay_id"].tolist() == sample["essay_id"].tolist()
    assert other["essay_id"].tolist() != sample["essay_id"].tolist()


def test_loader_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="sample"):
        data.load_ellipse("some")
    bad = pd.read_csv(CSV, dtype=str, keep_default_na=False).head(20)
    bad.loc[3, "Overall"] = "7"
    path = tmp_path / "ellipse.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(ValueError, match="Overall"):
        data.load_ellipse("all", path=path)
    with pytest.raises(ValueError, match="lacks columns"):
        bad.drop(columns=["SES"]).to_csv(path, index=False)
        data.load_ellipse("all", path=path)


# -- prompts and stored grades -------------------------------------------------------------------------------------
def test_items_name_the_prompt_title_and_keep_the_order(sample):
    items = ellipse_pointwise_items(sample.head(5))
    assert items["essay_id"].tolist() == sample["essay_id"].head(5).tolist()
    first = items.iloc[0]
    assert f'writing prompt "{first["topic"]}"' in first["messages"][0]["content"]
    assert first["messages"][-1] == {"role": "assistant", "content": "Score:"}
    assert items["prompt_id"].str.len().eq(20).all() and items["prompt_id"].is_unique


def test_ellipse_scores_reads_partial_tables_only(tmp_path, sample):
    head = sample.head(6)
    items = ellipse_pointwise_items(head)
    system = systems.parse_system("smollm2-fp32-paper")
    store = catalog.store_for(system, "ellipse_pointwise", tmp_path)
    assert isinstance(store, ScoreStore)
    store.append(pd.DataFrame({"prompt_id": items["prompt_id"].head(4), "score": [1.5, 2.0, 3.5, 4.0],
                               "label_mass": 0.5, "n_tokens": 600}))
    got = catalog.ellipse_scores(essays=head, root=tmp_path)
    assert got["system"].unique().tolist() == ["smollm2-fp32-paper"]
    assert got["essay_id"].tolist() == head["essay_id"].head(4).tolist()
    assert catalog.ellipse_scores(essays=head, root=tmp_path, complete_only=True).empty
    with pytest.raises(ValueError, match="gemma3-fp32-paper has no ellipse_pointwise table"):
        catalog.ellipse_scores(["gemma3-fp32-paper"], essays=head, root=tmp_path)


# -- agreement -----------------------------------------------------------------------------------------------------
def test_qwk_hand_computed():
    # O: (1,1), (2,2), (3,2); w = (i-j)^2/4; sum w*O = 0.25. Marginals a = (1,1,1), b = (1,2,0): E_ij = a_i b_j / 3,
    # sum w*E = 1/6 + 1/12 + 1/2 = 0.75, so kappa = 1 - 0.25/0.75 = 2/3.
    assert agreement.quadratic_weighted_kappa([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    # a fourth, unused category changes the weights to (i-j)^2/9 (E_ij = a_i b_j / 3 as before)
    w = lambda i, j: (i - j) ** 2 / 9  # noqa: E731
    e = {(i, j): (1 / 3) * (1 if j == 0 else 2 if j == 1 else 0) for i in range(3) for j in range(4)}
    expected = 1 - w(2, 1) / sum(w(i, j) * v for (i, j), v in e.items())
    assert agreement.quadratic_weighted_kappa([1, 2, 3], [1, 2, 2], labels=[1, 2, 3, 4]) == pytest.approx(expected)
    assert agreement.quadratic_weighted_kappa([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_qwk_bad_input():
    with pytest.raises(ValueError, match="same length"):
        agreement.quadratic_weighted_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="outside labels"):
        agreement.quadratic_weighted_kappa([1, 2], [1, 6], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="undefined"):
        agreement.quadratic_weighted_kappa([2, 2], [2, 2], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        agreement.quadratic_weighted_kappa([1, np.nan], [1, 2])


def test_agreement_table_rounds_the_model_grade_to_half_points():
    df = pd.DataFrame({"topic": ["a"] * 4 + ["b"] * 3, "score": [1.2, 2.4, 2.6, 4.1, 3.0, 3.0, 3.0],
                       "rating": [1.0, 2.5, 3.0, 4.0, 2.0, 3.0, 4.0]})
    t = agreement.agreement_table(df, by=["topic"]).set_index("topic")
    rounded = agreement.to_half_points([1.2, 2.4, 2.6, 4.1])
    assert t.loc["a", "qwk"] == pytest.approx(agreement.quadratic_weighted_kappa(rounded, [1, 2.5, 3, 4],
                                                                                 labels=agreement.HALF_POINTS))
    assert t.loc["a", "spearman"] == pytest.approx(1.0)
    assert np.isnan(t.loc["b", "spearman"])  # a constant model grade has no rank correlation


# -- selection on graded essays ------------------------------------------------------------------------------------
def test_essay_gaps_a_grader_that_copies_the_human_adds_no_gap(sample):
    t = sample.assign(human=sample["rating"], copy=sample["rating"], flip=-sample["rating"])
    gaps = essays.essay_gaps(t, ["human", "copy", "flip"], "gender", rounds=300, seed=3)
    copy = gaps[gaps["grader"] == "copy"]
    assert np.allclose(copy["dDP_minus_human"], 0.0) and np.allclose(copy["dEO_minus_human"], 0.0)
    flip = gaps[(gaps["grader"] == "flip")]
    assert (flip["psi"] < gaps[gaps["grader"] == "human"]["psi"].to_numpy()).all()  # worst essays chosen
    assert set(gaps["reference"]) == {"Male"} and set(gaps["group"]) == {"Female"}


def test_essay_gaps_bad_input(sample):
    t = sample.assign(human=sample["rating"])
    with pytest.raises(ValueError, match="grader columns"):
        essays.essay_gaps(t, ["human", "nobody"], "gender")
    with pytest.raises(ValueError, match="reference group"):
        essays.essay_gaps(t, ["human"], "gender", reference="White")
    with pytest.raises(ValueError, match="no essay"):
        essays.essay_gaps(t, ["human"], "gender", groups=["Male", "Nonbinary"], reference="Male")


def test_gap_intervals_cover_the_estimate(sample):
    t = sample.assign(human=sample["rating"])
    iv = essays.essay_gap_intervals(t, ["human"], "SES", n_boot=30, seed=0, rounds=200, k=[2])
    assert set(iv["metric"]) == {"dDP", "dEO", "dDP_minus_human", "dEO_minus_human"}
    main = iv[iv["metric"].isin(["dDP", "dEO"])]
    assert (main["ci_low"] <= main["ci_high"]).all() and (main["n_boot"] == 30).all()


def test_agreement_verdict_says_when_every_grader_grades_backwards():
    from allocbias.measures.agreement import agreement_verdict

    assert agreement_verdict([-0.2, -0.01]).startswith("every system grades backwards")
    assert "backwards" not in agreement_verdict([-0.2, 0.01])
    assert "weakly" in agreement_verdict([0.15, -0.3])
    with pytest.raises(ValueError, match="rhos"):
        agreement_verdict([])
