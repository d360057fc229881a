#!/usr/bin/env python
"""Run the commands that ``book/ll144_command.md`` shows and write (or check) the output it shows.

The page quotes commands and their output. Every quoted command is one of :data:`COMMANDS` (and the Python
snippet :data:`PUBLISHED_SNIPPET`), the page must contain each verbatim, and every block of output sits between
``<!-- ll144-page: NAME -->`` and ``<!-- /ll144-page -->``: this script runs the commands in a scratch folder
(with ``data/`` of this checkout), renders those blocks and replaces them (default) or, with ``--check``, exits 1
when the page shows anything else (``tests/test_ll144_command.py`` runs the check).

The command's tables are wider than the book's text column (its summary's category table has a column for every
quantity), so the page shows each of them as the book shows a table (:func:`allocbias.plotting.show_table`: headers
and numbers in words, each estimate beside its interval in one cell), split into tables of the few columns a reader
reads together, and says where the command writes the whole table.

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
from typing import Any

import pandas as pd

from allocbias import cli, data
from allocbias.audited import datasets
from allocbias.audited.locations import resources_dir
from allocbias.plotting import interval_text, show_table

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


def markdown_table(style: Any) -> str:
    """A table :func:`allocbias.plotting.show_table` made, as a Markdown table: its cells and headers as the book
    shows them (numbers right-aligned, each on one line), its caption as a line below in italics.

    >>> print(markdown_table(show_table(pd.DataFrame({"group": ["a|b"], "n": [1200], "r": [float("nan")],
    ...                                               "p": [0.0001]}), dash_note="a dash: none")))
    | group | n | r | p |
    | --- | ---: | ---: | ---: |
    | a\\|b | 1,200 | – | <&nbsp;0.001 |
    <BLANKLINE>
    *a dash: none*
    """
    shown = style.data
    number = re.compile(r"^(?:[−\d<\[]|–$)")
    cells = [[str(v).replace("|", "\\|") for v in row] for row in shown.itertuples(index=False)]
    numeric = [all(number.match(row[i]) for row in cells) for i in range(shown.shape[1])]
    align = ["---:" if n else "---" for n in numeric]
    # a number and its interval ("0.39 [0.33, 0.47]", "< 0.001") stay on one line; text wraps between words
    cells = [[c.replace(" ", "&nbsp;") if n else c for c, n in zip(row, numeric)] for row in cells]
    lines = ["| " + " | ".join(str(c).replace("|", "\\|") for c in shown.columns) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    caption = style.caption
    return "\n".join(lines) + (f"\n\n*{caption}*" if caption else "")


def _notes(table: pd.DataFrame) -> list[str]:
    """The command's notes on a table's groups (its ``note`` and ``interval_warning`` columns), one per group."""
    notes = []
    for _, r in table.iterrows():
        words = "; ".join(x for x in (r.get("note"), r.get("interval_warning")) if isinstance(x, str) and x)
        if words:
            notes.append(f"{r['group']}: {words}")
    return notes


def category_tables(table: pd.DataFrame, where: str) -> str:
    """A category's table of ``allocbias ll144`` (``tables/<category>.csv``) as the page shows it: the rates and impact
    ratios with their intervals and the four-fifths flag; then, for the compared groups, how far the flag can be
    trusted and the bounds for the unknown applicants; the command's notes on each group below the first;
    ``where`` names the files that hold the whole table."""
    known = table[~table["unknown"].astype(bool)]
    compared = known[~known["excluded"].astype(bool)]
    rates = table[["group", "four_fifths", "applicants", "selected", "rate", "rate_low", "rate_high", "impact_ratio",
                   "impact_ratio_low", "impact_ratio_high"]].rename(columns={"four_fifths": "below 0.8"})
    # a group that is not compared is not flagged either: a dash, as for its ratio, not "no"
    rates["below 0.8"] = [("yes" if flag else "no") if i in compared.index else None
                          for i, flag in rates["below 0.8"].items()]
    dash = "a dash: not compared (the unknown category, or a group excluded by the 2% rule)"
    first = markdown_table(show_table(rates, caption="; ".join(_notes(table)), dash_note=dash))
    trust = compared[["group", "false_flag_rate", "detectable_ratio", "p_value", "impact_ratio_worst_low",
                      "impact_ratio_worst_high", "impact_ratio_prop_low", "impact_ratio_prop_high"]].rename(columns={
        "false_flag_rate": "false-flag rate", "impact_ratio_worst_low": "unknowns joined, worst case low",
        "impact_ratio_worst_high": "unknowns joined, worst case high", "impact_ratio_prop_low": "proportional low",
        "impact_ratio_prop_high": "proportional high"})
    second = markdown_table(show_table(trust, dash_note="a dash: the comparator, whose ratio is 1 by construction"))
    return (f"{first}\n\nFor the compared groups, how far the flag can be trusted at these counts, and where the "
            f"impact ratio could lie if the unknown applicants had joined the group:\n\n{second}\n\n{where}\n")


#: The regression alternatives' columns (``tables/regression.csv``) in words.
REGRESSION_WORDS = {"n": "applicants", "mean": "mean score", "ratio_of_means": "ratio of means",
                    "di_median": "impact ratio at the median", "auc_di": "area under the impact-ratio curve",
                    "p_fair": "probability of a fair threshold", "ks_statistic": "KS statistic",
                    "ks_pvalue": "KS p-value"}


def regression_tables(table: pd.DataFrame, category: str, where: str) -> str:
    """The regression alternatives of ``allocbias ll144`` on a scoring tool (``tables/regression.csv``) for one
    category, as the page shows them: two tables of a few columns each, estimates beside their intervals."""
    part = table[table["category"] == category].drop(columns="category")
    words = {**{f"{k}_low": f"{v} low" for k, v in REGRESSION_WORDS.items()},
             **{f"{k}_high": f"{v} high" for k, v in REGRESSION_WORDS.items()}, **REGRESSION_WORDS}
    part = part.rename(columns=words)
    first = part[["group", "applicants", "mean score", *[f"{q}{s}" for q in ("ratio of means", "impact ratio at the median")
                                                        for s in ("", " low", " high")]]]
    second = part[["group", *[f"{q}{s}" for q in ("area under the impact-ratio curve", "probability of a fair threshold")
                              for s in ("", " low", " high")],
                   "KS statistic", "KS p-value"]]
    return (f"{markdown_table(show_table(first))}\n\n{markdown_table(show_table(second))}\n\n{where}\n")


def _run(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(shlex.split(command)[1:])
    if code != 0:
        raise RuntimeError(f"{command!r} exited with {code}")
    return out.getvalue().rstrip("\n")


def published_table(both: pd.DataFrame) -> str:
    """Our intersectional table of the published audit beside the published rates and ratios (``both``: our rows
    merged with the report's ``result`` and ``impact_ratio``, suffixed ``_published``), as the page shows it. A
    dash stands where a ratio is not given: the page says why, and refuses rows it cannot say it for."""
    excluded = both["excluded"].astype(bool)
    missing = both["impact_ratio_published"].isna() | both["impact_ratio"].isna() | excluded
    if (missing & ~excluded).any() or (excluded & both["impact_ratio_published"].notna()).any():
        raise ValueError("the published audit gives no ratio to a group we compare, or one to a group the 2% rule "
                         f"excludes: {sorted(both.loc[missing != excluded, 'group'])}; the page's note would be wrong")
    # ours to 3 decimals, the report's as it publishes them (2 decimals), so that a reader sees where they differ
    ratio = [interval_text(e, lo, hi, 3) if not x else None for e, lo, hi, x in
             zip(both["impact_ratio"], both["impact_ratio_low"], both["impact_ratio_high"], excluded)]
    shown = pd.DataFrame({"group": both["group"], "applicants": both["applicants"], "selected": both["selected"],
                          "rate, published": both["result"], "rate, ours": both["rate"],
                          "impact ratio, published": both["impact_ratio_published"],
                          "impact ratio, ours [95%]": ratio})
    comparator = ", ".join(both.loc[both["comparator"].astype(bool), "group"])
    return markdown_table(show_table(shown, 2, digits={"rate, ours": 3}, caption=f"the comparator (highest rate): "
                                     f"{comparator}", dash_note=(
        "a dash: not compared, a group below 2% of the applicants of known category (excluded by the 2% rule, in "
        "the published report too)"))) + "\n"


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
            heading = _section(example, "Race/ethnicity").split("\n\n")[0]  # the table's reading, above it
            race = pd.read_csv(work / "build/ll144-example/tables/race_ethnicity.csv")
            blocks["example-race"] = heading + "\n\n" + category_tables(race, (
                "`build/ll144-example/summary.md` holds the whole table, every column side by side, and "
                "`tables/race_ethnicity.csv` its numbers unrounded."))
            regression = pd.read_csv(work / "build/ll144-scores/tables/regression.csv")
            blocks["scores-regression"] = regression_tables(regression, "race/ethnicity", (
                "`build/ll144-scores/tables/regression.csv` holds these columns for every category (sex, "
                "race/ethnicity, intersectional), unrounded, and `summary.md` shows them as one table."))
            ours = pd.read_csv(work / "build/ll144-bloomberg/tables/intersectional.csv")
        finally:
            os.chdir(here)
    audits = datasets.read_csv(data.data_dir() / "ll144_audits" / "audits.csv")
    pub = audits[(audits["audit_id"] == PUBLISHED_AUDIT) & (audits["protected_char_group"] == "intersectional")]
    both = ours[~ours["unknown"]].merge(pub[["sex", "race_ethnicity", "result", "impact_ratio"]],
                                         on=["sex", "race_ethnicity"], suffixes=("", "_published"))
    blocks["published-compare"] = published_table(both)
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
