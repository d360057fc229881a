"""allocbias.study.audit_size: the audit-size chapter's findings on small synthetic data sets.

The phrase helpers are checked on hand-made rows; the findings function runs end to end on synthetic frames shaped
like the four public data sets, once with true group effects that differ between job types (the gaps must come out
reliable and the sizes needed small) and once without any (the gaps must not)."""

from __future__ import annotations

import doctest
import itertools

import numpy as np
import pandas as pd
import pytest

from allocbias.measures import reliability, selection
from allocbias.study import AuditSizeFindings, audit_size, audit_size_findings

REFERENCES = {"lippens": "Belgian Male", "recinq": "firstName_james-smith", "jderbysh": "White Male",
              "bloomberg": "Male White"}
REQUIRED = ("lippens_vacancies_for_reliability_08_k1", "lippens_pooled_gap_reliability_k1",
            "lippens_pooled_heldout_r_rabbi_k1", "lippens_pooled_heldout_r_gap_k1")


def test_module_doctests():
    result = doctest.testmod(audit_size, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


# ----------------------------------------------------------------------------------------------------------------
# words
# ----------------------------------------------------------------------------------------------------------------
def test_reliability_word_bands():
    assert [audit_size.reliability_word(r) for r in (0.8, 0.79, 0.5, 0.49, 0.0)] == [
        "reliable", "moderately reliable", "moderately reliable", "unreliable", "unreliable"]
    with pytest.raises(ValueError, match="finite"):
        audit_size.reliability_word(float("nan"))


def test_size_phrase_quotes_the_size_formula():
    need = reliability.size_for_reliability(0.2, 15, 0.8)  # 15 * 0.8 * 0.8 / (0.2 * 0.2) = 240
    assert need == pytest.approx(240)
    assert audit_size.size_phrase(0.2, 15, 0.8, unit="vacancies", audited=30) == (
        "about 240 vacancies, 8 times the 30 audited")
    assert audit_size.size_phrase(0.2, 15, 0.8, unit="vacancies") == "about 240 vacancies"
    assert audit_size.size_phrase(0.6, 15, 0.8, unit="runs", audited=40) == "about 40 runs, about the 40 audited"
    assert audit_size.size_phrase(0.0, 15, 0.8, unit="runs").startswith("no number of runs")


def test_curve_phrase_reads_where_the_prediction_falls():
    curve = pd.DataFrame({"size": [1, 8], "reliability": [0.1, 0.3], "lo": [0.0, 0.2], "hi": [0.2, 0.4],
                          "predicted": [0.1, 0.47]})
    assert " lies above the range measured at 8 (0.20 to 0.40)" in audit_size.curve_phrase(curve, unit="runs")
    assert " lies below " in audit_size.curve_phrase(curve.assign(predicted=[0.1, 0.1]), unit="runs")
    assert audit_size.curve_phrase(curve.assign(predicted=np.nan), unit="runs").startswith("no Spearman–Brown")


def test_forecast_phrase_and_comparison_phrase():
    t = pd.DataFrame({"statistic": ["gap", "rabbi"], "heldout_r": [0.2, 0.1], "ci_lo": [0.1, 0.0],
                      "ci_hi": [0.3, 0.2], "null_mean": [0.0, 0.0], "null_lo": [-0.15, -0.15], "null_hi": [0.15, 0.15],
                      "ceiling": [0.45, 0.45], "vs_gap": [0.0, -0.1], "vs_gap_lo": [np.nan, -0.2],
                      "vs_gap_hi": [np.nan, -0.01]})
    text = audit_size.forecast_phrase(t)
    assert "reaching into its permutation null: not shown at this size" in text and text.endswith("worse than the gap itself (difference −0.10, "
                                                                   "−0.20 to −0.01)")
    with pytest.raises(ValueError, match="exactly one row of statistic 'emd'"):
        audit_size.forecast_phrase(t, statistic="emd")
    # issue 39: a held-out r above the null's 97.5th percentile whose interval reaches 0.00 is not "above its
    # permutation null" (re-cinq's RABBI): the verdict rule reads the interval, not the estimate
    above = audit_size.forecast_phrase(t.assign(heldout_r=[0.2, 0.25], ci_lo=[0.1, 0.0], ci_hi=[0.3, 0.5]))
    assert "not shown at this size" in above and "interval above" not in above
    shown = audit_size.forecast_phrase(t.assign(heldout_r=[0.2, 0.35], ci_lo=[0.1, 0.2], ci_hi=[0.3, 0.5]))
    assert "its interval above its permutation null" in shown
    assert audit_size.comparison_phrase(0, 2, 4).startswith("in 0 of the 4 comparisons")
    with pytest.raises(ValueError):
        audit_size.comparison_phrase(3, 2, 4)


def test_audit_designs_are_the_units_spearman_brown_needs():
    from allocbias.measures import planning

    m = pd.DataFrame({"key": ["recinq", "lippens-job-type", "jderbysh"], "size per half": [2, 15, 4],
                      "reliability": [0.12, 0.043, -0.1]})
    d = audit_size.audit_designs(m, targets=[0.8])
    units = planning.units_needed(0.12, 2, 0.8)
    assert units == int(np.ceil(reliability.size_for_reliability(0.12, 2, 0.8)))
    assert d.iloc[0].tolist() == ["re-cinq: a run", "0.8, reliable", f"{units:,}", f"{units:,}",
                                  f"{-(-units // 4):,}", f"--names-per-group {-(-units // 4)}"]
    lip = d.iloc[1]
    assert lip["option, gap over 4 jobs"] == "beyond its 100 names per group" and "(over 100)" in lip["names, 4 jobs"]
    assert d.iloc[2]["units"] == "–" and "not positive" in d.iloc[2]["option, gap over 4 jobs"]
    assert len(d.columns) <= 6


def test_reliability_guidance_names_every_measured_unit():
    m = pd.DataFrame({"key": list(audit_size.MEASURED_UNITS), "size per half": 4, "reliability": 0.3,
                      "reliability of one unit": float(reliability.spearman_brown(0.3, 0.25))})
    g = audit_size.reliability_guidance(m)
    assert len(g) == len(audit_size.MEASURED_UNITS) and len(g.columns) <= 6
    assert g["units for 0.8"].eq(f"{int(np.ceil(reliability.size_for_reliability(0.3, 4, 0.8))):,}").all()


def test_audit_phrase_and_shipped_phrase():
    assert audit_size.audit_phrase(59).startswith("59 units: 15 names per group over the 4 jobs")
    assert "more than the 100 names per group × 4 jobs" in audit_size.audit_phrase(401)
    assert audit_size.audit_phrase(400).startswith("400 units: 100 names per group")
    assert "ships" in audit_size.shipped_phrase(0.0) and "not compared" in audit_size.shipped_phrase(float("nan"))
    assert "differ" in audit_size.shipped_phrase(0.01)


# ----------------------------------------------------------------------------------------------------------------
# synthetic data sets
# ----------------------------------------------------------------------------------------------------------------
def frames(tau: float, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Four small data sets; ``tau`` is the spread of the true group effects (0: no group differs)."""
    rng = np.random.default_rng(seed)
    groups = [(o, s) for o in ("Belgian", "Turkish", "Polish") for s in ("Male", "Female")]
    effect = rng.normal(0, tau, (6, len(groups))) * 25
    effect[:, 0] = 0.0
    rows = []
    for t, v in itertools.product(range(6), range(8)):
        base = rng.normal(60, 10)
        for i, (o, s) in enumerate(groups):
            rows.append({"vacancy_id": f"v{t}-{v}", "job_type": f"type {t}", "occupation": f"occ {t // 2}",
                         "group": f"{o} {s}", "score": float(np.round(base + effect[t, i] + rng.normal(0, 8))),
                         "valid": True})
    lippens = pd.DataFrame(rows)
    lippens.loc[5, ["score", "valid"]] = [np.nan, False]  # a flagged answer, never used

    names = ["firstName_james-smith", "firstName_wei-chen", "firstName_aisha-okonkwo", "firstName_sarah-smith"]
    shift = rng.normal(0, tau, (4, 3, len(names))) * 3
    rows = [{"model": f"m{m}", "job": f"j{j}", "variant": n, "axis": "firstName", "run": r,
             "score": float(np.clip(np.round(6 + shift[m, j, i] + rng.normal(0, 1)), 1, 10)), "valid": True}
            for m, j, r in itertools.product(range(4), range(3), range(1, 6)) for i, n in enumerate(names)]
    recinq = pd.DataFrame(rows)

    jd_groups = ["White Male", "White Female", "Black Male", "Black Female"]
    jd_shift = rng.normal(0, tau, (2, 3, 4)) * 3
    rows = [{"model": f"m{m}", "job": f"j{j}", "resume": f"r{r}", "group": g,
             "score": float(np.round(20 + jd_shift[m, j, i] + rng.normal(0, 1.5))), "valid": True}
            for m, j, r in itertools.product(range(2), range(3), range(4)) for i, g in enumerate(jd_groups)
            for _ in range(2)]
    jderbysh = pd.DataFrame(rows)

    bb_groups = ["Male White", "Female White", "Male Black", "Female Black"]
    pull = rng.normal(0, tau, (2, 2, 4)) * 2
    rows = []
    for m, j, a in itertools.product(range(2), range(2), range(40)):
        noise = pull[m, j] + rng.gumbel(size=4)
        ranks = (-noise).argsort().argsort() + 1
        rows += [{"answer_id": f"m{m}/j{j}/{a}", "model": f"m{m}", "job": f"j{j}", "group": g, "rank": float(ranks[i]),
                  "oversampled": False} for i, g in enumerate(bb_groups)]
    bloomberg = pd.DataFrame(rows)
    return {"lippens": lippens, "recinq": recinq, "jderbysh": jderbysh, "bloomberg": bloomberg}


KW = dict(lippens_sizes=[1, 2, 4], forecast_sizes=[2, 4], n_splits=12, n_boot=30, n_perm=10, seed=0,
          references=REFERENCES, ll144_rates=[0.25], ll144_group_ratios=[1, 4], ll144_search_max=400)


@pytest.fixture(scope="module")
def strong():
    return audit_size_findings(frames=frames(tau=1.0), **KW)


@pytest.fixture(scope="module")
def none():
    return audit_size_findings(frames=frames(tau=0.0, seed=1), **KW)


def test_findings_shape(strong):
    assert isinstance(strong, AuditSizeFindings)
    glued = strong.glue_values()
    for key in REQUIRED:
        assert isinstance(glued[key], float), key
    assert set(strong.lippens_curves["level"]) == set(audit_size.LEVELS)
    assert strong.lippens_curves["size"].tolist()[:3] == [1, 2, 4]
    assert set(strong.forecast["data set"]) == {"Lippens", "re-cinq", "jderbysh"}
    assert set(strong.forecast["statistic"]) == {*audit_size.METRICS, "gap"}
    assert strong.needed["data set"].tolist() == ["Lippens", "re-cinq", "jderbysh", "Bloomberg"]
    assert strong.values["lippens_n_pools"] == 48 and strong.values["lippens_n_other_groups"] == 5
    for value in glued.values():
        assert type(value) in (int, float, str)


def test_planted_effects_are_reliable_and_found(strong):
    v = strong.values
    assert v["lippens_jobtype_gap_reliability_k1"] > 0.5
    assert v["lippens_vacancies_for_reliability_08_k1"] < 30
    assert v["recinq_gap_reliability"] > 0.5 and v["bloomberg_gap_reliability"] > 0.5
    assert strong.phrases["lippens_jobtype_word_k1"] in ("reliable", "moderately reliable")
    rabbi = strong.forecast[(strong.forecast["statistic"] == "rabbi") & (strong.forecast["level"] == "job type")]
    assert (rabbi["heldout_r"] > rabbi["null_hi"]).all()


def test_no_effect_gives_no_reliability(none):
    v = none.values
    assert abs(v["lippens_jobtype_gap_reliability_k1"]) < 0.2
    assert none.phrases["lippens_jobtype_word_k1"] == "unreliable"
    assert abs(v["recinq_gap_reliability"]) < 0.3


def test_numbers_agree_with_direct_calls(strong):
    v = strong.values
    # the pooled gap's reliability (the curve at the largest size) and its held-out r (the forecast test at the same
    # size) use the same seed and splits: one number
    assert v["lippens_pooled_gap_reliability_k1"] == pytest.approx(v["lippens_pooled_heldout_r_gap_k1"], abs=1e-12)
    # the job-type reliability from independently computed selection probabilities
    lip = frames(tau=1.0)["lippens"].query("valid").reset_index(drop=True)
    codes = lip.groupby("vacancy_id").ngroup().to_numpy()
    lip["p"] = selection.pool_selection_probabilities(codes, lip["score"].to_numpy(float), [1])[0]
    direct = reliability.split_half_reliability(lip, value="p", reference="Belgian Male", system="job_type",
                                                pool="vacancy_id", size=4, n_splits=12, seed=0)
    assert v["lippens_jobtype_gap_reliability_k1"] == pytest.approx(direct.reliability, abs=1e-12)
    rel = v["lippens_jobtype_gap_reliability_k1"]
    assert v["lippens_vacancies_for_reliability_08_k1"] == pytest.approx(4 * 0.8 * (1 - rel) / (rel * 0.2))
    assert v["lippens_jobtype_audited_reliability_k1"] == pytest.approx(reliability.spearman_brown(rel, 30 / 4))


def test_seed_reproduces(strong):
    again = audit_size_findings(frames=frames(tau=1.0), **KW)
    assert again.glue_values() == strong.glue_values()
    pd.testing.assert_frame_equal(again.forecast, strong.forecast)


def test_figures_draw(strong):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for draw in (audit_size.figure_curves, audit_size.figure_forecast, audit_size.figure_units):
        fig = draw(strong)
        assert fig.axes and all(ax.get_title() for ax in fig.axes)
        plt.close(fig)
    view = audit_size.forecast_view(strong)
    assert view.columns[0] == "data set" and (view["per half"] > 0).all()


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="frames lacks the data set"):
        audit_size_findings(frames={"lippens": frames(1.0)["lippens"]}, **{k: v for k, v in KW.items()})
    with pytest.raises(ValueError, match="ks must include 1"):
        audit_size_findings(frames=frames(1.0), ks=[2], **KW)
    with pytest.raises(ValueError, match="size=5 needs at least 10 pools"):
        audit_size_findings(frames=frames(1.0), **{**KW, "lippens_sizes": [5]})


def test_ll144_planning_rows_are_the_exact_characteristics():
    from allocbias import ll144

    plan = audit_size.ll144_planning_table([25, 250, 2500], 0.3)
    assert plan["applicants per group"].tolist() == [25, 250, 2500]
    assert plan["false-flag rate"].tolist() == pytest.approx(ll144.false_flag_rate([25, 250, 2500], [25, 250, 2500],
                                                                                   0.3).tolist(), abs=1e-12)
    assert plan["false-flag rate"].is_monotonic_decreasing and plan["detectable ratio"].is_monotonic_increasing
    assert (plan["detectable ratio"] < 0.8).all()
    with pytest.raises(ValueError, match="comparator_rate"):
        audit_size.ll144_planning_table([25], 1.0)
    with pytest.raises(ValueError, match="ll144_applicants"):
        audit_size.ll144_planning_table([0], 0.3)


def test_ll144_size_needed_is_where_the_condition_holds_from_on():
    from allocbias import ll144

    need = audit_size.ll144_size_needed(0.3, false_flag=0.1, ratio=0.65, search_max=400)
    n = need["false_flag_n"]
    sizes = np.arange(n - 1, 401)
    ffr = ll144.false_flag_rate(sizes, sizes, 0.3)
    assert ffr[0] >= 0.1 and (ffr[1:] < 0.1).all()  # n-1 fails, n and every larger size up to the max pass
    d = need["detect_n"]
    sizes = np.arange(d - 1, 401)
    det = ll144.detectable_ratio(sizes, sizes, 0.3)
    assert det[0] < 0.65 and (det[1:] >= 0.65).all()
    assert audit_size.ll144_size_needed(0.3, false_flag=1e-9, search_max=20)["false_flag_n"] is None
    with pytest.raises(ValueError, match="ratio"):
        audit_size.ll144_size_needed(0.3, ratio=1.2)


def test_ll144_planning_in_the_findings(strong):
    g = strong.glue_values()
    assert list(strong.ll144_planning["applicants per group"]) == list(audit_size.LL144_APPLICANTS)
    need = audit_size.ll144_size_needed(g["ll144_rate"], false_flag=g["ll144_false_flag"], ratio=g["ll144_ratio"],
                                        search_max=400)
    assert g["ll144_false_flag_n"] == f"{need['false_flag_n']:,}" and g["ll144_detect_n"] == f"{need['detect_n']:,}"
    # the quoted sizes are rows of the table the chapter shows
    view = audit_size.ll144_size_view(strong.ll144_sizes, false_flag=g["ll144_false_flag"], ratio=g["ll144_ratio"])
    row = view[(view["selection rate"] == "25%") & (view["group : comparator"] == "1:1")].iloc[0]
    assert [row.iloc[2], row.iloc[3]] == [g["ll144_false_flag_n"], g["ll144_detect_n"]]
    assert strong.ll144_sizes["group ratio"].tolist() == [1, 4]
    with pytest.raises(ValueError, match="ll144_ratio"):
        audit_size_findings(frames=frames(1.0), **{**KW, "ll144_ratio": 0})
    with pytest.raises(ValueError, match="must hold ll144_rate=0.3 at 1:1"):
        audit_size_findings(frames=frames(1.0), **{**KW, "ll144_rate": 0.3})


def test_measured_table_is_the_findings_reliabilities(strong):
    m = audit_size.measured_reliability_table(strong).set_index("key")
    lev = strong.lippens_levels.set_index(["level", "k"])
    assert m.loc["lippens-job-type", "reliability"] == lev.loc[("job type", 1), "reliability"]
    assert m.loc["lippens-pooled", "size per half"] == lev.loc[("all vacancies", 1), "size per half"]
    need = strong.needed.set_index("data set")
    for key, name in (("recinq", "re-cinq"), ("bloomberg", "Bloomberg"), ("jderbysh", "jderbysh")):
        assert m.loc[key, "reliability"] == need.loc[name, "reliability"]
        assert m.loc[key, "reliability of one unit"] == pytest.approx(need.loc[name, "reliability of one unit"],
                                                                      nan_ok=True)
    # synthetic frames at other settings: compared with nothing shipped
    assert "shipped_reliability_max_diff" not in strong.values and "not compared" in strong.phrases["shipped_phrase"]


def test_the_chapter_s_tables_join_the_evidence_and_give_sizes_as_whole_numbers(strong, none):
    """Issue 39: the forecast table (nine columns, 702 px in a 688 px column) and the table of sizes (eleven, 739 px)
    were wider than the page, with ``lo``/``hi`` headers and sizes to three decimals (the display hook dropped the
    chapter's formatting). The forecast's evidence is now one cell, each reliability one cell with its range, and
    the sizes whole numbers, the same the prose rounds to."""
    from allocbias.plotting import show_table

    shown = show_table(audit_size.forecast_view(strong), dash_note=audit_size.FORECAST_DASH)
    assert list(shown.data.columns) == ["data set", "level", "per half", "statistic",
                                        "held-out r [95%]; null 97.5%; ceiling", "minus the gap's own [95%]",
                                        "disattenuated [95%]"]
    itself = shown.data[shown.data["statistic"] == "the gap itself"]
    assert len(itself) and (itself["minus the gap's own [95%]"] == "–").all()
    assert audit_size.FORECAST_DASH in shown.to_html()
    for table in (strong.needed, none.needed, strong.lippens_levels):
        data = show_table(audit_size.reliability_view(table), dash_note=audit_size.RELIABILITY_DASH).data
        assert "reliability [95%]" in data and not {"lo", "hi"} & set(data.columns)
        for col in ("units for 0.5", "units for 0.8"):
            assert data[col].str.fullmatch(r"[\d,]+|–").all(), data[col].tolist()
        rounded = [f"{round(x):,}" if np.isfinite(x) else "–" for x in table["units for 0.8"]]
        assert data["units for 0.8"].tolist() == rounded
