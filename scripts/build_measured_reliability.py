#!/usr/bin/env python
"""Write (or verify) ``lib/allocbias/resources/measured_reliability.csv``: the reliabilities of the selection-rate
gaps of four public LLM audits that the chapter "How large must an audit be?" measures, in the form
``allocbias plan`` reads them (:func:`allocbias.measures.planning.measured_reliability`).

The table is computed by the chapter's own function, :func:`allocbias.study.audit_size.audit_size_findings`, at the
book's default profile (the chapter's default parameters), and taken from its ``measured`` table
(:func:`allocbias.study.audit_size.measured_reliability_table`). The chapter compares its values with the shipped
ones and says whether they are the same. Its digest is recorded in the data card beside it.

Usage::

    python scripts/build_measured_reliability.py          # write the table and record its digest
    python scripts/build_measured_reliability.py --check  # exit 1 unless the shipped table is identical
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from allocbias.audited import datasets  # noqa: E402
from allocbias.audited.locations import resources_dir  # noqa: E402
from allocbias.measures.planning import MEASURED_FILE  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped table instead of writing it")
    args = parser.parse_args(argv)
    from allocbias.study.audit_size import audit_size_findings, measured_reliability_table

    table = measured_reliability_table(audit_size_findings())
    print(table[["key", "size per half", "reliability", "reliability of one unit"]].to_string(index=False))
    data = table.to_csv(index=False, lineterminator="\n").encode("utf-8")
    return datasets.write_or_check({resources_dir() / MEASURED_FILE: data}, check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
