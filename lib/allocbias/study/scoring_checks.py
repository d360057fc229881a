r"""Scoring candidates with a language model: what the chapter on scoring computes, and the checks it makes.

The chapter asks the study's systems (model x precision x wording, :mod:`allocbias.scoring.systems`) for scores and reads
them before any bias number is computed:

* **pointwise** scores (:func:`allocbias.scoring.runs.pointwise_table`): the renormalised probability of "Yes" over the
  single-token surface forms of the labels, and the *label mass* :math:`M(a) = \sum_{z \in Y} m_z(a)`, the share of
  the next-token probability the score rests on (its distribution, by system and by group);
* **pairwise** answers (:func:`allocbias.scoring.runs.pairwise_table`) of pools of one candidate per group, every pair in
  both orders, read through the paper's output statistics (:func:`allocbias.measures.metrics.pairwise_output_stats`) and the
  points rule (:func:`allocbias.measures.metrics.pairwise_points`) on a worked example;
* the systems and the provenance of every score table (:func:`allocbias.scoring.catalog.provenance_table`);
* how the scores vary across names and résumés, and how well a system separates high- from low-quality résumés
  (RABBI within a job, :func:`allocbias.measures.tables.quality_separation`);
* the essay path: the DEMO essays graded 1-5 (:func:`allocbias.scoring.runs.score` of the ``essay_pointwise`` task).

Rows missing from the score store are scored live when ``live_scoring`` is true (``rescore`` first clears this
chapter's tables under a non-committed ``scores_root``). :func:`scoring_checks_findings` does all of it and returns
a :class:`ScoringFindings`; the figures are drawn by :func:`figure_label_mass`, :func:`figure_scores`,
:func:`figure_resume_means` and :func:`figure_essays`.
"""

from __future__ import annotations

import json
import logging
import shlex
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..measures import tables
from ..scoring import catalog, runs
from .. import checks
from ..audited import data
from ..audited.prompts import RESUME_LABELS
from ..measures import metrics
from ..plotting import GROUP_ORDER, count_text, group_palette, hatch_women, label_axes, order_groups, system_palette
from ..scoring import items, serving, store
from ..scoring.engine import label_variants
from ..scoring.models import REGISTRY, load_tokenizer
from ..scoring.systems import MODELS, PRECISIONS, WORDINGS, parse_system, served_system_id
from ..scoring.systems import systems as system_grid
from .findings import Findings

__all__ = [
    "PAIRWISE_CASES",
    "SCORE_COLUMNS",
    "ScoringFindings",
    "essay_status",
    "figure_essays",
    "figure_label_mass",
    "figure_resume_means",
    "figure_scores",
    "order_statement",
    "pairwise_rule_table",
    "pairwise_summary",
    "pairwise_takeaway",
    "provenance_view",
    "scoring_checks_findings",
    "separation_verdict",
    "spread_statement",
]

#: The worked example of the pairwise points rule: a pair's answer with a shown first, then with b shown first.
PAIRWISE_CASES: Mapping[str, tuple[str, str]] = {
    "consistent win": ("a", "a"), "inconsistent orders": ("a", "b"), "tie in both orders": ("tie", "tie"),
    "a win and a tie": ("a", "tie"), "a win and no answer": ("a", "undetected"),
    "no answer": ("undetected", "undetected")}
#: Glue-key stem of each worked case the prose quotes.
_CASE_KEYS: Mapping[str, str] = {"consistent": "consistent win", "inconsistent": "inconsistent orders",
                                 "tie": "tie in both orders", "mixed": "a win and a tie",
                                 "undetected": "a win and no answer"}
#: Columns of the pairwise statistics and their glue-key stems.
_STAT_KEYS: tuple[tuple[str, str], ...] = (
    ("regular", "regular"), ("tie", "tie"), ("undetected", "undetected"), ("inconsistent", "inconsistent"),
    ("empty answers", "empty"), ("first-shown of named", "first"))
#: The columns of the scores table the chapter shows (the table has more: model parts, name parts, prompt id).
SCORE_COLUMNS: tuple[str, ...] = ("system", "job", "resume_id", "quality", "group", "full_name", "score",
                                  "label_mass", "p_Yes", "p_No")


def provenance_view(provenance: pd.DataFrame) -> pd.DataFrame:
    """The store's provenance table (:func:`allocbias.scoring.catalog.provenance_table`) as the chapter shows it:
    kind, system, rows, prompt hash, the hash the folder's name ends with (its other parts are the kind and the
    system, shown beside it), the scoring time in whole seconds, the day the table was created, and the hardware
    (the GPU where one scored the table, else the CPU). The chapter offers the whole table as a download beside it.

    >>> prov = pd.DataFrame({"table": ["resume_pointwise-smollm2_fp32-0123456789abcdef"], "kind": ["resume_pointwise"],
    ...                      "system": ["smollm2-fp32-paper"], "rows": [3840], "prompt_hash": ["5d8167223256"],
    ...                      "elapsed_s": [3779.7], "created_utc": ["2026-11-24T14:00:04+00:00"], "cpu": ["AMD EPYC"],
    ...                      "gpu": [""]})
    >>> [str(v) for v in provenance_view(prov).iloc[0]]
    ['resume pointwise', 'smollm2-fp32-paper', '3840', '5d8167223256', '0123456789abcdef', '3780', '2026-11-24', 'AMD EPYC']
    """
    missing = [c for c in ("table", "kind", "system", "rows", "prompt_hash", "elapsed_s", "created_utc", "cpu", "gpu")
               if c not in provenance.columns]
    if missing:
        raise ValueError(f"the provenance table lacks the column(s) {missing}")
    gpu = provenance["gpu"].fillna("").astype(str)
    view = pd.DataFrame({
        "kind": provenance["kind"].astype(str).str.replace("_", " "),
        "system": provenance["system"].astype(str),
        "rows": provenance["rows"].astype("int64"),
        "prompt hash": provenance["prompt_hash"].astype(str),
        "folder hash": provenance["table"].astype(str).str.rsplit("-", n=1).str[-1],
        "scoring s": provenance["elapsed_s"].astype(float).round().astype("int64"),
        "created": provenance["created_utc"].astype(str).str[:10],
        "hardware": gpu.where(gpu != "", provenance["cpu"].astype(str)),
    })
    return view.reset_index(drop=True)


# --------------------------------------------------------------------------------------------------------------
# phrases that depend on the results
# --------------------------------------------------------------------------------------------------------------
def separation_verdict(p_mean: float, p_min: float, p_max: float) -> str:
    r"""How well a system separates strong from weak résumés, from :math:`p = (1 + R)/2`, the probability that a
    random high-quality candidate of a job outscores a random low-quality one (mean, min and max over the jobs).

    >>> separation_verdict(0.3, 0.2, 0.4)
    'ranks weak résumés above strong ones in every job'
    >>> separation_verdict(0.5, 0.1, 0.9)
    'separates strong from weak résumés in some jobs and ranks them the wrong way round in others'
    >>> separation_verdict(0.9, 0.85, 0.95)
    'separates strong from weak résumés well'
    """
    return ("ranks weak résumés above strong ones in every job" if p_max < 0.5 else
            "separates strong from weak résumés in some jobs and ranks them the wrong way round in others"
            if p_min < 0.5 and p_max >= 0.65 else
            "barely separates strong from weak résumés" if p_mean < 0.65 else
            "separates strong from weak résumés only moderately" if p_mean < 0.85 else
            "separates strong from weak résumés well")


def spread_statement(between: float, within: float) -> str:
    """Whether the résumé or the name moves the score more: the résumé when the standard deviation between the
    résumés' mean scores exceeds three times the mean standard deviation of one résumé across its names.

    >>> spread_statement(0.4, 0.1)
    'the score depends far more on the résumé than on the name'
    >>> spread_statement(0.2, 0.1)
    'the name moves the score by an amount comparable to the differences between résumés'
    """
    return ("the score depends far more on the résumé than on the name" if between > 3 * within
            else "the name moves the score by an amount comparable to the differences between résumés")


def order_statement(means: Mapping[str, float]) -> str:
    """Whether the mean scores by quality come in the order a recruiter expects (high > medium > low).

    >>> order_statement({"high": 0.6, "medium": 0.5, "low": 0.4})
    'the mean scores come in the expected order, high above medium above low'
    """
    return ("the mean scores come in the expected order, high above medium above low"
            if means["high"] > means["medium"] > means["low"] else
            "the mean scores are not in the order a recruiter would expect (high above medium above low)")


def pairwise_summary(stats: pd.DataFrame | None, *, n_answers: int = 0, rounds: int = 0, pool_size: int = 0,
                     n_jobs: int = 0, distinct: int = 0) -> str:
    """The sentences that describe a run's pairwise answers: per system (the rows of ``stats``, from
    :func:`allocbias.measures.metrics.pairwise_output_stats` plus ``empty answers`` and ``first-shown of named``, in %),
    the shares of answers that name a candidate, declare a tie or name nobody, the empty answers, the inconsistent
    pairs and the answers naming the candidate shown first. ``stats`` None: the run collected none."""
    if stats is None:
        return ("This run collects no pairwise answers (the parameter pairwise_systems is empty); set pairwise_systems "
                "and pairwise_rounds to read them (the committed tables hold smollm2-fp32-paper and gemma3-fp32-paper "
                "at 30 pools per job of all eight groups) or to score them.")
    return (f"This run has {int(n_answers):,} answers, {int(stats['n_prompts'].iloc[0]):,} per system "
            f"({int(stats['n_pairs'].iloc[0]):,} pairs from {count_text(rounds, 'pool')} per job of "
            f"{pool_size} candidates, {count_text(n_jobs, 'job')}, in both orders; a "
            f"pair drawn into two pools is asked once, so they come from {int(distinct):,} distinct prompts per system). "
            + " ".join(
                f"{s}: {r['regular']:.1f} % of its answers named a candidate, {r['tie']:.1f} % declared a tie and "
                f"{r['undetected']:.1f} % named nobody ({r['empty answers']:.1f} % of all its answers were empty); "
                f"{r['inconsistent']:.1f} % of its pairs got different answers in the two orders"
                + (f", and {r['first-shown of named']:.1f} % of its answers that name someone name the candidate "
                   "shown first." if r["regular"] > 0 else ".")
                for s, r in stats.iterrows()))


def pairwise_takeaway(stats: pd.DataFrame | None) -> str:
    """What to read first about the pairwise answers: each system's share of answers that name a candidate, and,
    when every system names someone in under half its answers or names the first-shown candidate in at least 75 %
    of the answers that name someone, that the pairwise scores measure the format rather than the candidates.

    >>> pairwise_takeaway(None)
    'this run collected no pairwise answers'
    >>> pairwise_takeaway(pd.DataFrame({"regular": [90.0], "first-shown of named": [50.0]}, index=["m"]))
    'the share of answers that name a candidate is m 90.0 %'
    """
    if stats is None:
        return "this run collected no pairwise answers"
    format_bound = all(r["regular"] < 50 or r["first-shown of named"] >= 75 for _, r in stats.iterrows())
    return ("the share of answers that name a candidate is " + ", ".join(
        f"{s} {r['regular']:.1f} %" for s, r in stats.iterrows()) + (
        ", so the pairwise scores of these systems say more about the answer format and the order of the candidates "
        "than about the candidates" if format_bound else ""))


def essay_status(graded: pd.DataFrame | None, *, system: str = "", n_essays: int = 0, n_systems: int = 0) -> str:
    """One sentence on the essay path: how many systems graded the essays and, for the first (``system``), the
    Spearman correlation of its expected grade with the essays' ratings, the grades' range and the median label
    mass on the five digits. ``graded`` None: the run graded none."""
    if graded is None:
        return "This run grades no essays (essay_systems is empty, or the backend is a server)."
    first = graded[graded["system"] == system]
    rho = float(first[["rating", "score"]].corr(method="spearman").iloc[0, 1])
    graded_by = count_text(n_systems, "system")
    return (f"{graded_by} graded the {n_essays} demo essays. For {system}, "
            f"the Spearman correlation of its expected grade with the essays' ratings is {rho:.2f}; its grades run "
            f"from {first['score'].min():.2f} to {first['score'].max():.2f}, and the median mass on the "
            f"five digits is {first['label_mass'].median():.4f}, so the grade is the split of a very small "
            "share of the next-token probability.")


def pairwise_rule_table(cases: Mapping[str, tuple[str, str]] = PAIRWISE_CASES) -> pd.DataFrame:
    """The points rule (:func:`allocbias.measures.metrics.pairwise_points`) applied to one pair per case: the answers with a
    and with b shown first, and the points each candidate gets.

    >>> pairwise_rule_table({"win": ("a", "a")})[["points to a", "points to b"]].to_dict("list")
    {'points to a': [1.0], 'points to b': [0.0]}
    """
    toy = pd.DataFrame([{"pair_id": c, "cand_a": f"{c}/a", "cand_b": f"{c}/b", "order": o, "winner": w}
                        for c, answers in cases.items() for o, w in zip(metrics.ORDERS, answers)])
    points = metrics.pairwise_points(toy).set_index("candidate")["score"]
    return pd.DataFrame({"pair": list(cases), "answer, a shown first": [w[0] for w in cases.values()],
                         "answer, b shown first": [w[1] for w in cases.values()],
                         "points to a": [points[f"{c}/a"] for c in cases],
                         "points to b": [points[f"{c}/b"] for c in cases]})


# --------------------------------------------------------------------------------------------------------------
# findings
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoringFindings(Findings):
    """What the chapter on scoring shows.

    Tables: ``variants`` (tokens per surface form of each label, per model; ``counted`` = single token), ``forms``
    (the same, one column per model), ``scores``
    (one row per system and candidate), ``mass_by_group`` (mean label mass per system and group), ``pairwise_rule``
    (the worked points rule), ``pairwise_stats`` (per system, in %, without the prompt and pair counts; None without pairwise systems), ``answers``,
    ``models`` (the study's models), ``provenance`` (every table of the store), ``resume_means`` (mean score of
    each résumé over its names), ``separation`` (RABBI between qualities within a job; ``separation_view``: one row per system
    and job, one column per pair of qualities), ``by_system`` (per
    system: RABBI high vs low, P(strong outscores weak), median label mass), ``essays`` (graded DEMO essays, None
    when none). ``values``: every glued value but the Markdown command
    (:meth:`glue_values`).
    """

    variants: pd.DataFrame
    forms: pd.DataFrame
    scores: pd.DataFrame
    mass_by_group: pd.DataFrame
    pairwise_rule: pd.DataFrame
    pairwise_stats: pd.DataFrame | None
    answers: pd.DataFrame
    models: pd.DataFrame
    provenance: pd.DataFrame
    resume_means: pd.DataFrame
    separation: pd.DataFrame
    separation_view: pd.DataFrame
    by_system: pd.DataFrame
    essays: pd.DataFrame | None
    low_mass: float
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def first_system(self) -> str:
        """The system the chapter's prose reads (the first of the scores table)."""
        return self.values["first_system"]

    def glue_values(self) -> dict[str, Any]:
        """Every value the chapter glues, by key: :meth:`Findings.glue_values` and ``prov_command_md``, the
        regenerating command as a Markdown object (the chapter shows it as code, not as a plain string)."""
        from IPython.display import Markdown

        return {**super().glue_values(), "prov_command_md": Markdown(f"`{self.values['prov_command']}`")}


def _check(*, backend: str, model: str, pairwise_systems: Sequence[str], pairwise_rounds: Any,
           pairwise_groups: Sequence[str], rescore: bool, live_scoring: bool, low_mass: Any, seed: Any,
           names_per_group: Any, groups: Sequence[str] = ()) -> None:
    if backend not in ("local", "openai"):
        raise ValueError(f"backend must be 'local' or 'openai', got {backend!r}")
    if backend == "openai" and not model:
        raise ValueError("backend 'openai' needs model = the served model name")
    checks.pairwise_design(pairwise_systems, pairwise_rounds, pairwise_groups, data.GROUPS)
    if rescore and not live_scoring:
        raise ValueError("rescore needs live_scoring = True (every row of the cleared tables is scored live)")
    if not 0.0 <= float(low_mass) <= 1.0:
        raise ValueError(f"low_mass must lie in [0, 1], got {low_mass!r}")
    checks.seed(seed)
    checks.count(names_per_group, "names_per_group")
    unknown = [g for g in groups if g not in data.GROUPS]
    if unknown:
        raise ValueError(f"groups: unknown group(s) {unknown}; the groups are {list(data.GROUPS)}")
    if len(set(groups)) != len(list(groups)):
        raise ValueError(f"groups names a group twice: {list(groups)}")


def scoring_checks_findings(
    *,
    systems: Sequence[str],
    jobs: Sequence[str],
    names_per_group: int = 10,
    groups: Sequence[str] = (),
    seed: int = 0,
    scores_root: str = "",
    rescore: bool = False,
    live_scoring: bool = False,
    pairwise_systems: Sequence[str] = (),
    pairwise_rounds: int = 30,
    pairwise_groups: Sequence[str] = (),
    backend: str = "local",
    device: str = "cpu",
    base_url: str = "",
    model: str = "",
    prefill: str = "vllm",
    low_mass: float = 0.1,
    essay_systems: Sequence[str] = (),
    scores: pd.DataFrame | None = None,
    answers: pd.DataFrame | None = None,
    provenance: pd.DataFrame | None = None,
) -> ScoringFindings:
    """Score (or read) the chapter's tables and compute everything it shows; the parameters are the notebook's.

    ``systems`` are scored pointwise on the candidate table of ``jobs`` (``names_per_group``, ``seed``), of
    ``groups`` only where given (all eight when empty: the smoke profile scores two, a small live slice);
    ``pairwise_systems`` answer every pair of ``pairwise_rounds`` pools per job (of ``pairwise_groups``, all
    eight when empty) in both orders; ``essay_systems`` grade the DEMO essays (local backend only). Tables are read
    from ``scores_root`` (empty: the committed ``data/scores``); missing rows are scored live when
    ``live_scoring`` is true (``rescore``: this chapter's tables are cleared first), by ``backend`` "local"
    (transformers on ``device``) or "openai" (``base_url``, served ``model``, ``prefill``). ``low_mass`` is the
    label mass below which a prompt counts as not answered with a label. Raises ``ValueError`` naming a bad
    parameter.

    ``scores``, ``answers`` and ``provenance`` (default None: read from the store, scoring what is missing) take
    the pointwise scores, the pairwise answers and the provenance table as frames instead, e.g. synthetic ones in
    tests; given scores count as read, not scored live.
    """
    systems, jobs, pairwise_systems = list(systems), list(jobs), list(pairwise_systems)
    pairwise_groups, essay_systems, groups = list(pairwise_groups), list(essay_systems), list(groups)
    _check(backend=backend, model=model, pairwise_systems=pairwise_systems, pairwise_rounds=pairwise_rounds,
           pairwise_groups=pairwise_groups, rescore=rescore, live_scoring=live_scoring, low_mass=low_mass, seed=seed,
           names_per_group=names_per_group, groups=groups)
    with warnings.catch_warnings():  # tqdm.auto (imported by transformers) asks for ipywidgets
        warnings.filterwarnings("ignore", message="IProgress not found")
        return _findings(systems=systems, jobs=jobs, names_per_group=names_per_group, groups=groups, seed=seed,
                         scores_root=scores_root, rescore=rescore, live_scoring=live_scoring,
                         pairwise_systems=pairwise_systems, pairwise_rounds=pairwise_rounds,
                         pairwise_groups=pairwise_groups, backend=backend, device=device, base_url=base_url,
                         model=model, prefill=prefill, low_mass=low_mass, essay_systems=essay_systems,
                         scores=scores, answers=answers, provenance=provenance)


def _findings(*, systems, jobs, names_per_group, groups, seed, scores_root, rescore, live_scoring, pairwise_systems,
              pairwise_rounds, pairwise_groups, backend, device, base_url, model, prefill, low_mass, essay_systems,
              scores, answers, provenance) -> ScoringFindings:
    order = [g for g in GROUP_ORDER if not groups or g in groups]
    audited = [parse_system(x) for x in systems]
    paired = [parse_system(x) for x in pairwise_systems]
    root = catalog.resolve_scores_root(scores_root)
    with store.live_scoring(live_scoring, how="set the parameter live_scoring to true to score them live "
                           f"(into {root}), or point scores_root at a folder that holds them"):
        served = serving.OpenAIEngine(base_url or None, model, prefill=prefill) if backend == "openai" else None
        engines: dict[str, runs.LazyEngine] = {}  # one lazily loaded engine per model and precision

        def engine_for(system):
            return engines.setdefault(system.model_key, runs.LazyEngine(system, device=device))

        engine_for = None if served is not None else engine_for
        if rescore:  # refused for the committed data/scores
            catalog.clear_tables(audited, "resume_pointwise", root, served=served)
            if paired:
                catalog.clear_tables(paired, "resume_pairwise", root, served=served)
            if essay_systems and served is None:
                catalog.clear_tables(essay_systems, "essay_pointwise", root)
        settings = dict(systems=systems, jobs=jobs, names_per_group=names_per_group, groups=groups, seed=seed,
                        scores_root=scores_root,
                        pairwise_systems=pairwise_systems, pairwise_rounds=pairwise_rounds,
                        pairwise_groups=pairwise_groups, backend=backend,
                        base_url=serving.safe_url(base_url) if base_url else "", model=model, prefill=prefill,
                        essay_systems=essay_systems)
        command = f"papermill notebooks/02_scoring.ipynb out.ipynb -y {shlex.quote(json.dumps(settings))}"
        every = data.candidate_table(jobs, names_per_group=names_per_group, seed=seed)
        cands = every[every["group"].isin(groups)] if groups else every  # scored pointwise
        s: dict[str, Any] = {}

        # which tokens count as "Yes"
        s["resume_labels"] = ", ".join(f"{k} = {v:g}" for k, v in RESUME_LABELS.items())
        # one tokenizer per model (six systems are two models), not one per system
        tokenizers = {m: load_tokenizer(m) for m in dict.fromkeys(x.model for x in audited)} if served is None else {}
        caps = tokenizers.get("smollm2-135m-instruct") or load_tokenizer("smollm2-135m-instruct")
        variants = pd.DataFrame([{"model": m, "label": y, "form": repr(v),
                                  "tokens": len(tok.encode(v, add_special_tokens=False))}
                                 for m, tok in tokenizers.items() for y in RESUME_LABELS for v in label_variants(y)])
        if served is not None:  # a server returns text tokens: every form is matched among its top log-probabilities
            variants = pd.DataFrame([{"model": model, "label": y, "form": repr(v), "tokens": 1}
                                     for y in RESUME_LABELS for v in serving.label_variants(y)])
        variants["counted"] = variants["tokens"] == 1
        s["caps_yes_tokens"] = len(caps.encode("YES", add_special_tokens=False))
        s["caps_no_tokens"] = len(caps.encode("NO", add_special_tokens=False))
        s["yes_forms"] = ", ".join(variants.query("label == 'Yes' and counted")["form"].unique())
        forms = variants.pivot_table(index=["label", "form"], columns="model", values="tokens", aggfunc="first")
        forms = forms.rename_axis(columns=None).reset_index()

        # the pointwise scores, read or scored live
        scored_ids = [served_system_id(model, x.wording) for x in audited] if served is not None else systems

        def table_rows(frame):  # rows of this chapter's pointwise tables in a provenance table
            return int(frame.loc[frame["kind"].eq("resume_pointwise") & frame["system"].isin(scored_ids), "rows"].sum())

        if scores is None:
            before = table_rows(catalog.provenance_table(root))
            started = time.perf_counter()
            scores = runs.pointwise_table(audited, cands, root=root, served=served, engine_for=engine_for,
                                          command=command)
            seconds = time.perf_counter() - started
            s["n_scored_live"] = table_rows(catalog.provenance_table(root)) - before
        else:
            seconds = 0.0
            s["n_scored_live"] = 0
        s["scoring_seconds"] = float(seconds)
        first = scores["system"].iloc[0]
        s["first_system"] = first
        s["n_systems"] = int(scores["system"].nunique())
        s["n_candidates"] = len(cands)
        s["n_rows"] = len(scores)
        s["score_min"] = float(scores["score"].min())
        s["score_max"] = float(scores["score"].max())
        s["score_mean"] = float(scores["score"].mean())
        first_scores = scores.loc[scores["system"] == first, "score"]
        s["first_score_min"] = float(first_scores.min())
        s["first_score_max"] = float(first_scores.max())
        example = scores.iloc[0]
        s["ex_raw_yes"] = float(example["p_Yes"] * example["label_mass"])
        s["ex_raw_no"] = float(example["p_No"] * example["label_mass"])
        s["ex_mass"] = float(example["label_mass"])
        s["ex_score"] = float(example["score"])

        # label mass
        s["low_mass"] = float(low_mass)
        s["mass_median"] = float(scores["label_mass"].median())
        s["mass_p05"] = float(scores["label_mass"].quantile(0.05))
        s["mass_min"] = float(scores["label_mass"].min())
        s["mass_max"] = float(scores["label_mass"].max())
        s["share_low_mass"] = float((scores["label_mass"] < low_mass).mean())
        mass_by_group = scores.groupby(["system", "group"], observed=True)["label_mass"].mean().unstack("group")[order]
        s["mass_group_low"] = str(mass_by_group.loc[first].idxmin())
        s["mass_group_high"] = str(mass_by_group.loc[first].idxmax())
        s["mass_group_spread"] = float(mass_by_group.loc[first].max() - mass_by_group.loc[first].min())

        # the pairwise rule and the pairwise answers
        rule = pairwise_rule_table().set_index("pair")
        for key, case in _CASE_KEYS.items():
            s[f"points_{key}_a"] = float(rule.loc[case, "points to a"])
            s[f"points_{key}_b"] = float(rule.loc[case, "points to b"])
        pair_cands = every[every["group"].isin(pairwise_groups)] if pairwise_groups else every
        stats = None
        if paired:
            pools = items.pairwise_pools(pair_cands, pairwise_rounds, seed)
            if answers is None:
                answers = runs.pairwise_table(paired, pools, root=root, served=served, engine_for=engine_for,
                                              command=command)
            stats = metrics.pairwise_output_stats(answers, by=["system"]).set_index("system").reindex(
                pd.unique(answers["system"]))
            shares = metrics.pairwise_answer_shares(answers, by=["system"]).set_index("system")
            stats["empty answers"], stats["first-shown of named"] = shares["empty"], shares["first_shown"]
            for name, r in stats.iterrows():
                for col, key in _STAT_KEYS:
                    s[f"pw_{key}_{name.replace('-', '_')}"] = float(r[col])
            distinct = answers.groupby("system")["prompt_id"].nunique().iloc[0]  # a pair in two pools is asked once
            s["pairwise_summary"] = pairwise_summary(stats, n_answers=len(answers), rounds=pairwise_rounds,
                                                     pool_size=pools.groupby(["job", "round"]).size().iloc[0],
                                                     n_jobs=len(jobs), distinct=distinct)
        else:
            answers = pd.DataFrame()
            s["pairwise_summary"] = pairwise_summary(None)
        s["pairwise_takeaway"] = pairwise_takeaway(stats)
        s["n_pairwise_prompts"] = len(answers)
        s["models_loaded"] = sum(e.loaded for e in engines.values())

        # the systems and the provenance of their tables
        models_table = pd.DataFrame([{"model": name, "in system ids": short,
                                      "weights": f"{REGISTRY[name].model_id} ({REGISTRY[name].gguf_file})",
                                      "licence": REGISTRY[name].license, "description": REGISTRY[name].description}
                                     for name, short in MODELS.items()])
        s["smollm2_description"] = REGISTRY["smollm2-135m-instruct"].description
        s["n_possible_systems"] = len(system_grid(precisions=PRECISIONS))
        s["precisions"] = ", ".join(PRECISIONS)
        s["wordings"] = ", ".join(WORDINGS)
        s["audited_systems"] = ", ".join(systems)
        prov = catalog.provenance_table(root) if provenance is None else provenance
        row = prov[(prov["kind"] == "resume_pointwise") & (prov["system"] == first)].iloc[0]
        s["n_tables"] = len(prov)
        s["scores_root"] = str(root.relative_to(data.repo_root()) if root.is_relative_to(data.repo_root()) else root)
        s["prov_rows"] = int(row["rows"])
        s["prov_elapsed_min"] = float(row["elapsed_s"]) / 60
        s["prov_per_prompt"] = float(row["elapsed_s"]) / max(int(row["rows"]), 1)
        s["prov_created"] = str(row["created_utc"])[:10]
        s["prov_cpu"] = f"{row['cpu']} ({row['cpu_count']} cores, GPU: {row['gpu'] or 'none'})"
        s["prov_versions"] = f"torch {row['torch']}, transformers {row['transformers']}, allocbias {row['allocbias']}"
        s["prov_prompt_hash"] = str(row["prompt_hash"])
        s["prov_command"] = str(row["command"])

        # names against résumés
        resume_means = scores.groupby(["system", "job", "resume_id", "quality"], observed=True)["score"].mean().rename(
            "mean score").reset_index()
        within = scores.groupby(["system", "job", "resume_id"], observed=True)["score"].std().groupby("system").mean()
        between = resume_means.groupby("system")["mean score"].std()
        s["sd_within"] = float(within[first])
        s["sd_between"] = float(between[first])
        s["spread_statement"] = spread_statement(between[first], within[first])
        s["order_statement"] = order_statement(
            scores[scores["system"] == first].groupby("quality", observed=True)["score"].mean())

        # strong against weak résumés
        separation = tables.quality_separation(scores, by=["system", "job"])
        means = scores.groupby(["system", "quality"], observed=True)["score"].mean()
        for q in data.QUALITIES:
            s[f"sep_mean_{q}"] = float(means[(first, q)])
        per_job = separation[(separation["system"] == first) & (separation["better"] == "high")
                             & (separation["worse"] == "low")].set_index("job")
        p_mean, p_min, p_max = per_job["p_better"].mean(), per_job["p_better"].min(), per_job["p_better"].max()
        s["sep_rabbi"] = float(per_job["rabbi"].mean())
        s["sep_p"] = float(p_mean)
        s["sep_rabbi_job_min"] = float(per_job["rabbi"].min())
        s["sep_rabbi_job_max"] = float(per_job["rabbi"].max())
        s["sep_job_min"] = str(per_job["rabbi"].idxmin())
        s["sep_job_max"] = str(per_job["rabbi"].idxmax())
        s["n_jobs_reversed"] = int((per_job["mean_difference"] < 0).sum())
        s["n_jobs"] = int(per_job.shape[0])
        s["sep_verdict"] = separation_verdict(p_mean, p_min, p_max)
        separation_view = separation.assign(pair=separation["better"] + " vs " + separation["worse"]).pivot_table(
            index=["system", "job"], columns="pair", values="rabbi").rename_axis(columns=None).reset_index()
        high_low = separation[(separation["better"] == "high") & (separation["worse"] == "low")]
        by_system = high_low.groupby("system", sort=False).agg(rabbi_high_vs_low=("rabbi", "mean"),
                                                               p_strong_wins=("p_better", "mean"))
        by_system["median label mass"] = scores.groupby("system", sort=False)["label_mass"].median()
        by_system = by_system.reindex(scores["system"].unique())
        s["sep_sys_min"] = float(by_system["rabbi_high_vs_low"].min())
        s["sep_sys_min_system"] = str(by_system["rabbi_high_vs_low"].idxmin())
        s["sep_sys_max"] = float(by_system["rabbi_high_vs_low"].max())
        s["sep_sys_max_system"] = str(by_system["rabbi_high_vs_low"].idxmax())
        by_system = by_system.rename(columns={"rabbi_high_vs_low": "RABBI high vs low (mean over jobs)",
                                              "p_strong_wins": "P(strong outscores weak)"})

        # the essay path
        graded = None
        if essay_systems and served is None:
            essays = data.load_demo_essays()
            scoring_log = logging.getLogger("allocbias.scoring")
            scoring_log.setLevel(logging.ERROR)  # the essays' tiny label mass is reported in the status sentence
            try:
                graded = pd.concat([runs.score("essay_pointwise", essays, system=x, engine=engine_for(x), root=root,
                                               command=command).assign(system=x.id)
                                    for x in (parse_system(e) for e in essay_systems)], ignore_index=True)
            finally:
                scoring_log.setLevel(logging.NOTSET)
            s["essay_status"] = essay_status(graded, system=essay_systems[0], n_essays=len(essays),
                                             n_systems=len(essay_systems))
            s["n_essays_graded"] = len(graded)
        else:
            s["essay_status"] = essay_status(None)
            s["n_essays_graded"] = 0

        return ScoringFindings(
            variants=variants, forms=forms, scores=scores, mass_by_group=mass_by_group.reset_index(), pairwise_rule=rule.reset_index(),
            pairwise_stats=None if stats is None else stats.drop(columns=["n_prompts", "n_pairs"]).reset_index(),
            answers=answers, models=models_table, provenance=prov, resume_means=resume_means,
            separation=separation, separation_view=separation_view, by_system=by_system.rename_axis("system").reset_index(), essays=graded,
            low_mass=float(low_mass), values=s)


# --------------------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------------------
def figure_label_mass(findings: ScoringFindings) -> plt.Figure:
    """Histogram of the label mass :math:`M(a)` of every prompt, one outline per system, with the warning threshold
    ``low_mass`` dashed."""
    scores = findings.scores
    fig, ax = plt.subplots(figsize=(8, 4.2))
    sns.histplot(scores, x="label_mass", hue="system", hue_order=list(pd.unique(scores["system"])), bins=40,
                 element="step", fill=False, palette=system_palette(scores["system"].unique()), ax=ax)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="system")
    ax.axvline(findings.low_mass, color="black", ls="--", lw=1)
    label_axes(ax, title="How much next-token probability lands on Yes/No, by system (dashed: warning threshold)",
               x="label mass M(a) (probability, 0 to 1)", y="candidates (count)")
    return fig


def figure_scores(findings: ScoringFindings) -> plt.Figure:
    """Box plots of the pointwise scores by résumé quality and group, one panel per system (jobs pooled)."""
    scores = findings.scores
    n_panels = scores["system"].nunique()
    with warnings.catch_warnings():  # seaborn's box plot still passes matplotlib's deprecated ``vert``
        warnings.filterwarnings("ignore", message="vert: bool was deprecated", category=DeprecationWarning)
        grid = sns.catplot(scores, kind="box", x="quality", y="score", hue="group", hue_order=list(GROUP_ORDER),
                           palette=group_palette(), order=list(data.QUALITIES), col="system",
                           col_wrap=min(n_panels, 2), sharey=False, fliersize=1.5, linewidth=0.7, height=3.4,
                           aspect=1.3)
    hatch_women(grid.figure, list(GROUP_ORDER))  # the two shades of a race's hue differ by pattern too
    grid.set_titles("{col_name}")
    grid.set_axis_labels("résumé quality", "score = P_n(Yes)")
    grid.figure.suptitle(f"Pointwise scores by résumé quality and group, {n_panels} system(s), "
                         f"{scores['job'].nunique()} job(s) pooled", y=1.02)
    return grid.figure


def figure_resume_means(findings: ScoringFindings) -> plt.Figure:
    """Mean score of each résumé over its names, by job and quality, for the first system."""
    first = findings.first_system
    fig, ax = plt.subplots(figsize=(8, 4.2))
    sns.stripplot(findings.resume_means[findings.resume_means["system"] == first], x="mean score", y="job",
                  hue="quality", hue_order=list(data.QUALITIES), size=8, jitter=0.15, palette="viridis", ax=ax)
    ax.legend(title="quality")
    label_axes(ax, title=f"Mean score of each résumé over its names ({first})", x="mean score (0 to 1)", y="job")
    return fig


def figure_essays(findings: ScoringFindings) -> plt.Figure | None:
    """Expected grade of each DEMO essay against its rating, by writer group, for the first essay system; None
    when the run graded no essays."""
    if findings.essays is None:
        return None
    system = findings.essays["system"].iloc[0]
    first = findings.essays[findings.essays["system"] == system]
    groups = order_groups(first["group"])
    fig, ax = plt.subplots(figsize=(8, 4.2))
    sns.stripplot(first, x="rating", y="score", hue="group", hue_order=groups, palette=group_palette(groups),
                  dodge=True, size=7, ax=ax)
    label_axes(ax, title=f"Demo essays: expected grade against the essay's rating ({system})",
               x="rating written into the demo essay (1 to 5)", y="expected grade (1 to 5)")
    return fig
