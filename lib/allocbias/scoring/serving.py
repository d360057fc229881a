"""Scoring through an OpenAI-compatible server: vLLM, llama.cpp's server, hosted APIs that return logprobs.

:class:`OpenAIEngine` has the interface of the local transformers engine (``allocbias.scoring.LocalEngine``):
``pointwise`` (label scores from next-token log-probabilities), ``generate`` (greedy completions) and
``describe`` (provenance), so the study can move from a laptop to a serving cluster by changing the engine.

Pointwise score
---------------
One chat completion per prompt with ``max_tokens=1``, ``temperature=0``, ``logprobs=true`` and
``top_logprobs=K``. From the K most likely first tokens ``(t, log p_t)``:

    mass_y = sum_{t in variants(y)} p_t          (variants: "Yes", " Yes", "yes", " yes")
    m      = sum_y mass_y                         (``label_mass``: mass on the label set within the top K)
    P_n(y) = mass_y / m                           (renormalised over the label set)
    score  = sum_y P_n(y) * gamma_y

A variant outside the top K counts as 0, which errs by at most the K-th largest probability per variant.
When no variant of any label is among the top K, ``m = 0`` and the score is undefined: the row gets
``label_mass = 0.0`` and ``score = NaN`` (never silently: see ``max_zero_mass_share``).

Requests run in a thread pool of at most ``max_concurrency`` (connections are capped to match), with bounded
retries and exponential backoff on connection errors, timeouts, HTTP 429 and 5xx. ``timeout_s`` is the deadline
of one request *in all*, its retries and the waits between them included: a server that hangs fails the request
after ``timeout_s`` seconds, not after ``timeout_s`` times the number of attempts. Results come back in input
order whatever order the server answers in.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx
import numpy as np

from ..audited.prompts import label_variants

__all__ = [
    "BadLogprobsError",
    "LabelMassError",
    "NoLogprobsError",
    "OpenAIEngine",
    "ServingError",
    "label_scores",
    "label_variants",  # allocbias.audited.prompts.label_variants, the rule of both engines
    "llama_cpp_server",
    "redact_command",
    "redact_url",
    "safe_url",
]

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
PREFILL_MODES = frozenset({None, "vllm", "native"})


class ServingError(RuntimeError):
    """A request failed for good: a non-retryable HTTP error, or retries exhausted."""


class NoLogprobsError(ValueError):
    """The server answered without log-probabilities, so pointwise scores cannot be computed."""


class BadLogprobsError(ValueError):
    """The server returned a log-probability that cannot be one (NaN, or above 0, i.e. a probability above 1);
    the message names the server, the model and the prompt."""


#: Log-probabilities up to this far above 0 are read as 0 (float rounding in a server); larger ones are refused.
LOGPROB_TOLERANCE = 1e-6


class LabelMassError(ValueError):
    """Too many prompts had no label token among the returned top log-probabilities."""


def safe_url(url: str) -> str:
    """``url`` without credentials, query or fragment (those may carry keys), and without a trailing slash.

    >>> safe_url("https://user:secret@api.example.com/v1/?key=abc")
    'https://api.example.com/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


#: A query parameter or option whose name matches this holds a credential: its value is never recorded.
SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|signature|^sig$|session|cookie", re.I)
REDACTED = "REDACTED"
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"]+", re.I)


def redact_url(url: str) -> str:
    """``url`` as it may be recorded: no user name or password, the value of every secret-looking query
    parameter (its name matches :data:`SECRET_NAME`: ``api_key``, ``key``, ``token``, ``password``, ``secret``,
    ``auth``...) replaced by ``REDACTED``, no fragment; other query parameters (e.g. ``api-version``) stay.

    >>> redact_url("https://user:pw@api.example.com:8443/v1/?api_key=abc&api-version=2024-06-01#x")
    'https://api.example.com:8443/v1/?api_key=REDACTED&api-version=2024-06-01'
    """
    parts = urlsplit(str(url))
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a port that is not a number: keep what follows the last '@' only
        host, port = parts.netloc.rpartition("@")[2], None
    if ":" in host and not host.startswith("["):  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    query = urlencode([(k, REDACTED if SECRET_NAME.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], quote_via=quote, safe="")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact_command(command: str | Sequence[str]) -> str:
    """A command line as it may be recorded: every URL in it through :func:`redact_url`, and the value of an
    option whose name looks secret (``--api-key VALUE``, ``--token=VALUE``) replaced by ``REDACTED``.

    >>> redact_command(["allocbias", "audit", "--base-url", "http://u:pw@h:8000/v1?key=k", "--api-key", "sk-1"])
    "allocbias audit --base-url 'http://h:8000/v1?key=REDACTED' --api-key REDACTED"
    """
    import shlex

    args = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        name, eq, value = arg.partition("=")
        if arg.startswith("-") and SECRET_NAME.search(name):
            if eq:
                out.append(f"{name}={REDACTED}")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(_URL.sub(lambda m: redact_url(m.group(0)), arg))
    return " ".join(shlex.quote(a) for a in out)


def _check_labels(labels: Mapping[str, float]) -> dict[str, tuple[str, ...]]:
    if not isinstance(labels, Mapping) or len(labels) < 2:
        raise ValueError("labels must map at least two labels to their values gamma_y (e.g. {'No': 0, 'Yes': 1})")
    owner: dict[str, str] = {}
    variants: dict[str, tuple[str, ...]] = {}
    for label, gamma in labels.items():
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            raise ValueError(f"labels: label {label!r} must be a non-empty string without surrounding spaces")
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)):
            raise ValueError(f"labels: value of {label!r} must be a number, got {gamma!r}")
        if not math.isfinite(float(gamma)):
            raise ValueError(f"labels: value of {label!r} must be finite, got {gamma!r}")
        variants[label] = label_variants(label)
        for v in variants[label]:
            if v in owner:
                raise ValueError(f"labels {owner[v]!r} and {label!r} share the surface form {v!r}")
            owner[v] = label
    return variants


def label_scores(top_logprobs: Sequence[tuple[str, float]], labels: Mapping[str, float]) -> dict[str, float]:
    """Pointwise score from the top-K first-token log-probabilities (see the module docstring).

    Parameters
    ----------
    top_logprobs : sequence of (token text, log-probability)
        As returned by the server; distinct tokens with the same text are summed.
    labels : mapping label -> gamma
        E.g. ``{"No": 0, "Yes": 1}``.

    Returns
    -------
    dict
        ``score`` = sum_y P_n(y) gamma_y, ``label_mass`` = m, and ``p_<label>`` = P_n(y); with ``m = 0`` the
        score and probabilities are NaN and ``label_mass`` is 0.0.

    Examples
    --------
    >>> top = [("Yes", math.log(0.5)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("Maybe", math.log(0.2))]
    >>> r = label_scores(top, {"No": 0, "Yes": 1})
    >>> round(r["score"], 6), round(r["label_mass"], 6), round(r["p_No"], 6)
    (0.75, 0.8, 0.25)
    """
    variants = _check_labels(labels)
    tokens = np.array([t for t, _ in top_logprobs], dtype=object)
    logps = np.array([lp for _, lp in top_logprobs], dtype=float)
    if logps.size and not np.all((np.isfinite(logps) | (logps == -np.inf)) & ~(logps > LOGPROB_TOLERANCE)):
        bad = [(t, lp) for t, lp in zip(tokens, logps, strict=True) if not (lp <= LOGPROB_TOLERANCE)]
        raise BadLogprobsError(f"top_logprobs hold NaN or log-probabilities above 0 (probability > 1): {bad[:5]}")
    probs = np.exp(np.minimum(logps, 0.0)) if logps.size else logps
    masses = np.array([probs[np.isin(tokens, list(v))].sum() for v in variants.values()], dtype=float)
    gammas = np.array([float(labels[y]) for y in variants], dtype=float)
    total = float(masses.sum())
    out: dict[str, float] = {}
    if total > 0:
        p = masses / total
        out["score"] = float(p @ gammas)
    else:
        p = np.full(len(masses), np.nan)
        out["score"] = float("nan")
    out["label_mass"] = total
    for y, py in zip(variants, p, strict=True):
        out[f"p_{y}"] = float(py)
    return out


def _check_messages(prompts: Sequence[Any]) -> list[list[dict[str, Any]]]:
    if isinstance(prompts, (str, bytes)) or not isinstance(prompts, Sequence):
        raise ValueError("prompts must be a sequence of chat message lists [{'role': ..., 'content': ...}, ...]")
    out = []
    for i, messages in enumerate(prompts):
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
            raise ValueError(f"prompts[{i}] must be a non-empty list of chat messages, got {type(messages).__name__}")
        for j, m in enumerate(messages):
            if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or "content" not in m:
                raise ValueError(f"prompts[{i}][{j}] must be a mapping with 'role' and 'content'")
        out.append([dict(m) for m in messages])
    return out


def _prompt_excerpt(body: Mapping[str, Any]) -> str:
    """The start of a request's last message, to name the prompt in an error."""
    messages = body.get("messages") or [{}]
    content = str(messages[-1].get("content", "")) if isinstance(messages[-1], Mapping) else ""
    return repr(content[:80] + ("..." if len(content) > 80 else ""))


class OpenAIEngine:
    """Score and generate through an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    base_url : str, optional
        The API root, e.g. ``"http://gpu-node:8000/v1"`` (vLLM) or ``"https://api.openai.com/v1"``; default:
        the ``OPENAI_BASE_URL`` environment variable.
    model : str, optional
        The served model name; default: the only model listed by ``GET /models``.
    api_key : str, optional
        Sent as ``Authorization: Bearer``; default: ``OPENAI_API_KEY``; never logged or described.
        (Credentials written into ``base_url``, ``http://user:password@host/v1``, are sent as HTTP basic
        auth instead, for servers behind a proxy that asks for it.)
    top_logprobs : int
        K, the number of top first tokens requested (OpenAI and vLLM's default cap: 20).
    max_concurrency : int
        Most requests in flight at once (a per-call ``batch_size`` can only lower it).
    timeout_s : float
        The deadline of one request in seconds, all its attempts and the waits between them included: each
        attempt may take what is left of it, a retry starts only if time is left, and a request still without an
        answer at the deadline fails (:class:`ServingError`).
    max_retries : int
        Retries per request after the first attempt, within its deadline, on connection errors, timeouts,
        408/409/429/5xx.
    backoff_s, max_backoff_s : float
        Wait ``min(max_backoff_s, backoff_s * 2**attempt)`` before retry ``attempt + 1`` (a ``Retry-After``
        header in seconds takes precedence, also capped).
    max_zero_mass_share : float
        Largest share of the prompts in one ``pointwise`` call allowed to have no label token in the top K
        (their rows get ``label_mass = 0.0`` and ``score = NaN``); above it :class:`LabelMassError` is raised.
        Default 0: every prompt must put some mass on a label.
    extra_body : mapping, optional
        Extra JSON fields sent with every request (server-specific options); recorded by ``describe``.
    prefill : {None, "vllm", "native"}
        How a prompt that ends with an assistant message (a prefill such as ``"Answer:"``, which the local
        engine continues) is sent. ``None``: rejected with ``ValueError`` (the OpenAI API and
        llama-cpp-python's server would start a new assistant turn instead of continuing it).
        ``"vllm"``: sends vLLM's ``continue_final_message=true, add_generation_prompt=false`` with those
        prompts. ``"native"``: sent as is, for servers that continue a final assistant message by
        themselves (llama.cpp's ``llama-server``).

    Examples
    --------
    >>> engine = OpenAIEngine("http://127.0.0.1:8000/v1", "SmolLM2", api_key="sk-not-shown")
    >>> engine.describe(query_server=False)["base_url"], "sk-not-shown" in repr(engine.describe(query_server=False))
    ('http://127.0.0.1:8000/v1', False)
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        *,
        api_key: str | None = None,
        top_logprobs: int = 20,
        max_concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_zero_mass_share: float = 0.0,
        extra_body: Mapping[str, Any] | None = None,
        prefill: str | None = None,
    ) -> None:
        base_url = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL")
        if not base_url or not isinstance(base_url, str):
            raise ValueError("base_url is required (or set OPENAI_BASE_URL), e.g. 'http://localhost:8000/v1'")
        if urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, got {safe_url(base_url)!r}")
        for name, value, low in (
            ("top_logprobs", top_logprobs, 1),
            ("max_concurrency", max_concurrency, 1),
            ("max_retries", max_retries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        for name, value in (("timeout_s", timeout_s), ("backoff_s", backoff_s), ("max_backoff_s", max_backoff_s)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        if not isinstance(max_zero_mass_share, (int, float)) or not 0 <= max_zero_mass_share <= 1:
            raise ValueError(f"max_zero_mass_share must be in [0, 1], got {max_zero_mass_share!r}")
        if prefill not in PREFILL_MODES:
            raise ValueError(f"prefill must be one of {sorted(PREFILL_MODES, key=str)}, got {prefill!r}")
        if model is not None and (not isinstance(model, str) or not model):
            raise ValueError(f"model must be a non-empty string or None, got {model!r}")
        parts = urlsplit(base_url)
        self._url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self._query = parts.query  # e.g. an api-version parameter, sent with every request
        self.base_url = safe_url(base_url)
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.top_logprobs = top_logprobs
        self.max_concurrency = max_concurrency
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_zero_mass_share = float(max_zero_mass_share)
        self.extra_body = dict(extra_body or {})
        self.prefill = prefill
        self._model = model
        self._server_model: dict[str, Any] | None = None
        self._reported_model: str | None = None
        self._system_fingerprint: str | None = None
        self._lock = threading.Lock()
        self._until: tuple[float, float] | None = None  # (deadline, seconds) of a block (:meth:`within`)

    def __repr__(self) -> str:
        return f"OpenAIEngine(base_url={self.base_url!r}, model={self._model!r})"

    @property
    def model(self) -> str | None:
        """The served model name (``None`` until discovered from ``GET /models`` when not given)."""
        return self._model

    # ------------------------------------------------------------------------------ HTTP
    def _client(self, concurrency: int) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        return httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    @contextlib.contextmanager
    def within(self, seconds: float) -> Iterator[None]:
        """A deadline shared by every request made in the block: all of them together take at most ``seconds``
        (each still at most ``timeout_s``). The audit's pre-flight (``GET /models``, then one prompt) runs in one.

        >>> engine = OpenAIEngine("http://127.0.0.1:9/v1", "m", timeout_s=5)
        >>> with engine.within(0.01):
        ...     time.sleep(0.02)
        ...     engine.listed_models()
        Traceback (most recent call last):
        ...
        allocbias.scoring.serving.ServingError: GET http://127.0.0.1:9/v1/models timed out: its deadline of 0.01 s had passed before an attempt could start
        """
        before = self._until
        until = (time.monotonic() + float(seconds), float(seconds))
        self._until = until if before is None or until[0] < before[0] else before
        try:
            yield
        finally:
            self._until = before

    def _request(self, client: httpx.Client, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """One API call with bounded retries within its deadline (``timeout_s``); returns the decoded JSON body."""
        url = f"{self._url}/{path}" + (f"?{self._query}" if self._query else "")
        shown = f"{method} {self.base_url}/{path}"
        deadline, limit = time.monotonic() + self.timeout_s, f"{self.timeout_s:g}"
        shared = self._until
        if shared is not None and shared[0] < deadline:
            deadline, limit = shared[0], f"{shared[1]:g}"
        last, attempts = "", 0
        for attempt in range(self.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            retry_after: float | None = None
            attempts += 1
            try:
                timeout = httpx.Timeout(remaining, connect=min(10.0, remaining))
                response = client.request(method, url, json=body, timeout=timeout)
            except httpx.TransportError as exc:  # connection refused/reset, timeouts, protocol errors
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise ServingError(
                            f"{shown} returned a body that is not JSON: {response.text[:200]!r}"
                        ) from exc
                detail = response.text[:500]
                if response.status_code not in RETRY_STATUS:
                    raise ServingError(f"{shown} returned HTTP {response.status_code}: {detail}")
                last = f"HTTP {response.status_code}: {detail}"
                header = response.headers.get("retry-after")
                if header is not None:
                    try:
                        retry_after = max(0.0, float(header))
                    except ValueError:
                        retry_after = None
            if attempt < self.max_retries:
                delay = min(self.max_backoff_s, retry_after if retry_after is not None else self.backoff_s * 2**attempt)
                if time.monotonic() + delay >= deadline:
                    break  # no time left for another attempt
                time.sleep(delay)
        if not attempts:
            raise ServingError(f"{shown} timed out: its deadline of {limit} s had passed before an attempt could start")
        within = f" within its deadline of {limit} s" if attempts < self.max_retries + 1 else ""
        raise ServingError(f"{shown} failed after {attempts} attempt(s){within}; last error: {last}")

    def _resolve_model(self, client: httpx.Client) -> str:
        with self._lock:
            if self._model is not None:
                return self._model
        listed = self._list_models(client)
        ids = [m.get("id") for m in listed]
        if len(ids) != 1:
            raise ValueError(
                f"model is not set and the server at {self.base_url} lists {len(ids)} models {ids[:10]}: pass model=..."
            )
        with self._lock:
            self._model = str(ids[0])
            return self._model

    def _list_models(self, client: httpx.Client) -> list[dict[str, Any]]:
        data = self._request(client, "GET", "models")
        listed = data.get("data") if isinstance(data, Mapping) else None
        if not isinstance(listed, list):
            raise ServingError(f"GET {self.base_url}/models returned no 'data' list: {str(data)[:200]}")
        return [m for m in listed if isinstance(m, Mapping)]

    def _run(
        self,
        bodies: Sequence[dict[str, Any]],
        parse: Callable[[Mapping[str, Any]], Any],
        batch_size: int | None,
        progress: bool,
        desc: str,
    ) -> list[Any]:
        """POST every body to chat/completions, at most ``concurrency`` at once; ``parse`` each response in its
        worker (so a response that cannot be used stops the run early); results in input order."""
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
        ):
            raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
        concurrency = min(self.max_concurrency, batch_size or self.max_concurrency)
        results: list[Any] = [None] * len(bodies)
        if not bodies:
            return []
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(bodies), unit="prompt", desc=desc)
        # Workers are daemon threads, not a ThreadPoolExecutor (whose exit joins every worker): a Ctrl-C in the
        # caller returns at once, even while requests hang on a server (they end at their deadline, or with the process)
        client = self._client(concurrency)
        abandoned = False
        failed = threading.Event()
        try:
            model = self._resolve_model(client)
            todo: queue.SimpleQueue[int] = queue.SimpleQueue()
            for i in range(len(bodies)):
                todo.put(i)
            errors: list[BaseException] = []
            remaining = [len(bodies)]
            started: dict[int, float] = {}  # prompt index -> when its request started, while it is in flight
            finished = threading.Event()

            def call(i: int) -> None:
                try:
                    data = self._post_completion(client, model, bodies[i])
                    results[i] = parse(data)
                except BadLogprobsError as exc:
                    raise BadLogprobsError(
                        f"server at {safe_url(self.base_url)} (model {model}) answered prompt {i} of this call "
                        f"({_prompt_excerpt(bodies[i])}) with unusable log-probabilities: {exc}"
                    ) from exc
                with self._lock:
                    if self._reported_model is None and isinstance(data.get("model"), str):
                        self._reported_model = data["model"]
                    if self._system_fingerprint is None and isinstance(data.get("system_fingerprint"), str):
                        self._system_fingerprint = data["system_fingerprint"]
                if bar is not None:
                    bar.update(1)

            def worker() -> None:
                while not failed.is_set():  # another request failed for good (or the caller stopped): start no new one
                    try:
                        i = todo.get_nowait()
                    except queue.Empty:
                        return
                    with self._lock:
                        started[i] = time.monotonic()
                    try:
                        call(i)
                    except BaseException as exc:  # noqa: BLE001 (handed to the caller)
                        with self._lock:
                            errors.append(exc)
                        failed.set()
                        finished.set()
                        return
                    with self._lock:
                        del started[i]
                        remaining[0] -= 1
                        if remaining[0] == 0:
                            finished.set()

            threads = [threading.Thread(target=worker, name=f"allocbias-openai-{n}", daemon=True)
                       for n in range(min(concurrency, len(bodies)))]
            for thread in threads:
                thread.start()
            # a short wait: the main thread stays responsive to Ctrl-C; a request past its deadline (a server that
            # trickles bytes slower than httpx's per-read timeout notices) fails the call at the deadline all the same
            late = self.timeout_s + 1.0
            while not finished.wait(0.1):
                with self._lock:
                    oldest = min(started.items(), key=lambda kv: kv[1], default=None)
                if oldest is not None and time.monotonic() - oldest[1] > late:
                    abandoned = True
                    raise ServingError(
                        f"POST {self.base_url}/chat/completions got no answer for prompt {oldest[0]} of this call "
                        f"within its deadline of {self.timeout_s:g} s (ReadTimeout: the server is too slow or hung)"
                    )
            if errors:
                with self._lock:  # the others start nothing new; what is in flight ends by its deadline
                    last_start = max(started.values(), default=time.monotonic())
                for thread in threads:
                    thread.join(timeout=max(0.0, last_start + late - time.monotonic()))
                abandoned = any(thread.is_alive() for thread in threads)
                raise errors[0]
        except BaseException:
            failed.set()  # also for a Ctrl-C while the workers start: the ones started take no new prompt
            abandoned = abandoned or not isinstance(sys.exc_info()[1], Exception)
            raise
        finally:
            if bar is not None:
                bar.close()
            if not abandoned:  # after Ctrl-C, hung requests may still hold the pool: leave it to the process
                client.close()
        return results

    def _post_completion(self, client: httpx.Client, model: str, body: Mapping[str, Any]) -> dict[str, Any]:
        data = self._request(client, "POST", "chat/completions", {"model": model, **body})
        if not isinstance(data, Mapping) or not data.get("choices"):
            raise ServingError(
                f"POST {self.base_url}/chat/completions returned no choices for model {model}: {str(data)[:300]}"
            )
        return dict(data)

    def _bodies(self, prompts: Sequence[Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One request body per prompt; a final assistant message is handled as ``prefill`` says."""
        out = []
        for i, messages in enumerate(_check_messages(prompts)):
            request = {**body, "messages": messages}
            if messages[-1]["role"] == "assistant":
                if self.prefill is None:
                    raise ValueError(
                        f"prompts[{i}] ends with an assistant message (a prefill): an OpenAI-compatible server "
                        "starts a new turn instead of continuing it unless asked; pass prefill='vllm' (vLLM) or "
                        "prefill='native' (llama.cpp llama-server), or end the prompt with the user message"
                    )
                if self.prefill == "vllm":
                    request.update(continue_final_message=True, add_generation_prompt=False)
            out.append(request)
        return out

    # ------------------------------------------------------------------------------ public API
    def pointwise(
        self,
        prompts: Sequence[list[dict[str, Any]]],
        labels: Mapping[str, float],
        *,
        batch_size: int | None = None,
        progress: bool = True,
    ) -> list[dict[str, Any]]:
        """Pointwise label scores, one dict per prompt in input order.

        Each dict has ``score`` = sum_y P_n(y) gamma_y, ``label_mass`` (mass on the label set within the top
        K), ``p_<label>`` (P_n, renormalised) and ``n_tokens`` (prompt tokens from the server's ``usage``,
        ``None`` when it reports none). ``batch_size`` lowers the number of requests in flight for this call.

        Raises
        ------
        NoLogprobsError
            The server returned no (top) log-probabilities.
        LabelMassError
            More than ``max_zero_mass_share`` of the prompts had no label among the top K.
        ServingError
            A request failed for good.
        """
        _check_labels(labels)
        body = {
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            **self.extra_body,
        }

        def parse(response: Mapping[str, Any]) -> dict[str, Any]:
            row: dict[str, Any] = label_scores(self._top_logprobs(response), labels)
            usage = response.get("usage")
            n = usage.get("prompt_tokens") if isinstance(usage, Mapping) else None
            row["n_tokens"] = int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else None
            return row

        out = self._run(self._bodies(prompts, body), parse, batch_size, progress, "pointwise")
        zero = [i for i, r in enumerate(out) if r["label_mass"] == 0]
        if out and len(zero) / len(out) > self.max_zero_mass_share:
            raise LabelMassError(
                f"{len(zero)} of {len(out)} prompts ({len(zero) / len(out):.1%}) have no label of "
                f"{sorted(labels)} among the top {self.top_logprobs} first tokens of model {self._model} "
                f"(prompt indices {zero[:10]}); allowed share: max_zero_mass_share={self.max_zero_mass_share}. "
                "Check the prompt asks for exactly these labels, raise top_logprobs if the server allows it, "
                "or raise max_zero_mass_share to keep those rows with label_mass=0 and score=NaN."
            )
        return out

    def _top_logprobs(self, response: Mapping[str, Any]) -> list[tuple[str, float]]:
        choice = response["choices"][0]
        logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
        content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
        first = content[0] if isinstance(content, list) and content else None
        top = first.get("top_logprobs") if isinstance(first, Mapping) else None
        if not top:
            raise NoLogprobsError(
                f"server at {self.base_url} returned no logprobs for model {self._model}: it cannot be used for "
                "pointwise scoring; use generate-based pairwise scoring or a server that supports logprobs "
                "(vLLM, llama.cpp server)"
            )
        try:
            return [(str(t["token"]), float(t["logprob"])) for t in top]
        except (KeyError, TypeError, ValueError) as exc:
            raise ServingError(f"server at {self.base_url} returned malformed top_logprobs: {str(top)[:200]}") from exc

    def generate(
        self,
        prompts: Sequence[list[dict[str, Any]]],
        *,
        max_new_tokens: int,
        batch_size: int | None = None,
        progress: bool = True,
    ) -> list[str]:
        """Greedy (temperature 0) completions of at most ``max_new_tokens`` tokens, in input order.

        A choice without text (e.g. a refusal field only) gives ``""``.
        """
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
        body = {"max_tokens": max_new_tokens, "temperature": 0, **self.extra_body}

        def parse(response: Mapping[str, Any]) -> str:
            choice = response["choices"][0]
            message = choice.get("message") if isinstance(choice, Mapping) else None
            content = message.get("content") if isinstance(message, Mapping) else None
            return content if isinstance(content, str) else ""

        return self._run(self._bodies(prompts, body), parse, batch_size, progress, "generate")

    def listed_models(self) -> list[dict[str, Any]]:
        """The server's model entries (``GET /models``); :class:`ServingError` when it does not answer."""
        with self._client(1) as client:
            return [dict(m) for m in self._list_models(client)]

    def server_identity(self, listed: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """What identifies the server that answers, for deciding whether stored scores came from it:

        ``url`` (the base URL through :func:`redact_url`: scheme, host, port, path and non-secret query, no
        credentials), ``model`` (the name asked for), ``reported_model`` and ``system_fingerprint`` (from the
        first completion seen, ``None`` before one or when the server sends none) and ``listed``: the server's
        own entry for the model in ``GET /models`` (``owned_by``, ``root``, ``max_model_len``, llama.cpp's
        ``meta``...) without the fields that change from one request to the next (``created``, ``permission``).
        ``listed`` may pass the entries already fetched (:meth:`listed_models`).
        """
        if listed is None:
            try:
                listed = self.listed_models()
            except (ServingError, ValueError):
                listed = []
        entry = next((m for m in listed if m.get("id") == self._model), None)
        volatile = {"created", "permission", "permissions"}
        return {
            "url": redact_url(self._url + (f"?{self._query}" if self._query else "")),
            "model": self._model,
            "reported_model": self._reported_model,
            "system_fingerprint": self._system_fingerprint,
            "listed": {k: v for k, v in entry.items() if k not in volatile} if entry else None,
        }

    def describe(self, *, query_server: bool = True) -> dict[str, Any]:
        """Provenance: backend, base URL (no credentials), model names, parameters; never the API key.

        With ``query_server`` the server's own description of the model (``GET /models``, without its
        ``created`` time stamp) is included once; ``reported_model`` is the ``model`` field of the first
        completion seen (servers may resolve an alias to a versioned name).
        """
        if query_server and self._server_model is None:
            try:
                with self._client(1) as client:
                    model = self._resolve_model(client)
                    listed = self._list_models(client)
                entry = next((m for m in listed if m.get("id") == model), None)
                self._server_model = {k: v for k, v in entry.items() if k != "created"} if entry else {}
            except (ServingError, ValueError):
                self._server_model = {}
        return {
            "backend": "openai",
            "base_url": self.base_url,
            "model": self._model,
            "reported_model": self._reported_model,
            "server_model": self._server_model,
            "api_key_set": bool(self._api_key),
            "top_logprobs": self.top_logprobs,
            "temperature": 0,
            "max_concurrency": self.max_concurrency,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "backoff_s": self.backoff_s,
            "max_backoff_s": self.max_backoff_s,
            "max_zero_mass_share": self.max_zero_mass_share,
            "extra_body": self.extra_body,
            "prefill": self.prefill,
            "httpx": httpx.__version__,
        }


# ----------------------------------------------------------------------------------------------- llama.cpp


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_cpp_server(
    model_path: str | os.PathLike[str],
    *,
    alias: str | None = None,
    port: int | None = None,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    startup_timeout_s: float = 120.0,
    log_path: str | os.PathLike[str] | None = None,
) -> Iterator[str]:
    """Run llama-cpp-python's OpenAI-compatible server on 127.0.0.1 for a ``with`` block; yields its base URL.

    Equivalent to ``python -m llama_cpp.server --model PATH --host 127.0.0.1 --port PORT --n_ctx N``
    (the server keeps logits for every position, so it returns log-probabilities). The server is stopped
    (terminate, then kill after 20 s) when the block ends. ``alias`` is the model name the API reports
    (default: the file path). Needs ``llama-cpp-python[server]``: ``make llama-server``.

    Raises ``ModuleNotFoundError`` when llama-cpp-python is missing, ``ValueError`` for a missing file, and
    :class:`ServingError` (with the end of the server's log) when it exits or does not answer in time.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModuleNotFoundError(
            "llama-cpp-python is not installed: run `make llama-server` (builds from source, ~15-20 min)"
        )
    model_path = Path(model_path)
    if not model_path.is_file():
        raise ValueError(f"model_path {model_path} is not a file")
    port = _free_port() if port is None else int(port)
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(int(n_ctx)),
    ]  # fmt: skip
    if alias is not None:
        command += ["--model_alias", alias]
    if n_threads is not None:
        command += ["--n_threads", str(int(n_threads))]
    url = f"http://127.0.0.1:{port}/v1"
    with contextlib.ExitStack() as stack:
        if log_path is None:
            log_path = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "llama_cpp_server.log"
        log_path = Path(log_path)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def tail() -> str:
            return log_path.read_text(errors="replace")[-2000:]

        try:
            deadline = time.monotonic() + startup_timeout_s
            while True:
                if proc.poll() is not None:
                    raise ServingError(f"llama_cpp.server exited with code {proc.returncode}:\n{tail()}")
                try:
                    if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise ServingError(f"llama_cpp.server did not answer within {startup_timeout_s} s:\n{tail()}")
                time.sleep(0.25)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
