"""Record the numbers of the landing page's main result from an executed build, and write the README's paragraph.

The landing page (``book/intro.md``) glues its main result's numbers from the executed chapters; the README quotes
the same paragraph. This script reads the glued values the main result quotes from the executed chapters in
``--notebooks`` (each must have been executed with ``--profile``'s parameters, default: the default profile, the
book's), writes them with their provenance into ``book/main_result.json`` and rewrites the README's paragraph
between ``<!-- main-result ... -->`` and ``<!-- /main-result -->`` from that record
(:func:`allocbias.book.main_result.readme_paragraph`). ``--readme`` rewrites the paragraph from the committed record
only (after a change of the landing page's words that quotes no new number); ``--check`` exits 1 when the README's
paragraph is not the record's. ``tests/test_book_reading.py`` holds the README to the record.

Usage::

    make book                                   # executes the chapters into build/notebooks (default profile)
    python scripts/write_main_result.py         # record their numbers and write the README's paragraph
    python scripts/write_main_result.py --check
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from allocbias.book import glued_values, load_profile, toc_chapters
from allocbias.book.main_result import main_result_keys, main_result_record, readme_paragraph
from allocbias.outputs import write_atomic

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "book" / "main_result.json"
README = ROOT / "README.md"
INTRO = ROOT / "book" / "intro.md"
START = ("<!-- main-result: written by scripts/write_main_result.py from book/main_result.json "
         "(the default build's numbers); do not edit by hand -->")
END = "<!-- /main-result -->"
BLOCK = re.compile(re.escape(START) + r"\n.*?\n" + re.escape(END), re.S)


def chapter_numbers(root: Path = ROOT) -> dict[str, int]:
    """Each numbered chapter's stem and the number the book prints."""
    return {Path(p["file"]).name: p["number"] for p in toc_chapters(root=root) if p["number"] is not None}


def read_chapters(folder: Path, stems: list[str], profile: str, *, root: Path = ROOT) -> dict[str, dict[str, Any]]:
    """Each executed chapter's glued values, parameters and inputs digest; refuses a chapter that is missing or was
    executed with other parameters than ``profile``'s, naming it."""
    expected = load_profile(profile, root=root)
    out = {}
    for stem in stems:
        path = folder / f"{stem}.ipynb"
        if not path.exists():
            raise SystemExit(f"{path}: no executed chapter (run `make book`, or the runner with --profile {profile})")
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
        given = meta.get("papermill", {}).get("parameters", {})
        if given != expected.get(stem, {}):
            raise SystemExit(f"{path}: executed with parameters {given}, not profile {profile!r}'s "
                             f"{expected.get(stem, {})}")
        out[stem] = {"glued": glued_values(path), "parameters": given,
                     "inputs_sha256": meta.get("allocbias", {}).get("inputs_sha256")}
    return out


def _commit() -> str:
    run = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return run.stdout.strip() or "unknown"


def record_from(folder: Path, profile: str) -> dict[str, Any]:
    """The record of the main result's values from the executed chapters in ``folder``."""
    intro = INTRO.read_text(encoding="utf-8")
    stems = list(dict.fromkeys(stem for stem, _ in main_result_keys(intro)))
    chapters = read_chapters(folder, stems, profile)
    values = main_result_record({s: c["glued"] for s, c in chapters.items()}, intro)
    return {"profile": profile, "commit": _commit(), "date": dt.date.today().isoformat(),
            "chapters": {s: {"parameters": c["parameters"], "inputs_sha256": c["inputs_sha256"]}
                         for s, c in chapters.items()},
            "values": values}


def readme_with(readme: str, record: dict[str, Any]) -> str:
    """``readme`` with its main-result paragraph written from ``record``."""
    if not BLOCK.search(readme):
        raise SystemExit(f"{README.name} has no block {START} ... {END}")
    paragraph = readme_paragraph(record["values"], INTRO.read_text(encoding="utf-8"), chapters=chapter_numbers(),
                                 record_path=RECORD.relative_to(ROOT).as_posix())
    return BLOCK.sub(lambda _: f"{START}\n{paragraph}\n{END}", readme, count=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notebooks", type=Path, default=ROOT / "build" / "notebooks",
                    help="the executed chapters (default build/notebooks)")
    ap.add_argument("--profile", default="default", help="the profile the chapters must have been executed with")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--readme", action="store_true", help="rewrite the README's paragraph from the committed record")
    mode.add_argument("--check", action="store_true", help="exit 1 if the README's paragraph is not the record's")
    args = ap.parse_args(argv)
    readme = README.read_text(encoding="utf-8")
    if args.check or args.readme:
        record = json.loads(RECORD.read_text(encoding="utf-8"))
    else:
        record = record_from(args.notebooks, args.profile)
        write_atomic(RECORD, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)}")
    fresh = readme_with(readme, record)
    if args.check:
        if fresh != readme:
            print(f"{README.name}'s main result is not {RECORD.relative_to(ROOT)}'s: run python "
                  "scripts/write_main_result.py --readme", file=sys.stderr)
            return 1
        return 0
    write_atomic(README, fresh)
    print(f"wrote the main result of {README.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
