"""Import rules: data flows data/ -> loader -> model -> {queries, rdf, harvest, map} -> cli."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "atlas"

# module (relative to atlas/) -> atlas modules it must never import
FORBIDDEN = {
    "errors.py": {"model", "loader", "queries", "cli", "index", "harvest", "htmlmap", "rdf"},
    "model.py": {"loader", "queries", "cli", "index", "harvest", "htmlmap", "rdf", "render"},
    "text.py": {"model", "loader", "cli"},
    "loader.py": {"queries", "cli", "harvest", "htmlmap", "rdf", "render"},
    "queries.py": {"loader", "cli", "harvest", "htmlmap", "render"},
    "render.py": {"loader", "cli", "harvest", "htmlmap"},
    "search.py": {"loader", "queries", "cli", "harvest", "htmlmap", "rdf", "render"},
}
EAGER_HEAVY = {"rdflib", "networkx", "pyvis", "git", "pyshacl", "pyoxigraph"}


def imports(path: Path, top_level_only: bool = False):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                yield mod.split(".")[0] if mod else (node.names[0].name)
            else:
                yield mod.split(".")[0]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]


def test_forbidden_edges():
    for name, banned in FORBIDDEN.items():
        found = set(imports(PKG / name)) & banned
        assert not found, f"atlas/{name} imports {found}"


def test_query_path_has_no_heavy_top_level_imports():
    for rel in ("cli/__init__.py", "cli/common.py", "cli/query.py", "queries.py", "render.py",
                "model.py", "index.py", "text.py", "errors.py", "paths.py", "search.py"):
        heavy = set(imports(PKG / rel, top_level_only=True)) & (EAGER_HEAVY | {"yaml"})
        assert not heavy, f"atlas/{rel} imports {heavy} at start-up"


def test_fast_launcher_never_imports_click():
    """The console script answers `atlas query TERM` without click: keep it (and what it uses) free of it."""
    for rel in ("launch.py", "cards.py", "output.py", "index.py", "queries.py", "render.py", "model.py",
                "search.py"):
        found = set(imports(PKG / rel)) & {"click", "yaml"} | (
            set(imports(PKG / rel, top_level_only=True)) & EAGER_HEAVY)
        assert not found, f"atlas/{rel} imports {found}"
