"""The view layer: the one projection of the records that every face reads.

A view is a plain, JSON-ready dict with a declared shape (a `TypedDict` in atlas.view.viewtypes, so the
type checker sees its fields). The terminal, `--format json`, the MCP tools, Markdown, the concept
pages, the overview, the explorer and the search index all read these views and only format them;
none of them goes back to the records. A field is spelled here and in the renderers that show it,
nowhere else, and it has one spelling from the JSON to the site's page data.

Everything here is a pure function of the `Atlas` (no files, no terminal, no HTML), so the stores
below the faces can keep views (the card store keeps every card, the search index the search
documents).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

from ..model.core import (
    QUESTION_IDS, RELATION_TYPES, SYMMETRIC, ApiSurface, ApiSymbol, Atlas, Claim, Concept, Evidence, Flow,
    FlowStep, Relation, Release, Repository, SeedPage, Sighting, Text, named_by, seed_page_of, utc_day,
)

if TYPE_CHECKING:
    from .viewtypes import (
        ApiChange, ApiDiff, ApiEvent, ApiItem, ApiSince, ApiSummary, AtlasViews, Card, ChoiceView, ClaimRef,
        ClaimView, EvidenceView, FirstVisible, FlowRef, FlowSummary, FlowView, HistoryItem, OptionView, OwnerView,
        Pairs, PlanView, QuestionView, RelationGroup, ReleaseRef, ReleaseState, RepoRef, RepoSummary, RepoView,
        Row, SearchDocument, SeedPageView, StepPlan, StepView, SymbolCard, TextView, UndatedView,
    )


def __getattr__(name: str) -> Any:
    """A view's shape by name (`views.Card`, `from atlas.view.views import FlowView`): declared in
    atlas.view.viewtypes, imported the first time a face asks for one. (The import system's own
    questions, such as whether this module has a `__path__`, are answered without it.)"""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import viewtypes

    try:
        return getattr(viewtypes, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


# ---------------------------------------------------------------------------------------------
# Small pieces
# ---------------------------------------------------------------------------------------------


def text(t: Text | None) -> TextView:
    return {"en": t.en, "zh": t.zh} if t else {"en": "", "zh": ""}


def name_of(atlas: Atlas, ident: str) -> TextView:
    """A concept's names; its id (in English) for one the atlas does not hold."""
    c = atlas.concept_by_id.get(ident)
    return text(c.names) if c else {"en": ident, "zh": ""}


def safe_url(url: str) -> str:
    """Only http(s) URLs become links; anything else (javascript:, data:, ...) is dropped."""
    import re

    url = (url or "").strip()
    return url if re.match(r"^https?://[^\s]+$", url, re.I) else ""


def repo_base(atlas: Atlas, rid: str) -> str:
    """The web address of a repository: its first http(s) URL without `.git`, else GitHub's."""
    r = atlas.repo_by_id.get(rid)
    base = safe_url(r.urls[0]).rstrip("/") if r is not None and r.urls else ""
    if base.endswith(".git"):
        base = base[:-4]
    return base or f"https://github.com/{rid}"


def commit_url(atlas: Atlas, rid: str, sha: str) -> str:
    return f"{repo_base(atlas, rid)}/commit/{sha}" if sha else ""


def evidence_url(atlas: Atlas, ev: Evidence) -> str:
    """A browsable URL for an evidence item: the pinned commit and lines, or its plain URL."""
    if ev.pin is None:
        return safe_url(ev.url)
    pin = ev.pin
    lines = f"#L{pin.start}" if pin.start == pin.end else f"#L{pin.start}-L{pin.end}"
    return f"{repo_base(atlas, pin.repo)}/blob/{pin.sha}/{pin.path}{lines}"


def evidence(atlas: Atlas, ev: Evidence) -> EvidenceView:
    page = seed_page_of(ev.url) if ev.pin is None else None
    out: EvidenceView = {"source": ev.source, "confidence": ev.confidence, "supports": text(ev.supports),
                         "url": "" if page else evidence_url(atlas, ev)}
    if page:
        out["seed_page"] = page
    if ev.pin:
        out["pin"] = {"repo": ev.pin.repo, "sha": ev.pin.sha, "path": ev.pin.path,
                      "start": ev.pin.start, "end": ev.pin.end}
    if ev.symbol:
        out["symbol"] = ev.symbol
    if ev.loc:
        out["defined_at"] = str(ev.loc)
    return out


def evidence_list(atlas: Atlas, items: list[Evidence]) -> list[EvidenceView]:
    return [evidence(atlas, e) for e in items]


# ---------------------------------------------------------------------------------------------
# Evidence items and their owners
# ---------------------------------------------------------------------------------------------


class Owner(NamedTuple):
    """What an evidence item belongs to. `kind` is concept, relation, claim, plan (a claim's test
    plan), flow, step or repository; `id` the record's id (a step's own id, with its flow in `flow`;
    a relation's "source type target"; a plan's claim)."""

    kind: str
    id: str
    flow: str = ""

    @property
    def label(self) -> str:
        if self.kind == "step":
            return f"flow {self.flow} step {self.id}"
        if self.kind == "plan":
            return f"claim {self.id} test plan"
        return f"{self.kind} {self.id}"


def owned_evidence(atlas: Atlas) -> Iterator[tuple[Owner, Evidence]]:
    """Every evidence item of the atlas with its owner, in data order: the one definition of "the
    evidence items and their owners" (verify checks them, the code index reads their pins, `atlas
    where` answers with them)."""
    for c in atlas.concepts:
        yield from ((Owner("concept", c.id), e) for e in c.evidence)
        for r in c.relations:
            yield from ((Owner("relation", f"{r.source} {r.type} {r.target}"), e) for e in r.evidence)
    for cl in atlas.claims:
        yield from ((Owner("claim", cl.id), e) for e in cl.evidence)
        if cl.test_plan is not None:
            yield from ((Owner("plan", cl.id), e) for e in cl.test_plan.where)
    for f in atlas.flows:
        yield from ((Owner("flow", f.id), e) for e in f.evidence)
        for st in f.steps:
            if st.source is not None:
                yield Owner("step", st.id, f.id), st.source
        for region in f.layout:
            yield from ((Owner("flow", f.id), e) for e in region.evidence)
    for repo_ in atlas.repositories:
        yield from ((Owner("repository", repo_.id), e) for e in repo_.evidence)
        for folder in repo_.api.surfaces if repo_.api else []:
            yield from ((Owner("repository", repo_.id), e) for e in folder.evidence)


def owner(o: Owner) -> OwnerView:
    return {"kind": o.kind, "id": o.id, "flow": o.flow, "label": o.label}


def question(atlas: Atlas, qid: str) -> QuestionView:
    q = atlas.question_by_id.get(qid)
    return {"id": qid, "names": text(q.names) if q else {"en": qid, "zh": ""},
            "explanation": text(q.explanation if q else None)}


def questions(atlas: Atlas) -> list[QuestionView]:
    """The six questions in their fixed order."""
    return [question(atlas, qid) for qid in QUESTION_IDS]


def question_names(atlas: Atlas) -> dict[str, TextView]:
    return {q.id: text(q.names) for q in atlas.questions}


def answers(c: Concept) -> dict[str, TextView]:
    return {q: text(c.answers[q]) for q in QUESTION_IDS if q in c.answers}


# ---------------------------------------------------------------------------------------------
# The card of a concept
# ---------------------------------------------------------------------------------------------


def _side_name(r: Relation, ident: str) -> str:
    """A relation's name as read from `ident`'s side: the forward type, or its inverse."""
    return r.type if (r.type in SYMMETRIC or r.source == ident) else RELATION_TYPES[r.type]


def relation_groups(atlas: Atlas, ident: str) -> list[RelationGroup]:
    """Relations touching a concept, grouped by the name read from its side (uses / used-by ...)."""
    groups: dict[str, RelationGroup] = {}
    for r in atlas.touching.get(ident, []):
        name = _side_name(r, ident)
        other = r.target if r.source == ident else r.source
        group = groups.setdefault(name, {"relation": name, "type": r.type, "concepts": []})
        group["concepts"].append({"id": other, "name": name_of(atlas, other), "note": text(r.note),
                                  "direction": "out" if r.source == ident else "in",
                                  "evidence": evidence_list(atlas, r.evidence)})
    order = {t: i for i, t in enumerate([*RELATION_TYPES, *RELATION_TYPES.values()])}
    out = sorted(groups.values(), key=lambda g: order.get(g["relation"], 99))
    for g in out:
        g["concepts"].sort(key=lambda x: x["id"])
    return out


def history_item(atlas: Atlas, s: Sighting) -> HistoryItem:
    return {"repo": s.repo, "method": s.method, "value": s.value, "found": s.found, "sha": s.sha,
            "date": s.committer_date, "author_date": s.author_date, "introduced": s.introduced,
            "precision": s.precision, "head": s.head, "cutoff": s.cutoff,
            "url": commit_url(atlas, s.repo, s.sha) if s.found else "", "first_release": s.first_release,
            "needs_release": needs_release(atlas, s)}


def needs_release(atlas: Atlas, s: Sighting) -> str:
    """The release a found sighting needs: its first release; "unreleased" when its repository has
    releases and none contains the commit; "" when not found or the repository has no releases."""
    if not s.found:
        return ""
    surface = atlas.surface_by_repo.get(s.repo)
    return s.first_release or ("unreleased" if surface is not None and surface.releases else "")


def history(atlas: Atlas, ident: str) -> list[HistoryItem]:
    """A concept's sightings, found ones first by committer date."""
    return [history_item(atlas, s) for s in atlas.sightings_by_concept.get(ident, [])]


def first_visible(atlas: Atlas, ident: str) -> FirstVisible | None:
    s = atlas.first_visible(ident)
    if s is None:
        return None
    return {"date": s.committer_date, "repo": s.repo, "sha": s.sha, "precision": s.precision,
            "method": s.method, "value": s.value, "url": commit_url(atlas, s.repo, s.sha),
            "first_release": s.first_release, "needs_release": needs_release(atlas, s)}


def concept_repositories(atlas: Atlas, c: Concept) -> list[str]:
    """The repositories a concept is tied to, in order of first appearance: the pins of its evidence
    and of its relations' evidence, then its probes, then the repositories where it was seen.
    This is the one definition every face uses."""
    seen: dict[str, None] = {}
    for e in [*c.evidence, *(e for r in c.relations for e in r.evidence)]:
        if e.pin:
            seen.setdefault(e.pin.repo)
    for p in c.probes:
        seen.setdefault(p.repo)
    for s in atlas.sightings_by_concept.get(c.id, []):
        if s.found:
            seen.setdefault(s.repo)
    return list(seen)


def repo_ref(atlas: Atlas, rid: str) -> RepoRef:
    r = atlas.repo_by_id.get(rid)
    return {"id": rid, "status": r.status if r else "", "mirror_of": r.mirror_of if r else "",
            "purpose": text(r.purpose) if r else {"en": "", "zh": ""}}


def flow_refs(atlas: Atlas, ident: str) -> list[FlowRef]:
    """The flows with a step that names the concept, and those steps."""
    out: list[FlowRef] = []
    for f in atlas.flows_touching(ident):
        steps = [s.id for s in f.ordered_steps() if ident in s.concepts]
        out.append({"id": f.id, "title": text(f.title), "steps": steps})
    return out


def card(atlas: Atlas, c: Concept, as_of: str | None = None) -> Card:
    """Everything the atlas says about one concept."""
    groups = relation_groups(atlas, c.id)
    refs = [*c.hardware, *(x["id"] for g in groups for x in g["concepts"])]
    out: Card = {
        "id": c.id, "kind": c.kind, "names": text(c.names),
        "aliases": {k: list(v) for k, v in c.aliases.items()},
        "answers": answers(c), "beginner": text(c.beginner), "professional": text(c.professional),
        "hardware": list(c.hardware), "hardware_note": text(c.hardware_note),
        "lifecycle": {"status": c.lifecycle.status, "note": text(c.lifecycle.note)},
        "relations": groups,
        "claims": [claim_ref(cl) for cl in atlas.claims_about(c.id)],
        "flows": flow_refs(atlas, c.id),
        "evidence": evidence_list(atlas, c.evidence),
        "history": history(atlas, c.id),
        "first_visible": first_visible(atlas, c.id),
        "repositories": [repo_ref(atlas, rid) for rid in concept_repositories(atlas, c)],
        "labels": {ident: name_of(atlas, ident) for ident in sorted(set(refs))},
        "undated": undated(atlas, c),
        "api": [api_item(atlas, sym) for sym in named_by(c, atlas.symbols_by_name)],
        "defined_at": str(c.loc) if c.loc else "",
    }
    if as_of:
        mark_as_of(out, as_of)
    return out


def undated(atlas: Atlas, c: Concept) -> UndatedView | None:
    """Why no sighting dates the concept (None when one does): a reason of UNDATED_REASONS, the
    repositories concerned and the data's note."""
    why = atlas.why_undated(c.id)
    if why is None:
        return None
    return {"reason": why[0], "repos": why[1], "note": text(c.undated.note if c.undated else None)}


def mark_as_of(card_: Card, as_of: str) -> Card:
    """Add `as_of {date, visible}` to a card: visible is None when nothing dates the concept."""
    first = card_.get("first_visible")
    card_["as_of"] = {"date": as_of, "visible": None if not first else utc_day(first["date"]) <= as_of}
    return card_


def row(c: Concept, atlas: Atlas | None = None, as_of: str | None = None) -> Row:
    """A concept as one line of a table: id, kind, name, the questions it answers, lifecycle, and
    (given the atlas) its first visible day."""
    out: Row = {"id": c.id, "kind": c.kind, "name": text(c.names),
                "answers": [q for q in QUESTION_IDS if q in c.answers], "lifecycle": c.lifecycle.status}
    if atlas is not None:
        fv = atlas.first_visible(c.id)
        out["first_visible"] = fv.date if fv else ""
        if as_of:
            out["visible"] = atlas.visible_on(c.id, as_of)
    return out


def claim_ref(cl: Claim) -> ClaimRef:
    """A claim as a card lists it: id, status, statement."""
    return {"id": cl.id, "status": cl.status, "statement": text(cl.statement)}


def card_row(c: Card) -> Row:
    """The row of a concept read from its card: `row` without the records (a miss of `atlas query`
    names the nearest concepts from the card store alone)."""
    return {"id": c["id"], "kind": c["kind"], "name": c["names"], "answers": answered(c["answers"]),
            "lifecycle": c["lifecycle"]["status"]}


# ---------------------------------------------------------------------------------------------
# Claims, flows, repositories
# ---------------------------------------------------------------------------------------------


def test_plan(atlas: Atlas, cl: Claim) -> PlanView | None:
    """A claim's test plan (None when it has none)."""
    plan = cl.test_plan
    if plan is None:
        return None
    return {"order": plan.order, "step": plan.step, "where": evidence_list(atlas, plan.where),
            "measure": text(plan.measure), "confirm": text(plan.confirm), "refute": text(plan.refute)}


def claim(atlas: Atlas, cl: Claim) -> ClaimView:
    return {"id": cl.id, "status": cl.status, "statement": text(cl.statement), "about": list(cl.about),
            "note": text(cl.note), "evidence": evidence_list(atlas, cl.evidence), "test_plan": test_plan(atlas, cl)}


def step_plans(atlas: Atlas, flow_id: str, step_id: str) -> list[StepPlan]:
    """The claims whose test plan instruments this flow step, in decision order."""
    key = f"{flow_id}/{step_id}"
    plans = sorted((cl.test_plan.order, cl.id) for cl in atlas.claims if cl.test_plan and cl.test_plan.step == key)
    return [{"claim": cid, "order": order} for order, cid in plans]


def step(atlas: Atlas, f: Flow, s: FlowStep) -> StepView:
    title = s.title if (s.title.en or s.title.zh) else s.label
    return {"id": s.id, "title": text(title), "label": text(s.label), "actor": s.actor, "concepts": list(s.concepts),
            "note": text(s.note), "source": evidence(atlas, s.source) if s.source else None,
            "test_plans": step_plans(atlas, f.id, s.id),
            "after": [{"from": e.source, "type": e.type, "label": e.label} for e in f.edges if e.target == s.id]}


def choices(f: Flow) -> list[ChoiceView]:
    """The branches of a flow that are alternatives: a step with two or more labelled `control` edges
    out of it. Each label is the condition of its branch (a build option, a scheduling decision, an
    alternative design), and one branch is taken; an unlabelled control edge starts work that runs
    alongside. In step order."""
    out: list[ChoiceView] = []
    for s in f.steps:
        options: list[OptionView] = [{"to": e.target, "label": e.label} for e in f.edges
                                     if e.source == s.id and e.type == "control" and e.label]
        if len(options) >= 2:
            out.append({"from": s.id, "options": options})
    return out


def flow(atlas: Atlas, f: Flow) -> FlowView:
    """A flow with its steps in topological order."""
    steps = [step(atlas, f, s) for s in f.ordered_steps()]
    named = sorted({cid for s in f.steps for cid in s.concepts})
    return {"id": f.id, "title": text(f.title), "summary": text(f.summary),
            "evidence": evidence_list(atlas, f.evidence), "steps": steps,
            "edges": [{"from": e.source, "to": e.target, "type": e.type, "label": e.label} for e in f.edges],
            "choices": choices(f), "labels": {cid: name_of(atlas, cid) for cid in named},
            "layout": [{"id": r.id, "label": text(r.label), "offset": r.offset, "size": r.size,
                        "writers": text(r.writers), "readers": text(r.readers), "part_of": r.part_of,
                        "evidence": evidence_list(atlas, r.evidence)} for r in f.layout]}


def flow_summary(f: Flow) -> FlowSummary:
    return {"id": f.id, "title": text(f.title), "summary": text(f.summary), "steps": len(f.steps),
            "edges": len(f.edges)}


def repo_summary(atlas: Atlas, r: Repository, harvested: set[str]) -> RepoSummary:
    seen = [s for s in atlas.sightings if s.repo == r.id]
    return {"id": r.id, "status": r.status, "purpose": text(r.purpose), "mirror_of": r.mirror_of,
            "harvested": r.id in harvested, "probes": len(seen), "found": sum(1 for s in seen if s.found)}


def repo(atlas: Atlas, r: Repository, firsts: dict[str, list[str]] | None = None) -> RepoView:
    """A repository in full. `firsts` (repository -> concepts first seen there, `first_seen_by_repo`)
    saves a face that shows every repository from computing it again for each."""
    h = next((x for x in atlas.harvests if x.repo == r.id), None)
    seen = sorted((s for s in atlas.sightings if s.repo == r.id),
                  key=lambda s: (not s.found, s.committer_date or "9999", s.concept, s.value))
    return {
        "id": r.id, "urls": list(r.urls), "purpose": text(r.purpose), "status": r.status,
        "branch": r.branch, "mirror_of": r.mirror_of, "migrated_from": list(r.migrated_from),
        "hardware": list(r.hardware), "note": text(r.note), "evidence": evidence_list(atlas, r.evidence),
        "harvest": None if h is None else {
            "head": h.head, "branch": h.branch, "cutoff": h.cutoff, "cutoff_head": h.cutoff_head,
            "harvested_at": h.harvested_at, "commits": h.commits, "shallow": h.shallow,
            "skipped_paths": list(h.skipped_paths)},
        "probes": [{"concept": s.concept, "method": s.method, "value": s.value, "found": s.found,
                    "sha": s.sha, "date": s.committer_date, "precision": s.precision} for s in seen],
        "concepts": sorted(c.id for c in atlas.concepts if any(p.repo == r.id for p in c.probes)),
        "first_seen": (firsts.get(r.id, []) if firsts is not None else first_seen_in(atlas, r.id)),
        "defined_at": str(r.loc) if r.loc else "",
    }


def first_seen_by_repo(atlas: Atlas) -> dict[str, list[str]]:
    """Repository -> the concepts whose first visible commit is in it, oldest first."""
    firsts: dict[str, list[tuple[str, str]]] = {}
    for c in atlas.concepts:
        s = atlas.first_visible(c.id)
        if s is not None:
            firsts.setdefault(s.repo, []).append((s.committer_date, c.id))
    return {rid: [cid for _d, cid in sorted(items)] for rid, items in firsts.items()}


def first_seen_in(atlas: Atlas, rid: str) -> list[str]:
    """The concepts whose first visible commit is in repository `rid`, oldest first."""
    return first_seen_by_repo(atlas).get(rid, [])


# ---------------------------------------------------------------------------------------------
# The public API: symbols, releases, diffs between releases
# ---------------------------------------------------------------------------------------------


def tree_url(base: str, sha: str, path: str, line: int = 0) -> str:
    return f"{base}/blob/{sha}/{path}" + (f"#L{line}" if line else "") if sha else ""


def api_event(base: str, e: list[str]) -> ApiEvent:
    return {"sha": e[0], "date": e[1], "event": e[2], "signature": e[3], "precision": e[4],
            "url": f"{base}/commit/{e[0]}" if e[0] else ""}


def release_ref(base: str, r: Release) -> ReleaseRef:
    return {"name": r.name, "date": r.date, "commit": r.commit, "url": f"{base}/tree/{r.name}"}


# what a symbol that no release ships says in place of its first release
NEVER_RELEASED: TextView = {"en": "never released", "zh": "从未发布"}


def first_release_label(sym: ApiSymbol) -> TextView:
    """The first release as people read it: its name, or "never released" in both languages."""
    if sym.first_release:
        return {"en": sym.first_release, "zh": sym.first_release}
    return {"en": NEVER_RELEASED["en"], "zh": NEVER_RELEASED["zh"]}


def api_item_of(base: str, sym: ApiSymbol) -> ApiItem:
    return {"repo": sym.repo, "kind": sym.kind, "name": sym.name, "signature": sym.signature,
            "first": api_event(base, sym.first) if sym.history else None, "first_release": sym.first_release,
            "first_release_label": first_release_label(sym),
            "removed": api_event(base, sym.removed) if sym.removed else None, "releases": sym.releases}


def api_item(atlas: Atlas, sym: ApiSymbol) -> ApiItem:
    return api_item_of(repo_base(atlas, sym.repo), sym)


def release_states(sym: ApiSymbol, releases: list[Release]) -> list[ReleaseState]:
    """The release columns of a symbol: where it first shipped, then present (or changed), or removed."""
    out: list[ReleaseState] = []
    prev = "."
    seen = False
    for r, letter in zip(releases, sym.releases):
        sig = ""
        if letter == ".":
            state = "removed" if prev != "." else "absent"
        else:
            i = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".find(letter)
            sig = sym.release_signatures[i] if 0 <= i < len(sym.release_signatures) else ""
            state = "first" if not seen else ("changed" if prev not in (".", letter) else "present")
            seen = True
        out.append({"name": r.name, "state": state, "signature": sig})
        prev = letter
    return out


def symbol_card(base: str, surface: ApiSurface | None, sym: ApiSymbol, concepts: list[dict[str, Any]]) -> SymbolCard:
    """Everything the atlas knows of one public symbol: where it is, when it first appeared on the
    mainline and in which release, its removal and signature changes, its release columns, and the
    concepts that name it. `base` is the repository's web address."""
    releases = surface.releases if surface else []
    head = surface.cutoff_head if surface else ""
    first_rel = next((r for r in releases if r.name == sym.first_release), None)
    return {
        "card": "symbol", "repo": sym.repo, "kind": sym.kind, "name": sym.name, "signature": sym.signature,
        "where": [{"path": p, "line": n, "url": tree_url(base, head, p, n)} for p, n in sym.where],
        "first": api_event(base, sym.first) if sym.history else None,
        "introduced": sym.introduced, "introduced_date": sym.introduced_date, "note": sym.note,
        "first_release": release_ref(base, first_rel) if first_rel else None,
        "first_release_label": first_release_label(sym),
        "removed": api_event(base, sym.removed) if sym.removed else None,
        "changes": [api_event(base, e) for e in sym.history[1:]],
        "releases": release_states(sym, releases), "concepts": concepts,
        "cutoff": surface.cutoff if surface else "", "cutoff_head": head,
    }


def api_summary(base: str, surface: ApiSurface, symbols: list[ApiSymbol],
                folders: list[dict] | None = None) -> ApiSummary:
    """A repository's API history in brief; `folders` are the folders its data states public or not
    (scanned or not) with the reason."""
    kinds: dict[str, int] = {}
    for sym in symbols:
        kinds[sym.kind] = kinds.get(sym.kind, 0) + 1
    return {"repo": surface.repo, "cutoff": surface.cutoff, "cutoff_head": surface.cutoff_head,
            "harvested_at": surface.harvested_at, "releases": [release_ref(base, r) for r in surface.releases],
            "ignored_tags": [list(x) for x in surface.ignored_tags], "symbols": len(symbols), "kinds": kinds,
            "surfaces": [{"folder": f["folder"], "scanned": bool(f["scanned"]),
                          "reason": {"en": f["reason"]["en"], "zh": f["reason"]["zh"]}} for f in folders or []]}


def release_named(surface: ApiSurface, name: str) -> Release | None:
    return next((r for r in surface.releases if r.name == name), None)


def api_since(base: str, surface: ApiSurface, symbols: list[ApiSymbol], since: Release) -> ApiSince:
    """The symbols whose first release (the first release whose tree declares them) comes after `since`
    in the release order, then those never released (on the mainline, in no release)."""
    order = {r.name: r.index for r in surface.releases}
    later = [s for s in symbols if s.first_release and order.get(s.first_release, -1) > since.index]
    later.sort(key=lambda s: (order[s.first_release], s.first[1] if s.history else "", s.name))
    waiting = sorted((s for s in symbols if s.history and not s.first_release), key=lambda s: (s.first[1], s.name))
    return {"repo": surface.repo, "since": release_ref(base, since),
            "releases": [release_ref(base, r) for r in surface.releases if r.index > since.index],
            "symbols": [api_item_of(base, s) for s in later + waiting]}


def api_diff(base: str, surface: ApiSurface, symbols: list[ApiSymbol], a: Release, b: Release) -> ApiDiff:
    """What was added, removed or changed its signature between the public headers of two releases."""
    out: ApiDiff = {"repo": surface.repo, "base": release_ref(base, a), "target": release_ref(base, b),
                    "added": [], "removed": [], "changed": [],
                    "unreadable": {r.name: r.missing for r in (a, b) if r.missing}}
    for sym in sorted(symbols, key=lambda s: (s.name, s.kind)):
        x, y = sym.releases[a.index:a.index + 1] or ".", sym.releases[b.index:b.index + 1] or "."
        states = release_states(sym, surface.releases)
        before = states[a.index]["signature"] if x != "." else ""
        after = states[b.index]["signature"] if y != "." else ""
        change: ApiChange = {"kind": sym.kind, "name": sym.name, "before": before, "after": after}
        if x == "." and y != ".":
            out["added"].append(change)
        elif x != "." and y == ".":
            out["removed"].append(change)
        elif x != y and x != ".":
            out["changed"].append(change)
    return out


# ---------------------------------------------------------------------------------------------
# Search documents
# ---------------------------------------------------------------------------------------------


def _both(t: Text) -> Pairs:
    return [(lang, s) for lang, s in (("en", t.en), ("zh", t.zh)) if s]


def _evidence_texts(items: list[Evidence]) -> Pairs:
    """Evidence sentences and where they point (repository and path of a pin, or the URL)."""
    out: Pairs = []
    for e in items:
        out.extend(_both(e.supports))
        where = f"{e.pin.repo} {e.pin.path}" if e.pin else e.url
        if where:
            out.append(("", where))
    return out


def _concept_document(c: Concept) -> SearchDocument:
    return {
        "type": "concept", "id": c.id, "name": text(c.names), "keys": [c.id, *c.all_names()],
        "names": [("", c.id)] + _both(c.names) + [(lang, a) for lang in ("en", "zh")
                                                  for a in c.aliases.get(lang, [])],
        "head": [p for a in c.answers.values() for p in _both(a)],
        "body": _both(c.beginner) + _both(c.professional) + _both(c.hardware_note) + _both(c.lifecycle.note),
        "evidence": _evidence_texts(c.evidence),
    }


def _claim_document(cl: Claim) -> SearchDocument:
    return {"type": "claim", "id": cl.id, "name": text(cl.statement), "keys": [cl.id], "names": [],
            "head": [("", cl.id)] + _both(cl.statement), "body": _both(cl.note) + [("", " ".join(cl.about))],
            "evidence": _evidence_texts(cl.evidence)}


def _flow_document(f: Flow) -> SearchDocument:
    sources = [s.source for s in f.steps if s.source]
    return {"type": "flow", "id": f.id, "name": text(f.title), "keys": [f.id, f.title.en, f.title.zh],
            "names": [("", f.id)] + _both(f.title), "head": _both(f.summary),
            "body": [p for s in f.steps for p in _both(s.label) + _both(s.note)],
            "evidence": _evidence_texts([*f.evidence, *sources])}


def _repo_document(r: Repository) -> SearchDocument:
    return {"type": "repo", "id": r.id, "name": {"en": r.id, "zh": r.id},
            "keys": [r.id, r.mirror_of] if r.mirror_of else [r.id],
            "names": [("", r.id)] + ([("", r.mirror_of)] if r.mirror_of else []),
            "head": _both(r.purpose), "body": _both(r.note) + [("", " ".join(r.migrated_from))],
            "evidence": _evidence_texts(r.evidence)}


def search_documents(atlas: Atlas) -> list[SearchDocument]:
    """One document per concept, claim, flow and repository: its exact names, a display name, and
    its texts by column (names > head > body > evidence) as (language, text) pairs."""
    return ([_concept_document(c) for c in atlas.concepts] + [_claim_document(cl) for cl in atlas.claims]
            + [_flow_document(f) for f in atlas.flows] + [_repo_document(r) for r in atlas.repositories])


# ---------------------------------------------------------------------------------------------
# The whole atlas, as the site shows it
# ---------------------------------------------------------------------------------------------


def seed_page(p: SeedPage) -> SeedPageView:
    return {"id": p.id, "number": p.number, "title": text(p.title), "summary": text(p.summary),
            "flows": list(p.flows)}


def everything(atlas: Atlas) -> AtlasViews:
    """Every view of the atlas at once, for a face that shows it all (the site)."""
    harvested = {h.repo for h in atlas.harvests}
    ordered = sorted(atlas.repositories, key=lambda r: r.id.lower())
    firsts = first_seen_by_repo(atlas)
    return {
        "cutoff": atlas.cutoff, "questions": questions(atlas),
        "cards": [card(atlas, c) for c in sorted(atlas.concepts, key=lambda c: c.id)],
        "claims": [claim(atlas, cl) for cl in sorted(atlas.claims, key=lambda cl: cl.id)],
        "flows": [flow(atlas, f) for f in sorted(atlas.flows, key=lambda f: f.id)],
        "repositories": [repo_summary(atlas, r, harvested) for r in ordered],
        "repos": [repo(atlas, r, firsts) for r in ordered],
        "seed": [seed_page(p) for p in sorted(atlas.seed_pages, key=lambda p: p.number)],
        "releases": {x.repo: [release_ref(repo_base(atlas, x.repo), r) for r in x.releases] for x in atlas.surfaces},
    }


def answered(answers_: dict[str, TextView]) -> list[str]:
    """The question ids of a card's answers, in the questions' order."""
    return [q for q in QUESTION_IDS if q in answers_]


# ---------------------------------------------------------------------------------------------
# Names of the atlas's fixed vocabulary, in both languages (what a face shows for a kind, a
# lifecycle, a status, a precision ...; the data keeps the ids)
# ---------------------------------------------------------------------------------------------

def _t(en: str, zh: str) -> TextView:
    return {"en": en, "zh": zh}


LABELS: dict[str, dict[str, TextView]] = {
    "kind": {
        "library": _t("library", "库"), "api": _t("API", "接口"), "protocol": _t("protocol", "协议"),
        "hardware": _t("hardware", "硬件"), "link": _t("link", "链路"), "engine": _t("engine", "引擎"),
        "data-path-attribute": _t("data-path attribute", "数据路径属性"),
        "build-flag": _t("build flag", "编译开关"), "memory-model": _t("memory model", "内存模型"),
        "technique": _t("technique", "技术"), "system": _t("system", "系统"), "paper": _t("paper", "论文"),
        "source-artifact": _t("source artifact", "源码制品"), "concept": _t("concept", "概念"),
    },
    "lifecycle": {
        "active": _t("active", "活跃"), "migrated": _t("migrated", "已迁移"),
        "pending-deprecation": _t("pending deprecation", "待废弃"), "deprecated": _t("deprecated", "已废弃"),
    },
    "api_kind": {
        "function": _t("function", "函数"), "enum-constant": _t("enum constant", "枚举常量"),
        "macro": _t("macro", "宏"), "type": _t("type", "类型"),
    },
    "precision": {
        "exact": _t("exact", "确切"), "on-or-before": _t("on or before", "不晚于"), "unknown": _t("unknown", "未知"),
    },
    "confidence": {
        "read-in-source": _t("read in source", "读过源码"), "second-hand": _t("second-hand", "转述"),
        "derived": _t("derived", "推导"), "unverified": _t("unverified", "未核实"),
    },
    "claim": {
        "confirmed": _t("confirmed", "已证实"), "refuted": _t("refuted", "已否定"),
        "hypothesis": _t("hypothesis", "假设"), "placeholder": _t("placeholder", "占位"), "open": _t("open", "待定"),
    },
    "repo": {
        "active": _t("active", "活跃"), "mirror": _t("mirror", "镜像"), "archived": _t("archived", "已归档"),
        "migrated": _t("migrated", "已迁移"), "unavailable": _t("unavailable", "不可用"),
    },
    "edge": {
        "data": _t("data", "数据"), "sync": _t("sync", "同步"), "control": _t("control", "控制"),
        "order": _t("order", "顺序"),
    },
    "method": {"term": _t("term", "词"), "path": _t("path", "路径")},
    "question": {  # the six questions in a word, for column heads
        "organize": _t("organise", "组织"), "address": _t("addresses", "地址"), "submit": _t("submit", "提交"),
        "move": _t("move", "搬运"), "link": _t("link", "链路"), "peer": _t("peer", "对端"),
    },
    "relation": {
        "uses": _t("uses", "使用"), "used-by": _t("used by", "被使用于"),
        "built-on": _t("built on", "构建于"), "underlies": _t("underlies", "支撑"),
        "submits-to": _t("submits to", "提交给"), "receives-work-from": _t("receives work from", "接收任务自"),
        "moves-over": _t("moves over", "经由"), "carries": _t("carries", "承载"),
        "runs-on": _t("runs on", "运行于"), "hosts": _t("hosts", "承载运行"),
        "part-of": _t("part of", "属于"), "has-part": _t("has part", "包含"),
        "configures": _t("configures", "配置"), "configured-by": _t("configured by", "由其配置"),
        "implements": _t("implements", "实现"), "implemented-by": _t("implemented by", "由其实现"),
        "replaces": _t("replaces", "取代"), "replaced-by": _t("replaced by", "被取代于"),
        "alternative-to": _t("alternative to", "可替代"), "analogous-to": _t("analogous to", "类似于"),
        "disambiguates": _t("disambiguates", "辨析"),
    },
}


def label(vocabulary: str, value: str) -> TextView:
    """The name of a vocabulary value in both languages (the value itself when it has none)."""
    return LABELS.get(vocabulary, {}).get(value) or {"en": value, "zh": value}
