"""`atlas map` owns only what it writes: the manifest, refusals, --force, links, folders with page
names, and a hypothesis test of the invariant "no file outside the manifest is modified or removed"."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.errors import AtlasError
from atlas.site import build_site
from atlas.site.owned import MANIFEST, read_manifest, sha256, write_site

from test_map import sample_atlas


def tree(root: Path) -> dict[str, tuple]:
    """Everything under root without following links: path -> (kind, bytes or link target)."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                found[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                found[rel] = ("dir",)
            else:
                found[rel] = ("file", p.read_bytes())
    return found


def user_folder(tmp_path: Path) -> Path:
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("my notes\n")
    (out / "flow-mine.html").write_text("<p>my flow</p>\n")
    (out / "index.html").write_text("<p>my index</p>\n")
    return out


def test_a_folder_of_user_files_is_refused_and_untouched(tmp_path):
    out = user_folder(tmp_path)
    before = tree(out)
    with pytest.raises(AtlasError) as err:
        build_site(sample_atlas(), out)
    assert str(out) in str(err.value) and MANIFEST in str(err.value) and "--force" in str(err.value)
    assert tree(out) == before


def test_hidden_files_do_not_make_a_folder_the_users(tmp_path):
    """The checkout's own site/ holds only its .gitignore: `atlas map -o site` works there at once,
    and leaves the hidden file alone; one visible file of the user's still stops it."""
    root = Path(__file__).resolve().parent.parent
    assert all(p.name.startswith(".") for p in (root / "site").iterdir())
    out = tmp_path / "site"
    out.mkdir()
    (out / ".gitignore").write_text("*\n!.gitignore\n")
    build_site(sample_atlas(), out)
    assert (out / MANIFEST).is_file() and (out / ".gitignore").read_text() == "*\n!.gitignore\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text("*\n")
    (other / "notes.txt").write_text("mine\n")
    with pytest.raises(AtlasError):
        build_site(sample_atlas(), other)


def test_force_never_overwrites_a_file_it_does_not_own(tmp_path):
    out = user_folder(tmp_path)
    before = tree(out)
    with pytest.raises(AtlasError) as err:
        build_site(sample_atlas(), out, force=True)
    assert "index.html: a file the map did not write" in str(err.value)
    assert tree(out) == before  # refused as a whole: not even the free page names were written
    (out / "index.html").rename(out / "my-index.html")
    build_site(sample_atlas(), out, force=True)
    after = tree(out)
    for name in ("notes.txt", "flow-mine.html", "my-index.html"):
        assert after[name] == tree(tmp_path / "notes")[name]
    owned = json.loads((out / MANIFEST).read_text())["files"]
    assert "flow-mine.html" not in owned and "notes.txt" not in owned and "index.html" in owned
    assert (out / "notes.txt").read_text() == "my notes\n"


def test_second_build_needs_no_force_and_edits_are_noticed(tmp_path):
    out = tmp_path / "site"
    build_site(sample_atlas(), out)
    manifest = (out / MANIFEST).read_bytes()
    build_site(sample_atlas(), out)  # over its own output
    assert (out / MANIFEST).read_bytes() == manifest
    doc = json.loads(manifest)
    assert set(doc) == {"format", "generator", "note", "files"}  # no time stamps, no pending
    for rel, digest in doc["files"].items():
        assert sha256((out / rel).read_bytes()) == digest
    (out / "timeline.html").write_text("edited by hand")
    with pytest.raises(AtlasError, match="timeline.html: changed since"):
        build_site(sample_atlas(), out)
    assert (out / "timeline.html").read_text() == "edited by hand"
    build_site(sample_atlas(), out, force=True)
    assert sha256((out / "timeline.html").read_bytes()) == doc["files"]["timeline.html"]


def test_a_folder_named_like_a_page(tmp_path):
    out = tmp_path / "site"
    build_site(sample_atlas(), out)
    (out / "flow-x.html").mkdir()  # not a page of this atlas: left alone
    (out / "flow-x.html" / "inside.txt").write_text("kept")
    build_site(sample_atlas(), out)
    assert (out / "flow-x.html" / "inside.txt").read_text() == "kept"
    os.unlink(out / "flow-udma-put.html")
    (out / "flow-udma-put.html").mkdir()  # a page name of this atlas: refused, even with --force
    for force in (False, True):
        with pytest.raises(AtlasError, match="flow-udma-put.html: a folder where the map wrote a page"):
            build_site(sample_atlas(), out, force=force)
    assert (out / "flow-udma-put.html").is_dir()


def test_links_are_never_followed(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    out = tmp_path / "site"
    build_site(sample_atlas(), out)
    os.unlink(out / "explorer.html")
    os.symlink(outside, out / "explorer.html")  # the user put a link in place of a page
    with pytest.raises(AtlasError, match="explorer.html: changed since.*symbolic link"):
        build_site(sample_atlas(), out)
    build_site(sample_atlas(), out, force=True)  # replaces the link itself by a regular file
    assert not (out / "explorer.html").is_symlink() and outside.read_text() == "precious"
    assert "vis-network" in (out / "explorer.html").read_text()

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    os.symlink(outside, fresh / "index.html")  # a link the map did not write: refused, always
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", fresh / "concepts")
    for force in (False, True):
        with pytest.raises(AtlasError) as err:
            build_site(sample_atlas(), fresh, force=force)
    assert "index.html: a symbolic link the map did not write" in str(err.value)
    assert "concepts/ is a symbolic link" in str(err.value)
    assert outside.read_text() == "precious" and not any((tmp_path / "elsewhere").iterdir())


def test_a_linked_or_damaged_manifest_is_refused(tmp_path):
    out = tmp_path / "site"
    build_site(sample_atlas(), out)
    (out / MANIFEST).write_text("{not json")
    with pytest.raises(AtlasError, match="manifest cannot be read"):
        build_site(sample_atlas(), out)
    (out / MANIFEST).write_text(json.dumps({"format": 1, "files": {"../../etc/passwd": "x"}}))
    with pytest.raises(AtlasError, match="not a path inside the folder"):
        build_site(sample_atlas(), out)


def test_cli_refuses_with_exit_1_and_no_traceback(tmp_path):
    out = user_folder(tmp_path)
    (out / "flow-x.html").mkdir()
    res = subprocess.run([sys.executable, "-m", "atlas", "map", "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert f"{out}: the output folder is not empty" in res.stderr


def test_an_interrupted_run_is_still_recognised(tmp_path):
    """The pending manifest accepts old and new bytes, so a run killed after it was written is
    followed by a run that needs no --force."""
    out = tmp_path / "site"
    write_site(out, {"index.html": b"old", "flow-gone.html": b"x"})
    (out / MANIFEST).write_bytes(json.dumps({"format": 1, "files": {}, "pending": {
        "index.html": [sha256(b"old"), sha256(b"new")], "flow-gone.html": [sha256(b"x")]}}).encode())
    (out / "index.html").write_bytes(b"new")
    write_site(out, {"index.html": b"newer"})
    assert (out / "index.html").read_bytes() == b"newer" and not (out / "flow-gone.html").exists()


# ---------------------------------------------------------------------------------------------
# the invariant, over random folders
# ---------------------------------------------------------------------------------------------

NAMES = ["index.html", "flow-a.html", "flow-b.html", "concepts", "concepts/x.html",
         "concepts/y.html", "notes.txt", "vis-network.min.js"]
PAGES = ["index.html", "flow-a.html", "flow-b.html", "concepts/x.html", "concepts/y.html",
         "vis-network.min.js"]
KINDS = ["file", "dir", "link-file", "link-dir"]

entries = st.dictionaries(st.sampled_from(NAMES), st.tuples(st.sampled_from(KINDS), st.binary(max_size=4)),
                          max_size=5)
sites = st.dictionaries(st.sampled_from(PAGES), st.sampled_from([b"p1", b"p2", b""]), max_size=6)


def _make(out: Path, rel: str, kind: str, data: bytes, outside: Path) -> None:
    path = out / rel
    if path.parent.is_symlink() or not path.parent.is_dir():
        return
    if kind == "file" and path.is_file() and not path.is_symlink():
        path.write_bytes(data)  # the user edits a file (perhaps one the map wrote)
        return
    if kind != "file" and path.is_file() and not path.is_symlink():
        path.unlink()  # ... or puts a folder or a link in its place
    if os.path.lexists(path):
        return
    if kind == "file":
        path.write_bytes(data)
    elif kind == "dir":
        path.mkdir()
    else:
        os.symlink(outside / ("f" if kind == "link-file" else "d"), path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.one_of(st.none(), sites), user=entries, second=sites, force=st.booleans())
def test_no_file_outside_the_manifest_is_modified_or_removed(tmp_path_factory, first, user, second, force):
    base = tmp_path_factory.mktemp("owns")
    outside = base / "outside"
    (outside / "d").mkdir(parents=True)
    (outside / "f").write_bytes(b"outside")
    out = base / "out"
    out.mkdir()
    if first is not None:
        write_site(out, first)  # an earlier site the map wrote
    for rel, (kind, data) in sorted(user.items()):
        _make(out, rel, kind, data, outside)
    owned = set(read_manifest(out) or {})
    before, before_outside = tree(out), tree(outside)
    try:
        write_site(out, second, force=force)
        ok = True
    except AtlasError:
        ok = False
    after = tree(out)
    assert tree(outside) == before_outside
    if not ok:
        assert after == before  # a refused run changes nothing
        return
    for rel, entry in before.items():
        if rel not in owned | {MANIFEST}:
            assert after.get(rel) == entry, rel
    for rel, data in second.items():
        assert after[rel] == ("file", data)
    assert json.loads(after[MANIFEST][1])["files"] == {r: sha256(d) for r, d in second.items()}
    for rel in owned - set(second) - {MANIFEST}:
        if before.get(rel, ("",))[0] in ("file", "link"):
            assert rel not in after, rel  # an old page of the map's is removed


# ---------------------------------------------------------------------------------------------
# the manifest is a record, not an authority; one run at a time (real processes)
# ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
MINI = ROOT / "tests" / "fixtures" / "mini"


def _map(out: Path, data: Path, cache: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, ATLAS_CACHE=str(cache))
    return subprocess.Popen([sys.executable, "-m", "atlas", "map", "-o", str(out), "--data", str(data), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_forged_manifest_entry_never_deletes_a_users_file(tmp_path):
    """issue 26: `"notes.txt": <its sha256>` added to atlas-map.json made `atlas map` delete notes.txt."""
    out = tmp_path / "site"
    first = _map(out, MINI, tmp_path / "cache")
    assert first.wait(120) == 0, first.stderr.read()
    notes = out / "notes.txt"
    notes.write_text("my notes\n")
    doc = json.loads((out / MANIFEST).read_text())
    doc["files"]["notes.txt"] = sha256(notes.read_bytes())
    doc["files"]["concepts/notes.txt"] = sha256(b"x")  # not a page name either
    (out / MANIFEST).write_text(json.dumps(doc))
    again = _map(out, MINI, tmp_path / "cache")
    assert again.wait(120) == 0, again.stderr.read()
    assert notes.read_text() == "my notes\n"
    assert "notes.txt" not in json.loads((out / MANIFEST).read_text())["files"]  # the record is corrected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=st.dictionaries(st.sampled_from(["notes.txt", "a.html", "concepts/n.txt", "flow-.html", "index.htm",
                                             "concepts/Up.html", "concepts/a/b.html"]),
                            st.binary(max_size=4), min_size=1, max_size=4),
       second=sites)
def test_no_name_outside_the_page_names_is_ever_removed(tmp_path_factory, user, second):
    """Whatever the manifest says of them (here: each file listed with its true hash), files whose
    names the map never gives a page are never modified or removed."""
    out = tmp_path_factory.mktemp("forged") / "out"
    write_site(out, {"index.html": b"p"})
    for rel, data in user.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    doc = json.loads((out / MANIFEST).read_text())
    doc["files"].update({rel: sha256(data) for rel, data in user.items()})
    (out / MANIFEST).write_text(json.dumps(doc))
    write_site(out, second, force=True)
    for rel, data in user.items():
        assert (out / rel).read_bytes() == data, rel


def _agrees(out: Path) -> list[str]:
    """What in `out` disagrees with its manifest: a listed file with other bytes, a page not listed."""
    from atlas.site.owned import PAGE_NAME

    files = json.loads((out / MANIFEST).read_text())["files"]
    wrong = [f"{rel}: bytes differ" for rel, digest in files.items()
             if not (out / rel).is_file() or sha256((out / rel).read_bytes()) != digest]
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    wrong += [f"{rel}: not listed" for rel in on_disk if PAGE_NAME.fullmatch(rel) and rel not in files]
    return wrong


def test_concurrent_maps_into_one_folder_wait_and_leave_a_true_manifest(tmp_path):
    """issue 26: four `atlas map` runs into one folder at once, from two data folders whose pages
    differ, left a manifest that disagreed with the pages (2 trials of 4). Each run now waits for
    the one writing (and says so), every run ends 0, and the manifest describes the pages."""
    other = tmp_path / "other"
    import shutil

    shutil.copytree(MINI, other)
    bus = other / "concepts" / "x" / "bus-x.yaml"
    bus.write_text(bus.read_text(encoding="utf-8").replace("Bus X", "Bus X (renamed)"), encoding="utf-8")
    cache = tmp_path / "cache"
    for data in (MINI, other):  # warm the caches: the runs below spend their time writing
        assert _map(tmp_path / "warm", data, cache, "--force").wait(120) == 0
    for trial in range(3):
        out = tmp_path / f"site{trial}"
        runs = [_map(out, MINI if i % 2 else other, cache) for i in range(4)]
        for run in runs:
            code = run.wait(180)
            err = run.stderr.read()
            assert code == 0 and "Traceback" not in err, err
        assert _agrees(out) == [], trial


def test_a_map_waits_for_the_one_writing_and_says_so(tmp_path):
    """Another process holds the folder's lock: `atlas map` says it waits, writes nothing meanwhile,
    and finishes once the lock is released."""
    import textwrap

    out = tmp_path / "site"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from atlas.lockfile import FolderLock
        with FolderLock({str(out)!r}, "held", ".atlas-map.lock"):
            print("locked", flush=True)
            sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    run = _map(out, MINI, tmp_path / "cache")
    line = run.stderr.readline()
    assert line.startswith(f"waiting: another `atlas map` is writing into {out}"), line
    assert os.listdir(out) == [] and run.poll() is None
    holder.stdin.close()
    assert holder.wait(30) == 0
    assert run.wait(120) == 0, run.stderr.read()
    assert _agrees(out) == [] and (out / "index.html").is_file()
