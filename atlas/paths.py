"""Where things live: the data folder, the clones, the user's cache and data directory.

The rule (docs/folders.md), first match wins:

1. `--data` / `--repos`, then `$ATLAS_DATA` / `$ATLAS_REPOS`: exactly those folders;
2. in a checkout of this project - a folder holding a `pyproject.toml` that names the project and
   a `data/atlas.yaml`, found from the working directory upwards - its `data/` and `repos/`;
3. elsewhere, the user data directory, `$XDG_DATA_HOME/ascend-atlas` (`~/.local/share/ascend-atlas`
   when unset), with the same `data/` and `repos/` inside. `refresh` and `verify` (everything that
   writes data or clones) create its `data/` from the bundled data on first use; until then the
   other commands read the bundled data, which is never written to.

`repos/` is always the one beside the data folder in use, except beside the bundled data of an
installed package (it lives in site-packages): then it is the user data directory's.
A relative folder is made absolute against the working directory when it is resolved here, at
the start of a command, so that nothing later (a git child started elsewhere) reads it differently.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT = "ascend-atlas"
SEED_MARK = ".seeded-from"  # in a seeded data folder: where it was copied from and that data's digest
_PROJECT_NAME = r"""^\s*name\s*=\s*["']ascend-atlas["']\s*(#.*)?$"""  # compiled only when a pyproject is read


def _absolute(path: str | os.PathLike) -> Path:
    """`path` made absolute against the working directory (links and `..` kept as written)."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path))))


def _names_project(pyproject: Path) -> bool:
    """Whether `pyproject.toml`'s [project] table is this project (read without a TOML parser:
    this runs on every command, and tomllib's import alone costs more than the whole check)."""
    try:
        with open(pyproject, "rb") as fh:
            text = fh.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return False
    at = text.find("[project]")
    if at < 0:
        return False
    body = text[at + len("[project]"):]
    end = re.search(r"^\s*\[", body, re.M)
    return bool(re.search(_PROJECT_NAME, body[: end.start()] if end else body, re.M))


def checkout(start: str | os.PathLike | None = None) -> Path | None:
    """The checkout of this project that holds `start` (default: the working directory), or None."""
    try:
        here = _absolute(start if start is not None else os.getcwd())
    except OSError:  # the working directory was removed
        return None
    for folder in (here, *here.parents):
        if (folder / "data" / "atlas.yaml").is_file() and _names_project(folder / "pyproject.toml"):
            return folder
    return None


def bundled_data_dir() -> Path:
    """The data that came with the code: data/ of the source tree the package runs from, else the
    copy installed beside the package as `atlas_data`."""
    source = PACKAGE_DIR.parent / "data"
    if (source / "questions.yaml").is_file():
        return source
    return PACKAGE_DIR.parent / "atlas_data"


def _installed_data(folder: Path) -> bool:
    """Whether `folder` is the bundled data of an installed package (never written, no repos/ beside)."""
    return os.path.realpath(folder) == str(PACKAGE_DIR.parent / "atlas_data")


def user_dir() -> Path:
    """The user data directory (XDG): `$XDG_DATA_HOME/ascend-atlas`, else ~/.local/share/ascend-atlas."""
    base = os.environ.get("XDG_DATA_HOME")
    if not base or not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / PROJECT


class Chosen(NamedTuple):
    """A folder and why it was chosen: "--data", "$ATLAS_DATA", "checkout", "user" or "bundled"."""

    path: Path
    origin: str


def choose_data(explicit: str | os.PathLike | None = None) -> Chosen:
    """The data folder to read (see the module's rule), absolute."""
    if explicit:
        return Chosen(_absolute(explicit), "--data")
    env = os.environ.get("ATLAS_DATA")
    if env:
        return Chosen(_absolute(env), "$ATLAS_DATA")
    root = checkout()
    if root is not None:
        return Chosen(root / "data", "checkout")
    mine = user_dir() / "data"
    if (mine / "atlas.yaml").is_file():
        return Chosen(mine, "user")
    return Chosen(bundled_data_dir(), "bundled")


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The data folder to read: --data, $ATLAS_DATA, the checkout's, the user's, else the bundled one."""
    return choose_data(explicit).path


def repos_root(explicit: str | os.PathLike | None = None, data: Path | None = None) -> Path:
    """Root of local clones: --repos, else $ATLAS_REPOS, else repos/ beside the data folder (the
    user data directory's beside an installed package's bundled data)."""
    if explicit:
        return _absolute(explicit)
    env = os.environ.get("ATLAS_REPOS")
    if env:
        return _absolute(env)
    folder = _absolute(data) if data is not None else data_dir()
    if _installed_data(folder):
        return user_dir() / "repos"
    return folder.parent / "repos"


class Folders(NamedTuple):
    """The folders a command that writes data or reads clones works in, and a note for the user
    (the data folder was just created, or the bundled data changed since it was)."""

    data: Path
    repos: Path
    origin: str
    note: str = ""


def work_folders(data: str | os.PathLike | None = None, repos: str | os.PathLike | None = None) -> Folders:
    """The folders of `refresh` and `verify`: as `choose_data`, except that outside a checkout the
    user data directory's data/ is used, created from the bundled data on first use."""
    chosen = choose_data(data)
    note = ""
    if chosen.origin in ("user", "bundled"):
        from .seed import seed

        folder, note = seed(bundled_data_dir(), user_dir() / "data")
        chosen = Chosen(folder, "user")
    return Folders(chosen.path, repos_root(repos, chosen.path), chosen.origin, note)


def describe(folder: Path, origin: str) -> str:
    """`folder` with where it came from, for a command's summary line."""
    why = {"checkout": "the checkout's", "user": "the user data directory's", "bundled": "the bundled data",
           "--data": "--data", "$ATLAS_DATA": "$ATLAS_DATA", "--repos": "--repos", "$ATLAS_REPOS": "$ATLAS_REPOS"}
    return f"{folder} ({why.get(origin, origin)})"


def cache_dir() -> Path:
    from .cachefolder import cache_folder

    return Path(cache_folder())
