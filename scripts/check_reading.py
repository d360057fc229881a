"""The reading check of CI: lay every chapter of a built book out at 1280 px in headless Chromium and fail when a
page scrolls sideways, an element passes the article column, or a table's verdict or flag column lies past the
visible width; print how far each figure is shrunk and fail when one is shrunk below ``--min-scale``: by default
the scale under which the book's legends (drawn at ``allocbias.plotting.LEGEND_POINTS``, 100 dpi) read under 9 pt,
0.785 (``allocbias.plotting.min_display_scale``; every findings module's figure is held to that legend size by the
tests).

Usage: python scripts/check_reading.py _build/html [--width 1280] [--min-scale 0.785]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allocbias.book import toc_notebooks
from allocbias.book.reading import horizontal_overflow
from allocbias.plotting import min_display_scale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="the built book's HTML folder (_build/html)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--min-scale", type=float, default=round(min_display_scale(), 3),
                        help="fail for a figure shown smaller than this share of its drawn width (default: the "
                             "scale at which the book's legends read at 9 pt)")
    args = parser.parse_args(argv)
    problems, checked = [], 0
    for source in toc_notebooks():
        page = args.html / "build" / "notebooks" / f"{source.stem}.html"
        if not page.exists():
            problems.append(f"{source.stem}: no page {page}")
            continue
        found = horizontal_overflow(page, args.width)
        checked += 1
        scales = [f["scale"] for f in found["figures"]]
        small = [f for f in found["figures"] if f["scale"] < args.min_scale]
        print(f"{source.stem}: {len(scales)} figures, smallest scale "
              f"{min(scales) if scales else float('nan'):.2f}; {len(found['hidden_keys'])} key columns out of view; "
              f"{len(found['offenders'])} elements past the column")
        if found["scrollWidth"] > found["viewport"] or found["offenders"]:
            problems.append(f"{source.stem}: past the column: {found['offenders'][:3]}")
        if found["hidden_keys"]:
            problems.append(f"{source.stem}: key columns out of view: {found['hidden_keys'][:3]}")
        if small:
            problems.append(f"{source.stem}: figures shrunk below {args.min_scale}: {small[:3]}")
    print(f"{checked} chapters laid out at {args.width} px")
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
