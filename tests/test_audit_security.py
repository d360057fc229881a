"""``allocbias audit`` tried as a hostile or careless user would (issue "Trust and security", the report and the
--out folder): markup in a model name or path, credentials in --base-url, another server under the same name, two
audits into one folder, a stale report, too few bootstrap resamples, a hung server, errors that name the problem;
and (the audit report) a random-weight model whose report withholds its verdicts.

Every server here is a stub on 127.0.0.1 (tests/test_audit_cli.StubServer).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from allocbias import audit, cli  # noqa: E402
from allocbias.audit import LOCK, MANIFEST  # noqa: E402

from .test_audit_cli import FAST, SLICE, StubServer, assert_one_line_error, run_cli, tiny_model  # noqa: E402,F401

HOSTILE = "<img src=x onerror=alert(1)>"
PASSWORD, QUERY_KEY, ENV_KEY = "PASSWORD-9f3a", "QUERYKEY-77c1", "sk-ENVKEY-5d2e"


def _with_credentials(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://auditor:{PASSWORD}@{rest}?api_key={QUERY_KEY}&api-version=2024-06-01"


@pytest.fixture(scope="module")
def hostile_audit(tmp_path_factory):
    """One served audit with a report: the model name and the --out folder hold markup, --base-url holds a
    password and an API key, OPENAI_API_KEY is set."""
    out = tmp_path_factory.mktemp("hostile") / "<svg onload=alert(2)>"
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = ENV_KEY
    try:
        with StubServer() as stub:
            code = cli.main(["audit", "--base-url", _with_credentials(stub.url), "--model", HOSTILE, *SLICE, *FAST,
                             "--out", str(out)])
    finally:
        if old is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old
    assert code == 0
    return out


def _rendered_outputs(notebook: Path) -> list[str]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [("".join(v) if isinstance(v, list) else str(v))
            for cell in nb["cells"] for o in cell.get("outputs", [])
            for mime, v in o.get("data", {}).items() if mime in ("text/html", "text/markdown")]


# ------------------------------------------------------------------------------------------- item 1
def test_markup_in_a_model_name_or_path_is_escaped_everywhere(hostile_audit):
    html = (hostile_audit / "report.html").read_text(encoding="utf-8")
    assert "<img src=x" not in html and "<svg onload" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown as typed, not run
    assert "&lt;svg onload=alert(2)&gt;" in html
    outputs = _rendered_outputs(hostile_audit / "report.ipynb")
    assert outputs and not [o for o in outputs if "<img src=x" in o or "<svg onload" in o]


# ------------------------------------------------------------------------------------------- item 2
def test_no_credential_reaches_a_file_under_out(hostile_audit):
    files = [p for p in hostile_audit.rglob("*") if p.is_file()]
    assert {"audit.json", "report.html", "report.ipynb", "provenance.json"} <= {p.name for p in files}
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for secret in (PASSWORD, QUERY_KEY, ENV_KEY, "auditor:"):
            assert secret not in text, (path, secret)
    manifest = json.loads((hostile_audit / MANIFEST).read_text())
    assert "api_key=REDACTED" in manifest["identity"]["base_url"] and "api-version=2024-06-01" in \
        manifest["identity"]["base_url"]
    assert "api_key=REDACTED" in manifest["options"]["command"]


# ------------------------------------------------------------------------------------------- item 3
def test_another_server_under_the_same_name_is_refused_naming_both(tmp_path, capsys):
    out = tmp_path / "a"
    with StubServer() as first, StubServer(shift=0.1) as second:
        code, _, err = run_cli(["audit", "--base-url", first.url, "--model", "stub-model", *SLICE, *FAST,
                                "--no-report", "--out", str(out)], capsys)
        assert code == 0, err
        stored = pd.read_csv(out / "tables" / "pointwise_scores.csv")
        before = second.requests
        code, _, err = run_cli(["audit", "--base-url", second.url, "--model", "stub-model", *SLICE, *FAST,
                                "--no-report", "--out", str(out)], capsys)
        assert_one_line_error(code, err, r"from the server " + first.url + r".*server answering now is "
                              + second.url + r".*another --out")
        assert second.requests - before == 1  # the pre-flight prompt only: nothing scored, nothing mixed
        # the score tables know their server too: an audit.json of an older version, without it, is not enough
        manifest = json.loads((out / MANIFEST).read_text())
        older = {**manifest, "identity": {k: v for k, v in manifest["identity"].items()
                                          if k not in ("server", "base_url")}}
        (out / MANIFEST).write_text(json.dumps(older))
        code, _, err = run_cli(["audit", "--base-url", second.url, "--model", "stub-model", *SLICE, *FAST,
                                "--no-report", "--out", str(out)], capsys)
        assert_one_line_error(code, err, r"holds 48 rows .*scored by the server " + first.url + r".*answering now is "
                              + second.url)
        (out / MANIFEST).write_text(json.dumps(manifest))
        # the first server again: everything is stored, nothing is scored twice
        before = first.requests
        code, stdout, err = run_cli(["audit", "--base-url", first.url, "--model", "stub-model", *SLICE, *FAST,
                                     "--no-report", "--out", str(out)], capsys)
        assert code == 0 and "pointwise 0 new" in stdout and first.requests - before == 1, err
    pd.testing.assert_frame_equal(pd.read_csv(out / "tables" / "pointwise_scores.csv"), stored)


# ------------------------------------------------------------------------------------------- item 4
def test_a_second_audit_into_a_locked_folder_stops(tmp_path, capsys):
    out = tmp_path / "a"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time\n"
         f"f = open({str(out / LOCK)!r}, 'a+'); fcntl.flock(f, fcntl.LOCK_EX); f.write('pid 4242 (first audit)\\n')\n"
         "f.flush(); print('locked', flush=True); time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with StubServer() as stub:
            code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                    "--no-report", "--out", str(out)], capsys)
        assert_one_line_error(code, err, r"another audit \(pid 4242 \(first audit\)\) is writing into .*wait for it")
        assert "delete" not in err and not (out / MANIFEST).exists()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


# ------------------------------------------------------------------------------------------- item 5
def test_too_few_bootstrap_resamples_are_refused_and_a_stale_report_is_removed(tmp_path, capsys):
    code, _, err = run_cli(["audit", "--model", "smollm2-135m-instruct", "--n-boot", "1", "--out",
                            str(tmp_path / "b")], capsys)
    assert_one_line_error(code, err, r"--n-boot 1 is too few .* give --n-boot 40 or more")
    assert not (tmp_path / "b").exists()
    out = tmp_path / "a"
    with StubServer() as stub:
        args = ["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST, "--no-report",
                "--out", str(out)]
        assert run_cli(args, capsys)[0] == 0
        (out / "report.html").write_text("<html>the report of an earlier run, on other scores</html>")
        (out / "tables" / "report_selection.csv").write_text("job,k\n")
        code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert not (out / "report.html").exists() and not (out / "tables" / "report_selection.csv").exists()
    assert "removed the previous report" in stdout


# ------------------------------------------------------------------------------------------- item 6
def test_a_hung_server_times_out_and_ctrl_c_stops_at_once(tmp_path, capsys):
    # --timeout: a request that never gets an answer fails after 3 tries of 1 s (+1.5 s of backoff)
    with StubServer(hang_after=17) as stub:  # the pre-flight prompt and the first batch of 16 are answered
        start = time.monotonic()
        code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                "--timeout", "1", "--no-report", "--out", str(tmp_path / "t")], capsys)
        took = time.monotonic() - start
    assert_one_line_error(code, err, r"pointwise: .*ReadTimeout.*the rows scored so far are kept.*raise --timeout")
    assert took < 30, took
    assert len(pd.read_csv(next((tmp_path / "t" / "scores").glob("resume_pointwise-*/scores.csv")))) == 16

    # Ctrl-C while requests hang (timeout 60 s): one press, and the command returns at once, keeping the stored rows.
    # The command gets Python's own handler: a test process started in the background by a shell without job control
    # (`make test &`, `pytest ... &`) inherits SIGINT ignored, Python keeps it ignored, and the press never arrives —
    # the requests then run into their timeout and the audit exits 2 after 3 x 60 s. That, not the load, was why a
    # single press went unanswered on busy machines (where tests were run in the background).
    sent: list[float] = []
    with StubServer(hang_after=17) as stub:
        main = threading.main_thread().ident
        done = threading.Event()

        def interrupt() -> None:
            if stub.hung.wait(30):
                time.sleep(0.5)
                if not done.is_set():
                    sent.append(time.monotonic())
                    signal.pthread_kill(main, signal.SIGINT)

        def ctrl_c(signum, frame):  # Python's own handler, until the command has returned (then a press is dropped)
            if not done.is_set():
                raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, ctrl_c)
        presser = threading.Thread(target=interrupt, daemon=True)
        try:
            presser.start()
            code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                    "--timeout", "60", "--no-report", "--out", str(tmp_path / "c")], capsys)
            returned = time.monotonic()
        finally:
            done.set()
            presser.join(10)
            signal.signal(signal.SIGINT, previous)
    assert len(sent) == 1, "the server never hung"
    assert code == 130 and "run the same command again to resume" in err and "Traceback" not in err, (code, err)
    assert returned - sent[0] < 5, returned - sent[0]
    assert len(pd.read_csv(next((tmp_path / "c" / "scores").glob("resume_pointwise-*/scores.csv")))) == 16
    assert not (tmp_path / "c" / LOCK).exists()


def test_a_server_that_hangs_from_the_start_fails_within_the_timeout_in_all(tmp_path, capsys):
    # GET /models and the pre-flight prompt share one deadline; before, each had 3 tries of --timeout (+1.5 s of
    # backoff each): 15 s here, 365 s at the default 60 s
    with StubServer(hang_after=0, hang_models=True) as stub:
        start = time.monotonic()
        code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                "--timeout", "2", "--out", str(tmp_path / "a")], capsys)
        took = time.monotonic() - start
    assert_one_line_error(code, err, r"no usable answer from the server at .*timed out")
    assert took < 4.5, took
    assert not (tmp_path / "a").exists()


# ------------------------------------------------------------------------------------------- item 15
def test_a_wrong_served_model_name_is_named_and_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "a"
    with StubServer() as stub:
        stub.strict = True
        code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-modle", *SLICE, *FAST,
                                "--out", str(out)], capsys)
    assert_one_line_error(code, err, r"serves no model named 'stub-modle' \(it lists 'stub-model'\)")
    assert "--base-url" not in err and not out.exists()


def test_traceback_is_accepted_after_the_subcommand(tmp_path):
    with pytest.raises(audit.AuditError, match="unknown model 'gpt-7'"):
        cli.main(["audit", "--model", "gpt-7", "--traceback", "--out", str(tmp_path / "a")])
    with pytest.raises(audit.AuditError, match="unknown model 'gpt-7'"):
        cli.main(["--traceback", "audit", "--model", "gpt-7", "--out", str(tmp_path / "a")])


@pytest.mark.parametrize("kind", ["folder", "gguf"])
def test_a_model_that_cannot_be_loaded_gets_one_line_naming_the_file(kind, tmp_path, capsys):
    if kind == "folder":
        model = tmp_path / "Broken-Model"
        model.mkdir()
        (model / "config.json").write_text(json.dumps({"model_type": "llama"}))
        (model / "model.safetensors").write_bytes(b"not safetensors at all" * 10)
    else:
        model = tmp_path / "broken.gguf"
        model.write_bytes(b"GGUF" + b"\x00" * 64)
        os.environ["ALLOCBIAS_CACHE"] = str(tmp_path / "cache")  # a failed conversion writes no cache of the user's
    out = tmp_path / "a"
    try:
        code, _, err = run_cli(["audit", "--model", str(model), *SLICE, *FAST, "--out", str(out)], capsys)
    finally:
        os.environ.pop("ALLOCBIAS_CACHE", None)
    assert_one_line_error(code, err, ("the model folder " if kind == "folder" else "the .gguf file ")
                          + str(model).replace(".", r"\.") + " cannot be loaded .*: check that")
    line = next(line for line in err.splitlines() if line.startswith("allocbias:"))
    assert len(line) < 600, len(line)
    assert not out.exists()  # nothing stored: the corrected command starts clean


# ------------------------------------------------------------------------------------------- the audit report
def test_screening_verdict_withholds_for_a_model_that_does_not_screen():
    rows = lambda p, lo, hi, m: pd.DataFrame({"metric": ["p_better_high_low", "mean_label_mass"],  # noqa: E731
                                             "estimate": [p, m], "ci_low": [lo, m], "ci_high": [hi, m]})
    assert audit.screening_verdict(rows(0.8, 0.7, 0.9, 0.9), 10) == {
        "screens": True, "intervals_readable": True, "withhold": False, "reasons": []}
    smollm2_like = audit.screening_verdict(rows(0.2, 0.1, 0.3, 0.9), 10)
    assert smollm2_like["withhold"] and "does not screen" in smollm2_like["reasons"][0]
    no_mass = audit.screening_verdict(rows(0.6, 0.55, 0.65, 0.0001), 10)
    assert no_mass["withhold"] and "0.0001" in no_mass["reasons"][0]
    chance = audit.screening_verdict(rows(0.55, 0.45, 0.65, 0.9), 10)
    assert chance["withhold"] and "cannot be told" in chance["reasons"][0]
    few = audit.screening_verdict(rows(0.8, 0.7, 0.9, 0.9), 2)
    assert few["screens"] and few["withhold"] and "3 distinct resamples" in few["reasons"][0]


def test_an_estimate_outside_its_interval_is_marked():
    assert audit.format_interval({"estimate": -0.045, "ci_low": -0.109, "ci_high": -0.048}).endswith("†")
    assert not audit.format_interval({"estimate": -0.05, "ci_low": -0.109, "ci_high": -0.048}).endswith("†")


def test_a_random_weight_model_report_withholds_verdicts(tmp_path, tiny_model, capsys):  # noqa: F811
    out = tmp_path / "random"
    code, _, err = run_cli(["audit", "--model", str(tiny_model), "--jobs", "retail", "--names-per-group", "5",
                            *FAST, "--out", str(out)], capsys)
    assert code == 0, err
    html = (out / "report.html").read_text(encoding="utf-8")
    lead = html.index("Validity first: this model does not screen")
    assert lead < html.index("Screening.") < html.index("Selection.")
    assert "four-fifths verdicts are withheld" in html and "fall below four fifths" not in html
    assert "interval that excludes 0" not in html
    law = pd.read_csv(out / "tables" / "report_ll144.csv")
    assert set(law["four_fifths_flag"]) == {"withheld"}
    validity = pd.read_csv(out / "tables" / "report_validity.csv").set_index("metric")
    assert "[" in validity.loc["mean_label_mass", "value"]  # with its interval
    prov = pd.read_csv(out / "tables" / "report_provenance.csv")
    assert prov.query("kind == 'resume_pointwise'")["rows_audited"].tolist() == [240]


# ------------------------------------------------------------------------- reports whole or not at all (issue 38.5)
def _full_disk_for(name: str, monkeypatch) -> None:
    """Make allocbias.outputs.write_atomic meet a full disk when it writes ``name``: half the bytes, then ENOSPC."""
    import errno

    from allocbias import outputs

    real = os

    class Disk:
        def __getattr__(self, attr):
            return getattr(real, attr)

        @staticmethod
        def fdopen(fd, mode):
            handle = real.fdopen(fd, mode)
            if f".{name}.partial-" not in real.readlink(f"/proc/self/fd/{fd}"):
                return handle

            class Full:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    handle.close()

                def write(self, data):
                    handle.write(data[: len(data) // 2])
                    handle.flush()
                    raise OSError(errno.ENOSPC, "No space left on device")

            return Full()

    monkeypatch.setattr(outputs, "os", Disk())


def _tiny_report(notebook, output, parameters, **kwargs):  # the report's kernel, without its 60 s of work
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("the report " * 2000)])
    nbformat.write(nb, str(output))


def test_a_full_disk_names_the_report_keeps_the_scores_and_leaves_no_partial_report(tmp_path, capsys, monkeypatch):
    import allocbias.book

    out = tmp_path / "a"
    monkeypatch.setattr(allocbias.book, "execute_notebook", _tiny_report)
    _full_disk_for("report.html", monkeypatch)
    with StubServer() as stub:
        code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                "--out", str(out)], capsys)
    assert_one_line_error(code, err, r"could not write \S*report\.html: the disk is full; .*the scores are kept in "
                          r"\S*scores and the tables in \S*tables, no report was written: free some space, then run "
                          r"the same command again to write the report")
    left = sorted(p.name for p in out.iterdir())
    assert left == ["audit.json", "scores", "tables"], left  # no report.html (whole or none), no partial, no lock
    assert len(pd.read_csv(out / "tables" / "pointwise_scores.csv")) == 48


def test_a_report_that_papermill_cannot_write_names_the_notebook(tmp_path, monkeypatch):
    import errno

    import allocbias.book

    def full(notebook, output, parameters, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(allocbias.book, "execute_notebook", full)
    with pytest.raises(OSError, match=r"could not write \S*report\.ipynb: No space left on device"):
        audit.report_notebook(tmp_path)


def test_leftovers_of_killed_runs_are_removed_and_the_lock_goes_when_a_run_ends(tmp_path, capsys):
    out = tmp_path / "a"
    args = ["audit", "--base-url", None, "--model", "stub-model", *SLICE, *FAST, "--no-report", "--out", str(out)]
    with StubServer() as stub:
        args[2] = stub.url
        assert run_cli(args, capsys)[0] == 0
        assert not (out / LOCK).exists()  # success
        for name in (".report.partial-4242.ipynb", ".report.html.partial-x1y2", "tables/.report_law.csv.partial-z"):
            (out / name).write_text("what a killed run left")
        assert run_cli(args, capsys)[0] == 0
    assert not [p for p in out.rglob("*.partial-*")] and not (out / LOCK).exists()
    # an error and Ctrl-C remove the lock too: the full-disk and Ctrl-C tests below


@pytest.mark.parametrize("where, said", [
    ("_preflight", r"nothing was stored yet: run the same command again to start$"),
    ("_write_tables", r"the scores are kept in \S*scores; run the same command again \(nothing is scored again\)$"),
    ("report_notebook", r"the scores are kept in \S*scores and the tables in \S*tables; the report was not written: "
                        r"run the same command again to write the report \(nothing is scored again\)$"),
])
def test_ctrl_c_at_start_up_or_while_the_report_is_written_says_what_was_kept_in_one_line(where, said, tmp_path,
                                                                                          capsys, monkeypatch):
    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(audit, where, pressed)
    out = tmp_path / "a"
    with StubServer() as stub:
        code, _, err = run_cli(["audit", "--base-url", stub.url, "--model", "stub-model", *SLICE, *FAST,
                                *(["--no-report"] if where == "_write_tables" else []), "--out", str(out)], capsys)
    lines = [line for line in err.splitlines() if line.strip() and "prompt/s" not in line]
    assert code == 130 and len(lines) == 1 and "Traceback" not in err, err
    assert re.match(r"allocbias audit: interrupted; " + said, lines[0]), lines[0]
    assert not (out / "report.html").exists() and not (out / LOCK).exists()


def test_a_ctrl_c_that_python_swallows_in_a_finalizer_is_raised_again():
    class Finalized:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)  # the press lands here: Python prints "Exception ignored" and runs on

    # Python's own handler for the test: a test process started in the background by a shell without job control
    # (`.ci/run &`, `make test &`) inherits SIGINT ignored, and then no press arrives at all (the test failed so)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt), audit.interruptible():
            Finalized()
            time.sleep(3)  # without the guard, this sleep ran to its end: the press was lost
            pytest.fail("the Ctrl-C was lost")
        assert time.monotonic() - start < 1  # the press is raised again at once, and ends the sleep
    finally:
        signal.signal(signal.SIGINT, previous)


# ------------------------------------------------------------------------------ the report's work, done once (37.3)
@pytest.fixture(scope="module")
def retail_scores():
    from allocbias.scoring import catalog

    return catalog.study_scores(["smollm2-fp32-paper"], jobs=["retail"])  # 480 committed rows, 10 names per group


def test_the_audit_size_table_of_several_k_is_that_of_each_k_alone(retail_scores):
    """Each half's pools are simulated once for every k: the rows must be those of each k computed alone."""
    together = audit.audit_size_table(retail_scores, [1, 2], 20, 0, n_splits=2)
    for i, kk in enumerate([1, 2]):
        alone = audit.audit_size_table(retail_scores, [kk], 20, 0, n_splits=2)
        pd.testing.assert_frame_equal(together.iloc[[i]].reset_index(drop=True), alone, check_exact=True)
    repeated = retail_scores.set_axis([7] * len(retail_scores))  # halves are told apart by their rows, not labels
    pd.testing.assert_frame_equal(audit.audit_size_table(repeated, [1, 2], 20, 0, n_splits=2), together,
                                  check_exact=True)


def test_ll144_estimates_without_intervals_are_the_same(retail_scores):
    full = audit.ll144_table(retail_scores)
    bare = audit.ll144_table(retail_scores, intervals=False)
    assert list(bare.columns) == list(full.columns)
    assert bare[["rate_low", "rate_high", "impact_ratio_low", "impact_ratio_high"]].isna().all().all()
    same = ["table", "group", "applicants", "scored_above_median", "scoring_rate", "impact_ratio", "four_fifths_flag",
            "excluded", "auc_di", "p_fair"]
    pd.testing.assert_frame_equal(bare[same], full[same], check_exact=True)
