"""The analysis tables the chapters read: from scores to quality separation, selection rates and allocation gaps.

Every function takes a tidy score table (one row per system and candidate, :func:`allocbias.scoring.catalog.study_scores`
or :func:`allocbias.scoring.runs.pointwise_table`; pairwise answers from :func:`allocbias.scoring.runs.pairwise_table`) and
returns a table per cell of ``by`` (a system) and subtask (a job). The quantities are defined on the book page
``book/definitions.md``: the rank-biserial ``rabbi`` and the average gap (:mod:`allocbias.metrics`), the
selection rates ``phi`` and ``psi`` and the allocation gaps ``dDP`` and ``dEO`` of top-``k`` selection from pools
of one candidate per group (:mod:`allocbias.selection`). Nothing here reads a score table or loads a model.

The tables sit next to the measures (they were in the study) because they only compute from a
score table they are given: they import the measures and what is audited, never scoring (so no catalog).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..audited import data as D
from ..measures.disaggregate import cell_frames, with_keys
from .._renamed import renamed
from ..checks import require_columns

__all__ = [
    "allocation_table", "pairwise_study_points", "pool_selection_table", "quality_separation", "reference_gaps",
    "study_points",
]


def quality_separation(
    scores: pd.DataFrame, *, by: Sequence[str] = ("system", "job"), score: str = "score", quality: str = "quality"
) -> pd.DataFrame:
    r"""How well the scores separate better résumés from worse ones: one row per (cell of ``by``, comparison).

    For the comparisons high vs low, high vs medium and medium vs low (:data:`allocbias.data.QUALITIES`):
    the mean score of each side and :func:`allocbias.metrics.rabbi` between the two sides,
    ``R = mean over pairs of [1(s_better > s_worse) - 1(s_better < s_worse)]``, with
    ``p_better = (1 + R) / 2``, the probability that a random candidate of the better quality outscores a
    random one of the worse quality (ties count half: the AUC). ``R = 1``: perfect separation; ``R = 0``:
    none.

    >>> df = pd.DataFrame({"quality": ["high", "high", "medium", "low", "low"], "score": [0.9, 0.4, 0.5, 0.5, 0.1]})
    >>> quality_separation(df, by=())[["better", "worse", "rabbi", "p_better"]].to_dict("records")[0]
    {'better': 'high', 'worse': 'low', 'rabbi': 0.5, 'p_better': 0.75}
    """
    from ..measures.metrics import rabbi

    by = list(by)
    require_columns(scores, [*by, score, quality], "scores")
    unknown = sorted(set(scores[quality].dropna().astype(str)) - set(D.QUALITIES))
    if unknown:
        raise ValueError(f"column {quality!r} holds unknown qualities {unknown}; known: {list(D.QUALITIES)}")
    cells = scores.groupby(by, sort=True, observed=True) if by else [((), scores)]
    rows = []
    for key, cell in cells:
        key = key if isinstance(key, tuple) else (key,)
        where = f" in cell {dict(zip(by, key))}" if by else ""
        values = {q: cell.loc[cell[quality] == q, score].to_numpy(dtype=float) for q in D.QUALITIES}
        for better, worse in (("high", "low"), ("high", "medium"), ("medium", "low")):
            for q in (better, worse):
                if values[q].size == 0:
                    raise ValueError(f"no {q!r} résumés{where}: cannot compare {better} with {worse}")
            r = rabbi(values[better], values[worse])
            rows.append([*key, better, worse, float(values[better].mean()), float(values[worse].mean()),
                         float(values[better].mean() - values[worse].mean()), r, (1.0 + r) / 2.0])
    return pd.DataFrame(rows, columns=[*by, "better", "worse", "mean_better", "mean_worse", "mean_difference",
                                       "rabbi", "p_better"])


def pool_selection_table(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    score: str = "score",
    group: str = "group",
    qualified: str = "qualified",
) -> pd.DataFrame:
    r"""Selection rates of every group, the reference included, from the pools of :func:`allocbias.selection.simulate`.

    Per cell of ``by`` (a system) and per subtask (a job): ``rounds`` pools of one candidate per group
    (:func:`allocbias.selection.draw_group_pools` with ``seed``; every cell gets the *same* pools, so systems
    are compared on the same draws), top-``k`` selection with shared ties
    (:func:`allocbias.selection.select_top_k`), and per group

    ``phi = selections / appearances`` over all candidates, ``psi`` the same over qualified candidates only.

    With one candidate per group per round, every group appears ``rounds`` times and the ``phi`` of a subtask
    sum to ``k`` over its groups. These are the rates behind ``dDP = phi(A) - phi(B)`` and
    ``dEO = psi(A) - psi(B)`` of :func:`allocation_table` (and of :func:`allocbias.selection.simulate`, called with
    the same arguments).

    Returns one row per (``by``, subtask, k, group): ``appearances``, ``selections``, ``phi``,
    ``qualified_appearances``, ``qualified_selections``, ``psi``, and ``tied_rounds`` (rounds of the subtask
    in which candidates tied at the cut share seats) and ``rounds``.

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B", "C"],
    ...                    "qualified": [True, True, True], "score": [0.5, 0.5, 0.2]})
    >>> pool_selection_table(df, 1, 10, 0)[["group", "phi", "psi", "tied_rounds"]].to_dict("list")
    {'group': ['A', 'B', 'C'], 'phi': [0.5, 0.5, 0.0], 'psi': [0.5, 0.5, 0.0], 'tied_rounds': [10, 10, 10]}
    """
    from ..measures.selection import draw_group_pools, select_top_k, selection_rates

    by = list(by)
    require_columns(scores, [*by, subtask, score, group, qualified], "scores")
    ks = [int(k)] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else [int(x) for x in k]
    frames = []
    for key, cell in cell_frames(scores, by, sort=False):
        cell = cell.reset_index(drop=True)
        pools = draw_group_pools(cell, rounds, seed, group=group, by=subtask)
        values = cell[score].to_numpy(dtype=float)[pools]
        if np.isnan(values).any():
            where = f" of cell {dict(zip(by, key))}" if by else ""
            raise ValueError(f"column {score!r} is NaN for candidates in the pools{where}: every candidate that can "
                             "be drawn needs a score")
        selected = select_top_k(values, ks)  # (K, rounds in all subtasks, pool)
        fractional = ((selected > 0) & (selected < 1)).any(axis=2)  # (K, rounds)
        subtasks = sorted(pd.unique(cell[subtask]))
        for s, name in enumerate(subtasks):
            block = slice(s * rounds, (s + 1) * rounds)
            everyone = selection_rates(cell, pools[block], selected[:, block], group=group, k=ks)
            among = selection_rates(cell, pools[block], selected[:, block], group=group, qualified=qualified, k=ks)
            n_groups = len(everyone) // len(ks)  # rows: quota after quota, the groups of each in one order
            frame = pd.DataFrame({
                subtask: name, "k": everyone["k"], "group": everyone["group"],
                "appearances": everyone["appearances"], "selections": everyone["selections"],
                "phi": everyone["selection_rate"], "qualified_appearances": among["appearances"],
                "qualified_selections": among["selections"], "psi": among["selection_rate"],
                "tied_rounds": np.repeat(fractional[:, block].sum(axis=1), n_groups), "rounds": rounds,
            })
            frames.append(with_keys(frame, by, key))
    out = pd.concat(frames, ignore_index=True)
    return out.astype({"tied_rounds": np.int64, "rounds": np.int64})


def allocation_table(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
    score: str = "score",
    group: str = "group",
    qualified: str = "qualified",
) -> pd.DataFrame:
    """ΔDP and ΔEO of every group against ``reference``, per cell of ``by`` and subtask, from the selection rates
    of :func:`pool_selection_table` (called with the same arguments, so the same pools), with the ``by`` columns
    in front.

    ``dDP = phi(A, k) - phi(B, k)``, ``dEO = psi(A, k) - psi(B, k)``, signed (positive: group A is selected
    more often than the reference group B). One row per (``by``, subtask, k, group A != B) with the columns of
    :func:`allocbias.selection.simulate` (``reference``, ``phi``, ``phi_reference``, ``dDP``, ``psi``,
    ``psi_reference``, ``dEO``, ``rounds``): the table that one ``simulate`` call per cell gives, value for value.

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B", "A", "B"],
    ...                    "qualified": [True, True, False, False], "score": [0.9, 0.3, 0.8, 0.1]})
    >>> allocation_table(df, 1, 50, 0, reference="B")[["system", "job", "group", "dDP", "dEO"]].to_dict("records")
    [{'system': 's', 'job': 'j', 'group': 'A', 'dDP': 1.0, 'dEO': 1.0}]
    """
    rates = pool_selection_table(scores, k, rounds, seed, by=by, subtask=subtask, score=score, group=group,
                                 qualified=qualified)
    return reference_gaps(rates, reference, by=by, subtask=subtask, group=group)


def reference_gaps(
    rates: pd.DataFrame,
    reference: str = D.REFERENCE_GROUP,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    group: str = "group",
) -> pd.DataFrame:
    """ΔDP and ΔEO against ``reference`` from a table of :func:`pool_selection_table` (what
    :func:`allocation_table` returns, without drawing the pools again when the rates are already at hand).

    ``rates`` needs, per (``by``, subtask, k), one row of the reference group; ``group`` names the group
    column of the scores that made it (for the error message). A reference missing from every row or from some
    cells raises ``ValueError`` naming it and the cells.

    >>> rates = pd.DataFrame({"job": "j", "k": 1, "group": ["A", "B"], "phi": [0.75, 0.25], "psi": [1.0, 0.0],
    ...                       "rounds": 4})
    >>> reference_gaps(rates, "B", by=())[["group", "dDP", "dEO"]].to_dict("records")
    [{'group': 'A', 'dDP': 0.5, 'dEO': 1.0}]
    """
    by = list(by)
    require_columns(rates, [*by, subtask, "k", "group", "phi", "psi", "rounds"], "rates")
    keys = [*by, subtask, "k"]
    is_reference = rates["group"] == reference
    if not is_reference.any():
        raise ValueError(f"reference group {reference!r} is not in column {group!r}; groups are "
                         f"{sorted(pd.unique(rates['group']))}")
    # each (cell, subtask, k) row of the reference, beside the rows of the other groups of that block
    ref = rates.loc[is_reference, [*keys, "phi", "psi"]].rename(columns={"phi": "phi_reference",
                                                                           "psi": "psi_reference"})
    out = rates.loc[~is_reference, [*keys, "group", "phi", "psi", "rounds"]].merge(ref, on=keys, how="left",
                                                                                    validate="many_to_one")
    if out["phi_reference"].isna().any():
        lost = out.loc[out["phi_reference"].isna(), keys[:-1]].drop_duplicates().to_dict("records")[:3]
        raise ValueError(f"reference group {reference!r} has no candidate (column {group!r}) in the cells {lost}")
    out["reference"] = reference
    out["dDP"] = out["phi"] - out["phi_reference"]
    out["dEO"] = out["psi"] - out["psi_reference"]
    return out[[*keys, "group", "reference", "phi", "phi_reference", "dDP", "psi", "psi_reference", "dEO",
                "rounds"]]


def study_points(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
    score: str = "score",
) -> pd.DataFrame:
    """The points of the predictive-validity analysis: one row per (``by``, subtask, group, k).

    Joins, for every non-reference group A of each (system, subtask), the bias metrics of its scores against
    the reference group B (:func:`allocbias.metrics.bias_table`: ``rabbi``, ``avg_gap``, ``jsd``, ``emd`` and
    their ``_qualified`` versions on qualified candidates) with the allocation gaps ``dDP`` and ``dEO`` of
    top-``k`` selection over ``rounds`` pools (:func:`allocation_table`, same ``seed`` for every system).
    The metrics do not depend on ``k``; a list of ``k`` repeats them once per quota.

    >>> df = pd.DataFrame({"system": "s", "job": "j", "group": ["A", "B"] * 3,
    ...                    "qualified": [True, True, False, False, True, True],
    ...                    "score": [0.9, 0.3, 0.8, 0.1, 0.7, 0.2]})
    >>> study_points(df, 1, 50, 0, reference="B")[["group", "k", "rabbi", "avg_gap", "dDP"]].round(3).to_dict("records")
    [{'group': 'A', 'k': 1, 'rabbi': 1.0, 'avg_gap': 0.6, 'dDP': 1.0}]
    """
    from ..measures.metrics import bias_table

    by = list(by)
    require_columns(scores, [*by, subtask, score, "group", "qualified"], "scores")
    metrics = bias_table(scores, score, "group", reference, by=[*by, subtask], qualified="qualified")
    gaps = allocation_table(scores, k, rounds, seed, by=by, subtask=subtask, reference=reference, score=score)
    keys = [*by, subtask, "group"]
    out = gaps.merge(metrics.drop(columns=["reference"]), on=keys, how="left", validate="many_to_one")
    if out["rabbi"].isna().any():
        lost = out.loc[out["rabbi"].isna(), keys].drop_duplicates().to_dict("records")[:3]
        raise ValueError(f"no bias metrics for the cells {lost}: the reference group {reference!r} is missing there")
    return out


def pairwise_study_points(
    answers: pd.DataFrame,
    pools: pd.DataFrame,
    k: int | Sequence[int],
    *,
    by: Sequence[str] = ("system",),
    subtask: str = "job",
    reference: str = D.REFERENCE_GROUP,
) -> pd.DataFrame:
    r"""The points of the pairwise predictive-validity test (the paper's Table 1, pairwise rows; Figure 3).

    One row per (``by``, subtask, group, k) for every non-reference group. In each pool (subtask, ``round``)
    a candidate's score is the points it wins over the pool's pairs (:func:`allocbias.metrics.pairwise_points`,
    both orders); the top ``k`` of each pool are selected (ties at the cut share the seats,
    :func:`allocbias.selection.allocation_gaps`, which raises if a group has no qualified candidate), which gives ``dDP`` (selection rate of the group minus the
    reference's, over the pools) and ``dEO`` (the same over qualified candidates). The metrics compare the
    group's pool scores with the reference's: ``rabbi`` (rank-biserial over every (round, candidate) score) and
    ``avg_gap``, the paper's pairwise average gap: the share of compared (A, B) pairs that A won in both orders
    (:func:`allocbias.metrics.pairwise_gap_table`); ``_qualified`` versions use qualified candidates (and
    pairs of two qualified candidates) only. ``n_rounds`` counts the pools.

    ``answers`` is :func:`allocbias.scoring.runs.pairwise_table` output (or :func:`allocbias.scoring.runs.score` of ``resume_pairwise`` with
    the ``by`` columns added); ``pools`` is :func:`allocbias.scoring.items.pairwise_pools` output, which names each pool's candidates and their
    ``group`` and ``qualified`` flags. Every pool must have been answered in full (a missing pair raises).

    >>> class First:  # names the candidate shown first: every pair is inconsistent, so every score ties
    ...     def generate(self, prompts, **kw):
    ...         return [m[1]["content"].split("\n\n")[1].splitlines()[0] for m in prompts]
    >>> import tempfile
    >>> from allocbias.scoring.items import pairwise_pools
    >>> from allocbias.scoring.runs import pairwise_table
    >>> pools = pairwise_pools(D.candidate_table(["retail"], names_per_group=1), 30, 0)
    >>> answers = pairwise_table("smollm2-fp32-paper", pools, root=tempfile.mkdtemp(), engine_for=lambda s: First())
    >>> pts = pairwise_study_points(answers, pools, 1)
    >>> len(pts), float(pts["dDP"].abs().max()), float(pts["rabbi"].abs().max()), float(pts["avg_gap"].max())
    (7, 0.0, 0.0, 0.0)
    """
    from ..measures.metrics import pairwise_gap_table, pairwise_points, rabbi
    from ..measures.selection import allocation_gaps

    by = list(by)
    keys = [*by, subtask]
    require_columns(answers, [*keys, "round", "pair_id", "cand_a", "cand_b", "order", "winner"], "answers")
    require_columns(pools, [subtask, "round", "candidate", "group", "qualified"], "pools")
    ks = [int(k)] if np.isscalar(k) else [int(x) for x in k]
    members = pools[[subtask, "round", "candidate", "group", "qualified"]]
    if members.duplicated([subtask, "round", "group"]).any():
        raise ValueError("pools has more than one candidate of a group in a pool (subtask, round)")
    groups = sorted(members["group"].unique())
    if reference not in groups:
        raise ValueError(f"reference group {reference!r} is not in the pools; groups: {groups}")
    group_of = members.drop_duplicates("candidate").set_index("candidate")["group"]
    qualified_of = members.drop_duplicates("candidate").set_index("candidate")["qualified"].astype(bool)
    points = pairwise_points(answers, by=[*keys, "round"])
    rows = []
    for cell, cell_points in points.groupby(keys, sort=True):
        cell = cell if isinstance(cell, tuple) else (cell,)
        sub = cell[-1]
        pool = members[members[subtask] == sub]
        got = pool.merge(cell_points[["round", "candidate", "score"]], on=["round", "candidate"], how="left")
        if got["score"].isna().any():
            lost = got.loc[got["score"].isna(), ["round", "candidate"]].head(3).to_dict("records")
            raise ValueError(f"cell {dict(zip(keys, cell))}: pool members without pairwise answers, e.g. {lost}")
        got = got.sort_values(["round", "group"], kind="stable").reset_index(drop=True)
        n_rounds = got["round"].nunique()
        if len(got) != n_rounds * len(groups):
            raise ValueError(f"cell {dict(zip(keys, cell))}: every pool must hold one candidate of each of {groups}")
        # each pool is one round's rows: top-k within it, rates and gaps as for the pointwise simulation
        gaps = allocation_gaps(got, "score", np.arange(len(got)).reshape(n_rounds, len(groups)), ks, reference)
        gaps = gaps.set_index(["k", "group"])
        cell_answers = answers[(answers[keys] == pd.Series(dict(zip(keys, cell)))).all(axis=1)]
        both_q = qualified_of.loc[cell_answers["cand_a"]].to_numpy() & qualified_of.loc[cell_answers["cand_b"]].to_numpy()
        win = pairwise_gap_table(cell_answers, group_of, reference).set_index("group")["win_share"]
        q_answers = cell_answers[both_q]
        ref_q = (group_of.loc[q_answers["cand_a"]].to_numpy() == reference) | (
            group_of.loc[q_answers["cand_b"]].to_numpy() == reference)
        win_q = (pairwise_gap_table(q_answers, group_of, reference).set_index("group")["win_share"]
                 if ref_q.any() else pd.Series(dtype=float))  # no qualified pair with the reference: NaN
        long = got.set_index("group")
        for g in groups:
            if g == reference:
                continue
            a, b = long.loc[[g], "score"].to_numpy(), long.loc[[reference], "score"].to_numpy()
            aq = long.loc[[g]].query("qualified")["score"].to_numpy()
            bq = long.loc[[reference]].query("qualified")["score"].to_numpy()
            base = dict(zip(keys, cell), group=g, rabbi=rabbi(a, b), avg_gap=float(win.get(g, np.nan)),
                        rabbi_qualified=rabbi(aq, bq) if len(aq) and len(bq) else np.nan,
                        avg_gap_qualified=float(win_q.get(g, np.nan)), n_rounds=n_rounds)
            for kk in ks:
                rows.append({**base, "k": kk, "dDP": float(gaps.loc[(kk, g), "dDP"]),
                             "dEO": float(gaps.loc[(kk, g), "dEO"])})
    cols = [*keys, "group", "k", "rabbi", "avg_gap", "rabbi_qualified", "avg_gap_qualified", "dDP", "dEO", "n_rounds"]
    return pd.DataFrame(rows, columns=cols)


#: Old name (deprecated alias): ``tables.selection_table`` collided with ``rankings.selection_table``.
__getattr__ = renamed(__name__, {"selection_table": "pool_selection_table"})
