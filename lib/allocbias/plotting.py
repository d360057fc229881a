"""The few figure helpers every chapter shares: one group order, one colour per group, titled axes.

Groups keep the same colour on every page of the book, so a reader can follow "Female Black" from the
score distributions to the selection rates without re-reading legends.
"""

from __future__ import annotations

import base64
import html as _html
import re
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from pandas.io.formats.style import Styler

from .checks import require_columns

__all__ = [
    "show_table",
    "count_text",
    "number_text",
    "fixed_text",
    "DASH",
    "interval_text",
    "evidence_text",
    "join_intervals",
    "header_words",
    "value_words",
    "table_frame",
    "KEY_COLUMN_WORDS",
    "GROUP_ORDER",
    "LL144_METRIC_LABELS",
    "METRIC_LABELS",
    "group_palette",
    "label_axes",
    "order_groups",
    "plot_di_curves",
    "plot_metric_sweep",
    "plot_score_distributions",
    "use_book_style",
    "BOOK_DPI",
    "LEGEND_POINTS",
    "MIN_DISPLAYED_POINTS",
    "min_display_scale",
    "smallest_legend_points",
    "METRIC_SHORT",
    "METRIC_COLOUR_INDEX",
    "METRIC_MARKERS",
    "SEX_MARKERS",
    "SEX_LINESTYLES",
    "with_sex",
    "group_handles",
    "hatch_women",
    "metric_palette",
    "system_palette",
    "SYSTEM_COLOURS",
]

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

#: Short metric names for legends, table headers and panel titles (one spelling in every chapter).
METRIC_SHORT: dict[str, str] = {
    "rabbi": "RABBI",
    "avg_gap": "mean gap δ",
    "jsd": "JSD",
    "emd": "EMD",
    "dDP": "ΔDP",
    "dEO": "ΔEO",
}

#: Display names of the Local Law 144 metrics of :mod:`allocbias.ll144` (columns of ``ll144.group_metric_summary``),
#: in the order :func:`plot_metric_sweep` draws them.
LL144_METRIC_LABELS: dict[str, str] = {
    "di_avg": "DI_avg (withdrawn rule)",
    "di_median": "DI_median (final rule)",
    "auc_di": "AUC_DI",
    "p_fair": "P_fair",
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


#: Marker of each sex in scatter plots of the résumé groups (whose colour gives race, shade sex): the two shades of
#: one hue stay apart by shape too.
SEX_MARKERS: dict[str, str] = {"Male": "o", "Female": "s"}
#: Line style of each sex in line plots of the résumé groups (solid for men, dashed for women).
SEX_LINESTYLES: dict[str, str] = {"Male": "-", "Female": "--"}


def with_sex(frame: pd.DataFrame, group: str = "group") -> pd.DataFrame:
    """``frame`` with a column ``sex``, the first word of each résumé group ("Male White" -> "Male"), to draw as a
    marker or line style beside the group's colour (:data:`SEX_MARKERS`).

    >>> with_sex(pd.DataFrame({"group": ["Male White", "Female Black"]}))["sex"].tolist()
    ['Male', 'Female']
    """
    _require_columns(frame, [group], name="frame")
    sex = frame[group].astype(str).str.split().str[0]
    unknown = sorted(set(sex) - set(SEX_MARKERS))
    if unknown:
        raise ValueError(f"groups of column {group!r} must start with Male or Female, found {unknown}")
    return frame.assign(sex=sex)


def group_handles(groups: Sequence[str], *, kind: str = "marker") -> dict[str, Any]:
    """Legend entries of the résumé groups, each in its colour (:func:`group_palette`) and its sex's marker
    (``kind="marker"``, :data:`SEX_MARKERS`) or line style (``kind="line"``, :data:`SEX_LINESTYLES`), as a
    mapping from label to handle for ``ax.legend(handles=list(h.values()))`` or ``FacetGrid.add_legend(legend_data=h)``.

    >>> h = group_handles(["Male White", "Female White"], kind="line")
    >>> [(label, line.get_linestyle()) for label, line in h.items()]
    [('Male White', '-'), ('Female White', '--')]
    """
    from matplotlib.lines import Line2D

    if kind not in ("marker", "line"):
        raise ValueError(f"kind must be 'marker' or 'line', got {kind!r}")
    sexes = with_sex(pd.DataFrame({"group": list(groups)}))["sex"].tolist()
    palette = group_palette(list(groups))
    out = {}
    for g, sex in zip(groups, sexes, strict=True):
        if kind == "marker":
            out[g] = Line2D([], [], color=palette[g], marker=SEX_MARKERS[sex], linestyle="", markersize=7, label=g)
        else:
            out[g] = Line2D([], [], color=palette[g], linestyle=SEX_LINESTYLES[sex], lw=2, label=g)
    return out


def hatch_women(fig: Figure, groups: Sequence[str], *, hatch: str = "///") -> int:
    """Hatch every filled box or bar of ``fig`` (its legends' too) whose colour is a woman's group in
    :func:`group_palette`, so that the light and dark shades of one hue also differ by pattern; returns how many
    patches were hatched. Each patch takes the group whose colour is nearest its face colour (seaborn may
    desaturate fills).

    >>> fig, ax = plt.subplots()
    >>> p = group_palette(["Male White", "Female White"])
    >>> _ = ax.bar([0, 1], [1, 2], color=[p["Male White"], p["Female White"]])
    >>> hatch_women(fig, ["Male White", "Female White"]), [b.get_hatch() for b in ax.patches]
    (1, [None, '///'])
    >>> plt.close(fig)
    """
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch

    groups = list(groups)
    sexes = with_sex(pd.DataFrame({"group": groups}))["sex"].tolist()
    colours = np.array([to_rgb(c) for c in group_palette(groups).values()])
    patches = [p for ax in fig.axes for p in ax.patches]
    patches += [p for lg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)] if lg is not None
                for p in lg.get_patches()]
    hatched = 0
    for patch in patches:
        if not isinstance(patch, Patch) or patch.get_facecolor()[3] == 0:
            continue
        nearest = int(np.argmin(((colours - np.array(patch.get_facecolor()[:3])) ** 2).sum(axis=1)))
        if sexes[nearest] == "Female":
            patch.set_hatch(hatch)
            hatched += 1
    return hatched


#: Each metric's colour, as an index into seaborn's ``colorblind`` palette: blue, orange, green, pink, grey, tan.
#: (The palette's vermilion, index 3, is left out: beside δ's orange it reads as the same colour.)
METRIC_COLOUR_INDEX: dict[str, int] = {"rabbi": 0, "avg_gap": 1, "jsd": 2, "emd": 4, "dDP": 7, "dEO": 5}

#: Each metric's marker, so that figures tell metrics apart without colour too.
METRIC_MARKERS: dict[str, str] = {"rabbi": "o", "avg_gap": "s", "jsd": "^", "emd": "D", "dDP": "v", "dEO": "P"}


def metric_palette(metrics: Sequence[str] | None = None) -> dict[str, tuple[float, float, float]]:
    """A fixed colour per bias metric (RABBI, mean gap, JSD, EMD, then ΔDP, ΔEO), the same in every chapter.

    Unknown metric names raise ``ValueError`` naming them.

    >>> list(metric_palette(["rabbi", "jsd"]))
    ['rabbi', 'jsd']
    >>> metric_palette()["rabbi"] == metric_palette(["emd", "rabbi"])["rabbi"]
    True
    """
    palette = sns.color_palette("colorblind", 10)
    colours = {m: palette[i] for m, i in METRIC_COLOUR_INDEX.items()}
    if metrics is None:
        return colours
    unknown = [m for m in metrics if m not in colours]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {list(colours)}")
    return {m: colours[m] for m in metrics}


#: The fixed colour of each of the study's systems (:data:`allocbias.scoring.systems.STUDY_SYSTEMS`, same order): an index
#: into seaborn's ``"dark"`` palette. Kept here so that plotting imports no module of the study; a test checks
#: that the two lists agree.
SYSTEM_COLOURS: dict[str, int] = {
    "smollm2-fp32-paper": 0,
    "smollm2-fp32-direct": 9,
    "smollm2-int8-paper": 2,
    "smollm2-nf4-paper": 4,
    "gemma3-fp32-paper": 3,
    "gemma3-fp32-direct": 1,
}


def system_palette(systems: Sequence[str]) -> dict[str, tuple[float, float, float]]:
    """A fixed colour per system under audit: the study's six systems keep their colour whichever subset a
    chapter shows (SmolLM2 systems in blues/greens, Gemma 3 in reds/oranges); other systems (a served model)
    take further colours in the order given.

    >>> palette = system_palette(["gemma3-fp32-paper", "my-model-served-paper"])
    >>> palette["gemma3-fp32-paper"] == system_palette(["smollm2-fp32-paper", "gemma3-fp32-paper"])["gemma3-fp32-paper"]
    True
    """
    systems = list(dict.fromkeys(systems))
    if not systems:
        raise ValueError("systems is empty")
    dark = sns.color_palette("dark", 10)
    known = {system: dark[i] for system, i in SYSTEM_COLOURS.items()}
    extra = [s for s in systems if s not in known]
    others = dict(zip(extra, sns.color_palette("colorblind", 10)[5:] + sns.color_palette("pastel", 10), strict=False))
    return {s: known.get(s, others.get(s)) for s in systems}


def label_axes(ax: plt.Axes, *, title: str, x: str, y: str) -> plt.Axes:
    """Set a figure's title and axis labels in one call (every figure of the book has all three)."""
    ax.set_title(title)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return ax


#: Pixels per inch of the book's figures (a figure ``w`` inches wide is drawn ``100 * w`` pixels wide).
BOOK_DPI = 100
#: Size of every legend's text and title in the book, in points as drawn (seaborn's "notebook" context).
LEGEND_POINTS = 11.0
#: The smallest legend text a reader should meet on a page, in points as displayed (a CSS pixel is 3/4 pt).
MIN_DISPLAYED_POINTS = 9.0


def min_display_scale(points: float = LEGEND_POINTS, *, dpi: float = BOOK_DPI,
                      displayed: float = MIN_DISPLAYED_POINTS) -> float:
    """The smallest share of its drawn width a figure may be shown at for text drawn at ``points`` to read at
    ``displayed`` points or more.

    Text of ``points`` pt is ``points * dpi / 72`` image pixels high; a browser shows a CSS pixel as 3/4 pt, so
    at a scale ``s`` (displayed over drawn width) it reads as ``points * dpi / 96 * s`` pt.

    >>> round(min_display_scale(), 3)  # 11-pt legends drawn at 100 dpi read at 9 pt from this scale on
    0.785
    """
    if points <= 0 or dpi <= 0 or displayed <= 0:
        raise ValueError(f"points, dpi and displayed must be positive, got {points}, {dpi}, {displayed}")
    return displayed / (points * dpi / 96)


def smallest_legend_points(fig: Figure) -> float:
    """The smallest text size, in points as drawn, of every legend of ``fig`` (its labels and titles);
    infinity for a figure without a legend.

    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], label="a"); _ = ax.legend(fontsize=8, title="t", title_fontsize=12)
    >>> smallest_legend_points(fig)
    8.0
    >>> plt.close(fig)
    """
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    sizes = [t.get_fontsize() for lg in legends for t in [*lg.get_texts(), lg.get_title()] if t.get_text()]
    return float(min(sizes)) if sizes else float("inf")


def use_book_style() -> None:
    """The book's matplotlib style: seaborn whitegrid, readable font sizes (legends at :data:`LEGEND_POINTS`),
    :data:`BOOK_DPI`, tight layout; and, in a notebook, every table shown the book's way: a DataFrame, or a Styler a
    chapter made itself, displayed as :func:`show_table` shows it (numbers in words, intervals joined, headers in
    words, a dash for what does not exist), so that no table of a chapter escapes the book's rules."""
    sns.set_theme(style="whitegrid", context="notebook")
    plt.rcParams.update({"figure.dpi": BOOK_DPI, "savefig.bbox": "tight", "figure.autolayout": True,
                         "legend.fontsize": LEGEND_POINTS, "legend.title_fontsize": LEGEND_POINTS})
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the book's kernel
        return
    shell = get_ipython()
    if shell is None:
        return
    html = shell.display_formatter.formatters["text/html"]
    html.for_type(pd.DataFrame, _book_html)
    html.for_type(Styler, _book_html)


def _format_param(value: Any) -> str:
    """A parameter value as it appears in titles and legends: numbers with ``:g``, anything else with ``str``."""
    return format(value, "g") if isinstance(value, Real) and not isinstance(value, bool) else str(value)


def _require_columns(frame: Any, columns: Iterable[str], *, name: str) -> None:
    """Raise ``ValueError`` naming ``name`` and the missing columns unless ``frame`` is a DataFrame holding them."""
    require_columns(frame, columns, name)


def _require_nonempty(mapping: Any, *, name: str) -> None:
    if not isinstance(mapping, Mapping) or not mapping:
        raise ValueError(f"{name} must be a non-empty mapping from parameter value to DataFrame")


def plot_score_distributions(
    frames_by_param: Mapping[Any, pd.DataFrame],
    *,
    param_label: str,
    title: str,
    palette: Mapping[str, Any] | None = None,
    groups: Sequence[str] | None = None,
    score: str = "score",
    group: str = "group",
    bins: int = 60,
    x_label: str = "score (points)",
    y_label: str = "density (1/point)",
    panel_size: tuple[float, float] = (3.2, 3.0),
    max_columns: int = 3,
) -> Figure:
    """Score histograms per group, one panel per parameter value, in rows of at most ``max_columns`` panels on
    shared axes (so that a figure of many values stays narrow enough for its text to read on the page).

    Each panel draws, for one parameter value, a step histogram of the scores of every group, each group
    normalised to density 1 on its own (``stat="density"``, ``common_norm=False``), so groups of different sizes
    compare by shape. Panels share both axes; the legend sits on the last panel.

    Parameters
    ----------
    frames_by_param : mapping of parameter value to DataFrame
        Tidy frames, one row per candidate, with the columns ``score`` and ``group`` (names set by the
        arguments of the same names); the panels follow the mapping's order.
    param_label : str
        Name of the parameter; a panel is titled ``"{param_label} = {value:g}"``.
    title : str
        Title of the whole figure.
    palette, groups : optional
        Colour per group and the order of the groups in the legend; default :func:`group_palette` over the
        groups in :func:`order_groups` order.
    score, group : str
        Column names of the scores and of the group labels.
    bins : int
        Histogram bins per panel.
    x_label, y_label : str
        Axis labels (with units) of every panel.
    panel_size : (float, float)
        Width and height of one panel in inches.
    max_columns : int
        Panels per row at most; further values start a new row.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per parameter value.

    Examples
    --------
    >>> frames = {0.5: pd.DataFrame({"score": [1.0, 2.0, 3.0, 4.0], "group": list("ABAB")})}
    >>> fig = plot_score_distributions(frames, param_label="a", title="demo", bins=4)
    >>> [ax.get_title() for ax in fig.axes], fig.axes[0].get_xlabel()
    (['a = 0.5'], 'score (points)')
    >>> plt.close(fig)
    """
    _require_nonempty(frames_by_param, name="frames_by_param")
    for value, frame in frames_by_param.items():
        _require_columns(frame, [score, group], name=f"frames_by_param[{value!r}]")
    if groups is None:
        groups = order_groups(g for frame in frames_by_param.values() for g in frame[group].unique())
    groups = list(groups)
    palette = dict(group_palette(groups) if palette is None else palette)
    missing = [g for g in groups if g not in palette]
    if missing:
        raise ValueError(f"palette has no colour for the group(s) {missing}")
    if isinstance(max_columns, bool) or not isinstance(max_columns, int) or max_columns < 1:
        raise ValueError(f"max_columns must be a positive integer, got {max_columns!r}")
    n = len(frames_by_param)
    cols = min(n, max_columns)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(panel_size[0] * cols, panel_size[1] * rows), sharex=True,
                             sharey=True, squeeze=False)
    panels = list(axes.flat)[:n]
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    for ax, (value, frame) in zip(panels, frames_by_param.items(), strict=True):
        sns.histplot(frame, x=score, hue=group, hue_order=groups, palette=palette, stat="density",
                     common_norm=False, element="step", bins=bins, ax=ax, legend=ax is panels[-1])
        label_axes(ax, title=f"{param_label} = {_format_param(value)}", x=x_label, y=y_label)
    fig.suptitle(title)
    return fig


def plot_di_curves(
    curves_by_param: Mapping[Any, pd.DataFrame],
    *,
    param_label: str,
    title: str,
    bound: float | None = 0.8,
    median_p: float | None = 0.5,
    groups: Sequence[str] | None = None,
    cmap: str = "viridis",
    x_label: str = "share of candidates rejected p",
    y_label: str = "impact ratio DI_g(p)",
    panel_size: tuple[float, float] = (5.5, 3.6),
) -> Figure:
    """Impact-ratio curves :math:`DI_g(p)`, one panel per group, one line per parameter value.

    Each panel plots, for one group ``g``, the curve of every parameter value against the share ``p`` of
    rejected candidates, coloured along ``cmap`` in the mapping's order, with a dashed horizontal line at
    ``bound`` (the four-fifths bound) and a dotted vertical line at ``median_p`` (the median cut of Local Law
    144). Panels share the y axis; the legend, titled ``param_label``, sits on the last panel.

    Parameters
    ----------
    curves_by_param : mapping of parameter value to DataFrame
        Curves as returned by ``allocbias.ll144.di_curve``: index ``p`` (the grid), one column per group.
    param_label : str
        Name of the parameter, the legend's title.
    title : str
        Title of the whole figure.
    bound, median_p : float or None
        Where to draw the horizontal bound and the vertical cut; ``None`` leaves the line out.
    groups : sequence of str, optional
        Groups to draw, one panel each; default every column of the first curve in :func:`order_groups` order.
    cmap : str
        Matplotlib/seaborn colour map of the parameter values.
    x_label, y_label : str
        Axis labels of every panel.
    panel_size : (float, float)
        Width and height of one panel in inches.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per group, titled ``"group {g}"``.

    Examples
    --------
    >>> curve = pd.DataFrame({"A": [1.0, 0.5, 1.0], "B": [1.0, 1.0, 1.0]}, index=[0.0, 0.5, 1.0])
    >>> fig = plot_di_curves({1: curve, 2: curve}, param_label="a", title="demo")
    >>> [ax.get_title() for ax in fig.axes], len(fig.axes[0].lines)
    (['group A', 'group B'], 4)
    >>> plt.close(fig)
    """
    _require_nonempty(curves_by_param, name="curves_by_param")
    if groups is None:
        first = next(iter(curves_by_param.values()))
        _require_columns(first, [], name="curves_by_param's first curve")
        groups = order_groups(first.columns)
    groups = list(groups)
    if not groups:
        raise ValueError("curves_by_param has no group column to draw")
    for value, curve in curves_by_param.items():
        _require_columns(curve, groups, name=f"curves_by_param[{value!r}]")
    fig, axes = plt.subplots(1, len(groups), figsize=(panel_size[0] * len(groups), panel_size[1]), sharey=True,
                             squeeze=False)
    panels = list(axes[0])
    colours = sns.color_palette(cmap, len(curves_by_param))
    for (value, curve), colour in zip(curves_by_param.items(), colours, strict=True):
        for ax, g in zip(panels, groups, strict=True):
            ax.plot(curve.index, curve[g], color=colour, label=_format_param(value))
    for ax, g in zip(panels, groups, strict=True):
        if bound is not None:
            ax.axhline(bound, color="grey", ls="--", lw=1)
        if median_p is not None:
            ax.axvline(median_p, color="black", ls=":", lw=1)
        label_axes(ax, title=f"group {g}", x=x_label, y=y_label)
    panels[-1].legend(title=param_label, loc="lower left")
    fig.suptitle(title)
    return fig


def plot_metric_sweep(
    sweep: pd.DataFrame,
    *,
    param_label: str,
    title: str,
    bound: float | None = 0.8,
    metrics: Mapping[str, str] | None = None,
    param: str = "param",
    group: str = "group",
    y_label: str = "metric value (ratio, 0 to 1)",
    height: float = 3.4,
    aspect: float = 1.4,
) -> Figure:
    """Metrics against a swept parameter: one panel per group, one line with markers per metric.

    The frame is reshaped to long form (one row per parameter value, group and metric) and drawn with
    ``seaborn.relplot``; every panel gets a dashed horizontal line at ``bound`` (the four-fifths bound).

    Parameters
    ----------
    sweep : pandas.DataFrame
        Tidy frame with one row per (parameter value, group), as ``allocbias.ll144.synthetic_sweep`` returns:
        the columns ``param`` and ``group`` (names set by the arguments of the same names) and one column
        per key of ``metrics``.
    param_label : str
        x-axis label of every panel (the parameter's name with its unit).
    title : str
        Title of the whole figure.
    bound : float or None
        Where to draw the horizontal bound; ``None`` leaves it out.
    metrics : mapping of column to display name, optional
        Metrics to draw, in legend order; default :data:`LL144_METRIC_LABELS`.
    param, group : str
        Column names of the parameter value and of the group label.
    y_label : str
        y-axis label of every panel.
    height, aspect : float
        Height of a panel in inches and its width over its height.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per group, titled ``"group = {g}"``.

    Examples
    --------
    >>> sweep = pd.DataFrame({"param": [0.0, 0.0, 1.0, 1.0], "group": list("ABAB"),
    ...                       "auc_di": [1.0, 1.0, 0.6, 0.9], "p_fair": [1.0, 1.0, 0.4, 0.8]})
    >>> fig = plot_metric_sweep(sweep, param_label="a (unitless)", title="demo",
    ...                         metrics={"auc_di": "AUC_DI", "p_fair": "P_fair"})
    >>> [ax.get_title() for ax in fig.axes], fig.axes[0].get_xlabel()
    (['group = A', 'group = B'], 'a (unitless)')
    >>> plt.close(fig)
    """
    names = dict(LL144_METRIC_LABELS if metrics is None else metrics)
    if not names:
        raise ValueError("metrics is empty: name at least one metric column to draw")
    _require_columns(sweep, [param, group, *names], name="sweep")
    if sweep.empty:
        raise ValueError("sweep has no rows to draw")
    long = sweep.rename(columns=names).melt(id_vars=[param, group], value_vars=list(names.values()),
                                            var_name="metric", value_name="value")
    grid = sns.relplot(long, x=param, y="value", hue="metric", col=group, kind="line", marker="o",
                       height=height, aspect=aspect)
    for ax in grid.axes.flat:
        if bound is not None:
            ax.axhline(bound, color="grey", ls="--", lw=1)
        label_axes(ax, title=ax.get_title(), x=param_label, y=y_label)
    grid.figure.suptitle(title, y=1.04)
    return grid.figure


#: What a table shows for a value that does not exist (a correlation over constant values, a rate of no one): a
#: dash, and the table's caption says why (:func:`show_table`'s ``dash_note``).
DASH = "–"
MINUS = "−"


def number_text(value: Any, digits: int = 3) -> str:
    """One number as the book's tables show it: whole numbers with thousands separators, other numbers to at most
    ``digits`` decimals with a true minus sign and never "-0.00", a value too small to show as "< 0.001", a missing
    or undefined value as a dash (:data:`DASH`), booleans as "yes"/"no"; text is returned as it is.

    >>> [number_text(v) for v in (1605, 25000.0, 0.95, 2.0, -0.0004, 7.5e-11, -0.25, float("nan"), None, True)]
    ['1,605', '25,000', '0.950', '2', '0.000', '< 0.001', '−0.250', '–', '–', 'yes']
    >>> number_text(0.123456, 2), number_text("ΔDP")
    ('0.12', 'ΔDP')
    """
    if value is None or value is pd.NA:
        return DASH
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if not isinstance(value, Real):
        return str(value)
    x = float(value)
    if not np.isfinite(x):
        return DASH
    if x == int(x) and abs(x) < 2**53:
        return f"{int(x):,}".replace("-", MINUS)
    text = f"{x:,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        return f"< {10 ** -digits:.{digits}f}" if x > 0 else f"{0:.{digits}f}"
    return text.replace("-", MINUS)


def count_text(n: int, word: str, plural: str | None = None) -> str:
    """A count and its noun, singular or plural as the count asks, never "(s)" or "1 points"; thousands separated.

    >>> count_text(1, "system"), count_text(6, "system"), count_text(2977, "pool"), count_text(1, "reply", "replies")
    ('1 system', '6 systems', '2,977 pools', '1 reply')
    """
    n = int(n)
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def interval_text(estimate: Any, low: Any, high: Any, digits: int = 2) -> str:
    """An estimate and its interval in one cell: "0.46 [−0.15, 0.85]"; a missing interval leaves the estimate.

    >>> interval_text(0.4567, -0.15, 0.853), interval_text(0.4, float("nan"), float("nan"))
    ('0.46 [−0.15, 0.85]', '0.40')
    """
    est = fixed_text(estimate, digits)
    if any(v is None or not np.isfinite(float(v)) for v in (low, high)):
        return est
    return f"{est} [{fixed_text(low, digits)}, {fixed_text(high, digits)}]"


def evidence_text(estimate: Any, low: Any, high: Any, *, null: Any = None, ceiling: Any = None,
                  digits: int = 2) -> str:
    """A verdict's evidence in one readable cell: the held-out r with its 95% interval, its permutation null's
    97.5th percentile and the gap's ceiling, "0.46 [−0.15, 0.85]; null 0.49; ceiling 0.43".

    >>> evidence_text(0.46, -0.15, 0.85, null=0.49, ceiling=0.43)
    '0.46 [−0.15, 0.85]; null 0.49; ceiling 0.43'
    """
    parts = [interval_text(estimate, low, high, digits)]
    if null is not None:
        parts.append(f"null {fixed_text(null, digits)}")
    if ceiling is not None:
        parts.append(f"ceiling {fixed_text(ceiling, digits)}")
    return "; ".join(parts)


def fixed_text(value: Any, digits: int = 2) -> str:
    """A number to exactly ``digits`` decimals, with a true minus sign, never "-0.00", a dash when missing.

    >>> fixed_text(-0.004), fixed_text(-0.25), fixed_text(0.5, 3), fixed_text(float("nan"))
    ('0.00', '−0.25', '0.500', '–')
    """
    if value is None or value is pd.NA or not np.isfinite(float(value)):
        return DASH
    text = f"{float(value):.{digits}f}"
    return text.lstrip("-") if float(text) == 0 else text.replace("-", MINUS)


#: Interval columns a table joins into its estimate's cell (:func:`join_intervals`): for an estimate column ``X``,
#: the first pair of these suffixes present (``X_ci_lo``/``X_ci_hi``...); an estimate named in the keys of
#: :data:`_ESTIMATE_ALIASES` also takes its alias's pairs (``impact_ratio`` with ``ir_low``/``ir_high``).
_INTERVAL_SUFFIXES = (("_ci_lo", "_ci_hi"), ("_ci_low", "_ci_high"), ("_lo", "_hi"), ("_low", "_high"),
                      (" low", " high"), (" lo", " hi"))
_ESTIMATE_ALIASES = {"impact_ratio": ("ir",), "estimate": ("ci",), "heldout_mean": ("heldout", "heldout_ci"),
                     "null_mean": ("null",), "heldout_null_mean": ("heldout_null",), "heldout_r": ("ci",),
                     "r": ("ci",)}


def join_intervals(frame: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Each estimate column with an interval beside it (``X`` and ``X_lo``/``X_hi``, ``X_ci_lo``/``X_ci_hi``,
    ``X_low``/``X_high``; ``impact_ratio`` with ``ir_low``/``ir_high``; ``null_mean`` with ``null_lo``/``null_hi``)
    becomes one text column "X [95%]" of cells "0.46 [−0.15, 0.85]", and the interval columns go. A pair without
    an estimate becomes one column of cells "[lo, hi]": "null 95% range" for a permutation null's percentiles
    (``null_lo``, ``null_hi``), "value: low, high" for another (``value_low``, ``value_high``).

    >>> t = pd.DataFrame({"group": ["a"], "rate": [0.25], "rate_low": [0.2], "rate_high": [0.3],
    ...                   "impact_ratio": [0.8], "ir_low": [0.7], "ir_high": [0.9], "null_lo": [-0.1], "null_hi": [0.2]})
    >>> join_intervals(t).to_dict("records")
    [{'group': 'a', 'rate [95%]': '0.25 [0.20, 0.30]', 'impact_ratio [95%]': '0.80 [0.70, 0.90]', 'null 95% range': '[−0.10, 0.20]'}]

    A verdict's evidence (the columns of ``validity_controls`` or ``forecast_test``) becomes one cell, "0.46 [−0.15,
    0.85]; null 0.49; ceiling 0.43", and the in-sample r one beside its null, "0.53; null 0.45 [0.30, 0.60]":

    >>> c = pd.DataFrame({"r": [0.53], "null_mean": [0.45], "null_lo": [0.3], "null_hi": [0.6], "heldout_mean": [0.46],
    ...                   "heldout_ci_lo": [-0.15], "heldout_ci_hi": [0.85], "heldout_null_hi": [0.49], "ceiling": [0.43]})
    >>> join_intervals(c).to_dict("records")
    [{'in-sample r; null mean [95%]': '0.53; null 0.45 [0.30, 0.60]', 'held-out r [95%]; null 97.5%; ceiling': '0.46 [−0.15, 0.85]; null 0.49; ceiling 0.43'}]
    """
    t = frame.copy()
    used: set[str] = set()
    joined: dict[str, str] = {}
    done = ""
    # a verdict's evidence, as the verdict reads it: the held-out r with its sampling interval, its permutation
    # null's 97.5th percentile and the ceiling, in one cell; the in-sample r beside its null's mean and range
    for est, lo, hi, null, ceiling in (("heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_hi", "ceiling"),
                                       ("heldout_r", "ci_lo", "ci_hi", "null_hi", "ceiling")):
        if {est, lo, hi} <= set(t.columns) and null in t.columns:
            has_ceiling = ceiling in t.columns
            t[est] = [evidence_text(e, a, b, null=n, ceiling=c if has_ceiling else None, digits=digits)
                      for e, a, b, n, c in zip(t[est], t[lo], t[hi], t[null],
                                               t[ceiling] if has_ceiling else [None] * len(t))]
            label = "held-out r [95%]; null 97.5%" + ("; ceiling" if has_ceiling else "")
            gone = [lo, hi, null, *([ceiling] if has_ceiling else []),
                    *[c for c in ("heldout_lo", "heldout_hi", "heldout_null_lo", "heldout_null_mean", "null_lo",
                                  "null_mean") if c in t.columns and est == "heldout_r"],
                    *[c for c in ("heldout_lo", "heldout_hi", "heldout_null_lo", "heldout_null_mean")
                      if c in t.columns and est == "heldout_mean"]]
            t = t.drop(columns=gone).rename(columns={est: label})
            done = label
            break
    if {"r", "null_mean", "null_lo", "null_hi"} <= set(t.columns):
        t["r"] = [f"{fixed_text(r, digits)}; null {interval_text(m, a, b, digits)}"
                  for r, m, a, b in zip(t["r"], t["null_mean"], t["null_lo"], t["null_hi"])]
        t = t.drop(columns=["null_mean", "null_lo", "null_hi"] + [c for c in ("null_percentile",) if c in t.columns])
        t = t.rename(columns={"r": "in-sample r; null mean [95%]"})
    elif {"r", "null_mean", "null_hi"} <= set(t.columns):
        t["r"] = [f"{fixed_text(r, digits)}; null {fixed_text(m, digits)}, 97.5% {fixed_text(h, digits)}"
                  for r, m, h in zip(t["r"], t["null_mean"], t["null_hi"])]
        t = t.drop(columns=["null_mean", "null_hi"]).rename(columns={"r": "in-sample r; null mean, 97.5%"})
    columns = [c for c in t.columns if isinstance(c, str) and c != done]
    for est in columns:
        if est in used or not pd.api.types.is_numeric_dtype(t[est]):
            continue
        for stem in (est, *_ESTIMATE_ALIASES.get(est, ())):
            pair = next(((stem + a, stem + b) for a, b in _INTERVAL_SUFFIXES
                         if stem + a in t.columns and stem + b in t.columns and stem + a not in used), None)
            if stem == est and est in ("heldout_mean",) and ("heldout_ci_lo" in t.columns):
                pair = ("heldout_ci_lo", "heldout_ci_hi")
            if pair:
                lo, hi = pair
                t[est] = [interval_text(e, a, b, digits) for e, a, b in zip(t[est], t[lo], t[hi])]
                used.update((est, lo, hi))
                joined[est] = f"{est} [95%]"
                break
    for a, b in _INTERVAL_SUFFIXES:  # pairs left without an estimate: one range column
        for lo in [c for c in columns if c.endswith(a) and c not in used]:
            stem = lo[: -len(a)]
            hi = stem + b
            if hi in t.columns and hi not in used and stem and pd.api.types.is_numeric_dtype(t[lo]):
                t[lo] = [f"[{fixed_text(x, digits)}, {fixed_text(y, digits)}]" for x, y in zip(t[lo], t[hi])]
                used.update((lo, hi))
                # a permutation null's pair is its 2.5th and 97.5th percentiles; another pair is only a low and a high
                joined[lo] = f"{stem} 95% range" if stem.endswith("null") else f"{stem}: low, high"
                t = t.drop(columns=hi)
    drop = [c for c in used if c not in joined and c in t.columns]
    return t.drop(columns=drop).rename(columns=joined)


#: Column names in words (:func:`header_words`): code names a table may carry and what a reader reads instead.
HEADER_WORDS: dict[str, str] = {
    "heldout": "held-out", "heldout_mean": "held-out r", "heldout_r": "held-out r", "null_mean": "null mean",
    "null_percentile": "percentile of the null", "ir": "impact ratio", "impact_ratio": "impact ratio",
    "n": "n", "avg_gap": "mean gap δ", "ci": "95% interval", "se": "standard error", "pct": "%",
    "n_points": "points", "ir_below_08": "points below 0.8", "ir_below_08_null_mean": "below 0.8 under the null",
    "ir_below_08_null_hi": "below 0.8, null 97.5%", "p_value": "p-value", "pvalue": "p-value",
}


#: Values that are code names, in words (:func:`value_words`).
VALUE_WORDS: dict[str, str] = {
    "rabbi_qualified": "RABBI on qualified candidates", "avg_gap_qualified": "mean gap δ on qualified candidates",
    "audits_any_ir_below": "audits with an impact ratio below 0.8",
}


def value_words(value: Any) -> Any:
    """A cell that is a code name (``software_engineer``, ``rabbi_qualified``, ``avg_gap``) in words; any other value
    as it is.

    >>> [value_words(v) for v in ("software_engineer", "rabbi_qualified", "avg_gap", "smollm2-fp32-paper", 3)]
    ['software engineer', 'RABBI on qualified candidates', 'mean gap δ', 'smollm2-fp32-paper', 3]
    """
    if not isinstance(value, str):
        return value
    if value in VALUE_WORDS:
        return VALUE_WORDS[value]
    if value in METRIC_SHORT:
        return METRIC_SHORT[value]
    if re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", value):
        return value.replace("_", " ")
    return value


def header_words(name: Any) -> Any:
    """A column name as a reader reads it: a known code name in words (:data:`HEADER_WORDS`, :data:`METRIC_SHORT`),
    otherwise its underscores as spaces ("rate_low" -> "rate low", "heldout_ci_hi" -> "held-out ci hi").

    >>> [header_words(c) for c in ("heldout_mean", "rate_low", "rabbi", "impact_ratio [95%]", "k")]
    ['held-out r', 'rate low', 'RABBI', 'impact ratio [95%]', 'k']
    """
    if not isinstance(name, str):
        return name
    if name in HEADER_WORDS:
        return HEADER_WORDS[name]
    if name in METRIC_SHORT:
        return METRIC_SHORT[name]
    head, sep, tail = name.partition(" ")
    if sep and head in HEADER_WORDS:
        return f"{HEADER_WORDS[head]} {tail}"
    if "_" not in name:
        return name
    return " ".join(HEADER_WORDS.get(w, w) for w in name.split("_"))


#: Words that mark a table's key columns (verdicts and flags): :func:`show_table` puts them right after the row
#: labels, so that they stay in view when a wide table scrolls.
KEY_COLUMN_WORDS: tuple[str, ...] = ("verdict", "flag", "four_fifths", "four-fifths", "below 0.8", "below_08")


def _is_key(column: Any) -> bool:
    name = str(column).lower()
    return any(word in name for word in KEY_COLUMN_WORDS)


def table_frame(frame: pd.DataFrame | pd.Series | Mapping[str, Any], *, first: Sequence[str] = (), drop_constant: bool = False,
                labels: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The frame :func:`show_table` shows, and the constant columns it dropped (name -> value).

    * a named index becomes columns (its labels are data); an unnamed one (row numbers) is dropped; the levels
      of column labels are joined by spaces, each level spelled as the book spells it;
    * the key columns (``first``, then any whose name holds a word of :data:`KEY_COLUMN_WORDS`) come right after
      the row labels (at most two leading text columns), so that a wide table that scrolls sideways still shows
      them at 1280 px (:func:`show_table` also wraps their text within 16em);
    * with ``drop_constant``, columns holding one value in every row (of a table of more than one row) go, and are
      returned so that a caption can state them;
    * booleans read "yes" / "no"; numeric columns holding only whole numbers become integers;
    * columns named by a metric key (``rabbi``, ``avg_gap``, ``dDP``...) take their book names
      (:data:`METRIC_SHORT`, or ``labels``), and so do the cells of ``metric`` and ``gap`` columns.

    >>> t, dropped = table_frame(pd.DataFrame({"metric": ["rabbi", "jsd"], "k": [1, 1], "r": [0.5, 0.25],
    ...                                          "n": [3.0, 4.0], "verdict": ["a", "b"], "four_fifths": [True, False]}),
    ...                          drop_constant=True)
    >>> list(t.columns), dropped, t["metric"].tolist(), t["four_fifths"].tolist(), t["n"].dtype.name
    (['metric', 'verdict', 'four_fifths', 'r', 'n'], {'k': 1}, ['RABBI', 'JSD'], ['yes', 'no'], 'Int64')
    >>> table_frame({"n": 40, "se": 0.25})[0].values.tolist()
    [['n', 40], ['se', 0.25]]
    >>> list(table_frame(pd.Series([0.5, 0.25], index=["a", "b"], name="r"))[0].columns)
    ['', 'r']
    >>> wide = pd.DataFrame([[0.1, 0.2]], columns=pd.MultiIndex.from_tuples([("dDP", "retail"), ("dEO", "retail")]),
    ...                     index=pd.Index([7], name="group"))
    >>> list(table_frame(wide.rename_axis(None))[0].columns), list(table_frame(wide)[0].columns)
    (['ΔDP retail', 'ΔEO retail'], ['group', 'ΔDP retail', 'ΔEO retail'])
    """
    names = {**METRIC_SHORT, **dict(labels or {})}
    if isinstance(frame, Mapping):  # a dict of named values: one row per name
        frame = pd.Series({str(k): (v if np.isscalar(v) or v is None else str(v)) for k, v in frame.items()},
                          name="value", dtype=object).rename_axis("quantity")
    if isinstance(frame, pd.Series):  # a Series' index labels its values: kept as a column unless plain numbering
        plain = isinstance(frame.index, pd.RangeIndex) and frame.index.name is None
        frame = frame.to_frame(name=frame.name if frame.name is not None else "value")
        if not plain:
            frame = frame.rename_axis(frame.index.name or "")
    missing = [c for c in first if c not in frame.columns]
    if missing:
        raise ValueError(f"first names columns {missing} that the table does not have")
    # an index without a name is row numbering (0..n-1, or what a filter left of it): not shown
    unnamed = all(name is None for name in frame.index.names)
    t = frame.reset_index(drop=unnamed)
    if isinstance(t.columns, pd.MultiIndex):
        t.columns = [" ".join(names.get(str(p), str(p)) for p in c if str(p)) for c in t.columns]
    dropped: dict[str, Any] = {}
    if drop_constant and len(t) > 1:
        for c in list(t.columns):
            values = t[c].unique()
            if len(values) == 1 and t[c].notna().all() and c not in first and not _is_key(c):
                value = values[0]
                dropped[str(c)] = value.item() if hasattr(value, "item") else value
                t = t.drop(columns=c)
    for c in t.columns:
        col = t[c]
        if pd.api.types.is_bool_dtype(col) or (col.dtype == object and col.notna().any()
                                               and col.dropna().map(type).eq(bool).all()):
            t[c] = col.map({True: "yes", False: "no"}).where(col.notna(), "")
        elif pd.api.types.is_float_dtype(col) and col.notna().any():
            finite = col.dropna()
            if ((finite % 1) == 0).all() and finite.abs().max() < 2**53:
                t[c] = col.astype("Int64")
        if str(c) in ("metric", "gap") and pd.api.types.is_string_dtype(col):
            t[c] = t[c].map(lambda v: names.get(v, v) if isinstance(v, str) else v)
    leading = []  # the row labels: at most two leading text columns
    for c in t.columns[:2]:
        if pd.api.types.is_string_dtype(t[c]) and not _is_key(c) and c not in first:
            leading.append(c)
        else:
            break
    keys = list(first) + [c for c in t.columns if _is_key(c) and c not in first]
    order = leading + keys + [c for c in t.columns if c not in leading and c not in keys]
    t = t[order].rename(columns={c: names[c] for c in t.columns if isinstance(c, str) and c in names})
    return t, dropped


def show_table(frame: pd.DataFrame | pd.Series | Mapping[str, Any], precision: int = 3, *, first: Sequence[str] = (), drop_constant: bool = False,
               labels: Mapping[str, str] | None = None, caption: str | None = None, digits: Mapping[str, int] | None = None,
               join: bool = True, dash_note: str | None = None, download: str | None = None,
               full: pd.DataFrame | None = None, wrap: Sequence[str] = ()) -> Any:
    """A table as the book shows it, inside the text column at 1280 px: a pandas ``Styler`` of :func:`table_frame`
    (no 0..n index column, key columns first, booleans as words, metric names as the book spells them) whose cells
    are the book's words for numbers (:func:`number_text`: whole numbers with thousands separators, at most
    ``precision`` decimals, ``digits`` per column where more decide a stated count, no "-0.00", a dash for a
    missing value), each estimate joined with its interval into one cell ("0.46 [−0.15, 0.85]",
    :func:`join_intervals`, unless ``join=False``) and headers in words (:func:`header_words`). The caption
    states the constant columns it dropped and, where a dash stands, why (``dash_note``); with ``download`` (a
    file name) it offers the table, or ``full`` (the whole of a table shown in part), as a CSV download. Text
    columns named in ``wrap`` (and the key columns) wrap within their cell.

    >>> html = show_table(pd.DataFrame({"n": [529810], "rate": [0.12345], "r": [float("nan")]})).to_html()
    >>> "529,810<" in html, "0.123<" in html, "–<" in html, "a dash marks" in html, "row0_col0" in html
    (True, True, True, True, True)
    >>> "k = 1 in every row" in show_table(pd.DataFrame({"k": [1, 1], "r": [0.1, 0.2]}), drop_constant=True).to_html()
    True
    >>> html = show_table(pd.DataFrame({"null_mean": [0.1], "null_lo": [-0.2], "null_hi": [0.3]}), download="x.csv").to_html()
    >>> "null mean [95%]" in html, "0.10 [−0.20, 0.30]" in html, 'download="x.csv"' in html
    (True, True, True)
    """
    source = frame
    if join and isinstance(frame, pd.DataFrame):
        named_index = any(n is not None for n in frame.index.names)
        frame = join_intervals(frame.reset_index() if named_index else frame, digits=min(precision, 2))
    t, dropped = table_frame(frame, first=first, drop_constant=drop_constant, labels=labels)
    per = dict(digits or {})
    missing = False
    shown = pd.DataFrame(index=t.index)
    for c in t.columns:
        col = t[c].map(lambda v: ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else value_words(v))
        missing |= (bool(col.isna().any()) or bool(col.astype(str).isin(["nan", "NaN", "<NA>"]).any())
                    or bool(col.astype(str).str.contains(r"(?:^|\[|; |, )–(?:;|,|\]|$)").any()))
        places = per.get(str(c), precision)
        plain = any(w in str(c).lower() for w in ("year", "_id", " id", "seed", "rank"))
        shown[c] = [(str(int(v)) if plain and isinstance(v, Real) and not isinstance(v, bool) and np.isfinite(float(v))
                     and float(v) == int(v) else number_text(v, places)) if not isinstance(v, str) or v in ("nan", "NaN")
                    else v for v in col.map(lambda v: DASH if isinstance(v, str) and v in ("nan", "NaN", "<NA>") else v)]
    shown = shown.rename(columns={c: header_words(c) for c in shown.columns})
    notes = [f"{header_words(name)} = {number_text(value)} in every row" for name, value in dropped.items()]
    if missing:
        notes.append(dash_note or f"a dash marks a value that does not exist here (an undefined ratio or correlation, "
                                  "or nothing to count)")
    text = _html.escape("; ".join(x for x in (caption, *notes) if x))
    if download:
        data = (full if full is not None else source)
        data = data.reset_index() if isinstance(data, pd.DataFrame) and any(n is not None for n in data.index.names) else data
        payload = pd.DataFrame(data).to_csv(index=False)
        link = (f'<a download="{_html.escape(download)}" href="data:text/csv;charset=utf-8;base64,'
                f'{base64.b64encode(payload.encode()).decode()}">the full table as CSV</a>')
        text = f"{text}; {link}" if text else link
    style = shown.style.format(escape="html").hide(axis="index")
    text_columns = [c for c in t.columns if not (pd.api.types.is_numeric_dtype(t[c]) or _numbers_only(t[c]))]
    numeric = [header_words(c) for c in t.columns if c not in text_columns]
    if numeric:
        style = style.set_properties(subset=numeric, **{"text-align": "right"})
    # text that would hold a column wider than a few words (a quote, a note, a list of names) wraps in its cell
    long_text = [c for c in text_columns if shown[header_words(c)].str.len().max() > 24
                 and not shown[header_words(c)].str.match(r"^\[?[−-]?\d").all()]
    keys = [header_words(c) for c in t.columns if _is_key(c) or c in first or c in wrap or c in long_text]
    # any other text (a system id, a job, a group) may wrap between its words or after a hyphen where the table is
    # short of room; the browser wraps only then
    short_text = [header_words(c) for c in text_columns if header_words(c) not in keys]
    if short_text:
        style = style.set_properties(subset=short_text, **{"white-space": "normal", "min-width": "5em"})
    if keys:  # long verdicts and notes wrap within their column instead of pushing the numbers out of view
        style = style.set_properties(subset=keys, **{"white-space": "normal", "min-width": "7em", "max-width": "14em"})
    # joined evidence ("0.46 [−0.15, 0.85]; null 0.49; ceiling 0.43") breaks after its estimate and interval
    joined = [c for c in shown.columns if c not in keys and shown[c].str.contains("; ").any()]
    if joined:
        style = style.set_properties(subset=joined, **{"white-space": "normal", "min-width": "9.5em",
                                                       "max-width": "11em"})
    # an estimate with its interval ("0.46 [−0.15, 0.85]") may break before the interval where the column is short
    intervals = [c for c in shown.columns if c not in keys and c not in joined and shown[c].str.contains(r"\d \[").any()]
    if intervals:
        style = style.set_properties(subset=intervals, **{"white-space": "normal", "min-width": "7em"})
    style._allocbias_book = True  # shown as the book shows a table (use_book_style's display hook leaves it be)
    return style.set_caption(text) if text else style


def _numbers_only(col: pd.Series) -> bool:
    """Whether a column holds numbers only (booleans, text and an empty column do not count)."""
    values = col.dropna()
    return bool(len(values)) and bool(values.map(lambda v: isinstance(v, Real) and not isinstance(v, bool)).all())


def _book_html(obj: Any) -> str | None:
    """The HTML of a DataFrame, or of a Styler a chapter made itself, as :func:`show_table` shows it (the display
    hook :func:`use_book_style` installs); a table :func:`show_table` made is rendered as it is (a hook that returned
    nothing for it would leave the page with the Styler's text form instead of the table)."""
    if getattr(obj, "_allocbias_book", False):
        return obj.to_html()
    # columns that hold one value in every row go to the caption ("k = 1 in every row")
    if isinstance(obj, Styler):
        return show_table(obj.data, caption=obj.caption if isinstance(obj.caption, str) else None,
                          drop_constant=True).to_html()
    return show_table(obj, drop_constant=True).to_html()
