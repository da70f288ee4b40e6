"""The card store: `atlas query TERM` reads the name lookups and one card of the compiled index
(atlas.index.compiled) instead of the whole atlas.

A card is rendered from the concept's neighbourhood (what the card shows, `update.neighbourhood`)
the first time it is asked for, and kept as a checksummed file beside the index's generation,
stamped with its epoch: a change that reaches the card gives it a new epoch, and the next query
renders it again. A term the lookups cannot resolve falls back to the full atlas (for
suggestions).
"""
from __future__ import annotations

import re
from typing import Any, cast

from . import cache
from ..view import terms as resolve, views
from .compiled import Index, open_index
from ..model.core import utc_day
from ..text import norm, squash

_SAFE = re.compile(r"^[a-z0-9-]+$")


def card_of(atlas, concept) -> views.Card:
    """The card the store keeps for a concept: the view layer's card (the one place that says how
    a card is made)."""
    return views.card(atlas, concept)


class _Names:
    """A name lookup of the index (`name`: folded with norm, `loose`: with squash): key -> ids.
    One key is looked up in the database; the whole lookup (what spotting names in a question,
    prefixes and the nearest names read) is read once, when first iterated."""

    def __init__(self, index: Index, table: str):
        self.index = index
        self.table = table
        self._all: dict[str, set[str]] | None = None
        self.understood: Any = None  # what atlas.ask.understand keeps of this lookup (its `name_keys`)

    def get(self, key: str, default=None):
        if self._all is not None:
            return self._all.get(key, default)
        ids = {r[0] for r in self.index.con.execute(f"SELECT id FROM {self.table} WHERE key = ?", (key,))}
        return ids or default

    def starting(self, prefix: str) -> bool:
        """Some key starts with `prefix` (one range query on the key index)."""
        return self.index.con.execute(f"SELECT 1 FROM {self.table} WHERE key >= ? AND key < ? LIMIT 1",
                                      (prefix, prefix + "\U0010ffff")).fetchone() is not None

    def starting_with(self, prefix: str) -> dict[str, set[str]]:
        """The part of the lookup whose keys start with `prefix` (one range on the key index)."""
        out: dict[str, set[str]] = {}
        if prefix:
            for k, i in self.index.con.execute(f"SELECT key, id FROM {self.table} WHERE key >= ? AND key < ?",
                                               (prefix, prefix + "\U0010ffff")):
                out.setdefault(k, set()).add(i)
        return out

    def present(self, keys) -> set[str]:
        """Which of `keys` the lookup holds (a query per 500 keys, not one per key)."""
        keys, found = sorted(set(keys)), set[str]()
        for at in range(0, len(keys), 500):
            chunk = keys[at:at + 500]
            marks = ",".join("?" * len(chunk))
            found.update(k for (k,) in self.index.con.execute(
                f"SELECT DISTINCT key FROM {self.table} WHERE key IN ({marks})", chunk))
        return found

    def bracketed(self) -> list[tuple[str, set[str]]]:
        """The keys ending in a part in brackets, with their ids (what spotting reads of every name)."""
        out: dict[str, set[str]] = {}
        for k, i in self.index.con.execute(f"SELECT key, id FROM {self.table} WHERE key LIKE '%(%)'"):
            out.setdefault(k, set()).add(i)
        return list(out.items())

    def whole(self) -> dict[str, set[str]]:
        if self._all is None:
            out: dict[str, set[str]] = {}
            for k, i in self.index.con.execute(f"SELECT key, id FROM {self.table}"):
                out.setdefault(k, set()).add(i)
            self._all = out
        return self._all

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __iter__(self):
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())

    def items(self):
        return self.whole().items()

    def keys(self):
        return self.whole().keys()

    def containing(self, key: str) -> dict[str, set[str]]:
        """The part of the lookup whose keys contain `key` (all a prefix search needs)."""
        out: dict[str, set[str]] = {}
        if key:
            for k, i in self.index.con.execute(f"SELECT key, id FROM {self.table} WHERE instr(key, ?) > 0",
                                               (key,)):
                out.setdefault(k, set()).add(i)
        return out


class _Ids:
    def __init__(self, index: Index):
        self.index = index

    def __contains__(self, ident) -> bool:
        return self.index.con.execute("SELECT 1 FROM concept WHERE id = ?", (ident,)).fetchone() is not None


class CardStore:
    def __init__(self, index: Index):
        self._use(index)

    def _use(self, index: Index) -> None:
        self.index = index
        self.key = index.key
        self.ids = _Ids(index)
        self.name_index = _Names(index, "name")
        self.loose_index = _Names(index, "loose")
        self._cards: dict = {}  # cards read in this process

    def _again(self, read):
        """`read()`; when it meets a damaged row, the index is rebuilt and `read()` runs again."""
        try:
            return read()
        except cache.Corrupt:
            from .compiled import reopen

            self._use(reopen(self.index))
            return read()

    @property
    def questions(self) -> dict:
        return self.index.meta("questions", {})

    @property
    def names(self) -> dict[str, Any]:
        """The name indexes as `terms` and `understand` read them ({ids, name_index, loose_index,
        questions}): looked up a key at a time, read whole only when iterated."""
        return {"ids": self.ids, "name_index": self.name_index, "loose_index": self.loose_index,
                "questions": self.questions}

    def atlas(self):
        return self.index.atlas()

    def exact(self, term: str) -> str | None:
        """The one concept the term names exactly (`terms.exact_id`); an id whose card is kept
        is answered without opening the database."""
        def run() -> str | None:
            if self._kept(term.strip()) is not None:
                return term.strip()
            return resolve.exact_id(self.ids, self._lookup(self.name_index), self._lookup(self.loose_index), term)
        return self._again(run)

    def find(self, term: str) -> str | None:
        return resolve.exact_id(self.ids, self._lookup(self.name_index), self._lookup(self.loose_index), term) \
            or self._prefix(term)

    @staticmethod
    def _lookup(names: "_Names") -> dict:
        return cast(dict, names)  # (only .get is used: a mapping read one key at a time)

    def _prefix(self, term: str) -> str | None:
        """`terms.prefix_id` over the keys that contain the term, read only when it can say yes:
        the keys that start with it (a range on the key index) have one owner in one of the two
        folds. (Reading every key that contains a term scans the whole lookup.)"""
        def one_owner(names: _Names, key: str) -> bool:
            return len({cid for ids in names.starting_with(key).values() for cid in ids}) == 1

        if not (one_owner(self.name_index, norm(term)) or one_owner(self.loose_index, squash(term))):
            return None
        return resolve.prefix_id(self.name_index.containing(norm(term)),
                                 self.loose_index.containing(squash(term)), term)

    def prefix(self, term: str) -> str | None:
        """The concept the term is a confident prefix of (`terms.prefix_id`), from the keys that
        contain it."""
        return self._again(lambda: self._prefix(term))

    def answer(self, term: str) -> tuple[str, object]:
        """("card", id) when the term names one concept, or is a confident prefix that the ranked
        search also puts first; otherwise ("hits", ranked search hits, maybe empty)."""
        return self._again(lambda: self._answer(term))

    def _answer(self, term: str) -> tuple[str, object]:
        ident = self.exact(term)
        if ident:
            return "card", ident
        hits = self.index.search.search(term, limit=10)
        prefix = self._prefix(term)
        if prefix and (not hits or (hits[0]["type"], hits[0]["id"]) == ("concept", prefix)):
            return "card", prefix
        return "hits", hits

    def mark_hits(self, hits: list[dict], as_of: str) -> list[dict]:
        """Give every concept hit `as_of {date, visible, first}`: whether it was visible on that day
        (None when nothing dates it) and its first visible day."""
        for h in hits:
            if h["type"] == "concept":
                card = self.card(h["id"], as_of)
                first = card.get("first_visible")
                h["as_of"] = {**card["as_of"], "first": utc_day(first["date"]) if first else None}
        return hits

    def card(self, ident: str, as_of: str | None = None) -> Any:
        card = self._kept(ident)
        if card is None:
            card = self._again(lambda: self._render(ident))
        if as_of:
            import copy

            card = views.mark_as_of(copy.deepcopy(card), as_of)  # (the card kept here stays as it is)
        return card

    def _file(self, ident: str):
        folder = self.index.cards_dir
        return folder / f"{ident}.marshal" if folder is not None and _SAFE.match(ident) else None

    def _kept(self, ident: str) -> Any:
        if ident in self._cards:
            return self._cards[ident]
        file = self._file(ident)
        if file is None:
            return None
        kept = cache.read(file)
        if isinstance(kept, dict) and kept.get("epoch") == self.index.card_epoch(ident) and kept.get("id") == ident:
            self._cards[ident] = kept["card"]
            return kept["card"]
        return None

    def _render(self, ident: str) -> Any:
        from .update import neighbourhood

        near = neighbourhood(self.index.con, ident)
        if near is None:
            atlas = self.atlas()
            return card_of(atlas, atlas.concept(ident))
        card = card_of(near, near.concept(ident))
        file = self._file(ident)
        if file is not None:
            cache.write(file, {"id": ident, "epoch": self.index.card_epoch(ident), "card": card})
        return card


def open_store(data_dir=None) -> CardStore:
    """The card store of a data folder's compiled index (updated first if data changed; bad data
    raises AtlasError with every problem)."""
    index = open_index(data_dir)
    index.raise_errors()
    return CardStore(index)
