"""Candidate-selection simulation: top-k selection with shared ties, pool drawing, allocation gaps.

The study turns model scores into *allocation outcomes* the way the RABBI paper does (Chen, Ji and
Evans 2024, Section 4.2): repeated selection rounds, each drawing a pool of candidates, ranking them by
score and selecting the top ``k``. The selection-rate gaps between a group ``A`` and the reference group
``B`` are

.. math::

    \\phi(X, k) = \\frac{\\text{selections of } X}{\\text{appearances of } X}, \\qquad
    \\Delta DP(A, B) = \\phi(A, k) - \\phi(B, k),

and :math:`\\Delta EO(A, B) = \\psi(A, k) - \\psi(B, k)`, where :math:`\\psi` is the same rate computed over
the appearances of qualified candidates only. Both gaps are signed (positive: ``A`` is selected more
often than the reference group).

Ties at the cut are shared (the book's *Definitions and notation*): with ``m`` candidates strictly above the k-th highest score
and ``t`` candidates equal to it, every tied candidate receives ``(k - m) / t`` of a seat, so every
round allocates exactly ``k`` seats and identical scores always receive identical selections.

Pools (paper, Section 4.1 and Table 2 of the later version):

- resumes: "In each round of resume screening, the candidate pool consists of one candidate sampled
  from each of the eight groups" -> :func:`draw_group_pools`, one subtask (job) per stratum;
- essays: "we randomly sample 10 candidates for each round" -> :func:`draw_random_pools`.

Everything here is a pure function over numpy arrays and tidy pandas tables; every random step takes a
``seed``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from .. import checks
from ..checks import require_columns
from .disaggregate import key_tuple, with_keys

__all__ = [
    "allocation_gaps",
    "draw_selection_probabilities",
    "exact_draw_rates",
    "exact_gaps",
    "exact_pool_rates",
    "pool_selection_probabilities",
    "dp_standard_error",
    "draw_group_pools",
    "draw_random_pools",
    "select_top_k",
    "selection_rates",
    "simulate",
]

#: Random keys drawn per block when sampling pools without replacement (bounds the memory use).
_KEY_BLOCK = 1 << 22


# ----------------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------------
def _as_list(cols: str | Sequence[str] | None) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return list(cols)


def _require_columns(
    frame: pd.DataFrame, cols: Sequence[str], what: str = "candidates", allow_missing: bool = False
) -> None:
    require_columns(frame, cols, what)
    if allow_missing:
        return
    for c in cols:
        if frame[c].isna().any():
            raise ValueError(f"column {c!r} of {what} has {int(frame[c].isna().sum())} missing value(s)")


def _group_codes(candidates: pd.DataFrame, group: str) -> tuple[np.ndarray, list[Hashable]]:
    codes, labels = pd.factorize(candidates[group], sort=True)
    return codes.astype(np.intp), list(labels)


def _check_pools(pools: Any, n_candidates: int) -> np.ndarray:
    arr = np.asarray(pools)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"pools must be a non-empty 2-D (rounds x pool) integer array, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"pools must hold integer row positions into candidates, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= n_candidates:
        raise ValueError(
            f"pools hold positions outside 0..{n_candidates - 1} (candidates has {n_candidates} rows)"
        )
    return arr.astype(np.intp, copy=False)


# ----------------------------------------------------------------------------------------------------
# top-k selection
# ----------------------------------------------------------------------------------------------------
def select_top_k(scores: Any, k: int | Sequence[int]) -> np.ndarray:
    """Fractional top-k selection per round, ties at the cut sharing the remaining seats.

    For each round (row) with scores ``s`` let ``c`` be the k-th highest score, ``m = #{s > c}`` and
    ``t = #{s == c}``. Then

    .. math::

        \\text{sel}_i = \\begin{cases} 1 & s_i > c \\\\ (k - m) / t & s_i = c \\\\ 0 & s_i < c \\end{cases}
        \\qquad \\sum_i \\text{sel}_i = m + t \\cdot \\frac{k - m}{t} = k .

    Vectorised over rounds: one sort per round (along the pool axis), then comparisons against the cut.

    Parameters
    ----------
    scores : array-like of float, shape (rounds, pool) or (pool,)
        Scores, higher is better. ``NaN`` is rejected; ``±inf`` is an ordinary (extreme) score.
    k : int or sequence of int
        Quota per round, ``1 <= k <= pool``. A sequence sweeps several quotas in one pass (one sort).

    Returns
    -------
    numpy.ndarray of float
        Same shape as ``scores`` for an int ``k``. For a sequence of quotas, an array with a leading
        quota axis, shape ``(len(k), *scores.shape)``, in the order the quotas were given.

    Raises
    ------
    ValueError
        If ``scores`` is not 1-D/2-D numeric or contains NaN, or a ``k`` is outside ``1..pool``.

    Examples
    --------
    >>> select_top_k([3.0, 2.0, 2.0, 1.0], 2).tolist()
    [1.0, 0.5, 0.5, 0.0]
    >>> select_top_k([[0.9, 0.9, 0.9, 0.1]], 2).round(4).tolist()
    [[0.6667, 0.6667, 0.6667, 0.0]]
    >>> select_top_k([[3, 2, 2, 1]], [1, 3]).tolist()
    [[[1.0, 0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0, 0.0]]]
    """
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric: {exc}") from None
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError(f"scores must be a non-empty (rounds x pool) or (pool,) array, got shape {arr.shape}")
    one_d = arr.ndim == 1
    a = arr[None, :] if one_d else arr
    nan_rows = np.isnan(a).any(axis=1)
    if nan_rows.any():
        raise ValueError(
            f"scores contain NaN in {int(nan_rows.sum())} round(s) (first: row {int(np.argmax(nan_rows))})"
        )
    ks, scalar = checks.quotas(k, pool=a.shape[1]), checks.is_int(k)

    # Work in (pool, rounds) layout: the per-round reductions then run along contiguous memory, which is
    # several times faster than reducing a short axis 1. One sort serves every quota.
    at = np.ascontiguousarray(a.T)
    asc = np.sort(at, axis=0)
    n = at.shape[0]
    out = np.empty((len(ks), *a.shape), dtype=float)
    buf = np.empty(at.shape, dtype=float)
    for i, kk in enumerate(ks):  # loop over quotas (at most pool of them), never over rounds
        cut = asc[n - kk]  # k-th highest score of every round
        above = at > cut
        tied = at == cut
        m = above.sum(axis=0)
        t = tied.sum(axis=0)
        np.multiply(tied, (kk - m) / t, out=buf)
        buf += above
        out[i] = buf.T
    if one_d:
        out = out[:, 0, :]
    return out[0] if scalar else out


# ----------------------------------------------------------------------------------------------------
# pool drawing
# ----------------------------------------------------------------------------------------------------
def _strata(candidates: pd.DataFrame, by: list[str]) -> list[tuple[Any, np.ndarray]]:
    """(key, positional row indices) per stratum in sorted key order; one stratum when ``by`` is empty."""
    if not by:
        return [((), np.arange(len(candidates), dtype=np.intp))]
    grouped = candidates.groupby(by, sort=True, observed=True).indices
    return [(key, np.asarray(rows, dtype=np.intp)) for key, rows in grouped.items()]


def _key_text(by: list[str], key: Any) -> str:
    return ", ".join(f"{c}={v!r}" for c, v in zip(by, key_tuple(key)))


def draw_group_pools(
    candidates: pd.DataFrame,
    rounds: int,
    seed: int | np.random.Generator | None,
    group: str = "group",
    by: str | Sequence[str] | None = None,
    match: str | Sequence[str] | None = None,
) -> np.ndarray:
    """Resume-style pools: each round draws one candidate from every group.

    For each stratum ``s`` of ``by`` (e.g. a job: the subtask) and each of its ``rounds`` rounds, column
    ``g`` of the pool is a row drawn uniformly, with replacement across rounds, from the candidates of
    group ``g`` in ``s``:

    .. math:: \\text{pool}_{r, g} \\sim \\mathcal{U}\\{a : \\text{group}(a) = g,\\ \\text{by}(a) = s\\}.

    By default the group members of a round are drawn independently, so a round mixes resumes: this is
    the paper's wording, "the candidate pool consists of one candidate sampled from each of the eight
    groups" (a candidate being a (job, resume, name) triple). With ``match`` (e.g. ``"resume"``) every
    round first draws one value of the ``match`` columns uniformly from those present in its stratum and
    then one candidate per group sharing it: a matched design where only the names differ in a round.

    Parameters
    ----------
    candidates : DataFrame
        One row per candidate; needs ``group`` and the ``by``/``match`` columns (no missing values).
    rounds : int
        Rounds per stratum.
    seed : int, Generator or None
        Seed of ``numpy.random.default_rng``; the same seed gives the same pools.
    group : str
        Group column. Pool column ``j`` holds the j-th group in sorted label order.
    by : str, list of str or None
        Strata (subtasks). Every stratum gets ``rounds`` rounds; rows are stacked stratum by stratum
        in sorted key order, so the stratum of round ``r`` is the ``by`` value of any of its members.
    match : str, list of str or None
        Columns shared by all members of a round (drawn per round); ``None`` draws members independently.

    Returns
    -------
    numpy.ndarray of int, shape (n_strata * rounds, n_groups)
        Positional row indices into ``candidates`` (use ``.iloc`` / ``.to_numpy()``).

    Raises
    ------
    ValueError
        Missing column or values, ``rounds`` < 1, or a stratum (or match cell) that lacks a group.

    Examples
    --------
    >>> cands = pd.DataFrame({"job": ["a", "a", "a", "b", "b"], "group": ["F", "M", "M", "F", "M"]})
    >>> pools = draw_group_pools(cands, rounds=3, seed=0, by="job")
    >>> pools.shape
    (6, 2)
    >>> cands["group"].to_numpy()[pools][0].tolist()  # column order: sorted groups
    ['F', 'M']
    >>> cands["job"].to_numpy()[pools[:, 0]].tolist()  # rounds stacked per stratum
    ['a', 'a', 'a', 'b', 'b', 'b']
    """
    by_cols, match_cols = _as_list(by), _as_list(match)
    overlap = set(by_cols) & set(match_cols)
    if overlap:
        raise ValueError(f"columns {sorted(overlap)} appear in both by and match")
    _require_columns(candidates, [group, *by_cols, *match_cols])
    rounds = checks.count(rounds, "rounds")
    if len(candidates) == 0:
        raise ValueError("candidates is empty")
    rng = np.random.default_rng(seed)
    codes, labels = _group_codes(candidates, group)
    n_groups = len(labels)
    match_codes = (
        candidates.groupby(match_cols, sort=True, observed=True).ngroup().to_numpy()
        if match_cols
        else np.zeros(len(candidates), dtype=np.intp)
    )

    blocks = []
    for key, rows in _strata(candidates, by_cols):
        cells = np.unique(match_codes[rows])
        cell_of_round = (
            rng.integers(len(cells), size=rounds) if len(cells) > 1 else np.zeros(rounds, dtype=np.intp)
        )
        block = np.empty((rounds, n_groups), dtype=np.intp)
        for ci, cell in enumerate(cells):
            in_cell = rows[match_codes[rows] == cell]
            round_idx = np.flatnonzero(cell_of_round == ci)
            for g in range(n_groups):
                members = in_cell[codes[in_cell] == g]
                if members.size == 0:
                    where = _key_text(by_cols, key) if by_cols else "the candidate table"
                    if match_cols:
                        first = candidates.iloc[in_cell[0]]
                        where += " with " + ", ".join(f"{c}={first[c]!r}" for c in match_cols)
                    raise ValueError(f"group {labels[g]!r} has no candidate in {where}")
                block[round_idx, g] = members[rng.integers(members.size, size=round_idx.size)]
        blocks.append(block)
    return np.concatenate(blocks, axis=0)


def _sample_rows_without_replacement(
    rng: np.random.Generator, rows: np.ndarray, rounds: int, pool_size: int
) -> np.ndarray:
    """``rounds`` independent uniform subsets of size ``pool_size`` of ``rows`` (random keys, blocked)."""
    n = rows.size
    out = np.empty((rounds, pool_size), dtype=np.intp)
    step = max(1, _KEY_BLOCK // n)
    for start in range(0, rounds, step):  # blocks of rounds bound the memory of the random keys
        stop = min(rounds, start + step)
        keys = rng.random((stop - start, n))
        if pool_size < n:
            picked = np.argpartition(keys, pool_size - 1, axis=1)[:, :pool_size]
        else:
            picked = np.argsort(keys, axis=1)
        out[start:stop] = rows[picked]
    return out


def draw_random_pools(
    candidates: pd.DataFrame | int,
    rounds: int,
    pool_size: int,
    seed: int | np.random.Generator | None,
    by: str | Sequence[str] | None = None,
) -> np.ndarray:
    """Essay-style pools: ``pool_size`` distinct candidates drawn uniformly at random per round.

    Each round is an independent uniform subset (no repeats within a round):
    :math:`\\Pr(a \\in \\text{pool}_r) = n_{\\text{pool}} / N_s` for every candidate of stratum ``s``.
    With ``by`` (e.g. the essay topic) each stratum gets ``rounds`` rounds drawn from its own rows,
    stacked in sorted key order, as in :func:`draw_group_pools`.

    Parameters
    ----------
    candidates : DataFrame or int
        The candidate table, or just its number of rows (then ``by`` must be None).
    rounds : int
        Rounds per stratum.
    pool_size : int
        Candidates per round (the paper uses 10); at most the stratum size.
    seed : int, Generator or None
        Seed of ``numpy.random.default_rng``.
    by : str, list of str or None
        Strata (subtasks).

    Returns
    -------
    numpy.ndarray of int, shape (n_strata * rounds, pool_size)
        Positional row indices into ``candidates``.

    Examples
    --------
    >>> pools = draw_random_pools(12, rounds=4, pool_size=10, seed=1)
    >>> pools.shape, bool((pools < 12).all())
    ((4, 10), True)
    >>> all(len(set(row)) == 10 for row in pools.tolist())
    True
    """
    by_cols = _as_list(by)
    if isinstance(candidates, Integral) and not isinstance(candidates, bool):
        if by_cols:
            raise ValueError("by needs a candidate table, not a row count")
        n_rows = int(candidates)
        strata = [((), np.arange(n_rows, dtype=np.intp))]
    else:
        _require_columns(candidates, by_cols)
        n_rows = len(candidates)
        strata = _strata(candidates, by_cols)
    if n_rows < 1:
        raise ValueError("candidates is empty")
    rounds = checks.count(rounds, "rounds")
    pool_size = checks.count(pool_size, "pool_size")
    rng = np.random.default_rng(seed)
    blocks = []
    for key, rows in strata:
        if rows.size < pool_size:
            where = _key_text(by_cols, key) if by_cols else "the candidate table"
            raise ValueError(f"pool_size={pool_size} exceeds the {rows.size} candidates of {where}")
        blocks.append(_sample_rows_without_replacement(rng, rows, rounds, pool_size))
    return np.concatenate(blocks, axis=0)


# ----------------------------------------------------------------------------------------------------
# selection rates and gaps
# ----------------------------------------------------------------------------------------------------
def _qualified_mask(candidates: pd.DataFrame, qualified: str) -> np.ndarray:
    col = candidates[qualified]
    if pd.api.types.is_bool_dtype(col):
        return col.to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(col):
        values = col.to_numpy(dtype=float)
        if np.isin(values, (0.0, 1.0)).all():
            return values == 1.0
    raise ValueError(f"column {qualified!r} must be boolean or 0/1, got values {sorted(pd.unique(col))[:5]}")


def _rates(
    codes: np.ndarray, n_groups: int, pools: np.ndarray, selected: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Appearances (n_groups,) and selections (K, n_groups) with np.bincount; ``weight`` masks candidates."""
    g = codes[pools].ravel()
    w = None if weight is None else weight[pools].ravel().astype(float)
    appearances = np.bincount(g, weights=w, minlength=n_groups)
    n_k = selected.shape[0]
    sel = selected.reshape(n_k, -1)
    if w is not None:
        sel = sel * w
    offsets = (np.arange(n_k, dtype=np.intp)[:, None] * n_groups + g[None, :]).ravel()
    selections = np.bincount(offsets, weights=sel.ravel(), minlength=n_k * n_groups).reshape(n_k, n_groups)
    return appearances, selections


def selection_rates(
    candidates: pd.DataFrame,
    pools: Any,
    selected: Any,
    group: str = "group",
    qualified: str | None = None,
    k: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Selection rate per group: selections / appearances over all rounds.

    .. math::

        \\phi(X) = \\frac{\\sum_{r, j:\\ \\text{pool}_{rj} \\in X} \\text{sel}_{rj}}
                         {\\#\\{(r, j) : \\text{pool}_{rj} \\in X\\}}

    With ``qualified`` only appearances of qualified candidates count (numerator and denominator), which
    gives :math:`\\psi(X)`, the rate behind the equal-opportunity gap. Counted with ``np.bincount``.

    Parameters
    ----------
    candidates : DataFrame
        Candidate table with the ``group`` (and ``qualified``) column.
    pools : int array, shape (rounds, pool)
        Positional row indices into ``candidates``.
    selected : float array, shape (rounds, pool) or (n_k, rounds, pool)
        Output of :func:`select_top_k` (fractional selections allowed).
    group : str
        Group column.
    qualified : str or None
        Boolean (or 0/1) column; when given, only qualified appearances count.
    k : sequence of int or None
        Labels of the leading quota axis of a 3-D ``selected`` (required then; adds a ``k`` column).

    Returns
    -------
    DataFrame
        Columns ``[k,] group, appearances, selections, selection_rate``; one row per (k,) group in sorted
        label order. ``appearances`` and ``selections`` are floats (selections can be fractional).

    Raises
    ------
    ValueError
        Shape mismatch, missing column, or a group with no (qualified) appearance.

    Examples
    --------
    >>> cands = pd.DataFrame({"group": ["A", "B", "A", "B"], "score": [3.0, 2.0, 2.0, 1.0]})
    >>> pools = np.array([[0, 1, 2, 3]])
    >>> sel = select_top_k(cands["score"].to_numpy()[pools], 2)
    >>> selection_rates(cands, pools, sel)["selection_rate"].tolist()  # A: (1 + .5) / 2, B: .5 / 2
    [0.75, 0.25]
    """
    _require_columns(candidates, [group] + ([qualified] if qualified else []))
    pools = _check_pools(pools, len(candidates))
    sel = np.asarray(selected, dtype=float)
    if sel.ndim == 2:
        if k is not None:
            raise ValueError("k labels are only for a 3-D selected array (leading quota axis)")
        sel3 = sel[None]
    elif sel.ndim == 3:
        if k is None or len(k) != sel.shape[0]:
            raise ValueError(f"a 3-D selected array needs k with {sel.shape[0]} quota labels, got {k!r}")
        sel3 = sel
    else:
        raise ValueError(f"selected must be 2-D or 3-D, got shape {sel.shape}")
    if sel3.shape[1:] != pools.shape:
        raise ValueError(f"selected has shape {sel.shape} but pools has shape {pools.shape}")
    if np.isnan(sel3).any():
        raise ValueError("selected contains NaN")
    codes, labels = _group_codes(candidates, group)
    weight = _qualified_mask(candidates, qualified) if qualified else None
    appearances, selections = _rates(codes, len(labels), pools, sel3, weight)
    empty = [labels[g] for g in np.flatnonzero(appearances == 0)]
    if empty:
        which = "qualified appearance" if qualified else "appearance"
        raise ValueError(f"group(s) {empty} have no {which} in pools; their selection rate is undefined")
    n_k = sel3.shape[0]  # one frame for all quotas: row i * n_groups + g is quota i, group g
    frame = pd.DataFrame(
        {
            "group": labels * n_k,
            "appearances": np.tile(appearances, n_k),
            "selections": selections.ravel(),
            "selection_rate": (selections / appearances).ravel(),
        }
    )
    if sel.ndim == 3:
        frame.insert(0, "k", np.repeat(np.array([int(x) for x in k], dtype=np.int64), len(labels)))
    return frame


def allocation_gaps(
    candidates: pd.DataFrame,
    scores_col: str,
    pools: Any,
    k: int | Sequence[int],
    reference: Hashable,
    group: str = "group",
    qualified: str | None = "qualified",
) -> pd.DataFrame:
    """Demographic-parity and equal-opportunity gaps of every group against the reference group.

    Candidates in each pool are ranked by ``scores_col`` and selected with :func:`select_top_k` (ties share
    seats). For every group ``A`` other than the reference ``B``:

    .. math::

        \\Delta DP(A, B) = \\phi(A, k) - \\phi(B, k), \\qquad \\Delta EO(A, B) = \\psi(A, k) - \\psi(B, k),

    with :math:`\\phi` the selection rate over all appearances and :math:`\\psi` over the appearances of
    qualified candidates only (selection still happens among the whole pool). Signed: positive means
    ``A`` is selected more often than ``B``.

    Parameters
    ----------
    candidates : DataFrame
        Candidate table with ``scores_col``, ``group`` and (unless None) ``qualified``.
    scores_col : str
        Score column (higher is better); no NaN among candidates that appear in ``pools``.
    pools : int array, shape (rounds, pool)
        Positional row indices, from :func:`draw_group_pools` or :func:`draw_random_pools`.
    k : int or sequence of int
        Quota(s); a sequence gives one block of rows per quota.
    reference : label
        Reference group ``B`` (e.g. ``"Male White"``).
    group : str
        Group column.
    qualified : str or None
        Boolean qualification column; ``None`` skips the EO columns.

    Returns
    -------
    DataFrame
        One row per (k, group != reference): ``k, group, reference, phi, phi_reference, dDP`` and, with
        ``qualified``, ``psi, psi_reference, dEO``.

    Raises
    ------
    ValueError
        Unknown reference group, missing column, NaN score, or a group with no (qualified) appearance.

    Examples
    --------
    >>> cands = pd.DataFrame({"group": ["A", "B", "A", "B"], "score": [3.0, 2.0, 2.0, 1.0],
    ...                       "qualified": [True, True, False, False]})
    >>> gaps = allocation_gaps(cands, "score", np.array([[0, 1, 2, 3]]), k=2, reference="B")
    >>> gaps[["group", "phi", "phi_reference", "dDP", "psi", "psi_reference", "dEO"]].to_numpy().tolist()
    [['A', 0.75, 0.25, 0.5, 1.0, 0.5, 0.5]]
    """
    _require_columns(candidates, [scores_col], allow_missing=True)  # NaN checked below, on pooled rows
    _require_columns(candidates, [group] + ([qualified] if qualified else []))
    pools = _check_pools(pools, len(candidates))
    codes, labels = _group_codes(candidates, group)
    if reference not in labels:
        raise ValueError(f"reference group {reference!r} is not in column {group!r}; groups are {labels}")
    if not pd.api.types.is_numeric_dtype(candidates[scores_col]) or pd.api.types.is_bool_dtype(
        candidates[scores_col]
    ):
        raise ValueError(f"column {scores_col!r} must be numeric, got dtype {candidates[scores_col].dtype}")
    score = candidates[scores_col].to_numpy(dtype=float)
    pooled = score[pools]
    if np.isnan(pooled).any():
        bad = np.unique(pools[np.isnan(pooled)])
        raise ValueError(
            f"column {scores_col!r} is NaN for {bad.size} candidate(s) in pools (rows {bad[:5].tolist()})"
        )
    ks, scalar = checks.quotas(k, pool=pools.shape[1]), checks.is_int(k)
    selected = select_top_k(pooled, ks)  # (K, rounds, pool)

    n_groups = len(labels)
    app, sel = _rates(codes, n_groups, pools, selected, None)
    empty = [labels[g] for g in np.flatnonzero(app == 0)]
    if empty:
        raise ValueError(f"group(s) {empty} never appear in pools; their selection rate is undefined")
    phi = sel / app
    ref = labels.index(reference)
    others = [g for g in range(n_groups) if g != ref]
    out = pd.DataFrame(
        {
            "k": np.repeat(ks, len(others)),
            "group": [labels[g] for _ in ks for g in others],
            "reference": [reference] * (len(ks) * len(others)),
            "phi": phi[:, others].ravel(),
            "phi_reference": np.repeat(phi[:, ref], len(others)),
        }
    )
    out["dDP"] = out["phi"] - out["phi_reference"]
    if qualified:
        weight = _qualified_mask(candidates, qualified)
        app_q, sel_q = _rates(codes, n_groups, pools, selected, weight)
        empty = [labels[g] for g in np.flatnonzero(app_q == 0)]
        if empty:
            raise ValueError(
                f"group(s) {empty} have no qualified candidate in pools, so dEO is undefined; "
                "draw more rounds or pass qualified=None"
            )
        psi = sel_q / app_q
        out["psi"] = psi[:, others].ravel()
        out["psi_reference"] = np.repeat(psi[:, ref], len(others))
        out["dEO"] = out["psi"] - out["psi_reference"]
    return out


def simulate(
    candidates: pd.DataFrame,
    scores_col: str,
    k: int | Sequence[int],
    reference: Hashable,
    rounds: int,
    seed: int | np.random.Generator | None,
    by: str | Sequence[str] | None = None,
    group: str = "group",
    qualified: str | None = "qualified",
    pool_size: int | None = None,
    match: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Draw pools, select the top k and measure the gaps, per subtask, in one call.

    For each subtask (a value of ``by``, e.g. a job or an essay topic) this draws ``rounds`` pools from the
    subtask's candidates, selects with :func:`select_top_k` and returns :func:`allocation_gaps`:

    - ``pool_size=None``: one candidate per group per round (:func:`draw_group_pools`, resumes);
      ``match`` makes the members of a round share those columns (e.g. the resume);
    - ``pool_size=n``: ``n`` distinct random candidates per round (:func:`draw_random_pools`, essays).

    All subtasks are drawn from one generator seeded with ``seed`` (subtasks in sorted key order), so
    the whole table is reproducible from ``seed``.

    Parameters
    ----------
    candidates : DataFrame
        Tidy candidate table: ``by`` columns, ``group``, ``qualified``, ``scores_col``.
    scores_col, k, reference, group, qualified
        As in :func:`allocation_gaps`.
    rounds : int
        Rounds per subtask (the paper's later version uses 1800 for resumes, 1200 for essays).
    seed : int, Generator or None
        Seed of ``numpy.random.default_rng``.
    by : str, list of str or None
        Subtask columns; ``None`` treats the whole table as one subtask.
    pool_size : int or None
        ``None`` for group pools, an int for random pools.
    match : str, list of str or None
        Only for group pools, see :func:`draw_group_pools`.

    Returns
    -------
    DataFrame
        One row per (by-keys, k, group != reference) with the columns of :func:`allocation_gaps` and
        ``rounds``.

    Examples
    --------
    >>> cands = pd.DataFrame({"job": ["a"] * 4 + ["b"] * 4, "group": ["F", "M"] * 4,
    ...                       "qualified": [True, True, False, False] * 2,
    ...                       "score": [0.9, 0.5, 0.8, 0.1, 0.2, 0.6, 0.1, 0.7]})
    >>> res = simulate(cands, "score", k=1, reference="M", rounds=200, seed=0, by="job")
    >>> res[["job", "k", "group", "dDP", "dEO"]].round(3).to_numpy().tolist()
    [['a', 1, 'F', 1.0, 1.0], ['b', 1, 'F', -1.0, -1.0]]
    """
    by_cols = _as_list(by)
    _require_columns(candidates, by_cols)
    if match is not None and pool_size is not None:
        raise ValueError("match only applies to group pools (pool_size=None)")
    if pool_size is None:
        pools = draw_group_pools(candidates, rounds, seed, group=group, by=by_cols, match=match)
    else:
        pools = draw_random_pools(candidates, rounds, pool_size, seed, by=by_cols)
    strata = _strata(candidates, by_cols)
    local = np.full(len(candidates), -1, dtype=np.intp)
    frames = []
    for s, (key, rows) in enumerate(strata):
        block = pools[s * rounds : (s + 1) * rounds]
        local[rows] = np.arange(rows.size)
        sub = candidates.iloc[rows]
        try:
            gaps = allocation_gaps(sub, scores_col, local[block], k, reference, group=group, qualified=qualified)
        except ValueError as exc:
            if not by_cols:
                raise
            raise ValueError(f"subtask {_key_text(by_cols, key)}: {exc}") from None
        local[rows] = -1
        gaps = with_keys(gaps, by_cols, key_tuple(key))
        gaps["rounds"] = rounds
        frames.append(gaps)
    return pd.concat(frames, ignore_index=True)


def dp_standard_error(k: int, pool: int, rounds: int) -> float:
    r"""Standard error of a simulated :math:`\Delta DP` between two groups that the scores treat alike.

    With one candidate per group in each of ``rounds`` pools of ``pool`` candidates and ``k`` seats, a group's
    selections in one round have mean :math:`p = k/G` and variance :math:`p(1-p)`, and two groups' selections
    have covariance :math:`-p(1-p)/(G-1)` (the seats are shared), so

    .. math:: \mathrm{se}(\Delta DP) = \sqrt{\frac{2\,p(1-p)\,G}{(G-1)\,R}} .

    This is the pool noise of the simulation only; the noise of the finite set of names is not in it.

    >>> round(dp_standard_error(1, 8, 2000), 4)
    0.0112
    >>> dp_standard_error(8, 8, 10)
    Traceback (most recent call last):
    ...
    ValueError: k must be below the pool size 8: k=8 is outside 1..7 (k = pool selects everybody)
    """
    rounds = checks.count(rounds, "rounds")
    pool = checks.count(pool, "pool", 2)
    k = checks.quota(k, pool=pool, below_pool=True)
    p = k / pool
    return float(np.sqrt(2.0 * p * (1.0 - p) * pool / (pool - 1) / rounds))


# ----------------------------------------------------------------------------------------------------
# exact selection rates (no Monte Carlo)
# ----------------------------------------------------------------------------------------------------
#: Elements of the dynamic programme's state allowed in one batch (bounds the memory of exact_draw_rates).
_DP_BLOCK = 1 << 23


def _exact_inputs(
    candidates: pd.DataFrame, cols: list[str], score: str, qualified: str | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate the candidate table; return the finite float scores and the qualified mask."""
    _require_columns(candidates, [*cols, score] + ([qualified] if qualified else []))
    if len(candidates) == 0:
        raise ValueError("candidates is empty")
    dupes = [c for c in set(cols) if cols.count(c) > 1]
    if dupes:
        raise ValueError(f"column(s) {sorted(dupes)} are named twice among by/pool/group")
    col = candidates[score]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise ValueError(f"column {score!r} must be numeric, got dtype {col.dtype}")
    values = col.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"column {score!r} has {int(bad.sum())} non-finite value(s) (first at row {int(np.argmax(bad))})")
    mask = _qualified_mask(candidates, qualified) if qualified else None
    return values, mask


def _rate_frame(
    candidates: pd.DataFrame,
    by_cols: list[str],
    group: str,
    ks: list[int],
    prob: np.ndarray,
    qualified_mask: np.ndarray | None,
) -> pd.DataFrame:
    """Mean of the per-candidate selection probabilities ``prob`` (K, n) per (by..., group): the rates."""
    keys = [*by_cols, group]
    cell_codes = candidates.groupby(keys, sort=True, observed=True).ngroup().to_numpy()
    n_cells = int(cell_codes.max()) + 1
    first = np.unique(cell_codes, return_index=True)[1]
    labels = candidates.iloc[first][keys].reset_index(drop=True)
    n = np.bincount(cell_codes, minlength=n_cells)
    frames = []
    if qualified_mask is not None:
        n_q = np.bincount(cell_codes, weights=qualified_mask.astype(float), minlength=n_cells)
    for i, kk in enumerate(ks):
        frame = labels.copy()
        frame["k"] = kk
        frame["rate"] = np.bincount(cell_codes, weights=prob[i], minlength=n_cells) / n
        frame["n"] = n.astype(np.int64)
        if qualified_mask is not None:
            sel_q = np.bincount(cell_codes, weights=prob[i] * qualified_mask, minlength=n_cells)
            with np.errstate(invalid="ignore", divide="ignore"):
                frame["rate_qualified"] = np.where(n_q > 0, sel_q / np.maximum(n_q, 1), np.nan)
            frame["n_qualified"] = n_q.astype(np.int64)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values([*by_cols, group, "k"], kind="mergesort").reset_index(drop=True)


def pool_selection_probabilities(pool_codes: np.ndarray, values: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """Exact probability that each candidate of a fixed pool is selected, for every quota: shape (K, n).

    ``pool_codes`` (ints ``0..P-1``) says which pool each candidate belongs to. A candidate with ``m`` scores
    strictly above its own and ``t`` candidates tied with it (itself included) is selected with probability
    ``clip((k - m) / t, 0, 1)`` under uniform random tie-breaking. The pools are laid out as the rows of a
    matrix padded with ``-inf`` and passed to :func:`select_top_k`, which applies exactly that rule; a quota
    larger than a pool selects the whole pool.

    >>> pool_selection_probabilities(np.array([0, 0, 0, 1, 1]), np.array([3., 2, 2, 5, 5]), [1, 2]).tolist()
    [[1.0, 0.0, 0.0, 0.5, 0.5], [1.0, 0.5, 0.5, 1.0, 1.0]]
    """
    order = np.argsort(pool_codes, kind="stable")
    sizes = np.bincount(pool_codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.empty(len(pool_codes), dtype=np.intp)
    pos[order] = np.arange(len(pool_codes)) - np.repeat(starts, sizes)
    width = max(int(sizes.max()), max(ks))
    mat = np.full((sizes.size, width), -np.inf)
    mat[pool_codes, pos] = values
    sel = select_top_k(mat, list(ks))  # (K, pools, width): the fractional-ties rule
    return sel[:, pool_codes, pos]


def exact_pool_rates(
    candidates: pd.DataFrame,
    *,
    k: int | Sequence[int],
    pool: str = "pool",
    group: str = "group",
    score: str = "score",
    by: str | Sequence[str] | None = None,
    qualified: str | None = None,
) -> pd.DataFrame:
    """Exact expected top-k selection rate of every group over fixed pools, without simulation.

    Each pool (a value of ``pool`` within a cell of ``by``; e.g. one vacancy and the 18 candidates who applied
    to it) selects its ``k`` highest scores, ties broken uniformly at random. A candidate with ``m`` scores
    strictly above its own and ``t`` candidates tied with it (itself included) is then selected with
    probability

    .. math:: p_i = \\operatorname{clip}\\left(\\frac{k - m}{t}, 0, 1\\right),

    the fractional-ties rule of :func:`select_top_k`, which this function applies to every pool at once. The
    rate of group ``X`` is the mean of :math:`p_i` over its candidates, :math:`\\phi(X, k)`; with
    ``qualified``, ``rate_qualified`` is the mean over its qualified candidates, :math:`\\psi(X, k)`
    (selection still among the whole pool). Pools may differ in size; a quota above a pool's size selects
    all of it.

    Parameters
    ----------
    candidates : DataFrame
        One row per candidate with the ``pool``, ``group``, ``score`` (and ``by``, ``qualified``) columns.
    k : int or sequence of int
        Quota(s), each >= 1.
    pool, group, score : str
        Column names (pool id, group label, score: higher is better, finite).
    by : str, list of str or None
        Cells (e.g. the system); a pool is identified by (by..., pool).
    qualified : str or None
        Boolean (or 0/1) column for ``rate_qualified`` (NaN for a group without a qualified candidate).

    Returns
    -------
    DataFrame
        Columns ``*by, group, k, rate, n`` (and ``rate_qualified, n_qualified``), one row per
        (by..., group, k), sorted.

    Examples
    --------
    >>> cands = pd.DataFrame({"pool": [1, 1, 1, 2, 2, 2], "group": ["A", "B", "B", "A", "B", "B"],
    ...                       "score": [7, 7, 3, 5, 9, 9]})
    >>> exact_pool_rates(cands, k=1)[["group", "k", "rate", "n"]].to_dict("records")
    [{'group': 'A', 'k': 1, 'rate': 0.25, 'n': 2}, {'group': 'B', 'k': 1, 'rate': 0.375, 'n': 4}]
    """
    by_cols = _as_list(by)
    ks = checks.quotas(k, distinct=True)
    values, mask = _exact_inputs(candidates, [*by_cols, pool, group], score, qualified)
    pool_codes = candidates.groupby([*by_cols, pool], sort=True, observed=True).ngroup().to_numpy()
    prob = pool_selection_probabilities(pool_codes, values, ks)
    return _rate_frame(candidates, by_cols, group, ks, prob, mask)


def _draw_tables(values: np.ndarray, group_codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group shares of the stratum's distinct values: ``shares`` (G, S) and the value index of each row."""
    grid, where = np.unique(values, return_inverse=True)
    counts = np.zeros((n_groups, grid.size))
    np.add.at(counts, (group_codes, where), 1.0)
    return counts / counts.sum(axis=1, keepdims=True), where


def draw_selection_probabilities(shares: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    r"""Exact selection probability at every value for one draw per group: shape (..., K, G, S).

    ``shares[..., h, j]`` is the probability that group ``h``'s draw takes the ``j``-th smallest value of the
    stratum's grid (rows sum to 1; a row of zeros is a group that is left out). For a candidate of group ``g``
    at value ``j``, each other group ``h`` independently lands strictly above (``a_hj = sum_{j' > j}
    shares[h, j']``), tied (``t_hj = shares[h, j]``) or below. With ``M`` others above and ``T`` tied, uniform
    random tie-breaking selects the candidate with probability ``clip((k - M) / (T + 1), 0, 1)``, the
    expectation over the product of the others' trinomials.

    Computed without enumerating ``T``: a uniform tie-break key ``v`` for the candidate makes each other group
    beat it independently with probability ``q_h(v) = a_hj + t_hj (1 - v)`` (a tied rival wins when its own key
    is larger), so

    .. math:: P(\text{selected} \mid g, j) = \int_0^1 P\Big(\sum_{h \ne g} B_h(v) < k\Big)\, dv,
              \qquad B_h(v) \sim \text{Bernoulli}(q_h(v)),

    and the integrand is a polynomial in ``v`` of degree at most the number of groups tied at ``j``, integrated
    exactly by Gauss–Legendre quadrature. The count of others above is a dynamic programme over groups (its
    distribution truncated at ``max(k)``), run forwards and backwards once so that leaving out the target group
    is one convolution of a prefix and a suffix, evaluated for the groups present at each value (elsewhere the
    result is 0: no candidate sits there); everything is vectorised over values, nodes and leading axes.

    >>> draw_selection_probabilities(np.array([[0.5, 0.5], [0.5, 0.5]]), [1]).round(3).tolist()
    [[[0.25, 0.75], [0.25, 0.75]]]
    >>> draw_selection_probabilities(np.array([[1.0, 0.0], [0.0, 1.0]]), [1]).tolist()  # 0 where no candidate
    [[[0.0, 0.0], [0.0, 1.0]]]
    """
    shares = np.asarray(shares, dtype=float)
    lead, (n_groups, n_values) = shares.shape[:-2], shares.shape[-2:]
    ks = list(ks)
    m_dim = min(max(ks), n_groups)  # counts 0 .. max(k) - 1 decide every quota
    present = (shares > 0).sum(axis=-2)
    n_tied = max(1, int(present.max()) if present.size else 1)  # degree of the integrand in v is at most n_tied - 1
    nodes, node_w = np.polynomial.legendre.leggauss(max(1, (n_tied + 1) // 2))
    v, node_w = (nodes + 1.0) / 2.0, node_w / 2.0
    flat = shares.reshape(-1, n_groups, n_values)
    above = np.cumsum(flat[..., ::-1], axis=-1)[..., ::-1] - flat  # strictly above value j
    shares_present = flat > 0
    out = np.empty((flat.shape[0], len(ks), n_groups, n_values))
    per_item = 2 * (n_groups + 1) * n_values * v.size * m_dim
    step = max(1, _DP_BLOCK // max(per_item, 1))
    kk = np.array(ks)
    for start in range(0, flat.shape[0], step):
        stop = min(flat.shape[0], start + step)
        # q[b, h, j, node]: group h's draw beats a candidate at value j with tie-break key v[node]
        q = above[start:stop, :, :, None] + flat[start:stop, :, :, None] * (1.0 - v)
        shape = (stop - start, n_values, v.size, m_dim)
        prefix = np.zeros((n_groups + 1, *shape))
        prefix[0, ..., 0] = 1.0
        for h in range(n_groups):  # prefix[h]: count among groups 0..h-1
            qh = q[:, h, :, :, None]
            prefix[h + 1] = (1.0 - qh) * prefix[h]
            prefix[h + 1][..., 1:] += qh * prefix[h][..., :-1]
        suffix = np.zeros((n_groups + 1, *shape))
        suffix[n_groups, ..., 0] = 1.0
        for h in range(n_groups - 1, -1, -1):  # suffix[h]: count among groups h..G-1
            qh = q[:, h, :, :, None]
            suffix[h] = (1.0 - qh) * suffix[h + 1]
            suffix[h][..., 1:] += qh * suffix[h + 1][..., :-1]
        # leave the target g out: the count among the others is prefix[g] (x) suffix[g + 1], needed only for the
        # groups present at a value (the others have no candidate there): gather those targets per value
        targets = np.argsort(shares_present[start:stop] == 0, axis=1, kind="stable")[:, :n_tied, :]  # (B, r, S)
        valid = np.take_along_axis(shares_present[start:stop], targets, axis=1)
        index = targets[:, :, :, None, None]
        pre = np.take_along_axis(prefix[:-1].transpose(1, 0, 2, 3, 4), index, axis=1)  # (B, r, S, node, m)
        suf = np.take_along_axis(suffix[1:].transpose(1, 0, 2, 3, 4), index, axis=1)
        dist = np.zeros_like(pre)
        for i in range(m_dim):
            dist[..., i:] += pre[..., i : i + 1] * suf[..., : m_dim - i]
        cdf = np.cumsum(dist, axis=-1)  # P(count <= m)
        below_k = cdf[..., np.minimum(kk, m_dim) - 1]  # P(count < k): (B, r, S, node, K)
        below_k = np.where(kk >= n_groups, 1.0, below_k)
        picked = np.einsum("brsnk,n->bkrs", below_k, node_w) * valid[:, None]
        block = np.zeros((stop - start, len(ks), n_groups, n_values))
        np.put_along_axis(block, np.broadcast_to(targets[:, None], picked.shape), picked, axis=2)
        out[start:stop] = block
    return out.reshape(*lead, len(ks), n_groups, n_values)


def exact_draw_rates(
    candidates: pd.DataFrame,
    *,
    k: int | Sequence[int],
    group: str = "group",
    score: str = "score",
    by: str | Sequence[str] | None = None,
    qualified: str | None = None,
) -> pd.DataFrame:
    """Exact expected top-k selection rate of every group when each pool holds one random draw per group.

    The paper's design (:func:`draw_group_pools` with many rounds): within each stratum of ``by`` (e.g. a job,
    or a system x job), a pool draws one candidate uniformly from every group's candidates there, selects the
    ``k`` highest scores and breaks ties uniformly at random. Instead of simulating rounds, the expected
    selection rate is computed exactly: for a candidate of group ``g`` with score ``s``, the others'
    draws are independent, so the number ``M`` of other groups drawn strictly above ``s`` and ``T`` drawn
    tied with it follow a product of per-group trinomials (:func:`draw_selection_probabilities`, a dynamic
    programme over groups vectorised over the stratum's distinct scores), and

    .. math:: \\phi(g, k) = \\frac{1}{n_g} \\sum_{i \\in g} \\sum_{M, T} P_g(M, T \\mid s_i)\\,
              \\operatorname{clip}\\left(\\frac{k - M}{T + 1}, 0, 1\\right),

    which is the limit of :func:`simulate`'s rates as the rounds grow. ``rate_qualified`` averages the same
    probabilities over the group's qualified candidates (:math:`\\psi`; selection among the whole pool).

    Parameters
    ----------
    candidates : DataFrame
        One row per candidate with ``group``, ``score`` (and ``by``, ``qualified``) columns. Every group
        must have a candidate in every stratum.
    k : int or sequence of int
        Quota(s), each >= 1 (a quota of at least the number of groups selects everyone).
    group, score : str
        Column names.
    by : str, list of str or None
        Strata (pools are drawn within each).
    qualified : str or None
        As in :func:`exact_pool_rates`.

    Returns
    -------
    DataFrame
        The table of :func:`exact_pool_rates`, same columns and rows.

    Examples
    --------
    Two groups with two candidates each; A draws 2 or 1, B draws 2 or 0. A wins outright with 2 > 0, ties
    2 = 2 (half a seat), loses 1 < 2 and wins 1 > 0: (1 + 0.5 + 0 + 1) / 4.

    >>> cands = pd.DataFrame({"group": ["A", "A", "B", "B"], "score": [2, 1, 2, 0]})
    >>> exact_draw_rates(cands, k=1)[["group", "rate"]].to_dict("records")
    [{'group': 'A', 'rate': 0.625}, {'group': 'B', 'rate': 0.375}]
    """
    by_cols = _as_list(by)
    ks = checks.quotas(k, distinct=True)
    values, mask = _exact_inputs(candidates, [*by_cols, group], score, qualified)
    codes, labels = _group_codes(candidates, group)
    n_groups = len(labels)
    prob = np.empty((len(ks), len(candidates)))
    for key, rows in _strata(candidates, by_cols):
        present = np.bincount(codes[rows], minlength=n_groups)
        if (present == 0).any():
            where = _key_text(by_cols, key) if by_cols else "the candidate table"
            raise ValueError(f"group {labels[int(np.argmin(present))]!r} has no candidate in {where}")
        shares, where_idx = _draw_tables(values[rows], codes[rows], n_groups)
        probs = draw_selection_probabilities(shares, ks)  # (K, G, S)
        prob[:, rows] = probs[:, codes[rows], where_idx]
    return _rate_frame(candidates, by_cols, group, ks, prob, mask)


def exact_gaps(rates: pd.DataFrame, *, reference: Hashable, group: str = "group") -> pd.DataFrame:
    """Add the signed gaps against the reference group to a table of exact rates.

    Within each cell (every column of ``rates`` other than ``group``, ``rate``, ``n``, ``rate_qualified``,
    ``n_qualified``; that is the ``by`` columns and ``k``):

    .. math:: \\Delta DP(A, B) = \\phi(A, k) - \\phi(B, k), \\qquad \\Delta EO(A, B) = \\psi(A, k) - \\psi(B, k).

    Every row is kept (the reference's own gap is 0); ``rate_reference`` (and ``rate_qualified_reference``)
    are added beside ``dDP`` (and ``dEO``).

    >>> rates = pd.DataFrame({"group": ["A", "B"], "k": 1, "rate": [0.625, 0.375], "n": 2})
    >>> exact_gaps(rates, reference="B")[["group", "dDP"]].to_dict("records")
    [{'group': 'A', 'dDP': 0.25}, {'group': 'B', 'dDP': 0.0}]
    """
    _require_columns(rates, [group, "k", "rate"], what="rates", allow_missing=True)
    known = {group, "rate", "n", "rate_qualified", "n_qualified"}
    cell = [c for c in rates.columns if c not in known]
    ref = rates[rates[group] == reference]
    if ref.empty:
        raise ValueError(f"reference group {reference!r} is not in column {group!r} of rates; "
                         f"groups are {sorted(pd.unique(rates[group]).tolist(), key=str)}")
    value_cols = ["rate"] + (["rate_qualified"] if "rate_qualified" in rates.columns else [])
    ref = ref[cell + value_cols].rename(columns={c: f"{c}_reference" for c in value_cols})
    if ref.duplicated(cell).any():
        raise ValueError(f"rates has more than one row of the reference group {reference!r} in a cell of {cell}")
    out = rates.merge(ref, on=cell, how="left", validate="many_to_one")
    lacking = out["rate_reference"].isna()
    if lacking.any():
        first = out.loc[lacking, cell].iloc[0].to_dict()
        raise ValueError(f"reference group {reference!r} is missing in the cell {first} of rates")
    out["dDP"] = out["rate"] - out["rate_reference"]
    if "rate_qualified" in rates.columns:
        out["dEO"] = out["rate_qualified"] - out["rate_qualified_reference"]
    return out
