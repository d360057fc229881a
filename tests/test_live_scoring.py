"""Live scoring starts only when asked (issue 14): on the main branch chapters 2 and 9 scored missing rows live
without a parameter asking for it (a new or mistyped scores_root started model scoring silently)."""

from __future__ import annotations

import pandas as pd
import pytest

from allocbias.book import NotebookExecutionError, execute_notebook, load_profile, notebook_parameters, repo_root
from allocbias.store import MissingRowsError, ScoreStore, run_resumable, set_live_scoring

ROOT = repo_root()


@pytest.fixture
def live_off():
    set_live_scoring(False, how="set the parameter live_scoring to true")
    yield
    set_live_scoring(True)


def test_run_resumable_names_missing_rows_and_command_when_live_scoring_is_off(tmp_path, live_off):
    store = ScoreStore(tmp_path, kind="toy", model_key="m@fp32", prompt_hash="p", params={}, command="make-it --all")
    items = pd.DataFrame({"prompt_id": ["a", "b", "c"]})
    calls = []
    with pytest.raises(MissingRowsError, match=r"lacks 3 of the 3 rows .*\['a', 'b', 'c'\].*live scoring is off; "
                                                r"set the parameter live_scoring to true; the table's command: make-it --all"):
        run_resumable(store, items, lambda b: calls.append(b) or b, batch_size=2, progress=False)
    assert calls == [] and not store.path.exists()


def test_complete_tables_read_with_live_scoring_off(tmp_path, live_off):
    store = ScoreStore(tmp_path, kind="toy", model_key="m@fp32", prompt_hash="p", params={})
    store.append(pd.DataFrame({"prompt_id": ["a"], "score": [0.5]}))
    out = run_resumable(store, pd.DataFrame({"prompt_id": ["a"]}), lambda b: 1 / 0, batch_size=1, progress=False)
    assert out["score"].tolist() == [0.5]


@pytest.mark.parametrize("stem", ["02_scoring", "09_hiring_bloomberg"])
def test_scoring_chapters_score_live_only_when_asked(stem):
    assert notebook_parameters(ROOT / "notebooks" / f"{stem}.ipynb")["live_scoring"] is False
    assert load_profile("smoke", root=ROOT)[stem]["live_scoring"] is True  # the smoke profile scores live
    assert "live_scoring" not in load_profile("default", root=ROOT).get(stem, {})


def test_chapter_9_with_a_new_scores_root_names_the_missing_rows(tmp_path):
    empty = tmp_path / "new-scores"
    empty.mkdir()
    params = {**load_profile("smoke", root=ROOT)["09_hiring_bloomberg"], "scores_root": str(empty)}
    params.pop("live_scoring")
    with pytest.raises(NotebookExecutionError, match=r"(?s)MissingRowsError: .*new-scores.*lacks \d+ of the \d+ "
                                                     r"rows.*live scoring is off; set the parameter live_scoring"):
        execute_notebook(ROOT / "notebooks" / "09_hiring_bloomberg.ipynb", tmp_path / "out.ipynb", params, cwd=ROOT)
    assert not any(empty.iterdir())  # nothing was scored or created


def test_a_findings_function_forbids_live_scoring_for_its_own_reads_only(tmp_path):
    """The chapters' findings functions run in the caller's process (a test session, a user's notebook), so the
    setting they make is restored when they return or raise: scoring elsewhere in the process is not switched off."""
    from allocbias.scoring.store import live_scoring

    store = ScoreStore(tmp_path, kind="toy", model_key="m@fp32", prompt_hash="p", params={})
    items = pd.DataFrame({"prompt_id": ["a"]})
    with pytest.raises(MissingRowsError, match="set live_scoring"):
        with live_scoring(False, how="set live_scoring"):
            run_resumable(store, items, lambda b: b.assign(score=0.5), batch_size=1, progress=False)
    out = run_resumable(store, items, lambda b: b.assign(score=0.5), batch_size=1, progress=False)
    assert out["score"].tolist() == [0.5]


def test_chapter_9_findings_leave_live_scoring_as_they_found_it(tmp_path):
    from allocbias.scoring import store as store_module
    from allocbias.study.hiring_bloomberg import hiring_bloomberg_findings

    with pytest.raises(MissingRowsError):  # a fresh scores_root lacks every answer, and live scoring is off
        hiring_bloomberg_findings(["smollm2-fp32-paper"], jobs=["retail"], n_orderings=1,
                                  scores_root=str(tmp_path), live_scoring=False)
    assert store_module._LIVE_SCORING["allowed"] is True
