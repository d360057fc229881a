#!/usr/bin/env python
"""Run the commands that ``book/ll144_command.md`` shows and write (or check) the output it shows.

The page quotes commands and their output. Every quoted command is one of :data:`COMMANDS` (and the Python
snippet :data:`PUBLISHED_SNIPPET`), the page must contain each verbatim, and every block of output sits between
``<!-- ll144-page: NAME -->`` and ``<!-- /ll144-page -->``: this script runs the commands in a scratch folder
(with ``data/`` of this checkout), renders those blocks and replaces them (default) or, with ``--check``, exits 1
when the page shows anything else (``tests/test_ll144_command.py`` runs the check).

Usage::

    python scripts/build_ll144_command_page.py          # rewrite the generated blocks of the page
    python scripts/build_ll144_command_page.py --check  # exit 1 if the page is not current
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

import pandas as pd

from allocbias import cli, data
from allocbias.audited import datasets
from allocbias.audited.locations import resources_dir

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "ll144_command.md"
PUBLISHED_AUDIT = "bloomberg_plum_resolution_economics_2023_audit_1"
COMMANDS = {
    "example": "allocbias ll144 lib/allocbias/resources/ll144_example/applicants.csv --out build/ll144-example",
    "scores": "allocbias ll144 lib/allocbias/resources/ll144_example/scores.csv --out build/ll144-scores",
    "published": "allocbias ll144 build/bloomberg_counts.csv --unknown Missing/Unknown --out build/ll144-bloomberg",
    "plan": "allocbias plan ll144 --rate 0.25 --group-ratio 1:4 --applicants 50 200",
    "filing": ("allocbias ll144 lib/allocbias/resources/ll144_example/applicants.csv --out build/ll144-filing --audit-date 2026-03-01 "
               "--data-source historical --data-explanation \"All applicants screened by the tool in 2025\" "
               "--distribution-date 2024-01-15 --employer \"Example Corp\" --tool-name \"Example Screener\" "
               "--auditor \"Example Audits LLC\""),
}
PUBLISHED_SNIPPET = f'''from allocbias import data
from allocbias.audited import datasets

audits = datasets.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
rows = audits[(audits["audit_id"] == "{PUBLISHED_AUDIT}")
              & (audits["protected_char_group"] == "intersectional")]
counts = rows.rename(columns={{"number_of_applications": "applicants", "n_selected_or_n_above_median": "selected"}})
counts[["sex", "race_ethnicity", "applicants", "selected"]].to_csv("build/bloomberg_counts.csv", index=False)'''
BLOCK = re.compile(r"(<!-- ll144-page: (?P<name>[a-z_-]+) -->\n)(?P<body>.*?)(<!-- /ll144-page -->)", re.S)


def _section(markdown: str, heading: str) -> str:
    """The body of ``## heading`` of a summary.md, without the heading."""
    parts = re.split(r"^## ", markdown, flags=re.M)
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        if title.strip() == heading:
            return body.strip("\n")
    raise ValueError(f"summary.md has no section {heading!r}")


def _run(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(shlex.split(command)[1:])
    if code != 0:
        raise RuntimeError(f"{command!r} exited with {code}")
    return out.getvalue().rstrip("\n")


def render_blocks() -> dict[str, str]:
    """The generated blocks of the page, by name (each ends with a newline)."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "data").symlink_to(data.data_dir(), target_is_directory=True)
        (work / "lib" / "allocbias").mkdir(parents=True)  # the example files ship with the package
        (work / "lib" / "allocbias" / "resources").symlink_to(resources_dir(), target_is_directory=True)
        (work / "build").mkdir()
        os.chdir(work)
        try:
            blocks = {f"{name}-stdout": "```text\n" + _run(cmd) + "\n```\n" for name, cmd in COMMANDS.items()
                      if name not in ("published", "filing")}
            _run(COMMANDS["filing"])
            blocks["filing-summary"] = "```markdown\n" + (work / "build/ll144-filing/published_summary.md").read_text(
                encoding="utf-8").rstrip("\n") + "\n```\n"
            exec(compile(PUBLISHED_SNIPPET, "<page snippet>", "exec"), {})
            blocks["published-stdout"] = "```text\n" + _run(COMMANDS["published"]) + "\n```\n"
            example = (work / "build/ll144-example/summary.md").read_text(encoding="utf-8")
            blocks["example-race"] = _section(example, "Race/ethnicity") + "\n"
            scores = (work / "build/ll144-scores/summary.md").read_text(encoding="utf-8")
            blocks["scores-regression"] = _section(scores, "Beyond one cut: the scores' regression alternatives") + "\n"
            ours = pd.read_csv(work / "build/ll144-bloomberg/tables/intersectional.csv")
        finally:
            os.chdir(here)
    audits = datasets.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
    pub = audits[(audits["audit_id"] == PUBLISHED_AUDIT) & (audits["protected_char_group"] == "intersectional")]
    both = ours[~ours["unknown"]].merge(pub[["sex", "race_ethnicity", "result", "impact_ratio"]],
                                         on=["sex", "race_ethnicity"], suffixes=("", "_published"))
    lines = ["| group | applicants | selected | rate (published) | rate (ours) | impact ratio (published) | "
             "impact ratio (ours) | 95% interval (ours) | note |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for _, r in both.iterrows():
        interval = f"[{r['impact_ratio_low']:.3f}, {r['impact_ratio_high']:.3f}]" if pd.notna(r["impact_ratio_low"]) else ""
        pub_ir = "" if pd.isna(r["impact_ratio_published"]) else f"{r['impact_ratio_published']:.3f}"
        note = "excluded (below 2%)" if r["excluded"] else ("comparator" if r["comparator"] else "")
        ours_ir = "not compared" if r["excluded"] else f"{r['impact_ratio']:.3f}"
        lines.append(f"| {r['group']} | {int(r['applicants']):,} | {int(r['selected']):,} | {r['result']:.3f} | "
                     f"{r['rate']:.3f} | {pub_ir} | {ours_ir} | {interval} | {note} |")
    blocks["published-compare"] = "\n".join(lines) + "\n"
    return blocks


def render_page(page: str, blocks: dict[str, str]) -> str:
    """``page`` with every generated block replaced; refuses a page that lacks a block or a quoted command."""
    names = [m.group("name") for m in BLOCK.finditer(page)]
    if sorted(names) != sorted(blocks):
        raise ValueError(f"{PAGE.name}: generated blocks {sorted(names)}, expected {sorted(blocks)}")
    for command in [*COMMANDS.values(), PUBLISHED_SNIPPET]:
        if command not in page:
            raise ValueError(f"{PAGE.name} does not quote {command.splitlines()[0]!r} verbatim")
    return BLOCK.sub(lambda m: m.group(1) + blocks[m.group("name")] + m.group(4), page)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the page does not show the current output")
    args = ap.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    fresh = render_page(page, render_blocks())
    if args.check:
        if fresh != page:
            print(f"{PAGE.relative_to(ROOT)} is not current: run python scripts/build_ll144_command_page.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
