"""The cache follows the code and the data folder, and files are replaced atomically.

The code tests run a copy of the package (as an installed one would be: its own folder on the
module path) in a subprocess, fill the cache, change the copy's source and run it again.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import atlas
from atlas.index import cache

PKG = Path(atlas.__file__).resolve().parent


@pytest.fixture
def installed(tmp_path):
    """A copy of the package in its own folder, and a function that runs its `atlas` command."""
    site = tmp_path / "site"
    shutil.copytree(PKG, site / "atlas", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(site), ATLAS_CACHE=str(tmp_path / "cache"))
    env.pop("ATLAS_DATA", None)

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True,
                              env=env, cwd=site)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run.package = site / "atlas"
    run.cache = tmp_path / "cache"
    return run


def _append(module: Path, code: str) -> None:
    module.write_text(module.read_text(encoding="utf-8") + "\n" + code, encoding="utf-8")


def test_changed_card_code_is_seen_at_once(installed, mini):
    before = json.loads(installed("query", "bus-x", "--format", "json", "--data", str(mini)))
    assert "edited" not in before
    assert list(installed.cache.glob("store-*/*.cards/bus-x.marshal"))  # the card store is filled
    _append(installed.package / "view/views.py",
            "_card = card\n\n\ndef card(*args, **kwargs):\n"
            "    return dict(_card(*args, **kwargs), edited=True)\n")
    after = json.loads(installed("query", "bus-x", "--format", "json", "--data", str(mini)))
    assert after == dict(before, edited=True)


def test_changed_vocabulary_reaches_the_sparql_store(installed, mini):
    q = "SELECT ?c WHERE { ?c a skos:Concept } ORDER BY ?c LIMIT 1"
    args = ("query", "--sparql", q, "--results", "json", "--data", str(mini))
    first = json.loads(installed(*args))["results"]["bindings"][0]["c"]["value"]
    assert not first.startswith("https://edited.invalid/")
    assert list(installed.cache.glob("sparql-*/current"))  # the on-disk SPARQL store
    _append(installed.package / "model/vocab.py",
            '_OLD, BASE = BASE, "https://edited.invalid/"\n'
            "PREFIXES = {k: v.replace(_OLD, BASE) for k, v in PREFIXES.items()}\n")
    second = json.loads(installed(*args))["results"]["bindings"][0]["c"]["value"]
    assert second.startswith("https://edited.invalid/id/concept/")


def test_identical_data_copies_keep_their_own_locations(tmp_path, mini):
    from atlas.opened import Opened
    from atlas.index.compiled import load_atlas

    a, b = tmp_path / "copy-a", tmp_path / "copy-b"
    shutil.copytree(mini, a)
    shutil.copytree(mini, b)
    assert Opened(b).cards.card("bus-x")["defined_at"].startswith("copy-b/")
    assert load_atlas(b).concept("bus-x").loc.file.startswith("copy-b/")
    assert Opened(a).cards.card("bus-x")["defined_at"].startswith("copy-a/")
    assert load_atlas(a).concept("bus-x").loc.file.startswith("copy-a/")


def test_code_key_is_remembered_and_follows_every_source(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    key = cache._sources_key(pkg)
    deep = pkg / "harvest" / "report.py"
    os.utime(deep, ns=(1, 1))                       # touched, same bytes: same key
    assert cache._sources_key(pkg) == key

    def no_hashing(*_a):
        raise AssertionError("hashed although no source changed")

    real = cache.digest_files
    monkeypatch.setattr(cache, "digest_files", no_hashing)
    assert cache._sources_key(pkg) == key              # remembered under the stat stamp
    monkeypatch.setattr(cache, "digest_files", real)
    deep.write_text(deep.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    assert cache._sources_key(pkg) != key


def test_atomic_write_keeps_the_mode_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    cache.atomic_write(target, "new 新")
    assert target.read_text(encoding="utf-8") == "new 新"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    fresh = tmp_path / "sub" / "fresh.bin"
    cache.atomic_write(fresh, b"\x00\x01")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.read_bytes() == b"\x00\x01" and stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(OSError):
        cache.atomic_write(folder, "cannot replace a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder", "out.txt", "sub"]
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["fresh.bin"]


def test_atomic_dir_is_all_or_nothing(tmp_path):
    target = tmp_path / "store"
    with pytest.raises(RuntimeError):
        with cache.atomic_dir(target) as tmp:
            (tmp / "a").write_text("1")
            raise RuntimeError("half way")
    assert list(tmp_path.iterdir()) == []
    with cache.atomic_dir(target) as tmp:
        (tmp / "a").write_text("1")
    with cache.atomic_dir(target) as tmp:           # written meanwhile by another process: kept
        (tmp / "a").write_text("2")
    assert [p.name for p in tmp_path.iterdir()] == ["store"] and (target / "a").read_text() == "1"


def test_damaged_cache_file_reads_as_a_miss(tmp_path):
    f = tmp_path / "x.marshal"
    assert cache.read(f) is None
    assert cache.write(f, {"a": [1, 2]}) and cache.read(f) == {"a": [1, 2]}
    f.write_bytes(b"\xffgarbage")
    assert cache.read(f) is None
