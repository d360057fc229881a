#!/usr/bin/env python
"""Copy (or verify) ``data/ll144_audits/audits.csv`` from a fetched copy of Gerchick et al.'s repository.

The file is ``audits/audits_full.csv`` of https://github.com/aclu-national/auditing-the-audits-facct-2025,
committed unchanged (no derived table is committed: the chapter recomputes everything from it). The source is a
clone or a bare git directory of that repository (the file is read from its ``HEAD``, or from ``--commit``), or
the CSV itself; give it as ``--source`` or in ``$LL144_AUDITS_SOURCE``. The script prints the counts that the data
card quotes.

Usage::

    python scripts/fetch_ll144_audits.py --source path/to/auditing-the-audits-facct-2025          # copy
    python scripts/fetch_ll144_audits.py --source path/to/auditing-the-audits-facct-2025 --check  # exit 1 if different
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from allocbias.audited import datasets

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "data" / "ll144_audits" / "audits.csv"
SOURCE_PATH = "audits/audits_full.csv"


def read_source(source: Path, commit: str) -> tuple[bytes, str]:
    """The CSV's bytes and the commit it was read at ("" for a plain file)."""
    if source.is_file():
        return source.read_bytes(), ""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if not (git_dir / "HEAD").exists():
        raise SystemExit(f"{source} is neither the CSV nor a git repository")
    run = lambda *args: subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,  # noqa: E731
                                       capture_output=True).stdout
    sha = run("rev-parse", commit).decode().strip()
    return run("show", f"{sha}:{SOURCE_PATH}"), sha


def counts(raw: bytes) -> dict[str, int]:
    frame = pd.read_csv(io.BytesIO(raw))
    out = {"rows": len(frame), "columns": frame.shape[1]}
    for col in ("audit_id", "audit_report_id", "deploying_entity", "tool_vendor", "auditor"):
        out[col] = int(frame[col].nunique())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("LL144_AUDITS_SOURCE"),
                        help="clone or git directory of the repository, or the CSV ($LL144_AUDITS_SOURCE)")
    parser.add_argument("--commit", default="HEAD", help="commit to read the file at (git sources only)")
    parser.add_argument("--out", type=Path, default=TARGET, help=f"where to write (default {TARGET.relative_to(ROOT)})")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set LL144_AUDITS_SOURCE")
    raw, sha = read_source(Path(args.source), args.commit)
    print(f"source commit: {sha or '(plain file)'}")
    print(f"sha256: {hashlib.sha256(raw).hexdigest()}")
    for name, value in counts(raw).items():
        print(f"{name}: {value}")
    if args.check:
        same = args.out.is_file() and args.out.read_bytes() == raw
        print(f"{args.out}: {'identical' if same else 'DIFFERS'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(raw)
    datasets.record(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
