"""Shared fixtures: a private cache and user data directory per test session, and copies of the mini
fixture atlas."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini"
DATA = ROOT / "data"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path_factory.getbasetemp() / "atlas-cache"))
    monkeypatch.setenv("ATLAS_CACHE_STRICT", "1")  # a cache that fails three times raises, not falls back
    # outside a checkout refresh and verify create the user data directory: never the tester's own
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.getbasetemp() / "xdg-data"))
    monkeypatch.delenv("ATLAS_DATA", raising=False)


@pytest.fixture
def mini(tmp_path) -> Path:
    """A writable copy of tests/fixtures/mini."""
    dest = tmp_path / "data"
    shutil.copytree(MINI, dest)
    return dest


@pytest.fixture
def mini_atlas(mini):
    from atlas.index import load_atlas

    return load_atlas(mini)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
