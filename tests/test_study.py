"""The study plan: systems, prompt items, stores, and scoring through a stand-in engine."""

from __future__ import annotations

import pandas as pd
import pytest

from allocbias import data as D
from allocbias.scoring import catalog, runs
from allocbias.scoring import systems, tasks
from allocbias.scoring.items import (
    hiring_bloomberg_items,
    pairwise_pools,
    resume_pairwise_items,
    resume_pointwise_items,
)
from allocbias.audited.prompts import prompt_hash


from .test_study_tables import StandIn as CountingEngine  # the shared deterministic stand-in engine


@pytest.fixture(scope="module")
def candidates():
    return D.candidate_table(["retail"], names_per_group=2, seed=0)


def test_system_ids_round_trip_and_errors():
    ids = [s.id for s in systems.systems(precisions=systems.PRECISIONS)]
    assert len(ids) == len(set(ids)) == 2 * 3 * 2
    assert all(systems.parse_system(i).id == i for i in ids)
    with pytest.raises(ValueError, match="system id 'llama-fp32-paper' is not"):
        systems.parse_system("llama-fp32-paper")
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        systems.System("smollm2-135m-instruct", "fp8")


def test_pointwise_items_one_prompt_per_candidate_grouped_by_job(candidates):
    items = resume_pointwise_items(candidates)
    assert len(items) == len(candidates) == 6 * 8 * 2
    assert items["prompt_id"].is_unique
    # the system message (instructions + job ad) is shared by every candidate of the job
    assert items["messages"].map(lambda m: m[0]["content"]).nunique() == 1
    for name, messages in zip(items["full_name"], items["messages"]):
        assert messages[1]["content"].count(name) == 1


def test_store_address_depends_on_model_precision_wording_not_on_candidates(tmp_path):
    a = catalog.store_for(systems.System("smollm2-135m-instruct", "fp32", "paper"), "resume_pointwise", tmp_path)
    b = catalog.store_for(systems.System("smollm2-135m-instruct", "fp32", "direct"), "resume_pointwise", tmp_path)
    c = catalog.store_for(systems.System("smollm2-135m-instruct", "int8", "paper"), "resume_pointwise", tmp_path)
    d = catalog.store_for(systems.System("smollm2-135m-instruct", "fp32", "paper"), "resume_pointwise", tmp_path)
    assert len({a.address, b.address, c.address}) == 3
    assert a.address == d.address


def test_pointwise_scores_resume_and_grow(tmp_path, candidates):
    system = systems.System("smollm2-135m-instruct")
    engine = CountingEngine()
    small = candidates[candidates["resume_id"].isin(candidates["resume_id"].unique()[:2])]
    first = runs.score("resume_pointwise", small, system=system, root=tmp_path, engine=engine, batch_size=10,
                        progress=False)
    assert engine.pointwise_calls == len(small) == len(first)
    assert list(first["full_name"]) == list(small["full_name"])  # candidates' order kept
    again = runs.score("resume_pointwise", small, system=system, root=tmp_path, engine=engine, progress=False)
    assert engine.pointwise_calls == len(small), "stored rows must not be scored again"
    pd.testing.assert_frame_equal(first, again)
    full = runs.score("resume_pointwise", candidates, system=system, root=tmp_path, engine=engine, progress=False)
    assert engine.pointwise_calls == len(candidates), "a larger study scores only the new rows"
    assert full["score"].between(0, 1).all() and len(full) == len(candidates)


def test_pairwise_pools_and_items(candidates):
    pools = pairwise_pools(candidates, rounds=3, seed=1)
    assert len(pools) == 3 * 8
    assert (pools.groupby("round")["group"].nunique() == 8).all()
    items = resume_pairwise_items(pools)
    assert len(items) == 3 * 28 * 2
    assert set(items["order"]) == {"ab", "ba"}
    assert (items["cand_a"] < items["cand_b"]).all()
    again = pairwise_pools(candidates, rounds=3, seed=1)
    pd.testing.assert_frame_equal(pools, again)


def test_pairwise_scoring_parses_answers(tmp_path, candidates):
    pools = pairwise_pools(candidates, rounds=2, seed=0)
    engine = CountingEngine()
    out = runs.score("resume_pairwise", pools, system=systems.System("smollm2-135m-instruct"), root=tmp_path,
                      engine=engine, progress=False)
    assert len(out) == 2 * 28 * 2
    # a model that always names the first candidate shown answers a in order "ab" and b in order "ba"
    assert (out.loc[out["order"] == "ab", "winner"] == "a").all()
    assert (out.loc[out["order"] == "ba", "winner"] == "b").all()
    assert engine.generated == out["prompt_id"].nunique()


def test_hiring_bloomberg_items_shapes():
    attempts = hiring_bloomberg_items(n_orderings=1, seed=0, jobs=["retail"])
    assert len(attempts) == 4 * 2  # 4 races x 2 attempts
    assert attempts["prompt_id"].is_unique
    for names, messages in zip(attempts["names"], attempts["messages"]):
        assert len(names) == 8 and all(messages[0]["content"].count(n) >= 1 for n in names)


def test_hiring_bloomberg_prompt_ids_are_the_prompt_content():
    """An attempt's id is its prompt's hash: the same prompt finds its stored answer whatever else was drawn."""
    two = hiring_bloomberg_items(n_orderings=2, seed=0, jobs=["retail", "hr_specialist"])
    assert all(prompt_hash(m)[:20] == i for i, m in zip(two["prompt_id"], two["messages"]))
    assert two["prompt_id"].is_unique


def test_engine_provenance_is_recorded_on_first_scoring_call(tmp_path):
    class Loaded:
        metadata = {"model": "stand-in", "package": "p", "package_version": "9", "dtype": "float32"}

    class Engine:
        loaded = Loaded()

        def pointwise(self, prompts, labels, **kw):
            return [{"score": 0.5, "label_mass": 1.0, "p_No": 0.5, "p_Yes": 0.5, "n_tokens": 3} for _ in prompts]

    cands = D.candidate_table(["retail"], names_per_group=1)
    system = systems.parse_system("smollm2-fp32-paper")
    runs.score("resume_pointwise", cands, system=system, root=tmp_path, engine=Engine(), progress=False)
    assert catalog.store_for(system, "resume_pointwise", tmp_path).provenance["model"] == Loaded.metadata
