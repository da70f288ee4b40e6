"""Pins carry their file's git blob id, and a loose copy of a pinned file (anywhere under --repos)
stands in for a missing clone only when its blob id is the pinned one: the code workspace, the
source pages, `atlas source` and `atlas verify` all read it then, and refuse a copy whose bytes
differ. Over the fixture atlas and git repositories of tests/test_code.py (files the tests write)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas import commands
from atlas.harvest.blobs import record_blobs
from atlas.harvest.loose import LooseCopies, blob_id
from atlas.index.compiled import load_atlas
from atlas.view.views import owned_evidence

from test_code import _fixture_atlas

PUT = "src/put.c"


def _setup(tmp: Path):
    """(data folder, clones folder, shmem commit, the bytes of put.c at it) with blob ids recorded."""
    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    atlas, root, c1, _c2 = _fixture_atlas(tmp)
    report = record_blobs(atlas, tmp / "data", root)
    assert report.written > 0 and report.skipped == 0
    gitdir = root / "example" / "shmem" / ".git"
    data = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{c1}:{PUT}"], capture_output=True,
                          check=True).stdout
    return tmp / "data", root, c1, data


def _hash_object(data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "--stdin"], input=data, capture_output=True,
                          check=True).stdout.decode().strip()


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000))
def test_blob_id_is_what_git_hash_object_prints(data):
    assert blob_id(data) == _hash_object(data)


def test_refresh_records_each_pins_blob_id_and_keeps_the_data_valid(tmp_path):
    data, root, c1, put = _setup(tmp_path)
    atlas = load_atlas(data, use_cache=False)
    pinned = [e for _o, e in owned_evidence(atlas) if e.pin is not None]
    assert pinned and all(e.blob for e in pinned)
    gitdir = root / "example" / "shmem" / ".git"
    for e in pinned:
        if e.pin.repo == "example/shmem":
            raw = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{e.pin.sha}:{e.pin.path}"],
                                 capture_output=True, check=True).stdout
            assert e.blob == _hash_object(raw)
    assert {e.blob for e in pinned if e.pin.path == PUT} == {_hash_object(put)}
    assert record_blobs(atlas, data, root).written == 0  # a second run has nothing to add
    assert commands.validate(data_dir=data).code == 0
    assert commands.verify(repos_dir=root, data_dir=data).out.count("broken") >= 1  # the fixture's L1-L24


def test_the_workspace_is_built_from_a_loose_copy_matched_by_blob_id(tmp_path):
    data, _root, c1, put = _setup(tmp_path)
    loose = tmp_path / "copies"
    (loose / "from" / "somewhere").mkdir(parents=True)
    (loose / "from" / "somewhere" / "renamed-copy.txt").write_bytes(put)  # the name does not matter
    site = tmp_path / "site"
    answer = commands.site(out_dir=str(site), data_dir=data, repos_dir=loose)
    assert answer.code == 0, answer
    assert (site / "code-put-signal.html").is_file()
    pages = [p.relative_to(site).as_posix() for p in (site / "source").rglob("*.html")]
    assert pages == [f"source/example/shmem/{c1}/src/put.c.html"]
    workspace = (site / "code-put-signal.html").read_text(encoding="utf-8")
    assert "put_signal" in workspace and "ring_doorbell" in workspace
    shown = commands.source([f"example/shmem@{c1}:{PUT}#L11-L18"], data_dir=data, repos_dir=loose)
    assert shown.code == 0 and "int put_signal(int *dst, int v)" in shown.out
    rows = json.loads(commands.verify(repos_dir=loose, data_dir=data, fmt="json").out)["pins"]
    mine = [r for r in rows if f":{PUT}#" in r["pin"] and "L1-L24" not in r["pin"]]
    assert mine and all(r["status"] == "ok" and "loose copy" in r["reason"] for r in mine)


def test_a_copy_whose_blob_differs_is_refused_everywhere(tmp_path):
    data, _root, c1, put = _setup(tmp_path)
    loose = tmp_path / "copies"
    loose.mkdir()
    (loose / "put.c").write_bytes(put.replace(b"return n;", b"return n + 0;"))
    site = tmp_path / "site"
    commands.site(out_dir=str(site), data_dir=data, repos_dir=loose)
    assert not list(site.glob("code-*.html")) and not (site / "source").exists()
    shown = commands.source([f"example/shmem@{c1}:{PUT}#L11-L18"], data_dir=data, repos_dir=loose)
    assert "int put_signal" not in shown.out
    rows = json.loads(commands.verify(repos_dir=loose, data_dir=data, fmt="json").out)["pins"]
    mine = [r for r in rows if f":{PUT}#" in r["pin"]]
    assert mine and all(r["status"] == "unchecked" and "not used" in r["reason"] for r in mine)


def test_a_clone_whose_file_has_another_blob_breaks_the_pin(tmp_path):
    data, root, _c1, _put = _setup(tmp_path)
    flow = data / "flows" / "put-signal.yaml"
    text = flow.read_text(encoding="utf-8")
    real = _hash_object(_put)
    flow.write_text(text.replace(real, "0" * 40), encoding="utf-8")
    rows = json.loads(commands.verify(repos_dir=root, data_dir=data, fmt="json").out)["pins"]
    assert any(r["status"] == "broken" and "0" * 40 in r["reason"] for r in rows)


def test_a_malformed_blob_id_is_a_clear_error_at_its_line(tmp_path):
    data, _root, _c1, _put = _setup(tmp_path)
    flow = data / "flows" / "put-signal.yaml"
    text = flow.read_text(encoding="utf-8")
    flow.write_text(text.replace("blob: ", "blob: XYZ", 1), encoding="utf-8")
    answer = commands.validate(data_dir=data)
    assert answer.code == 1 and "put-signal.yaml:" in answer.out and "bad-sha" in answer.out
    assert "Traceback" not in answer.out + answer.err


def test_an_abbreviated_blob_id_matches_one_copy_only(tmp_path):
    (tmp_path / "a").write_bytes(b"one\n")
    (tmp_path / "b").write_bytes(b"two\n")
    copies = LooseCopies(tmp_path)
    full = blob_id(b"one\n")
    assert copies.read(full[:8]) == b"one\n" and copies.read(full) == b"one\n"
    assert copies.read("0" * 40) is None and copies.find("") is None
