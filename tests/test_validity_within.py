"""Tests of allocbias.validity.validity_decomposition: the pooled correlation split into within and between."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from allocbias import validity


def _points(seed: int = 0, n_clusters: int = 4, per: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_clusters):
        x = rng.normal(size=per)
        rows.append(pd.DataFrame({
            "system": f"s{c}", "rabbi": x + c, "rabbi_qualified": x + rng.normal(scale=0.5, size=per),
            "jsd": np.abs(x), "jsd_qualified": np.abs(x) + 0.1,
            "dDP": 0.5 * x + rng.normal(scale=0.5, size=per) + 2 * c, "dEO": x + rng.normal(scale=0.3, size=per)}))
    return pd.concat(rows, ignore_index=True)


def test_pooled_r_is_the_validity_table_r():
    pts = _points()
    dec = validity.validity_decomposition(pts, ["rabbi", "jsd"], ["dDP", "dEO"]).set_index(["metric", "gap"])
    tab = validity.validity_table(pts, ["rabbi", "jsd"], ["dDP", "dEO"]).set_index(["metric", "gap"])
    assert np.allclose(dec["r_pooled"], tab.loc[dec.index, "r"])
    assert (dec["metric_column"] == tab.loc[dec.index, "metric_column"]).all()
    assert (dec["gap_transform"] == tab.loc[dec.index, "gap_transform"]).all()


def test_within_r_is_the_r_of_centred_points_and_ignores_cluster_shifts():
    pts = _points()
    got = validity.validity_decomposition(pts, ["rabbi"], ["dDP"]).iloc[0]
    centred = pts.groupby("system")[["rabbi", "dDP"]].transform(lambda s: s - s.mean())
    assert got["r_within"] == pytest.approx(np.corrcoef(centred["rabbi"], centred["dDP"])[0, 1])
    shifted = pts.copy()
    shift = shifted["system"].map({"s0": 5.0, "s1": -3.0, "s2": 0.0, "s3": 1.0})
    shifted["rabbi"] += shift
    shifted["dDP"] -= 2 * shift
    moved = validity.validity_decomposition(shifted, ["rabbi"], ["dDP"]).iloc[0]
    assert moved["r_within"] == pytest.approx(got["r_within"])
    assert moved["r_cluster_median"] == pytest.approx(got["r_cluster_median"])
    assert moved["r_pooled"] != pytest.approx(got["r_pooled"])  # only the pooled r sees the clusters' offsets
    assert moved["r_pooled"] < got["r_pooled"]


def test_cluster_summaries_and_between_part():
    pts = _points()
    got = validity.validity_decomposition(pts, ["rabbi"], ["dDP"]).iloc[0]
    per = [np.corrcoef(p["rabbi"], p["dDP"])[0, 1] for _, p in pts.groupby("system")]
    assert got["r_cluster_median"] == pytest.approx(np.median(per))
    assert got["r_cluster_min"] == pytest.approx(min(per)) and got["r_cluster_max"] == pytest.approx(max(per))
    means = pts.groupby("system")[["rabbi", "dDP"]].mean()
    assert got["r_between"] == pytest.approx(np.corrcoef(means["rabbi"], means["dDP"])[0, 1])
    x, y = pts["rabbi"], pts["dDP"]
    between = (pts.groupby("system").size() * (means["rabbi"] - x.mean()) * (means["dDP"] - y.mean())).sum()
    assert got["between_share"] == pytest.approx(between / ((x - x.mean()) * (y - y.mean())).sum())
    assert 0.5 < got["between_share"] <= 1.5  # the clusters are offset along the line: most covariance is between
    assert got["n"] == len(pts) and got["n_clusters"] == 4


def test_equal_cluster_means_leave_nothing_between():
    pts = _points()
    centred = pts.copy()
    for col in ("rabbi", "dDP"):
        centred[col] = pts[col] - pts.groupby("system")[col].transform("mean")
    got = validity.validity_decomposition(centred, ["rabbi"], ["dDP"]).iloc[0]
    assert got["between_share"] == pytest.approx(0.0, abs=1e-12)
    assert got["r_pooled"] == pytest.approx(got["r_within"])


def test_directionless_metrics_use_the_absolute_gap_and_qualified_columns():
    pts = _points()
    got = validity.validity_decomposition(pts, ["jsd"], ["dEO"]).iloc[0]
    assert got["metric_column"] == "jsd_qualified" and got["gap_transform"] == "abs"
    assert got["r_pooled"] == pytest.approx(np.corrcoef(pts["jsd_qualified"], pts["dEO"].abs())[0, 1])


def test_two_clusters_have_no_between_correlation_and_a_constant_cluster_is_left_out():
    pts = _points(n_clusters=2)
    assert np.isnan(validity.validity_decomposition(pts, ["rabbi"], ["dDP"])["r_between"].iloc[0])
    flat = _points(n_clusters=3)
    flat.loc[flat["system"] == "s0", "rabbi"] = 0.25
    got = validity.validity_decomposition(flat, ["rabbi"], ["dDP"]).iloc[0]
    per = [np.corrcoef(p["rabbi"], p["dDP"])[0, 1] for s, p in flat.groupby("system") if s != "s0"]
    assert got["r_cluster_min"] == pytest.approx(min(per)) and got["r_cluster_max"] == pytest.approx(max(per))


def test_bad_input_raises():
    pts = _points()
    with pytest.raises(ValueError, match="no column"):
        validity.validity_decomposition(pts, ["rabbi"], ["dDP"], cluster="model")
    bad = pts.copy()
    bad.loc[3, "dDP"] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        validity.validity_decomposition(bad, ["rabbi"], ["dDP"])
    with pytest.raises(ValueError, match="at least one"):
        validity.validity_decomposition(pts, [], ["dDP"])
