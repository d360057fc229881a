"""Vectorised top-k selection vs a per-round Python loop, side by side in one run.

Workload: the resume simulation at full size, 12,000 rounds x 8 candidates, quota sweep k = 1..5.
Scores are rounded to two decimals so ties at the cut are frequent (as with LLM yes-probabilities that
saturate near 0 or 1). Both variants implement the SPEC tie rule (tied candidates at the cut share the
remaining k - m seats); the script checks that they agree exactly before timing.

Run: ``nice -n 19 .venv/bin/python benchmarks/selection_bench.py``. Times are the best of several calls
(the minimum is the least disturbed by other processes on a shared machine).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allocbias.selection import select_top_k


def select_top_k_loop(scores: np.ndarray, ks: list[int]) -> np.ndarray:
    """Reference: one Python loop per quota and round, the same tie rule as :func:`select_top_k`."""
    n_rounds, pool = scores.shape
    out = np.zeros((len(ks), n_rounds, pool))
    rows = scores.tolist()
    for i, k in enumerate(ks):
        for r, row in enumerate(rows):
            cut = sorted(row, reverse=True)[k - 1]
            above = sum(1 for s in row if s > cut)
            tied = sum(1 for s in row if s == cut)
            share = (k - above) / tied
            out[i, r] = [1.0 if s > cut else share if s == cut else 0.0 for s in row]
    return out


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls (seconds)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12_000)
    parser.add_argument("--pool", type=int, default=8)
    parser.add_argument("--kmax", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=30, help="timed calls of the vectorised variant")
    parser.add_argument("--repeat-loop", type=int, default=3, help="timed calls of the Python loop")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    scores = np.round(rng.beta(0.6, 0.6, size=(args.rounds, args.pool)), 2)
    ks = list(range(1, args.kmax + 1))

    vec = select_top_k(scores, ks)
    loop = select_top_k_loop(scores, ks)
    if not np.array_equal(vec, loop):
        raise SystemExit(f"MISMATCH: max abs difference {np.abs(vec - loop).max()}")
    sums = vec.sum(axis=2)
    if not np.allclose(sums, np.array(ks)[:, None], rtol=0, atol=1e-12):
        raise SystemExit("row sums differ from k")
    cut_ties = float(np.mean((vec > 0) & (vec < 1)))

    t_vec = best_time(lambda: select_top_k(scores, ks), args.repeat)
    t_loop = best_time(lambda: select_top_k_loop(scores, ks), args.repeat_loop)
    print(f"workload: {args.rounds} rounds x {args.pool} candidates, k = {ks}")
    print(f"agreement: exact ({vec.size} selections compared; {cut_ties:.1%} fractional at tied cuts)")
    print(f"vectorised select_top_k : {t_vec * 1e3:9.2f} ms (best of {args.repeat})")
    print(f"per-round Python loop   : {t_loop * 1e3:9.2f} ms (best of {args.repeat_loop})")
    print(f"speed-up                : {t_loop / t_vec:9.1f}x (goal >= 50x)")


if __name__ == "__main__":
    main()
