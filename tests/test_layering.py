"""Import rules: every module of the package sits in one layer of LAYERS (drawn in
docs/architecture.md) and imports only from lower layers, from its own subpackage, or along an edge
named in SIBLINGS with its reason. A new module must be added to the map.
"""
from __future__ import annotations

import ast
from functools import lru_cache
import os
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "atlas"

# Lowest first. A name is a module relative to atlas ("" is the package itself); "name.*" is a
# subpackage with everything in it (its modules may import each other).
LAYERS = [
    ('base', ['errors', 'text', 'ask.tokens', 'model.vocab', 'paths', 'output', 'seed', 'lockfile', 'gitrun',
              'bounded', 'mcp.paging', 'mcp.jsonrpc', 'model.apifile', 'linked.syntax', 'progress', 'model',
              'view', 'index', 'ask', 'linked', 'mcp', 'terminal']),
    ('model', ['model.core']),
    ('view', ['view.viewtypes', 'view.views', 'view.terms', 'view.queries']),
    ('read', ['model.walk', 'model.load', 'model.yamlnodes', 'model.fromyaml', 'model.hygiene', 'model.checks',
              'model.apiload']),
    ('store', ['index.cache', 'index.search', 'ask.spelling', 'ask.understand', 'index.database', 'index.update',
              'index.compiled', 'index.cards', 'index.apistore']),
    ('faces', ['terminal.render', 'terminal.source', 'mcp.markdown', 'linked.rdf', 'linked.sparql',
              'linked.triplestore', 'linked.shacl', 'harvest.*', 'site.*', 'code.*']),
    ('open', ['opened', 'ask.answer']),
    ('commands', ['commands', 'fastpaths']),
    ('fronts', ['cli.*', 'mcp.tools', 'mcp.sdk', 'mcp.schemas', 'mcp.stdio', 'linked.endpoint']),
    ('entry', ['cli', 'launch', '__main__', '']),
]

# Edges inside one layer, each with its reason. Everything else in a layer is independent, and an
# edge listed here must be one the code takes (test_every_sibling_edge_is_used).
SIBLINGS = {
    ('linked.syntax', 'errors'): 'a refused query is a located error',
    ('view.views', 'view.viewtypes'):
        "the views' shapes are declared apart, read only when a face asks for one by name",
    ('view.terms', 'view.viewtypes'): "a row is a view's shape (for the type checker only)",
    ('view.terms', 'view.views'): "a name that matches nothing is answered with the closest concepts' rows",
    ('view.queries', 'view.views'): 'the lists and walks are made of the views of single records',
    ('view.queries', 'view.terms'): 'filters and flows name records the way every face does',
    ('model.checks', 'model.yamlnodes'): "cross-record checks run on the loader's result",
    ('paths', 'seed'): "outside a checkout, refresh and verify work in the user's copy of the data, made by seed",
    ('seed', 'errors'): 'a copy that cannot be made is an AtlasError naming the folder',
    ('bounded', 'errors'): 'a file over its bound is an AtlasError naming it',
    ('mcp.paging', 'errors'): 'a cursor that does not continue its call is an AtlasError naming the argument',
    ('lockfile', 'errors'): 'a lock held by another process is an AtlasError naming the folder',
    ('gitrun', 'errors'): 'git that cannot run, or prints past its bound, is an AtlasError naming the repository',
    ('lockfile', 'output'): 'the waiting message names a path, made safe for the terminal',
    ('model.load', 'model.walk'): 'the loader reads the files that the one walk of data/ lists',
    ('index.compiled', 'index.cache'): 'the compiled index is stored through the cache module',
    ('index.compiled', 'index.search'): 'the opened compiled index hands out its own search tables',
    ('index.compiled', 'index.database'): "the compiled index lives in the store's database, one per data folder",
    ('index.compiled', 'index.update'): 'changed data files are applied to the compiled index by the update',
    ('index.database', 'index.cache'): "the store's database sits in the cache folder, with checksummed rows and locks",
    ('index.database', 'index.search'): 'a new generation of the store creates the search tables',
    ('index.update', 'index.cache'): 'the update writes checksummed rows',
    ('index.update', 'index.search'): 'the update adds and removes search documents per record',
    ('index.update', 'index.database'): "the update reads and writes the store's metadata",
    ('index.search', 'index.cache'): 'search rows are checksummed blobs',
    ('index.cards', 'index.cache'): 'a rendered card is kept as a checksummed file, stamped with its epoch',
    ('index.cards', 'index.compiled'): 'the card store reads the name lookups and cards of the opened compiled index',
    ('index.cards', 'index.update'): "a card is rendered from the concept's neighbourhood in the compiled index",
    ('index.search', 'ask.spelling'): 'a query word no document holds is read as the indexed word one edit away',
    ('ask.understand', 'index.cache'): 'the question-word lists are parsed once and kept in the cache',
    ('linked.sparql', 'linked.rdf'): "CONSTRUCT results print as the export's JSON-LD",
    ('linked.triplestore', 'linked.rdf'): 'the on-disk store holds the RDF export, one named graph per data file',
    ('linked.sparql', 'terminal.render'): 'SPARQL results print as render.table',
    ('terminal.source', 'terminal.render'): 'the code face wraps and picks languages as every terminal answer does',
    ('linked.shacl', 'linked.rdf'): 'SHACL validates the RDF export',
    ('code.*', 'harvest.*'): 'the code index finds clones with harvest.locate, as verify and refresh do',
    ('harvest.*', 'code.*'): "the API surface method reads public headers with the code index's parser, cached by blob",
    ('model.load', 'model.apiload'): 'the loader reads the generated API histories (data/api/*.jsonl) through apiload',
    ('index.apistore', 'index.cache'): 'the API store is a cache folder keyed like the compiled index',
    ('site.*', 'code.*'): 'the source pages read the files behind the pins from the clones, as `atlas source` does',
    ('site.*', 'linked.rdf'):
        "a page published under a base IRI carries its record's triples as the export states them",
    ('mcp.sdk', 'mcp.tools'): "the SDK's side declares the tools of AtlasTools",
    ('mcp.sdk', 'mcp.schemas'): "each tool declares the JSON Schema of its answer's shape",
    ('mcp.sdk', 'mcp.stdio'): 'the server is served on stdio with every line checked',
    ('cli.*', 'linked.endpoint'): '`atlas serve --sparql` starts the SPARQL endpoint, which calls the command layer',
    ('launch', 'cli'): 'the fast launcher hands every other command line to click',
    ('fastpaths', 'commands'): 'the hot paths parse the options table and call the command functions',
    ('__main__', 'launch'): '`python -m atlas` is the console script',
    ('model.fromyaml', 'model.yamlnodes'): 'the record parsers read their fields with the node readers',
    ('model.hygiene', 'model.yamlnodes'): "a file's hygiene problems are recorded in the reading context",
    ('model.load', 'model.yamlnodes'): "a file is composed and read with the node readers' loader and context",
    ('model.load', 'model.fromyaml'): "each file's records come from the record parsers",
    ('model.load', 'model.hygiene'): 'a file is checked (size, characters, aliases) before its records are read',
    ('cli.*', 'mcp.sdk'): "`atlas serve` starts the MCP server, which the SDK's side builds",
}
# The faces receive an Atlas (or its views) from the command that opened it: they never load one.
LOADING = {'model.load', 'model.hygiene', 'model.fromyaml', 'model.yamlnodes', 'index.compiled', 'model.checks'}
EAGER_HEAVY = {"rdflib", "networkx", "pyvis", "git", "pyshacl", "pyoxigraph", "tree_sitter"}


def module_name(path: Path) -> str:
    """atlas/harvest/stamp.py -> "harvest.stamp"; atlas/cli/__init__.py -> "cli"; atlas/__init__.py -> ""."""
    parts = list(path.relative_to(PKG).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=None)
def _exists(name: str) -> bool:
    base = PKG.joinpath(*name.split(".")) if name else PKG
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (imports there never run)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def imports(path: Path, top_level_only: bool = False, package: str | None = None, runs_only: bool = False):
    """What `path` imports: "atlas.<module>" for the package's own modules (every name of
    `from . import a, b` counts), the top-level name for anything else. `package` is the
    subpackage that relative imports start from (by default the file's own); `runs_only` leaves out
    the imports under `if TYPE_CHECKING:`."""
    if package is None:
        me = module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree) if runs_only else set()
    for node in (tree.body if top_level_only else ast.walk(tree)):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                yield "atlas." + alias.name[len("atlas."):] if top == "atlas" else top
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = package.split(".") if package else []
                up = up[: len(up) - (node.level - 1)] if node.level > 1 else up
                base = ".".join(up + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "atlas":
                base = node.module[len("atlas."):] if "." in node.module else ""
            else:
                yield (node.module or "").split(".")[0]
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                yield "atlas." + (sub if _exists(sub) else base)


@lru_cache(maxsize=None)
def _entry(name: str):
    """(layer index, the map entry) of module `name`; the exact name wins over a subpackage."""
    found = None
    for i, (_, names) in enumerate(LAYERS):
        for entry in names:
            if entry == name:
                return i, entry
            if entry.endswith(".*") and (name == entry[:-2] or name.startswith(entry[:-1])):
                found = found or (i, entry)
    return found


def _modules():
    return sorted(PKG.rglob("*.py"))


def test_every_module_is_in_the_layer_map():
    missing = [f"atlas/{p.relative_to(PKG)} ({module_name(p) or 'atlas/__init__'})"
               for p in _modules() if _entry(module_name(p)) is None]
    assert not missing, (
        f"not in the layer map: {', '.join(missing)}. Add each module's name to one layer of LAYERS in "
        "tests/test_layering.py (docs/architecture.md says what each layer is for).")


def test_the_layer_map_names_only_real_modules():
    stale = [e for _, names in LAYERS for e in names if not _exists(e.removesuffix(".*"))]
    stale += [f"SIBLINGS {a} -> {b}" for a, b in SIBLINGS
              if not (_exists(a.removesuffix(".*")) and _exists(b.removesuffix(".*")))]
    assert not stale, f"the layer map names modules that do not exist: {stale}"


def _allowed(src: str, dst: str) -> bool:
    (i, src_entry), (j, dst_entry) = _entry(src), _entry(dst)
    if LAYERS[i][0] == "faces" and dst_entry in LOADING:
        return False
    if j < i or src_entry == dst_entry and src_entry.endswith(".*"):
        return True
    return (src_entry, dst_entry) in SIBLINGS


def test_imports_follow_the_layers():
    wrong = []
    for path in _modules():
        src = module_name(path)
        if _entry(src) is None:
            continue  # reported by test_every_module_is_in_the_layer_map
        for target in set(imports(path)):
            if not target.startswith("atlas."):
                continue
            dst = target[len("atlas."):]
            if dst == src or _entry(dst) is None:
                continue
            if not _allowed(src, dst):
                layer, below = LAYERS[_entry(src)[0]][0], [n for n, _ in LAYERS[:_entry(src)[0]]]
                why = (f"layer {layer!r} may import only {', '.join(below) or 'nothing'} and its own "
                       "subpackage")
                if layer == "faces" and _entry(dst)[1] in LOADING:
                    why = "the faces receive an Atlas and never load one (the opened atlas does)"
                wrong.append(f"atlas/{path.relative_to(PKG)} imports atlas.{dst or '__init__'} "
                             f"(layer {LAYERS[_entry(dst)[0]][0]!r}): {why}")
    assert not wrong, "\n".join(wrong) + (
        "\nMove the shared code down a layer, or, if the edge is meant, add it to SIBLINGS with its reason.")


def test_every_sibling_edge_is_used():
    """An edge of SIBLINGS that no import takes any more is removed from the map."""
    taken = set()
    for path in _modules():
        src = _entry(module_name(path))
        for target in imports(path):
            dst = _entry(target[len("atlas."):]) if target.startswith("atlas.") else None
            if src and dst:
                taken.add((src[1], dst[1]))
    unused = [f"{a} -> {b}" for a, b in SIBLINGS if (a, b) not in taken]
    assert not unused, f"SIBLINGS allows edges no module takes: {unused}; remove them"


def test_imports_read_every_name_of_a_from_import(tmp_path):
    """`from . import a, b` imports a and b; `from .x import y` imports x unless y is a module."""
    probe = tmp_path / "probe.py"
    probe.write_text("from . import cache, queries\nfrom ..harvest import stamp, locate\n"
                     "from ..index import compiled\nfrom .. import text\nimport atlas.model.vocab\nimport yaml\n"
                     "def f():\n    from ..site.layout import x\n", encoding="utf-8")
    assert set(imports(probe, package="cli")) == {
        "atlas.cli", "atlas.harvest.stamp", "atlas.harvest.locate", "atlas.index.compiled", "atlas.text",
        "atlas.model.vocab", "yaml", "atlas.site.layout"}  # cli has no cache or queries: the package
    assert set(imports(probe, package="index")) >= {"atlas.index.cache", "atlas.index"}
    assert "atlas.site.layout" not in set(imports(probe, top_level_only=True, package="cli"))


def test_forbidden_edges_would_be_reported():
    assert not _allowed("harvest.stamp", 'index.compiled')
    assert not _allowed('model.core', 'model.load')
    assert not _allowed('view.queries', 'linked.rdf')
    assert not _allowed("errors", "cli")
    assert _allowed("harvest.stamp", 'index.cache') and _allowed("harvest.refresh", "harvest.locate")
    assert _allowed("cli.query", 'index.cards') and not _allowed('view.queries', "cli.query")
    assert not _allowed('site.network', 'index.compiled') and not _allowed('view.views', 'index.search')


def test_query_path_has_no_heavy_top_level_imports():
    for rel in (
        "cli/__init__.py", "cli/common.py", "cli/query.py", "commands.py", "view/queries.py", "terminal/render.py",
        "model/core.py", "index/compiled.py", "index/cache.py", "text.py", "errors.py", "paths.py",
        "index/search.py", "view/views.py", "view/terms.py", "ask/tokens.py", "opened.py", "index/cards.py",
    ):
        heavy = set(imports(PKG / rel, top_level_only=True)) & (EAGER_HEAVY | {"yaml"})
        assert not heavy, f"atlas/{rel} imports {heavy} at start-up"


def test_fast_launcher_never_imports_click():
    """The console script answers `atlas query TERM` without click: keep it (and what it uses) free of it."""
    for rel in (
        "launch.py", "commands.py", "index/cards.py", "index/cache.py", "output.py", "index/compiled.py",
        "view/queries.py", "terminal/render.py", "model/core.py", "index/search.py", "view/views.py",
        "view/terms.py", "ask/tokens.py", "opened.py",
    ):
        found = set(imports(PKG / rel)) & {"click", "yaml"} | (
            set(imports(PKG / rel, top_level_only=True)) & EAGER_HEAVY)
        assert not found, f"atlas/{rel} imports {found}"


def test_every_subpackage_is_installed():
    """pyproject.toml lists the packages to install: a subpackage left out works in a checkout and
    fails after `pip install .`."""
    import tomllib

    listed = set(tomllib.loads((PKG.parent / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    found = {"atlas." + ".".join(p.parent.relative_to(PKG).parts) if p.parent != PKG else "atlas"
             for p in PKG.rglob("__init__.py")}
    assert found <= listed, f"not in pyproject.toml's packages: {sorted(found - listed)}"


def test_a_warm_card_imports_only_what_it_draws(tmp_path):
    """`atlas query ID` with a warm cache reads no database: sqlite3, the views' shapes
    (atlas.view.viewtypes), JSON, shutil (with its compression modules) and YAML stay unimported; each
    would cost every card a millisecond or more it does not use."""
    import subprocess
    import sys

    from conftest import DATA

    script = ("import contextlib, io, sys\n"
              "from atlas.launch import main\n"
              "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
              "    try:\n"
              "        main(['query', 'hccs', '--data', sys.argv[1]])\n"
              "    except SystemExit:\n"
              "        pass\n"
              "assert 'HCCS' in out.getvalue()\n"
              "print(sorted(m for m in ('sqlite3', 'atlas.view.viewtypes', 'json', 'shutil', 'yaml', 'click')\n"
              "             if m in sys.modules))\n")
    env = {**os.environ, "ATLAS_CACHE": str(tmp_path / "cache")}
    for _ in range(2):  # the first may build the cache; the second is a warm card
        done = subprocess.run([sys.executable, "-c", script, str(DATA)], capture_output=True, text=True, env=env,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout
