"""The view layer: the one projection of the records that every face reads.

A view is a plain, JSON-ready dict with a declared shape (a `TypedDict`, so the type checker sees its
fields). The terminal, `--format json`, the MCP tools, Markdown, the concept pages, the overview, the
explorer and the search index all read these views and only format them; none of them goes back to
the records. A field is spelled here and in the renderers that show it, nowhere else, and it has
one spelling from the JSON to the site's page data.

Everything here is a pure function of the `Atlas` (no files, no terminal, no HTML), so the stores
below the faces can keep views (the card store keeps every card, the search index the search
documents).
"""
from __future__ import annotations

from typing import Iterator, NamedTuple, NotRequired, TypedDict

from .model import (
    QUESTION_IDS, RELATION_TYPES, SYMMETRIC, Atlas, Claim, Concept, Evidence, Flow, FlowStep,
    Relation, Repository, Sighting, Text, utc_day,
)

# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


class TextView(TypedDict):
    en: str
    zh: str


class PinView(TypedDict):
    repo: str
    sha: str
    path: str
    start: int
    end: int


class EvidenceView(TypedDict):
    source: str  # the pin as written (owner/repo@sha:path#La-Lb) or the URL
    confidence: str
    supports: TextView
    url: str  # where a browser reads it: the pinned commit and lines upstream, or the URL ("" if none)
    pin: NotRequired[PinView]
    symbol: NotRequired[str]
    defined_at: NotRequired[str]  # "file:line:col" of the evidence in data/


class RelatedView(TypedDict):
    id: str
    name: TextView
    note: TextView
    direction: str  # "out": this concept is the relation's source; "in": its target
    evidence: list[EvidenceView]


class RelationGroup(TypedDict):
    relation: str  # the name read from this concept's side (uses / used-by ...)
    type: str  # the forward (or symmetric) relation type behind it
    concepts: list[RelatedView]


class ClaimRef(TypedDict):
    id: str
    status: str
    statement: TextView


class FlowRef(TypedDict):
    id: str
    title: TextView
    steps: list[str]  # ids of the steps that name the concept, in the flow's order


class HistoryItem(TypedDict):
    repo: str
    method: str
    value: str
    found: bool
    sha: str
    date: str  # committer timestamp with its offset ("" when not found)
    author_date: str
    introduced: str
    precision: str
    head: str
    cutoff: str
    url: str  # the commit upstream ("" when not found)


class FirstVisible(TypedDict):
    date: str  # committer timestamp with its offset; people see its UTC day
    repo: str
    sha: str
    precision: str
    method: str
    value: str
    url: str


class RepoRef(TypedDict):
    id: str
    status: str  # "" for a repository the atlas does not describe
    mirror_of: str
    purpose: TextView


class Lifecycle(TypedDict):
    status: str
    note: TextView


class AsOf(TypedDict):
    date: str
    visible: bool | None  # None: nothing dates the concept


class UndatedView(TypedDict):
    reason: str  # one of model.UNDATED_REASONS
    repos: list[str]
    note: TextView


class Card(TypedDict):
    id: str
    kind: str
    names: TextView
    aliases: dict[str, list[str]]
    answers: dict[str, TextView]  # question id -> answer, in question order
    beginner: TextView
    professional: TextView
    hardware: list[str]
    hardware_note: TextView
    lifecycle: Lifecycle
    relations: list[RelationGroup]
    claims: list[ClaimRef]
    flows: list[FlowRef]
    evidence: list[EvidenceView]
    history: list[HistoryItem]
    first_visible: FirstVisible | None
    repositories: list[RepoRef]
    labels: dict[str, TextView]  # names of the concepts the card refers to (hardware, relations)
    undated: UndatedView | None  # why no sighting dates the concept (None when one does)
    defined_at: str
    as_of: NotRequired[AsOf]


class Row(TypedDict):
    id: str
    kind: str
    name: TextView
    answers: list[str]  # the question ids answered
    lifecycle: str
    first_visible: NotRequired[str]  # UTC day, "" when undated
    visible: NotRequired[bool | None]


class PlanView(TypedDict):
    order: int  # 1 = decide first
    step: str  # "flow-id/step-id" it instruments, or ""
    where: list[EvidenceView]  # the pinned lines to time or print at
    measure: TextView
    confirm: TextView
    refute: TextView


class ClaimView(TypedDict):
    id: str
    status: str
    statement: TextView
    about: list[str]
    note: TextView
    evidence: list[EvidenceView]
    test_plan: PlanView | None
    score: NotRequired[float]


class StepPlan(TypedDict):
    claim: str
    order: int


# "from" is a Python keyword: these two shapes are declared in the functional form
AfterView = TypedDict("AfterView", {"from": str, "type": str, "label": str})
EdgeView = TypedDict("EdgeView", {"from": str, "to": str, "type": str, "label": str})


class StepView(TypedDict):
    id: str
    label: TextView
    actor: str
    concepts: list[str]
    note: TextView
    source: EvidenceView | None
    test_plans: list[StepPlan]  # the claims whose test plan instruments this step, in decision order
    after: list[AfterView]


class FlowView(TypedDict):
    id: str
    title: TextView
    summary: TextView
    evidence: list[EvidenceView]
    steps: list[StepView]  # in topological order
    edges: list[EdgeView]
    labels: dict[str, TextView]  # names of the concepts the steps name


class FlowSummary(TypedDict):
    id: str
    title: TextView
    summary: TextView
    steps: int
    edges: int


class QuestionView(TypedDict):
    id: str
    names: TextView
    explanation: TextView


class HarvestView(TypedDict):
    head: str
    branch: str
    cutoff: str
    cutoff_head: str
    harvested_at: str
    commits: int
    shallow: bool
    skipped_paths: list[str]


class ProbeView(TypedDict):
    concept: str
    method: str
    value: str
    found: bool
    sha: str
    date: str
    precision: str


class RepoSummary(TypedDict):
    id: str
    status: str
    purpose: TextView
    mirror_of: str
    harvested: bool
    probes: int
    found: int


class RepoView(TypedDict):
    id: str
    urls: list[str]
    purpose: TextView
    status: str
    branch: str
    mirror_of: str
    migrated_from: list[str]
    hardware: list[str]
    note: TextView
    evidence: list[EvidenceView]
    harvest: HarvestView | None
    probes: list[ProbeView]
    concepts: list[str]  # concepts with a probe in this repository
    defined_at: str


Pairs = list[tuple[str, str]]  # (language or "", text)


class SearchDocument(TypedDict):
    type: str  # concept, claim, flow or repo
    id: str
    name: TextView
    keys: list[str]  # exact names (id, names, aliases, titles)
    names: Pairs
    head: Pairs
    body: Pairs
    evidence: Pairs


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
    out: EvidenceView = {"source": ev.source, "confidence": ev.confidence, "supports": text(ev.supports),
                         "url": evidence_url(atlas, ev)}
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


class OwnerView(TypedDict):
    kind: str
    id: str
    flow: str  # the flow of a step ("" otherwise)
    label: str


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
    for repo_ in atlas.repositories:
        yield from ((Owner("repository", repo_.id), e) for e in repo_.evidence)


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
            "url": commit_url(atlas, s.repo, s.sha) if s.found else ""}


def history(atlas: Atlas, ident: str) -> list[HistoryItem]:
    """A concept's sightings, found ones first by committer date."""
    return [history_item(atlas, s) for s in atlas.sightings_by_concept.get(ident, [])]


def first_visible(atlas: Atlas, ident: str) -> FirstVisible | None:
    s = atlas.first_visible(ident)
    if s is None:
        return None
    return {"date": s.committer_date, "repo": s.repo, "sha": s.sha, "precision": s.precision,
            "method": s.method, "value": s.value, "url": commit_url(atlas, s.repo, s.sha)}


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
    return {"id": s.id, "label": text(s.label), "actor": s.actor, "concepts": list(s.concepts),
            "note": text(s.note), "source": evidence(atlas, s.source) if s.source else None,
            "test_plans": step_plans(atlas, f.id, s.id),
            "after": [{"from": e.source, "type": e.type, "label": e.label} for e in f.edges if e.target == s.id]}


def flow(atlas: Atlas, f: Flow) -> FlowView:
    """A flow with its steps in topological order."""
    steps = [step(atlas, f, s) for s in f.ordered_steps()]
    named = sorted({cid for s in f.steps for cid in s.concepts})
    return {"id": f.id, "title": text(f.title), "summary": text(f.summary),
            "evidence": evidence_list(atlas, f.evidence), "steps": steps,
            "edges": [{"from": e.source, "to": e.target, "type": e.type, "label": e.label} for e in f.edges],
            "labels": {cid: name_of(atlas, cid) for cid in named}}


def flow_summary(f: Flow) -> FlowSummary:
    return {"id": f.id, "title": text(f.title), "summary": text(f.summary), "steps": len(f.steps),
            "edges": len(f.edges)}


def repo_summary(atlas: Atlas, r: Repository, harvested: set[str]) -> RepoSummary:
    seen = [s for s in atlas.sightings if s.repo == r.id]
    return {"id": r.id, "status": r.status, "purpose": text(r.purpose), "mirror_of": r.mirror_of,
            "harvested": r.id in harvested, "probes": len(seen), "found": sum(1 for s in seen if s.found)}


def repo(atlas: Atlas, r: Repository) -> RepoView:
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
        "defined_at": str(r.loc) if r.loc else "",
    }


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


class AtlasViews(TypedDict):
    cutoff: str
    questions: list[QuestionView]
    cards: list[Card]  # by id
    claims: list[ClaimView]  # by id
    flows: list[FlowView]  # by id
    repositories: list[RepoSummary]  # by id, case-insensitive


def everything(atlas: Atlas) -> AtlasViews:
    """Every view of the atlas at once, for a face that shows it all (the site)."""
    harvested = {h.repo for h in atlas.harvests}
    return {
        "cutoff": atlas.cutoff, "questions": questions(atlas),
        "cards": [card(atlas, c) for c in sorted(atlas.concepts, key=lambda c: c.id)],
        "claims": [claim(atlas, cl) for cl in sorted(atlas.claims, key=lambda cl: cl.id)],
        "flows": [flow(atlas, f) for f in sorted(atlas.flows, key=lambda f: f.id)],
        "repositories": [repo_summary(atlas, r, harvested)
                         for r in sorted(atlas.repositories, key=lambda r: r.id.lower())],
    }


def answered(answers_: dict[str, TextView]) -> list[str]:
    """The question ids of a card's answers, in the questions' order."""
    return [q for q in QUESTION_IDS if q in answers_]
