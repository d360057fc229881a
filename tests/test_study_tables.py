"""Tables for the chapters (allocbias.scoring.runs, allocbias.scoring.catalog, allocbias.measures.tables): several systems at once, served models,
provenance, quality separation and the decision tables. Stand-in engines keep every test model-free."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias import data as D
from allocbias.measures import tables
from allocbias.scoring import catalog, runs
from allocbias.scoring import items, tasks
from allocbias.scoring.systems import SYSTEM_COLUMNS, parse_system
from allocbias.metrics import pairwise_points
from allocbias.audited.prompts import prompt_hash
from allocbias.selection import simulate
from allocbias.scoring.serving import OpenAIEngine

from .test_serving import FakeOpenAI


class StandIn:
    """Deterministic stand-in engine: the score is a hash of the prompt; answers name the first-shown name."""

    def __init__(self, model: str | None = None):
        self.model, self.prefill, self.top_logprobs, self.extra_body = model, "vllm", 20, {}
        self.pointwise_calls = 0
        self.generated = 0

    def pointwise(self, prompts, labels, *, batch_size=None, progress=True):
        self.pointwise_calls += len(prompts)
        out = []
        for messages in prompts:
            h = int(prompt_hash(messages)[:6], 16) / 16**6
            out.append({"score": h, "label_mass": 0.25 + h / 2, "p_No": 1 - h, "p_Yes": h, "n_tokens": 100})
        return out

    def generate(self, prompts, *, max_new_tokens, batch_size=None, progress=True):
        self.generated += len(prompts)
        return [messages[1]["content"].split("\n\n")[1].splitlines()[0] for messages in prompts]


@pytest.fixture(scope="module")
def candidates():
    return D.candidate_table(["retail"], names_per_group=1, seed=0)


PAPER, DIRECT = "smollm2-fp32-paper", "smollm2-fp32-direct"


# ------------------------------------------------------------------------------------------------ pointwise


def test_pointwise_table_stacks_systems_and_scores_only_missing_rows(tmp_path, candidates):
    engines: dict[str, StandIn] = {}

    def engine_for(system):
        return engines.setdefault(system.id, StandIn())

    table = runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, engine_for=engine_for)
    assert list(table.columns[:4]) == list(SYSTEM_COLUMNS)
    assert len(table) == 2 * len(candidates) == 2 * 48
    assert table.groupby("system").size().to_dict() == {DIRECT: 48, PAPER: 48}
    assert list(pd.unique(table["system"])) == [PAPER, DIRECT]  # order of the systems argument
    assert set(table["wording"]) == {"paper", "direct"} and set(table["precision"]) == {"fp32"}
    assert table["score"].between(0, 1).all()
    # the two wordings are different prompts, hence different scores for the same candidate
    wide = table.pivot(index="prompt_id", columns="system", values="score")
    assert (wide[PAPER] != wide[DIRECT]).any()
    again = runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, engine_for=engine_for)
    assert sum(e.pointwise_calls for e in engines.values()) == 2 * 48, "stored rows must not be scored again"
    pd.testing.assert_frame_equal(table, again)


def test_pointwise_table_rejects_bad_system_lists(tmp_path, candidates):
    with pytest.raises(ValueError, match="systems is empty"):
        runs.pointwise_table([], candidates, root=tmp_path)
    with pytest.raises(ValueError, match="more than once"):
        runs.pointwise_table([PAPER, PAPER], candidates, root=tmp_path)
    with pytest.raises(ValueError, match="is not <model>-<precision>-<wording>"):
        runs.pointwise_table(["llama-fp32-paper"], candidates, root=tmp_path)
    with pytest.raises(ValueError, match="either served"):
        runs.pointwise_table([PAPER], candidates, root=tmp_path, served=StandIn("m"), engine_for=lambda s: StandIn())
    with pytest.raises(ValueError, match="has no column"):
        runs.pointwise_table([PAPER], candidates.drop(columns=["group"]), root=tmp_path)


def test_served_rows_go_to_their_own_table(tmp_path, candidates):
    served = StandIn("tiny-served")
    table = runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, served=served)
    assert set(table["system"]) == {"tiny-served-served-paper", "tiny-served-served-direct"}
    assert set(table["precision"]) == {"server"} and set(table["model"]) == {"tiny-served"}
    local = catalog.store_for(parse_system(PAPER), "resume_pointwise", tmp_path)
    remote = catalog.served_store(served, "resume_pointwise", "paper", tmp_path)
    assert remote.address != local.address and not local.path.exists()
    assert remote.key["model_key"] == "openai:tiny-served"
    assert remote.key["params"]["backend"] == "openai" and remote.key["params"]["top_logprobs"] == 20
    # same prompts: the served table's prompt hash is the local table's
    assert remote.key["prompt_hash"] == local.key["prompt_hash"]
    with pytest.raises(ValueError, match="no model name"):
        catalog.served_store(StandIn(None), "resume_pointwise", "paper", tmp_path)
    with pytest.raises(ValueError, match="served scoring covers"):
        catalog.served_store(served, "hiring_bloomberg", "paper", tmp_path)


def test_served_scoring_through_a_real_openai_engine(tmp_path, candidates):
    """The OpenAIEngine against a scripted loopback server: every answer is Yes 0.7 / No 0.3."""
    few = candidates[candidates["resume_id"] == candidates["resume_id"].iloc[0]]
    with FakeOpenAI() as fake:
        engine = OpenAIEngine(fake.url, "fake-model", api_key="sk-test", backoff_s=0.0, prefill="vllm")
        table = runs.pointwise_table([PAPER], few, root=tmp_path, served=engine)
        assert len(fake.requests) == len(few) == 8
        assert all(r["continue_final_message"] for r in fake.requests)  # the "Answer:" prefill is continued
        pools = items.pairwise_pools(few, 1, 0)
        answers = runs.pairwise_table([PAPER], pools, root=tmp_path, served=engine)
    assert np.allclose(table["score"], 0.7) and np.allclose(table["label_mass"], 1.0)
    assert set(table["system"]) == {"fake-model-served-paper"}
    assert len(answers) == 2 * 28 and set(answers["winner"]) == {"undetected"}  # the fake echoes the prompt
    prov = catalog.provenance_table(tmp_path).set_index("kind")
    assert prov.loc["resume_pointwise", "model_key"] == "openai:fake-model"
    assert prov.loc["resume_pointwise", "system"] == "fake-model-served-paper"
    assert prov.loc["resume_pairwise", "rows"] == 56


# ------------------------------------------------------------------------------------------------ pairwise


def test_pairwise_table_and_the_scoring_rule(tmp_path, candidates):
    engine = StandIn()
    pools = items.pairwise_pools(candidates, 1, 0)
    answers = runs.pairwise_table([PAPER], pools, root=tmp_path, engine_for=lambda s: engine)
    assert len(answers) == 2 * 28 and engine.generated == 56
    assert list(answers.columns[:4]) == list(SYSTEM_COLUMNS)
    # the stand-in always names the candidate shown first: every pair is inconsistent, 0.5 points each
    assert set(answers["winner"]) == {"a", "b"}
    points = pairwise_points(answers, by=["system", "job", "round"])
    assert len(points) == 8 and np.allclose(points["score"], 7 * 0.5) and (points["n_pairs"] == 7).all()
    # two systems that differ only in the pointwise wording share the pairwise table
    both = runs.pairwise_table([PAPER, DIRECT], pools, root=tmp_path, engine_for=lambda s: engine)
    assert engine.generated == 56 and len(both) == 2 * 56 and set(both["wording"]) == {"paper"}


class Prefers(StandIn):
    """Names the candidate of ``group`` whenever one of the two is; otherwise the first-shown name."""

    def __init__(self, names):
        super().__init__()
        self.names = set(names)

    def generate(self, prompts, *, max_new_tokens, batch_size=None, progress=True):
        shown = super().generate(prompts, max_new_tokens=max_new_tokens)
        return [next((n for n in self.names if n in m[1]["content"]), first) for m, first in zip(prompts, shown)]


def test_pairwise_study_points_hand_computed(tmp_path):
    cands = D.candidate_table(["retail", "hr_specialist"], names_per_group=2, seed=0)
    pools = items.pairwise_pools(cands, 30, 0)  # enough pools for every group to show a qualified candidate
    favoured = "Female Black"
    engine = Prefers(pools.loc[pools["group"] == favoured, "full_name"])
    answers = runs.pairwise_table([PAPER], pools, root=tmp_path, engine_for=lambda s: engine)
    pts = tables.pairwise_study_points(answers, pools, [1, 2])
    assert len(pts) == 2 * 7 * 2 and set(pts["n_rounds"]) == {30}
    fav = pts[pts["group"] == favoured]
    rest = pts[pts["group"] != favoured]
    # the favoured candidate wins its 7 pairs in both orders (7 points); each other candidate loses to it and
    # splits its 6 other pairs (6 x 0.5 = 3 points, all equal), so with k = 1 the favoured takes every seat
    assert np.allclose(fav["rabbi"], 1.0) and np.allclose(fav["avg_gap"], 1.0)
    assert np.allclose(fav.loc[fav["k"] == 1, "dDP"], 1.0)
    assert np.allclose(rest["rabbi"], 0.0) and np.allclose(rest["avg_gap"], 0.0) and np.allclose(rest["dDP"], 0.0)
    # k = 2: the second seat is shared by the 7 tied candidates, 1/7 each: dDP of the favoured = 1 - 1/7
    assert np.allclose(fav.loc[fav["k"] == 2, "dDP"], 1 - 1 / 7)
    # a pool with a missing answer is refused, naming the cell
    with pytest.raises(ValueError, match="without pairwise answers"):
        tables.pairwise_study_points(answers[answers["round"] != 2], pools, 1)
    with pytest.raises(ValueError, match="no qualified candidate"):  # too few pools for dEO: the shared rule
        tables.pairwise_study_points(answers[answers["round"] < 2], pools[pools["round"] < 2], 1)
    with pytest.raises(ValueError, match="reference group"):
        tables.pairwise_study_points(answers, pools, 1, reference="Nobody")


def test_clear_tables(tmp_path, candidates):
    engine = StandIn()
    runs.pointwise_table([PAPER], candidates, root=tmp_path, engine_for=lambda s: engine)
    removed = catalog.clear_tables([PAPER, DIRECT], ["resume_pointwise", "resume_pairwise"], tmp_path)
    assert removed == [catalog.store_for(parse_system(PAPER), "resume_pointwise", tmp_path).path]
    assert not removed[0].exists()
    runs.pointwise_table([PAPER], candidates, root=tmp_path, engine_for=lambda s: engine)
    assert engine.pointwise_calls == 2 * 48, "a cleared table is scored again"
    with pytest.raises(ValueError, match="refuses the committed tables"):
        catalog.clear_tables([PAPER], "resume_pointwise", catalog.scores_dir())
    with pytest.raises(ValueError, match="unknown task"):
        catalog.clear_tables([PAPER], "essays", tmp_path)


# ------------------------------------------------------------------------------------------------ provenance


def test_provenance_table(tmp_path, candidates):
    assert catalog.provenance_table(tmp_path / "not-yet").empty
    engine = StandIn()
    runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, engine_for=lambda s: engine,
                          command="python make_it.py")
    prov = catalog.provenance_table(tmp_path)
    assert list(prov.columns) == list(catalog.PROVENANCE_COLUMNS)
    assert sorted(prov["system"]) == [DIRECT, PAPER]
    assert (prov["rows"] == 48).all() and (prov["runs"] == 1).all() and (prov["elapsed_s"] >= 0).all()
    assert set(prov["command"]) == {"python make_it.py"} and set(prov["kind"]) == {"resume_pointwise"}
    assert set(prov["model_key"]) == {"smollm2-135m-instruct@fp32"}
    assert prov["prompt_hash"].str.len().eq(12).all() and prov["prompt_hash"].nunique() == 2
    assert all(json.loads(p)["labels"] == {"No": 0, "Yes": 1} for p in prov["params"])
    assert (prov["cpu_count"] >= 1).all() and prov["python"].str.startswith("3.").all()
    bad = tmp_path / "broken-table"
    bad.mkdir()
    (bad / "provenance.json").write_text("{not json")
    with pytest.raises(ValueError, match="broken-table/provenance.json: not valid JSON"):
        catalog.provenance_table(tmp_path)
    (bad / "provenance.json").write_text('{"kind": "x"}')
    with pytest.raises(ValueError, match=r"lacks the field\(s\) \['model_key'"):
        catalog.provenance_table(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file"):
        catalog.provenance_table(tmp_path / "file")


def test_provenance_of_the_committed_tables():
    prov = catalog.provenance_table()
    assert not prov.empty, "data/scores holds the study's committed tables"
    assert PAPER in set(prov["system"])
    assert prov["command"].str.len().gt(0).all() and (prov["rows"] >= 0).all()  # a table may have just begun


# ------------------------------------------------------------------------------------------------ quality


def test_quality_separation_hand_computed_and_extremes():
    df = pd.DataFrame({"job": "j", "quality": ["high"] * 2 + ["medium"] * 2 + ["low"] * 2,
                       "score": [0.9, 0.4, 0.5, 0.3, 0.5, 0.1]})
    table = tables.quality_separation(df, by=["job"]).set_index(["better", "worse"])
    # high vs low: 0.9>0.5, 0.9>0.1, 0.4<0.5, 0.4>0.1 -> (3 - 1) / 4
    assert table.loc[("high", "low"), "rabbi"] == pytest.approx(0.5)
    assert table.loc[("high", "low"), "p_better"] == pytest.approx(0.75)
    assert table.loc[("high", "low"), "mean_difference"] == pytest.approx(0.65 - 0.3)
    # medium vs low: 0.5=0.5 (tie, 0), 0.5>0.1, 0.3<0.5, 0.3>0.1 -> (2 - 1) / 4
    assert table.loc[("medium", "low"), "rabbi"] == pytest.approx(0.25)
    perfect = df.assign(score=df["quality"].map({"high": 3.0, "medium": 2.0, "low": 1.0}))
    assert (tables.quality_separation(perfect, by=[])["rabbi"] == 1.0).all()
    reversed_ = perfect.assign(score=-perfect["score"])
    assert (tables.quality_separation(reversed_, by=[])["p_better"] == 0.0).all()


def test_quality_separation_errors():
    df = pd.DataFrame({"quality": ["high", "low"], "score": [1.0, 0.0]})
    with pytest.raises(ValueError, match="no 'medium' résumés"):
        tables.quality_separation(df, by=[])
    with pytest.raises(ValueError, match="unknown qualities"):
        tables.quality_separation(df.assign(quality=["top", "low"]), by=[])
    with pytest.raises(ValueError, match="has no column"):
        tables.quality_separation(df, by=["system"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=6, max_size=30), st.integers(0, 10**6))
def test_quality_separation_is_antisymmetric_in_the_scores(values, seed):
    n = len(values)
    qualities = np.array(list(D.QUALITIES) * (n // 3 + 1))[:n]
    np.random.default_rng(seed).shuffle(qualities)
    if len(set(qualities)) < 3:
        return
    df = pd.DataFrame({"quality": qualities, "score": values})
    up = tables.quality_separation(df, by=[])
    down = tables.quality_separation(df.assign(score=-df["score"]), by=[])
    assert np.allclose(up["rabbi"], -down["rabbi"])
    assert up["p_better"].between(0, 1).all()


# ------------------------------------------------------------------------------------------------ decisions


def _scored(candidates: pd.DataFrame, seed: int, systems=("s1", "s2")) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = [candidates.assign(system=s, score=rng.random(len(candidates))) for s in systems]
    return pd.concat(frames, ignore_index=True)


def test_selection_rates_match_the_gaps_of_simulate():
    cands = D.candidate_table(["retail", "hr_specialist"], names_per_group=2, seed=0)
    scores = _scored(cands, 1)
    rates = tables.pool_selection_table(scores, [1, 2], 300, 7)
    gaps = tables.allocation_table(scores, [1, 2], 300, 7)
    assert len(rates) == 2 * 2 * 2 * 8 and len(gaps) == 2 * 2 * 2 * 7
    ref = rates[rates["group"] == D.REFERENCE_GROUP].set_index(["system", "job", "k"])
    merged = gaps.merge(rates, on=["system", "job", "k", "group"])
    merged = merged.join(ref[["phi", "psi"]].rename(columns=lambda c: c + "_ref"), on=["system", "job", "k"])
    assert np.allclose(merged["phi_x"], merged["phi_y"])
    assert np.allclose(merged["phi_y"] - merged["phi_ref"], merged["dDP"])
    assert np.allclose(merged["psi_y"] - merged["psi_ref"], merged["dEO"])
    # the table of one simulate call per system, value for value, with the by columns in front
    direct = simulate(scores[scores["system"] == "s2"].reset_index(drop=True), "score", [1, 2], D.REFERENCE_GROUP,
                      300, 7, by="job")
    pd.testing.assert_frame_equal(gaps[gaps["system"] == "s2"].drop(columns="system").reset_index(drop=True), direct,
                                  check_exact=True)
    assert (rates["appearances"] == 300).all() and (rates["qualified_appearances"] <= 300).all()
    # the gaps from rates already at hand (the audit report draws its pools once) are allocation_table's
    pd.testing.assert_frame_equal(tables.reference_gaps(rates), gaps, check_exact=True)
    with pytest.raises(ValueError, match=r"rates has no column\(s\) \['psi'\]"):
        tables.reference_gaps(rates.drop(columns="psi"))


def test_allocation_table_names_a_missing_reference_and_a_missing_score():
    scores = _scored(D.candidate_table(["retail"], names_per_group=1, seed=0), 2)
    with pytest.raises(ValueError, match="reference group 'Nobody' is not in column 'group'"):
        tables.allocation_table(scores, 1, 20, 0, reference="Nobody")
    without = scores[(scores["system"] == "s1") | (scores["group"] != D.REFERENCE_GROUP)]
    with pytest.raises(ValueError, match=r"has no candidate \(column 'group'\) in the cells \[\{'system': 's2'"):
        tables.allocation_table(without, 1, 20, 0)
    holed = scores.assign(score=scores["score"].where(scores["group"] != D.REFERENCE_GROUP))  # drawn every round
    with pytest.raises(ValueError, match="column 'score' is NaN for candidates in the pools of cell"):
        tables.allocation_table(holed, 1, 20, 0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 7), st.booleans())
def test_every_round_fills_k_seats(seed, k, coarse):
    cands = D.candidate_table(["retail"], names_per_group=1, seed=0)
    scores = _scored(cands, seed, systems=("s",))
    if coarse:  # few distinct scores: many ties at the cut
        scores["score"] = (scores["score"] * 3).round()
    rates = tables.pool_selection_table(scores, k, 50, seed)
    totals = rates.groupby(["system", "job", "k"])["phi"].sum()
    assert np.allclose(totals, k)
    assert rates["phi"].between(0, 1).all() and rates["psi"].between(0, 1).all()
    assert rates["tied_rounds"].between(0, 50).all()
    if not coarse:
        assert (rates["tied_rounds"] == 0).all()


def test_systems_share_the_pools_and_ties_are_counted():
    cands = D.candidate_table(["retail"], names_per_group=2, seed=0)
    scores = _scored(cands, 3)
    same = scores.assign(score=np.tile(scores.loc[scores["system"] == "s1", "score"].to_numpy(), 2))
    rates = tables.pool_selection_table(same, 2, 200, 5)
    a, b = (rates[rates["system"] == s].drop(columns="system").reset_index(drop=True) for s in ("s1", "s2"))
    pd.testing.assert_frame_equal(a, b)
    flat = scores.assign(score=0.5)
    tied = tables.pool_selection_table(flat, 2, 40, 0)
    assert (tied["tied_rounds"] == 40).all() and np.allclose(tied["phi"], 2 / 8)


def test_clear_tables_of_a_served_model(tmp_path, candidates):
    served = StandIn("tiny-served")
    runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, served=served)
    removed = catalog.clear_tables([PAPER, DIRECT], "resume_pointwise", tmp_path, served=served)
    assert len(removed) == 2 and not any(p.exists() for p in removed)
    assert catalog.provenance_table(tmp_path).empty


def test_resolve_scores_root(tmp_path):
    from allocbias.book import repo_root

    assert catalog.resolve_scores_root("") == catalog.scores_dir()
    assert catalog.resolve_scores_root("build/x") == repo_root() / "build" / "x"
    assert catalog.resolve_scores_root(str(tmp_path)) == tmp_path
    with pytest.raises(ValueError, match="scores_root must be a path string"):
        catalog.resolve_scores_root(None)


def test_lazy_engines_load_once_and_only_when_a_row_is_missing(tmp_path, candidates):
    made = []

    def factory(system):
        made.append(system.id)
        return StandIn()

    engines: dict[str, runs.LazyEngine] = {}

    def engine_for(system):
        return engines.setdefault(system.model_key, runs.LazyEngine(system, factory=factory))

    runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, engine_for=engine_for)
    pools = items.pairwise_pools(candidates, 1, 0)
    runs.pairwise_table([PAPER], pools, root=tmp_path, engine_for=engine_for)
    assert made == [PAPER], "one model and precision: one engine for both wordings and both tasks"
    engines.clear()
    runs.pointwise_table([PAPER, DIRECT], candidates, root=tmp_path, engine_for=engine_for)
    runs.pairwise_table([PAPER], pools, root=tmp_path, engine_for=engine_for)
    assert made == [PAPER] and not any(e.loaded for e in engines.values()), "complete tables load nothing"
    with pytest.raises(ValueError, match="system must be a System"):
        runs.LazyEngine(PAPER)


def test_study_scores_reads_local_and_served_tables_and_names_what_is_missing(tmp_path):
    class Served:  # a stand-in OpenAI-compatible engine: P(Yes) = 0.7 for everybody
        model, prefill, top_logprobs, extra_body = "my-model", "vllm", 20, {}

        def pointwise(self, prompts, labels, **kw):
            return [{"score": 0.7, "label_mass": 1.0, "p_No": 0.3, "p_Yes": 0.7, "n_tokens": 9} for _ in prompts]

    class Half:
        def pointwise(self, prompts, labels, **kw):
            return [{"score": 0.5, "label_mass": 1.0, "p_No": 0.5, "p_Yes": 0.5, "n_tokens": 9} for _ in prompts]

    cands = D.candidate_table(["retail"], names_per_group=1)
    runs.pointwise_table(["smollm2-fp32-paper"], cands, root=tmp_path, engine_for=lambda s: Half())
    runs.score("resume_pointwise", cands, served=Served(), wording="direct", root=tmp_path)
    table = catalog.study_scores(["smollm2-fp32-paper", "my-model-served-direct"], jobs=["retail"],
                               names_per_group=1, root=tmp_path)
    assert table.groupby("system")["score"].max().to_dict() == {"my-model-served-direct": 0.7,
                                                                "smollm2-fp32-paper": 0.5}
    assert set(table.loc[table["system"] == "my-model-served-direct", "precision"]) == {"server"}
    with pytest.raises(ValueError, match=r"smollm2-fp32-direct.*lacks 48 of the 48.*score_study.py"):
        catalog.study_scores(["smollm2-fp32-direct"], jobs=["retail"], names_per_group=1, root=tmp_path)
    with pytest.raises(ValueError, match=r"lacks \d+ of the 96"):
        catalog.study_scores(["smollm2-fp32-paper"], jobs=["retail"], names_per_group=2, root=tmp_path)
    with pytest.raises(ValueError, match="no stored pointwise table of the served model 'other'"):
        catalog.study_scores(["other-served-paper"], jobs=["retail"], names_per_group=1, root=tmp_path)
    with pytest.raises(ValueError, match="more than once"):
        catalog.study_scores(["smollm2-fp32-paper"] * 2, jobs=["retail"], names_per_group=1, root=tmp_path)


def test_study_points_has_one_row_per_system_job_group_and_k():
    cands = D.candidate_table(["retail", "hr_specialist"], names_per_group=2)
    rng = np.random.default_rng(0)
    scores = pd.concat([cands.assign(system=s, score=rng.random(len(cands))) for s in ("a", "b")], ignore_index=True)
    points = tables.study_points(scores, [1, 2], 100, 0)
    assert len(points) == 2 * 2 * 7 * 2
    assert points.groupby(["system", "job", "group"])["rabbi"].nunique().eq(1).all()  # metrics do not depend on k
    assert {"dDP", "dEO", "rabbi_qualified", "avg_gap", "jsd", "emd"} <= set(points.columns)
