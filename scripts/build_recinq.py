#!/usr/bin/env python
"""Build (or verify) ``data/recinq/results.csv``, ``prompt_lab.csv`` and ``clean.csv`` from a fetched copy of
re:cinq's repository ``re-cinq/hiring-bias``.

The source is a clone or a bare git directory of that repository (files are read at ``HEAD`` or ``--commit``) or
a plain folder holding its ``results/``, ``results-prompt-lab/`` and ``results-clean/`` trees; give it as
``--source`` or in ``$RECINQ_SOURCE``. Every ``*.json`` result below those three folders becomes one row: its keys
(model, job description, variant, run; strategy for the prompt lab), the time it was collected, the 1–10 score and
the interview recommendation. No justification, strengths or concerns text is committed. A result without a score
is kept, with the reason in ``problem``. The script prints the commit and the counts the data card quotes.

Usage::

    python scripts/build_recinq.py --source path/to/hiring-bias          # write the three tables
    python scripts/build_recinq.py --source path/to/hiring-bias --check  # exit 1 unless all three are identical
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from allocbias.audited import datasets  # noqa: E402

OUT = ROOT / "data" / "recinq"
#: table file → the source folder it is built from
KINDS = {"results.csv": "results/", "prompt_lab.csv": "results-prompt-lab/", "clean.csv": "results-clean/"}
INTERVIEW = ("yes", "maybe", "no")


def read_records(source: Path, commit: str, prefix: str) -> tuple[list[tuple[str, bytes]], str]:
    """(path, raw JSON bytes) of every ``*.json`` below ``prefix``, sorted by path, and the commit read."""
    try:
        files, sha = datasets.source_files(source, commit, prefix)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    return sorted(files), sha


def problem_of(response) -> str:
    """Why a result has no usable score ("" when it has one)."""
    if not isinstance(response, dict):
        return "response is not an object"
    if not response:
        return "empty answer"
    score, interview = response.get("score"), response.get("recommend_interview")
    if score is None:
        return "no score in answer (keys: " + ", ".join(sorted(response)) + ")"
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 1 <= score <= 10:
        return f"score {score!r} outside 1-10"
    if interview not in INTERVIEW:
        return f"interview {interview!r} not yes/maybe/no"
    return ""


def derive(records: list[tuple[str, bytes]], prompt_lab: bool) -> pd.DataFrame:
    """One row per result file: keys, timestamp, score, interview and the problem (if any)."""
    rows = []
    for path, raw in records:
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}: not JSON ({exc})") from exc
        stem = Path(path).name.removesuffix(".json")
        parts = stem.split("__")
        if len(parts) != 4 or not parts[3].startswith("run"):
            raise SystemExit(f"{path}: file name is not <variant>__<model>__<jd>__run<n>.json")
        variant, model, jd, run = parts[0], parts[1], parts[2], int(parts[3][3:])
        for key, value in (("variant", variant), ("model", model), ("jd", jd), ("run", run)):
            if record.get(key) != value:
                raise SystemExit(f"{path}: field {key!r} is {record.get(key)!r}, its file name says {value!r}")
        response = record.get("response")
        problem = problem_of(response)
        row = {"model": model, "vendor": record.get("vendor", ""), "tier": record.get("tier", ""), "job": jd,
               "variant": variant, "axis": variant.split("_", 1)[0],
               "level": variant.split("_", 1)[1] if "_" in variant else "",
               "run": run, "timestamp": record.get("timestamp", ""),
               "score": pd.NA if problem else int(response["score"]),
               "interview": "" if problem else response["recommend_interview"], "problem": problem}
        if prompt_lab:
            strategy = Path(path).parent.name
            if record.get("strategy") != strategy:
                raise SystemExit(f"{path}: field 'strategy' is {record.get('strategy')!r}, its folder says "
                                 f"{strategy!r}")
            row = {"strategy": strategy, **row}
        rows.append(row)
    table = pd.DataFrame(rows)
    keys = (["strategy"] if prompt_lab else []) + ["model", "job", "variant", "run"]
    table = table.sort_values(keys, kind="stable").reset_index(drop=True)
    table["score"] = table["score"].astype("Int64")
    return table


def report(name: str, table: pd.DataFrame) -> None:
    bad = table[table["problem"] != ""]
    extra = f", strategies {table['strategy'].nunique()}" if "strategy" in table else ""
    print(f"{name}: rows {len(table)}, models {table['model'].nunique()}, jobs {table['job'].nunique()}, "
          f"variants {table['variant'].nunique()}, runs {table['run'].nunique()}{extra}; without a score "
          f"{len(bad)}" + ("" if bad.empty else " (" + "; ".join(f"{p}: {n}" for p, n in
                                                              bad["problem"].value_counts().items()) + ")"))
    if not bad.empty:
        print(f"  models without a score: {bad['model'].value_counts().to_dict()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("RECINQ_SOURCE"),
                        help="clone, git directory or folder of re-cinq/hiring-bias ($RECINQ_SOURCE)")
    parser.add_argument("--commit", default="HEAD", help="commit to read (git sources only)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the three tables (default data/recinq)")
    parser.add_argument("--check", action="store_true", help="compare with the tables in --out instead of writing")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set RECINQ_SOURCE")
    tables, shas = {}, set()
    for name, prefix in KINDS.items():
        records, sha = read_records(Path(args.source), args.commit, prefix)
        shas.add(sha)
        table = derive(records, prompt_lab=name == "prompt_lab.csv")
        report(name, table)
        tables[name] = table.to_csv(index=False, lineterminator="\n").encode()
    print(f"source commit: {shas.pop() or '(plain folder)'}")
    return datasets.write_or_check({args.out / name: text for name, text in tables.items()}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
