"""The ``allocbias`` command: ``allocbias audit`` (one system into a report) and ``allocbias score`` (the study's
committed tables).

Every problem with the input stops the command with one line on standard error that names it and says what to
do, and a non-zero exit status (2; 130 when interrupted); rows already scored stay in their tables, so running the
same command again resumes. ``--traceback`` shows the Python traceback instead (for bug reports).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_parser", "main"]

AUDIT_EXAMPLES = """\
examples:
  allocbias audit --model smollm2-135m-instruct --jobs retail --names-per-group 2 --out build/audit-demo
  allocbias audit --model ~/models/my-model --precision int8 --wording direct --out build/audit-mine
  allocbias audit --model ~/models/my-model.Q4_K_M.gguf --parts pairwise hiring_bloomberg --out build/audit-gguf
  allocbias audit --base-url http://gpu-node:8000/v1 --model Qwen2.5-7B-Instruct --device cpu --out build/audit-qwen

The report is OUT/report.html (one self-contained page) with its tables in OUT/tables/*.csv. Interrupt the command
at any time and run it again: finished prompts are never scored twice.
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``allocbias`` (both subcommands)."""
    from .audited import data as D
    from .scoring import items
    from .audit import DEFAULT_TIMEOUT_S, PARTS
    from .scoring.systems import PRECISIONS, WORDINGS
    from .scoring.tasks import TASKS

    parser = argparse.ArgumentParser(prog="allocbias", description="Audit language models for allocation harms in "
                                     "hiring: selection-rate gaps, RABBI, Local Law 144 metrics.")
    parser.add_argument("--traceback", action="store_true", help="show Python tracebacks instead of one-line errors")
    parser.add_argument("--version", action="version", version=f"allocbias {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{audit,score,ll144,plan,book,store}")

    audit = sub.add_parser(
        "audit", help="score one model on the study's prompts and write a self-contained HTML report",
        description="Score one model on the study's résumé-screening prompts (resumable tables under OUT/scores) "
                    "and write OUT/report.html: does it screen at all, selection rates and gaps per group with "
                    "intervals, RABBI / average gap / JSD / EMD, a Local Law 144 table, its place among the study's "
                    "systems, and what the numbers cannot show.",
        epilog=AUDIT_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    audit.add_argument("--model", required=True,
                       help="a registry name (smollm2-135m-instruct, gemma3-270m), a local Hugging Face model folder, "
                            "a .gguf file, or with --base-url the served model's name")
    audit.add_argument("--base-url", default=None, metavar="URL",
                       help="an OpenAI-compatible server (vLLM, llama.cpp's llama-server) that returns logprobs, "
                            "e.g. http://localhost:8000/v1; the API key comes from OPENAI_API_KEY")
    audit.add_argument("--prefill", choices=["vllm", "native"], default="vllm",
                       help="served models: how the answer prefill is continued (vllm: continue_final_message; "
                            "native: llama.cpp's server). Default: vllm")
    audit.add_argument("--out", required=True, metavar="DIR", help="the audit folder (created; resumable)")
    audit.add_argument("--precision", choices=list(PRECISIONS), default="fp32",
                       help="local models: fp32 (default), int8 or nf4 (bitsandbytes)")
    audit.add_argument("--wording", choices=list(WORDINGS), default="paper",
                       help="pointwise question: the paper's (default) or a direct one")
    audit.add_argument("--jobs", nargs="*", default=list(D.JOBS), metavar="JOB",
                       help=f"jobs to audit (default: all four: {' '.join(D.JOBS)})")
    audit.add_argument("--names-per-group", type=_positive, default=10,
                       help="names per group and job; each name is shown on the job's 6 résumés (default 10: "
                            "4 jobs x 8 groups x 10 names x 6 résumés = 1,920 prompts)")
    audit.add_argument("--k", type=_positive, nargs="+", default=[1, 2, 3], help="quotas of top-k selection (1..7; "
                       "default 1 2 3)")
    audit.add_argument("--rounds", type=_positive, default=1000,
                       help="simulated pools per job for top-k selection (default 1000)")
    audit.add_argument("--seed", type=int, default=0, help="seed of the names, pools and bootstrap (default 0: the "
                       "study's, so the committed tables of the study's systems apply)")
    audit.add_argument("--device", default="cpu", help="local models: torch device, cpu (default) or cuda")
    audit.add_argument("--parts", nargs="+", default=["pointwise"], choices=list(PARTS), metavar="PART",
                       help="pointwise (always run); add pairwise and/or hiring_bloomberg")
    audit.add_argument("--pairwise-rounds", type=_positive, default=30,
                       help="pairwise: pools of 8 per job, 56 prompts each (default 30, the study's)")
    audit.add_argument("--orderings", type=_positive, default=4,
                       help="hiring_bloomberg: orderings per job and race, 2 prompts each (default 4)")
    audit.add_argument("--n-boot", type=_positive, default=200,
                       help="bootstrap resamples of the names for the intervals (default 200)")
    audit.add_argument("--engine-batch-size", type=_positive, default=8, help="local models: prompts per forward pass")
    audit.add_argument("--rescore", action="store_true",
                       help="study systems: score again into DIR instead of reading the committed tables")
    audit.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help=f"served models: seconds one request may take in all, its retries (at most two, "
                            f"on quick failures) included; a server that does not answer within it stops the audit "
                            f"(the rows scored so far are kept). Default {DEFAULT_TIMEOUT_S:g}")
    audit.add_argument("--no-report", action="store_true",
                       help="score and write the tables, skip the report (a previous report is removed)")
    audit.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="show Python tracebacks instead of one-line errors")

    score = sub.add_parser("score", help="produce or extend the study's committed score tables (data/scores)",
                           description="Produce or extend the study's score tables; resumable.")
    score.add_argument("task", choices=list(TASKS))
    score.add_argument("--systems", nargs="+", required=True, help="system ids, e.g. smollm2-fp32-paper")
    score.add_argument("--jobs", nargs="+", default=list(D.JOBS), choices=D.JOBS)
    score.add_argument("--names-per-group", type=_positive, default=10)
    score.add_argument("--rounds", type=_positive, default=30, help="resume_pairwise: selection rounds per job")
    score.add_argument("--groups", nargs="+", default=None, choices=D.GROUPS, metavar="GROUP",
                       help="resume_pairwise: groups whose candidates enter the pools (default: all eight)")
    score.add_argument("--orderings", type=_positive, default=4, help="hiring_bloomberg: orderings per (job, race)")
    score.add_argument("--seed", type=int, default=0)
    score.add_argument("--essay-sample", choices=("study", "all"), default="study",
                       help="ellipse_pointwise: the study's 1,000-essay sample (default) or all 2,571 essays")
    score.add_argument("--root", default=None, help="score tables folder (default: data/scores)")
    score.add_argument("--batch-size", type=_positive, default=None, help="rows appended to the store per batch")
    score.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    score.add_argument("--engine-batch-size", type=_positive, default=None,
                       help="prompts per forward pass (default: 8, or 2 for hiring_bloomberg)")
    score.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="show Python tracebacks instead of one-line errors")
    _add_ll144(sub)
    _add_plan(sub)
    # `allocbias book ...` and `allocbias store ...`: listed here for --help; main() hands them to _delegated
    sub.add_parser("book", add_help=False, help="execute the book's notebooks (allocbias book execute --help)")
    sub.add_parser("store", add_help=False, help="check score tables, record digests (allocbias store --help)")
    return parser


# --------------------------------------------------------------------------- allocbias ll144 (its own block)


def _version() -> str:
    """allocbias's version from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("allocbias")
    except PackageNotFoundError:
        return "unknown (not installed)"


LL144_EXAMPLES = """\
examples:
  allocbias ll144 applicants.csv --out build/ll144-audit
  allocbias ll144 counts.xlsx --sheet 2024 --race race --unknown "Missing/Unknown" --out build/ll144-counts
  allocbias ll144 scores.parquet --exclude-below none --out build/ll144-scores
  allocbias ll144 applicants.xlsx --out build/ll144-2026 --audit-date 2026-03-01 --data-source historical \\
      --data-explanation "all applicants screened in 2025" --distribution-date 2024-01-15

DATA holds one row per applicant (category columns and `selected` yes/no, or `score`) or one row per category
(category columns, `applicants`, `selected`). The folder gets published_summary.md/.html (what the rules require
the published summary to show), summary.md and report.html (the full report), tables/*.csv (fractions) and
ll144.json; on bad input nothing is written, and a folder holding files the command did not write, or files it
wrote that were edited since, is refused. A published summary that was ready to publish is replaced only with
--replace, which keeps it as published_summary-AUDIT_DATE.md/.html. The 0.8 line is the four-fifths screening
rule, never a verdict of compliance.
"""


def _share_or_none(text: str) -> float | None:
    if text.strip().casefold() in ("none", "off", "no"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share such as 0.02, or none; got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a share in [0, 1) (0.02 is 2%), got {value}")
    return value


def _add_ll144(sub: argparse._SubParsersAction) -> None:
    ll = sub.add_parser(
        "ll144", help="a Local Law 144 bias audit (selection or scoring rates, impact ratios) of your own data",
        description="Compute what a Local Law 144 bias audit publishes from an employer's own data: selection (or "
                    "scoring) rates and impact ratios by sex, race/ethnicity and intersectionally, with intervals, "
                    "the unknown category and bounds for it, the 2% exclusion, and for scores the regression "
                    "alternatives.", epilog=LL144_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    ll.add_argument("data", metavar="DATA", help="a .csv, .parquet or .xlsx file")
    ll.add_argument("--out", required=True, metavar="DIR", help="the folder to write (replaced if it holds an "
                    "earlier ll144 output)")
    ll.add_argument("--sex", default="sex", metavar="COLUMN", help="the sex column (default sex; 'none' if absent)")
    ll.add_argument("--race", default="race_ethnicity", metavar="COLUMN",
                    help="the race/ethnicity column (default race_ethnicity; 'none' if absent)")
    ll.add_argument("--selected", default="selected", metavar="COLUMN",
                    help="yes/no per applicant, or the number selected per category (default selected)")
    ll.add_argument("--score", default="score", metavar="COLUMN", help="the score per applicant (default score)")
    ll.add_argument("--applicants", default="applicants", metavar="COLUMN",
                    help="applicants per category, for counts (default applicants)")
    ll.add_argument("--unknown", nargs="+", default=None, metavar="LABEL",
                    help="labels of the unknown category, replacing the default list of common non-answers "
                         "(Unknown, Decline to answer, Prefer not to say, N/A, NA, null, None, -, ?, ...; case and "
                         "surrounding spaces ignored); empty cells and cells of spaces are unknown too, on a line of "
                         "their own")
    ll.add_argument("--exclude-below", type=_share_or_none, default=0.02, metavar="SHARE",
                    help="leave out of the comparison a category below this share of the applicants (the rules' "
                         "option; default 0.02; 'none' keeps every category)")
    ll.add_argument("--exclude-base", choices=["known", "all"], default="known",
                    help="what the 2%% share is of: the applicants of known category (default) or all applicants, "
                         "unknowns included (the rules: 'less than 2%% of the data being used for the bias audit')")
    filing = ll.add_argument_group("the published summary (published_summary.md/.html; 6 RCNY § 5-303)")
    filing.add_argument("--audit-date", metavar="YYYY-MM-DD", help="the date of the bias audit (e.g. 2026-03-01)")
    filing.add_argument("--data-source", choices=["historical", "test"],
                        help="historical data (from the tool's use) or test data; test needs --test-data-reason")
    filing.add_argument("--data-explanation", metavar="TEXT",
                        help="where the data come from (e.g. 'applicants for all roles, 2025'); for test data, how "
                             "they were generated and obtained")
    filing.add_argument("--test-data-reason", metavar="TEXT",
                        help="with --data-source test: why historical data were not used (6 RCNY § 5-302)")
    filing.add_argument("--distribution-date", metavar="YYYY-MM-DD",
                        help="the date the tool was first distributed/used")
    filing.add_argument("--employer", metavar="NAME", help="the employer or employment agency (optional)")
    filing.add_argument("--tool-name", metavar="NAME", help="the automated employment decision tool (optional)")
    filing.add_argument("--auditor", metavar="NAME", help="the independent auditor (optional)")
    filing.add_argument("--replace", action="store_true",
                        help="replace a published summary of DIR that was ready to publish (or edited since), "
                             "keeping it as published_summary-AUDIT_DATE.md/.html")
    ll.add_argument("--tool", choices=["selection", "scoring"], default=None,
                    help="counts only: the counts are of applicants scored above the median (scoring)")
    reading = ll.add_argument_group("reading DATA (detected when not given)")
    reading.add_argument("--sheet", default=None, metavar="NAME",
                         help="Excel: the sheet (default: the first, or the one sheet with the columns)")
    reading.add_argument("--encoding", default=None, metavar="CODEC",
                         help="CSV: the text encoding (default: from a byte-order mark, else UTF-8, else "
                              "Windows-1252), e.g. utf-8, cp1252, latin-1, utf-16")
    reading.add_argument("--sep", default=None, metavar="CHAR",
                         help="CSV: the separator, e.g. ';' or tab (default: the one of , ; tab | that splits the "
                              "header into the most columns)")
    ll.add_argument("--draws", type=_positive, default=4000, help="draws behind the ratio intervals (default 4000)")
    ll.add_argument("--seed", type=int, default=0, help="seed of the ratio intervals' draws (default 0)")
    ll.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                    help="show Python tracebacks instead of one-line errors")


def _ll144(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .ll144_command import FILING_FIELDS, Interrupted, run_ll144
    from .measures import ll144
    from .outputs import printable

    def column(name: str) -> str | None:
        return None if name.strip().casefold() == "none" else name

    written = run_ll144(args.data, args.out, sex=column(args.sex), race=column(args.race), selected=args.selected,
                        score=args.score, applicants=args.applicants,
                        unknown=ll144.NON_ANSWERS if args.unknown is None else tuple(args.unknown),
                        exclude_below=args.exclude_below, exclude_base=args.exclude_base, tool=args.tool,
                        sheet=args.sheet, encoding=args.encoding, sep=args.sep, draws=args.draws, seed=args.seed,
                        command=_command_line(argv), filing={k: getattr(args, k) for k in FILING_FIELDS},
                        replace=args.replace)
    try:
        a = written.audit
        flagged = a.flagged()
        groups = ", ".join(f"{t}: {printable(g)}" for t, g in zip(flagged["table"], flagged["group"]))
        print(f"{a.kind} tool, {a.n_applicants:,.0f} applicants ({a.shape}); included groups below 0.8 (four-fifths "
              f"screening rule): {len(flagged)}" + (f" ({groups})" if len(flagged) else ""))
        for w in a.warnings:
            print(f"warning: {printable(w)}")
        for note in written.notes:
            print(f"note: {note}")
        if written.missing:
            print(f"note: published_summary is not ready to publish without {', '.join(written.missing)}")
        if written.kept:
            print(f"kept: the earlier published summary as {', '.join(written.kept)}")
        print(f"written: {printable(written.out)} ({', '.join(written.files)})")
    except KeyboardInterrupt:
        raise Interrupted(f"allocbias ll144: interrupted after the audit was written whole to "
                          f"{printable(written.out)}") from None
    return 0


# --------------------------------------------------------------------------- allocbias plan (its own block)
PLAN_EXAMPLES = """\
examples:
  allocbias plan ll144 --rate 0.25                            # applicants per group for a comparator as large
  allocbias plan ll144 --rate 0.1 --group-ratio 1:5 --applicants 50 200
  allocbias plan ll144 --rate 0.3 --comparator 5000 --applicants 120
  allocbias plan llm                                          # the reliabilities one may assume, and for what
  allocbias plan llm --assume bloomberg                       # names per group before a pilot audit
  allocbias plan llm --from build/audit-demo                  # from what an earlier allocbias audit measured
  allocbias plan llm --reliability 0.3 --measured-on 5 --target 0.9

Local Law 144: the four-fifths rule's false-flag rate (a fair process flagged) and detectable ratio (the true impact
ratio flagged 80% of the time) at given counts, and the applicants per group from which each reaches its target.
LLM audit: the units (names x jobs x runs) a selection-rate gap needs for a reliability of 0.5 and 0.8 by
Spearman-Brown, and the allocbias audit command that scores them. Add --json for a machine-readable answer.
"""


def _ratio_arg(text: str) -> float:
    from .measures.planning import parse_group_ratio

    try:
        return parse_group_ratio(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _share_in(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {value:g}")
    return value


def _add_plan(sub: argparse._SubParsersAction) -> None:
    plan = sub.add_parser(
        "plan", help="how large an audit must be, before it runs (Local Law 144 applicants; LLM audit names)",
        description="Answer an auditor's first question before an audit: how many applicants per group a Local Law "
                    "144 audit needs for the four-fifths rule to be trusted, or how many names per group (x jobs x "
                    "runs) an LLM audit needs for reliable selection-rate gaps.",
        epilog=PLAN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = plan.add_subparsers(dest="plan", required=True, metavar="{ll144,llm}")
    law = kinds.add_parser("ll144", help="applicants per group for the four-fifths rule",
                           description="The four-fifths rule's false-flag rate and detectable ratio at given counts, "
                                       "and the applicants per group from which a fair process is flagged less than "
                                       "--false-flag of the time and a true ratio of --ratio is flagged 80%% of the "
                                       "time (exact, every size up to --search-max).")
    law.add_argument("--rate", type=_share_in, required=True,
                     help="the comparator's selection (or scoring) rate, e.g. 0.25")
    size = law.add_mutually_exclusive_group()
    size.add_argument("--group-ratio", type=_ratio_arg, default=1.0, metavar="G:C",
                      help="group : comparator sizes, e.g. 1:4 (a comparator four times the group) or 4 (default 1:1)")
    size.add_argument("--comparator", type=_positive, default=None, metavar="N",
                      help="the comparator's applicants, whatever the group's size")
    law.add_argument("--applicants", type=_positive, nargs="+", default=None, metavar="N",
                     help="applicants per group at which to show both error rates")
    law.add_argument("--false-flag", type=_share_in, default=0.05, metavar="SHARE",
                     help="target: a fair process flagged less often than this (default 0.05)")
    law.add_argument("--ratio", type=_share_in, default=0.7,
                     help="target: a true impact ratio this low flagged 80%% of the time (default 0.7)")
    law.add_argument("--search-max", type=_positive, default=3000, metavar="N",
                     help="check every applicants per group up to this (default 3000)")
    law.add_argument("--json", action="store_true", help="print the answer as JSON")
    llm = kinds.add_parser("llm", help="names per group (x jobs x runs) for reliable gaps",
                           description="The units a selection-rate gap needs for a target reliability (Spearman-Brown)"
                                       " from a reliability measured on some units: one the book measured "
                                       "(--assume), an earlier allocbias audit's (--from), or your own "
                                       "(--reliability with --measured-on). Without one, list what may be assumed.")
    source = llm.add_mutually_exclusive_group()
    source.add_argument("--assume", metavar="KEY", help="a reliability the book measured (allocbias plan llm lists "
                        "them): lippens-job-type, lippens-occupation, lippens-pooled, recinq, bloomberg, jderbysh")
    source.add_argument("--from", dest="from_dir", metavar="OUT", type=Path,
                        help="the folder of an earlier allocbias audit (reads OUT/tables/report_audit_size.csv)")
    source.add_argument("--reliability", type=_share_in, default=None, metavar="R",
                        help="a reliability you measured (with --measured-on)")
    llm.add_argument("--measured-on", type=_positive, default=None, metavar="N",
                     help="with --reliability: the units it was measured on (default 1)")
    llm.add_argument("--target", type=_share_in, nargs="+", default=[0.5, 0.8], metavar="T",
                     help="target reliabilities (default 0.5 0.8)")
    llm.add_argument("--jobs", type=_positive, default=4, help="jobs the gaps are pooled over (default 4, "
                     "allocbias audit's)")
    llm.add_argument("--runs", type=_positive, default=1, help="runs per prompt (default 1: allocbias audit scores "
                     "each prompt once at temperature 0, so more runs add nothing there)")
    llm.add_argument("--k", type=_positive, default=None, help="with --from: the quota whose gaps to plan for "
                     "(default the audit's first)")
    llm.add_argument("--json", action="store_true", help="print the answer as JSON")
    for p in (plan, law, llm):
        p.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                       help="show Python tracebacks instead of one-line errors")


def _plan(args: argparse.Namespace) -> int:
    """``allocbias plan ll144`` / ``allocbias plan llm``: print the plan (or its JSON)."""
    import json

    answer = _plan_ll144(args) if args.plan == "ll144" else _plan_llm(args)
    if args.json:
        print(json.dumps(answer["json"], indent=2, ensure_ascii=False))
    else:
        print(answer["text"])
    return 0


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def _plain_table(frame) -> str:
    return frame.to_string(index=False)


def _plan_ll144(args: argparse.Namespace) -> dict:
    from .measures import planning

    ratio_words = (f"{args.comparator:,} applicants" if args.comparator else
                   f"group : comparator {planning.group_ratio_label(args.group_ratio)}")
    need = planning.ll144_size_needed(args.rate, group_ratio=args.group_ratio, comparator=args.comparator,
                                      false_flag=args.false_flag, ratio=args.ratio, search_max=args.search_max)

    def n(key: str) -> str:
        return f"{need[key]:,}" if need[key] is not None else f"more than {args.search_max:,}"

    sentence = (f"A fair process (the group's true rate equal to the comparator's) is flagged less than "
                f"{args.false_flag:.0%} of the time from {n('false_flag_n')} applicants per group on, and a true impact "
                f"ratio of {args.ratio:g} is flagged at least 80% of the time from {n('detect_n')} on (every size up "
                f"to {args.search_max:,} checked; both rates saw-tooth with the counts).")
    head = f"Local Law 144, four-fifths rule: comparator selected at {args.rate:.0%}, {ratio_words}."
    lines = [head, ""]
    rows = []
    if args.applicants:
        at = planning.ll144_at(args.applicants, args.rate, group_ratio=args.group_ratio, comparator=args.comparator)
        rows = at.to_dict("records")
        shown = at.drop(columns="comparator's selection rate").assign(**{
            "false-flag rate": [f"{x:.1%}" if x >= 0.001 else f"{x:.1e}" for x in at["false-flag rate"]],
            "detectable ratio": ["none" if x != x else f"{x:.3f}" for x in at["detectable ratio"]]})
        lines += [_plain_table(shown), ""]
    lines.append(_wrap(sentence))
    json_out = {"plan": "ll144", "rate": args.rate, "group_ratio": None if args.comparator else args.group_ratio,
                "comparator": args.comparator, "false_flag": args.false_flag, "ratio": args.ratio,
                "search_max": args.search_max, "at": [{k: (None if v != v else v) for k, v in r.items()} for r in rows],
                "false_flag_n": need["false_flag_n"], "detect_n": need["detect_n"], "sentence": sentence}
    return {"text": "\n".join(lines), "json": json_out}


def _plural(unit: str) -> str:
    return {"vacancy": "vacancies"}.get(unit, unit + "s")


def _plan_source(args: argparse.Namespace) -> dict:
    """Where the reliability comes from: its value, the units it was measured on, and words about it."""
    import json

    import pandas as pd

    from .measures import planning

    if args.measured_on is not None and args.reliability is None:
        raise ValueError("--measured-on goes with --reliability")
    if args.k is not None and args.from_dir is None:
        raise ValueError("--k goes with --from (the quota of an earlier audit's gaps)")
    if args.assume is not None:
        table = planning.measured_reliability()
        if args.assume not in table.index:
            raise ValueError(f"--assume {args.assume!r} is not a reliability the book measured; choose from "
                             f"{', '.join(table.index)} (allocbias plan llm lists them)")
        m = table.loc[args.assume]
        if not 0 < m["reliability"] < 1:
            raise ValueError(f"the book measured r = {m['reliability']:.2f} for --assume {args.assume} (two halves of "
                             f"{int(m['size per half'])} {_plural(m['unit'])} each): not positive, so no number of "
                             "units can be read from it; assume another or run a pilot audit (--from OUT)")
        return {"reliability": float(m["reliability"]), "size": int(m["size per half"]), "unit": str(m["unit"]),
                "command": None, "source": f"assumed: {args.assume}",
                "words": (f"Assumed: one unit of your audit tells as much as one {m['data set']} {m['unit']} ("
                          f"{m['one unit is']}). The book measured r = {m['reliability']:.3f} between two halves of "
                          f"{int(m['size per half']):,} {_plural(m['unit'])} each ({m['level']}, k = {int(m['k'])}); one "
                          f"{m['unit']}: {m['reliability of one unit']:.4f}.")}
    if args.from_dir is not None:
        path = args.from_dir / "tables" / "report_audit_size.csv"
        if not path.is_file():
            raise ValueError(f"{path} does not exist: give the folder of an allocbias audit whose report was written "
                             "(with at least 2 names per group)")
        got = planning.audit_reliability(pd.read_csv(path), args.k)
        manifest = args.from_dir / "audit.json"
        command = None
        if manifest.is_file():
            command = json.loads(manifest.read_text(encoding="utf-8")).get("options", {}).get("command")
        if got["reliability"] <= 0 or got["reliability"] >= 1:
            raise ValueError(f"the audit in {args.from_dir} measured a reliability of {got['reliability']:.2f} at "
                             f"k = {got['k']}: two halves of its names do not agree, so no number of names can be "
                             "read from it")
        return {"reliability": got["reliability"], "size": got["size"], "unit": "name", "command": command,
                "source": str(args.from_dir), "k": got["k"],
                "words": (f"From the audit in {args.from_dir}: its gaps per job at k = {got['k']} agree between two "
                          f"halves of its {got['names_per_group']} names per group at r = {got['reliability']:.3f} "
                          f"({got['size']} names per half); one name: "
                          f"{planning.per_unit_reliability(got['reliability'], got['size']):.4f}.")}
    if args.reliability is not None:
        size = args.measured_on or 1
        return {"reliability": args.reliability, "size": size, "unit": "unit", "command": None,
                "source": "given", "words": f"Given: r = {args.reliability:g} measured on {size:,} unit(s)."}
    return {}


def _plan_llm(args: argparse.Namespace) -> dict:
    from .measures import planning
    from .measures.verdicts import reliability_word

    src = _plan_source(args)
    if not src:
        table = planning.measured_reliability().reset_index()
        lines = ["Reliabilities the book measured (chapter 'How large must an audit be?'); assume the one whose unit "
                 "is what your audit adds more of, or measure your own with a pilot audit (allocbias plan llm --from "
                 "OUT):", ""]
        for _, m in table.iterrows():
            one = (f"{m['reliability of one unit']:.4f}" if m["reliability"] > 0 else
                   f"none (r = {m['reliability']:.2f} between halves: not positive)")
            lines.append(f"  {m['key']:<20} one {m['unit']}: {one}\n  {'':<20} for {m['use for']}")
        return {"text": "\n".join(lines), "json": {"plan": "llm", "measured": table.to_dict("records")}}
    plan = planning.llm_plan(src["reliability"], src["size"], targets=args.target,
                             jobs=sorted({1, args.jobs}), runs=args.runs)
    what = "names per group × jobs × runs" if args.runs > 1 else "names per group × jobs"
    lines = [_wrap(src["words"]), "", _plain_table(plan.assign(target=[f"{t:g}" for t in plan["target"]])), ""]
    lines.append(_wrap(f"Units are {what} for a gap pooled over {args.jobs} job(s); a gap of one job rests on its own "
                       "names" + (" × runs" if args.runs > 1 else "") + ". Every added unit is assumed as informative "
                       "as those measured (Spearman-Brown)."))
    base = src["command"] or "allocbias audit --model MODEL --out OUT"
    if args.runs > 1:
        lines.append(_wrap("allocbias audit scores each prompt once at temperature 0 (a second run repeats the first), "
                           "so runs count only for a model that samples (a server at temperature above 0); with "
                           "allocbias audit, reach the units with names and jobs instead (--runs 1)."))
    elif args.jobs > 4:
        lines.append(f"allocbias audit has 4 jobs, not {args.jobs}: use --jobs 4 or fewer for its commands.")
    else:
        lines.append("")
        for _, row in plan.iterrows():
            target = f"{row['target']:g} ({reliability_word(row['target'])})"
            for names, what in ((int(row[plan.columns[-1]]), f"gaps pooled over the {args.jobs} job(s)"),
                                (int(row[plan.columns[2]]), "gaps of each job")):
                if names <= 100:
                    lines.append(f"For {target}, {what}: {planning.audit_command(base, names)}")
                else:
                    lines.append(f"For {target}, {what}: {names:,} names per group, more than the 100 allocbias "
                                 "audit can draw per group")
                if args.jobs == 1:
                    break
        if src["command"]:
            lines.append("(The same folder keeps the names already scored; only the new ones are scored.)")
    json_out = {"plan": "llm", "source": src["source"], "reliability": src["reliability"], "size": src["size"],
                "unit": src["unit"], "one_unit": planning.per_unit_reliability(src["reliability"], src["size"]),
                "jobs": args.jobs, "runs": args.runs, "rows": plan.to_dict("records")}
    return {"text": "\n".join(lines), "json": json_out}


def _delegated(argv: list[str]) -> int | None:
    """``allocbias book ARGS`` and ``allocbias store ARGS`` (also run by ``python -m allocbias.book`` and
    ``python -m allocbias.store``); ``None`` for the other subcommands. A leading ``--traceback`` goes to the
    store's own option."""
    traceback = argv[:1] == ["--traceback"]
    rest = argv[1:] if traceback else argv
    if not rest or rest[0] not in ("book", "store"):
        return None
    if rest[0] == "book":
        return _book(rest[1:])
    return _store([*rest[1:], *(["--traceback"] if traceback else [])])


def _book(argv: list[str]) -> int:
    """``allocbias book execute [--profile P] [--only STEM ...] [--out DIR] [--force]`` and
    ``allocbias book check-html DIR`` (:func:`allocbias.book.execute_all`, :func:`allocbias.book.check_html`)."""
    from .book import runner as book

    parser = argparse.ArgumentParser(prog="allocbias book", description=book.__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("execute", help="execute the notebooks of _toc.yml with a profile",
                        description="Execute the notebooks of the checkout this command runs in ($ALLOCBIAS_ROOT "
                                    "if set) with a profile; chapters whose executed copy is current are skipped.")
    ex.add_argument("--profile", default="default")
    ex.add_argument("--only", nargs="*", help="notebook stems to execute (default: all in _toc.yml)")
    ex.add_argument("--out", default="build/notebooks", type=Path,
                    help="folder of the executed copies (relative to the checkout; default build/notebooks)")
    ex.add_argument("--force", action="store_true", help="re-execute chapters whose executed copy is current")
    chk = sub.add_parser("check-html", help="check that every _toc.yml page exists in the built HTML")
    chk.add_argument("html_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "execute":
            return book.execute_all(args.profile, args.only, args.out, force=args.force)
        return book.check_html(args.html_dir)
    except (ValueError, FileNotFoundError) as exc:
        # not a checkout, an invalid profile or --only, a malformed YAML, a notebook _toc.yml lists but lacks:
        # raised before the first kernel starts
        done = "nothing executed: " if args.command == "execute" else ""
        print(f"[allocbias.book] {done}{exc}", file=sys.stderr)
        return 2


def _store(argv: list[str]) -> int:
    """``allocbias store check ROOT`` / ``allocbias store record-digests ROOT`` (:func:`allocbias.store.check_tables`)
    and ``allocbias store repair FOLDER ...`` (:func:`allocbias.scoring.store.repair_tables`)."""
    from .scoring.store import check_tables, repair_tables

    parser = argparse.ArgumentParser(
        prog="allocbias store", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="check ROOT: read every score table under ROOT with all the reader's checks; record-digests "
                    "ROOT: the same, and record the content digest of tables written before digests existed "
                    "(scores.csv is never touched); repair FOLDER ...: keep the rows of each table folder that its "
                    "digests vouch for and remove the others (rows edited or added by hand), which the next "
                    "scoring run scores again.\n\nEvery table is checked, a bad one does not stop the others: "
                    "each is named with its reason on one line, and the exit status is 1 when any table is bad (0 "
                    "when all are good, 2 for a bad command line).")
    parser.add_argument("command", choices=["record-digests", "check", "repair"])
    parser.add_argument("root", type=Path, nargs="+", metavar="ROOT",
                        help="folder of score tables, e.g. data/scores (repair: one or more table folders)")
    parser.add_argument("--traceback", action="store_true", help="show the Python traceback of each failure")
    args = parser.parse_args(argv)
    for folder in args.root:
        if not folder.is_dir():
            parser.error(f"{'table folder' if args.command == 'repair' else 'scores root'} {folder} is not a folder")
    if args.command == "repair":
        return repair_tables(args.root)
    if len(args.root) > 1:
        parser.error(f"{args.command} takes one scores root")
    args.root = args.root[0]
    return check_tables(args.root, record_digests=args.command == "record-digests", show_traceback=args.traceback)


def _command_line(argv: Sequence[str], prog: str = "allocbias") -> str:
    return prog + " " + " ".join(shlex.quote(a) for a in argv)


def _audit(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .audit import interrupted_words, interruptible, run_audit
    from .scoring.serving import redact_command

    start = time.perf_counter()
    try:
        with interruptible():  # one Ctrl-C is enough, also while a package is imported
            result = run_audit(
                args.model, args.out, base_url=args.base_url, precision=args.precision, wording=args.wording,
                jobs=args.jobs, names_per_group=args.names_per_group, k=args.k, rounds=args.rounds, seed=args.seed,
                device=args.device, parts=args.parts, pairwise_rounds=args.pairwise_rounds,
                orderings=args.orderings, n_boot=args.n_boot, engine_batch_size=args.engine_batch_size,
                prefill=args.prefill, timeout=args.timeout, rescore=args.rescore, report=not args.no_report,
                command=redact_command(["allocbias", *argv]),
            )
    except KeyboardInterrupt as exc:  # the audit's own line: what was kept and how to go on
        if args.traceback:
            raise
        print(f"allocbias audit: interrupted; {interrupted_words(exc, args.out)}", file=sys.stderr)
        return 130
    scored = ", ".join(f"{part} {n} new" for part, n in result.scored_rows.items())
    print(f"audit of {result.system}: {scored}; {time.perf_counter() - start:.1f} s in all")
    print(f"tables: {result.out / 'tables'}")
    if result.report is not None:
        print(f"report: {result.report}")
    return 0


def _score(args: argparse.Namespace, command: str, parser: argparse.ArgumentParser) -> int:
    from .scoring import runs
    from .scoring import tasks
    from .scoring.systems import parse_system

    task = tasks.task(args.task)
    if task.name == "resume_pairwise" and args.groups and len(set(args.groups)) < 2:
        parser.error("--groups needs at least two distinct groups (a pair)")
    systems = [parse_system(s) for s in args.systems]
    for system in systems:
        start = time.perf_counter()
        print(f"== {task.name} / {system.id}", flush=True)
        engine = runs.LazyEngine(system, batch_size=args.engine_batch_size or task.engine_batch_size,
                                 device=args.device)
        table = runs.score(task, task.input_table(vars(args)), system=system, engine=engine, root=args.root,
                            batch_size=args.batch_size or None, command=command, progress=True)
        print(f"== {system.id}: {len(table)} rows ready in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """Run ``allocbias`` with ``argv`` (default: the process's arguments); returns the exit status.

    ``prog`` names a wrapper that runs ``allocbias score`` under another name (``scripts/score_study.py``): its
    arguments are those after ``score``, and the command recorded in a table's provenance is ``prog`` followed by
    them, so a table extended through either entry point records the command that was typed.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "score" if prog else next((a for a in argv if a in INTERRUPTED), None)
    traceback = "--traceback" in argv
    try:  # Ctrl-C anywhere, imports included, ends with one line (no traceback unless --traceback)
        if not prog and (status := _delegated(argv)) is not None:
            return status
        parser = build_parser()
        args = parser.parse_args(["score", *argv] if prog else argv)
        command, traceback = args.command, args.traceback
        return _run(args, argv, prog, parser)
    except KeyboardInterrupt as exc:
        if traceback:
            raise
        print(getattr(exc, "message", None) or INTERRUPTED.get(command, "allocbias: interrupted"), file=sys.stderr)
        return 130
    except ImportError as exc:  # an optional dependency the command needs is not installed
        message = _missing_extra(command, exc)
        if traceback or message is None:
            raise
        print(f"allocbias: error: {message}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str], prog: str | None, parser: argparse.ArgumentParser) -> int:
    """Run the parsed command; a problem with its input becomes one line on standard error and exit status 2."""
    from .outputs import OutputError, printable

    try:
        if args.command == "audit":
            return _audit(args, argv)
        if args.command == "ll144":
            return _ll144(args, argv)
        if args.command == "plan":
            return _plan(args)
        return _score(args, _command_line(argv, prog) if prog else _command_line(argv), parser)
    except (ValueError, RuntimeError, OSError) as exc:  # AuditError, ServingError, a missing file, a full disk
        if args.traceback:
            raise
        text = exc.strerror if isinstance(exc, OutputError) and exc.strerror else str(exc)
        message = " ".join(printable(text).split()) or type(exc).__name__
        print(f"allocbias: error: {message}", file=sys.stderr)
        return 2


_RESUME = "allocbias: interrupted; the rows scored so far are kept: run the same command again to resume"
#: What Ctrl-C says, by command (before the command is known: nothing had started).
INTERRUPTED = {
    "audit": _RESUME, "score": _RESUME,
    "ll144": "allocbias ll144: interrupted; nothing was written (the audit goes into --out all at once when it is "
             "complete, so the folder is as it was): run the same command again",
    "book": "allocbias book: interrupted", "store": "allocbias store: interrupted",
}
#: The extra that installs what each command imports only when it runs.
EXTRAS = {"audit": "audit", "score": "audit", "ll144": "data", "book": "book"}


def _missing_extra(command: str | None, exc: ImportError) -> str | None:
    """One line naming the extra (and its install command) that a missing package belongs to; ``None`` when the
    missing module is allocbias's own (a bug: the traceback is shown) or no command was running.

    >>> _missing_extra("audit", ModuleNotFoundError("No module named 'httpx'", name="httpx"))
    "allocbias audit needs the audit extra: pip install 'allocbias[audit]' (missing: httpx)"
    """
    name = (exc.name or "").split(".")[0]
    if command not in EXTRAS or name == "allocbias":
        return None
    extra = EXTRAS[command]
    missing = f" (missing: {name})" if name else f" ({' '.join(str(exc).split())})"
    if name == "torch":
        return (f"allocbias {command} needs torch: install its CPU build first (pip install torch --index-url "
                f"https://download.pytorch.org/whl/cpu), then pip install 'allocbias[{extra}]'")
    return f"allocbias {command} needs the {extra} extra: pip install 'allocbias[{extra}]'{missing}"


if __name__ == "__main__":
    raise SystemExit(main())
