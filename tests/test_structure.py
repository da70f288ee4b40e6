"""The package's shape: no import circles between its modules (every import, at the top of a module or
inside a function; those under `if TYPE_CHECKING:` never run and are left out), at most 15 modules at
the top of atlas/ besides its packages, and no module name repeated across packages for different things
(SAME_TOPIC lists the names that repeat for one topic, each with its reason)."""
from __future__ import annotations

import ast
from pathlib import Path

from test_layering import PKG, _exists, module_name  # the layer test's names for modules and files


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def imports(path: Path) -> set[str]:
    """The package's modules `path` imports (a name imported from a package that is a module of its
    own counts as that module)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name[len("atlas."):] for a in node.names if a.name.startswith("atlas."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = package.split(".") if package else []
                up = up[: len(up) - (node.level - 1)] if node.level > 1 else up
                base = ".".join(up + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "atlas":
                base = node.module[len("atlas."):] if "." in node.module else ""
            else:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                out.add(sub if _exists(sub) else base)
    out.discard(me)
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
