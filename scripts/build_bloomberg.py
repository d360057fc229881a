#!/usr/bin/env python
"""Derive (or verify) ``data/bloomberg/rankings.csv`` and ``answers.csv`` from a fetched copy of Bloomberg's
2024 GPT hiring audit (https://github.com/BloombergGraphics/2024-openai-gpt-hiring-racial-discrimination,
Apache-2.0).

The answers are ``data/intermediary/resume_ranking/<model>/<job>/1121/[oversampled/]run_<n>.json``: each holds the
chat completion (``choices[0].message.content``) and its ``context`` (``default_order``: the eight names in the
order shown; ``demo_order``: their groups). Ranks are parsed by :func:`allocbias.rankings.parse_ranking`; an
answer it refuses is kept in ``answers.csv`` with its reason and left out of ``rankings.csv``. Give the repository
(a clone or a bare git directory, read at ``HEAD`` or ``--commit``) as ``--source`` or in ``$BLOOMBERG_SOURCE``.

Usage::

    python scripts/build_bloomberg.py --source path/to/2024-openai-gpt-hiring-racial-discrimination
    python scripts/build_bloomberg.py --source path/to/2024-openai-gpt-hiring-racial-discrimination --check
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

from allocbias.rankings import ANSWER_COLUMNS, BLOOMBERG_GROUPS, RANKING_COLUMNS, RankingParseError, parse_ranking

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "bloomberg"
PREFIX = "data/intermediary/resume_ranking/"


def _git(git_dir: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, input=stdin).stdout


def read_answers(source: Path, commit: str) -> tuple[list[tuple[str, dict]], str]:
    """(answer_id, parsed JSON) of every answer file, in natural order of answer_id, and the commit read."""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if not (git_dir / "HEAD").exists():
        raise SystemExit(f"{source} is not a git repository")
    sha = _git(git_dir, "rev-parse", commit).decode().strip()
    paths = [p for p in _git(git_dir, "ls-tree", "-r", "--name-only", sha, PREFIX).decode().splitlines()
             if p.endswith(".json")]
    if not paths:
        raise SystemExit(f"{source}: no answer files under {PREFIX} at {sha}")
    blob = _git(git_dir, "cat-file", "--batch", stdin="".join(f"{sha}:{p}\n" for p in paths).encode())
    out, pos = [], 0
    for p in paths:
        header_end = blob.index(b"\n", pos)
        size = int(blob[pos:header_end].split()[2])
        body = blob[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
        out.append((p[len(PREFIX):-len(".json")], json.loads(body)))
    key = lambda item: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", item[0])]  # noqa: E731
    return sorted(out, key=key), sha


def build(answers: list[tuple[str, dict]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rank_rows, answer_rows = [], []
    for answer_id, doc in answers:
        parts = answer_id.split("/")
        model, job, oversampled = parts[0], parts[1], parts[3] == "oversampled"
        context = doc["context"]
        names = [" ".join(w.capitalize() for w in n.split()) for n in context["default_order"]]
        groups = [BLOOMBERG_GROUPS[c] for c in context["demo_order"]]
        text = doc["choices"][0]["message"]["content"]
        try:
            rank, named = parse_ranking(text, names, source=f"{PREFIX}{answer_id}.json")
        except RankingParseError as err:
            status, n_named = "unparsed: " + str(err).split(": ", 1)[1].split("; answer:")[0], 0
        else:
            n_named = int(named.sum())
            status = "ranked" if n_named == 8 else "partial"
            for pos, (name, group) in enumerate(zip(names, groups)):
                rank_rows.append((model, job, answer_id, oversampled, pos, name, group, rank[pos], bool(named[pos])))
        answer_rows.append((answer_id, model, job, oversampled, status, n_named, doc.get("model", ""),
                            int(doc.get("created", 0)), text))
    return (pd.DataFrame(rank_rows, columns=list(RANKING_COLUMNS)),
            pd.DataFrame(answer_rows, columns=list(ANSWER_COLUMNS)))


def to_bytes(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False, lineterminator="\n", float_format="%.4g")
    return buf.getvalue().encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("BLOOMBERG_SOURCE"),
                        help="the Bloomberg repository (clone or bare git dir)")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--check", action="store_true", help="compare with the committed files; exit 1 if different")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set BLOOMBERG_SOURCE")
    answers, sha = read_answers(Path(args.source), args.commit)
    rankings, table = build(answers)
    print(f"source commit {sha}: {len(table)} answers; " + ", ".join(
        f"{k} {v}" for k, v in table["status"].str.split(":").str[0].value_counts().items()))
    main_runs = table[~table["oversampled"]]
    print(f"  behind the published table (not oversampled): {len(main_runs)} answers, "
          f"{int((main_runs['status'] == 'ranked').sum())} fully ranked")
    git_dir = Path(args.source) / ".git" if (Path(args.source) / ".git").exists() else Path(args.source)
    published = _git(git_dir, "show", f"{sha}:data/output/performance_ranking.csv")  # Bloomberg's table, unchanged
    files = {OUT / "rankings.csv": to_bytes(rankings), OUT / "answers.csv": to_bytes(table),
             OUT / "published_top1.csv": published}
    if args.check:
        differ = [p.name for p, b in files.items() if not p.exists() or p.read_bytes() != b]
        if differ:
            print(f"differ from the source: {differ}", file=sys.stderr)
            return 1
        print("rankings.csv, answers.csv and published_top1.csv are byte-identical to what the source gives")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for p, b in files.items():
        p.write_bytes(b)
        print(f"wrote {p.relative_to(ROOT)} ({len(b):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
