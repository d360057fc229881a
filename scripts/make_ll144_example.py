#!/usr/bin/env python
"""Write the synthetic example files of ``allocbias ll144`` (``lib/allocbias/resources/ll144_example/``, shipped with
the package), seeded, and record their digests.

Two made-up hiring tools, 1,200 applicants each, one row per applicant:

* ``applicants.csv``, a selection tool: ``sex``, ``race_ethnicity``, ``selected`` (yes/no);
* ``scores.csv``, a scoring tool: ``sex``, ``race_ethnicity``, ``score`` (0-100).

The categories follow the EEO-1 labels of published audits. About 1% of applicants are Native Hawaiian or Other
Pacific Islander (below the rules' 2%, so excluded from the comparison), about 6% give no sex or race
(``Unknown``, a few as empty cells), and the selection probability (or the score's mean) differs by group so that
some intersectional ratios fall below 0.8. Nothing here describes a real tool or real applicants.

Usage::

    python scripts/make_ll144_example.py           # write both files and record their digests in the card
    python scripts/make_ll144_example.py --check   # exit 1 if the committed files differ from a fresh build
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from allocbias.audited import datasets

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "lib" / "allocbias" / "resources" / "ll144_example"
N = 1200
SEED = 144
RACES = {"White": 0.38, "Black or African American": 0.2, "Hispanic or Latino": 0.2, "Asian": 0.14,
         "Two or More Races": 0.03, "Native Hawaiian or Other Pacific Islander": 0.01, "Unknown": 0.04}
SEXES = {"Female": 0.49, "Male": 0.48, "Unknown": 0.03}
#: Log-odds of selection (and shift of the score's mean) per category: made up, to give a few ratios below 0.8.
EFFECT = {"Female": -0.15, "Male": 0.0, "Black or African American": -0.45, "Hispanic or Latino": -0.2,
          "Asian": 0.05, "White": 0.0, "Two or More Races": -0.1, "Native Hawaiian or Other Pacific Islander": 0.0,
          "Unknown": 0.0}


def build(seed: int = SEED, n: int = N) -> dict[str, pd.DataFrame]:
    """The two example tables (pure: the same seed gives the same tables)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in ("applicants", "scores"):
        sex = rng.choice(list(SEXES), size=n, p=list(SEXES.values()))
        race = rng.choice(list(RACES), size=n, p=list(RACES.values()))
        effect = np.vectorize(EFFECT.get)(sex) + np.vectorize(EFFECT.get)(race)
        frame = pd.DataFrame({"sex": sex, "race_ethnicity": race})
        if name == "applicants":
            p = 1 / (1 + np.exp(-(-0.6 + effect)))
            frame["selected"] = np.where(rng.random(n) < p, "yes", "no")
        else:
            frame["score"] = np.clip(np.round(rng.normal(60 + 12 * effect, 15), 1), 0, 100)
        blank = rng.random(n) < 0.01  # a few applicants left the sex cell empty: unknown too
        frame.loc[blank, "sex"] = ""
        out[name] = frame
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args(argv)
    differ = []
    for name, frame in build().items():
        path = FOLDER / f"{name}.csv"
        text = frame.to_csv(index=False, lineterminator="\n")
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                differ.append(path.name)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(frame)} rows, sha256 {datasets.record(path)}")
    if differ:
        print(f"differ from a fresh build: {', '.join(differ)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
