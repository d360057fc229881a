"""The audit report's section "Is this audit large enough?": the split-half reliability of its gaps over names,
the names Spearman-Brown needs, and which statistic forecasts the other half's gaps (allocbias.audit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from allocbias import audit
from allocbias.audited import data as D


def scores_with(shift: float, names: int, seed: int = 0) -> pd.DataFrame:
    """The audit's candidates (two jobs, ``names`` names per group) scored by quality, a per-name effect and a
    group effect of ``shift`` times a fixed per-(job, group) pattern."""
    rng = np.random.default_rng(seed)
    c = D.candidate_table(jobs=["retail", "software_engineer"], names_per_group=names)
    pattern = {key: rng.normal() for key in c.groupby(["job", "group"]).groups}
    name_effect = {n: rng.normal(0, 0.3) for n in c["full_name"].unique()}
    quality = c["quality"].map({"high": 1.0, "medium": 0.5, "low": 0.0})
    base = quality + c["full_name"].map(name_effect) + rng.normal(0, 0.3, len(c))
    effect = [shift * pattern[(j, g)] for j, g in zip(c["job"], c["group"])]
    return c.assign(score=base + effect)


def test_reliability_is_high_for_a_large_stable_group_effect_and_near_zero_without_one():
    strong = audit.audit_size_table(scores_with(2.0, 4), [1], 300, 0, n_splits=20)
    none = audit.audit_size_table(scores_with(0.0, 4), [1], 300, 0, n_splits=20)
    assert strong["reliability_half"].iloc[0] > 0.7 > none["reliability_half"].iloc[0]
    assert abs(none["reliability_half"].iloc[0]) < 0.4
    row = strong.iloc[0]
    assert row["names_per_group"] == 4 and row["names_per_half"] == 2 and row["n_points"] == 14
    # Spearman-Brown from half the names to all of them, and the names for 0.8 from the half
    rho = row["reliability_half"]
    assert row["reliability"] == pytest.approx(2 * rho / (1 + rho))
    assert row["names_for_target"] == pytest.approx(2 * 0.8 * (1 - rho) / (rho * 0.2))


def test_one_name_per_group_cannot_be_split():
    with pytest.raises(audit.AuditError, match="at least 2"):
        audit.audit_size_table(scores_with(1.0, 1), [1], 100, 0)


def test_forecast_table_and_the_report_sentence():
    s = scores_with(2.0, 4)
    size = audit.audit_size_table(s, [1], 300, 0, n_splits=20)
    forecast = audit.forecast_table(s, 1, 0, n_splits=20, n_boot=60, n_perm=40)
    assert list(forecast["statistic"]) == ["rabbi", "avg_gap", "jsd", "emd", "gap"]
    text = audit.size_words(size, forecast)
    assert text.startswith("The gaps are") and "names per group" in text and "held-out r =" in text
    weak = size.assign(reliability_half=-0.1, reliability=0.0, names_for_target=np.nan)
    assert "no number of names can be read" in audit.size_words(weak)
