"""The code behind the pins: a tree-sitter index of the pinned files and what they call, where a line is
cited, the pin and code tables of `where` and `source`. May import: base, model, view, index (cache), harvest.

The code behind the pins: an index of the source files the atlas cites, read from local clones.

`atlas.code.build.index_atlas(atlas, repos_root, hops=1)` reads every file that a pin, a flow step
or a probe names, at its commit, straight from the clone's object store (no checkout), plus the
files of the same repository@commit that define what those files call; it parses C, C++ and
Python with tree-sitter and links each call to its definitions. `atlas.code.citing.where(...)`
answers the way back: which concepts, claims, flow steps and evidence cite a line.

Modules: `records` (the typed results and the `CodeIndex` with its lookups), `gitread` (git
processes against one clone), `parse` (tree-sitter: functions, calls, macros), `store` (parse
results cached by blob), `build` (what is indexed, the hops), `resolve` (call -> definitions),
`citing` (line -> the records that cite it). Importing this package imports none of them, and
tree-sitter is imported only when a blob has to be parsed.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"index_atlas": "build", "where": "citing", "CodeIndex": "records", "SourceFile": "records",
            "Function": "records", "Macro": "records", "Call": "records", "Link": "records",
            "MissingBlob": "records", "Unindexed": "records", "Place": "citing", "Citation": "citing",
            "Owner": "citing"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(name)
