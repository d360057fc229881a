"""What is audited: names, jobs and resumes, candidate pools, essays.

Everything the study shows a model comes from here, as tidy tables:

* :func:`load_names`: ``names.csv``, 100 first names per (gender, race) group and 100 surnames per race
  (built by ``scripts/build_names.py``; see its card ``names.md``).
* :func:`load_jobs`: the four job ads and their six resumes each (``jobs/*.yaml``, written for this
  project; see ``jobs/README.md``), as frozen dataclasses; :func:`render_resume` turns a resume and a
  name into the text a model reads, through one template whose only variable part is the name.
* :func:`candidate_table`: the candidates of the resume-screening task, one row per (job, resume, name).
* :func:`hiring_bloomberg_names`: full names per race and gender for the 8-CV HiringBloomberg items
  (``allocbias.genderbench.build_items`` places them on CV slots).
* :func:`load_icnale`: the ICNALE Written Essays with Global Rating Archive ratings, from a licensed copy the
  user points at (nothing of ICNALE is shipped); :func:`load_demo_essays`: a small **demo** set written for
  this project so the essay path runs end to end (results on it say nothing about real writers).

The names, the jobs and their cards ship inside the package (:func:`~allocbias.audited.locations.shipped`:
``allocbias/resources/``), so the installed commands find them; the book's own data sets (ELLIPSE, the demo essays)
are found under :func:`data_dir` (``$ALLOCBIAS_DATA`` or the repository's ``data/``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .. import checks
from . import datasets
from .locations import data_dir, repo_root, resources_dir, shipped

__all__ = [
    "group_slug",
    "repo_root",
    "CANDIDATE_COLUMNS",
    "DEMO_GROUPS",
    "DEMO_REFERENCE_GROUP",
    "EDUCATION_FITS",
    "ESSAY_COLUMNS",
    "ESSAY_STATEMENTS",
    "GENDERS",
    "GROUPS",
    "ICNALE_GROUPS",
    "ICNALE_REFERENCE_GROUP",
    "ICNALE_TOPICS",
    "JOBS",
    "QUALITIES",
    "RACES",
    "REFERENCE_GROUP",
    "SENIORITIES",
    "Education",
    "Experience",
    "Job",
    "Resume",
    "candidate_table",
    "data_dir",
    "hiring_bloomberg_names",
    "ELLIPSE_GROUPINGS",
    "ELLIPSE_REFERENCE_GROUPS",
    "load_demo_essays",
    "load_ellipse",
    "load_icnale",
    "load_job",
    "load_jobs",
    "load_names",
    "parse_icnale_id",
    "relevant_years",
    "render_resume",
    "resume_table",
    "validate_job",
]

#: Genders of the resume groups, in the study's order.
GENDERS: tuple[str, ...] = ("Female", "Male")
#: Races of the resume groups, in the study's order.
RACES: tuple[str, ...] = ("White", "Black", "Asian", "Hispanic")
#: Group labels "Female White", ..., gender first.
GROUPS: tuple[str, ...] = tuple(f"{g} {r}" for r in RACES for g in GENDERS)
#: Reference group of every resume-screening comparison.
REFERENCE_GROUP = "Male White"


def group_slug(group: str) -> str:
    """A group's name as it appears in identifiers (glue keys, file names): lower case, spaces as underscores.

    >>> group_slug("Female Black")
    'female_black'
    """
    return group.lower().replace(" ", "_")
#: Job keys (file names in the shipped ``jobs/`` folder).
JOBS: tuple[str, ...] = ("software_engineer", "hr_specialist", "financial_analyst", "retail")
#: Resume qualities; "qualified" means "high".
QUALITIES: tuple[str, ...] = ("high", "medium", "low")
#: Stated seniority of a resume's most recent relevant role, by quality.
SENIORITIES: dict[str, tuple[str, ...]] = {"high": ("senior",), "medium": ("mid",), "low": ("entry",)}
#: Education fit: a degree in the field, a neighbouring field or certificate, no field degree but meets the
#: minimum requirement, or unrelated/below the requirement; allowed values by quality.
EDUCATION_FITS: dict[str, tuple[str, ...]] = {
    "high": ("relevant",),
    "medium": ("relevant", "adjacent", "meets"),
    "low": ("unrelated", "meets"),
}
#: Relevant years of experience allowed by quality (inclusive bounds).
_YEARS: dict[str, tuple[int, int]] = {"high": (8, 60), "medium": (3, 5), "low": (0, 1)}

#: Columns of :func:`candidate_table`.
CANDIDATE_COLUMNS: tuple[str, ...] = (
    "job", "resume_id", "quality", "qualified", "group", "gender", "race", "first", "last", "full_name",
)
#: Columns of the essay loaders.
ESSAY_COLUMNS: tuple[str, ...] = ("essay_id", "topic", "group", "rating", "qualified", "text")

#: ICNALE's two essay topics and the statement each essay argues for or against (the prompt's ``<statement>``).
ESSAY_STATEMENTS: dict[str, str] = {
    "PTJ": "it is important for college students to have a part-time job",
    "SMK": "smoking should be completely banned at all the restaurants in the country",
}
ICNALE_TOPICS: tuple[str, ...] = tuple(ESSAY_STATEMENTS)
#: ICNALE writer groups: English native speakers (ENS, the L1 reference) and ten L2 learner countries/regions.
ICNALE_GROUPS: tuple[str, ...] = ("ENS", "CHN", "HKG", "IDN", "JPN", "KOR", "PAK", "PHL", "SIN", "THA", "TWN")
ICNALE_REFERENCE_GROUP = "ENS"
#: Writer groups of the demo essays (labelled as demo everywhere).
DEMO_GROUPS: tuple[str, ...] = ("L1 (demo)", "L2-A (demo)", "L2-B (demo)")
DEMO_REFERENCE_GROUP = "L1 (demo)"

_ICNALE_ID = re.compile(r"^W_(?P<group>[A-Z]{3})_(?P<topic>[A-Z]{3})\d*_")


# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------

_NAME_COLUMNS = ("kind", "name", "gender", "race", "group", "rank")


def load_names(path: str | Path | None = None) -> pd.DataFrame:
    """Read the names table (default: the shipped ``names.csv``); one row per name.

    Columns: kind (``first``/``last``), name, gender and group (first names; missing for surnames), race,
    rank (commonness within group or race), the rule's source shares and the cross-check columns (see
    the names card ``names.md``).

    >>> names = load_names()
    >>> names.groupby("kind").size().to_dict()
    {'first': 800, 'last': 400}
    """
    required = path is None  # a path the caller names is their own table
    path = Path(path) if path is not None else shipped("names.csv")
    if not path.is_file():
        raise ValueError(f"names file not found: {path}")
    table = datasets.read_csv(path, required=required, keep_default_na=False, na_values=[""],
                              dtype={"name": str})
    missing = [c for c in _NAME_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"names file {path} lacks columns {missing}")
    for col in ("kind", "name", "gender", "race", "group"):
        table[col] = table[col].astype("string")
    if "xcheck_plurality" in table.columns:
        table["xcheck_plurality"] = table["xcheck_plurality"].astype("boolean")
    bad_kind = sorted(set(table["kind"].dropna()) - {"first", "last"})
    if bad_kind:
        raise ValueError(f"names file {path}: unknown kind {bad_kind}")
    bad_race = sorted(set(table["race"].dropna()) - set(RACES))
    if bad_race:
        raise ValueError(f"names file {path}: unknown race {bad_race}")
    bad_group = sorted(set(table.loc[table["kind"] == "first", "group"].dropna()) - set(GROUPS))
    if bad_group:
        raise ValueError(f"names file {path}: unknown group {bad_group}")
    return table


def _name_pools(names: pd.DataFrame) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """First names per group and surnames per race, in rank order."""
    missing = [c for c in _NAME_COLUMNS if c not in names.columns]
    if missing:
        raise ValueError(f"names table lacks columns {missing}")
    ordered = names.sort_values(["kind", "rank"], kind="mergesort")
    first = ordered[ordered["kind"] == "first"]
    last = ordered[ordered["kind"] == "last"]
    firsts = {g: first.loc[first["group"] == g, "name"].to_numpy(dtype=object) for g in GROUPS}
    lasts = {r: last.loc[last["race"] == r, "name"].to_numpy(dtype=object) for r in RACES}
    return firsts, lasts


# ----------------------------------------------------------------------------------------------
# Jobs and resumes
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Experience:
    """One position on a resume; ``end=None`` means "present" (the job's ``as_of`` year)."""

    title: str
    employer: str
    start: int
    end: int | None
    relevant: bool
    bullets: tuple[str, ...]


@dataclass(frozen=True)
class Education:
    """One degree or certificate."""

    degree: str
    institution: str
    year: int


@dataclass(frozen=True)
class Resume:
    """A resume without a name: structured sections plus the stated quality criteria.

    ``relevant_years``, ``seniority``, ``education_fit`` and ``key_skills`` (keys of the job's key skills)
    are the criteria that set ``quality`` (table in ``jobs/README.md``); :func:`validate_job` checks
    them against the sections.
    """

    id: str
    job: str
    quality: str
    headline: str
    summary: str
    experience: tuple[Experience, ...]
    education: tuple[Education, ...]
    skills: tuple[str, ...]
    certifications: tuple[str, ...]
    relevant_years: int
    seniority: str
    education_fit: str
    key_skills: tuple[str, ...]

    @property
    def qualified(self) -> bool:
        """``quality == "high"`` (the study's definition of a qualified candidate)."""
        return self.quality == "high"


@dataclass(frozen=True)
class Job:
    """A job: key, title, GenderBench role name, the ad text, its key skills and its six resumes."""

    key: str
    title: str
    role: str
    as_of: int
    ad: str
    key_skills: Mapping[str, str]
    resumes: tuple[Resume, ...]

    def resume(self, resume_id: str) -> Resume:
        """The resume with this id (``ValueError`` naming it if absent)."""
        for r in self.resumes:
            if r.id == resume_id:
                return r
        raise ValueError(f"job {self.key!r} has no resume {resume_id!r}")


def _require(mapping: Mapping, key: str, where: str):
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise ValueError(f"{where}: missing field {key!r}")
    return mapping[key]


def _parse_resume(raw: Mapping, job: str, as_of: int) -> Resume:
    rid = str(_require(raw, "id", f"job {job!r} resume"))
    where = f"resume {rid!r}"
    crit = _require(raw, "criteria", where)
    experience = []
    for i, e in enumerate(_require(raw, "experience", where)):
        w = f"{where} experience[{i}]"
        end = _require(e, "end", w)
        experience.append(
            Experience(
                title=str(_require(e, "title", w)),
                employer=str(_require(e, "employer", w)),
                start=int(_require(e, "start", w)),
                end=None if end == "present" else int(end),
                relevant=bool(_require(e, "relevant", w)),
                bullets=tuple(str(b) for b in _require(e, "bullets", w)),
            )
        )
    education = tuple(
        Education(
            degree=str(_require(d, "degree", f"{where} education")),
            institution=str(_require(d, "institution", f"{where} education")),
            year=int(_require(d, "year", f"{where} education")),
        )
        for d in _require(raw, "education", where)
    )
    return Resume(
        id=rid,
        job=job,
        quality=str(_require(raw, "quality", where)),
        headline=str(_require(raw, "headline", where)).strip(),
        summary=" ".join(str(_require(raw, "summary", where)).split()),
        experience=tuple(experience),
        education=education,
        skills=tuple(str(s) for s in _require(raw, "skills", where)),
        certifications=tuple(str(s) for s in (raw.get("certifications") or ())),
        relevant_years=int(_require(crit, "relevant_years", f"{where} criteria")),
        seniority=str(_require(crit, "seniority", f"{where} criteria")),
        education_fit=str(_require(crit, "education_fit", f"{where} criteria")),
        key_skills=tuple(str(k) for k in _require(crit, "key_skills", f"{where} criteria")),
    )


def relevant_years(resume: Resume, as_of: int) -> int:
    """Years in positions marked relevant: ``sum_e (end_e - start_e)``, ``end = as_of`` for "present".

    >>> e = Experience("Analyst", "Co", 2019, None, True, ())
    >>> r = Resume("x", "j", "high", "", "", (e,), (), (), (), 6, "senior", "relevant", ())
    >>> relevant_years(r, 2025)
    6
    """
    return int(sum((as_of if e.end is None else e.end) - e.start for e in resume.experience if e.relevant))


def validate_job(job: Job) -> None:
    """Check a job's resumes against the stated criteria; ``ValueError`` names the resume and the problem.

    Two resumes per quality; unique ids; stated relevant years = :func:`relevant_years` and within the
    quality's band (high >= 8, medium 3–5, low 0–1); seniority and education fit allowed for the quality;
    high resumes cover every key skill, medium ones 2 to half of them, low ones at most one; every claimed
    key skill's label occurs in the rendered resume and no unclaimed one does (case-insensitive).
    """
    counts = {q: sum(r.quality == q for r in job.resumes) for q in QUALITIES}
    if counts != {q: 2 for q in QUALITIES} or len(job.resumes) != 6:
        raise ValueError(f"job {job.key!r}: need 2 resumes per quality, got {counts}")
    ids = [r.id for r in job.resumes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"job {job.key!r}: duplicated resume ids {sorted(i for i in ids if ids.count(i) > 1)}")
    n_keys = len(job.key_skills)
    for r in job.resumes:
        where = f"job {job.key!r} resume {r.id!r}"
        if r.quality not in QUALITIES:
            raise ValueError(f"{where}: unknown quality {r.quality!r}")
        years = relevant_years(r, job.as_of)
        if years != r.relevant_years:
            raise ValueError(f"{where}: stated relevant_years {r.relevant_years} but experience gives {years}")
        lo, hi = _YEARS[r.quality]
        if not lo <= years <= hi:
            raise ValueError(f"{where}: {years} relevant years outside {lo}-{hi} for quality {r.quality!r}")
        if r.seniority not in SENIORITIES[r.quality]:
            raise ValueError(f"{where}: seniority {r.seniority!r} not allowed for quality {r.quality!r}")
        if r.education_fit not in EDUCATION_FITS[r.quality]:
            raise ValueError(f"{where}: education_fit {r.education_fit!r} not allowed for quality {r.quality!r}")
        unknown = sorted(set(r.key_skills) - set(job.key_skills))
        if unknown:
            raise ValueError(f"{where}: unknown key skills {unknown}")
        k = len(set(r.key_skills))
        ok = {"high": k == n_keys, "medium": 2 <= k <= n_keys // 2, "low": k <= 1}[r.quality]
        if not ok:
            raise ValueError(f"{where}: {k} of {n_keys} key skills does not fit quality {r.quality!r}")
        text = render_resume(r, "Name Placeholder").lower()
        for key, label in job.key_skills.items():
            present = label.lower() in text
            if present != (key in r.key_skills):
                state = "mentions" if present else "lacks"
                raise ValueError(f"{where}: {state} key skill {label!r} contrary to its criteria")


def load_job(path: str | Path, required: bool = False) -> Job:
    """Read and validate one job file (YAML: job, title, role, as_of, key_skills, ad, resumes).

    The file is checked against the digest its data card records (``required=True``: refused when none is
    recorded, as for the committed jobs; see :mod:`allocbias.audited.datasets`)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"job file not found: {path}")
    return _parse_job(datasets.read_bytes(path, required).decode("utf-8"), path.name)


#: libyaml's parser where PyYAML was built with it (the same documents, about ten times faster), else PyYAML's own.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=64)
def _parse_job(text: str, name: str) -> Job:
    """A job file's text parsed and validated, once per text: a chapter asks for the same four jobs many times, and
    a :class:`Job` is frozen, so one parsed copy serves every call (the file's digest is still checked each time)."""
    raw = yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 (a safe loader)
    where = f"job file {name}"
    key = str(_require(raw, "job", where))
    as_of = int(_require(raw, "as_of", where))
    job = Job(
        key=key,
        title=str(_require(raw, "title", where)),
        role=str(_require(raw, "role", where)),
        as_of=as_of,
        ad=str(_require(raw, "ad", where)).strip(),
        key_skills={str(k): str(v) for k, v in _require(raw, "key_skills", where).items()},
        resumes=tuple(_parse_resume(r, key, as_of) for r in _require(raw, "resumes", where)),
    )
    validate_job(job)
    return job


def load_jobs(jobs: Iterable[str] | None = None, folder: str | Path | None = None) -> dict[str, Job]:
    """The jobs by key, in :data:`JOBS` order (default all four), from the shipped ``jobs/<key>.yaml``.

    >>> jobs = load_jobs(["retail"])
    >>> [r.quality for r in jobs["retail"].resumes]
    ['high', 'high', 'medium', 'medium', 'low', 'low']
    """
    keys = _check_jobs(jobs)
    required = folder is None  # a folder the caller names holds their own jobs
    folder = Path(folder) if folder is not None else shipped("jobs")
    out = {}
    for key in keys:
        job = load_job(folder / f"{key}.yaml", required)
        if job.key != key:
            raise ValueError(f"job file {key}.yaml declares job {job.key!r}")
        out[key] = job
    return out


def _chosen(values: str | Iterable[str] | None, known: Sequence[str], what: str, plural: str) -> list[str]:
    """``values`` as a list (None: every one of ``known``; a string: that one), or a ValueError naming the values
    that are not ``known`` (``what``/``plural`` name one and several of them)."""
    if values is None:
        return list(known)
    values = [values] if isinstance(values, str) else list(values)
    unknown = [v for v in values if v not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; known {plural}: {list(known)}")
    return values


def _check_jobs(jobs: Iterable[str] | None) -> list[str]:
    keys = _chosen(jobs, JOBS, "job", "jobs")
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicated jobs in {keys}")
    return [j for j in JOBS if j in keys]


def _period(e: Experience) -> str:
    return f"{e.start} - {'present' if e.end is None else e.end}"


def render_resume(resume: Resume, full_name: str) -> str:
    """The resume as plain text, with ``full_name`` as its first line and nowhere else.

    Template (sections in this order; CERTIFICATIONS only when there are some)::

        <full_name>
        <headline>

        SUMMARY
        <summary>

        EXPERIENCE
        <title>, <employer> (<start> - <end or present>)
        - <bullet>
        ...

        EDUCATION
        <degree>, <institution>, <year>

        SKILLS
        <skill>, <skill>, ...

    >>> job = load_jobs(["retail"])["retail"]
    >>> render_resume(job.resumes[0], "Ana Garcia").splitlines()[:2]
    ['Ana Garcia', 'Retail team lead and key holder, high-volume stores']
    """
    if not isinstance(full_name, str) or not full_name.strip() or full_name != full_name.strip():
        raise ValueError(f"full_name must be a non-empty string without outer spaces, got {full_name!r}")
    if "\n" in full_name or "\r" in full_name:
        raise ValueError(f"full_name must be one line, got {full_name!r}")
    lines = [full_name, resume.headline, "", "SUMMARY", resume.summary, "", "EXPERIENCE"]
    for i, e in enumerate(resume.experience):
        if i:
            lines.append("")
        lines.append(f"{e.title}, {e.employer} ({_period(e)})")
        lines.extend(f"- {b}" for b in e.bullets)
    lines += ["", "EDUCATION"]
    lines.extend(f"{d.degree}, {d.institution}, {d.year}" for d in resume.education)
    lines += ["", "SKILLS", ", ".join(resume.skills)]
    if resume.certifications:
        lines += ["", "CERTIFICATIONS", ", ".join(resume.certifications)]
    return "\n".join(lines)


def resume_table(jobs: Mapping[str, Job] | None = None) -> pd.DataFrame:
    """One row per resume with its quality criteria (the table of ``jobs/README.md``).

    Columns: job, resume_id, quality, qualified, relevant_years, seniority, education_fit, key_skills
    (number covered), key_skills_total.

    >>> resume_table().groupby("quality").size().to_dict()
    {'high': 8, 'low': 8, 'medium': 8}
    """
    jobs = load_jobs() if jobs is None else jobs
    rows = [
        {
            "job": job.key,
            "resume_id": r.id,
            "quality": r.quality,
            "qualified": r.qualified,
            "relevant_years": r.relevant_years,
            "seniority": r.seniority,
            "education_fit": r.education_fit,
            "key_skills": len(set(r.key_skills)),
            "key_skills_total": len(job.key_skills),
        }
        for job in jobs.values()
        for r in job.resumes
    ]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# Candidate pools
# ----------------------------------------------------------------------------------------------


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([checks.seed(seed), *keys])


#: Size of the base name sample per (job, group): the committed tables hold these names. Fewer names per group
#: are its first ones, more extend it, so the samples of every ``names_per_group`` are nested.
BASE_NAMES_PER_GROUP = 10


def _group_full_names(
    firsts: np.ndarray, lasts: np.ndarray, n: int, seed_keys: tuple[int, int, int], group: str
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` first names and ``n`` surnames of a group: a prefix of the base sample (the first
    ``min(n, BASE_NAMES_PER_GROUP)`` drawn without replacement with ``default_rng([seed, job, group])``),
    extended past it by names drawn without replacement from the rest with ``default_rng([seed, job, group, 1])``.
    """
    if n > len(firsts) or n > len(lasts):
        raise ValueError(
            f"names_per_group={n} exceeds the names of group {group!r} "
            f"({len(firsts)} first names, {len(lasts)} surnames)"
        )
    base = min(BASE_NAMES_PER_GROUP, len(firsts), len(lasts))
    rng = _rng(*seed_keys)
    first, last = rng.choice(firsts, size=base, replace=False), rng.choice(lasts, size=base, replace=False)
    if n <= base:
        return first[:n], last[:n]
    more = _rng(*seed_keys, 1)
    rest_first = firsts[~np.isin(firsts, first)]
    rest_last = lasts[~np.isin(lasts, last)]
    first = np.concatenate([first, more.choice(rest_first, size=n - base, replace=False)])
    last = np.concatenate([last, more.choice(rest_last, size=n - base, replace=False)])
    return first, last


def candidate_table(
    jobs: Iterable[str] | None = None,
    names_per_group: int = 10,
    seed: int = 0,
    names: pd.DataFrame | None = None,
    job_data: Mapping[str, Job] | None = None,
) -> pd.DataFrame:
    """Candidates of the resume-screening task: one row per (job, resume, name).

    For each job and group, ``names_per_group`` distinct first names of the group and as many distinct
    surnames of its race are drawn without replacement and paired into full names; every resume of the
    job is then shown with every one of those names, so within a job only the name varies. Draws use
    ``numpy.random.default_rng([seed, job index, group index])``: a job's names do not depend on which
    other jobs are requested. The samples are nested: ``names_per_group`` below
    :data:`BASE_NAMES_PER_GROUP` (10, the committed tables) takes the first names of the 10-name sample, and
    above it extends that sample (11 names = the 10 plus one more, drawn with
    ``default_rng([seed, job index, group index, 1])``). Rows: ``len(jobs) * 6 * 8 * names_per_group``.

    Columns: :data:`CANDIDATE_COLUMNS` (qualified = quality == "high").

    >>> t = candidate_table(["retail"], names_per_group=2, seed=1)
    >>> len(t), t["full_name"].nunique(), int(t["qualified"].sum())
    (96, 16, 32)
    """
    keys = _check_jobs(jobs)
    names_per_group = checks.count(names_per_group, "names_per_group")
    names = load_names() if names is None else names
    job_data = load_jobs(keys) if job_data is None else job_data
    missing = [k for k in keys if k not in job_data]
    if missing:
        raise ValueError(f"job_data lacks jobs {missing}")
    firsts, lasts = _name_pools(names)
    frames = []
    for key in keys:
        job_index = JOBS.index(key)
        people = []
        for g_index, group in enumerate(GROUPS):
            gender, race = group.split(" ")
            first, last = _group_full_names(firsts[group], lasts[race], int(names_per_group),
                                            (seed, job_index, g_index), group)
            people.append(pd.DataFrame({"group": group, "gender": gender, "race": race, "first": first, "last": last}))
        people = pd.concat(people, ignore_index=True)
        resumes = pd.DataFrame(
            {
                "job": key,
                "resume_id": [r.id for r in job_data[key].resumes],
                "quality": [r.quality for r in job_data[key].resumes],
            }
        )
        frames.append(resumes.merge(people, how="cross"))
    out = pd.concat(frames, ignore_index=True)
    out["qualified"] = out["quality"] == "high"
    out["full_name"] = out["first"] + " " + out["last"]
    out = out[list(CANDIDATE_COLUMNS)]
    for col in ("job", "resume_id", "quality", "group", "gender", "race", "first", "last", "full_name"):
        out[col] = out[col].astype("string")
    return out


def hiring_bloomberg_names(
    races: Iterable[str] | None = None,
    names_per_gender: int = 50,
    seed: int = 0,
    names: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Full names for the HiringBloomberg probe: ``names_per_gender`` per (race, gender).

    Each race's first names (the ``names_per_gender`` most common of each gender) get distinct surnames of
    the race, drawn without replacement with ``default_rng([seed, race index])``; with
    ``names_per_gender <= 50`` no two people of a race share a surname, so no prompt shows two candidates
    who look related. An item (``allocbias.genderbench.build_items``) draws 4 women and 4 men of one race
    from this table.

    Columns: first, last, full_name, gender, race, group.

    >>> t = hiring_bloomberg_names(["Asian"], names_per_gender=4)
    >>> t.groupby("gender").size().to_dict(), t["last"].nunique()
    ({'Female': 4, 'Male': 4}, 8)
    """
    races = _chosen(races, RACES, "race", "races")
    names_per_gender = checks.count(names_per_gender, "names_per_gender")
    names = load_names() if names is None else names
    firsts, lasts = _name_pools(names)
    frames = []
    for race in races:
        rng = _rng(seed, RACES.index(race))
        n = int(names_per_gender)
        pool = lasts[race]
        if n > len(firsts[f"Female {race}"]) or n > len(firsts[f"Male {race}"]) or n > len(pool):
            raise ValueError(f"names_per_gender={n} exceeds the names of race {race!r}")
        distinct = 2 * n <= len(pool)
        surnames = rng.choice(pool, size=2 * n, replace=False) if distinct else np.concatenate(
            [rng.choice(pool, size=n, replace=False), rng.choice(pool, size=n, replace=False)]
        )
        for i, gender in enumerate(GENDERS):
            first = firsts[f"{gender} {race}"][:n]
            frames.append(
                pd.DataFrame(
                    {"first": first, "last": surnames[i * n : (i + 1) * n], "gender": gender, "race": race,
                     "group": f"{gender} {race}"}
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out.insert(2, "full_name", out["first"] + " " + out["last"])
    return out.astype("string")


# ----------------------------------------------------------------------------------------------
# Essays
# ----------------------------------------------------------------------------------------------


def parse_icnale_id(essay_id: str) -> tuple[str, str]:
    """(group, topic) encoded in an ICNALE Written Essays id.

    Ids look like ``W_CHN_PTJ0_004_B1_1``: ``W`` (written), the country/region code (``ENS`` for English
    native speakers), the topic code with a digit (``PTJ0``, ``SMK0``), the writer number, the CEFR level
    and a counter.

    >>> parse_icnale_id("W_JPN_SMK0_021_A2_0")
    ('JPN', 'SMK')
    """
    match = _ICNALE_ID.match(str(essay_id))
    if match is None:
        raise ValueError(f"essay id {essay_id!r} is not an ICNALE Written Essays id (W_<GROUP>_<TOPIC>..._...)")
    return match.group("group"), match.group("topic")


def _qualified(ratings: pd.Series, topics: pd.Series) -> pd.Series:
    """rating >= the median (50th percentile, linear interpolation) of its topic's ratings."""
    medians = ratings.groupby(topics).transform("median")
    return ratings >= medians


def _check_filter(values: Iterable[str] | None, known: Sequence[str], what: str) -> list[str] | None:
    if values is None:
        return None
    values = [values] if isinstance(values, str) else list(values)
    unknown = [v for v in values if v not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; known: {list(known)}")
    return values


def load_icnale(
    path: str | Path,
    topics: Iterable[str] | None = None,
    groups: Iterable[str] | None = None,
    columns: Mapping[str, str] | None = None,
    texts_dir: str | Path | None = None,
    sheet_name: str | int = 0,
) -> pd.DataFrame:
    """Load rated ICNALE essays from the user's licensed copy (nothing of ICNALE ships with this project).

    Expected layout: a ratings table (``.csv``, ``.tsv`` or ``.xlsx``/``.xls``) from the ICNALE Global Rating
    Archives, one row per essay *or* per (essay, rater), with

    * ``essay_id``: the ICNALE Written Essays id, e.g. ``W_CHN_PTJ0_004_B1_1``;
    * ``rating``: the holistic score (0–100 in the archive); rows of the same essay are averaged;
    * optional ``topic`` (PTJ/SMK) and ``group`` (ENS, CHN, HKG, IDN, JPN, KOR, PAK, PHL, SIN, THA, TWN):
      parsed from the id when absent (:func:`parse_icnale_id`);
    * ``text``: the essay, or leave it out and pass ``texts_dir``, the folder of the Written Essays
      ``.txt`` files, named ``<essay_id>.txt`` (searched recursively).

    ``columns`` maps your file's column names to these names, e.g. ``{"Code": "essay_id", "Total": "rating"}``.

    qualified = rating >= the 50th percentile (median) of its topic's ratings, computed over the whole file
    before ``topics``/``groups`` filters, so filtering never changes who is qualified.

    Returns columns :data:`ESSAY_COLUMNS`, sorted by topic, group, essay_id. ``ValueError`` names a missing
    file or column, an unknown topic or group (in the filters or the data), a missing text file or an
    unusable rating.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"ICNALE ratings file not found: {path}")
    topics = _check_filter(topics, ICNALE_TOPICS, "topic")
    groups = _check_filter(groups, ICNALE_GROUPS, "group")
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xls"):
        raw = pd.read_excel(path, sheet_name=sheet_name, dtype=object, engine="calamine")  # the data extra's fast reader
    elif suffix in (".csv", ".tsv", ".txt"):
        raw = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=object, keep_default_na=False,
                          na_values=[""])
    else:
        raise ValueError(f"ICNALE ratings file {path.name}: unsupported format {suffix!r} (use csv, tsv or xlsx)")
    if columns:
        absent = [c for c in columns if c not in raw.columns]
        if absent:
            raise ValueError(f"ICNALE ratings file {path.name}: columns {absent} named in `columns` are missing")
        raw = raw.rename(columns=dict(columns))
    for col in ("essay_id", "rating"):
        if col not in raw.columns:
            raise ValueError(f"ICNALE ratings file {path.name}: missing column {col!r} (map it with `columns`)")
    if "text" not in raw.columns and texts_dir is None:
        raise ValueError(f"ICNALE ratings file {path.name}: missing column 'text'; pass texts_dir with the essays")
    table = raw.copy()
    table["essay_id"] = table["essay_id"].astype(str).str.strip()
    ratings = pd.to_numeric(table["rating"], errors="coerce")
    if ratings.isna().any():
        bad = table.loc[ratings.isna(), "essay_id"].tolist()[:5]
        raise ValueError(f"ICNALE ratings file {path.name}: non-numeric or missing rating for essays {bad}")
    table["rating"] = ratings.astype(float)
    absent = [c for c in ("group", "topic") if c not in table.columns]
    if absent:  # parse them from the ICNALE ids (vectorised parse_icnale_id)
        parsed = table["essay_id"].str.extract(_ICNALE_ID.pattern)
        bad = table.loc[parsed["group"].isna(), "essay_id"]
        if len(bad):
            parse_icnale_id(bad.iloc[0])  # raises, naming the id
        for col in absent:
            table[col] = parsed[col]
    for col in ("group", "topic"):
        table[col] = table[col].astype(str).str.strip().str.upper().str.slice(0, 3 if col == "topic" else None)
    for col, known in (("topic", ICNALE_TOPICS), ("group", ICNALE_GROUPS)):
        unknown = sorted(set(table[col]) - set(known))
        if unknown:
            raise ValueError(f"ICNALE ratings file {path.name}: unknown {col} {unknown}")
    keep = ["essay_id", "topic", "group"] + (["text"] if "text" in table.columns else [])
    conflicting = table.groupby("essay_id")[["topic", "group"]].nunique().max(axis=1)
    if (conflicting > 1).any():
        raise ValueError(f"essays with conflicting topic/group rows: {conflicting[conflicting > 1].index.tolist()[:5]}")
    essays = table.groupby("essay_id", sort=True).agg({**{c: "first" for c in keep[1:]}, "rating": "mean"})
    essays = essays.reset_index()
    if "text" not in essays.columns:
        essays["text"] = _read_texts(essays["essay_id"], Path(texts_dir))
    essays["text"] = essays["text"].astype(str)
    empty = essays.loc[essays["text"].str.strip() == "", "essay_id"].tolist()
    if empty:
        raise ValueError(f"ICNALE essays with empty text: {empty[:5]}")
    return _finish_essays(essays, topics, groups)


def _read_texts(essay_ids: pd.Series, folder: Path) -> list[str]:
    if not folder.is_dir():
        raise ValueError(f"ICNALE texts folder not found: {folder}")
    files = {p.stem: p for p in folder.rglob("*.txt")}
    missing = [e for e in essay_ids if e not in files]
    if missing:
        raise ValueError(f"ICNALE text files not found in {folder} for essays {missing[:5]}")
    return [files[e].read_text(encoding="utf-8-sig", errors="strict").strip() for e in essay_ids]


def _finish_essays(essays: pd.DataFrame, topics: Iterable[str] | None, groups: Iterable[str] | None) -> pd.DataFrame:
    """The essay table of a loader: ``qualified`` marked (rating and topic), kept to ``topics`` and ``groups``
    (None: all), sorted, with the columns and dtypes of :data:`ESSAY_COLUMNS`."""
    essays["qualified"] = _qualified(essays["rating"], essays["topic"])
    if topics is not None:
        essays = essays[essays["topic"].isin(topics)]
    if groups is not None:
        essays = essays[essays["group"].isin(groups)]
    out = essays.sort_values(["topic", "group", "essay_id"], kind="mergesort").reset_index(drop=True)
    out = out[list(ESSAY_COLUMNS)]
    for col in ("essay_id", "topic", "group", "text"):
        out[col] = out[col].astype("string")
    out["rating"] = out["rating"].astype(float)
    out["qualified"] = out["qualified"].astype(bool)
    return out


def load_demo_essays(topics: Iterable[str] | None = None, groups: Iterable[str] | None = None) -> pd.DataFrame:
    """The DEMO essays (``data/essays_demo/essays.csv``), written for this project; not ICNALE data.

    Two topics (PTJ, SMK, the ICNALE statements) x three demo writer groups (:data:`DEMO_GROUPS`) x five
    essays with known ratings 1..5, so every group has the same rating distribution. Results on this set
    exercise the code path only; they say nothing about second-language writers. Columns and the
    ``qualified`` rule as in :func:`load_icnale`.

    >>> demo = load_demo_essays()
    >>> sorted(demo["group"].unique()) == sorted(DEMO_GROUPS), len(demo)
    (True, 30)
    """
    topics = _check_filter(topics, ICNALE_TOPICS, "topic")
    groups = _check_filter(groups, DEMO_GROUPS, "group")
    path = data_dir() / "essays_demo" / "essays.csv"
    if not path.is_file():
        raise ValueError(f"demo essays not found: {path}")
    essays = datasets.read_csv(path, dtype={"essay_id": str, "topic": str, "group": str, "text": str},
                               keep_default_na=False)
    missing = [c for c in ("essay_id", "topic", "group", "rating", "text") if c not in essays.columns]
    if missing:
        raise ValueError(f"demo essays file {path} lacks columns {missing}")
    essays["rating"] = essays["rating"].astype(float)
    return _finish_essays(essays, topics, groups)


# ----------------------------------------------------------------------------------------------
# Summaries of the names table and the data cards
# ----------------------------------------------------------------------------------------------

__all__ += ["card_bullets", "card_path", "card_section", "names_summary"]

_SUMMARY_COLUMNS = ("kind", "name", "group", "race", "race_share", "sex_share", "ssa_births", "frequency")


def names_summary(names: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per resume group: how many names it has and how strongly they signal its race and sex.

    For the first names ``N_g`` of group ``g`` (race ``r``):

    * ``first_names = |N_g|``; ``surnames`` = number of surnames of race ``r`` (a candidate of ``g`` gets
      one of them);
    * ``race_share_min``, ``race_share_median``: min and median of ``P(r | n)`` over ``n in N_g``;
    * ``sex_share_min``: min of the SSA share of births of the group's sex;
    * ``ssa_births_median``: median SSA births (1960–2005) per name;
    * ``race_frequency_sum = sum_{n in N_g} P(n | r)``: the share of the race's registered voters (both
      sexes) whose first name is on the group's list; small values mean rare, diverse names.

    Rows follow :data:`GROUPS` (groups without first names are left out). ``ValueError`` names missing
    columns, an unknown group, a table without first names, or first names with missing values.

    >>> t = pd.DataFrame({"kind": ["first", "first", "last"], "name": ["Ann", "Eve", "Smith"],
    ...                   "group": ["Female White", "Female White", None], "race": ["White"] * 3,
    ...                   "race_share": [0.9, 0.8, 0.85], "sex_share": [0.99, 0.97, None],
    ...                   "ssa_births": [1000, 300, None], "frequency": [0.01, 0.002, 0.5]})
    >>> row = names_summary(t).iloc[0]
    >>> row["group"], int(row["first_names"]), int(row["surnames"]), float(row["race_share_min"])
    ('Female White', 2, 1, 0.8)
    >>> round(float(row["race_frequency_sum"]), 3), float(row["ssa_births_median"])
    (0.012, 650.0)
    """
    names = load_names() if names is None else names
    if not isinstance(names, pd.DataFrame):
        raise ValueError(f"names must be a pandas DataFrame, got {type(names).__name__}")
    missing = [c for c in _SUMMARY_COLUMNS if c not in names.columns]
    if missing:
        raise ValueError(f"names table lacks columns {missing}")
    first = names[names["kind"] == "first"]
    if first.empty:
        raise ValueError("names table has no first names (kind == 'first')")
    unknown = sorted(set(first["group"].astype(str)) - set(GROUPS))
    if unknown:
        raise ValueError(f"names table: unknown group {unknown}; known groups: {list(GROUPS)}")
    numeric = ["race_share", "sex_share", "ssa_births", "frequency"]
    for col in numeric:
        bad = first.loc[first[col].isna(), "name"]
        if len(bad):
            raise ValueError(f"names table: column {col!r} is missing for first names {bad.tolist()[:5]}")
    values = first[["group", *numeric]].astype({c: float for c in numeric}).astype({"group": str})
    agg = values.groupby("group").agg(
        first_names=("race_share", "size"),
        race_share_min=("race_share", "min"),
        race_share_median=("race_share", "median"),
        sex_share_min=("sex_share", "min"),
        ssa_births_median=("ssa_births", "median"),
        race_frequency_sum=("frequency", "sum"),
    )
    agg = agg.reindex([g for g in GROUPS if g in agg.index])
    surnames = names.loc[names["kind"] == "last", "race"].astype(str).value_counts()
    out = agg.reset_index()
    out.insert(1, "gender", out["group"].str.split(" ").str[0])
    out.insert(2, "race", out["group"].str.split(" ").str[1])
    out.insert(4, "surnames", out["race"].map(surnames).fillna(0).astype(int).to_numpy())
    out["first_names"] = out["first_names"].astype(int)
    return out


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def card_path(card: str | Path) -> Path:
    """The file of a data card: an absolute path as it is; a relative one names a card shipped with the package
    (``"names.md"``, ``"jobs/README.md"``) if there is one, else a card under :func:`data_dir`
    (``"essays_demo/README.md"``).

    >>> card_path("jobs/README.md").parent.name, card_path("essays_demo/README.md").parent.name
    ('jobs', 'essays_demo')
    """
    path = Path(card)
    if path.is_absolute():
        return path
    own = resources_dir() / path
    return own if own.is_file() else data_dir() / path


def _card_lines(card: str | Path) -> tuple[Path, list[str], list[tuple[int, int, str]]]:
    """The card's lines and its headings (line index, level, text), skipping fenced code blocks."""
    path = card_path(card)
    if not path.is_file():
        raise ValueError(f"data card not found: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    headings, fenced = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            headings.append((i, len(match.group(1)), match.group(2)))
    return path, lines, headings


def card_section(card: str | Path, heading: str | None = None) -> str:
    """The text of one section of a data card (Markdown), without its heading line.

    ``card`` is a card's name (``"names.md"``, ``"jobs/README.md"``: see :func:`card_path`) or an absolute path.
    ``heading`` is a heading's text without the ``#`` marks (``"Cross-check"``); the section runs to the
    next heading of the same or a higher level (``#`` count <= its own), so it includes its subsections.
    ``heading=None`` gives the card's lead: the text between the title and the first other heading.
    Headings inside fenced code blocks are ignored. ``ValueError`` names a missing card, or a heading
    that is absent (listing the card's headings) or occurs twice.

    >>> card_section("names.md", "Limits").splitlines()[0].startswith("- Names signal race and sex")
    True
    """
    path, lines, headings = _card_lines(card)
    if heading is None:
        if not headings:
            return "\n".join(lines).strip()
        start = headings[0][0] + 1
        end = headings[1][0] if len(headings) > 1 else len(lines)
        return "\n".join(lines[start:end]).strip()
    found = [(i, h) for i, h in enumerate(headings) if h[2] == heading.strip()]
    if len(found) != 1:
        problem = "has no heading" if not found else f"has {len(found)} headings"
        known = "; ".join(h[2] for h in headings)
        raise ValueError(f"data card {path.name} {problem} {heading!r} (headings: {known})")
    k, (line, level, _) = found[0]
    end = next((h[0] for h in headings[k + 1 :] if h[1] <= level), len(lines))
    return "\n".join(lines[line + 1 : end]).strip()


def card_bullets(card: str | Path, heading: str | None = None) -> list[str]:
    """The top-level bullet items (``- ...`` at the start of a line) of a data card section, one string each.

    A bullet's indented continuation lines are joined to it with single spaces; nested bullets belong to
    their parent item. Arguments as in :func:`card_section`.

    >>> bullets = card_bullets("names.md", "Limits")
    >>> len(bullets), bullets[0].startswith("Names signal race and sex only statistically")
    (3, True)
    """
    items: list[list[str]] = []
    current: list[str] | None = None
    for line in card_section(card, heading).splitlines():
        if line.startswith("- "):
            current = [line[2:].strip()]
            items.append(current)
        elif current is not None and line[:1].isspace() and line.strip():
            current.append(line.strip())
        else:
            current = None
    return [" ".join(parts) for parts in items]


# ----------------------------------------------------------------------------------------------------------------
# ELLIPSE: real English-learner essays with human scores and their writers' demographics
# ----------------------------------------------------------------------------------------------------------------
#: Groupings of the ELLIPSE writers (a column of :func:`load_ellipse`) and the categories each keeps as groups.
#: Race/ethnicity keeps the four categories with more than 100 writers (Two or more races/Other: 10 writers,
#: American Indian/Alaskan Native: 4 are too few for a selection rate and are left out of that grouping only).
ELLIPSE_GROUPINGS: dict[str, tuple[str, ...]] = {
    "race_ethnicity": ("White", "Hispanic/Latino", "Asian/Pacific Islander", "Black/African American"),
    "gender": ("Male", "Female"),
    "SES": ("Not economically disadvantaged", "Economically disadvantaged"),
}
#: The reference group of each grouping: the group that US test-score gaps are conventionally measured from
#: (White; not economically disadvantaged) and, for gender, men, as in the résumé task.
ELLIPSE_REFERENCE_GROUPS: dict[str, str] = {
    "race_ethnicity": "White", "gender": "Male", "SES": "Not economically disadvantaged",
}
_ELLIPSE_SOURCE_COLUMNS = ("text_id_kaggle", "prompt", "full_text", "Overall", "gender", "race_ethnicity", "SES",
                           "grade")
#: Essays of the study's ELLIPSE sample: every Black, White and Asian/Pacific Islander writer's essay, plus essays
#: of the other writers drawn within each prompt (stratified) up to this many.
ELLIPSE_STUDY_SIZE = 1000


def load_ellipse(sample: str = "study", seed: int = 0, path: str | Path | None = None) -> pd.DataFrame:
    """The ELLIPSE test split (``data/essays/ellipse.csv``: 2,571 essays by English learners in grades 8-12,
    Crossley et al. 2023, CC BY-NC-SA 4.0), in the essay table shape of the study.

    Columns: :data:`ESSAY_COLUMNS` — ``essay_id`` (the source's ``text_id_kaggle``), ``topic`` (its writing
    ``prompt``, one of 44), ``group`` (the writer's race/ethnicity), ``rating`` (the human holistic score
    ``Overall``, 1-5 in half points), ``qualified`` and ``text`` — plus the writer's ``gender``, ``race_ethnicity``,
    ``SES`` and ``grade``, and ``order`` (the position in the scoring order).

    ``qualified`` is ``rating >= the median rating of the essay's prompt`` over all 2,571 essays (the paper's rule:
    at or above the 50th percentile of the topic), so an essay scored exactly at its prompt's median counts as
    qualified; with half-point scores many essays tie there, which puts more than half of most prompts above the
    line.

    ``sample``:

    * ``"study"`` — the :data:`ELLIPSE_STUDY_SIZE` essays the study scores: all essays of Black, White and
      Asian/Pacific Islander writers (689) and, from the other writers, a sample stratified by prompt (each prompt
      contributes in proportion to its number of such essays, largest remainders first) to reach 1,000;
    * ``"all"`` — all 2,571 essays.

    Rows come in a seeded random order (``order``), the order in which they are scored, so any prefix of a scoring
    run is a random subset of the sample (not, say, the first prompts alphabetically).

    >>> e = load_ellipse()
    >>> len(e), e["topic"].nunique() > 30, int(e["group"].isin(["White", "Black/African American"]).sum())
    (1000, True, 379)
    >>> bool((e["rating"] >= e.groupby("topic")["rating"].transform("min")).all())
    True
    """
    if sample not in ("study", "all"):
        raise ValueError(f"sample must be 'study' or 'all', got {sample!r}")
    required = path is None  # a path the caller names is their own table
    path = Path(path) if path is not None else data_dir() / "essays" / "ellipse.csv"
    if not path.exists():
        raise ValueError(f"ELLIPSE essays not found: {path} (regenerate with scripts/fetch_ellipse.py)")
    raw = datasets.read_csv(path, required=required,
                            dtype={"text_id_kaggle": str, "prompt": str, "full_text": str, "gender": str,
                                   "race_ethnicity": str, "SES": str})
    missing = [c for c in _ELLIPSE_SOURCE_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"ELLIPSE file {path} lacks columns {missing}")
    if raw["text_id_kaggle"].duplicated().any():
        dup = raw.loc[raw["text_id_kaggle"].duplicated(), "text_id_kaggle"].tolist()[:5]
        raise ValueError(f"ELLIPSE file {path}: repeated text_id_kaggle {dup}")
    ratings = pd.to_numeric(raw["Overall"], errors="coerce")
    bad = raw.loc[ratings.isna() | (ratings < 1) | (ratings > 5), "text_id_kaggle"].tolist()
    if bad:
        raise ValueError(f"ELLIPSE file {path}: column 'Overall' is missing or outside 1-5 for essays {bad[:5]}")
    essays = pd.DataFrame({
        "essay_id": raw["text_id_kaggle"].str.strip(),
        "topic": raw["prompt"].str.strip(),
        "group": raw["race_ethnicity"],
        "rating": ratings.astype(float),
        "qualified": _qualified(ratings.astype(float), raw["prompt"].str.strip()),
        "text": raw["full_text"].str.strip(),
        "gender": raw["gender"],
        "race_ethnicity": raw["race_ethnicity"],
        "SES": raw["SES"],
        "grade": raw["grade"],
    })
    rng = np.random.default_rng([seed, 2571])
    if sample == "study":
        kept = essays["group"].isin(["Black/African American", "White", "Asian/Pacific Islander"])
        rest = essays[~kept]
        need = ELLIPSE_STUDY_SIZE - int(kept.sum())
        per_prompt = rest.groupby("topic").size()
        quota = per_prompt * need / len(rest)
        take = np.floor(quota).astype(int)
        remainder = (quota - take).sort_values(ascending=False, kind="stable")
        take[remainder.index[: need - int(take.sum())]] += 1
        drawn = [rest.index[rest["topic"] == t][rng.permutation(int((rest["topic"] == t).sum()))[:n]]
                 for t, n in take.items()]
        essays = essays.loc[np.sort(np.concatenate([essays.index[kept], *drawn]))]
    order = rng.permutation(len(essays))
    essays = essays.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    essays.insert(len(essays.columns), "order", np.arange(len(essays)))
    return essays
