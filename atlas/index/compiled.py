"""The compiled index: the atlas of a data folder kept in the user's cache (atlas.index.database), so that
a query neither parses YAML nor loads the whole atlas, and an edit costs what it changes.

Freshness. The index remembers, per data file, its content hash and its stat stamp (size, mtime,
ctime, inode), and the stamp of every folder of the data folder. A query stats them: when nothing
moved, the index is current. Otherwise the files whose stamp moved are read and hashed, and only
those whose content changed are applied to the index (atlas.index.update). ctime cannot be set back by
a user, so an edit that restores the mtime (`cp -p`, `rsync -t`) is seen; a file whose times fall
within `RACY_NS` of the moment its stamp was taken is hashed again by every query until a later
stamp covers it (git's "racily clean" rule), so two edits within one timestamp tick are seen too.

`open_index` gives the current index; `load_keyed` / `load_atlas` the atlas (a whole-atlas load:
only for commands that need one); `validate` everything with every problem.
"""
from __future__ import annotations

import marshal
import operator
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..model import apifile
from . import cache, database as store
from .. import progress
from .cache import crc
from ..errors import AtlasError, Location
from ..model.core import Atlas
from ..paths import data_dir as resolve_data_dir
from ..model.walk import list_files

if TYPE_CHECKING:
    import sqlite3

RACY_NS = 2_000_000_000  # timestamps this close to the stamp's own time prove nothing


def content_hash(data: bytes) -> str:
    """The content hash of a data file (BLAKE2b, 160 bits: about twice as fast as SHA-256 here)."""
    import hashlib

    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _stamp(path: str):
    try:
        return _STAMP(os.stat(path))
    except OSError:
        return None


def _racy(stamp, taken: int) -> bool:
    return stamp is None or max(stamp[1], stamp[2]) >= taken - RACY_NS


_STAMP = operator.attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")
_MISSING = (-1, -1, -1, -1)


def _stats(paths) -> bytes:
    """The stat stamps of `paths`, (size, mtime, ctime, inode) each ((-1, -1, -1, -1) for a missing
    file), as one marshalled list (format 2: no shared references, so equal stamps give equal bytes).
    Every query compares these bytes with the stored ones; the loop is what a query pays per data file."""
    try:
        rows = list(map(_STAMP, map(os.stat, paths)))
    except OSError:  # a file is gone: stamp the others, one at a time
        rows = [_stamp(path) or _MISSING for path in paths]
    return marshal.dumps(rows, 2)


def unchanged(stamps) -> bool:
    """True when no data file or folder moved since `stamps` were taken (see the module)."""
    if not isinstance(stamps, dict):
        return False
    for path, *old in stamps["folders"]:
        if _stamp(path) != tuple(old):
            return False
    if _stats(stamps["paths"]) != stamps["stats"]:
        return False
    if stamps["racy_folders"] and not _same_files(stamps):
        return False  # a file came or went within a folder's timestamp tick
    for path, sha in stamps["racy"]:
        try:
            with open(path, "rb") as fh:
                if content_hash(fh.read()) != sha:
                    return False
        except OSError:
            return False
    return True


def _unsettled(stamps: dict) -> bool:
    """Files or folders that were racy when the stamps were taken, and no longer are: a new stamp
    lets the next queries trust their stat again instead of hashing them each time."""
    return bool(stamps["racy"] or stamps["racy_folders"]) and time.time_ns() - stamps["taken"] > RACY_NS


def _same_files(stamps: dict) -> bool:
    """The walk lists the same files as the stamps (folders changed within their timestamp tick
    when the stamps were taken: only a walk tells whether files came or went)."""
    root = stamps["root"]
    listing = list_files(Path(root))
    return not listing.problems and \
        [os.path.join(root, rel) for rel, _, _ in listing.files] == stamps["paths"]


# ---------------------------------------------------------------------------------------------
# The opened index
# ---------------------------------------------------------------------------------------------

class Index:
    """The current compiled index of one data folder, read in one transaction: `key` (data
    version, folder and code), `version` (the data version alone), `problems()`, `atlas()` (the
    whole atlas, built on first use), `search` (its search index) and the card lookups
    (atlas.index.cards)."""

    def __init__(self, root: Path, reader: store.Reader | None = None, con: sqlite3.Connection | None = None):
        self.root = root
        self.reader = reader
        self._con = con
        self.version = self.meta("version", "")
        self.key = cache.data_key(self.version or "0" * 24, root)
        self._atlas: Atlas | None = None
        self._search = None

    @property
    def con(self) -> sqlite3.Connection:
        """The database (opened when first needed; a damaged one is rebuilt, and this index reads
        the new one)."""
        if self._con is None:
            assert self.reader is not None
            try:
                self._con = self.reader.con
            except cache.Corrupt:
                fresh = reopen(self)
                self.reader, self._con = fresh.reader, fresh.con
        return self._con

    @property
    def path(self) -> Path | None:
        """The database file this index reads (None: in memory): another thread may open it
        read-only, it does not change while this index holds it."""
        return self.reader.entry / f"{self.reader.gen}.sqlite" if self.reader else None

    def meta(self, key: str, default=None):
        return self.reader.meta(key, default) if self.reader else store.get_meta(self.con, key, default)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()

    def problems(self):
        from .update import problems

        return problems(self.con)

    def raise_errors(self) -> None:
        """Stop with every error, located, when the data is not valid (as a full load would)."""
        if not self.meta("errors", 0):
            return
        errors = [p for p in self.problems() if p.is_error]
        raise AtlasError(f"the atlas data has {len(errors)} error(s)", Location(str(self.root)),
                         "run `atlas validate` for the full list", problems=errors)

    def atlas(self) -> Atlas:
        if self._atlas is None:
            from .update import materialise

            try:
                self._atlas = materialise(self.con, self.root)
            except cache.Corrupt:  # a damaged row: rebuild, and read the new index
                self._atlas = reopen(self).atlas()
        return self._atlas

    @property
    def search(self):
        if self._search is None:
            from .search import SearchIndex

            self._search = SearchIndex(self.con, owner=self)
        return self._search

    def files(self) -> dict[str, str]:
        """rel -> content hash of every data file."""
        return dict(self.con.execute("SELECT rel, sha FROM file ORDER BY rel"))

    def part(self, rels, symbols: bool = True) -> Atlas:
        """The records of the data files `rels` with what their RDF export reads of the rest: every
        repository (an evidence IRI holds its repository's URL), the timeline (the harvests and
        sightings), the cut-off, every API history's header and the symbols concepts name (their
        triples are in the graph derived from the whole atlas; `naming` says which concept names
        which; `symbols` False leaves the histories and symbols out, for a caller that reads only the
        repositories). The SPARQL store updates the graphs of changed files from it."""
        from .update import LISTS, TIMELINE, Results, named_symbols, surfaces

        results = Results(self.con)
        atlas = Atlas()
        for rel in sorted(rels):
            for kind, pos in self.con.execute("SELECT kind, pos FROM win WHERE rel = ? ORDER BY pos", (rel,)):
                if kind != "repository":
                    getattr(atlas, LISTS[kind]).append(results.record(rel, pos))
        atlas.repositories = [results.record(rel, pos) for rel, pos in self.con.execute(
            "SELECT rel, pos FROM win WHERE kind = 'repository' ORDER BY rel, pos")]
        timeline = results.get(TIMELINE)
        if timeline is not None:
            atlas.sightings, atlas.harvests = list(timeline.sightings), list(timeline.harvests)
        atlas.cutoff = self.meta("cutoff", atlas.cutoff)
        if symbols:
            atlas.surfaces, atlas.symbols = surfaces(self.con), named_symbols(self.con)
        atlas.reindex()
        return atlas

    def naming(self, ids=None) -> dict[str, list[tuple[str, str, str]]]:
        """concept id -> the (repository, kind, name) of each API symbol it names (of the concepts
        `ids`, or of every concept)."""
        out: dict[str, list[tuple[str, str, str]]] = {}
        for concept, repo, kind, name in self._rows_in("SELECT concept, repo, kind, name FROM named", "concept",
                                                       ids, " ORDER BY concept, seq"):
            out.setdefault(concept, []).append((repo, kind, name))
        return out

    def naming_rows(self, rels=None) -> list:
        """(data file, concept id, repository, kind, name) of each symbol a concept names (in the files
        `rels`, or in every file), by file, concept and order (what `rdf.naming_digests` reads)."""
        return self._rows_in("SELECT w.rel, n.concept, n.repo, n.kind, n.name FROM named n JOIN win w "
                             "ON w.kind = 'concept' AND w.id = n.concept", "w.rel", rels,
                             " ORDER BY w.rel, n.concept, n.seq")

    def _rows_in(self, sql: str, column: str, values, order: str) -> list:
        """The rows of `sql` whose `column` is one of `values` (every row when None), asked 500 values
        at a time, each batch in `order`."""
        if values is None:
            return list(self.con.execute(sql + order))
        values = sorted(set(values))
        rows: list = []
        for i in range(0, len(values), 500):
            chunk = values[i:i + 500]
            rows += self.con.execute(f"{sql} WHERE {column} IN ({','.join('?' * len(chunk))}){order}", chunk)
        return rows

    def card_epoch(self, ident: str) -> int:
        return self.reader.card_epoch(ident) if self.reader else 0

    @property
    def cards_dir(self) -> Path | None:
        return self.reader.cards_dir if self.reader else None


def open_index(data_dir=None, use_cache: bool = True) -> Index:
    """The current compiled index of `data_dir`, updated first if data changed. Raises
    AtlasError for a data folder that cannot be read (not for bad data: see Index.raise_errors)."""
    root = resolve_data_dir(data_dir).resolve()
    if not root.is_dir():
        raise AtlasError("data directory does not exist", Location(str(root)),
                         "pass --data DIR or set ATLAS_DATA")
    index = _open(root) if use_cache else None
    return index if index is not None else _in_memory(root)


def _open(root: Path) -> Index | None:
    entry = store.entry_dir(root)
    refreshed = False
    for attempt in range(3):
        reader = None
        try:
            reader = store.open_reader(entry)
            if reader is not None:
                stamps = reader.meta("stamps")
                if refreshed or (unchanged(stamps) and not _unsettled(stamps)):
                    return Index(root, reader)
                reader.close()
            with store.Writer(entry, root, root.name) as writer:
                refresh(writer.connection, root, writer.fresh, writer.counter)
            refreshed = True
            if writer.grew:  # a new generation: keep the cache within its bounds
                cache.evict(keep={entry.name})
        except (OSError, store.db_error(), cache.Corrupt) as exc:
            if isinstance(exc, cache.Corrupt) and reader is not None:
                _condemn(reader)
            if attempt == 2 and os.environ.get("ATLAS_CACHE_STRICT") and _fault_of_the_code(exc):
                raise  # (the test suite: a fault of the code, not of the cache folder, would hide here)
            continue  # the cache vanished, cannot be written or is damaged: try again, then do without it
    return None


def _fault_of_the_code(exc: Exception) -> bool:
    """An error no state of the cache folder explains (a wrong statement, a wrong use of SQLite)."""
    import sqlite3

    if isinstance(exc, (sqlite3.ProgrammingError, sqlite3.InterfaceError, sqlite3.IntegrityError)):
        return True
    return isinstance(exc, sqlite3.OperationalError) and any(
        words in str(exc) for words in ("no such", "syntax error", "has no column", "values for", "mismatch"))


def _condemn(reader: store.Reader) -> None:
    """A row of this generation failed its checksum: have it replaced."""
    reader.close()
    try:
        store.condemn(reader.entry, reader.gen)
    except OSError:
        pass


def reopen(index: Index) -> Index:
    """After a damaged row (or database) was met while reading `index`: the index again, rebuilt."""
    if index.reader is not None:
        _condemn(index.reader)
    return open_index(index.root)


def from_atlas(atlas: Atlas) -> Index:
    """An index in memory holding the records of an atlas in hand (its cards, name lookups and
    search, as for a data folder): the records as if read from one file, the timeline and the
    cut-off from theirs."""
    from ..model.load import FileResult
    from .update import LISTS, Change, Update

    con = store.memory(Path("memory"), "memory")
    records = [(kind, r, r.loc or Location("memory/records.yaml", 1 + i, 1))
               for kind, name in LISTS.items() for i, r in enumerate(getattr(atlas, name))]
    files = {"records.yaml": FileResult("memory/records.yaml", records),
             "timeline.yaml": FileResult("memory/timeline.yaml", sightings=atlas.sightings, harvests=atlas.harvests),
             "atlas.yaml": FileResult("memory/atlas.yaml", cutoff=atlas.cutoff)}
    for surface in atlas.surfaces:  # (the symbols in hand are those concepts name: they name the same)
        rel = f"api/{apifile.file_name(surface.repo)}"
        files[rel] = FileResult(f"memory/{rel}", surface=surface,
                                symbols=[x for x in atlas.symbols if x.repo == surface.repo])
    for rel, result in files.items():
        _keep_parsed(con, rel, result.display, result)
    Update(con, {rel: Change(rel, r.display) for rel, r in files.items()}, 0, everything=True).run()
    store.set_meta(con, "version", _version(con))
    return Index(Path("memory"), con=con)


def _in_memory(root: Path) -> Index:
    con = store.memory(root, root.name)
    refresh(con, root, True, 0)
    return Index(root, con=con)


# ---------------------------------------------------------------------------------------------
# Bringing an index up to date
# ---------------------------------------------------------------------------------------------

class _File(NamedTuple):
    rel: str
    path: str
    stamp: tuple | None


def _listing(root: Path):
    """(files, folders) of the data folder, by the one walk; an error met on the way stops (an entry
    that vanished meanwhile is only a warning: it is not read)."""
    listing = list_files(root)
    errors = [p for p in listing.problems if p.is_error]
    if errors:
        raise AtlasError(f"the data folder has {len(errors)} problem(s)", Location(str(root)),
                         "run `atlas validate` for the full list", problems=errors)
    base = str(root)
    files = [_File(rel, os.path.join(base, rel), None) for rel, _, _ in listing.files]
    folders = [os.path.join(base, rel) if rel else base for rel in listing.folders]
    return files, folders


def refresh(con, root: Path, fresh: bool, counter: int) -> None:
    """Apply to the index in `con` (inside a write transaction) whatever changed in the data."""
    from .update import Update

    taken = time.time_ns()
    files, folders = _listing(root)
    old = {} if fresh else (store.get_meta(con, "stamps") or {})
    known = dict(_known(con, root, old)) if old else {}
    changes, stamps = _changes(con, root, files, known, taken, old.get("taken", 0))
    stamps["folders"] = [(f, *s) for f in folders for s in [_stamp(f)] if s is not None]
    stamps["racy_folders"] = any(_racy(tuple(s[1:]), taken) for s in stamps["folders"])
    empty = fresh or con.execute("SELECT 1 FROM file LIMIT 1").fetchone() is None
    if changes or empty:
        Update(con, changes, counter, everything=empty).run()
        store.set_meta(con, "version", _version(con))
        store.set_meta(con, "errors", sum(p.is_error for p in _problems(con)))
        _forget_parsed(con, counter)
    store.set_meta(con, "stamps", stamps, compress=False)  # read by every query: no inflating


def _known(con, root: Path, stamps: dict):
    """rel -> (content hash, stat stamp) of the files the index knows."""
    try:
        rows = marshal.loads(stamps.get("stats", b"")) if stamps.get("stats") else []
    except (EOFError, ValueError, TypeError):
        rows = []  # stamps of another form: every file is hashed again
    by_path = dict(zip(stamps.get("paths", []), map(tuple, rows)))
    for rel, sha in con.execute("SELECT rel, sha FROM file"):
        yield rel, (sha, by_path.get(os.path.join(str(root), rel)))


def _changes(con, root: Path, files: list[_File], known: dict, taken: int, before: int):
    """The files whose content changed (read and parsed, or their parse result found by content
    hash) and the new stamps. A file whose stamp has not moved keeps its hash, unless its stamp
    was racy when taken (`before`: when the old stamps were taken)."""
    from .update import Change

    changes: dict = {}
    stamps: dict = {"root": str(root), "paths": [], "racy": [], "taken": taken}
    rows: list[tuple] = []
    with progress.bar("reading the data files", len(files), when=not known) as step:  # the first build
        for f in files:
            _change(con, root, f, known, before, changes, stamps, rows, taken)
            step.advance()
    for rel in set(known) - {f.rel for f in files}:
        changes[rel] = Change("", "", gone=True)
    stamps["stats"] = marshal.dumps(rows, 2)  # (as _stats gives them)
    return changes, stamps


def _change(con, root: Path, f: _File, known: dict, before: int, changes: dict, stamps: dict, rows: list,
            taken: int) -> None:
    """One file of `_changes`: its stamp and hash noted, its parse kept and its change recorded."""
    from ..model.load import read_file
    from .update import Change

    stamp = _stamp(f.path)
    display = os.path.join(root.name, f.rel)
    old = known.get(f.rel)
    if old is not None and old[1] == stamp and not _racy(stamp, before):
        sha = old[0]
    else:
        try:
            with open(f.path, "rb") as fh:
                raw = fh.read()
        except OSError:
            raw = None
        sha = content_hash(raw) if raw is not None else "unreadable"
        if old is None or old[0] != sha:
            if not _have_parsed(con, sha, display):
                _keep_parsed(con, sha, display, read_file(Path(f.path), Path(f.rel), display, raw))
            changes[f.rel] = Change(sha, display)
    stamps["paths"].append(f.path)
    rows.append(stamp or _MISSING)
    if _racy(stamp, taken):
        stamps["racy"].append((f.path, sha))


def _parsed(con, sha: str, display: str):
    """A parse result kept for these bytes (read as `display`), or None."""
    from ..model.load import FileResult

    row = con.execute("SELECT blob FROM parsed WHERE sha = ? AND display = ?", (sha, display)).fetchone()
    if row is None:
        return None
    try:
        return FileResult.from_plain(cache.unpack(row[0]))
    except cache.Corrupt:
        con.execute("DELETE FROM parsed WHERE sha = ? AND display = ?", (sha, display))
        return None


def _have_parsed(con, sha: str, display: str) -> bool:
    """A sound parse result is kept for these bytes (read as `display`)."""
    row = con.execute("SELECT blob FROM parsed WHERE sha = ? AND display = ?", (sha, display)).fetchone()
    try:
        return row is not None and bool(cache.unseal(bytes(row[0])))
    except cache.Corrupt:
        return False


def _keep_parsed(con, sha: str, display: str, result) -> None:
    con.execute("INSERT OR REPLACE INTO parsed VALUES (?, ?, 0, ?)", (sha, display, cache.pack(result.to_plain())))


KEEP_VERSIONS = 3  # parse results of files no longer present are kept this many updates


def _forget_parsed(con, counter: int) -> None:
    con.execute("DELETE FROM parsed WHERE used < ? AND NOT EXISTS (SELECT 1 FROM file WHERE file.sha = "
                "parsed.sha AND file.display = parsed.display)", (counter + 1 - KEEP_VERSIONS,))


def _version(con) -> str:
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    for rel, sha in con.execute("SELECT rel, sha FROM file ORDER BY rel"):
        h.update(f"{rel}\0{sha}\n".encode())
    return h.hexdigest()


def _problems(con):
    from .update import problems

    return problems(con)


# ---------------------------------------------------------------------------------------------
# The public entry points
# ---------------------------------------------------------------------------------------------

def load_atlas(data_dir=None, *, use_cache: bool = True) -> Atlas:
    """The validated atlas of `data_dir`. Raises AtlasError (with every problem) on bad data."""
    return load_keyed(data_dir, use_cache=use_cache)[0]


def load_keyed(data_dir=None, *, use_cache: bool = True, lazy: bool = False):
    """The atlas and the key of its data (content hash, folder and code) for derived caches.

    With lazy=True the atlas comes back as a function that builds it, so a caller that only
    needs the key (a warm SPARQL query, a card lookup) never reconstructs the records."""
    index = open_index(data_dir, use_cache=use_cache)
    index.raise_errors()
    return (index.atlas if lazy else index.atlas()), index.key


# ---------------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------------

def validate(data_dir=None):
    """Load and check everything; return the `Loaded` result (problems sorted by location). Each
    file's own checks come from the compiled index by content hash (read again only when the file
    changed); the cross-file checks run on the records."""
    from ..model.checks import check
    from ..model.load import assemble, listing

    root = resolve_data_dir(data_dir).resolve()
    loaded, files = listing(root, display_base=Path.cwd() if _inside_cwd(root) else root.parent)
    shas: dict[str, str] = {}
    if files is not None:
        assemble(loaded, _file_results(root, loaded, files, shas))
    _check_portable(loaded, shas)
    return check(loaded)


def _file_results(root: Path, loaded, files, shas: dict):
    """(path, FileResult) of each file, from the index when it can be used (`shas` gets the
    content hash of each file, by its path)."""
    from ..model.load import read_file

    index = None
    if not loaded.problems:
        try:
            index = open_index(root)
        except AtlasError:
            index = None
    if index is None:
        return [(path, read_file(path, rel, display)) for path, rel, display in files]
    shas.update({str(root / rel): sha for rel, sha in index.files().items()})
    if loaded.display_dir == root.name:
        from .update import all_results

        return [(root / rel, result) for rel, result in all_results(index.con)]
    return _results_as(index, root, files)


def _results_as(index: Index, root: Path, files) -> list:
    """Parse results with other display names (validate run from another folder), cached in the
    index by content hash as well."""
    from ..model.load import read_file

    shas = index.files()
    found = {str(rel): _parsed(index.con, shas[str(rel)], display) if str(rel) in shas else None
             for _path, rel, display in files}
    index.close()  # done reading: a writer may have the index (to remember the new parse results)
    out, new = [], []
    for path, rel, display in files:
        result = found[str(rel)]
        if result is None:
            result = read_file(path, rel, display)
            if str(rel) in shas:
                new.append((shas[str(rel)], display, result))
        out.append((path, result))
    if new:
        _remember(root, new)
    return out


def _remember(root: Path, new) -> None:
    try:
        with store.Writer(store.entry_dir(root), root, root.name) as writer:
            if writer.fresh:
                raise OSError("no index to add to")
            writer.connection.executemany("INSERT OR IGNORE INTO parsed VALUES (?, ?, ?, ?)",
                                   [(sha, display, writer.counter + 1, cache.pack(r.to_plain()))
                                    for sha, display, r in new])
    except (OSError, store.db_error(), cache.Corrupt):
        pass  # only costs speed


PORTABLE_MAX_ERRORS = 100  # a file with more errors is not compared (its errors come first)


def _check_portable(loaded, shas: dict | None = None) -> None:
    """Every file must read the same with PyYAML's pure-Python reader as with libyaml (the atlas is
    read with whichever the machine has). That reader is slow, so the content hash of each file
    that passed is remembered in the cache and the same bytes are not read again (`shas`: the
    content hashes the compiled index knows, by path: those files are not even read)."""
    from collections import Counter

    from ..errors import Problem
    from ..model.hygiene import portable_problems

    known_file = cache.path("portable-yaml", crc(cache.code_key()))
    known = set(cache.read(known_file) or ())
    unread = loaded.unread  # reported once, by the load; a file that did read may still differ
    errors = Counter(p.location.file for p in loaded.problems if p.is_error)
    errors.update({p.location.file: PORTABLE_MAX_ERRORS for p in loaded.problems if p.code == "many-unknown-keys"})
    passed = set()
    for path in loaded.files:
        if path.suffix == ".jsonl":
            continue  # JSON lines, not YAML (read by atlas.model.apiload)
        display = f"{loaded.display_dir}/{path.relative_to(loaded.data_dir).as_posix()}"
        if display in unread:
            continue
        if errors[display] > PORTABLE_MAX_ERRORS:
            loaded.problems.append(Problem(
                Location(display), "warning", "not-compared",
                f"more than {PORTABLE_MAX_ERRORS} errors: the comparison with PyYAML's pure-Python reader waits "
                "until they are fixed", "that reader takes about a millisecond a line; fix the errors above"))
            continue
        if (shas or {}).get(str(path)) in known:
            passed.add(shas[str(path)])  # type: ignore[index]
            continue
        try:
            raw = path.read_bytes()
        except OSError:
            continue  # reported by the load itself
        digest = content_hash(raw)
        if digest in known:
            passed.add(digest)
            continue
        problems = portable_problems(raw.decode("utf-8"), display)  # decodable: else it is unread
        loaded.problems.extend(problems)
        if not problems:
            passed.add(digest)
    if passed - known:
        cache.write(known_file, sorted(known | passed))


def _inside_cwd(root: Path) -> bool:
    try:
        root.relative_to(Path.cwd())
        return True
    except ValueError:
        return False
