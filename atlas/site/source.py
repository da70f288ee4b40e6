"""Source pages: `source/<owner>/<name>/<sha>/<path>.html`, the code behind the pins, built only
when `atlas map` finds local clones (the site never embeds third-party source otherwise).

Which files get a page: every file a pin names (the evidence of concepts, relations, claims, test
plans, flows, flow steps and repositories), and the files that hold the definitions the pinned
lines call (calls inside the functions a pin overlaps, resolved to one definition or ambiguous
between at most `MAX_CANDIDATES`, in files of at most `MAX_CALLEE_LINES` lines: a vendored 25,000-line
header is linked upstream instead). The rest of the one-hop index (about 2,500 files) is left out:
those files are read only to link the calls, and a page each would make the site ten times larger.

A page is server-side HTML: numbered lines with `id="L<n>"` anchors, highlighted by Pygments
(CSS classes, no script), each pinned range marked and annotated in the margin with the records
that cite it (linked to their pages), each call that resolves to a file with a page linked to its
definition, and each function's first line listing its callers. It reads completely with
JavaScript off; its one script (lang.js) only remembers the language chosen on the other pages.
"""
from __future__ import annotations

import posixpath
import re
from html import escape
from pathlib import Path

from .. import progress
from ..view.views import AtlasViews
from .common import SITE_TITLE, asset, bi, concept_file, csp_hash, env, flow_file, tr
from .overview import short_names

FileKey = tuple[str, str, str]
MAX_CANDIDATES = 3
MAX_CALLEE_LINES = 5000  # a file reached only by a call gets a page up to this size (a pinned file always)
CHUNK = 100  # lines per block; blocks off screen are not laid out (content-visibility: auto)
MAX_CALLERS = 12
_SAFE = re.compile(r"[^A-Za-z0-9._+@-]")


def source_file(key: FileKey) -> str:
    """The page of a file at a commit, relative to the site root (each path segment kept when it is
    plain, else with its other characters as `_`)."""
    repo, commit, path = key
    parts = [*repo.split("/"), commit, *path.split("/")]
    safe = [_SAFE.sub("_", p) if p not in (".", "..", "") else "_" for p in parts]
    return "source/" + "/".join(safe) + ".html"


def pin_key(repo: str, commit: str, path: str) -> str:
    """How the pages' data name a pinned file: `repo@sha:path`."""
    return f"{repo}@{commit}:{path}"


# ---------------------------------------------------------------------------------------------
# which files
# ---------------------------------------------------------------------------------------------


def chosen_files(pins, code) -> list[FileKey]:
    """The pinned files the code table holds (or the clones can give), and the files that define
    what the pinned lines call."""
    pinned = sorted(pins.files)
    chosen = dict.fromkeys(pinned)
    for key in pinned:
        for a, b, _c in pins.citations(key):
            for fn in code.overlapping(key, a, b):
                for call in fn["calls"]:
                    if 0 < len(call["targets"]) <= MAX_CANDIDATES:
                        reached = ((t["repo"], t["commit"], t["path"]) for t in call["targets"])
                        chosen.update(dict.fromkeys(k for k in reached if code.lines(k) <= MAX_CALLEE_LINES))
    return list(chosen)


# ---------------------------------------------------------------------------------------------
# owners -> links
# ---------------------------------------------------------------------------------------------


OWNER_WORDS = {"concept": ("concept", "概念"), "relation": ("a relation of", "关系："),
               "claim": ("a claim on", "断言："), "plan": ("a plan on", "计划："), "step": ("step", "步骤"),
               "flow": ("flow", "流程")}


class Owners:
    """Where each kind of record is shown in the site, and its name there."""

    def __init__(self, v: AtlasViews):
        self.claim_about = {cl["id"]: (cl["about"][0] if cl["about"] else "") for cl in v["claims"]}
        self.concepts = {c["id"] for c in v["cards"]}
        self.names = {c["id"]: short_names(c) for c in v["cards"]}
        self.flows = {f["id"]: {"en": f["title"]["en"], "zh": f["title"]["zh"]} for f in v["flows"]}
        self.steps = {(f["id"], st["id"]): {"en": t["en"], "zh": t["zh"]}
                      for f in v["flows"] for st in f["steps"]
                      for t in [st["title"] if (st["title"]["en"] or st["title"]["zh"]) else st["label"]]}

    def name(self, owner: dict) -> str:
        """A record as a reader knows it: its kind and its name in both languages (a concept's short
        name, a claim's or a relation's concept, a step's or a flow's title); the label (ids) when
        the atlas has no name for it. The label stays as the element's title."""
        kind, ident = owner["kind"], owner["id"]
        word, text = OWNER_WORDS.get(kind, ("", "")), None
        if kind == "concept":
            text = self.names.get(ident)
        elif kind == "relation":
            text = self.names.get(ident.split(" ", 1)[0])
        elif kind in ("claim", "plan"):
            text = self.names.get(self.claim_about.get(ident, ""))
        elif kind == "step":
            text = self.steps.get((owner.get("flow", ""), ident))
        elif kind == "flow":
            text = self.flows.get(ident)
        if not text or not (text["en"] or text["zh"]):
            return f'<span translate="no">{escape(owner["label"])}</span>'
        return f'<span class="okind">{tr(*word)}</span> {bi(dict(text))}' if word[0] else str(bi(dict(text)))

    def href(self, owner: dict, root: str) -> str:
        kind, ident = owner["kind"], owner["id"]
        if kind == "concept" and ident in self.concepts:
            return root + concept_file(ident)
        if kind == "relation":
            source = ident.split(" ", 1)[0]
            return root + concept_file(source) if source in self.concepts else ""
        if kind in ("claim", "plan"):
            about = self.claim_about.get(ident, "")
            return root + concept_file(about) + "#claims" if about in self.concepts else ""
        if kind == "step":
            return root + flow_file(owner["flow"]) + "#step=" + ident
        if kind == "flow":
            return root + flow_file(ident)
        return ""


# ---------------------------------------------------------------------------------------------
# highlighting
# ---------------------------------------------------------------------------------------------


def _lexer(language: str, path: str):
    from pygments.lexers import CLexer, CppLexer, PythonLexer, TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    known = {"c": CLexer, "cpp": CppLexer, "python": PythonLexer}
    if language in known:
        return known[language](stripnl=False, ensurenl=False)
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _css_class(ttype) -> str:
    from pygments.token import STANDARD_TYPES

    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    return STANDARD_TYPES.get(ttype, "")


def token_lines(text: str, language: str, path: str) -> list[list[tuple[str, str]]]:
    """The file as lines of (css class, text) tokens."""
    lines: list[list[tuple[str, str]]] = [[]]
    for ttype, value in _lexer(language, path).get_tokens(text):
        cls = _css_class(ttype)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append((cls, part))
    return lines


def style_css() -> str:
    """Pygments' classes for the code (its default style), under `.src`."""
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs(".src")


# ---------------------------------------------------------------------------------------------
# one page
# ---------------------------------------------------------------------------------------------


class Page:
    """What one file's page shows, gathered before the lines are written."""

    def __init__(self, key: FileKey, lines: list[str], pins, code, owners: Owners, pages: dict[FileKey, str]):
        self.key = key
        self.file = pages[key]
        self.root = "../" * self.file.count("/")
        self.lines = lines
        self.language = code.language(key)
        self.cites = pins.citations(key)
        self.functions = code.functions(key)
        self.owners = owners
        self.pages = pages
        self.calls = self._calls()

    def link(self, key: FileKey, line: int) -> str:
        target = self.pages.get(key)
        if target is None:
            return ""
        if target == self.file:
            return f"#L{line}"
        return posixpath.relpath(target, posixpath.dirname(self.file)) + f"#L{line}"

    def _calls(self) -> dict[int, list[dict]]:
        out: dict[int, list[dict]] = {}
        for fn in self.functions:
            for call in fn["calls"]:
                out.setdefault(call["line"], []).append(call)
        return out

    def call_anchor(self, call: dict) -> tuple[str, str]:
        """(href, title) of a call: its one definition, or the first of its candidates."""
        targets = call["targets"]
        if not targets:
            concepts = call["concepts"]
            if concepts and concepts[0] in self.owners.concepts:
                return self.root + concept_file(concepts[0]), f"{call['status']}: concept {concepts[0]}"
            return "", call["status"]
        t = targets[0]
        title = (f"{t['qualified']} at {t['path']}:{t['start']}" if len(targets) == 1 else
                 f"ambiguous: {call['candidates']} candidates, first {t['path']}:{t['start']}")
        return self.link((t["repo"], t["commit"], t["path"]), t["start"]), title


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8", "surrogateescape")[:byte_col].decode("utf-8", "ignore"))


def code_line_html(line: str, tokens: list[tuple[str, str]], calls: list[dict], anchor) -> str:
    """One line of code as HTML: its tokens in Pygments' classes, and each call site whose name
    token starts at the call's column wrapped in a link (`anchor(call)` -> (href, title); no
    link when href is "")."""
    at = {(_char_col(line, c["col"] - 1), c["name"]): c for c in calls}  # col: 1-based, in bytes
    out, col = [], 0
    for cls, text in tokens:
        call = at.get((col, text))
        body = escape(text, quote=False)
        html = f'<span class="{cls}">{body}</span>' if cls else body
        if call is not None:
            href, title = anchor(call)
            if href:
                html = f'<a class="call" href="{escape(href)}" title="{escape(title)}">{html}</a>'
        out.append(html)
        col += len(text)
    return "".join(out)


def _code_html(page: Page, n: int, tokens: list[tuple[str, str]]) -> str:
    return code_line_html(page.lines[n - 1], tokens, page.calls.get(n, []), page.call_anchor)


NO_CALLER = str(tr("no indexed caller", "没有已索引的调用者"))


def called_by(n: int) -> str:
    return str(tr(f"called by {n}", f"被 {n} 处调用"))


def more(n: int) -> str:
    return str(tr(f"and {n} more", f"另有 {n} 处"))


def _notes(page: Page, n: int) -> str:
    """The margin note of line n: the function that starts there with its callers, and the records
    whose pins start there. More than one citation folds into a <details> (its summary names the
    first), so a line keeps its height until the reader opens the note."""
    parts = [_caller_note(page, fn) for fn in page.functions if fn["start"] == n]
    cites, plain = [], []
    for a, b, c in page.cites:
        if a == n:
            href = page.owners.href(c["owner"], page.root)
            label, named = escape(c["owner"]["label"]), page.owners.name(c["owner"])
            name = (f'<a href="{escape(href)}" title="{label}">{named}</a>' if href
                    else f'<span title="{label}">{named}</span>')
            span = f'<span class="span" translate="no">{"L%d" % a if a == b else "L%d-L%d" % (a, b)}</span>'
            cites.append(f"{span} {name}")
            plain.append(f'{span} <span title="{label}">{named}</span>')
    if len(cites) == 1:
        parts.append(f'<p class="cite">{cites[0]}</p>')
    elif cites:  # the summary is a control: it names the first as text, the list links them all
        items = "".join(f"<li>{c}</li>" for c in cites)
        parts.append(f'<details class="cite"><summary>{plain[0]} {more(len(cites) - 1)}</summary>'
                     f"<ul>{items}</ul></details>")
    return f'<div class="m">{"".join(parts)}</div>' if parts else ""


def _caller_note(page: Page, fn: dict) -> str:
    callers = fn["callers"]
    name = escape(fn["qualified"])
    if not callers:
        return f'<p class="fn"><b translate="no">{name}</b> · {NO_CALLER}</p>'
    items = []
    for c in callers[:MAX_CALLERS]:
        href = page.link((c["repo"], c["commit"], c["path"]), c["line"])
        text = escape(f"{c['function']} ({c['path'].rsplit('/', 1)[-1]}:{c['line']})")
        items.append(f'<li translate="no"><a href="{escape(href)}">{text}</a></li>' if href
                     else f'<li translate="no">{text}</li>')
    if fn["callers_total"] > MAX_CALLERS:
        items.append(f"<li>{more(fn['callers_total'] - MAX_CALLERS)}</li>")
    return (f'<details class="fn"><summary><b translate="no">{name}</b> · {called_by(fn["callers_total"])}</summary>'
            f'<ul>{"".join(items)}</ul></details>')


def _pinned_lines(page: Page) -> set[int]:
    return {n for a, b, _c in page.cites for n in range(a, b + 1)}


def lines_html(page: Page) -> str:
    pinned = _pinned_lines(page)
    rows = []
    tokens = token_lines("\n".join(page.lines), page.language, page.key[2])
    for n, toks in enumerate(tokens[:len(page.lines)], 1):
        cls = "l p" if n in pinned else "l"
        if n % CHUNK == 1:
            rows.append(("</div>\n" if n > 1 else "") + '<div class="k">')
        rows.append(f'<div class="{cls}" id="L{n}"><a class="n" href="#L{n}">{n}</a>'
                    f'<code>{_code_html(page, n, toks)}</code>{_notes(page, n)}</div>')
    return "\n".join(rows) + ("\n</div>" if rows else "")


def source_page(page: Page, upstream: str) -> str:
    repo, commit, path = page.key
    ranges = [{"span": f"L{a}" if a == b else f"L{a}-L{b}", "href": f"#L{a}", "owner": c["owner"],
               "owner_href": page.owners.href(c["owner"], page.root), "supports": c["evidence"]["supports"]}
              for a, b, c in sorted(page.cites, key=lambda r: (r[0], r[1]))]
    from markupsafe import Markup

    lang = asset("lang.js")  # the only script: the language chosen on other pages, remembered
    return env().get_template("source.html").render(
        title=f"{path.rsplit('/', 1)[-1]} @ {commit[:12]} · {repo} · {SITE_TITLE['en']}", lang="en",
        csp=Markup(f"default-src 'none'; script-src {csp_hash(lang)}; style-src 'unsafe-inline'; img-src data:; "
                   "base-uri 'none'; form-action 'none'"),
        style=Markup(asset("pages.css") + "\n" + asset("source.css") + "\n" + style_css()),
        script=Markup(lang), data="", vis="", root=page.root, current="source", site=SITE_TITLE,
        repo=repo, commit=commit, path=path, upstream=upstream, ranges=ranges, count=len(page.lines),
        functions=page.functions, body=Markup(lines_html(page)))


def _upstream(pins, key: FileKey) -> str:
    repo, commit, path = key
    base = (pins.repos.get(repo) or f"https://github.com/{repo}").rstrip("/").removesuffix(".git")
    return f"{base}/blob/{commit}/{path}" if base.startswith(("http://", "https://")) else ""


def source_pages(v: AtlasViews, out: Path, pins, code) -> tuple[list[tuple[Path, str]], dict[str, str]]:
    """(path, html) of every source page, and `repo@sha:path` -> page (relative to the site root)
    for the evidence links."""
    from ..code.answers import read_files

    keys = chosen_files(pins, code)
    texts = read_files(code, keys)
    readable = [k for k in keys if texts[k][0] is not None]
    pages = {k: source_file(k) for k in readable}
    owners = Owners(v)
    out_pages = []
    with progress.bar("source pages", len(readable)) as step:
        for key, html in _rendered(readable, (texts, pins, code, owners, pages)):
            out_pages.append((out / pages[key], html))
            step.advance()
    return out_pages, {pin_key(*k): f for k, f in pages.items()}


_SHARED: list = []  # what a worker process renders from: the parent's tables, inherited when it forks
PARALLEL_FROM = 32  # below this many pages, rendering here is quicker than starting the workers


def _render(key: FileKey) -> str:
    texts, pins, code, owners, pages = _SHARED[0]
    return source_page(Page(key, texts[key][0] or [], pins, code, owners, pages), _upstream(pins, key))


def _rendered(keys: list[FileKey], tables: tuple):
    """(key, html) of every page, in order: in one worker process per core when there are many pages and
    the system forks (the workers inherit the tables; only the keys and the pages cross), else here."""
    import multiprocessing
    import os

    workers = os.cpu_count() or 1
    _SHARED[:] = [tables]
    try:
        if len(keys) < PARALLEL_FROM or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            for key in keys:
                yield key, _render(key)
            return
        from ..code.build import worker_pool

        with worker_pool(workers, fork=True) as pool:
            yield from zip(keys, pool.map(_render, keys, chunksize=4))
    finally:
        _SHARED.clear()

