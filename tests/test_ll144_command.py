"""``allocbias ll144 DATA --out FOLDER`` and the function behind it, ``allocbias.ll144.bias_audit``.

Hand-computed tables (a category excluded by the 2% rule; unknown applicants and their bounds), the round trip
applicant rows -> counts -> the same table, the published audits reproduced as chapter 13 recomputes them, every
kind of bad input (one line naming file, column and row; nothing written), and escaping of hostile labels.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from allocbias import cli, data, ll144
from allocbias.audited import datasets
from allocbias.audited.locations import shipped
from allocbias.ll144_command import read_data, run_ll144

AUDITS = data.data_dir() / "ll144_audits" / "audits.csv"
EXAMPLE = shipped("ll144_example")
HOSTILE = "<img src=x onerror=alert(1)>"


def applicant_rows(table: list[tuple[str, str, int, int]]) -> pd.DataFrame:
    """One row per applicant from (sex, race, applicants, selected) cells."""
    rows = []
    for sex, race, n, s in table:
        rows += [(sex, race, "yes")] * s + [(sex, race, "no")] * (n - s)
    return pd.DataFrame(rows, columns=["sex", "race_ethnicity", "selected"])


CELLS = [("Female", "A", 100, 30), ("Female", "B", 100, 50), ("Male", "A", 200, 100), ("Male", "B", 100, 60),
         ("Female", "C", 5, 4), ("Unknown", "A", 20, 2), ("Male", "Unknown", 10, 5)]


# --------------------------------------------------------------------------- hand-computed tables

# The case: sex with 130 "Decline to answer", 40 empty cells and 31 cells of spaces; labels with stray
# spaces. By hand: unknown sex = 130 + 71 = 201 on two lines; Female 80 of 200, Male 150 of 300 -> 0.4 / 0.5 = 0.8.
BLANK_CELLS = ([("Female ", "A", 100, 40), ("Female", " B", 100, 40), ("Male", "A", 150, 75), ("Male", "B", 150, 75),
                ("Decline to answer", "A", 130, 13), ("", "A", 40, 4), ("   ", "B", 31, 3)])


def _write(frame: pd.DataFrame, path) -> None:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_excel(path, index=False)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx"])
def test_blank_cells_are_unknown_in_every_format(tmp_path, suffix):
    path = tmp_path / f"applicants{suffix}"
    _write(applicant_rows(BLANK_CELLS), path)
    frame = read_data(path)
    a = ll144.bias_audit(frame)
    unknown = a.unknown[a.unknown["category"] == "sex"].set_index("label")["n_unknown"].to_dict()
    assert unknown == {"(blank)": 71, "Decline to answer": 130}
    sex = a.table[a.table["table"] == "sex"].set_index("group")
    assert sorted(sex.index[~sex["unknown"]]) == ["Female", "Male"]  # no "", "Female " or " B" group
    assert sex.loc["Female", "applicants"] == 200 and sex.loc["Female", "impact_ratio"] == pytest.approx(0.8)
    assert sex.loc["Female", "share"] == pytest.approx(200 / 500)
    assert (sex["n_unknown"].dropna() == 201).all()
    race = a.table[a.table["table"] == "race/ethnicity"].set_index("group")
    assert sorted(race.index) == ["A", "B"] and race.loc["B", "applicants"] == 281
    assert not any("non-answer" in w for w in a.warnings)


def test_a_compared_non_answer_gets_a_warning():
    rows = applicant_rows([("Female", "A", 100, 40), ("Male", "A", 100, 50), ("Declined to state", "A", 50, 5)])
    a = ll144.bias_audit(rows, unknown=["Unknown"])
    assert any("'Declined to state'" in w and "non-answer" in w for w in a.warnings)
    b = ll144.bias_audit(rows)  # the default list knows it: unknown, not compared
    assert b.unknown.set_index("label").loc["Declined to state", "n_unknown"] == 50
    assert any("one group only" in w for w in b.warnings)  # race/ethnicity: A only


def test_hand_computed_table_with_an_excluded_category():
    a = ll144.bias_audit(applicant_rows(CELLS[:5]))
    race = a.table[a.table["table"] == "race/ethnicity"].set_index("group")
    # C: 5 of 505 applicants (0.99%) < 2%: excluded, its rate kept, never the comparator, never flagged
    assert race.loc["C", "share"] == pytest.approx(5 / 505)
    assert bool(race.loc["C", "excluded"]) and not bool(race.loc["C", "comparator"])
    assert race.loc["C", "rate"] == pytest.approx(0.8) and not bool(race.loc["C", "four_fifths"])
    # A: 130/300, B: 110/200 -> B is the comparator (0.55), A's ratio (130/300)/0.55
    assert race.loc["A", "rate"] == pytest.approx(130 / 300)
    assert race.loc["A", "impact_ratio"] == pytest.approx((130 / 300) / 0.55)
    assert bool(race.loc["A", "four_fifths"])  # 0.788 < 0.8
    assert race.loc["C", "impact_ratio"] == pytest.approx(0.8 / 0.55)
    assert a.excluded[["category", "group"]].values.tolist() == [["race/ethnicity", "C"], ["intersectional", "Female C"]]
    assert a.excluded["reason"].str.contains("below 2%").all()
    sex = a.table[a.table["table"] == "sex"].set_index("group")
    assert sex.loc["Female", "impact_ratio"] == pytest.approx((84 / 205) / (160 / 300))
    cross = a.table[a.table["table"] == "intersectional"].set_index("group")
    assert cross.loc["Female A", "impact_ratio"] == pytest.approx(0.3 / 0.6)  # Male B is the comparator
    assert bool(cross.loc["Male B", "comparator"])
    assert a.kind == "selection" and a.shape == "applicants" and a.n_applicants == 505
    assert not a.unknown["n_unknown"].any()


def test_hand_computed_table_with_unknowns_and_bounds():
    a = ll144.bias_audit(applicant_rows(CELLS[:4] + CELLS[5:]))
    unknown = a.unknown.groupby("category", sort=False)["n_unknown"].sum().to_dict()
    assert unknown == {"sex": 20, "race/ethnicity": 10, "intersectional": 30}
    sex = a.table[a.table["table"] == "sex"].set_index("group")
    # Male: 165 of 310 (the Unknown-race applicants count in the sex table); Female 80 of 200; 20 unknown sex
    assert sex.loc["Male", "rate"] == pytest.approx(165 / 310) and sex.loc["Female", "rate"] == pytest.approx(0.4)
    assert bool(sex.loc["Unknown", "unknown"]) and np.isnan(sex.loc["Unknown", "impact_ratio"])
    assert sex.loc["Female", "share"] == pytest.approx(200 / 510)  # unknown applicants do not dilute the shares
    m = 20
    assert sex.loc["Female", "rate_lower"] == pytest.approx(80 / (200 + m))
    assert sex.loc["Female", "impact_ratio_upper"] == pytest.approx(((80 + m) / (200 + m)) / (165 / 310))
    p = 200 / 510
    assert sex.loc["Female", "rate_lower_prop"] == pytest.approx(80 / (200 + m * p))
    race = a.table[a.table["table"] == "race/ethnicity"].set_index("group")
    assert race.loc["A", "applicants"] == 320 and race.loc["B", "n_unknown"] == 10
    cross = a.table[a.table["table"] == "intersectional"]
    assert cross.loc[cross["unknown"], "applicants"].sum() == 30


def test_intervals_wilson_for_rates_and_simulated_for_ratios():
    a = ll144.bias_audit(applicant_rows(CELLS[:4]))
    sex = a.table[a.table["table"] == "sex"].set_index("group")
    ci = stats.binomtest(80, 200).proportion_ci(0.95, method="wilson")
    assert (sex.loc["Female", "rate_low"], sex.loc["Female", "rate_high"]) == pytest.approx((ci.low, ci.high))
    assert sex.loc["Female", "impact_ratio_low"] < sex.loc["Female", "impact_ratio"] < sex.loc["Female", "impact_ratio_high"]
    assert sex.loc["Male", "impact_ratio_high"] == 1.0 and sex.loc["Male", "impact_ratio_low"] <= 1
    assert sex.loc["Female", "impact_ratio_high"] < 1  # Female's rate is well below Male's
    again = ll144.bias_audit(applicant_rows(CELLS[:4]))
    pd.testing.assert_frame_equal(a.table, again.table)  # seeded
    assert (a.table["interval_warning"] == "").all() and not a.warnings
    small = ll144.bias_audit(applicant_rows([("Female", "A", 6, 1), ("Male", "A", 40, 20)]), race=None)
    assert small.table.set_index("group").loc["Female", "interval_warning"] != ""
    assert any("Female" in w and "rough" in w for w in small.warnings)


def test_round_trip_applicant_rows_to_counts_give_the_same_table():
    rows = applicant_rows(CELLS)
    by_row = ll144.bias_audit(rows)
    counts = (rows.assign(selected=rows["selected"].eq("yes")).groupby(["sex", "race_ethnicity"])["selected"]
              .agg(applicants="size", selected="sum").reset_index())
    by_count = ll144.bias_audit(counts)
    assert by_count.shape == "counts" and by_row.shape == "applicants"
    pd.testing.assert_frame_equal(by_row.table, by_count.table)
    pd.testing.assert_frame_equal(by_row.excluded, by_count.excluded)


def test_scoring_tool_rates_above_the_median_and_regression_alternatives():
    rng = np.random.default_rng(3)
    n = 4000
    sex = rng.choice(["Female", "Male", "Unknown"], n, p=[0.48, 0.48, 0.04])
    frame = pd.DataFrame({"sex": sex, "score": rng.normal(50, 10, n) + 3 * (sex == "Male")})
    a = ll144.bias_audit(frame, race=None)
    assert a.kind == "scoring" and a.median == np.quantile(frame["score"], 0.5, method="inverted_cdf")
    known = frame[frame["sex"] != "Unknown"]
    sex_t = a.table.set_index("group")
    assert sex_t.loc["Female", "rate"] == pytest.approx((known["score"][known["sex"] == "Female"] > a.median).mean())
    reg = a.regression.set_index("group")
    want = ll144.group_metric_summary(known["score"], known["sex"])
    for col, theirs in [("ratio_of_means", "di_avg"), ("di_median", "di_median"), ("auc_di", "auc_di"),
                        ("p_fair", "p_fair"), ("ks_statistic", "ks_statistic"), ("ks_pvalue", "ks_pvalue")]:
        assert reg[col].to_numpy() == pytest.approx(want[theirs].to_numpy(), rel=1e-12), col
    assert list(a.curves) == ["sex"]
    for name in ["ratio_of_means", "di_median", "auc_di", "p_fair"]:
        assert (reg[f"{name}_low"] <= reg[f"{name}_high"]).all(), name
    assert reg.loc["Female", "auc_di_low"] < reg.loc["Female", "auc_di"] < reg.loc["Female", "auc_di_high"]


def test_regression_intervals_are_skipped_with_a_warning_above_the_limit(monkeypatch):
    monkeypatch.setattr(ll144.audit, "REGRESSION_BOOT_MAX_N", 100)  # the audit step reads its own import
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male"], 300), "score": rng.normal(50, 10, 300)})
    a = ll144.bias_audit(frame, race=None)
    assert "auc_di_low" not in a.regression.columns
    assert any("no intervals for the regression alternatives" in w for w in a.warnings)


def test_fast_ks_matches_scipy_on_large_groups_with_ties():
    rng = np.random.default_rng(5)
    scores = np.round(rng.normal(0, 1, 30_000), 2)
    groups = rng.choice(["a", "b", "c"], scores.size, p=[0.6, 0.3, 0.1])
    prep = ll144._prepare(scores, groups)
    for r in ll144._ks_all(prep):
        ref = stats.ks_2samp(scores[groups == r.group], scores[groups != r.group])
        assert r.statistic == pytest.approx(ref.statistic, abs=1e-12) and r.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    # above an effective size of 100,000 the limiting distribution: the same statistic, a p-value within 1%
    big = rng.normal(0, 1, 450_000) + 0.004 * np.r_[np.zeros(225_000), np.ones(225_000)]
    labels = np.repeat(["a", "b"], 225_000)
    r = ll144._ks_all(ll144._prepare(big, labels))[0]
    ref = stats.ks_2samp(big[:225_000], big[225_000:])
    assert r.statistic == pytest.approx(ref.statistic, abs=1e-12) and r.pvalue == pytest.approx(ref.pvalue, rel=1e-2)


# --------------------------------------------------------------------------- the command


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_command_on_the_example_file(tmp_path, capsys):
    out = tmp_path / "audit"
    code, stdout, _ = run(["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(out)], capsys)
    assert code == 0 and "four-fifths screening rule" in stdout
    doc = json.loads((out / "ll144.json").read_text())
    assert doc["input"]["sha256"] == datasets.sha256_bytes((EXAMPLE / "applicants.csv").read_bytes())
    assert doc["options"]["exclude_below"] == 0.02 and doc["options"]["unknown"] == [*ll144.NON_ANSWERS, "(blank)"]
    assert sorted(p.name for p in (out / "tables").iterdir()) == [
        "excluded.csv", "intersectional.csv", "race_ethnicity.csv", "sex.csv", "unknown.csv"]
    sex = pd.read_csv(out / "tables" / "sex.csv")
    assert sex["rate"].dropna().between(0, 1).all()  # fractions, not percentages
    expected = ll144.bias_audit(read_data(EXAMPLE / "applicants.csv"), unknown=("Unknown",)).table
    expected = expected[expected["table"] == "sex"]
    assert sex["impact_ratio"].to_numpy() == pytest.approx(expected["impact_ratio"].to_numpy(), nan_ok=True)
    summary = (out / "summary.md").read_text()
    assert "verdict of compliance" in doc["four_fifths_note"] and "four-fifths" in summary
    assert "verdict of compliance" in summary and "verdict of compliance" in (out / "report.html").read_text()
    assert "Native Hawaiian" in (out / "tables" / "excluded.csv").read_text()
    assert not list(tmp_path.glob(".audit.*"))  # no temporary folder left


def test_command_on_a_scoring_file_excel_and_parquet(tmp_path, capsys):
    frame = pd.read_csv(EXAMPLE / "scores.csv", keep_default_na=False, na_values=[""])
    frame.to_excel(tmp_path / "scores.xlsx", index=False, sheet_name="2024")
    frame.to_parquet(tmp_path / "scores.parquet")
    outs = {}
    for name, extra in [("scores.xlsx", ["--sheet", "2024"]), ("scores.parquet", [])]:
        out = tmp_path / name.replace(".", "_")
        code, _, err = run(["ll144", str(tmp_path / name), "--out", str(out), *extra], capsys)
        assert code == 0, err
        outs[name] = pd.read_csv(out / "tables" / "regression.csv")
        assert (out / "tables" / "curve_sex.csv").is_file()
    pd.testing.assert_frame_equal(outs["scores.xlsx"], outs["scores.parquet"])


@pytest.mark.parametrize("audit_id", ["bloomberg_plum_resolution_economics_2023_audit_1",
                                      "nyu_langone_talent_plus_ambrose_consulting_llc_2023_audit_1"])
def test_command_reproduces_chapter_13_recomputed_ratios(tmp_path, capsys, audit_id):
    audits = datasets.read_csv(AUDITS)
    # chapter 13's recomputation of every published table
    compared = ll144.compare_reported(audits, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                      selected="n_selected_or_n_above_median", reported_rate="result",
                                      reported_ratio="impact_ratio", by=list(ll144.AUDIT_TABLE), exclude_below=0.02)
    ours = compared[(compared["audit_id"] == audit_id) & (compared["protected_char_group"] == "intersectional")]
    rows = audits[(audits["audit_id"] == audit_id) & (audits["protected_char_group"] == "intersectional")]
    counts = rows.rename(columns={"number_of_applications": "applicants", "n_selected_or_n_above_median": "selected"})
    path = tmp_path / "counts.csv"
    counts[["sex", "race_ethnicity", "applicants", "selected"]].to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run(["ll144", str(path), "--unknown", "Missing/Unknown", "--out", str(out)], capsys)
    assert code == 0, err
    got = pd.read_csv(out / "tables" / "intersectional.csv")
    got = got[~got["unknown"]].set_index(["sex", "race_ethnicity"])
    assert got.loc[got["excluded"], "impact_ratio"].isna().all()  # excluded: not compared, no ratio
    got = got.loc[~got["excluded"], "impact_ratio"]
    want = ours.set_index(["sex", "race_ethnicity"])["impact_ratio"].loc[got.index]
    assert len(want) >= 9
    assert got.loc[want.index].to_numpy() == pytest.approx(want.to_numpy(), rel=1e-12, nan_ok=True)


BAD = {
    "missing column": ("sex,selected\nF,yes\nM,no\n", [], r"x\.csv: no category column 'race_ethnicity'"),
    "selected not yes/no": ("sex,race_ethnicity,selected\nF,A,yes\nM,A,maybe\n", [],
                            r"x\.csv: row 3, column 'selected': 'maybe' is not yes or no"),
    "more selected than applicants": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,10,11\n", [],
                                      r"x\.csv: row 3 \(sex='M', race_ethnicity='A'\): column 'selected' exceeds"),
    "negative count": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,-10,0\n", [],
                       r"x\.csv: row 3 \(sex='M', race_ethnicity='A'\), column 'applicants'.*negative"),
    "non-integer count": ("sex,race_ethnicity,applicants,selected\nF,A,10,3.5\nM,A,10,1\n", [],
                          r"x\.csv: row 2, column 'selected': 3\.5 is not a whole number"),
    "not a count": ("sex,race_ethnicity,applicants,selected\nF,A,ten,3\nM,A,10,1\n", [],
                    r"x\.csv: row 2, column 'applicants': 'ten' is not a count"),
    "total row": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,10,1\nTotal,A,20,4\n", [],
                  r"x\.csv: row 4, column 'sex': the label 'Total' is a total row"),
    "lowercase total row": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,10,1\nF,total,10,3\n", [],
                            r"x\.csv: row 4, column 'race_ethnicity': the label 'total' is a total row"),
    "duplicate category": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,10,1\nF,A,5,1\n", [],
                           r"x\.csv: rows 2 and 4 repeat the group sex='F', race_ethnicity='A'"),
    "infinite count": ("sex,race_ethnicity,applicants,selected\nF,A,10,3\nM,A,inf,1\n", [],
                       r"x\.csv: row 3 \(sex='M', race_ethnicity='A'\), column 'applicants'.*not finite"),
    "total row of applicants": ("sex,race_ethnicity,selected\nF,A,yes\nM,A,no\nM,Total,no\n", [],
                                r"x\.csv: row 4, column 'race_ethnicity': the label 'Total' is a total row"),
    "case-only spellings": ("sex,race_ethnicity,selected\nF,A,yes\nM,A,no\nm,A,no\n", [],
                            r"x\.csv: column 'sex': the labels 'M' \(row 3\) and 'm' \(row 4\) differ only in case"),
    "empty file": ("", [], r"x\.csv: the file is empty"),
    "header only": ("sex,race_ethnicity,selected\n", [], r"x\.csv: the file has a header but no rows"),
    "score not a number": ("sex,race_ethnicity,score\nF,A,1.5\nM,A,high\n", [],
                           r"x\.csv: row 3, column 'score': 'high' is not a number"),
}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("out_state", ["absent", "empty"])
def test_bad_input_one_line_and_nothing_written(tmp_path, capsys, case, out_state):
    text, extra, message = BAD[case]
    path = tmp_path / "x.csv"
    path.write_text(text)
    out = tmp_path / "out"
    if out_state == "empty":
        out.mkdir()
    code, stdout, err = run(["ll144", str(path), "--out", str(out), *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert pytest.importorskip("re").search(message, err), err
    assert (not out.exists()) if out_state == "absent" else (list(out.iterdir()) == [])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x.csv"] + (["out"] if out_state == "empty" else []))


def test_unreadable_sheet_and_broken_excel(tmp_path, capsys):
    pd.DataFrame({"sex": ["F", "M"], "race_ethnicity": ["A", "A"], "selected": ["yes", "no"]}).to_excel(
        tmp_path / "x.xlsx", index=False, sheet_name="data")
    out = tmp_path / "out"
    code, _, err = run(["ll144", str(tmp_path / "x.xlsx"), "--sheet", "2023", "--out", str(out)], capsys)
    assert code == 2 and "x.xlsx: no sheet '2023'; the sheets are 'data' (give one with --sheet)" in err
    assert not out.exists()
    (tmp_path / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    code, _, err = run(["ll144", str(tmp_path / "broken.xlsx"), "--out", str(out)], capsys)
    assert code == 2 and "broken.xlsx: cannot read the excel file" in err and not out.exists()


def test_an_existing_foreign_folder_is_refused_and_an_earlier_output_replaced(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, err = run(["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(out)], capsys)
    assert code == 2 and "did not write (notes.txt)" in err and [p.name for p in out.iterdir()] == ["notes.txt"]
    fresh = tmp_path / "fresh"
    assert run(["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(fresh)], capsys)[0] == 0
    assert run(["ll144", str(EXAMPLE / "scores.csv"), "--out", str(fresh)], capsys)[0] == 0
    assert (fresh / "tables" / "regression.csv").is_file()
    doc = json.loads((fresh / "ll144.json").read_text())
    assert doc["input"]["file"] == "scores.csv"
    assert sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()) == doc["files"]
    # a note put into an earlier output survives: the re-run refuses, naming it, and changes nothing
    (fresh / "tables" / "my notes.txt").write_text("keep me")
    before = {p: p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    code, _, err = run(["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(fresh)], capsys)
    assert code == 2 and "tables/my notes.txt" in err
    assert {p: p.read_bytes() for p in fresh.rglob("*") if p.is_file()} == before


def test_hostile_labels_are_escaped_everywhere(tmp_path, capsys):
    rows = applicant_rows([(HOSTILE, "=HYPERLINK(\"http://x\")", 40, 10), ("Male", "A", 40, 20),
                           ("Female", "A", 40, 15), (HOSTILE, "A", 40, 10)])
    path = tmp_path / f"{HOSTILE}.csv".replace("/", "_")
    rows.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run(["ll144", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    page = (out / "report.html").read_text()
    summary = (out / "summary.md").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img" not in summary and "&lt;img" in summary
    assert "onerror" in page  # the label is shown, only inert
    sex_csv = (out / "tables" / "race_ethnicity.csv").read_text()
    assert "'=HYPERLINK" in sex_csv and ",=HYPERLINK" not in sex_csv  # no formula for a spreadsheet to run
    assert json.loads((out / "ll144.json").read_text())["tables"]["sex"][0]["group"] == HOSTILE  # data keeps it


def test_the_book_page_shows_the_current_output(monkeypatch):
    """book/ll144_command.md quotes its commands verbatim and shows the output they give now."""
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location("build_ll144_command_page", ROOT / "scripts" / "build_ll144_command_page.py")
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    assert page.main(["--check"]) == 0
    text = page.PAGE.read_text(encoding="utf-8")
    assert text.count("<!-- ll144-page:") == 8 and "verdict of compliance" in text
    assert "allocbias plan ll144 --rate 0.25 --group-ratio 1:4" in text and "applicants per group on" in text
    assert "Date of the bias audit: 2026-03-01" in text and "--data-source historical" in text


def _page_script():
    from .conftest import load_script

    return load_script("build_ll144_command_page")


def test_every_table_of_the_book_page_is_a_few_columns_in_words():
    """Issue 39: the page showed the command's summary table as written (15 columns, 1,086 px in a 688 px column
    at 1280 px; headers such as ``ratio_of_means``). Every table of the page now has a few columns, headers and
    values in words, at most three decimals and no "nan"; the smoke book's reading check lays it out."""
    text = _page_script().PAGE.read_text(encoding="utf-8")
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif current:
            tables.append(current)
            current = []
    assert len(tables) >= 8
    for table in tables:
        head, cells = table[0], [c for row in table[2:] for c in row]
        assert len(head) <= 7, head
        assert not [h for h in head if "_" in h.replace("`", "").split("`")[0] and not h.startswith("`")], head
        assert not [c for c in cells if re.search(r"(?<![\w`-])nan(?![\w`])|\d\.\d{4}", c)], cells


def test_the_published_comparison_refuses_a_dash_it_cannot_explain():
    """The comparison table's note says a dash is a group the 2% rule excludes, in the published report too: a
    group we compare without a published ratio would make the note wrong, and is refused."""
    page = _page_script()
    both = pd.DataFrame({"group": ["A", "B"], "applicants": [100, 90], "selected": [50, 30], "result": [0.5, 0.33],
                         "rate": [0.5, 0.333], "impact_ratio_published": [1.0, float("nan")], "impact_ratio": [1.0, 0.667],
                         "impact_ratio_low": [0.9, 0.5], "impact_ratio_high": [1.0, 0.8], "excluded": [False, False],
                         "comparator": [True, False]})
    with pytest.raises(ValueError, match=r"\['B'\]"):
        page.published_table(both)
    shown = page.published_table(both.assign(excluded=[False, True]))
    assert "| B | 90 | 30 | 0.33 | 0.333 | – | – |" in shown and "comparator (highest rate): A" in shown


def test_a_stale_page_is_caught():
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location("build_ll144_command_page", ROOT / "scripts" / "build_ll144_command_page.py")
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    text = page.PAGE.read_text(encoding="utf-8")
    blocks = {name: "stale\n" for name in ["example-stdout", "example-race", "scores-stdout", "scores-regression",
                                           "published-stdout", "published-compare", "filing-summary", "plan-stdout"]}
    assert page.render_page(text, blocks) != text
    with pytest.raises(ValueError, match="does not quote"):
        page.render_page(text.replace("--unknown Missing/Unknown", "--unknown Unknown"), blocks)


def test_missing_columns_are_named_at_once_with_close_names():
    rows = pd.DataFrame({"Gender": ["F", "M"], "Race": ["A", "B"], "selected": ["yes", "no"]})
    with pytest.raises(ValueError, match=r"no category column 'sex' \(did you mean 'Gender'\?\), 'race_ethnicity' "
                                         r"\(did you mean 'Race'\?\)"):
        ll144.bias_audit(rows)
    with pytest.raises(ValueError, match=r"no column 'selected' \(did you mean 'Hired'\?\) \(yes/no\) or 'score'"):
        ll144.bias_audit(rows.rename(columns={"Gender": "sex", "Race": "race_ethnicity", "selected": "Hired"}))


def test_negative_scores_are_accepted():
    rng = np.random.default_rng(1)
    rows = applicant_rows([("Female", "A", 100, 0), ("Male", "B", 100, 0)]).drop(columns="selected")
    rows["score"] = rng.normal(-5, 1, len(rows)) + np.where(rows["sex"] == "Male", 0.5, 0.0)
    a = ll144.bias_audit(rows)
    assert a.kind == "scoring" and a.median < 0
    sex = a.table[a.table["table"] == "sex"].set_index("group")
    assert sex.loc["Female", "rate"] == pytest.approx(float((rows.loc[rows["sex"] == "Female", "score"] > a.median).mean()))
    assert any("mean score is not positive" in w for w in a.warnings)


FILING = {"--audit-date": "2026-03-01", "--data-source": "historical",
          "--data-explanation": "All applicants screened in 2025", "--distribution-date": "2024-01-15",
          "--employer": "Example Corp", "--tool-name": "Example Screener", "--auditor": "Example Audits LLC"}


def test_published_summary_holds_every_filing_field(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(out)] + [x for kv in FILING.items() for x in kv]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err and "not ready" not in stdout
    doc = json.loads((out / "ll144.json").read_text())
    audit = ll144.bias_audit(read_data(EXAMPLE / "applicants.csv"))
    excluded = audit.excluded
    assert len(excluded) >= 1
    for name in ("published_summary.md", "published_summary.html"):
        text = (out / name).read_text()
        for value in ["2026-03-01", "All applicants screened in 2025", "2024-01-15",
                      "Example Corp", "Example Screener", "Example Audits LLC", "historical data"]:
            assert value in text, (name, value)
        assert "Number of applicants: 1,200" in text and "Not ready" not in text
        for category, n in audit.unknown.groupby("category", sort=False)["n_unknown"].sum().items():
            assert f"Applicants in an unknown category: {int(n):,}." in text
        for _, r in excluded.iterrows():  # justification, applicants and rate of each excluded category
            rate = audit.table[(audit.table["table"] == r["category"]) & (audit.table["group"] == r["group"])]["rate"]
            assert f"{r['group']}, {int(r['applicants'])} applicants, selection rate {rate.iloc[0]:.3f}" in text
        assert "less than 2% of the applicants whose category is known" in text
        assert f"allocbias {doc['version']}" in text
    md = (out / "published_summary.md").read_text()
    known = audit.table[~audit.table["unknown"]]
    assert md.count("not compared") == len(excluded)
    for _, r in known[~known["excluded"]].iterrows():
        assert f"| {r['group']} | {int(r['applicants']):,} | {r['rate']:.3f} | {r['impact_ratio']:.3f} |" in md
    assert doc["filing"]["audit_date"] == "2026-03-01" and doc["version"] == cli._version()
    assert f"allocbias {doc['version']}" in (out / "summary.md").read_text()
    assert doc["version"] in (out / "report.html").read_text()


def test_a_summary_without_the_filing_fields_says_what_is_missing(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, _ = run(["ll144", str(EXAMPLE / "applicants.csv"), "--out", str(out), "--audit-date", "2026-03-01"],
                          capsys)
    assert code == 0 and "not ready to publish without --data-source, --data-explanation, --distribution-date" in stdout
    assert "Not ready to publish**: missing --data-source" in (out / "published_summary.md").read_text()


def test_version_option(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"allocbias {cli._version()}"


def test_outputs_plain_text_integers_one_interval_spelling(tmp_path, capsys):
    path = tmp_path / "sel_yesno.csv"
    _write(applicant_rows(CELLS[:5]), path)
    out = tmp_path / "out"
    assert run(["ll144", str(path), "--out", str(out)], capsys)[0] == 0
    summary = (out / "summary.md").read_text()
    assert "sel_yesno.csv" in summary and "(highest rate)" in summary and "0.99%" in summary
    assert "\\" not in summary and "## Intersectional (sex × race/ethnicity)" in summary and "By " not in summary
    race = pd.read_csv(out / "tables" / "race_ethnicity.csv")
    assert "2303.0" not in (out / "tables" / "race_ethnicity.csv").read_text()
    assert pd.api.types.is_integer_dtype(race["applicants"]) and pd.api.types.is_integer_dtype(race["selected"])
    bounds = [c for c in race.columns if c.startswith(("rate_", "impact_ratio_"))]
    assert bounds and all(c.endswith(("_low", "_high")) for c in bounds)
    c = race.set_index("group").loc["C"]  # excluded by the 2% rule: a rate, never a ratio
    assert c["rate"] == pytest.approx(0.8) and np.isnan(c["impact_ratio"]) and not c["four_fifths"]
    # the flag and its trust columns come first and stay empty for an excluded group; then its counts and rate
    assert "| C |  |  |  |  | 5 | 4 | 0.800 |" in summary and "not compared" in summary


def test_the_2_percent_base_is_an_option():
    # 2.5% of the known applicants but 1.9% of all of them: kept under "known", excluded under "all"
    rows = applicant_rows([("Female", "A", 500, 100), ("Male", "A", 475, 100), ("Male", "B", 25, 5),
                           ("Male", "Unknown", 300, 30)])
    known = ll144.bias_audit(rows, sex=None)
    every = ll144.bias_audit(rows, sex=None, exclude_base="all")
    assert known.excluded.empty
    assert every.excluded["group"].tolist() == ["B"] and "of all applicants" in every.excluded["reason"].iloc[0]
    with pytest.raises(ValueError, match="exclude_base"):
        ll144.bias_audit(rows, exclude_base="some")
