"""The site: `build_site` writes every page (the document pages come from `pages`), and this
module builds the graph pages itself: the relation explorer and one page per flow.

The pages work from file:// without any network. The vis-network script that ships inside the
installed pyvis wheel is written once next to the pages (`vis-network.min.js`, never copied into
the repository) and loaded by the graph pages with `<script src>`; a Content-Security-Policy with
`default-src 'none'` allows only that same-directory script (`'self'`) and our own inline script
by its hash, and forbids every fetch. All data goes into the page as one JSON block with <, >, &
and U+2028/U+2029 escaped; the page scripts set text with textContent only.
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
from .layout import answered, flow_levels, lane_key, lanes, marks

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
VIS_FILE = "vis-network.min.js"  # the one shared copy, next to the pages
EXPLORER = "explorer.html"

# The seed's six terms: the explorer opens on them (those present in the atlas).
SEED_FOCUS = ("dma", "hccs", "hccl", "ascend-shmem", "fabric-memory", "aiv-direct-drive")

# kind -> (colour, vis shape, legend glyph)
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    "library": ("#2b6cb0", "dot", "\u25cf"),
    "api": ("#3182ce", "diamond", "\u25c6"),
    "protocol": ("#805ad5", "triangle", "\u25b2"),
    "hardware": ("#c05621", "square", "\u25a0"),
    "link": ("#dd6b20", "triangleDown", "\u25bc"),
    "engine": ("#c53030", "star", "\u2605"),
    "data-path-attribute": ("#2f855a", "hexagon", "\u2b22"),
    "build-flag": ("#4a5568", "square", "\u25a0"),
    "memory-model": ("#38a169", "diamond", "\u25c6"),
    "technique": ("#d53f8c", "dot", "\u25cf"),
    "system": ("#744210", "hexagon", "\u2b22"),
    "paper": ("#b7791f", "triangle", "\u25b2"),
    "source-artifact": ("#4a5568", "triangleDown", "\u25bc"),
    "concept": ("#319795", "star", "\u2605"),
}
OTHER_KIND = ("#4a5568", "dot", "\u25cf")

RELATION_COLOURS = {
    "uses": "#4a5568", "built-on": "#2b6cb0", "submits-to": "#c53030", "moves-over": "#c05621",
    "runs-on": "#744210", "part-of": "#2f855a", "configures": "#4a5568",
    "implements": "#805ad5", "replaces": "#975a16", "alternative-to": "#b83280",
    "analogous-to": "#2c7a7b", "disambiguates": "#718096",
}


def _edge_colour(colour: str) -> dict:
    """The same colour selected and hovered: vis would otherwise grey a selection's edges."""
    return {"color": colour, "highlight": colour, "hover": colour, "inherit": False}


FLOW_EDGE_STYLE = {  # type -> vis edge options
    "data": {"color": _edge_colour("#2b6cb0"), "width": 3, "dashes": False},
    "sync": {"color": _edge_colour("#c05621"), "width": 2, "dashes": [8, 4]},
    "control": {"color": _edge_colour("#805ad5"), "width": 2, "dashes": [2, 4]},
    "order": {"color": _edge_colour("#718096"), "width": 1.5, "dashes": [1, 6]},
}
ACTOR_PALETTE = ("#bee3f8", "#fed7d7", "#c6f6d5", "#fefcbf", "#e9d8fd", "#feebc8", "#b2f5ea",
                 "#fed7e2", "#e2e8f0", "#c3dafe")

NAME_EN_MAX = 34  # explorer node label: short English name (wraps inside the box)
NAME_ZH_MAX = 14  # and short Chinese name; the tooltip and the card give the full names
PAREN_RE = re.compile(r"\s*[(\uff08].*$", re.S)


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


def short_name(name: str, limit: int) -> str:
    """A node's name without its parenthesised expansion ("HCCL (Huawei ...)" -> "HCCL")."""
    base = PAREN_RE.sub("", name).strip() or name.strip()
    return _short(base, limit)


def node_label(c: Concept) -> str:
    en, zh = c.names.en or c.id, c.names.zh
    label = short_name(en, NAME_EN_MAX)
    zh_base = short_name(zh, 10_000) if zh else ""
    if zh_base and zh_base != short_name(en, 10_000):
        label += "\n" + _short(zh_base, NAME_ZH_MAX)
    others = marks(c)
    if others:
        label += "\n+ " + ", ".join(others)
    return label


def node_title(c: Concept) -> str:
    """The tooltip (vis shows it as text): full names, kind and the questions answered."""
    lines = [c.names.en or c.id]
    if c.names.zh and c.names.zh != c.names.en:
        lines.append(c.names.zh)
    qs = answered(c)
    lines.append(f"{c.kind} \u00b7 answers: {', '.join(qs) if qs else 'none of the six'}")
    return "\n".join(lines)


def tint(colour: str, keep: float = 0.16) -> str:
    """A light background for a kind colour: the colour mixed with white."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - v) * keep) for v in (r, g, b)]
    return "#" + "".join(f"{v:02x}" for v in mix)


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
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AtlasError(f"cannot read vis-network from the pyvis package: {exc}",
                         Location(str(path)), hint="reinstall pyvis 0.3.2") from exc


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


@lru_cache(maxsize=1)
def _env() -> Environment:
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _page(template: str, title: str, data: dict, script: str, lang: str = "en",
          vis: bool = False, **extra) -> str:
    """One page through `template`. `vis=True` loads the shared vis-network file, allowed by
    `'self'` in the CSP (Chromium matches 'self' for a file:// page's own directory files);
    our own script is inline and allowed by its hash."""
    ours = _asset("common.js") + "\n" + _asset(script)
    csp = ("default-src 'none'; script-src " + ("'self' " if vis else "") + _sha256(ours) +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return _env().get_template(template).render(
        title=title, lang=lang, csp=Markup(csp), style=Markup(_asset("style.css")),
        vis_src=VIS_FILE if vis else "", script=Markup(ours), data=Markup(script_json(data)),
        **extra)


# ---------------------------------------------------------------------------------------------
# networks (pyvis fills the options and the node and edge records vis-network reads)
# ---------------------------------------------------------------------------------------------


def _network(**kwargs):
    from pyvis.network import Network

    return Network(height="100%", width="100%", directed=True, cdn_resources="remote", **kwargs)


FONT = "system-ui, -apple-system, Segoe UI, Noto Sans, Noto Sans CJK SC, sans-serif"
NODE_W = 108  # explorer box text width (canvas px at scale 1)
NODE_FONT = 14  # canvas px; the page never sets a scale below 12 / NODE_FONT


def explorer_options() -> dict:
    groups = {}
    for kind in KINDS:
        colour = KIND_STYLE[kind][0]
        groups[kind] = {"color": {"background": tint(colour), "border": colour,
                                  "highlight": {"background": "#fefcbf", "border": "#1a202c"},
                                  "hover": {"background": "#fefcbf", "border": colour}}}
    return {
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 1},
        "interaction": {"hover": True, "tooltipDelay": 200, "multiselect": False,
                        "navigationButtons": False, "zoomView": True, "dragNodes": False,
                        "keyboard": {"enabled": True, "bindToWindow": False}},
        "nodes": {"shape": "box", "margin": 6, "borderWidth": 2, "borderWidthSelected": 4,
                  "widthConstraint": {"minimum": NODE_W, "maximum": NODE_W},
                  "font": {"size": NODE_FONT, "face": FONT, "color": "#1a202c", "multi": False}},
        "edges": {"smooth": False, "arrows": {"to": {"enabled": True, "scaleFactor": 0.6}},
                  "font": {"size": 13, "face": FONT, "align": "horizontal", "color": "#1a202c",
                           "strokeWidth": 4, "strokeColor": "#ffffff"},
                  "width": 1.5, "selectionWidth": 1.5, "hoverWidth": 1.5},
        "groups": groups,
    }


def build_explorer_network(atlas: Atlas):
    """One node record per concept (the page adds only the visible ones to the drawing)."""
    net = _network()
    lane_ix = {k: i for i, k in enumerate(lanes())}
    nodes = []
    for c in sorted(atlas.concepts, key=lambda c: c.id):
        node = {"id": c.id, "label": node_label(c), "title": node_title(c), "group": c.kind,
                "lane": lane_ix[lane_key(c)]}
        if c.kind not in KIND_STYLE:
            node["color"] = {"background": tint(OTHER_KIND[0]), "border": OTHER_KIND[0]}
        if c.lifecycle.status in ("deprecated", "pending-deprecation"):
            node["shapeProperties"] = {"borderDashes": [5, 4]}
        nodes.append(node)
    net.nodes = nodes
    net.edges = []  # relations travel compactly in the page data (see explorer_data)
    net.options = explorer_options()
    return net


FLOW_W = 260  # flow step box width (canvas px); the page narrows it on small screens
FLOW_FONT = 14


def build_flow_network(atlas: Atlas, flow: Flow):
    net = _network()
    levels = flow_levels(flow)
    actors = sorted({s.actor for s in flow.steps})
    colour = {a: ACTOR_PALETTE[i % len(ACTOR_PALETTE)] for i, a in enumerate(actors)}
    nodes = []
    for s in flow.ordered_steps():
        en = s.label.en or s.id
        zh = s.label.zh if s.label.zh and s.label.zh != en else ""
        nodes.append({"id": s.id, "labels": {"en": en, "zh": zh or en,
                                             "both": en + ("\n" + zh if zh else "")},
                      "label": en + ("\n" + zh if zh else ""), "level": levels[s.id],
                      "title": f"{en}\n{zh}\nactor: {s.actor}" if zh else f"{en}\nactor: {s.actor}",
                      "color": {"background": colour[s.actor], "border": "#4a5568",
                                "highlight": {"background": "#fefcbf", "border": "#1a202c"},
                                "hover": {"background": colour[s.actor], "border": "#1a202c"}}})
    ids = set(levels)
    edges = []
    for i, e in enumerate(flow.edges):
        if e.source not in ids or e.target not in ids:
            continue
        edge = {"id": f"f{i}", "from": e.source, "to": e.target, "label": e.label or e.type,
                "arrows": "to"}
        edge.update(json.loads(json.dumps(FLOW_EDGE_STYLE.get(e.type, FLOW_EDGE_STYLE["order"]))))
        edges.append(edge)
    net.nodes = nodes
    net.edges = edges
    net.options = {
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 1},
        "interaction": {"hover": True, "dragNodes": False, "zoomView": False,
                        "dragView": True, "keyboard": {"enabled": False}},
        "nodes": {"shape": "box", "margin": 10, "borderWidth": 1, "borderWidthSelected": 3,
                  "widthConstraint": {"minimum": FLOW_W, "maximum": FLOW_W},
                  "font": {"size": FLOW_FONT, "face": FONT, "color": "#1a202c", "multi": False}},
        "edges": {"smooth": False, "font": {"size": 12, "face": FONT, "align": "middle",
                                            "color": "#1a202c", "strokeWidth": 4,
                                            "strokeColor": "#ffffff"},
                  "arrows": {"to": {"enabled": True, "scaleFactor": 0.7}}},
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


def _first(atlas: Atlas, c: Concept) -> dict | None:
    first = atlas.first_visible(c.id)
    if first is None:
        return None
    href = ""
    if first.sha:
        repo = atlas.repo_by_id.get(first.repo)
        base = safe_url(repo.urls[0]).rstrip("/") if repo and repo.urls else ""
        base = base or f"https://github.com/{first.repo}"
        href = f"{base}/commit/{first.sha}"
    return {"date": first.date, "repo": first.repo, "sha": first.sha, "href": href,
            "precision": first.precision, "method": first.method, "value": first.value}


def _lane_data(atlas: Atlas) -> list[dict]:
    qnames = {q["id"]: q["names"] for q in _question_data(atlas)}
    out = []
    for key in lanes():
        out.append({"key": key, "names": {"en": key or "answers none",
                                          "zh": qnames[key]["zh"] if key else "不回答六问"},
                    "question": _t(atlas.question_by_id[key].names)
                    if key in atlas.question_by_id else {"en": "", "zh": ""}})
    return out


def seed_focus(atlas: Atlas) -> list[str]:
    """The concepts the explorer opens on: the seed's six terms that the atlas holds, else the
    six concepts with the most relations."""
    focus = [cid for cid in SEED_FOCUS if cid in atlas.concept_by_id]
    if focus:
        return focus
    degree: dict[str, int] = {c.id: 0 for c in atlas.concepts}
    for r in atlas.relations():
        if r.source in degree and r.target in degree:
            degree[r.source] += 1
            degree[r.target] += 1
    return sorted(sorted(degree), key=lambda cid: -degree[cid])[:6]


def explorer_data(atlas: Atlas, net, as_of: str) -> dict:
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
            "first": _first(atlas, c), "repos": _concept_repos(atlas, c),
            "flows": flows_by_concept.get(c.id, []), "keys": keys,
        })
    index = {c["id"]: i for i, c in enumerate(concepts)}
    rel_types = sorted({r.type for r in atlas.relations()})
    type_ix = {t: i for i, t in enumerate(rel_types)}
    rels = sorted({(index[r.source], index[r.target], type_ix[r.type]) for r in atlas.relations()
                   if r.source in index and r.target in index and r.source != r.target})
    repos = sorted({r for c in concepts for r in c["repos"]})
    return {
        "meta": {"asOf": as_of, "cutoff": atlas.cutoff, "focus": seed_focus(atlas),
                 "minFont": 12, "nodeW": NODE_W},
        "questions": _question_data(atlas),
        "lanes": _lane_data(atlas),
        "kinds": [{"id": k, "color": KIND_STYLE[k][0], "glyph": KIND_STYLE[k][2],
                   "count": sum(1 for c in concepts if c["kind"] == k)} for k in KINDS],
        "lifecycles": list(LIFECYCLES),
        "repos": repos,
        "relTypes": [{"type": t, "color": RELATION_COLOURS.get(t, "#4a5568"),
                      "symmetric": t in SYMMETRIC} for t in rel_types],
        "rels": [list(r) for r in rels],
        "concepts": concepts, "claims": claim_data,
        "flows": [{"id": f.id, "file": _flow_file(f), "title": _t(f.title),
                   "summary": _t(f.summary), "steps": len(f.steps)}
                  for f in sorted(atlas.flows, key=lambda f: f.id)],
        "nodes": net.nodes, "options": net.options,
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
        "meta": {"minFont": 12, "boxW": FLOW_W},
        "actors": [{"name": a, "color": c} for a, c in colours.items()],
        "edgeTypes": [{"type": t, "color": FLOW_EDGE_STYLE[t]["color"]["color"],
                       "dashes": FLOW_EDGE_STYLE[t]["dashes"]} for t in EDGE_TYPES],
        "steps": steps, "nodes": net.nodes, "edges": net.edges, "options": net.options,
    }


# ---------------------------------------------------------------------------------------------
# the site
# ---------------------------------------------------------------------------------------------


def explorer_page(atlas: Atlas, out: Path, as_of: str) -> tuple[Path, str]:
    net = build_explorer_network(atlas)
    return out / EXPLORER, _page("explorer.html", "Relation explorer \u00b7 Ascend communication atlas",
                                 explorer_data(atlas, net, as_of), "map.js", vis=True,
                                 current="explorer")


def flow_pages(atlas: Atlas, out: Path) -> list[tuple[Path, str]]:
    pages = []
    for flow in sorted(atlas.flows, key=lambda f: f.id):
        fnet, colours = build_flow_network(atlas, flow)
        title = flow.title.en or flow.id
        pages.append((out / _flow_file(flow), _page(
            "flow.html", title, flow_data(atlas, flow, fnet, colours), "flow.js", vis=True,
            current="flow")))
    return pages


def build_site(atlas: Atlas, out_dir, as_of: str | None = None, force: bool = False) -> list[Path]:
    """Write the site into out_dir and return the pages written: index.html (the overview),
    timeline.html, concepts/<id>.html for every concept, explorer.html, then flow-<id>.html for
    every flow (by id). Also writes the shared vis-network.min.js and the manifest atlas-map.json.

    `as_of` (YYYY-MM-DD) is the initial value of the pages' date control: concepts first visible
    after it start greyed out. Default: the atlas cut-off. The map replaces and removes only the
    files its manifest lists (see `owned`); a non-empty folder without a manifest is refused unless
    `force` is given, and a file the map did not write is never replaced, even with `force`."""
    if as_of is not None and not DATE_RE.match(as_of):
        raise AtlasError(f"--as-of must be a date YYYY-MM-DD, not {as_of!r}", "--as-of")
    as_of = as_of or atlas.cutoff
    out = Path(out_dir)
    from .owned import check_folder, write_site
    from .pages import reading_pages  # the overview, the timeline and the concept pages

    check_folder(out, force)  # a folder that is not the map's is refused before any page is made
    pages: list[tuple[Path, str]] = reading_pages(atlas, out, as_of)
    pages += [explorer_page(atlas, out, as_of)] + flow_pages(atlas, out)
    files = {p.relative_to(out).as_posix(): html.encode("utf-8") for p, html in pages}
    files[VIS_FILE] = vis_js().encode("utf-8")
    write_site(out, files, force=force)
    return [p for p, _ in pages]
