"""The site: `build_site` writes every page (the document pages, flows included, come from
`pages`), and this module builds the graph page itself: the relation explorer.

The pages work from file:// without any network. The vis-network script that ships inside the
installed pyvis wheel is written once next to the pages (`vis-network.min.js`, never copied into
the repository) and loaded by the graph pages with `<script src>`; a Content-Security-Policy with
`default-src 'none'` allows only that same-directory script (`'self'`) and our own inline script
by its hash, and forbids every fetch. All data goes into the page as one JSON block with <, >, &
and U+2028/U+2029 escaped; the page scripts set text with textContent only.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import AtlasError, Location
from ..model.core import KINDS, LIFECYCLES, SYMMETRIC, Atlas, utc_day
from ..text import norm
from ..view.views import LABELS, AtlasViews, Card, answered, everything
from .common import EXPLORER, VIS_FILE, SourceLinks, SourceTables, flow_file, graph_page
from .layout import lane_key, lanes, marks
from .overview import search_keys

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

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


PAREN_RE = re.compile(r"\s*[(\uff08].*$", re.S)


# ---------------------------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------------------------


def short_name(name: str) -> str:
    """A node's name without its parenthesised expansion ("HCCL (Huawei ...)" -> "HCCL"), never cut:
    the page wraps it between words inside the box."""
    return PAREN_RE.sub("", name).strip() or name.strip()


def node_labels(c: Card) -> dict[str, str]:
    """A node's label in each language choice of the page (en, zh, both): its short names and a
    mark naming the other questions it answers."""
    en = short_name(c["names"]["en"] or c["id"])
    zh = short_name(c["names"]["zh"]) if c["names"]["zh"] else ""
    zh = zh if zh != en else ""
    others = marks(c)
    mark = "\n+ " + ", ".join(others) if others else ""
    return {"en": en + mark, "zh": (zh or en) + mark, "both": en + ("\n" + zh if zh else "") + mark}


def node_title(c: Card) -> str:
    """The tooltip (vis shows it as text): full names, kind and the questions answered."""
    lines = [c["names"]["en"] or c["id"]]
    if c["names"]["zh"] and c["names"]["zh"] != c["names"]["en"]:
        lines.append(c["names"]["zh"])
    qs = answered(c["answers"])
    lines.append(f"{c['kind']} \u00b7 answers: {', '.join(qs) if qs else 'none of the six'}")
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


# ---------------------------------------------------------------------------------------------
# networks (pyvis fills the options and the node and edge records vis-network reads)
# ---------------------------------------------------------------------------------------------


def _network(**kwargs):
    from pyvis.network import Network

    return Network(height="100%", width="100%", directed=True, cdn_resources="remote", **kwargs)


FONT = "system-ui, -apple-system, Segoe UI, Noto Sans, Noto Sans CJK SC, sans-serif"
NODE_W = 108  # explorer box text width (canvas px at scale 1)
NODE_FONT = 14  # canvas px; the page never sets a scale below 12 / NODE_FONT
EDGE_FONT = 14  # canvas px: an edge label is 12 CSS px or more at every scale the page sets


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
                  "font": {"size": EDGE_FONT, "face": FONT, "align": "horizontal", "color": "#1a202c",
                           "strokeWidth": 4, "strokeColor": "#ffffff"},
                  "width": 1.5, "selectionWidth": 1.5, "hoverWidth": 1.5},
        "groups": groups,
    }


def build_explorer_network(cards: list[Card]):
    """One node record per concept (the page adds only the visible ones to the drawing)."""
    net = _network()
    lane_ix = {k: i for i, k in enumerate(lanes())}
    nodes = []
    for c in cards:
        labels = node_labels(c)
        node = {"id": c["id"], "label": labels["both"], "labels": labels, "title": node_title(c),
                "group": c["kind"], "lane": lane_ix[lane_key(c)]}
        if c["kind"] not in KIND_STYLE:
            node["color"] = {"background": tint(OTHER_KIND[0]), "border": OTHER_KIND[0]}
        if c["lifecycle"]["status"] in ("deprecated", "pending-deprecation"):
            node["shapeProperties"] = {"borderDashes": [5, 4]}
        nodes.append(node)
    net.nodes = nodes
    net.edges = []  # relations travel compactly in the page data (see explorer_data)
    net.options = explorer_options()
    return net


# ---------------------------------------------------------------------------------------------
# page data: the views, with what only the drawing needs
# ---------------------------------------------------------------------------------------------


def _lane_data(v: AtlasViews) -> list[dict]:
    qnames = {q["id"]: q["names"] for q in v["questions"]}
    return [{"key": key, "names": {"en": key or "answers none", "zh": qnames[key]["zh"] if key else "不回答六问"},
             "question": qnames.get(key, {"en": "", "zh": ""})} for key in lanes()]


def seed_focus(cards: list[Card]) -> list[str]:
    """The concepts the explorer opens on: the seed's six terms that the atlas holds, else the
    six concepts with the most relations."""
    known = {c["id"] for c in cards}
    focus = [cid for cid in SEED_FOCUS if cid in known]
    if focus:
        return focus
    degree = {c["id"]: sum(1 for g in c["relations"] for x in g["concepts"] if x["id"] in known) for c in cards}
    return sorted(sorted(degree), key=lambda cid: -degree[cid])[:6]


def _edges(cards: list[Card]) -> tuple[list[str], list[list[int]]]:
    """The relation types and the relations as compact (source index, target index, type index)."""
    index = {c["id"]: i for i, c in enumerate(cards)}
    outgoing = [(c["id"], g["type"], x["id"]) for c in cards for g in c["relations"] for x in g["concepts"]
                if x["direction"] == "out" and x["id"] != c["id"]]
    types = sorted({t for _s, t, _t in outgoing})
    type_ix = {t: i for i, t in enumerate(types)}
    rels = sorted({(index[s], index[t], type_ix[r]) for s, r, t in outgoing if t in index})
    return types, [list(r) for r in rels]


# What the explorer's card never shows: the sightings (it shows the first), the names of the concepts
# a card refers to (the page has every concept's names), where the card is defined, why it is undated
DROPPED = ("history", "labels", "defined_at", "undated")


def _has_text(t: Any) -> bool:
    return bool(t["en"] or t["zh"])


def explorer_card(c: Card) -> dict:
    """A card as the explorer carries it: the CLI's keys, without what the page never shows, and its
    relations without the other concept's name (the page looks it up) and without empty notes. The
    page data of 10,000 concepts shrinks by a third."""
    out = {k: v for k, v in c.items() if k not in DROPPED}
    out["relations"] = [{"relation": g["relation"], "type": g["type"], "concepts": [
        {k: v for k, v in x.items() if k != "name" and not (k == "note" and not _has_text(v))}
        for x in g["concepts"]]} for g in c["relations"]]
    return out


def name_keys(c: Card) -> list[str]:
    """The folded names that rank first in the explorer's search: id, names and short names."""
    names = [c["id"], c["names"]["en"], c["names"]["zh"], short_name(c["names"]["en"] or c["id"]),
             short_name(c["names"]["zh"]) if c["names"]["zh"] else ""]
    return sorted({norm(n) for n in names if n and norm(n)})


def explorer_data(v: AtlasViews, net, as_of: str) -> dict:
    cards = v["cards"]
    rel_types, rels = _edges(cards)
    first_days = {c["id"]: utc_day(c["first_visible"]["date"]) for c in cards if c["first_visible"]}
    return {
        "meta": {"asOf": as_of, "cutoff": v["cutoff"], "focus": seed_focus(cards), "minFont": 12, "nodeW": NODE_W},
        "questions": v["questions"], "lanes": _lane_data(v),
        "kinds": [{"id": k, "color": KIND_STYLE[k][0], "glyph": KIND_STYLE[k][2],
                   "count": sum(1 for c in cards if c["kind"] == k)} for k in KINDS],
        "lifecycles": list(LIFECYCLES),
        "repos": sorted({r["id"] for c in cards for r in c["repositories"]}),
        "relTypes": [{"type": t, "color": RELATION_COLOURS.get(t, "#4a5568"), "symmetric": t in SYMMETRIC}
                     for t in rel_types],
        "rels": rels, "concepts": [explorer_card(c) for c in cards], "claims": v["claims"],
        "days": first_days, "keys": {c["id"]: search_keys(c) for c in cards},
        "nameKeys": {c["id"]: name_keys(c) for c in cards}, "vocab": LABELS,
        "flows": [{"id": f["id"], "file": flow_file(f["id"]), "title": f["title"], "summary": f["summary"],
                   "steps": len(f["steps"])} for f in v["flows"]],
        "nodes": net.nodes, "options": net.options,
    }


# ---------------------------------------------------------------------------------------------
# the site
# ---------------------------------------------------------------------------------------------


def explorer_page(v: AtlasViews, out: Path, as_of: str, links: SourceLinks | None = None) -> tuple[Path, str]:
    net = build_explorer_network(v["cards"])
    data = dict(explorer_data(v, net, as_of), sources=(links or SourceLinks()).pages)
    return out / EXPLORER, graph_page("explorer.html", "Relation explorer \u00b7 Ascend communication atlas",
                                      data, "map.js", vis=True, current="explorer")


def source_links(v: AtlasViews, out: Path, code: SourceTables | None) -> SourceLinks:
    """The source pages and code workspaces of a build from local clones (`links.built`), and
    what the other pages link to: nothing without `code`."""
    links = SourceLinks()
    if code is None:
        return links
    if code.code is not None:
        from .source import source_pages
        from .workspace import workspace_file, workspace_pages

        links.built, links.pages = source_pages(v, out, code.pins, code.code)
        spaces = workspace_pages(v, out, code.pins, code.code, links.pages)
        links.built += list(spaces.values())
        links.workspaces = {fid: workspace_file(fid) for fid in spaces}
    links.absent = code.absent
    return links


def build_site(atlas: Atlas, out_dir, as_of: str | None = None, force: bool = False,
               code: "SourceTables | None" = None, api: list | None = None,
               published: tuple[str, Any] | None = None) -> list[Path]:
    """Write the site into out_dir and return the pages written: index.html (the overview),
    table.html, map.html, timeline.html, flows.html, repos.html, seed.html, flow-<id>.html for every
    flow, concepts/<id>.html for every concept, repos/<owner>/<name>.html for every repository,
    api/index.html and api/<owner>+<name>.html for every `ApiPage` view in `api`, then explorer.html;
    with `code` (the tables of `atlas.code.lookup`, when clones are found) also the source pages
    source/<repo>/<sha>/<path>.html and the code workspaces code-<flow>.html. Also writes the shared
    vis-network.min.js and the manifest atlas-map.json.

    Every page shows the view layer's views of the atlas (`atlas.view.views.everything`). `as_of`
    (YYYY-MM-DD) is the initial value of the pages' date control: concepts first visible after it
    start greyed out. Default: the atlas cut-off. The map replaces and removes only the files its
    manifest lists (see `owned`); a non-empty folder without a manifest is refused unless `force`
    is given, and a file the map did not write is never replaced, even with `force`."""
    if as_of is not None and not DATE_RE.match(as_of):
        raise AtlasError(f"--as-of must be a date YYYY-MM-DD, not {as_of!r}", "--as-of")
    as_of = as_of or atlas.cutoff
    out = Path(out_dir)
    from .owned import check_folder, write_site
    from .pages import reading_pages  # the overview, the timeline and the concept pages

    check_folder(out, force)  # a folder that is not the map's is refused before any page is made
    v = everything(atlas)
    links = source_links(v, out, code)
    from .apipage import api_pages, page_file

    links.api = {p["summary"]["repo"]: page_file(p["summary"]["repo"]) for p in api or []}
    pages: list[tuple[Path, str]] = reading_pages(v, out, as_of, links)
    names = {c["id"]: {"en": c["names"]["en"], "zh": c["names"]["zh"]} for c in v["cards"]}
    pages += api_pages(api or [], out, links.pages, names)
    pages.append(explorer_page(v, out, as_of, links))
    pages += links.built
    files = {p.relative_to(out).as_posix(): html.encode("utf-8") for p, html in pages}
    files[VIS_FILE] = vis_js().encode("utf-8")
    if published is not None:  # (base IRI, the export under it): record pages with their IRI and Turtle
        from .publish import published_files

        files = published_files(atlas, published[1], published[0], files)
    write_site(out, files, force=force)
    return [p for p, _ in pages]
