"""The code workspace of a flow, `code-<flow>.html`: three linked tracks, built when `atlas map`
finds the clones behind the flow's step pins.

- left, the phase DAG: the steps by level (a step's level is its longest path from the sources,
  `layout.flow_levels`), parallel steps side by side;
- middle, the selected step's function as an outline: its calls in source order (each linked to
  its callee) and its segments (the pinned ranges inside it, the step's own marked);
- right, the source of that function, highlighted on the server, the step's lines marked.

Selecting a step moves all three; a call in the middle or right track shows its callee (the
functions the steps call are embedded; a deeper call opens the callee's source page). The state
is the URL fragment (`#step=<id>` or `#step=<id>&fn=<key>`), so Back, Forward and a shared link
work. Without JavaScript the page reads in order: the DAG, then each step with its outline and
its source, then the functions they call, every link an anchor on the page.
"""
from __future__ import annotations

import hashlib
from html import escape
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..view.views import AtlasViews, FlowView
from .common import SITE_TITLE, asset, csp_hash, env, flow_file, tr
from ..model.core import EDGE_TYPES
from .layout import flow_levels, step_numbers
from .source import NO_CALLER, Owners, called_by, code_line_html, style_css, token_lines

FileKey = tuple[str, str, str]
CONTEXT = 3  # lines shown around a pin that no indexed function holds
MAX_FUNCTION = 400  # a longer function shows its pinned lines with CONTEXT lines around them


def workspace_file(flow_id: str) -> str:
    return f"code-{flow_id}.html"


def fn_id(repo: str, commit: str, path: str, start: int) -> str:
    return "fn-" + hashlib.sha256(f"{repo}\0{commit}\0{path}\0{start}".encode()).hexdigest()[:12]


def own_id(fn: dict) -> str:
    """The element id of a function of the code table (with its file `key`)."""
    repo, commit, path = fn["key"]
    return fn_id(repo, commit, path, fn["start"])


def step_pin(step: Any) -> dict | None:
    source = step["source"]
    return source.get("pin") if source else None


class Sources:
    """The files a workspace shows, read once from the clones and tokenised once."""

    def __init__(self, code, keys: list[FileKey]):
        from ..code.answers import read_files

        self.code = code
        self.text = {k: v[0] for k, v in read_files(code, keys).items() if v[0] is not None}
        self._tokens: dict[FileKey, list] = {}

    def tokens(self, key: FileKey) -> list:
        if key not in self._tokens:
            self._tokens[key] = token_lines("\n".join(self.text[key]), self.code.language(key), key[2])
        return self._tokens[key]


class Workspace:
    """One flow's workspace: which function each step shows, and the callees embedded."""

    def __init__(self, flow: FlowView, pins, code, pages: dict[FileKey, str], owners: Owners | None = None):
        self.flow = flow
        self.owners = owners  # the records' names and pages (segments link them)
        self.pins = pins
        self.code = code
        self.pages = pages  # files with a source page -> their page
        self.step_fns: dict[str, list[dict]] = {}
        for s in flow["steps"]:
            pin = step_pin(s)
            if pin:
                key = (pin["repo"], pin["sha"], pin["path"])
                self.step_fns[s["id"]] = [dict(fn, key=key) for fn in code.overlapping(key, pin["start"], pin["end"])]
        self.callees = self._callees()

    def _callees(self) -> dict[str, dict]:
        """The functions the steps' functions call (one level), by their element id."""
        shown = {own_id(fn) for fns in self.step_fns.values() for fn in fns}
        out: dict[str, dict] = {}
        for fns in self.step_fns.values():
            for fn in fns:
                for call in fn["calls"]:
                    for t in call["targets"][:3]:
                        ident = fn_id(t["repo"], t["commit"], t["path"], t["start"])
                        if ident in shown or ident in out:
                            continue
                        found = self._function(t)
                        if found is not None:
                            out[ident] = found
        return out

    def _function(self, t: dict) -> dict | None:
        key = (t["repo"], t["commit"], t["path"])
        for fn in self.code.functions(key):
            if fn["start"] == t["start"] and fn["name"] == t["name"]:
                return dict(fn, key=key)
        return None

    def files(self) -> list[FileKey]:
        keys = [fn["key"] for fns in self.step_fns.values() for fn in fns] + [f["key"] for f in self.callees.values()]
        keys += [(p["repo"], p["sha"], p["path"]) for s in self.flow["steps"] if (p := step_pin(s))]
        return list(dict.fromkeys(keys))

    def href(self, t: dict, root: str = "") -> tuple[str, str]:
        """Where a call target opens: its embedded function, else its source page, else nowhere."""
        ident = fn_id(t["repo"], t["commit"], t["path"], t["start"])
        if ident in self.callees or any(own_id(f) == ident for fns in self.step_fns.values() for f in fns):
            return "#" + ident, f"{t['qualified']} ({t['path']}:{t['start']})"
        page = self.pages.get((t["repo"], t["commit"], t["path"]))
        title = f"{t['qualified']} ({t['path']}:{t['start']}), source page"
        return (f"{root}{page}#L{t['start']}" if page else ""), title


# ---------------------------------------------------------------------------------------------
# HTML pieces
# ---------------------------------------------------------------------------------------------


def _anchor(ws: Workspace):
    def anchor(call: dict) -> tuple[str, str]:
        if not call["targets"]:
            return "", call["status"]
        return ws.href(call["targets"][0])
    return anchor


def _shown_lines(fn: dict | None, pin: dict | None, count: int) -> tuple[int, int]:
    if fn is not None and fn["end"] - fn["start"] < MAX_FUNCTION:
        return fn["start"], min(fn["end"], count)
    if pin is not None:
        return max(1, pin["start"] - CONTEXT), min(count, pin["end"] + CONTEXT)
    if fn is not None:
        return fn["start"], min(count, fn["start"] + MAX_FUNCTION)
    return 1, min(count, 1)


def source_html(ws: Workspace, src: Sources, key: FileKey, fn: dict | None, pin: dict | None) -> str:
    """The lines of a function (or around a pin) with numbers, the pin's lines marked."""
    lines = src.text.get(key)
    if lines is None:
        absent = tr("The clone does not hold this file at this commit.", "克隆中没有此提交的这个文件。")
        return f'<p class="muted">{absent}</p>'
    start, end = _shown_lines(fn, pin, len(lines))
    tokens = src.tokens(key)
    calls: dict[int, list[dict]] = {}
    for f in ws.code.functions(key):
        for c in f["calls"]:
            calls.setdefault(c["line"], []).append(c)
    anchor = _anchor(ws)
    page = ws.pages.get(key)
    rows = []
    for n in range(start, end + 1):
        marked = pin is not None and pin["start"] <= n <= pin["end"]
        number = f'<a class="n" href="{escape(page)}#L{n}">{n}</a>' if page else f'<span class="n">{n}</span>'
        code = code_line_html(lines[n - 1], tokens[n - 1] if n - 1 < len(tokens) else [], calls.get(n, []), anchor)
        rows.append(f'<div class="l{" p" if marked else ""}" data-line="{n}">{number}<code>{code}</code></div>')
    return '<div class="src">' + "\n".join(rows) + "</div>"


def _segments(ws: Workspace, fn: dict, step_pin: dict | None) -> list[tuple[int, str]]:
    """The pinned ranges inside a function, as (line, html) outline items."""
    items = []
    for a, b, c in ws.pins.citations(fn["key"]):
        if a > fn["end"] or b < fn["start"]:
            continue
        mine = step_pin is not None and (a, b) == (step_pin["start"], step_pin["end"])
        span = f"L{a}" if a == b else f"L{a}-L{b}"
        label = escape(c["owner"]["label"])
        href = ws.owners.href(c["owner"], "") if ws.owners else ""
        named = ws.owners.name(c["owner"]) if ws.owners else f'<span translate="no">{label}</span>'
        record = (f'<a class="record" href="{escape(href)}" title="{label}">{named}</a>' if href
                  else f'<span class="record" title="{label}">{named}</span>')
        items.append((a, f'<li class="seg{" mine" if mine else ""}"><span class="span" translate="no">{span}</span> '
                         f'{record}</li>'))
    return items


CALL_STATUS = {"resolved": ("resolved", "已解析"), "ambiguous": ("ambiguous", "有歧义"),
               "by-name": ("candidates by name", "按名称的候选"), "stdlib": ("standard library", "标准库"),
               "external": ("external", "外部"), "unknown": ("unknown: missing blobs", "未知：缺少 blob"),
               "unsearched": ("not searched", "未搜索")}
CONFIDENCE = {"exact": ("exact", "精确"), "by name": ("by name", "仅按名称"), "unresolved": ("unresolved", "未解析")}


def call_status(status: str) -> str:
    """A call's resolution (atlas.code.resolve) in both languages."""
    en, zh = CALL_STATUS.get(status, (status, status))
    return str(tr(en, zh))


def confidence_html(call: dict) -> str:
    """How far a call's link can be trusted (exact, by name, unresolved), in both languages."""
    sure = call.get("confidence", "unresolved")
    en, zh = CONFIDENCE.get(sure, (sure, sure))
    return f'<span class="confidence conf-{sure.replace(" ", "-")}">{tr(en, zh)}</span>'


def outline_html(ws: Workspace, fn: dict, step_pin: dict | None) -> str:
    """A function as an outline: its segments and its calls in line order, each call linked."""
    items = _segments(ws, fn, step_pin)
    for call in fn["calls"]:
        href, title = _anchor(ws)(call)
        text = escape(call["text"] or call["name"])
        label = f'<a class="call" href="{escape(href)}" title="{escape(title)}" translate="no">{text}</a>' if href \
            else f'<span class="call" title="{escape(title)}" translate="no">{text}</span>'
        items.append((call["line"], f'<li class="callitem"><span class="span" translate="no">L{call["line"]}</span> '
                                    f'{label} <span class="status">{call_status(call["status"])}</span> '
                                    f'{confidence_html(call)}</li>'))
    items.sort(key=lambda x: x[0])
    callers = called_by(fn["callers_total"]) if fn["callers"] else NO_CALLER
    repo, commit, path = fn["key"]
    return (f'<h3 class="fname"><code>{escape(fn["qualified"])}</code></h3>'
            f'<p class="muted where"><span translate="no">{escape(path)}:{fn["start"]}-{fn["end"]}</span> · '
            f'<span translate="no">{escape(repo)}@{commit[:12]}</span> · {callers}</p>'
            f'<ol class="outline">{"".join(html for _n, html in items)}</ol>')


def step_block(ws: Workspace, src: Sources, step: Any, seen: set[str]) -> dict:
    """A step as the page shows it: its functions (outline and source), or its pinned lines.
    `seen`: the function ids given an anchor already (a function two steps share has one)."""
    pin = step_pin(step)
    fns = ws.step_fns.get(step["id"], [])
    parts = []
    for fn in fns:
        ident = own_id(fn)
        page = ws.pages.get(fn["key"])
        parts.append({"id": ident, "anchor": ident not in seen, "outline": Markup(outline_html(ws, fn, pin)),
                      "source": Markup(source_html(ws, src, fn["key"], fn, pin)),
                      "page": f'{page}#L{pin["start"] if pin else fn["start"]}' if page else ""})
        seen.add(ident)
    loose = ""
    if pin and not fns:
        key = (pin["repo"], pin["sha"], pin["path"])
        loose = Markup(source_html(ws, src, key, None, pin)) if key in src.text else ""
    pin_page = ws.pages.get((pin["repo"], pin["sha"], pin["path"])) if pin else None
    pin_line = pin["start"] if pin else 0
    return {"step": step, "pin": pin, "functions": parts, "loose": loose,
            "url": (step["source"] or {}).get("url", ""), "page": f"{pin_page}#L{pin_line}" if pin_page else "",
            "after": [(e["from"], e["type"]) for e in ws.flow["edges"] if e["to"] == step["id"]]}


def levels(flow: FlowView) -> list[list[Any]]:
    lv = flow_levels(flow)
    rows: list[list[Any]] = []
    for s in flow["steps"]:
        while len(rows) <= lv[s["id"]]:
            rows.append([])
        rows[lv[s["id"]]].append(s)
    return rows


def workspace_page(v_flow: FlowView, ws: Workspace, src: Sources) -> str:
    ours = asset("lang.js") + "\n" + asset("workspace.js")  # the language switch remembered, then the tracks
    seen: set[str] = set()
    csp = ("default-src 'none'; script-src " + csp_hash(ours) + "; style-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    callees = [{"id": ident, "outline": Markup(outline_html(ws, fn, None)),
                "source": Markup(source_html(ws, src, fn["key"], fn, None))} for ident, fn in ws.callees.items()]
    return env().get_template("workspace.html").render(
        title=f"{v_flow['title']['en'] or v_flow['id']} · code · {SITE_TITLE['en']}", lang="en", csp=Markup(csp),
        style=Markup(asset("pages.css") + "\n" + asset("workspace.css") + "\n" + style_css()),
        script=Markup(ours), data="", vis="", root="", current="flow", site=SITE_TITLE,
        flow=v_flow, flow_file=flow_file(v_flow["id"]), levels=levels(v_flow), num=step_numbers(v_flow),
        after={s["id"]: [(e["from"], e["type"]) for e in v_flow["edges"] if e["to"] == s["id"]]
               for s in v_flow["steps"]}, edge_types=EDGE_TYPES,
        steps=[step_block(ws, src, s, seen) for s in v_flow["steps"]], callees=callees)


def workspace_pages(v: AtlasViews, out: Path, pins, code, pages: dict[str, str]) -> dict[str, tuple[Path, str]]:
    """flow id -> (path, html) of the workspace of every flow with a step whose pinned file the
    clones hold."""
    by_key: dict[FileKey, str] = {}
    for k, page in pages.items():
        repo, _, rest = k.partition("@")
        commit, _, path = rest.partition(":")
        by_key[(repo, commit, path)] = page
    done: dict[str, tuple[Path, str]] = {}
    owners = Owners(v)
    for flow in v["flows"]:
        ws = Workspace(flow, pins, code, by_key, owners)
        if not any(ws.step_fns.values()):
            continue
        src = Sources(code, ws.files())
        done[flow["id"]] = (out / workspace_file(flow["id"]), workspace_page(flow, ws, src))
    return done


