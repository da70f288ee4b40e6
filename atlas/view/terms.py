"""Which record a term names: the one resolver every face uses (terminal, JSON, MCP, the card store).

A concept is named by its id, an English or Chinese name or an alias (case-, width- and
punctuation-insensitive), or by a confident prefix of one. A flow by its id or title, a unique
prefix of either, or the one flow whose id and title hold every word. A repository by its id, its
name after the owner, or a unique prefix. A term that names nothing raises `NoMatch` with the
closest concepts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ..errors import Location, NoMatch
from ..model.core import Atlas, Concept, Flow, Repository
from ..text import norm, squash, suggest
from ..ask.tokens import query_tokens, tokens
from .views import row

if TYPE_CHECKING:
    from .viewtypes import Row

# ---------------------------------------------------------------------------------------------
# Concepts, over the atlas's name indexes or their plain copies in the card store
# ---------------------------------------------------------------------------------------------


def exact_id(ids: Any, name_index: dict, loose_index: dict, term: str) -> str | None:
    """The one concept whose id, English or Chinese name or alias is the term (case-, width- and
    punctuation-insensitive), else None."""
    term = term.strip()
    if term in ids:
        return term
    for index, fold in ((name_index, norm), (loose_index, squash)):
        hits = index.get(fold(term))
        if hits and len(hits) == 1:
            return next(iter(hits))
    return None


def prefix_id(name_index: dict, loose_index: dict, term: str) -> str | None:
    """The concept a term is a confident prefix of: the only concept with a name starting with it,
    and no other concept has a name with a word starting with it ("collective communication"
    starts CCU's "Collective Communication Unit" but also a word of HCCL's name: not confident;
    "memfab" starts only MemFabric's names, and sits inside aclrtMemFabricHandle, not at a word)."""
    for index, fold in ((name_index, norm), (loose_index, squash)):
        key = fold(term)
        if not key:
            continue
        owners = {cid for name, found in index.items() if name.startswith(key) for cid in found}
        if len(owners) == 1:
            inside = {cid for name, found in index.items() if _word_start(key, name) for cid in found}
            return owners.pop() if inside == owners else None
    return None


def _word_start(key: str, name: str) -> bool:
    """`key` occurs in `name` at the start of a word (after a character that is not a letter or a
    digit, or where a Chinese character begins)."""
    at = name.find(key)
    while at != -1:
        if at == 0 or not name[at - 1].isalnum() or _cjk(name[at]) or _cjk(name[at - 1]):
            return True
        at = name.find(key, at + 1)
    return False


def _cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def find_id(ids: Any, name_index: dict, loose_index: dict, term: str) -> str | None:
    """Id, English or Chinese name or alias (case/width-insensitive), or a confident prefix."""
    return exact_id(ids, name_index, loose_index, term) or prefix_id(name_index, loose_index, term)


def find(atlas: Atlas, term: str) -> Concept | None:
    ident = find_id(atlas.concept_by_id, atlas.name_index, atlas.loose_index, term)
    return atlas.concept_by_id[ident] if ident else None


def prefix_owners(atlas: Atlas, term: str) -> list[str]:
    """Concepts having a name or alias that starts with the term (an ambiguous prefix)."""
    return prefix_owners_in(atlas.name_index, atlas.loose_index, term)


def prefix_owners_in(name_index: dict, loose_index: dict, term: str) -> list[str]:
    """`prefix_owners` over name indexes (the atlas's or the card store's plain copies)."""
    key, loose = norm(term), squash(term)
    owners = {cid for name, ids in name_index.items() if key and name.startswith(key) for cid in ids}
    owners |= {cid for name, ids in loose_index.items() if loose and name.startswith(loose) for cid in ids}
    return sorted(owners)


def nearest_names(name_index: dict, loose_index: dict, term: str, limit: int = 8) -> list[str]:
    """The concepts whose names are nearest a term that named none: those with a name it starts,
    then by spelling. Over name indexes only, so the card store answers without the records."""
    ranked = prefix_owners_in(name_index, loose_index, term)
    candidates = {name: cid for name, ids in name_index.items() for cid in sorted(ids)}
    ranked += [cid for cid in suggest(term, candidates, limit, folded=True) if cid not in ranked]
    return ranked[:limit]


def concept_texts(c: Concept) -> list[str]:
    """A concept's id, names, aliases, explanations and answers (what `text:` filters search)."""
    out = [c.id, *c.all_names(), *c.beginner.both(), *c.professional.both()]
    for a in c.answers.values():
        out.extend(a.both())
    return out


def suggestions(atlas: Atlas, term: str, limit: int = 8) -> list[Row]:
    """Ranked concepts for a term that matched nothing: names it is a prefix of, spelling, then full text."""
    ranked = nearest_names(atlas.name_index, atlas.loose_index, term, limit)
    key = norm(term)
    if key:
        for c in atlas.concepts:
            if c.id not in ranked and any(key in norm(t) for t in concept_texts(c)):
                ranked.append(c.id)
    return [row(atlas.concept_by_id[cid]) for cid in ranked[:limit]]


def concept(atlas: Atlas, term: str) -> Concept:
    """The concept a term names, or `NoMatch` with the closest ones."""
    c = find(atlas, term)
    if c is not None:
        return c
    hints = suggestions(atlas, term)
    hint = "did you mean: " + ", ".join(h["id"] for h in hints) if hints else \
        "try `atlas query text:WORD` to search the explanations"
    several = len(prefix_owners(atlas, term)) > 1
    message = f'"{term}" is ambiguous: several concepts have names starting with it' if several \
        else f'no concept matches "{term}"'
    raise NoMatch(message, Location("query"), hint, [dict(h) for h in hints], term)


def concepts(atlas: Atlas, terms: Iterable[str]) -> list[Concept]:
    """The concepts the terms name, each once, in the order first named (a term given twice is
    resolved once: 2,000 copies of one name cost one lookup)."""
    chosen: dict[str, Concept] = {}
    for t in dict.fromkeys(terms):
        c = concept(atlas, t)
        chosen.setdefault(c.id, c)
    return list(chosen.values())


# ---------------------------------------------------------------------------------------------
# Flows and repositories
# ---------------------------------------------------------------------------------------------


def flow(atlas: Atlas, name: str) -> Flow | None:
    """A flow by id or title (case-, width- and punctuation-insensitive), a unique prefix of
    either, or the one flow whose id and title hold every word of the name."""
    if name in atlas.flow_by_id:
        return atlas.flow_by_id[name]
    for fold in (norm, squash):
        key = fold(name)
        if not key:
            continue
        keys = {f.id: [fold(k) for k in (f.id, f.title.en, f.title.zh) if k] for f in atlas.flows}
        for test in (lambda k: k == key, lambda k: k.startswith(key)):
            owners = [fid for fid, ks in keys.items() if any(test(k) for k in ks)]
            if len(owners) == 1:
                return atlas.flow_by_id[owners[0]]
    words = set(query_tokens(name))
    if words:
        found = [f for f in atlas.flows if words <= set(tokens(" ".join([f.id, f.title.en, f.title.zh])))]
        if len(found) == 1:
            return found[0]
    return None


def closest_flows(atlas: Atlas, index, name: str, limit: int = 3) -> list[str]:
    """The flows nearest a name that named none: the ranked search (when an index is given), then
    spelling."""
    ranked = [h["id"] for h in index.search(name, types={"flow"}, limit=limit)] if index is not None else []
    ranked += [fid for fid in suggest(name, {k: f.id for f in atlas.flows
                                              for k in (f.id, f.title.en, f.title.zh) if k}, limit)
               if fid not in ranked]
    return ranked[:limit]


def repository(atlas: Atlas, ident: str) -> Repository | None:
    """A repository by id (case-insensitive), by its name after the owner, or a unique prefix."""
    key = ident.strip().lower()
    by = {r.id.lower(): r for r in atlas.repositories}
    if key in by:
        return by[key]
    for test in (lambda i: i.split("/", 1)[-1] == key, lambda i: i.startswith(key),
                 lambda i: i.split("/", 1)[-1].startswith(key)):
        owners = [r for i, r in by.items() if test(i)]
        if len(owners) == 1:
            return owners[0]
    return None
