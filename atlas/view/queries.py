"""Lists and walks over an `Atlas`, composed of the view layer's views: filter and search, walk
relations, find typed paths, the six-question matrix, side-by-side comparison, flows, claims,
the timeline and the repositories.

Results are plain dicts and lists (the JSON output is exactly these); every record in them is a
view from `atlas.view.views`, and `render` turns them into text.
"""
from __future__ import annotations

from typing import Any

from . import terms as resolve, views
from ..errors import AtlasError, Location, UsageError
from ..model.core import (
    CLAIM_STATUSES, KINDS, LIFECYCLES, QUESTION_IDS, RELATION_TYPES, SYMMETRIC, Atlas, Concept, Relation,
    canonical_relation,
)
from ..text import norm

FILTER_KEYS = ("kind", "answers", "hw", "status", "repo", "rel", "text")


# ---------------------------------------------------------------------------------------------
# Search and filters
# ---------------------------------------------------------------------------------------------

def parse_filters(args: list[str]) -> tuple[list[tuple[str, str]], str]:
    """Split `kind:link answers:move some words` into filters and free text."""
    filters, words = [], []
    for arg in args:
        key, sep, value = arg.partition(":")
        if sep and key in FILTER_KEYS and value:
            filters.append((key, value))
        else:
            words.append(arg)
    return filters, " ".join(words)


def is_filter_query(args: list[str]) -> bool:
    return bool(parse_filters(args)[0])


def search(atlas: Atlas, filters: list[tuple[str, str]], text: str = "",
           as_of: str | None = None) -> list[views.Row]:
    matches = list(atlas.concepts)
    for key, value in filters:
        matches = [c for c in matches if _filter(atlas, c, key, value)]
    scored = []
    words = [norm(w) for w in text.split()] if text else []
    for c in matches:
        if words:
            names = [norm(n) for n in [c.id, *c.all_names()]]
            body = [norm(t) for t in resolve.concept_texts(c)]
            if not all(any(w in t for t in body) for w in words):
                continue
            score = sum(3 if any(w == n for n in names) else 2 if any(w in n for n in names) else 1
                        for w in words)
        else:
            score = 0
        scored.append((-score, c.id, c))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [views.row(c, atlas, as_of) for _, _, c in scored]


def _filter(atlas: Atlas, c: Concept, key: str, value: str) -> bool:
    """Whether concept `c` passes the filter `key:value` (an unknown key passes nothing)."""
    test = FILTERS.get(key)
    return bool(test and test(atlas, c, value))


def _by_kind(atlas: Atlas, c: Concept, value: str) -> bool:
    _check_choice(value, KINDS, "kind")
    return c.kind == value


def _by_answers(atlas: Atlas, c: Concept, value: str) -> bool:
    _check_choice(value, QUESTION_IDS, "question")
    return value in c.answers


def _by_status(atlas: Atlas, c: Concept, value: str) -> bool:
    _check_choice(value, LIFECYCLES, "lifecycle status")
    return c.lifecycle.status == value


def _by_hardware(atlas: Atlas, c: Concept, value: str) -> bool:
    hw = resolve.find(atlas, value)
    wanted = {hw.id} if hw else {value}
    if hw:  # a product matches its parts: hw:atlas-a3 also finds concepts scoped to its chip
        wanted |= {r.source for r in atlas.touching.get(hw.id, [])
                   if r.type == "part-of" and r.target == hw.id}
    return "any" in c.hardware or bool(wanted & set(c.hardware))


def _by_repo(atlas: Atlas, c: Concept, value: str) -> bool:
    repos = {r.lower() for r in views.concept_repositories(atlas, c)}
    return value.lower() in repos or any(r.endswith("/" + value.lower()) for r in repos)


def _by_relation(atlas: Atlas, c: Concept, value: str) -> bool:
    rtype, _, target = value.partition(":")
    canon = canonical_relation(rtype)
    if canon is None:
        raise UsageError(f'unknown relation type "{rtype}" in rel:{value}', Location("query"),
                         "types: " + ", ".join(RELATION_TYPES))
    forward, reverse = canon
    tc = resolve.find(atlas, target) if target else None
    if target and tc is None:
        raise AtlasError(f'no concept matches "{target}" in rel:{value}', Location("query"))
    for r in atlas.touching.get(c.id, []):
        if r.type != forward:
            continue
        if forward in SYMMETRIC:
            if tc is None or _other(r, c.id) == tc.id:
                return True
            continue
        mine, theirs = (r.target, r.source) if reverse else (r.source, r.target)
        if mine == c.id and (tc is None or theirs == tc.id):
            return True
    return False


def _by_text(atlas: Atlas, c: Concept, value: str) -> bool:
    w = norm(value)
    return any(w in norm(t) for t in resolve.concept_texts(c))


# filter key (as typed: `kind:link`) -> test(atlas, concept, value)
FILTERS = {"kind": _by_kind, "answers": _by_answers, "status": _by_status, "hw": _by_hardware,
           "repo": _by_repo, "rel": _by_relation, "text": _by_text}


def _check_choice(value: str, options, what: str) -> None:
    if value not in options:
        raise UsageError(f'unknown {what} "{value}"', Location("query"),
                         f"{what} is one of: " + ", ".join(options))


# ---------------------------------------------------------------------------------------------
# Graph walks
# ---------------------------------------------------------------------------------------------

def _other(rel: Relation, ident: str) -> str:
    return rel.target if rel.source == ident else rel.source


def related(atlas: Atlas, c: Concept, rel: str | None = None, depth: int = 1) -> list[dict]:
    forward = None
    if rel:
        canon = canonical_relation(rel)
        if canon is None:
            raise UsageError(f'unknown relation type "{rel}"', Location("--rel"),
                             "types: " + ", ".join(RELATION_TYPES))
        forward = canon[0]
    seen = {c.id: 0}
    frontier = [c.id]
    out = []
    for level in range(1, depth + 1):
        nxt = []
        for ident in frontier:
            for r in atlas.touching.get(ident, []):
                if forward and r.type != forward:
                    continue
                other = _other(r, ident)
                name = r.type if (r.type in SYMMETRIC or r.source == ident) else RELATION_TYPES[r.type]
                if other in seen:
                    continue
                seen[other] = level
                nxt.append(other)
                oc = atlas.concept_by_id.get(other)
                out.append({"depth": level, "from": ident, "relation": name, "id": other,
                            "kind": oc.kind if oc else "", "name": _names_or_nothing(oc)})
        frontier = sorted(nxt)
    return out


def _names_or_nothing(c: Concept | None) -> views.TextView | dict[str, str]:
    """A neighbour's names, or an empty object for an id the atlas does not hold."""
    return views.text(c.names) if c else {}


def path(atlas: Atlas, a: Concept, b: Concept, rel: str | None = None) -> list[dict]:
    """Shortest chain of relations from a to b (edges may be walked against their direction)."""
    import networkx as nx

    und: nx.Graph = nx.Graph()
    und.add_nodes_from(c.id for c in atlas.concepts)
    canon = canonical_relation(rel) if rel else None
    forward = canon[0] if canon else None
    if rel and forward is None:
        raise UsageError(f'unknown relation type "{rel}"', Location("--rel"))
    for r in sorted(atlas.relations(), key=lambda r: (r.source, r.target, r.type)):
        if forward and r.type != forward:
            continue
        if not und.has_edge(r.source, r.target):
            und.add_edge(r.source, r.target, rels=[])
        und.edges[r.source, r.target]["rels"].append(r)
    try:
        nodes = nx.shortest_path(und, a.id, b.id)
    except nx.NetworkXNoPath:
        return []
    steps = []
    for x, y in zip(nodes, nodes[1:]):
        rels = und.edges[x, y]["rels"]
        r = next((r for r in rels if r.source == x), rels[0])
        steps.append({"from": x, "to": y, "relation": r.type,
                      "direction": "forward" if (r.source == x or r.type in SYMMETRIC) else "backward"})
    return steps


# ---------------------------------------------------------------------------------------------
# Questions, comparison, flows, claims
# ---------------------------------------------------------------------------------------------

def questions(atlas: Atlas, concepts: list[Concept] | None = None) -> dict:
    chosen = concepts if concepts else [c for c in atlas.concepts if c.answers]
    if not concepts:
        kind_order = {k: i for i, k in enumerate(KINDS)}
        chosen = sorted(chosen, key=lambda c: (kind_order[c.kind], c.id))
    return {
        "questions": [{"id": q.id, "names": views.text(q.names), "explanation": views.text(q.explanation)}
                      for q in atlas.questions],
        "rows": [{"id": c.id, "kind": c.kind, "name": views.text(c.names), "answers": views.answers(c)}
                 for c in chosen],
    }


def compare(atlas: Atlas, concepts: list[Concept]) -> dict:
    """Concepts side by side (each once): their answers, hardware, lifecycle and first visible."""
    chosen = {c.id: c for c in concepts}.values()
    return compare_cards([views.card(atlas, c) for c in chosen], views.question_names(atlas))


def compare_cards(cards: list[views.Card], questions: dict[str, views.TextView]) -> dict:
    """The comparison, made from the concepts' cards and the questions' names: what `compare`
    returns, and what `atlas query "a vs b"` builds from the card store without the records."""
    cards = list({c["id"]: c for c in cards}.values())
    cols = []
    for c in cards:
        fv = c["first_visible"]
        cols.append({
            "id": c["id"], "kind": c["kind"], "name": c["names"], "answers": c["answers"],
            "hardware": list(c["hardware"]), "lifecycle": c["lifecycle"]["status"],
            "lifecycle_note": c["lifecycle"]["note"],
            "first_visible": ({"date": fv["date"], "repo": fv["repo"], "sha": fv["sha"],
                               "precision": fv["precision"], "first_release": fv["first_release"]} if fv else None),
            "needs_release": fv.get("needs_release", "") if fv else "",
        })
    ids = {c["id"] for c in cards}
    shared = sorted({x["id"] for c in cards for g in c["relations"] for x in g["concepts"]} & ids)
    return {"questions": [{"id": q, "names": names} for q, names in questions.items()],
            "concepts": cols, "related_among_them": shared}


def flows(atlas: Atlas) -> list[views.FlowSummary]:
    return [views.flow_summary(f) for f in atlas.flows]


def flow(atlas: Atlas, ident: str, index: Any = None) -> views.FlowView:
    """The flow a name names, or an error with the closest flows."""
    f = resolve.flow(atlas, ident)
    if f is None:
        close = resolve.closest_flows(atlas, index, ident)
        raise AtlasError(f'no flow "{ident}"', Location("flow"),
                         ("closest: " + ", ".join(close)) if close else "run `atlas flow` to list flows")
    return views.flow(atlas, f)


def claims(atlas: Atlas, c: Concept | None = None, status: str | None = None) -> list[views.ClaimView]:
    if status:
        _check_choice(status, CLAIM_STATUSES, "claim status")
    chosen = atlas.claims_about(c.id) if c else atlas.claims
    return [views.claim(atlas, cl) for cl in chosen if not status or cl.status == status]


# ---------------------------------------------------------------------------------------------
# The history axis
# ---------------------------------------------------------------------------------------------

def _utc_key(iso: str):
    from datetime import datetime, timezone

    try:
        return datetime.fromisoformat(iso).astimezone(timezone.utc)
    except ValueError:
        return datetime.max.replace(tzinfo=timezone.utc)


def timeline(atlas: Atlas, term: str | None = None, repos=(), as_of: str | None = None) -> dict:
    """Sightings oldest first (by the committer date in UTC), optionally for one concept or probe
    value, some repositories, or as visible on `as_of` (later ones are counted, not listed)."""
    sightings = list(atlas.sightings)
    if repos:
        sightings = [s for s in sightings if s.repo in repos]
    if term:
        ids = set(atlas.name_index.get(norm(term), set())) | {term}
        sightings = [s for s in sightings if s.concept in ids or term in s.value]
        if not sightings:
            raise AtlasError(f"no sighting matches {term!r}", Location("TERM"),
                             hint="run `atlas timeline` for all, or `atlas refresh` first")
    found = sorted((s for s in sightings if s.found),
                   key=lambda s: (_utc_key(s.committer_date), s.repo, s.concept, s.value))
    missing = sorted((s for s in sightings if not s.found and s.precision != "unknown"),
                     key=lambda s: (s.repo, s.concept))
    unknown = sorted((s for s in sightings if not s.found and s.precision == "unknown"),
                     key=lambda s: (s.repo, s.concept))
    hidden = 0
    if as_of:
        keep = [s for s in found if s.date <= as_of]
        hidden = len(found) - len(keep)
        found = keep
    return {
        "as_of": as_of, "hidden_after_as_of": hidden,
        "sightings": [{"date": s.date, "repo": s.repo,
                       "concept": s.concept, "method": s.method, "value": s.value, "sha": s.sha,
                       "committer_date": s.committer_date, "introduced": s.introduced,
                       "precision": s.precision, "note": s.note} for s in found],
        "not_found": [{"repo": s.repo, "concept": s.concept, "method": s.method,
                       "value": s.value, "cutoff": s.cutoff} for s in missing],
        "unknown": [{"repo": s.repo, "concept": s.concept, "method": s.method,
                     "value": s.value, "cutoff": s.cutoff, "note": s.note} for s in unknown],
    }


CLAIMS_FLOOR = 0.2  # a claim for a topic scores at least this share of the best claim's score


def claims_topic(atlas: Atlas, index: Any, topic: str, status: str | None = None) -> list[views.ClaimView]:
    """Claims ranked for a topic: their own text (statement, note, evidence) and the concepts they
    are about (a claim about a concept the topic finds ranks by that concept's score)."""
    if status:
        _check_choice(status, CLAIM_STATUSES, "claim status")
    own = {h["id"]: h["score"] for h in index.search(topic, types={"claim"}, limit=1000)}
    concepts = {h["id"]: h["score"] for h in index.search(topic, types={"concept"}, limit=25)}
    scored = []
    for cl in atlas.claims:
        if status and cl.status != status:
            continue
        about = max((concepts.get(c, 0.0) for c in cl.about), default=0.0)
        score = own.get(cl.id, 0.0) + 0.5 * about
        if score > 0:
            scored.append((-score, cl.id, cl))
    scored.sort(key=lambda t: (t[0], t[1]))
    if scored:  # the far tail (a stray shared word) is dropped once something matches strongly
        floor = -scored[0][0] * CLAIMS_FLOOR
        scored = [t for t in scored if -t[0] >= floor]
    out = []
    for neg, _, cl in scored:
        view = views.claim(atlas, cl)
        view["score"] = round(-neg, 4)
        out.append(view)
    return out


# ---------------------------------------------------------------------------------------------
# Repositories
# ---------------------------------------------------------------------------------------------

def repos(atlas: Atlas) -> list[views.RepoSummary]:
    harvested = {h.repo for h in atlas.harvests}
    return [views.repo_summary(atlas, r, harvested) for r in sorted(atlas.repositories, key=lambda r: r.id.lower())]
