"""What the installed commands need ships in the wheel (issue: `allocbias audit` from a wheel stopped with "data folder
not found"). The wheel is built here from a copy of the package (a few seconds, no network); the end-to-end check —
a fresh environment running `allocbias ll144` and `allocbias audit` from an empty folder — is
``scripts/check_wheel.sh``, run by CI (``.ci/run``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import allocbias
from allocbias.audited import datasets
from allocbias.audited.locations import resources_dir

ROOT = Path(__file__).resolve().parents[1]
LIB = Path(allocbias.__file__).parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    pytest.importorskip("setuptools")
    src = tmp_path_factory.mktemp("src")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(LIB, src / "lib" / "allocbias", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(src)], check=True, capture_output=True)
    (path,) = out.glob("allocbias-*.whl")
    return zipfile.ZipFile(path)


def test_every_shipped_file_is_in_the_wheel(wheel):
    names = set(wheel.namelist())
    shipped = {f"allocbias/resources/{p.relative_to(resources_dir()).as_posix()}"
               for p in resources_dir().rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert {"allocbias/resources/names.csv", "allocbias/resources/jobs/retail.yaml",
            "allocbias/resources/audit_report.ipynb", "allocbias/resources/ll144_example/scores.csv"} <= shipped
    assert shipped - names == set()


def test_the_wheel_holds_the_library_and_no_book_data(wheel):
    names = wheel.namelist()
    modules = {f"allocbias/{p.relative_to(LIB).as_posix()}" for p in LIB.rglob("*.py")}
    assert modules - set(names) == set()
    assert not [n for n in names if n.startswith(("data/", "notebooks/", "book/", "tests/"))]


def test_shipped_tables_keep_their_digests_in_the_wheel(wheel):
    """The cards travel with the tables, so an installed copy is verified as the checkout's is."""
    for table in [p for p in datasets.committed_tables() if resources_dir() in p.parents]:
        inside = f"allocbias/resources/{table.relative_to(resources_dir()).as_posix()}"
        card = f"allocbias/resources/{datasets.card_for(table).relative_to(resources_dir()).as_posix()}"
        assert wheel.read(inside) == table.read_bytes() and card in wheel.namelist()
        assert datasets.recorded_digests(datasets.card_for(table))[table.name][0] == datasets.sha256_bytes(
            wheel.read(inside))



def test_shipped_data_cards_name_public_sources_only():
    """A reader of the wheel sees its data cards and nothing else: no card may point at the project's internal
    design notes (one said "SPEC: software engineer, ..."), a machine path or a file outside the package."""
    import re

    from allocbias.audited.locations import resources_dir

    internal = re.compile(r"\bSPEC\b|SPEC\.md|\.\./shared|/work/|/home/|/root/")
    cards = sorted(p for p in resources_dir().rglob("*.md"))
    assert cards, "the package ships no data card"
    found = [(p.name, m.group()) for p in cards for m in internal.finditer(p.read_text(encoding="utf-8"))]
    assert not found, found
