"""The few figure helpers every chapter shares: one group order, one colour per group, titled axes.

Groups keep the same colour on every page of the book, so a reader can follow "Female Black" from the
score distributions to the selection rates without re-reading legends.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import matplotlib.pyplot as plt
import seaborn as sns

__all__ = ["GROUP_ORDER", "METRIC_LABELS", "group_palette", "label_axes", "order_groups", "use_book_style"]

#: Reading order of the eight resume groups: reference group (White Male) first, then by race, men before women.
GROUP_ORDER: tuple[str, ...] = (
    "Male White",
    "Female White",
    "Male Black",
    "Female Black",
    "Male Asian",
    "Female Asian",
    "Male Hispanic",
    "Female Hispanic",
)

#: Display names of the bias metrics, used for axis labels and table headers.
METRIC_LABELS: dict[str, str] = {
    "rabbi": "RABBI (rank-biserial)",
    "avg_gap": "average score gap",
    "jsd": "Jensen–Shannon divergence",
    "emd": "earth mover's distance",
    "dDP": "ΔDP (selection-rate gap)",
    "dEO": "ΔEO (gap among qualified)",
}


def order_groups(groups: Iterable[str]) -> list[str]:
    """Groups in book order: those of :data:`GROUP_ORDER` first, any others after, alphabetically.

    >>> order_groups(["Female Black", "Male White", "L2 (demo)"])
    ['Male White', 'Female Black', 'L2 (demo)']
    """
    present = list(dict.fromkeys(groups))
    known = [g for g in GROUP_ORDER if g in present]
    return known + sorted(g for g in present if g not in GROUP_ORDER)


def group_palette(groups: Sequence[str] | None = None) -> dict[str, tuple[float, float, float]]:
    """A fixed colour per group: paired hues, one hue per race, darker for men, lighter for women.

    Groups outside :data:`GROUP_ORDER` get colours from seaborn's ``colorblind`` palette, in the order given.

    >>> palette = group_palette()
    >>> palette["Male White"] != palette["Female White"]
    True
    """
    paired = sns.color_palette("Paired", 8)
    # Paired comes as (light, dark) pairs; men take the dark, women the light shade of their race's hue.
    base = {}
    for race_index, race in enumerate(("White", "Black", "Asian", "Hispanic")):
        base[f"Male {race}"] = paired[2 * race_index + 1]
        base[f"Female {race}"] = paired[2 * race_index]
    if groups is None:
        return base
    extra = [g for g in groups if g not in base]
    others = dict(zip(extra, sns.color_palette("colorblind", max(len(extra), 1)), strict=False))
    return {g: base.get(g, others.get(g)) for g in groups}


def label_axes(ax: plt.Axes, *, title: str, x: str, y: str) -> plt.Axes:
    """Set a figure's title and axis labels in one call (every figure of the book has all three)."""
    ax.set_title(title)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return ax


def use_book_style() -> None:
    """The book's matplotlib style: seaborn whitegrid, readable font sizes, tight layout."""
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams.update({"figure.dpi": 100, "savefig.bbox": "tight", "figure.autolayout": True})
