#!/usr/bin/env python
"""Build (or verify) ``data/bloomberg/rankings.csv`` and ``answers.csv`` from a fetched copy of Bloomberg's
repository ``BloombergGraphics/2024-openai-gpt-hiring-racial-discrimination``.

The source is a clone or a bare git directory of that repository (files are read at ``HEAD`` or ``--commit``)
or a plain folder holding its ``data/intermediary/resume_ranking/`` tree; give it as ``--source`` or in
``$BLOOMBERG_HIRING_SOURCE``. Every ``*.json`` answer below ``resume_ranking/`` is parsed with
``allocbias.rankings.build_tables``, and the published top-1 table ``data/output/performance_ranking.csv`` is
copied unchanged; the script prints the commit and the counts the data card quotes.

Usage::

    python scripts/build_bloomberg_rankings.py --source path/to/2024-openai-gpt-hiring-racial-discrimination
    python scripts/build_bloomberg_rankings.py --source ... --check   # exit 1 unless all three tables are identical
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from allocbias.audited import datasets  # noqa: E402
from allocbias.rankings import build_tables  # noqa: E402

PREFIX = "data/intermediary/resume_ranking/"
OUT = ROOT / "data" / "bloomberg"


PUBLISHED = "data/output/performance_ranking.csv"


def read_published(source: Path, sha: str) -> bytes:
    """Bloomberg's published top-1 table, unchanged."""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if sha:
        return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{sha}:{PUBLISHED}"], check=True,
                              capture_output=True).stdout
    return (source / PUBLISHED).read_bytes()


def read_records(source: Path, commit: str) -> tuple[list[tuple[str, dict]], str]:
    """(path, JSON) of every answer file, and the commit read ("" for a plain folder)."""
    try:
        files, sha = datasets.source_files(source, commit, PREFIX)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    return [(path, json.loads(raw)) for path, raw in files], sha


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("BLOOMBERG_HIRING_SOURCE"),
                        help="clone, git directory or folder of the repository ($BLOOMBERG_HIRING_SOURCE)")
    parser.add_argument("--commit", default="HEAD", help="commit to read (git sources only)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the two tables (default data/bloomberg)")
    parser.add_argument("--check", action="store_true", help="compare with the tables in --out instead of writing")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set BLOOMBERG_HIRING_SOURCE")
    records, sha = read_records(Path(args.source), args.commit)
    rankings, answers = build_tables(records)
    print(f"source commit: {sha or '(plain folder)'}")
    for oversampled, part in answers.groupby("oversampled"):
        label = "oversampled" if oversampled else "main"
        print(f"{label}: answers {len(part)}, parsed {int((part['parse_error'] == '').sum())}, "
              f"fully ranked {int(part['fully_ranked'].sum())}, unparsed {int((part['parse_error'] != '').sum())}")
    print(f"all: answers {len(answers)}, rankings rows {len(rankings)}")
    tables = {"rankings.csv": rankings.to_csv(index=False, lineterminator="\n").encode(),
              "answers.csv": answers.to_csv(index=False, lineterminator="\n").encode(),
              "performance_ranking.csv": read_published(Path(args.source), sha)}
    return datasets.write_or_check({args.out / name: text for name, text in tables.items()}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
