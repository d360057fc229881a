"""The replication switch: ``metrics.jsd`` and the pairwise delta in the paper's text (default) and its code."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias.metrics import DELTA_VARIANTS, JSD_VARIANTS, bias_table, jsd, pairwise_gap_table, pairwise_win_share


def test_variant_names() -> None:
    assert JSD_VARIANTS == ("paper", "authors")
    assert DELTA_VARIANTS == ("paper", "authors")


# --------------------------------------------------------------------------------------------------------------
# JSD
# --------------------------------------------------------------------------------------------------------------
def test_jsd_authors_hand_computed() -> None:
    """A = (0, 1, 1, 2), B = (1, 2, 2, 2, 9); 2 bins over A's range [0, 2]: [0, 1), [1, 2].

    P = (1/4, 3/4); B's 9 is dropped but still counts in B's size, Q = (0/5, 4/5); only the second bin is
    non-empty in both, so JSD = 1/2 (3/4 ln((3/4)/m) + 4/5 ln((4/5)/m)), m = (3/4 + 4/5) / 2, in nats.
    """
    a, b = [0.0, 1.0, 1.0, 2.0], [1.0, 2.0, 2.0, 2.0, 9.0]
    m = (0.75 + 0.8) / 2
    expected = 0.5 * (0.75 * math.log(0.75 / m) + 0.8 * math.log(0.8 / m))
    assert jsd(a, b, bins=2, variant="authors") == pytest.approx(expected, abs=1e-15)
    # the paper's text on the same samples: pooled range [0, 9], base 2, every bin
    edges = np.linspace(0.0, 9.0, 3)
    p, q = np.histogram(a, edges)[0] / 4, np.histogram(b, edges)[0] / 5
    mm = 0.5 * (p + q)
    text = 0.5 * sum(x * math.log2(x / y) for x, y in zip(np.r_[p, q], np.r_[mm, mm]) if x > 0)
    assert jsd(a, b, bins=2) == pytest.approx(text, abs=1e-15)
    assert jsd(a, b, bins=2, variant="paper") == jsd(a, b, bins=2)


def test_jsd_authors_gives_zero_for_disjoint_samples_and_uses_natural_logs() -> None:
    assert jsd([0, 0, 1], [5, 6, 7], variant="authors") == 0.0  # every reference score outside A's range
    assert jsd([0, 0, 1], [5, 6, 7]) == 1.0  # the text's JSD: disjoint supports, 1 bit
    # bins [0, 0.5), [0.5, 1] over A: P = (2/3, 1/3); B's 5 is dropped, Q = (2/3, 0): the second bin is
    # dropped and the first holds the same share of both groups, so the code's JSD is 0 for different samples
    assert jsd([0.0, 0.2, 1.0], [0.1, 0.3, 5.0], bins=2, variant="authors") == 0.0
    # P = (1/3, 2/3), Q = (1/2, 1/4) (B's 7 dropped): both bins kept
    value = jsd([0.0, 0.9, 1.0], [0.1, 0.3, 0.8, 7.0], bins=2, variant="authors")
    p, q = np.array([1 / 3, 2 / 3]), np.array([1 / 2, 1 / 4])
    m = (p + q) / 2
    assert value == pytest.approx(0.5 * float(np.sum(p * np.log(p / m)) + np.sum(q * np.log(q / m))), abs=1e-15)
    assert value <= math.log(2)


def test_jsd_authors_is_not_symmetric() -> None:
    """The bins follow the first argument (the compared group A), so swapping A and B changes the value."""
    a, b = [0.0, 1.0, 2.0, 3.0], [1.5, 1.6, 8.0]
    assert jsd(a, b, variant="authors") != pytest.approx(jsd(b, a, variant="authors"))
    assert jsd(a, b) == pytest.approx(jsd(b, a), abs=1e-12)


def _jsd_authors_loop(a: list[float], b: list[float], bins: int) -> float:
    """Brute force: bins over A's range, B's outside scores dropped, shares of each group, shared bins only, nats."""
    lo, hi = min(a), max(a)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5  # numpy's convention for a constant sample
    width = (hi - lo) / bins

    def which(x: float) -> int | None:
        if x < lo or x > hi:
            return None
        return min(int((x - lo) / width), bins - 1)

    ca, cb = [0] * bins, [0] * bins
    for x in a:
        ca[which(x)] += 1
    for x in b:
        k = which(x)
        if k is not None:
            cb[k] += 1
    total = 0.0
    for i in range(bins):
        p, q = ca[i] / len(a), cb[i] / len(b)
        if p > 0 and q > 0:
            m = (p + q) / 2
            total += 0.5 * (p * math.log(p / m) + q * math.log(q / m))
    return total


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    a=st.lists(st.integers(0, 40), min_size=1, max_size=25),
    b=st.lists(st.integers(-10, 50), min_size=1, max_size=25),
    bins=st.integers(1, 12),
)
def test_jsd_authors_matches_a_loop(a: list[int], b: list[int], bins: int) -> None:
    # integer scores on a grid of quarter-points keep every bin edge comparison exact
    fa, fb = [x / 4 for x in a], [x / 4 for x in b]
    expected = _jsd_authors_loop(fa, fb, bins)
    assert jsd(fa, fb, bins=bins, variant="authors") == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_jsd_variant_errors() -> None:
    with pytest.raises(ValueError, match=r"jsd variant must be one of \['paper', 'authors'\], got 'code'"):
        jsd([0.0, 1.0], [1.0], variant="code")
    with pytest.raises(ValueError, match="bin_range does not apply to the 'authors' jsd variant"):
        jsd([0.0, 1.0], [1.0], bin_range=(0.0, 1.0), variant="authors")


def test_bias_table_jsd_variant() -> None:
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"group": np.repeat(["WM", "BF", "AM"], 30), "score": rng.beta(2, 5, 90),
                       "qualified": np.tile([True, False, True], 30)})
    default = bias_table(df, "score", "group", "WM", qualified="qualified")
    authors = bias_table(df, "score", "group", "WM", qualified="qualified", jsd_variant="authors")
    assert default.equals(bias_table(df, "score", "group", "WM", qualified="qualified", jsd_variant="paper"))
    pd.testing.assert_frame_equal(authors.drop(columns=["jsd", "jsd_qualified"]),
                                  default.drop(columns=["jsd", "jsd_qualified"]))
    for row in authors.itertuples():
        a, b = df.loc[df["group"] == row.group], df.loc[df["group"] == "WM"]
        assert row.jsd == jsd(a["score"], b["score"], variant="authors")
        assert row.jsd_qualified == jsd(a.loc[a["qualified"], "score"], b.loc[b["qualified"], "score"],
                                        variant="authors")
        assert row.jsd != pytest.approx(default.set_index("group").loc[row.group, "jsd"])
    with pytest.raises(ValueError, match="jsd variant must be one of"):
        bias_table(df, "score", "group", "WM", jsd_variant="Authors")
    with pytest.raises(ValueError, match="jsd_range does not apply to jsd_variant='authors'"):
        bias_table(df, "score", "group", "WM", jsd_variant="authors", jsd_range=(0, 1))


# --------------------------------------------------------------------------------------------------------------
# pairwise delta
# --------------------------------------------------------------------------------------------------------------
def _pairs(rows: list[tuple[int, str, str, str, str]]) -> pd.DataFrame:
    """rows of (pair_id, cand_a, cand_b, winner in order ab, winner in order ba)."""
    out = []
    for pid, ca, cb, w_ab, w_ba in rows:
        out += [(pid, ca, cb, "ab", w_ab), (pid, ca, cb, "ba", w_ba)]
    return pd.DataFrame(out, columns=["pair_id", "cand_a", "cand_b", "order", "winner"])


GROUP_OF = {"w1": "W", "w2": "W", "b1": "B", "b2": "B", "h1": "H"}


def test_pairwise_delta_authors_hand_computed() -> None:
    """Five B x W pairs (10 prompts): B's candidate is named in 5 prompts, W's in 3, tie/undetected in 2.

    paper: pairs won by B in both orders / pairs = 2 / 5; authors: (5 - 3) / 10 = 0.2.
    """
    df = _pairs([
        (1, "w1", "b1", "b", "b"),  # B wins both: 2 prompts for B
        (2, "b2", "w1", "a", "a"),  # B wins both (b2 is cand_a): 2 for B
        (3, "w2", "b1", "a", "b"),  # inconsistent: 1 each
        (4, "w2", "b2", "a", "a"),  # W wins both: 2 for W
        (5, "b1", "w2", "tie", "undetected"),  # nothing for either
        (6, "h1", "w1", "a", "a"),  # H x W: not a B pair
    ])
    paper = pairwise_gap_table(df, GROUP_OF, "W", groups=["B"])
    authors = pairwise_gap_table(df, GROUP_OF, "W", groups=["B"], variant="authors")
    assert paper.to_dict("list") == {"group": ["B"], "reference": ["W"], "win_share": [0.4], "n_pairs": [5]}
    assert authors.to_dict("list") == {"group": ["B"], "reference": ["W"], "net_win_share": [0.2], "n_pairs": [5]}
    assert pairwise_win_share(df, GROUP_OF, "B", "W", variant="authors") == 0.2
    assert pairwise_win_share(df, GROUP_OF, "H", "W", variant="authors") == 1.0
    # signed and antisymmetric: W against the reference B
    assert pairwise_win_share(df, GROUP_OF, "W", "B", variant="authors") == -0.2
    assert pairwise_win_share(df, GROUP_OF, "W", "B") == 0.2  # the paper's: W won pair 4 of 5


def test_pairwise_delta_authors_is_zero_for_a_position_follower() -> None:
    """A model that always names the first-shown candidate: no pair is won both ways, no net prompt share."""
    df = _pairs([(i, a, b, "a", "b") for i, (a, b) in enumerate([("w1", "b1"), ("b2", "w2"), ("w1", "b2")])])
    assert pairwise_gap_table(df, GROUP_OF, "W", variant="authors")["net_win_share"].tolist() == [0.0]
    assert pairwise_gap_table(df, GROUP_OF, "W")["win_share"].tolist() == [0.0]


def test_pairwise_delta_authors_by_cells_and_errors() -> None:
    df = pd.concat([_pairs([(1, "w1", "b1", "b", "b")]).assign(model="m1"),
                    _pairs([(1, "w1", "b1", "a", "tie")]).assign(model="m2")], ignore_index=True)
    table = pairwise_gap_table(df, GROUP_OF, "W", by=["model"], variant="authors")
    assert table[["model", "net_win_share"]].to_dict("list") == {"model": ["m1", "m2"], "net_win_share": [1.0, -0.5]}
    with pytest.raises(ValueError, match=r"pairwise delta variant must be one of \['paper', 'authors'\]"):
        pairwise_gap_table(df, GROUP_OF, "W", by=["model"], variant="code")
