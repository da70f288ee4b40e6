"""The resident process (atlas.resident) and its file watcher (atlas.watch), with real processes,
sockets and files.

- The watcher against its definition: whenever it says a folder is trusted, the folder's files (their
  list and bytes) are those it had when last verified; random edit sequences under hypothesis, the
  check made the way atlas.index makes it (asked, then verified).
- The resident process against the console script run without it: the same output, error output and
  exit code for the same command lines, after edits made just before the query too.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

watch = pytest.importorskip("atlas.watch")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            p = Path(folder, name)
            out[str(p.relative_to(root))] = p.read_bytes()
        for name in dirs:
            out[str(Path(folder, name).relative_to(root)) + "/"] = b""
    return out


NAMES = st.sampled_from(["a.yaml", "b.yaml", "c.yaml"])
FOLDERS = st.sampled_from(["", "x", "x/y", "z", "new", "x/new"])  # (the new ones: made by mkdir-write)
OPS = st.one_of(
    st.tuples(st.just("write"), FOLDERS, NAMES, st.binary(max_size=8)),
    st.tuples(st.just("same-size"), FOLDERS, NAMES, st.just(b"")),
    st.tuples(st.just("replace"), FOLDERS, NAMES, st.binary(max_size=8)),
    st.tuples(st.just("delete"), FOLDERS, NAMES, st.just(b"")),
    st.tuples(st.just("move"), FOLDERS, NAMES, st.just(b"")),
    st.tuples(st.just("mkdir-write"), FOLDERS, NAMES, st.binary(max_size=8)),
    st.tuples(st.just("rmtree"), FOLDERS, NAMES, st.just(b"")),
    st.tuples(st.just("touch"), FOLDERS, NAMES, st.just(b"")),
    st.tuples(st.just("check"), FOLDERS, NAMES, st.just(b"")),
)


def _apply(root: Path, op: tuple) -> None:
    kind, folder, name, data = op
    where = root / folder
    target = where / name
    if kind == "check" or (kind != "mkdir-write" and not where.is_dir()):
        return
    if kind == "write":
        target.write_bytes(data)  # in place (open with truncation)
    elif kind == "same-size" and target.is_file():
        old = target.read_bytes()
        target.write_bytes(bytes((b + 1) % 256 for b in old))
    elif kind == "replace":
        tmp = where / f".{name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)  # an editor's save: a new file renamed over the old
    elif kind == "delete" and target.is_file():
        target.unlink()
    elif kind == "move" and target.is_file():
        os.replace(target, root / f"moved-{folder.replace('/', '-')}-{name}")
    elif kind == "mkdir-write":
        fresh = root / folder / "new"
        fresh.mkdir(parents=True, exist_ok=True)
        (fresh / name).write_bytes(data)  # at once after the folder is made
    elif kind == "rmtree" and folder:
        shutil.rmtree(where)
    elif kind == "touch" and target.is_file():
        os.utime(target, (1, 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, max_size=25))
def test_the_watcher_trusts_a_folder_only_while_its_files_are_as_verified(tmp_path_factory, ops):
    root = tmp_path_factory.mktemp("watched").resolve()
    for folder in ("x/y", "z"):
        (root / folder).mkdir(parents=True)
    (root / "a.yaml").write_bytes(b"a")
    (root / "x" / "b.yaml").write_bytes(b"b")
    watcher = watch.Watcher()
    try:
        seen = None
        for op in ops:
            if not watcher.trusted(root):  # as atlas.index asks: then the files are checked
                seen = _snapshot(root)
                watcher.verified(root)
            else:
                assert seen is not None and _snapshot(root) == seen, op
            _apply(root, op)
        if watcher.trusted(root):
            assert _snapshot(root) == seen
    finally:
        watcher.close()


def test_a_folder_with_a_link_inside_is_never_trusted(tmp_path):
    root = tmp_path.resolve()
    (root / "a.yaml").write_text("a")
    os.link(root / "a.yaml", tmp_path.parent / f"{tmp_path.name}-elsewhere.yaml")
    watcher = watch.Watcher()
    try:
        for _ in range(2):
            assert not watcher.trusted(root)
            watcher.verified(root)
        assert "hard links" in watcher.state()[str(root)]
        os.unlink(tmp_path.parent / f"{tmp_path.name}-elsewhere.yaml")
        (root / "b.yaml").symlink_to(root / "a.yaml")
        assert not watcher.trusted(root)  # re-walked after the events: now the link
        watcher.verified(root)
        assert not watcher.trusted(root)
        assert "symbolic link" in watcher.state()[str(root)]
    finally:
        watcher.close()


# --------------------------------------------------------------------------------------------------
# The resident process
# --------------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _env(cache: Path, **more) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATLAS_")}
    env.update(ATLAS_CACHE=str(cache), COLUMNS="100", PYTHONPATH=str(ROOT), **more)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _atlas(args: list[str], env: dict, cwd: Path | None = None) -> tuple[str, str, int]:
    done = subprocess.run([sys.executable, "-m", "atlas", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    return done.stdout, done.stderr, done.returncode


def _answered(env: dict) -> int:
    out, err, code = _atlas(["daemon", "status", "--format", "json"], env)
    assert code == 0, err
    import json

    return json.loads(out)["answered"]


@pytest.fixture
def resident(mini, tmp_path):
    cache = Path(f"/tmp/atlas-res-{os.getpid()}-{tmp_path.name[-12:]}")  # (a socket path is short)
    env = _env(cache)
    out, err, code = _atlas(["daemon", "start", "--data", str(mini), "--idle", "600"], env)
    assert code == 0 and "resident process started" in out and f"{mini}: watched" in out, (out, err)
    yield env, mini
    _atlas(["daemon", "stop"], env)
    shutil.rmtree(cache, ignore_errors=True)


LINES = [
    ["query", "board-a"],
    ["query", "Board", "A", "--lang", "zh"],
    ["query", "test", "board"],
    ["query", "nothing-like-this-here"],
    ["query", "bus-x", "--format", "json"],
    ["query", "--sparql", "SELECT ?c WHERE { ?c a skos:Concept } ORDER BY ?c LIMIT 3"],
    ["query", "--sparql", "SELECT ?c WHERE {", "--results", "json"],
    ["query", "--sparql", "ASK { ?s ?p ?o }"],
]


def test_the_resident_process_answers_as_the_command_does(resident):
    env, mini = resident
    alone = dict(env, ATLAS_RESIDENT="0")
    before = _answered(env)
    for line in LINES:
        args = [*line, "--data", str(mini)]
        assert _atlas(args, env) == _atlas(args, alone), line
    assert _answered(env) - before >= len(LINES)  # each was the resident process's answer
    # a relative --data is read against the caller's folder, and $COLUMNS is the caller's
    narrow = dict(env, COLUMNS="64")
    args = ["query", "board-a", "--data", mini.name]
    assert _atlas(args, narrow, cwd=mini.parent) == _atlas(args, dict(narrow, ATLAS_RESIDENT="0"), cwd=mini.parent)


def test_random_command_lines_get_the_same_bytes_with_and_without_it(resident):
    """Random `atlas query ...` lines (test_commands' generator: cards, searches, misses, filters, SPARQL,
    bad options and values) through the resident process and without it."""
    from test_commands import query_argv

    env, mini = resident
    alone = dict(env, ATLAS_RESIDENT="0")
    before = _answered(env)

    @settings(max_examples=25, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(query_argv(str(mini)))
    def check(argv):
        assert _atlas(argv, env) == _atlas(argv, alone), argv

    check()
    assert _answered(env) - before >= 5, "the resident process seldom answered: the comparison was nearly vacuous"


def test_an_edit_made_just_before_a_query_is_in_its_answer(resident):
    env, mini = resident
    alone = dict(env, ATLAS_RESIDENT="0")
    card = mini / "concepts" / "x" / "board-a.yaml"
    for line in (["query", "board-a"], ["query", "test", "board"]):  # answers that opened cards and search
        assert _atlas([*line, "--data", str(mini)], env)[2] == 0
    generations = sorted(Path(env["ATLAS_CACHE"]).glob("store-*/*.sqlite"))
    assert len(generations) == 1
    for i in range(3):
        card.write_text(card.read_text(encoding="utf-8").replace("en: Board A", f"en: Board A{i}", 1).replace(
            f"en: Board A{i - 1}", f"en: Board A{i}", 1), encoding="utf-8")
        got = _atlas(["query", "board-a", "--data", str(mini)], env)
        assert f"Board A{i}" in got[0] and got == _atlas(["query", "board-a", "--data", str(mini)], alone)
        # updated in place: the resident process held no reader of it when it updated (no copy made)
        assert sorted(Path(env["ATLAS_CACHE"]).glob("store-*/*.sqlite")) == generations
    fresh = mini / "concepts" / "newer"
    fresh.mkdir()
    (fresh / "lib-q.yaml").write_text((mini / "concepts" / "x" / "lib-c.yaml").read_text(encoding="utf-8")
                                      .replace("id: lib-c", "id: lib-q", 1), encoding="utf-8")
    there = _atlas(["query", "lib-q", "--data", str(mini)], env)
    assert there == _atlas(["query", "lib-q", "--data", str(mini)], alone)
    (fresh / "lib-q.yaml").unlink()
    gone = _atlas(["query", "lib-q", "--data", str(mini)], env)
    assert gone != there and gone == _atlas(["query", "lib-q", "--data", str(mini)], alone)


def test_a_caller_of_other_code_is_declined_and_a_dead_process_is_no_answer(resident, monkeypatch):
    env, mini = resident
    from atlas import resident as res

    monkeypatch.setenv("ATLAS_CACHE", env["ATLAS_CACHE"])
    other = ("answer", ("/elsewhere/atlas", sys.version), ["query", "board-a", "--data", str(mini)],
             str(mini), dict(env), False, False)
    assert res._call(res.socket_path(), other) == ("declined",)
    pid = res.status()["pid"]
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    assert os.path.exists(res.socket_path())  # left behind: nothing listens on it
    alone = dict(env, ATLAS_RESIDENT="0")
    assert _atlas(["query", "board-a", "--data", str(mini)], env) == _atlas(["query", "board-a", "--data", str(mini)],
                                                                             alone)
    out, _, code = _atlas(["daemon", "status"], env)
    assert code == 1 and "no resident process is running" in out


def test_started_from_a_folder_holding_another_atlas_it_runs_this_one(mini, tmp_path):
    """`python -m` puts the working folder first on the path: another checkout there (a copy of the
    package) must not be what the resident process imports, or it declines every caller."""
    decoy = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "atlas", decoy / "atlas", ignore=shutil.ignore_patterns("__pycache__"))
    cache = Path(f"/tmp/atlas-res-{os.getpid()}-decoy")
    env = _env(cache)

    def console(args):  # as the console script runs: the working folder not on the path (-P)
        return subprocess.run([sys.executable, "-P", "-m", "atlas", *args], env=env, cwd=decoy,
                              capture_output=True, text=True, timeout=300)

    try:
        done = console(["daemon", "start", "--data", str(mini)])
        assert done.returncode == 0, done.stderr
        assert console(["query", "board-a", "--data", str(mini)]).returncode == 0
        assert _answered(env) == 1  # the caller's own code: not declined
    finally:
        _atlas(["daemon", "stop"], env)
        shutil.rmtree(cache, ignore_errors=True)


def test_it_stops_when_idle_and_when_asked(mini):
    cache = Path(f"/tmp/atlas-res-{os.getpid()}-idle")
    env = _env(cache)
    try:
        out, err, code = _atlas(["daemon", "start", "--idle", "1"], env)
        assert code == 0, err
        again, _, _ = _atlas(["daemon", "start"], env)
        assert "resident process running" in again  # one per cache folder
        sock = cache / "resident.sock"
        deadline = time.monotonic() + 30
        while sock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not sock.exists()  # gone after a second without a request
        assert _atlas(["daemon", "start", "--data", str(mini)], env)[2] == 0
        assert _atlas(["cache", "--clear"], env)[2] == 0 and sock.exists()  # its socket is not an entry
        assert _atlas(["query", "board-a", "--data", str(mini)], env)[2] == 0 and _answered(env) == 1
        out, _, code = _atlas(["daemon", "stop"], env)
        assert code == 0 and "stopped the resident process" in out and not sock.exists()
        assert _atlas(["daemon", "stop"], env) == ("no resident process was running\n", "", 0)
    finally:
        _atlas(["daemon", "stop"], env)
        shutil.rmtree(cache, ignore_errors=True)
