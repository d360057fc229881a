"""Tests for allocbias.measures.intervals (cluster bootstrap over names), allocbias.scoring.user_models (systems outside the
registry) and the report tables of allocbias.audit, with the doctests of the three modules."""

from __future__ import annotations

import doctest
import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias import audit
from allocbias.scoring import catalog
from allocbias.measures import intervals
from allocbias.scoring import systems, user_models
from allocbias.measures.intervals import cluster_bootstrap, percentile_intervals
from allocbias.scoring.user_models import ServedSystem, UserSystem, model_fingerprint, resolve_system


@pytest.mark.parametrize("module", [intervals, user_models, audit])
def test_doctests_hold(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def _names_frame(scores_a: list[float], scores_b: list[float]) -> pd.DataFrame:
    rows = [{"job": "j", "group": g, "full_name": f"{g}{i}", "score": s}
            for g, values in (("A", scores_a), ("B", scores_b)) for i, s in enumerate(values)]
    return pd.DataFrame(rows)


def test_one_name_per_stratum_gives_the_estimate_every_time():
    frame = _names_frame([0.7], [0.2])
    gap = lambda f: pd.DataFrame({"gap": [f.loc[f.group == "A", "score"].mean() - f.loc[f.group == "B", "score"].mean()]})  # noqa: E731
    reps = cluster_bootstrap(frame, gap, 50, seed=3)
    assert reps["gap"].tolist() == pytest.approx([0.5] * 50)
    table = percentile_intervals(gap(frame), reps, [], ["gap"])
    assert table[["estimate", "ci_low", "ci_high"]].to_numpy()[0].tolist() == pytest.approx([0.5, 0.5, 0.5])


def test_a_name_brings_all_its_rows_and_strata_keep_their_size():
    frame = pd.DataFrame({"job": "j", "group": ["A"] * 4 + ["B"] * 2, "full_name": ["a1", "a1", "a2", "a2", "b1", "b1"],
                          "resume_id": ["r1", "r2"] * 3, "score": [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]})
    seen = []

    def record(f: pd.DataFrame) -> pd.DataFrame:
        seen.append(f)
        return pd.DataFrame({"n": [len(f)]})

    cluster_bootstrap(frame, record, 30, seed=0)
    for f in seen:
        assert len(f) == 6 and (f.groupby("full_name")["resume_id"].nunique() == 2).all()
        assert sorted(f.groupby("group").size().tolist()) == [2, 4]
    assert {tuple(sorted(f.loc[f.group == "A", "full_name"].unique())) for f in seen} >= {("a1",), ("a1", "a2")}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=8), st.lists(st.floats(0, 1), min_size=2, max_size=8),
       st.integers(0, 10_000))
def test_same_seed_same_replicates_and_intervals_ordered(a, b, seed):
    frame = _names_frame(a, b)
    mean_a = lambda f: pd.DataFrame({"m": [f.loc[f.group == "A", "score"].mean()]})  # noqa: E731
    first = cluster_bootstrap(frame, mean_a, 40, seed)
    pd.testing.assert_frame_equal(first, cluster_bootstrap(frame, mean_a, 40, seed))
    table = percentile_intervals(mean_a(frame), first, [], ["m"])
    assert table["ci_low"].iloc[0] <= table["ci_high"].iloc[0]
    assert min(a) - 1e-12 <= table["ci_low"].iloc[0] and table["ci_high"].iloc[0] <= max(a) + 1e-12


def test_bad_input_names_the_problem():
    frame = _names_frame([0.1, 0.2], [0.3, 0.4])
    with pytest.raises(ValueError, match=r"has no column\(s\) \['full_name'\]"):
        cluster_bootstrap(frame.drop(columns="full_name"), lambda f: f, 5, 0)
    with pytest.raises(ValueError, match="n_boot must be an integer >= 1"):
        cluster_bootstrap(frame, lambda f: f, 0, 0)
    with pytest.raises(ValueError, match="statistic must return a DataFrame"):
        cluster_bootstrap(frame, lambda f: 1.0, 2, 0)
    with pytest.raises(ValueError, match="confidence must lie in"):
        percentile_intervals(pd.DataFrame({"m": [1.0]}), pd.DataFrame({"m": [1.0]}), [], ["m"], confidence=1.0)


# ------------------------------------------------------------------------------------------- user models
def test_fingerprint_of_a_folder_follows_config_and_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "tokenizer.json").write_text("{}")
    digest = hashlib.sha256()
    for name, content in (("config.json", b"{}"), ("model.safetensors", b"weights")):
        digest.update(name.encode())
        digest.update(hashlib.sha256(content).hexdigest().encode())
    assert model_fingerprint(tmp_path) == digest.hexdigest()
    before = model_fingerprint(tmp_path)
    (tmp_path / "tokenizer.json").write_text('{"changed": true}')  # not part of the weights
    assert model_fingerprint(tmp_path) == before
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert model_fingerprint(tmp_path) != before


def test_user_and_served_systems_are_systems_with_their_own_keys(tmp_path):
    gguf = tmp_path / "My Model.Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    system = resolve_system(str(gguf), "int8", "direct")
    assert isinstance(system, UserSystem) and isinstance(system, systems.System)
    assert system.id == "my_model.q4_k_m-int8-direct"
    assert system.model_key == f"local:my_model.q4_k_m-{hashlib.sha256(b'GGUF').hexdigest()[:16]}@int8"
    store = catalog.store_for(system, "resume_pointwise", tmp_path / "scores")
    assert store.key["model_key"] == system.model_key and store.key["params"]["wording"] == "direct"
    served = resolve_system("my-server-model", wording="paper", served=True)
    assert isinstance(served, ServedSystem) and served.id == "my-server-model-served-paper"
    assert served.model_key == "openai:my-server-model"
    assert type(resolve_system("gemma3-270m")) is systems.System


@pytest.mark.parametrize("make, match", [
    (lambda p: p / "missing", "unknown model .*missing"),
    (lambda p: (p / "notes.txt").write_text("x") and p / "notes.txt", "is a file but not a .gguf model"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "is not a model: it has no config.json"),
])
def test_paths_that_are_not_models(tmp_path, make, match):
    with pytest.raises(ValueError, match=match):
        resolve_system(str(make(tmp_path)))


def test_a_folder_with_config_but_no_weights(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"no \*\.safetensors or \*\.bin weights"):
        model_fingerprint(tmp_path)


# ------------------------------------------------------------------------------------------- report tables
def test_ll144_table_matches_the_ll144_functions():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"group": np.repeat(["A", "B", "C"], 50), "score": rng.random(150)})
    df.loc[df.group == "C", "score"] *= 0.5
    table = audit.ll144_table(df).set_index("group")
    from allocbias import ll144

    assert table["impact_ratio"].to_dict() == pytest.approx(ll144.di_median(df.score, df.group).to_dict())
    assert table["four_fifths_flag"].to_dict() == (table["impact_ratio"] < 0.8).to_dict()
    assert table.loc["C", "scoring_rate"] == pytest.approx((df.loc[df.group == "C", "score"] > np.median(df.score)).mean())


def test_selection_intervals_cover_every_group_quota_and_metric():
    from allocbias import data

    cands = data.candidate_table(["retail"], names_per_group=2)
    rng = np.random.default_rng(1)
    scores = cands.assign(score=rng.random(len(cands)))
    table = audit.selection_intervals(scores, [1, 2], 50, 0, 10)
    assert set(table["metric"]) == {"phi", "psi", "dDP", "dEO"} and set(table["k"]) == {1, 2}
    assert set(table["job"]) == {"retail", audit.ALL_JOBS}
    gaps = table[table["metric"] == "dDP"]
    assert data.REFERENCE_GROUP not in set(gaps["group"]) and len(gaps) == 2 * 2 * 7
    phi = table[(table["metric"] == "phi") & (table["job"] == "retail")]
    assert phi.groupby("k")["estimate"].sum().to_dict() == pytest.approx({1: 1.0, 2: 2.0})  # k seats per pool
