"""atlas.code: `where` over a fixture atlas and fixture repositories, missing blobs, Python files,
the parse cache, and what cannot be indexed. Real git repositories built here, real tree-sitter."""
from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas.code import store
from atlas.code.build import index_atlas
from atlas.code.citing import cited, where
from atlas.index.compiled import load_atlas
from atlas.model.core import Atlas, Claim, Concept, Evidence, Flow, FlowStep, Pin, Probe, RepoHarvest, Text

from conftest import MINI
from test_harvest import Repo, d

PUT_C = textwrap.dedent("""\
    /* put.c: generated for the tests */
    #include "put.h"

    #define PUT_CHECK(x) ((x) > 0)

    static int clamp(int v)
    {
        return v < 0 ? 0 : v;
    }

    int put_signal(int *dst, int v)
    {
        int n = clamp(v);
        if (PUT_CHECK(n)) {
            ring_doorbell(dst, n);
        }
        return n;
    }

    int put_only(int *dst)
    {
        return put_signal(dst, 1);
    }
    """)
PUT_H = "int put_signal(int *dst, int v);\nint put_only(int *dst);\n"
DOORBELL_C = "int ring_doorbell(int *db, int n)\n{\n    *db = n;\n    return external_fence(n);\n}\n"
CORES_MD = "# Cores\n\nThe vector core\nwrites descriptors\nand rings the doorbell.\n\nMore text.\n"
RING_CC = textwrap.dedent("""\
    namespace ring {
    class Ring {
     public:
      int Step(int i) { return Next(i) + 1; }
      int Next(int i);
    };
    int Ring::Next(int i) { return i + 1; }
    }  // namespace ring
    """)


def _repos(root: Path) -> tuple[str, str]:
    shmem = Repo(root, "example/shmem")
    c1 = shmem.commit({"src/put.c": PUT_C, "include/put.h": PUT_H, "src/doorbell.c": DOORBELL_C}, d(1))
    hccl = Repo(root, "example/hccl")
    c2 = hccl.commit({"docs/cores.md": CORES_MD, "src/ring.cc": RING_CC}, d(1))
    return c1, c2


def _fixture_atlas(tmp_path: Path):
    """The mini fixture atlas with its pins moved to the fixture repositories and more pins added
    (overlapping and nested, on a concept, a relation, claims, a flow, flow steps, a repository),
    loaded by the real loader."""
    c1, c2 = _repos(tmp_path / "repos")
    data = tmp_path / "data"
    shutil.copytree(MINI, data)
    for f in data.rglob("*.yaml"):
        text = f.read_text(encoding="utf-8")
        text = text.replace("example/shmem@89abcdef0123456789abcdef0123456789abcdef:", f"example/shmem@{c1}:")
        text = text.replace("example/hccl@0123456789abcdef0123456789abcdef01234567:", f"example/hccl@{c2}:")
        f.write_text(text, encoding="utf-8")
    flow = data / "flows" / "put-signal.yaml"
    text = flow.read_text(encoding="utf-8").replace("src/put.c#L10-L12", "src/put.c#L11-L18")
    text = text.replace("steps:\n", f"evidence:\n  - pin: example/shmem@{c1}:src/put.c#L1-L24\n"
                                    "    confidence: read-in-source\nsteps:\n", 1)
    text = text.replace("    actor: core-v\n    concepts: [core-v]\n",
                        "    actor: core-v\n    concepts: [core-v]\n    source:\n"
                        f"      pin: example/shmem@{c1}:src/doorbell.c#L3\n      confidence: read-in-source\n")
    flow.write_text(text, encoding="utf-8")
    core = data / "concepts" / "x" / "core-v.yaml"
    core.write_text(core.read_text(encoding="utf-8").replace(
        "  - {type: submits-to, target: engine-u}\n",
        "  - type: submits-to\n    target: engine-u\n    evidence:\n"
        f"      - pin: example/hccl@{c2}:src/ring.cc#L4-L7\n        confidence: read-in-source\n"), encoding="utf-8")
    claims = data / "claims" / "claims.yaml"
    claims.write_text(claims.read_text(encoding="utf-8") + "".join(f"{line}\n" for line in [
        "  - id: ring-steps",
        '    statement: {en: "A ring step calls Next.", zh: "环的一步调用 Next。"}',
        "    status: confirmed",
        "    about: [lib-c]",
        "    evidence:",
        f"      - pin: example/hccl@{c2}:src/ring.cc#L4",
        "        confidence: read-in-source",
        f"      - pin: example/shmem@{c1}:src/put.c#L13-L15",
        "        confidence: read-in-source"]), encoding="utf-8")
    repos = data / "repositories" / "repos.yaml"
    repos.write_text(repos.read_text(encoding="utf-8").replace(
        "    status: mirror\n",
        f"    status: mirror\n    evidence:\n      - pin: example/shmem@{c1}:include/put.h#L1-L2\n"
        "        confidence: read-in-source\n", 1), encoding="utf-8")
    return load_atlas(data, use_cache=False), tmp_path / "repos", c1, c2


def test_where_lists_the_owner_of_every_pin_at_every_line(tmp_path):
    atlas, root, _c1, _c2 = _fixture_atlas(tmp_path)
    index = index_atlas(atlas, root)
    assert not index.missing and not index.unindexed
    citations = cited(atlas)
    kinds = {c.owner.kind for c in citations}
    assert kinds == {"concept", "relation", "claim", "plan", "flow", "step", "repository"}
    for cit in citations:
        p = cit.pin
        for line in range(p.start, p.end + 1):
            for repo, path in ((p.repo, p.path), (None, p.path.rsplit("/", 1)[-1])):
                places = where(atlas, index, repo, path, line, citations=citations)
                here = [pl for pl in places if (pl.repo, pl.commit, pl.path) == (p.repo, p.sha, p.path)]
                assert len(here) == 1 and cit.owner in here[0].owners, (str(p), line)
                assert all(pl.line == line for pl in places)


def test_where_names_the_function_and_the_nearest_pins(tmp_path):
    atlas, root, c1, _c2 = _fixture_atlas(tmp_path)
    index = index_atlas(atlas, root)
    [place] = where(atlas, index, "example/shmem", "src/put.c", 21)  # inside put_only, below L11-L18
    assert place.indexed and place.function.name == "put_only"
    assert (place.function.start, place.function.end) == (20, 23)
    assert [c.owner.label for c in place.covering] == ["flow put-signal"]  # the whole-file flow pin
    assert [str(c.pin) for c in place.before] == [f"example/shmem@{c1}:src/put.c#L11-L18"]
    assert place.after == []
    [place] = where(atlas, index, "example/shmem", "put.c", 16)
    assert {c.owner.label for c in place.covering} == {"flow put-signal", "flow put-signal step put"}
    assert [str(c.pin) for c in place.before] == [f"example/shmem@{c1}:src/put.c#L13-L15"]
    # the callees and callers of put_signal, across files (one hop)
    fn = place.function
    assert fn.name == "put_signal"
    links = {ln.call.name: ln for ln in index.callees(fn)}
    assert links["clamp"].status == "resolved" and links["clamp"].targets[0].start == 6
    assert links["PUT_CHECK"].status == "resolved" and links["PUT_CHECK"].targets[0].start == 4
    assert links["ring_doorbell"].targets[0].path == "src/doorbell.c"
    assert [ln.caller.name for ln in index.callers(fn)] == ["put_only"]
    assert where(atlas, index, "example/shmem", "nothere.c", 1) == []


def test_missing_blobs_are_named_never_guessed(tmp_path):
    r = Repo(tmp_path / "repos", "o/r")
    c = r.commit({"a.c": "int a(void) { return helper(1) + puts(2); }\n",
                  "b.c": "int helper(int x) { return x; }\n",
                  "c.c": "int c(void) { return 0; }\n",
                  "d.c": "int d(void) { return helper(0); }\n"}, d(1))
    blob_b, blob_c = r.git("rev-parse", f"{c}:b.c"), r.git("rev-parse", f"{c}:c.c")
    for blob in (blob_b, blob_c):
        r.object_file(blob).unlink()
    atlas = Atlas(claims=[Claim("x", Text("s", "s"), "confirmed", evidence=[
        Evidence(pin=Pin("o/r", c, p, 1, 1)) for p in ("a.c", "c.c", "gone.c")] + [
        Evidence(pin=Pin("o/r", "f" * 40, "a.c", 1, 1)), Evidence(pin=Pin("o/r", c[:12], "a.c", 1, 1))])])
    for strategy in ("grep", "tree"):
        index = index_atlas(atlas, tmp_path / "repos", strategy=strategy)
        assert [f.path for f in index.files] == ["a.c"]  # d.c calls helper but defines nothing a.c calls
        missing = {(m.path, m.blob): m.why for m in index.missing}
        assert missing[("c.c", blob_c)] == "named by the atlas"
        assert missing[("b.c", blob_b)].startswith("searched for ")
        assert len(missing) == 2
        calls = {ln.call.name: ln for ln in index.links}
        # both unreadable blobs might define helper (c.c too: its content is unknown)
        assert calls["helper"].status == "unknown" and calls["helper"].missing == sorted([blob_b, blob_c])
        assert calls["puts"].status == "unknown"  # a missing blob might define it too
        reasons = sorted(u.reason for u in index.unindexed)
        assert reasons == ["commit ffffffffffff is not in the clone (" + str(tmp_path / "repos" / "o" / "r") + ")",
                           "no such file at " + c[:12], "not a full 40-hex commit id"]


def test_python_files_and_the_parse_cache(tmp_path):
    r = Repo(tmp_path / "repos", "o/py")
    c = r.commit({"pkg/m.py": textwrap.dedent("""\
        class Engine:
            def put(self, data, flag=None):
                return encode(data)

            @staticmethod
            def make(n):
                return Engine().put(n, flag=1)


        def encode(x, *rest):
            return len(x)
        """), "pkg/native.cc": "int encode(int x) { return x; }\n"}, d(1))
    atlas = Atlas(claims=[Claim("x", Text("s", "s"), "confirmed", evidence=[Evidence(pin=Pin("o/py", c, "pkg/m.py",
                                                                                             2, 3))])])
    index = index_atlas(atlas, tmp_path / "repos")
    [f] = index.files  # the C++ encode is another family: a Python call never links to it
    assert f.language == "python"
    assert [(fn.qualified, fn.start, fn.end, fn.min_args, fn.max_args) for fn in index.functions_in(f)] == [
        ("Engine.put", 2, 3, 1, 2), ("Engine.make", 5, 7, 1, 1), ("encode", 10, 11, 1, -1)]
    links = [(ln.caller.name, ln.call.name, ln.call.args, ln.status, [t.qualified for t in ln.targets])
             for ln in index.links]
    assert links == [("put", "encode", 1, "resolved", ["encode"]), ("make", "Engine", 0, "external", []),
                     ("make", "put", 2, "resolved", ["Engine.put"]), ("encode", "len", 1, "external", [])]
    assert index.enclosing("o/py", c, "pkg/m.py", 7).qualified == "Engine.make"
    assert index.enclosing("o/py", c, "pkg/m.py", 8) is None
    # a damaged cache entry is a miss: parsed again, rewritten, and the answer is the same
    entries = sorted(store.folder().glob(f"{f.blob}-python.marshal"))
    assert len(entries) == 1
    entries[0].write_bytes(b"\x00garbage")
    again = index_atlas(atlas, tmp_path / "repos")
    assert [(ln.caller.key, ln.call, ln.status) for ln in again.links] == \
        [(ln.caller.key, ln.call, ln.status) for ln in index.links]
    assert store.load(f.blob, "python") is not None


def test_without_clones_every_pinned_file_is_reported(tmp_path):
    (tmp_path / "repos").mkdir()
    atlas = Atlas(claims=[Claim("x", Text("s", "s"), "confirmed", evidence=[
        Evidence(pin=Pin("o/none", "a" * 40, "x.c", 1, 2))])],
        concepts=[Concept("p", "api", Text("P", "P"), probes=[Probe("o/none", "path", "src/x.c")])],
        harvests=[RepoHarvest("o/none", "b" * 40, "main", "2026-08-26", "b" * 40, "2026-08-26T00:00:00Z")])
    index = index_atlas(atlas, tmp_path / "repos")
    assert index.files == [] and [u.path for u in index.unindexed] == ["x.c"]  # a probe path is not a pin
    assert re.match(r"no local clone of o/none under ", index.unindexed[0].reason)


def test_a_path_probe_is_indexed_at_the_harvested_head(tmp_path):
    r = Repo(tmp_path / "repos", "o/p")
    c = r.commit({"src/x.c": "int x(void) { return 1; }\n", "src/y.c": "int y(void) { return x(); }\n"}, d(1))
    atlas = Atlas(concepts=[Concept("p", "api", Text("P", "P"), probes=[Probe("o/p", "path", "src/x.c"),
                                                                         Probe("o/p", "path", "src")])],
                  harvests=[RepoHarvest("o/p", c, "main", "2026-08-26", c, "2026-08-26T00:00:00Z")])
    index = index_atlas(atlas, tmp_path / "repos")
    assert [(f.path, f.commit) for f in index.files] == [("src/x.c", c)] and not index.unindexed


# -- `where` against its definition, on random pins -----------------------------------------------

LINES = 30


@st.composite
def pin_sets(draw):
    pins = []
    for _ in range(draw(st.integers(1, 12))):
        start = draw(st.integers(1, LINES))
        pins.append((draw(st.sampled_from(["src/put.c", "include/put.h"])), start,
                     draw(st.integers(start, LINES)), draw(st.sampled_from(["c1", "c2", "s"]))))
    return pins, draw(st.integers(1, LINES)), draw(st.sampled_from(["src/put.c", "put.c", "put.h", "x/put.c"]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pin_sets())
def test_where_agrees_with_its_definition(case):
    pins, line, asked = case
    commit = "a" * 40
    claims = {}
    steps = []
    for path, start, end, owner in pins:
        ev = Evidence(pin=Pin("o/r", commit, path, start, end))
        if owner == "s":
            steps.append(FlowStep(f"s{len(steps)}", Text("l", "l"), "a", source=ev))
        else:
            claims.setdefault(owner, []).append(ev)
    atlas = Atlas(claims=[Claim(k, Text("s", "s"), "confirmed", evidence=v) for k, v in sorted(claims.items())],
                  flows=[Flow("f", Text("t", "t"), steps=steps)] if steps else [])
    places = where(atlas, None, None, asked, line)
    files = sorted({p[0] for p in pins if p[0] == asked or p[0].endswith("/" + asked)})
    assert [pl.path for pl in places] == files
    for pl in places:
        mine = [c for c in cited(atlas) if c.pin.path == pl.path]
        assert {id(c.evidence) for c in pl.covering} == {id(c.evidence) for c in mine
                                                        if c.pin.start <= line <= c.pin.end}
        above = [c.pin.end for c in mine if c.pin.end < line]
        below = [c.pin.start for c in mine if c.pin.start > line]
        assert {id(c.evidence) for c in pl.before} == {id(c.evidence) for c in mine
                                                      if above and c.pin.end == max(above)}
        assert {id(c.evidence) for c in pl.after} == {id(c.evidence) for c in mine
                                                     if below and c.pin.start == min(below)}
        assert pl.function is None and not pl.indexed



def test_a_clone_missing_a_tree_fails_alone(tmp_path):
    bad = Repo(tmp_path / "repos", "o/bad")
    c_bad = bad.commit({"src/x.c": "int x(void) { return 1; }\n"}, d(1))
    bad.object_file(bad.git("rev-parse", f"{c_bad}:src")).unlink()  # the tree of src/
    good = Repo(tmp_path / "repos", "o/good")
    c_good = good.commit({"y.c": "int y(void) { return 2; }\n"}, d(1))
    atlas = Atlas(claims=[Claim("x", Text("s", "s"), "confirmed", evidence=[
        Evidence(pin=Pin("o/bad", c_bad, "src/x.c", 1, 1)), Evidence(pin=Pin("o/good", c_good, "y.c", 1, 1))])])
    index = index_atlas(atlas, tmp_path / "repos")
    assert [f.path for f in index.files] == ["y.c"]
    [u] = index.unindexed
    assert (u.repo, u.path) == ("o/bad", "src/x.c") and u.reason.startswith("cannot read the clone (")
    assert "cannot read the tree of " + c_bad[:12] in u.reason
