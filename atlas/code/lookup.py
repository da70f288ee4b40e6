"""The fast path of `atlas where` and `atlas source`: two small cached tables, so that a lookup
reads a few files instead of loading the atlas or building the code index.

- The pin table (`pins-<data key>.marshal`, from the atlas alone, no clone needed): every pinned
  file with its pins, each with its owner and its evidence view; which pins each concept and flow
  step owns; the flows' titles. `atlas query` reads it too (a line number, `file:line`).
- The code table (`codetab-<key>/`, keyed by the data, the clones folder, the hops and a stamp of
  each clone's object store): `files.marshal` lists the indexed files (blob, language, lines, hop),
  what could not be read, and each function name's definitions; one small entry per file holds its
  functions with their calls (each linked to its targets) and their callers. It is written from
  the whole code index (`build.index_atlas`) the first time a lookup needs it, once per change of
  the data or the clones; a lookup then costs a `stat` per clone and two small reads.

The answers are plain, JSON-ready dicts whose shapes are declared in `atlas.code.shapes`
(`PlaceView`, `FunctionView`, `ExcerptView`): the terminal, the JSON and the site show them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..index import cache
from . import store
from ..model.core import Atlas
from ..view.views import Owner, evidence as evidence_view, owned_evidence, owner as owner_view

if TYPE_CHECKING:  # the shapes cost start-up time as classes; the type checker reads them here
    from .shapes import CallView, CallerView, CitationView, DefinitionRef, FunctionView

FileKey = tuple[str, str, str]  # repo, commit, path
VERSION = 4  # 3: a pinned file's lines are split at \n only; 4: each call carries its confidence
NAMES = "names.marshal"  # in a code table: function name -> its definitions
KEPT_TARGETS = 50  # a call's candidates kept in the table (its `candidates` counts them all)
KEPT_CALLERS = 200  # a function's callers kept in the table (its `callers_total` counts them all)

# ---------------------------------------------------------------------------------------------
# The pin table (from the atlas)
# ---------------------------------------------------------------------------------------------


def _pin_rows(atlas: Atlas) -> dict:
    files: dict[FileKey, list] = {}
    owned: dict[tuple[str, ...], list] = {}
    for o, e in owned_evidence(atlas):
        if e.pin is None:
            continue
        p = e.pin
        row = (p.start, p.end, tuple(o), dict(evidence_view(atlas, e)))
        files.setdefault((p.repo, p.sha, p.path), []).append(row)
        owned.setdefault(tuple(o), []).append((p.repo, p.sha, p.path, p.start, p.end))
    flows = {f.id: (f.title.en, f.title.zh, [s.id for s in f.ordered_steps()]) for f in atlas.flows}
    return {"version": VERSION, "files": files, "owned": owned, "flows": flows,
            "repos": {r.id: (r.urls[0] if r.urls else "") for r in atlas.repositories}}


class PinTable:
    """Every pinned file and its pins; see the module's docstring."""

    def __init__(self, value: dict):
        self.files: dict[FileKey, list] = value["files"]
        self.owned: dict[tuple[str, ...], list] = value["owned"]
        self.flows: dict[str, tuple[str, str, list[str]]] = value["flows"]
        self.repos: dict[str, str] = value["repos"]

    def pinned_repos(self) -> list[str]:
        return sorted({k[0] for k in self.files})

    def citations(self, key: FileKey) -> list[tuple[int, int, CitationView]]:
        return [(a, b, {"owner": owner_view(Owner(*o)), "evidence": ev}) for a, b, o, ev in self.files.get(key, [])]

    def matching(self, repo: str | None, path: str, commit: str | None) -> list[FileKey]:
        return [k for k in self.files if _wanted(k, repo, path, commit)]

    def covering_line(self, line: int) -> list[FileKey]:
        """The pinned files with a pin that holds `line`, whatever the path."""
        return sorted(k for k, rows in self.files.items() if any(a <= line <= b for a, b, _o, _e in rows))


def open_pins(key: str, materialise: Callable[[], Atlas]) -> PinTable:
    """The pin table of the compiled atlas `key`; written (from `materialise()`) when missing."""
    f = cache.path("pins", key)
    value = cache.read(f)
    if not (isinstance(value, dict) and value.get("version") == VERSION):
        value = _pin_rows(materialise())
        cache.write(f, value, sync=False)
    return PinTable(value)


def path_matches(path: str, wanted: str) -> bool:
    """`wanted` is the path, or its end after a `/` (`dispatch.h` matches `src/op/dispatch.h`)."""
    wanted = wanted.lstrip("/")
    return path == wanted or path.endswith("/" + wanted)


def _wanted(key: FileKey, repo: str | None, path: str, commit: str | None) -> bool:
    r, c, p = key
    return (repo is None or r.lower() == repo.lower()) and (commit is None or c.startswith(commit)) \
        and path_matches(p, path)


# ---------------------------------------------------------------------------------------------
# The code table (from the code index)
# ---------------------------------------------------------------------------------------------


def _found_clones(repos: list[str], root: Path) -> dict[str, tuple[str, str]]:
    """repo -> (git directory, common directory) of the clones under `root`. Where they were found
    is remembered (`clones-<root>.marshal`) while `root` and its `local.yaml` keep their times and
    the clone is still there; a repository without a clone is looked for every time."""
    top = str(root)
    stamp = [_mtime(top), _mtime(os.path.join(top, "local.yaml"))]
    if not stamp[0]:
        return {}
    memo = cache.path("clones", cache.crc(top))
    known = cache.read(memo)
    fresh = isinstance(known, dict) and known.get("stamp") == stamp
    found: dict[str, tuple[str, str]] = {}
    if fresh:
        found = {r: v for r, v in known["found"].items() if r in repos and _mtime(os.path.join(v[1], "objects"))}
    missing = [r for r in repos if r not in found]
    if missing:
        from ..harvest import locate

        mapping = locate.local_map(root)
        for rid in missing:
            clone = locate.find_clone(rid, root, mapping)
            if clone is not None:
                found[rid] = (str(clone.gitdir), str(clone.commondir))
    if not (fresh and known.get("found") == found):
        cache.write(memo, {"stamp": stamp, "found": found}, sync=False)
    return found


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def clone_stamp(repos: list[str], root: Path) -> tuple[dict[str, str], str]:
    """({repo: git directory} of the clones found, a stamp that changes when any clone's object
    store does): a `stat` of `objects/`, `objects/pack/` and `objects/info/` per clone."""
    parts = [str(root)]
    found = _found_clones(repos, root)
    for rid in sorted(found):
        gitdir, common = found[rid]
        stamps = [_mtime(os.path.join(common, sub)) for sub in ("objects", "objects/pack", "objects/info")]
        parts.append(f"{rid}={gitdir}:{stamps}")
    return {r: g for r, (g, _c) in found.items()}, cache.crc("\n".join(parts))


def _file_entry(fkey: FileKey) -> str:
    import zlib

    text = "\0".join(fkey).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}{len(text):04x}.marshal"


def _ref(d) -> DefinitionRef:
    return {"repo": d.repo, "commit": d.commit, "path": d.path, "start": d.start, "end": d.end,
            "name": d.name, "qualified": d.qualified}


def function_view(index, fn) -> FunctionView:
    """A function of the code index with its linked calls and its callers."""
    calls: list[CallView] = [{"line": lk.call.line, "col": lk.call.col, "name": lk.call.name,
                              "text": lk.call.text or lk.call.name, "status": lk.status,
                              "confidence": lk.confidence,
                              "targets": [_ref(t) for t in lk.targets], "candidates": len(lk.targets),
                              "concepts": list(lk.concepts)}
                             for lk in index.callees(fn)]
    callers: list[CallerView] = [{"repo": lk.caller.repo, "commit": lk.caller.commit, "path": lk.caller.path,
                                  "line": lk.call.line, "function": lk.caller.qualified, "start": lk.caller.start}
                                 for lk in index.callers(fn)]
    callers.sort(key=lambda c: (c["repo"], c["commit"], c["path"], c["line"]))
    return {"name": fn.name, "qualified": fn.qualified, "start": fn.start, "end": fn.end,
            "calls": calls, "callers": callers, "callers_total": len(callers)}


class _Defs:
    """The definitions one table entry refers to, each stored once (a popular callee or caller
    appears in thousands of calls)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.ids: dict[tuple, int] = {}

    def id(self, row: tuple) -> int:
        if row not in self.ids:
            self.ids[row] = len(self.rows)
            self.rows.append(row)
        return self.ids[row]


def pack(functions: list[FunctionView]) -> dict:
    """A file's functions as a compact table entry (definitions shared, long lists cut to the
    kept sizes, their totals kept)."""
    defs = _Defs()
    rows = []
    for fn in functions:
        calls = [(c["line"], c["col"], c["name"], c["text"], c["status"], c["confidence"], c["candidates"],
                  c["concepts"],
                  [defs.id((t["repo"], t["commit"], t["path"], t["start"], t["end"], t["name"], t["qualified"]))
                   for t in c["targets"][:KEPT_TARGETS]]) for c in fn["calls"]]
        callers = [(defs.id((c["repo"], c["commit"], c["path"], c["start"], 0, "", c["function"])), c["line"])
                   for c in fn["callers"][:KEPT_CALLERS]]
        rows.append((fn["name"], fn["qualified"], fn["start"], fn["end"], calls, callers, fn["callers_total"]))
    return {"defs": defs.rows, "functions": rows}


def unpack(entry: dict) -> list[FunctionView]:
    defs = entry["defs"]

    def ref(i: int) -> DefinitionRef:
        repo, commit, path, start, end, name, qualified = defs[i]
        return {"repo": repo, "commit": commit, "path": path, "start": start, "end": end, "name": name,
                "qualified": qualified}

    out: list[FunctionView] = []
    for name, qualified, start, end, calls, callers, total in entry["functions"]:
        out.append({"name": name, "qualified": qualified, "start": start, "end": end, "callers_total": total,
                    "calls": [{"line": line, "col": col, "name": cname, "text": text, "status": status,
                               "confidence": sure, "candidates": count, "concepts": concepts,
                               "targets": [ref(i) for i in ids]}
                              for line, col, cname, text, status, sure, count, concepts, ids in calls],
                    "callers": [{"repo": defs[i][0], "commit": defs[i][1], "path": defs[i][2], "line": line,
                                 "function": defs[i][6], "start": defs[i][3]} for i, line in callers]})
    return out


def code_table(index) -> tuple[dict, dict[str, dict]]:
    """The code table of a built index: its head (`files.marshal`) and its entries by file name."""
    names: dict[str, list] = {}
    files: dict[FileKey, tuple] = {}
    entries: dict[str, dict] = {}
    for f in index.files:
        entries[_file_entry(f.key)] = pack([function_view(index, fn) for fn in index.functions_in(f)])
        files[f.key] = (f.blob, f.language, f.lines, f.hop)
        for fn in f.functions:
            names.setdefault(fn.name, []).append((f.repo, f.commit, f.path, fn.start, fn.end, fn.qualified))
    head = {"version": VERSION, "files": files, "hops": index.hops,
            "missing": [tuple(m) for m in index.missing], "unindexed": [tuple(u) for u in index.unindexed]}
    entries[NAMES] = names
    return head, entries


def write_code_table(folder: Path, head: dict, entries: dict[str, dict]) -> None:
    """Write a code table into `folder` (one rename; a cache that cannot be written costs speed only)."""
    try:
        with cache.atomic_dir(folder) as tmp:
            for name, value in entries.items():
                cache.write(tmp / name, value, sync=False)
            cache.write(tmp / "files.marshal", head, sync=False)
    except OSError:
        pass


class CodeTable:
    """The indexed files and, per file, its functions, calls and callers (read on demand)."""

    def __init__(self, folder: Path, head: dict, clones: dict[str, str], entries: dict[str, dict] | None = None):
        self.folder = folder
        self.files: dict[FileKey, tuple] = head["files"]
        self._names: dict[str, list] | None = None
        self.hops: int = head["hops"]
        self.missing: list[tuple] = head["missing"]
        self.unindexed: list[tuple] = head["unindexed"]
        self.clones = clones  # repo -> git directory
        self._entries: dict[FileKey, list[FunctionView]] = {}
        self._raw: dict[FileKey, dict] = {}
        self._built = entries or {}  # a table just built: its entries, in case the cache was not written

    def definitions(self, name: str) -> list[tuple]:
        """(repo, commit, path, start, end, qualified) of every indexed function called `name`."""
        if self._names is None:
            value = self._built.get(NAMES) or cache.read(self.folder / NAMES)
            self._names = value if isinstance(value, dict) else {}
        return self._names.get(name, [])

    def has(self, key: FileKey) -> bool:
        return key in self.files

    def matching(self, repo: str | None, path: str, commit: str | None) -> list[FileKey]:
        return [k for k in self.files if _wanted(k, repo, path, commit)]

    def _entry(self, key: FileKey) -> dict:
        if key not in self._raw:
            value = self._built.get(_file_entry(key)) or cache.read(self.folder / _file_entry(key))
            ok = isinstance(value, dict) and isinstance(value.get("defs"), list)
            self._raw[key] = value if ok else {}
        return self._raw[key]

    def functions(self, key: FileKey) -> list[FunctionView]:
        if key not in self.files:
            return []
        if key not in self._entries:
            entry = self._entry(key)
            self._entries[key] = unpack(entry) if entry else []
        return self._entries[key]

    def text(self, key: FileKey) -> list[str] | None:
        """The lines of a pinned file, kept in the table (None: read it from the clone)."""
        if key not in self.files:
            return None
        lines = self._entry(key).get("text")
        return lines if isinstance(lines, list) else None

    def enclosing(self, key: FileKey, line: int) -> FunctionView | None:
        inside = [fn for fn in self.functions(key) if fn["start"] <= line <= fn["end"]]
        return min(inside, key=lambda fn: (fn["end"] - fn["start"], -fn["start"])) if inside else None

    def overlapping(self, key: FileKey, start: int, end: int) -> list[FunctionView]:
        """The innermost functions that hold or overlap lines start..end, in line order."""
        inner = self.enclosing(key, start)
        if inner is not None and inner["end"] >= end:
            return [inner]
        found = [fn for fn in self.functions(key) if fn["start"] <= end and fn["end"] >= start]
        outer = [fn for fn in found if not any(o is not fn and fn["start"] <= o["start"] and o["end"] <= fn["end"]
                                               and (o["start"], o["end"]) != (fn["start"], fn["end"]) for o in found)]
        return sorted(outer, key=lambda fn: fn["start"])

    def blob(self, key: FileKey) -> str:
        return self.files[key][0] if key in self.files else ""

    def lines(self, key: FileKey) -> int:
        return self.files[key][2] if key in self.files else 0

    def language(self, key: FileKey) -> str:
        return self.files[key][1] if key in self.files else ""


def code_key(data_key: str, root: Path, hops: int, stamp: str) -> str:
    """The code table's key: the data's content (not the folder holding it: a second data folder with
    the same files, such as an installed copy, shares the table), this code, the clones and hops."""
    content = data_key.split("-", 1)[0]
    return cache.crc(f"{content}\0{cache.code_key()}\0{root}\0{hops}\0{stamp}")


def open_code(data_key: str, pins: PinTable, root: Path, hops: int, materialise: Callable[[], Atlas],
              build: bool = True, progress: Callable[[str], Any] | None = None) -> CodeTable | None:
    """The code table for these data, clones and hops: read from the cache, else (with `build`)
    built from the code index and written. None when there is no clone of any pinned repository,
    or when it is not cached and `build` is False."""
    clones, stamp = clone_stamp(pins.pinned_repos(), root)
    from ..harvest import loose

    copies = loose.listing(root) if os.path.isdir(root) else []
    if not clones and not copies:
        return None
    stamp = cache.crc(f"{stamp}\0{loose.stamp(copies)}") if copies else stamp
    folder = cache.path("codetab", code_key(data_key, root, hops, stamp), "")
    head = cache.read(folder / "files.marshal")
    if isinstance(head, dict) and head.get("version") == VERSION:
        return CodeTable(folder, head, clones)
    if not build:
        return None
    if progress is not None:
        found = f"{len(clones)} clone(s)" + (" and the loose copies" if copies else "")
        progress(f"indexing the code behind the pins in {found}, {hops} hop(s); "
                 "this is done once per change of the data or the clones")
    from .build import index_atlas

    head, entries = code_table(index_atlas(materialise(), root, hops=hops))
    add_texts(entries, head, [k for k in pins.files if k in head["files"]], clones, root)
    write_code_table(folder, head, entries)
    cache.evict(keep={folder.name, store.folder().name})  # a new table: keep the cache within its bound
    return CodeTable(folder, head, clones, entries)


def add_texts(entries: dict[str, dict], head: dict, keys: list[FileKey], clones: dict[str, str],
              root: Path | None = None) -> None:
    """Keep the lines of the pinned files in their entries, so that `atlas source` of a pin starts
    no git (one `git cat-file --batch` per repository, now). A file no clone holds was indexed
    from a loose copy under `root` with its blob id, and is read from there again."""
    from ..harvest.loose import LooseCopies
    from .gitread import GitReader, blob_lines

    by_repo: dict[str, list[FileKey]] = {}
    for key in keys:
        by_repo.setdefault(key[0], []).append(key)
    copies: LooseCopies | None = None
    for repo, wanted in by_repo.items():
        blobs = {k: head["files"][k][0] for k in wanted}
        data = GitReader(Path(clones[repo]), repo).contents(sorted(set(blobs.values()))) if repo in clones else {}
        for b in set(blobs.values()):
            if data.get(b) is None and root is not None:
                copies = copies if copies is not None else LooseCopies(root)
                data[b] = copies.read(b)
        for k in wanted:
            got = data.get(blobs[k])
            if got is not None:
                entries[_file_entry(k)]["text"] = blob_lines(got)
