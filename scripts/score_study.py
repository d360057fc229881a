"""Produce (or extend) the study's committed score tables in data/scores/.

Resumable: interrupt it at any time and run the same command again; finished rows are never recomputed.

Examples
--------
    .venv/bin/python scripts/score_study.py resume_pointwise --systems smollm2-fp32-paper --names-per-group 10
    .venv/bin/python scripts/score_study.py resume_pairwise --systems smollm2-fp32-paper --rounds 30
    .venv/bin/python scripts/score_study.py resume_pairwise --systems gemma3-fp32-paper --rounds 2 \
        --groups "Male White" "Female White" "Male Black" "Female Black"
    .venv/bin/python scripts/score_study.py hiring_bloomberg --systems smollm2-fp32-paper --orderings 4
    .venv/bin/python scripts/score_study.py essay_pointwise --systems smollm2-fp32-paper   (the demo essays)
    .venv/bin/python scripts/score_study.py ellipse_pointwise --systems smollm2-fp32-paper gemma3-fp32-paper \
        --essay-sample study                       (1,000 real ELLIPSE essays, one system after the other)
    python scripts/score_study.py resume_pairwise --systems smollm2-fp32-paper --rounds 30 \
        --device cuda --engine-batch-size 64          (on a machine with a GPU; provenance records it)
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from allocbias import data as D  # noqa: E402
from allocbias import items, runs  # noqa: E402
from allocbias.systems import parse_system  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=items.TASKS)
    parser.add_argument("--systems", nargs="+", required=True, help="system ids, e.g. smollm2-fp32-paper")
    parser.add_argument("--jobs", nargs="+", default=list(D.JOBS), choices=D.JOBS)
    parser.add_argument("--names-per-group", type=int, default=10, help="resume tasks: names per group and job")
    parser.add_argument("--rounds", type=int, default=30, help="resume_pairwise: selection rounds per job")
    parser.add_argument("--groups", nargs="+", default=None, choices=D.GROUPS, metavar="GROUP",
                        help="resume_pairwise: groups whose candidates enter the pools (default: all eight), "
                             "as chapter 2's pairwise_groups")
    parser.add_argument("--orderings", type=int, default=4, help="hiring_bloomberg: orderings per (job, race)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--essay-sample", choices=("study", "all"), default="study",
                        help="ellipse_pointwise: the study's 1,000-essay sample (default) or all 2,571 essays")
    parser.add_argument("--root", default=None, help="score tables folder (default: data/scores)")
    parser.add_argument("--batch-size", type=int, default=None, help="rows appended to the store per batch")
    parser.add_argument("--device", default="cpu", help="torch device the model runs on: cpu (default) or cuda")
    parser.add_argument("--engine-batch-size", type=int, default=None,
                        help="prompts per forward pass (default: the task's, 8 or 2 for hiring_bloomberg)")
    args = parser.parse_args(argv)
    if args.engine_batch_size is not None and args.engine_batch_size < 1:
        parser.error(f"--engine-batch-size must be >= 1, got {args.engine_batch_size}")
    if args.batch_size is not None and args.batch_size < 1:  # 0 used to mean "the default" silently
        parser.error(f"--batch-size must be >= 1, got {args.batch_size}")

    command = "python scripts/score_study.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    systems = [parse_system(s) for s in args.systems]
    for system in systems:
        start = time.perf_counter()
        print(f"== {args.task} / {system.id}", flush=True)
        ebs = args.engine_batch_size or {"hiring_bloomberg": 2, "ellipse_pointwise": 1}.get(args.task, 8)
        engine = runs.LazyEngine(system, batch_size=ebs, device=args.device)
        if args.task == "resume_pointwise":
            cands = D.candidate_table(args.jobs, names_per_group=args.names_per_group, seed=args.seed)
            kw = {"batch_size": args.batch_size} if args.batch_size else {}
            table = runs.score_resume_pointwise(system, cands, root=args.root, command=command, engine=engine, **kw)
        elif args.task == "resume_pairwise":
            cands = D.candidate_table(args.jobs, names_per_group=args.names_per_group, seed=args.seed)
            if args.groups:
                if len(set(args.groups)) < 2:
                    parser.error("--groups needs at least two distinct groups (a pair)")
                cands = cands[cands["group"].isin(args.groups)]
            rounds = items.pairwise_rounds(cands, args.rounds, args.seed)
            kw = {"batch_size": args.batch_size} if args.batch_size else {}
            table = runs.score_resume_pairwise(system, rounds, root=args.root, command=command, engine=engine, **kw)
        elif args.task == "essay_pointwise":
            essays = D.load_demo_essays()  # the DEMO essays; ICNALE needs a licensed copy (allocbias.data.load_icnale)
            table = runs.score_essays_pointwise(system, essays, root=args.root, command=command, engine=engine, progress=True)
        elif args.task == "ellipse_pointwise":
            essays = D.load_ellipse(args.essay_sample, seed=args.seed)
            kw = {"batch_size": args.batch_size} if args.batch_size else {}
            table = runs.score_ellipse_pointwise(system, essays, root=args.root, command=command, engine=engine,
                                                  progress=True, **kw)
        else:
            attempts = items.hiring_bloomberg_items(args.orderings, args.seed, jobs=args.jobs)
            kw = {"batch_size": args.batch_size} if args.batch_size else {}
            table = runs.score_hiring_bloomberg(system, attempts, root=args.root, command=command, engine=engine, **kw)
        print(f"== {system.id}: {len(table)} rows ready in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
