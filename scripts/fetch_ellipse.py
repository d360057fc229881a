#!/usr/bin/env python
"""Write (or verify) ``data/essays/ellipse.csv`` from a fetched copy of the ELLIPSE corpus repository.

The source is https://github.com/scrosseye/ELLIPSE-Corpus: its test split ``ELLIPSE_Final_github_test.zip`` is a
password-protected zip whose password the repository's README publishes (``ellipse_test``). Give the repository
(a clone or a bare git directory: the zip is read from ``HEAD`` or ``--commit``) or the zip itself as ``--source``
or in ``$ELLIPSE_SOURCE``. The committed file keeps the source's own values, unchanged, in eight of its columns
(:data:`COLUMNS`), all 2,571 rows, in the source's row order; nothing else is derived here (the sample the study
scores is drawn by ``allocbias.data.load_ellipse``).

Usage::

    python scripts/fetch_ellipse.py --source path/to/ELLIPSE-Corpus            # write data/essays/ellipse.csv
    python scripts/fetch_ellipse.py --source path/to/ELLIPSE-Corpus --check    # exit 1 unless byte-identical
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd

from allocbias.audited import datasets

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "data" / "essays" / "ellipse.csv"
ZIP_PATH = "ELLIPSE_Final_github_test.zip"
CSV_NAME = "ELLIPSE_Final_github_test.csv"
PASSWORD = b"ellipse_test"  # published in the repository's README
COLUMNS = ["text_id_kaggle", "prompt", "full_text", "Overall", "gender", "race_ethnicity", "SES", "grade"]


def read_zip(source: Path, commit: str) -> tuple[bytes, str]:
    """The zip's bytes and the commit it was read at ("" for a plain file)."""
    if source.is_file():
        return source.read_bytes(), ""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if not (git_dir / "HEAD").exists():
        raise SystemExit(f"{source} is neither {ZIP_PATH} nor a git repository")

    def git(*args: str) -> bytes:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True).stdout

    sha = git("rev-parse", commit).decode().strip()
    return git("show", f"{sha}:{ZIP_PATH}"), sha


def build(zip_bytes: bytes) -> bytes:
    """The committed CSV's bytes: the eight columns of the test split, values as the source writes them."""
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        raw = archive.read(CSV_NAME, pwd=PASSWORD)
    # Read every column as text so no value is re-formatted (e.g. "3.0" stays "3.0").
    table = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise SystemExit(f"{CSV_NAME} lacks columns {missing}")
    out = io.StringIO()
    table[COLUMNS].to_csv(out, index=False, lineterminator="\n")
    return out.getvalue().encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("ELLIPSE_SOURCE"),
                        help="the ELLIPSE-Corpus repository (clone or bare git dir) or the test zip")
    parser.add_argument("--commit", default="HEAD", help="the commit to read the zip at (default HEAD)")
    parser.add_argument("--check", action="store_true", help="compare with the committed file; exit 1 if different")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set ELLIPSE_SOURCE")
    zip_bytes, sha = read_zip(Path(args.source), args.commit)
    new = build(zip_bytes)
    table = pd.read_csv(io.BytesIO(new), dtype={"text_id_kaggle": str})
    print(f"source commit {sha or '(a plain file)'}: {len(table)} essays, {table['prompt'].nunique()} prompts")
    for col in ("race_ethnicity", "gender", "SES", "grade"):
        print(f"  {col}: " + ", ".join(f"{k} {v}" for k, v in table[col].value_counts().items()))
    if args.check:
        if not TARGET.exists() or TARGET.read_bytes() != new:
            print(f"{TARGET.relative_to(ROOT)} differs from the source", file=sys.stderr)
            return 1
        print(f"{TARGET.relative_to(ROOT)} is byte-identical to the source's columns")
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(new)
    datasets.record(TARGET)
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(new):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
