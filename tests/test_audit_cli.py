"""Tests for the ``allocbias`` command: ``allocbias audit`` end to end and its one-line errors.

End to end: a tiny Llama built in a temporary folder (a user model: no registry entry, no source edit), a local
OpenAI-compatible stub that returns log-probabilities (a served model), the committed tables of a study system,
and (``slow``) the real SmolLM2 on one job with one name per group. An interrupted audit resumes without scoring a
stored prompt again. Bad input stops with one line, exit status 2 and no traceback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from allocbias.scoring import catalog
from allocbias import cli
from allocbias.scoring import systems  # noqa: E402
from allocbias.audit import MANIFEST  # noqa: E402
from allocbias.book import repo_root  # noqa: E402

SECTIONS = ("Findings", "What was audited", "Does it screen at all?", "Selection rates and gaps for top-",
            "RABBI, average gap, JSD and EMD", "Local Law 144", "Pairwise comparisons and HiringBloomberg",
            "Among the study", "What these numbers cannot show")
FAST = ["--n-boot", "40", "--rounds", "100"]  # small bootstrap and simulation: the tests check wiring, not values
SLICE = ["--jobs", "retail", "--names-per-group", "1"]  # 8 groups x 1 name x 6 resumes = 48 prompts


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, pattern: str) -> None:
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("allocbias:")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), err
    assert "Traceback" not in err


def assert_report(out: Path, *, parts: tuple[str, ...] = ()) -> str:
    html = (out / "report.html").read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in html, section
    assert "Traceback" not in html
    assert html.count("data:image/png;base64,") >= 4  # figures embedded
    assert not re.findall(r"<(?:script|link|img)\b[^>]*(?:src|href)=[\"']https?://", html)  # nothing from a network
    assert not re.findall(r"<script\b[^>]*>(?:(?!</script>).)*?https?://", html, flags=re.S)
    for table in ("pointwise_scores", "report_screening", "report_selection", "report_metrics", "report_ll144",
                  "report_di_curve"):
        assert (out / "tables" / f"{table}.csv").is_file(), table
    if "pairwise" in parts:
        assert (out / "tables" / "report_pairwise_answers.csv").is_file()
    if "hiring_bloomberg" in parts:
        assert (out / "tables" / "hiring_bloomberg_winners.csv").is_file()
    return html


# ------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer Llama with SmolLM2's tokenizer and chat template, saved as a Hugging Face folder."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from allocbias.scoring.models import load_tokenizer

    tokenizer = load_tokenizer("smollm2-135m-instruct")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=8192, tie_word_embeddings=True, bos_token_id=1,
        eos_token_id=2, pad_token_id=2,
    )
    folder = tmp_path_factory.mktemp("models") / "Tiny-Llama"
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class StubServer:
    """An OpenAI-compatible chat-completions server on loopback that returns log-probabilities.

    Pointwise requests (``logprobs``) get P(Yes) between 0.2 and 0.8 from a hash of the user message (plus
    ``shift``: another server under the same name); generation requests name the candidate shown first (pairwise
    prompts). ``logprobs = False`` drops them, as some servers do. ``strict`` answers HTTP 404 for a model it does
    not list, as vLLM does. ``hang_after``: completions after that many never get an answer (until the server
    stops); ``hung`` is set when the first one arrives. ``hang_models``: ``GET /models`` never gets one either.
    """

    def __init__(self, *, shift: float = 0.0, strict: bool = False, hang_after: int | None = None,
                 hang_models: bool = False) -> None:
        self.logprobs = True
        self.requests = 0
        self.shift, self.strict, self.hang_after, self.hang_models = shift, strict, hang_after, hang_models
        self.hung, self.release = threading.Event(), threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, payload: Any) -> None:
                body = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if stub.hang_models:
                    stub.hung.set()
                    stub.release.wait(120)
                    return
                self._send({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests += 1
                if stub.hang_after is not None and stub.requests > stub.hang_after:
                    stub.hung.set()
                    stub.release.wait(120)  # a hung server: no answer until the test ends
                    return
                if stub.strict and body["model"] != "stub-model":
                    error = {"object": "error", "message": f"The model `{body['model']}` does not exist.",
                             "type": "NotFoundError", "param": None, "code": 404}
                    payload = json.dumps(error).encode()
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                user = next(m["content"] for m in body["messages"] if m["role"] == "user")
                u = int(hashlib.sha256(user.encode()).hexdigest()[:8], 16) / 16**8
                p_yes = 0.2 + 0.6 * u + stub.shift
                logprobs = None
                if body.get("logprobs") and stub.logprobs:
                    top = [("Yes", p_yes), ("No", 1 - p_yes)]
                    entries = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in top]
                    logprobs = {"content": [{**entries[0], "top_logprobs": entries}]}
                parts = user.split("\n\n")
                content = parts[1].splitlines()[0] if user.startswith("Judge which") and len(parts) > 1 else "No"
                self._send({"id": "1", "object": "chat.completion", "model": body["model"],
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                         "logprobs": logprobs, "finish_reason": "stop"}]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------- the command
def test_help_says_how_to_run_it(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["audit", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--model", "--base-url", "--out", "--precision", "--wording", "--jobs", "--names-per-group", "--k",
                   "--rounds", "--seed", "--device", "--parts", "report.html"):
        assert option in text, option


def test_python_dash_m_allocbias_reports_an_unknown_model_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(repo_root() / "lib")}
    proc = subprocess.run([sys.executable, "-m", "allocbias", "audit", "--model", "gpt-7", "--out", str(tmp_path / "a")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "unknown model 'gpt-7'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "a").exists()


def test_a_folder_that_is_not_a_model(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not weights")
    code, _, err = run_cli(["audit", "--model", str(tmp_path / "notes"), "--out", str(tmp_path / "a")], capsys)
    assert_one_line_error(code, err, r"is not a model: it has no config\.json")


def test_an_empty_job_list(tmp_path, capsys):
    code, _, err = run_cli(["audit", "--model", "smollm2-135m-instruct", "--jobs", "--out", str(tmp_path / "a")], capsys)
    assert_one_line_error(code, err, r"job list is empty: name at least one job with --jobs")


def test_an_output_folder_that_holds_another_models_audit(tmp_path, capsys):
    out = tmp_path / "a"
    out.mkdir()
    other = {"identity": {"system": "gemma3-fp32-paper", "model_key": "gemma3-270m@fp32"}, "options": {}}
    (out / MANIFEST).write_text(json.dumps(other))
    code, _, err = run_cli(["audit", "--model", "smollm2-135m-instruct", "--out", str(out)], capsys)
    assert_one_line_error(code, err, r"holds the audit of 'gemma3-fp32-paper'.*choose another --out")
    assert json.loads((out / MANIFEST).read_text()) == other


def test_a_server_that_is_down(tmp_path, capsys):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, _, err = run_cli(["audit", "--base-url", url, "--model", "m", *SLICE, "--out", str(tmp_path / "a")], capsys)
    assert_one_line_error(code, err, r"no usable answer from the server .* start it or fix --base-url")


def test_a_server_without_logprobs(tmp_path, stub, capsys):
    stub.logprobs = False
    code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE,
                            "--out", str(tmp_path / "a")], capsys)
    assert_one_line_error(code, err, r"returns no logprobs for 'stub-model'")


# ------------------------------------------------------------------------------------------- end to end
def test_served_model_end_to_end_with_pairwise(tmp_path, stub, capsys):
    out = tmp_path / "served"
    code, stdout, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                 "--parts", "pairwise", "hiring_bloomberg", "--pairwise-rounds", "1", "--orderings", "1",
                                 "--out", str(out)], capsys)
    assert code == 0, err
    assert "audit of stub-model-served-paper: pointwise 48 new, pairwise 56 new, hiring_bloomberg 8 new" in stdout
    html = assert_report(out, parts=("pairwise", "hiring_bloomberg"))
    assert "answers name no candidate" in html  # the stub answers "No" to the eight-CV prompt
    scores = pd.read_csv(out / "tables" / "pointwise_scores.csv")
    assert len(scores) == 48 and scores["score"].between(0.2, 0.8).all()
    assert set(scores["system"]) == {"stub-model-served-paper"}
    shares = pd.read_csv(out / "tables" / "report_pairwise_answers.csv")
    assert shares["first_shown"].iloc[0] == 100.0  # the stub names the candidate shown first
    provenance = catalog.provenance_table(out / "scores")
    assert set(provenance["model_key"]) == {"openai:stub-model"} and sorted(provenance["rows"]) == [8, 48, 56]
    # run again: everything is stored, nothing is asked of the server except the pre-flight prompt
    before = stub.requests
    code, stdout, _ = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                               "--parts", "pairwise", "hiring_bloomberg", "--pairwise-rounds", "1", "--orderings", "1",
                               "--out", str(out), "--no-report"], capsys)
    assert code == 0 and "pointwise 0 new, pairwise 0 new, hiring_bloomberg 0 new" in stdout
    assert stub.requests - before == 1


def test_user_model_folder_end_to_end_and_resume(tmp_path, tiny_model, capsys, monkeypatch):
    from allocbias import scoring

    out = tmp_path / "tiny"
    args = ["audit", "--model", str(tiny_model), *SLICE, *FAST, "--out", str(out)]
    real = scoring.LocalEngine.pointwise
    calls: list[int] = []

    def interrupted(self, prompts, labels, **kw):  # the second batch never finishes: Ctrl-C
        calls.append(len(prompts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, prompts, labels, **kw)

    monkeypatch.setattr(scoring.LocalEngine, "pointwise", interrupted)
    code, _, err = run_cli(args + ["--parts", "hiring_bloomberg", "--orderings", "1"], capsys)
    assert code == 130 and "run the same command again to resume" in err and "Traceback" not in err
    [table] = [p for p in (out / "scores").iterdir() if p.name.startswith("resume_pointwise-local_tiny-llama")]
    kept = pd.read_csv(table / "scores.csv")
    assert len(kept) == calls[0] == 16  # the first batch is stored durably

    asked: list[str] = []

    def counting(self, prompts, labels, **kw):
        asked.extend(m[1]["content"] for m in prompts)
        return real(self, prompts, labels, **kw)

    monkeypatch.setattr(scoring.LocalEngine, "pointwise", counting)
    code, stdout, err = run_cli(args + ["--parts", "hiring_bloomberg", "--orderings", "1"], capsys)
    assert code == 0, err
    assert len(asked) == 48 - 16 and "pointwise 32 new, hiring_bloomberg 8 new" in stdout
    final = pd.read_csv(table / "scores.csv")
    pd.testing.assert_frame_equal(final.head(16), kept)  # the stored rows were not scored again
    prov = json.loads((table / "provenance.json").read_text())
    assert [r["rows_added"] for r in prov["runs"]] == [16, 32]
    assert prov["model"]["path"] == str(tiny_model.resolve()) and len(prov["model"]["source_sha256"]) == 64
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["identity"]["system"] == "tiny-llama-fp32-paper"
    assert manifest["identity"]["fingerprint"] == prov["model"]["source_sha256"]
    assert_report(out, parts=("hiring_bloomberg",))


def test_study_system_reads_the_committed_tables(tmp_path, capsys):
    committed = catalog.scores_dir()
    stamps = {p: p.stat().st_mtime_ns for p in committed.rglob("*") if p.is_file()}
    out = tmp_path / "study"
    code, stdout, err = run_cli(["audit", "--model", "smollm2-135m-instruct", "--jobs", "retail", *FAST,
                                 "--out", str(out)], capsys)
    assert code == 0, err
    assert "480 already scored (committed tables)" in stdout and "pointwise 0 new" in stdout
    assert not (out / "scores").exists()  # nothing scored, nothing copied
    assert {p: p.stat().st_mtime_ns for p in committed.rglob("*") if p.is_file()} == stamps
    mine = pd.read_csv(out / "tables" / "pointwise_scores.csv")
    theirs = catalog.study_scores(["smollm2-fp32-paper"], jobs=["retail"])
    assert mine["score"].to_numpy().tolist() == pytest.approx(theirs["score"].to_numpy().tolist(), abs=1e-12)
    html = assert_report(out)
    assert "smollm2-fp32-paper (this audit)" in html


@pytest.mark.slow
def test_real_smollm2_on_one_job_with_one_name_per_group(tmp_path, capsys):
    out = tmp_path / "smollm2"
    # seed 1 draws names outside the committed tables' sample (seed 0), so the model really scores here; with seed 0
    # one name per group is the first name of the committed 10-name sample and nothing would be scored
    code, stdout, err = run_cli(["audit", "--model", "smollm2-135m-instruct", *SLICE, "--seed", "1", *FAST,
                                 "--out", str(out)], capsys)
    assert code == 0, err
    assert_report(out)
    scores = pd.read_csv(out / "tables" / "pointwise_scores.csv")
    assert len(scores) == 48 and scores["score"].between(0, 1).all() and (scores["label_mass"] > 0).all()
    # the rows the committed table holds for these candidates were copied, the others scored; all in one table
    [table] = list((out / "scores").glob("resume_pointwise-smollm2-135m-instruct_fp32-*"))
    assert table.name == catalog.store_for(systems.parse_system("smollm2-fp32-paper"), "resume_pointwise").path.name


# ------------------------------------------------------------------------------------------- allocbias score
def test_score_reads_a_complete_table_without_loading_a_model(tmp_path, capsys, monkeypatch):
    import shutil

    system = systems.parse_system("smollm2-fp32-paper")
    source = catalog.store_for(system, "resume_pointwise").path
    shutil.copytree(source, tmp_path / source.name)
    monkeypatch.setattr(systems.System, "load", lambda *a, **k: pytest.fail("no row is missing: nothing to load"))
    code, stdout, err = run_cli(["score", "resume_pointwise", "--systems", "smollm2-fp32-paper", "--jobs", "retail",
                                 "--root", str(tmp_path)], capsys)
    assert code == 0, err
    assert "smollm2-fp32-paper: 480 rows ready" in stdout
    assert (tmp_path / source.name / "scores.csv").read_bytes() == (source / "scores.csv").read_bytes()


def test_score_names_a_bad_system_in_one_line(capsys):
    code, _, err = run_cli(["score", "resume_pointwise", "--systems", "gpt7-fp32-paper"], capsys)
    assert_one_line_error(code, err, r"system id 'gpt7-fp32-paper' is not <model>-<precision>-<wording>")


@pytest.mark.parametrize("prog, expected", [
    (None, "allocbias score resume_pointwise --systems smollm2-fp32-paper --jobs retail"),
    ("python scripts/score_study.py", "python scripts/score_study.py resume_pointwise --systems smollm2-fp32-paper "
                                      "--jobs retail"),
])
def test_score_and_the_script_record_the_command_that_was_typed(prog, expected, monkeypatch, capsys):
    """scripts/score_study.py is `allocbias score` under another name; provenance records what was typed."""
    from allocbias.scoring import runs

    seen = {}

    def fake(task, cands, *, command, **kw):
        seen["command"] = command
        return cands

    monkeypatch.setattr(runs, "score", fake)
    argv = ["resume_pointwise", "--systems", "smollm2-fp32-paper", "--jobs", "retail"]
    assert cli.main(argv if prog else ["score", *argv], prog=prog) == 0
    assert seen["command"] == expected
