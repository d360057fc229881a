"""allocbias.scoring.tasks: every task declared once, one runner, and the committed tables still found where they are."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

from allocbias.scoring import catalog
from allocbias.scoring import tasks
from allocbias.scoring import runs
from allocbias import data as D
from allocbias.scoring.items import hiring_bloomberg_items, pairwise_pools
from allocbias.scoring.systems import STUDY_SYSTEMS, System, as_systems


class Stub:
    """A stand-in engine: pointwise the mean label for every prompt, greedy answers naming the first candidate shown."""

    def __init__(self) -> None:
        self.calls = 0

    def pointwise(self, prompts, labels, **kw):
        self.calls += len(prompts)
        score = sum(labels.values()) / len(labels)  # the mean label: 0.5 for No/Yes, 3 for grades 1-5
        return [{"score": score, "label_mass": 1.0, **{f"p_{k}": 1 / len(labels) for k in labels}, "n_tokens": 3}
                for _ in prompts]

    def generate(self, prompts, **kw):
        self.calls += len(prompts)
        return ["1" for _ in prompts]


def test_module_doctests():
    result = doctest.testmod(tasks, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0


def test_every_task_is_declared_once_with_its_parameters():
    assert list(tasks.TASKS) == ["resume_pointwise", "resume_pairwise", "hiring_bloomberg", "essay_pointwise",
                                 "ellipse_pointwise"]
    for name, task in tasks.TASKS.items():
        assert task.name == name
        assert (task.labels is None) != (task.max_new_tokens is None), name  # a score or an answer, never both
        assert catalog.TASK_PARAMS[name] is task.params
    assert [n for n, t in tasks.TASKS.items() if t.served] == ["resume_pointwise", "resume_pairwise"]


def test_unknown_task_and_wrong_routes_are_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown task 'resume'; known: \['resume_pointwise'"):
        tasks.task("resume")
    with pytest.raises(ValueError, match="no wording 'polite'"):
        tasks.TASKS["resume_pointwise"].template("polite")
    with pytest.raises(ValueError, match="scored by local models only"):
        runs.score("essay_pointwise", D.load_demo_essays(), served=Stub())
    with pytest.raises(ValueError, match="pass system"):
        runs.score("essay_pointwise", D.load_demo_essays())
    with pytest.raises(ValueError, match="not both"):
        runs.score("resume_pointwise", D.candidate_table(["retail"], names_per_group=1), served=Stub(),
                    system=System("smollm2-135m-instruct"))


def test_the_committed_tables_keep_their_addresses():
    """The registry addresses each committed (system, task) table where the catalog kept it before: a changed
    template key, parameter or wording would re-address the table and make every chapter score again."""
    root = catalog.scores_dir()
    found = 0
    for system in as_systems(STUDY_SYSTEMS):
        for name in ("resume_pointwise", "resume_pairwise"):
            store = catalog.store_for(system, name, root)
            if store.path.exists():
                found += 1
                assert store.read().shape[0] > 0
    assert found >= 4


def test_one_runner_scores_only_what_is_missing_for_every_local_task(tmp_path):
    system = System("smollm2-135m-instruct")
    cands = D.candidate_table(["retail"], names_per_group=1)
    inputs = {
        "resume_pointwise": cands,
        "resume_pairwise": pairwise_pools(cands, 1, 0),
        "hiring_bloomberg": hiring_bloomberg_items(1, 0, jobs=["retail"]),
        "essay_pointwise": D.load_demo_essays().head(6),
    }
    for name, frame in inputs.items():
        engine = Stub()
        first = runs.score(name, frame, system=system, engine=engine, root=tmp_path, progress=False)
        n = engine.calls
        again = runs.score(name, frame, system=system, engine=engine, root=tmp_path, progress=False)
        assert engine.calls == n > 0, name  # the second run scores nothing
        pd.testing.assert_frame_equal(first, again)
        assert len(first) == len(frame) if name != "resume_pairwise" else len(first) == 28 * 2
    answered = runs.score("hiring_bloomberg", inputs["hiring_bloomberg"], system=system, engine=Stub(),
                           root=tmp_path, progress=False)
    assert "slots" in answered.attrs and set(answered["answer"]) == {"1"}


def test_published_data_sets_are_declared_with_their_loaders():
    assert set(tasks.PUBLISHED) == {"lippens", "recinq", "jderbysh"}
    lippens = tasks.PUBLISHED["lippens"]
    assert "gpt-3.5" in lippens.scorer
    assert len(lippens.load()) == 34560


@pytest.mark.parametrize("name", list(tasks.TASKS))
def test_allocbias_score_builds_each_tasks_input_from_its_options(name):
    """`allocbias score <task>` gives every task the options its input table needs (declared in the registry)."""
    from allocbias import cli

    args = cli.build_parser().parse_args(["score", name, "--systems", "smollm2-fp32-paper", "--jobs", "retail",
                                          "--names-per-group", "1", "--rounds", "2", "--orderings", "1"])
    task = tasks.TASKS[name]
    inputs = task.input_table(vars(args))
    built = task.items(inputs, task.wordings[0])
    assert len(inputs) > 0 and len(built) > 0 and {"prompt_id", "messages"} <= set(built.columns)
    if name in ("resume_pointwise", "resume_pairwise", "hiring_bloomberg"):
        assert set(inputs["job"]) == {"retail"}


def test_the_pairwise_input_keeps_the_groups_asked_for():
    options = {"jobs": ["retail"], "names_per_group": 1, "seed": 0, "rounds": 3,
               "groups": ["Male White", "Female Black"]}
    pools = tasks.TASKS["resume_pairwise"].input_table(options)
    assert set(pools["group"]) == {"Male White", "Female Black"} and pools["round"].nunique() == 3
    with pytest.raises(ValueError, match="task 'hiring_bloomberg' needs the option 'orderings'"):
        tasks.TASKS["hiring_bloomberg"].input_table(options)


# ------------------------------------------------ issue 31 item 3: the registry owns a task's prompt and scorer
def test_every_committed_tables_prompt_hash_is_its_tasks():
    """The task registry addresses a table's prompt (``Task.prompt_hash``): every committed table records the hash
    its task gives for its wording, so moving the hash into the registry re-addressed nothing."""
    import json

    provenances = [json.loads(p.read_text(encoding="utf-8"))
                   for p in sorted((D.data_dir() / "scores").glob("*/provenance.json"))]
    assert {p["kind"] for p in provenances} == set(tasks.TASKS)
    for prov in provenances:
        task = tasks.task(prov["kind"])
        assert prov["prompt_hash"] == task.prompt_hash(prov["params"]["wording"]), prov["kind"]


def test_the_runner_passes_the_task_down_and_never_looks_it_up_again(monkeypatch, tmp_path):
    """``allocbias score`` resolves the task once (the CLI) and the runner, the catalog and the scorer take the Task
    itself: no step climbs back to the registry by name."""
    system = System("smollm2-135m-instruct")
    task = tasks.task("resume_pointwise")
    looked_up = []
    real = tasks.TASKS
    monkeypatch.setattr(tasks, "TASKS", type("Counting", (dict,), {
        "__getitem__": lambda self, k: looked_up.append(k) or dict.__getitem__(self, k)})(real))
    cands = D.candidate_table(["retail"], names_per_group=1)
    table = runs.score(task, cands, system=system, engine=Stub(), root=tmp_path, progress=False)
    assert len(table) == len(cands) and looked_up == []
    assert catalog.store_for(system, task, tmp_path).address == catalog.store_for(system, "resume_pointwise", tmp_path).address


def test_the_batch_scorer_is_the_tasks():
    """A pointwise task's batch is scored by the engine's label probabilities, an answer task's by a greedy answer
    of at most its ``max_new_tokens`` tokens (the registry's :func:`batch_scorer`)."""
    stub = Stub()
    batch = pd.DataFrame({"prompt_id": ["a", "b"], "messages": [[{"role": "user", "content": "x"}]] * 2})
    point = tasks.TASKS["resume_pointwise"]
    scored = tasks.batch_scorer(lambda: stub, labels=point.labels, max_new_tokens=point.max_new_tokens)(batch)
    assert list(scored["prompt_id"]) == ["a", "b"] and scored["score"].tolist() == [0.5, 0.5] and stub.calls == 2
    pair = tasks.TASKS["resume_pairwise"]
    answered = tasks.batch_scorer(lambda: stub, labels=pair.labels, max_new_tokens=pair.max_new_tokens)(batch)
    assert list(answered.columns) == ["prompt_id", "answer"] and len(answered) == 2
