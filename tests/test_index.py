"""The compiled index: reused while data is unchanged, updated when content changes."""
from __future__ import annotations

import os

from atlas.index import compiled as index
from atlas.model import load
from atlas.paths import cache_dir


def test_cache_reused_and_invalidated(mini):
    first = index.load_atlas(mini)
    assert first.concept("bus-x").names.en == "Bus X"
    assert list(cache_dir().glob("store-*/*.sqlite"))
    f = mini / "concepts" / "x" / "bus-x.yaml"
    f.write_text(f.read_text().replace("Bus X", "Bus Ten"), encoding="utf-8")
    assert index.load_atlas(mini).concept("bus-x").names.en == "Bus Ten"


def test_touch_without_change_reads_nothing_again(mini, monkeypatch):
    index.load_atlas(mini)
    f = mini / "concepts" / "x" / "bus-x.yaml"
    os.utime(f, ns=(1, 1))
    calls = []
    real = load.read_file
    monkeypatch.setattr(load, "read_file", lambda *a, **k: calls.append(a) or real(*a, **k))
    index.load_atlas(mini)
    assert calls == []  # same content hash: nothing parsed again


def test_corrupt_cache_is_ignored(mini):
    index.load_atlas(mini)
    for f in cache_dir().glob("store-*/*.sqlite"):
        f.write_bytes(b"\x00garbage")
    assert index.load_atlas(mini).concept("lib-s").kind == "library"
