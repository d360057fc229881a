r"""Synthetic score distributions for controlled experiments on bias metrics and allocation gaps.

A *system* stands for one (model, subtask) cell of the study: it gives every candidate of every group a score,
and a selection simulation turns the scores into allocation gaps. Here the scores are drawn from known
distributions, so that one can see *which difference between the groups' score distributions* makes the average
score gap, JSD or EMD disagree with the selection-rate gap ``dDP`` while RABBI does not (and where RABBI fails
too). The families (one per kind of group difference; ``z`` is a latent score, ``eps`` standard noise):

* ``"shift"`` (the control): ``s = mu_g + eps``, ``eps ~ N(0, 1)``: the groups differ only in location;
* ``"spread"``: ``s = sigma_g eps``: equal means (0) and equal medians, different standard deviations;
* ``"skew"``: ``s = 1 / (1 + exp(-(a + b (mu_g + eps))))``: a location shift seen through a logistic *ceiling*,
  scores in (0, 1) that pile up near 1 (``a > 0``, left-skewed) or near 0 (``a < 0``), like the P(Yes) scores
  of an LLM; the offset ``a`` and slope ``b`` are shared by the groups of a system;
* ``"heavy_tail"``: ``s = mu_g + t_nu``, Student-t noise with ``nu`` degrees of freedom (shared by the system):
  a location shift with rare, extreme scores (``nu <= 1``: the mean does not even exist).

Functions:

* :func:`draw_scores`: one group's scores from a family with given parameters;
* :class:`FamilySettings`: how the group parameters of random systems are drawn (checked once);
* :func:`draw_group_params`, :func:`draw_systems`: random systems (parameters per group, then scores), tidy;
* :func:`evaluate_systems`: every metric of :func:`allocbias.metrics.bias_table`, the score shape and the
  selection gaps of :func:`allocbias.selection.simulate` per (system, group), one tidy row each;
* :func:`simulate_systems`: both steps in one call;
* :func:`hand_picked_system`: three constructed systems where the mean gap and ``dDP`` disagree;
* :func:`with_low_outliers`: turn a group's lowest scores into outliers (optionally to hit a target mean);
* :func:`percentiles`, :func:`selection_weight`, :func:`dp_contribution`, :func:`expected_dp_gap`: the
  mechanism in closed form, RABBI and ``dDP`` as averages of a function of each candidate's percentile among
  the reference group.

Everything is a pure function; every random step takes a ``seed``; bad input raises ``ValueError`` naming the
parameter.

The module sits next to the measures (it was in the study): it draws scores and evaluates
them with the metrics and the selection simulation, and imports nothing of scoring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from .. import checks
from ..measures.metrics import bias_table, score_shape
from ..measures.selection import simulate

__all__ = [
    "CASES",
    "FAMILIES",
    "FOCAL",
    "FamilySettings",
    "REFERENCE",
    "dp_contribution",
    "draw_group_params",
    "draw_scores",
    "draw_systems",
    "evaluate_systems",
    "expected_dp_gap",
    "group_labels",
    "hand_picked_system",
    "percentiles",
    "selection_weight",
    "simulate_systems",
    "with_low_outliers",
]

#: the score families, one per kind of difference between the groups' score distributions
FAMILIES: tuple[str, ...] = ("shift", "spread", "skew", "heavy_tail")
#: the three constructed systems of :func:`hand_picked_system`
CASES: tuple[str, ...] = ("hidden_advantage", "outlier_penalty", "wider_spread")
#: label of the reference group in every synthetic system
REFERENCE = "B"
#: the focal group of :func:`hand_picked_system` (the only group that differs from the reference)
FOCAL = "A1"

# parameters each family reads in draw_scores: name -> default (None: required)
_FAMILY_PARAMS: dict[str, dict[str, float | None]] = {
    "shift": {"loc": 0.0},
    "spread": {"loc": 0.0, "scale": 1.0},
    "skew": {"loc": 0.0, "offset": None, "slope": None},
    "heavy_tail": {"loc": 0.0, "df": None},
}
_PARAM_COLUMNS = ("loc", "scale", "offset", "slope", "df")
_POSITIVE = ("scale", "slope", "df")


# --------------------------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------------------------
def _check_family(family: Any) -> str:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    return family


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _positive(value: Any, name: str) -> float:
    v = _finite(value, name)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def _range(value: Any, name: str, *, positive: bool) -> tuple[float, float]:
    """A ``(low, high)`` pair of finite numbers with ``low <= high`` (and ``low > 0`` if ``positive``)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"{name} must be a (low, high) pair, got {value!r}")
    low, high = (_finite(v, name) for v in value)
    if low > high:
        raise ValueError(f"{name} must have low <= high, got {value!r}")
    if positive and low <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return low, high


def _check_families(families: Any) -> list[str]:
    if isinstance(families, str):
        families = [families]
    families = list(families)
    if not families:
        raise ValueError(f"families is empty: name at least one of {FAMILIES}")
    for f in families:
        _check_family(f)
    if len(set(families)) != len(families):
        raise ValueError(f"families lists a family more than once: {families}")
    return families


# --------------------------------------------------------------------------------------------------------------
# one group's scores
# --------------------------------------------------------------------------------------------------------------
def _family_params(family: str, params: Mapping[str, Any]) -> dict[str, float]:
    if not isinstance(params, Mapping):
        raise ValueError(f"params must be a mapping of parameter names to numbers, got {type(params).__name__}")
    allowed = _FAMILY_PARAMS[family]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"params has unknown key(s) {unknown} for family {family!r}; allowed: {sorted(allowed)}")
    out: dict[str, float] = {}
    for name, default in allowed.items():
        if name not in params:
            if default is None:
                raise ValueError(f"params lacks {name!r}, which family {family!r} requires")
            out[name] = default
            continue
        out[name] = _positive(params[name], f"params[{name!r}]") if name in _POSITIVE else _finite(
            params[name], f"params[{name!r}]"
        )
    return out


def _noise(family: str, rng: np.random.Generator, size: tuple[int, ...], df: np.ndarray | None) -> np.ndarray:
    if family == "heavy_tail":
        return rng.standard_t(df, size=size)
    return rng.standard_normal(size)


def _transform(family: str, eps: np.ndarray, p: Mapping[str, np.ndarray | float]) -> np.ndarray:
    """Scores from standard noise ``eps`` and (broadcastable) parameter arrays."""
    if family == "spread":
        return p["loc"] + p["scale"] * eps
    if family == "skew":
        return special.expit(p["offset"] + p["slope"] * (p["loc"] + eps))
    return p["loc"] + eps  # shift, heavy_tail (the noise carries the tails)


def draw_scores(family: str, params: Mapping[str, float], n: int, seed: int | np.random.Generator | None) -> np.ndarray:
    r"""Draw ``n`` scores of one group from a synthetic family.

    With ``eps ~ N(0, 1)`` (``t_nu`` for ``heavy_tail``) i.i.d. per candidate:

    ============  =======================================================  ===============================
    family        score                                                    params (default)
    ============  =======================================================  ===============================
    shift         ``s = loc + eps``                                        ``loc`` (0)
    spread        ``s = loc + scale * eps``                                ``loc`` (0), ``scale`` (1)
    skew          ``s = 1 / (1 + exp(-(offset + slope * (loc + eps))))``   ``loc`` (0), ``offset``, ``slope``
    heavy_tail    ``s = loc + t_df``                                       ``loc`` (0), ``df``
    ============  =======================================================  ===============================

    ``scale``, ``slope`` and ``df`` must be positive. ``skew`` scores lie in (0, 1) (``scipy.special.expit``).

    Parameters
    ----------
    family
        One of :data:`FAMILIES`.
    params
        The family's parameters (unknown or missing required keys raise).
    n
        Number of scores (>= 1).
    seed
        Seed or ``numpy.random.Generator``.

    Returns
    -------
    numpy.ndarray
        ``n`` float scores.

    Examples
    --------
    >>> draw_scores("shift", {"loc": 2.0}, 3, seed=0).round(3).tolist()
    [2.126, 1.868, 2.64]
    >>> s = draw_scores("skew", {"offset": 3.0, "slope": 2.0}, 1000, seed=0)
    >>> bool(0 < s.min() and s.max() < 1), bool(np.median(s) > 0.9)
    (True, True)
    """
    family = _check_family(family)
    p = _family_params(family, params)
    n = checks.count(n, "n", 1)
    rng = np.random.default_rng(seed)
    eps = _noise(family, rng, (n,), p.get("df"))
    return _transform(family, eps, p)


# --------------------------------------------------------------------------------------------------------------
# random systems
# --------------------------------------------------------------------------------------------------------------
def group_labels(n_groups: int) -> list[str]:
    """Group labels of a synthetic system: the reference ``"B"`` first, then ``"A1"`` ... ``"A{n_groups-1}"``.

    >>> group_labels(3)
    ['B', 'A1', 'A2']
    """
    n_groups = checks.count(n_groups, "n_groups", 2)
    return [REFERENCE, *(f"A{i}" for i in range(1, n_groups))]


@dataclass(frozen=True)
class FamilySettings:
    r"""How the group parameters of random systems are drawn (:func:`draw_group_params`, :func:`draw_systems`,
    :func:`simulate_systems`), per family:

    * ``shift_sd`` (``>= 0``): ``shift``, ``skew``, ``heavy_tail``: ``loc ~ N(0, shift_sd^2)`` per group;
    * ``spread_ratio`` (``>= 1``): ``spread``: the largest ratio of two groups' standard deviations;
    * ``ceiling_offset`` (``(low, high)``, ``0 <= low``): ``skew``: the range of ``|offset|``;
    * ``ceiling_slope`` (``(low, high)``, ``0 < low``): ``skew``: the range of the slope;
    * ``tail_df`` (``(low, high)``, ``0 < low``): ``heavy_tail``: the range of the Student-t degrees of freedom.

    Checked once, when made: a bad value raises ``ValueError`` naming the setting. The numbers are kept as floats
    and the ranges as ``(low, high)`` tuples of floats.

    >>> FamilySettings(tail_df=[30, 30]).tail_df, FamilySettings().ceiling_offset
    ((30.0, 30.0), (2.0, 6.0))
    >>> FamilySettings(spread_ratio=0.5)
    Traceback (most recent call last):
    ...
    ValueError: spread_ratio must be >= 1 (the largest ratio of two groups' sds), got 0.5
    """

    shift_sd: float = 0.5
    spread_ratio: float = 3.0
    ceiling_offset: tuple[float, float] = (2.0, 6.0)
    ceiling_slope: tuple[float, float] = (1.0, 3.0)
    tail_df: tuple[float, float] = (1.0, 3.0)

    def __post_init__(self) -> None:
        sd = _finite(self.shift_sd, "shift_sd")
        if sd < 0:
            raise ValueError(f"shift_sd must be >= 0, got {self.shift_sd!r}")
        ratio = _finite(self.spread_ratio, "spread_ratio")
        if ratio < 1:
            raise ValueError(f"spread_ratio must be >= 1 (the largest ratio of two groups' sds), got "
                             f"{self.spread_ratio!r}")
        offset = _range(self.ceiling_offset, "ceiling_offset", positive=False)
        if offset[0] < 0:
            raise ValueError(f"ceiling_offset is a range of |offset| and must be >= 0, got {self.ceiling_offset!r}")
        checked = {"shift_sd": sd, "spread_ratio": ratio, "ceiling_offset": offset,
                   "ceiling_slope": _range(self.ceiling_slope, "ceiling_slope", positive=True),
                   "tail_df": _range(self.tail_df, "tail_df", positive=True)}
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def _check_settings(settings: Any) -> FamilySettings:
    if not isinstance(settings, FamilySettings):
        raise ValueError(f"settings must be a FamilySettings, got {type(settings).__name__}")
    return settings


def _draw_param_arrays(
    family: str, n_systems: int, n_groups: int, rng: np.random.Generator, settings: FamilySettings
) -> dict[str, np.ndarray]:
    """Parameter arrays of shape (n_systems, n_groups); NaN marks a parameter the family does not use."""
    shape = (n_systems, n_groups)
    nan = np.full(shape, np.nan)
    p = {name: nan.copy() for name in _PARAM_COLUMNS}
    if family == "spread":
        half = 0.5 * np.log(settings.spread_ratio)
        p["loc"] = np.zeros(shape)
        p["scale"] = np.exp(rng.uniform(-half, half, size=shape))
        return p
    p["loc"] = rng.normal(0.0, settings.shift_sd, size=shape)
    if family == "skew":
        sign = rng.choice([-1.0, 1.0], size=(n_systems, 1))
        p["offset"] = np.broadcast_to(sign * rng.uniform(*settings.ceiling_offset, size=(n_systems, 1)),
                                      shape).copy()
        p["slope"] = np.broadcast_to(rng.uniform(*settings.ceiling_slope, size=(n_systems, 1)), shape).copy()
    elif family == "heavy_tail":
        p["df"] = np.broadcast_to(rng.uniform(*settings.tail_df, size=(n_systems, 1)), shape).copy()
    return p


def _params_frame(family: str, p: Mapping[str, np.ndarray], labels: list[str]) -> pd.DataFrame:
    n_systems = p["loc"].shape[0]
    out = pd.DataFrame(
        {
            "family": family,
            "system": np.repeat(np.arange(n_systems), len(labels)),
            "group": np.tile(labels, n_systems),
        }
    )
    for name in _PARAM_COLUMNS:
        out[name] = p[name].ravel()
    return out


def _family_rng(seed: int, family: str) -> np.random.Generator:
    """The generator of one family: independent of which other families are drawn."""
    return np.random.default_rng(np.random.SeedSequence([checks.seed(seed), FAMILIES.index(family)]))


def draw_group_params(
    family: str,
    n_systems: int,
    n_groups: int,
    seed: int,
    *,
    settings: FamilySettings = FamilySettings(),
) -> pd.DataFrame:
    r"""Random parameters of every group of ``n_systems`` systems of one family (see :func:`draw_scores`).

    Per system and group (the reference group included: it is just one of the groups), with the
    :class:`FamilySettings` ``settings``:

    * ``shift``, ``skew``, ``heavy_tail``: ``loc ~ N(0, shift_sd^2)`` i.i.d. per group;
    * ``spread``: ``loc = 0`` and ``log scale ~ U(-log(spread_ratio) / 2, log(spread_ratio) / 2)`` per group, so
      two groups' standard deviations differ by a factor of at most ``spread_ratio``;
    * ``skew``, per system: ``offset = +-U(ceiling_offset)`` (sign +1 or -1 with probability 1/2: scores piling up
      near 1 or near 0) and ``slope ~ U(ceiling_slope)``;
    * ``heavy_tail``, per system: ``df ~ U(tail_df)``.

    Columns a family does not use hold NaN (e.g. ``df`` outside ``heavy_tail``). The generator is seeded with
    ``(seed, family)``, so a family's systems do not depend on which other families are drawn.

    Returns
    -------
    pandas.DataFrame
        Columns ``family, system, group, loc, scale, offset, slope, df``; ``n_systems * n_groups`` rows, groups in
        the order of :func:`group_labels`.

    Examples
    --------
    >>> p = draw_group_params("heavy_tail", n_systems=2, n_groups=3, seed=0)
    >>> p[["system", "group"]].to_numpy().tolist()
    [[0, 'B'], [0, 'A1'], [0, 'A2'], [1, 'B'], [1, 'A1'], [1, 'A2']]
    >>> bool(p.groupby("system")["df"].nunique().eq(1).all()), bool(p["scale"].isna().all())
    (True, True)
    """
    family = _check_family(family)
    n_systems = checks.count(n_systems, "n_systems", 1)
    labels = group_labels(n_groups)
    settings = _check_settings(settings)
    rng = _family_rng(seed, family)
    return _params_frame(family, _draw_param_arrays(family, n_systems, len(labels), rng, settings), labels)


def draw_systems(
    n_systems: int,
    families: Sequence[str],
    n_per_group: int,
    seed: int,
    *,
    n_groups: int = 8,
    settings: FamilySettings = FamilySettings(),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    r"""Random systems of each family: the group parameters and every candidate's score, as tidy tables.

    For each family: parameters from :func:`draw_group_params` (with ``settings``, a :class:`FamilySettings`), then
    ``n_per_group`` scores per (system, group) by the family's formula (:func:`draw_scores`), all drawn at once
    (vectorised over systems and groups).
    Each family has its own generator seeded with ``(seed, family)``.

    Returns
    -------
    (scores, params)
        ``scores``: columns ``family, system, group, candidate, score``, one row per candidate
        (``len(families) * n_systems * n_groups * n_per_group`` rows; ``candidate`` numbers a group's candidates
        0..n_per_group-1); ``params``: the output of :func:`draw_group_params` for every family.

    Examples
    --------
    >>> scores, params = draw_systems(2, ["shift", "skew"], n_per_group=5, seed=0, n_groups=3)
    >>> scores.shape, params.shape
    ((60, 5), (12, 8))
    >>> scores.groupby(["family", "system", "group"]).size().unique().tolist()
    [5]
    """
    families = _check_families(families)
    n_systems = checks.count(n_systems, "n_systems", 1)
    n_per_group = checks.count(n_per_group, "n_per_group", 1)
    labels = group_labels(n_groups)
    settings = _check_settings(settings)
    score_frames, param_frames = [], []
    for family in families:
        rng = _family_rng(seed, family)
        p = _draw_param_arrays(family, n_systems, len(labels), rng, settings)
        df = p["df"][:, :, None] if family == "heavy_tail" else None
        eps = _noise(family, rng, (n_systems, len(labels), n_per_group), df)
        scores = _transform(family, eps, {name: p[name][:, :, None] for name in _PARAM_COLUMNS})
        n_rows = scores.size
        score_frames.append(
            pd.DataFrame(
                {
                    "family": family,
                    "system": np.repeat(np.arange(n_systems), len(labels) * n_per_group),
                    "group": np.tile(np.repeat(labels, n_per_group), n_systems),
                    "candidate": np.tile(np.arange(n_per_group), n_systems * len(labels)),
                    "score": scores.reshape(n_rows),
                }
            )
        )
        param_frames.append(_params_frame(family, p, labels))
    return pd.concat(score_frames, ignore_index=True), pd.concat(param_frames, ignore_index=True)


# --------------------------------------------------------------------------------------------------------------
# metrics and gaps per system
# --------------------------------------------------------------------------------------------------------------
def evaluate_systems(
    scores: pd.DataFrame,
    k: int | Sequence[int],
    rounds: int,
    seed: int | np.random.Generator | None,
    *,
    by: Sequence[str] = ("family", "system"),
    reference: str = REFERENCE,
    params: pd.DataFrame | None = None,
) -> pd.DataFrame:
    r"""Bias metrics, score shape and selection-rate gaps of every group against the reference, per system.

    For each cell of ``by`` (a system) and each group ``A`` != reference ``B``:

    * ``rabbi``, ``rabbi_pvalue``, ``avg_gap``, ``jsd``, ``emd``, ``n_group``, ``n_reference``:
      :func:`allocbias.metrics.bias_table` on the cell's scores;
    * ``skewness``, ``excess_kurtosis`` of A's scores: :func:`allocbias.metrics.score_shape` (NaN, explicitly,
      for a group whose scores are all equal: its shape is undefined);
    * for each quota ``k``: ``phi``, ``phi_reference``, ``dDP = phi(A, k) - phi(B, k)`` from
      :func:`allocbias.selection.simulate` with ``rounds`` pools of one candidate per group (drawn uniformly from
      the group's candidates), the top ``k`` of each pool selected, ties sharing seats.

    With ``params`` (the second output of :func:`draw_systems`), A's generating parameters are added as columns.

    Parameters
    ----------
    scores
        Tidy frame with the ``by`` columns, ``group`` and ``score`` (one row per candidate).
    k
        Quota or quotas (each in ``1..number of groups``).
    rounds
        Selection rounds per system.
    seed
        Seed of the pool draws.
    by
        Columns identifying a system.
    reference
        The reference group label.
    params
        Optional group parameters to merge (matched on ``by`` and ``group``).

    Returns
    -------
    pandas.DataFrame
        One row per (system, k, group != reference): ``*by, group, reference, k, n_group, n_reference, rabbi,
        rabbi_pvalue, avg_gap, jsd, emd, skewness, excess_kurtosis, phi, phi_reference, dDP, rounds`` (and the
        parameter columns with ``params``).

    Examples
    --------
    >>> scores = pd.DataFrame({"system": 0, "group": ["B", "B", "A1", "A1"], "score": [0.0, 1.0, 2.0, 3.0]})
    >>> out = evaluate_systems(scores, k=1, rounds=50, seed=0, by=["system"])
    >>> out[["group", "k", "rabbi", "avg_gap", "dDP"]].to_dict("records")
    [{'group': 'A1', 'k': 1, 'rabbi': 1.0, 'avg_gap': 2.0, 'dDP': 1.0}]
    """
    by = list(by)
    if not isinstance(scores, pd.DataFrame):
        raise ValueError(f"scores must be a pandas DataFrame, got {type(scores).__name__}")
    missing = [c for c in [*by, "group", "score"] if c not in scores.columns]
    if missing:
        raise ValueError(f"scores has no column(s) {missing}; columns present: {list(scores.columns)}")
    if not by:
        raise ValueError("by must name the column(s) that identify a system, e.g. ['family', 'system']")
    metrics = bias_table(scores, "score", "group", reference, by=by)
    shape = score_shape(scores, "score", "group", by=by, on_constant="nan")
    metrics = metrics.merge(shape[[*by, "group", "skewness", "excess_kurtosis"]], on=[*by, "group"], how="left")
    gaps = simulate(scores, "score", k, reference, rounds, seed, by=by, qualified=None)
    out = metrics.merge(gaps, on=[*by, "group", "reference"], how="inner", validate="one_to_many")
    first = [*by, "group", "reference", "k"]
    out = out[first + [c for c in out.columns if c not in first]]
    if params is not None:
        cols = [c for c in _PARAM_COLUMNS if c in params.columns]
        absent = [c for c in [*by, "group"] if c not in params.columns]
        if absent:
            raise ValueError(f"params has no column(s) {absent} to match the systems on")
        out = out.merge(params[[*by, "group", *cols]], on=[*by, "group"], how="left", validate="many_to_one")
    return out.sort_values([*by, "k", "group"], kind="mergesort").reset_index(drop=True)


def simulate_systems(
    n_systems: int,
    families: Sequence[str],
    n_per_group: int,
    k: int | Sequence[int],
    rounds: int,
    seed: int,
    *,
    n_groups: int = 8,
    settings: FamilySettings = FamilySettings(),
) -> pd.DataFrame:
    r"""Draw random systems of each family and evaluate them: one tidy row per (family, system, k, group).

    ``draw_systems(n_systems, families, n_per_group, seed, n_groups=n_groups, settings=settings)`` then
    ``evaluate_systems(scores, k, rounds, seed, params=params)``: see those two
    functions for the formulas. Each family contributes ``n_systems * (n_groups - 1)`` rows per quota.

    Examples
    --------
    >>> pts = simulate_systems(3, ["shift", "spread"], n_per_group=20, k=[1, 2], rounds=50, seed=0, n_groups=4)
    >>> len(pts), sorted(pts["k"].unique().tolist())
    (36, [1, 2])
    >>> bool(pts["rabbi"].between(-1, 1).all())
    True
    """
    scores, params = draw_systems(n_systems, families, n_per_group, seed, n_groups=n_groups, settings=settings)
    return evaluate_systems(scores, k, rounds, seed, params=params)


# --------------------------------------------------------------------------------------------------------------
# hand-picked systems
# --------------------------------------------------------------------------------------------------------------
def with_low_outliers(
    scores: Sequence[float] | np.ndarray, share: float, *, mean: float | None = None, drop: float | None = None
) -> np.ndarray:
    r"""Push a group's lowest scores further down: a few outliers that move the mean but hardly any rank.

    The lowest ``m = ceil(share * n)`` scores each move down by ``c`` (the others are unchanged; a stable sort
    picks the lowest ``m``), so they stay the lowest and the order of the scores is preserved:

    * ``drop=c``: a fixed distance ``c >= 0``; the mean falls by ``c m / n``;
    * ``mean=t``: ``c = n (mean(s) - t) / m``, so the new mean is exactly ``t`` (``t <= mean(s)``).

    Exactly one of ``mean`` and ``drop`` must be given.

    Examples
    --------
    >>> with_low_outliers([1.0, 2.0, 3.0, 4.0], 0.25, drop=10.0).tolist()
    [-9.0, 2.0, 3.0, 4.0]
    >>> with_low_outliers([1.0, 2.0, 3.0, 4.0], 0.25, mean=2.0).tolist()  # c = 4 * 0.5 / 1
    [-1.0, 2.0, 3.0, 4.0]
    """
    arr = np.asarray(scores)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D numeric array, got dtype {arr.dtype}, shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise ValueError("scores contain NaN or inf")
    share = _finite(share, "share")
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must lie in (0, 1], got {share!r}")
    if (mean is None) == (drop is None):
        raise ValueError("give exactly one of mean (a target mean) and drop (a fixed distance)")
    m = max(1, math.ceil(share * arr.size - 1e-9))
    if drop is not None:
        c = _finite(drop, "drop")
        if c < 0:
            raise ValueError(f"drop must be >= 0 (outliers go down), got {drop!r}")
    else:
        target = _finite(mean, "mean")
        c = arr.size * (arr.mean() - target) / m
        if c < 0:
            raise ValueError(f"mean={target} exceeds the scores' mean {arr.mean()}: outliers can only lower it")
    out = arr.copy()
    out[np.argsort(arr, kind="stable")[:m]] -= c
    return out


def hand_picked_system(
    case: str,
    *,
    n_groups: int = 8,
    n_per_group: int = 200,
    seed: int = 0,
    shift: float = 0.5,
    outlier_share: float = 0.05,
    outlier_drop: float = 10.0,
    spread: float = 2.0,
) -> pd.DataFrame:
    r"""A constructed system where only the focal group ``"A1"`` differs from the reference group ``"B"``.

    Every group except A1 draws ``n_per_group`` scores from ``N(0, 1)`` independently. A1's candidates are the
    reference's candidates (think: the same resumes under other names), ``a_i = f(b_i)``, scored differently in
    one way only:

    * ``"hidden_advantage"``: ``a_i = b_i + shift``, then A1's lowest ``outlier_share`` of scores are pushed down
      until A1's mean equals B's (:func:`with_low_outliers` with ``mean``): the mean gap is exactly 0, yet A1
      beats B in most comparisons;
    * ``"outlier_penalty"``: ``a_i = b_i``, then A1's lowest ``outlier_share`` of scores move down by
      ``outlier_drop``: mean gap ``-outlier_drop * m / n`` (``m = ceil(outlier_share * n)``), almost no change
      in ranks;
    * ``"wider_spread"``: ``a_i = mean(b) + spread * (b_i - mean(b))``: equal means and medians, a wider spread
      (the case RABBI cannot see).

    Returns
    -------
    pandas.DataFrame
        Columns ``case, group, candidate, score``; groups in the order of :func:`group_labels`.

    Examples
    --------
    >>> df = hand_picked_system("outlier_penalty", n_groups=3, n_per_group=100, seed=1)
    >>> means = df.groupby("group")["score"].mean()
    >>> round(float(means["A1"] - means["B"]), 6)  # -10 * 5 / 100
    -0.5
    """
    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}, got {case!r}")
    labels = group_labels(n_groups)
    n = checks.count(n_per_group, "n_per_group", 2)
    seed = checks.seed(seed)
    shift = _finite(shift, "shift")
    spread = _positive(spread, "spread")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), CASES.index(case)]))
    scores = rng.standard_normal((len(labels), n))
    ref = scores[0]
    if case == "hidden_advantage":
        focal = with_low_outliers(ref + shift, outlier_share, mean=float(ref.mean()))
    elif case == "outlier_penalty":
        focal = with_low_outliers(ref, outlier_share, drop=outlier_drop)
    else:
        focal = ref.mean() + spread * (ref - ref.mean())
    scores[1] = focal
    return pd.DataFrame(
        {
            "case": case,
            "group": np.repeat(labels, n),
            "candidate": np.tile(np.arange(n), len(labels)),
            "score": scores.ravel(),
        }
    )


# --------------------------------------------------------------------------------------------------------------
# the mechanism in closed form
# --------------------------------------------------------------------------------------------------------------
def _unit_interval(u: Any, name: str = "u") -> np.ndarray:
    arr = np.asarray(u)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(arr).all() or (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"{name} must hold percentiles in [0, 1]")
    return arr


def percentiles(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    r"""Percentile of each score of group A among the reference group B: ``u_a = F_B(a)`` with ties counted half.

    ``u_a = (#{b < a} + 0.5 #{b = a}) / n_B`` (``np.searchsorted`` on the sorted B scores). RABBI is their mean,
    rescaled: ``R(A, B) = mean over a of (#{b < a} - #{b > a}) / n_B = 2 mean(u) - 1``.

    Examples
    --------
    >>> percentiles([0.5, 2.0, 9.0], [1.0, 2.0, 3.0, 4.0]).tolist()
    [0.0, 0.375, 1.0]
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.sort(np.asarray(b, dtype=np.float64))
    for name, v in (("a", x), ("b", y)):
        if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all():
            raise ValueError(f"{name} must be a non-empty 1-D array of finite scores")
    below = np.searchsorted(y, x, side="left")
    not_above = np.searchsorted(y, x, side="right")
    return (below + 0.5 * (not_above - below)) / y.size


def _pool_k(pool: Any, k: Any) -> tuple[int, int]:
    pool = checks.count(pool, "pool", 2)
    return pool, checks.quota(k, pool=pool, below_pool=True)


def selection_weight(u: Any, pool: int, k: int) -> np.ndarray:
    r"""Probability that a candidate at percentile ``u`` of the reference distribution is in the top ``k``.

    With the other ``pool - 1`` candidates of the round drawn i.i.d. from the reference distribution (continuous
    scores), the number of them above the candidate is ``Binomial(pool - 1, 1 - u)``, so

    .. math:: h_k(u) = P\big(\mathrm{Bin}(\text{pool} - 1, 1 - u) \le k - 1\big),

    e.g. ``h_1(u) = u^{pool - 1}``; for ``pool = 2``, ``h_1(u) = u``.

    Examples
    --------
    >>> selection_weight([0.5, 1.0], pool=8, k=1).tolist()  # 0.5 ** 7
    [0.0078125, 1.0]
    """
    pool, k = _pool_k(pool, k)
    return stats.binom.cdf(k - 1, pool - 1, 1.0 - _unit_interval(u))


def dp_contribution(u: Any, pool: int, k: int) -> np.ndarray:
    r"""Each of A's candidates' contribution to ``dDP`` when only A differs from the reference.

    In a pool of one candidate per group where the ``pool - 1`` other groups are all distributed like the
    reference B, a round has ``k`` seats; A takes ``phi_A = E[h_k(u)]`` of them on average (see
    :func:`selection_weight`), and the other groups share the rest equally, ``phi_B = (k - phi_A) / (pool - 1)``.
    Hence ``dDP = phi_A - phi_B = E[g_k(u)]`` with

    .. math:: g_k(u) = \frac{\text{pool} \cdot h_k(u) - k}{\text{pool} - 1},

    which averages to 0 when ``u ~ U(0, 1)`` (A distributed like B). For ``pool = 2, k = 1``,
    ``g_1(u) = 2u - 1``: the same per-candidate score as RABBI, ``R = E[2u - 1]``.

    Examples
    --------
    >>> dp_contribution([0.0, 0.5, 1.0], pool=2, k=1).tolist()
    [-1.0, 0.0, 1.0]
    """
    pool, k = _pool_k(pool, k)
    return (pool * selection_weight(u, pool, k) - k) / (pool - 1)


def expected_dp_gap(u: Any, pool: int, k: int) -> float:
    r"""Expected ``dDP(A, B)`` from A's percentiles ``u`` among B, when every other group is distributed like B.

    ``dDP = mean over a of g_k(u_a)`` (:func:`dp_contribution`); compare ``R(A, B) = mean of (2 u_a - 1)``.
    Exact in expectation for continuous scores when the other groups' scores follow the reference distribution
    (with ``u`` from B's sample it carries B's sampling error).

    Examples
    --------
    >>> expected_dp_gap([1.0, 0.5], pool=2, k=1)  # = 2 * 0.75 - 1 = RABBI
    0.5
    >>> expected_dp_gap([1.0, 1.0], pool=8, k=1)  # A always wins: phi_A = 1, phi_B = 0
    1.0
    """
    return float(dp_contribution(u, pool, k).mean())
