"""The reading check of CI: lay every chapter of a built book out at 1280 px in headless Chromium and fail when a
page scrolls sideways, an element passes the article column, a table is wider than the text column (any table,
all of its columns: one that scrolls sideways hides the right-hand ones; the count of such tables and of their
headers out of view is printed), a table's verdict or flag column lies past the visible width, or the landing
page's main result (its first admonition) ends below the first screen (1280 x 800); print how far each figure is
shrunk and fail when one is shrunk below ``--min-scale``: by default the scale under which the book's legends
(drawn at ``allocbias.plotting.LEGEND_POINTS``, 100 dpi) read under 9 pt,
0.785 (``allocbias.plotting.min_display_scale``; every findings module's figure is held to that legend size by the
tests).

Usage: python scripts/check_reading.py _build/html [--width 1280] [--min-scale 0.785]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allocbias.book import toc_notebooks
from allocbias.book.reading import horizontal_overflows
from allocbias.plotting import min_display_scale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="the built book's HTML folder (_build/html)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--min-scale", type=float, default=round(min_display_scale(), 3),
                        help="fail for a figure shown smaller than this share of its drawn width (default: the "
                             "scale at which the book's legends read at 9 pt)")
    args = parser.parse_args(argv)
    problems, checked, wide, wide_pages, cut = [], 0, 0, 0, 0
    pages = [(s.stem, args.html / "build" / "notebooks" / f"{s.stem}.html") for s in toc_notebooks()]
    pages += [(f"book/{p.stem}", p) for p in sorted((args.html / "book").glob("*.html"))]
    missing = [(name, page) for name, page in pages if not page.exists()]
    problems += [f"{name}: no page {page}" for name, page in missing]
    pages = [(name, page) for name, page in pages if page.exists()]
    laid_out = horizontal_overflows([page for _, page in pages], args.width)  # all pages in a couple of Chromiums
    for name, page in pages:
        found = laid_out[page]
        checked += 1
        tables = found["wide_tables"]
        if tables:
            wide += len(tables)
            wide_pages += 1
            cut += sum(t["headers_out_of_view"] for t in tables)
            problems.append(f"{name}: {len(tables)} tables wider than the text column: "
                            + "; ".join(f'"{t["first"]}" {t["width"]} px in {t["column"]} px, '
                                        f'{t["headers_out_of_view"]} headers out of view' for t in tables[:3]))
        scales = [f["scale"] for f in found["figures"]]
        small = [f for f in found["figures"] if f["scale"] < args.min_scale]
        print(f"{name}: {len(scales)} figures, smallest scale "
              f"{min(scales) if scales else float('nan'):.2f}; {len(tables)} tables wider than the column; "
              f"{len(found['hidden_keys'])} key columns out of view; {len(found['offenders'])} elements past the column")
        if found["scrollWidth"] > found["viewport"] or found["offenders"]:
            problems.append(f"{name}: past the column: {found['offenders'][:3]}")
        if name == "book/intro" and not (found["first_admonition_bottom"] or 10**6) <= 800:
            problems.append(f"book/intro: the main result ends at {found['first_admonition_bottom']} px, below the "
                            "first screen at 1280 x 800")
        if found["hidden_keys"]:
            problems.append(f"{name}: key columns out of view: {found['hidden_keys'][:3]}")
        if small:
            problems.append(f"{name}: figures shrunk below {args.min_scale}: {small[:3]}")
    print(f"{checked} pages laid out at {args.width} px: {wide} tables wider than the text column on {wide_pages} "
          f"pages ({cut} column headers out of view)")
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
