"""No module-level state that another module sets: a module of the package never assigns, deletes or
changes in place an attribute of another of its modules (`index.X = ...`, `cache._HELD[k] = v`,
`setattr(store, ...)`, `views.TABLE.update(...)`). What a caller needs opened is handed to it (the
opened atlas, atlas.opened.Opened, is that context), never left in a module for the next caller."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "atlas"
ROOT = PKG.parent
MUTATORS = {"append", "extend", "insert", "update", "clear", "pop", "popitem", "setdefault", "add", "discard",
            "remove", "__setitem__", "__delitem__"}


def _module_names(tree: ast.AST) -> set[str]:
    """The names a module binds to modules of the package (or to anything imported from one of
    them: a name imported from a module may be a module, and changing a module's object in place
    is the same fault)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "atlas"):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names
                         if a.name.split(".")[0] == "atlas")
    return names


def _of_module(node: ast.AST, names: set[str]) -> str | None:
    """`mod.attr` (also `mod.attr[...]`, `mod.a.b`) where `mod` is one of `names`: its text."""
    inner = node
    while isinstance(inner, ast.Subscript):
        inner = inner.value
    while isinstance(inner, ast.Attribute):
        inner = inner.value
    if isinstance(inner, ast.Name) and inner.id in names and node is not inner:
        return ast.unparse(node)
    return None


def changes_of_other_modules(tree: ast.AST) -> list[tuple[int, str]]:
    names = _module_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in names:
                found.append((node.lineno, f"{func.id}({node.args[0].id}, ...)"))
            elif isinstance(func, ast.Attribute) and func.attr in MUTATORS and \
                    isinstance(func.value, ast.Attribute) and _of_module(func.value, names):
                found.append((node.lineno, f"{ast.unparse(func)}(...)"))
        for target in targets:
            for part in (target.elts if isinstance(target, ast.Tuple) else [target]):
                what = _of_module(part, names)
                if what:
                    found.append((node.lineno, f"{what} = ..." if not isinstance(node, ast.Delete) else f"del {what}"))
    return sorted(found)


def test_no_module_changes_another_modules_state():
    found = []
    for file in sorted(PKG.rglob("*.py")):
        found += [f"{file.relative_to(ROOT)}:{line}: {what}"
                  for line, what in changes_of_other_modules(ast.parse(file.read_text(encoding="utf-8")))]
    assert not found, ("a module changes another module's state; hand the value to who needs it (e.g. "
                       "through the opened atlas) instead:\n" + "\n".join(found))


def test_the_scan_sees_each_way_of_changing_a_module():
    code = ("from . import index, cache\nfrom .views import TABLE\nimport atlas.index.database as st\n"
            "index.WATCH = 1\ncache._HELD['k'] = 2\ndel index.X\nsetattr(st, 'y', 3)\n"
            "cache.TABLE.update(a=1)\nindex.A, b = 1, 2\nst.Z += 1\n"
            "x = index.WATCH\nobj.attr = 1\nlocal = {}\nlocal['k'] = 1\n")
    assert [what for _line, what in changes_of_other_modules(ast.parse(code))] == [
        "index.WATCH = ...", "cache._HELD['k'] = ...", "del index.X", "setattr(st, ...)",
        "cache.TABLE.update(...)", "index.A = ...", "st.Z = ..."]
