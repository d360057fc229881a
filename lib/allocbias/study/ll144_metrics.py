r"""Local Law 144's regression metrics on synthetic scores: the findings of the chapter on Local Law 144.

New York City's Local Law 144 compares the groups of a scoring tool with one number each: the withdrawn ratio of
mean scores :math:`DI_{avg}` and the final rule's impact ratio at the pooled median :math:`DI_{median}`. Filippi
et al. read the whole impact-ratio curve :math:`DI_g(p)` over the share :math:`p` of rejected candidates instead,
summarised by its area :math:`AUC_{DI}` and the probability of a fair cut :math:`P_{fair}` under a prior on
:math:`p`. :func:`ll144_metrics_findings` rebuilds the chapter's three synthetic examples with
:mod:`allocbias.ll144` (the samples, their curves at every parameter value, a sweep of every metric, the flags at
the strongest setting, a flat against a Beta prior, a Kolmogorov--Smirnov test) and returns a
:class:`LL144MetricsFindings`; the ``figure_*`` functions draw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats

from .. import checks
from ..measures import ll144
from ..plotting import group_palette, label_axes, plot_di_curves, plot_metric_sweep, plot_score_distributions
from .findings import Findings

__all__ = [
    "EXAMPLES",
    "GROUPS",
    "LL144MetricsFindings",
    "METRICS",
    "PARAM_NAMES",
    "figure_prior",
    "figures_example",
    "flag_table",
    "ll144_metrics_findings",
    "pvalue_text",
    "styled",
]

#: The two groups of every synthetic example; A is the group whose distribution each example reshapes.
GROUPS: tuple[str, ...] = ("A", "B")
#: The synthetic examples of ``ll144.synthetic_components``.
EXAMPLES: tuple[int, ...] = (1, 2, 3)
#: Each example's parameter, with its unit (the x axis of the metric sweeps).
PARAM_NAMES: Mapping[int, str] = {1: "spread a (unitless)", 2: "shared sd σ (score points)",
                                  3: "upper-mode sd σ (score points)"}
#: The ratio metrics of the flag table, in its order.
METRICS: tuple[str, ...] = ("di_avg", "di_median", "di_threshold", "auc_di", "p_fair")
#: The metrics of Local Law 144 and the distribution-wide ones (a row is flagged by a family when one of its
#: metrics is below the bound).
LEGAL, DISTRIBUTION = ("di_avg", "di_median"), ("auc_di", "p_fair")
#: The toy example of the chapter: four candidates per group.
TOY_SCORES: tuple[int, ...] = (1, 2, 3, 4, 3, 4, 5, 6)
TOY_GROUPS: tuple[str, ...] = ("A",) * 4 + ("B",) * 4
TOY_GRID: tuple[float, ...] = (0, 0.25, 0.5, 0.75, 1)


# --------------------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------------------
def _params(values: Any, name: str) -> list[float]:
    """A non-empty list of finite numbers (an example's parameter values), or ``ValueError`` naming ``name``."""
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-empty list of numbers, got {values!r}") from None
    if not out or not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be a non-empty list of finite numbers, got {values!r}")
    return list(values)


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def strongest(kind: int, params: Sequence[float]) -> float:
    """The parameter value with the largest distributional difference: the largest spread ``a`` in example 1,
    the smallest ``σ`` in examples 2 and 3.

    >>> strongest(1, [0.0, 0.5, 1.0]), strongest(2, [5.0, 10.0])
    (1.0, 5.0)
    """
    return max(params) if kind == 1 else min(params)


def weakest(kind: int, params: Sequence[float]) -> float:
    """The parameter value with the smallest difference (the other end of :func:`strongest`).

    >>> weakest(1, [0.0, 0.5, 1.0]), weakest(3, [3.0, 20.0])
    (0.0, 20.0)
    """
    return min(params) if kind == 1 else max(params)


def pvalue_text(p: float) -> str:
    """A p-value as the prose quotes it: two significant digits in scientific notation, or "below 1e-300" when the
    test's p-value underflows to 0.

    >>> pvalue_text(0.0123), pvalue_text(0.0)
    ('1.2e-02', 'below 1e-300')
    """
    return f"{p:.1e}" if p > 0 else "below 1e-300"


def flag_table(values: pd.DataFrame, bound: float, *, digits: int = 3) -> pd.DataFrame:
    """Each value rounded to ``digits`` as text, with " (flag)" appended where it is below ``bound`` (the
    four-fifths rule's flag).

    >>> flag_table(pd.DataFrame({"auc_di": [0.9, 0.55]}), 0.8)["auc_di"].tolist()
    ['0.9', '0.55 (flag)']
    """
    flags = values < bound
    return values.round(digits).astype(str) + np.where(flags, " (flag)", "")


def styled(frame: pd.DataFrame, *, uuid: str, precision: int = 3) -> Any:
    """``frame`` as the book shows a table (:func:`allocbias.plotting.show_table`), as fixed HTML.

    Returned as an ``IPython.display.HTML`` object rather than a pandas ``Styler``: a Styler's plain-text form
    holds its memory address and its HTML a random id, so a re-executed chapter (nbval in ``make test``) would
    differ; with a fixed ``uuid`` the HTML is the same on every run.
    """
    from IPython.display import HTML

    from ..plotting import show_table

    return HTML(show_table(frame, precision).set_uuid(uuid).to_html())


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass
class LL144MetricsFindings(Findings):
    """Everything the chapter shows.

    ``toy`` the metrics of the four-candidate toy example (one row per group); ``frames[kind][param]`` the
    synthetic samples and ``curves[kind][param]`` their DI curves; ``sweeps[kind]`` every metric over
    ``sweep_points`` parameter values (``ll144.synthetic_sweep``); ``flags`` the metrics at the strongest setting
    of each example (the lower of the two groups), as text with flags; ``priors`` AUC_DI and P_fair under the flat
    and the Beta prior; ``ks`` the Kolmogorov--Smirnov test at the strongest and weakest settings; ``prior_curve``
    (example 3 at its strongest setting) and ``prior_density`` the data of the prior figure; ``values`` the
    glued values; ``parameters`` what the figures read: ``fair_bound``, ``prior_a``, ``prior_b``, ``strong`` (each
    example's strongest parameter value) and ``param_names`` (each example's parameter, in words).
    """

    toy: pd.DataFrame
    frames: dict[int, dict[float, pd.DataFrame]]
    curves: dict[int, dict[float, pd.DataFrame]]
    sweeps: dict[int, pd.DataFrame]
    flags: pd.DataFrame
    priors: pd.DataFrame
    ks: pd.DataFrame
    prior_curve: pd.DataFrame
    prior_density: pd.Series
    values: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


def ll144_metrics_findings(
    *, n_per_group: int = 20000, grid_points: int = ll144.DEFAULT_GRID_POINTS, seed: int = 0,
    example1_params: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    example2_params: Sequence[float] = (5.0, 10.0, 15.0, 20.0, 25.0),
    example3_params: Sequence[float] = (3.0, 6.0, 10.0, 15.0, 20.0), sweep_points: int = 13,
    fixed_threshold: float = 50.0, fair_bound: float = ll144.FOUR_FIFTHS, prior_a: float = 18.0, prior_b: float = 2.0,
) -> LL144MetricsFindings:
    r"""The chapter's findings: the three synthetic examples of Filippi et al. under every metric.

    Each example is sampled with ``n_per_group`` candidates per group at each of its parameter values
    (``ll144.synthetic_example``, the same ``seed`` for every value); the DI curve is read on
    ``ll144.default_grid(grid_points)``; each metric is swept over ``sweep_points`` values from the smallest to the
    largest parameter. At the strongest setting (:func:`strongest`) the flag table gives each metric's lower value
    over the two groups, flagged below ``fair_bound``, with :math:`DI_{threshold}` at the score
    ``fixed_threshold``; the prior table compares the flat prior with :math:`\mathrm{Beta}(a, b)`.
    Bad parameters raise ``ValueError`` naming the parameter.
    """
    n = checks.count(n_per_group, "n_per_group", 2)
    points = checks.count(grid_points, "grid_points", 2)
    seed = checks.seed(seed)
    sweep_n = checks.count(sweep_points, "sweep_points", 2)
    examples = {1: _params(example1_params, "example1_params"), 2: _params(example2_params, "example2_params"),
                3: _params(example3_params, "example3_params")}
    bound = _positive(fair_bound, "fair_bound")
    a_shape, b_shape = _positive(prior_a, "prior_a"), _positive(prior_b, "prior_b")
    try:
        float(fixed_threshold)
    except (TypeError, ValueError):
        raise ValueError(f"fixed_threshold must be a number, got {fixed_threshold!r}") from None
    grid = ll144.default_grid(points)
    prior = stats.beta(a_shape, b_shape)
    beta_name = f"Beta({prior_a:g}, {prior_b:g})"
    strong = {kind: strongest(kind, p) for kind, p in examples.items()}
    weak = {kind: weakest(kind, p) for kind, p in examples.items()}
    scalars: dict[str, Any] = {"fair_bound": float(fair_bound), "grid_points": int(grid_points),
                               "grid_step": float(grid[1] - grid[0]), "n_per_group": int(n_per_group)}

    toy = ll144.group_metric_summary(list(TOY_SCORES), list(TOY_GROUPS), grid=list(TOY_GRID), bound=fair_bound)
    scalars.update(toy_median=float(np.median(TOY_SCORES)), toy_di_median_A=float(toy.loc["A", "di_median"]),
                   toy_auc_A=float(toy.loc["A", "auc_di"]))
    toy = toy[["mean", "di_avg", "di_median", "auc_di", "p_fair", "flag_di_median", "flag_auc_di"]]

    frames = {kind: {a: ll144.synthetic_example(kind, a, n=n, seed=seed) for a in p} for kind, p in examples.items()}
    curves = {kind: {a: ll144.di_curve(df["score"], df["group"], grid) for a, df in f.items()}
              for kind, f in frames.items()}
    sweeps = {kind: ll144.synthetic_sweep(kind, np.linspace(min(p), max(p), sweep_n), n=n, seed=seed,
                                          threshold=fixed_threshold, grid=grid, bound=fair_bound)
              for kind, p in examples.items()}
    # the sweep's end points are the strongest and weakest settings (np.linspace keeps them exactly)
    at_strong = {kind: sw[sw["param"] == strong[kind]].set_index("group") for kind, sw in sweeps.items()}
    rows, ks_rows = [], []
    for kind in examples:
        s = at_strong[kind]
        scalars[f"ex{kind}_param"] = float(strong[kind])
        for metric in METRICS:
            scalars[f"ex{kind}_{metric}"] = float(s[metric].min())  # the worse-off group
            for g in GROUPS:
                scalars[f"ex{kind}_{metric}_{g}"] = float(s.loc[g, metric])
        for g in GROUPS:
            scalars[f"ex{kind}_p_fair_fail_{g}"] = 1.0 - float(s.loc[g, "p_fair"])
        curve = curves[kind][strong[kind]]
        worst_curve = curve.min(axis=1).to_frame("worse-off group")
        # P(a flat-prior cut fails the rule for some group)
        scalars[f"ex{kind}_p_any_fail"] = 1.0 - float(ll144.curve_p_fair(worst_curve, bound=fair_bound).iloc[0])
        worst = sweeps[kind].groupby("param")[["auc_di", "p_fair", "di_median", "di_avg"]].min()
        scalars[f"ex{kind}_sweep_params"] = [float(a) for a in worst.index]
        for metric in worst.columns:
            scalars[f"ex{kind}_sweep_{metric}"] = [float(v) for v in worst[metric]]
        for name, pi in [("flat", None), (beta_name, prior)]:
            for metric, value in [("auc_di", ll144.curve_auc(curve, pi)),
                                  ("p_fair", ll144.curve_p_fair(curve, pi, fair_bound))]:
                rows += [{"example": kind, "prior": name, "metric": metric, "group": g, "value": value[g]}
                         for g in GROUPS]
        for label, a in [("strongest", strong[kind]), ("weakest", weak[kind])]:
            r = ll144.ks_test(frames[kind][a]["score"], frames[kind][a]["group"], "A")
            ks_rows.append({"example": kind, "param": a, "setting": label, "D": r.statistic, "p-value": r.pvalue})
            scalars[f"ks_ex{kind}_{label}_param"] = float(a)

    values = pd.DataFrame({f"example {k} (param {strong[k]:g})": at_strong[k][list(METRICS)].min()
                           for k in examples}).T
    below = values < fair_bound
    scalars.update(fixed_threshold=float(fixed_threshold), n_examples=len(examples),
                   n_flag_legal=int(below[list(LEGAL)].any(axis=1).sum()),
                   n_flag_distribution=int(below[list(DISTRIBUTION)].any(axis=1).sum()),
                   prior_a=float(prior_a), prior_b=float(prior_b), prior_mean=float(prior.mean()))
    flags = flag_table(values, fair_bound).rename_axis("example").reset_index()

    priors = pd.DataFrame(rows).pivot_table(index=["example", "group"], columns=["metric", "prior"], values="value")
    for kind in examples:
        for g in GROUPS:
            scalars[f"ex{kind}_auc_beta_{g}"] = float(priors.loc[(kind, g), ("auc_di", beta_name)])
            scalars[f"ex{kind}_pfair_beta_{g}"] = float(priors.loc[(kind, g), ("p_fair", beta_name)])
    priors.columns = [f"{metric} ({name})" for metric, name in priors.columns]
    ks = pd.DataFrame(ks_rows).assign(**{"p-value": [pvalue_text(r["p-value"]) for r in ks_rows]})
    for row in ks_rows:
        key = f"ks_ex{row['example']}_{row['setting']}"
        scalars.update({f"{key}_D": float(row["D"]), f"{key}_pvalue": float(row["p-value"]),
                        f"{key}_pvalue_text": pvalue_text(row["p-value"])})
    parameters = {"fair_bound": bound, "strong": strong, "prior_a": prior_a, "prior_b": prior_b,
                "param_names": dict(PARAM_NAMES)}
    return LL144MetricsFindings(
        toy=toy.rename_axis("group").reset_index(), frames=frames, curves=curves, sweeps=sweeps, flags=flags,
        priors=priors.reset_index(), ks=ks, prior_curve=curves[3][strong[3]],
        prior_density=pd.Series(prior.pdf(grid), index=grid, name="density"), parameters=parameters, values=scalars)


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figures_example(findings: LL144MetricsFindings, kind: int) -> list[Figure]:
    """The three figures of one example: the score distributions at each parameter value, the DI curves of each
    group (dotted: the median cut of Local Law 144) and every metric against the parameter (dashed: the bound)."""
    if kind not in findings.frames:
        raise ValueError(f"kind must be one of {sorted(findings.frames)}, got {kind!r}")
    bound = findings.parameters["fair_bound"]
    name = findings.parameters["param_names"][kind]
    short = name.split(" (")[0]
    palette = group_palette(list(GROUPS))
    dist = plot_score_distributions(findings.frames[kind], param_label=short, palette=palette, groups=list(GROUPS),
                                    title=f"Example {kind}: score distributions of groups A and B")
    curves = plot_di_curves(findings.curves[kind], param_label=short, bound=bound, median_p=0.5,
                            title=f"Example {kind}: impact ratio at every cut (dotted: the median cut of Local Law 144)")
    sweep = plot_metric_sweep(findings.sweeps[kind], param_label=name, bound=bound,
                              title=f"Example {kind}: legal and distribution-wide metrics (dashed: four-fifths bound)")
    return [dist, curves, sweep]


def figure_prior(findings: LL144MetricsFindings) -> Figure:
    """Example 3's DI curve at its strongest setting with the Beta prior's density on a second y axis (the title on
    two lines, so that it stays clear of the second axis' label)."""
    s = findings.parameters
    curve, density = findings.prior_curve, findings.prior_density
    palette = group_palette(list(GROUPS))
    fig, ax = plt.subplots(figsize=(7.5, 4.0), layout="constrained")
    for g in GROUPS:
        ax.plot(curve.index, curve[g], color=palette[g], label=f"DI, group {g}")
    ax.axhline(s["fair_bound"], color="grey", ls="--", lw=1)
    ax2 = ax.twinx()
    ax2.fill_between(density.index, density.to_numpy(), color="0.6", alpha=0.35, label="prior density π(p)")
    ax2.set_ylabel("prior density π(p) (1/unit p)")
    ax2.grid(False)
    label_axes(ax, title=f"Example 3 (σ = {s['strong'][3]:g}): impact-ratio curve\n"
                         f"and the Beta({s['prior_a']:g}, {s['prior_b']:g}) prior on the rejected share",
               x="share of candidates rejected p", y="impact ratio DI_g(p)")
    handles = [*ax.get_legend_handles_labels()[0], *ax2.get_legend_handles_labels()[0]]
    ax.legend(handles=handles, loc="center left")
    return fig
