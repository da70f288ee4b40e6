"""The persistent SPARQL store: the atlas as an on-disk Oxigraph (RocksDB) store in the user's cache,
built once per data version and opened read-only by each query, so that a query costs the same
whatever the atlas's size (no graph is parsed into memory per query).

Layout, one folder per data folder (`<cache>/sparql-<crc of its real path>/`):

- `<version>/` - one store per data version, never written again once published;
- `<version>.lock` - readers hold a shared lock on it while they query (atlas.lockfile); eviction takes it
  exclusively;
- `current` - the published versions, newest first: key, folder and the base key (with the cache's
  checksum, written atomically); `<version>.files` - the sha256 of each data file that version was built from, and its
  membership lists (which triples each file states, by an 8-byte name), kept for the newest version
  alone (the next version is built from it; an older one is only read);
- `build.lock` - one builder at a time.

Each distinct triple is stored once, in the named graph of a data file that states it (`<https://ascend-
atlas.invalid/graph/` + its path in data/ + `>`; the scheme and kinds in `.../graph/#scheme`), and queries
read the union of the named graphs as their default graph (Oxigraph's union does not remove duplicates, so
storing a triple twice would count it twice). A new data version is made from the newest one: its store is
copied (`Store.backup`: hard links to the immutable table files), and only the triples of the files whose
content changed are settled (`_update`). A change of the code, of data/ontology.ttl or of a repository's URL
(every evidence IRI holds one) rebuilds everything. A version is published by replacing `current` in one
rename, so a reader sees the old version or the new one, never a mix; a process that computed an older key
still finds that version while it is kept (the last KEEP).

A store that cannot be opened or read (RocksDB checks every block it reads) is a cache miss: the caller
calls `discard`, and the next `open_version` builds a fresh one.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Iterable

from ..index import cache
from ..errors import AtlasError, Location
from ..lockfile import Lock, locked
from ..model.vocab import BASE

KEEP = 2  # data versions kept (the newest first); older ones are evicted when no reader has them open
GRAPHS = BASE + "graph/"


def graph_iri(key: str) -> str:
    from urllib.parse import quote

    return GRAPHS + quote(key, safe="/#")


def folder(root: Path) -> Path:
    """The store folder of one data folder (its real path)."""
    return cache.cache_dir() / f"sparql-{cache.crc(str(root))}"


# --------------------------------------------------------------------------------------------------
# The list of published versions
# --------------------------------------------------------------------------------------------------

def _read_checked(path: Path):
    """A value kept with the cache's checksum (`cache.write`); None when missing or damaged."""
    return cache.read(path)


def _write_checked(path: Path, value) -> None:
    cache.atomic_write(path, cache.pack(value, compress=False))


def read_current(base: Path) -> list[dict]:
    """The published versions, newest first; [] when the list is missing or fails its checksum."""
    versions = _read_checked(base / "current")
    return versions if isinstance(versions, list) else []


def _write_current(base: Path, versions: list[dict]) -> None:
    _write_checked(base / "current", versions)


def _files(base: Path, entry: dict) -> dict | None:
    """The sha256 of each data file a version was built from (kept beside it: only builds read it)."""
    files = _read_checked(base / f"{entry['folder']}.files")
    return files if isinstance(files, dict) else None


# --------------------------------------------------------------------------------------------------
# Locks (atlas.lockfile)
# --------------------------------------------------------------------------------------------------

class Version:
    """One published store, held open for reading (a shared lock) until `close`."""

    def __init__(self, base: Path, entry: dict, lock: Lock):
        self.base, self.entry, self.lock = base, entry, lock
        self.path = base / entry["folder"]
        self.key = entry["key"]

    def close(self) -> None:
        self.lock.release()

    def __enter__(self) -> "Version":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __fspath__(self) -> str:
        return str(self.path)


def _reader(base: Path, entry: dict) -> Version | None:
    """A shared lock on a listed version, if its folder is still there (eviction may have won)."""
    lock = base / f"{entry['folder']}.lock"
    try:
        taken = locked(lock, shared=True)
    except OSError:
        return None
    if taken is not None and (base / entry["folder"]).is_dir() and not taken.stale():
        return Version(base, entry, taken)
    if taken is not None:
        taken.release()
    return None


# --------------------------------------------------------------------------------------------------
# Opening, building, discarding
# --------------------------------------------------------------------------------------------------

class Source:
    """What a build needs from data version `key` of folder `root`, computed only when a build
    happens: the key of what changes every graph (`base_key`: the code, data/ontology.ttl, the
    repositories' URLs), the sha256 of each data file (`digests`), and the triples of some data files
    (`graphs`). `load()` gives the atlas of that version (the compiled index's).

    The file digests come from the files on disk, which may have changed since `key` was computed (a
    concurrent edit): they are used only when they add up to `key` (`cache.digest_files`, `cache.data_key`),
    else the version is built whole and records no digests, so no later update trusts it.

    The compiled index knows each file's content hash for the version `key` names: given `files`
    (a function giving {path under the folder: content hash} of that version), `digests` reads them
    there and hashes nothing; given `part` (a function giving the records of some files with every
    repository and the timeline), an update builds the changed files' graphs from those records
    instead of the whole atlas, and given `naming` too (concept id -> the symbols it names), the
    naming triples from it."""

    def __init__(self, load: Callable, root: Path, key: str, files: Callable[[], dict] | None = None,
                 part: Callable[..., Any] | None = None, naming: Callable[..., dict] | None = None,
                 naming_rows: Callable[..., Any] | None = None):
        self.load, self.root, self.key = load, root, key
        self.files, self.part, self.naming, self.naming_rows = files, part, naming, naming_rows
        self._atlas = None
        self._ontology = None
        self._part: tuple[set, Any] | None = None

    def atlas(self):
        if self._atlas is None:
            self._atlas = self.load()
        return self._atlas

    def ontology(self):
        """data/ontology.ttl as an rdflib graph (None when there is none); a broken one is an error at
        its line."""
        if self._ontology is None:
            from rdflib import Graph

            from .rdf import read_turtle

            path = self.root / "ontology.ttl"
            self._ontology = read_turtle(path) if path.exists() else Graph()
        return self._ontology

    def base_key(self) -> str:
        # (the repositories alone: reading every named symbol here too doubled an update's cost)
        repositories = (self.part(set(), False) if self.part is not None else self.atlas()).repositories
        urls = sorted((r.id, r.urls[0] if r.urls else "") for r in repositories)
        h = hashlib.sha256(cache.code_key().encode())
        h.update(cache.file_crc(self.root / "ontology.ttl").encode())
        h.update(repr(urls).encode())
        return h.hexdigest()[:24]

    def _partial(self, only: set):
        if self._part is None or not only <= self._part[0]:
            assert self.part is not None
            self._part = (set(only), self.part(only))
        return self._part[1]

    def digests(self) -> dict | None:
        if self.files is not None:
            return dict(self.files(), **{"ontology.ttl": cache.file_crc(self.root / "ontology.ttl")})
        return self._hashed()

    def _hashed(self) -> dict | None:
        from ..model.walk import list_files

        names = [f[0] for f in list_files(self.root).files]
        total = hashlib.sha256()
        out = {}
        for rel in names:
            try:
                data = (self.root / rel).read_bytes()
            except OSError:
                return None
            total.update(rel.encode() + b"\0" + data + b"\0")
            out[rel] = hashlib.sha256(data).hexdigest()
        if cache.data_key(total.hexdigest(), self.root) != self.key:
            return None  # the files changed since this version was read: build it whole
        out["ontology.ttl"] = cache.file_crc(self.root / "ontology.ttl")
        return out

    def graphs(self, only: set | None) -> dict:
        from .rdf import graphs_by_file

        if only is not None and self.part is not None:  # (the histories' symbols are not all in it)
            partial = self._partial(only)
            naming = self.naming([c.id for c in partial.concepts]) if self.naming is not None else None
            return graphs_by_file(partial, self.ontology(), only, naming)
        return graphs_by_file(self.atlas(), self.ontology(), only)

    def naming_digests(self, rels: set | None = None) -> dict[str, str]:
        """data file -> a digest of the symbols its concepts name (`rdf.naming_digests`), for the files
        `rels` or for every file: a history's change can change a concept file's triples without a
        change of its bytes."""
        from .rdf import naming_digests, naming_rows

        if self.naming_rows is not None:
            return naming_digests(self.naming_rows(rels))
        return {k: v for k, v in naming_digests(naming_rows(self.atlas())).items() if rels is None or k in rels}

    def nquads(self) -> bytes:
        """The whole dataset as N-Quads (a store in memory, where the cache cannot hold one)."""
        import pyoxigraph as ox

        store = ox.Store()
        _fill(store, _emitted(self.graphs(None)))
        out = store.dump(format=ox.RdfFormat.N_QUADS)
        assert out is not None  # dumped to no file: the bytes come back
        return out


def open_version(root: Path, key: str, source: Callable[[], Source]) -> Version:
    """The store of data version `key` of data folder `root`, open for reading; built (or updated
    from the newest version) first when it is not there. Raises OSError when the cache cannot hold
    a store (the caller answers from memory)."""
    base = folder(root)
    for _ in range(5):
        entry = next((v for v in read_current(base) if v.get("key") == key), None)
        if entry is not None:
            version = _reader(base, entry)
            if version is not None:
                return version
        _build(base, key, source)
    raise AtlasError("the SPARQL store keeps changing under this query", Location(str(base)),
                     "another process is rebuilding it; run the query again")


def discard(version: Version) -> None:
    """Unlist a damaged version (its folder goes with the next eviction), so that the next
    `open_version` builds a fresh store."""
    base = version.base
    version.close()
    with Lock(base / "build.lock") as build:
        build.exclusive(None)
        _write_current(base, [v for v in read_current(base) if v.get("folder") != version.entry["folder"]])


def _build(base: Path, key: str, source_factory: Callable[[], Source]) -> None:
    """Under the build lock: make version `key` (from the newest one when only some files changed)
    and publish it, unless another process did while this one waited."""
    base.mkdir(parents=True, exist_ok=True)
    with Lock(base / "build.lock") as build:
        build.exclusive(None)
        versions = [v for v in read_current(base) if (base / str(v.get("folder"))).is_dir()]  # gone: a miss
        if any(v.get("key") == key for v in versions):
            return
        _sweep_builds(base)
        source = source_factory()
        entry = _make(base, key, source, versions[0] if versions else None)
        kept = [entry] + [v for v in versions if v.get("key") != key][: KEEP - 1]
        _write_current(base, kept)
        for older in kept[1:]:  # only the newest is built from: the others' membership lists go
            (base / f"{older['folder']}.files").unlink(missing_ok=True)
        _evict(base, {v["folder"] for v in kept})


def _make(base: Path, key: str, source: Source, newest: dict | None) -> dict:
    """Build the store of `key` in a temporary folder and move it into place; the list entry."""
    import pyoxigraph as ox

    name = f"v-{os.urandom(6).hex()}"
    tmp = base / f".build-{name}"
    base_key = source.base_key()
    digests = source.digests()
    old = _files(base, newest) if newest and newest.get("base") == base_key and digests else None
    naming = None
    try:
        if old and newest and isinstance(old.get("digests"), dict) and isinstance(old.get("naming"), dict) \
                and digests:
            ox.Store.read_only(str(base / newest["folder"])).backup(str(tmp))
            changed = _changed(old["digests"], digests)
            naming = _naming_now(source, old["naming"], changed)
            changed |= _changed(old["naming"], naming)
            members = _update(ox.Store(str(tmp)), _emitted(source.graphs(changed)), changed, old)
        else:
            naming = source.naming_digests() if digests else None
            members = _fill(ox.Store(str(tmp)), _emitted(source.graphs(None)))
        if digests:
            _write_checked(base / f"{name}.files", dict(members, digests=digests, naming=naming))
        os.replace(tmp, base / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        (base / f"{name}.files").unlink(missing_ok=True)
        raise
    return {"key": key, "folder": name, "base": base_key}


def _naming_now(source: Source, old: dict, changed: set) -> dict:
    """Each file's naming digest now: read again for every file when an API history (`.jsonl`)
    changed; else only the changed files can name other symbols than before."""
    if any(k.endswith(".jsonl") for k in changed):
        return source.naming_digests()
    now = {k: v for k, v in old.items() if k not in changed}
    now.update(source.naming_digests(changed))
    return now


def _changed(old: dict, new: dict) -> set:
    from .rdf import SCHEME_GRAPH

    keys = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
    return keys | {SCHEME_GRAPH}  # the scheme sums up every file: always rebuilt (15 kinds, a date)


def _terms():
    """A converter from rdflib terms to pyoxigraph terms, remembering IRIs (they repeat a lot)."""
    import pyoxigraph as ox
    from rdflib import Literal, URIRef

    iris: dict = {}

    def term(t):
        if isinstance(t, URIRef):
            node = iris.get(t)
            if node is None:
                node = iris[t] = ox.NamedNode(str(t))
            return node
        if isinstance(t, Literal):
            if t.language:
                return ox.Literal(str(t), language=t.language)
            return ox.Literal(str(t), datatype=term(t.datatype) if t.datatype else None)
        return ox.BlankNode(str(t))

    return term


def _hash(triple) -> bytes:
    """A triple's 8-byte name in the membership lists (blake2b of its N-Triples form)."""
    return hashlib.blake2b(str(triple).encode("utf-8"), digest_size=8).digest()


def _emitted(graphs: dict) -> dict:
    """key -> {hash: pyoxigraph Triple} for every data file's triples."""
    import pyoxigraph as ox

    term = _terms()
    out = {}
    for key, items in graphs.items():
        triples = {}
        for s, p, o in items:
            t = ox.Triple(term(s), term(p), term(o))
            triples[_hash(t)] = t
        out[key] = triples
    return out


def _chunks(raw: bytes) -> list[bytes]:
    return [raw[i:i + 8] for i in range(0, len(raw), 8)]


def _fill(store, emitted: dict) -> dict:
    """Each distinct triple once, in the graph of the first file (in path order) that states it;
    the membership lists: each file's triples (`emits`) and how many files state a triple, where
    more than one does (`shared`)."""
    import pyoxigraph as ox

    owned: set = set()
    shared: dict = {}
    quads = []
    for key in sorted(emitted):
        g = ox.NamedNode(graph_iri(key))
        for h, t in emitted[key].items():
            if h in owned:
                shared[h] = shared.get(h, 1) + 1
                continue
            owned.add(h)
            quads.append(ox.Quad(t.subject, t.predicate, t.object, g))
    store.bulk_extend(quads)
    store.flush()  # the bulk loader writes sorted table files: no compaction needed
    return {"emits": {k: b"".join(sorted(v)) for k, v in emitted.items()}, "shared": shared}


def _update(store, emitted: dict, changed: Iterable[str], old: dict) -> dict:
    """Bring the store from the old membership lists to the `changed` files' new triples (`emitted`;
    a file that is gone has none), keeping each stated triple in exactly one graph of a file that
    states it, and dropping a triple no file states any more."""
    import pyoxigraph as ox

    changed = sorted(changed)
    emits: dict[str, bytes] = dict(old.get("emits") or {})
    shared: dict[bytes, int] = dict(old.get("shared") or {})
    held = {}  # hash -> (triple, file) for the triples the changed files' graphs hold now
    for f in changed:
        for q in store.quads_for_pattern(None, None, None, ox.NamedNode(graph_iri(f))):
            held[_hash(q.triple)] = (q.triple, f)
    count: dict[bytes, int] = {}
    for f in changed:
        for h in _chunks(emits.get(f, b"")):
            count[h] = count.get(h, shared.get(h, 1)) - 1
    for f in changed:
        for h, t in emitted.get(f, {}).items():
            if h not in count:
                count[h] = shared.get(h) or (1 if h in held or _stored(store, t) else 0)
            count[h] += 1
    for f in changed:
        new = emitted.get(f, {})
        if new:
            emits[f] = b"".join(sorted(new))
        else:
            emits.pop(f, None)
    for h, n in count.items():
        _settle(store, h, n, held, emitted, changed, emits)
        if n >= 2:
            shared[h] = n
        else:
            shared.pop(h, None)
    store.flush()
    return {"emits": emits, "shared": shared}


def _stored(store, t) -> bool:
    return next(iter(store.quads_for_pattern(t.subject, t.predicate, t.object, None)), None) is not None


def _settle(store, h: bytes, n: int, held: dict, emitted: dict, changed: list, emits: dict) -> None:
    """Put triple `h`, stated by `n` files now, where it belongs: nowhere when n is 0; where it is
    when its graph's file still states it; else in the graph of a file that states it."""
    import pyoxigraph as ox

    triple, owner = held.get(h, (None, None))
    if owner is not None and h in emitted.get(owner, {}):
        return
    if owner is None and n > 0:
        t = next((emitted[f][h] for f in changed if h in emitted.get(f, {})), None)
        if t is None or _stored(store, t):
            return  # held by a file that did not change, and still states it
        triple = t
    if owner is not None:
        store.remove(ox.Quad(triple.subject, triple.predicate, triple.object, ox.NamedNode(graph_iri(owner))))
    if n > 0:
        home = next((f for f in changed if h in emitted.get(f, {})), None) or _stating(h, emits)
        store.add(ox.Quad(triple.subject, triple.predicate, triple.object, ox.NamedNode(graph_iri(home))))


def _stating(h: bytes, emits: dict) -> str:
    """The first file (in path order) whose membership list holds `h`."""
    for key in sorted(emits):
        raw = emits[key]
        at = raw.find(h)
        while at != -1 and at % 8:
            at = raw.find(h, at + 1)
        if at != -1:
            return key
    raise AtlasError("the SPARQL store's membership lists disagree", Location("sparql store"),
                     "remove the cache folder's sparql-* entries")


# --------------------------------------------------------------------------------------------------
# Eviction
# --------------------------------------------------------------------------------------------------

def _sweep_builds(base: Path) -> None:
    """Temporary folders of builds that died (only one build runs: the caller holds the lock)."""
    for entry in base.iterdir():
        if entry.name.startswith(".build-") and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def _evict(base: Path, keep: set[str]) -> None:
    """Remove every version not in `keep` that no reader has open (its lock is free)."""
    stems = {e.name.removesuffix(".lock").removesuffix(".files") for e in base.iterdir() if e.name.startswith("v-")}
    for stem in sorted(stems - keep):
        lock = base / f"{stem}.lock"
        try:
            taken = locked(lock, wait=False)
        except OSError:
            continue
        if taken is None:
            continue  # a reader has it open: a later build evicts it
        try:
            if (base / stem).is_dir():
                trash = base / f".build-trash-{stem}"
                os.replace(base / stem, trash)
                shutil.rmtree(trash, ignore_errors=True)
            (base / f"{stem}.files").unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
        finally:
            taken.release()


def size(root: Path) -> int:
    """Bytes held by the stores of data folder `root`."""
    return cache.size_of(folder(root))
