"""Exact selection rates vs Monte Carlo at equal accuracy, measured side by side in one run.

Workload (the shape of a real audit with integer scores): ``--strata`` strata (e.g. 64 job types), each with
``--groups`` groups (18 origin x sex groups) of ``--per-group`` candidates (30 vacancies), integer scores 1..100
rounded to multiples of 5 (heavy ties, as language models answer), quotas k = 1 and 2. Design: one independent
draw per group per pool (the paper's design).

* exact: :func:`allocbias.selection.exact_draw_rates` + :func:`exact_gaps` (no randomness);
* Monte Carlo: :func:`allocbias.selection.simulate` with ``R`` rounds per stratum. Its error against the exact
  gaps is measured over ``--seeds`` seeds at ``R`` and ``4R`` rounds (the root mean square over all gaps); the
  rounds needed for a root-mean-square error of ``--target`` (default 1e-3) follow from the ``1/sqrt(R)`` law,
  and the time needed from a line ``a + b R`` through the two measured times (a fixed cost per call plus a
  cost per round; simulating that many rounds at once would need gigabytes of pool indices).

Prints the seconds of each and the ratio (Monte Carlo at equal accuracy / exact). Then times
:func:`allocbias.validity.validity_controls` on the same scores read as fixed pools (each stratum a system,
each block of one candidate per group a pool, as one vacancy of the Lippens audit): 200 permutations and 50
split halves, k = 1 and 2, all four metrics. Times are the best of
``--repeat`` calls. Run: ``nice -n 19 .venv/bin/python benchmarks/exact_rates_bench.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from allocbias.selection import exact_draw_rates, exact_gaps, simulate


def best_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strata", type=int, default=64)
    parser.add_argument("--groups", type=int, default=18)
    parser.add_argument("--per-group", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--target", type=float, default=1e-3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n = args.strata * args.groups * args.per_group
    groups = [f"g{i:02d}" for i in range(args.groups)]
    shift = rng.normal(0, 4, (args.strata, args.groups))  # each group's shift per stratum, in score points
    cands = pd.DataFrame({
        "stratum": np.repeat(np.arange(args.strata), args.groups * args.per_group),
        "group": np.tile(np.repeat(groups, args.per_group), args.strata),
    })
    raw = 70 + np.repeat(shift.ravel(), args.per_group) + rng.normal(0, 10, n)
    cands["score"] = np.clip(np.round(raw / 5) * 5, 1, 100)
    ks = [1, 2]
    reference = groups[0]
    ties = cands.groupby("stratum")["score"].nunique().mean()
    print(f"workload: {args.strata} strata x {args.groups} groups x {args.per_group} candidates = {n:,} scores, "
          f"{ties:.1f} distinct scores per stratum, k = {ks}")

    t_exact, rates = best_time(
        lambda: exact_gaps(exact_draw_rates(cands, k=ks, by="stratum"), reference=reference), args.repeat)
    truth = rates[rates["group"] != reference].set_index(["stratum", "k", "group"])["dDP"]
    print(f"exact: {t_exact:.3f} s")

    seconds, rms = {}, {}
    for rounds in (args.rounds, 4 * args.rounds):
        errors, times = [], []
        for seed in range(args.seeds):
            start = time.perf_counter()
            mc = simulate(cands, "score", k=ks, reference=reference, rounds=rounds, seed=seed, by="stratum",
                          qualified=None)
            times.append(time.perf_counter() - start)
            est = mc.set_index(["stratum", "k", "group"])["dDP"].loc[truth.index]
            errors.append(est.to_numpy() - truth.to_numpy())
        seconds[rounds] = min(times)
        rms[rounds] = float(np.sqrt(np.mean(np.square(errors))))
        print(f"Monte Carlo, {rounds:,} rounds per stratum: {min(times):.3f} s, root-mean-square error of dDP "
              f"{rms[rounds]:.4f} (x sqrt(rounds) = {rms[rounds] * np.sqrt(rounds):.3f})")
    r0, r1 = args.rounds, 4 * args.rounds
    slope = (seconds[r1] - seconds[r0]) / (r1 - r0)
    fixed = seconds[r0] - slope * r0
    print(f"Monte Carlo time = {fixed:.3f} s + {slope:.2e} s per round")
    needed = r1 * (rms[r1] / args.target) ** 2
    t_mc = fixed + slope * needed
    print(f"Monte Carlo rounds per stratum for a root-mean-square error of {args.target:g}: {needed:,.0f}, "
          f"about {t_mc:.1f} s")
    print(f"ratio Monte Carlo at equal accuracy / exact: {t_mc / t_exact:,.0f}x")

    from allocbias.validity import validity_controls

    pools = cands.assign(pool=np.tile(np.repeat(np.arange(args.per_group), 1), args.strata * args.groups))
    pools["pool"] = pools.groupby(["stratum", "group"]).cumcount()
    t_controls, res = best_time(lambda: validity_controls(pools, reference=reference, k=ks, n_perm=200, n_splits=50,
                                                          system="stratum"), 1)
    print(f"validity_controls, fixed pools of {args.groups}, {len(res.points) // len(ks):,} points, 200 permutations, "
          f"50 splits, k = {ks}: {t_controls:.1f} s")


if __name__ == "__main__":
    main()
