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


def test_forecast_table_and_the_report_sentences():
    s = scores_with(2.0, 4)
    size = audit.audit_size_table(s, [1], 300, 0, n_splits=20)
    forecast = audit.forecast_table(s, 1, 0, n_splits=20, n_boot=60, n_perm=40)
    assert list(forecast["statistic"]) == ["rabbi", "avg_gap", "jsd", "emd", "gap"]
    text = audit.size_words(size, forecast)
    assert text.startswith("How this is measured") and "Spearman–Brown" in text and "predicts the other half" in text
    for code_word in ("split_lo", "vs_gap", "names_for_target", "reliability_half"):
        assert code_word not in text
    lead = audit.size_sentence(size)
    for statistics_word in ("held-out", "Spearman", "permutation", "split"):
        assert statistics_word not in lead
    for view in (audit.size_view(size), audit.forecast_view(forecast)):
        assert len(view.columns) <= 6 and not any("_" in c for c in view.columns)


SIZE = pd.DataFrame({"k": [2], "names_per_group": [10], "names_per_half": [5], "reliability_half": [0.3],
                     "split_lo": [0.1], "split_hi": [0.5], "reliability": [0.46], "names_for_target": [46.7],
                     "target": [0.8]})
COMMAND = "allocbias audit --model 'my model' --out build/a --names-per-group 10"


def test_the_size_section_opens_with_k_and_the_command_for_the_suggested_size():
    text = audit.size_sentence(SIZE, command=COMMAND)
    assert text.startswith("At k = 2 (the top 2 of each pool selected), the gaps of each job are unreliable")
    assert "about 47 names per group would make them reliable (0.8)" in text
    assert "allocbias audit --model 'my model' --out build/a --names-per-group 47" in text
    assert "allocbias plan llm --from build/a" in text
    # the names the sentence suggests are those allocbias plan gives from the same table
    from allocbias.measures import planning

    got = planning.audit_reliability(SIZE)
    assert planning.units_needed(got["reliability"], got["size"], 0.8) == 47


def test_the_size_sentence_when_reliable_unreachable_or_undefined():
    good = audit.size_sentence(SIZE.assign(reliability=0.85, names_for_target=8.0))
    assert "are reliable: all 10 names per group give them a reliability of about 0.85 (0.8 or more)" in good
    far = audit.size_sentence(SIZE.assign(names_for_target=250.2), command=COMMAND)
    assert "about 251 names per group" in far and "more than the 100 names per group" in far
    assert "--names-per-group 251" not in far
    none = audit.size_sentence(SIZE.assign(reliability_half=-0.1, reliability=0.0, names_for_target=np.nan))
    assert "no number of names can be read" in none and "At k = 2" in none
    assert "allocbias audit --model MODEL --out OUT --names-per-group 47" in audit.size_sentence(SIZE)
