"""Selection on graded essays: who the top k of random pools are, by the model's grade and by the human's.

The essay task (RABBI's second task) allocates in the same way as the résumé task: pools of ``pool_size`` essays
drawn at random, the ``k`` best-graded selected, many rounds (:func:`allocbias.selection.draw_random_pools`,
:func:`allocbias.selection.allocation_gaps`). On real essays with human scores (ELLIPSE) the human score is a
*grader* too: selecting by it gives the gaps that the human grades themselves carry, and the model's gap can be
set beside that one on the **same pools** (paired), so the difference says whether the model widens or narrows it.

A *grader table* (:func:`grader_table`) has one row per essay: the essay's columns, ``qualified`` and one score
column per grader (``human`` = the human score, plus one per system id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..audited import data as D
from .intervals import cluster_bootstrap, percentile_intervals
from .selection import allocation_gaps, draw_random_pools

__all__ = ["HUMAN", "essay_gap_intervals", "essay_gaps", "essay_points", "grader_table"]

#: The grader name of the human score in a grader table.
HUMAN = "human"


def grader_table(scores: pd.DataFrame, *, human: str = "rating") -> pd.DataFrame:
    """One row per essay that every system in ``scores`` has graded, one score column per grader.

    ``scores`` is long (:func:`allocbias.scoring.catalog.ellipse_scores`: one row per (system, essay) with ``essay_id``,
    ``system``, ``score``); the result keeps the essay columns (everything but the per-system columns), adds
    ``human`` (a copy of ``human``) and one column per system id holding its ``score``, in the essays' ``order``
    (if present). An essay that some system has not graded yet is left out, so every grader is compared on the
    same essays.

    >>> long = pd.DataFrame({"essay_id": ["a", "b", "a"], "rating": [3.0, 4.0, 3.0],
    ...                      "system": ["m1", "m1", "m2"], "score": [2.5, 3.5, 3.1]})
    >>> grader_table(long)[["essay_id", "human", "m1", "m2"]].to_dict("records")
    [{'essay_id': 'a', 'human': 3.0, 'm1': 2.5, 'm2': 3.1}]
    """
    missing = [c for c in ("essay_id", "system", "score", human) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lack columns {missing}")
    if scores.empty:
        raise ValueError("scores is empty: no system has graded any essay")
    if scores.duplicated(["system", "essay_id"]).any():
        raise ValueError("scores repeat a (system, essay_id) pair")
    systems = list(dict.fromkeys(scores["system"]))
    if HUMAN in systems:
        raise ValueError(f"a system may not be called {HUMAN!r}")
    wide = scores.pivot(index="essay_id", columns="system", values="score")[systems].dropna()
    per_system = {"system", "score", "label_mass", "n_tokens", "prompt_id"} | {c for c in scores if c.startswith("p_")}
    essay_cols = [c for c in scores.columns if c not in per_system]
    essays = scores[essay_cols].drop_duplicates("essay_id").set_index("essay_id")
    out = essays.loc[wide.index].assign(**{HUMAN: lambda f: f[human].astype(float)})
    out = out.join(wide).reset_index()
    if "order" in out.columns:
        out = out.sort_values("order", kind="mergesort").reset_index(drop=True)
    return out


def _subset(table: pd.DataFrame, grouping: str, groups: Sequence[str] | None) -> tuple[pd.DataFrame, list[str]]:
    if grouping not in table.columns:
        raise ValueError(f"grader table lacks the grouping column {grouping!r}")
    groups = list(groups) if groups is not None else list(D.ELLIPSE_GROUPINGS.get(grouping, ()))
    if not groups:
        raise ValueError(f"no groups given for grouping {grouping!r}; pass groups=")
    sub = table[table[grouping].isin(groups)].reset_index(drop=True)
    absent = [g for g in groups if g not in set(sub[grouping])]
    if absent:
        raise ValueError(f"grouping {grouping!r}: groups {absent} have no essay in the table")
    return sub, groups


def essay_gaps(
    table: pd.DataFrame,
    graders: Sequence[str],
    grouping: str,
    *,
    reference: str | None = None,
    groups: Sequence[str] | None = None,
    k: Sequence[int] = (1, 2, 3),
    rounds: int = 2000,
    pool_size: int = 10,
    seed: int = 0,
    pools: np.ndarray | None = None,
) -> pd.DataFrame:
    r"""ΔDP and ΔEO of each group against the reference, for every grader, on the same random pools.

    The essays of ``groups`` (default :data:`allocbias.data.ELLIPSE_GROUPINGS` of ``grouping``) are pooled
    ``rounds`` times, ``pool_size`` at a time (:func:`~allocbias.selection.draw_random_pools` with ``seed``);
    each grader's top ``k`` of each pool is selected (ties share seats) and
    :math:`\Delta DP = \phi(A, k) - \phi(B, k)`, :math:`\Delta EO = \psi(A, k) - \psi(B, k)` as in
    :func:`~allocbias.selection.allocation_gaps`. The pools are drawn once and shared by all graders, so the
    column ``dDP_minus_human`` (and ``dEO_minus_human``), the grader's gap minus the human score's gap on the
    same pools, says whether the grader widens (same sign, larger) or narrows the human grades' gap.

    Returns one row per (grader, k, group): ``grouping``, ``grader``, ``k``, ``group``, ``reference``, ``phi``,
    ``phi_reference``, ``dDP``, ``psi``, ``psi_reference``, ``dEO`` and the two ``*_minus_human`` columns
    (present when ``human`` is among the graders). ``pools`` (positions into the rows of ``groups``, shape
    (rounds, pool_size)) replaces the drawn pools, e.g. to reuse one draw across bootstrap replicates.

    >>> t = pd.DataFrame({"essay_id": list("abcdefgh"), "g": list("XXXXYYYY"), "qualified": [True, False] * 4,
    ...                   "human": [4, 2, 4, 2, 4, 2, 4, 2.0], "m": [5, 4, 5, 4, 2, 1, 2, 1.0]})
    >>> gaps = essay_gaps(t, ["human", "m"], "g", reference="X", groups=["X", "Y"], k=[4], rounds=1, pool_size=8)
    >>> gaps[["grader", "dDP", "dEO", "dDP_minus_human"]].to_dict("records")
    [{'grader': 'human', 'dDP': 0.0, 'dEO': 0.0, 'dDP_minus_human': 0.0}, {'grader': 'm', 'dDP': -1.0, 'dEO': -1.0, 'dDP_minus_human': -1.0}]
    """
    sub, groups = _subset(table, grouping, groups)
    reference = reference if reference is not None else D.ELLIPSE_REFERENCE_GROUPS.get(grouping, groups[0])
    if reference not in groups:
        raise ValueError(f"reference group {reference!r} is not among the groups {groups} of {grouping!r}")
    missing = [g for g in graders if g not in sub.columns]
    if missing:
        raise ValueError(f"grader table lacks grader columns {missing}")
    if pools is None:
        pools = draw_random_pools(len(sub), rounds, pool_size, seed)
    frames = []
    for grader in graders:
        gaps = allocation_gaps(sub, grader, pools, list(k), reference, group=grouping, qualified="qualified")
        frames.append(gaps.rename(columns={grouping: "group"}).assign(grader=grader))
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "grouping", grouping)
    out = out[["grouping", "grader", *[c for c in out.columns if c not in ("grouping", "grader")]]]
    if HUMAN in graders:
        base = out.loc[out["grader"] == HUMAN, ["k", "group", "dDP", "dEO"]]
        base = base.rename(columns={"dDP": "dDP_human", "dEO": "dEO_human"})
        joined = out[["k", "group"]].merge(base, on=["k", "group"], how="left", validate="many_to_one")
        out["dDP_minus_human"] = out["dDP"].to_numpy() - joined["dDP_human"].to_numpy()
        out["dEO_minus_human"] = out["dEO"].to_numpy() - joined["dEO_human"].to_numpy()
    return out


def essay_gap_intervals(
    table: pd.DataFrame,
    graders: Sequence[str],
    grouping: str,
    *,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    boot_rounds: int | None = None,
    **gap_kwargs: object,
) -> pd.DataFrame:
    """:func:`essay_gaps` with percentile intervals from a bootstrap over essays, stratified by group.

    Each replicate redraws every group's essays with replacement (:func:`allocbias.measures.intervals.cluster_bootstrap`,
    cluster ``essay_id``, stratum the group) and recomputes :func:`essay_gaps` with the same pool seed; the
    interval covers the sampling of essays and of pools. Long format (:func:`allocbias.measures.intervals.percentile_intervals`):
    one row per (grouping, grader, k, group, metric) for the metrics ``dDP``, ``dEO`` and the
    ``*_minus_human`` differences.

    A replicate has as many essays as ``table`` (each group keeps its size), so one draw of ``boot_rounds`` pools
    of positions (default: a quarter of ``rounds``, at least 200) serves every replicate; the estimate itself
    uses ``rounds`` pools.
    """
    sub, groups = _subset(table, grouping, gap_kwargs.pop("groups", None))  # type: ignore[arg-type]
    kw: dict[str, object] = {**gap_kwargs, "groups": groups}
    estimate = essay_gaps(sub, graders, grouping, **kw)  # type: ignore[arg-type]
    values = [c for c in ("dDP", "dEO", "dDP_minus_human", "dEO_minus_human") if c in estimate.columns]
    rounds = int(kw.get("rounds", 2000))  # type: ignore[call-overload]
    n_pool = int(kw.get("pool_size", 10))  # type: ignore[call-overload]
    b_rounds = int(boot_rounds) if boot_rounds is not None else max(200, rounds // 4)
    pools = draw_random_pools(len(sub), b_rounds, n_pool, np.random.default_rng([seed, 1]))
    kw_boot = {**kw, "pools": pools}
    reps = cluster_bootstrap(sub, lambda f: essay_gaps(f, graders, grouping, **kw_boot), n_boot, seed,  # type: ignore[arg-type]
                             strata=(grouping,), cluster="essay_id")
    return percentile_intervals(estimate, reps, ["grouping", "grader", "k", "group"], values, confidence)




def essay_points(
    table: pd.DataFrame,
    graders: Sequence[str],
    *,
    k: int = 2,
    rounds: int = 2000,
    pool_size: int = 10,
    seed: int = 0,
    groupings: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """The predictive-validity points of the essay task: one row per (grouping, grader, group).

    For each grouping (default :data:`allocbias.data.ELLIPSE_GROUPINGS`) and each grader column of ``table``
    (:func:`grader_table`), the score-level metrics of the group against the grouping's reference group
    (:func:`allocbias.metrics.bias_table`: ``rabbi``, ``avg_gap``, ``jsd``, ``emd`` and their ``_qualified``
    versions) next to its selection gaps ``dDP`` and ``dEO`` at ``k`` (:func:`essay_gaps`, the same pools for
    every grader). This is what chapters 4, 5 and 14 correlate or rank.

    >>> t = pd.DataFrame({"essay_id": list("abcdefgh"), "g": list("XXXXYYYY"), "qualified": [True, False] * 4,
    ...                   "human": [4, 2, 4, 2, 4, 2, 4, 2.0], "m": [5, 4, 5, 4, 2, 1, 2, 1.0]})
    >>> p = essay_points(t, ["human", "m"], k=4, rounds=1, pool_size=8, groupings={"g": ["X", "Y"]})
    >>> p[["grouping", "grader", "group", "rabbi", "dDP"]].to_dict("records")
    [{'grouping': 'g', 'grader': 'human', 'group': 'Y', 'rabbi': 0.0, 'dDP': 0.0}, {'grouping': 'g', 'grader': 'm', 'group': 'Y', 'rabbi': -1.0, 'dDP': -1.0}]
    """
    from .metrics import bias_table

    groupings = dict(D.ELLIPSE_GROUPINGS if groupings is None else groupings)
    graders = list(graders)
    long = table.melt(id_vars=[c for c in table.columns if c not in graders], value_vars=graders,
                      var_name="grader", value_name="given_grade")
    parts = []
    for grouping, members in groupings.items():
        reference = D.ELLIPSE_REFERENCE_GROUPS.get(grouping, list(members)[0])
        metrics = bias_table(long[long[grouping].isin(members)], "given_grade", grouping, reference, by=["grader"],
                             qualified="qualified")
        gaps = essay_gaps(table, graders, grouping, reference=reference, groups=list(members), k=[k], rounds=rounds,
                          pool_size=pool_size, seed=seed)
        parts.append(metrics.rename(columns={grouping: "group"}).merge(
            gaps[["grader", "group", "dDP", "dEO"]], on=["grader", "group"], validate="one_to_one")
            .assign(grouping=grouping))
    out = pd.concat(parts, ignore_index=True)
    return out[["grouping", *[c for c in out.columns if c != "grouping"]]]
