"""Where the compiled index of one data folder lives: a SQLite database in the user's cache,
updated in place as data files change (atlas.index.update says how), read by many processes at once.

One folder per data folder and version of the code, `<cache>/store-<folder crc>-<code crc>/`:

    current          the pointer: the current generation, its seal (size, times and inode of its
                     database file when its writer finished) and its update counter; checksummed
    write.lock       held exclusively by the one process updating this folder's index
    <gen>.sqlite     one generation of the database
    <gen>.head       what a card query needs of it (stamps, version, card epochs): no SQLite to open
    <gen>.lock       held shared by every process reading <gen>; exclusively by the process updating
                     it in place, or removing it
    <gen>.cards/     cards rendered from <gen>: one checksummed file per concept with its epoch

A reader takes the shared lock, checks the database file against the seal (a change that a size
and time check would miss, such as `cp -p` over it, still changes its ctime) and reads in one
transaction, so it sees one state from start to end. A writer updates the current generation in
place when no reader holds it, else (a long-lived reader such as the MCP server) it copies the
database to a new generation and swaps the pointer; a missing, damaged or mismatched generation is
rebuilt as a new one, reusing the parse results whose checksums still hold. Old generations are
removed once no process holds them.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import cache
from ..lockfile import Lock

if TYPE_CHECKING:
    import sqlite3

FORMAT = 5
BUSY_MS = 60_000

SCHEMA = (
    "CREATE TABLE meta (k TEXT PRIMARY KEY, v BLOB)",
    # parse results, by content: the plain FileResult of the bytes `sha` read as `display`
    "CREATE TABLE parsed (sha TEXT, display TEXT, used INTEGER, blob BLOB, PRIMARY KEY (sha, display))",
    "CREATE TABLE file (fid INTEGER PRIMARY KEY, rel TEXT UNIQUE, sha TEXT, display TEXT)",
    "CREATE INDEX file_sha ON file(sha, display)",
    # every record a file defines (duplicates too) and the one that counts (first in file order)
    "CREATE TABLE cand (kind TEXT, id TEXT, rel TEXT, pos INTEGER, line INTEGER, col INTEGER)",
    "CREATE INDEX cand_id ON cand(kind, id)",
    "CREATE INDEX cand_rel ON cand(rel)",
    "CREATE TABLE win (kind TEXT, id TEXT, rel TEXT, pos INTEGER, PRIMARY KEY (kind, id))",
    # what cards, name lookups and the cross-file checks read without loading records
    "CREATE TABLE concept (id TEXT PRIMARY KEY, kind TEXT, names BLOB, undated INTEGER)",
    "CREATE TABLE name (key TEXT, id TEXT)",
    "CREATE INDEX name_key ON name(key)",
    "CREATE INDEX name_id ON name(id)",
    # the names with a part in brackets (what spotting names in a question reads of every name):
    # the query that asks for them reads this index alone, not the whole table
    "CREATE INDEX name_bracketed ON name(key, id) WHERE key LIKE '%(%)'",
    "CREATE TABLE loose (key TEXT, id TEXT)",
    "CREATE INDEX loose_key ON loose(key)",
    "CREATE INDEX loose_id ON loose(id)",
    "CREATE TABLE rel (owner TEXT, pos INTEGER, type TEXT, source TEXT, target TEXT, rkey TEXT, "
    "file TEXT, line INTEGER, col INTEGER, blob BLOB)",
    "CREATE INDEX rel_owner ON rel(owner)",
    "CREATE INDEX rel_source ON rel(source)",
    "CREATE INDEX rel_target ON rel(target)",
    "CREATE INDEX rel_rkey ON rel(rkey)",
    "CREATE TABLE about (claim TEXT, concept TEXT)",
    "CREATE INDEX about_concept ON about(concept)",
    "CREATE INDEX about_claim ON about(claim)",
    "CREATE TABLE touch (flow TEXT, concept TEXT)",
    "CREATE INDEX touch_concept ON touch(concept)",
    "CREATE INDEX touch_flow ON touch(flow)",
    "CREATE TABLE sighting (concept TEXT, seq INTEGER, blob BLOB)",
    "CREATE INDEX sighting_concept ON sighting(concept)",
    "CREATE TABLE named (concept TEXT, seq INTEGER, repo TEXT, kind TEXT, name TEXT, blob BLOB)",  # symbols named
    "CREATE INDEX named_concept ON named(concept)",
    "CREATE TABLE apiname (concept TEXT PRIMARY KEY)",  # the concepts with an `api:` list
    "CREATE TABLE ref (kind TEXT, target TEXT, fid INTEGER)",  # the files referring to an id
    "CREATE INDEX ref_target ON ref(kind, target)",
    "CREATE INDEX ref_fid ON ref(fid)",
    # problems by scope: a file's own, a duplicate id, or a cross-file check's part
    "CREATE TABLE problem (scope TEXT, stage INTEGER, seq INTEGER, blob BLOB)",
    "CREATE INDEX problem_scope ON problem(scope)",
    # the epoch of each card that changed since the generation began (see Reader.card_epoch)
    "CREATE TABLE stale (id TEXT PRIMARY KEY, epoch INTEGER)",
)


def entry_dir(root: Path) -> Path:
    """The cache folder of one data folder's compiled index, for this version of the code."""
    return cache.cache_dir() / f"store-{cache.crc(str(root))}-{cache.crc(cache.code_key())}"


def _stat(path: Path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def read_pointer(entry: Path) -> dict | None:
    pointer = cache.read(entry / "current")
    if isinstance(pointer, dict) and pointer.get("format") == FORMAT and isinstance(pointer.get("gen"), str):
        return pointer
    return None


_ESCAPED = "\x00\x01"  # starts a text that stands for one SQLite cannot hold (see _to_sql)


def _to_sql(value):
    """A path that is not valid UTF-8 (a folder named in undecodable bytes reaches Python with lone
    surrogates) as a text SQLite can hold: its bytes one character each, after a marker."""
    if type(value) is str and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return _ESCAPED + value.encode("utf-8", "surrogateescape").decode("latin-1")
    return value


def _from_sql(cursor, row) -> tuple:
    return tuple(x[2:].encode("latin-1").decode("utf-8", "surrogateescape")
                 if type(x) is str and x.startswith(_ESCAPED) else x for x in row)


def db_error() -> type[Exception]:
    """sqlite3.Error, imported when first asked for (in an `except` clause: when an exception is
    being handled). sqlite3 is imported by the first connection, never by a warm card lookup,
    which reads no database."""
    import sqlite3

    return sqlite3.Error


@functools.cache
def _connection_class() -> type:
    import sqlite3

    class Connection(sqlite3.Connection):
        """A connection that stores and gives back any Python text, paths in undecodable bytes too."""

        def execute(self, sql, parameters=(), /):
            return super().execute(sql, tuple(map(_to_sql, parameters)) if parameters else parameters)

        def executemany(self, sql, seq_of_parameters, /):
            return super().executemany(sql, (tuple(map(_to_sql, p)) for p in seq_of_parameters))

    return Connection


def connect(target: str, **kw) -> sqlite3.Connection:
    import sqlite3

    con: sqlite3.Connection = sqlite3.connect(target, factory=_connection_class(), check_same_thread=False, **kw)
    con.row_factory = _from_sql
    return con


def _connect(db: Path, readonly: bool) -> sqlite3.Connection:
    uri = f"file:{db}?mode={'ro' if readonly else 'rwc'}"
    return connect(uri, uri=True, isolation_level=None, timeout=BUSY_MS / 1000)


def get_meta(con, key: str, default=None):
    row = con.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
    if row is None:
        return default
    blob = bytes(row[0])
    return cache.unpack(blob[1:], compress=blob[:1] == b"z")


def set_meta(con, key: str, value, compress: bool = True) -> None:
    blob = (b"z" if compress else b"m") + cache.pack(value, compress=compress)
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, blob))


HEAD_KEYS = ("counter", "stamps", "version", "errors", "questions", "epoch_all")


def head_of(con) -> dict:
    """What a card query needs, read from a generation's database when its writer commits: the
    stamps, the data version, the error count, the question names and every card's epoch."""
    head = {k: get_meta(con, k) for k in HEAD_KEYS}
    head["epochs"] = dict(con.execute("SELECT id, epoch FROM stale"))
    return head


class Reader:
    """One generation, its lock held shared: its head (`<gen>.head`, what a card query needs) at
    once, and its database, opened read-only inside one transaction, when first asked for (a
    warm `atlas query ID` never opens it)."""

    def __init__(self, entry: Path, pointer: dict, lock: Lock, head: dict):
        self.entry = entry
        self.pointer = pointer
        self.gen = pointer["gen"]
        self.lock = lock
        self.head = head
        self._con: sqlite3.Connection | None = None
        self._meta: dict = {}

    @property
    def con(self) -> sqlite3.Connection:
        """The database, checked against its seal (a mismatch raises cache.Corrupt)."""
        if self._con is None:
            self._con = _open_db(self.entry / f"{self.gen}.sqlite", self.pointer)
        return self._con

    def meta(self, key: str, default=None):
        if key in HEAD_KEYS:
            value = self.head.get(key)
            return default if value is None else value
        if key not in self._meta:
            self._meta[key] = get_meta(self.con, key, default)
        return self._meta[key]

    @property
    def cards_dir(self) -> Path:
        return self.entry / f"{self.gen}.cards"

    def card_epoch(self, ident: str) -> int:
        """Cards rendered at or after this epoch are current (a writer raises it when a change
        reaches the card)."""
        return max(self.head["epochs"].get(ident, 0), self.head["epoch_all"] or 0)

    def close(self) -> None:
        try:
            if self._con is not None:
                self._con.close()
        finally:
            self.lock.release()

    def __del__(self) -> None:  # the last user gone: let writers and eviction have the generation
        try:
            self.close()
        except Exception:
            pass


def open_reader(entry: Path) -> Reader | None:
    """The current generation, locked shared, with its head; None when there is none or its head
    does not match (the caller updates or rebuilds it)."""
    for _ in range(5):
        pointer = read_pointer(entry)
        if pointer is None or pointer.get("seal") is None:
            return None
        lock = Lock(entry / f"{pointer['gen']}.lock")
        try:
            lock.shared()
        except OSError:
            return None
        if lock.stale() or read_pointer(entry) != pointer:
            lock.release()
            continue
        head = cache.read(entry / f"{pointer['gen']}.head")
        if not isinstance(head, dict) or head.get("counter") != pointer["counter"]:
            lock.release()
            return None
        _mark_used(entry)
        return Reader(entry, pointer, lock, head)
    return None


def _open_db(db: Path, pointer: dict) -> sqlite3.Connection:
    if _stat(db) != tuple(pointer["seal"]):
        raise cache.Corrupt(f"{db} does not match its seal")
    try:
        con = _connect(db, readonly=True)
        con.execute("BEGIN")
        if get_meta(con, "counter") != pointer["counter"] or get_meta(con, "format") != FORMAT:
            con.close()
            raise cache.Corrupt(f"{db} is not the generation its pointer names")
    except db_error() as exc:
        raise cache.Corrupt(f"{db}: {exc}") from None
    return con


def _mark_used(entry: Path) -> None:
    """Eviction removes the least recently used first: touch the pointer (at most once a minute)."""
    import time

    try:
        current = entry / "current"
        if time.time() - current.stat().st_mtime > 60:
            os.utime(current)
    except OSError:
        pass


def condemn(entry: Path, gen: str) -> None:
    """A generation whose file matches its seal but holds a damaged row (a checksum failed on
    read): unseal it, so that the next writer replaces it, reusing what still verifies."""
    with Lock(entry / "write.lock") as lock:
        lock.exclusive(timeout=None)
        pointer = read_pointer(entry)
        if pointer is not None and pointer["gen"] == gen:
            cache.atomic_write(entry / "current", cache.pack(dict(pointer, seal=None), compress=False))


class Writer:
    """The one process updating a data folder's compiled index: `with Writer(entry, root) as w:`
    gives `w.con` (a write transaction on the current generation, or on a new one) and `w.fresh`
    (True when the generation starts empty, or from salvaged parse results only). On success the
    transaction is committed, the generation sealed and made current."""

    def __init__(self, entry: Path, root: Path, display: str):
        self.entry = entry
        self.root = root
        self.display = display
        self.write_lock = Lock(entry / "write.lock")
        self.gen_lock: Lock | None = None
        self.con: sqlite3.Connection | None = None
        self.gen = ""
        self.fresh = True
        self.copied = False  # a copy of the current generation (a reader held it)
        self.grew = False  # after the writer: a new generation was written (the cache may need cleaning)
        self.counter = 0

    def __enter__(self) -> "Writer":
        self.entry.mkdir(parents=True, exist_ok=True)
        self.write_lock.exclusive(timeout=None)
        try:
            self._open()
        except BaseException:
            self._abandon()
            raise
        return self

    def _open(self) -> None:
        pointer = read_pointer(self.entry)
        if pointer is not None and pointer.get("seal") is not None:
            old = self.entry / f"{pointer['gen']}.sqlite"
            if _stat(old) == tuple(pointer["seal"]) and self._in_place(pointer):
                return
            if _stat(old) == tuple(pointer["seal"]) and self._copy(pointer):
                return
        self._new(salvage_from=self.entry / f"{pointer['gen']}.sqlite" if pointer else None)
        # (a damaged, mismatched or condemned generation: its parse results are reused if they verify)

    def _in_place(self, pointer: dict) -> bool:
        """Update the current generation itself, once no reader holds it (waiting up to a second)."""
        lock = Lock(self.entry / f"{pointer['gen']}.lock")
        if not lock.exclusive(timeout=1.0) or lock.stale():
            lock.release()
            return False
        try:
            con = _connect(self.entry / f"{pointer['gen']}.sqlite", readonly=False)
            con.execute("PRAGMA journal_mode=DELETE")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("BEGIN IMMEDIATE")
            if get_meta(con, "counter") != pointer["counter"]:
                raise cache.Corrupt("counter")
        except (db_error(), cache.Corrupt):
            lock.release()
            return False
        self.gen_lock, self.con, self.gen, self.fresh = lock, con, pointer["gen"], False
        self.counter = pointer["counter"]
        return True

    def _copy(self, pointer: dict) -> bool:
        """A reader holds the current generation: write a copy of it, and switch to the copy."""
        import shutil

        self._start_gen()
        try:
            shutil.copyfile(self.entry / f"{pointer['gen']}.sqlite", self.entry / f"{self.gen}.sqlite")
            self._connect_new()
            if get_meta(self.connection, "counter") != pointer["counter"]:
                raise cache.Corrupt("counter")
        except (OSError, db_error(), cache.Corrupt):
            self._drop_gen()
            return False
        self.fresh, self.copied, self.counter = False, True, pointer["counter"]
        return True

    def _start_gen(self) -> None:
        self.gen = os.urandom(6).hex()
        self.gen_lock = Lock(self.entry / f"{self.gen}.lock")
        self.gen_lock.exclusive(timeout=None)

    def _connect_new(self) -> None:
        con = self.con = _connect(self.entry / f"{self.gen}.sqlite", readonly=False)
        con.execute("PRAGMA journal_mode=OFF")  # a new generation is not current until it is done
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")

    def _new(self, salvage_from: Path | None) -> None:
        self._start_gen()
        self._connect_new()
        con = self.connection
        for sql in SCHEMA:
            con.execute(sql)
        from . import search

        search.create(con)
        set_meta(con, "format", FORMAT)
        set_meta(con, "root", str(self.root))
        set_meta(con, "display", self.display)
        if salvage_from is not None:
            _salvage(con, salvage_from)
        self.fresh, self.counter = True, 0

    def _drop_gen(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        for suffix in (".sqlite", ".sqlite-journal", ".head"):
            try:
                os.unlink(self.entry / f"{self.gen}{suffix}")
            except OSError:
                pass
        if self.gen_lock is not None:
            try:
                os.unlink(self.gen_lock.path)
            except OSError:
                pass
            self.gen_lock.release()
            self.gen_lock = None

    @property
    def connection(self) -> sqlite3.Connection:
        """The write transaction (while the writer is open)."""
        assert self.con is not None
        return self.con

    def commit(self) -> None:
        """Commit, seal and make this generation current (its head written first)."""
        self.counter += 1
        con = self.connection
        set_meta(con, "counter", self.counter)
        head = head_of(con)
        con.execute("COMMIT")
        con.close()
        self.con = None
        db = self.entry / f"{self.gen}.sqlite"
        fd = os.open(db, os.O_RDONLY)  # a new generation was written without a journal: flush it
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        cache.atomic_write(self.entry / f"{self.gen}.head", cache.pack(head, compress=False))
        pointer = {"format": FORMAT, "gen": self.gen, "root": str(self.root), "counter": self.counter,
                   "seal": _stat(db)}
        cache.atomic_write(self.entry / "current", cache.pack(pointer, compress=False))

    def _abandon(self) -> None:
        if self.con is not None:
            try:
                self.con.execute("ROLLBACK")
            except db_error():
                pass
        pointer = read_pointer(self.entry)
        if self.fresh or (self.gen and pointer is not None and pointer["gen"] != self.gen):
            self._drop_gen()
        elif self.con is not None:
            self.con.close()
            self.con = None

    def __exit__(self, kind, exc, tb) -> None:
        try:
            if kind is None:
                self.commit()
            else:
                self._abandon()
        finally:
            if self.gen_lock is not None:
                self.gen_lock.release()
            self.write_lock.release()
        if kind is None:
            remove_old_generations(self.entry)
            self.grew = self.fresh or self.copied


def _salvage(con, old: Path) -> None:
    """Copy the parse results of a damaged or mismatched generation, as far as it can be read
    (each is checked by its own checksum when used: a damaged one is a miss and the file is read
    again)."""
    try:
        source = _connect(old, readonly=True)
    except db_error():
        return
    try:
        for row in source.execute("SELECT sha, display, blob FROM parsed"):
            con.execute("INSERT OR IGNORE INTO parsed VALUES (?, ?, 0, ?)", row)
    except db_error():
        pass  # what could be read is kept
    finally:
        source.close()


def remove_old_generations(entry: Path) -> list[str]:
    """Remove every generation of `entry` but the current one that no process holds."""
    pointer = read_pointer(entry)
    current = pointer["gen"] if pointer else None
    removed: list[str] = []
    try:
        names = os.listdir(entry)
    except OSError:
        return removed
    gens = {n.split(".", 1)[0] for n in names
            if n.endswith((".sqlite", ".lock", ".cards", ".sqlite-journal", ".head"))}
    for gen in sorted(gens - {current, "write"}):
        lock = Lock(entry / f"{gen}.lock")
        try:
            if not lock.exclusive(0) or (read_pointer(entry) or {}).get("gen") == gen:
                continue
            _remove_gen(entry, gen)
            removed.append(gen)
        except OSError:
            continue
        finally:
            lock.release()
    return removed


def _remove_gen(entry: Path, gen: str) -> None:
    import shutil

    for suffix in (".sqlite", ".sqlite-journal", ".head"):
        try:
            os.unlink(entry / f"{gen}{suffix}")
        except OSError:
            pass
    shutil.rmtree(entry / f"{gen}.cards", ignore_errors=True)
    try:
        os.unlink(entry / f"{gen}.lock")
    except OSError:
        pass


def memory(root: Path, display: str) -> sqlite3.Connection:
    """An empty compiled index in memory, for a cache that cannot be written."""
    from . import search

    con = connect(":memory:", isolation_level=None)
    con.execute("BEGIN")
    for sql in SCHEMA:
        con.execute(sql)
    search.create(con)
    set_meta(con, "format", FORMAT)
    set_meta(con, "root", str(root))
    set_meta(con, "display", display)
    return con
