"""Reading an applicant file for ``allocbias ll144``: the calamine engine against today's openpyxl, side by side.

Writes one synthetic applicant file (sex with blanks and non-answers, the seven EEO-1 race/ethnicity categories,
Yes/No selections) to a temporary folder in three formats: ``--xlsx-rows`` rows as .xlsx (default 200,000) and
``--rows`` rows as CSV and Parquet (default 1,000,000). Then times, best of ``--repeat`` calls:

* .xlsx read by :func:`allocbias.ll144_command.read_data` (pandas' ``calamine`` engine, python-calamine) and by
  the same call with ``engine="openpyxl"`` (the reader before), and the ratio openpyxl / calamine; the audits of
  the two frames must be equal;
* CSV and Parquet read by :func:`read_data`, and read + :func:`allocbias.ll144.bias_audit` (the whole
  computation of the command, ``draws=4000``), against the goal of 5 s.

Run: ``nice -n 19 .venv/bin/python benchmarks/ll144_read_bench.py`` (``--xlsx-rows 20000 --rows 100000`` for a
quick look).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd

from allocbias import ll144_command
from allocbias.ll144_command import read_data
from allocbias.measures import ll144

RACES = ["Hispanic or Latino", "White", "Black or African American", "Native Hawaiian or Other Pacific Islander",
         "Asian", "Native American or Alaska Native", "Two or More Races", "", "Decline to answer"]
SEXES = ["Female", "Male", "", "  ", "Decline to answer"]


def applicants(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(SEXES, n, p=[0.46, 0.46, 0.03, 0.01, 0.04])
    race = rng.choice(RACES, n, p=[0.18, 0.35, 0.17, 0.01, 0.17, 0.01, 0.04, 0.04, 0.03])
    selected = np.where(rng.random(n) < 0.3, "Yes", "No")
    return pd.DataFrame({"sex": sex, "race_ethnicity": race, "selected": selected})


def best_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xlsx-rows", type=int, default=200_000)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        xlsx, csv, parquet = folder / "a.xlsx", folder / "a.csv", folder / "a.parquet"
        start = time.perf_counter()
        applicants(args.xlsx_rows).to_excel(xlsx, index=False)
        big = applicants(args.rows)
        big.to_csv(csv, index=False)
        big.to_parquet(parquet, index=False)
        print(f"wrote the files in {time.perf_counter() - start:.1f} s ({args.xlsx_rows:,} .xlsx rows, "
              f"{args.rows:,} CSV/Parquet rows)")

        t_new, new = best_time(lambda: read_data(xlsx), args.repeat)
        with mock.patch.object(ll144_command, "EXCEL_ENGINE", "openpyxl"):
            t_old, old = best_time(lambda: read_data(xlsx), args.repeat)
        # calamine reads a cell of spaces as empty, openpyxl as the spaces: the audit reads both as (blank)
        same = [ll144.bias_audit(f, intervals=False) for f in (new, old)]
        pd.testing.assert_frame_equal(same[0].table, same[1].table)
        pd.testing.assert_frame_equal(same[0].unknown, same[1].unknown)
        print(f".xlsx {args.xlsx_rows:,} rows: calamine {t_new:.2f} s, openpyxl {t_old:.2f} s, "
              f"ratio openpyxl/calamine {t_old / t_new:.1f}x (goal: calamine < 5 s)")
        t_audit, _ = best_time(lambda: ll144.bias_audit(read_data(xlsx)), args.repeat)
        print(f".xlsx {args.xlsx_rows:,} rows, read + bias_audit: {t_audit:.2f} s")

        for path in (csv, parquet):
            t_read, _ = best_time(lambda: read_data(path), args.repeat)
            t_all, _ = best_time(lambda: ll144.bias_audit(read_data(path)), args.repeat)
            print(f"{path.suffix} {args.rows:,} rows: read {t_read:.2f} s, read + bias_audit {t_all:.2f} s "
                  f"(goal < 5 s: {t_all / 5:.2f} of it)")


if __name__ == "__main__":
    main()
