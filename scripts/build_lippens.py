#!/usr/bin/env python
"""Build (or verify) ``data/lippens/scores.csv`` from a fetched copy of Lippens's repository
``llippens/computersaysno``.

The source is a clone or a bare git directory of that repository (the file is read at ``HEAD`` or ``--commit``),
or the file ``data_csn.RData`` itself; give it as ``--source`` or in ``$LIPPENS_SOURCE``. The script reads the
table ``data.csn`` of ``data/data_csn.RData`` with the ``rdata`` package (the only place the RData file is read),
keeps one row per (vacancy, candidate) with its keys and gpt-3.5-turbo's score (no vacancy, CV or answer text),
prints the commit and the counts the data card quotes, and writes or compares the table byte for byte.

Usage::

    python scripts/build_lippens.py --source path/to/computersaysno          # write data/lippens/scores.csv
    python scripts/build_lippens.py --source path/to/computersaysno --check  # exit 1 unless identical
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from allocbias.audited import datasets  # noqa: E402

SOURCE_PATH = "data/data_csn.RData"
TABLE = "data.csn"
OUT = ROOT / "data" / "lippens" / "scores.csv"
#: Lippens's ``can_identity`` label → the origin label used here (the reference group is native Dutch-speaking
#: Belgians, labelled "Dutch" in the source; "Belgian" says who they are).
ORIGIN = {"Dutch": "Belgian"}
COLUMNS = ["vacancy_id", "job_type", "occupation_code", "occupation", "experience", "vdab_id", "origin", "sex",
           "name", "temperature", "score", "bare_output", "recoded"]


def read_source(source: Path, commit: str) -> tuple[bytes, str]:
    """The RData file's bytes and the commit it was read at ("" when ``source`` is the file itself)."""
    if source.is_file():
        return source.read_bytes(), ""
    git_dir = source / ".git" if (source / ".git").exists() else source
    if not (git_dir / "HEAD").exists():
        raise SystemExit(f"{source} is neither {Path(SOURCE_PATH).name} nor a git repository")
    run = lambda *args: subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,  # noqa: E731
                                       capture_output=True).stdout
    sha = run("rev-parse", commit).decode().strip()
    return run("show", f"{sha}:{SOURCE_PATH}"), sha


def read_table(raw: bytes) -> pd.DataFrame:
    """``data.csn`` as a DataFrame (rdata's warnings about R classes it maps to plain columns are silenced)."""
    import rdata

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data_csn.RData"
        path.write_bytes(raw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            objects = rdata.read_rda(path)
    if TABLE not in objects:
        raise SystemExit(f"{SOURCE_PATH} holds no table {TABLE!r} (found {sorted(objects)})")
    return objects[TABLE]


def derive(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (vacancy, candidate): keys, temperature and score, in the source's row order."""
    job_type = raw["vac_uid"].astype(str)
    parts = job_type.str.extract(r"^(?P<code>[a-z-]+)_exp(?P<exp>\d+)$")
    if parts.isna().any(axis=None):
        bad = job_type[parts.isna().any(axis=1)].iloc[0]
        raise SystemExit(f"vac_uid {bad!r} is not '<occupation code>_exp<years>'")
    if not (parts["code"] == raw["can_occupation_code"].astype(str)).all():
        raise SystemExit("vac_uid's occupation code differs from can_occupation_code")
    output = raw["gpt_output"].astype(str).str.strip()
    score = raw["gpt_score"].astype(float)
    bare = score.notna() & (output == score.map(lambda s: "" if np.isnan(s) else str(int(s))))
    # A bare number that is not the score: Lippens recoded an answer outside the 1-100 scale (a bare "0" became 1).
    recoded = output.str.fullmatch(r"\d+") & ~bare
    out = pd.DataFrame({
        "vacancy_id": raw["vac_id"].astype(int).astype(str) + "_" + job_type,  # the key of data/input/vacancies_url.csv
        "job_type": job_type,
        "occupation_code": parts["code"],
        "occupation": raw["can_occupation"].astype(str),
        "experience": parts["exp"].astype(int),
        "vdab_id": raw["vac_vdab_id"].astype("int64"),
        "origin": raw["can_identity"].astype(str).replace(ORIGIN),
        "sex": raw["can_sex"].astype(str),
        "name": raw["can_name"].astype(str),
        "temperature": raw["gpt_temperature"].astype(float),
        "score": score.astype("Int64"),
        "bare_output": bare,
        "recoded": recoded,
    })
    return out[COLUMNS].reset_index(drop=True)


def report(table: pd.DataFrame) -> None:
    print(f"rows {len(table)}, vacancies {table['vacancy_id'].nunique()}, job types {table['job_type'].nunique()}, "
          f"occupations {table['occupation'].nunique()}, origins {table['origin'].nunique()}, "
          f"groups {table[['origin', 'sex']].drop_duplicates().shape[0]}")
    print(f"scores given {int(table['score'].notna().sum())}, missing {int(table['score'].isna().sum())}, "
          f"range {table['score'].min()}–{table['score'].max()}; answers that are the bare number "
          f"{int(table['bare_output'].sum())}, score read from a longer answer {int((~table['bare_output']).sum())}, of them a bare number recoded {int(table['recoded'].sum())}")
    print("temperatures: " + ", ".join(f"{t:g}: {n}" for t, n in table['temperature'].value_counts().sort_index()
                                       .items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.environ.get("LIPPENS_SOURCE"),
                        help="clone or git directory of llippens/computersaysno, or data_csn.RData ($LIPPENS_SOURCE)")
    parser.add_argument("--commit", default="HEAD", help="commit to read the file at (git sources only)")
    parser.add_argument("--out", type=Path, default=OUT, help="the table to write or check (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error("give --source or set LIPPENS_SOURCE")
    raw, sha = read_source(Path(args.source), args.commit)
    table = derive(read_table(raw))
    print(f"source commit: {sha or '(the RData file itself)'}")
    report(table)
    text = table.to_csv(index=False, lineterminator="\n").encode()
    return datasets.write_or_check({args.out: text}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
