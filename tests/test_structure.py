"""The package's shape: no import circles between its modules (every import, at the top of a module or
inside a function; those under `if TYPE_CHECKING:` never run and are left out), at most 15 modules at
the top of atlas/ besides its packages, and no module name repeated across packages for different things
(SAME_TOPIC lists the names that repeat for one topic, each with its reason)."""
from __future__ import annotations

from pathlib import Path

from test_layering import PKG, _exists, module_name  # the layer test's names for modules and files
from test_layering import imports as layer_imports


def imports(path: Path) -> set[str]:
    """The package's modules `path` imports when it runs (the layer test's reading of imports, less
    those under `if TYPE_CHECKING:`; a name imported from a package that is a module of its own counts as
    that module)."""
    out = {t[len("atlas."):] for t in layer_imports(path, runs_only=True) if t.startswith("atlas.")}
    out.discard(module_name(path))
    return {m for m in out if m and _exists(m)}


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PKG.rglob("*.py"))}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circles():
    found = cycles(graph())
    assert not found, "import circles (each line: modules that import each other round):\n" + "\n".join(
        " <-> ".join(c) for c in found)


def test_the_check_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


MAX_TOP_LEVEL = 15
SAME_TOPIC = {
    "common": "a package's shared helpers (cli: click options; site: links and page helpers)",
    "api": "the public API surfaces: `atlas api` (cli) and the API probe method (harvest.methods)",
    "timeline": "the timeline: data/timeline.yaml (harvest) and its page (site)",
    "source": "the source behind the pins: `atlas source` (cli), its terminal face (terminal), its pages (site)",
    "linked": "linked data: `atlas export` and `serve --sparql` (cli) and the package itself",
}


def test_at_most_15_top_level_modules():
    top = sorted(p.name for p in PKG.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL, f"{len(top)} modules at the top of atlas/: {top}"


def test_no_module_name_repeated_across_packages():
    seen: dict[str, list[str]] = {}
    for p in PKG.rglob("*"):
        if "__pycache__" in p.parts or p.name == "__init__.py":
            continue
        if not (p.suffix == ".py" or (p / "__init__.py").is_file()):
            continue
        seen.setdefault(p.stem, []).append(str(p.relative_to(PKG)))
    repeated = {n: sorted(w) for n, w in seen.items() if len(w) > 1 and n not in SAME_TOPIC}
    assert not repeated, f"module names repeated across packages: {repeated}"
