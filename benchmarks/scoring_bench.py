"""Pointwise scoring speed: the paper's reference loop vs allocbias's LocalEngine, side by side.

On SmolLM2-135M-Instruct (float32, CPU) the same resume-screening prompts are scored

(a) as the paper's reference code does: ``model.generate(max_new_tokens=10, output_scores=True)`` on
    batches of 2 left-padded full prompts, reading the label probabilities from the first step's scores;
(b) by :class:`allocbias.scoring.LocalEngine.pointwise`: one forward pass per prompt, the shared prefix
    (system prompt + job ad) computed once per job, suffixes batched by length.

The two run job by job, alternately, so that load from other processes on a shared machine hits both
alike. Printed: prompts/s of both and their ratio (wall and CPU time), the largest score difference,
the achieved GFLOP/s of (b) against an fp32 matmul peak measured in the same run (per job, and over
the run), and the peak resident memory of a fresh process running each variant on 2 batches.

FLOPs of (b) count the tokens it really computes: ``2 * non-embedding parameters`` per token, attention
``4 * heads * head_dim * (keys attended)`` per token and layer, and the LM head for one position per
prompt; padding tokens and extra logit rows are not counted (they are waste).

Run: ``nice -n 10 .venv/bin/python benchmarks/scoring_bench.py [--prompts 64 --jobs 2 --threads 1]``.
On a machine shared with other work, ``--threads 1`` gives the steadiest efficiency figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from allocbias.scoring.models import load_model  # noqa: E402
from allocbias.scoring.engine import LocalEngine, label_score, plan_batches, plan_groups  # noqa: E402

LABELS = {"No": 0.0, "Yes": 1.0}


# ----------------------------------------------------------------------------------------------
# prompts
# ----------------------------------------------------------------------------------------------


def build_prompts(n_prompts: int, n_jobs: int, seed: int) -> tuple[list[list[dict[str, str]]], list[str]]:
    """Resume-screening prompts of the study (paper wording): n_prompts / n_jobs candidates per job."""
    from allocbias.data import JOBS, candidate_table, load_jobs, render_resume
    from allocbias.audited.prompts import resume_pointwise_messages

    keys = list(JOBS)[:n_jobs]
    jobs = load_jobs(keys)
    table = candidate_table(keys, names_per_group=2, seed=seed)
    rng = np.random.default_rng(seed)
    per_job = n_prompts // n_jobs
    prompts, job_of = [], []
    for key in keys:
        rows = table[table["job"] == key]
        if per_job > len(rows):
            raise ValueError(f"job {key} has only {len(rows)} candidates, {per_job} requested")
        pick = rows.iloc[np.sort(rng.choice(len(rows), size=per_job, replace=False))]
        for row in pick.itertuples():
            resume = render_resume(jobs[key].resume(row.resume_id), row.full_name)
            prompts.append(resume_pointwise_messages(jobs[key].ad, resume))
            job_of.append(key)
    return prompts, job_of


# ----------------------------------------------------------------------------------------------
# measurement helpers
# ----------------------------------------------------------------------------------------------


def matmul_peak(n: int = 2048, repeats: int = 8) -> tuple[float, float]:
    """Best fp32 ``torch.matmul`` rate on two n x n matrices (2 n^3 FLOPs per product).

    Returns (GFLOP per wall second, GFLOP per CPU second of this process x threads); the second is
    what the threads achieve while they actually run, so it is less sensitive to other processes.
    """
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.matmul(a, b)
    best_wall = best_cpu = 0.0
    threads = torch.get_num_threads()
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        torch.matmul(a, b)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best_wall = max(best_wall, 2 * n**3 / wall / 1e9)
        best_cpu = max(best_cpu, 2 * n**3 / max(cpu, 1e-9) * threads / 1e9)
    return best_wall, best_cpu


class Timer:
    """Wall and CPU (process) seconds of a block."""

    def __enter__(self) -> Timer:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def peak_memory_mib(variant: str, n_prompts: int, batch_size: int, seed: int) -> float:
    """Peak RSS (MiB) of a fresh process that loads the model and scores ``n_prompts`` with ``variant``."""
    out = subprocess.run(
        [sys.executable, __file__, "--memory-only", variant, "--prompts", str(n_prompts), "--jobs", "1",
         "--batch-size", str(batch_size), "--seed", str(seed)],
        check=True, capture_output=True, text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def reference_scores(loaded, prompts, variants, batch_size: int = 2) -> np.ndarray:
    """The paper's way: generate 10 tokens per batch of 2 left-padded prompts, read step 1's scores."""
    tok, model = loaded.tokenizer, loaded.model
    pad = loaded.stop_token_ids[-1]
    names = list(variants)
    index = [torch.tensor(list(variants[k].values())) for k in names]
    log_mass = []
    with torch.inference_mode():
        for start in range(0, len(prompts), batch_size):
            texts = [loaded.format_chat(m) for m in prompts[start : start + batch_size]]
            ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
            width = max(len(x) for x in ids)
            input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in ids])
            mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids])
            out = model.generate(
                input_ids=input_ids,
                attention_mask=mask,
                max_new_tokens=10,
                do_sample=False,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=pad,
            )
            logp = torch.log_softmax(out.scores[0].float(), dim=-1)
            log_mass.append(torch.stack([torch.logsumexp(logp[:, j], -1) for j in index], 1).double().numpy())
    score, _, _ = label_score(np.concatenate(log_mass), np.array([LABELS[k] for k in names]))
    return score


def engine_flops(engine: LocalEngine, prompts) -> dict[str, float]:
    """FLOPs of the engine's plan for these prompts (useful tokens) and its padding waste."""
    config = engine.loaded.model.config
    hidden, vocab, layers = config.hidden_size, config.vocab_size, config.num_hidden_layers
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    params = sum(p.numel() for p in engine.loaded.model.parameters())
    non_embedding = params - vocab * hidden  # tied embeddings: the LM head is counted per kept position
    ids = engine.encode(prompts)
    lengths = [len(t) for t in ids]
    groups = plan_groups(ids, share_prefix=engine.share_prefix, min_prefix_tokens=engine.min_prefix_tokens)

    def attention(n_queries: int, first_key_count: int) -> float:
        keys = n_queries * first_key_count + n_queries * (n_queries - 1) / 2
        return 4.0 * heads * head_dim * keys * layers

    useful = tokens = padded = 0.0
    for g in groups:
        p = g.prefix_len
        if p:
            useful += 2.0 * non_embedding * p + attention(p, 1) + 2.0 * vocab * hidden
            tokens += p
        for batch in plan_batches(g, lengths, engine.batch_size):
            suffix = [lengths[i] - p for i in batch]
            width = max(suffix)
            for s in suffix:
                useful += 2.0 * non_embedding * s + attention(s, p + 1)
            useful += 2.0 * vocab * hidden * len(batch)  # one needed logit row per prompt
            tokens += sum(suffix)
            padded += len(batch) * width - sum(suffix)
    return {"flops": useful, "tokens": tokens, "padded": padded, "prompt_tokens": float(sum(lengths))}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (1 gives CPU-time figures that other processes disturb least)"
    )
    parser.add_argument("--memory-only", choices=["reference", "engine", "none"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.memory_only:
        loaded = load_model("smollm2-135m-instruct")
        engine = LocalEngine(loaded, batch_size=args.batch_size)
        prompts, _ = build_prompts(args.prompts, args.jobs, args.seed)
        with torch.inference_mode():  # touch every weight once, so that the baseline holds the model
            loaded.model(torch.tensor([[1, 2, 3]]), logits_to_keep=1)
        try:  # reset the kernel's high-water mark so that loading does not count
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")
        except OSError:
            pass
        if args.memory_only == "reference":
            reference_scores(loaded, prompts, engine.label_tokens(list(LABELS)))
        elif args.memory_only == "engine":
            engine.pointwise(prompts, LABELS, progress=False)
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
        hwm = status.get("VmHWM")
        print(int(hwm.split()[0]) / 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs", flush=True)
    start = time.perf_counter()
    loaded = load_model("smollm2-135m-instruct")
    print(f"model: {loaded.metadata['model']} float32, loaded in {time.perf_counter() - start:.1f} s")
    engine = LocalEngine(loaded, batch_size=args.batch_size)
    variants = engine.label_tokens(list(LABELS))
    prompts, job_of = build_prompts(args.prompts, args.jobs, args.seed)
    lengths = [len(t) for t in engine.encode(prompts)]
    print(
        f"prompts: {len(prompts)} ({args.jobs} jobs), tokens per prompt: mean {np.mean(lengths):.0f}, "
        f"min {min(lengths)}, max {max(lengths)}"
    )

    peaks = [matmul_peak()]
    with torch.inference_mode():  # warm-up of both paths on two prompts
        engine.pointwise(prompts[:2], LABELS, progress=False)
        reference_scores(loaded, prompts[:2], variants)

    wall = {"reference": 0.0, "engine": 0.0}
    cpu = {"reference": 0.0, "engine": 0.0}
    scores = {"reference": np.empty(len(prompts)), "engine": np.empty(len(prompts))}
    for job in dict.fromkeys(job_of):
        idx = [i for i, j in enumerate(job_of) if j == job]
        chunk = [prompts[i] for i in idx]
        with Timer() as ref:
            scores["reference"][idx] = reference_scores(loaded, chunk, variants)
        peaks.append(matmul_peak())
        with Timer() as eng:
            rows = engine.pointwise(chunk, LABELS, progress=False)
        peaks.append(matmul_peak())
        scores["engine"][idx] = [r["score"] for r in rows]
        for key, timer in (("reference", ref), ("engine", eng)):
            wall[key] += timer.wall
            cpu[key] += timer.cpu
        chunk_gflops = engine_flops(engine, chunk)["flops"] / eng.wall / 1e9
        print(
            f"  {job}: {len(idx)} prompts, reference {ref.wall:.1f} s, engine {eng.wall:.1f} s "
            f"({ref.wall / eng.wall:.2f}x); engine {chunk_gflops:.1f} GFLOP/s, matmul before/after "
            f"{peaks[-2][0]:.1f}/{peaks[-1][0]:.1f} GFLOP/s",
            flush=True,
        )
    memory = {k: peak_memory_mib(k, 2 * args.batch_size, args.batch_size, args.seed) for k in (*wall, "none")}

    n = len(prompts)
    threads = torch.get_num_threads()
    rate_ref, rate_eng = n / wall["reference"], n / wall["engine"]
    diff = float(np.max(np.abs(scores["reference"] - scores["engine"])))
    flops = engine_flops(engine, prompts)
    gflops_wall = flops["flops"] / wall["engine"] / 1e9
    gflops_cpu = flops["flops"] / cpu["engine"] * threads / 1e9
    peak_wall = max(p[0] for p in peaks)
    peak_wall_median = float(np.median([p[0] for p in peaks]))
    peak_cpu = max(p[1] for p in peaks)
    print()
    print(f"(a) reference generate(max_new_tokens=10, output_scores), batch 2: {rate_ref:.3f} prompts/s")
    print(f"(b) LocalEngine.pointwise, batch {engine.batch_size}, shared prefix:       {rate_eng:.3f} prompts/s")
    print(
        f"speed-up (b)/(a): {rate_eng / rate_ref:.2f}x wall time, {cpu['reference'] / cpu['engine']:.2f}x CPU time"
        "   (goal >= 2.5x)"
    )
    print(f"max |score (a) - score (b)|: {diff:.2e}   (goal <= 1e-4)")
    print(
        f"tokens: {flops['prompt_tokens']:.0f} in the prompts, {flops['tokens']:.0f} computed by (b) "
        f"({flops['tokens'] / flops['prompt_tokens']:.1%}), {flops['padded']:.0f} padding"
    )
    print(
        f"(b) {flops['flops'] / 1e12:.2f} TFLOP useful: {gflops_wall:.1f} GFLOP/s wall vs fp32 matmul peak "
        f"{peak_wall:.1f} (best) / {peak_wall_median:.1f} (median of {len(peaks)} measured between phases) -> "
        f"{gflops_wall / peak_wall:.0%} / {gflops_wall / peak_wall_median:.0%} of peak"
    )
    print(
        f"    per CPU second x {threads} threads: {gflops_cpu:.1f} GFLOP/s vs matmul {peak_cpu:.1f} -> "
        f"{gflops_cpu / peak_cpu:.0%} of peak   (goal >= 70%)"
    )
    print(
        f"peak resident memory of a fresh process scoring {2 * args.batch_size} prompts: "
        f"(a) {memory['reference']:.0f} MiB, (b) {memory['engine']:.0f} MiB "
        f"(model loaded and run once on 3 tokens: {memory['none']:.0f} MiB; the load itself is not counted)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
