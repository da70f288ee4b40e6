"""The pages of the site that read as documents: the overview table (index.html), the timeline
picture (timeline.html) and one static page per concept (concepts/<id>.html).

Everything on them is server-rendered HTML (and SVG) through Jinja2 with autoescape on, so they
read completely with JavaScript turned off, with the browser's own find and when printed. The
small scripts only add filters, the as-of control and tooltips; they find their data in the
rendered elements. Every page carries a Content-Security-Policy with `default-src 'none'` and
its one inline script allowed by hash (`script-src 'none'` on the concept pages), so nothing is
fetched from anywhere.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from ..errors import AtlasError
from ..model import ID_RE, QUESTION_IDS, RELATION_TYPES, SYMMETRIC, Atlas, Concept, Evidence
from .overview import concept_repos, overview_rows, questions, text
from .timeline import commit_url, layout_timeline

OVERVIEW = "index.html"
EXPLORER = "explorer.html"
TIMELINE = "timeline.html"
CONCEPTS = "concepts"
SITE_TITLE = {"en": "Ascend communication atlas", "zh": "昇腾通信图谱"}


def concept_file(ident: str) -> str:
    """The page of a concept, relative to the site root."""
    if not ID_RE.match(ident):
        raise AtlasError(f"concept id {ident!r} cannot name a page", "concepts",
                         hint="concept ids are lower-case kebab-case")
    return f"{CONCEPTS}/{ident}.html"


def _flow_file(flow) -> str:
    from .site import _flow_file as flow_file

    return flow_file(flow)


# ---------------------------------------------------------------------------------------------
# page data: plain dicts, no HTML
# ---------------------------------------------------------------------------------------------


def evidence(atlas: Atlas, ev: Evidence) -> dict:
    from .site import pin_url

    return {"href": pin_url(atlas, ev), "source": ev.source, "supports": text(ev.supports),
            "symbol": ev.symbol, "confidence": ev.confidence}


def _name(atlas: Atlas, ident: str) -> dict:
    c = atlas.concept_by_id.get(ident)
    if c is None:
        return {"id": ident, "names": {"en": ident, "zh": ""}, "known": False}
    return {"id": ident, "names": text(c.names), "known": True}


class Shared:
    """What every concept page needs from the whole atlas, gathered once per build."""

    def __init__(self, atlas: Atlas):
        self.questions = {q["id"]: q for q in questions(atlas)}
        self.claims: dict[str, list[dict]] = {}
        for cl in sorted(atlas.claims, key=lambda cl: cl.id):
            item = {"id": cl.id, "status": cl.status, "statement": text(cl.statement),
                    "note": text(cl.note), "evidence": [evidence(atlas, e) for e in cl.evidence]}
            for cid in sorted(set(cl.about)):
                self.claims.setdefault(cid, []).append(item)
        self.flows: dict[str, list[dict]] = {}
        for f in sorted(atlas.flows, key=lambda f: f.id):
            touched: dict[str, list[dict]] = {}
            for s in f.ordered_steps():
                for cid in dict.fromkeys(s.concepts):
                    touched.setdefault(cid, []).append({"id": s.id, "label": text(s.label)})
            for cid, steps in touched.items():
                self.flows.setdefault(cid, []).append(
                    {"id": f.id, "file": _flow_file(f), "title": text(f.title), "steps": steps})


def concept_card(atlas: Atlas, c: Concept, shared: Shared | None = None) -> dict:
    """The whole card of a concept, as plain data for the concept page."""
    shared = shared or Shared(atlas)
    qs = shared.questions
    incoming = []
    for r in sorted((r for r in atlas.touching.get(c.id, []) if r.target == c.id and r.source != c.id),
                    key=lambda r: (r.source, r.type)):
        incoming.append({"type": r.type, "inverse": RELATION_TYPES.get(r.type, r.type),
                         **_name(atlas, r.source), "note": text(r.note),
                         "evidence": [evidence(atlas, e) for e in r.evidence]})
    claims = shared.claims.get(c.id, [])
    flows = shared.flows.get(c.id, [])
    first = atlas.first_visible(c.id)
    sightings = []
    for s in sorted(atlas.sightings_by_concept.get(c.id, []),
                    key=lambda s: (not s.found, s.committer_date or "9999", s.repo, s.value)):
        sightings.append({"repo": s.repo, "probe": f"{s.method}: {s.value}", "found": s.found,
                          "date": s.date if s.found else "", "precision": s.precision,
                          "sha": s.sha, "href": commit_url(atlas, s.repo, s.sha),
                          "first": s is first})
    return {
        "id": c.id, "kind": c.kind, "names": text(c.names),
        "aliases": {lang: list(c.aliases.get(lang, [])) for lang in ("en", "zh")},
        "lifecycle": {"status": c.lifecycle.status, "note": text(c.lifecycle.note)},
        "answers": [{"question": qs[q], "text": text(c.answers[q])}
                    for q in QUESTION_IDS if c.answers.get(q)],
        "beginner": text(c.beginner), "professional": text(c.professional),
        "hardware": [_name(atlas, h) for h in c.hardware], "hardware_note": text(c.hardware_note),
        "outgoing": [{"type": r.type, "symmetric": r.type in SYMMETRIC, **_name(atlas, r.target),
                      "note": text(r.note), "evidence": [evidence(atlas, e) for e in r.evidence]}
                     for r in sorted(c.relations, key=lambda r: (r.type, r.target))],
        "incoming": incoming, "claims": claims,
        "evidence": [evidence(atlas, e) for e in c.evidence],
        "first": None if first is None else {
            "date": first.date, "repo": first.repo, "precision": first.precision,
            "sha": first.sha, "href": commit_url(atlas, first.repo, first.sha),
            "probe": f"{first.method}: {first.value}"},
        "sightings": sightings, "repos": concept_repos(atlas, c), "flows": flows,
    }


def flow_links(atlas: Atlas) -> list[dict]:
    return [{"id": f.id, "file": _flow_file(f), "title": text(f.title), "summary": text(f.summary),
             "steps": len(f.steps)} for f in sorted(atlas.flows, key=lambda f: f.id)]


# ---------------------------------------------------------------------------------------------
# pages
# ---------------------------------------------------------------------------------------------


def bi(t: dict | None, tag: str = "span", cls: str = "") -> Markup:
    """Both languages of a {en, zh} text, each in its own element and escaped; "" when empty.

    A template global rather than a macro: it runs for every cell, and a Python function is
    many times faster than a Jinja macro call. `tag` and `cls` come from our templates only."""
    if not t or not (t.get("en") or t.get("zh")):
        return Markup("")
    parts = []
    if t.get("en"):
        parts.append('<span class="en">' + str(escape(t["en"])) + "</span>")
    if t.get("zh"):
        parts.append('<span class="zh" lang="zh">' + str(escape(t["zh"])) + "</span>")
    attr = ' class="' + str(escape(cls)) + '"' if cls else ""
    return Markup(f"<{tag}{attr}>{' '.join(parts)}</{tag}>")


@lru_cache(maxsize=1)
def env() -> Environment:
    from .site import TEMPLATES

    e = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    e.globals["bi"] = bi
    return e


def site_page(template: str, title: str, root: str, current: str, script: str = "",
              **context) -> str:
    """One page through `template` (which extends base.html). `root` leads back to the site's
    top folder ("" or "../"); `script` names an asset run inline, allowed by its hash."""
    from .site import _asset, _sha256

    code = _asset(script) if script else ""
    csp = ("default-src 'none'; script-src " + (_sha256(code) if code else "'none'") +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return env().get_template(template).render(
        title=title, lang="en", csp=Markup(csp), style=Markup(_asset("pages.css")),
        script=Markup(code) if code else "", data="", vis="", root=root, current=current,
        site=SITE_TITLE, **context)


def overview_page(atlas: Atlas, as_of: str) -> str:
    groups = overview_rows(atlas, as_of)
    kinds = sorted({r["kind"] for g in groups for r in g["rows"]})
    repos = sorted({repo for g in groups for r in g["rows"] for repo in r["repos"]}, key=str.lower)
    lifecycles = sorted({r["lifecycle"] for g in groups for r in g["rows"]})
    return site_page("overview.html", f"Overview \u00b7 {SITE_TITLE['en']}", "", "overview",
                     "overview.js", groups=groups, questions=questions(atlas), kinds=kinds,
                     repos=repos, lifecycles=lifecycles, as_of=as_of, cutoff=atlas.cutoff,
                     total=sum(len(g["rows"]) for g in groups), flows=flow_links(atlas))


def timeline_page(atlas: Atlas, as_of: str) -> str:
    return site_page("timeline.html", f"Timeline \u00b7 {SITE_TITLE['en']}", "", "timeline",
                     "timeline.js", tl=layout_timeline(atlas, as_of))


def concept_page(atlas: Atlas, c: Concept, shared: Shared | None = None) -> str:
    card = concept_card(atlas, c, shared)
    return site_page("concept.html", f"{c.names.en or c.id} \u00b7 {SITE_TITLE['en']}", "../",
                     "concept", card=card)


def reading_pages(atlas: Atlas, out: Path, as_of: str) -> list[tuple[Path, str]]:
    """(path, html) of index.html, timeline.html and concepts/<id>.html for every concept.

    Nothing is written here: `owned.write_site` writes the pages and removes old ones."""
    pages = [(out / OVERVIEW, overview_page(atlas, as_of)),
             (out / TIMELINE, timeline_page(atlas, as_of))]
    shared = Shared(atlas)
    for c in sorted(atlas.concepts, key=lambda c: c.id):
        pages.append((out / concept_file(c.id), concept_page(atlas, c, shared)))
    return pages
