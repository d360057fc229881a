"""``allocbias ll144`` under the faults an auditor meets (issue 38): a filing that checks itself, nothing filed lost
on a re-run, input that cannot mislead (non-answers, repeated columns, control characters, encodings, separators,
Excel sheets, missing extras, Ctrl-C) and files written whole (a full disk, leftovers of killed runs).

Every test runs the command on a few hundred applicants with 200 draws, so each takes about a second.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import unicodedata

import pandas as pd
import pytest

from allocbias import cli, ll144
from allocbias import ll144_command as command
from allocbias.audited.datasets import sha256_bytes

CELLS = [("Female", "A", 40, 12), ("Female", "B", 40, 20), ("Male", "A", 60, 30), ("Male", "B", 40, 24)]
FILING = ["--audit-date", "2026-01-15", "--data-source", "historical", "--data-explanation",
          "All applicants screened in 2025", "--distribution-date", "2025-01-01"]


def applicant_rows(cells=CELLS) -> pd.DataFrame:
    rows = []
    for sex, race, n, s in cells:
        rows += [(sex, race, "yes")] * s + [(sex, race, "no")] * (n - s)
    return pd.DataFrame(rows, columns=["sex", "race_ethnicity", "selected"])


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "applicants.csv"
    applicant_rows().to_csv(path, index=False)
    return path


def run(args: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = cli.main(["ll144", *args, "--draws", "200"])
    except KeyboardInterrupt:  # would end the test session itself
        pytest.fail("Ctrl-C escaped the command as a traceback")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snapshot(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}."))


def sex_table(out) -> pd.DataFrame:
    return pd.read_csv(out / "tables" / "sex.csv", keep_default_na=False)


# --------------------------------------------------------------------------- 1. a filing that checks itself


@pytest.mark.parametrize("option", ["--audit-date", "--distribution-date"])
@pytest.mark.parametrize("value", ["2026-13-45", "yesterday", "03/01/2026", "2026-3-1", "20260301", "2026-02-30"])
def test_filing_dates_are_iso_dates_or_refused_naming_the_option(tmp_path, data, capsys, option, value):
    out = tmp_path / "out"
    code, _, err = run([str(data), "--out", str(out), option, value], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{option} '{value}'" in err and "YYYY-MM-DD" in err, err
    assert not out.exists()


@pytest.mark.parametrize("option", ["--data-explanation", "--employer", "--test-data-reason"])
def test_a_blank_filing_text_is_refused(tmp_path, data, capsys, option):
    out = tmp_path / "out"
    code, _, err = run([str(data), "--out", str(out), "--data-source", "test", option, " \t "], capsys)
    assert code == 2 and f"{option} is blank" in err and not out.exists(), err


def test_test_data_need_the_reason_and_the_summary_says_only_what_was_given(tmp_path, data, capsys):
    out = tmp_path / "out"
    base = [str(data), "--out", str(out), "--audit-date", "2026-01-15", "--distribution-date", "2025-01-01",
            "--data-source", "test", "--data-explanation", "Résumés written by a generator, 400 applicants"]
    code, stdout, err = run(base, capsys)
    assert code == 0, err
    assert "not ready to publish without --test-data-reason" in stdout
    md = (out / "published_summary.md").read_text()
    assert "**Not ready to publish**: missing --test-data-reason." in md
    assert "- Why historical data were not used: not given (pass --test-data-reason)" in md
    assert "insufficient" not in md and "insufficient" not in (out / "published_summary.html").read_text()
    assert json.loads((out / "ll144.json").read_text())["ready"] is False

    code, stdout, err = run([*base, "--test-data-reason", "The tool has not been used yet"], capsys)
    assert code == 0 and "not ready" not in stdout, err
    md = (out / "published_summary.md").read_text()
    assert "Not ready" not in md and "- Source of the data: test data\n" in md
    assert "- Why historical data were not used: The tool has not been used yet" in md
    assert ("- Explanation of the data (how the test data were generated and obtained): Résumés written by a "
            "generator, 400 applicants") in md
    html = (out / "published_summary.html").read_text()
    assert "Why historical data were not used: The tool has not been used yet" in html
    doc = json.loads((out / "ll144.json").read_text())
    assert doc["ready"] is True and doc["filing"]["test_data_reason"] == "The tool has not been used yet"


def test_a_test_data_reason_goes_with_test_data_only(tmp_path, data, capsys):
    out = tmp_path / "out"
    code, _, err = run([str(data), "--out", str(out), *FILING, "--test-data-reason", "none"], capsys)
    assert code == 2 and "--test-data-reason" in err and "--data-source test" in err and not out.exists()


def test_historical_data_are_called_what_the_user_said(tmp_path, data, capsys):
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out), *FILING], capsys)[0] == 0
    md = (out / "published_summary.md").read_text()
    assert "- Source of the data: historical data\n" in md and "employer's own" not in md


def test_dates_far_apart_are_noted_not_refused(tmp_path, data, capsys):
    out = tmp_path / "out"
    late = [str(data), "--out", str(out), "--audit-date", "2026-01-15", "--distribution-date", "2027-02-01",
            "--data-source", "historical"]
    code, stdout, _ = run(late, capsys)
    assert code == 0 and "more than a year after the audit date 2026-01-15" in stdout
    assert "other employers' use" in stdout
    doc = json.loads((out / "ll144.json").read_text())
    assert any("more than a year" in n for n in doc["notes"])
    assert "more than a year" not in (out / "published_summary.md").read_text()  # only what the user gave
    # a tool in use, audited again: distribution before the audit is the usual case, no note
    code, stdout, _ = run([str(data), "--out", str(tmp_path / "again"), *FILING], capsys)
    assert code == 0 and "note: the distribution" not in stdout and "other employers" not in stdout


# --------------------------------------------------------------------------- 2. nothing filed is lost


def test_a_ready_or_signed_summary_is_never_replaced_in_silence(tmp_path, data, capsys):
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out), *FILING], capsys)[0] == 0
    with (out / "published_summary.md").open("a") as f:
        f.write("\nSigned: A. Auditor, 2026-01-16\n")
    before = snapshot(out)
    code, _, err = run([str(data), "--out", str(out)], capsys)  # re-run without the filing options
    assert code == 2 and "was ready to publish (audit date 2026-01-15)" in err and "published_summary.md" in err
    assert "--replace" in err and "published_summary-2026-01-15.md" in err
    assert snapshot(out) == before

    code, stdout, err = run([str(data), "--out", str(out), "--replace"], capsys)
    assert code == 0, err
    assert "kept: the earlier published summary as published_summary-2026-01-15.md" in stdout
    assert (out / "published_summary-2026-01-15.md").read_bytes() == before["published_summary.md"]
    assert (out / "published_summary-2026-01-15.html").read_bytes() == before["published_summary.html"]
    assert "Not ready to publish" in (out / "published_summary.md").read_text()


@pytest.fixture(scope="module")
def audit():
    return ll144.bias_audit(applicant_rows(), draws=200), {"file": "applicants.csv", "sha256": "0" * 64, "rows": 180}


def filing(distribution="2025-01-01", audit_date="2026-01-15"):
    return {"audit_date": audit_date, "data_source": "historical", "data_explanation": "All applicants, 2025",
            "distribution_date": distribution}


def test_kept_summaries_travel_with_every_later_output(tmp_path, audit):
    a, source = audit
    out = tmp_path / "out"
    command.write_audit(a, out, source, filing=filing())
    first = snapshot(out)
    command.write_audit(a, out, source, filing=filing())  # the same summary again: nothing is lost
    with pytest.raises(command.LL144CommandError, match="ready to publish"):
        command.write_audit(a, out, source, filing=filing("2025-02-01"))
    assert command.write_audit(a, out, source, replace=True).kept == (
        "published_summary-2026-01-15.md", "published_summary-2026-01-15.html")
    command.write_audit(a, out, source, filing=filing("2025-02-01"))  # a draft is replaced; the kept ones stay
    written = command.write_audit(a, out, source, filing=filing("2025-03-01"), replace=True)
    assert written.kept == ("published_summary-2026-01-15-2.md", "published_summary-2026-01-15-2.html")
    doc = json.loads((out / "ll144.json").read_text())
    assert doc["kept"] == ["published_summary-2026-01-15-2.html", "published_summary-2026-01-15-2.md",
                           "published_summary-2026-01-15.html", "published_summary-2026-01-15.md"]
    assert (out / "published_summary-2026-01-15.md").read_bytes() == first["published_summary.md"]
    assert "Distribution date of the tool: 2025-02-01" in (out / "published_summary-2026-01-15-2.md").read_text()
    assert "Distribution date of the tool: 2025-03-01" in (out / "published_summary.md").read_text()


def test_a_signed_draft_is_kept_too(tmp_path, audit):
    a, source = audit
    out = tmp_path / "out"
    command.write_audit(a, out, source, filing={"audit_date": "2026-01-15"})  # not ready
    command.write_audit(a, out, source, filing={"audit_date": "2026-01-16"})  # a draft: replaced
    (out / "published_summary.md").write_text("my own version\n")
    with pytest.raises(command.LL144CommandError, match=r"edited since allocbias ll144 wrote it \(published_summary.md\)"):
        command.write_audit(a, out, source, filing=filing())
    command.write_audit(a, out, source, filing=filing(), replace=True)
    assert (out / "published_summary-2026-01-16.md").read_text() == "my own version\n"
    assert not (out / "published_summary-2026-01-16.html").exists()  # an unedited draft: nothing to keep


def test_an_edited_file_is_named_and_kept_and_digests_are_recorded(tmp_path, data, capsys):
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out)], capsys)[0] == 0
    doc = json.loads((out / "ll144.json").read_text())
    files = snapshot(out)
    assert set(doc["digests"]) == set(files) - {"ll144.json"}
    assert all(sha256_bytes(files[f]) == d for f, d in doc["digests"].items())
    with (out / "tables" / "sex.csv").open("a") as f:
        f.write("my note\n")
    before = snapshot(out)
    for extra in ([], ["--replace"]):
        code, _, err = run([str(data), "--out", str(out), *extra], capsys)
        assert code == 2 and "tables/sex.csv: edited since allocbias ll144 wrote it" in err, err
        assert snapshot(out) == before


# --------------------------------------------------------------------------- 3. input that cannot mislead


def test_placeholder_non_answers_are_unknown_and_listed(tmp_path, capsys):
    cells = CELLS + [(label, "A", 3, 1) for label in ("NA", "n/a", " null ", "None", "-", "?", "#N/A", "NaN")]
    path = tmp_path / "x.csv"
    applicant_rows(cells).to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = run([str(path), "--out", str(out)], capsys)
    assert code == 0, err
    sex = sex_table(out)
    assert sorted(sex.loc[sex["unknown"] == False, "group"]) == ["Female", "Male"]  # noqa: E712
    unknown = json.loads((out / "ll144.json").read_text())["unknown"]
    listed = {u["label"]: u["n_unknown"] for u in unknown if u["category"] == "sex"}
    assert listed == {"NA": 3, "N/A": 3, "null": 3, "None": 3, "-": 3, "?": 3, "#N/A": 3, "NaN": 3}
    assert "'-" in (out / "tables" / "unknown.csv").read_text()  # listed there too (a spreadsheet reads it as text)
    # --unknown still replaces the list: NA is then a group, with a warning that it reads like a non-answer
    code, stdout, _ = run([str(path), "--out", str(tmp_path / "own"), "--unknown", "Unknown"], capsys)
    assert code == 0 and "'NA'" in stdout and "non-answer" in stdout
    assert "NA" in set(sex_table(tmp_path / "own")["group"])


@pytest.mark.parametrize("header", ["sex,race_ethnicity,selected,sex", "sex,race_ethnicity, sex ,selected"])
def test_a_repeated_column_name_is_refused_naming_it(tmp_path, capsys, header):
    path = tmp_path / "x.csv"
    path.write_text(header + "\n" + "\n".join(["F,A,yes,M", "M,A,no,F"]) + "\n")
    out = tmp_path / "out"
    code, _, err = run([str(path), "--out", str(out)], capsys)
    assert code == 2 and "x.csv: the header names a column more than once: 'sex' (columns 1, " in err, err
    assert not out.exists()


def test_a_repeated_column_name_in_a_sheet_is_refused(tmp_path, capsys):
    frame = applicant_rows()
    frame.insert(3, "Sex", frame["sex"])
    frame.columns = ["sex", "race_ethnicity", "selected", "sex"]
    frame.to_excel(tmp_path / "x.xlsx", index=False, sheet_name="2025")
    code, _, err = run([str(tmp_path / "x.xlsx"), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "x.xlsx, sheet '2025': the header names a column more than once: 'sex' (columns 1, 4)" in err


def _controls(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) == "Cc" and c not in "\n\r\t"]


def test_control_characters_never_reach_the_terminal_or_a_report(tmp_path, capsys):
    clear, csi = "Female\x1b[2J", "Male\x9b31m\x07"
    cells = [(clear, "A\x1b]0;x\x07", 40, 12), (clear, "B", 40, 20), (csi, "A\x1b]0;x\x07", 60, 30), (csi, "B", 40, 24)]
    path = tmp_path / "x.csv"
    applicant_rows(cells).to_csv(path, index=False)
    out = tmp_path / "out"
    code, stdout, err = run([str(path), "--out", str(out), "--employer", "Corp\x1b[31m"], capsys)
    assert code == 0, err
    assert not _controls(stdout + err) and "Female\\x1b[2J" in stdout
    for name, raw in snapshot(out).items():
        assert not _controls(raw.decode("utf-8")), name
    assert "Female\\x1b[2J" in (out / "tables" / "sex.csv").read_text()
    assert "Corp\\x1b[31m" in (out / "published_summary.html").read_text()
    doc = json.loads((out / "ll144.json").read_text())  # the data keep the label exactly
    assert {r["group"] for r in doc["tables"]["sex"]} == {clear, csi}
    # and an error naming a bad label shows it escaped
    path.write_text("sex,race_ethnicity,selected\nF,A,yes\nM,A,\x1b[2Jmaybe\n")
    code, _, err = run([str(path), "--out", str(tmp_path / "bad")], capsys)
    assert code == 2 and not _controls(err) and "\\x1b[2Jmaybe" in err


LABELS = [("Femme", "Autochtone – Amérindien", 40, 12), ("Femme", "Blanc", 40, 20), ("Homme", "Autochtone – Amérindien", 60, 30),
          ("Homme", "Blanc", 40, 24)]


@pytest.mark.parametrize("encoding,note", [("utf-8-sig", False), ("utf-16", False), ("cp1252", True)])
def test_the_encoding_is_detected(tmp_path, capsys, encoding, note):
    frame = applicant_rows(LABELS)
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False, encoding=encoding)
    out = tmp_path / "out"
    code, stdout, err = run([str(path), "--out", str(out)], capsys)
    assert code == 0, err
    race = pd.read_csv(out / "tables" / "race_ethnicity.csv")
    assert set(race["group"]) == {"Autochtone – Amérindien", "Blanc"}
    assert ("x.csv is not UTF-8: read as Windows-1252" in stdout) == note
    assert json.loads((out / "ll144.json").read_text())["input"]["encoding"] == encoding


def test_an_encoding_that_cannot_be_detected_is_named_with_its_option(tmp_path, capsys):
    frame = applicant_rows(LABELS)
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False, encoding="utf-16-le")  # no byte-order mark
    code, _, err = run([str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "x.csv: holds NUL bytes" in err and "--encoding utf-16-le" in err
    assert run([str(path), "--out", str(tmp_path / "out"), "--encoding", "utf-16-le"], capsys)[0] == 0
    code, _, err = run([str(path), "--out", str(tmp_path / "out2"), "--encoding", "klingon"], capsys)
    assert code == 2 and "--encoding klingon: no such encoding" in err
    frame.to_csv(path, index=False, encoding="cp1252")
    code, _, err = run([str(path), "--out", str(tmp_path / "out3"), "--encoding", "utf-8"], capsys)
    assert code == 2 and "x.csv: cannot be read as utf-8" in err and "--encoding" in err


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_the_separator_is_detected(tmp_path, capsys, sep):
    frame = applicant_rows().rename(columns={"race_ethnicity": "Race, ethnicity"})  # a comma inside a name
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False, sep=sep)
    out = tmp_path / "out"
    code, _, err = run([str(path), "--out", str(out), "--race", "Race, ethnicity"], capsys)
    assert code == 0, err
    assert sex_table(out).set_index("group").loc["Female", "applicants"] == 80
    assert json.loads((out / "ll144.json").read_text())["input"]["separator"] == sep
    # --sep names it outright; a wrong one gives columns that hold separators, and the error names --sep
    code, _, err = run([str(path), "--out", str(tmp_path / "o2"), "--race", "Race, ethnicity", "--sep", ","], capsys)
    assert code == 2 and "no category column" in err and "read as comma-separated (','); if its separator" in err


def test_the_excel_sheet_with_the_columns_is_found_or_named(tmp_path, capsys):
    path = tmp_path / "x.xlsx"
    with pd.ExcelWriter(path) as book:
        pd.DataFrame({"Notes": ["Applicants of 2025, exported 2026-01-10"]}).to_excel(book, sheet_name="Notes", index=False)
        applicant_rows().to_excel(book, sheet_name="2025", index=False)
    out = tmp_path / "out"
    code, stdout, err = run([str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert "x.xlsx: read sheet '2025': the first sheet, 'Notes', lacks the columns" in stdout
    assert json.loads((out / "ll144.json").read_text())["input"]["sheet"] == "2025"
    with pd.ExcelWriter(path) as book:
        pd.DataFrame({"Notes": ["two years"]}).to_excel(book, sheet_name="Notes", index=False)
        applicant_rows().to_excel(book, sheet_name="2024", index=False)
        applicant_rows().to_excel(book, sheet_name="2025", index=False)
    code, _, err = run([str(path), "--out", str(tmp_path / "o2")], capsys)
    assert code == 2 and "the sheets '2024', '2025' all have them: choose one with --sheet" in err
    with pd.ExcelWriter(path) as book:
        pd.DataFrame({"Notes": ["none"]}).to_excel(book, sheet_name="Notes", index=False)
        applicant_rows().rename(columns={"sex": "Gender"}).to_excel(book, sheet_name="2025", index=False)
    code, _, err = run([str(path), "--out", str(tmp_path / "o3")], capsys)
    assert code == 2 and "no category column 'sex'" in err
    assert "the workbook's other sheets are '2025' (choose one with --sheet)" in err
    code, _, err = run([str(path), "--out", str(tmp_path / "o4"), "--sheet", "2023"], capsys)
    assert code == 2 and "x.xlsx: no sheet '2023'; the sheets are 'Notes', '2025'" in err


def test_a_missing_extra_is_named_with_its_install_command(tmp_path, capsys, monkeypatch):
    applicant_rows().to_excel(tmp_path / "x.xlsx", index=False)
    monkeypatch.setitem(sys.modules, "python_calamine", None)  # the data extra is not installed
    code, _, err = run([str(tmp_path / "x.xlsx"), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err == ("allocbias: error: x.xlsx: reading an Excel file needs the data extra: "
                                 "pip install 'allocbias[data]'\n")
    monkeypatch.delitem(sys.modules, "allocbias.scoring.serving", raising=False)
    monkeypatch.setitem(sys.modules, "httpx", None)  # the audit extra is not installed
    code = cli.main(["audit", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 2 and err == ("allocbias: error: allocbias audit needs the audit extra: "
                                 "pip install 'allocbias[audit]' (missing: httpx)\n")


def test_ctrl_c_at_start_up_ends_with_one_line(capsys, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    try:
        code = cli.main(["ll144", "x.csv", "--out", "out"])
    except KeyboardInterrupt:  # would end the test session itself
        pytest.fail("Ctrl-C at start-up escaped the command as a traceback")
    err = capsys.readouterr().err
    assert code == 130 and err.count("\n") == 1 and "Traceback" not in err and "scored" not in err


def test_ctrl_c_in_ll144_says_what_it_left(tmp_path, data, capsys, monkeypatch):
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out)], capsys)[0] == 0
    before = snapshot(out)
    read_csv = pd.read_csv

    def interrupted_while_reading(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(pd, "read_csv", interrupted_while_reading)
    code, _, err = run([str(data), "--out", str(out)], capsys)
    assert code == 130 and err.startswith("allocbias ll144: interrupted; nothing was written") and "scored" not in err
    monkeypatch.setattr(pd, "read_csv", read_csv)
    real, calls = command.write_atomic, []

    def interrupted_on_the_third_file(path, text, **kw):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(path, text, **kw)

    monkeypatch.setattr(command, "write_atomic", interrupted_on_the_third_file)
    code, _, err = run([str(data), "--out", str(out), *FILING], capsys)
    assert code == 130 and err.count("\n") == 1 and "scored" not in err and "nothing was written" in err, err
    assert snapshot(out) == before and leftovers(out) == []
    monkeypatch.setattr(command, "write_atomic", real)

    def interrupted_after(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "fsync_dir", interrupted_after)  # Ctrl-C once the new folder is in place
    code, _, err = run([str(data), "--out", str(out), *FILING], capsys)
    assert code == 130 and "interrupted after the audit was written whole to" in err
    assert "Not ready" not in (out / "published_summary.md").read_text()


# --------------------------------------------------------------------------- 5. files written whole


def test_a_full_disk_names_the_file_and_keeps_the_earlier_audit(tmp_path, data, capsys, monkeypatch):
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out)], capsys)[0] == 0
    before = snapshot(out)
    real, files = os.fsync, []

    def full_on_the_second_file(fd):
        if stat.S_ISREG(os.fstat(fd).st_mode):
            files.append(fd)
            if len(files) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", full_on_the_second_file)
    code, _, err = run([str(data), "--out", str(out), *FILING], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"could not write {out / 'report.html'}: the disk is full; {out} is as it was (the earlier audit is kept)" in err
    assert "Errno" not in err
    assert snapshot(out) == before and leftovers(out) == []
    files.clear()
    fresh = tmp_path / "fresh"
    code, _, err = run([str(data), "--out", str(fresh)], capsys)
    assert code == 2 and f"nothing was written ({fresh} was not created)" in err
    assert not fresh.exists() and leftovers(fresh) == []


def test_every_file_is_written_atomically(tmp_path, data, capsys, monkeypatch):
    real, written = command.write_atomic, []
    monkeypatch.setattr(command, "write_atomic", lambda path, text, **kw: written.append(path) or real(path, text, **kw))
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out)], capsys)[0] == 0
    doc = json.loads((out / "ll144.json").read_text())
    names = sorted("/".join(p.parts[-2:]) if p.parent.name == "tables" else p.name for p in written)
    assert names == doc["files"] == sorted(snapshot(out))


def test_leftovers_of_killed_runs_are_removed_or_put_back(tmp_path, data, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out"
    assert run([str(data), "--out", str(out)], capsys)[0] == 0
    earlier = snapshot(out)
    # killed while writing: a temporary folder beside OUT, and a temporary file of write_atomic inside it
    partial = tmp_path / f".out.partial-{dead.pid}"
    (partial / "tables").mkdir(parents=True)
    (partial / "report.html").write_text("<html>half")
    (out / ".summary.md.partial-x1y2").write_text("half")
    # killed between its two renames: OUT moved aside, the new folder not yet in place
    out.rename(tmp_path / f".out.old-{dead.pid}")
    alive = tmp_path / f".out.partial-{os.getppid()}"  # a running process's folder is left alone
    alive.mkdir()
    code, stdout, err = run([str(data), "--out", str(out)], capsys)
    assert code == 0, err
    assert f"note: put back {out} from .out.old-{dead.pid}" in stdout
    assert f"note: removed .out.partial-{dead.pid}" in stdout and "removed .summary.md.partial-x1y2" in stdout
    assert leftovers(out) == [alive.name]
    now = snapshot(out)
    assert now.pop("ll144.json") and now == {k: v for k, v in earlier.items() if k != "ll144.json"}
