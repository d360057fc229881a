"""Tests for the study helpers of allocbias.genderbench: rule_answers, winner_slot_shares, attempt_agreement,
probe_report (chapter 9)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.genderbench import (
    ALL,
    ANSWER_RULES,
    attempt_agreement,
    build_items,
    detect_winners,
    disparity,
    masculine_rate,
    position_effect,
    probe_report,
    probe_summary,
    rule_answers,
    stereotype_rate,
    undetected_rate_attempts,
    winner_slot_shares,
)

JOBS = ["software_engineer", "financial_analyst", "retail", "hr_specialist"]


def _names() -> pd.DataFrame:
    firsts = {
        ("White", "Female"): ["Emily", "Anne", "Claire", "Molly", "Sarah"],
        ("White", "Male"): ["Greg", "Brad", "Todd", "Neil", "Scott"],
        ("Black", "Female"): ["Lakisha", "Aisha", "Ebony", "Keisha", "Tamika"],
        ("Black", "Male"): ["Jamal", "Darnell", "Tyrone", "DeShawn", "Hakim"],
    }
    lasts = ["Baker", "Walsh", "Washington", "Jackson", "O'Brien"]
    rows = [{"first": f, "last": last, "gender": g, "race": r}
            for (r, g), fs in firsts.items() for f, last in zip(fs, lasts)]
    frame = pd.DataFrame(rows)
    frame["full_name"] = frame["first"] + " " + frame["last"]
    return frame


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return build_items(_names(), JOBS, n_orderings=6, seed=11)


# ------------------------------------------------------------------------------------------- rule_answers
@pytest.mark.parametrize("rule", ANSWER_RULES)
def test_rule_answers_one_detected_answer_per_prompt(items, rule) -> None:
    answers = rule_answers(items, rule, seed=0)
    assert list(answers.columns) == ["item_id", "attempt", "answer"]
    assert len(answers) == items.groupby(["item_id", "attempt"]).ngroups
    assert not answers.duplicated(["item_id", "attempt"]).any()
    won = detect_winners(items, answers)
    assert won["winner_gender"].notna().all()
    # the answer is the full name on the winning slot
    slots = items.set_index(["item_id", "attempt", "slot"])["full_name"]
    keys = list(zip(won["item_id"], won["attempt"], won["winner_slot"].astype(int)))
    assert slots.loc[keys].tolist() == answers["answer"].tolist()


def test_position_rules_are_exactly_balanced(items) -> None:
    for rule, slot in (("first", 0), ("last", 7)):
        won = detect_winners(items, rule_answers(items, rule))
        assert (won["winner_slot"] == slot).all()
        assert masculine_rate(won) == 0.5
        assert disparity(won) == 0.0
        assert stereotype_rate(won) == 0.0
        assert position_effect(won, slot=slot) == 1.0
        table = masculine_rate(won, by=["job", "race"])
        assert (table["masculine_rate"] == 0.5).all()


def test_stereotype_rule_reaches_the_bounds(items) -> None:
    won = detect_winners(items, rule_answers(items, "stereotype", seed=3))
    per_job = masculine_rate(won, by="job").set_index("job")["masculine_rate"]
    assert per_job[["software_engineer", "financial_analyst"]].eq(1.0).all()
    assert per_job[["retail", "hr_specialist"]].eq(0.0).all()
    assert stereotype_rate(won) == 0.5
    # swapping the job lists gives the anti-stereotyping answerer
    anti = detect_winners(items, rule_answers(items, "stereotype", seed=3, male_jobs=["retail", "hr_specialist"],
                                              female_jobs=["software_engineer", "financial_analyst"]))
    assert stereotype_rate(anti) == -0.5


def test_stereotype_rule_other_jobs_pick_any_slot(items) -> None:
    won = detect_winners(items, rule_answers(items, "stereotype", seed=1, male_jobs=["retail"],
                                             female_jobs=["hr_specialist"]))
    rates = masculine_rate(won, by="job").set_index("job")["masculine_rate"]
    assert rates["retail"] == 1.0 and rates["hr_specialist"] == 0.0
    others = won[won["job"].isin(["software_engineer", "financial_analyst"])]
    assert others["winner_gender"].nunique() == 2


def test_random_rule_is_seeded_and_roughly_uniform() -> None:
    big = build_items(_names(), JOBS, n_orderings=40, seed=2)
    a = rule_answers(big, "random", seed=5)
    pd.testing.assert_frame_equal(a, rule_answers(big, "random", seed=5))
    assert not a.equals(rule_answers(big, "random", seed=6))
    won = detect_winners(big, a)
    shares = winner_slot_shares(won, n_slots=8)["share"]
    n = len(won)
    assert (abs(shares - 1 / 8) < 4 * np.sqrt(1 / 8 * 7 / 8 / n)).all()
    assert abs(masculine_rate(won) - 0.5) < 4 * np.sqrt(0.25 / n)


def test_rule_answers_errors(items) -> None:
    with pytest.raises(ValueError, match="unknown rule"):
        rule_answers(items, "best")
    with pytest.raises(ValueError, match="disjoint"):
        rule_answers(items, "stereotype", male_jobs=["retail"], female_jobs=["retail"])
    with pytest.raises(ValueError, match="column"):
        rule_answers(items.drop(columns=["gender"]), "first")


# ------------------------------------------------------------------------------------- winner_slot_shares
def test_winner_slot_shares_hand_case() -> None:
    df = pd.DataFrame({"who": ["a", "a", "a", "b", "b", "c"],
                       "winner_slot": pd.array([0, 2, None, 2, 2, None], dtype="Int64")})
    out = winner_slot_shares(df, n_slots=3, by="who")
    assert out["who"].tolist() == ["a"] * 3 + ["b"] * 3  # c has no detected attempt
    assert out["wins"].tolist() == [1, 0, 1, 0, 0, 2]
    assert out["n_detected"].tolist() == [2, 2, 2, 2, 2, 2]
    assert out["share"].tolist() == [0.5, 0.0, 0.5, 0.0, 0.0, 1.0]


def test_winner_slot_shares_slot_zero_is_the_position_effect(items) -> None:
    won = detect_winners(items, rule_answers(items, "random", seed=4))
    shares = winner_slot_shares(won, n_slots=8)
    assert shares["share"].iloc[0] == pytest.approx(position_effect(won))
    assert shares["wins"].sum() == len(won)


def test_winner_slot_shares_errors() -> None:
    with pytest.raises(ValueError, match="no attempt has a detected winner"):
        winner_slot_shares(pd.DataFrame({"winner_slot": pd.array([None], dtype="Int64")}), n_slots=8)
    with pytest.raises(ValueError, match="0..7"):
        winner_slot_shares(pd.DataFrame({"winner_slot": pd.array([8], dtype="Int64")}), n_slots=8)
    with pytest.raises(ValueError, match="n_slots"):
        winner_slot_shares(pd.DataFrame({"winner_slot": pd.array([0], dtype="Int64")}), n_slots=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 7)), min_size=1, max_size=40).filter(
    lambda xs: any(x is not None for x in xs)))
def test_winner_slot_shares_property(slots) -> None:
    out = winner_slot_shares(pd.DataFrame({"winner_slot": pd.array(slots, dtype="Int64")}), n_slots=8)
    detected = [s for s in slots if s is not None]
    assert out["wins"].tolist() == [detected.count(s) for s in range(8)]
    assert out["share"].sum() == pytest.approx(1.0)


# -------------------------------------------------------------------------------------- attempt_agreement
def test_agreement_of_position_and_name_answerers(items) -> None:
    first = attempt_agreement(detect_winners(items, rule_answers(items, "first")))
    assert first["both_detected"].all() and first["same_slot"].all() and not first["same_name"].any()
    # a name-loyal answerer: always the alphabetically first name of the prompt
    loyal = items.sort_values("full_name").groupby(["item_id", "attempt"], as_index=False).first()
    loyal = loyal[["item_id", "attempt", "full_name"]].rename(columns={"full_name": "answer"})
    won = detect_winners(items, loyal)
    agree = attempt_agreement(won)
    assert agree["same_name"].all() and not agree["same_slot"].any()
    assert set(won.groupby("item_id")["winner_gender"].nunique()) == {1}  # same person, same gender
    rates = won.groupby("item_id")["winner_gender"].first().eq("Male")
    assert masculine_rate(won) == pytest.approx(rates.groupby(won.groupby("item_id")["job"].first()).mean().mean())


def test_agreement_with_answers_and_undetected() -> None:
    df = pd.DataFrame({"item_id": [0, 0, 1, 1, 2, 2], "attempt": [0, 1, 1, 0, 0, 1], "job": "a", "race": "White",
                       "winner_slot": pd.array([3, 3, None, None, 1, 4], dtype="Int64"),
                       "winner_name": ["A", "B", None, None, "C", "C"],
                       "answer": ["A!", "B!", "hmm", "hmm", "C", "C"]})
    out = attempt_agreement(df)
    assert out["both_detected"].tolist() == [True, False, True]
    assert out["same_slot"].tolist() == [True, pd.NA, False]
    assert out["same_name"].tolist() == [False, pd.NA, True]
    assert out["same_answer"].tolist() == [False, True, True]


def test_agreement_errors() -> None:
    base = {"job": "a", "race": "White", "winner_slot": pd.array([0, 1], dtype="Int64"), "winner_name": ["A", "B"]}
    with pytest.raises(ValueError, match="exactly the attempts 0 and 1"):
        attempt_agreement(pd.DataFrame({"item_id": [0, 0], "attempt": [0, 2], **base}))
    with pytest.raises(ValueError, match="duplicated"):
        attempt_agreement(pd.DataFrame({"item_id": [0, 0], "attempt": [0, 0], **base}))
    with pytest.raises(ValueError, match="column"):
        attempt_agreement(pd.DataFrame({"item_id": [0, 0], "attempt": [0, 1]}))


# ------------------------------------------------------------------------------------------- probe_report
def test_probe_report_equals_probe_summary_when_everything_is_defined(items) -> None:
    won = detect_winners(items, rule_answers(items, "random", seed=9))
    pd.testing.assert_frame_equal(probe_report(won, n_boot=300, seed=2), probe_summary(won, n_boot=300, seed=2))


def test_probe_report_drops_the_stereotype_rate_without_all_four_jobs(items) -> None:
    won = detect_winners(items, rule_answers(items, "random", seed=9))
    won.loc[won["job"] == "retail", ["winner_slot", "winner_name", "winner_gender"]] = None
    report = probe_report(won, n_boot=200, seed=0)
    assert "stereotype_rate" not in set(report["metric"])
    assert "retail" not in set(report["job"])
    with pytest.raises(ValueError, match="retail"):
        probe_summary(won, n_boot=200, seed=0)
    und = report.set_index("metric").loc["undetected_rate_attempts"]
    assert und["estimate"] == pytest.approx(0.25)
    assert und["ci_low"] <= 0.25 <= und["ci_high"]


def test_probe_report_without_any_detection_gives_the_undetected_rates(items) -> None:
    won = detect_winners(items, rule_answers(items, "first").assign(answer="This is a great example."))
    report = probe_report(won, n_boot=100, seed=0)
    assert report["metric"].tolist() == ["undetected_rate_attempts", "undetected_rate_items"]
    assert report[["estimate", "ci_low", "ci_high"]].eq(1.0).all().all()
    assert (report[["job", "race"]] == ALL).all().all()
    assert report["n_items"].tolist() == [items["item_id"].nunique()] * 2


def test_probe_report_undetected_rows_match_probe_summary(items) -> None:
    won = detect_winners(items, rule_answers(items, "random", seed=1))
    drop = won.sample(frac=0.3, random_state=0).index
    won.loc[drop, ["winner_slot", "winner_name", "winner_gender"]] = None
    ours = probe_report(won, n_boot=300, seed=4)
    theirs = probe_summary(won, n_boot=300, seed=4)
    pd.testing.assert_frame_equal(ours, theirs)
    assert ours.set_index("metric").loc["undetected_rate_attempts", "estimate"] == undetected_rate_attempts(won)
    # the undetected-only path draws the same replicates as probe_summary's
    only = won.assign(winner_gender=None, winner_slot=pd.array([None] * len(won), dtype="Int64"))
    rows = probe_report(only, n_boot=300, seed=4)
    assert rows["estimate"].tolist() == [1.0, 1.0]


def test_probe_report_errors(items) -> None:
    won = detect_winners(items, rule_answers(items, "first"))
    with pytest.raises(ValueError, match="n_boot"):
        probe_report(won, n_boot=0, seed=0)
    with pytest.raises(ValueError, match="level"):
        probe_report(won, n_boot=10, seed=0, level=1.5)
    with pytest.raises(ValueError, match="disjoint"):
        probe_report(won, n_boot=10, seed=0, male_jobs=["retail"], female_jobs=["retail"])
    with pytest.raises(ValueError, match="strata"):
        probe_report(won.assign(winner_gender=None), n_boot=10, seed=0, strata=("race",))


def test_probe_report_job_strata_with_one_item_per_cell() -> None:
    one = build_items(_names(), JOBS, n_orderings=1, seed=5)  # one item per (job, race): 2 items per job
    won = detect_winners(one, rule_answers(one, "random", seed=2))
    cells = probe_report(won, n_boot=400, seed=0)  # job x race strata: single-item cells never vary
    assert (cells["ci_low"] == cells["ci_high"]).all()
    jobs_only = probe_report(won, n_boot=400, seed=0, strata=("job",))
    assert not ((jobs_only["job"] != ALL) & (jobs_only["race"] != ALL)).any()  # no cell rows
    assert jobs_only["metric"].tolist()[:5] == ["masculine_rate", "disparity", "stereotype_rate", "position_effect",
                                                "undetected_rate_attempts"]
    overall = jobs_only.set_index(["metric", "job"]).loc[("masculine_rate", ALL)]
    assert overall["ci_low"] < overall["ci_high"]
    assert overall["ci_low"] <= overall["estimate"] <= overall["ci_high"]
    assert overall["estimate"] == masculine_rate(won)
    with pytest.raises(ValueError, match="lack a"):
        probe_summary(won, n_boot=400, seed=0, strata=("job",))
