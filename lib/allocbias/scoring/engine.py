"""Pointwise, pairwise and listwise scoring with a local transformers model on the CPU.

The engine (:class:`LocalEngine`) has three methods, shared with the OpenAI-compatible backend in
``allocbias.scoring.serving``:

``pointwise(prompts, labels)``
    score(a) = sum_y P_n(y | prompt(a)) * gamma_y, with P_n the next-token probabilities of the label
    tokens renormalised over the label set. One forward pass per prompt, no ``generate``.
``generate(prompts, max_new_tokens=...)``
    greedy answers, capped, for the pairwise and listwise prompts.
``describe()``
    provenance: the model's metadata and the engine's parameters.

Speed comes from computing each token once. Prompts that share a long token prefix (the system
prompt with the job ad) are grouped (:func:`plan_groups`); the prefix runs once per group and its
key/value cache is copied to every batch of suffixes (the candidates). Suffixes are sorted by length
and batched, so padding is minimal. Pointwise batches are right-padded: with a causal mask a real
token never sees a pad, positions stay contiguous, and the answer's logits are read at each row's last
real token (``logits_to_keep`` holds only those positions). Greedy generation left-pads the suffixes
(between the prefix and the suffix) with explicit position ids and attention mask; for models with
sliding-window attention the holes would shift the window, so there generation pads whole prompts
on the left instead and does not share prefixes.

Label variants. A label's probability is the sum over its surface forms that are single tokens of the
loaded tokenizer (:func:`label_variants`): the label as given, lower case and capitalised, each with
and without a leading space ("Yes", " Yes", "yes", " yes"). All-capitals forms ("YES") are left out:
tokenizers split them unevenly between labels (SmolLM2: "YES" is two tokens, "NO" one), which would
favour one label. Forms that are several tokens are dropped; :meth:`LocalEngine.label_tokens`
reports the variants used per label.
"""

from __future__ import annotations

import copy
import functools
import logging
import math
import re
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..audited.name_matching import fold_name, name_spans
from ..audited.prompts import label_variants

logger = logging.getLogger(__name__)

__all__ = [
    "LocalEngine",
    "PromptGroup",
    "label_score",
    "label_token_ids",
    "label_variants",  # allocbias.audited.prompts.label_variants, the rule of both engines
    "parse_pair_answer",
    "plan_batches",
    "plan_groups",
    "score_listwise",
    "score_pairwise",
    "tokens_computed",
]

LABEL_VARIANT_POLICY = (
    "label as given, lower case and capitalised, each with and without a leading space; "
    "single-token forms only; all-capitals forms excluded"
)


# ----------------------------------------------------------------------------------------------
# Labels
# ----------------------------------------------------------------------------------------------


def label_token_ids(tokenizer: Any, labels: Sequence[str]) -> dict[str, dict[str, int]]:
    """Map each label to ``{variant: token id}`` over its single-token variants.

    Raises ``ValueError`` if a label has no single-token variant or two labels share a token.
    """
    out: dict[str, dict[str, int]] = {}
    owner: dict[int, str] = {}
    for label in labels:
        found: dict[str, int] = {}
        tried = []
        for variant in label_variants(label):
            ids = tokenizer.encode(variant, add_special_tokens=False)
            tried.append(f"{variant!r}->{ids}")
            if len(ids) == 1 and ids[0] not in found.values():
                found[variant] = int(ids[0])
        if not found:
            raise ValueError(f"label {label!r} has no single-token variant in this tokenizer: {', '.join(tried)}")
        for variant, token in found.items():
            if token in owner:
                raise ValueError(f"labels {owner[token]!r} and {label!r} share token {token} ({variant!r})")
            owner[token] = label
        out[label] = found
    return out


def label_score(log_mass: np.ndarray, gammas: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointwise score from the log probability mass of each label.

    ``log_mass[i, j] = log sum_{v in variants(y_j)} P(v | prompt i)``. Then
    ``label_mass_i = sum_j exp(log_mass[i, j])``, ``P_n(y_j) = exp(log_mass[i, j]) / label_mass_i``
    (computed with log-sum-exp, so a tiny mass never gives NaN) and
    ``score_i = sum_j P_n(y_j) * gamma_j``.

    Returns ``(score, p, label_mass)`` with shapes (n,), (n, L), (n,).

    Examples
    --------
    >>> s, p, m = label_score(np.log([[0.1, 0.3]]), np.array([0.0, 1.0]))
    >>> round(float(s[0]), 12), p[0].round(12).tolist(), round(float(m[0]), 12)
    (0.75, [0.25, 0.75], 0.4)
    """
    log_mass = np.asarray(log_mass, dtype=np.float64)
    gammas = np.asarray(gammas, dtype=np.float64)
    if log_mass.ndim != 2 or log_mass.shape[1] != gammas.shape[0] or gammas.shape[0] < 2:
        raise ValueError(f"log_mass must be (n, L) with L = len(gammas) >= 2; got {log_mass.shape}, {gammas.shape}")
    if not np.all(np.isfinite(gammas)):
        raise ValueError("gammas must be finite")
    top = log_mass.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise ValueError("every prompt needs a finite log mass on at least one label")
    weights = np.exp(log_mass - top)
    total = weights.sum(axis=1, keepdims=True)
    p = weights / total
    return p @ gammas, p, np.exp(top[:, 0] + np.log(total[:, 0]))


# ----------------------------------------------------------------------------------------------
# Prefix groups
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptGroup:
    """Prompts whose first ``prefix_len`` tokens are identical (``prefix_len = 0``: no sharing)."""

    prefix_len: int
    members: tuple[int, ...]


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0]) if diff.size else n


def plan_groups(
    token_ids: Sequence[Sequence[int]], *, share_prefix: bool = True, min_prefix_tokens: int = 32
) -> list[PromptGroup]:
    """Group prompts by shared token prefix so that the fewest tokens are computed.

    Sort the sequences lexicographically; the longest common prefix (LCP) of a run of neighbours is
    the minimum of their adjacent LCPs. A run computed as one group costs
    ``p + sum_i (len_i - p)`` tokens with ``p = min(LCP, min len - 1)`` (each suffix keeps >= 1 token
    for its logits). Recursively, a run is either one group or split where its adjacent LCP is
    smallest (the Cartesian tree of the LCP array), whichever computes fewer tokens. Groups with
    ``p < min_prefix_tokens`` (and single prompts) are pooled into one group with ``prefix_len = 0``.

    Examples
    --------
    >>> plan_groups([[1, 2, 3, 9], [5, 6], [1, 2, 3, 8]], min_prefix_tokens=2)
    [PromptGroup(prefix_len=3, members=(0, 2)), PromptGroup(prefix_len=0, members=(1,))]
    """
    if min_prefix_tokens < 1:
        raise ValueError(f"min_prefix_tokens must be >= 1, got {min_prefix_tokens}")
    n = len(token_ids)
    lengths = [len(t) for t in token_ids]
    if any(length == 0 for length in lengths):
        raise ValueError(f"prompt {lengths.index(0)} has no tokens")
    if n == 0:
        return []
    if not share_prefix or n == 1:
        return [PromptGroup(0, tuple(range(n)))]
    order = sorted(range(n), key=lambda i: (list(token_ids[i]), i))
    adj = np.array([_lcp(token_ids[order[k]], token_ids[order[k + 1]]) for k in range(n - 1)])
    lens = np.array([lengths[i] for i in order])
    csum = np.concatenate([[0], np.cumsum(lens)])

    # Post-order over the Cartesian tree of `adj`, with an explicit stack (no recursion limit).
    best: dict[tuple[int, int], tuple[int, list[tuple[int, int, int]]]] = {}
    stack: list[tuple[int, int, bool]] = [(0, n, False)]
    children: dict[tuple[int, int], list[tuple[int, int]]] = {}
    while stack:
        lo, hi, expanded = stack.pop()
        if hi - lo == 1:
            best[(lo, hi)] = (int(lens[lo]), [(lo, hi, 0)])
            continue
        seg = adj[lo : hi - 1]
        v = int(seg.min())
        if not expanded:
            cuts = lo + 1 + np.flatnonzero(seg == v)
            bounds = [lo, *cuts.tolist(), hi]
            kids = [(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1)]
            children[(lo, hi)] = kids
            stack.append((lo, hi, True))
            stack.extend((a, b, False) for a, b in kids)
            continue
        total = int(csum[hi] - csum[lo])
        p = min(v, int(lens[lo:hi].min()) - 1)
        whole = total - (hi - lo - 1) * p if p >= min_prefix_tokens else total
        split_cost = 0
        split_groups: list[tuple[int, int, int]] = []
        for kid in children.pop((lo, hi)):
            cost, groups = best.pop(kid)
            split_cost += cost
            split_groups += groups
        if whole <= split_cost:
            best[(lo, hi)] = (whole, [(lo, hi, p if p >= min_prefix_tokens else 0)])
        else:
            best[(lo, hi)] = (split_cost, split_groups)
    shared, pooled = [], []
    for lo, hi, p in best[(0, n)][1]:
        members = sorted(order[lo:hi])
        if p > 0:
            shared.append(PromptGroup(p, tuple(members)))
        else:
            pooled += members
    shared.sort(key=lambda g: g.members[0])
    if pooled:
        shared.append(PromptGroup(0, tuple(sorted(pooled))))
    return shared


def plan_batches(group: PromptGroup, lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Split a group's members into batches of similar suffix length (sorted, then chunked).

    Examples
    --------
    >>> plan_batches(PromptGroup(2, (0, 1, 2)), [9, 4, 6], batch_size=2)
    [[1, 2], [0]]
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    members = sorted(group.members, key=lambda i: (lengths[i] - group.prefix_len, i))
    return [members[k : k + batch_size] for k in range(0, len(members), batch_size)]


def tokens_computed(groups: Sequence[PromptGroup], lengths: Sequence[int]) -> int:
    """Tokens a plan computes: each prefix once plus every suffix.

    ``sum_g [p_g + sum_{i in g} (len_i - p_g)]`` (``p_g = 0``: whole prompts).

    Examples
    --------
    >>> tokens_computed([PromptGroup(3, (0, 2)), PromptGroup(0, (1,))], [4, 2, 4])
    7
    """
    return int(sum(g.prefix_len + sum(lengths[i] - g.prefix_len for i in g.members) for g in groups))


# ----------------------------------------------------------------------------------------------
# Engine
# ----------------------------------------------------------------------------------------------


class _Progress:
    """tqdm over prompts (ETA, prompts/s) and a throughput line at the end."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        from tqdm import tqdm

        self.enabled, self.desc, self.total = enabled, desc, total
        self.start = time.perf_counter()
        self.bar = tqdm(total=total, desc=desc, unit="prompt", disable=not enabled, file=sys.stderr)

    def update(self, n: int) -> None:
        self.bar.update(n)

    def close(self, tokens: int) -> None:
        self.bar.close()
        seconds = time.perf_counter() - self.start
        rate = self.total / seconds if seconds > 0 else math.inf
        line = (
            f"{self.desc}: {self.total} prompts in {seconds:.1f} s ({rate:.2f} prompts/s, "
            f"{tokens / max(seconds, 1e-9):.0f} tokens/s computed)"
        )
        logger.info(line)
        if self.enabled:
            print(line, file=sys.stderr)


class LocalEngine:
    """Scores chat prompts with a local transformers model (see the module docstring).

    Parameters
    ----------
    model : a :class:`allocbias.scoring.models.LoadedModel`, or a name/path passed to
        :func:`allocbias.scoring.models.load_model` (float32, no quantisation).
    batch_size : default number of prompts (suffixes) per forward pass.
    share_prefix : compute shared prompt prefixes once (see :func:`plan_groups`).
    min_prefix_tokens : shortest prefix worth a separate forward pass.
    low_mass_threshold : a label mass below it is logged as a warning (the model is not answering
        with the labels).
    """

    def __init__(
        self,
        model: Any,
        *,
        batch_size: int = 8,
        share_prefix: bool = True,
        min_prefix_tokens: int = 32,
        low_mass_threshold: float = 0.1,
    ) -> None:
        from .models import LoadedModel, load_model

        if not isinstance(model, LoadedModel):
            model = load_model(model)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.loaded = model
        self.batch_size = int(batch_size)
        self.share_prefix = bool(share_prefix)
        self.min_prefix_tokens = int(min_prefix_tokens)
        self.low_mass_threshold = float(low_mass_threshold)
        tok = model.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else model.model.config.pad_token_id
        self.pad_token_id = int(pad if pad is not None else model.stop_token_ids[0])
        cache_types = getattr(model.model.config.get_text_config(), "layer_types", None) or []
        sliding = getattr(model.model.config.get_text_config(), "sliding_window", None)
        self.device = next(model.model.parameters()).device
        self.sliding_window = bool(sliding) and (
            not cache_types or any(t in ("sliding_attention", "chunked_attention") for t in cache_types)
        )

    # -- helpers --------------------------------------------------------------------------------

    def encode(self, prompts: Sequence[Sequence[Mapping[str, str]]]) -> list[list[int]]:
        """Chat-format and tokenize every prompt (no special tokens added beyond the template's)."""
        from .models import validate_messages

        texts = []
        for i, messages in enumerate(prompts):
            validate_messages(messages, index=i)
            texts.append(self.loaded.format_chat(messages))
        return [list(ids) for ids in self.loaded.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def _batch_and_ids(self, prompts: Sequence[Any], batch_size: int | None, extra: int = 0) -> tuple[int, list]:
        """The batch size to run (``batch_size``, else the engine's; at least 1) and the prompts' token ids, each
        checked to fit the context with ``extra`` new tokens (no ids for no prompts)."""
        bs = self.batch_size if batch_size is None else int(batch_size)
        if bs < 1:
            raise ValueError(f"batch_size must be >= 1, got {bs}")
        if len(prompts) == 0:
            return bs, []
        ids = self.encode(prompts)
        self._check_lengths(ids, extra=extra)
        return bs, ids

    def _check_lengths(self, ids: Sequence[Sequence[int]], extra: int = 0) -> None:
        limit = self.loaded.max_context
        too_long = [(i, len(t)) for i, t in enumerate(ids) if len(t) + extra > limit]
        if too_long:
            shown = ", ".join(f"prompt {i}: {n} tokens" for i, n in too_long[:10])
            more = f" and {len(too_long) - 10} more" if len(too_long) > 10 else ""
            plus = f" + {extra} new tokens" if extra else ""
            raise ValueError(
                f"{len(too_long)} prompt(s) exceed the model's context of {limit} tokens{plus}: {shown}{more}"
            )

    def label_tokens(self, labels: Sequence[str]) -> dict[str, dict[str, int]]:
        """The single-token variants (``{variant: token id}``) summed for each label."""
        return label_token_ids(self.loaded.tokenizer, list(labels))

    def _prefix_cache(self, ids: Sequence[int]) -> Any:
        import torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.loaded.model.config)
        self.loaded.model(
            input_ids=torch.tensor([list(ids)], device=self.device), past_key_values=cache, use_cache=True,
            logits_to_keep=1,
        )
        return cache

    @staticmethod
    def _expand(cache: Any, size: int) -> Any:
        """A cache for a batch of ``size`` rows that all continue the (batch-1) prefix ``cache``.

        Forward passes replace a layer's tensors (``torch.cat``) rather than writing into them, so each
        batch gets a shallow copy whose layers hold zero-copy ``expand`` views of the prefix; the
        prefix itself is never modified. Caches without that layout are deep-copied and repeated.
        """
        from torch import Tensor

        layers = getattr(cache, "layers", None)
        if isinstance(layers, list) and all(
            isinstance(getattr(layer, "keys", None), Tensor) and isinstance(getattr(layer, "values", None), Tensor)
            for layer in layers
        ):
            out = copy.copy(cache)
            out.layers = []
            for layer in layers:
                view = copy.copy(layer)
                view.keys = layer.keys.expand(size, *layer.keys.shape[1:])
                view.values = layer.values.expand(size, *layer.values.shape[1:])
                out.layers.append(view)
            return out
        out = copy.deepcopy(cache)
        if size > 1:
            out.batch_repeat_interleave(size)
        return out

    # -- pointwise ------------------------------------------------------------------------------

    def pointwise(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        labels: Mapping[str, float],
        *,
        batch_size: int | None = None,
        progress: bool = True,
    ) -> list[dict[str, Any]]:
        """Expected label value of the next token for every prompt.

        ``score = sum_y P_n(y) * gamma_y``, ``P_n(y) = m_y / sum_z m_z`` where ``m_y`` is the next-token
        probability summed over the single-token variants of label ``y`` (:func:`label_variants`).

        Returns one dict per prompt, in input order: ``score``, ``label_mass`` (``sum_z m_z``, the raw
        mass on the label set; low means the model is not answering with a label), ``p_<label>``
        (normalised) and ``n_tokens`` (prompt length). Raises ``ValueError`` before any computation if
        a prompt exceeds the model's context.
        """
        import torch

        if not isinstance(labels, Mapping) or len(labels) < 2:
            raise ValueError("labels must map at least two label strings to their values gamma_y")
        names = list(labels)
        gammas = np.array([float(labels[k]) for k in names])
        if not np.all(np.isfinite(gammas)):
            raise ValueError(f"label values must be finite, got {dict(labels)}")
        variants = self.label_tokens(names)
        bs, ids = self._batch_and_ids(prompts, batch_size)
        if not ids:
            return []
        lengths = [len(t) for t in ids]
        groups = plan_groups(ids, share_prefix=self.share_prefix, min_prefix_tokens=self.min_prefix_tokens)
        computed = tokens_computed(groups, lengths)
        logger.info(
            "pointwise: %d prompts, %d groups, %d of %d tokens computed; label variants %s",
            len(ids), len(groups), computed, sum(lengths), variants,
        )
        dev = self.device
        label_index = [torch.tensor(list(variants[k].values()), device=dev) for k in names]
        log_mass = np.empty((len(ids), len(names)))
        bar = _Progress(len(ids), "pointwise", progress)
        model = self.loaded.model
        with torch.inference_mode():
            for group in groups:
                p = group.prefix_len
                cache = self._prefix_cache(ids[group.members[0]][:p]) if p else None
                for batch in plan_batches(group, lengths, bs):
                    suffix = [ids[i][p:] for i in batch]
                    width = max(len(s) for s in suffix)
                    input_ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
                    mask = torch.zeros((len(batch), p + width), dtype=torch.long)
                    mask[:, :p] = 1
                    for r, s in enumerate(suffix):
                        input_ids[r, : len(s)] = torch.tensor(s)
                        mask[r, p : p + len(s)] = 1
                    last = torch.tensor([len(s) - 1 for s in suffix], device=dev)
                    keep = torch.unique(last)  # sorted
                    out = model(
                        input_ids=input_ids.to(dev),
                        attention_mask=mask.to(dev),
                        past_key_values=self._expand(cache, len(batch)) if p else None,
                        use_cache=bool(p),
                        logits_to_keep=keep,
                    )
                    logits = out.logits[torch.arange(len(batch), device=dev), torch.searchsorted(keep, last)]
                    logp = torch.log_softmax(logits.float(), dim=-1)
                    masses = torch.stack([torch.logsumexp(logp[:, j], dim=-1) for j in label_index], dim=1)
                    log_mass[list(batch)] = masses.double().cpu().numpy()
                    bar.update(len(batch))
        bar.close(computed)
        scores, probs, mass = label_score(log_mass, gammas)
        low = np.flatnonzero(mass < self.low_mass_threshold)
        if low.size:
            logger.warning(
                "pointwise: %d of %d prompts put less than %.2f probability on the labels %s (min %.3g)",
                low.size, len(ids), self.low_mass_threshold, names, float(mass.min()),
            )
        results = []
        for i in range(len(ids)):
            row: dict[str, Any] = {"score": float(scores[i]), "label_mass": float(mass[i])}
            row.update({f"p_{k}": float(probs[i, j]) for j, k in enumerate(names)})
            row["n_tokens"] = lengths[i]
            results.append(row)
        return results

    # -- generation -----------------------------------------------------------------------------

    def generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        *,
        max_new_tokens: int,
        batch_size: int | None = None,
        progress: bool = True,
    ) -> list[str]:
        """Greedy answers (argmax at every step), at most ``max_new_tokens`` tokens each.

        An answer ends at the first stop token (EOS or end of turn, not included); special tokens are
        dropped from the text, which is otherwise returned raw (not stripped). Shared prefixes are
        computed once unless the model has sliding-window attention (see the module docstring).
        """
        import torch
        from transformers import DynamicCache

        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        bs, ids = self._batch_and_ids(prompts, batch_size, extra=max_new_tokens)
        if not ids:
            return []
        lengths = [len(t) for t in ids]
        share = self.share_prefix and not self.sliding_window
        groups = plan_groups(ids, share_prefix=share, min_prefix_tokens=self.min_prefix_tokens)
        dev = self.device
        stops = torch.tensor(self.loaded.stop_token_ids, device=dev)
        answers: list[str] = [""] * len(ids)
        bar = _Progress(len(ids), "generate", progress)
        model, tok = self.loaded.model, self.loaded.tokenizer
        with torch.inference_mode():
            for group in groups:
                p = group.prefix_len
                cache = self._prefix_cache(ids[group.members[0]][:p]) if p else None
                for batch in plan_batches(group, lengths, bs):
                    n = len(batch)
                    suffix = [ids[i][p:] for i in batch]
                    width = max(len(s) for s in suffix)
                    input_ids = torch.full((n, width), self.pad_token_id, dtype=torch.long)
                    mask = torch.zeros((n, p + width), dtype=torch.long)
                    mask[:, :p] = 1
                    for r, s in enumerate(suffix):
                        input_ids[r, width - len(s) :] = torch.tensor(s)
                        mask[r, p + width - len(s) :] = 1
                    input_ids, mask = input_ids.to(dev), mask.to(dev)
                    positions = p + (mask[:, p:].cumsum(dim=1) - 1).clamp(min=0)
                    past = self._expand(cache, n) if p else DynamicCache(config=model.config)
                    out = model(
                        input_ids=input_ids,
                        attention_mask=mask,
                        position_ids=positions,
                        past_key_values=past,
                        use_cache=True,
                        logits_to_keep=1,
                    )
                    new = torch.empty((n, max_new_tokens), dtype=torch.long, device=dev)
                    done = torch.zeros(n, dtype=torch.bool, device=dev)
                    step = 0
                    while True:
                        token = out.logits[:, -1].argmax(dim=-1)
                        new[:, step] = token
                        done |= torch.isin(token, stops)
                        step += 1
                        if step == max_new_tokens or bool(done.all()):
                            break
                        mask = torch.cat([mask, torch.ones((n, 1), dtype=torch.long, device=dev)], dim=1)
                        positions = positions[:, -1:] + 1
                        out = model(
                            input_ids=token[:, None],
                            attention_mask=mask,
                            position_ids=positions,
                            past_key_values=past,
                            use_cache=True,
                            logits_to_keep=1,
                        )
                    rows = new[:, :step].tolist()
                    for r, i in enumerate(batch):
                        row = rows[r]
                        cut = next((k for k, t in enumerate(row) if t in self.loaded.stop_token_ids), len(row))
                        answers[i] = tok.decode(row[:cut], skip_special_tokens=True)
                    bar.update(n)
        bar.close(tokens_computed(groups, lengths))
        return answers

    # -- provenance -----------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Provenance: the model's metadata and the engine's parameters (deterministic, no paths)."""
        return {
            "engine": "local-transformers",
            "model": dict(self.loaded.metadata),
            "parameters": {
                "batch_size": self.batch_size,
                "share_prefix": self.share_prefix,
                "min_prefix_tokens": self.min_prefix_tokens,
                "low_mass_threshold": self.low_mass_threshold,
                "label_variants": LABEL_VARIANT_POLICY,
                "decoding": "greedy",
                "stop_token_ids": list(self.loaded.stop_token_ids),
                "max_context": self.loaded.max_context,
            },
        }


# ----------------------------------------------------------------------------------------------
# Pairwise and listwise
# ----------------------------------------------------------------------------------------------

#: Words that mark a tie when they come before any candidate's name ("Both candidates are equally
#: qualified", "Either would do", "Neither ..."), and the subset that marks a tie anywhere once both
#: names have been mentioned ("John Smith and Mary Jones are equally qualified").
TIE_WORDS_BEFORE_NAMES = ("both", "equally", "equal", "either", "neither", "tie", "tied")
TIE_WORDS_WITH_BOTH_NAMES = ("equally", "equal", "tie", "tied")

_TIE_BEFORE = re.compile(r"(?<!\w)(" + "|".join(TIE_WORDS_BEFORE_NAMES) + r")(?!\w)")
_TIE_BOTH = re.compile(r"(?<!\w)(" + "|".join(TIE_WORDS_WITH_BOTH_NAMES) + r")(?!\w)")


@functools.lru_cache(maxsize=8192)
def _folded_name(name: str) -> str:
    """:func:`allocbias.audited.name_matching.fold_name` of a candidate's name, kept: a table of pairwise answers
    names each of its few hundred candidates thousands of times (13,440 answers in chapter 2)."""
    return fold_name(name)


def _name_keys(name: str, other: str) -> list[str]:
    parts, other_parts = name.split(), set(other.split())
    keys = [name]
    for part in (parts[0], parts[-1]):
        if part not in other_parts and len(part) > 1 and part not in keys:
            keys.append(part)
    return keys


def _first_position(text: str, keys: Sequence[str]) -> float:
    """Where the first of ``keys`` is first mentioned in the folded ``text`` (``inf``: none is)."""
    found = [span[0] for span in name_spans(text, keys, folded=True, hyphenated=True) if span is not None]
    return float(min(found)) if found else math.inf


def parse_pair_answer(answer: str, name_a: str, name_b: str) -> str:
    """Which candidate a pairwise answer picks: ``"a"``, ``"b"``, ``"tie"`` or ``"undetected"``.

    Names are found by :mod:`allocbias.audited.name_matching`, the matcher of every task (whole words,
    case-insensitive, diacritics and apostrophes inside words dropped, quotes and punctuation around a name
    ignored, elisions part of a name). Unlike the other tasks, a hyphen counts as a boundary here ("Bolden" is
    found in "Diaz-Bolden"): the committed pairwise winners were parsed so. A candidate is found by the full
    name, the first name or the last name (a part is used only if the other name does not contain it). Rules,
    in order: (1) a tie word (``both, equally, equal, either, neither, tie, tied``) before any name ->
    tie, and a tie word with no name -> tie; (2) both names present and ``equally/equal/tie/tied``
    anywhere -> tie; (3) otherwise the first name mentioned wins; (4) no name and no tie word ->
    undetected. "Neither" counts as a tie: it states no preference, and the 0.25/0.25 rule is as
    symmetric as "both".

    Examples
    --------
    >>> parse_pair_answer(" Emily Walsh", "Emily Walsh", "Lakisha Washington")
    'a'
    >>> parse_pair_answer("lakisha is the better fit.", "Emily Walsh", "Lakisha Washington")
    'b'
    >>> parse_pair_answer("Both candidates are equally qualified.", "Emily Walsh", "Lakisha Washington")
    'tie'
    >>> parse_pair_answer("Candidate 1", "Emily Walsh", "Lakisha Washington")
    'undetected'
    """
    if not isinstance(answer, str):
        raise ValueError(f"answer must be a string, got {type(answer).__name__}")
    a, b = _folded_name(name_a), _folded_name(name_b)
    if not a or not b:
        raise ValueError(f"candidate names must be non-empty, got {name_a!r} and {name_b!r}")
    if a == b:
        raise ValueError(f"the two candidates have the same name {name_a!r}; the answer cannot tell them apart")
    text = fold_name(answer)
    pa = _first_position(text, _name_keys(a, b))
    pb = _first_position(text, _name_keys(b, a))
    tie = _TIE_BEFORE.search(text)
    first = min(pa, pb)
    if tie is not None and tie.start() < first:
        return "tie"
    if math.isinf(first):
        return "undetected"
    if not math.isinf(pa) and not math.isinf(pb) and _TIE_BOTH.search(text):
        return "tie"
    return "a" if pa < pb else "b"


def score_pairwise(
    engine: Any,
    pairs: pd.DataFrame,
    render: Callable[[Hashable, Hashable, Mapping[str, Any]], list[dict[str, str]]],
    *,
    max_new_tokens: int = 16,
    batch_size: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Ask every pair in both orders and parse the answers.

    ``pairs`` has columns ``a``, ``b`` (candidate ids) and ``name_a``, ``name_b`` (the names the
    answer is parsed for); other columns (job, ...) are carried through. ``render(first, second,
    pair)`` builds the messages presenting candidate ``first`` then ``second``; ``pair`` is the row as
    a dict. Returns one row per prompt (2 per pair): the pair's columns, ``order`` (``"ab"``: a shown
    first, ``"ba"``), ``first``, ``second``, the raw ``answer`` and ``parsed`` (``a``/``b``/``tie``/
    ``undetected``, relative to the pair's a and b, see :func:`parse_pair_answer`).
    """
    required = {"a", "b", "name_a", "name_b"}
    if not isinstance(pairs, pd.DataFrame) or not required <= set(pairs.columns):
        missing = sorted(required - set(getattr(pairs, "columns", [])))
        raise ValueError(f"pairs must be a DataFrame with columns a, b, name_a, name_b; missing {missing}")
    protected = {"order", "first", "second", "answer", "parsed"} & set(pairs.columns)
    if protected:
        raise ValueError(f"pairs must not have the output columns {sorted(protected)}")
    rows, prompts = [], []
    for record in pairs.to_dict("records"):
        for order, first, second in (("ab", record["a"], record["b"]), ("ba", record["b"], record["a"])):
            rows.append({**record, "order": order, "first": first, "second": second})
            prompts.append(render(first, second, record))
    answers = engine.generate(prompts, max_new_tokens=max_new_tokens, batch_size=batch_size, progress=progress)
    out = pd.DataFrame(rows, columns=[*pairs.columns, "order", "first", "second"])
    out["answer"] = answers
    out["parsed"] = [parse_pair_answer(t, r["name_a"], r["name_b"]) for t, r in zip(answers, rows)]
    return out


def score_listwise(
    engine: Any,
    prompts: Sequence[Sequence[Mapping[str, str]]],
    *,
    max_new_tokens: int = 32,
    batch_size: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Raw greedy answers to listwise prompts (e.g. HiringBloomberg's 8 CVs), one row per prompt.

    Columns: ``prompt`` (position in ``prompts``) and ``answer``. Parsing (first name found) belongs
    to the probe's module.
    """
    answers = engine.generate(prompts, max_new_tokens=max_new_tokens, batch_size=batch_size, progress=progress)
    return pd.DataFrame({"prompt": np.arange(len(answers)), "answer": answers})
