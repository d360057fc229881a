"""The four-fifths rule's exact characteristics for many groups at once, against a plain per-group double loop.

Workload: 1,000 groups of 10 to 10,000 applicants each (log-uniform, seeded), comparators of 10 to 10,000
applicants selected at 5% to 60%. ``allocbias.measures.ll144.power`` computes every group's false-flag rate and
detectable ratio in one vectorised pass (the comparator's outcomes as one ragged array, the group's as a binomial
distribution function, one bracketing root search for all groups together). The baseline is the definition written as it reads:
for each group, a double loop over both groups' outcomes with ``scipy.stats.binom.pmf``; it is timed on the 20
smallest groups only (the whole workload would take hours) after checking that both agree there to 1e-9.

Run: ``nice -n 19 .venv/bin/python benchmarks/four_fifths_bench.py``. Times are the best of several calls (the
least disturbed on a shared machine); the goal is the vectorised pass under 2 s for the whole workload, and the
ratio says how much of it the vectorisation buys.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
from scipy import stats

from allocbias.measures.ll144 import power


def workload(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ng = np.round(10 ** rng.uniform(1, 4, n)).astype(int)
    nc = np.round(10 ** rng.uniform(1, 4, n)).astype(int)
    return ng, nc, np.round(rng.uniform(0.05, 0.6, n) * nc) / nc


def vectorised(ng, nc, rc) -> tuple[np.ndarray, np.ndarray]:
    return power.false_flag_rate(ng, nc, rc), power.detectable_ratio(ng, nc, rc)


def double_loop(ng, nc, rc) -> np.ndarray:
    """False-flag rates by the definition: every pair of outcomes, one group at a time."""
    out = []
    for a, b, r in zip(ng, nc, rc):
        xg, xc = np.arange(a + 1), np.arange(b + 1)
        pg, pc = stats.binom.pmf(xg, a, r), stats.binom.pmf(xc, b, r)
        total = 0.0
        for j in range(b + 1):
            total += pc[j] * pg[xg * 5 * b < 4 * a * xc[j]].sum()
        out.append(total)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ng, nc, rc = workload(args.groups, args.seed)
    small = np.argsort(ng + nc)[:20]
    np.testing.assert_allclose(power.false_flag_rate(ng[small], nc[small], rc[small]),
                               double_loop(ng[small], nc[small], rc[small]), atol=1e-9)
    t_all = min(timeit.repeat(lambda: vectorised(ng, nc, rc), number=1, repeat=args.repeat))
    t_vec_small = min(timeit.repeat(lambda: power.false_flag_rate(ng[small], nc[small], rc[small]), number=1,
                                    repeat=args.repeat))
    t_loop_small = min(timeit.repeat(lambda: double_loop(ng[small], nc[small], rc[small]), number=1,
                                     repeat=args.repeat))
    print(f"{args.groups:,} groups of up to {int(ng.max()):,} applicants (comparators up to {int(nc.max()):,}): "
          f"false-flag rates and detectable ratios in {t_all:.2f} s "
          f"({'under' if t_all < 2 else 'OVER'} the 2 s goal)")
    print(f"20 smallest groups, false-flag rates: double loop {t_loop_small:.3f} s, vectorised {t_vec_small:.4f} s, "
          f"ratio {t_loop_small / t_vec_small:.0f}x")


if __name__ == "__main__":
    main()
