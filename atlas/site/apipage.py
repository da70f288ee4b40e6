"""The API pages of the site: `api/index.html` (the repositories with a public API history) and one
`api/<owner>+<name>.html` per repository: every public symbol with its first commit and first release,
and one column per release read like caniuse (★ the first release it is in, ✓ present, Δ another
signature than the release before, ✗ removed, · absent), filtered and paged in the browser.

The table of a repository can hold tens of thousands of rows: the page carries them as one compact
JSON block and shows one page of rows at a time (the first page is rendered on the server, so the
page reads without JavaScript, and says where the whole list is). Everything comes from the view
layer's `ApiPage` views (`atlas.index.apistore.ApiStore.page`). A symbol's name links its declaration: the
site's own source page of that file at the cut-off head when the map wrote one (`atlas map` with local
clones), else the file upstream.
"""
from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from ..view.views import LABELS, ApiPage
from .common import SITE_TITLE, asset, document_page, script_json

FOLDER = "api"
PAGE_ROWS = 100
# a release column's state: its glyph, its class (st-<class>) and its words in both languages
MARKS = {"first": ("★", "first", "first release", "首个发布"), "present": ("✓", "present", "present", "存在"),
         "changed": ("Δ", "signature", "signature changed", "签名改变"),
         "removed": ("✗", "removed", "removed", "已移除"), "absent": ("·", "absent", "absent", "不存在")}


def page_file(repo: str) -> str:
    """The page of a repository's API, relative to the site root."""
    return f"{FOLDER}/{repo.replace('/', '+')}.html"


def columns(releases: str) -> list[str]:
    """The release states of one symbol from its release string (as views.release_states reads them)."""
    out, prev, seen = [], ".", False
    for letter in releases:
        if letter == ".":
            out.append("removed" if prev != "." else "absent")
        else:
            out.append("first" if not seen else ("changed" if prev not in (".", letter) else "present"))
            seen = True
        prev = letter
    return out


def _rows(page: ApiPage) -> list[list]:
    """Compact rows for the page script: [name, kind, first day, first sha, precision, first release,
    release string, removed day, signature, concepts, path, line]."""
    from ..model.core import utc_day

    rows = []
    for it in sorted(page["items"], key=lambda i: (i["first"]["date"] if i["first"] else "9999", i["name"])):
        first, removed = it["first"], it["removed"]
        where = it.get("where") or [["", 0]]
        rows.append([it["name"], it["kind"], utc_day(first["date"]) if first else "", first["sha"] if first else "",
                     first["precision"] if first else "", it["first_release"], it["releases"],
                     utc_day(removed["date"]) if removed else "", it["signature"], it.get("concepts", []),
                     where[0][0], where[0][1]])
    return rows


def _declaration_href(path: str, line: int, local: dict[str, str], base: str, head: str) -> str:
    if not path:
        return ""
    return f"{local[path]}#L{line}" if path in local else f"{base}/blob/{head}/{path}#L{line}"


def _render(template: str, title: str, script: str, **context) -> str:
    """A document page of the API (the language switch remembered, then `script`)."""
    return document_page(template, title, "../", "api", script, extra_css=Markup(asset("api.css")), **context)


def local_sources(repo: str, head: str, paths: set[str], sources: dict[str, str]) -> dict[str, str]:
    """path -> the site's source page of that file of `repo` at `head` (relative to an API page), for
    the `paths` the map wrote a source page of (`sources`: `repo@sha:path` -> page, from the site root)."""
    out = {}
    for path in sorted(paths):
        found = sources.get(f"{repo}@{head}:{path}")
        if found:
            out[path] = "../" + found
    return out


ROW_KEYS = ("name", "kind", "day", "sha", "precision", "release", "rels", "removed", "signature", "concepts",
            "path", "line")


def repo_page(page: ApiPage, sources: dict[str, str] | None = None,
              names: dict[str, dict[str, str]] | None = None) -> str:
    """A repository's API page. `names`: concept id -> its names ({en, zh}), shown for the concepts
    that name a symbol (the id when the atlas has no such concept)."""
    s = page["summary"]
    rows = _rows(page)
    local = local_sources(s["repo"], s["cutoff_head"], {r[10] for r in rows if r[10]}, sources or {})
    named = sorted({c for r in rows for c in r[9]})
    cnames = {c: (names or {}).get(c) or {"en": c, "zh": ""} for c in named}
    data = {"base": page["base"], "head": s["cutoff_head"], "releases": [r["name"] for r in s["releases"]],
            "rows": rows, "pageRows": PAGE_ROWS, "source": local, "marks": MARKS,
            "names": {c: [t["en"], t["zh"]] for c, t in cnames.items()},
            "labels": {"kind": LABELS["api_kind"], "precision": LABELS["precision"]}}
    first = [dict(zip(ROW_KEYS, r)) for r in rows[:PAGE_ROWS]]
    for r in first:
        r["cols"] = [MARKS[c] for c in columns(r["rels"])]
        r["href"] = _declaration_href(r["path"], r["line"], local, page["base"], s["cutoff_head"])
    rest = [dict(zip(ROW_KEYS, r)) for r in rows[PAGE_ROWS:]]
    for r in rest:
        r["href"] = _declaration_href(r["path"], r["line"], local, page["base"], s["cutoff_head"])
    kinds = sorted({r[1] for r in rows})
    return _render("api.html", f"Public API of {s['repo']} \u00b7 {SITE_TITLE['en']}", "api.js",
                   s=s, base=page["base"], first=first, rest=rest, total=len(rows), kinds=kinds,
                   kind_names=LABELS["api_kind"], cnames=cnames, data=Markup(script_json(data)), page_rows=PAGE_ROWS)


def index_page(pages: list[ApiPage]) -> str:
    repos = [{"repo": p["summary"]["repo"], "file": page_file(p["summary"]["repo"])[len(FOLDER) + 1:],
              "symbols": p["summary"]["symbols"], "kinds": p["summary"]["kinds"],
              "releases": len(p["summary"]["releases"]), "cutoff": p["summary"]["cutoff"]} for p in pages]
    return _render("apiindex.html", f"Public API \u00b7 {SITE_TITLE['en']}", "", repos=repos)


def api_pages(pages: list[ApiPage], out: Path, sources: dict[str, str] | None = None,
              names: dict[str, dict[str, str]] | None = None) -> list[tuple[Path, str]]:
    """(path, html) of api/index.html and one page per repository with a public API history.
    `sources`: the source pages the map writes (`repo@sha:path` -> page), which declarations link;
    `names`: the concepts' names by id."""
    pages = sorted(pages, key=lambda p: p["summary"]["repo"].lower())
    out_pages = [(out / FOLDER / "index.html", index_page(pages))]
    out_pages += [(out / page_file(p["summary"]["repo"]), repo_page(p, sources, names)) for p in pages]
    return out_pages
