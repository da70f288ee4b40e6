"""One ranked, bilingual search over everything the atlas says: concepts, claims, flows and
repositories (their evidence sentences included).

The engine is SQLite's FTS5 (in the standard library's sqlite3) with bm25 ranking and column
weights. Documents are the view layer's search documents (`views.search_documents`); text is
cut into tokens by `atlas.ask.tokens`, the same way for documents and queries, and stored as plain
space-separated tokens.

Ranking, best first: a query that equals an id, name or alias of a hit (case-, width- and
punctuation-folded); then hits whose names hold every query word; then bm25 over
names > headline (answers, statement, summary, purpose) > text > evidence sentences.
A Latin query word that no document holds is read as the indexed word one edit away
(`atlas.ask.spelling`). The score floor (`above_floor`): a hit must hold at least half of the query's
tokens, and, unless it holds them all, one in its names (a claim: in its statement); a hit whose
words are only in its evidence sentences must hold a word that names something, so common words
that only a pin's sentence shares are not offered as answers. A query is at most `MAX_CHARS`
characters and `MAX_TERMS` distinct words (`QueryTooLong`, a usage error).

The index's tables live in the compiled index's database (atlas.index.compiled), one document per record,
added and removed per data file as files change (`add_documents`, `remove_documents`); `build`
makes one in memory for an atlas in hand; the compiled index hands out its own (`Index.search`).
"""
from __future__ import annotations

import os
import re
import unicodedata

from ..errors import UsageError
from ..text import norm, squash, width
from ..view.views import search_documents
from ..ask.tokens import STOPWORDS, query_tokens, tokens  # noqa: F401  (the tokeniser, re-exported)

FORMAT = 2
COLUMNS = ("names", "head", "body", "evidence")
WEIGHTS = (10.0, 4.0, 1.0, 0.5)
TYPE_ORDER = {"concept": 0, "flow": 1, "claim": 2, "repo": 3}
MIN_COVERAGE = 0.5
NAME_WEIGHT = 10.0  # times the share of query tokens found in the names (to NAME_POWER)
NAME_POWER = 1.5
TEXT_WEIGHT = 5.0  # times the share of query tokens found anywhere
PHRASE_WEIGHT = 2.0  # when every query token occurs close together in one column
NEAR_SLACK = 2
STRONG = NAME_WEIGHT + TEXT_WEIGHT  # a score this high: the hit's names hold every query word
MAX_CHARS = 1000  # a query longer than this is refused (a usage error)
MAX_TERMS = 64  # and one of more distinct words


class QueryTooLong(UsageError):
    """A query over `MAX_CHARS` characters or `MAX_TERMS` distinct words."""


def check_query(text: str, query: list[str] | None = None) -> None:
    """Refuse a query over the limits, with what was given and what is allowed."""
    from ..errors import Location

    if len(text) > MAX_CHARS:
        raise QueryTooLong(f"the query is {len(text)} characters long; at most {MAX_CHARS} are searched",
                           Location("query"), "give the few words that matter")
    if query is not None and len(query) > MAX_TERMS:
        raise QueryTooLong(f"the query has {len(query)} distinct words; at most {MAX_TERMS} are searched",
                           Location("query"), "give the few words that matter")

# Where a query token is looked for in a document: anywhere, in its names, in its names or headline
# (a claim's statement is its headline: claims have no names), outside its evidence sentences
HELD = ("", "names : ", "{names head} : ", "{names head body} : ")
_NONE: tuple[set[int], set[int], set[int], set[int]] = (set(), set(), set(), set())


def above_floor(n: int, typ: str, held: tuple[set[int], ...], name_words: set[int],
                corrected: set[int]) -> bool:
    """The score floor, for a hit the query does not name exactly. `held`: which of the query's `n`
    tokens (by position) it holds anywhere, in its names, in its names or headline, outside its
    evidence (`HELD`); `name_words`: the tokens some document has in its names. The hit holds at
    least half of the tokens; one outside its evidence sentences, or one that names something (a
    common word that only a pin's sentence shares is no answer; "deepep" in a pin's path is); one in
    its names (a claim: in its statement) unless it holds them all; and, when some tokens were typos
    (`corrected`) and others not, one that was not (a corrected typo alone does not make a hit of a
    nonsense query)."""
    anywhere, in_names, in_title, outside = held
    title = in_title if typ == "claim" else in_names
    if not n or len(anywhere) / n < MIN_COVERAGE or not (title or len(anywhere) == n):
        return False
    if not (outside or anywhere & name_words):
        return False
    return not corrected or len(corrected) == n or bool(anywhere - corrected)


def _score(n: int, bm: float, held: tuple[set[int], ...], exact: bool, near: bool) -> float:
    """Exact name 100; names share (to NAME_POWER) x NAME_WEIGHT; coverage x TEXT_WEIGHT; phrase
    bonus; bm25 squashed below 1."""
    anywhere, in_names = held[0], held[1]
    return (100.0 if exact else 0.0) + (NAME_WEIGHT * (len(in_names) / n) ** NAME_POWER if n else 0.0) \
        + (TEXT_WEIGHT * len(anywhere) / n if n else 0.0) + (PHRASE_WEIGHT if near else 0.0) + bm / (1.0 + bm)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in text)


# ---------------------------------------------------------------------------------------------
# The index (SQLite FTS5)
# ---------------------------------------------------------------------------------------------

_SCHEMA = (
    # contentless: the tokens are not stored twice; a row is deleted by giving its tokens again,
    # recomputed from the texts kept in `doc` (see remove_documents)
    "CREATE VIRTUAL TABLE fts USING fts5(names, head, body, evidence, content='', "
    "tokenize='unicode61 remove_diacritics 0')",
    "CREATE TABLE doc (rowid INTEGER PRIMARY KEY, type TEXT, id TEXT, name_en TEXT, name_zh TEXT, "
    "texts BLOB)",
    "CREATE INDEX doc_id ON doc(type, id)",
    "CREATE TABLE key (key TEXT, rowid INTEGER)",
    "CREATE INDEX key_key ON key(key)",
    "CREATE INDEX key_rowid ON key(rowid)",
)


def create(con) -> None:
    """The search tables, in an empty database."""
    for sql in _SCHEMA:
        con.execute(sql)


def _columns(texts, tokenized=None) -> list[str]:
    """The FTS5 column values (space-separated tokens) of a document's texts [(col, lang, text)]
    (`tokenized`: the tokens of each text, when known)."""
    by_col: dict[str, list[str]] = {col: [] for col in COLUMNS}
    for i, (col, _lang, text, *_) in enumerate(texts):
        by_col[col].append(" ".join(tokenized[i] if tokenized is not None else tokens(text)))
    return [" ".join(by_col[col]) for col in COLUMNS]


def _texts(blob) -> list:
    """A document's texts [(col, lang, text, its distinct tokens)] from its checksummed row."""
    from . import cache

    return cache.unpack(blob)


def add_documents(con, docs) -> None:
    """Index documents (see `documents`); a document's old row must have been removed first."""
    from . import cache

    for d in docs:
        texts = [(col, lang, t) for col in COLUMNS for lang, t in d[col]]
        tokenized = [tokens(t) for _col, _lang, t in texts]
        kept = [(*x, " ".join(dict.fromkeys(tk))) for x, tk in zip(texts, tokenized)]  # (for snippets)
        cur = con.execute("INSERT INTO doc (type, id, name_en, name_zh, texts) VALUES (?, ?, ?, ?, ?)",
                          (d["type"], d["id"], d["name"]["en"], d["name"]["zh"], cache.pack(kept)))
        rowid = cur.lastrowid
        con.execute("INSERT INTO fts(rowid, names, head, body, evidence) VALUES (?, ?, ?, ?, ?)",
                    (rowid, *_columns(texts, tokenized)))
        keys = {k for name in d["keys"] if name for k in (norm(name), squash(name)) if k}
        con.executemany("INSERT INTO key VALUES (?, ?)", [(k, rowid) for k in sorted(keys)])


def remove_documents(con, typ: str, ident: str) -> None:
    """Drop the document of one record (type, id) from the index, if it is there."""
    from . import cache

    rows = con.execute("SELECT rowid, texts FROM doc WHERE type = ? AND id = ?", (typ, ident)).fetchall()
    for rowid, blob in rows:
        con.execute("INSERT INTO fts(fts, rowid, names, head, body, evidence) VALUES ('delete', ?, ?, ?, ?, ?)",
                    (rowid, *_columns(cache.unpack(blob))))
        con.execute("DELETE FROM key WHERE rowid = ?", (rowid,))
        con.execute("DELETE FROM doc WHERE rowid = ?", (rowid,))


def build(atlas):
    """A search index of `atlas` in memory (for an atlas in hand; the compiled index keeps its own
    in its database, updated per data file: see atlas.index.update). Returns an open `SearchIndex`."""
    import sqlite3

    con = sqlite3.connect(":memory:", check_same_thread=False)
    create(con)
    add_documents(con, search_documents(atlas))
    con.commit()
    return SearchIndex(con)


def index_path(index):
    """The database file holding the search index of the compiled index `index` (atlas.index.compiled), which
    another thread may open read-only (it does not change while `index` is held); a path that does
    not exist when the index is in memory."""
    from pathlib import Path

    return index.path or Path(os.devnull + ".in-memory.sqlite")


class SearchIndex:
    """Ranked search over one SQLite connection. It may be handed to another thread (a server's
    worker threads), but callers must not use it from two threads at once. `owner` is what keeps the
    connection open (the compiled index whose tables these are), held as long as the search is."""

    def __init__(self, con, owner=None):
        self.con = con
        self.owner = owner

    def exact(self, text: str) -> list[tuple[str, str]]:
        """(type, id) of every document having `text` as an id, name, alias or title."""
        keys = {k for k in (norm(text), squash(text)) if k}
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self.con.execute(
            f"SELECT DISTINCT doc.type, doc.id FROM key JOIN doc ON doc.rowid = key.rowid "
            f"WHERE key.key IN ({marks})", sorted(keys)).fetchall()
        return sorted(rows, key=lambda r: (TYPE_ORDER[r[0]], r[1]))

    def search(self, text: str, types=None, limit: int = 20, snippets: bool | int = True) -> list[dict]:
        """Ranked hits `{type, id, name, score, snippet: {field, lang, text}}`, best first. `snippets`
        False: no snippet (a caller that only ranks); a number: snippets for that many first hits."""
        check_query(text)
        query = query_tokens(text)
        check_query(text, query)
        fixed = self._corrections(text, query)
        groups = [fixed.get(t, [t]) for t in query]
        exact_rows = self._exact_rows(set(self.exact(text)) | self._respelt(text, fixed))
        if not groups and not exact_rows:
            return []
        found, held = self._matches(groups)
        corrected = {i for i, t in enumerate(query) if t in fixed}
        name_words = {i for h in held.values() for i in h[1]}
        rows = set(found) | exact_rows
        if not rows:
            return []
        near = self._near([g[0] for g in groups])
        marks = ",".join("?" * len(rows))
        hits = []
        for rowid, typ, ident, en, zh in self.con.execute(
                f"SELECT rowid, type, id, name_en, name_zh FROM doc WHERE rowid IN ({marks})", list(rows)):
            floor = above_floor(len(groups), typ, held.get(rowid, _NONE), name_words, corrected)
            if (types and typ not in types) or not (rowid in exact_rows or floor):
                continue
            score = _score(len(groups), found.get(rowid, 0.0), held.get(rowid, _NONE), rowid in exact_rows,
                           rowid in near)
            hits.append({"type": typ, "id": ident, "name": {"en": en, "zh": zh},
                         "score": round(score, 4), "_rowid": rowid})
        hits.sort(key=lambda h: (-h["score"], TYPE_ORDER[h["type"]], h["id"]))
        hits = hits[:limit]
        shown = len(hits) if snippets is True else int(snippets)
        self._snippets(hits[:shown], text, [t for g in groups for t in g])
        for h in hits[shown:]:
            del h["_rowid"]
        return hits

    def _corrections(self, text: str, query: list[str]) -> dict[str, list[str]]:
        """{token: the tokens it may stand for}, for the one-edit typos of Latin words (`atlas.ask.spelling`)."""
        from ..ask.spelling import corrections

        return corrections(self.con, text) if query else {}

    def _respelt(self, text: str, fixed: dict[str, list[str]]) -> set:
        """The records the query names once one of its typos is corrected ("hcll", "use_ascned")."""
        from ..ask.spelling import respellings
        from ..ask.tokens import latin_words

        typos = [(w, t) for w, t in latin_words(text) if t in fixed]
        if not typos or len(typos) > 3:
            return set()
        folded = norm(text)
        found: set = set()
        for word, token in typos:
            for spelling in respellings(word, set(fixed[token])):
                found.update(self.exact(folded.replace(word, spelling, 1)))
        return found

    def _matches(self, groups: list[list[str]]) -> tuple[dict[int, float], dict[int, tuple]]:
        """Per document: its BM25 relevance to any token, and which query tokens (by position) it
        holds in each place of `HELD`. A token is a group of alternatives (a typo's corrections);
        holding one of them holds the token."""
        found: dict[int, float] = {}
        held: dict[int, tuple[set[int], set[int], set[int], set[int]]] = {}
        if not groups:
            return found, held
        weights = ", ".join(str(w) for w in WEIGHTS)
        match = " OR ".join(_quote(t) for g in groups for t in g)
        for rowid, rank in self.con.execute(
                f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ?", (match,)):
            found[rowid] = -rank
        for i, g in enumerate(groups):
            alternatives = _quote(g[0]) if len(g) == 1 else "(" + " OR ".join(_quote(t) for t in g) + ")"
            for k, where in enumerate(HELD):
                for (rowid,) in self.con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (where + alternatives,)):
                    held.setdefault(rowid, (set(), set(), set(), set()))[k].add(i)
        return found, held

    def _near(self, query: list[str]) -> set[int]:
        """The documents holding all the tokens close together (the phrase bonus)."""
        if len(query) <= 1 or not PHRASE_WEIGHT:
            return set()
        phrase = f"NEAR({' '.join(_quote(t) for t in query)}, {NEAR_SLACK})"
        return {r for (r,) in self.con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (phrase,))}

    def _exact_rows(self, exact: set) -> set[int]:
        """The documents of the records the text names exactly."""
        if not exact:
            return set()
        marks = " OR ".join("(type = ? AND id = ?)" for _ in exact)
        return {r for (r,) in self.con.execute(f"SELECT rowid FROM doc WHERE {marks}",
                                               [x for pair in exact for x in pair])}

    def _snippets(self, hits: list[dict], text: str, query: list[str]) -> None:
        """Give each hit the snippet that shows why it matched (and drop its row id)."""
        if not hits:
            return
        marks = ",".join("?" * len(hits))
        blobs = dict(self.con.execute(f"SELECT rowid, texts FROM doc WHERE rowid IN ({marks})",
                                      [h["_rowid"] for h in hits]))
        cjk = _has_cjk(text)
        for h in hits:
            h["snippet"] = snippet(_texts(blobs[h.pop("_rowid")]), query, cjk)


# ---------------------------------------------------------------------------------------------
# Snippets
# ---------------------------------------------------------------------------------------------

SNIPPET_WIDTH = 72


def snippet(texts: list, query: list[str], cjk_first: bool) -> dict:
    """The text that best shows why a document matched, cut around the first matching token."""
    qset = set(query)
    best, best_key = None, None
    order = {c: i for i, c in enumerate(COLUMNS)}
    for pos, (col, lang, text, toks) in enumerate(texts):
        have = qset.intersection(toks.split())
        if not have and best is not None:
            continue
        lang_rank = 2 if lang == "" else 0 if (lang == "zh") == cjk_first else 1
        key = (-len(have), order[col], lang_rank, pos)
        if best_key is None or key < best_key:
            best, best_key = (col, lang, text, have), key
    if best is None:
        return {"field": "", "lang": "", "text": ""}
    col, lang, text, have = best
    return {"field": col, "lang": lang, "text": _cut_around(text, have)}


def _find(text_folded: str, token: str) -> int:
    if _has_cjk(token):
        return text_folded.find(token)
    m = re.search(r"(?<![^\W_])" + re.escape(token), text_folded)
    return m.start() if m else -1


def _cut_around(text: str, have: set[str]) -> str:
    flat = " ".join(text.split())
    if width(flat) <= SNIPPET_WIDTH:
        return flat
    folded = unicodedata.normalize("NFKC", flat).casefold()
    spots = [i for i in (_find(folded, t) for t in have) if i >= 0] if len(folded) == len(flat) else []
    at = min(spots) if spots else 0
    start = at
    budget = SNIPPET_WIDTH // 3
    while start > 0 and width(flat[start - 1:at]) <= budget:
        start -= 1
    if start > 0:
        space = flat.find(" ", start, at)
        if space != -1:
            start = space + 1
    end = start
    used = 0
    while end < len(flat) and used + width(flat[end]) <= SNIPPET_WIDTH - 2:
        used += width(flat[end])
        end += 1
    if end < len(flat) and not _has_cjk(flat[end - 1:end + 1]):
        space = flat.rfind(" ", start, end)
        if space > at:
            end = space
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


# ---------------------------------------------------------------------------------------------
# Relevance against a phrase set
# ---------------------------------------------------------------------------------------------

def relevance(index: SearchIndex, phrases: list[dict]) -> dict:
    """Top-1 and top-3 rates of `phrases` ({phrase, expect: "type:id"}) and the misses."""
    top1 = top3 = 0
    misses = []
    for p in phrases:
        got = [f"{h['type']}:{h['id']}" for h in index.search(p["phrase"], limit=3)]
        if got[:1] == [p["expect"]]:
            top1 += 1
        if p["expect"] in got:
            top3 += 1
        else:
            misses.append({"phrase": p["phrase"], "expect": p["expect"], "got": got})
        if got[:1] != [p["expect"]] and p["expect"] in got:
            misses.append({"phrase": p["phrase"], "expect": p["expect"], "got": got, "top3": True})
    n = len(phrases) or 1
    return {"phrases": len(phrases), "top1": top1 / n, "top3": top3 / n, "misses": misses}
