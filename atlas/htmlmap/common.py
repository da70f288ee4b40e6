"""What every page of the site shares: file names, the templates and assets, safe JSON inside a
page, and the two page frames (document pages, whose script is optional, and the graph pages,
which carry their data as one JSON block and may load the shared vis-network file).

Every page carries a Content-Security-Policy with `default-src 'none'` and its one inline script
allowed by hash, so nothing is fetched from anywhere.
"""
from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from ..errors import AtlasError
from ..model import ID_RE, utc_day

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
VIS_FILE = "vis-network.min.js"  # the one shared copy, next to the pages
OVERVIEW = "index.html"
EXPLORER = "explorer.html"
TIMELINE = "timeline.html"
CONCEPTS = "concepts"
SITE_TITLE = {"en": "Ascend communication atlas", "zh": "昇腾通信图谱"}


class SourceTables(NamedTuple):
    """What the source pages are built from (atlas.code.lookup): the pin table, the code table
    (None without any clone) and the pinned repositories that have no local clone."""

    pins: Any
    code: Any
    absent: list[str]


class SourceLinks:
    """The source pages of a build: `repo@sha:path` -> page (relative to the site root), and the
    pinned repositories without a clone, for the note that says how to bring them in."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.absent: list[str] = []
        self.workspaces: dict[str, str] = {}  # flow id -> its code workspace page

    def href(self, ev: Any, root: str) -> str:
        """The local page of an evidence view's pinned lines ("" when its file has none)."""
        pin = ev.get("pin") if isinstance(ev, dict) else None
        page = self.pages.get(f"{pin['repo']}@{pin['sha']}:{pin['path']}") if pin else None
        return f"{root}{page}#L{pin['start']}" if page and pin else ""

    def note(self, evidence: list) -> str:
        """What a page says when some of its pins point into repositories without a clone."""
        repos = sorted({ev["pin"]["repo"] for ev in evidence if ev.get("pin")} & set(self.absent))
        if not repos:
            return ""
        flags = " ".join(f"--repo {r}" for r in repos)
        return (f"The source behind the pins into {', '.join(repos)} is not in this site: no local clone. "
                f"`atlas refresh --clone {flags}` and then `atlas map` bring it in, with every line, call and "
                "caller; until then those pins link upstream.")


def concept_file(ident: str) -> str:
    """The page of a concept, relative to the site root."""
    if not ID_RE.match(ident):
        raise AtlasError(f"concept id {ident!r} cannot name a page", "concepts",
                         hint="concept ids are lower-case kebab-case")
    return f"{CONCEPTS}/{ident}.html"


def flow_file(ident: str) -> str:
    """The page of a flow, relative to the site root."""
    if not ID_RE.match(ident):
        raise AtlasError(f"flow id {ident!r} cannot name a page", "flows",
                         hint="flow ids are lower-case kebab-case")
    return f"flow-{ident}.html"


def script_json(obj) -> str:
    """JSON safe inside <script>: sorted, compact, with <, >, &, U+2028 and U+2029 escaped."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


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
    e = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    e.globals["bi"] = bi
    e.filters["day"] = utc_day  # a timestamp shown to people: its UTC day
    return e


def document_page(template: str, title: str, root: str, current: str, script: str = "",
                  **context) -> str:
    """A page that reads as a document, through `template` (which extends base.html). `root`
    leads back to the site's top folder ("" or "../"); `script` names an asset run inline,
    allowed by its hash."""
    code = asset(script) if script else ""
    csp = ("default-src 'none'; script-src " + (csp_hash(code) if code else "'none'") +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return env().get_template(template).render(
        title=title, lang="en", csp=Markup(csp), style=Markup(asset("pages.css")),
        script=Markup(code) if code else "", data="", vis="", root=root, current=current,
        site=SITE_TITLE, **context)


def graph_page(template: str, title: str, data: dict, script: str, lang: str = "en",
               vis: bool = False, **extra) -> str:
    """A graph page through `template`, its data one JSON block. `vis=True` loads the shared
    vis-network file, allowed by `'self'` in the CSP (Chromium matches 'self' for a file:// page's
    own directory files); our own script is inline and allowed by its hash."""
    ours = asset("common.js") + "\n" + asset(script)
    csp = ("default-src 'none'; script-src " + ("'self' " if vis else "") + csp_hash(ours) +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return env().get_template(template).render(
        title=title, lang=lang, csp=Markup(csp), style=Markup(asset("style.css")),
        vis_src=VIS_FILE if vis else "", script=Markup(ours), data=Markup(script_json(data)),
        **extra)
