"""Where the library finds its files: the files it ships, and the study's data folder.

Two places, kept apart on purpose:

* :func:`shipped`: files inside the installed package (``allocbias/resources/``, read through
  :mod:`importlib.resources`), everything the commands ``allocbias audit`` and ``allocbias ll144`` need — the names
  table and its card (``names.csv``, ``names.md``), the job ads and résumés (``jobs/``), the audit report template
  (``audit_report.ipynb``) and the example files of ``allocbias ll144`` (``ll144_example/``). They travel in the
  wheel, so an installed tool finds them with no checkout in sight.
* :func:`data_dir`: the book's own data (committed score tables, the public data sets, the papers' tables), in the
  checkout's ``data/`` folder or ``$ALLOCBIAS_DATA``; an installed tool never needs it.

Both :mod:`allocbias.audited.data` and :mod:`allocbias.audited.datasets` import this module; it imports neither.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["data_dir", "has_data_dir", "repo_root", "resources_dir", "shipped"]


def resources_dir() -> Path:
    """The folder of the files shipped inside the package (``allocbias/resources``).

    >>> (resources_dir() / "audit_report.ipynb").is_file()
    True
    """
    folder = resources.files("allocbias").joinpath("resources")
    if not isinstance(folder, Path):  # a zipped install: every supported installer unpacks wheels
        raise ValueError(f"allocbias is installed as an archive ({folder}); install it unpacked (pip install)")
    return folder


def shipped(*parts: str) -> Path:
    """A file or folder shipped with the package, ``resources_dir() / parts``; ``ValueError`` if it is absent.

    >>> shipped("names.csv").name, shipped("jobs").is_dir()
    ('names.csv', True)
    """
    path = resources_dir().joinpath(*parts)
    if not path.exists():
        raise ValueError(f"allocbias ships no {'/'.join(parts)} (looked in {resources_dir()})")
    return path


def _default_data_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "data"


def data_dir() -> Path:
    """Folder of the study's own data files (score tables, public data sets, the papers' tables).

    ``$ALLOCBIAS_DATA`` if set, else ``<repository>/data`` (this file is
    ``<repository>/lib/allocbias/audited/locations.py``; the package is installed editable, so the repository is
    three levels up). An installed wheel has none: ``ValueError`` says so.

    >>> (data_dir() / "bloomberg").is_dir()
    True
    """
    env = os.environ.get("ALLOCBIAS_DATA")
    path = Path(env) if env else _default_data_dir()
    if not path.is_dir():
        source = "ALLOCBIAS_DATA" if env else "the repository's data/ folder"
        raise ValueError(f"data folder not found: {path} (from {source}); the book's data is in a checkout of "
                         "allocbias, and the commands audit and ll144 do not need it")
    return path


def has_data_dir() -> bool:
    """Whether :func:`data_dir` finds a folder (False for a tool installed from a wheel, without a checkout).

    >>> has_data_dir()
    True
    """
    try:
        data_dir()
    except ValueError:
        return False
    return True


def repo_root() -> Path:
    """The repository root: ``$ALLOCBIAS_ROOT`` if set, else the folder holding ``_toc.yml`` above this file."""
    env = os.environ.get("ALLOCBIAS_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "_toc.yml").exists() and (parent / "lib" / "allocbias").exists():
            return parent
    raise FileNotFoundError(
        f"cannot find the allocbias repository root above {here}; set ALLOCBIAS_ROOT to the folder with _toc.yml"
    )
