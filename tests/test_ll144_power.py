"""The four-fifths rule's operating characteristics at given counts (allocbias.measures.ll144.power): against a
brute-force double enumeration in exact fractions, against seeded simulation, the p-values against scipy, and
the properties the definitions imply."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from allocbias.measures.ll144 import power as P

SETTINGS = settings(max_examples=40, deadline=None)


def brute_flag(ng: int, nc: int, rc: float, rho: float, bound: Fraction = Fraction(4, 5)) -> float:
    """Every pair of outcomes, the impact ratio in exact fractions (0/0 := 1)."""
    total = 0.0
    for xc in range(nc + 1):
        pc = stats.binom.pmf(xc, nc, rc)
        for xg in range(ng + 1):
            rg, r_c = Fraction(xg, ng), Fraction(xc, nc)
            top = max(rg, r_c)
            ir = Fraction(1) if top == 0 else rg / top
            if ir < bound:
                total += pc * stats.binom.pmf(xg, ng, rho * rc)
    return total


@pytest.mark.parametrize("ng, nc, rc, rho", [(1, 1, 0.5, 1.0), (5, 5, 0.4, 1.0), (7, 13, 0.3, 0.5),
                                             (12, 30, 0.2, 0.9), (20, 9, 0.7, 0.75), (3, 40, 1.0, 0.2),
                                             (6, 6, 0.0, 1.0)])
def test_flag_probability_equals_brute_force_enumeration(ng, nc, rc, rho):
    assert P.flag_probability(ng, nc, rc, rho) == pytest.approx(brute_flag(ng, nc, rc, rho), abs=1e-12)


def test_a_ratio_of_exactly_the_bound_is_not_flagged():
    # outcomes such as 8 of 40 against 100 of 400 give IR = 0.2 / 0.25 = 4/5 exactly: never flagged
    assert P.flag_probability(40, 400, 0.25, ratio=0.8) == pytest.approx(brute_flag(40, 400, 0.25, 0.8), abs=1e-12)


def test_flag_probability_agrees_with_simulation():
    rng = np.random.default_rng(7)
    ng, nc, rc, rho, draws = 60, 500, 0.3, 0.85, 200_000
    xg = rng.binomial(ng, rho * rc, draws)
    xc = rng.binomial(nc, rc, draws)
    flagged = (xg * 5 * nc < 4 * ng * xc).mean()
    exact = P.flag_probability(ng, nc, rc, rho)
    assert abs(flagged - exact) < 4 * np.sqrt(exact * (1 - exact) / draws)


def test_vectorised_equals_one_at_a_time():
    ng, nc, rc = np.array([3, 40, 250, 1000]), np.array([50, 400, 250, 30]), np.array([0.1, 0.25, 0.6, 0.9])
    together = P.flag_probability(ng, nc, rc, 0.7)
    alone = [P.flag_probability(int(a), int(b), float(c), 0.7) for a, b, c in zip(ng, nc, rc)]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-15)


def test_detectable_ratio_is_the_root_of_the_flag_probability():
    d = P.detectable_ratio([40, 150], [400, 600], [0.25, 0.4])
    np.testing.assert_allclose(P.flag_probability([40, 150], [400, 600], [0.25, 0.4], d), P.POWER, atol=1e-4)
    assert P.flag_probability(40, 400, 0.25, d[0] - 0.01) > P.POWER > P.flag_probability(40, 400, 0.25, d[0] + 0.01)


def test_detectable_ratio_edges():
    assert np.isnan(P.detectable_ratio(2, 2, 0.5))  # even a never-selected group is flagged only 75% of the time
    assert P.flag_probability(2, 2, 0.5, 0.0) == pytest.approx(0.75)
    assert P.detectable_ratio(1, 1000, 0.5, power=0.3) == 1.0  # a single applicant: a fair process is flagged half


@SETTINGS
@given(ng=st.integers(1, 80), nc=st.integers(1, 300), rc=st.floats(0.01, 0.99),
       a=st.floats(0.0, 1.0), b=st.floats(0.0, 1.0))
def test_flag_probability_falls_as_the_true_ratio_rises(ng, nc, rc, a, b):
    lo, hi = min(a, b), max(a, b)
    assert P.flag_probability(ng, nc, rc, lo) >= P.flag_probability(ng, nc, rc, hi) - 1e-12


@SETTINGS
@given(rc=st.floats(0.05, 0.95))
def test_larger_audits_flag_fair_processes_less_and_see_closer_to_the_bound(rc):
    sizes = np.array([100, 1000, 10_000])
    ff = P.false_flag_rate(sizes, sizes, rc)
    assert ff[0] >= ff[1] - 1e-9 >= ff[2] - 2e-9 and ff[2] < 1e-3
    d = P.detectable_ratio(sizes, sizes, rc)
    assert (np.diff(d) > -1e-4).all() and (d <= 0.8).all()
    assert d[-1] > 0.75


@SETTINGS
@given(ng=st.integers(1, 60), nc=st.integers(1, 60), data=st.data())
def test_p_values_match_scipy(ng, nc, data):
    xg, xc = data.draw(st.integers(0, ng)), data.draw(st.integers(0, nc))
    expected = stats.fisher_exact([[xg, ng - xg], [xc, nc - xc]], alternative="less").pvalue
    assert P.fisher_p_value(xg, ng, xc, nc) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    z, p = P.z_test(xg, ng, xc, nc)
    pooled = (xg + xc) / (ng + nc)
    se = np.sqrt(pooled * (1 - pooled) * (1 / ng + 1 / nc))
    direct = 0.0 if se == 0 else (xg / ng - xc / nc) / se
    assert z == pytest.approx(direct, abs=1e-12) and p == pytest.approx(stats.norm.cdf(direct), abs=1e-12)


def test_characteristics_table_and_reading():
    t = P.four_fifths_characteristics([4, 30], [40, 400], 100, 400)
    assert list(t.columns) == ["false_flag_rate", "detectable_ratio", "p_value", "z", "z_p_value"]
    assert t["false_flag_rate"].iloc[0] == pytest.approx(P.false_flag_rate(40, 400, 0.25))
    line = P.four_fifths_reading(40, 400, t["false_flag_rate"].iloc[0], t["detectable_ratio"].iloc[0])
    assert line == ("with 40 applicants against 400, a fair process is flagged 24% of the time; only a true ratio "
                    "below 0.60 is flagged 80% of the time")


@pytest.mark.parametrize("call, message", [
    (lambda: P.flag_probability(-1, 10, 0.5), "n_group"),
    (lambda: P.flag_probability(10, 2.5, 0.5), "n_comparator"),
    (lambda: P.flag_probability(10, 10, 1.5), "comparator_rate"),
    (lambda: P.flag_probability(10, 10, 0.5, ratio=1.2), "ratio"),
    (lambda: P.flag_probability(0, 10, 0.5), "at least 1"),
    (lambda: P.detectable_ratio(10, 10, 0.5, power=1.0), "power"),
    (lambda: P.fisher_p_value(11, 10, 1, 10), "more selected"),
    (lambda: P.flag_probability(10, 10, 0.5, bound=1.5), "bound"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_table_characteristics_over_several_tables():
    """Each table's compared groups against its own comparator; rate-only tables with rates=True; the rest say why."""
    import pandas as pd

    from allocbias import ll144

    counts = pd.DataFrame({"table": ["a"] * 4 + ["b"] * 3,
                           "group": ["F", "M", "X", "U", "F", "M", "Y"],
                           "applicants": [40, 400, 5, 30, 60, 200, 80],
                           "selected": [4, 100, 1, 0, 14.4, 96.0, 20.0]})
    table = ll144.impact_ratio_table(counts, group="group", applicants="applicants", selected="selected",
                                     by="table", unknown=["U"], margins=False, exclude_below=0.02)
    ch = ll144.table_characteristics(table, by="table")
    status = dict(zip(table["table"] + table["group"], ch["status"]))
    assert status == {"aF": "compared", "aM": "comparator", "aX": "excluded", "aU": "unknown",
                      "bF": "counts not whole", "bM": "comparator", "bY": "counts not whole"}
    f = ch[(table["table"] == "a") & (table["group"] == "F")].iloc[0]
    assert f["false_flag_rate"] == pytest.approx(P.false_flag_rate(40, 400, 0.25), abs=1e-12)
    assert f["detectable_ratio"] == pytest.approx(P.detectable_ratio(40, 400, 0.25), abs=1e-9)
    assert f["p_value"] == pytest.approx(stats.fisher_exact([[4, 36], [100, 300]], alternative="less")[1])
    rates = ll144.table_characteristics(table, by="table", rates=True)
    b = (table["table"] == "b") & (table["group"] != "M")
    assert (rates.loc[b, "status"] == "rate only").all() and rates.loc[b, "p_value"].isna().all()
    assert rates.loc[b, "false_flag_rate"].tolist() == pytest.approx(
        P.false_flag_rate([60, 80], 200, 0.48).tolist(), abs=1e-12)
    assert rates.loc[~b, "status"].tolist() == ch.loc[~b, "status"].tolist()
    with pytest.raises(ValueError, match="comparator"):
        ll144.table_characteristics(table.drop(columns="comparator"))
