"""Where things live: the bundled data, the user's cache, the repositories root."""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_data_dir() -> Path:
    """data/ of a source checkout, else the copy installed beside the package as `atlas_data`."""
    checkout = PACKAGE_DIR.parent / "data"
    if (checkout / "questions.yaml").is_file():
        return checkout
    installed = PACKAGE_DIR.parent / "atlas_data"
    return installed


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    env = os.environ.get("ATLAS_DATA")
    return Path(env) if env else bundled_data_dir()


def cache_dir() -> Path:
    env = os.environ.get("ATLAS_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ascend-atlas"


def repos_root(explicit: str | os.PathLike | None = None, data: Path | None = None) -> Path:
    """Root of local clones: --repos, else $ATLAS_REPOS, else repos/ beside data/."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("ATLAS_REPOS")
    if env:
        return Path(env)
    base = (data or bundled_data_dir()).resolve().parent
    return base / "repos"
