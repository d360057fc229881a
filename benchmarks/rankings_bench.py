"""Bootstrap intervals of top-k selection rates over Bloomberg's answers: one matrix product for all
replicates (``allocbias.rankings.top_k_selection_table``) vs a per-replicate loop, side by side in one run.

Workload: the chapter's, every (model, job) cell of the answers behind Bloomberg's table (about 950 answers
each), 8 groups, k = 1..7, 2,000 replicates. The loop draws the same replicates (the same generator and seed)
and recomputes the rates replicate by replicate; the script checks that both give the same interval bounds
before timing.

A second comparison times reading answers under a parse rule (``rankings.rule_rankings``, the chapter's
fuzzy and first-occurrence tables): with the compiled name patterns cached (``functools.lru_cache`` on the
8,000-odd prompt names) against compiling them afresh for every answer, on the first ``--n-answers`` answers;
both must give the same rankings.

Run: ``nice -n 19 .venv/bin/python benchmarks/rankings_bench.py`` (with ``lib`` on ``PYTHONPATH``). Times are
the best of several calls.
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

from allocbias.audited import name_matching
from allocbias import rankings
from allocbias.data import GROUPS


def loop_bounds(main, ks, n_boot, seed, level=0.95):
    """Reference: per cell, per replicate, index the answers and average (percentile bounds of the rates)."""
    out = []
    for _, cell in main.groupby(["model", "job"], sort=True):
        rank = cell.pivot(index="answer_id", columns="group", values="rank")[list(GROUPS)].to_numpy()
        sel = rankings.selection_matrix(rank, ks)
        n = sel.shape[0]
        idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        reps = np.empty((n_boot,) + sel.shape[1:])
        for b in range(n_boot):
            reps[b] = sel[idx[b]].mean(axis=0)
        out.append(np.quantile(reps, [(1 - level) / 2, (1 + level) / 2], axis=0))
    return out


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-answers", type=int, default=1000, help="answers for the parse-rule timing")
    args = parser.parse_args(argv)
    ranks = rankings.read_rankings()
    main_ = ranks[~ranks["oversampled"]]
    ks = list(range(1, 8))
    table = rankings.top_k_selection_table(main_, k=ks, n_boot=args.n_boot, seed=0)
    ref = loop_bounds(main_, ks, args.n_boot, 0)
    vec = [cell.pivot(index="group", columns="k", values=["selection_rate_low", "selection_rate_high"])
           for _, cell in table.groupby(["model", "job"], sort=True)]
    for r, v in zip(ref, vec):
        low = v["selection_rate_low"].loc[list(GROUPS)].to_numpy()
        high = v["selection_rate_high"].loc[list(GROUPS)].to_numpy()
        assert np.allclose(r[0], low) and np.allclose(r[1], high), "vectorised and loop bounds differ"
    t_vec = best_time(lambda: rankings.top_k_selection_table(main_, k=ks, n_boot=args.n_boot, seed=0), args.repeat)
    t_loop = best_time(lambda: loop_bounds(main_, ks, args.n_boot, 0), args.repeat)
    print(f"cells: {main_.groupby(['model', 'job']).ngroups}, answers: {main_['answer_id'].nunique()}, "
          f"k = 1..7, replicates: {args.n_boot}")
    print(f"vectorised (top_k_selection_table): {t_vec:.3f} s")
    print(f"per-replicate loop:                 {t_loop:.3f} s")
    print(f"ratio loop / vectorised:            {t_loop / t_vec:.1f}x")
    parse_rules(args)


def parse_rules(args):
    """Parse-rule timing: cached name patterns vs compiling each answer's patterns afresh."""
    answers, ranks = rankings.read_answers(), rankings.read_rankings()
    answers = answers.iloc[: args.n_answers]
    prompts = rankings.prompt_names(answers, ranks[ranks["answer_id"].isin(answers["answer_id"])])
    cached = name_matching.name_pattern
    uncached = cached.__wrapped__
    for rule in ("strict", "fuzzy"):
        cached.cache_clear()
        t_cached = best_time(lambda: rankings.rule_rankings(answers, prompts, rule), args.repeat)
        with_cache = rankings.rule_rankings(answers, prompts, rule)
        name_matching.name_pattern = lambda name, hyphenated=False: uncached(name, hyphenated)
        try:
            re.purge()  # and without the re module's own cache of compiled patterns
            t_fresh = best_time(lambda: (re.purge(), rankings.rule_rankings(answers, prompts, rule)), args.repeat)
            fresh = rankings.rule_rankings(answers, prompts, rule)
        finally:
            name_matching.name_pattern = cached
        assert with_cache.equals(fresh), f"rule {rule}: cached and fresh patterns give different rankings"
        print(f"rule {rule!r} on {len(answers)} answers: cached patterns {t_cached:.3f} s, "
              f"compiled per answer {t_fresh:.3f} s, ratio {t_fresh / t_cached:.1f}x")


if __name__ == "__main__":
    main()
