"""allocbias.study.bloomberg_rankings: the Bloomberg-rankings chapter's findings.

The helpers are checked on small synthetic frames against hand-computed values; the findings function is run end to
end on a small slice of the committed answers (a few dozen answers per model × job, every set-aside answer of the
slice kept), with few resamples, to check its keys, types and tables; figures are drawn from that run."""

from __future__ import annotations

import doctest

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from allocbias import metrics, rankings  # noqa: E402
from allocbias.study import bloomberg_rankings as B  # noqa: E402

from .conftest import ROOT, assert_findings_glue  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "10_bloomberg_rankings.ipynb"
TINY = {"smollm2": 1.0, "gemma3": 0.96}


def test_module_doctests():
    result = doctest.testmod(B, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_group_style_splits_race_by_colour_and_gender_by_marker_and_line():
    styles = {f"{g} {r}": B.group_style(f"{g} {r}") for g in ("Male", "Female")
              for r in ("White", "Black", "Asian", "Hispanic")}
    colours = {s["color"] for s in styles.values()}
    assert len(colours) == 4  # one distinct hue per race, never a light/dark pair
    for race in ("White", "Black", "Asian", "Hispanic"):
        m, f = styles[f"Male {race}"], styles[f"Female {race}"]
        assert m["color"] == f["color"] and m["marker"] != f["marker"] and m["linestyle"] != f["linestyle"]
    with pytest.raises(ValueError, match="group"):
        B.group_style("Martian White")


def test_worst_gap_path_and_its_text():
    gaps = pd.DataFrame({"model": "m", "job": ["a", "a", "a", "b", "b", "b"], "group": "G", "k": [3, 1, 2, 1, 2, 3],
                         "dDP": [0.0, -0.05, -0.02, 0.08, 0.04, 0.01]})
    row, path = B.worst_gap_path(gaps, "m")
    assert row["job"] == "b" and path.tolist() == [0.08, 0.04, 0.01]
    assert B.path_text(path) == "+0.080, +0.040, +0.010"
    with pytest.raises(ValueError, match="model"):
        B.worst_gap_path(gaps, "other")


def _ranks(scores: dict[str, list[float]]) -> pd.DataFrame:
    n = len(next(iter(scores.values())))
    return pd.DataFrame([{"model": "m", "job": "j", "answer_id": a, "group": g, "score": s[a]}
                         for g, s in scores.items() for a in range(n)])


def test_rank_metric_points_by_hand():
    # two answers; A above the reference R in both (paired RABBI 1); A's scores {8, 6}, R's {7, 5}
    ranks = _ranks({"R": [7, 5], "A": [8, 6]})
    p = B.rank_metric_points(ranks, reference="R", groups=["R", "A"]).iloc[0]
    assert p["group"] == "A"
    assert p["paired_rabbi"] == pytest.approx(1.0)
    assert p["avg_gap"] == pytest.approx(1.0)  # mean 7 - mean 6
    # RABBI over all pairs: (8>7, 8>5, 6<7, 6>5) -> (3 - 1) / 4
    assert p["rabbi"] == pytest.approx(metrics.rabbi(np.array([8, 6]), np.array([7, 5]))) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="jsd_bins"):
        B.rank_metric_points(ranks, reference="R", groups=["R", "A"], jsd_bins=0)


def test_rabbi_decomposition_adds_up():
    rng = np.random.default_rng(0)
    perms = [rng.permutation(np.arange(1, 5)) for _ in range(30)]
    ranks = _ranks({g: [float(p[i]) for p in perms] for i, g in enumerate(["R", "A", "B", "C"])})
    d = B.rabbi_decomposition_table(ranks, reference="R", groups=["R", "A", "B", "C"])
    assert len(d) == 3
    assert np.allclose(d["rabbi"], d["linear"] + d["quadratic"])


@pytest.fixture(scope="module")
def small():
    """A slice of the committed tables: 25 answers per (model, job, oversampled), set-aside ones included."""
    answers, ranks = rankings.read_answers(), rankings.read_rankings()
    keep = set(answers.groupby(["model", "job", "oversampled"]).head(25)["answer_id"])
    keep |= set(answers[answers["parse_error"] != ""].groupby(["model", "job"]).head(6)["answer_id"])
    return (answers[answers["answer_id"].isin(keep)], ranks[ranks["answer_id"].isin(keep)])


@pytest.fixture(scope="module")
def findings(small):
    answers, ranks = small
    return B.bloomberg_rankings_findings(n_boot=10, n_perm=3, n_splits=2, answers=answers, ranks=ranks, tiny=TINY)


def test_glue_values_have_the_chapter_s_keys_and_plain_types(findings):
    values = findings.glue_values()
    assert_findings_glue(values, NOTEBOOK.stem)
    assert values["n_boot_used"] == 10 and values["n_perm_used"] == 3
    assert values["tiny_undetected_smollm2"] == 1.0
    assert values["bloomberg_n_answers"] == small_count(findings)
    assert values["n_validity_points"] == 2 * 4 * 7
    assert values["n_unparsed_main"] == values["n_not_in_prompt"] + values["n_twice"] + values["n_nobody"]


def small_count(findings) -> int:
    return int(findings.tables["answers"]["parsed"].sum())


def test_verdict_sentences_come_from_the_controls_table(findings):
    """The controls table's verdict column and the glued verdict clauses are validity.verdict_words of its rows."""
    from allocbias.validity import verdict_words

    t, g = findings.tables["controls"], findings.glue_values()
    assert t["verdict"].tolist() == [verdict_words(r)["verdict"] for _, r in t.iterrows()]
    ks = sorted(set(t["k"]))
    k_mid = ks[len(ks) // 2]
    for metric in ("rabbi", "avg_gap"):
        for k, tag in ((ks[0], "k1"), (k_mid, "kmid"), (ks[-1], "ktop")):
            row = t[(t["metric"] == metric) & (t["k"] == k)].iloc[0]
            assert g[f"vc_{metric}_{tag}_verdict"] == row["verdict"]
            # issue 39: the in-sample rise with k is quoted beside the held-out evidence at the largest k
            assert g[f"vc_{metric}_{tag}_evidence"].startswith(f"{row['heldout_mean']:.2f}".replace("-", "−"))
            assert f"null {row['heldout_null_hi']:.2f}".replace("-", "−") in g[f"vc_{metric}_{tag}_evidence"]
            assert g[f"vc_{metric}_{tag}_verdict_short"] == verdict_words(row, gap="ΔDP")["short"]
            assert g[f"vc_{metric}_{tag}_verdict_phrase"] == verdict_words(row, gap="ΔDP")["phrase"]


def test_tables_are_flat_and_counts_are_integers(findings):
    for name, table in findings.tables.items():
        assert isinstance(table.index, pd.RangeIndex), name
        assert not isinstance(table.columns, pd.MultiIndex), name
    assert findings.tables["answers"]["answers"].dtype.kind == "i"
    assert findings.tables["answers"]["parsed"].dtype.kind == "i"


def test_figures_have_titled_axes_and_readable_legends(findings):
    figures = [B.figure_impact_ratios(findings), B.figure_position_effect(findings),
               *(B.figure_gaps_by_k(findings, m) for m in B.MODELS)]
    for fig in figures:
        assert isinstance(fig, plt.Figure)
        for ax in fig.axes:
            assert ax.get_title()
        for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
            assert all(t.get_fontsize() >= 9 for t in legend.get_texts())
        plt.close(fig)
    with pytest.raises(ValueError, match="model"):
        B.figure_gaps_by_k(findings, "gpt-5")


@pytest.mark.parametrize("kwargs, name", [({"n_boot": 0}, "n_boot"), ({"n_perm": 0}, "n_perm"),
                                          ({"n_splits": -1}, "n_splits"), ({"validity_ks": [0]}, "validity_ks"),
                                          ({"validity_ks": [8]}, "validity_ks"), ({"level": 1.5}, "level"),
                                          ({"fair_bound": 0}, "fair_bound"), ({"fuzzy_cutoff": 120}, "fuzzy_cutoff"),
                                          ({"fuzzy_margin": -1}, "fuzzy_margin"), ({"jsd_bins": 0}, "jsd_bins")])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        B.bloomberg_rankings_findings(**kwargs, answers=pd.DataFrame(), ranks=pd.DataFrame(), tiny=TINY)
