"""Reading the API history files (`data/api/<owner>+<name>.jsonl`, see `atlas.model.apifile`) into records,
checking every field and naming the file and line of each problem.

The loader calls `read_file` for each such file; the API store (`atlas.index.apistore`) reads them the same
way. `named(atlas, symbols)` picks the symbols that concepts name (docs/schema.md, "API symbols").
"""
from __future__ import annotations

import re
from pathlib import Path

from . import apifile
from ..bounded import DATA_FILE, TooLarge, read_bounded
from ..errors import Location, Problem
from ..output import INVISIBLE
from .core import (
    API_EVENTS, API_KINDS, EVENT_PRECISIONS, REPO_RE, SHA_RE, ApiSurface, ApiSymbol, Atlas, Release, name_index,
    named_by,
)

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[+-]\d{2}:\d{2}|Z)$")


class ApiFile:
    """One file read: its header (with releases), its symbols, the problems found."""

    def __init__(self, surface: ApiSurface | None, symbols: list[ApiSymbol], problems: list[Problem]):
        self.surface = surface
        self.symbols = symbols
        self.problems = problems


def read_file(path: Path, display: str, raw: bytes | None = None) -> ApiFile:
    """One API history file (`raw`: its bytes, when read already)."""
    repo = apifile.repo_of(path.name)
    problems: list[Problem] = []

    def problem(line: int, code: str, message: str, hint: str = "") -> None:
        problems.append(Problem(Location(display, line, 1 if line else 0), "error", code, message, hint))

    if not REPO_RE.match(repo or ""):
        problem(0, "bad-api-file", f"{path.name}: not the API history of a repository (owner+name{apifile.SUFFIX})")
        return ApiFile(None, [], problems)
    try:
        data = raw if raw is not None else read_bounded(path, DATA_FILE, "API history file")
        text = data.decode("utf-8")
        rows = list(apifile.records(text))
    except TooLarge as exc:
        problem(0, "too-large", exc.message, exc.hint)
        return ApiFile(None, [], problems)
    except (OSError, UnicodeDecodeError) as exc:
        problem(0, "unreadable", f"cannot read the API history: {exc}")
        return ApiFile(None, [], problems)
    except apifile.BadLine as exc:
        problem(exc.line, "bad-api-line", exc.message, "the file is generated: run `atlas refresh` to write it again")
        return ApiFile(None, [], problems)
    lines = text.split("\n")
    rows = [(line, rec) for line, rec in rows if _text_ok(line, lines[line - 1], rec, problem)]
    surface, symbols = _records(repo, rows, problem)
    for rec in [surface, *symbols]:
        if rec is not None and rec.loc is not None:
            rec.loc = Location(display, rec.loc.line, 1)
    return ApiFile(surface, symbols, problems)


# Control characters (C0 but tab and newline, DEL, C1) and invisible ones (zero-width spaces,
# direction marks and overrides) in any text of a line; none at all in a symbol's name. Markup: an
# HTML tag, comment or processing instruction (`<script`, `</`, `<!--`, `<?`) in a name or a
# signature. C++ writes `<` and `>` for templates and comparisons, never in these shapes.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")
_NAME_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{INVISIBLE}]")
_MARKUP = re.compile(r"<\s*/|<!|<\?|<\s*(?:script|style|iframe|frame|img|svg|math|object|embed|link|meta|base|"
                     r"form|input|button|body|html|head|a\s+href|video|audio|source|details|marquee)\b", re.I)
_TEXT_HINT = ("the file is generated from the repository's headers: run `atlas refresh` to write it again; "
              "no C or C++ declaration holds such a character or tag")


def _texts(value, path: str = ""):
    """(where, text) for every string in a parsed line, walked with an explicit stack."""
    stack = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            yield where, v
        elif isinstance(v, dict):
            stack.extend((f"{where}.{k}" if where else str(k), x) for k, x in v.items())
            stack.extend((f"{where}.{k} (a key)" if where else f"{k} (a key)", k) for k in v)
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))


def _signatures(rec: dict):
    yield "signature", rec.get("signature")
    for i, event in enumerate(rec.get("history") or []):
        if isinstance(event, list) and len(event) > 3:
            yield f"history[{i}] signature", event[3]
    for i, sig in enumerate(rec.get("release_signatures") or []):
        yield f"release_signatures[{i}]", sig


# What a line must hold for its texts to be looked at one by one: an escape (\\u001b, \\b, ...), a
# raw DEL, C1 or invisible character (JSON refuses raw C0 controls), or a shape of markup
_ESCAPE = re.compile(r"\\[ubfr]")
_RAW = re.compile(f"[\\x7f-\\x9f{INVISIBLE}]")


def _suspect(raw: str) -> bool:
    return bool(("\\" in raw and _ESCAPE.search(raw)) or (not raw.isascii() and _RAW.search(raw))
                or ("<" in raw and _MARKUP.search(raw)))


def _text_ok(line: int, raw: str, rec: dict, problem) -> bool:
    """A line with a control or invisible character in any text, or with markup in a symbol's name or
    signatures, is refused (an error at its line; the record is not kept). Most lines hold neither
    an escape nor a `<`: a few searches of the line's text clear them."""
    if not _suspect(raw):
        return True
    for where, text in _texts(rec):
        m = _CONTROL.search(text)
        if m is not None:
            problem(line, "control-character", f"{where}: character U+{ord(m.group(0)):04X} in the text", _TEXT_HINT)
            return False
    if rec.get("type") != "symbol":
        return True
    name = rec.get("name")
    if isinstance(name, str) and (_NAME_CONTROL.search(name) or _MARKUP.search(name)):
        problem(line, "bad-api-field", f"the symbol name {name!r} holds markup or a control character", _TEXT_HINT)
        return False
    for where, sig in _signatures(rec):
        m = _MARKUP.search(sig) if isinstance(sig, str) else None
        if m is not None:
            problem(line, "bad-api-field", f"{name}: {where} holds markup ({m.group(0)!r})", _TEXT_HINT)
            return False
    return True


def _records(repo: str, rows: list[tuple[int, dict]], problem) -> tuple[ApiSurface | None, list[ApiSymbol]]:
    if not rows or rows[0][1].get("type") != "surface":
        problem(rows[0][0] if rows else 0, "bad-api-line", "the first line must be the surface header",
                "the file is generated: run `atlas refresh` to write it again")
        return None, []
    surface = _surface(repo, *rows[0], problem)
    symbols: list[ApiSymbol] = []
    names = {r.name for r in surface.releases} if surface else set()
    first: dict[tuple[str, str], int] = {}
    for line, rec in rows[1:]:
        kind = rec.get("type")
        if kind == "release" and surface is not None:
            release = _release(repo, line, rec, problem, len(surface.releases))
            if release is not None:
                surface.releases.append(release)
                names.add(release.name)
        elif kind == "symbol":
            sym = _symbol(repo, line, rec, problem)
            if sym is None:
                continue
            key = (sym.name, sym.kind)
            if key in first:
                problem(line, "duplicate-symbol", f"the {sym.kind} {sym.name} is listed twice (first at line "
                        f"{first[key]})", "the file is generated: run `atlas refresh` to write it again")
                continue
            first[key] = line
            symbols.append(sym)
        elif kind != "release":
            problem(line, "bad-api-line", f"unknown record type {kind!r} (surface, release or symbol)")
    for sym in symbols:
        _check_releases(sym, surface, names, problem)
    if surface is not None and surface.symbols != len(symbols):
        problem(rows[0][0], "bad-api-field", f"the header counts {surface.symbols} symbols, the file holds "
                f"{len(symbols)}")
    return surface, symbols


def _fields(line: int, rec: dict, keys: tuple, problem, what: str) -> bool:
    unknown = set(rec) - set(keys) - {"type"}
    if unknown:
        problem(line, "bad-api-field", f"{what} has unknown fields {sorted(unknown)}")
        return False
    return True


_SURFACE_TYPES = {"commits": int, "symbols": int, "files": dict, "skipped_paths": list, "missing_blobs": list,
                  "ignored_tags": list}


def _surface(repo: str, line: int, rec: dict, problem) -> ApiSurface | None:
    if not _fields(line, rec, apifile.SURFACE_KEYS, problem, "the header"):
        return None
    for key in apifile.SURFACE_KEYS:
        want = _SURFACE_TYPES.get(key, str)
        if key in rec and not isinstance(rec[key], want):
            problem(line, "bad-api-field", f"header field {key} must be {want.__name__}")
            return None
    for key in ("head", "cutoff_head"):
        if rec.get(key) and not SHA_RE.match(rec[key]):
            problem(line, "bad-sha", f"header field {key} {rec[key]!r} is not 40 lowercase hex digits")
    return ApiSurface(repo=repo, loc=Location("", line), **{k: rec[k] for k in apifile.SURFACE_KEYS if k in rec})


def _release(repo: str, line: int, rec: dict, problem, index: int) -> Release | None:
    if not _fields(line, rec, apifile.RELEASE_KEYS, problem, "a release"):
        return None
    if not isinstance(rec.get("name"), str) or not rec["name"] or not SHA_RE.match(str(rec.get("commit", ""))):
        problem(line, "bad-api-field", "a release needs a name and a 40-hex commit")
        return None
    if rec.get("index") != index:
        problem(line, "bad-api-field", f"release {rec['name']!r} has index {rec.get('index')!r}, expected {index}: "
                "releases are listed in release order")
    if not _DATE.match(str(rec.get("date", ""))):
        problem(line, "bad-date", f"release {rec['name']!r}: date {rec.get('date')!r} is not an ISO 8601 timestamp")
    return Release(repo=repo, name=rec["name"], commit=rec["commit"], date=str(rec.get("date", "")), index=index,
                   annotated=bool(rec.get("annotated")), missing=int(rec.get("missing") or 0))


def _symbol(repo: str, line: int, rec: dict, problem) -> ApiSymbol | None:
    if not _fields(line, rec, apifile.SYMBOL_KEYS, problem, "a symbol"):
        return None
    if rec.get("kind") not in API_KINDS or not isinstance(rec.get("name"), str) or not rec["name"]:
        problem(line, "bad-api-field", f"a symbol needs a kind ({', '.join(API_KINDS)}) and a name")
        return None
    history = rec.get("history")
    if not isinstance(history, list) or not all(_event_ok(e) for e in history):
        problem(line, "bad-api-field", f"{rec['name']}: history must be [sha, date, event, signature, precision] "
                f"items (events {', '.join(API_EVENTS)}; precisions {', '.join(EVENT_PRECISIONS)})")
        return None
    if history and history[0][2] != "added":
        problem(line, "bad-api-field", f"{rec['name']}: its history must start where it was added")
    where = rec.get("where", [])
    if not (isinstance(where, list) and all(isinstance(w, list) and len(w) == 2 and isinstance(w[0], str)
                                            and isinstance(w[1], int) for w in where)):
        problem(line, "bad-api-field", f"{rec['name']}: where must be [path, line] items")
        return None
    for key in ("introduced", "introduced_date", "note", "signature", "first_release", "releases"):
        if not isinstance(rec.get(key, ""), str):
            problem(line, "bad-api-field", f"{rec['name']}: {key} must be text")
            return None
    if rec.get("introduced") and not SHA_RE.match(rec["introduced"]):
        problem(line, "bad-sha", f"{rec['name']}: introduced {rec['introduced']!r} is not 40 lowercase hex digits")
    return ApiSymbol(repo=repo, loc=Location("", line), **{k: rec[k] for k in apifile.SYMBOL_KEYS if k in rec})


def _event_ok(e) -> bool:
    return (isinstance(e, list) and len(e) == 5 and all(isinstance(x, str) for x in e) and bool(SHA_RE.match(e[0]))
            and bool(_DATE.match(e[1])) and e[2] in API_EVENTS and e[4] in EVENT_PRECISIONS)


def _check_releases(sym: ApiSymbol, surface: ApiSurface | None, names: set[str], problem) -> None:
    line = sym.loc.line if sym.loc else 0
    count = len(surface.releases) if surface else 0
    if len(sym.releases) != count:
        problem(line, "bad-api-field", f"{sym.name}: releases has {len(sym.releases)} columns for {count} releases")
    allowed = set(".?") | set(ALPHABET[:len(sym.release_signatures)])
    if set(sym.releases) - allowed:
        problem(line, "bad-api-field", f"{sym.name}: releases holds a letter with no signature")
    if sym.first_release and sym.first_release not in names:
        problem(line, "bad-api-field", f"{sym.name}: first_release {sym.first_release!r} is not a release of the file")


# -- the symbols concepts name -------------------------------------------------------------------


def named(atlas: Atlas, symbols: list[ApiSymbol]) -> list[ApiSymbol]:
    """The symbols any concept names, each once (`model.named_by`)."""
    index = name_index(symbols)
    out: dict[tuple[str, str, str], ApiSymbol] = {}
    for c in atlas.concepts:
        for sym in named_by(c, index):
            out.setdefault((sym.repo, sym.kind, sym.name), sym)
    return [out[k] for k in sorted(out)]
