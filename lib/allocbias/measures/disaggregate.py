r"""One engine for disaggregated tables and their bootstrap intervals.

Every table of the study that reports a rate, a gap or a metric per group (or per system and group, per job and
group, ...) has the same shape: cut a tidy frame into *cells* (the columns ``by``: a system, a job, a ``k``) and,
within each cell, into *groups* (the column ``group``: the demographic group of the candidate); compute each metric
on the rows of every (cell, group); compare the groups of a cell with a reference group; and, to say how much the
numbers move with the sample, recompute all of it on bootstrap replicates of the frame and read percentile
intervals off the replicates. :func:`disaggregate` does exactly that and returns a :class:`Disaggregated`.

Conventions follow fairlearn's ``MetricFrame`` (Weerts et al. 2023, *Fairlearn: assessing and improving fairness
of AI systems*, JMLR 24(257)): ``metrics`` is a mapping name -> metric; ``group`` plays the role of fairlearn's
``sensitive_features`` and ``by`` that of its ``control_features``; :attr:`Disaggregated.by_group` and
:attr:`Disaggregated.overall` are the by-group and per-cell values; :meth:`Disaggregated.difference` and
:meth:`Disaggregated.ratio` take fairlearn's methods ``"between_groups"`` (max - min, min / max per cell) and
``"to_overall"`` (the largest distance to the cell's overall value), plus the two this study reports:
``"to_reference"`` (each group against the reference group: ``dDP = phi(A) - phi(B)``) and ``"to_best"``
(each group against the cell's best group: the four-fifths impact ratio ``phi(A) / max_h phi(h)``). Unlike
fairlearn, the frames are *tidy* (one row per cell and group, the metrics as columns; intervals one row per
(cell, group, metric)), and a metric is any function of the rows of a group, not only of ``(y_true, y_pred)``.

Why not fairlearn itself: it is not installed in the study's (offline) environment, and its bootstrap
(``MetricFrame(n_boot=...)``) redraws *rows*, whereas the audit's uncertainty is that of its *clusters*: the names
shown on the résumés (every row of one name moves together), the essays, the pools, the systems. Here
``resample`` names the cluster (or ``"rows"``) and ``strata`` the cells within which clusters are redrawn, so
every replicate keeps the audit's design (same number of names per job and group).

The resampling primitives are shared by every bootstrap of the library:

- :func:`stratified_draws`: blocks of index matrices, each stratum's members drawn with replacement as many times
  as it holds (:func:`allocbias.genderbench.bootstrap_ci`, :func:`allocbias.metrics.rabbi_test`,
  :func:`allocbias.rankings.bootstrap_weights` are calls of it, with their historical block sizes, so the same seed
  gives the same draws as before);
- :func:`cluster_replicates`: the row positions of each cluster-bootstrap replicate
  (:func:`allocbias.measures.intervals.cluster_bootstrap` is a call of it);
- :func:`percentile_intervals`: estimate and the :math:`(1-c)/2`, :math:`(1+c)/2` quantiles of the replicates
  (percentile intervals, Efron and Tibshirani 1993, ch. 13).

Pure functions over frames: no I/O, no model, no score table is read here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pandas as pd

from .. import checks
from ..checks import require_columns

__all__ = ["DIFFERENCE_METHODS", "Disaggregated", "cell_frames", "cluster_replicates", "disaggregate", "key_tuple",
           "percentile_bounds", "percentile_intervals", "stratified_draws", "with_keys"]

#: A metric: the name of a column (its mean over the rows of a group: a rate when the column is 0/1) or a
#: function of the group's rows returning a number.
Metric = Union[str, Callable[[pd.DataFrame], Any]]

#: The ways of comparing the groups of a cell (:meth:`Disaggregated.difference`, :meth:`Disaggregated.ratio`).
DIFFERENCE_METHODS = ("to_reference", "to_best", "between_groups", "to_overall")


# ----------------------------------------------------------------------------------------------------------------
# cells
# ----------------------------------------------------------------------------------------------------------------
def key_tuple(key: object) -> tuple:
    """A group key as a tuple (``groupby`` gives a bare value when it groups by one column name).

    >>> key_tuple("retail"), key_tuple(("s", "retail"))
    (('retail',), ('s', 'retail'))
    """
    return key if isinstance(key, tuple) else (key,)


def cell_frames(frame: pd.DataFrame, by: Sequence[str], *, sort: bool = True,
                dropna: bool = True) -> list[tuple[tuple, pd.DataFrame]]:
    """The cells of ``frame`` by the columns ``by``: ``(key tuple, rows)`` pairs, observed keys only, sorted by key
    (``sort``) or in order of appearance; without ``by`` one pair ``((), frame)``. ``dropna=False`` keeps the
    rows whose key holds a missing value as cells of their own.

    >>> frame = pd.DataFrame({"job": ["b", "a", "b"], "x": [1, 2, 3]})
    >>> [(key, len(rows)) for key, rows in cell_frames(frame, ["job"])]
    [(('a',), 1), (('b',), 2)]
    >>> [(key, len(rows)) for key, rows in cell_frames(frame, [])]
    [((), 3)]
    """
    if not by:
        return [((), frame)]
    return [(key_tuple(key), cell) for key, cell in frame.groupby(by, sort=sort, observed=True, dropna=dropna)]


def with_keys(frame: pd.DataFrame, by: Sequence[str], key: Sequence[Any]) -> pd.DataFrame:
    """``frame`` with the columns ``by`` in front, holding the cell's ``key`` (in place; returns ``frame``): how a
    table computed on one cell of :func:`cell_frames` is labelled before the cells' tables are stacked.

    >>> with_keys(pd.DataFrame({"rate": [0.5]}), ["system", "job"], ("s", "retail")).to_dict("records")
    [{'system': 's', 'job': 'retail', 'rate': 0.5}]
    """
    for col, value in reversed(list(zip(by, key))):
        frame.insert(0, col, value)
    return frame


# ----------------------------------------------------------------------------------------------------------------
# resampling primitives
# ----------------------------------------------------------------------------------------------------------------
def stratified_draws(
    members: Sequence[np.ndarray], n_boot: int, seed: Any, *, block: int | None = None,
) -> Iterator[np.ndarray]:
    r"""Stratified bootstrap index matrices, ``block`` replicates at a time.

    ``members[s]`` holds the units (positions, labels) of stratum :math:`s`. Each replicate draws, in every
    stratum, :math:`n_s = |\text{members}[s]|` units with replacement; a block is a matrix of shape
    ``(b, sum of n_s)`` whose row is one replicate (stratum 0's draws first, then stratum 1's, ...). For each block
    the draws are ``rng.integers(n_s, size=(b, n_s))``, stratum after stratum, with
    ``rng = numpy.random.default_rng(seed)`` (a ``Generator`` is used as is), so the same seed and block size give
    the same replicates. ``block=None`` draws all ``n_boot`` replicates in one block.

    >>> blocks = list(stratified_draws([np.array([0, 1]), np.array([10, 11, 12])], 5, seed=0, block=2))
    >>> [b.shape for b in blocks]
    [(2, 5), (2, 5), (1, 5)]
    >>> bool(np.isin(blocks[0][:, :2], [0, 1]).all() and np.isin(blocks[0][:, 2:], [10, 11, 12]).all())
    True
    """
    rng = np.random.default_rng(seed)
    members = [np.asarray(m) for m in members]
    n_boot = int(n_boot)
    step = max(1, n_boot) if block is None else int(block)
    if step < 1:
        raise ValueError(f"block must be >= 1, got {block!r}")
    for start in range(0, n_boot, step):
        size = min(step, n_boot - start)
        yield np.concatenate([m[rng.integers(m.size, size=(size, m.size))] for m in members], axis=1)


def cluster_replicates(
    frame: pd.DataFrame, n_boot: int, seed: Any, *, strata: Sequence[str] = ("job", "group"),
    cluster: str | None = "full_name",
) -> Iterator[np.ndarray]:
    """Row positions (into ``frame``'s rows, in order) of ``n_boot`` cluster-bootstrap replicates.

    In each stratum (a cell of ``strata``) the clusters (values of ``cluster``; ``None``: every row is its own
    cluster) are drawn with replacement as many times as the stratum holds clusters, and a drawn cluster brings
    all its rows. Strata and clusters are ordered by the text of their keys; replicate ``b`` draws, stratum after
    stratum, ``rng.integers(n_s, size=(1, n_s))`` (:func:`stratified_draws` with ``block=1``).

    >>> df = pd.DataFrame({"group": ["A", "A", "A", "B"], "full_name": ["a1", "a1", "a2", "b1"]})
    >>> reps = [df.iloc[rows]["full_name"].tolist() for rows in cluster_replicates(df, 3, 0, strata=["group"])]
    >>> all(r[-1] == "b1" and len(r) in (3, 4, 5) for r in reps)
    True
    """
    strata = list(strata)
    keys = [*strata] if cluster is None else [*strata, cluster]
    require_columns(frame, keys, "frame")
    if frame.empty:
        raise ValueError("frame is empty: nothing to resample")
    cells: list[list[np.ndarray]]
    if cluster is None:
        if strata:
            groups = frame.groupby(strata, sort=True, dropna=False).indices
            cells = [[np.asarray([r]) for r in rows] for _, rows in sorted(groups.items(), key=lambda kv: str(kv[0]))]
        else:
            cells = [[np.asarray([r]) for r in range(len(frame))]]
    else:
        by_stratum: dict[tuple, list[np.ndarray]] = {}  # per stratum: the row positions of each cluster
        indices = frame.groupby(keys, sort=True, dropna=False).indices
        for key, rows in sorted(indices.items(), key=lambda kv: str(kv[0])):
            key = key if isinstance(key, tuple) else (key,)
            by_stratum.setdefault(key[:-1], []).append(np.asarray(rows))
        cells = list(by_stratum.values())
    sizes = [len(c) for c in cells]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    for draw in stratified_draws([np.arange(n) for n in sizes], n_boot, seed, block=1):
        picks = draw[0]
        yield np.concatenate([np.concatenate([c[i] for i in picks[o:o + len(c)]]) for c, o in zip(cells, offsets)])


def percentile_bounds(replicates: Any, confidence: float = 0.95, axis: int | None = 0) -> np.ndarray:
    r"""The :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of bootstrap replicates along ``axis`` (numpy's default
    linear interpolation): an array whose first axis is (low, high). The array form of
    :func:`percentile_intervals`, for replicates held in a matrix (:func:`allocbias.metrics.rabbi_test`,
    :func:`allocbias.rankings.top_k_selection_table`).

    >>> percentile_bounds(np.arange(11.0), 0.8).round(9).tolist()
    [1.0, 9.0]
    """
    return np.quantile(replicates, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0], axis=axis)


def percentile_intervals(
    estimate: pd.DataFrame,
    replicates: pd.DataFrame,
    keys: Sequence[str],
    values: Sequence[str],
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Estimates with percentile intervals, one tidy row per (``keys``, value column).

    Columns: ``keys``, ``metric`` (the value column's name), ``estimate`` (from ``estimate``), ``ci_low``,
    ``ci_high`` (the :math:`(1-c)/2` and :math:`(1+c)/2` quantiles of the replicates, NaN values left out) and
    ``n_boot`` (replicates with a value). A key of ``estimate`` that no replicate has gets NaN bounds.

    >>> est = pd.DataFrame({"group": ["A"], "gap": [0.5]})
    >>> reps = pd.DataFrame({"group": ["A"] * 5, "gap": [0.1, 0.2, 0.3, 0.4, 0.5], "replicate": range(5)})
    >>> percentile_intervals(est, reps, ["group"], ["gap"], confidence=0.5).round(2).to_dict("records")
    [{'group': 'A', 'metric': 'gap', 'estimate': 0.5, 'ci_low': 0.2, 'ci_high': 0.4, 'n_boot': 5}]
    """
    keys, values = list(keys), list(values)
    require_columns(estimate, [*keys, *values], "estimate")
    require_columns(replicates, [*keys, *values], "replicates")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    lo, hi = (1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0
    long_est = estimate.melt(id_vars=keys, value_vars=values, var_name="metric", value_name="estimate")
    long_rep = replicates.melt(id_vars=keys, value_vars=values, var_name="metric", value_name=" value")
    long_rep = long_rep.dropna(subset=[" value"])  # (a name no metric column takes: " value", with a space)
    grouped = long_rep.groupby([*keys, "metric"], sort=False)[" value"]
    bounds = pd.DataFrame({"ci_low": grouped.quantile(lo), "ci_high": grouped.quantile(hi),
                           "n_boot": grouped.size()}).reset_index()
    out = long_est.merge(bounds, on=[*keys, "metric"], how="left")
    out["n_boot"] = out["n_boot"].fillna(0).astype(np.int64)
    return out


# ----------------------------------------------------------------------------------------------------------------
# the engine
# ----------------------------------------------------------------------------------------------------------------
def _metric_specs(metrics: Metric | Sequence[str] | Mapping[str, Metric]) -> dict[str, Metric]:
    if isinstance(metrics, str):
        return {metrics: metrics}
    if isinstance(metrics, Mapping):
        specs = dict(metrics)
    elif callable(metrics):
        specs = {getattr(metrics, "__name__", "metric"): metrics}
    else:
        specs = {m: m for m in metrics}
    if not specs:
        raise ValueError("metrics is empty: name at least one column or function")
    for name, spec in specs.items():
        if not (isinstance(spec, str) or callable(spec)):
            raise ValueError(f"metric {name!r} must be a column name or a function of a frame, got {spec!r}")
    return specs


def _value(cell: pd.DataFrame, spec: Metric) -> Any:
    """A metric on the rows of one (cell, group): a column's mean, or the function's value."""
    if isinstance(spec, str):
        return float(cell[spec].to_numpy(dtype=float).mean())
    return spec(cell)


def _evaluate(frame: pd.DataFrame, keys: list[str], specs: Mapping[str, Metric], count: str | None,
              sort: bool) -> pd.DataFrame:
    """One row per cell of ``keys`` (one row in all without keys): the keys, ``count`` (rows) and each metric."""
    rows = []
    for key, cell in cell_frames(frame, keys, sort=sort):
        row = dict(zip(keys, key))
        if count is not None:
            row[count] = len(cell)
        rows.append(row | {name: _value(cell, spec) for name, spec in specs.items()})
    return pd.DataFrame(rows, columns=[*keys, *([count] if count is not None else []), *specs])


def _compare(table: pd.DataFrame, cells: list[str], group: str, metrics: list[str], method: str,
             reference: Hashable | None, overall: pd.DataFrame | None, ratio: bool) -> pd.DataFrame:
    """Differences (``ratio=False``) or ratios of the groups of each cell of ``cells``, by ``method``."""
    if method not in DIFFERENCE_METHODS:
        raise ValueError(f"method must be one of {list(DIFFERENCE_METHODS)}, got {method!r}")
    values = table[metrics].astype(float)
    grouped = values.groupby([table[c] for c in cells], sort=False) if cells else None

    def per_cell(how: str) -> pd.DataFrame:
        return grouped.transform(how) if grouped is not None else values.agg(how).to_frame().T.loc[
            [0] * len(values)].set_axis(values.index)

    def div(num: pd.DataFrame, den: pd.DataFrame) -> pd.DataFrame:
        return num.div(den.where(den != 0))

    if method in ("to_reference", "to_best"):
        if method == "to_reference":
            if reference is None:
                raise ValueError("method 'to_reference' needs a reference group: pass reference=")
            is_ref = (table[group] == reference).to_numpy()
            ref_rows = values[is_ref].copy()
            if cells:
                ref_keys = table.loc[is_ref, cells]
                if ref_keys.duplicated().any():
                    raise ValueError(f"the reference group {reference!r} has more than one row in a cell")
                lookup = ref_rows.set_axis(pd.MultiIndex.from_frame(ref_keys))
                base = lookup.reindex(pd.MultiIndex.from_frame(table[cells])).set_axis(values.index)
            else:
                base = (ref_rows.iloc[[0] * len(values)].set_axis(values.index) if len(ref_rows)
                        else values * np.nan)
        else:
            base = per_cell("max")
        out = div(values, base) if ratio else values - base
        return pd.concat([table[[*cells, group]], out], axis=1)
    if method == "between_groups":
        lo, hi = per_cell("min"), per_cell("max")
        out = div(lo, hi) if ratio else hi - lo
    else:  # to_overall: the group farthest from the cell's overall value
        if overall is None:
            raise ValueError("method 'to_overall' needs the overall values")
        if cells:
            base = overall.set_index(cells)[metrics].astype(float).reindex(
                pd.MultiIndex.from_frame(table[cells]) if len(cells) > 1 else table[cells[0]]).set_axis(values.index)
        else:
            base = overall[metrics].astype(float).iloc[[0] * len(values)].set_axis(values.index)
        if ratio:  # a zero on one side only gives an infinite ratio the other way, so the minimum is 0
            with np.errstate(divide="ignore", invalid="ignore"):
                out = np.minimum(values / base, base / values)
        else:
            out = (values - base).abs()
        out = out.groupby([table[c] for c in cells], sort=False).transform("min" if ratio else "max") if cells \
            else out.agg("min" if ratio else "max").to_frame().T.loc[[0] * len(values)].set_axis(values.index)
    result = pd.concat([table[cells], out], axis=1).drop_duplicates(subset=cells) if cells else out.iloc[:1]
    return result.reset_index(drop=True)


@dataclass(frozen=True)
class Disaggregated:
    """The result of :func:`disaggregate`: metrics per (cell, group), per cell, and their bootstrap replicates.

    ``by_group``: one row per (``by`` cell, group) with the ``count`` column (rows) and one column per metric;
    ``overall``: the same per cell of ``by`` (all groups together); ``replicates`` and ``overall_replicates``:
    ``by_group`` and ``overall`` recomputed on each bootstrap replicate, with a ``replicate`` column (None
    without a bootstrap).
    """

    by_group: pd.DataFrame
    overall: pd.DataFrame
    by: tuple[str, ...]
    group: str | None
    metrics: tuple[str, ...]
    reference: Hashable | None = None
    replicates: pd.DataFrame | None = None
    overall_replicates: pd.DataFrame | None = None
    confidence: float = 0.95

    def _method(self, method: str | None) -> str:
        if self.group is None:
            raise ValueError("no group column: differences and ratios compare the groups of a cell; pass group=")
        return method if method is not None else ("to_reference" if self.reference is not None else "between_groups")

    def difference(self, method: str | None = None, *, reference: Hashable | None = None) -> pd.DataFrame:
        r"""Differences between the groups of each cell (fairlearn's ``MetricFrame.difference``, tidy).

        - ``"to_reference"`` (default with a reference): :math:`m(g) - m(\text{ref})` for every group (the
          reference's row is 0); columns ``by``, group, metrics;
        - ``"to_best"``: :math:`m(g) - \max_h m(h)`;
        - ``"between_groups"`` (default without): :math:`\max_g m(g) - \min_g m(g)`, one row per cell;
        - ``"to_overall"``: :math:`\max_g |m(g) - m(\text{cell})|`, one row per cell.

        ``reference`` overrides the result's reference group.
        """
        method = self._method(method)
        return _compare(self.by_group, list(self.by), self.group, list(self.metrics), method,
                        self.reference if reference is None else reference, self.overall, ratio=False)

    def ratio(self, method: str | None = None, *, reference: Hashable | None = None) -> pd.DataFrame:
        r"""Ratios between the groups of each cell (fairlearn's ``MetricFrame.ratio``, tidy); NaN for a zero
        denominator.

        - ``"to_reference"``: :math:`m(g) / m(\text{ref})`;
        - ``"to_best"``: :math:`m(g) / \max_h m(h)` (the four-fifths impact ratio when :math:`m` is a selection
          rate);
        - ``"between_groups"``: :math:`\min_g m(g) / \max_g m(g)`, one row per cell;
        - ``"to_overall"``: :math:`\min_g \min(m(g) / m(\text{cell}), m(\text{cell}) / m(g))`, one row per cell.
        """
        method = self._method(method)
        return _compare(self.by_group, list(self.by), self.group, list(self.metrics), method,
                        self.reference if reference is None else reference, self.overall, ratio=True)

    def group_max(self) -> pd.DataFrame:
        """Per cell, the largest value of each metric over the groups (fairlearn's ``group_max``)."""
        return self._extreme("max")

    def group_min(self) -> pd.DataFrame:
        """Per cell, the smallest value of each metric over the groups (fairlearn's ``group_min``)."""
        return self._extreme("min")

    def _extreme(self, how: str) -> pd.DataFrame:
        metrics = list(self.metrics)
        if not self.by:
            return self.by_group[metrics].agg(how).to_frame().T
        return self.by_group.groupby(list(self.by), sort=False)[metrics].agg(how).reset_index()

    def intervals(self, of: str = "by_group", method: str | None = None, *,
                  reference: Hashable | None = None) -> pd.DataFrame:
        """Percentile intervals (:func:`percentile_intervals`) of ``of``: ``"by_group"``, ``"overall"``,
        ``"difference"`` or ``"ratio"`` (with ``method`` as in :meth:`difference`). One tidy row per (keys,
        metric): ``estimate`` (on the frame), ``ci_low``, ``ci_high`` and ``n_boot`` (replicates with a value);
        the differences and ratios of a replicate are those of its own groups.
        """
        if self.replicates is None or self.overall_replicates is None:
            raise ValueError("no bootstrap replicates: call disaggregate with n_boot > 0 and resample=")
        metrics = list(self.metrics)
        by = list(self.by)
        if of == "by_group":
            keys = [*by, *([self.group] if self.group else [])]
            return percentile_intervals(self.by_group, self.replicates, keys, metrics, self.confidence)
        if of == "overall":
            return percentile_intervals(self.overall, self.overall_replicates, by, metrics, self.confidence)
        if of not in ("difference", "ratio"):
            raise ValueError(f"of must be 'by_group', 'overall', 'difference' or 'ratio', got {of!r}")
        method = self._method(method)
        ref = self.reference if reference is None else reference
        ratio = of == "ratio"
        estimate = _compare(self.by_group, by, self.group, metrics, method, ref, self.overall, ratio)
        reps = _compare(self.replicates, [*by, "replicate"], self.group, metrics, method, ref,
                        self.overall_replicates, ratio)
        keys = [*by, self.group] if method in ("to_reference", "to_best") else by
        return percentile_intervals(estimate, reps, keys, metrics, self.confidence)


def disaggregate(
    frame: pd.DataFrame,
    metrics: Metric | Sequence[str] | Mapping[str, Metric],
    *,
    by: Sequence[str] = (),
    group: str | None = None,
    reference: Hashable | None = None,
    count: str | None = "n",
    sort: bool = True,
    resample: str | None = None,
    strata: Sequence[str] | None = None,
    n_boot: int = 0,
    seed: Any = 0,
    confidence: float = 0.95,
) -> Disaggregated:
    r"""Metrics of ``frame`` per cell of ``by`` and group, with bootstrap replicates if asked.

    For a cell :math:`c` (a value of the ``by`` columns), a group :math:`g` (a value of ``group``) and a metric
    :math:`m`, ``by_group`` holds :math:`m(\text{rows of } c \text{ and } g)` and ``overall`` holds
    :math:`m(\text{rows of } c)`. A metric given as a column name is that column's mean over the rows (a rate for a
    0/1 column: :math:`\phi_g = \frac{1}{n_g}\sum_{i \in g} \text{selected}_i`); a function gets the rows (a
    frame) and returns a number. ``count`` names the column of row counts (None: none). Cells and groups come in
    sorted order (``sort=False``: in order of first appearance); a (cell, group) without rows has no row.

    With ``n_boot > 0`` and ``resample`` (``"rows"`` or the name of a cluster column: ``full_name``, ``essay_id``,
    ``pool``, ``system``, ...) the frame is redrawn ``n_boot`` times (:func:`cluster_replicates`: clusters drawn with
    replacement within each cell of ``strata``, default ``(*by, group)``, so every replicate keeps each cell's
    number of clusters; ``numpy.random.default_rng(seed)`` drives the draws) and everything is recomputed on each
    replicate; :meth:`Disaggregated.intervals` turns the replicates into percentile intervals at ``confidence``.

    >>> df = pd.DataFrame({"job": ["j"] * 6, "group": ["A", "A", "A", "B", "B", "B"],
    ...                    "selected": [1, 1, 0, 1, 0, 0]})
    >>> res = disaggregate(df, {"phi": "selected"}, by=["job"], group="group", reference="B")
    >>> res.by_group.round(3).to_dict("records")
    [{'job': 'j', 'group': 'A', 'n': 3, 'phi': 0.667}, {'job': 'j', 'group': 'B', 'n': 3, 'phi': 0.333}]
    >>> res.difference().round(3)["phi"].tolist(), res.ratio("to_best").round(3)["phi"].tolist()
    ([0.333, 0.0], [1.0, 0.5])
    >>> res.overall.round(3).to_dict("records"), res.difference("between_groups").round(3).to_dict("records")
    ([{'job': 'j', 'n': 6, 'phi': 0.5}], [{'job': 'j', 'phi': 0.333}])
    >>> boot = disaggregate(df, {"phi": "selected"}, group="group", reference="B", resample="rows", n_boot=200)
    >>> boot.intervals("difference")[["group", "metric", "estimate", "n_boot"]].round(3).to_dict("records")[0]
    {'group': 'A', 'metric': 'phi', 'estimate': 0.333, 'n_boot': 200}
    """
    by = list(by)
    specs = _metric_specs(metrics)
    keys = [*by, *([group] if group is not None else [])]
    require_columns(frame, keys, "frame")
    columns = [spec for spec in specs.values() if isinstance(spec, str)]
    require_columns(frame, columns, "frame")
    if count is not None and count in [*keys, *specs]:
        raise ValueError(f"count column {count!r} collides with a key or metric name; pass count=")
    if reference is not None and group is None:
        raise ValueError("reference needs a group column: pass group=")
    n_boot = checks.count(n_boot, "n_boot", 0)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    by_group = _evaluate(frame, keys, specs, count, sort)
    overall = _evaluate(frame, by, specs, count, sort) if group is not None else by_group
    if reference is not None and not (frame[group] == reference).any():
        raise ValueError(f"reference group {reference!r} is not in column {group!r}")
    reps = overall_reps = None
    if n_boot:
        if resample is None:
            raise ValueError("n_boot > 0 needs resample='rows' or the name of a cluster column")
        cluster = None if resample == "rows" else resample
        strata = keys if strata is None else list(strata)
        base = frame.reset_index(drop=True)
        parts, overall_parts = [], []
        for b, rows in enumerate(cluster_replicates(base, n_boot, seed, strata=strata, cluster=cluster)):
            replicate = base.iloc[rows].reset_index(drop=True)
            table = _evaluate(replicate, keys, specs, count, sort).assign(replicate=b)
            parts.append(table)
            overall_parts.append(_evaluate(replicate, by, specs, count, sort).assign(replicate=b)
                                 if group is not None else table)
        reps = pd.concat(parts, ignore_index=True)
        overall_reps = pd.concat(overall_parts, ignore_index=True)
    elif resample is not None:
        raise ValueError("resample is set but n_boot is 0: pass n_boot > 0 for intervals")
    return Disaggregated(by_group, overall, tuple(by), group, tuple(specs), reference, reps, overall_reps,
                         confidence)
