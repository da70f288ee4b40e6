"""Answering what `atlas query WORDS` (and the MCP `search` tool) is asked.

A plain name of one concept gives its card, as it always has. Anything else is read first
(`atlas.ask.understand`: the intent, the concepts named, the words that matter) and answered with one
value, `{query, intent, answer, hits}`:

- `intent`: `{kind, question, concepts, lang}`; kind is definition, history, release, question, comparison,
  claims or search (docs/json.md);
- `answer`: what the question asks for, from the views (a definition: the card; history: the
  card's first visible day and history; question: the card's answer to that question; comparison:
  `queries.compare`; claims: the claims about the concepts; release: the first release of each
  public symbol the text names, per repository that declares it, else of the symbols the named
  concept names - `release_answer`), or None for a search;
- `hits`: the ranked search over the words that matter (question words dropped), with the concepts
  the intent is about first (for claims: the claims about them first).

An intent that needs a concept and names none takes the concept the words find by all of its name
(the first hit, scoring `search.STRONG` or more); failing that, the words are searched as they are.
Nothing found in concepts, claims, flows or repositories is a miss: `Asked("miss", ...)`.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from .understand import Reading, read, sides

LIMIT = 10
RELEASE_SYMBOLS = 24  # the symbols a release answer lists (a concept may name more: `more` counts them)
# a word of the question shaped like a symbol: `a_b`, `ns::f`, `camelCase`/`HcclX`
_WORD = re.compile(r"(?<![\w:])[A-Za-z_~][A-Za-z0-9_]*(?:::~?[A-Za-z_][A-Za-z0-9_]*)*")
_SHAPED = re.compile(r"_|::|[a-z][A-Z]|[A-Z]{2}[a-z]")
CLAIMS = 40  # hits ranked beyond the shown ones when claims are asked for: every claim the words find


class Asked(NamedTuple):
    """`kind` "card" (value: the card), "answer" (value: {query, intent, answer, hits}) or "miss"
    (value: None); `reading` is None for a plain name."""

    kind: str
    value: Any
    reading: Reading | None


def ask(opened: Any, text: str, as_of: str | None = None) -> Asked:
    """What `atlas query TEXT` answers, over an opened atlas (`atlas.opened.Opened`)."""
    from ..index.search import check_query

    check_query(text)
    store = opened.cards
    ident = store.exact(text)  # (a kept card's id opens nothing more)
    if ident:
        return Asked("card", store.card(ident, as_of), None)
    value, reading = understood(opened, text)
    if reading.kind == "search":
        prefix = store.prefix(text)
        hits = value["hits"]
        if prefix and (not hits or (hits[0]["type"], hits[0]["id"]) == ("concept", prefix)):
            return Asked("card", store.card(prefix, as_of), reading)
    if not value["hits"] and value["answer"] is None:
        return Asked("miss", None, reading)
    if as_of:
        store.mark_hits(value["hits"], as_of)
        if value["intent"]["kind"] == "definition":
            value["answer"] = store.card(value["answer"]["id"], as_of)
    return Asked("answer", value, reading)


def understood(opened: Any, text: str, limit: int = LIMIT, cards: bool = True) -> tuple[dict, Reading]:
    """The value `{query, intent, answer, hits}` for any text, at most `limit` hits besides those
    the answer is about (the MCP `search` returns it, with `cards` False: a definition's answer is
    then `{concept, name}`, as the whole card is the `card` tool's and would not fit a page)."""
    from ..index.search import check_query

    check_query(text)
    reading = read(text, opened.cards.names)
    index = opened.index
    subjects = list(reading.concepts)
    kind = reading.kind
    # one search: the hits shown (with snippets) and, for a question about claims, the claims ranked
    words = reading.text if kind != "search" else reading.plain  # "" when only question words were asked
    ranked = index.search(words, limit=limit + (CLAIMS if kind == "claims" else 0), snippets=limit) if words else []
    hits = ranked[:limit]
    released = None
    if kind == "release":
        released = release_answer(opened, text, subjects or _strong(hits))
        if released is None:  # no public symbol is named: the concept's history answers "since when"
            kind = "history"
        else:
            subjects = released["concepts"]
    if kind in ("definition", "history", "question") and not subjects:
        subjects = _strong(hits)
    if kind == "comparison" and len(subjects) < 2:
        subjects = _sides(index, reading, subjects)
    if _needs_subject(kind, subjects):
        kind = "search"
        hits = index.search(reading.plain, limit=limit) if reading.plain else []
    answer = released if kind == "release" else ANSWERS[kind](opened, reading, subjects, ranked)
    if kind == "definition" and not cards and answer is not None:
        answer = {"concept": answer["id"], "name": answer["names"]}
    hits = _first(opened, kind, subjects, answer, hits, limit)
    intent = {"kind": kind, "question": reading.question if kind == "question" else None,
              "concepts": subjects, "lang": reading.lang}
    return {"query": text, "intent": intent, "answer": answer, "hits": hits}, reading


def release_answer(opened: Any, text: str, concepts: list[str]) -> dict | None:
    """The first release of the public symbols a question names (each word shaped like a symbol
    that the API store knows, in every repository that declares it), else of those the named
    concepts name: {concepts, symbols: [{repo, kind, name, first_release, introduced,
    introduced_date, first, removed, concepts}], more}; None when neither names one."""
    api = opened.api
    found = []
    for m in _WORD.finditer(text):
        if _SHAPED.search(m.group(0)):
            found += api.lookup(m.group(0))
    used: list[str] = []
    if not found:
        for cid in concepts:
            named = [s for item in opened.cards.card(cid).get("api") or []
                     for s in api.lookup(f"{item['repo']}:{item['name']}") if s.kind == item["kind"]]
            if named:
                used.append(cid)
                found += named
    unique = list({(s.repo, s.kind, s.name): s for s in found}.values())
    if not unique:
        return None
    cards = [api.card(s) for s in unique[:RELEASE_SYMBOLS]]
    return {"concepts": used, "more": max(0, len(unique) - RELEASE_SYMBOLS),
            "symbols": [{k: c[k] for k in ("repo", "kind", "name", "first_release", "introduced", "introduced_date",
                                           "first", "removed", "concepts")} for c in cards]}


def _needs_subject(kind: str, subjects: list[str]) -> bool:
    return (kind in ("definition", "history", "question") and not subjects) or \
        (kind == "comparison" and len(subjects) < 2)


def _strong(hits: list[dict]) -> list[str]:
    """The concept the words find by all of its name: the first hit, when it is such a concept."""
    from ..index.search import STRONG

    if hits and hits[0]["type"] == "concept" and hits[0]["score"] >= STRONG:
        return [hits[0]["id"]]
    return []


def _sides(index: Any, reading: Reading, subjects: list[str]) -> list[str]:
    """The concepts of a comparison: those named, then each part between the joins that finds one
    concept by all of its name."""
    out = list(subjects)
    for part in sides(reading.text):
        for found in _strong(index.search(part, limit=1, snippets=False)):
            if found not in out:
                out.append(found)
    return out


# ---------------------------------------------------------------------------------------------
# The answer of each intent, from the views
# ---------------------------------------------------------------------------------------------

def _definition(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> dict:
    return opened.cards.card(subjects[0])


def _history(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> dict:
    card = opened.cards.card(subjects[0])
    return {"concept": card["id"], "name": card["names"], "first_visible": card["first_visible"],
            "history": card["history"], "undated": card.get("undated")}


def _question(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> dict:
    store = opened.cards
    card = store.card(subjects[0])
    q = reading.question or ""
    return {"concept": card["id"], "name": card["names"],
            "question": {"id": q, "names": store.questions.get(q, {"en": q, "zh": q})},
            "text": card["answers"].get(q), "answers": list(card["answers"])}


def _comparison(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> dict:
    from ..view import queries

    store = opened.cards
    return queries.compare_cards([store.card(i) for i in subjects], store.questions)


def _claims(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> dict:
    """The claims about the named concepts: those the words find first (as they rank them), then
    those about more of the concepts. With no concept named, or none that any claim is about, the
    claims the words find, as the ranked search orders claims."""
    about: dict[str, int] = {}
    found: dict[str, dict] = {}
    for s in subjects:
        for cl in opened.cards.card(s)["claims"]:
            about[cl["id"]] = about.get(cl["id"], 0) + 1
            found.setdefault(cl["id"], {k: cl[k] for k in ("id", "status", "statement")})
    ranked = [h["id"] for h in hits if h["type"] == "claim"]  # as the words rank them
    if not found:
        refs = claim_refs(opened)
        return {"concepts": [], "claims": [refs[c] for c in ranked if c in refs]}
    rank = {c: i for i, c in enumerate(c for c in ranked if c in found)}
    order = sorted(found, key=lambda c: (rank.get(c, len(rank)), -about[c], c))
    return {"concepts": subjects, "claims": [found[c] for c in order]}


def claim_refs(opened: Any) -> dict[str, dict]:
    """Every claim as a card lists it ({id, status, statement}, `views.claim_ref`), by id: read from
    the cache, where the first question about claims that names no concept leaves it (the records
    are opened once for it, not at every such question)."""
    from ..index import cache

    file = cache.path("claims", opened.key)
    refs = cache.read(file)
    if not isinstance(refs, dict):
        from ..view.views import claim_ref

        refs = {cl.id: claim_ref(cl) for cl in opened.atlas.claims}
        cache.write(file, refs)
    return refs


def _search(opened: Any, reading: Reading, subjects: list[str], hits: list[dict]) -> None:
    return None


ANSWERS = {"definition": _definition, "history": _history, "question": _question,
           "comparison": _comparison, "claims": _claims, "search": _search}


# ---------------------------------------------------------------------------------------------
# The ranked list, with what the answer is about first
# ---------------------------------------------------------------------------------------------

def _first(opened: Any, kind: str, subjects: list[str], answer: Any, hits: list[dict], limit: int) -> list[dict]:
    """The hits with the records the answer is about first: the claims (intent claims), then the
    concepts (in the order named). A record the search did not find is added, named exactly."""
    if kind == "search":
        return hits
    lead: list[tuple[str, str]] = []
    if kind == "claims":
        lead += [("claim", c["id"]) for c in answer["claims"]]
    lead += [("concept", s) for s in subjects]
    by_key = {(h["type"], h["id"]): h for h in hits}
    first = [by_key.get(key) or _named_hit(opened, key, answer) for key in lead]
    rest = [h for h in hits if (h["type"], h["id"]) not in set(lead)]
    return (first + rest)[:max(limit, len(first))]


def _named_hit(opened: Any, key: tuple[str, str], answer: Any) -> dict:
    typ, ident = key
    if typ == "claim":
        statement = next(c["statement"] for c in answer["claims"] if c["id"] == ident)
        return {"type": "claim", "id": ident, "name": statement, "score": 0.0,
                "snippet": {"field": "head", "lang": "", "text": ""}}
    names = opened.cards.card(ident)["names"]
    return {"type": "concept", "id": ident, "name": {"en": names.get("en", ""), "zh": names.get("zh", "")},
            "score": 100.0, "snippet": {"field": "names", "lang": "", "text": ""}}
