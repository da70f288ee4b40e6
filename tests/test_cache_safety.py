"""The cache verifies itself and cleans up after itself, with real files and real processes.

- Any damage to any cached file (a flipped byte, a truncation, a deletion, a same-size edit with
  its times put back) is a miss: the next answer is the right one, and nobody has to act.
- Readers running while the data changes see the old state or the new one, never a mix.
- Eviction never removes what a running process holds; `atlas cache` shows and clears the cache.
- Deleting the cache folder while a first query builds it costs speed, not the answer.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.index import cache, database as store
from atlas import commands

MINI = Path(__file__).resolve().parent / "fixtures" / "mini"
QUERIES = [("bus-x",), ("test", "repository"), ("lib-s",)]


def show(data: Path, words) -> str:
    result = commands.show(" ".join(words), "en", "json", data)
    return result.out


def _corrupt(path: Path, how: str, at: float) -> None:
    data = path.read_bytes()
    if how == "delete":
        path.unlink()
        return
    st_ = path.stat()
    if how == "flip" and data:
        i = int(at * len(data)) % len(data)
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1:])
    elif how == "truncate":
        path.write_bytes(data[:int(at * len(data))])
    elif how == "same-size" and data:
        i = int(at * len(data)) % len(data)
        path.write_bytes(data[:i] + (b"0" if data[i:i + 1] != b"0" else b"1") + data[i + 1:])
        os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # as cp -p or rsync -t leave it


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["flip", "truncate", "delete", "same-size"]),
       st.floats(0, 1, exclude_max=True), st.sampled_from(QUERIES))
def test_random_cache_corruption_is_a_miss(pick, how, at, words):
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(MINI, data)
        os.environ["ATLAS_CACHE"] = str(Path(tmp) / "cache")
        expected = [show(data, q) for q in QUERIES]  # fills the cache: index, cards, stamps
        files = sorted(p for p in Path(tmp, "cache").rglob("*") if p.is_file())
        _corrupt(files[pick % len(files)], how, at)
        assert show(data, words) == expected[QUERIES.index(words)]
        assert [show(data, q) for q in QUERIES] == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["flip", "same-size"]), st.floats(0, 1, exclude_max=True))
def test_any_byte_of_the_index_database_damaged_is_a_miss(how, at):
    """The database file, byte by byte: the seal (size, times, inode when its writer finished)
    sees the change, so no damaged page is ever read as if it were sound."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(MINI, data)
        os.environ["ATLAS_CACHE"] = str(Path(tmp) / "cache")
        expected = [show(data, q) for q in QUERIES]
        _corrupt(next(Path(tmp, "cache").glob("store-*/*.sqlite")), how, at)
        assert [show(data, q) for q in QUERIES] == expected


def test_damaged_generation_is_rebuilt_from_its_verified_parse_results(mini, monkeypatch):
    """A generation whose file no longer matches its seal is replaced by a new one that reuses
    the parse results whose checksums hold: only the file whose parse result was hit is read again."""
    import sqlite3

    from atlas.model import load

    before = show(mini, ("bus-x",)), show(mini, ("test", "repository"))
    db = next(store.entry_dir(mini.resolve()).glob("*.sqlite"))  # this folder's (the cache is the session's)
    con = sqlite3.connect(db)
    blob = con.execute("SELECT parsed.blob FROM parsed JOIN file ON file.sha = parsed.sha "
                       "WHERE file.rel = ?", (os.path.join("concepts", "x", "bus-x.yaml"),)).fetchone()[0]
    con.close()
    raw = db.read_bytes()
    at = raw.index(blob[8:40]) + 8  # a byte inside bus-x.yaml's parse result
    st_ = db.stat()
    with open(db, "r+b") as fh:  # changed in place, times put back: only ctime tells
        fh.seek(at)
        fh.write(bytes([raw[at] ^ 1]))
    os.utime(db, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    parsed = []
    real = load.read_file
    monkeypatch.setattr(load, "read_file", lambda *a, **k: parsed.append(str(a[1])) or real(*a, **k))
    assert (show(mini, ("bus-x",)), show(mini, ("test", "repository"))) == before  # a search reads the database
    assert parsed == [os.path.join("concepts", "x", "bus-x.yaml")]
    assert not db.exists()  # the damaged generation is gone; a new one is current


def test_an_edit_with_the_times_put_back_is_seen(mini):
    f = mini / "concepts" / "x" / "bus-x.yaml"
    assert json.loads(show(mini, ("bus-x",)))["names"]["en"] == "Bus X"
    st_ = f.stat()
    f.write_text(f.read_text(encoding="utf-8").replace("Bus X", "Bus Q"), encoding="utf-8")
    os.utime(f, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    assert f.stat().st_size == st_.st_size and f.stat().st_mtime_ns == st_.st_mtime_ns
    assert json.loads(show(mini, ("bus-x",)))["names"]["en"] == "Bus Q"


def test_two_edits_within_one_timestamp_tick_are_seen(mini):
    """The stamp of a file written just before it was taken proves nothing (git's racy rule)."""
    f = mini / "concepts" / "x" / "bus-x.yaml"
    text = f.read_text(encoding="utf-8")
    for name in ("Bus Q", "Bus R", "Bus S"):  # same size, written and read back at once
        f.write_text(text.replace("Bus X", name), encoding="utf-8")
        assert json.loads(show(mini, ("bus-x",)))["names"]["en"] == name


# ---------------------------------------------------------------------------------------------
# Real processes
# ---------------------------------------------------------------------------------------------

READER = r"""
import json, sys, time
from atlas.index.cards import open_store
data, rounds, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for _ in range(rounds):
    store = open_store(data)
    time.sleep(hold)  # a slow reader: the state it opened must not change under it
    bus, net = store.card("bus-x"), store.card("net-y")
    hit = [h["name"]["en"] for h in store.index.search.search("bus") if h["id"] == "bus-x"]
    print(json.dumps([bus["names"]["en"], "net-y" in json.dumps(bus["relations"]),
                      "bus-x" in json.dumps(net["relations"]), hit[:1], store.find("BT")]), flush=True)
"""
OLD = ["Bus X", True, True, ["Bus X"], None]
NEW = ["Bus Ten", False, False, ["Bus Ten"], "bus-x"]


def _env(**extra) -> dict:
    env = dict(os.environ, **extra)
    env.pop("ATLAS_CACHE_STRICT", None)
    return env


def _swap(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp~")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # one data change at once: the file is old or new


def test_concurrent_readers_see_the_old_state_or_the_new_one(mini):
    f = mini / "concepts" / "x" / "bus-x.yaml"
    old = f.read_text(encoding="utf-8")
    new = old.replace("Bus X", "Bus Ten").replace("[BX, ", "[BT, ").replace("target: net-y", "target: lib-c")
    show(mini, ("bus-x",))
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(mini), "12", str(hold)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env()) for hold in (0.0, 0.0, 0.15)]
    for i in range(16):
        time.sleep(0.07)
        _swap(f, new if i % 2 == 0 else old)
    outs = [r.communicate(timeout=300) for r in readers]
    seen = [json.loads(line) for out, err in outs for line in out.splitlines()]
    assert all(r.returncode == 0 for r in readers), [err for _, err in outs]
    assert len(seen) == 36
    assert all(s in (OLD, NEW) for s in seen), [s for s in seen if s not in (OLD, NEW)]


HOLDER = r"""
import sys, time
from atlas.index.cards import open_store
store = open_store(sys.argv[1])
print(store.card("bus-x")["names"]["en"], flush=True)
sys.stdin.readline()  # hold the index until told
print(store.card("bus-x")["names"]["en"], store.index.search.search("bus")[0]["name"]["en"], flush=True)
"""


def _holder(data: Path):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env())
    assert p.stdout.readline().strip() == "Bus X", p.stderr.read()
    return p


def _release(p) -> str:
    out, err = p.communicate("\n", timeout=60)
    assert p.returncode == 0, err
    return out.strip()


def test_eviction_never_removes_what_a_process_holds(tmp_path, mini):
    """A process holds one data folder's index; the others are evicted beyond the limit, the held
    one is kept (and still answers) until the process ends."""
    holder = _holder(mini)
    held = store.entry_dir(mini.resolve())
    others = []
    for i in range(3):
        other = tmp_path / f"other{i}" / "data"
        shutil.copytree(MINI, other)
        show(other, ("bus-x",))
        others.append(store.entry_dir(other.resolve()))
    removed = cache.evict(max_others=0, max_bytes=0)
    assert held.name not in removed and held.exists()
    assert {o.name for o in others} <= set(removed) and not any(o.exists() for o in others)
    assert _release(holder) == "Bus X Bus X"
    assert held.name in cache.evict(max_others=0, max_bytes=0)


def test_a_held_generation_survives_an_update_and_goes_after(mini):
    """An update while a process holds the index writes a new generation (copy, then update); the
    holder keeps answering from the old one, which is removed once it lets go."""
    holder = _holder(mini)
    entry = store.entry_dir(mini.resolve())
    first = store.read_pointer(entry)["gen"]
    f = mini / "concepts" / "x" / "bus-x.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("Bus X", "Bus Ten"), encoding="utf-8")
    assert json.loads(show(mini, ("bus-x",)))["names"]["en"] == "Bus Ten"
    second = store.read_pointer(entry)["gen"]
    assert second != first and (entry / f"{first}.sqlite").exists()
    assert _release(holder) == "Bus X Bus X"  # the old state, whole
    store.remove_old_generations(entry)
    assert not (entry / f"{first}.sqlite").exists() and (entry / f"{second}.sqlite").exists()


def test_the_cache_keeps_a_bounded_number_of_data_versions(tmp_path):
    folders = []
    for i in range(6):
        data = tmp_path / f"v{i}" / "data"
        shutil.copytree(MINI, data)
        show(data, ("bus-x",))  # each query evicts beyond the limit (3 others by default)
        folders.append(store.entry_dir(data.resolve()).name)
        time.sleep(0.01)
    names = {e.name for e in cache.entries()}
    assert folders[-1] in names and len(names & set(folders)) == 4
    assert not names & set(folders[:2])  # the oldest went first


def test_atlas_cache_shows_and_clears(mini, tmp_path, monkeypatch):
    # a cache folder of its own: other tests of the same worker may hold entries in the shared one
    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "own-cache"))
    show(mini, ("bus-x",))
    holder = _holder(mini)
    shown = json.loads(commands.cache(fmt="json").out)
    entry = store.entry_dir(mini.resolve()).name
    assert shown["bytes"] == sum(e["bytes"] for e in shown["entries"]) > 0
    assert any(e["name"] == entry and e["about"] == str(mini.resolve()) for e in shown["entries"])
    assert "MB" in commands.cache().out or "KB" in commands.cache().out
    parts = {p["kind"]: p["bytes"] for p in shown["parts"]}  # the size of each part, adding up
    assert sum(parts.values()) == shown["bytes"] and parts["store"] >= next(
        e["bytes"] for e in shown["entries"] if e["name"] == entry)
    assert shown["max_bytes"] == cache.MAX_BYTES == 400 << 20
    text = commands.cache().out.splitlines()
    assert "kept under 400.0 MB" in text[0] and text[1].split()[2].rstrip(":") == shown["parts"][0]["kind"]
    cleared = json.loads(commands.cache(clear=True, fmt="json").out)
    assert entry in cleared["kept"] and cleared["removed"]
    assert _release(holder) == "Bus X Bus X"
    cleared = json.loads(commands.cache(clear=True, fmt="json").out)
    assert entry in cleared["removed"] and cleared["entries"] == []


@pytest.mark.parametrize("round_", range(3))
def test_deleting_the_cache_folder_during_a_first_query(tmp_path, mini, round_):
    """rm -rf of the cache folder while a first query builds it: the query still answers, right."""
    expected = subprocess.run([sys.executable, "-m", "atlas", "query", "bus-x", "--data", str(mini)],
                              capture_output=True, text=True, env=_env(ATLAS_CACHE=str(tmp_path / "warm")))
    assert expected.returncode == 0
    folder = tmp_path / "cache"
    p = subprocess.Popen([sys.executable, "-m", "atlas", "query", "bus-x", "--data", str(mini)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(ATLAS_CACHE=str(folder)))
    deletions = 0
    while p.poll() is None:
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
            deletions += 1
        time.sleep(0.001 * round_)
    out, err = p.communicate()
    assert p.returncode == 0 and "Traceback" not in err and "os error" not in err.lower(), err
    assert out == expected.stdout
    assert deletions
