"""Time `make book` (the default profile) from a fresh clone and write what was measured into the book.

The checkout's committed HEAD is cloned into a temporary folder (uncommitted changes are not measured), its 16
chapters are executed with the default profile by the book runner and the HTML is built with
``jupyter-book build -W -n --keep-going``, both with this Python's environment (the clone's ``lib/`` first on the
path), exactly the two steps of ``make book`` after its one-time install. Each chapter's time comes from the
runner's ``done <chapter> in <seconds> s`` lines; the machine, its load average before and after and the commit
are recorded beside them.

Writes ``book/make_book_time.md`` (a fragment that ``book/running.md`` includes; not a page of its own) and
``book/make_book_time.json``. Fails, writing nothing, when a step fails.

Usage: python scripts/time_book.py [--keep FOLDER]   (FOLDER: keep the clone and its built book there)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DONE = re.compile(r"done (\S+)\.ipynb in ([0-9.]+) s")
GOAL_MINUTES = 15


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _run(args: list[str], cwd: Path, env: dict) -> tuple[str, float]:
    start = time.perf_counter()
    run = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed (exit {run.returncode}):\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return run.stdout + run.stderr, seconds


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {round(seconds % 60):02d} s"


def fragment(record: dict) -> str:
    """The paragraph and table of ``book/make_book_time.md`` from a measurement record (the JSON beside it)."""
    slowest = sorted(record["chapters_seconds"].items(), key=lambda kv: -kv[1])[:3]
    rows = "\n".join(f"| {stem} | {seconds:.0f} |" for stem, seconds in record["chapters_seconds"].items())
    return f"""<!-- written by scripts/time_book.py from a measurement; do not edit by hand -->
`make book` (default profile) from a fresh clone of commit `{record['commit']}`, measured on {record['date']} on a machine with
{record['machine']} (Python {record['python']}; one-minute load average {record['load_average_1min_before']} before,
{record['load_average_1min_after']} after): **{_minutes(record['total_seconds'])}** in all, {'within' if record['total_seconds'] <= GOAL_MINUTES * 60
else 'over'} the project's goal of {GOAL_MINUTES} minutes: executing the {len(record['chapters_seconds'])} chapters took
{_minutes(record['execute_seconds'])}, building the HTML {record['html_seconds']:.0f} s. The slowest chapters were {', '.join(f'{s} ({v:.0f} s)'
for s, v in slowest)}.

```{{admonition}} Each chapter's time (seconds, default profile)
:class: dropdown

| chapter | seconds |
| --- | ---: |
{rows}
```
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the clone (and its built book) in this folder")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="allocbias-time-book-"))
    clone = work / "allocbias"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONHASHSEED": "0", "PYTHONPATH": str(clone / "lib"), "ALLOCBIAS_ROOT": str(clone)}
    env.pop("ALLOCBIAS_DATA", None)
    load_before = os.getloadavg()
    log, execute_s = _run([sys.executable, "-m", "allocbias.book", "execute", "--profile", "default"], clone, env)
    chapters = {stem: float(s) for stem, s in DONE.findall(log)}
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    _, html_s = _run([str(jupyter_book), "build", ".", "-W", "-n", "--keep-going"], clone, env)
    load_after = os.getloadavg()
    total = execute_s + html_s
    record = {
        "commit": commit, "date": dt.date.today().isoformat(), "machine": f"{os.cpu_count()} CPU cores, {_cpu()}",
        "python": platform.python_version(), "load_average_1min_before": round(load_before[0], 2),
        "load_average_1min_after": round(load_after[0], 2), "execute_seconds": round(execute_s, 1),
        "html_seconds": round(html_s, 1), "total_seconds": round(total, 1), "goal_minutes": GOAL_MINUTES,
        "chapters_seconds": {k: round(v, 1) for k, v in chapters.items()},
    }
    text = fragment(record)
    (ROOT / "book" / "make_book_time.md").write_text(text, encoding="utf-8")
    (ROOT / "book" / "make_book_time.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(text)
    if args.keep:
        if args.keep.exists():
            shutil.rmtree(args.keep)
        shutil.move(str(clone), str(args.keep))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
