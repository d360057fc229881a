"""The published audits' impact-ratio tables: the one-row path of ``impact_ratio_table`` against its group-by path,
side by side.

Workload: chapter 15's recomputation of every published Local Law 144 audit table
(:func:`allocbias.ll144.published_audit_counts` of the committed audits, one table per audit and category, no
margins, the 2% rule), then :func:`allocbias.ll144.table_characteristics` of those tables (the false-flag rates
and detectable ratios of chapter 15's section on the audits' sizes).

* one-row path: a table that lists each group once, labels that sort in Python as a group-by sorts them, is only
  put in order (the default);
* group-by path: every table summed by a pandas group-by (``_sortable`` patched to say no), as every table was
  before; the two must give the same tables, exactly.

Prints the seconds of each (best of ``--repeat`` calls, CPU time) and the ratio group-by / one-row, then the
seconds of ``table_characteristics``. Run: ``nice -n 19 .venv/bin/python benchmarks/ll144_tables_bench.py``
(with ``lib`` on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import pandas as pd

from allocbias import data, ll144
from allocbias.measures.ll144 import tables as tables_module


def best_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    counts = ll144.published_audit_counts(pd.read_csv(data.data_dir() / "ll144_audits" / "audits.csv"))

    def recompute() -> pd.DataFrame:
        return ll144.impact_ratio_table(counts, group=list(ll144.AUDIT_GROUPS), applicants="number_of_applications",
                                        selected="n_selected_or_n_above_median", by=list(ll144.AUDIT_TABLE),
                                        margins=False)

    t_new, new = best_time(recompute, args.repeat)
    with mock.patch.object(tables_module, "_sortable", return_value=False):
        t_old, old = best_time(recompute, args.repeat)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    print(f"impact_ratio_table, {len(counts):,} published rows, {len(new):,} table rows: one-row path {t_new:.2f} s, "
          f"group-by path {t_old:.2f} s, ratio {t_old / t_new:.1f}x (CPU, best of {args.repeat})")
    t_ch, _ = best_time(lambda: ll144.table_characteristics(new, by=list(ll144.AUDIT_TABLE), rates=True), 1)
    print(f"table_characteristics of those tables: {t_ch:.2f} s (CPU)")


if __name__ == "__main__":
    main()
