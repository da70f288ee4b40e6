"""What every page of the site shares: file names, the templates and assets, safe JSON inside a
page, the text helpers every template uses (both languages, inline code, vocabulary names, links
to evidence) and the two page frames (document pages, which read completely without script, and
the graph pages, which carry their data as one JSON block and may load the shared vis-network
file).

Every page carries a Content-Security-Policy with `default-src 'none'` and its one inline script
allowed by hash, so nothing is fetched from anywhere. Every page has the same language switch
(English, 中文 or both): radio buttons that rule the page through CSS alone, and a small script
(`lang.js`, part of every page's script) that remembers the choice across pages.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from ..errors import AtlasError
from ..model.core import ID_RE, REPO_RE, utc_day
from ..view.views import label

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
VIS_FILE = "vis-network.min.js"  # the one shared copy, next to the pages
OVERVIEW = "index.html"  # the compact general map
TABLE = "table.html"  # the full table, every answer written out (find, print)
MAP = "map.html"  # the two-axis picture: question lanes across, first visible year down
EXPLORER = "explorer.html"
TIMELINE = "timeline.html"
FLOWS = "flows.html"
REPOS = "repos.html"
SEED = "seed.html"
CONCEPTS = "concepts"
REPO_DIR = "repos"
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
        self.built: list[tuple[Path, str]] = []  # (path, html) of the source pages and workspaces
        self.api: dict[str, str] = {}  # repository -> its API page, when the build writes one

    def api_href(self, repo: str, name: str, root: str) -> str:
        """The row of an API symbol on its repository's API page ("" when the build has no such page)."""
        page = self.api.get(repo)
        return f"{root}{page}#q={quote(name, safe='')}" if page else ""

    def href(self, ev: Any, root: str) -> str:
        """The local page of an evidence view's pinned lines ("" when its file has none)."""
        pin = ev.get("pin") if isinstance(ev, dict) else None
        page = self.pages.get(f"{pin['repo']}@{pin['sha']}:{pin['path']}") if pin else None
        return f"{root}{page}#L{pin['start']}" if page and pin else ""

    def note(self, evidence: list) -> dict[str, str]:
        """What a page says, in both languages, when some of its pins point into repositories
        without a clone ({} when none do)."""
        repos = sorted({ev["pin"]["repo"] for ev in evidence if ev.get("pin")} & set(self.absent))
        if not repos:
            return {}
        flags = " ".join(f"--repo {r}" for r in repos)
        names = ", ".join(f"`{r}`" for r in repos)
        return {"en": f"The source behind the pins into {names} is not in this site: no local clone. "
                      f"`atlas refresh --clone {flags}` and then `atlas map` bring it in, with every line, call "
                      "and caller; until then those pins link upstream.",
                "zh": f"指向 {names} 的源码不在本站点中：没有本地克隆。运行 `atlas refresh --clone {flags}` 再运行 "
                      "`atlas map` 即可带入每一行、每个调用与调用者；在此之前这些位置链接到上游。"}


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


def repo_file(rid: str) -> str:
    """The page of a repository (`owner/name`), relative to the site root: repos/<owner>/<name>.html."""
    if not REPO_RE.match(rid):
        raise AtlasError(f"repository id {rid!r} cannot name a page", "repositories",
                         hint="repository ids are owner/name")
    return f"{REPO_DIR}/{rid}.html"


def script_json(obj) -> str:
    """JSON safe inside <script>: sorted, compact, with <, >, &, U+2028 and U+2029 escaped."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------

CODE_RE = re.compile(r"`([^`\n]+)`")


def md(text: str) -> Markup:
    """The Markdown the data uses, as HTML: inline code spans (`x`); everything escaped. An
    unpaired backtick stays a backtick. assets/common.js `md` does the same in the pages' scripts."""
    out, at = [], 0
    for m in CODE_RE.finditer(text):
        out.append(str(escape(text[at:m.start()])))
        out.append("<code>" + str(escape(m.group(1))) + "</code>")
        at = m.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def _lang_span(lang: str, text: str, mono: bool) -> str:
    cls = lang + (" mono" if mono else "")
    return f'<span class="{cls}" lang="{lang}">' + str(md(text)) + "</span>"


def bi(t: dict | None, tag: str = "span", cls: str = "") -> Markup:
    """Both languages of a {en, zh} text, each in its own element (`.en`, `.zh`), code spans
    rendered and everything escaped; "" when empty. A text the data holds in one language only is
    marked `mono`: it shows whatever language is chosen.

    A template global rather than a macro: it runs for every cell, and a Python function is
    many times faster than a Jinja macro call. `tag` and `cls` come from our templates only."""
    if not t or not (t.get("en") or t.get("zh")):
        return Markup("")
    en, zh = t.get("en") or "", t.get("zh") or ""
    mono = not (en and zh)
    parts = [_lang_span(lang, s, mono) for lang, s in (("en", en), ("zh", zh)) if s]
    attr = ' class="' + str(escape(cls)) + '"' if cls else ""
    return Markup(f"<{tag}{attr}>{''.join(parts)}</{tag}>")


def tr(en: str, zh: str) -> Markup:
    """A string of the site itself in both languages (only our templates call it)."""
    return Markup(f'<span class="en" lang="en">{escape(en)}</span><span class="zh" lang="zh">{escape(zh)}</span>')


def cell(en: str, zh: str) -> Markup:
    """A table cell's column name in both languages, as attributes: a phone shows it before the
    cell's value when the table reflows into stacked rows (`table.stack`, pages.css)."""
    return Markup(f' data-en="{escape(en)}" data-zh="{escape(zh)}"')


def term(vocabulary: str, value: str) -> Markup:
    """A vocabulary value (a kind, a lifecycle, a precision ...) by its name in both languages."""
    t = label(vocabulary, value)
    return tr(t["en"], t["zh"])


def ev_href(ev: dict, root: str = "") -> str:
    """Where an evidence item links: a seed citation to its summary on the seed page, else its URL."""
    if ev.get("seed_page"):
        return f"{root}{SEED}#page-{ev['seed_page']}"
    return ev.get("url") or ""


def ev_text(ev: dict) -> str:
    """The visible text of an evidence link: the pin or URL as written, the seed page by number."""
    if ev.get("seed_page"):
        return f"seed #page-{ev['seed_page']}"
    return ev.get("source") or ev.get("url") or ""


@lru_cache(maxsize=1)
def env() -> Environment:
    e = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    e.globals.update(bi=bi, tr=tr, cell=cell, term=term, md=md, ev_href=ev_href, ev_text=ev_text, repo_file=repo_file,
                     concept_file=concept_file, flow_file=flow_file)
    e.filters["day"] = utc_day  # a timestamp shown to people: its UTC day
    return e


def _scripts(*names: str) -> str:
    """Our inline script: the language switch, then the page's own assets."""
    return "\n".join(asset(n) for n in ("lang.js", *names) if n)


def document_page(template: str, title: str, root: str, current: str, script: str = "",
                  **context) -> str:
    """A page that reads as a document, through `template` (which extends base.html). `root`
    leads back to the site's top folder ("" or "../"); `script` names an asset run inline after
    the language switch, allowed by its hash."""
    code = _scripts(script)
    csp = ("default-src 'none'; script-src " + csp_hash(code) +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return env().get_template(template).render(
        title=title, lang="en", csp=Markup(csp), style=Markup(asset("pages.css")),
        script=Markup(code), data=context.pop("data", ""), vis="", root=root, current=current,
        site=SITE_TITLE, **context)


def graph_page(template: str, title: str, data: dict, script: str, lang: str = "en",
               vis: bool = False, root: str = "", **extra) -> str:
    """A graph page through `template`, its data one JSON block. `vis=True` loads the shared
    vis-network file, allowed by `'self'` in the CSP (Chromium matches 'self' for a file:// page's
    own directory files); our own script is inline and allowed by its hash."""
    ours = _scripts("common.js", script)
    csp = ("default-src 'none'; script-src " + ("'self' " if vis else "") + csp_hash(ours) +
           "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
    return env().get_template(template).render(
        title=title, lang=lang, csp=Markup(csp), style=Markup(asset("style.css")),
        vis_src=VIS_FILE if vis else "", script=Markup(ours), data=Markup(script_json(data)),
        root=root, site=SITE_TITLE, **extra)
