"""The audit report's figures (allocbias.audit.figure_*) on small synthetic tables: each returns a Figure with
titled axes, readable legends, and no axis or tick label running into a title (issue 23 item 7: the report's
screening box plot had a y label taller than its axes, reaching into the title's band, and the comparison of
systems an x label wider than its axes)."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest

from allocbias import audit, data

from .test_study_real_scores import text_overlaps

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GROUPS = list(data.GROUPS)
REF = data.REFERENCE_GROUP
K = [1, 2, 3]


@pytest.fixture(autouse=True)
def book_style():
    """The report's style (seaborn's notebook context: the font sizes the report is drawn with), undone after."""
    from allocbias.plotting import use_book_style

    with matplotlib.rc_context():
        use_book_style()
        plt.rcParams["figure.dpi"] = 90
        yield


def _intervals(rows: list[dict], rng: np.random.Generator) -> pd.DataFrame:
    out = pd.DataFrame(rows)
    out["estimate"] = rng.normal(0, 0.1, len(out))
    out["ci_low"] = out["estimate"] - rng.uniform(0.01, 0.1, len(out))
    out["ci_high"] = out["estimate"] + rng.uniform(0.01, 0.1, len(out))
    return out


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(0)
    scores = pd.DataFrame([{"job": job, "group": g, "quality": q, "score": rng.uniform(0.1, 0.4)}
                           for job, g, q, _ in itertools.product(["retail", "nurse"], GROUPS, data.QUALITIES,
                                                                 range(4))])
    sel = _intervals([{"job": job, "k": k, "group": g, "metric": m}
                      for job, k, g, m in itertools.product([audit.ALL_JOBS, "retail"], K, GROUPS,
                                                            ["phi", "dDP", "dEO"])], rng)
    met = _intervals([{"job": job, "group": g, "metric": m}
                      for job, g, m in itertools.product([audit.ALL_JOBS, "retail"], GROUPS, ["rabbi", "jsd"])], rng)
    p = np.linspace(0, 1, 50)
    curve = pd.DataFrame({g: np.clip(1 - rng.uniform(0, 0.3) * p, 0, 1) for g in GROUPS}, index=pd.Index(p, name="p"))
    place = pd.DataFrame({"system": ["smollm2-fp32-paper", "gemma3-fp32-paper", "my-model-served-paper (this audit)"],
                          "p_better_high_low": [0.2, 0.9, 0.5], "rms_dDP": [0.05, 0.1, 0.2]})
    return {"scores": scores, "selection": sel, "metrics": met, "curve": curve, "place": place}


def _figures(t):
    return {
        "screening": lambda: audit.figure_screening(t["scores"]),
        "gaps": lambda: audit.figure_gaps(t["selection"], GROUPS, K, reference=REF),
        "rabbi": lambda: audit.figure_rabbi(t["metrics"], GROUPS, reference=REF),
        "di_curve": lambda: audit.figure_di_curve(t["curve"], GROUPS),
        "comparison": lambda: audit.figure_comparison(t["place"], 1),
    }


@pytest.mark.parametrize("name", ["screening", "gaps", "rabbi", "di_curve", "comparison"])
def test_report_figures_are_titled_readable_and_no_label_runs_into_a_title(tables, name):
    from matplotlib.figure import Figure

    fig = _figures(tables)[name]()
    try:
        assert isinstance(fig, Figure) and fig.axes
        assert all(ax.get_title() for ax in fig.axes)
        assert all(ax.get_xlabel() for ax in fig.axes)
        assert text_overlaps(fig) == []
        for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
            assert all(t.get_fontsize() >= 9 for t in legend.get_texts()), name  # readable at 1280 px
        assert fig.get_figwidth() * fig.dpi <= 1280
    finally:
        plt.close(fig)


def test_the_old_report_s_labels_are_caught(tables):
    """The labels of the report before issue 23 item 7 fail the check on the same figures."""
    fig = audit.figure_screening(tables["scores"])
    try:
        fig.axes[0].set_ylabel("score P(Yes), renormalised (0 to 1)")
        assert any("taller than its axes" in o for o in text_overlaps(fig))
    finally:
        plt.close(fig)
    fig = audit.figure_comparison(tables["place"], 1)
    try:
        fig.set_figwidth(7)
        fig.axes[0].set_xlabel("P(high-quality résumé outscores low) (0 to 1; 0.5 = chance)")
        fig.tight_layout()
        assert any("wider than its axes" in o for o in text_overlaps(fig))
    finally:
        plt.close(fig)


def test_report_figures_show_every_group_but_the_reference(tables):
    figs = [audit.figure_gaps(tables["selection"], GROUPS, K, reference=REF),
            audit.figure_rabbi(tables["metrics"], GROUPS, reference=REF)]
    try:
        for fig in figs:
            for ax in fig.axes[:1]:  # the gaps' second panel shares the first one's y axis
                assert [t.get_text() for t in ax.get_yticklabels()] == [g for g in GROUPS if g != REF]
        labels = [t.get_text() for t in figs[0].axes[1].get_legend().get_texts()]
        assert labels == [f"k = {k}" for k in K]
    finally:
        for fig in figs:
            plt.close(fig)
    fig = audit.figure_comparison(tables["place"], 1)
    try:
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == list(tables["place"]["system"])
    finally:
        plt.close(fig)


def test_report_figures_name_a_missing_column(tables):
    with pytest.raises(ValueError, match="scores"):
        audit.figure_screening(tables["scores"].drop(columns="quality"))
    with pytest.raises(ValueError, match="place"):
        audit.figure_comparison(tables["place"].drop(columns="rms_dDP"), 1)


def test_a_system_name_is_drawn_as_text_never_as_mathtext(tables):
    place = tables["place"].assign(system=["a", "b", r"my$\undefinedcommand$model (this audit)"])
    fig = audit.figure_comparison(place, 1)
    try:
        fig.canvas.draw()  # as mathtext, the unknown command would fail to parse
        assert fig.axes[0].get_legend().get_texts()[2].get_text() == r"my\$\undefinedcommand\$model (this audit)"
    finally:
        plt.close(fig)
