"""allocbias.study.real_scores: the real-scores chapter's findings on small synthetic data sets.

Each helper is checked against a brute-force count or a hand-computed case; the findings function is run end to
end on synthetic frames shaped like the three public data sets, with a planted group effect whose direction the
findings must recover."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pandas as pd
import pytest

from allocbias import selection
from allocbias.study import RealScoreFindings, real_scores, real_scores_findings

REQUIRED_KEYS = [
    "lippens_n_scores", "lippens_n_pools", "lippens_min_ir_k1", "lippens_min_ir_k1_group", "lippens_r_rabbi_k1",
    "lippens_r_delta_k1", "lippens_null_r_rabbi_k1", "lippens_heldout_r_rabbi_k1", "lippens_gap_reliability_k1",
    "recinq_n_models", "recinq_n_results",
]
REFERENCES = {"lippens": "Belgian Male", "recinq": "James Smith", "recinq_placebo": "placebo_noop",
              "prompt_lab": "baseline", "jderbysh": "White Male"}


def test_module_doctests():
    result = doctest.testmod(real_scores, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 8 and result.failed == 0


# ----------------------------------------------------------------------------------------------------------------
# synthetic data sets
# ----------------------------------------------------------------------------------------------------------------
def lippens_like(seed: int = 0, n_types: int = 6, per_type: int = 8) -> pd.DataFrame:
    """Job types x vacancies x 6 origin-sex groups; 'Turkish Female' scores 10 points lower, scores in steps of 10."""
    rng = np.random.default_rng(seed)
    groups = [(o, s) for o in ("Belgian", "Turkish", "Polish") for s in ("Male", "Female")]
    rows = []
    for t in range(n_types):
        for v in range(per_type):
            base = rng.normal(60, 10)
            for o, s in groups:
                penalty = 10 if (o, s) == ("Turkish", "Female") else 0
                score = base + rng.normal(0, 12) - penalty + 2 * t * (o == "Polish")
                rows.append({"vacancy_id": f"v{t}-{v}", "job_type": f"type {t}", "occupation": f"occ {t}",
                             "experience": 0, "origin": o, "sex": s, "group": f"{o} {s}",
                             "score": float(np.clip(np.round(score, -1), 10, 100)), "valid": True,
                             "bare_output": True, "recoded": False})
    out = pd.DataFrame(rows)
    out.loc[3, ["score", "valid", "bare_output"]] = [np.nan, False, False]  # one refusal, flagged, never used
    out.loc[5, "bare_output"] = False  # a score read from a longer answer
    out.loc[7, ["bare_output", "recoded"]] = [False, True]  # a bare number outside the scale, recoded
    return out


def recinq_like(seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    names = ["James Smith", "Sarah Smith", "Wei Chen", "Aisha Okonkwo"]
    placebos = ["placebo_noop", "placebo_car", "placebo_day"]
    rows = []
    for m, j, run in itertools.product(range(4), range(3), range(1, 6)):
        for variant in names + placebos:
            shift = -1.5 if variant == "Aisha Okonkwo" and m < 2 else 0.0
            rows.append({"model": f"model-{m}", "job": f"jd{j}", "variant": variant,
                         "axis": "placebo" if variant.startswith("placebo") else "firstName", "run": run,
                         "group": variant, "placebo": variant.startswith("placebo"),
                         "score": float(np.clip(np.round(6 + m * 0.3 + rng.normal(0, 1.2) + shift), 1, 10)),
                         "interview": "maybe", "valid": True, "strategy": "baseline"})
    results = pd.DataFrame(rows)
    results.loc[0, ["score", "valid"]] = [np.nan, False]
    rows = []
    for st, m, run in itertools.product(range(4), range(3), range(1, 7)):
        for variant in ["baseline", "addressCountry_nigeria", "firstName_aisha", "school_mit"]:
            shift = -st * 0.5 if variant == "addressCountry_nigeria" else 0.0
            rows.append({"strategy": f"strategy-{st}", "model": f"model-{m}", "job": "jd0", "variant": variant,
                         "axis": variant.split("_")[0], "run": run, "group": variant, "placebo": False,
                         "score": float(np.clip(np.round(6 + rng.normal(0, 1) + shift), 1, 10)), "interview": "yes",
                         "valid": True})
    return results, pd.DataFrame(rows)


def jderbysh_like(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m, j, r, run in itertools.product(range(2), range(3), range(4), range(2)):
        qualified = r < 2
        for race, sex, n in itertools.product(("White", "Black"), ("Male", "Female"), range(3)):
            score = 55 + 20 * qualified + rng.normal(0, 8) - (6 if race == "Black" else 0)
            rows.append({"model": f"gpt-{m}", "job": f"job{j}", "resume": f"resume{r}", "pair": f"{j}-{r}",
                         "name": f"{race}{sex}{n}", "race": race, "sex": sex, "group": f"{race} {sex}",
                         "qualified": qualified, "score": float(np.round(score)), "subscores": "", "valid": True})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def frames():
    results, lab = recinq_like()
    return {"lippens": lippens_like(), "recinq": results, "prompt_lab": lab, "jderbysh": jderbysh_like()}


# ----------------------------------------------------------------------------------------------------------------
# helpers against brute force
# ----------------------------------------------------------------------------------------------------------------
def test_reference_tie_share_counts_every_pair():
    c = lippens_like(seed=3, n_types=2, per_type=3)
    c = c[c["valid"]]
    got = real_scores.reference_tie_share(c, reference="Belgian Male", by="vacancy_id").set_index("group")
    for g in sorted(set(c["group"]) - {"Belgian Male"}):
        pairs = tied = 0
        for _, pool in c.groupby("vacancy_id"):
            a = pool.loc[pool["group"] == g, "score"].tolist()
            b = pool.loc[pool["group"] == "Belgian Male", "score"].tolist()
            pairs += len(a) * len(b)
            tied += sum(x == y for x in a for y in b)
        assert got.loc[g, "pairs"] == pairs and got.loc[g, "tied"] == tied
    with pytest.raises(ValueError, match="reference group 'Nobody'"):
        real_scores.reference_tie_share(c, reference="Nobody", by="vacancy_id")


def test_boundary_tie_share_matches_sorted_pools():
    c = lippens_like(seed=4, n_types=2, per_type=5)
    c = c[c["valid"]]
    got = real_scores.boundary_tie_share(c, pool="vacancy_id", k=[1, 2, 3]).set_index("k")
    for k in (1, 2, 3):
        tied = sum(s[k - 1] == s[k] for s in (sorted(p["score"], reverse=True) for _, p in c.groupby("vacancy_id")))
        assert got.loc[k, "tied_pools"] == tied and got.loc[k, "pools"] == c["vacancy_id"].nunique()


def test_pooled_selection_rates_are_the_exact_rates_with_intervals():
    c = lippens_like(seed=5)
    c = c[c["valid"]]
    rates = real_scores.pooled_selection_rates(c, reference="Belgian Male", k=[1, 2], pool="vacancy_id",
                                               strata="job_type", n_boot=100, seed=0)
    exact = selection.exact_pool_rates(c, k=[1, 2], pool="vacancy_id", group="group", score="score")
    merged = rates.merge(exact, on=["group", "k"], suffixes=("", "_exact"))
    assert len(merged) == len(rates) == 12
    np.testing.assert_allclose(merged["rate"], merged["rate_exact"])
    seats = (rates["rate"] * rates["n"]).groupby(rates["k"]).sum()  # every pool fills exactly k seats
    np.testing.assert_allclose(seats.to_numpy(), [48, 96])
    ref = rates[rates["group"] == "Belgian Male"]
    np.testing.assert_allclose(ref["impact_ratio"], 1.0)
    assert (rates["rate_low"] <= rates["rate"] + 1e-12).all() and (rates["rate"] <= rates["rate_high"] + 1e-12).all()
    again = real_scores.pooled_selection_rates(c, reference="Belgian Male", k=[1, 2], pool="vacancy_id",
                                               strata="job_type", n_boot=100, seed=0)
    pd.testing.assert_frame_equal(rates, again)
    low = rates[rates["k"] == 1].set_index("group")["impact_ratio"]
    assert low.idxmin() == "Turkish Female"  # the planted penalty
    with pytest.raises(ValueError, match="non-finite"):
        real_scores.pooled_selection_rates(lippens_like(), reference="Belgian Male", pool="vacancy_id")
    with pytest.raises(ValueError, match="reference group"):
        real_scores.pooled_selection_rates(c, reference="Dutch Male", pool="vacancy_id")
    with pytest.raises(ValueError, match="n_boot"):
        real_scores.pooled_selection_rates(c, reference="Belgian Male", pool="vacancy_id", n_boot=0)


def test_pooled_rates_equal_random_tie_breaking_by_simulation():
    """Under uniform random tie-breaking, the long-run selection share is the exact rate (Monte Carlo check)."""
    c = lippens_like(seed=6, n_types=1, per_type=4)
    c = c[c["valid"]].reset_index(drop=True)
    rates = real_scores.pooled_selection_rates(c, reference="Belgian Male", k=1, pool="vacancy_id", n_boot=10)
    rng = np.random.default_rng(0)
    hits = pd.Series(0.0, index=sorted(c["group"].unique()))
    n_rounds = 4000
    for _, pool in c.groupby("vacancy_id"):
        s = pool["score"].to_numpy()
        noise = rng.random((n_rounds, s.size))
        winner = np.lexsort((noise.T, -np.broadcast_to(s, (n_rounds, s.size)).T), axis=0)[0]
        hits += pd.Series(pool["group"].to_numpy()[winner]).value_counts().reindex(hits.index, fill_value=0)
    sim = hits / (n_rounds * c["vacancy_id"].nunique())
    np.testing.assert_allclose(rates.set_index("group")["rate"].reindex(sim.index), sim, atol=0.02)


# ----------------------------------------------------------------------------------------------------------------
# phrases
# ----------------------------------------------------------------------------------------------------------------
HELD = {"gap": "dDP", "metric": "rabbi", "heldout_null_lo": -0.2, "heldout_null_hi": 0.2, "ceiling": 0.6}


@pytest.mark.parametrize(("row", "expected"), [
    # held-out interval above the null's 97.5th percentile: tracks, whatever the in-sample r does
    ({"r": 0.1, "null_hi": 0.7, "heldout_mean": 0.4, "heldout_ci_lo": 0.25, "heldout_ci_hi": 0.55},
     "tracks ΔDP out of sample"),
    # beats its in-sample null, held-out r near 0 (Lippens at k = 1: 0.03): not shown, never "held out"
    ({"r": 0.9, "null_hi": 0.7, "heldout_mean": 0.03, "heldout_ci_lo": -0.15, "heldout_ci_hi": 0.2},
     "is not shown to track ΔDP at this size: the 95% interval"),
    # the gap too noisy for any metric: said as such
    ({"r": 0.9, "null_hi": 0.7, "heldout_mean": 0.03, "heldout_ci_lo": -0.15, "heldout_ci_hi": 0.2,
      "ceiling": 0.15}, "is not shown to track ΔDP at this size: ΔDP itself is too noisy"),
])
def test_control_verdict(row, expected):
    row = {"null_lo": -1.0, **HELD, **row}
    assert real_scores.control_verdict(row).startswith(expected)
    assert "positive held out" not in real_scores.control_verdict(row)


def test_control_verdict_needs_the_heldout_interval():
    with pytest.raises(ValueError, match="sampling interval"):
        real_scores.control_verdict({"r": 0.6, "r_lo": 0.5, "null_lo": 0.0, "null_hi": 0.2, "heldout_lo": 0.0})


def test_verdict_counts_follow_verdict_words():
    from allocbias.validity import verdict_words

    rows = pd.DataFrame([{**HELD, "r": r, "null_hi": 0.5, "heldout_mean": m, "heldout_ci_lo": lo,
                          "heldout_ci_hi": m + 0.2, "ceiling": c}
                         for r, m, lo, c in [(0.9, 0.4, 0.3, 0.6), (0.9, 0.05, -0.1, 0.6), (0.2, 0.05, -0.1, 0.1),
                                             (0.2, 0.5, 0.35, 0.1)]])
    counts = real_scores.verdict_counts(rows)
    assert counts == {"rows": 4, "tracks": 2, "not_shown": 2, "too_noisy": 1, "above_null": 2}
    assert counts["tracks"] == sum(verdict_words(r)["tracks"] for _, r in rows.iterrows())
    text = real_scores.verdict_count_phrase(counts)
    assert text.startswith("of the 4 correlations, 2 track the gap out of sample and 2 are not shown at this size, "
                           "1 of them because the gap is too noisy")


def test_lead_phrase_says_who_leads_and_whether_it_holds_out():
    t = pd.DataFrame({**HELD, "metric": ["rabbi", "avg_gap"], "r": [0.50, 0.58], "heldout_mean": [0.40, 0.10],
                      "heldout_ci_lo": [0.30, -0.05], "heldout_ci_hi": [0.5, 0.25]})
    assert real_scores.lead_phrase(t) == ("δ leads RABBI in-sample by 0.08 in r, and held out RABBI stays ahead "
                                          "(r = 0.40 against 0.10, 95% intervals apart)")
    close = t.assign(heldout_ci_lo=[0.25, 0.22], heldout_mean=[0.4, 0.35])
    assert real_scores.lead_phrase(close).endswith("cannot be told apart (r = 0.40 and 0.35, overlapping 95% intervals)")
    neither = t.assign(heldout_ci_lo=[0.1, -0.05])
    assert "neither is shown to track ΔDP at this size" in real_scores.lead_phrase(neither)
    same = t.assign(r=0.5)
    assert real_scores.lead_phrase(same).startswith("RABBI and δ have the same in-sample r (0.50)")
    with pytest.raises(ValueError, match="metric 'jsd'"):
        real_scores.lead_phrase(t, second="jsd")


def test_floor_phrase_gives_the_verdict_not_the_in_sample_comparison():
    names = {**HELD, "r": 0.86, "null_lo": 0.8, "null_hi": 0.9, "heldout_mean": 0.6, "heldout_ci_lo": 0.4,
             "heldout_ci_hi": 0.75}
    text = real_scores.floor_phrase(names, {"r": 0.3, "r_lo": 0.1, "r_hi": 0.5})
    assert "stronger than that floor in-sample and within its own permutation null; held out it tracks ΔDP" in text
    assert "above the floor" not in text


def test_ndcg_phrase_reads_the_null_and_the_held_out_test():
    row = {"n": 2, "ndcg": 0.9, "random_ndcg": 0.5, "random_hi": 0.7, "null_mean": 0.8, "null_hi": 0.95,
           "heldout_mean": 0.75}
    text = real_scores.ndcg_phrase(row)
    assert text.startswith("ranks the models with NDCG@2 = 0.90 in-sample, within its permutation null (0.80 on")
    assert "0.75 held out, better than a random ordering (0.50 on average, 0.70 at its 97.5th percentile)" in text
    assert "no better than a random ordering" in real_scores.ndcg_phrase(dict(row, heldout_mean=0.7))
    assert "above its permutation null" in real_scores.ndcg_phrase(dict(row, ndcg=0.96))
    with pytest.raises(ValueError, match="'heldout_mean'"):
        real_scores.ndcg_phrase(dict(row, heldout_mean=float("nan")))


# ----------------------------------------------------------------------------------------------------------------
# the findings, end to end
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def findings(frames):
    return real_scores_findings(frames=frames, references=REFERENCES, n_perm=20, n_splits=5, n_boot=30, seed=0)


def test_findings_hold_every_glue_key_with_the_right_values(findings, frames):
    assert isinstance(findings, RealScoreFindings)
    values = findings.glue_values()
    assert set(REQUIRED_KEYS) <= set(values)
    assert values["lippens_n_scores"] == len(frames["lippens"]) == 6 * 8 * 6
    assert values["lippens_n_pools"] == 48
    assert values["lippens_min_ir_k1_group"] == "Turkish Female"
    assert 0 <= values["lippens_min_ir_k1"] < 1
    assert values["recinq_n_models"] == 4 and values["recinq_n_results"] == len(frames["recinq"])
    for key in REQUIRED_KEYS:
        assert isinstance(values[key], str if key == "lippens_min_ir_k1_group" else (int, float)), key
    lip = findings.validity[findings.validity["data set"] == real_scores.DATASET_LABELS["lippens"]]
    row = lip[(lip["metric"] == "rabbi") & (lip["k"] == 1)].iloc[0]
    assert values["lippens_r_rabbi_k1"] == row["r"] and values["lippens_null_r_rabbi_k1"] == row["null_mean"]
    assert values["lippens_heldout_r_rabbi_k1"] == row["heldout_mean"]
    assert values["lippens_gap_reliability_k1"] == row["reliability"]


def test_verdict_sentences_come_from_the_verdict_table(findings):
    """Each glued verdict sentence is the verdict function applied to the rows of findings.validity."""
    t, values = findings.validity, findings.glue_values()
    lip = t[(t["data set"] == real_scores.DATASET_LABELS["lippens"]) & (t["gap"] == "dDP")]
    row = lip[(lip["metric"] == "rabbi") & (lip["k"] == 1)].iloc[0]
    assert values["lippens_rabbi_verdict_k1"] == real_scores.control_verdict(row)
    main = t[(t["gap"] == "dDP") & (t["data set"] != real_scores.DATASET_LABELS["recinq_placebo"])]
    assert values["survival_k1"] == real_scores.verdict_count_phrase(
        real_scores.verdict_counts(main[main["k"] == 1]), what="correlations at k = 1")
    assert values["choice_k1"] == real_scores.choice_phrase(main[main["k"] == 1])
    assert values["lippens_lead_k1"] == real_scores.lead_phrase(lip[lip["k"] == 1])
    assert values["lippens_heldout_ci_lo_rabbi_k1"] == row["heldout_ci_lo"]
    assert values["lippens_heldout_null_hi_rabbi_k1"] == row["heldout_null_hi"]
    assert "pass all three" not in values["survival_all"]
    assert values["closest_verdict_all"] == real_scores.closest_verdict_phrase(main)
    assert values["closest_testable_all"] == real_scores.closest_testable_phrase(main)


def test_findings_tables_cover_every_data_set_metric_and_k(findings):
    t = findings.validity
    sizes = t.groupby("data set")["k"].max().to_dict()
    assert sizes[real_scores.DATASET_LABELS["lippens"]] == 3  # half of a pool of 6
    assert sizes[real_scores.DATASET_LABELS["recinq"]] == 2
    assert set(t["metric"]) == set(real_scores.METRICS)
    assert set(t.loc[t["data set"] == real_scores.DATASET_LABELS["jderbysh"], "gap"]) == {"dDP", "dEO"}
    from allocbias.validity import VERDICTS, verdict_words

    assert set(t["verdict"]) <= set(VERDICTS)
    assert t["verdict"].tolist() == [verdict_words(row)["verdict"] for _, row in t.iterrows()]
    assert ((t["heldout_ci_lo"] <= t["heldout_mean"] + 1e-12) | t["heldout_ci_lo"].isna()).all()
    assert set(findings.ndcg["ranking"]) == {"re-cinq: 4 models", "re-cinq placebo edits: 4 models",
                                             "re-cinq prompt lab: 4 strategies"}
    assert findings.counts["flagged"].sum() >= 2  # the planted refusals are counted, not dropped silently
    counts = findings.counts.set_index("data set")
    lip, names = counts.loc[real_scores.DATASET_LABELS["lippens"]], counts.loc[real_scores.DATASET_LABELS["recinq"]]
    assert (lip["models"], lip["systems"], lip["pools"], lip["groups"]) == (1, 6, 48, 6)
    assert (names["models"], names["systems"], names["pools"], names["groups"]) == (4, 12, 60, 4)
    assert names["flagged"] == 1 and lip["flagged"] == 1
    assert {"skewness", "excess_kurtosis"} <= set(findings.shapes.columns)


def test_findings_are_deterministic_and_k_max_caps_the_sweep(frames, findings):
    again = real_scores_findings(frames=frames, references=REFERENCES, n_perm=20, n_splits=5, n_boot=30, seed=0)
    pd.testing.assert_frame_equal(findings.validity, again.validity)
    assert findings.glue_values() == again.glue_values()
    capped = real_scores_findings(frames=frames, references=REFERENCES, n_perm=5, n_splits=2, n_boot=5, k_max=1)
    assert set(capped.validity["k"]) == {1}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_perm": 1}, "n_perm"),
    ({"n_splits": 0}, "n_splits"),
    ({"k_max": 0}, "k_max"),
    ({"metric_names": ["rabbi", "kl"]}, "metric_names"),
])
def test_findings_reject_bad_parameters(frames, kwargs, message):
    with pytest.raises(ValueError, match=message):
        real_scores_findings(frames=frames, references=REFERENCES, **kwargs)


def test_findings_name_a_missing_data_set_or_column(frames):
    with pytest.raises(ValueError, match="jderbysh"):
        real_scores_findings(frames={k: v for k, v in frames.items() if k != "jderbysh"}, references=REFERENCES)
    broken = dict(frames, lippens=frames["lippens"].drop(columns="vacancy_id"))
    with pytest.raises(ValueError, match="Lippens table has no column"):
        real_scores_findings(frames=broken, references=REFERENCES, n_perm=2, n_splits=1, n_boot=2)


# ----------------------------------------------------------------------------------------------------------------
# figures
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture
def book_style():
    """The book's style (seaborn's notebook context: the font sizes the chapter is drawn with), undone after."""
    import matplotlib

    from allocbias.plotting import use_book_style

    with matplotlib.rc_context():
        use_book_style()
        yield


def text_overlaps(fig) -> list[str]:
    """Texts of a drawn figure that run into a title or out of their place: every axes' title against every axis
    label, tick label and other title of the figure, the figure's title (suptitle) against all of them, a y label
    taller than its axes (its ends reach into the title's band), an x label wider than its axes and a title wider
    than the figure.
    Also used by the audit report's tests (tests/test_audit_figures.py)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    titles, labels, found = [], [], []
    for n, ax in enumerate(fig.axes):
        box = ax.get_window_extent(renderer)
        for t in (ax.title, ax._left_title, ax._right_title):
            if t.get_visible() and t.get_text():
                titles.append((f"axes {n} title {t.get_text()!r}", t.get_window_extent(renderer)))
        for t in [ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels()]:
            if t.get_visible() and t.get_text():
                labels.append((f"axes {n} label {t.get_text()!r}", t.get_window_extent(renderer)))
        ylabel = ax.yaxis.label
        if ylabel.get_visible() and ylabel.get_text():
            extent = ylabel.get_window_extent(renderer)
            if extent.height > box.height + 1:
                found.append(f"axes {n} y label {ylabel.get_text()!r} is taller than its axes")
        xlabel = ax.xaxis.label
        if xlabel.get_visible() and xlabel.get_text() and xlabel.get_window_extent(renderer).width > box.width + 1:
            found.append(f"axes {n} x label {xlabel.get_text()!r} is wider than its axes")
        if ax.title.get_text() and ax.title.get_window_extent(renderer).width > width:
            found.append(f"axes {n} title {ax.title.get_text()!r} is wider than the figure")
    if fig._suptitle is not None and fig._suptitle.get_text():
        titles.append(("suptitle", fig._suptitle.get_window_extent(renderer)))
    for i, (name, box) in enumerate(titles):
        for other, obox in [*titles[i + 1:], *labels]:
            if box.overlaps(obox):
                found.append(f"{name} runs into {other}")
    return found


def test_text_overlaps_finds_a_label_running_into_a_title():
    import matplotlib.pyplot as plt

    with plt.rc_context({"figure.autolayout": False}):  # the book style lays figures out; this one must not be
        fig, axes = plt.subplots(2, 1, figsize=(4, 3))
    axes[0].set_xlabel("a long x label\nover two lines")
    axes[1].set_title("a title\nover two lines")
    try:
        assert text_overlaps(fig)  # no layout: the lower title sits on the upper x label
        fig.tight_layout()
        assert text_overlaps(fig) == []
        axes[0].set_ylabel("a y label far longer than its short axes")
        assert any("taller than its axes" in o for o in text_overlaps(fig))
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", ["figure_controls", "figure_lippens_points", "figure_lippens_rates", "figure_ndcg",
                                  "figure_shapes"])
def test_figures_have_titled_labelled_axes_and_no_text_running_into_a_title(findings, name, book_style):
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    fig = getattr(real_scores, name)(findings)
    try:
        assert isinstance(fig, Figure)
        assert fig.axes and all(ax.get_title() for ax in fig.axes)
        assert any(ax.get_xlabel() for ax in fig.axes) and any(ax.get_ylabel() for ax in fig.axes)
        assert text_overlaps(fig) == []
        for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
            assert all(t.get_fontsize() >= 9 for t in legend.get_texts())  # readable at 1280 px
        assert fig.get_figwidth() * fig.dpi <= 1280
    finally:
        plt.close(fig)


def test_figure_contents_follow_the_findings(findings):
    import matplotlib.pyplot as plt

    figs = []
    try:
        fig = real_scores.figure_controls(findings)
        figs.append(fig)
        n_sets = findings.validity.loc[findings.validity["gap"] == "dDP", "data set"].nunique()
        assert len(fig.axes) == 3 * n_sets
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[-2:] == ["ceiling: √(gap's split-half reliability)", "held-out null, 97.5% (dotted)"]
        assert len(legend) == len(real_scores.METRICS) + 2
        # issue 39: the held-out panels draw each metric's null beside the ceiling (jderbysh's JSD and EMD held out
        # at 0.25 under a ceiling of 0.00 did not beat a null of 0.40)
        dotted = [line for ax in fig.axes for line in ax.get_lines() if line.get_linestyle() == ":"]
        ddp_all = findings.validity[findings.validity["gap"] == "dDP"]
        assert len(dotted) == ddp_all.groupby(["data set", "metric"]).ngroups
        assert np.allclose(np.sort(np.concatenate([line.get_ydata() for line in dotted])),
                           np.sort(ddp_all["heldout_null_hi"].to_numpy()))
        # the dashed black line is the ceiling, the square root of the reliability, not the reliability
        dashed = [line for ax in fig.axes for line in ax.get_lines()
                  if line.get_linestyle() == "--" and line.get_color() == "black"]
        ddp = findings.validity[(findings.validity["gap"] == "dDP") & (findings.validity["metric"] == "rabbi")]
        assert len(dashed) == n_sets
        drawn = np.sort(np.concatenate([line.get_ydata() for line in dashed]))
        assert np.allclose(drawn, np.sort(ddp["ceiling"].to_numpy()))
        assert not np.allclose(drawn, np.sort(ddp["reliability"].to_numpy()))
        fig = real_scores.figure_lippens_rates(findings)
        figs.append(fig)
        groups = findings.lippens_rates["group"].nunique()
        assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == findings.lippens_rates.query(
            "k == 1").sort_values("rate")["group"].iloc[0]
        assert len(fig.axes[0].get_yticks()) == groups
        # one four-fifths line per k, at 0.8 times the reference group's rate
        rates = findings.lippens_rates
        fifths = sorted(line.get_xdata()[0] for line in fig.axes[0].get_lines() if len(set(line.get_xdata())) == 1)
        expected = sorted(0.8 * rates.loc[(rates["k"] == k) & (rates["impact_ratio"] == 1.0), "rate"].iloc[0]
                          for k in sorted(rates["k"].unique()))
        assert np.allclose(fifths, expected)
        fig = real_scores.figure_ndcg(findings)
        figs.append(fig)
        assert [ax.get_title() for ax in fig.axes] == list(dict.fromkeys(findings.ndcg["ranking"]))
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "metric" not in legend and "control" not in legend and "in-sample" in legend
        fig = real_scores.figure_lippens_points(findings)
        figs.append(fig)
        n_points = len(findings.points.query("`data set` == @real_scores.DATASET_LABELS['lippens'] and k == 1"))
        assert all(len(ax.collections[0].get_offsets()) == n_points for ax in fig.axes)
    finally:
        for fig in figs:
            plt.close(fig)


def test_figures_name_what_they_lack(findings):
    import dataclasses

    with pytest.raises(ValueError, match="findings.validity"):
        real_scores.figure_controls(dataclasses.replace(findings, validity=findings.validity.drop(columns="k")))
    with pytest.raises(ValueError, match="no Lippens point"):
        others = findings.points[findings.points["data set"] != real_scores.DATASET_LABELS["lippens"]]
        real_scores.figure_lippens_points(dataclasses.replace(findings, points=others))
