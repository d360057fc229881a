"""allocbias.study.decisions: the decisions chapter's findings on small synthetic score tables.

Three groups (reference B), two systems, two jobs; system ``favours-A`` scores group A's candidates above everyone,
so A takes every seat at k = 1 and the gaps have a known sign and size."""

from __future__ import annotations

import doctest
import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from allocbias.study import decisions  # noqa: E402
from allocbias.study.decisions import (
    DecisionFindings,
    decisions_findings,
    direction_statement,
    figure_direction,
    figure_score_gap,
    figure_selection_rates,
    join_or,
)

GROUPS = ["A", "B", "C"]
SYSTEMS = ["favours-A", "noise"]
JOBS = ["j1", "j2"]
KEYS = {
    "k", "rounds", "n_groups", "n_jobs", "n_systems", "n_candidates", "names_per_group", "first_system", "reference",
    "read_seconds", "example_job", "example_selected", "tie_share", "parity", "max_total_error", "n_rounds_all",
    "n_tied_rounds", "phi_min", "phi_min_where", "phi_max", "phi_max_where", "dir_first_ref_below", "dp_se",
    "dDP_min", "dDP_min_where", "dDP_max", "dDP_max_where", "n_cells", "n_cells_negative", "dEO_min", "dEO_max",
    "r_dDP_dEO", "dir_se_mean", "dir_first_n_pos", "dir_first_pos_groups", "dir_first_n_clear",
    "dir_first_statement", "dir_all_n", "dir_all_n_pos", "dir_all_n_clear_neg", "dir_n_systems_all_pos",
    "dir_systems_ref_low", "dir_systems_ref_high", "n_others", "n_sign_flips", "sign_flip_groups", "n_cell_flips",
    "r_delta_dDP", "r_rabbi_dDP", "delta_abs_max", "score_min", "score_max",
}


def synthetic_scores(seed: int = 0, per_group: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for system, job, group, i in itertools.product(SYSTEMS, JOBS, GROUPS, range(per_group)):
        base = rng.uniform(0.1, 0.5)
        score = base + (0.5 if system == "favours-A" and group == "A" else 0.0)
        rows.append({"system": system, "job": job, "group": group, "full_name": f"{group}{i}",
                     "resume_id": f"{job}-r{i % 3}", "quality": "high" if i % 2 else "low",
                     "qualified": bool(i % 2), "score": score})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def findings() -> DecisionFindings:
    return decisions_findings(systems=SYSTEMS, jobs=JOBS, k=1, rounds=200, seed=0, scores=synthetic_scores(),
                              reference="B", groups=GROUPS)


def test_module_doctests():
    result = doctest.testmod(decisions)
    assert result.attempted >= 3 and result.failed == 0


def test_phrases():
    assert join_or(["x", "y"]) == "x, y" and join_or([]) == "none" and join_or([], "no system") == "no system"
    assert direction_statement(pd.Series([0.1, 0.2])) == "selects White men less often than most other groups"
    assert direction_statement([-0.1, -0.2, 0.3]) == "selects White men more often than most other groups"
    assert direction_statement([0.1, -0.1]).startswith("selects White men neither")


def test_glue_values_have_the_chapter_keys_and_plain_types(findings):
    values = findings.glue_values()
    assert set(values) == KEYS  # Figure 1's named groups are not among the synthetic ones
    for key, value in values.items():
        assert type(value) in (int, float, str), (key, type(value))


def test_group_a_takes_every_seat_of_the_biased_system(findings):
    v = findings.glue_values()
    assert v["first_system"] == "favours-A" and v["reference"] == "B" and v["k"] == 1 and v["n_groups"] == 3
    assert v["example_selected"] == "A"
    assert v["parity"] == pytest.approx(1 / 3) and v["max_total_error"] < 1e-12
    assert v["phi_max"] == 1.0 and v["phi_max_where"].startswith("A (")
    assert v["tie_share"] == pytest.approx(1 / 3)
    assert v["n_rounds_all"] == 200 * len(JOBS) * len(SYSTEMS)
    assert v["n_cells"] == 2 * len(JOBS) and v["n_others"] == 2
    gaps = findings.gaps[(findings.gaps["system"] == "favours-A") & (findings.gaps["group"] == "A")]
    assert np.allclose(gaps["dDP"], 1.0)  # A always selected, B never
    assert v["dDP_max"] == 1.0 and v["dir_first_n_pos"] >= 1
    assert v["dir_first_pos_groups"].startswith("A")
    assert v["dp_se"] == pytest.approx(np.sqrt(2 * (1 / 3) * (2 / 3) * 3 / 2 / 200))
    assert v["dir_all_n"] == len(SYSTEMS) * 2
    assert findings.figure1.loc["A", "avg_gap"] > 0.2  # δ sees the planted shift (0.5) too


def test_tables_have_the_shapes_the_chapter_shows(findings):
    assert list(findings.rate_table.index) == GROUPS
    assert findings.rate_table.shape[1] == 2 * len(JOBS)
    assert list(findings.gap_table.index) == ["A", "C"]
    assert list(findings.mean_gaps.index) == SYSTEMS
    assert not {"quota_sweep", "matched", "sign_changes_with_k"} & set(dir(findings)), "exercise answers stay out"
    assert list(findings.score_gap_table.columns) == ["δ (mean over jobs)", "ΔDP (mean over jobs)"]
    assert findings.example_pool["score"].is_monotonic_decreasing and findings.example_pool["selected"].sum() == 1


def test_figures_have_titled_axes(findings):
    for draw in (figure_selection_rates, figure_direction, figure_score_gap):
        fig = draw(findings)
        assert isinstance(fig, matplotlib.figure.Figure)
        titled = [ax for ax in fig.axes if ax.get_title()]
        assert titled, draw.__name__
        matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("kwargs, name", [
    ({"k": 3}, "k"), ({"k": 0}, "k"), ({"rounds": 0}, "rounds"), ({"seed": -1}, "seed"),
    ({"systems": []}, "systems"), ({"jobs": []}, "jobs"), ({"reference": "Z"}, "reference"),
])
def test_bad_parameters_name_themselves(kwargs, name):
    args = dict(systems=SYSTEMS, jobs=JOBS, k=1, rounds=10, seed=0, scores=synthetic_scores(), reference="B",
                groups=GROUPS)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        decisions_findings(**args)
