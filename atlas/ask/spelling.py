"""One-edit typos in the Latin words of a query ("fabirc 内存", "doorbel", "hcss"), corrected against
the words the search index holds.

A word of the query is corrected when it is Latin letters and digits, at least `MIN_LENGTH` long as
typed, holds a letter, and no document holds its search token: the token stands for the indexed
tokens of the words one edit away (a letter deleted, inserted or replaced, or two neighbours
swapped: the Damerau-Levenshtein distance 1), the `MAX_ALTERNATIVES` that the most documents hold
(ties: alphabetical). A document holding any of them holds the token, so the other words of the
query choose among them ("storge nic": storage, not store). Edits are made to the word as typed
and then plural-folded like every token, so "hcss" finds "hccs". Chinese words are left alone
(they are matched by character pairs, which already tolerate a changed character). The vocabulary
is the FTS5 index's own (`fts5vocab`), asked once per query for the candidates: no list of words
is loaded.
"""
from __future__ import annotations

import re
import sqlite3

from .tokens import latin_words, stem

MIN_LENGTH = 4
MAX_ALTERNATIVES = 3  # a typo stands for the indexed tokens the most documents hold, at most this many
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_LATIN = re.compile(r"[a-z0-9]+")
_LETTER = re.compile(r"[a-z]")
_VOCAB = "atlas_vocab"


def edits(word: str) -> set[str]:
    """Every string one edit away from `word` (delete, swap of neighbours, replace, insert)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in ALPHABET}
    out |= {a + c + b for a, b in splits for c in ALPHABET}
    out.discard(word)
    return out


def eligible(word: str) -> bool:
    """A word typos are looked for in: Latin letters and digits, long enough, with a letter."""
    return len(word) >= MIN_LENGTH and bool(_LATIN.fullmatch(word)) and bool(_LETTER.search(word))


def _vocabulary(con: sqlite3.Connection, table: str) -> str:
    """The name of a temporary fts5vocab table over `table` (made once per connection)."""
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_VOCAB} USING fts5vocab(main, {table}, 'row')")
    return f"temp.{_VOCAB}"


def _counts(con: sqlite3.Connection, vocab: str, terms: list[str]) -> dict[str, int]:
    """How many documents hold each of `terms` (absent: none)."""
    out: dict[str, int] = {}
    for i in range(0, len(terms), 500):  # SQLite's limit on bound parameters
        chunk = terms[i:i + 500]
        marks = ",".join("?" * len(chunk))
        out.update(con.execute(f"SELECT term, doc FROM {vocab} WHERE term IN ({marks})", chunk).fetchall())
    return out


def corrections(con: sqlite3.Connection, text: str, table: str = "fts") -> dict[str, list[str]]:
    """{token: the tokens it may stand for, most documents first}, for the Latin words of `text`
    whose token no document holds and that are one edit from words whose tokens some do."""
    words = {w: t for w, t in latin_words(text) if eligible(w)}
    if not words:
        return {}
    try:
        vocab = _vocabulary(con, table)
        known = _counts(con, vocab, sorted(set(words.values())))
        out = {}
        for word, token in words.items():
            if known.get(token) or token in out:
                continue
            near = _counts(con, vocab, sorted({stem(e) for e in edits(word)} - {token}))
            if near:
                out[token] = sorted(near, key=lambda w: (-near[w], w))[:MAX_ALTERNATIVES]
        return out
    except sqlite3.Error:
        return {}  # an index without the vocabulary module: no corrections, never a failure


def respellings(word: str, tokens: set[str]) -> list[str]:
    """The words one edit from `word` whose search token is one of `tokens`."""
    if not eligible(word):
        return []
    return sorted(e for e in edits(word) if stem(e) in tokens)
