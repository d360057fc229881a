"""The audit report's selection point: pools drawn twice (rates, then gaps) vs once, side by side in one run.

``allocbias.audit.selection_intervals`` computes, on the scores and on every bootstrap replicate, the selection
rates of every group (``pool_selection_table``) and their gaps to the reference group. It used to call
``allocation_table`` for the gaps, which draws and selects the same pools again; now it takes the gaps from the
rates it has (``reference_gaps``). Workload: the committed scores of one study system on its four jobs
(1,920 candidates), quotas 1 and 2, 1,000 rounds. The script checks that both give the same table, value for
value, before timing.

Run: ``nice -n 19 .venv/bin/python benchmarks/selection_point_bench.py``. Times are the best of several calls
(the minimum is the least disturbed by other processes on a shared machine); compare the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import timeit

import pandas as pd

from allocbias.scoring import catalog
from allocbias.measures.tables import allocation_table, pool_selection_table, reference_gaps


def drawn_twice(scores: pd.DataFrame, ks: list[int], rounds: int, seed: int) -> pd.DataFrame:
    """The old way: the rates, then the gaps from pools drawn again (the rates are what the report shows too)."""
    pool_selection_table(scores, ks, rounds, seed, by=())
    return allocation_table(scores, ks, rounds, seed, by=())


def drawn_once(scores: pd.DataFrame, ks: list[int], rounds: int, seed: int) -> pd.DataFrame:
    """The report's way now: the gaps from the rates at hand."""
    return reference_gaps(pool_selection_table(scores, ks, rounds, seed, by=()), by=())


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls (seconds), by :func:`timeit.repeat`."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="smollm2-fp32-paper")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    scores = catalog.study_scores([args.system]).drop(columns="system")
    ks = [1, 2]
    pd.testing.assert_frame_equal(drawn_twice(scores, ks, args.rounds, args.seed),
                                  drawn_once(scores, ks, args.rounds, args.seed), check_exact=True)
    twice = best_time(lambda: drawn_twice(scores, ks, args.rounds, args.seed), args.repeat)
    once = best_time(lambda: drawn_once(scores, ks, args.rounds, args.seed), args.repeat)
    print(f"selection point, {len(scores)} candidates, k={ks}, {args.rounds} rounds: same table")
    print(f"pools drawn twice: {twice * 1000:8.1f} ms (best of {args.repeat})")
    print(f"pools drawn once:  {once * 1000:8.1f} ms (best of {args.repeat})")
    print(f"ratio twice / once: {twice / once:.2f}")


if __name__ == "__main__":
    main()
