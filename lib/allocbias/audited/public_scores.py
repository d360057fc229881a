"""Scores that real large language models gave in three public hiring audits, as tidy tables.

Each loader reads a table committed under ``data/`` through :func:`allocbias.audited.datasets.read_csv` (so its SHA-256
is checked against its data card), validates every column (an error names the file, the column and the line) and
returns one row per scored candidate with the group labels the book uses. A call that gave no usable score is
kept as a row with ``valid = False`` and a missing ``score``; nothing is dropped.

- :func:`load_lippens`: Lippens (2024), ``gpt-3.5-turbo-0613`` scoring 1,920 real Flemish vacancies × 18
  candidates (9 origins × 2 sexes), 1–100 (``data/lippens/``).
- :func:`load_recinq`: re:cinq's hiring-bias audit, 11 current models × 17 job descriptions × 37 résumé variants
  × 5 runs, 1–10 plus an interview recommendation (``data/recinq/``).
- :func:`load_jderbysh`: jderbysh's AIHiringBias, ``gpt-3.5-turbo-0125`` and ``gpt-5.1`` scoring 81 job ad ×
  résumé pairs under 36 Bertrand–Mullainathan first names, 0–100 as the sum of four 0–25 subscores
  (``data/jderbysh/``).

The data cards (``README.md`` in each folder) give the sources, licences, attributions and counts.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import datasets

__all__ = ["LIPPENS_ORIGINS", "LIPPENS_REFERENCE", "RECINQ_KINDS", "RECINQ_NAME_GROUPS", "RECINQ_REFERENCE",
           "JDERBYSH_REFERENCE", "load_lippens", "load_recinq", "load_jderbysh"]

#: The nine origins of Lippens's names, the reference (native Dutch-speaking Belgians, ``Dutch`` in the source)
#: first.
LIPPENS_ORIGINS: tuple[str, ...] = ("Belgian", "White American", "Arab", "Central African", "Hispanic", "Turkish",
                                    "Black American", "Asian", "Eastern European")
#: Lippens's reference group: native Dutch-speaking Belgian men.
LIPPENS_REFERENCE = "Belgian Male"
#: The three tables of re:cinq's audit: ``kind`` → file under ``data/recinq/``.
RECINQ_KINDS: dict[str, str] = {"results": "results.csv", "prompt_lab": "prompt_lab.csv", "clean": "clean.csv"}
#: The first-name variants of re:cinq's audit and the group each name signals (the source calls them "Western
#: male and female names, Arabic, East Asian, African, and Hispanic"; Wei Chen's sex is left unmarked).
RECINQ_NAME_GROUPS: dict[str, str] = {
    "firstName_james-smith": "Western Male",
    "firstName_sarah-smith": "Western Female",
    "firstName_mohammed-al-said": "Arabic Male",
    "firstName_aisha-okonkwo": "African Female",
    "firstName_wei-chen": "East Asian",
    "firstName_maria-rodriguez": "Hispanic Female",
}
#: re:cinq's reference variant: the résumé under the name James Smith.
RECINQ_REFERENCE = "firstName_james-smith"
#: jderbysh's reference group: the White-signalling men's names of Bertrand and Mullainathan.
JDERBYSH_REFERENCE = "White Male"

_LIPPENS_COLUMNS = ("vacancy_id", "job_type", "occupation_code", "occupation", "experience", "vdab_id", "origin",
                    "sex", "name", "temperature", "score", "bare_output", "recoded")
_RECINQ_COLUMNS = ("model", "vendor", "tier", "job", "variant", "axis", "level", "run", "timestamp", "score",
                   "interview", "problem")
_SUBSCORES = ("experience", "skills", "achievements", "resume_quality")
_JDERBYSH_COLUMNS = ("model", "source_file", "repetition", "job", "resume", "job_industry", "resume_industry",
                     "name", "sex", "race", *_SUBSCORES, "score", "missing")
_SEXES = ("Male", "Female")


# ----------------------------------------------------------------------------------------------------
# reading and checking
# ----------------------------------------------------------------------------------------------------
def _read(path: str | Path | None, default: Path, columns: Sequence[str]) -> tuple[pd.DataFrame, Path]:
    """The table as strings (nothing parsed yet), after the digest check and a check of its columns."""
    required = path is None  # a path the caller names is their own table
    path = Path(path) if path is not None else default
    frame = datasets.read_csv(path, required=required, dtype=str, keep_default_na=False)
    if list(frame.columns) != list(columns):
        missing = [c for c in columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in columns]
        raise ValueError(f"{path}: columns must be {list(columns)}; missing {missing}, unexpected {extra}"
                         + ("" if missing or extra else " (wrong order)"))
    if frame.empty:
        raise ValueError(f"{path}: the table has no rows")
    return frame, path


def _where(path: Path, frame: pd.DataFrame, column: str, bad: pd.Series, what: str) -> ValueError:
    """An error naming the file, the column, the first offending line (the header is line 1) and its value."""
    first = int(np.flatnonzero(bad.to_numpy())[0])
    return ValueError(f"{path}: column {column!r}, line {first + 2}: {frame[column].iloc[first]!r} {what} "
                      f"({int(bad.sum())} such rows)")


def _numbers(path: Path, frame: pd.DataFrame, column: str, low: float, high: float, *, empty: bool = False,
             integer: bool = False) -> pd.Series:
    """``frame[column]`` as floats within ``[low, high]`` (NaN for "" when ``empty``)."""
    values = pd.to_numeric(frame[column].where(frame[column] != ""), errors="coerce").astype(float)
    text = frame[column] != ""
    bad = (text & values.isna()) | (~text & (not empty))
    if bad.any():
        raise _where(path, frame, column, bad, "is not a number" if text[bad].any() else "is empty")
    bad = values.notna() & ~values.between(low, high)
    if bad.any():
        raise _where(path, frame, column, bad, f"is outside [{low:g}, {high:g}]")
    if integer:
        bad = values.notna() & (values != values.round())
        if bad.any():
            raise _where(path, frame, column, bad, "is not a whole number")
    return values


def _bools(path: Path, frame: pd.DataFrame, column: str) -> pd.Series:
    bad = ~frame[column].isin(["True", "False"])
    if bad.any():
        raise _where(path, frame, column, bad, "is not True/False")
    return frame[column] == "True"


def _labels(path: Path, frame: pd.DataFrame, column: str, allowed: Iterable[str]) -> None:
    allowed = list(allowed)
    bad = ~frame[column].isin(allowed)
    if bad.any():
        raise _where(path, frame, column, bad, f"is not one of {allowed}")


def _nonempty(path: Path, frame: pd.DataFrame, columns: Iterable[str]) -> None:
    for column in columns:
        bad = frame[column] == ""
        if bad.any():
            raise _where(path, frame, column, bad, "is empty")


def _unique(path: Path, frame: pd.DataFrame, keys: list[str]) -> None:
    dup = frame.duplicated(keys)
    if dup.any():
        first = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{path}: line {first + 2} repeats the key {dict(frame.loc[first, keys])} "
                         f"({int(dup.sum())} repeated rows; one row per {', '.join(keys)})")


def _default(*parts: str) -> Path:
    from .data import data_dir

    return data_dir().joinpath(*parts)


# ----------------------------------------------------------------------------------------------------
# Lippens (2024)
# ----------------------------------------------------------------------------------------------------
def load_lippens(path: str | Path | None = None) -> pd.DataFrame:
    """Lippens's audit (default ``data/lippens/scores.csv``): one row per (vacancy, candidate).

    Columns: ``vacancy_id`` (the pool: one real job ad, 18 candidates), ``job_type`` (occupation × required
    experience, e.g. ``adm-emp_exp5``), ``occupation_code``, ``occupation``, ``experience`` (years the ad
    requires: 0, 2 or 5), ``vdab_id`` (the ad's number at VDAB), ``origin`` (one of :data:`LIPPENS_ORIGINS`),
    ``sex`` (``Male``/``Female``), ``group`` = ``origin + " " + sex`` (reference :data:`LIPPENS_REFERENCE`),
    ``name``, ``temperature`` (the call's sampling temperature), ``score`` (1–100, float; NaN when not given),
    ``bare_output`` (the answer was the number alone), ``recoded`` (the answer was a bare number outside the scale
    that Lippens recoded: a bare "0" became 1), ``valid`` (``score`` given).

    Raises ``ValueError`` naming the file, column and line of a bad value, or a repeated (vacancy, group).

    >>> scores = load_lippens()
    >>> len(scores), scores["vacancy_id"].nunique(), scores["job_type"].nunique(), scores["group"].nunique()
    (34560, 1920, 64, 18)
    >>> scores.loc[scores["group"] == LIPPENS_REFERENCE, "score"].between(1, 100).all()
    np.True_
    """
    frame, path = _read(path, _default("lippens", "scores.csv"), _LIPPENS_COLUMNS)
    _nonempty(path, frame, ["vacancy_id", "job_type", "occupation_code", "occupation", "name"])
    _labels(path, frame, "origin", LIPPENS_ORIGINS)
    _labels(path, frame, "sex", _SEXES)
    bad = ~frame["job_type"].str.fullmatch(r"[a-z-]+_exp\d+")
    if bad.any():
        raise _where(path, frame, "job_type", bad, "is not '<occupation code>_exp<years>'")
    bad = frame["job_type"] != frame["occupation_code"] + "_exp" + frame["experience"]
    if bad.any():
        raise _where(path, frame, "job_type", bad, "does not match occupation_code and experience")
    number = frame["vacancy_id"].str.partition("_")
    bad = ~number[0].str.fullmatch(r"\d+") | (number[2] != frame["job_type"])
    if bad.any():
        raise _where(path, frame, "vacancy_id", bad, "is not '<number>_<job_type>'")
    out = pd.DataFrame({
        "vacancy_id": frame["vacancy_id"], "job_type": frame["job_type"],
        "occupation_code": frame["occupation_code"], "occupation": frame["occupation"],
        "experience": _numbers(path, frame, "experience", 0, 60, integer=True).astype(int),
        "vdab_id": _numbers(path, frame, "vdab_id", 0, np.inf, integer=True).astype("int64"),
        "origin": frame["origin"], "sex": frame["sex"], "group": frame["origin"] + " " + frame["sex"],
        "name": frame["name"],
        "temperature": _numbers(path, frame, "temperature", 0, 2),
        "score": _numbers(path, frame, "score", 1, 100, empty=True, integer=True),
        "bare_output": _bools(path, frame, "bare_output"),
        "recoded": _bools(path, frame, "recoded"),
    })
    _unique(path, out, ["vacancy_id", "group"])
    out["valid"] = out["score"].notna()
    return out


# ----------------------------------------------------------------------------------------------------
# re:cinq
# ----------------------------------------------------------------------------------------------------
def load_recinq(kind: str = "results", path: str | Path | None = None) -> pd.DataFrame:
    """re:cinq's audit (default ``data/recinq/<kind>.csv``): one row per result.

    ``kind``: ``"results"`` (the audit, 32,215 results), ``"prompt_lab"`` (6 prompting strategies) or ``"clean"``
    (the Claude models' baseline and placebos re-run without their command-line harness).

    Columns: ``strategy`` (``prompt_lab`` only), ``model``, ``vendor``, ``tier``, ``job`` (the job description),
    ``variant`` (the résumé variant, e.g. ``firstName_wei-chen``; reference :data:`RECINQ_REFERENCE`), ``axis``
    and ``level`` (its two parts; ``baseline`` has axis ``baseline``), ``run``, ``timestamp`` (UTC), ``group``
    (for the first-name axis the name's group from :data:`RECINQ_NAME_GROUPS`, else the level, or
    ``baseline``), ``placebo`` (a job-irrelevant control edit), ``score`` (1–10, float; NaN when the answer has
    none), ``interview`` (``yes``/``maybe``/``no``; ``""`` when none), ``problem`` (why there is no score; ``""``
    for a usable answer), ``valid`` (``problem`` empty).

    Raises ``ValueError`` for an unknown ``kind``, and naming the file, column and line of a bad value.

    >>> results = load_recinq()
    >>> len(results), results["model"].nunique(), int((~results["valid"]).sum())
    (32215, 11, 22)
    >>> results.loc[results["axis"] == "firstName", "group"].nunique()
    6
    """
    if kind not in RECINQ_KINDS:
        raise ValueError(f"kind must be one of {list(RECINQ_KINDS)}, got {kind!r}")
    columns = (("strategy",) if kind == "prompt_lab" else ()) + _RECINQ_COLUMNS
    frame, path = _read(path, _default("recinq", RECINQ_KINDS[kind]), columns)
    _nonempty(path, frame, ["model", "job", "variant", "axis"] + (["strategy"] if kind == "prompt_lab" else []))
    parts = frame["variant"].str.partition("_")
    bad = (parts[0] != frame["axis"]) | (parts[2] != frame["level"])
    if bad.any():
        raise _where(path, frame, "variant", bad, "is not '<axis>_<level>' of its row")
    unknown = (frame["axis"] == "firstName") & ~frame["variant"].isin(list(RECINQ_NAME_GROUPS))
    if unknown.any():
        raise _where(path, frame, "variant", unknown, f"is not one of the names {list(RECINQ_NAME_GROUPS)}")
    _labels(path, frame, "interview", ["yes", "maybe", "no", ""])
    score = _numbers(path, frame, "score", 1, 10, empty=True, integer=True)
    bad = score.isna() != (frame["problem"] != "")
    if bad.any():
        raise _where(path, frame, "problem", bad, "disagrees with the score (a problem iff no score)")
    bad = score.isna() != (frame["interview"] == "")
    if bad.any():
        raise _where(path, frame, "interview", bad, "disagrees with the score (empty iff no score)")
    run = _numbers(path, frame, "run", 1, np.inf, integer=True).astype(int)
    group = frame["variant"].map(RECINQ_NAME_GROUPS).fillna(frame["level"].where(frame["level"] != "",
                                                                                   frame["axis"]))
    out = frame.drop(columns=["run", "score"]).assign(run=run, group=group, placebo=frame["axis"] == "placebo",
                                                       score=score)
    keys = (["strategy"] if kind == "prompt_lab" else []) + ["model", "job", "variant", "run"]
    _unique(path, out, keys)
    out["valid"] = out["score"].notna()
    order = [*(["strategy"] if kind == "prompt_lab" else []), "model", "vendor", "tier", "job", "variant", "axis",
             "level", "run", "timestamp", "group", "placebo", "score", "interview", "problem", "valid"]
    return out[order]


# ----------------------------------------------------------------------------------------------------
# jderbysh
# ----------------------------------------------------------------------------------------------------
def load_jderbysh(path: str | Path | None = None) -> pd.DataFrame:
    """jderbysh's audit (default ``data/jderbysh/scores.csv``): one row per (model, run, job, résumé, name).

    Columns: ``model`` (``gpt-3.5-turbo-0125`` or ``gpt-5.1-2025-11-13``), ``source_file`` and ``repetition``
    (the results file and the repetition within it), ``run`` (1, 2, … over the model's files in order: gpt-5.1
    runs 1–3 asked only same-industry pairs, runs 4–6 all 81), ``job`` (``job11`` … ``job33``: industry, job),
    ``resume`` (``resume11`` … ``resume33``), ``pair`` = ``job + "/" + resume``, ``job_industry``,
    ``resume_industry``, ``qualified`` (the résumé is from the job's industry — the repository's own
    ``resume industry match``; a résumé from another industry is deliberately mismatched), ``name``, ``race``
    (``White``/``African American``: the race the name signalled in Bertrand and Mullainathan's study),
    ``sex``, ``group`` = ``race + " " + sex`` (reference :data:`JDERBYSH_REFERENCE`), the subscores
    ``experience``, ``skills``, ``achievements``, ``resume_quality`` (0–25 each), ``score`` (their sum, 0–100,
    float; NaN when the answer is missing), ``valid`` (the answer is there).

    Raises ``ValueError`` naming the file, column and line of a bad value, a score that is not the sum of the
    subscores, or a repeated key.

    >>> scores = load_jderbysh()
    >>> scores.groupby("model")["valid"].agg(["size", "sum"]).to_dict("index")
    {'gpt-3.5-turbo-0125': {'size': 2916, 'sum': 2761}, 'gpt-5.1-2025-11-13': {'size': 11664, 'sum': 11664}}
    >>> scores.groupby("qualified")["pair"].nunique().to_dict()
    {False: 54, True: 27}
    """
    frame, path = _read(path, _default("jderbysh", "scores.csv"), _JDERBYSH_COLUMNS)
    _nonempty(path, frame, ["model", "source_file", "name"])
    for column, prefix in (("job", "job"), ("resume", "resume")):
        bad = ~frame[column].str.fullmatch(prefix + r"[1-9][1-9]")
        if bad.any():
            raise _where(path, frame, column, bad, f"is not '{prefix}<industry><number>'")
    _labels(path, frame, "race", ["White", "African American"])
    _labels(path, frame, "sex", _SEXES)
    subs = {c: _numbers(path, frame, c, 0, 25, empty=True, integer=True) for c in _SUBSCORES}
    score = _numbers(path, frame, "score", 0, 100, empty=True, integer=True)
    total = sum(subs.values())
    bad = ~((score == total) | (score.isna() & pd.concat(subs, axis=1).isna().all(axis=1)))
    if bad.any():
        raise _where(path, frame, "score", bad, "is not the sum of the four subscores (or all five empty)")
    missing = _bools(path, frame, "missing")
    bad = missing != score.isna()
    if bad.any():
        raise _where(path, frame, "missing", bad, "disagrees with the score (missing iff no score)")
    repetition = _numbers(path, frame, "repetition", 1, np.inf, integer=True).astype(int)
    # run: the repetitions of a model's files one after the other, files in the table's order
    files = frame[["model", "source_file"]].drop_duplicates()
    offset = {}
    for model, part in files.groupby("model", sort=False):
        start = 0
        for source in part["source_file"]:
            offset[(model, source)] = start
            start += int(repetition[(frame["model"] == model) & (frame["source_file"] == source)].max())
    run = repetition + [offset[k] for k in zip(frame["model"], frame["source_file"])]
    out = pd.DataFrame({
        "model": frame["model"], "source_file": frame["source_file"], "repetition": repetition, "run": run,
        "job": frame["job"], "resume": frame["resume"], "pair": frame["job"] + "/" + frame["resume"],
        "job_industry": frame["job_industry"], "resume_industry": frame["resume_industry"],
        "qualified": frame["job_industry"] == frame["resume_industry"],
        "name": frame["name"], "race": frame["race"], "sex": frame["sex"],
        "group": frame["race"] + " " + frame["sex"], **subs, "score": score,
    })
    _unique(path, out, ["model", "run", "job", "resume", "name"])
    out["valid"] = out["score"].notna()
    return out
