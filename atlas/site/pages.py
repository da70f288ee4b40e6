"""The pages of the site that read as documents: the compact overview (index.html), the full table
(table.html), the two-axis picture (map.html), the timeline (timeline.html), the list of flows
(flows.html), the repositories (repos.html and repos/<owner>/<name>.html), the seed's ten pages
(seed.html) and one static page per concept (concepts/<id>.html).

Everything on them is server-rendered HTML (and SVG) through Jinja2 with autoescape on, so they
read completely with JavaScript turned off, with the browser's own find and when printed. The
small scripts only remember the language, add filters, the as-of control and tooltips; they find
their data in the rendered elements. They show the view layer's views (`atlas.view.views.everything`)
and build nothing of their own.
"""
from __future__ import annotations

from pathlib import Path

from markupsafe import Markup, escape

from ..model.core import EDGE_TYPES, KINDS
from ..view.views import (
    AtlasViews, Card, ClaimView, FlowView, RelatedView, RepoView, SeedPageView, TextView, safe_url,
)
from .common import (
    FLOWS, MAP, OVERVIEW, REPOS, SEED, SITE_TITLE, TABLE, TIMELINE, SourceLinks, concept_file, document_page,
    flow_file, repo_file,
)
from .layout import flow_blocks, step_numbers
from .overview import (
    KIND_GLYPH, OTHER_GLYPH, kind_groups, overview_rows, sentences, short_names, strip_scale, strip_x, two_axis,
    vocabulary_css,
)
from .timeline import layout_timeline
from .windowsvg import window_svg


class Lookups:
    """The views the pages look up by id, gathered once per build."""

    def __init__(self, v: AtlasViews):
        self.questions = {q["id"]: q for q in v["questions"]}
        self.claims: dict[str, ClaimView] = {cl["id"]: cl for cl in v["claims"]}
        self.flows: dict[str, FlowView] = {f["id"]: f for f in v["flows"]}
        self.known = {c["id"] for c in v["cards"]}
        self.cards: dict[str, Card] = {c["id"]: c for c in v["cards"]}
        self.repos: dict[str, RepoView] = {r["id"]: r for r in v["repos"]}


def repo_linker(repos: set[str], root: str):
    """A template function: a repository id as a link to its page (plain code when it has none)."""
    def link(rid: str) -> Markup:
        if rid in repos:
            return Markup(f'<a class="repo-link" href="{escape(root + repo_file(rid))}"><code>{escape(rid)}</code></a>')
        return Markup(f"<code>{escape(rid)}</code>")
    return link


def page(template: str, title: str, root: str, current: str, look: Lookups, script: str = "", **context) -> str:
    return document_page(template, f"{title} \u00b7 {SITE_TITLE['en']}", root, current, script,
                         repo_link=repo_linker(set(look.repos), root), **context)


def _link(card: Card, ident: str, known: set[str]) -> dict:
    """A concept the card names: its id, its names and whether it has a page."""
    return {"id": ident, "names": card["labels"].get(ident, {"en": ident, "zh": ""}), "known": ident in known}


def _relations(card: Card, known: set[str]) -> tuple[list[dict], list[dict]]:
    """The card's relations as the page lists them: outgoing by type, then incoming by source."""
    out: list[dict] = []
    inc: list[dict] = []
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
        titles = {s["id"]: s["title"] for s in f["steps"]}
        flows.append({"id": f["id"], "file": flow_file(f["id"]), "title": f["title"],
                      "steps": [{"id": s, "title": titles[s]} for s in ref["steps"]]})
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
             "steps": len(f["steps"]), "alternatives": len(f["choices"])} for f in v["flows"]]


def _glyphs() -> dict[str, tuple[str, str]]:
    return {k: KIND_GLYPH.get(k, OTHER_GLYPH) for k in KINDS}


def overview_page(v: AtlasViews, as_of: str, look: Lookups) -> str:
    groups = kind_groups(v["cards"], as_of)
    rows = [r for g in groups for r in g["rows"]]
    scale = strip_scale(v["cards"], v["cutoff"])
    for r in rows:
        r["x"] = strip_x(r["date"], scale) if r["date"] else None
    return page("overview.html", "Overview", "", "overview", look, "overview.js",
                groups=groups, questions=v["questions"], kinds=sorted({r["kind"] for r in rows}),
                repos=sorted({repo for r in rows for repo in r["repos"]}, key=str.lower),
                lifecycles=sorted({r["lifecycle"] for r in rows}), as_of=as_of, cutoff=v["cutoff"], scale=scale,
                total=len(rows), extra_css=Markup(vocabulary_css()),
                data=Markup(_json({"sentences": sentences(v["cards"]),
                                                    "questions": v["questions"]})))


def _json(obj) -> str:
    from .common import script_json

    return script_json(obj)


def table_page(v: AtlasViews, as_of: str, look: Lookups) -> str:
    return page("table.html", "Full table", "", "table", look, groups=overview_rows(v["cards"], as_of),
                questions=v["questions"])


def map_page(v: AtlasViews, as_of: str, look: Lookups) -> str:
    used = sorted({c["kind"] for c in v["cards"]}, key=lambda k: (KINDS.index(k) if k in KINDS else 99, k))
    glyphs = _glyphs()
    return page("map.html", "General map", "", "map", look, pic=two_axis(v["cards"], as_of),
                qnames={q["id"]: q["names"] for q in v["questions"]}, questions=v["questions"],
                glyphs={**glyphs, **{k: OTHER_GLYPH for k in used if k not in glyphs}},
                kinds=[{"id": k, "colour": glyphs.get(k, OTHER_GLYPH)[0], "glyph": glyphs.get(k, OTHER_GLYPH)[1]}
                       for k in used])


def timeline_page(v: AtlasViews, as_of: str, look: Lookups | None = None) -> str:
    return page("timeline.html", "Timeline", "", "timeline", look or Lookups(v), "timeline.js",
                tl=layout_timeline(v, as_of))


def flows_page(v: AtlasViews, look: Lookups) -> str:
    return page("flows.html", "Flows", "", "flow", look, flows=flow_links(v),
                seed={f: p for p in v["seed"] for f in p["flows"]})


def seed_page(v: AtlasViews, look: Lookups) -> str:
    cited = _seed_citations(v)
    return page("seed.html", "The seed", "", "seed", look, pages=v["seed"], cited=cited,
                flows={f["id"]: f for f in v["flows"]})


def _seed_citations(v: AtlasViews) -> dict[int, list[dict]]:
    """Page number -> what cites it: [{kind, id, file, name}] (concepts, claims, flows)."""
    out: dict[int, list[dict]] = {}

    def add(evs, kind: str, ident: str, file: str, name: TextView) -> None:
        for n in sorted({e["seed_page"] for e in evs if e.get("seed_page")}):
            out.setdefault(n, []).append({"kind": kind, "id": ident, "file": file, "name": name})
    for c in v["cards"]:
        add([*c["evidence"], *(e for g in c["relations"] for x in g["concepts"] for e in x["evidence"])],
            "concept", c["id"], concept_file(c["id"]), c["names"])
    for cl in v["claims"]:
        known = [c for c in cl["about"] if any(card["id"] == c for card in v["cards"])]
        add(cl["evidence"], "claim", cl["id"], concept_file(known[0]) + "#claims" if known else "", cl["statement"])
    for f in v["flows"]:
        add([*f["evidence"], *(s["source"] for s in f["steps"] if s["source"])], "flow", f["id"], flow_file(f["id"]),
            f["title"])
    return out


def repos_page(v: AtlasViews, look: Lookups) -> str:
    return page("repos.html", "Repositories", "", "repo", look, repos=v["repos"])


def repo_page(r: RepoView, look: Lookups, links: SourceLinks | None = None) -> str:
    root = "../" * (1 + r["id"].count("/"))
    names = {cid: short_names(look.cards[cid]) if cid in look.cards else {"en": cid, "zh": ""}
             for cid in {*r["first_seen"], *r["concepts"]}}
    first = {cid: look.cards[cid]["first_visible"] for cid in r["first_seen"] if cid in look.cards}
    mine = []  # (path, sha, page) of this repository's source pages, when the site was built with clones
    for key, file in (links.pages if links else {}).items():
        repo, _, rest = key.partition("@")
        sha, _, path = rest.partition(":")
        if repo == r["id"]:
            mine.append((path, sha, file))
    return page("repo.html", r["id"], root, "repo", look, r=r, names=names, first=first, known=look.known,
                sources=links, migrations=list(r["migrated_from"]), urls=[u for u in map(safe_url, r["urls"]) if u],
                source_pages=sorted(mine, key=lambda x: (x[1], x[0])))


def flow_page(f: FlowView, look: Lookups, seed: SeedPageView | None, links: SourceLinks | None = None) -> str:
    """A flow as HTML: the step list in blocks (parallel steps side by side, alternatives in their
    own block), each step with its detail, and the step panel the script fills. Built from local
    clones, a step's pin opens its source page and the flow has a code workspace (`workspace`),
    which every step with a pin opens at that step."""
    links = links or SourceLinks()
    steps = {s["id"]: s for s in f["steps"]}
    pins = [*f["evidence"], *(s["source"] for s in f["steps"] if s["source"])]
    return page("flow.html", f["title"]["en"] or f["id"], "", "flow", look, "flow.js", flow=f, steps=steps,
                num=step_numbers(f), blocks=flow_blocks(f),
                labels=f["labels"], known=look.known, edge_types=EDGE_TYPES, seed=seed, sources=links,
                clone_note=links.note(pins), workspace=links.workspaces.get(f["id"], ""),
                window_svg=window_svg(f["layout"]))


def page_evidence(card: Card, look: Lookups) -> list:
    """Every evidence item a concept page shows (its own, its relations', its claims')."""
    return [*card["evidence"], *(e for g in card["relations"] for x in g["concepts"] for e in x["evidence"]),
            *(e for k in card["claims"] for e in look.claims[k["id"]]["evidence"])]


def concept_page(card: Card, look: Lookups, links: SourceLinks | None = None) -> str:
    links = links or SourceLinks()
    return page("concept.html", card["names"]["en"] or card["id"], "../", "concept", look, sources=links,
                clone_note=links.note(page_evidence(card, look)), **concept_context(card, look))


def reading_pages(v: AtlasViews, out: Path, as_of: str, links: SourceLinks | None = None) -> list[tuple[Path, str]]:
    """(path, html) of every document page: the overview, the full table, the two-axis map, the
    timeline, the flows, the repositories, the seed, then flow-<id>.html for every flow,
    concepts/<id>.html for every concept and repos/<owner>/<name>.html for every repository.
    `links` are the source pages and code workspaces of a build from local clones.

    Nothing is written here: `owned.write_site` writes the pages and removes old ones."""
    look = Lookups(v)
    pages = [(out / OVERVIEW, overview_page(v, as_of, look)), (out / TABLE, table_page(v, as_of, look)),
             (out / MAP, map_page(v, as_of, look)), (out / TIMELINE, timeline_page(v, as_of, look)),
             (out / FLOWS, flows_page(v, look)), (out / REPOS, repos_page(v, look)), (out / SEED, seed_page(v, look))]
    seed = {fid: p for p in v["seed"] for fid in p["flows"]}
    for f in v["flows"]:
        pages.append((out / flow_file(f["id"]), flow_page(f, look, seed.get(f["id"]), links)))
    for card in v["cards"]:
        pages.append((out / concept_file(card["id"]), concept_page(card, look, links)))
    for r in v["repos"]:
        pages.append((out / repo_file(r["id"]), repo_page(r, look, links)))
    return pages
