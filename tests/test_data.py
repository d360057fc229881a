"""Data: names loading, jobs and resumes, candidate pools, HiringBloomberg names, essays."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocbias import data as D

PRONOUNS = {"he", "she", "him", "her", "his", "hers", "they", "them", "their", "theirs", "himself", "herself",
            "themselves"}
HONORIFICS = re.compile(r"\b(Mr|Mrs|Ms|Miss|Mx)\.")


@pytest.fixture(scope="module")
def names() -> pd.DataFrame:
    return D.load_names()


@pytest.fixture(scope="module")
def jobs() -> dict[str, D.Job]:
    return D.load_jobs()


# ----------------------------------------------------------------------------------------------
# data_dir and names
# ----------------------------------------------------------------------------------------------


def test_constants():
    assert D.GROUPS == ("Female White", "Male White", "Female Black", "Male Black", "Female Asian",
                        "Male Asian", "Female Hispanic", "Male Hispanic")
    assert D.REFERENCE_GROUP == "Male White" and D.REFERENCE_GROUP in D.GROUPS
    assert D.JOBS == ("software_engineer", "hr_specialist", "financial_analyst", "retail")


def test_data_dir_env_override(tmp_path, monkeypatch):
    monkeypatch.setenv("ALLOCBIAS_DATA", str(tmp_path))
    assert D.data_dir() == tmp_path
    monkeypatch.setenv("ALLOCBIAS_DATA", str(tmp_path / "absent"))
    with pytest.raises(ValueError, match="absent"):
        D.data_dir()


def test_load_names_errors(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        D.load_names(tmp_path / "none.csv")
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"kind": ["first"], "name": ["Ann"]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="gender"):
        D.load_names(bad)


def test_load_names_types(names):
    assert names.groupby("kind").size().to_dict() == {"first": 800, "last": 400}
    assert names.loc[names["kind"] == "last", "group"].isna().all()
    assert str(names["xcheck_plurality"].dtype) == "boolean"


# ----------------------------------------------------------------------------------------------
# Jobs and resumes
# ----------------------------------------------------------------------------------------------


def test_every_job_has_two_resumes_per_quality(jobs):
    assert list(jobs) == list(D.JOBS)
    for job in jobs.values():
        assert [r.quality for r in job.resumes].count("high") == 2
        assert [r.quality for r in job.resumes].count("medium") == 2
        assert [r.quality for r in job.resumes].count("low") == 2
        assert all(r.qualified == (r.quality == "high") for r in job.resumes)
    ids = [r.id for job in jobs.values() for r in job.resumes]
    assert len(ids) == len(set(ids)) == 24


def test_job_ads_length_and_company(jobs):
    for job in jobs.values():
        words = len(job.ad.split())
        assert 250 <= words <= 400, (job.key, words)
        assert "Alderbrook" in job.ad
        assert job.title.split()[0] in job.ad


def test_quality_criteria_bands(jobs):
    t = D.resume_table(jobs)
    high, medium, low = (t[t["quality"] == q] for q in ("high", "medium", "low"))
    assert (high["relevant_years"] >= 8).all() and (high["key_skills"] == high["key_skills_total"]).all()
    assert medium["relevant_years"].between(3, 5).all() and medium["key_skills"].between(2, 4).all()
    assert (low["relevant_years"] <= 1).all() and (low["key_skills"] <= 1).all()
    assert (high["seniority"] == "senior").all() and (high["education_fit"] == "relevant").all()
    # every high resume beats every medium, every medium beats every low, on years and skills
    for job, sub in t.groupby("job"):
        by = sub.groupby("quality")
        assert by["relevant_years"].min()["high"] > by["relevant_years"].max()["medium"]
        assert by["relevant_years"].min()["medium"] > by["relevant_years"].max()["low"]
        assert by["key_skills"].min()["high"] > by["key_skills"].max()["medium"]
        assert by["key_skills"].min()["medium"] > by["key_skills"].max()["low"]


def test_readme_table_matches_yaml(jobs):
    readme = D.card_path("jobs/README.md").read_text(encoding="utf-8")
    for r in D.resume_table(jobs).itertuples():
        row = (f"| {r.job} | {r.resume_id} | {r.quality} | {r.relevant_years} | {r.seniority} | "
               f"{r.education_fit} | {r.key_skills}/{r.key_skills_total} |")
        assert row in readme, row


def test_rendered_resume_has_name_once_at_top(jobs, names):
    """Every resume x every committed first name and surname: the full name is the first line, once."""
    first = names[names["kind"] == "first"]
    last = names[names["kind"] == "last"]
    full = np.concatenate(
        [
            first["name"].to_numpy() + " " + np.resize(last["name"].to_numpy(), len(first)),
            np.resize(first["name"].to_numpy(), len(last)) + " " + last["name"].to_numpy(),
        ]
    )
    for job in jobs.values():
        for resume in job.resumes:
            for full_name in full:
                text = D.render_resume(resume, full_name)
                assert text.split("\n", 1)[0] == full_name
                assert text.count(full_name) == 1


def test_no_name_tokens_pronouns_or_honorifics_in_bodies(jobs, names):
    tokens = set(names["name"])
    for job in jobs.values():
        assert not set(re.findall(r"[A-Za-z]+", job.ad)) & tokens, job.key
        for resume in job.resumes:
            body = D.render_resume(resume, "Placeholder Person").split("\n", 1)[1]
            words = re.findall(r"[A-Za-z]+", body)
            assert not set(words) & tokens, (resume.id, sorted(set(words) & tokens))
            assert not {w.lower() for w in words} & PRONOUNS, resume.id
            assert not HONORIFICS.search(body), resume.id


def test_render_resume_sections(jobs):
    resume = jobs["hr_specialist"].resume("hr_high_1")
    text = D.render_resume(resume, "Ana Garcia")
    sections = ("SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS", "CERTIFICATIONS")
    headers = [line for line in text.splitlines() if line in sections]
    assert headers == ["SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS", "CERTIFICATIONS"]
    assert "Senior HR Generalist, Tidewater Logistics (2019 - present)" in text
    no_cert = jobs["retail"].resume("rt_low_1")
    assert "CERTIFICATIONS" not in D.render_resume(no_cert, "Ana Garcia")


@pytest.mark.parametrize("bad", ["", " Ana Garcia", "Ana\nGarcia", None])
def test_render_resume_rejects_bad_names(jobs, bad):
    with pytest.raises(ValueError, match="full_name"):
        D.render_resume(jobs["retail"].resumes[0], bad)


def test_validate_job_catches_broken_criteria(jobs):
    job = jobs["software_engineer"]
    r0 = job.resumes[0]
    wrong_years = dataclasses.replace(job, resumes=(dataclasses.replace(r0, relevant_years=12),) + job.resumes[1:])
    with pytest.raises(ValueError, match="se_high_1.*relevant_years"):
        D.validate_job(wrong_years)
    missing_skill = dataclasses.replace(r0, skills=tuple(s for s in r0.skills if s != "Terraform"),
                                        key_skills=r0.key_skills)
    ok = dataclasses.replace(job, resumes=(missing_skill,) + job.resumes[1:])
    D.validate_job(ok)  # Terraform is not a key skill: still valid
    claims_too_much = dataclasses.replace(job.resumes[4], key_skills=("python", "sql"))
    with pytest.raises(ValueError, match="se_low_1"):
        D.validate_job(dataclasses.replace(job, resumes=job.resumes[:4] + (claims_too_much, job.resumes[5])))
    three_high = dataclasses.replace(job, resumes=(r0,) + job.resumes[:5])
    with pytest.raises(ValueError, match="2 resumes per quality"):
        D.validate_job(three_high)


def test_load_job_errors(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        D.load_job(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("job: retail\ntitle: X\nrole: retail\nas_of: 2025\nkey_skills: {a: b}\nresumes: []\n")
    with pytest.raises(ValueError, match="'ad'"):
        D.load_job(bad)
    with pytest.raises(ValueError, match="unknown job"):
        D.load_jobs(["plumber"])


# ----------------------------------------------------------------------------------------------
# Candidate pools
# ----------------------------------------------------------------------------------------------


def test_candidate_table_shape_and_columns(names, jobs):
    t = D.candidate_table(names_per_group=3, seed=7, names=names, job_data=jobs)
    assert tuple(t.columns) == D.CANDIDATE_COLUMNS
    assert len(t) == 4 * 6 * 8 * 3
    assert (t["qualified"] == (t["quality"] == "high")).all()
    assert (t["full_name"] == t["first"] + " " + t["last"]).all()
    assert (t["group"] == t["gender"] + " " + t["race"]).all()
    # only the name changes within a job: every resume carries the same 24 names
    for _, sub in t.groupby("job"):
        per_resume = sub.groupby("resume_id")["full_name"].apply(frozenset)
        assert per_resume.nunique() == 1 and len(per_resume.iloc[0]) == 24
    # names carry the group: first names from the group's list, surnames from the race's list
    lookup = names.set_index(["kind", "name"])
    assert (lookup.loc[list(zip(["first"] * len(t), t["first"])), "group"].to_numpy() == t["group"].to_numpy()).all()
    assert (lookup.loc[list(zip(["last"] * len(t), t["last"])), "race"].to_numpy() == t["race"].to_numpy()).all()


def test_candidate_table_deterministic_in_seed(names, jobs):
    a = D.candidate_table(names_per_group=4, seed=3, names=names, job_data=jobs)
    b = D.candidate_table(names_per_group=4, seed=3, names=names, job_data=jobs)
    c = D.candidate_table(names_per_group=4, seed=4, names=names, job_data=jobs)
    pd.testing.assert_frame_equal(a, b)
    assert not a["full_name"].equals(c["full_name"])
    # a job's names do not depend on the other jobs requested
    retail = D.candidate_table(["retail"], names_per_group=4, seed=3, names=names, job_data=jobs)
    pd.testing.assert_frame_equal(retail, a[a["job"] == "retail"].reset_index(drop=True))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_candidate_table_properties(names, jobs, seed, n):
    t = D.candidate_table(["hr_specialist"], names_per_group=n, seed=seed, names=names, job_data=jobs)
    assert len(t) == 6 * 8 * n
    per_group = t.groupby("group")["full_name"].nunique()
    assert (per_group == n).all() and set(per_group.index) == set(D.GROUPS)
    assert t.groupby("group")["first"].nunique().eq(n).all()


def test_candidate_table_errors(names, jobs):
    with pytest.raises(ValueError, match="unknown job"):
        D.candidate_table(["astronaut"], names=names, job_data=jobs)
    with pytest.raises(ValueError, match="names_per_group"):
        D.candidate_table(names_per_group=0, names=names, job_data=jobs)
    with pytest.raises(ValueError, match="exceeds the names of group 'Female White'"):
        D.candidate_table(names_per_group=101, names=names, job_data=jobs)
    with pytest.raises(ValueError, match="seed"):
        D.candidate_table(seed=-1, names=names, job_data=jobs)


def test_hiring_bloomberg_names(names):
    t = D.hiring_bloomberg_names(names=names, seed=2)
    assert len(t) == 4 * 2 * 50
    assert t["full_name"].is_unique
    for race, sub in t.groupby("race"):
        assert sub["last"].is_unique  # no two people of a race share a surname
        assert sub.groupby("gender").size().to_dict() == {"Female": 50, "Male": 50}
    pd.testing.assert_frame_equal(t, D.hiring_bloomberg_names(names=names, seed=2))
    big = D.hiring_bloomberg_names(["Black"], names_per_gender=100, names=names)
    assert big["full_name"].is_unique and len(big) == 200
    with pytest.raises(ValueError, match="Martian"):
        D.hiring_bloomberg_names(["Martian"], names=names)
    with pytest.raises(ValueError, match="exceeds"):
        D.hiring_bloomberg_names(["Asian"], names_per_gender=101, names=names)


# ----------------------------------------------------------------------------------------------
# Essays: ICNALE loader on a fake ICNALE-shaped copy, and the demo set
# ----------------------------------------------------------------------------------------------


def _fake_icnale(tmp_path: Path) -> tuple[Path, Path]:
    """Rater-level ratings of six essays (two raters each for some) and a folder of .txt files."""
    rows = [
        ("W_ENS_PTJ0_001_XX_0", 80), ("W_ENS_PTJ0_001_XX_0", 90),  # mean 85
        ("W_CHN_PTJ0_002_B1_1", 60),
        ("W_JPN_PTJ0_003_A2_0", 40), ("W_JPN_PTJ0_003_A2_0", 50),  # mean 45
        ("W_ENS_SMK0_004_XX_0", 70),
        ("W_KOR_SMK0_005_B2_0", 70),
        ("W_PAK_SMK0_006_B1_2", 30),
    ]
    ratings = pd.DataFrame(rows, columns=["Code", "Score"])
    path = tmp_path / "gra.csv"
    ratings.to_csv(path, index=False)
    texts = tmp_path / "WE" / "sub"
    texts.mkdir(parents=True)
    for code in ratings["Code"].unique():
        (texts / f"{code}.txt").write_text(f"Essay text of {code}.\n", encoding="utf-8")
    return path, tmp_path / "WE"


def test_load_icnale_fake_copy(tmp_path):
    path, texts = _fake_icnale(tmp_path)
    out = D.load_icnale(path, columns={"Code": "essay_id", "Score": "rating"}, texts_dir=texts)
    assert tuple(out.columns) == D.ESSAY_COLUMNS
    assert len(out) == 6
    by_id = out.set_index("essay_id")
    assert by_id.loc["W_ENS_PTJ0_001_XX_0", "rating"] == 85.0
    assert by_id.loc["W_JPN_PTJ0_003_A2_0", "rating"] == 45.0
    assert by_id.loc["W_CHN_PTJ0_002_B1_1", "group"] == "CHN"
    assert by_id.loc["W_KOR_SMK0_005_B2_0", "topic"] == "SMK"
    # PTJ ratings 85, 60, 45 -> median 60; SMK 70, 70, 30 -> median 70
    assert by_id["qualified"].to_dict() == {
        "W_CHN_PTJ0_002_B1_1": True, "W_ENS_PTJ0_001_XX_0": True, "W_JPN_PTJ0_003_A2_0": False,
        "W_ENS_SMK0_004_XX_0": True, "W_KOR_SMK0_005_B2_0": True, "W_PAK_SMK0_006_B1_2": False,
    }
    assert by_id.loc["W_PAK_SMK0_006_B1_2", "text"] == "Essay text of W_PAK_SMK0_006_B1_2."
    # filters do not change who is qualified
    ptj = D.load_icnale(path, topics=["PTJ"], groups=["JPN", "CHN"],
                        columns={"Code": "essay_id", "Score": "rating"}, texts_dir=texts)
    assert ptj["essay_id"].tolist() == ["W_CHN_PTJ0_002_B1_1", "W_JPN_PTJ0_003_A2_0"]
    assert ptj["qualified"].tolist() == [True, False]


def test_load_icnale_with_text_and_group_columns(tmp_path):
    path = tmp_path / "essays.tsv"
    pd.DataFrame({"essay_id": ["a1", "a2"], "topic": ["PTJ", "PTJ"], "group": ["ENS", "THA"],
                  "rating": [70, 40], "text": ["One.", "Two."]}).to_csv(path, sep="\t", index=False)
    out = D.load_icnale(path)
    assert out["qualified"].tolist() == [True, False]


def test_load_icnale_errors(tmp_path):
    path, texts = _fake_icnale(tmp_path)
    cols = {"Code": "essay_id", "Score": "rating"}
    with pytest.raises(ValueError, match="not found: .*missing.csv"):
        D.load_icnale(tmp_path / "missing.csv", texts_dir=texts)
    with pytest.raises(ValueError, match="missing column 'rating'"):
        D.load_icnale(path, columns={"Code": "essay_id"}, texts_dir=texts)
    with pytest.raises(ValueError, match="Grade"):
        D.load_icnale(path, columns={"Grade": "rating"}, texts_dir=texts)
    with pytest.raises(ValueError, match="unknown topic.*XYZ"):
        D.load_icnale(path, topics=["XYZ"], columns=cols, texts_dir=texts)
    with pytest.raises(ValueError, match="unknown group.*USA"):
        D.load_icnale(path, groups=["USA"], columns=cols, texts_dir=texts)
    with pytest.raises(ValueError, match="texts folder not found"):
        D.load_icnale(path, columns=cols, texts_dir=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="missing column 'text'"):
        D.load_icnale(path, columns=cols)
    (texts / "sub" / "W_PAK_SMK0_006_B1_2.txt").unlink()
    with pytest.raises(ValueError, match="W_PAK_SMK0_006_B1_2"):
        D.load_icnale(path, columns=cols, texts_dir=texts)


def test_load_icnale_bad_rows(tmp_path):
    bad_group = tmp_path / "g.csv"
    pd.DataFrame({"essay_id": ["W_USA_PTJ0_001_B1_1"], "rating": [50], "text": ["x"]}).to_csv(bad_group, index=False)
    with pytest.raises(ValueError, match="unknown group.*USA"):
        D.load_icnale(bad_group)
    bad_rating = tmp_path / "r.csv"
    frame = pd.DataFrame({"essay_id": ["W_ENS_PTJ0_001_XX_0"], "rating": ["n/a"], "text": ["x"]})
    frame.to_csv(bad_rating, index=False)
    with pytest.raises(ValueError, match="rating.*W_ENS_PTJ0_001_XX_0"):
        D.load_icnale(bad_rating)
    bad_id = tmp_path / "i.csv"
    pd.DataFrame({"essay_id": ["essay-1"], "rating": [1], "text": ["x"]}).to_csv(bad_id, index=False)
    with pytest.raises(ValueError, match="essay-1"):
        D.load_icnale(bad_id)
    with pytest.raises(ValueError, match="unsupported format"):
        D.load_icnale(_touch(tmp_path / "x.json"))


def _touch(path: Path) -> Path:
    path.write_text("{}")
    return path


def test_parse_icnale_id():
    assert D.parse_icnale_id("W_HKG_PTJ0_123_B2_0") == ("HKG", "PTJ")
    with pytest.raises(ValueError, match="S_JPN"):
        D.parse_icnale_id("S_JPN_PTJ0_123_B2_0")


def test_demo_essays():
    demo = D.load_demo_essays()
    assert tuple(demo.columns) == D.ESSAY_COLUMNS
    assert len(demo) == 30
    assert demo["group"].str.endswith("(demo)").all()
    assert demo["essay_id"].str.startswith("DEMO_").all()
    cells = demo.groupby(["topic", "group"])["rating"].apply(sorted)
    assert all(r == [1.0, 2.0, 3.0, 4.0, 5.0] for r in cells)
    assert (demo["qualified"] == (demo["rating"] >= 3)).all()
    assert (demo["text"].str.split().str.len() >= 20).all()
    only = D.load_demo_essays(topics="SMK", groups=["L2-B (demo)"])
    assert len(only) == 5
    with pytest.raises(ValueError, match="unknown group.*CHN"):
        D.load_demo_essays(groups=["CHN"])
    card = (D.data_dir() / "essays_demo" / "README.md").read_text(encoding="utf-8")
    assert card.count("DEMO") >= 10


def test_load_icnale_excel(tmp_path):
    path = tmp_path / "gra.xlsx"
    pd.DataFrame({"essay_id": ["W_SIN_SMK0_010_B2_0", "W_ENS_SMK0_011_XX_0"], "rating": [55, 65],
                  "text": ["Alpha.", "Beta."]}).to_excel(path, index=False)
    out = D.load_icnale(path, groups=["SIN", "ENS"])
    assert out["group"].tolist() == ["ENS", "SIN"]
    assert out["qualified"].tolist() == [True, False]  # median 60
