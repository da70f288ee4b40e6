"""The answers of `atlas where` and `atlas source`, read from the pin and code tables
(atlas.code.lookup): which records cite a line, and the lines a pin, a concept or a flow step
names, with the functions around them.

A location is written `[REPO[@SHA]:]PATH:LINE` or `PATH#L<line>`; a pin as the atlas writes it
(`owner/repo@sha:path#La-Lb`). A path matches the file's path or its end after a `/`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import AtlasError, Location
from ..model.core import Pin
from ..text import pin_path_problem
from .lookup import CodeTable, FileKey, PinTable

if TYPE_CHECKING:
    from .shapes import Clones, ExcerptView, MissView, PlaceView

_LOCATION = re.compile(r"^(?:(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<sha>[0-9a-fA-F]{4,40}))?:)?"
                       r"(?P<path>[^\n]+?)(?::|#L)(?P<line>\d+)(?:-L?\d+)?$")


class Wanted(NamedTuple):
    repo: str | None
    commit: str | None
    path: str
    line: int


def parse_location(text: str) -> Wanted:
    """`[REPO[@SHA]:]PATH:LINE` (or `PATH#LLINE`, or a pin) -> what to look up; a usage error
    names what is wrong."""
    m = _LOCATION.match(text.strip())
    if not m or int(m["line"]) < 1:
        raise AtlasError(f"not a location: {text!r}", Location("where"),
                         "write [REPO:]PATH:LINE, e.g. dispatch.h:4166 or hicann/shmem:src/x.cpp:12")
    return Wanted(m["repo"], m["sha"].lower() if m["sha"] else None, m["path"], int(m["line"]))


def clones_view(pins: PinTable, code: CodeTable | None, root: Path, repos: list[str] | None = None) -> Clones:
    wanted = sorted(set(repos if repos is not None else pins.pinned_repos()))
    found = sorted(r for r in wanted if code is not None and r in code.clones)
    absent = [r for r in wanted if r not in found]
    return {"root": str(root), "found": found, "absent": absent, "hint": clone_hint(absent, root)}


def clone_hint(absent: list[str], root: Path) -> str:
    """What to do when pinned repositories have no clone: a sentence, then the command on a line
    of its own (so that no wrapping breaks it)."""
    if not absent:
        return ""
    repos = " ".join(f"--repo {r}" for r in absent[:3]) + (" ..." if len(absent) > 3 else "")
    more = " and more" if len(absent) > 3 else ""
    return (f"no local clone of {', '.join(absent[:3])}{more} under {root}; the functions, calls and lines "
            f"come with one (or point --repos / ATLAS_REPOS at your clones):\n  atlas refresh --clone {repos}")


# ---------------------------------------------------------------------------------------------
# Nothing matched: what was looked for, and why it cannot match
# ---------------------------------------------------------------------------------------------

_PINNISH = re.compile(r"^(?P<repo>[^@]*)@(?P<sha>[^:\s]*):(?P<path>.*?)(?:#L\d+(?:-L?\d+)?)?$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def miss(pins: PinTable, code: CodeTable | None, term: str, wanted: Wanted | None) -> MissView:
    """The view of a lookup that matched no file: what was looked for, in what, why it cannot
    match (a path outside every repository, a repository name that is not one) and the pinned
    files whose name is close."""
    import difflib

    pin = _PINNISH.match(term.strip())
    repo = (pin["repo"] if pin else "") or (wanted.repo if wanted and wanted.repo else "")
    path = pin["path"] if pin else (wanted.path if wanted else term)
    if repo and not _REPO.match(repo):
        reason = "bad-repo"
    elif path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        reason = "absolute"
    elif ".." in re.split(r"[\\/]", path):
        reason = "climbs"
    elif repo and repo.lower() not in {r.lower() for r in pins.repos}:
        reason = "unknown-repo"
    else:
        reason = "no-file"
    names: dict[str, list[str]] = {}
    for key in pins.files:
        names.setdefault(key[2].rsplit("/", 1)[-1], []).append(key[2])
    wanted_name = re.split(r"[\\/]", path)[-1]
    close = difflib.get_close_matches(wanted_name, list(names), n=3, cutoff=0.6) if reason == "no-file" else []
    return {"term": term, "repo": repo, "path": path, "line": wanted.line if wanted else 0, "reason": reason,
            "files": len(pins.files), "repos": len(pins.pinned_repos()),
            "clones": len(code.clones) if code is not None else 0,
            "closest": sorted({p for n in close for p in names[n]})[:5]}


# ---------------------------------------------------------------------------------------------
# where
# ---------------------------------------------------------------------------------------------


def where(pins: PinTable, code: CodeTable | None, wanted: Wanted) -> list[PlaceView]:
    """Every matching file (pinned or indexed) with what cites the line there, by repository,
    path and commit."""
    keys = set(pins.matching(wanted.repo, wanted.path, wanted.commit))
    if code is not None:
        keys |= set(code.matching(wanted.repo, wanted.path, wanted.commit))
    return [place(pins, code, key, wanted.line) for key in sorted(keys)]


def place(pins: PinTable, code: CodeTable | None, key: FileKey, line: int) -> PlaceView:
    rows = pins.citations(key)
    above = [(a, b, c) for a, b, c in rows if b < line]
    below = [(a, b, c) for a, b, c in rows if a > line]
    nearest_end = max((b for _a, b, _c in above), default=None)
    nearest_start = min((a for a, _b, _c in below), default=None)
    return {"repo": key[0], "commit": key[1], "path": key[2], "line": line,
            "indexed": code is not None and code.has(key),
            "covering": [c for a, b, c in rows if a <= line <= b],
            "function": code.enclosing(key, line) if code is not None else None,
            "before": [c for _a, b, c in above if b == nearest_end],
            "after": [c for a, _b, c in below if a == nearest_start]}


# ---------------------------------------------------------------------------------------------
# source
# ---------------------------------------------------------------------------------------------


class Span(NamedTuple):
    key: FileKey
    start: int
    end: int
    owners: list  # OwnerView


def spans_of(pins: PinTable, owner: tuple[str, ...]) -> list[Span]:
    """The pinned spans an owner (("concept", id, ""), ("step", step, flow)) cites, each once."""
    out: dict[tuple, Span] = {}
    for repo, sha, path, a, b in pins.owned.get(owner, []):
        key = (repo, sha, path)
        out.setdefault((key, a, b), Span(key, a, b, owners_at(pins, key, a, b)))
    return list(out.values())


def owners_at(pins: PinTable, key: FileKey, start: int, end: int) -> list:
    """The records that cite exactly lines start..end of a file."""
    seen: dict[str, Any] = {}
    for a, b, c in pins.citations(key):
        if (a, b) == (start, end):
            seen.setdefault(c["owner"]["label"], c["owner"])
    return list(seen.values())


def pin_span(pins: PinTable, text: str) -> Span | None:
    p = Pin.parse(text)
    if p is None:
        return None
    key = (p.repo, p.sha, p.path)
    return Span(key, p.start, p.end, owners_at(pins, key, p.start, p.end))


def read_files(code: CodeTable | None, keys: list[FileKey]) -> dict[FileKey, tuple[list[str] | None, str]]:
    """The lines of files at their commits: a pinned file's from the code table, the others read
    from the clones (no checkout), one `git cat-file` per repository for the indexed files' blobs
    (plus one to name the others'); (None, why not)."""
    out: dict[FileKey, tuple[list[str] | None, str]] = {}
    by_repo: dict[str, list[FileKey]] = {}
    for key in dict.fromkeys(keys):
        kept = code.text(key) if code is not None else None
        if kept is not None:
            out[key] = (kept, "")
        elif pin_path_problem(key[2]):  # never given to git, which would refuse the whole batch
            out[key] = (None, f"the path {pin_path_problem(key[2])}")
        elif code is None or key[0] not in code.clones:
            out[key] = (None, "no local clone")
        else:
            by_repo.setdefault(key[0], []).append(key)
    for repo, wanted in by_repo.items():
        out.update(_read_repo(code, repo, wanted))
    return out


def _read_repo(code, repo: str, keys: list[FileKey]) -> dict[FileKey, tuple[list[str] | None, str]]:
    from .gitread import GitReader, blob_lines

    git = GitReader(Path(code.clones[repo]), repo)
    blobs = {k: code.blob(k) for k in keys}
    unknown = [k for k in keys if not blobs[k]]
    info = git.info([f"{c}:{p}" for _r, c, p in unknown])
    out: dict[FileKey, tuple[list[str] | None, str]] = {}
    for k in unknown:
        obj = info.get(f"{k[1]}:{k[2]}")
        if obj is None or obj.kind != "blob":
            out[k] = (None, f"{k[2]} is not a file at {k[1][:12]} in the clone")
        else:
            blobs[k] = obj.oid
    data = git.contents(sorted({b for k, b in blobs.items() if b and k not in out}))
    for k in keys:
        if k in out:
            continue
        got = data.get(blobs[k])
        out[k] = (blob_lines(got), "") if got is not None else \
            (None, f"the blob {blobs[k][:12]} of {k[2]} is missing from the clone (a partial clone)")
    return out


def excerpts(pins: PinTable, code: CodeTable | None, spans: list[Span]) -> list[ExcerptView]:
    """The lines of each span with the functions around them."""
    texts = read_files(code, [s.key for s in spans])
    return [excerpt(pins, code, s, texts[s.key]) for s in spans]


def excerpt(pins: PinTable, code: CodeTable | None, span: Span,
            text: tuple[list[str] | None, str]) -> ExcerptView:
    lines, why = text
    end = span.end
    if lines is not None and span.start > len(lines):
        why, lines = f"line {span.start} is past the end of the file ({len(lines)} lines)", None
    if lines is not None:
        end = min(end, len(lines))
    repo, commit, path = span.key
    out: ExcerptView = {"repo": repo, "commit": commit, "path": path, "start": span.start, "end": end,
                        "owners": span.owners, "url": upstream(pins, span),
                        "lines": lines[span.start - 1:end] if lines is not None else [], "missing": why,
                        "functions": code.overlapping(span.key, span.start, end) if code else []}
    if code is not None and code.language(span.key):
        out["language"] = code.language(span.key)
    return out


def upstream(pins: PinTable, span: Span) -> str:
    for a, b, c in pins.citations(span.key):
        if (a, b) == (span.start, span.end):
            return c["evidence"]["url"]
    repo, commit, path = span.key
    base = (pins.repos.get(repo) or f"https://github.com/{repo}").rstrip("/").removesuffix(".git")
    lines = f"#L{span.start}" if span.start == span.end else f"#L{span.start}-L{span.end}"
    return f"{base}/blob/{commit}/{path}{lines}" if base.startswith(("http://", "https://")) else ""


def location_span(pins: PinTable, code: CodeTable | None, wanted: Wanted, context: int = 5) -> list[Span]:
    """`PATH:LINE` for `atlas source`: the function around the line when indexed (at most 200
    lines of it), else the line and `context` lines either side, in each matching file."""
    out = []
    for p in where(pins, code, wanted):
        key = (p["repo"], p["commit"], p["path"])
        fn = p["function"]
        if fn is not None and fn["end"] - fn["start"] < 200:
            start, end = fn["start"], fn["end"]
        else:
            start, end = max(1, wanted.line - context), wanted.line + context
        out.append(Span(key, start, end, [c["owner"] for c in p["covering"]]))
    return out




# ---------------------------------------------------------------------------------------------
# atlas query: line numbers, file:line and function names among the hits
# ---------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"^L?(\d{1,7})$")
_IDENT = re.compile(r"^~?[A-Za-z_][\w]*(?:::~?[A-Za-z_]\w*)*$")


def code_shaped(term: str) -> str:
    """"line" (a line number), "location" (PATH:LINE), "name" (an identifier with `_`, `::` or
    a camel hump) or "" for words the code tables do not answer."""
    t = term.strip()
    if _NUMBER.match(t):
        return "line"
    if _LOCATION.match(t) and ("/" in t or "." in t.split(":")[0] or "#L" in t or t.count(":") >= 1) \
            and not t.startswith(("http:", "https:")):
        return "location"
    if _IDENT.match(t) and ("_" in t or "::" in t or re.search(r"[a-z][A-Z]", t)):
        return "name"
    return ""


def _hit(kind: str, ident: str, name: str, text: str) -> dict:
    return {"type": kind, "id": ident, "name": {"en": name, "zh": name}, "score": 0.0,
            "snippet": {"field": "code", "lang": "", "text": text}}


def _line_hits(places: list[PlaceView]) -> list[dict]:
    out = []
    for p in places:
        if not p["covering"] and p["function"] is None:
            continue
        labels = ", ".join(dict.fromkeys(c["owner"]["label"] for c in p["covering"])) or "no pin covers it"
        fn = p["function"]
        where_ = f"in {fn['qualified']} (lines {fn['start']}-{fn['end']})" if fn else ""
        out.append(_hit("line", f"{p['repo']}@{p['commit'][:12]}:{p['path']}:{p['line']}", labels, where_))
    return out


def _name_hits(pins: PinTable, code: CodeTable | None, name: str, limit: int) -> list[dict]:
    if code is None:
        return []
    last = name.split("::")[-1]
    defs = [d for d in code.definitions(last) if d[5] == name or d[5].endswith("::" + name) or name == last]
    out = []
    for repo, commit, path, start, end, qualified in defs[:limit]:
        cites = [c for a, b, c in pins.citations((repo, commit, path)) if a <= end and b >= start]
        labels = ", ".join(dict.fromkeys(c["owner"]["label"] for c in cites))
        out.append(_hit("function", f"{repo}@{commit[:12]}:{path}:{start}", qualified,
                        f"lines {start}-{end}" + (f"; cited by {labels}" if labels else "")))
    return out


def code_hits(pins: PinTable, code: CodeTable | None, term: str, limit: int = 10) -> list[dict]:
    """The hits the code tables give for a term: the pins (and function) at a line of every pinned
    file for a bare number, at PATH:LINE for a location, and the definitions of a function name;
    cited places first."""
    shape = code_shaped(term)
    if shape == "line":
        line = int(_NUMBER.match(term.strip())[1])  # type: ignore[index]
        keys = pins.covering_line(line)
        places = [place(pins, code, k, line) for k in keys]
        return _line_hits(places)[:limit]
    if shape == "location":
        places = where(pins, code, parse_location(term))
        places.sort(key=lambda p: not p["covering"])
        return _line_hits(places)[:limit]
    if shape == "name":
        return _name_hits(pins, code, term.strip(), limit)
    return []
