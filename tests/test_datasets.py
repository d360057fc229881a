"""Committed data tables vouch for themselves: every one is read through allocbias.audited.datasets, which checks the
SHA-256 recorded in its data card (issue: a copy with swapped labels or a changed human score loaded silently)."""
from __future__ import annotations

import shutil

import pytest

from allocbias import data as D
from allocbias.audited import datasets
from allocbias.audited.locations import resources_dir
from allocbias import rankings


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A full copy of data/ (without the score tables) that ALLOCBIAS_DATA points at."""
    copy = tmp_path / "data"
    shutil.copytree(D.data_dir(), copy, ignore=shutil.ignore_patterns("scores"))
    monkeypatch.setenv("ALLOCBIAS_DATA", str(copy))
    return copy


def test_every_committed_table_has_a_matching_digest():
    tables = datasets.committed_tables()
    assert len(tables) >= 16
    assert datasets.check_all() == []


def test_swapped_group_labels_in_rankings_are_refused(data_copy):
    path = data_copy / "bloomberg" / "rankings.csv"
    text = path.read_text()
    # swap two group labels everywhere: the table stays well formed, so only the digest can tell
    swapped = text.replace("Female Black", "@@").replace("Male Asian", "Female Black").replace("@@", "Male Asian")
    path.write_text(swapped)
    with pytest.raises(datasets.DigestError) as err:
        rankings.read_rankings()
    message = str(err.value)
    assert "rankings.csv" in message and datasets.recorded_digests(data_copy / "bloomberg" / "README.md")[
        "rankings.csv"][0] in message and datasets.sha256_bytes(swapped.encode()) in message


def test_one_changed_human_score_in_ellipse_is_refused(data_copy):
    path = data_copy / "essays" / "ellipse.csv"
    raw = path.read_bytes()
    frame = datasets.read_csv(path)
    old = frame.loc[0, "Overall"]
    text = raw.decode()
    line_end = text.index("\n", text.index("\n") + 1)
    # change the first essay's score by editing its row's Overall value through pandas would re-quote the text;
    # flip one character of the file instead and make sure the loader stops on it
    assert old in (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
    changed = raw[:line_end - 1] + (b"0" if raw[line_end - 1:line_end] != b"0" else b"1") + raw[line_end:]
    path.write_bytes(changed)
    with pytest.raises(datasets.DigestError, match="ellipse.csv"):
        D.load_ellipse()


def test_ll144_audits_and_paper_tables_are_verified(data_copy):
    path = data_copy / "ll144_audits" / "audits.csv"
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(datasets.DigestError, match="audits.csv"):
        datasets.read_csv(path)
    assert datasets.check_all(data_copy) and "audits.csv" in datasets.check_all(data_copy)[0]


def test_unrecorded_table_is_refused_unless_the_caller_names_their_own(tmp_path):
    own = tmp_path / "mine.csv"
    own.write_text("a,b\n1,2\n")
    with pytest.raises(datasets.DigestError, match="records no digest"):
        datasets.read_csv(own)
    assert datasets.read_csv(own, required=False).shape == (1, 2)
    # once a card records it, even a user's table is held to that digest
    (tmp_path / "README.md").write_text("# card\n")
    datasets.record(own)
    own.write_text("a,b\n1,3\n")
    with pytest.raises(datasets.DigestError, match="does not match"):
        datasets.read_csv(own, required=False)


def test_record_rewrites_the_section_in_place(tmp_path):
    card = tmp_path / "README.md"
    card.write_text("# card\n\n## Digests\n\nold\n\n## After\n\ntext\n")
    (tmp_path / "x.csv").write_text("a\n1\n")
    datasets.record(tmp_path / "x.csv")
    text = card.read_text()
    assert "old" not in text and text.count("## Digests") == 1 and text.endswith("## After\n\ntext\n")
    assert datasets.recorded_digests(card)["x.csv"][1] == 4


def test_command_line_check(data_copy, capsys):
    assert datasets.main(["check", str(data_copy)]) == 0
    (data_copy / "bloomberg" / "rankings.csv").write_bytes(b"kind,name\n")
    assert datasets.main(["check", str(data_copy)]) == 1
    err = capsys.readouterr().err
    assert "rankings.csv" in err and "does not match" in err


def test_the_tables_shipped_with_the_package_are_checked_too(tmp_path, capsys):
    """names, jobs and the ll144 examples live in allocbias/resources (they ship in the wheel) and keep their digests."""
    shipped = {p.relative_to(resources_dir()).as_posix() for p in datasets.committed_tables()
               if resources_dir() in p.parents}
    assert {"names.csv", "jobs/retail.yaml", "ll144_example/applicants.csv", "ll144_example/scores.csv"} <= shipped
    copy = tmp_path / "resources"
    shutil.copytree(resources_dir(), copy)
    assert datasets.main(["check", str(copy)]) == 0
    (copy / "names.csv").write_bytes(b"kind,name\n")
    (copy / "jobs" / "retail.yaml").write_bytes(b"key: retail\n")
    assert datasets.main(["check", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "names.csv" in err and "retail.yaml" in err and "does not match" in err
    with pytest.raises(datasets.DigestError, match="names.csv"):
        D.load_names(copy / "names.csv")
