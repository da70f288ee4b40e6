"""The API history of one repository: its public symbols replayed over the first-parent mainline
(docs/history.md, "The public API").

The one pass over the history hands over, for each mainline commit, the changes of public files
(path, old blob, new blob). Each blob is parsed once (`code.decls`, cached by blob); the symbols of
the public files are then kept up to date commit by commit, and a symbol's events are recorded where
it appears, disappears or changes its signature. A symbol that first appears at a merge gets the
side-branch commit that introduced it (the first of `git rev-list --topo-order --reverse M^2.. ^M^1`
whose public files declare it). Releases come last: the public files at each release's commit, and
for each symbol its first release: the first release, in release order, whose tree declares it (the
first column of its release grid that is not absent; none when no release ships it).

Missing blobs (a partial or incomplete clone) are never guessed: a first appearance after a commit
whose public files held a missing blob is `on-or-before`, and a later event at a commit whose public
files (or its parent's) held one is `uncertain`.
"""
from __future__ import annotations

from typing import Callable

from ..index.cache import crc
from .gitformat import Commit
from .publicfiles import TreeReader

Key = tuple[str, str]  # (kind, name)
Decl = tuple[int, str, str]  # (line, signature, canonical signature)
NULL = "0" * 40
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def is_null(blob: str) -> bool:
    return not blob.strip("0")


class Declarations:
    """The symbols of header blobs: blob -> {key: [Decl]}, or None for a blob the clone lacks. Parses
    are cached by blob (`code.store`) under the rules' version and the decorations; a cached parse is
    used only for a blob the clone holds, so that the answers depend on the clone alone."""

    def __init__(self, read_blobs: Callable[[list[str]], dict[str, bytes]], kinds: list[str],
                 decorations: list[str], present: Callable[[list[str]], set[str]] | None = None):
        from ..code.decls import VERSION

        self.read_blobs = read_blobs
        self.present = present
        self.kinds = set(kinds)
        self.decorations = tuple(sorted(decorations))
        self.variant = crc(f"{VERSION}\0" + "\0".join(self.decorations))
        self.memo: dict[str, dict[Key, list[Decl]] | None] = {}
        self.texts: dict = {}  # what each declaration's text gave (`decls.declarations`' memo)
        self.trees: dict[str, list] = {}  # path -> [source, tree] of its last version parsed
        self._texts: dict[str, dict[Key, frozenset]] = {}

    def prefetch(self, blobs, paths: list[str] | None = None) -> None:
        """Parse every blob not known yet (one `git cat-file --batch` for those not cached). With
        `paths` (the path of each blob, in history order) a version is parsed from the last version
        of the same path (tree-sitter reparses what changed)."""
        from ..code import store
        from ..code.decls import declarations

        blobs = list(blobs)
        path_of = dict(zip(blobs, paths)) if paths is not None else {}
        todo = [b for b in dict.fromkeys(blobs) if b not in self.memo and not is_null(b)]
        held = self.present(todo) if self.present is not None and todo else set(todo)
        unread = []
        for b in todo:
            if b not in held:
                self.memo[b] = None
                continue
            cached = store.load_decls(b, self.variant)
            if cached is None:
                unread.append(b)
            else:
                self.memo[b] = self._keyed(cached)
        got = self.read_blobs(unread) if unread else {}
        for b in unread:
            data = got.get(b)
            if data is None:
                self.memo[b] = None
                continue
            previous = self.trees.setdefault(path_of[b], []) if b in path_of else None
            decls = declarations(data, self.decorations, self.texts, previous)
            store.save_decls(b, self.variant, decls)
            self.memo[b] = self._keyed(decls)

    def _keyed(self, decls: list) -> dict[Key, list[Decl]]:
        out: dict[Key, list[Decl]] = {}
        for kind, name, line, sig, can in decls:
            if kind in self.kinds:
                out.setdefault((kind, name), []).append((line, sig, can))
        return out

    def of(self, blob: str) -> dict[Key, list[Decl]] | None:
        if blob not in self.memo:
            self.prefetch([blob])
        return self.memo[blob]

    def signatures_of(self, blob: str | None) -> dict[Key, frozenset]:
        """key -> its declarations' (signature, canonical) pairs in this blob, without their lines:
        what a new version of a file must change for a symbol to be judged again."""
        if blob is None:
            return {}
        got = self._texts.get(blob)
        if got is None:
            got = {k: frozenset((sig, can) for _line, sig, can in ds) for k, ds in (self.of(blob) or {}).items()}
            self._texts[blob] = got
        return got


def signature(decls: dict[str, list[Decl]]) -> tuple[str, str]:
    """(the signature as shown: each distinct declaration once, in file and line order; the key it is
    compared by: the distinct canonical forms, sorted)."""
    rows = sorted((p, line, sig, can) for p, ds in decls.items() for line, sig, can in ds)
    return " | ".join(dict.fromkeys(r[2] for r in rows)), "\n".join(sorted({r[3] for r in rows}))


class Symbol:
    __slots__ = ("history", "present", "display", "canon", "introduced", "introduced_date", "note")

    def __init__(self, history: list, present: bool, display: str = "", canon: str = ""):
        self.history, self.present, self.display, self.canon = history, present, display, canon
        self.introduced = self.introduced_date = self.note = ""


class Replay:
    """The public files and their symbols, commit by commit (see the module's docstring)."""

    def __init__(self, decls: Declarations, shallow: bool = False):
        self.decls = decls
        self.shallow = shallow
        self.files: dict[str, str] = {}  # path -> blob
        self.current: dict[Key, dict[str, list[Decl]]] = {}
        self.unread: dict[str, str] = {}  # path -> its missing blob, in the current state
        self.symbols: dict[Key, Symbol] = {}
        self.firsts: dict[Key, Commit] = {}  # first appearances in this run
        self.first_missing: int | None = None  # the first commit index whose public files held a missing blob
        self.missing: dict[str, set[str]] = {}  # every missing blob met -> paths
        self.index = -1

    # -- the state ------------------------------------------------------------------------------

    def _put(self, path: str, blob: str) -> set[Key]:
        self.files[path] = blob
        found = self.decls.of(blob)
        if found is None:
            self.unread[path] = blob
            self.missing.setdefault(blob, set()).add(path)
            return set()
        for key, ds in found.items():
            self.current.setdefault(key, {})[path] = ds
        return set(found)

    def _drop(self, path: str) -> set[Key]:
        blob = self.files.pop(path, None)
        self.unread.pop(path, None)
        if blob is None:
            return set()
        found = self.decls.of(blob) or {}
        for key in found:
            where = self.current.get(key)
            if where is not None:
                where.pop(path, None)
                if not where:
                    del self.current[key]
        return set(found)

    def start(self, files: dict[str, str], stored: dict[Key, dict]) -> bool:
        """Continue from a stored harvest: its public files at its cut-off head and its symbols. False
        when the two disagree (the stored file cannot be continued; read the whole history)."""
        self.decls.prefetch(files.values())
        for path, blob in sorted(files.items()):
            self._put(path, blob)
        if self.unread:
            return False
        for key, rec in stored.items():
            if not rec["history"]:
                continue  # only in releases: not a mainline symbol
            present = key in self.current
            if present != (rec["history"][-1][2] != "removed"):
                return False
            sym = Symbol([list(e) for e in rec["history"]], present)
            if present:
                sym.display, sym.canon = signature(self.current[key])
            sym.introduced, sym.introduced_date, sym.note = rec["introduced"], rec["introduced_date"], rec["note"]
            self.symbols[key] = sym
        return all(key in self.symbols for key in self.current)

    # -- one commit -----------------------------------------------------------------------------

    def commit(self, c: Commit, changes: list[tuple[str, str, str]]) -> None:
        self.index += 1
        held_before = bool(self.unread)
        touched: set[Key] = set()
        for path, _old, new in changes:
            before = self.decls.signatures_of(self.files.get(path))
            self._drop(path)
            if not is_null(new):
                self._put(path, new)
            after = self.decls.signatures_of(self.files.get(path))
            # only a symbol whose declarations in this file changed (not just moved) is judged again
            touched.update(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        held = bool(self.unread)
        if held and self.first_missing is None:
            self.first_missing = self.index
        for key in touched:
            self._judge(key, c, held_before or held)

    def _judge(self, key: Key, c: Commit, doubt: bool) -> None:
        where = self.current.get(key)
        sym = self.symbols.get(key)
        if sym is None:
            if where:
                self._first(key, c, where)
            return
        present = bool(where)
        display, canon = signature(where) if where else ("", "")
        event = ("added" if present and not sym.present else "removed" if sym.present and not present
                 else "changed" if present and canon != sym.canon else "")
        if event:
            sym.history.append([c.sha, c.committer_date, event, display, "uncertain" if doubt else "exact"])
        if present:
            sym.display, sym.canon = display, canon
        sym.present = present

    def _first(self, key: Key, c: Commit, where: dict[str, list[Decl]]) -> None:
        display, canon = signature(where)
        notes = []
        precision = "exact"
        if self.shallow:
            precision = "on-or-before"
            notes.append("shallow clone: the history before its first commit is missing")
        elif not c.parents:
            precision = "on-or-before"
            notes.append("present in the root commit: it may be older than the repository (an import of "
                         "earlier history)")
        if self.first_missing is not None and self.first_missing < self.index:
            precision = "on-or-before"
            blobs = sorted(self.missing)
            notes.append(f"{len(blobs)} public blob(s) missing from the clone at earlier commits could hold an "
                         "earlier appearance: " + ", ".join(b[:12] for b in blobs[:5]) + (" ..." if len(blobs) > 5
                                                                                          else ""))
        sym = Symbol([[c.sha, c.committer_date, "added", display, precision]], True, display, canon)
        sym.introduced, sym.introduced_date, sym.note = c.sha, c.committer_date, "; ".join(notes)
        self.symbols[key] = sym
        self.firsts[key] = c

    def where(self, key: Key) -> list[list]:
        return [[p, line] for p, line in sorted({(p, d[0]) for p, ds in self.current.get(key, {}).items()
                                                 for d in ds})]


# -- merges ---------------------------------------------------------------------------------------


def introductions(g, reader: TreeReader, decls: Declarations, replay: Replay) -> None:
    """For the symbols first seen at a mainline merge M: the side-branch commit that introduced each
    (the first of `git rev-list --topo-order --reverse M^2.. ^M^1` whose public files declare it; M when
    none does). Missing blobs on the side make the answer an upper bound: `on-or-before`, with a note."""
    by_merge: dict[str, list[Key]] = {}
    merges: dict[str, Commit] = {}
    for key, c in replay.firsts.items():
        if len(c.parents) > 1:
            by_merge.setdefault(c.sha, []).append(key)
            merges[c.sha] = c
    for sha, keys in by_merge.items():
        m = merges[sha]
        side, _edge = g.rev_list([*m.parents[1:], "^" + m.parents[0]])
        found, doubt = _side_hits(reader, decls, side, set(keys))
        for key in keys:
            _merge_note(replay.symbols[key], m, found.get(key), doubt.get(key, []), reader)


def _side_hits(reader: TreeReader, decls: Declarations, side: list[str], keys: set[Key]):
    """(key -> the first side commit declaring it, key -> the missing blobs met up to it)."""
    found: dict[Key, str] = {}
    met: list[str] = []
    doubt: dict[Key, list[str]] = {}
    files_of = {s: reader.public_files(s) for s in side}
    decls.prefetch(b for files in files_of.values() for b in files.values())
    for s in side:
        here: set[Key] = set()
        for blob in files_of[s].values():
            got = decls.of(blob)
            if got is None:
                met.append(blob)
            else:
                here |= set(got)
        for key in keys - set(found):
            if key in here:
                found[key] = s
                if met:
                    doubt[key] = list(dict.fromkeys(met))
    for key in keys - set(found):
        if met:
            doubt[key] = list(dict.fromkeys(met))
    return found, doubt


def _merge_note(sym: Symbol, m: Commit, side: str | None, doubt: list[str], reader: TreeReader) -> None:
    if side is not None:
        info = reader.commit(side)
        sym.introduced, sym.introduced_date = side, info.committer_date
        text = f"merged at {m.sha[:12]}; introduced on the side branch by {side[:12]}"
    else:
        text = f"first visible at the merge {m.sha[:12]} itself (no side-branch commit declares it)"
    if doubt:
        sym.history[0][4] = "on-or-before"
        text += (" or earlier" if side else "") + f": {len(doubt)} public blob(s) missing from the clone on the " \
            "merged side could hold an earlier appearance: " + ", ".join(b[:12] for b in doubt[:5])
    sym.note = "; ".join(filter(None, [sym.note, text]))


# -- releases -------------------------------------------------------------------------------------


def release_states(reader: TreeReader, decls: Declarations, releases) -> tuple[list[dict], list[int]]:
    """For each release (in order): key -> (signature shown, canonical); and how many of its public
    files the clone cannot read."""
    states: list[dict] = []
    unread: list[int] = []
    files_of = [reader.public_files(t.commit) for t in releases]
    decls.prefetch(b for files in files_of for b in files.values())
    for files in files_of:
        where: dict[Key, dict[str, list[Decl]]] = {}
        missing = 0
        for path, blob in files.items():
            got = decls.of(blob)
            if got is None:
                missing += 1
                continue
            for key, ds in got.items():
                where.setdefault(key, {})[path] = ds
        states.append({key: signature(w) for key, w in where.items()})
        unread.append(missing)
    return states, unread


def release_column(key: Key, states: list[dict]) -> tuple[str, list[str]]:
    """A symbol's presence at each release: '.' absent, else a letter naming its signature there (the
    same letter for the same canonical signature), and the signatures the letters name."""
    letters: dict[str, int] = {}
    shown: list[str] = []
    out = []
    for state in states:
        got = state.get(key)
        if got is None:
            out.append(".")
            continue
        display, canon = got
        if canon not in letters:
            letters[canon] = len(shown)
            shown.append(display)
        i = letters[canon]
        out.append(ALPHABET[i] if i < len(ALPHABET) else "?")
    return "".join(out), shown


def first_release(column: str, names: list[str]) -> str:
    """The first release of a symbol: the name of the first release (in release order) whose tree
    declares it, read from its release column; "" when no release ships it. The grid and the card
    read this one answer."""
    for name, letter in zip(names, column):
        if letter != ".":
            return name
    return ""


def records(replay: Replay, states: list[dict], names: list[str]) -> list[dict]:
    """The symbols as the file stores them (apifile.SYMBOL_KEYS); `names` are the releases' names in
    release order (one per state)."""
    out = []
    keys = set(replay.symbols) | {k for state in states for k in state}
    for key in keys:
        sym = replay.symbols.get(key)
        column, shown = release_column(key, states)
        if sym is None:  # only in releases: never on the mainline up to the cut-off
            out.append({"kind": key[0], "name": key[1], "history": [], "introduced": "", "introduced_date": "",
                        "note": "not on the mainline up to the cut-off; present in releases only",
                        "signature": shown[0] if shown else "", "where": [],
                        "first_release": first_release(column, names),
                        "releases": column, "release_signatures": shown})
            continue
        out.append({"kind": key[0], "name": key[1], "history": sym.history, "introduced": sym.introduced,
                    "introduced_date": sym.introduced_date, "note": sym.note,
                    "signature": sym.display if sym.present else (sym.history[-1][3] if sym.history[-1][3]
                                                                  else _last_signature(sym.history)),
                    "where": replay.where(key), "first_release": first_release(column, names),
                    "releases": column, "release_signatures": shown})
    return out


def _last_signature(history: list) -> str:
    return next((e[3] for e in reversed(history) if e[3]), "")
