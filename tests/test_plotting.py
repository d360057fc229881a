"""Figure helpers of allocbias.plotting: each returns a titled, labelled Figure with its artists drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import doctest  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from allocbias import ll144, plotting  # noqa: E402
from allocbias.plotting import (
    LL144_METRIC_LABELS,
    group_palette,
    plot_di_curves,
    plot_metric_sweep,
    plot_score_distributions,
)

GRID = ll144.default_grid(51)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def frames() -> dict[float, pd.DataFrame]:
    return {a: ll144.synthetic_example(1, a, n=300, seed=0) for a in (0.0, 0.5, 1.0)}


@pytest.fixture(scope="module")
def curves(frames) -> dict[float, pd.DataFrame]:
    return {a: ll144.di_curve(df["score"], df["group"], GRID) for a, df in frames.items()}


@pytest.fixture(scope="module")
def sweep() -> pd.DataFrame:
    return ll144.synthetic_sweep(2, [5.0, 15.0, 25.0], n=300, seed=0, threshold=50.0, grid=GRID)


def _hline_at(ax, y: float) -> bool:
    return any(len(line.get_ydata()) == 2 and np.allclose(line.get_ydata(), [y, y]) for line in ax.lines)


def _vline_at(ax, x: float) -> bool:
    return any(len(line.get_xdata()) == 2 and np.allclose(line.get_xdata(), [x, x]) for line in ax.lines)


def _drawn(ax, n_points: int) -> list:
    """Lines with ``n_points`` data points (seaborn also adds empty legend proxies, and reference lines have 2)."""
    return [line for line in ax.lines if len(line.get_xdata()) == n_points]


def test_doctests_hold():
    result = doctest.testmod(plotting)
    assert result.attempted > 0 and result.failed == 0


def test_score_distributions_one_titled_panel_per_parameter(frames):
    fig = plot_score_distributions(frames, param_label="spread a", title="Example 1: distributions",
                                   palette=group_palette(["A", "B"]), groups=["A", "B"])
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    assert fig.get_suptitle() == "Example 1: distributions"
    assert [ax.get_title() for ax in fig.axes] == ["spread a = 0", "spread a = 0.5", "spread a = 1"]
    for ax in fig.axes:
        assert ax.get_xlabel() == "score (points)"
        assert ax.get_ylabel() == "density (1/point)"
        # element="step" draws one filled outline per group
        assert sum(isinstance(c, PolyCollection) for c in ax.collections) == 2
    # the legend sits on the last panel only, in the order given
    assert [ax.get_legend() is not None for ax in fig.axes] == [False, False, True]
    legend = fig.axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["A", "B"]
    assert fig.axes[0].get_shared_x_axes().joined(fig.axes[0], fig.axes[2])


def test_score_distributions_default_groups_palette_and_custom_labels():
    df = pd.DataFrame({"s": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                       "who": ["Female Black", "Male White"] * 3})
    fig = plot_score_distributions({"demo": df}, param_label="case", title="t", score="s", group="who",
                                   bins=3, x_label="rating (0-10)", y_label="density (1/rating)")
    (ax,) = fig.axes
    assert ax.get_title() == "case = demo"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("rating (0-10)", "density (1/rating)")
    # book order puts the reference group first, each in its fixed colour
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Male White", "Female Black"]


def test_score_distributions_rejects_bad_input(frames):
    with pytest.raises(ValueError, match="frames_by_param must be a non-empty mapping"):
        plot_score_distributions({}, param_label="a", title="t")
    bad = {0.0: frames[0.0].rename(columns={"score": "points"})}
    with pytest.raises(ValueError, match=r"frames_by_param\[0\.0\] has no column\(s\) \['score'\]"):
        plot_score_distributions(bad, param_label="a", title="t")
    with pytest.raises(ValueError, match=r"palette has no colour for the group\(s\) \['B'\]"):
        plot_score_distributions(frames, param_label="a", title="t", palette={"A": "red"})


def test_di_curves_one_panel_per_group_one_line_per_parameter(curves):
    fig = plot_di_curves(curves, param_label="spread a", title="Example 1: curves", bound=0.8, median_p=0.5)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    assert fig.get_suptitle() == "Example 1: curves"
    assert [ax.get_title() for ax in fig.axes] == ["group A", "group B"]
    for ax, g in zip(fig.axes, ["A", "B"], strict=True):
        assert ax.get_xlabel() == "share of candidates rejected p"
        assert ax.get_ylabel() == "impact ratio DI_g(p)"
        assert len(ax.lines) == 3 + 2  # one curve per parameter value, the bound and the median cut
        np.testing.assert_allclose(ax.lines[2].get_ydata(), curves[1.0][g].to_numpy())
        assert _hline_at(ax, 0.8) and _vline_at(ax, 0.5)
    # viridis order: the first parameter value is dark, the last is light
    first, last = (fig.axes[0].lines[i].get_color() for i in (0, 2))
    assert sum(matplotlib.colors.to_rgb(first)) < sum(matplotlib.colors.to_rgb(last))
    legend = fig.axes[-1].get_legend()
    assert legend.get_title().get_text() == "spread a"
    assert [t.get_text() for t in legend.get_texts()] == ["0", "0.5", "1"]
    assert fig.axes[0].get_legend() is None


def test_di_curves_optional_reference_lines_and_group_subset(curves):
    fig = plot_di_curves(curves, param_label="a", title="t", bound=None, median_p=None, groups=["B"])
    (ax,) = fig.axes
    assert ax.get_title() == "group B"
    assert len(ax.lines) == 3


def test_di_curves_rejects_bad_input(curves):
    with pytest.raises(ValueError, match="curves_by_param must be a non-empty mapping"):
        plot_di_curves({}, param_label="a", title="t")
    with pytest.raises(ValueError, match=r"curves_by_param\[0\.0\] has no column\(s\) \['C'\]"):
        plot_di_curves(curves, param_label="a", title="t", groups=["A", "C"])
    with pytest.raises(ValueError, match="must be a pandas DataFrame"):
        plot_di_curves({0.0: [1.0, 0.5]}, param_label="a", title="t")


def test_metric_sweep_one_panel_per_group_one_line_per_metric(sweep):
    fig = plot_metric_sweep(sweep, param_label="shared sd σ (score points)", title="Example 2: metrics", bound=0.8)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    assert fig.get_suptitle() == "Example 2: metrics"
    assert [ax.get_title() for ax in fig.axes] == ["group = A", "group = B"]
    for ax, g in zip(fig.axes, ["A", "B"], strict=True):
        assert ax.get_xlabel() == "shared sd σ (score points)"
        assert ax.get_ylabel() == "metric value (ratio, 0 to 1)"
        data_lines = _drawn(ax, 3)
        assert len(data_lines) == len(LL144_METRIC_LABELS)
        drawn = sorted(tuple(np.round(line.get_ydata(), 12)) for line in data_lines)
        expected = sorted(tuple(np.round(sweep.loc[sweep["group"] == g, m].to_numpy(), 12)) for m in LL144_METRIC_LABELS)
        assert drawn == expected
        assert _hline_at(ax, 0.8)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == list(LL144_METRIC_LABELS.values())


def test_metric_sweep_custom_metrics_and_no_bound(sweep):
    fig = plot_metric_sweep(sweep, param_label="σ", title="t", bound=None, metrics={"di_threshold": "DI at 50"})
    for ax in fig.axes:
        assert len(_drawn(ax, 3)) == 1
        assert not _hline_at(ax, 0.8)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["DI at 50"]


def test_metric_sweep_rejects_bad_input(sweep):
    with pytest.raises(ValueError, match=r"sweep has no column\(s\) \['ks'\]"):
        plot_metric_sweep(sweep, param_label="σ", title="t", metrics={"ks": "KS"})
    with pytest.raises(ValueError, match="metrics is empty"):
        plot_metric_sweep(sweep, param_label="σ", title="t", metrics={})
    with pytest.raises(ValueError, match="sweep has no rows"):
        plot_metric_sweep(sweep.iloc[:0], param_label="σ", title="t")


def test_system_colours_cover_the_study_systems_in_order():
    """plotting keeps its own list of the study's systems (it imports no module of the study): it must agree with
    allocbias.scoring.systems.STUDY_SYSTEMS, and every study system keeps its own colour."""
    from allocbias.scoring.systems import STUDY_SYSTEMS

    assert tuple(plotting.SYSTEM_COLOURS) == STUDY_SYSTEMS
    palette = plotting.system_palette(STUDY_SYSTEMS)
    assert len(set(palette.values())) == len(STUDY_SYSTEMS)
    assert plotting.system_palette(["gemma3-fp32-direct"])["gemma3-fp32-direct"] == palette["gemma3-fp32-direct"]


def test_a_table_is_shown_in_words_with_its_evidence_joined_and_no_nan():
    """Issue 39 item 4: headers and values in words, an estimate and its interval in one cell, a dash with a note
    for what does not exist, no "-0.00", integers with thousands separators, at most three decimals."""
    import re

    from allocbias.plotting import show_table

    frame = pd.DataFrame({"metric": ["rabbi", "avg_gap"], "heldout_mean": [0.46, float("nan")],
                          "heldout_ci_lo": [-0.15, float("nan")], "heldout_ci_hi": [0.85, float("nan")],
                          "heldout_null_hi": [0.49, 0.3], "ceiling": [0.43, 0.43], "rate_low": [-0.0004, 0.950000],
                          "n": [1605, 25000], "p_value": [7.5e-11, 0.2]})
    html = show_table(frame).to_html()
    cells = [__import__("html").unescape(c) for c in re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", html)]
    assert "0.46 [−0.15, 0.85]; null 0.49; ceiling 0.43" in cells and "–; null 0.30; ceiling 0.43" in cells
    assert {"RABBI", "mean gap δ", "1,605", "25,000", "0.000", "0.950", "< 0.001"} <= set(cells), cells
    assert not {"rate_low", "heldout_ci_hi", "rabbi", "avg_gap", "nan", "-0.000", "1605", "7.5e-11"} & set(cells)
    assert "a dash marks" in html
    assert all(len(c.split(".")[-1]) <= 3 for c in cells if re.fullmatch(r"−?[\d,]+\.\d+", c))


def test_the_full_table_is_offered_as_a_csv_download():
    import base64
    import re

    from allocbias.plotting import show_table

    full = pd.DataFrame({"group": list("abcdef"), "rate": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    html = show_table(full.head(2), download="rates.csv", full=full).to_html()
    payload = re.search(r'download="rates.csv" href="data:text/csv;charset=utf-8;base64,([^"]+)"', html).group(1)
    assert pd.read_csv(__import__("io").StringIO(base64.b64decode(payload).decode()))["group"].tolist() == list("abcdef")


def test_the_book_style_shows_every_dataframe_and_foreign_styler_as_the_book_does():
    """use_book_style installs a display hook: a DataFrame or a Styler a chapter made itself is shown as show_table
    shows it; a table show_table made keeps its own rendering."""
    from IPython.core.interactiveshell import InteractiveShell

    from allocbias.plotting import _book_html, show_table, use_book_style

    shell = InteractiveShell.instance()
    try:
        use_book_style()
        data, _ = shell.display_formatter.format(show_table(pd.DataFrame({"r": [0.5]})))
        assert "<table" in data["text/html"], "the hook must not hide a table show_table made"
        data, _ = shell.display_formatter.format(pd.DataFrame({"rate_low": [0.25]}))
        assert ">rate low<" in data["text/html"]
    finally:
        InteractiveShell.clear_instance()
    frame = pd.DataFrame({"null_lo": [-0.1], "null_hi": [0.2], "x": [float("nan")]})
    for obj in (frame, frame.style.format(precision=4).hide(axis="index")):
        html = _book_html(obj)
        assert "null 95% range" in html and "[−0.10, 0.20]" in html and "nan" not in html
    # a table show_table made is rendered as it is, not re-processed, and never left as the Styler's text form
    book = show_table(frame, caption="as made")
    assert _book_html(book) == book.to_html() and "<table" in _book_html(book) and "as made" in _book_html(book)
