"""The atlas opened once: the one object the commands, the MCP server and any long-running server use
to reach the compiled atlas and what is derived from it.

`Opened(data_dir)` finds the data folder and opens its compiled index (`compiled`: a few `stat` calls
when the cache is warm) and nothing more; the records, the card store, the search index and the triple
store are each read from it the first time they are asked for, and kept. It is the context every
consumer is handed: no module keeps an opened index of its own. The resolver of "which concept does
this term name" is the view layer's (`atlas.view.terms`), asked through here.

A server may use one `Opened` from several threads: each of the four is opened once, under a lock
of its own (so a thread building the SPARQL export never holds up a search), and each thread gets
a search index over a SQLite connection of its own (a connection is never used by two threads).
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .view import terms as resolve
from .index.compiled import Index, open_index
from .model.core import Atlas, Concept
from .paths import data_dir as resolve_data_dir

if TYPE_CHECKING:
    from .index.apistore import ApiStore
    from .index.cards import CardStore
    from .index.search import SearchIndex


class Opened:
    """One data folder's atlas, opened lazily: `atlas`, `cards`, `index`, and `sparql_store()`, all
    read from `compiled`, its compiled index (bad data raises AtlasError with every problem)."""

    def __init__(self, data_dir: Any = None) -> None:
        self.data_dir: Path = resolve_data_dir(data_dir)
        self.compiled: Index = open_index(self.data_dir)
        self.compiled.raise_errors()
        self.key: str = self.compiled.key
        self._atlas: Atlas | None = None
        self._cards: CardStore | None = None
        self._index: SearchIndex | None = None
        self._api: ApiStore | None = None
        self._locks = {name: threading.Lock() for name in ("atlas", "cards", "index", "api")}
        self._thread = threading.local()  # this thread's own search index
        self._index_owner = 0  # the thread that opened the index

    def _once(self, name: str, make: Callable[[], Any]) -> Any:
        """The value kept as `_<name>`, made by `make()` the first time (one thread makes it; the
        others wait for that one value, not for anything else being opened)."""
        value = getattr(self, "_" + name)
        if value is None:
            with self._locks[name]:
                value = getattr(self, "_" + name)
                if value is None:
                    value = make()
                    setattr(self, "_" + name, value)
        return value

    @property
    def atlas(self) -> Atlas:
        """The validated records (bad data raises with every problem)."""
        return self._once("atlas", self.compiled.atlas)

    @property
    def cards(self) -> "CardStore":
        """Every concept's card, precomputed: a card lookup never builds the whole atlas."""
        from .index.cards import CardStore

        return self._once("cards", lambda: CardStore(self.compiled))

    @property
    def index(self) -> "SearchIndex":
        """The ranked search over concepts, claims, flows and repositories, over a connection of
        the calling thread's own (the thread that opened the index keeps that connection; any
        other thread reopens it)."""
        mine = getattr(self._thread, "index", None)
        if mine is None:
            mine = self._once("index", self._open_index)
            if self._index_owner != threading.get_ident():
                mine = self._reopened()
            self._thread.index = mine
        return mine

    @property
    def api(self) -> "ApiStore":
        """Every repository's API history (all symbols; the atlas holds those concepts name)."""
        from .index.apistore import open_api

        return self._once("api", lambda: open_api(self.key, self.data_dir, lambda: self.atlas))

    def _open_index(self) -> "SearchIndex":
        self._index_owner = threading.get_ident()
        return self.compiled.search

    def _reopened(self) -> "SearchIndex":
        """A connection of this thread's own to the index: the same read-only file, or a copy of
        the index kept in memory (when the cache could not be written)."""
        import sqlite3

        from .index.search import SearchIndex, index_path

        try:
            con = sqlite3.connect(f"{index_path(self.compiled).as_uri()}?mode=ro", uri=True)
            con.execute("SELECT 1 FROM doc LIMIT 1")
            return SearchIndex(con)
        except sqlite3.Error:
            pass
        shared = self._index
        assert shared is not None
        with self._locks["index"]:
            image = shared.con.serialize()
        con = sqlite3.connect(":memory:")
        con.deserialize(image)
        return SearchIndex(con)

    def sparql_store(self):
        """The embedded SPARQL store of this version (`atlas.linked.triplestore`), open for reading until its
        `close()`: built, or updated from the newest version, the first time it is asked for. N-Quads
        bytes (a store in memory) when the cache cannot hold one."""
        from .linked import triplestore as sparqlstore

        root = self.data_dir.resolve()

        def source() -> "sparqlstore.Source":
            index = self.compiled  # the compiled index of this version: its file hashes and records
            return sparqlstore.Source(lambda: self.atlas, root, self.key, index.files, index.part, index.naming,
                                      index.naming_rows)

        try:
            return sparqlstore.open_version(root, self.key, source)
        except OSError:  # a cache that cannot be written only costs speed
            return source().nquads()

    def concept(self, term: str) -> Concept:
        """The concept a term names, or `NoMatch` with the closest ones."""
        return resolve.concept(self.atlas, term)

    def concepts(self, terms) -> list[Concept]:
        """The concepts the terms name, each once."""
        return resolve.concepts(self.atlas, terms)

