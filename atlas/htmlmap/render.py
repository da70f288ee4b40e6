"""Build the HTML map: pyvis Networks filled from the atlas, written through our own template.

Every page is one self-contained file that works from file:// without any network: the
vis-network script shipped inside the installed pyvis wheel is inlined at build time (never
copied into the repository, no lib/ folder), there is no Bootstrap or Tom Select, and a
Content-Security-Policy with `default-src 'none'` and per-script hashes forbids every fetch and
every script we did not write. All data goes into the page as one JSON block with <, >, & and
U+2028/U+2029 escaped; the page scripts set text with textContent only.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from ..errors import AtlasError, Location
from ..model import (
    EDGE_TYPES, ID_RE, KINDS, LIFECYCLES, QUESTION_IDS, SYMMETRIC, Atlas, Concept, Evidence,
    Flow, Text)
from ..text import norm
from .layout import CELL_H, CELL_W, MapLayout, flow_levels, layout_map

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# kind -> (colour, vis shape, legend glyph); label-below shapes so all nodes line up alike
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    "library": ("#2b6cb0", "dot", "\u25cf"),
    "api": ("#4299e1", "diamond", "\u25c6"),
    "protocol": ("#805ad5", "triangle", "\u25b2"),
    "hardware": ("#c05621", "square", "\u25a0"),
    "link": ("#dd6b20", "triangleDown", "\u25bc"),
    "engine": ("#c53030", "star", "\u2605"),
    "data-path-attribute": ("#2f855a", "hexagon", "\u2b22"),
    "build-flag": ("#718096", "square", "\u25a0"),
    "memory-model": ("#38a169", "diamond", "\u25c6"),
    "technique": ("#d53f8c", "dot", "\u25cf"),
    "system": ("#744210", "hexagon", "\u2b22"),
    "paper": ("#b7791f", "triangle", "\u25b2"),
    "source-artifact": ("#4a5568", "triangleDown", "\u25bc"),
    "concept": ("#319795", "star", "\u2605"),
}
OTHER_KIND = ("#a0aec0", "dot", "\u25cf")

RELATION_COLOURS = {
    "uses": "#4a5568", "built-on": "#2b6cb0", "submits-to": "#c53030", "moves-over": "#dd6b20",
    "runs-on": "#744210", "part-of": "#2f855a", "configures": "#718096",
    "implements": "#805ad5", "replaces": "#b7791f", "alternative-to": "#d53f8c",
    "analogous-to": "#319795", "disambiguates": "#a0aec0",
}

def _edge_colour(colour: str) -> dict:
    """The same colour selected and hovered: vis would otherwise grey a selection's edges."""
    return {"color": colour, "highlight": colour, "hover": colour, "inherit": False}


FLOW_EDGE_STYLE = {  # type -> vis edge options
    "data": {"color": _edge_colour("#2b6cb0"), "width": 3, "dashes": False},
    "sync": {"color": _edge_colour("#dd6b20"), "width": 2, "dashes": [8, 4]},
    "control": {"color": _edge_colour("#805ad5"), "width": 2, "dashes": [2, 4]},
    "order": {"color": _edge_colour("#a0aec0"), "width": 1, "dashes": [1, 6]},
}
ACTOR_PALETTE = ("#bee3f8", "#fed7d7", "#c6f6d5", "#fefcbf", "#e9d8fd", "#feebc8", "#b2f5ea",
                 "#fed7e2", "#e2e8f0", "#c3dafe")

LABEL_MAX = 22
EDGE_BUDGET = 5000  # above this many relations the map draws only the selection's relations


# ---------------------------------------------------------------------------------------------
# escaping and links
# ---------------------------------------------------------------------------------------------


def script_json(obj) -> str:
    """JSON safe inside <script>: sorted, compact, with <, >, &, U+2028 and U+2029 escaped."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def safe_url(url: str) -> str:
    """Only http(s) URLs become links; anything else (javascript:, data:, ...) is dropped."""
    url = (url or "").strip()
    return url if re.match(r"^https?://[^\s]+$", url, re.I) else ""


def pin_url(atlas: Atlas, ev: Evidence) -> str:
    """A browsable URL for an evidence item: the pinned commit and lines, or its plain url."""
    if ev.pin is None:
        return safe_url(ev.url)
    pin = ev.pin
    repo = atlas.repo_by_id.get(pin.repo)
    base = ""
    if repo is not None and repo.urls:
        base = safe_url(repo.urls[0]).rstrip("/")
        if base.endswith(".git"):
            base = base[:-4]
    if not base:
        base = f"https://github.com/{pin.repo}"
    lines = f"#L{pin.start}" if pin.start == pin.end else f"#L{pin.start}-L{pin.end}"
    return f"{base}/blob/{pin.sha}/{pin.path}{lines}"


def _t(text: Text | None) -> dict:
    return {"en": text.en, "zh": text.zh} if text else {"en": "", "zh": ""}


def _ev(atlas: Atlas, ev: Evidence) -> dict:
    return {"href": pin_url(atlas, ev), "source": ev.source, "supports": _t(ev.supports),
            "symbol": ev.symbol, "confidence": ev.confidence}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def node_label(c: Concept) -> str:
    en, zh = c.names.en or c.id, c.names.zh
    label = _short(en, LABEL_MAX)
    if zh and zh != en:
        label += "\n" + _short(zh, LABEL_MAX // 2 + 1)
    return label


# ---------------------------------------------------------------------------------------------
# assets
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def vis_js() -> str:
    """vis-network as shipped inside the installed pyvis wheel (read, never copied)."""
    import pyvis

    path = Path(pyvis.__file__).resolve().parent / "templates" / "lib" / "vis-9.1.2" / \
        "vis-network.min.js"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AtlasError(f"cannot read vis-network from the pyvis package: {exc}",
                         Location(str(path)), hint="reinstall pyvis 0.3.2") from exc
    if re.search(r"</script|<!--", text, re.I):
        raise AtlasError("vis-network script cannot be inlined safely", Location(str(path)))
    return text


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


@lru_cache(maxsize=1)
def _env() -> Environment:
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _page(template: str, title: str, data: dict, script: str, lang: str = "en") -> str:
    scripts = [vis_js(), _asset("common.js") + "\n" + _asset(script)]
    csp = ("default-src 'none'; script-src " + " ".join(_sha256(s) for s in scripts) +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return _env().get_template(template).render(
        title=title, lang=lang, csp=Markup(csp), style=Markup(_asset("style.css")),
        vis=Markup(scripts[0]), script=Markup(scripts[1]), data=Markup(script_json(data)))


# ---------------------------------------------------------------------------------------------
# networks
# ---------------------------------------------------------------------------------------------


def _network(**kwargs):
    from pyvis.network import Network

    return Network(height="100%", width="100%", directed=True, cdn_resources="in_line", **kwargs)


def map_options() -> dict:
    groups = {}
    for kind in KINDS:
        colour, shape, _ = KIND_STYLE[kind]
        groups[kind] = {"color": {"background": colour, "border": colour,
                                  "highlight": {"background": "#f6e05e", "border": "#1a202c"}},
                        "shape": shape}
    return {
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 1},
        "interaction": {"hover": True, "tooltipDelay": 300, "hideEdgesOnDrag": True,
                        "hideEdgesOnZoom": False, "multiselect": False},
        "nodes": {"size": 12, "font": {"size": 13, "face": "sans-serif",
                                        "multi": False}, "borderWidth": 1},
        "edges": {"smooth": False, "arrows": {"to": {"enabled": True, "scaleFactor": 0.5}},
                  "font": {"size": 10, "align": "middle", "color": "#4a5568"},
                  "width": 1, "selectionWidth": 2},
        "groups": groups,
    }


def build_map_network(atlas: Atlas, layout: MapLayout):
    """The index network: one node per concept, one edge per relation with both ends known."""
    net = _network()
    pos = layout.positions["history"]
    nodes = []
    for c in sorted(atlas.concepts, key=lambda c: c.id):
        x, y = pos[c.id]
        node = {"id": c.id, "label": node_label(c), "x": x, "y": y, "group": c.kind}
        if c.kind not in KIND_STYLE:
            colour, shape, _ = OTHER_KIND
            node["color"] = colour
            node["shape"] = shape
        n_answers = len([q for q in QUESTION_IDS if c.answers.get(q)])
        if n_answers > 1:
            node["borderWidth"] = 1 + n_answers
        if c.lifecycle.status in ("deprecated", "pending-deprecation"):
            node["shapeProperties"] = {"borderDashes": [4, 3]}
        nodes.append(node)
    known = {c.id for c in atlas.concepts}
    rels = sorted(((r.source, r.type, r.target) for r in atlas.relations()
                   if r.source in known and r.target in known))
    edges = []
    seen = set()
    for source, rtype, target in rels:
        if (source, rtype, target) in seen:
            continue
        seen.add((source, rtype, target))
        edge = {"id": f"e{len(edges)}", "from": source, "to": target, "label": rtype,
                "color": _edge_colour(RELATION_COLOURS.get(rtype, "#718096"))}
        if rtype in SYMMETRIC:
            edge["arrows"] = "to, from"
            edge["dashes"] = True
        edges.append(edge)
    # filled directly: add_node/add_edge check duplicates in O(n) each
    net.nodes = nodes
    net.edges = edges
    net.options = map_options()
    return net


def build_flow_network(atlas: Atlas, flow: Flow):
    net = _network()
    levels = flow_levels(flow)
    actors = sorted({s.actor for s in flow.steps})
    colour = {a: ACTOR_PALETTE[i % len(ACTOR_PALETTE)] for i, a in enumerate(actors)}
    nodes = []
    for s in flow.ordered_steps():
        label = _short(s.label.en or s.id, 40)
        if s.label.zh and s.label.zh != s.label.en:
            label += "\n" + _short(s.label.zh, 24)
        nodes.append({"id": s.id, "label": label, "level": levels[s.id], "shape": "box",
                      "color": {"background": colour[s.actor], "border": "#4a5568",
                                "highlight": {"background": "#f6e05e", "border": "#1a202c"}},
                      "font": {"size": 14, "face": "sans-serif"},
                      "widthConstraint": {"maximum": 240}, "margin": 10})
    ids = set(levels)
    edges = []
    for i, e in enumerate(flow.edges):
        if e.source not in ids or e.target not in ids:
            continue
        edge = {"id": f"f{i}", "from": e.source, "to": e.target, "label": e.label or e.type,
                "arrows": "to"}
        edge.update(json.loads(json.dumps(FLOW_EDGE_STYLE.get(e.type, FLOW_EDGE_STYLE["order"]))))
        if levels[e.target] - levels[e.source] != 1:  # skips a level: bend it off the row
            edge["smooth"] = {"enabled": True, "type": "curvedCW", "roundness": 0.3}
        edges.append(edge)
    net.nodes = nodes
    net.edges = edges
    net.options = {
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 1,
                   "hierarchical": {"enabled": True, "direction": "LR", "sortMethod": "directed",
                                    "levelSeparation": 300, "nodeSpacing": 120,
                                    "treeSpacing": 160, "blockShifting": True,
                                    "edgeMinimization": True, "parentCentralization": True}},
        "interaction": {"hover": True},
        "edges": {"smooth": {"enabled": True, "type": "cubicBezier",
                             "forceDirection": "horizontal", "roundness": 0.4},
                  "font": {"size": 11, "align": "middle"}},
    }
    return net, colour


# ---------------------------------------------------------------------------------------------
# page data
# ---------------------------------------------------------------------------------------------


def _concept_repos(atlas: Atlas, c: Concept) -> list[str]:
    repos = {p.repo for p in c.probes}
    repos |= {s.repo for s in atlas.sightings_by_concept.get(c.id, []) if s.found}
    repos |= {e.pin.repo for e in c.evidence if e.pin}
    return sorted(repos)


def _flow_file(flow: Flow) -> str:
    if not ID_RE.match(flow.id):
        raise AtlasError(f"flow id {flow.id!r} cannot name a page", flow.loc or "flows",
                         hint="flow ids are lower-case kebab-case")
    return f"flow-{flow.id}.html"


def _question_data(atlas: Atlas) -> list[dict]:
    out = []
    for qid in QUESTION_IDS:
        q = atlas.question_by_id.get(qid)
        names = _t(q.names) if q else {"en": qid, "zh": ""}
        out.append({"id": qid, "names": names, "explanation": _t(q.explanation if q else None)})
    return out


def index_data(atlas: Atlas, layout: MapLayout, net, as_of: str) -> dict:
    known = {c.id for c in atlas.concepts}
    flows_by_concept: dict[str, list[dict]] = {}
    for f in sorted(atlas.flows, key=lambda f: f.id):
        for s in f.ordered_steps():
            for cid in s.concepts:
                lst = flows_by_concept.setdefault(cid, [])
                if not lst or lst[-1]["id"] != f.id:
                    lst.append({"id": f.id, "file": _flow_file(f), "title": _t(f.title),
                                "steps": []})
                if s.id not in lst[-1]["steps"]:
                    lst[-1]["steps"].append(s.id)
    claims = sorted(atlas.claims, key=lambda cl: cl.id)
    claim_idx: dict[str, list[int]] = {}
    claim_data = []
    for i, cl in enumerate(claims):
        claim_data.append({"id": cl.id, "statement": _t(cl.statement), "status": cl.status,
                           "note": _t(cl.note), "evidence": [_ev(atlas, e) for e in cl.evidence]})
        for cid in sorted(set(cl.about)):
            claim_idx.setdefault(cid, []).append(i)
    concepts = []
    for c in sorted(atlas.concepts, key=lambda c: c.id):
        first = atlas.first_visible(c.id)
        first_d = None
        if first is not None:
            href = ""
            if first.sha:
                repo = atlas.repo_by_id.get(first.repo)
                base = safe_url(repo.urls[0]).rstrip("/") if repo and repo.urls else ""
                base = base or f"https://github.com/{first.repo}"
                href = f"{base}/commit/{first.sha}"
            first_d = {"date": first.date, "repo": first.repo, "sha": first.sha, "href": href,
                       "precision": first.precision, "method": first.method,
                       "value": first.value}
        keys = sorted({norm(n) for n in [c.id, *c.all_names()] if norm(n)})
        concepts.append({
            "id": c.id, "kind": c.kind, "names": _t(c.names),
            "aliases": {lang: list(c.aliases.get(lang, [])) for lang in ("en", "zh")},
            "answers": {q: _t(c.answers[q]) for q in QUESTION_IDS if c.answers.get(q)},
            "beginner": _t(c.beginner), "professional": _t(c.professional),
            "hardware": [h for h in c.hardware], "hardwareNote": _t(c.hardware_note),
            "lifecycle": {"status": c.lifecycle.status, "note": _t(c.lifecycle.note)},
            "rels": [{"type": r.type, "to": r.target, "known": r.target in known,
                      "note": _t(r.note), "evidence": [_ev(atlas, e) for e in r.evidence]}
                     for r in sorted(c.relations, key=lambda r: (r.type, r.target))],
            "evidence": [_ev(atlas, e) for e in c.evidence],
            "claims": claim_idx.get(c.id, []),
            "first": first_d, "repos": _concept_repos(atlas, c),
            "flows": flows_by_concept.get(c.id, []), "keys": keys,
            "pos": {view: list(layout.positions[view][c.id]) for view in layout.positions},
        })
    repos = sorted({r for c in concepts for r in c["repos"]})
    return {
        "meta": {"asOf": as_of, "cutoff": atlas.cutoff, "edgeBudget": EDGE_BUDGET, "cellW": CELL_W, "cellH": CELL_H},
        "questions": _question_data(atlas),
        "kinds": [{"id": k, "color": KIND_STYLE[k][0], "glyph": KIND_STYLE[k][2],
                   "count": sum(1 for c in concepts if c["kind"] == k)} for k in KINDS],
        "lifecycles": list(LIFECYCLES),
        "repos": repos,
        "columns": [{"key": col.key, "x": col.x} for col in layout.columns],
        "bands": {view: [{"key": b.key, "y0": b.y0, "y1": b.y1, "count": b.count}
                         for b in bands] for view, bands in layout.bands.items()},
        "concepts": concepts, "claims": claim_data,
        "flows": [{"id": f.id, "file": _flow_file(f), "title": _t(f.title),
                   "summary": _t(f.summary), "steps": len(f.steps)}
                  for f in sorted(atlas.flows, key=lambda f: f.id)],
        "nodes": net.nodes, "edges": net.edges, "options": net.options,
    }


def flow_data(atlas: Atlas, flow: Flow, net, colours: dict[str, str]) -> dict:
    steps = []
    for s in flow.ordered_steps():
        steps.append({
            "id": s.id, "label": _t(s.label), "actor": s.actor, "note": _t(s.note),
            "concepts": [{"id": cid, "names": _t(atlas.concept_by_id[cid].names)
                          if cid in atlas.concept_by_id else {"en": cid, "zh": ""},
                          "known": cid in atlas.concept_by_id} for cid in s.concepts],
            "source": _ev(atlas, s.source) if s.source else None,
        })
    return {
        "flow": {"id": flow.id, "title": _t(flow.title), "summary": _t(flow.summary),
                 "evidence": [_ev(atlas, e) for e in flow.evidence]},
        "actors": [{"name": a, "color": c} for a, c in colours.items()],
        "edgeTypes": [{"type": t, "color": FLOW_EDGE_STYLE[t]["color"]["color"],
                       "dashes": FLOW_EDGE_STYLE[t]["dashes"]} for t in EDGE_TYPES],
        "steps": steps, "nodes": net.nodes, "edges": net.edges, "options": net.options,
    }


# ---------------------------------------------------------------------------------------------
# the site
# ---------------------------------------------------------------------------------------------


def build_site(atlas: Atlas, out_dir, as_of: str | None = None) -> list[Path]:
    """Write the site into out_dir and return the paths: index.html (the overview), timeline.html,
    concepts/<id>.html for every concept, explorer.html and flow-<id>.html for every flow.

    `as_of` (YYYY-MM-DD) is the initial value of the page's date control: concepts first visible
    after it start greyed out. Default: the atlas cut-off. Stale flow-*.html files are removed."""
    if as_of is not None and not DATE_RE.match(as_of):
        raise AtlasError(f"--as-of must be a date YYYY-MM-DD, not {as_of!r}", "--as-of")
    as_of = as_of or atlas.cutoff
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AtlasError(f"cannot create the output directory: {exc}", str(out)) from exc
    layout = layout_map(atlas)
    net = build_map_network(atlas, layout)
    pages: list[tuple[Path, str]] = [(out / "explorer.html", _page(
        "index.html", "Ascend communication atlas", index_data(atlas, layout, net, as_of),
        "map.js"))]
    for flow in sorted(atlas.flows, key=lambda f: f.id):
        fnet, colours = build_flow_network(atlas, flow)
        title = flow.title.en or flow.id
        pages.append((out / _flow_file(flow), _page(
            "flow.html", title, flow_data(atlas, flow, fnet, colours), "flow.js")))
    written = {p.name for p, _ in pages}
    for stale in sorted(out.glob("flow-*.html")):
        if stale.name not in written:
            stale.unlink()
    from .pages import reading_pages  # the overview, the timeline and the concept pages

    pages = reading_pages(atlas, out, as_of) + pages
    for path, html in pages:
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(html)
        except OSError as exc:
            raise AtlasError(f"cannot write the page: {exc}", str(path)) from exc
    return [p for p, _ in pages]
