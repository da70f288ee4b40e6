"""The pages of the site that read as documents: the overview table (index.html), the timeline
picture (timeline.html) and one static page per concept (concepts/<id>.html).

Everything on them is server-rendered HTML (and SVG) through Jinja2 with autoescape on, so they
read completely with JavaScript turned off, with the browser's own find and when printed. The
small scripts only add filters, the as-of control and tooltips; they find their data in the
rendered elements. They show the view layer's views (`atlas.views.everything`) and build nothing
of their own.
"""
from __future__ import annotations

from pathlib import Path

from ..views import AtlasViews, Card, ClaimView, FlowView, RelatedView
from .common import OVERVIEW, SITE_TITLE, TIMELINE, SourceLinks, concept_file, document_page, flow_file
from .overview import overview_rows
from .timeline import layout_timeline


class Lookups:
    """The views a concept page looks up by id, gathered once per build."""

    def __init__(self, v: AtlasViews):
        self.questions = {q["id"]: q for q in v["questions"]}
        self.claims: dict[str, ClaimView] = {cl["id"]: cl for cl in v["claims"]}
        self.flows: dict[str, FlowView] = {f["id"]: f for f in v["flows"]}
        self.known = {c["id"] for c in v["cards"]}


def _link(card: Card, ident: str, known: set[str]) -> dict:
    """A concept the card names: its id, its names and whether it has a page."""
    return {"id": ident, "names": card["labels"].get(ident, {"en": ident, "zh": ""}), "known": ident in known}


def _relations(card: Card, known: set[str]) -> tuple[list[dict], list[dict]]:
    """The card's relations as the page lists them: outgoing by type, then incoming by source."""
    out, inc = [], []
    for g in card["relations"]:
        for x in g["concepts"]:
            item = _relation_item(card, g["relation"], g["type"], x, known)
            (out if x["direction"] == "out" else inc).append(item)
    out.sort(key=lambda r: (r["type"], r["id"]))
    inc.sort(key=lambda r: (r["id"], r["type"]))
    return out, inc


def _relation_item(card: Card, name: str, rtype: str, x: RelatedView, known: set[str]) -> dict:
    return {"type": rtype, "inverse": name, "symmetric": name == rtype, **_link(card, x["id"], known),
            "note": x["note"], "evidence": x["evidence"]}


def concept_context(card: Card, look: Lookups) -> dict:
    """What the concept template shows, read off the card and the claims and flows it names."""
    outgoing, incoming = _relations(card, look.known)
    flows = []
    for ref in card["flows"]:
        f = look.flows[ref["id"]]
        labels = {s["id"]: s["label"] for s in f["steps"]}
        flows.append({"id": f["id"], "file": flow_file(f["id"]), "title": f["title"],
                      "steps": [{"id": s, "label": labels[s]} for s in ref["steps"]]})
    first = card["first_visible"]
    return {
        "card": card, "answers": [{"question": look.questions[q], "text": a} for q, a in card["answers"].items()],
        "hardware": [_link(card, h, look.known) for h in card["hardware"]],
        "outgoing": outgoing, "incoming": incoming, "claims": [look.claims[k["id"]] for k in card["claims"]],
        "flows": flows, "first": first, "first_id": _first_key(card),
        "repos": [r["id"] for r in card["repositories"]],
    }


def _first_key(card: Card) -> tuple | None:
    first = card["first_visible"]
    return (first["repo"], first["method"], first["value"]) if first else None


def flow_links(v: AtlasViews) -> list[dict]:
    return [{"id": f["id"], "file": flow_file(f["id"]), "title": f["title"], "summary": f["summary"],
             "steps": len(f["steps"])} for f in v["flows"]]


def overview_page(v: AtlasViews, as_of: str) -> str:
    groups = overview_rows(v["cards"], as_of)
    kinds = sorted({r["kind"] for g in groups for r in g["rows"]})
    repos = sorted({repo for g in groups for r in g["rows"] for repo in r["repos"]}, key=str.lower)
    lifecycles = sorted({r["lifecycle"] for g in groups for r in g["rows"]})
    return document_page("overview.html", f"Overview \u00b7 {SITE_TITLE['en']}", "", "overview",
                         "overview.js", groups=groups, questions=v["questions"], kinds=kinds,
                         repos=repos, lifecycles=lifecycles, as_of=as_of, cutoff=v["cutoff"],
                         total=sum(len(g["rows"]) for g in groups), flows=flow_links(v))


def timeline_page(v: AtlasViews, as_of: str) -> str:
    return document_page("timeline.html", f"Timeline \u00b7 {SITE_TITLE['en']}", "", "timeline",
                         "timeline.js", tl=layout_timeline(v, as_of))


def page_evidence(card: Card, look: Lookups) -> list:
    """Every evidence item a concept page shows (its own, its relations', its claims')."""
    return [*card["evidence"], *(e for g in card["relations"] for x in g["concepts"] for e in x["evidence"]),
            *(e for k in card["claims"] for e in look.claims[k["id"]]["evidence"])]


def concept_page(card: Card, look: Lookups, links: SourceLinks | None = None) -> str:
    links = links or SourceLinks()
    return document_page("concept.html", f"{card['names']['en'] or card['id']} \u00b7 {SITE_TITLE['en']}",
                         "../", "concept", sources=links, clone_note=links.note(page_evidence(card, look)),
                         **concept_context(card, look))


def reading_pages(v: AtlasViews, out: Path, as_of: str, links: SourceLinks | None = None) -> list[tuple[Path, str]]:
    """(path, html) of index.html, timeline.html and concepts/<id>.html for every concept.

    Nothing is written here: `owned.write_site` writes the pages and removes old ones."""
    pages = [(out / OVERVIEW, overview_page(v, as_of)), (out / TIMELINE, timeline_page(v, as_of))]
    look = Lookups(v)
    for card in v["cards"]:
        pages.append((out / concept_file(card["id"]), concept_page(card, look, links)))
    return pages
