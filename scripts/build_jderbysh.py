#!/usr/bin/env python
"""Build (or verify) ``data/jderbysh/scores.csv`` from a fetched copy of ``jderbysh/AIHiringBias``.

The source is a clone or a bare git directory of that repository (files are read at ``HEAD`` or ``--commit``)
or a plain folder holding its ``names/names.txt`` and ``results/``; give it as ``--source`` or in
``$JDERBYSH_SOURCE``. The repository's ``simulation.py`` loops repetition → name (``names/names.txt`` order) →
job ad (``job11`` … ``job33``) → résumé (``resume11`` … ``resume33``) and writes a row only when the answer parses
into four numbers, so a missing answer leaves no trace. This script rebuilds that expected sequence for each
results file, aligns the file's rows with it (the rows are an ordered subsequence) and writes one row per
*expected* call: the answers present with their four subscores, the missing ones flagged (``missing = True``,
empty scores). It prints the commit and the counts the data card quotes.

Usage::

    python scripts/build_jderbysh.py --source path/to/AIHiringBias          # write data/jderbysh/scores.csv
    python scripts/build_jderbysh.py --source path/to/AIHiringBias --check  # exit 1 unless identical
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from allocbias.audited import datasets  # noqa: E402

OUT = ROOT / "data" / "jderbysh" / "scores.csv"
NAMES = "names/names.txt"
#: results file → (model as named in the repository's ``simulation.py`` when the file was written,
#: repetitions, whether only same-industry job × résumé pairs were asked)
FILES = {
    "results/3.5_turbo_evaluation_results.csv": ("gpt-3.5-turbo-0125", 1, False),
    "results/5.1_evaluation_results1.csv": ("gpt-5.1-2025-11-13", 3, True),
    "results/5.1_evaluation_results2.csv": ("gpt-5.1-2025-11-13", 3, False),
}
INDUSTRY = {"1": "Admin", "2": "Call Centre", "3": "Hospitality"}
SUBSCORES = ["experience", "skills", "achievements", "resume_quality"]
SOURCE_SUBSCORES = ["Experience", "Skills", "Achievements", "Resume"]
COLUMNS = ["model", "source_file", "repetition", "job", "resume", "job_industry", "resume_industry", "name",
           "sex", "race", *SUBSCORES, "score", "missing"]


def reader(source: Path, commit: str):
    """A function path → bytes over the source, and the commit read ("" for a plain folder)."""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if (git_dir / "HEAD").exists() and (git_dir / "objects").exists():
        git = ["git", f"--git-dir={git_dir}"]
        sha = subprocess.run([*git, "rev-parse", commit], check=True, capture_output=True, text=True).stdout.strip()
        return (lambda path: subprocess.run([*git, "show", f"{sha}:{path}"], check=True,
                                            capture_output=True).stdout), sha
    if not (source / NAMES).is_file():
        raise SystemExit(f"{source} is neither a git repository nor a folder with {NAMES}")
    return (lambda path: (source / path).read_bytes()), ""


def read_names(raw: bytes) -> list[tuple[str, str, str]]:
    """(name, sex, race) in file order; codes as ``simulation.py`` maps them (sex 0 female; race 0 White_US)."""
    out = []
    for number, line in enumerate(raw.decode().splitlines(), start=1):
        if not line.strip():
            continue
        name, sex, race = line.strip().split(",")
        if sex not in ("0", "1") or race not in ("0", "1"):
            raise SystemExit(f"{NAMES} line {number}: codes {sex!r}, {race!r} are not 0/1")
        out.append((name, "Female" if sex == "0" else "Male", "White" if race == "0" else "African American"))
    return out


def expected(names, repetitions: int, matched_only: bool) -> list[tuple[int, str, str, str]]:
    """The calls in ``simulation.py``'s order: (repetition, job, résumé, name)."""
    jobs = [f"job{i}{j}" for i in "123" for j in "123"]
    resumes = [f"resume{i}{j}" for i in "123" for j in "123"]
    return [(rep, job, resume, name) for rep in range(1, repetitions + 1) for name, _, _ in names
            for job in jobs for resume in resumes if not matched_only or job[3] == resume[6]]


def align(path: str, frame: pd.DataFrame, calls: list[tuple[int, str, str, str]]) -> list[int | None]:
    """For each expected call, the index of its row in ``frame`` (None if missing); rows must be a subsequence."""
    keys = list(zip(frame["name"], frame["job_file"].str.removesuffix(".txt"),
                    frame["resume_file"].str.removesuffix(".txt")))
    out: list[int | None] = []
    row = 0
    for _, job, resume, name in calls:
        if row < len(keys) and keys[row] == (name, job, resume):
            out.append(row)
            row += 1
        else:
            out.append(None)
    if row != len(keys):
        raise SystemExit(f"{path}: row {row + 2} ({keys[row]}) is out of simulation.py's order")
    return out


def derive(read) -> pd.DataFrame:
    names = read_names(read(NAMES))
    who = {name: (sex, race) for name, sex, race in names}
    parts = []
    for path, (model, repetitions, matched_only) in FILES.items():
        frame = pd.read_csv(io.BytesIO(read(path)))
        for col in ("name", "gender", "race", "job_file", "resume_file", *SOURCE_SUBSCORES):
            if col not in frame:
                raise SystemExit(f"{path}: no column {col!r}")
        if frame[SOURCE_SUBSCORES].isna().any(axis=None) or not frame[SOURCE_SUBSCORES].isin(range(26)).all(axis=None):
            raise SystemExit(f"{path}: a subscore is missing or outside 0-25")
        if "Total" in frame and not (frame["Total"] == frame[SOURCE_SUBSCORES].sum(axis=1)).all():
            raise SystemExit(f"{path}: Total is not the sum of the four subscores")
        calls = expected(names, repetitions, matched_only)
        rows = align(path, frame, calls)
        table = pd.DataFrame(calls, columns=["repetition", "job", "resume", "name"])
        table.insert(0, "model", model)
        table.insert(1, "source_file", Path(path).name)
        table["job_industry"] = table["job"].str[3].map(INDUSTRY)
        table["resume_industry"] = table["resume"].str[6].map(INDUSTRY)
        table["sex"] = table["name"].map(lambda n: who[n][0])
        table["race"] = table["name"].map(lambda n: who[n][1])
        present = [r for r in rows if r is not None]
        mask = [r is not None for r in rows]
        src_sex = frame["gender"].str.capitalize().to_numpy()
        if not (table.loc[mask, "sex"].to_numpy() == src_sex[present]).all():
            raise SystemExit(f"{path}: a row's gender differs from {NAMES}")
        for new, old in zip(SUBSCORES, SOURCE_SUBSCORES):
            values = pd.Series(pd.NA, index=table.index, dtype="Int64")
            values[mask] = frame[old].to_numpy()[present]
            table[new] = values
        table["score"] = table[SUBSCORES].sum(axis=1, min_count=4).astype("Int64")
        table["missing"] = ~pd.Series(mask, index=table.index)
        parts.append(table[COLUMNS])
    return pd.concat(parts, ignore_index=True)


def report(table: pd.DataFrame) -> None:
    for (model, source), part in table.groupby(["model", "source_file"], sort=False):
        print(f"{model} ({source}): calls {len(part)}, answers {int((~part['missing']).sum())}, missing "
              f"{int(part['missing'].sum())}, repetitions {part['repetition'].nunique()}, names "
              f"{part['name'].nunique()}, job × résumé pairs {part[['job', 'resume']].drop_duplicates().shape[0]} "
              f"(same industry {part.loc[part['job_industry'] == part['resume_industry'], ['job', 'resume']].drop_duplicates().shape[0]})")
    print(f"all: rows {len(table)}, score range {table['score'].min()}–{table['score'].max()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("JDERBYSH_SOURCE"),
                        help="clone, git directory or folder of jderbysh/AIHiringBias ($JDERBYSH_SOURCE)")
    parser.add_argument("--commit", default="HEAD", help="commit to read (git sources only)")
    parser.add_argument("--out", type=Path, default=OUT, help="the table to write or check (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set JDERBYSH_SOURCE")
    read, sha = reader(Path(args.source), args.commit)
    table = derive(read)
    print(f"source commit: {sha or '(plain folder)'}")
    report(table)
    text = table.to_csv(index=False, lineterminator="\n").encode()
    return datasets.write_or_check({args.out: text}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
