"""Systems for models that are not in the study: a local Hugging Face folder, a ``.gguf`` file, a served model.

The study's systems (:class:`allocbias.scoring.systems.System`) name a model of :data:`allocbias.scoring.models.REGISTRY`. Auditing
another model must need no source edit, so this module derives a system from what the user points at:

``UserSystem``
    a model folder (``config.json`` + weights) or a ``.gguf`` file. Its id is ``<name>-<precision>-<wording>``
    where ``<name>`` is the folder or file name (lower-cased, runs of other characters than ``a-z0-9._-`` replaced
    by ``_``); its store model key is ``local:<name>-<fingerprint[:16]>@<precision>``, so two different weights
    never share a score table even when their folders have the same name, and re-saving the same weights
    elsewhere finds the table again. The fingerprint is the one :func:`allocbias.scoring.models.load_model` records as
    ``source_sha256``:

    - ``.gguf`` file: ``sha256(file)``;
    - folder: ``sha256`` over ``config.json`` and every ``*.safetensors`` / ``*.bin`` file, in that order
      (sorted names), of ``name + sha256(file)``.

``ServedSystem``
    a model behind an OpenAI-compatible server (``--base-url URL --model NAME``): id
    :func:`allocbias.scoring.systems.served_system_id` (``<NAME>-served-<wording>``), model key ``openai:<NAME>``.

Both are :class:`~allocbias.scoring.systems.System` objects, so every function of the study that takes a system
(:mod:`allocbias.scoring.catalog`, :mod:`allocbias.scoring.runs`) takes them. :func:`resolve_system` turns a ``--model`` argument into the right kind and explains in one
sentence what is wrong with an argument that names no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import systems
from .models import file_sha256, folder_fingerprint, folder_weights
from .systems import System

__all__ = ["ServedSystem", "UserSystem", "model_fingerprint", "resolve_system", "system_label"]

_NAME = re.compile(r"[^a-z0-9._-]+")



def model_fingerprint(path: str | Path) -> str:
    """The content hash of a model folder or ``.gguf`` file (see the module docstring for the recipe).

    Raises ``ValueError`` naming the path when it is neither a ``.gguf`` file nor a folder with ``config.json``
    and weights.

    >>> import hashlib, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "toy.gguf"
    >>> _ = f.write_bytes(b"GGUF")
    >>> model_fingerprint(f) == hashlib.sha256(b"GGUF").hexdigest()
    True
    """
    path = Path(path).expanduser()
    if path.is_file():
        if path.suffix != ".gguf":
            raise ValueError(
                f"{path} is a file but not a .gguf model: pass a .gguf file or a Hugging Face model folder"
            )
        return file_sha256(path)
    if not path.is_dir():
        raise ValueError(f"{path} does not exist")
    if not (path / "config.json").is_file():
        raise ValueError(
            f"folder {path} is not a model: it has no config.json; pass a Hugging Face model folder "
            "(config.json, weights, tokenizer), a .gguf file or a registry name"
        )
    if not folder_weights(path):
        raise ValueError(f"folder {path} is not a model: it has no *.safetensors or *.bin weights")
    return folder_fingerprint(path)


def _load_error(path: Path, exc: BaseException) -> str:
    """One line saying which model could not be loaded, why (the first line of the cause, shortened) and what
    to do."""
    cause = " ".join(str(exc).strip().splitlines()[:1]).strip() or type(exc).__name__
    cause = cause if len(cause) <= 160 else cause[:157] + "..."
    if path.suffix == ".gguf":
        hint = ("check that the file is a complete GGUF model of an architecture transformers can read "
                "(download it again if it is truncated)")
        what = "the .gguf file"
    else:
        hint = ("check that it is a complete Hugging Face causal language model saved with save_pretrained "
                "(config.json, weights, tokenizer files, a chat template)")
        what = "the model folder"
    return f"{what} {path} cannot be loaded ({type(exc).__name__}: {cause}): {hint}"


def _short_name(path: Path) -> str:
    stem = path.stem if path.suffix == ".gguf" else path.name
    name = _NAME.sub("_", stem.lower()).strip("_.-")
    return name or "model"


@dataclass(frozen=True)
class UserSystem(System):
    """A local model that is not in the registry, at a precision, asked with a wording.

    ``model`` is the path (folder or ``.gguf``) as given; ``fingerprint`` its :func:`model_fingerprint`.

    >>> s = UserSystem("/models/My-Model.gguf", "fp32", "paper", fingerprint="ab" * 32)
    >>> s.id, s.model_key
    ('my-model-fp32-paper', 'local:my-model-abababababababab@fp32')
    """

    fingerprint: str = ""

    def __post_init__(self) -> None:  # the registry check of System does not apply
        if self.precision not in systems.PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; known: {list(systems.PRECISIONS)}")
        if self.wording not in systems.WORDINGS:
            raise ValueError(f"unknown wording {self.wording!r}; known: {list(systems.WORDINGS)}")
        if not re.fullmatch(r"[0-9a-f]{64}", self.fingerprint):
            raise ValueError(f"fingerprint must be 64 hex digits (model_fingerprint), got {self.fingerprint!r}")

    @property
    def name(self) -> str:
        """The short name in the id and the model key."""
        return _short_name(Path(self.model))

    @property
    def id(self) -> str:
        return f"{self.name}-{self.precision}-{self.wording}"

    @property
    def model_key(self) -> str:
        return f"local:{self.name}-{self.fingerprint[:16]}@{self.precision}"

    def load(self, device: str = "cpu") -> Any:
        """Load the weights with :func:`allocbias.scoring.models.load_model`; the metadata gains ``path`` (as given) and
        must agree with the fingerprint (weights changed since the audit started raise ``ValueError``)."""
        from .models import load_model

        try:
            loaded = load_model(self.model, dtype="float32", quantization=systems.PRECISIONS[self.precision],
                                device=device)
        except (KeyboardInterrupt, ModuleNotFoundError):
            raise
        except Exception as exc:  # transformers' errors run to kilobytes and may not name the file: one line
            raise ValueError(_load_error(Path(self.model).expanduser(), exc)) from exc
        if loaded.metadata.get("source_sha256") != self.fingerprint:
            raise ValueError(
                f"the weights under {self.model} changed since their fingerprint was taken "
                f"({self.fingerprint[:16]} vs {str(loaded.metadata.get('source_sha256'))[:16]}); run again"
            )
        loaded.metadata["path"] = str(Path(self.model).expanduser().resolve())
        return loaded


@dataclass(frozen=True)
class ServedSystem(System):
    """A model behind an OpenAI-compatible server: ``model`` is the served model name, precision ``"server"``.

    >>> s = ServedSystem("qwen2.5-7b", "server", "direct")
    >>> s.id, s.model_key
    ('qwen2.5-7b-served-direct', 'openai:qwen2.5-7b')
    """

    def __post_init__(self) -> None:
        if self.precision != "server":
            raise ValueError(f"a served system's precision is 'server' (the server decides), got {self.precision!r}")
        systems.served_system_id(self.model, self.wording)  # validates the name and the wording

    @property
    def id(self) -> str:
        return systems.served_system_id(self.model, self.wording)

    @property
    def model_key(self) -> str:
        return f"openai:{self.model}"

    def load(self, device: str = "cpu") -> Any:
        raise ValueError(f"{self.id} is served: score it through allocbias.scoring.serving.OpenAIEngine, not load()")


def resolve_system(model: str, precision: str = "fp32", wording: str = "paper", *,
                   served: bool = False) -> System:
    """The system a ``--model`` argument names: a study system (registry name), a :class:`UserSystem` (folder or
    ``.gguf``) or, with ``served``, a :class:`ServedSystem`. ``ValueError`` says in one sentence what is wrong.

    >>> resolve_system("smollm2-135m-instruct").id
    'smollm2-fp32-paper'
    >>> resolve_system("gpt-7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown model 'gpt-7': not a registry name (gemma3-270m, smollm2-135m-instruct), ...
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError("--model is empty: name a registry model, a model folder, a .gguf file or a served model")
    if served:
        return ServedSystem(model, "server", wording)
    if model in systems.MODELS:
        return System(model, precision, wording)
    path = Path(model).expanduser()
    if path.exists():
        return UserSystem(str(path), precision, wording, fingerprint=model_fingerprint(path))
    from .models import known_models

    raise ValueError(
        f"unknown model {model!r}: not a registry name ({', '.join(known_models())}), nor an existing model folder "
        "or .gguf file; for a model behind a server add --base-url URL"
    )


def system_label(system: System) -> dict[str, str]:
    """The columns that describe a system in the audit's tables: ``system`` (id), ``model``, ``precision``,
    ``wording`` (:data:`allocbias.scoring.systems.SYSTEM_COLUMNS`), ``model`` being the registry name, path or served name.

    >>> system_label(System("gemma3-270m"))
    {'system': 'gemma3-fp32-paper', 'model': 'gemma3-270m', 'precision': 'fp32', 'wording': 'paper'}
    """
    return {"system": system.id, "model": system.model, "precision": system.precision, "wording": system.wording}
