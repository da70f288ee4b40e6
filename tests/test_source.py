"""`atlas where`, `atlas source`, the code hits of `atlas query` and the source pages of `atlas map`,
over the fixture atlas of tests/test_code.py and the git repositories it builds (real git, real
tree-sitter, the real console script)."""
from __future__ import annotations

import json
import marshal
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atlas import commands
from atlas.code import lookup
from atlas.code.build import index_atlas
from atlas.code.citing import cited, where as library_where
from atlas.errors import AtlasError

from test_code import PUT_C, _fixture_atlas

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    """(data folder, clones folder, atlas, shmem commit) built once for the module."""
    tmp = tmp_path_factory.mktemp("source")
    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    atlas, root, c1, _c2 = _fixture_atlas(tmp)
    return tmp / "data", root, atlas, c1


def _json(answer) -> dict:
    return json.loads(answer.out)


def _run(*args: str, env: dict | None = None, data: Path | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=full,
                          cwd=str(data.parent if data else ROOT), timeout=120)


def _owners(place: dict) -> set[str]:
    return {c["owner"]["label"] for c in place["covering"]}


def test_where_lists_the_owner_of_every_pin_at_every_line(fixture):
    """For every pin of the fixture atlas, `atlas where` of any line inside it (by full path with
    the repository, and by file name alone) lists the pin's owner; the answer agrees with the
    library's `where` over the whole code index (covering pins, function, nearest pins)."""
    data, root, atlas, _c1 = fixture
    index = index_atlas(atlas, root)
    citations = cited(atlas)
    assert len(citations) >= 10
    for cit in citations:
        p = cit.pin
        for line in range(p.start, p.end + 1):
            for spelled in (f"{p.repo}:{p.path}:{line}", f"{p.path.rsplit('/', 1)[-1]}:{line}"):
                answer = commands.where(spelled, fmt="json", data_dir=data, repos_dir=root)
                assert answer.code == 0, (spelled, answer)
                value = _json(answer)
                here = [pl for pl in value["places"]
                        if (pl["repo"], pl["commit"], pl["path"]) == (p.repo, p.sha, p.path)]
                assert len(here) == 1 and cit.owner.label in _owners(here[0]), (spelled, value)
            lib = library_where(atlas, index, p.repo, p.path, line, citations=citations)
            ours = _json(commands.where(f"{p.repo}:{p.path}:{line}", fmt="json", data_dir=data, repos_dir=root))
            assert [(pl.repo, pl.commit, pl.path) for pl in lib] == \
                [(pl["repo"], pl["commit"], pl["path"]) for pl in ours["places"]]
            for a, b in zip(lib, ours["places"]):
                assert sorted(o.label for o in a.owners) == sorted(_owners(b))
                fn = b["function"]
                mine = (fn["qualified"], fn["start"], fn["end"]) if fn else None
                assert mine == ((a.function.qualified, a.function.start, a.function.end) if a.function else None)
                assert sorted(c.owner.label for c in a.before) == sorted(c["owner"]["label"] for c in b["before"])
                assert sorted(c.owner.label for c in a.after) == sorted(c["owner"]["label"] for c in b["after"])


def test_where_names_the_function_and_says_when_no_pin_covers_the_line(fixture):
    data, root, _atlas, c1 = fixture
    value = _json(commands.where("put.c:21", fmt="json", data_dir=data, repos_dir=root))
    (place,) = [p for p in value["places"] if p["commit"] == c1]
    assert place["function"]["name"] == "put_only"
    callees = {c["name"]: c for c in place["function"]["calls"]}
    assert callees["put_signal"]["status"] == "resolved"
    text = commands.where("put.c:25", data_dir=data, repos_dir=root)
    assert text.code == 1 and "no pin covers line 25" in text.out


def test_where_without_clones_still_answers_and_says_what_a_clone_adds(fixture, tmp_path):
    data, _root, atlas, c1 = fixture
    empty = tmp_path / "no-clones"
    empty.mkdir()
    answer = commands.where("put.c:13", data_dir=data, repos_dir=empty)
    assert answer.code == 0
    assert "claim ring-steps" in answer.out
    assert "atlas refresh --clone --repo example/shmem" in answer.out
    value = _json(commands.where("put.c:13", fmt="json", data_dir=data, repos_dir=empty))
    assert value["clones"]["absent"] == ["example/shmem"] and not value["places"][0]["indexed"]
    assert value["places"][0]["function"] is None


def test_where_refuses_what_is_not_a_location(fixture):
    data, root, _atlas, _c1 = fixture
    done = _run("where", "put.c", "--data", str(data), "--repos", str(root))
    assert done.returncode == 1 and "not a location" in done.stderr and "Traceback" not in done.stderr


def test_source_of_a_pin_prints_numbered_plain_lines_when_piped(fixture):
    """Through the console script (the click-free launcher), piped: numbered lines equal to the
    file's, no escape sequence, the function around them, its calls and its callers."""
    data, root, _atlas, c1 = fixture
    done = _run("source", f"example/shmem@{c1}:src/put.c#L11-L18", "--data", str(data), "--repos", str(root))
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout
    lines = PUT_C.splitlines()
    for n in range(11, 19):
        assert f"{n} | {lines[n - 1]}".rstrip() in [x.rstrip() for x in done.stdout.splitlines()]
    assert "function put_signal (lines 11-18)" in done.stdout
    assert "L13 clamp -> resolved [exact]: clamp at src/put.c:6" in done.stdout
    assert "src/put.c:22 in put_only" in done.stdout  # a caller
    assert "cited by: flow put-signal step" in done.stdout


def test_source_is_highlighted_on_a_terminal(fixture):
    data, root, _atlas, c1 = fixture
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console script with a terminal as its output
        os.environ.pop("NO_COLOR", None)
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "atlas", "source", f"example/shmem@{c1}:src/put.c#L11-L18",
                                  "--data", str(data), "--repos", str(root)])
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.waitpid(pid, 0)
    out = b"".join(chunks).decode("utf-8", "replace")
    assert "\x1b[38;5;" in out and "put_signal" in out


def test_source_of_a_flow_step_a_concept_and_a_location(fixture):
    data, root, atlas, _c1 = fixture
    flow = next(f for f in atlas.flows if any(s.source for s in f.steps))
    step = next(s for s in flow.ordered_steps() if s.source)
    value = _json(commands.source([flow.id, step.id], fmt="json", data_dir=data, repos_dir=root))
    (x,) = value["excerpts"]
    assert (x["path"], x["start"], x["end"]) == (step.source.pin.path, step.source.pin.start, step.source.pin.end)
    assert x["lines"] and f"flow {flow.id} step {step.id}" in [o["label"] for o in x["owners"]]
    concept = next(c for c in atlas.concepts if any(e.pin for e in c.evidence))
    value = _json(commands.source([concept.id], fmt="json", data_dir=data, repos_dir=root))
    assert {(x["path"], x["start"]) for x in value["excerpts"]} == \
        {(e.pin.path, e.pin.start) for e in concept.evidence if e.pin}
    value = _json(commands.source(["put.c:21"], fmt="json", data_dir=data, repos_dir=root))
    (x,) = [x for x in value["excerpts"] if x["path"] == "src/put.c"]
    assert (x["start"], x["end"]) == (20, 23) and x["functions"][0]["name"] == "put_only"
    with pytest.raises(AtlasError, match="has no step"):
        commands.source([flow.id, "no-such-step"], data_dir=data, repos_dir=root)
    done = _run("source", flow.id, "no-such-step", "--data", str(data), "--repos", str(root))
    assert done.returncode == 1 and "its steps:" in done.stderr and "Traceback" not in done.stderr


def test_source_without_a_clone_says_which_clone_and_exits_1(fixture, tmp_path):
    data, _root, _atlas, c1 = fixture
    empty = tmp_path / "none"
    empty.mkdir()
    answer = commands.source([f"example/shmem@{c1}:src/put.c#L11-L18"], data_dir=data, repos_dir=empty)
    assert answer.code == 1
    assert "lines not shown: no local clone" in answer.out
    assert "atlas refresh --clone --repo example/shmem" in answer.out


def test_the_launcher_and_click_print_the_same(fixture):
    data, root, _atlas, c1 = fixture
    from atlas.fastpaths import answer as _fast

    for argv in (["where", "put.c:13"], ["source", f"example/shmem@{c1}:src/put.c#L11-L12"], ["where", "ring.cc:4"]):
        args = [*argv, "--data", str(data), "--repos", str(root), "--format", "json"]
        fast = _fast(args)
        assert fast is not None
        from click.testing import CliRunner

        from atlas.cli import cli

        slow = CliRunner().invoke(cli, args)
        assert slow.output.strip() == fast.out.strip() and slow.exit_code == fast.code


def test_query_ranks_lines_locations_and_function_names(fixture):
    data, root, _atlas, _c1 = fixture
    commands.where("put.c:1", data_dir=data, repos_dir=root)  # builds the code table once
    env = {"ATLAS_REPOS": str(root)}
    for term, kind in (("put.c:13", "line"), ("13", "line"), ("put_signal", "function")):
        done = _run("query", term, "--data", str(data), "--format", "json", env=env)
        assert done.returncode == 0, (term, done.stderr)
        hits = json.loads(done.stdout)["hits"]
        assert hits[0]["type"] == kind, (term, hits)
    hits = json.loads(_run("query", "put.c:13", "--data", str(data), "--format", "json", env=env).stdout)["hits"]
    assert "claim ring-steps" in hits[0]["name"]["en"] and "put_signal" in hits[0]["snippet"]["text"]
    fn = json.loads(_run("query", "put_signal", "--data", str(data), "--format", "json", env=env).stdout)["hits"][0]
    assert fn["name"]["en"] == "put_signal" and fn["id"].endswith("src/put.c:11")


_names = st.text("abc_:", min_size=1, max_size=6)
_ref = st.fixed_dictionaries({"repo": st.sampled_from(["o/a", "o/b"]), "commit": st.sampled_from(["c1", "c2"]),
                              "path": st.sampled_from(["x.h", "y.cc"]), "start": st.integers(1, 50),
                              "end": st.integers(1, 90), "name": _names, "qualified": _names})
_caller = st.fixed_dictionaries({"repo": st.sampled_from(["o/a", "o/b"]), "commit": st.sampled_from(["c1"]),
                                 "path": st.sampled_from(["x.h", "z.c"]), "line": st.integers(1, 99),
                                 "function": _names, "start": st.integers(1, 99)})


@st.composite
def _function(draw):
    calls = []
    for _ in range(draw(st.integers(0, 4))):
        targets = draw(st.lists(_ref, max_size=lookup.KEPT_TARGETS + 3))
        calls.append({"line": draw(st.integers(1, 99)), "col": draw(st.integers(1, 40)), "name": draw(_names),
                      "text": draw(_names), "status": draw(st.sampled_from(["resolved", "ambiguous", "external"])),
                      "confidence": draw(st.sampled_from(["exact", "by name", "unresolved"])),
                      "targets": targets, "candidates": len(targets), "concepts": draw(st.lists(_names, max_size=2))})
    callers = draw(st.lists(_caller, max_size=5))
    return {"name": draw(_names), "qualified": draw(_names), "start": draw(st.integers(1, 50)),
            "end": draw(st.integers(50, 99)), "calls": calls, "callers": callers, "callers_total": len(callers)}


@settings(max_examples=60, deadline=None)
@given(st.lists(_function(), max_size=4))
def test_the_code_table_entry_keeps_what_the_views_say(functions):
    """Oracle: a packed entry reads back as the views it was made from, but for the lists cut to the
    kept sizes, whose totals stay."""
    back = lookup.unpack(marshal.loads(marshal.dumps(lookup.pack(functions))))
    want = [dict(fn, calls=[dict(c, targets=c["targets"][:lookup.KEPT_TARGETS]) for c in fn["calls"]],
                 callers=fn["callers"][:lookup.KEPT_CALLERS]) for fn in functions]
    assert back == want


def test_source_prints_the_bytes_git_has_a_carriage_return_shown(tmp_path):
    """A file committed with Windows line ends (and a form feed inside a line): `atlas source` of a
    pin (lines kept in the code table) and of a location in a file read from the clone give the lines
    git counts, split at `\\n` only, each `\\r` kept in JSON and shown as a visible `\\x0d` in text."""
    import shutil

    from conftest import MINI
    from test_harvest import Repo, d

    crlf = PUT_C.replace("return n;", "return n; /*\x0c*/").replace("\n", "\r\n").encode()
    doorbell = b"int ring_doorbell(int *db, int n)\r\n{\r\n    *db = n;\r\n    return n;\r\n}\r\n"
    root = tmp_path / "repos"
    c1 = Repo(root, "example/shmem").commit({"src/put.c": crlf, "src/doorbell.c": doorbell}, d(1))
    assert subprocess.run(["git", "-C", str(root / "example/shmem"), "show", f"{c1}:src/put.c"],
                          capture_output=True, check=True).stdout == crlf  # git holds the \r
    data = tmp_path / "data"
    shutil.copytree(MINI, data)
    for f in data.rglob("*.yaml"):
        f.write_text(f.read_text(encoding="utf-8").replace(
            "example/shmem@89abcdef0123456789abcdef0123456789abcdef:", f"example/shmem@{c1}:"), encoding="utf-8")
    env = {"ATLAS_CACHE": str(tmp_path / "cache")}
    want = crlf.decode().split("\n")
    for target, first in ((f"example/shmem@{c1}:src/put.c#L11-L18", 11), ("doorbell.c:3", 1)):
        done = _run("source", target, "--format", "json", "--data", str(data), "--repos", str(root), env=env)
        assert done.returncode == 0, done.stderr
        (x,) = json.loads(done.stdout)["excerpts"]
        lines = want if x["path"] == "src/put.c" else doorbell.decode().split("\n")
        assert x["start"] == first and x["lines"] == lines[first - 1:x["end"]]
        assert all(line.endswith("\r") for line in x["lines"])
        assert x["path"] == "src/doorbell.c" or "    return n; /*\x0c*/\r" in x["lines"]
        text = _run("source", target, "--data", str(data), "--repos", str(root), env=env)
        assert text.returncode == 0 and "\r" not in text.stdout
        shown = [row.split(" | ", 1)[1] for row in text.stdout.splitlines() if " | " in row]
        assert shown == [line.replace("\r", "\\x0d").replace("\x0c", "\\x0c") for line in x["lines"]]
