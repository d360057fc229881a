"""allocbias.study.predictive_validity: the predictive-validity chapter's findings on small synthetic data.

The phrase helpers are checked on hand-computed cases; the findings function runs end to end on synthetic scores of
three systems for one job (two names per group), with a planted group effect, without pairwise answers or essay
grades (the chapter's test, tests/test_nb_predictive_validity.py, runs it on the committed tables)."""

from __future__ import annotations

import doctest
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from allocbias import data, validity
from allocbias.study import predictive_validity as pv

from .conftest import ROOT, assert_findings_glue

SYSTEMS = ["smollm2-fp32-paper", "smollm2-fp32-direct", "gemma3-fp32-paper"]
SMALL = dict(names_per_group=2, k=1, rounds=60, seed=0, pairwise_systems=[], n_name_boot=3, n_system_boot=20,
             essay_rounds=20, n_perm=3, n_splits=3)
NOTEBOOK = ROOT / "notebooks" / "04_predictive_validity.ipynb"
PAIRWISE_ONLY = re.compile(r"^pw_(r|ci_low|ci_high)_|^pw_n_undefined_max$")  # glued only when a system enters


def synthetic_scores(seed: int = 0) -> pd.DataFrame:
    """Three systems' scores of one job's candidates; Black candidates score 0.05 lower, more so in the gemma3 one."""
    cands = data.candidate_table(["retail"], names_per_group=2, seed=0)
    rng = np.random.default_rng(seed)
    parts = []
    for i, system in enumerate(SYSTEMS):
        quality = cands["quality"].map({"high": 0.2, "medium": 0.1, "low": 0.0}).astype(float)
        penalty = np.where(cands["race"] == "Black", 0.05 * (1 + 2 * (i == 2)), 0.0)
        score = np.clip(0.4 + quality - penalty + rng.normal(0, 0.05, len(cands)), 0, 1)
        parts.append(cands.assign(system=system, score=score, label_mass=0.5))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def findings() -> pv.PredictiveValidityFindings:
    return pv.predictive_validity_findings(SYSTEMS, ["retail"], scores=synthetic_scores(),
                                           essay_scores=pd.DataFrame(), **SMALL)


def test_module_doctests():
    result = doctest.testmod(pv, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 15 and result.failed == 0


# ----------------------------------------------------------------------------------------------------------------
# phrases
# ----------------------------------------------------------------------------------------------------------------
def test_words_and_cells():
    assert pv.star(0.5, True) == "0.50*" and pv.star(-0.123, False) == "-0.12"
    assert [pv.correlated_with(m, "dDP") for m in ("rabbi", "avg_gap", "jsd", "emd")] == ["ΔDP", "ΔDP", "|ΔDP|", "|ΔDP|"]
    assert pv.overlap_word(0.1, 0.2, 0.2, 0.3) == "overlap"  # touching intervals overlap
    assert pv.overlap_word(0.25, 0.3, 0.0, 0.2) == "do not overlap"
    assert pv.inside_word(0.2, 0.2, 0.2) == "lies inside" and pv.inside_word(-0.1, 0.0, 1.0) == "lies outside"


def test_order_sentence_names_the_top_metrics():
    same = {"dDP": "rabbi", "dEO": "rabbi"}
    assert pv.order_sentence(same, same).startswith("As in the paper, RABBI")
    text = pv.order_sentence({"dDP": "jsd", "dEO": "emd"}, same)
    assert text.startswith("In the paper RABBI") and "JSD's (ΔDP)" in text and "EMD's (ΔEO)" in text


def test_separation_and_orders():
    assert pv.separation_verdict(0.49).startswith("no system") and pv.separation_verdict(0.5).startswith("at least one")
    assert pv.separation_verdict(1.0).endswith("perfectly") and "none perfectly" in pv.separation_verdict(0.99)
    assert pv.within_order_word(0.2, 0.1, 0.8, 0.3) == "the same as pooled"
    assert pv.within_order_word(0.1, 0.2, 0.8, 0.3) == "reversed"
    assert pv.model_part_word(-0.2, 0.5).startswith("little") and pv.model_part_word(0.25, 0.5).startswith("much")


def test_pairwise_words():
    assert pv.pairwise_entry({"regular": 0.0, "tie": 1.0, "inconsistent": 55.0}) == "yes"
    assert pv.pairwise_entry({"regular": 3.0, "tie": 0.0, "inconsistent": 55.1}) == "no: > 55 % inconsistent"
    assert pv.pairwise_entry({"regular": 0.0, "tie": 0.0, "inconsistent": 99.0}) == "no: names nobody"
    text = pv.pairwise_summary(["a", "b"], 56, {"rabbi": 0.123, "avg_gap": -0.5}, {"rabbi": 0.86, "avg_gap": 0.85})
    assert text.startswith("on a, b (56 points)") and "0.12" in text and "-0.50" in text and "0.85" in text
    assert pv.coverage_phrase(2, 3).startswith("2 of 3 systems") and pv.coverage_phrase(0, 3).startswith("none")


def test_show_hides_the_index_and_keeps_integers():
    styler = pv.show(pd.DataFrame({"n": [3, 4], "r": [0.12345, 0.5]}))
    html = styler.to_html()
    assert all(styler.hide_index_) and ">3<" in html and ">0.123<" in html and "0.12345" not in html


def test_bootstrap_correlations_holds_the_difference():
    pts = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "rabbi": [0, 1, 2, 3, 1, 2, 3, 5.0],
                        "avg_gap": [3, 1, 2, 0, 0, 1, 1, 2.0], "jsd": [0.1, 0.2, 0.1, 0.3, 0.2, 0.4, 0.2, 0.1],
                        "emd": [1, 2, 3, 1, 2, 1, 3, 2.0], "dDP": [0, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.5]})
    for m in ("rabbi", "avg_gap", "jsd", "emd"):
        pts[f"{m}_qualified"] = pts[m][::-1].to_numpy()
    pts["dEO"] = pts["dDP"] * 2
    out = pv.bootstrap_correlations(pts).set_index(["measure", "gap"])
    assert len(out) == 4 * 2 + 2
    assert out.loc[("rabbi", "dDP"), "r_pooled"] == pytest.approx(np.corrcoef(pts["rabbi"], pts["dDP"])[0, 1])
    assert out.loc[("rabbi", "dDP"), "r_pooled"] == pytest.approx(1.0)  # dDP = rabbi / 10
    diff = out.loc[("rabbi_minus_avg_gap", "dEO")]
    assert diff["r_pooled"] == pytest.approx(out.loc[("rabbi", "dEO"), "r_pooled"] - out.loc[("avg_gap", "dEO"), "r_pooled"])
    assert diff["r_cluster_median"] == pytest.approx(
        out.loc[("rabbi", "dEO"), "r_cluster_median"] - out.loc[("avg_gap", "dEO"), "r_cluster_median"])


# ----------------------------------------------------------------------------------------------------------------
# the findings on synthetic scores
# ----------------------------------------------------------------------------------------------------------------
def test_glue_values_cover_the_chapter_and_are_plain(findings):
    glued = findings.glue_values()
    assert_findings_glue(glued, NOTEBOOK.stem, unquoted=PAIRWISE_ONLY)


def test_findings_follow_the_data(findings):
    g, scores = findings.glue_values(), synthetic_scores()
    assert g["n_systems"] == 3 and g["n_jobs"] == 1 and g["n_points"] == 3 * 7 == len(findings.points)
    assert g["n_rows"] == len(scores) and g["n_candidates"] == len(scores) // 3 and g["n_resumes"] == 6
    assert g["qualified_share"] == pytest.approx(scores["qualified"].mean())
    assert g["n_models"] == 2 and g["n_sys_smollm2"] == 2 and g["n_sys_gemma3"] == 1
    r = np.corrcoef(findings.points["rabbi"], findings.points["dDP"])[0, 1]
    assert g["r_rabbi_dDP"] == pytest.approx(r)
    assert g["rabbi_vs_avg_dDP"] == validity.order_word(g["r_rabbi_dDP"], g["r_avg_gap_dDP"])
    assert g["diff_pooled"] == pytest.approx(g["r_rabbi_dDP"] - g["r_avg_gap_dDP"])
    assert g["n_loo_points"] == 2 * 7 and g["dec_n_clusters"] == 3
    assert g["pw_n_points"] == 0 and g["pw_kept"] == "none" and np.isnan(g["pw_r_code_avg_gap_dDP"])
    assert g["essay_n_systems_val"] == 0 and g["essay_systems_val"] == "none yet" and g["essay_best_dDP"] == "none"
    assert g["nb_n_intervals"] == 2 * (4 * 2 + 2)
    assert g["attenuation"] == pytest.approx(np.sqrt(1 - g["noise_share"]))


def test_verdict_sentences_come_from_the_verdict_table(findings):
    """The controls table's verdict column and every glued verdict are validity.verdict_words of the same rows."""
    g, view = findings.glue_values(), findings.controls_view
    for i, row in view.iterrows():
        metric = {v: k for k, v in pv.SHORT.items()}[row["metric"]]
        gap = "dEO" if "EO" in row["correlated with"] else "dDP"
        assert row["verdict"] == g[f"ctl_verdict_{metric}_{gap}"]
        keys = ("heldout_mean", "heldout_ci_lo", "heldout_ci_hi", "heldout_null_lo", "heldout_null_hi", "ceiling")
        words = validity.verdict_words({k: g[f"ctl_{k}_{metric}_{gap}"] for k in keys})
        assert row["verdict"] == words["verdict"]
        label = {"dDP": "ΔDP", "dEO": "ΔEO"}[gap]
        label = f"|{label}|" if metric in ("jsd", "emd") else label
        assert g[f"ctl_verdict_short_{metric}_{gap}"] == validity.verdict_words(
            {k: g[f"ctl_{k}_{metric}_{gap}"] for k in keys}, gap=label)["short"]
    assert list(view.columns[:3]) == ["metric", "correlated with", "verdict"]
    # issue 39: the evidence behind each verdict in one readable cell, inside the text column, with the gap's
    # reliability in the book's words
    assert list(view.columns[3:]) == ["in-sample r; null mean [95%]", "held-out r [95%]; null 97.5%; ceiling",
                                      "gap's split-half reliability"]
    from allocbias.plotting import evidence_text

    for i, row in view.iterrows():
        metric = {v: k for k, v in pv.SHORT.items()}[row["metric"]]
        gap = "dEO" if "EO" in row["correlated with"] else "dDP"
        v = {k: g[f"ctl_{k}_{metric}_{gap}"] for k in ("heldout_mean", "heldout_ci_lo", "heldout_ci_hi",
                                                       "heldout_null_hi", "ceiling", "reliability")}
        assert row.iloc[4] == evidence_text(v["heldout_mean"], v["heldout_ci_lo"], v["heldout_ci_hi"],
                                            null=v["heldout_null_hi"], ceiling=v["ceiling"])
        assert row.iloc[5].endswith(f"({validity.reliability_word(v['reliability'])})")


def test_shown_tables_are_reader_tables(findings):
    assert list(findings.table1["n"]) == [21] * 8 and findings.table1["n"].dtype.kind == "i"
    assert list(findings.systems_view["system"]) == SYSTEMS and list(findings.loo_view["system left out"]) == SYSTEMS
    assert findings.paper_view["paper r"].str.match(r"^-?\d\.\d\d\*?$").all()
    assert findings.text_code_view["text and code"].value_counts().to_dict() == {"agree": 8, "differ": 4}
    assert len(findings.bootstrap_view) == 10 and findings.bootstrap_view["correlation"].iloc[0] == "RABBI vs ΔDP"
    for name in ("table1", "paper_view", "controls_view", "design_view", "systems_view", "decomposition_view",
                 "loo_view", "bootstrap_view", "pairwise_view", "text_code_view", "essay_view"):
        frame = getattr(findings, name)
        assert isinstance(frame.index, pd.RangeIndex), name  # the index is hidden: nothing is kept in it
        assert all(pv.show(frame).hide_index_)
    # the exercises' answers are computed by their solutions (validity.validity_table with method="spearman", by
    # model, with more rounds), not handed over by the findings
    assert not {"spearman_view", "per_model_view", "rounds_view"} & set(dir(findings))


def test_figures_have_titled_axes(findings):
    for fig in (pv.figure_scatter(findings, "dDP"), pv.figure_scatter(findings, "dEO"), pv.figure_per_system(findings)):
        assert isinstance(fig, Figure)
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert axes and all(ax.get_title() and ax.get_xlabel() for ax in axes)
        plt.close(fig)
    assert pv.figure_pairwise(findings) is None  # no system enters the pairwise test here
    with pytest.raises(ValueError, match="gap"):
        pv.figure_scatter(findings, "dXX")


@pytest.mark.parametrize("change, name", [
    ({"n_perm": 0}, "n_perm"), ({"n_splits": 0}, "n_splits"), ({"k": 8}, "k"), ({"k": 0}, "k"),
    ({"essay_k": 10}, "essay_k"), ({"rounds": 0}, "rounds"), ({"names_per_group": 0}, "names_per_group"),
    ({"n_name_boot": 0}, "n_name_boot"), ({"n_system_boot": 0}, "n_system_boot"), ({"seed": -1}, "seed"),
    ({"pairwise_systems": ["x"], "pairwise_rounds": 0}, "pairwise_rounds"), ({"systems": ["a", "a"]}, "systems"),
])
def test_bad_parameters_name_the_parameter(change, name):
    kwargs = {**SMALL, "systems": SYSTEMS, "jobs": ["retail"], "scores": synthetic_scores(),
              "essay_scores": pd.DataFrame(), **change}
    with pytest.raises(ValueError, match=name):
        pv.predictive_validity_findings(**kwargs)
