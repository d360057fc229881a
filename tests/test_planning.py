"""``allocbias plan`` and the functions behind it (allocbias.measures.planning): a Local Law 144 audit's applicants
per group, an LLM audit's names per group. Its answers must be those of ``ll144.false_flag_rate``,
``ll144.detectable_ratio`` and ``reliability.size_for_reliability``, and of an earlier audit's own size table."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pandas as pd
import pytest

from allocbias import audit, cli, ll144
from allocbias.measures import planning, reliability


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_module_doctests():
    result = doctest.testmod(planning, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted >= 15 and result.failed == 0


# --------------------------------------------------------------------------- Local Law 144
@pytest.mark.parametrize("ratio", [1, 2.5, 10])
def test_ll144_at_is_the_power_module_s(ratio):
    n = np.array([7, 40, 333])
    nc = np.maximum(1, np.floor(ratio * n + 0.5)).astype(int)
    at = planning.ll144_at(n, 0.3, group_ratio=ratio)
    assert at["comparator's applicants"].tolist() == nc.tolist()
    assert at["false-flag rate"].to_numpy() == pytest.approx(ll144.false_flag_rate(n, nc, 0.3), abs=1e-15)
    np.testing.assert_allclose(at["detectable ratio"], ll144.detectable_ratio(n, nc, 0.3), atol=1e-15)
    fixed = planning.ll144_at([10, 20], 0.3, comparator=500)
    assert fixed["false-flag rate"].tolist() == pytest.approx(ll144.false_flag_rate([10, 20], 500, 0.3).tolist())


@pytest.mark.parametrize("rate,ratio,comparator", [(0.3, 1, None), (0.2, 3, None), (0.4, 1, 250)])
def test_size_needed_is_where_the_power_module_s_rates_meet_the_targets_from_on(rate, ratio, comparator):
    top = 250
    need = planning.ll144_size_needed(rate, group_ratio=ratio, comparator=comparator, false_flag=0.1, ratio=0.6,
                                      search_max=top)
    n = np.arange(1, top + 1)
    nc = np.full(n.size, comparator) if comparator else planning.comparator_applicants(n, ratio)
    ffr = ll144.false_flag_rate(n, nc, rate)
    det = ll144.detectable_ratio(n, nc, rate)
    for key, ok in (("false_flag_n", ffr < 0.1), ("detect_n", det >= 0.6)):
        first = need[key]
        assert first is not None and ok[first - 1:].all(), key  # from the answer on, every size passes
        assert first == 1 or not ok[first - 2], key             # the size before it fails
    assert planning.ll144_size_needed(rate, false_flag=1e-9, search_max=30)["false_flag_n"] is None


def test_the_planning_grid_is_one_search_per_cell():
    grid = planning.ll144_size_grid([0.2, 0.4], ["1:1", "1:3"], search_max=200)
    assert grid[["selection rate", "group ratio"]].values.tolist() == [[0.2, 1], [0.2, 3], [0.4, 1], [0.4, 3]]
    for _, row in grid.iterrows():
        need = planning.ll144_size_needed(row["selection rate"], group_ratio=row["group ratio"], search_max=200)
        assert [row["false_flag_n"], row["detect_n"]] == [need["false_flag_n"], need["detect_n"]] or \
            pd.isna(row["false_flag_n"]) and need["false_flag_n"] is None


def test_group_ratios_and_bad_input_are_named():
    assert planning.parse_group_ratio(" 1 : 10 ") == 10.0
    for bad in ("0", "1:", "a:b", "-2", "nan"):
        with pytest.raises(ValueError, match="group ratio"):
            planning.parse_group_ratio(bad)
    with pytest.raises(ValueError, match="rate"):
        planning.ll144_at([10], 1.5)
    with pytest.raises(ValueError, match="applicants"):
        planning.ll144_at([0], 0.2)


# --------------------------------------------------------------------------- an LLM audit
@pytest.mark.parametrize("rho,size,target", [(0.05, 15, 0.8), (0.5, 10, 0.8), (0.12, 2, 0.5), (0.9, 4, 0.8),
                                             (0.3, 1, 0.95)])
def test_units_needed_is_size_for_reliability_rounded_up(rho, size, target):
    exact = reliability.size_for_reliability(rho, size, target)
    u = planning.units_needed(rho, size, target)
    assert u == max(1, math.ceil(exact - 1e-9))
    if u > 1:  # one unit fewer falls short of the target; u reaches it
        assert reliability.spearman_brown(rho, (u - 1) / size) < target <= reliability.spearman_brown(rho, u / size) + 1e-12
    with pytest.raises(ValueError, match="rho must lie in"):
        planning.units_needed(-0.1, size, target)


def test_the_shipped_measured_reliabilities_are_self_consistent():
    table = planning.measured_reliability()
    assert list(table.columns[:len(planning.MEASURED_COLUMNS) - 1]) == list(planning.MEASURED_COLUMNS[1:])
    ok = table[(table["reliability"] > 0) & (table["reliability"] < 1)]
    assert len(ok) >= 5
    for key, m in ok.iterrows():
        assert m["lo"] <= m["reliability"] <= m["hi"], key
        assert m["reliability of one unit"] == pytest.approx(
            reliability.spearman_brown(m["reliability"], 1 / m["size per half"]), rel=1e-12), key
    assert table.loc[table["reliability"] <= 0, "reliability of one unit"].isna().all()


def test_audit_reliability_reads_the_row_of_its_quota():
    t = pd.DataFrame({"k": [1, 3], "names_per_group": 10, "names_per_half": 5, "n_points": 28,
                      "reliability_half": [0.2, 0.3]})
    assert planning.audit_reliability(t)["reliability"] == 0.2
    assert planning.audit_reliability(t, 3)["reliability"] == 0.3
    with pytest.raises(ValueError, match="no reliability at k = 2: its quotas are 1, 3"):
        planning.audit_reliability(t, 2)


# --------------------------------------------------------------------------- the command
def test_plan_ll144_agrees_with_the_power_module(capsys):
    code, out, _ = run(["plan", "ll144", "--rate", "0.3", "--group-ratio", "1:4", "--applicants", "60", "250",
                        "--search-max", "300", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert [r["comparator's applicants"] for r in got["at"]] == [240, 1000]
    assert [r["false-flag rate"] for r in got["at"]] == pytest.approx(
        ll144.false_flag_rate([60, 250], [240, 1000], 0.3).tolist(), abs=1e-15)
    assert [r["detectable ratio"] for r in got["at"]] == pytest.approx(
        ll144.detectable_ratio([60, 250], [240, 1000], 0.3).tolist(), abs=1e-15)
    need = planning.ll144_size_needed(0.3, group_ratio=4, search_max=300)
    assert (got["false_flag_n"], got["detect_n"]) == (need["false_flag_n"], need["detect_n"])
    code, text, _ = run(["plan", "ll144", "--rate", "0.3", "--comparator", "900", "--applicants", "60",
                         "--search-max", "300"], capsys)
    assert code == 0 and "comparator selected at 30%, 900 applicants" in text
    assert "false-flag rate" in text and "applicants per group on" in text


def test_plan_llm_assume_agrees_with_size_for_reliability(capsys):
    m = planning.measured_reliability().loc["recinq"]
    code, out, _ = run(["plan", "llm", "--assume", "recinq", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)["rows"]
    for row in rows:
        exact = reliability.size_for_reliability(m["reliability"], m["size per half"], row["target"])
        assert row["units"] == math.ceil(exact)
        assert row["names per group, 4 jobs"] == math.ceil(row["units"] / 4)
    code, text, _ = run(["plan", "llm", "--assume", "recinq"], capsys)
    assert f"--names-per-group {rows[-1]['names per group, 4 jobs']}" in text


def test_plan_llm_from_an_audit_gives_the_audit_s_own_size(tmp_path, capsys):
    from .test_audit_size_report import scores_with

    size = audit.audit_size_table(scores_with(1.0, 2), [1, 2], 60, 0, n_splits=4)
    (tmp_path / "tables").mkdir()
    size.to_csv(tmp_path / "tables" / "report_audit_size.csv", index=False)
    (tmp_path / "audit.json").write_text(json.dumps({"options": {
        "command": "allocbias audit --model m --out 'my audit' --names-per-group 4"}}))
    code, out, _ = run(["plan", "llm", "--from", str(tmp_path), "--k", "2", "--target", "0.8", "--json"], capsys)
    assert code == 0
    row = json.loads(out)["rows"][0]
    assert row["names per group, 1 job"] == math.ceil(size.loc[1, "names_for_target"] - 1e-9)
    code, text, _ = run(["plan", "llm", "--from", str(tmp_path), "--target", "0.8"], capsys)
    want = math.ceil(size.loc[0, "names_for_target"] - 1e-9)
    if want <= 100:
        assert f"allocbias audit --model m --out 'my audit' --names-per-group {want}" in text


@pytest.mark.parametrize("args,message", [
    (["--measured-on", "4"], "--measured-on goes with --reliability"),
    (["--assume", "nobody"], "is not a reliability the book measured"),
    (["--assume", "jderbysh"], "not positive"),
    (["--from", "/nonexistent/audit"], "report_audit_size.csv does not exist"),
    (["--assume", "recinq", "--k", "2"], "--k goes with --from"),
])
def test_plan_llm_bad_input_is_one_line(args, message, capsys):
    code, _, err = run(["plan", "llm", *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_plan_llm_lists_what_may_be_assumed(capsys):
    code, out, _ = run(["plan", "llm"], capsys)
    assert code == 0
    for key in planning.measured_reliability().index:
        assert key in out
