"""The card store: every concept card precomputed when the index is built, so that
`atlas query TERM` reads the small name index and one card instead of the whole atlas.

It is a cache derived from the compiled index (same key: content hash, folder and code); when it is
missing it is written from the atlas, and a term it cannot resolve falls back to the full atlas
(for suggestions).
"""
from __future__ import annotations

import marshal
import re
from pathlib import Path

from . import cache, resolve, views
from .model import utc_day

_SAFE = re.compile(r"^[a-z0-9-]+$")


class CardStore:
    def __init__(self, directory: Path, names: dict, materialise, key: str = ""):
        self.directory = directory
        self.key = key
        self.names = names
        self._materialise = materialise
        self._atlas = None

    @property
    def questions(self) -> dict:
        return self.names["questions"]

    def atlas(self):
        if self._atlas is None:
            self._atlas = self._materialise()
        return self._atlas

    def find(self, term: str) -> str | None:
        n = self.names
        return resolve.find_id(n["ids"], n["name_index"], n["loose_index"], term)

    def answer(self, term: str) -> tuple[str, object]:
        """("card", id) when the term names one concept, or is a confident prefix that the ranked
        search also puts first; otherwise ("hits", ranked search hits, maybe empty)."""
        from . import search

        n = self.names
        ident = resolve.exact_id(n["ids"], n["name_index"], n["loose_index"], term)
        if ident:
            return "card", ident
        hits = search.open_index(self.key, self.atlas).search(term, limit=10)
        prefix = resolve.prefix_id(n["name_index"], n["loose_index"], term)
        if prefix and (not hits or (hits[0]["type"], hits[0]["id"]) == ("concept", prefix)):
            return "card", prefix
        return "hits", hits

    def mark_hits(self, hits: list[dict], as_of: str) -> list[dict]:
        """Give every concept hit `as_of {date, visible, first}`: whether it was visible on that day
        (None when nothing dates it) and its first visible day."""
        for h in hits:
            if h["type"] == "concept":
                card = views.mark_as_of(self.card(h["id"]), as_of)
                first = card.get("first_visible")
                h["as_of"] = {**card["as_of"], "first": utc_day(first["date"]) if first else None}
        return hits

    def card(self, ident: str, as_of: str | None = None) -> dict:
        card = cache.read(self.directory / f"{ident}.marshal")
        if card is None:
            atlas = self.atlas()
            card = _card_of(atlas, atlas.concept(ident))
        if as_of:
            views.mark_as_of(card, as_of)
        return card


def _card_of(atlas, c) -> views.Card:
    """The card the store keeps for a concept: the view layer's card."""
    return views.card(atlas, c)


def _write(directory: Path, atlas) -> dict:
    names = {
        "ids": {c.id: 1 for c in atlas.concepts},
        "name_index": {k: sorted(v) for k, v in atlas.name_index.items()},
        "loose_index": {k: sorted(v) for k, v in atlas.loose_index.items()},
        "questions": views.question_names(atlas),
    }
    try:
        with cache.atomic_dir(directory) as tmp:
            for c in atlas.concepts:
                if _SAFE.match(c.id):
                    (tmp / f"{c.id}.marshal").write_bytes(marshal.dumps(_card_of(atlas, c)))
            (tmp / "names.marshal").write_bytes(marshal.dumps(names))
    except OSError:
        pass  # read-only cache: the cards are recomputed from the atlas each time
    return names


def open_cards(key: str, materialise) -> CardStore:
    """The card store of the compiled index `key`; written (from `materialise()`) when missing."""
    directory = cache.path("cards", key, "")
    names = cache.read(directory / "names.marshal")
    if names is None:
        atlas = materialise()
        names = _write(directory, atlas)
        store = CardStore(directory, names, lambda: atlas, key)
        store._atlas = atlas
        return store
    return CardStore(directory, names, materialise, key)
