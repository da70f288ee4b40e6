"""Differential test of the code index (atlas.code) against a generator that knows the answer.

hypothesis generates small C/C++ repositories: files in C and C++ (headers and sources), functions
in namespaces and classes (defined in the class or outside it as `Box::f`), templates, Ascend C
qualifiers (`__aicore__`, `LAUNCH_BOUND(n)`), overloads by arity and by scope, default and variadic
parameters, prototypes in headers with the definitions in sources, object-like and function-like
macros (some on several lines, some calling functions in their bodies), and calls of every written
form (plain, `ns::f`, `obj.f`, `p->f`, `f<int>`, nested, split over lines, in a global initialiser)
to defined, overloaded, ambiguous and external names, plus decoys in comments and strings. The test
commits the files with real git, names some files in an atlas (pins), indexes with real tree-sitter
through both search strategies, cold and then from the cache, and compares everything the generator
knows: which files are indexed at which hop, every function (name, qualified name, line range,
arity), every call site (name, line, column, arguments, scope), every macro, and every link
(status, targets, concepts of external calls), computed by the rule of atlas/code/resolve.py from
the generator's own records. Set ATLAS_CODE_EXAMPLES for more or fewer repositories (default 100).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from atlas.code.build import index_atlas
from atlas.model.core import Atlas, Claim, Concept, Evidence, Pin, Probe, Text

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
       "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "C",
       "GIT_COMMITTER_EMAIL": "c@example.org"}
N_EXAMPLES = int(os.environ.get("ATLAS_CODE_EXAMPLES", "100"))
REPO = "o/r"

NAMES = ["alpha", "beta", "gamma", "delta"]
MACROS = ["MAC_A", "MAC_B"]
EXTERNAL = ["ext_put", "aclshmem_fake", "ext_get"]
# concepts that name external calls: by a probe term, and by an alias
CONCEPTS = {"ext_put": ["ext-probe"], "aclshmem_fake": ["fake-shmem"]}
QUALIFIERS = ["", "__aicore__ inline ", "__simt_vf__ __aicore__ LAUNCH_BOUND(128) inline "]


@dataclass
class CallSpec:
    name: str
    args: int
    form: str = "plain"  # plain | member | arrow | template
    qualifier: str = ""  # written scope, plain form only
    inner: "CallSpec | None" = None  # a call written as the first argument
    split: bool = False  # the arguments run over two lines


@dataclass
class FnSpec:
    name: str
    required: int
    optional: int = 0
    variadic: bool = False
    ns: str = ""
    cls: str = ""
    inclass: bool = False
    template: bool = False
    qualifiers: str = ""
    split_signature: bool = False
    calls: list[CallSpec] = field(default_factory=list)


@dataclass
class MacroSpec:
    name: str
    params: int  # -1: object-like
    variadic: bool = False
    lines: int = 1
    body_call: str = ""


@dataclass
class ProtoSpec:
    name: str
    args: int


@dataclass
class GlobalCall:
    name: str


@dataclass
class FileSpec:
    path: str
    items: list


# -- the generator ------------------------------------------------------------------------------

called_names = st.sampled_from(NAMES * 3 + MACROS + EXTERNAL)


@st.composite
def call_specs(draw, cpp: bool, depth: int = 0):
    name = draw(called_names)
    forms = ["plain"] if name in MACROS else (["plain", "member", "arrow", "template"] if cpp else ["plain"])
    form = draw(st.sampled_from(forms))
    qualifier = ""
    if cpp and form == "plain" and name in NAMES:
        qualifier = draw(st.sampled_from(["", "", "na", "nb", "Box", "na::Box", "zz"]))
    args = draw(st.integers(0, 3))
    inner = draw(call_specs(cpp, depth + 1)) if depth == 0 and args and draw(st.booleans()) else None
    return CallSpec(name, args, form, qualifier, inner, split=depth == 0 and args >= 2 and draw(st.booleans()))


@st.composite
def fn_specs(draw, cpp: bool):
    name = draw(st.sampled_from(NAMES))
    required = draw(st.integers(0, 3))
    optional = draw(st.integers(0, 2)) if cpp else 0
    variadic = draw(st.booleans()) if (cpp or required) and draw(st.integers(0, 4)) == 0 else False
    ns = draw(st.sampled_from(["", "na", "nb"])) if cpp else ""
    cls = draw(st.sampled_from(["", "", "Box"])) if cpp else ""
    return FnSpec(name, required, optional, variadic, ns, cls, inclass=bool(cls) and draw(st.booleans()),
                  template=cpp and draw(st.integers(0, 3)) == 0, qualifiers=draw(st.sampled_from(QUALIFIERS)),
                  split_signature=draw(st.booleans()),
                  calls=draw(st.lists(call_specs(cpp), min_size=1, max_size=4)))


@st.composite
def macro_specs(draw):
    if draw(st.integers(0, 3)) == 0:
        return MacroSpec("OBJ_K", -1)
    return MacroSpec(draw(st.sampled_from(MACROS)), draw(st.integers(0, 2)), draw(st.booleans()),
                     draw(st.integers(1, 3)), draw(st.sampled_from(["", "alpha", "ext_put"])))


@st.composite
def file_specs(draw, path: str):
    cpp = not path.endswith(".c")
    items = draw(st.lists(st.one_of(
        fn_specs(cpp), fn_specs(cpp), macro_specs(),
        st.builds(ProtoSpec, st.sampled_from(NAMES), st.integers(0, 3)),
        st.builds(GlobalCall, st.sampled_from(NAMES + EXTERNAL))), min_size=1, max_size=7))
    return FileSpec(path, items)


@st.composite
def repositories(draw):
    paths = draw(st.lists(st.sampled_from(["inc/api.h", "src/a.cpp", "src/b.cc", "src/c.c", "inc/d.hpp",
                                           "lib/e.cpp"]), min_size=2, max_size=5, unique=True))
    files = [draw(file_specs(p)) for p in paths]
    seeds = draw(st.lists(st.sampled_from(paths), min_size=1, max_size=len(paths) - 1, unique=True))
    hops = draw(st.sampled_from([0, 1, 1, 2]))
    return files, seeds, hops


# -- rendering: the text, and what it holds ---------------------------------------------------------

class Writer:
    def __init__(self, path: str):
        self.path = path
        self.lines: list[str] = []
        self.functions: list[tuple] = []  # (name, qualified, start, end, min, max, [calls])
        self.macros: list[tuple] = []  # (name, start, end, params, variadic)

    @property
    def next(self) -> int:
        return len(self.lines) + 1

    def add(self, text: str) -> None:
        self.lines.append(text)

    def render(self, items) -> str:
        self.add("/* generated */")
        for item in items:
            getattr(self, "_" + type(item).__name__)(item)
        return "\n".join(self.lines) + "\n"

    def _ProtoSpec(self, p: ProtoSpec) -> None:
        self.add(f"int {p.name}({', '.join(f'int p{i}' for i in range(p.args)) or 'void'});")

    def _GlobalCall(self, g: GlobalCall) -> None:
        self.add(f"static int g_{g.name}_{self.next} = {g.name}(1);")  # a global initialiser: no call site

    def _MacroSpec(self, m: MacroSpec) -> None:
        start = self.next
        if m.params < 0:
            self.add(f"#define {m.name} 3")
        else:
            params = [f"x{i}" for i in range(m.params)] + (["..."] if m.variadic else [])
            body = f"{m.body_call}(x0)" if m.body_call and m.params else "0"
            head = f"#define {m.name}({', '.join(params)})"
            if m.lines == 1:
                self.add(f"{head} ({body})")
            else:
                self.add(head + " \\")
                for _ in range(m.lines - 2):
                    self.add("    /* more */ \\")
                self.add(f"    ({body})")
        self.macros.append((m.name, start, self.next - 1, m.params, m.variadic))

    def _FnSpec(self, f: FnSpec) -> None:
        closers = []
        if f.ns:
            self.add(f"namespace {f.ns} {{")
            closers.append("}")
        indent = ""
        if f.inclass:
            self.add(f"struct {f.cls} {{")
            closers.append("};")
            indent = "  "
        start = self.next
        if f.template:
            self.add(indent + "template <typename T>")
        params = [f"int a{i}" for i in range(f.required)] + [f"int o{i} = {i}" for i in range(f.optional)]
        params += ["..."] if f.variadic else []
        scope = f"{f.cls}::" if f.cls and not f.inclass else ""
        plist = ", ".join(params)
        if f.split_signature and params:
            self.add(f"{indent}{f.qualifiers}int")
            self.add(f"{indent}{scope}{f.name}({plist})")
            self.add(indent + "{")
        else:
            self.add(f"{indent}{f.qualifiers}int {scope}{f.name}({plist}) {{")
        calls: list[tuple] = []
        self.add(indent + f"    // {NAMES[0]}(1); a comment is no call")
        self.add(indent + f'    const char *s = "{NAMES[1]}(2)";')
        for c in f.calls:
            self._call(indent + "    ", c, calls)
        self.add(indent + "    return 0;")
        self.add(indent + "}")
        end = self.next - 1
        qualified = "::".join(p for p in (f.ns, f.cls, f.name) if p)
        self.functions.append((f.name, qualified, start, end, f.required,
                               -1 if f.variadic else f.required + f.optional, calls))
        for closer in reversed(closers):
            self.add(closer)

    def _call(self, indent: str, c: CallSpec, calls: list) -> None:
        prefix = indent + "x = "
        text, records = _call_text(c, self.next, len(prefix) + 1)
        first, *rest = text.split("\n")
        self.add(prefix + first)
        for more in rest:
            self.add(indent + "        " + more)
        self.lines[-1] += ";"
        calls.extend(records)


def _callee(c: CallSpec) -> tuple[str, int]:
    """(the callee as written, the offset of the recorded column within it)."""
    if c.form == "member":
        return f"obj.{c.name}", 4
    if c.form == "arrow":
        return f"ptr->{c.name}", 5
    if c.form == "template":
        return f"{c.name}<int>", 0
    return (f"{c.qualifier}::{c.name}" if c.qualifier else c.name), 0


def _call_text(c: CallSpec, line: int, col: int) -> tuple[str, list[tuple]]:
    """The text of a call starting at (line, col) and the records (name, line, col, args, qualifier, form)."""
    callee, offset = _callee(c)
    records = [(c.name, line, col + offset, c.args, c.qualifier, c.form)]
    args = [str(i + 1) for i in range(c.args)]
    if c.inner is not None:
        inner_text, inner_records = _call_text(c.inner, line, col + len(callee) + 1)
        args[0] = inner_text
        records += inner_records
    text = f"{callee}({args[0] if args else ''}"
    if len(args) > 1:
        text += "," + ("\n" if c.split else " ") + ", ".join(args[1:])
    return text + ")", records


# -- the oracle ------------------------------------------------------------------------------------

def expected(written: dict[str, Writer], seeds: list[str], hops: int):
    """(path -> hop, links by call site) by the rules of atlas.code.build and atlas.code.resolve."""
    def defines(w: Writer) -> set[str]:
        return {f[0] for f in w.functions} | {m[0] for m in w.macros if m[3] >= 0}

    def called(paths) -> set[str]:
        return {c[0] for p in paths for f in written[p].functions for c in f[6]}

    level = {p: 0 for p in seeds}
    frontier = list(seeds)
    searched: set[str] = set()
    for hop in range(1, hops + 1):
        names = called(frontier) - searched
        searched |= names
        frontier = [p for p in sorted(written) if p not in level and defines(written[p]) & names]
        level.update({p: hop for p in frontier})
    defs: dict[str, list[tuple]] = {}
    for p in level:
        for f in written[p].functions:  # (path, line, name, qualified, min, max, member: in or of the class)
            defs.setdefault(f[0], []).append((p, f[2], f[0], f[1], f[4], f[5], "Box" in f[1].split("::")))
        for m in written[p].macros:
            if m[3] >= 0:
                defs.setdefault(m[0], []).append((p, m[1], m[0], m[0], m[3], -1 if m[4] else m[3], False))
    links = {}
    for p in level:
        for f in written[p].functions:
            for name, line, col, args, qualifier, form in f[6]:
                links[(p, line, col)] = _expected_link(name, args, qualifier, form, f[1], p, defs.get(name, []),
                                                       name in searched)
    return level, links


def _expected_link(name, args, qualifier, form, caller, path, candidates, searched):
    """The rule of atlas.code.resolve, for the calls the generator writes (`obj` and `ptr` are declared
    nowhere, so a member call's receiver type is never known; no file has a `using namespace` line or
    an `#include`)."""
    how = "exact"
    if form in ("member", "arrow"):
        fits, how = [d for d in candidates if d[6] and (d[5] < 0 or args <= d[5] if d[0].endswith((".c", ".cc", ".cpp"))
                                                          else _accepts(d, args))], "by-name"  # a guess must fit
    elif qualifier:
        want = f"{qualifier}::{name}"
        fits = [d for d in candidates if d[3] == want or d[3].endswith("::" + want)]
    else:
        scopes = caller.split("::")[:-1]
        fits = []
        for depth in range(len(scopes), -1, -1):  # the caller's class, its namespaces, the global scope
            fits = [d for d in candidates if d[3] == "::".join([*scopes[:depth], name])]
            if fits:
                break
    if len(fits) > 1:
        fits = [d for d in fits if _accepts(d, args)] or fits
    if len(fits) > 1:
        fits = [d for d in fits if d[0] == path] or fits  # those in the caller's own file
    if not searched:
        status = "unsearched"
    elif how == "by-name" and fits:
        status = "by-name"
    else:
        status = "resolved" if len(fits) == 1 else "ambiguous" if fits else "external"
    concepts = [] if fits else sorted(CONCEPTS.get(name, []))
    return status, sorted((d[0], d[1], d[2]) for d in fits), concepts


def _accepts(d, args) -> bool:
    lo, hi = d[4], d[5]  # a function-like macro: (params, params), or (params, -1) with `...`
    return lo <= args and (hi < 0 or args <= hi)


# -- the test --------------------------------------------------------------------------------------

def build(root: Path, files: list[FileSpec]) -> tuple[str, dict[str, Writer]]:
    work = root / "o" / "r"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, env=ENV, check=True)
    written = {}
    for spec in files:
        w = Writer(spec.path)
        (work / spec.path).parent.mkdir(parents=True, exist_ok=True)
        (work / spec.path).write_text(w.render(spec.items), encoding="utf-8")
        written[spec.path] = w
    subprocess.run(["git", "add", "-A"], cwd=work, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "c"], cwd=work, env=ENV, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, env=ENV, check=True,
                            capture_output=True, text=True).stdout.strip()
    return commit, written


def atlas_for(commit: str, seeds: list[str]) -> Atlas:
    evidence = [Evidence(pin=Pin(REPO, commit, p, 1, 1)) for p in seeds]
    return Atlas(
        concepts=[Concept("ext-probe", "api", Text("E", "E"), probes=[Probe(REPO, "term", "ext_put")]),
                  Concept("fake-shmem", "library", Text("F", "F"), aliases={"en": ["aclshmem_fake"]})],
        claims=[Claim("c", Text("s", "s"), "confirmed", evidence=evidence)])


def check(files, seeds, hops) -> None:
    root = Path(tempfile.mkdtemp(prefix="atlas-code-oracle-"))
    try:
        commit, written = build(root, files)
        level, links = expected(written, seeds, hops)
        for status in sorted({v[0] for v in links.values()}):
            event(f"a {status} call")
        event(f"{max(level.values())} hop(s) reached of {hops}")
        atlas = atlas_for(commit, seeds)
        for strategy in ("grep", "tree", "grep"):  # the second grep run reads everything from the cache
            index = index_atlas(atlas, root, hops=hops, strategy=strategy)
            compare(index, written, level, links, commit)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def compare(index, written, level, links, commit) -> None:
    assert not index.missing and not index.unindexed
    assert {f.path: f.hop for f in index.files} == level
    for f in index.files:
        assert (f.repo, f.commit, f.language) == (REPO, commit, "c" if f.path.endswith(".c") else "cpp")
        w = written[f.path]
        assert f.lines == len(w.lines)
        got = [(fn.name, fn.qualified, fn.start, fn.end, fn.min_args, fn.max_args,
                [(c.name, c.line, c.col, c.args, c.qualifier) for c in fn.calls]) for fn in f.functions]
        want = [(*fn[:6], [c[:5] for c in fn[6]]) for fn in w.functions]
        assert got == sorted(want, key=lambda x: (x[2], x[3], x[0])), f.path
        assert [tuple(m[3:]) for m in f.macros] == sorted(w.macros, key=lambda m: (m[1], m[0])), f.path
    got_links = {(ln.caller.path, ln.call.line, ln.call.col):
                 (ln.status, sorted((t.path, t.start, t.name) for t in ln.targets), ln.concepts)
                 for ln in index.links}
    assert got_links == links
    for ln in index.links:  # the lookups agree with the links
        assert ln in index.callees(ln.caller)
        assert all(ln in index.callers(t) for t in ln.targets)


SETTINGS = dict(deadline=None, derandomize=not os.environ.get("ATLAS_ORACLE_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=N_EXAMPLES, **SETTINGS)
@given(repositories())
def test_the_index_agrees_with_the_generator(repo):
    check(*repo)


def test_header_source_split_overloads_ambiguity_and_external_calls():
    """One repository with each case the issue names, so that none depends on the draw."""
    header = FileSpec("inc/api.h", [ProtoSpec("alpha", 1), ProtoSpec("alpha", 2), MacroSpec("MAC_A", 1)])
    source = FileSpec("src/a.cpp", [
        FnSpec("alpha", 1), FnSpec("alpha", 2),  # overloads by arity
        FnSpec("beta", 1, ns="na"), FnSpec("beta", 1, ns="nb"),  # same arity: ambiguous unless qualified
    ])
    seed = FileSpec("src/use.cc", [FnSpec("gamma", 0, calls=[
        CallSpec("alpha", 1), CallSpec("alpha", 2), CallSpec("alpha", 3),  # resolved, resolved, all listed
        CallSpec("beta", 1), CallSpec("beta", 1, qualifier="nb"),  # external (another namespace), resolved
        CallSpec("ext_put", 2), CallSpec("aclshmem_fake", 0), CallSpec("ext_get", 0),  # external
        CallSpec("MAC_A", 1)])])
    root = Path(tempfile.mkdtemp(prefix="atlas-code-cases-"))
    try:
        commit, written = build(root, [header, source, seed])
        index = index_atlas(atlas_for(commit, ["src/use.cc"]), root, hops=1)
        level, links = expected(written, ["src/use.cc"], 1)
        compare(index, written, level, links, commit)
        assert level == {"src/use.cc": 0, "src/a.cpp": 1, "inc/api.h": 1}  # the prototypes define nothing
        by_name = {}
        for ln in index.links:
            by_name.setdefault(ln.call.name, []).append((ln.status, len(ln.targets), ln.concepts))
        assert by_name["alpha"] == [("resolved", 1, []), ("resolved", 1, []), ("ambiguous", 2, [])]
        assert by_name["beta"] == [("external", 0, []), ("resolved", 1, [])]
        assert by_name["ext_put"] == [("external", 0, ["ext-probe"])]
        assert by_name["aclshmem_fake"] == [("external", 0, ["fake-shmem"])]
        assert by_name["ext_get"] == [("external", 0, [])]
        assert by_name["MAC_A"] == [("resolved", 1, [])]
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_hops_follow_a_chain_of_definitions(hops):
    files = [FileSpec("src/a.cpp", [FnSpec("alpha", 0, calls=[CallSpec("beta", 0)])]),
             FileSpec("src/b.cpp", [FnSpec("beta", 0, calls=[CallSpec("gamma", 0)])]),
             FileSpec("src/c.cpp", [FnSpec("gamma", 0, calls=[CallSpec("delta", 0)])]),
             FileSpec("src/d.cpp", [FnSpec("delta", 0)])]
    root = Path(tempfile.mkdtemp(prefix="atlas-code-hops-"))
    try:
        commit, written = build(root, files)
        index = index_atlas(atlas_for(commit, ["src/a.cpp"]), root, hops=hops)
        assert sorted(f.path for f in index.files) == ["src/a.cpp", "src/b.cpp", "src/c.cpp"][:hops + 1]
        level, links = expected(written, ["src/a.cpp"], hops)
        compare(index, written, level, links, commit)
    finally:
        shutil.rmtree(root, ignore_errors=True)
