"""Agreement of a model's grades with human grades: quadratic-weighted kappa and Spearman's rho.

The essay task asks whether a model grades at all before asking whom its grades favour. Two standard answers:

* Spearman's :math:`\\rho` of the model's (continuous) expected grade with the human score: does the model
  order essays as the human graders do?
* Quadratic-weighted kappa (QWK, Cohen 1968), the agreement statistic of automated essay scoring: the two sets
  of grades are read as categories on one ordinal scale and disagreements cost the square of their distance.

With categories :math:`c_1 < \\dots < c_K`, observed counts :math:`O_{ij}` (rater A says :math:`c_i`, rater B
:math:`c_j`), weights :math:`w_{ij} = (i - j)^2 / (K - 1)^2` and the counts expected by chance
:math:`E_{ij} = O_{i\\cdot} O_{\\cdot j} / N`,

.. math::

    \\kappa_w = 1 - \\frac{\\sum_{ij} w_{ij} O_{ij}}{\\sum_{ij} w_{ij} E_{ij}}.

:math:`\\kappa_w = 1` is perfect agreement, 0 is what two independent raters with these marginals reach.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["HALF_POINTS", "agreement_table", "agreement_verdict", "quadratic_weighted_kappa", "to_half_points"]

#: The ELLIPSE holistic scale: 1 to 5 in half points (nine categories).
HALF_POINTS: tuple[float, ...] = tuple(np.arange(1.0, 5.01, 0.5).tolist())


def to_half_points(x: Sequence[float] | np.ndarray | pd.Series, low: float = 1.0, high: float = 5.0) -> np.ndarray:
    """Round continuous grades to the nearest half point in ``[low, high]`` (halves of halves round to even).

    >>> to_half_points([1.2, 2.26, 4.9, 0.3]).tolist()
    [1.0, 2.5, 5.0, 1.0]
    """
    arr = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("grades must be finite numbers (no NaN or inf)")
    return np.clip(np.round(arr * 2.0) / 2.0, low, high)


def quadratic_weighted_kappa(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    labels: Sequence[float] | None = None,
) -> float:
    """Quadratic-weighted kappa of two raters' categorical grades (module docstring for the formula).

    ``labels`` are the ordered categories (default: the sorted union of both raters' values); a value outside
    ``labels`` raises ``ValueError``. Undefined (``ValueError``) when chance disagreement is zero, i.e. both
    raters use a single, common category.

    >>> quadratic_weighted_kappa([1, 2, 3], [1, 2, 2])   # 1 - 0.25 / 0.75
    0.6666666666666667
    >>> quadratic_weighted_kappa([1, 2, 3], [1, 2, 3])
    1.0
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D and of the same length, got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("a and b are empty")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a and b must be finite numbers (no NaN or inf)")
    cats = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels, dtype=float)
    if cats.ndim != 1 or cats.size < 2 or np.any(np.diff(cats) <= 0):
        raise ValueError(f"labels must be at least two strictly increasing categories, got {cats.tolist()}")
    ix = np.searchsorted(cats, x)
    iy = np.searchsorted(cats, y)
    for name, v, i in (("a", x, ix), ("b", y, iy)):
        bad = (i >= cats.size) | (cats[np.minimum(i, cats.size - 1)] != v)
        if bad.any():
            raise ValueError(f"{name} has values outside labels: {sorted(set(v[bad].tolist()))[:5]}")
    k = cats.size
    observed = np.zeros((k, k))
    np.add.at(observed, (ix, iy), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / x.size
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
    chance = float((weights * expected).sum())
    if chance == 0.0:
        raise ValueError("quadratic-weighted kappa is undefined: both raters give one and the same category")
    return float(1.0 - (weights * observed).sum() / chance)


def agreement_table(
    df: pd.DataFrame,
    score: str = "score",
    human: str = "rating",
    *,
    by: Sequence[str] = (),
    labels: Sequence[float] = HALF_POINTS,
) -> pd.DataFrame:
    """Spearman's rho and QWK of a model's grade with the human grade, one row per cell of ``by``.

    ``score`` is the model's continuous expected grade; QWK reads it rounded to the nearest category of
    ``labels`` (:func:`to_half_points` for the default half-point scale) and the human grade as is. Columns:
    ``by`` keys, ``n``, ``spearman``, ``qwk``, ``mean_score``, ``mean_human``. A cell where either side is
    constant gets NaN for the statistic that is undefined there.

    >>> df = pd.DataFrame({"score": [1.2, 2.4, 2.6, 4.1], "rating": [1.0, 2.5, 3.0, 4.0]})
    >>> agreement_table(df)[["n", "spearman", "qwk"]].round(3).to_dict("records")
    [{'n': 4, 'spearman': 1.0, 'qwk': 0.973}]
    """
    by = list(by)
    missing = [c for c in [score, human, *by] if c not in df.columns]
    if missing:
        raise ValueError(f"df lacks columns {missing}")
    if df[[score, human]].isna().any().any():
        raise ValueError(f"columns {score!r} and {human!r} must have no missing values")
    from .disaggregate import disaggregate

    cats = np.asarray(labels, dtype=float)

    def spearman(cell: pd.DataFrame) -> float:
        s, h = cell[score].to_numpy(dtype=float), cell[human].to_numpy(dtype=float)
        return float(stats.spearmanr(s, h).statistic) if np.ptp(s) > 0 and np.ptp(h) > 0 else float("nan")

    def qwk(cell: pd.DataFrame) -> float:
        s, h = cell[score].to_numpy(dtype=float), cell[human].to_numpy(dtype=float)
        rounded = np.clip(np.round((s - cats[0]) / (cats[1] - cats[0])), 0, cats.size - 1)
        try:
            return quadratic_weighted_kappa(cats[rounded.astype(int)], h, labels=cats)
        except ValueError as exc:
            if "undefined" not in str(exc):
                raise
            return float("nan")

    table = disaggregate(df, {"spearman": spearman, "qwk": qwk, "mean_score": score, "mean_human": human},
                         by=by, count="n").by_group
    return table if len(table) else pd.DataFrame([])  # no cell: an empty frame, as before


def agreement_verdict(rhos: Sequence[float] | np.ndarray | pd.Series) -> str:
    """A plain-words reading of the graders' Spearman correlations with the human score (one per grader).

    Every :math:`\\rho < 0` means every grader orders the essays *backwards* (better essays get lower grades), which
    the reader must be told before any gap is read; otherwise the best :math:`\\rho` decides: below 0.1 no grader
    follows the human score, below 0.3 they follow it weakly, else the best follows it moderately.

    >>> agreement_verdict([-0.12, -0.03])
    'every system grades backwards: all Spearman correlations with the human score are negative (from -0.12 to -0.03), so better essays tend to get lower grades'
    >>> agreement_verdict([0.05, -0.02])
    'none of the systems orders the essays as the human score does (every ρ is below 0.1, and a negative ρ means better essays get lower grades)'
    >>> agreement_verdict([0.2, 0.45])
    'the best system follows the human score moderately; the others are listed beside it'
    """
    values = np.asarray(rhos, dtype=float)
    if values.size == 0 or np.isnan(values).any():
        raise ValueError(f"rhos must be one finite Spearman correlation per grader, got {values.tolist()}")
    if (values < 0).all():
        return ("every system grades backwards: all Spearman correlations with the human score are negative "
                f"(from {values.min():.2f} to {values.max():.2f}), so better essays tend to get lower grades")
    best = float(values.max())
    if best < 0.1:
        return ("none of the systems orders the essays as the human score does (every ρ is below 0.1, and a "
                "negative ρ means better essays get lower grades)")
    if best < 0.3:
        return "the systems follow the human score only weakly (every ρ is below 0.3)"
    return "the best system follows the human score moderately; the others are listed beside it"
