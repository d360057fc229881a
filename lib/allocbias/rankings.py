"""Listwise rankings of eight résumés by a language model: parsing the answers and reading the tidy tables.

Bloomberg's 2024 hiring audit (Yin, Alba & Nicoletti, "OpenAI's GPT is a recruiter's dream tool. Tests show
there's racial bias", Bloomberg, 2024) asked GPT-3.5-turbo and GPT-4 to rank eight name-substituted résumés,
one name per race × gender group, shown in a random order, 1,000 times per job for four jobs, and published
every raw answer (Apache-2.0). This module turns such an answer into ranks and reads the committed tables
``data/bloomberg/rankings.csv`` (one row per answer × candidate) and ``data/bloomberg/answers.csv`` (one row per
answer, with its raw text), which ``scripts/build_bloomberg.py`` derives from a fetched copy of the source.

Parsing rule (:func:`parse_ranking`). Names are matched whole and after :func:`allocbias.names.fold_name`
(case, accents and spacing do not matter). If the answer is a numbered list (lines ``"1. Name"`` or
``"1) Name"``), each item must name exactly one candidate of the prompt and the candidates are ranked in list
order; otherwise the candidates are ranked by the position of their first mention. A candidate the answer does
not name gets the mean of the ranks left over (so the ranks of an answer always sum to 36), and ``named`` says
which ranks were given by the answer. An answer that names a candidate twice in a list, has a list item that
names nobody of the prompt (a name not in the prompt), or names nobody at all raises :class:`RankingParseError`
naming the file and the answer: none of these is ranked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .names import fold_name

__all__ = [
    "ANSWER_COLUMNS",
    "BLOOMBERG_GROUPS",
    "RANKING_COLUMNS",
    "RankingParseError",
    "parse_ranking",
    "position_first_shares",
    "read_answers",
    "read_rankings",
    "seat_shares",
    "selection_rates",
]

#: Bloomberg's group codes (``<race>_<gender>``, gender M or W) -> the study's group labels.
BLOOMBERG_GROUPS: dict[str, str] = {
    "W_M": "Male White", "W_W": "Female White", "B_M": "Male Black", "B_W": "Female Black",
    "A_M": "Male Asian", "A_W": "Female Asian", "H_M": "Male Hispanic", "H_W": "Female Hispanic",
}
#: Columns of ``data/bloomberg/rankings.csv``.
RANKING_COLUMNS: tuple[str, ...] = (
    "model", "job", "answer_id", "oversampled", "shown_position", "name", "group", "rank", "named",
)
#: Columns of ``data/bloomberg/answers.csv``.
ANSWER_COLUMNS: tuple[str, ...] = (
    "answer_id", "model", "job", "oversampled", "status", "n_named", "reported_model", "created", "answer",
)

_ITEM = re.compile(r"^\s*(?:\d+)\s*[.)]\s*(.*\S)\s*$")


class RankingParseError(ValueError):
    """An answer that cannot be turned into a ranking; the message names the file and quotes the answer."""


def _mentions(folded_text: str, folded_names: Sequence[str]) -> list[tuple[int, int]]:
    """(position, candidate index) of every whole-name mention in ``folded_text``."""
    found = []
    for i, name in enumerate(folded_names):
        for m in re.finditer(r"(?<![\w])" + re.escape(name) + r"(?![\w])", folded_text):
            found.append((m.start(), i))
    return sorted(found)


def parse_ranking(answer: str, names: Sequence[str], *, source: str = "<answer>") -> tuple[np.ndarray, np.ndarray]:
    """Ranks (1 = top) of the candidates ``names`` (in the order shown in the prompt) given by ``answer``.

    Returns ``(rank, named)``: float ranks, one per candidate, and whether the answer named that candidate;
    an unnamed candidate gets the mean of the ranks no named candidate took. ``source`` names the answer in
    errors (e.g. the file it came from).

    >>> r, named = parse_ranking("1. Ana Ruiz\\n2. Bo Li\\n3. Cy Ford", ["Bo Li", "Cy Ford", "Ana Ruiz", "Di Lee"])
    >>> r.tolist(), named.tolist()
    ([2.0, 3.0, 1.0, 4.0], [True, True, True, False])
    >>> parse_ranking("I would hire BO LI first, then Ana Ruiz.", ["Ana Ruiz", "Bo Li"])[0].tolist()
    [2.0, 1.0]
    >>> parse_ranking("1. Bo Li\\n2. Zed Zed", ["Ana Ruiz", "Bo Li"], source="run_1.json")
    Traceback (most recent call last):
    ...
    allocbias.rankings.RankingParseError: run_1.json: list item 2 ('Zed Zed') names nobody of the prompt; answer: '1. Bo Li\\n2. Zed Zed'
    """
    if not isinstance(answer, str):
        raise RankingParseError(f"{source}: the answer is not text ({type(answer).__name__})")
    folded_names = [fold_name(n) for n in names]
    if len(set(folded_names)) != len(folded_names):
        raise RankingParseError(f"{source}: two candidates of the prompt have the same name: {list(names)}")
    quoted = answer if len(answer) <= 300 else answer[:300] + "..."
    items = [m.group(1) for line in answer.splitlines() if (m := _ITEM.match(line))]
    order: list[int] = []
    if len(items) >= 2:
        for k, item in enumerate(items, start=1):
            hits = {i for _, i in _mentions(fold_name(item), folded_names)}
            if not hits:
                raise RankingParseError(f"{source}: list item {k} ({item[:60]!r}) names nobody of the prompt; "
                                        f"answer: {quoted!r}")
            if len(hits) > 1:
                raise RankingParseError(f"{source}: list item {k} ({item[:60]!r}) names {len(hits)} candidates; "
                                        f"answer: {quoted!r}")
            (i,) = hits
            if i in order:
                raise RankingParseError(f"{source}: the answer names {names[i]!r} twice (list item {k}); "
                                        f"answer: {quoted!r}")
            order.append(i)
    else:
        for _, i in _mentions(fold_name(answer), folded_names):
            if i not in order:
                order.append(i)
    if not order:
        raise RankingParseError(f"{source}: the answer names nobody of the prompt; answer: {quoted!r}")
    n = len(names)
    rank = np.full(n, np.nan)
    rank[order] = np.arange(1, len(order) + 1, dtype=float)
    named = ~np.isnan(rank)
    if not named.all():
        rank[~named] = np.arange(len(order) + 1, n + 1, dtype=float).mean()
    return rank, named


def _check_columns(table: pd.DataFrame, expected: Sequence[str], path: Path) -> None:
    missing = [c for c in expected if c not in table.columns]
    extra = [c for c in table.columns if c not in expected]
    if missing or extra:
        raise ValueError(f"{path}: columns differ from {list(expected)}: missing {missing}, unexpected {extra}")


def read_rankings(path: str | Path) -> pd.DataFrame:
    """Read and check ``rankings.csv``: its columns (:data:`RANKING_COLUMNS`), the group labels (the study's
    eight), eight candidates per answer with one of each group, positions 0-7 and ranks that sum to 36.

    Raises ``ValueError`` naming the file and the offending column, label or answer.
    """
    path = Path(path)
    table = pd.read_csv(path, dtype={"model": str, "job": str, "answer_id": str, "name": str, "group": str})
    _check_columns(table, RANKING_COLUMNS, path)
    unknown = sorted(set(table["group"]) - set(BLOOMBERG_GROUPS.values()))
    if unknown:
        raise ValueError(f"{path}: column 'group' has labels {unknown}; known: {sorted(BLOOMBERG_GROUPS.values())}")
    for col in ("oversampled", "named"):
        if table[col].dtype != bool:
            raise ValueError(f"{path}: column {col!r} must hold True/False")
    per = table.groupby("answer_id").agg(n=("group", "size"), groups=("group", "nunique"),
                                         positions=("shown_position", lambda s: tuple(sorted(s))),
                                         rank_sum=("rank", "sum"))
    bad = per[(per["n"] != 8) | (per["groups"] != 8) | (per["positions"] != tuple(range(8)))
              | ~np.isclose(per["rank_sum"], 36.0)]
    if len(bad):
        raise ValueError(f"{path}: answer {bad.index[0]!r} does not have eight candidates, one per group, at "
                         f"positions 0-7 with ranks summing to 36 ({len(bad)} such answers)")
    return table


def read_answers(path: str | Path) -> pd.DataFrame:
    """Read and check ``answers.csv`` (:data:`ANSWER_COLUMNS`; one row per answer, ``answer_id`` unique)."""
    path = Path(path)
    table = pd.read_csv(path, dtype={"answer_id": str, "model": str, "job": str, "status": str, "answer": str,
                                     "reported_model": str}, keep_default_na=False)
    _check_columns(table, ANSWER_COLUMNS, path)
    if table["answer_id"].duplicated().any():
        raise ValueError(f"{path}: answer_id {table.loc[table['answer_id'].duplicated(), 'answer_id'].iloc[0]!r} "
                         f"is repeated")
    return table


# ----------------------------------------------------------------------------------------------------------------
# Selection from rankings: top-k seat shares, rates, impact ratios and their bootstrap intervals
# ----------------------------------------------------------------------------------------------------------------
def seat_shares(rankings: pd.DataFrame, k: int) -> pd.Series:
    """Each candidate's share of the ``k`` seats of its answer when the model's top ``k`` are selected.

    A named candidate ranked ``r`` gets 1 if ``r <= k`` and 0 otherwise; the ``u`` candidates an answer leaves
    unnamed share the seats its ``n`` named candidates leave: ``min(1, max(0, k - n) / u)`` each (ties share, as
    in :mod:`allocbias.selection`), so every answer gives out exactly ``k`` seats.

    >>> t = pd.DataFrame({"answer_id": ["a"] * 3, "rank": [1.0, 2.5, 2.5], "named": [True, False, False]})
    >>> seat_shares(t, 2).tolist()
    [1.0, 0.5, 0.5]
    """
    if not 1 <= int(k) <= 8:
        raise ValueError(f"k must be between 1 and 8, got {k}")
    n_named = rankings.groupby("answer_id")["named"].transform("sum")
    n_left = rankings.groupby("answer_id")["named"].transform("size") - n_named
    shared = ((k - n_named).clip(lower=0) / n_left.where(n_left > 0, 1)).clip(upper=1.0)
    return pd.Series(np.where(rankings["named"], (rankings["rank"] <= k).astype(float), shared),
                     index=rankings.index, name="seat")


def _cells(rankings: pd.DataFrame, k: int, by: Sequence[str]) -> dict[tuple, tuple[np.ndarray, list[str]]]:
    """Per cell of ``by``: the answers × groups matrix of seat shares (groups in a fixed order) and the groups."""
    table = rankings.assign(seat=seat_shares(rankings, k))
    out = {}
    for key, cell in table.groupby(list(by), sort=True):
        wide = cell.pivot(index="answer_id", columns="group", values="seat").sort_index(axis=1)
        out[key if isinstance(key, tuple) else (key,)] = (wide.to_numpy(), list(wide.columns))
    return out


def selection_rates(rankings: pd.DataFrame, k: int = 1, *, by: Sequence[str] = ("model", "job"),
                    n_boot: int = 0, seed: int = 0, reference: str | None = None) -> pd.DataFrame:
    """Selection rates of each group at top ``k`` per cell of ``by``, with impact ratios and selection-rate gaps.

    ``rate_g = mean over answers of g's seat share`` (:func:`seat_shares`); ``impact_ratio_g = rate_g / max_h
    rate_h`` (the four-fifths rule flags ``< 0.8``); with ``reference`` also ``gap_g = rate_g - rate_reference``
    (ΔDP against that group). ``n_boot > 0`` adds percentile intervals (2.5 %, 97.5 %) from resampling the answers
    of each cell with replacement, all statistics of a replicate computed from the same resample (vectorised:
    one multinomial weight matrix per cell, no per-replicate loop).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for key, (seats, groups) in _cells(rankings, k, by).items():
        n = len(seats)
        rate = seats.mean(axis=0)
        stats = {"rate": rate[None, :]}
        if n_boot:
            weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot) / n
            stats["rate"] = np.vstack([stats["rate"], weights @ seats])
        best = stats["rate"].max(axis=1, keepdims=True)
        stats["impact_ratio"] = np.divide(stats["rate"], best, out=np.ones_like(stats["rate"]), where=best > 0)
        if reference is not None:
            if reference not in groups:
                raise ValueError(f"reference group {reference!r} is not among the groups {groups}")
            stats["gap"] = stats["rate"] - stats["rate"][:, [groups.index(reference)]]
        for j, group in enumerate(groups):
            row = dict(zip(by, key)) | {"k": int(k), "group": group, "n_answers": n}
            for name, values in stats.items():
                row[name] = float(values[0, j])
                if n_boot:
                    row[f"{name}_low"], row[f"{name}_high"] = np.quantile(values[1:, j], [0.025, 0.975]).tolist()
            rows.append(row)
    return pd.DataFrame(rows)


def position_first_shares(rankings: pd.DataFrame, *, by: Sequence[str] = ("model",), n_boot: int = 0,
                          seed: int = 0) -> pd.DataFrame:
    """How often the candidate shown in each slot (0-7) is ranked first, per cell of ``by``: the top-1 seat
    share averaged over answers by ``shown_position`` (1/8 = 0.125 if the order shown does not matter), with
    bootstrap intervals over answers as in :func:`selection_rates`."""
    table = rankings.assign(group=rankings["shown_position"].map(lambda p: f"slot {int(p)}"))
    out = selection_rates(table, 1, by=by, n_boot=n_boot, seed=seed)
    out = out.rename(columns={"group": "slot", "rate": "first_share", "rate_low": "first_share_low",
                              "rate_high": "first_share_high"})
    return out[[c for c in out.columns if not c.startswith("impact_ratio")]]
