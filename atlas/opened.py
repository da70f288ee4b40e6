"""The atlas opened once: the one object the commands, the MCP server and any long-running server use
to reach the compiled atlas and what is derived from it.

`Opened(data_dir)` finds the data folder and the key of its content (a few `stat` calls when the
cache is warm) and nothing more; the records, the card store, the search index and the triple
store are each read from the cache the first time they are asked for, and kept. The resolver of
"which concept does this term name" is the view layer's (`atlas.resolve`), asked through here.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import resolve
from .index import load_keyed
from .model import Atlas, Concept
from .paths import data_dir as resolve_data_dir

if TYPE_CHECKING:
    from .cards import CardStore
    from .search import SearchIndex


class Opened:
    """One data folder's atlas, opened lazily: `atlas`, `cards`, `index`, `triples`."""

    def __init__(self, data_dir: Any = None) -> None:
        self.data_dir: Path = resolve_data_dir(data_dir)
        materialise, self.key = load_keyed(self.data_dir, lazy=True)
        self._materialise: Callable[[], Atlas] = materialise
        self._atlas: Atlas | None = None
        self._cards: CardStore | None = None
        self._index: SearchIndex | None = None
        self._triples: Path | bytes | None = None

    @property
    def atlas(self) -> Atlas:
        """The validated records (bad data raises with every problem)."""
        if self._atlas is None:
            self._atlas = self._materialise()
        return self._atlas

    @property
    def cards(self) -> "CardStore":
        """Every concept's card, precomputed: a card lookup never builds the whole atlas."""
        if self._cards is None:
            from .cards import open_cards

            self._cards = open_cards(self.key, lambda: self.atlas)
        return self._cards

    @property
    def index(self) -> "SearchIndex":
        """The ranked search over concepts, claims, flows and repositories."""
        if self._index is None:
            from .search import open_index

            self._index = open_index(self.key, lambda: self.atlas)
        return self._index

    @property
    def triples(self) -> Path | bytes:
        """The N-Triples export that the embedded SPARQL store loads (a cache file, or the bytes
        when the cache cannot be written)."""
        if self._triples is None:
            from .sparql import nt_cache

            self._triples = nt_cache(lambda: self.atlas, self.key, self.data_dir)
        return self._triples

    def concept(self, term: str) -> Concept:
        """The concept a term names, or `NoMatch` with the closest ones."""
        return resolve.concept(self.atlas, term)

    def concepts(self, terms) -> list[Concept]:
        """The concepts the terms name, each once."""
        return resolve.concepts(self.atlas, terms)


def open_atlas(data_dir: Any = None) -> Opened:
    return Opened(data_dir)
