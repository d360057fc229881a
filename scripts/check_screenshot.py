"""Fail unless a PNG screenshot shows a rendered page: not blank, with text-like contrast across the image.

Usage: python scripts/check_screenshot.py SHOT.png
"""

from __future__ import annotations

import sys

import numpy as np
from PIL import Image


def main(path: str) -> int:
    image = np.asarray(Image.open(path).convert("L"), dtype=float)
    dark = float((image < 128).mean())
    rows_with_ink = float(((image < 200).mean(axis=1) > 0.002).mean())
    print(f"{path}: {image.shape[1]}x{image.shape[0]} px, std {image.std():.1f}, dark pixels {dark:.3%}, "
          f"rows with ink {rows_with_ink:.1%}")
    if image.std() < 5 or dark < 0.002 or rows_with_ink < 0.2:
        print(f"{path} looks blank", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
