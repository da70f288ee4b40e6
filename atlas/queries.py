"""Pure functions over an `Atlas`: resolve a term, build a card, search and filter, walk relations,
find typed paths, the six-question matrix, side-by-side comparison, flows and claims.

Results are plain dicts and lists (the JSON output is exactly these); `render` turns them into text.
"""
from __future__ import annotations

from .errors import AtlasError, Location, NoMatch
from .model import (
    CLAIM_STATUSES, KINDS, LIFECYCLES, QUESTION_IDS, RELATION_TYPES, SYMMETRIC, Atlas, Concept,
    Evidence, Relation, Text, canonical_relation, utc_day,
)
from .text import norm, squash, suggest

FILTER_KEYS = ("kind", "answers", "hw", "status", "repo", "rel", "text")


def _t(text: Text) -> dict:
    return {"en": text.en, "zh": text.zh}


def evidence_plain(ev: Evidence) -> dict:
    out = {"source": ev.source, "confidence": ev.confidence, "supports": _t(ev.supports)}
    if ev.pin:
        out["pin"] = {"repo": ev.pin.repo, "sha": ev.pin.sha, "path": ev.pin.path,
                      "start": ev.pin.start, "end": ev.pin.end}
    if ev.symbol:
        out["symbol"] = ev.symbol
    if ev.loc:
        out["defined_at"] = str(ev.loc)
    return out


# ---------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------

def _candidates(atlas: Atlas) -> dict[str, str]:
    return {n: c.id for c in atlas.concepts for n in [c.id, *c.all_names()]}


def exact_id(ids, name_index: dict, loose_index: dict, term: str) -> str | None:
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
    and no other concept has a name containing it ("collective communication" starts CCU's
    "Collective Communication Unit" but sits inside HCCL's name too: not confident)."""
    for index, fold in ((name_index, norm), (loose_index, squash)):
        key = fold(term)
        if not key:
            continue
        owners = {cid for name, found in index.items() if name.startswith(key) for cid in found}
        if len(owners) == 1:
            inside = {cid for name, found in index.items() if key in name for cid in found}
            return owners.pop() if inside == owners else None
    return None


def find_id(ids, name_index: dict, loose_index: dict, term: str) -> str | None:
    """Id, English or Chinese name or alias (case/width-insensitive), or a confident prefix.

    Works on the atlas's indexes or on their plain copies in the card store."""
    return exact_id(ids, name_index, loose_index, term) or prefix_id(name_index, loose_index, term)


def find(atlas: Atlas, term: str) -> Concept | None:
    ident = find_id(atlas.concept_by_id, atlas.name_index, atlas.loose_index, term)
    return atlas.concept_by_id[ident] if ident else None


def prefix_owners(atlas: Atlas, term: str) -> list[str]:
    """Concepts having a name or alias that starts with the term (an ambiguous prefix)."""
    key, loose = norm(term), squash(term)
    owners = {cid for name, ids in atlas.name_index.items() if key and name.startswith(key) for cid in ids}
    owners |= {cid for name, ids in atlas.loose_index.items() if loose and name.startswith(loose) for cid in ids}
    return sorted(owners)


def suggestions(atlas: Atlas, term: str, limit: int = 8) -> list[dict]:
    """Ranked concepts for a term that matched nothing: names it is a prefix of, spelling, then full text."""
    ranked = prefix_owners(atlas, term)
    ranked += [cid for cid in suggest(term, _candidates(atlas), limit) if cid not in ranked]
    key = norm(term)
    if key:
        for c in atlas.concepts:
            if c.id not in ranked and any(key in norm(t) for t in _texts(c)):
                ranked.append(c.id)
    return [_row(atlas.concept_by_id[cid]) for cid in ranked[:limit]]


def resolve(atlas: Atlas, term: str) -> Concept:
    c = find(atlas, term)
    if c is None:
        hints = suggestions(atlas, term)
        hint = "did you mean: " + ", ".join(h["id"] for h in hints) if hints else \
            "try `atlas query text:WORD` to search the explanations"
        several = len(prefix_owners(atlas, term)) > 1
        message = f'"{term}" is ambiguous: several concepts have names starting with it' if several \
            else f'no concept matches "{term}"'
        raise NoMatch(message, Location("query"), hint, hints, term)
    return c


# ---------------------------------------------------------------------------------------------
# Cards
# ---------------------------------------------------------------------------------------------

def _other(rel: Relation, ident: str) -> str:
    return rel.target if rel.source == ident else rel.source


def relation_groups(atlas: Atlas, ident: str) -> list[dict]:
    """Relations touching a concept, grouped by the name read from its side (uses / used-by ...)."""
    groups: dict[str, list[dict]] = {}
    for r in atlas.touching.get(ident, []):
        if r.type in SYMMETRIC or r.source == ident:
            name = r.type
        else:
            name = RELATION_TYPES[r.type]
        other = _other(r, ident)
        oc = atlas.concept_by_id.get(other)
        groups.setdefault(name, []).append({
            "id": other, "name": _t(oc.names) if oc else {"en": other, "zh": ""},
            "note": _t(r.note), "direction": "out" if r.source == ident else "in"})
    order = {t: i for i, t in enumerate([*RELATION_TYPES, *RELATION_TYPES.values()])}
    return [{"relation": k, "concepts": sorted(v, key=lambda x: x["id"])}
            for k, v in sorted(groups.items(), key=lambda kv: order.get(kv[0], 99))]


def history(atlas: Atlas, ident: str) -> list[dict]:
    return [{"repo": s.repo, "method": s.method, "value": s.value, "found": s.found,
             "sha": s.sha, "date": s.committer_date, "author_date": s.author_date,
             "introduced": s.introduced, "precision": s.precision, "head": s.head,
             "cutoff": s.cutoff}
            for s in atlas.sightings_by_concept.get(ident, [])]


def first_visible(atlas: Atlas, ident: str) -> dict | None:
    s = atlas.first_visible(ident)
    if s is None:
        return None
    return {"date": s.committer_date, "repo": s.repo, "sha": s.sha, "precision": s.precision,
            "value": s.value}


def card(atlas: Atlas, c: Concept, as_of: str | None = None) -> dict:
    out = {
        "id": c.id, "kind": c.kind, "names": _t(c.names),
        "aliases": {k: list(v) for k, v in c.aliases.items()},
        "answers": {q: _t(c.answers[q]) for q in QUESTION_IDS if q in c.answers},
        "beginner": _t(c.beginner), "professional": _t(c.professional),
        "hardware": list(c.hardware), "hardware_note": _t(c.hardware_note),
        "lifecycle": {"status": c.lifecycle.status, "note": _t(c.lifecycle.note)},
        "relations": relation_groups(atlas, c.id),
        "claims": [{"id": cl.id, "status": cl.status, "statement": _t(cl.statement)}
                   for cl in atlas.claims_about(c.id)],
        "flows": [{"id": f.id, "title": _t(f.title)} for f in atlas.flows_touching(c.id)],
        "evidence": [evidence_plain(e) for e in c.evidence],
        "history": history(atlas, c.id),
        "first_visible": first_visible(atlas, c.id),
        "repositories": card_repositories(atlas, c),
        "undated": undated(atlas, c),
        "defined_at": str(c.loc) if c.loc else "",
    }
    if as_of:
        mark_as_of(out, as_of)
    return out


def mark_as_of(card_: dict, as_of: str) -> dict:
    """Add `as_of {date, visible}` to a card: visible is None when nothing dates the concept."""
    first = card_.get("first_visible")
    visible = None if not first else utc_day(first["date"]) <= as_of
    card_["as_of"] = {"date": as_of, "visible": visible}
    return card_


def questions_names(atlas: Atlas) -> dict:
    return {q.id: {"en": q.names.en, "zh": q.names.zh} for q in atlas.questions}


# ---------------------------------------------------------------------------------------------
# Search and filters
# ---------------------------------------------------------------------------------------------

def _texts(c: Concept) -> list[str]:
    out = [c.id, *c.all_names(), *c.beginner.both(), *c.professional.both()]
    for a in c.answers.values():
        out.extend(a.both())
    return out


def _row(c: Concept, atlas: Atlas | None = None, as_of: str | None = None) -> dict:
    row = {"id": c.id, "kind": c.kind, "name": _t(c.names),
           "answers": [q for q in QUESTION_IDS if q in c.answers], "lifecycle": c.lifecycle.status}
    if atlas is not None:
        fv = atlas.first_visible(c.id)
        row["first_visible"] = fv.date if fv else ""
        if as_of:
            row["visible"] = atlas.visible_on(c.id, as_of)
    return row


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
           as_of: str | None = None) -> list[dict]:
    matches = list(atlas.concepts)
    for key, value in filters:
        matches = [c for c in matches if _filter(atlas, c, key, value)]
    scored = []
    words = [norm(w) for w in text.split()] if text else []
    for c in matches:
        if words:
            names = [norm(n) for n in [c.id, *c.all_names()]]
            body = [norm(t) for t in _texts(c)]
            if not all(any(w in t for t in body) for w in words):
                continue
            score = sum(3 if any(w == n for n in names) else 2 if any(w in n for n in names) else 1
                        for w in words)
        else:
            score = 0
        scored.append((-score, c.id, c))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [_row(c, atlas, as_of) for _, _, c in scored]


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
    hw = find(atlas, value)
    wanted = {hw.id} if hw else {value}
    if hw:  # a product matches its parts: hw:atlas-a3 also finds concepts scoped to its chip
        wanted |= {r.source for r in atlas.touching.get(hw.id, [])
                   if r.type == "part-of" and r.target == hw.id}
    return "any" in c.hardware or bool(wanted & set(c.hardware))


def _by_repo(atlas: Atlas, c: Concept, value: str) -> bool:
    repos = {p.repo.lower() for p in c.probes} | {
        e.pin.repo.lower() for e in c.evidence if e.pin}
    return value.lower() in repos or any(r.endswith("/" + value.lower()) for r in repos)


def _by_relation(atlas: Atlas, c: Concept, value: str) -> bool:
    rtype, _, target = value.partition(":")
    canon = canonical_relation(rtype)
    if canon is None:
        raise AtlasError(f'unknown relation type "{rtype}" in rel:{value}', Location("query"),
                         "types: " + ", ".join(RELATION_TYPES))
    forward, reverse = canon
    tc = find(atlas, target) if target else None
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
    return any(w in norm(t) for t in _texts(c))


# filter key (as typed: `kind:link`) -> test(atlas, concept, value)
FILTERS = {"kind": _by_kind, "answers": _by_answers, "status": _by_status, "hw": _by_hardware,
           "repo": _by_repo, "rel": _by_relation, "text": _by_text}


def _check_choice(value: str, options, what: str) -> None:
    if value not in options:
        raise AtlasError(f'unknown {what} "{value}"', Location("query"),
                         f"{what} is one of: " + ", ".join(options))


# ---------------------------------------------------------------------------------------------
# Graph walks
# ---------------------------------------------------------------------------------------------

def related(atlas: Atlas, c: Concept, rel: str | None = None, depth: int = 1) -> list[dict]:
    forward = None
    if rel:
        canon = canonical_relation(rel)
        if canon is None:
            raise AtlasError(f'unknown relation type "{rel}"', Location("--rel"),
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
                            "kind": oc.kind if oc else "", "name": _t(oc.names) if oc else {}})
        frontier = sorted(nxt)
    return out


def graph(atlas: Atlas):
    """The relations as a networkx MultiDiGraph (imported here only: it costs ~0.3 s)."""
    import networkx as nx

    g = nx.MultiDiGraph()
    for c in atlas.concepts:
        g.add_node(c.id, kind=c.kind)
    for r in atlas.relations():
        g.add_edge(r.source, r.target, type=r.type)
    return g


def path(atlas: Atlas, a: Concept, b: Concept, rel: str | None = None) -> list[dict]:
    """Shortest chain of relations from a to b (edges may be walked against their direction)."""
    import networkx as nx

    und = nx.Graph()
    und.add_nodes_from(c.id for c in atlas.concepts)
    forward = canonical_relation(rel)[0] if rel and canonical_relation(rel) else None
    if rel and forward is None:
        raise AtlasError(f'unknown relation type "{rel}"', Location("--rel"))
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
        "questions": [{"id": q.id, "names": _t(q.names), "explanation": _t(q.explanation)}
                      for q in atlas.questions],
        "rows": [{"id": c.id, "kind": c.kind, "name": _t(c.names),
                  "answers": {q: _t(c.answers[q]) for q in QUESTION_IDS if q in c.answers}}
                 for c in chosen],
    }


def compare(atlas: Atlas, concepts: list[Concept]) -> dict:
    cols = []
    for c in concepts:
        fv = atlas.first_visible(c.id)
        cols.append({
            "id": c.id, "kind": c.kind, "name": _t(c.names),
            "answers": {q: _t(c.answers[q]) for q in QUESTION_IDS if q in c.answers},
            "hardware": list(c.hardware), "lifecycle": c.lifecycle.status,
            "lifecycle_note": _t(c.lifecycle.note),
            "first_visible": ({"date": fv.committer_date, "repo": fv.repo, "sha": fv.sha,
                               "precision": fv.precision} if fv else None),
        })
    shared = sorted({r.target if r.source == a.id else r.source
                     for a in concepts for r in atlas.touching.get(a.id, [])}
                    & {c.id for c in concepts})
    return {"questions": [{"id": q.id, "names": _t(q.names)} for q in atlas.questions],
            "concepts": cols, "related_among_them": shared}


def flows(atlas: Atlas) -> list[dict]:
    return [{"id": f.id, "title": _t(f.title), "steps": len(f.steps), "edges": len(f.edges)}
            for f in atlas.flows]


def flow(atlas: Atlas, ident: str, index=None) -> dict:
    f = find_flow(atlas, ident)
    if f is None:
        if index is None:
            from .search import for_atlas

            index = for_atlas(atlas)
        close = closest_flows(atlas, index, ident)
        raise AtlasError(f'no flow "{ident}"', Location("flow"),
                         ("closest: " + ", ".join(close)) if close else "run `atlas flow` to list flows")
    return {
        "id": f.id, "title": _t(f.title), "summary": _t(f.summary),
        "evidence": [evidence_plain(e) for e in f.evidence],
        "steps": [{"id": s.id, "label": _t(s.label), "actor": s.actor, "concepts": list(s.concepts),
                   "source": evidence_plain(s.source) if s.source else None,
                   "note": _t(s.note), "test_plans": step_test_plans(atlas, f.id, s.id),
                   "after": [{"from": e.source, "type": e.type, "label": e.label}
                             for e in f.edges if e.target == s.id]}
                  for s in f.ordered_steps()],
        "edges": [{"from": e.source, "to": e.target, "type": e.type, "label": e.label} for e in f.edges],
    }


def test_plan(cl) -> dict | None:
    """A claim's test plan as plain data (None when it has none)."""
    plan = cl.test_plan
    if plan is None:
        return None
    return {"order": plan.order, "step": plan.step, "where": [evidence_plain(e) for e in plan.where],
            "measure": _t(plan.measure), "confirm": _t(plan.confirm), "refute": _t(plan.refute)}


def step_test_plans(atlas: Atlas, flow_id: str, step_id: str) -> list[dict]:
    """The claims whose test plan instruments this flow step, in decision order."""
    key = f"{flow_id}/{step_id}"
    plans = [(cl.test_plan.order, cl.id) for cl in atlas.claims if cl.test_plan and cl.test_plan.step == key]
    return [{"claim": cid, "order": order} for order, cid in sorted(plans)]


def undated(atlas: Atlas, c: Concept) -> dict | None:
    """Why no sighting dates the concept (None when one does): a reason of UNDATED_REASONS,
    the repositories concerned and the data's note."""
    why = atlas.why_undated(c.id)
    if why is None:
        return None
    note = c.undated.note if c.undated else Text()
    return {"reason": why[0], "repos": why[1], "note": _t(note)}


def claims(atlas: Atlas, c: Concept | None = None, status: str | None = None) -> list[dict]:
    if status:
        _check_choice(status, CLAIM_STATUSES, "claim status")
    chosen = atlas.claims_about(c.id) if c else atlas.claims
    return [{"id": cl.id, "status": cl.status, "statement": _t(cl.statement), "about": cl.about,
             "note": _t(cl.note), "evidence": [evidence_plain(e) for e in cl.evidence],
             "test_plan": test_plan(cl)}
            for cl in chosen if not status or cl.status == status]


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


def claims_topic(atlas: Atlas, index, topic: str, status: str | None = None) -> list[dict]:
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
    return [{"id": cl.id, "status": cl.status, "statement": _t(cl.statement), "about": cl.about,
             "note": _t(cl.note), "evidence": [evidence_plain(e) for e in cl.evidence],
             "test_plan": test_plan(cl), "score": round(-neg, 4)} for neg, _, cl in scored]


def find_flow(atlas: Atlas, name: str):
    """A flow by id or title (case-, width- and punctuation-insensitive), a unique prefix of
    either, or the one flow whose id and title hold every word of the name."""
    from .search import query_tokens, tokens

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
        owners = [f for f in atlas.flows
                  if words <= set(tokens(" ".join([f.id, f.title.en, f.title.zh])))]
        if len(owners) == 1:
            return owners[0]
    return None


def closest_flows(atlas: Atlas, index, name: str, limit: int = 3) -> list[str]:
    ranked = [h["id"] for h in index.search(name, types={"flow"}, limit=limit)]
    ranked += [fid for fid in suggest(name, {k: f.id for f in atlas.flows
                                              for k in (f.id, f.title.en, f.title.zh) if k}, limit)
               if fid not in ranked]
    return ranked[:limit]


# ---------------------------------------------------------------------------------------------
# Repositories
# ---------------------------------------------------------------------------------------------

def repos(atlas: Atlas) -> list[dict]:
    harvested = {h.repo for h in atlas.harvests}
    out = []
    for r in sorted(atlas.repositories, key=lambda r: r.id.lower()):
        seen = [s for s in atlas.sightings if s.repo == r.id]
        out.append({"id": r.id, "status": r.status, "purpose": _t(r.purpose), "mirror_of": r.mirror_of,
                    "harvested": r.id in harvested, "probes": len(seen),
                    "found": sum(1 for s in seen if s.found)})
    return out


def find_repo(atlas: Atlas, ident: str):
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


def repo(atlas: Atlas, r) -> dict:
    h = next((x for x in atlas.harvests if x.repo == r.id), None)
    seen = sorted((s for s in atlas.sightings if s.repo == r.id),
                  key=lambda s: (not s.found, s.committer_date or "9999", s.concept, s.value))
    return {
        "id": r.id, "urls": list(r.urls), "purpose": _t(r.purpose), "status": r.status,
        "branch": r.branch, "mirror_of": r.mirror_of, "migrated_from": list(r.migrated_from),
        "hardware": list(r.hardware), "note": _t(r.note),
        "evidence": [evidence_plain(e) for e in r.evidence],
        "harvest": None if h is None else {
            "head": h.head, "branch": h.branch, "cutoff": h.cutoff, "cutoff_head": h.cutoff_head,
            "harvested_at": h.harvested_at, "commits": h.commits, "shallow": h.shallow,
            "skipped_paths": list(h.skipped_paths)},
        "probes": [{"concept": s.concept, "method": s.method, "value": s.value, "found": s.found,
                    "sha": s.sha, "date": s.committer_date, "precision": s.precision}
                   for s in seen],
        "concepts": sorted(c.id for c in atlas.concepts if any(p.repo == r.id for p in c.probes)),
        "defined_at": str(r.loc) if r.loc else "",
    }


def card_repositories(atlas: Atlas, c: Concept) -> list[dict]:
    """The repositories behind a concept's pins, in order of first appearance."""
    seen: list[str] = []
    for e in [*c.evidence, *(e for r in c.relations for e in r.evidence)]:
        if e.pin and e.pin.repo not in seen:
            seen.append(e.pin.repo)
    out = []
    for rid in seen:
        r = atlas.repo_by_id.get(rid)
        out.append({"id": rid, "status": r.status if r else "", "mirror_of": r.mirror_of if r else "",
                    "purpose": _t(r.purpose) if r else {"en": "", "zh": ""}})
    return out
