"""The user's cache, and the project's one way to replace a file atomically.

Every cached artefact (the compiled index, the card store, the N-Triples export, the refresh stamp)
lives under `paths.cache_dir()` in a file named by its key, and a key covers everything that shapes
the value:

- the data: the content hash of the data files, plus the data folder's real path, because records
  carry their locations (two identical copies of data/ must not show each other's file names);
- the code: `code_key()`, a hash of every source file of the package (atlas/**/*.py, so the version
  in atlas/__init__.py too) and of the Python version (marshal's format follows it). Hashing runs
  once per change of the sources: the result is remembered under a stat stamp (size, mtime and
  ctime of each source file), so a warm start pays for a few dozen stat calls only.

Every cached file and every cached blob carries a checksum of its content (`seal`): reading a
damaged, truncated or vanished cache file gives None (a miss), whatever its size and times say; a
cache that cannot be written only costs speed. `atomic_write` is how any file the project owns is
replaced, cache or data: a temporary file in the same folder, flushed to disk, then renamed over
the target.

The cache cleans up after itself (`evict`): it keeps the entries in use (a process holds their
lock, see `atlas.lockfile.Lock`), the caller's own, a bounded number of others and at most `max_bytes` in all,
and removes the oldest first. `entries` lists what is there, for `atlas cache`.
"""
from __future__ import annotations

import marshal
import os
import sys
import zlib
from pathlib import Path
from typing import NamedTuple

from ..bounded import DATA_FILE, read_bounded
from ..lockfile import Lock
from ..paths import PACKAGE_DIR, cache_dir

_PYTHON = "%d.%d" % sys.version_info[:2]
_code_key: str | None = None


def crc(text: str) -> str:
    """A short stable key for cache file names."""
    import zlib

    return f"{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}"


def path(kind: str, key: str, suffix: str = ".marshal") -> Path:
    """The cache file of one artefact: `<cache>/<kind>-<key><suffix>`."""
    return cache_dir() / f"{kind}-{key}{suffix}"


def data_key(digest: str, root: Path) -> str:
    """Key of every artefact derived from one data folder (content hash `digest`, real path `root`)
    and this version of the code."""
    return f"{digest[:24]}-{crc(code_key() + chr(0) + str(root))}"


def digest_files(root: Path, names) -> str:
    """sha256 over the names and bytes of the files `names` (relative to `root`, in order)."""
    import hashlib

    h = hashlib.sha256()
    for rel in names:
        h.update(rel.encode())
        h.update(b"\0")
        h.update(read_bounded(root / rel, DATA_FILE, "data file"))
        h.update(b"\0")
    return h.hexdigest()


def file_crc(file: Path) -> str:
    """Content key of one small input file (for example data/ontology.ttl); "-" when it is absent."""
    import zlib

    try:
        return f"{zlib.crc32(file.read_bytes()):08x}"
    except OSError:
        return "-"


def code_key() -> str:
    """A key of the package's source code and the Python version (computed once per process)."""
    global _code_key
    if _code_key is None:
        _code_key = _sources_key(PACKAGE_DIR)
    return _code_key


def source_stamps(root: Path) -> list[tuple[str, int, int, int]]:
    """The package's Python sources under `root`: (path, size, mtime, ctime) each, sorted."""
    out = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__" and not e.name.startswith("."):
                    stack.append(e.path)
            elif e.name.endswith(".py"):
                st = e.stat()
                out.append((os.path.relpath(e.path, root), st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    out.sort()
    return out


def _sources_key(root: Path) -> str:
    files = source_stamps(root)
    stamp_file = path("code", crc(str(root)))
    known = read(stamp_file)
    if isinstance(known, dict) and known.get("python") == _PYTHON and known.get("files") == files:
        return known["key"]
    key = crc(_PYTHON) + digest_files(root, [f[0] for f in files])[:16]
    write(stamp_file, {"python": _PYTHON, "files": files, "key": key})
    return key


class Corrupt(Exception):
    """A cached blob whose checksum does not match its content."""


def seal(payload: bytes) -> bytes:
    """`payload` with a checksum of it in front (CRC-32, enough to see damage; not a signature)."""
    return zlib.crc32(payload).to_bytes(4, "big") + payload


def unseal(data: bytes) -> bytes:
    """The payload of `seal(payload)`; raises Corrupt when the checksum does not match."""
    if len(data) < 4 or zlib.crc32(data[4:]) != int.from_bytes(data[:4], "big"):
        raise Corrupt("checksum mismatch")
    return data[4:]


def pack(value, compress: bool = True) -> bytes:
    """A value as a checksummed (and by default compressed) blob, for the compiled index's rows."""
    data = marshal.dumps(value)
    return seal(zlib.compress(data, 1) if compress else data)


def unpack(blob: bytes, compress: bool = True):
    """The value of `pack(value)`; raises Corrupt for a damaged blob."""
    try:
        data = unseal(bytes(blob))
        return marshal.loads(zlib.decompress(data) if compress else data)
    except (zlib.error, EOFError, ValueError, TypeError) as exc:
        raise Corrupt(str(exc)) from None


def read(file: Path):
    """The value cached in `file`, or None when it is missing or damaged (its checksum does not
    match: a flipped bit, a truncation, an edit whatever its size and times)."""
    try:
        return unpack(Path(file).read_bytes(), compress=False)
    except (OSError, Corrupt):
        return None


def write(file: Path, value, sync: bool = True) -> bool:
    """Cache `value` in `file` (atomically, with its checksum); False when the cache cannot be
    written. `sync=False` skips the fsync, for many small entries that are cheap to recompute (a
    parse per blob): after a crash such an entry may read as damaged, which is a miss."""
    try:
        atomic_write(file, pack(value, compress=False), sync=sync)
        return True
    except (OSError, ValueError):
        return False  # a read-only cache, or a value marshal cannot hold: only costs speed


class WriteError(OSError):
    """A file `atomic_write` could not replace (a full disk, a size limit, a read-only folder): it
    names the file and why, and the file is as it was."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror} (the file was not changed)"


def atomic_write(target, data: bytes | str, encoding: str = "utf-8", sync: bool = True) -> None:
    """Replace `target` by `data` all at once: readers see the old file or the new one, never a
    part. The bytes go to a temporary file in the same folder, are flushed and fsync'ed (unless
    `sync=False`), and the file is renamed over the target. A replaced file keeps its permission
    bits; a new one gets the usual ones (0666 less the umask). The temporary file is removed
    whatever goes wrong, and an OSError comes out as `WriteError` naming `target` (not the
    temporary file)."""
    target = Path(target)
    if isinstance(data, str):
        data = data.encode(encoding)
    try:
        _write_then_rename(target, data, sync)
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(exc.errno, exc.strerror or str(exc), str(target)) from exc


def _write_then_rename(target: Path, data: bytes, sync: bool = True) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as fh:
            try:
                os.fchmod(fh.fileno(), os.stat(target).st_mode & 0o7777)
            except FileNotFoundError:
                pass
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class atomic_dir:
    """`with atomic_dir(folder) as tmp:` fill `tmp`; on success it becomes `folder` in one rename
    (if `folder` already exists, another process wrote it first and `tmp` is dropped). The
    temporary folder is removed whatever goes wrong."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.tmp = self.folder.with_name(f".{self.folder.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")

    def __enter__(self) -> Path:
        self.tmp.mkdir(parents=True)
        return self.tmp

    def __exit__(self, kind, exc, tb) -> None:
        try:
            if kind is None and not self.folder.exists():
                os.replace(self.tmp, self.folder)
        finally:
            if self.tmp.exists():
                import shutil

                shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Locks (atlas.lockfile): a process that uses a cache entry holds a shared lock on it; eviction takes
# the exclusive lock without waiting, and skips what it cannot lock.
# ---------------------------------------------------------------------------------------------

def in_use(item: Path) -> list[Lock]:
    """Take every lock of a cache entry exclusively, without waiting: the locks (held; release
    them after removing the entry), or [] when a process holds one of them (the entry is in use)."""
    locks: list[Lock] = []
    candidates = sorted(item.glob("*.lock")) if item.is_dir() else [item.with_name(item.name + ".lock")]
    for path in candidates:
        if not path.exists():
            continue
        lock = Lock(path)
        try:
            taken = lock.exclusive(0)
        except OSError:
            taken = False
        if not taken:
            lock.release()
            for held in locks:
                held.release()
            return []
        locks.append(lock)
    return locks or [Lock(item.with_name(item.name + ".lock"))]  # nothing to hold: free


# ---------------------------------------------------------------------------------------------
# What the cache holds, and cleaning it up
# ---------------------------------------------------------------------------------------------

# The default size cap ($ATLAS_CACHE_MAX_MB): room for the parts one session with every clone makes (the
# parses of the code behind the pins, one code table, the compiled index and its search, the API store and
# the SPARQL store: about 250 MB together), and for one more version of the largest of them.
MAX_BYTES = 400 << 20
PARTS = {  # what each kind of entry is (`atlas cache` names it)
    "store": "the compiled index of a data folder",
    "source": "parses of source files, by git blob (shared by every data folder and clone set)",
    "codetab": "the code table of a data version over a set of clones",
    "pins": "the pin table of a data version", "clones": "where the clones are",
    "api": "the API histories, compiled", "sparql": "the SPARQL store", "code": "this code's key",
    "portable": "the YAML reader's check", "querywords": "the question words, parsed",
    "claims": "claims, compiled"}
MAX_OTHERS = 3  # data versions kept besides the current one ($ATLAS_CACHE_KEEP)


class Entry(NamedTuple):
    """One item of the cache folder: a file or a folder, its kind (the name's first word), its
    size in bytes, when it was last used (seconds since the epoch) and what it is about."""

    name: str
    kind: str
    size: int
    used: float
    about: str


def size_of(item: Path) -> int:
    """Bytes held by a file, or by every file under a folder (0 for what cannot be read)."""
    if not item.is_dir():
        try:
            return item.stat().st_size
        except OSError:
            return 0
    total = 0
    for folder, _dirs, files in os.walk(item):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _used(item: Path) -> float:
    try:
        probe = item / "current" if item.is_dir() and (item / "current").exists() else item
        return probe.stat().st_mtime
    except OSError:
        return 0.0


def _about(item: Path) -> str:
    if item.is_dir():
        pointer = read(item / "current")
        if isinstance(pointer, dict):
            return str(pointer.get("root", ""))
    return ""


def entries(folder: Path | None = None) -> list[Entry]:
    """Every item of the cache folder (lock files belong to their item), newest use first."""
    folder = folder or cache_dir()
    try:
        items = [p for p in folder.iterdir() if not p.name.endswith(".lock")]
    except OSError:
        return []
    out = [Entry(p.name, p.name.split("-", 1)[0].lstrip("."), size_of(p), _used(p), _about(p)) for p in items]
    return sorted(out, key=lambda e: (-e.used, e.name))


def remove(item: Path) -> bool:
    """Remove one cache entry unless a process holds it; True when it is gone."""
    locks = in_use(item)
    if not locks:
        return False
    try:
        if item.is_dir():
            import shutil

            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)
        for lock in locks:
            lock.path.unlink(missing_ok=True)
        return not item.exists()
    except OSError:
        return False
    finally:
        for lock in locks:
            lock.release()


def _limits() -> tuple[int, int]:
    try:
        max_bytes = int(float(os.environ.get("ATLAS_CACHE_MAX_MB", "")) * (1 << 20))
    except ValueError:
        max_bytes = MAX_BYTES
    try:
        others = int(os.environ.get("ATLAS_CACHE_KEEP", ""))
    except ValueError:
        others = MAX_OTHERS
    return max_bytes, max(0, others)


def evict(keep=(), folder: Path | None = None, max_bytes: int | None = None,
          max_others: int | None = None) -> list[str]:
    """Remove what the cache need not keep, oldest first, and return the names removed: compiled
    indexes beyond the `max_others` most recently used
    besides those named in `keep`, and anything beyond `max_bytes` in all. An entry a process
    holds (see `Lock`) is never removed; the entries in `keep` neither."""
    folder = folder or cache_dir()
    default_bytes, default_others = _limits()
    max_bytes = default_bytes if max_bytes is None else max_bytes
    max_others = default_others if max_others is None else max_others
    removed = []
    total, others = 0, 0
    for e in entries(folder):
        item = folder / e.name
        mine = e.name in keep
        if not mine and e.kind == "store":
            others += 1
        over = not mine and ((e.kind == "store" and others > max_others) or total + e.size > max_bytes)
        if over and remove(item):
            removed.append(e.name)
        else:
            total += e.size
    return removed


def clear(folder: Path | None = None) -> tuple[list[str], list[str]]:
    """Remove every entry that no process holds: (removed, kept because in use)."""
    folder = folder or cache_dir()
    removed: list[str] = []
    kept: list[str] = []
    for e in entries(folder):
        (removed if remove(folder / e.name) else kept).append(e.name)
    return removed, kept


def report(clear_it: bool = False, folder: Path | None = None) -> dict:
    """What `atlas cache` shows: the folder, its size and entries (newest use first: name, kind,
    bytes, last use as an ISO timestamp, the data folder a compiled index is of) and, when asked
    to clear it, what was removed and what was kept because a process holds it."""
    from datetime import datetime, timezone

    folder = folder or cache_dir()
    out: dict = {"folder": str(folder)}
    if clear_it:
        out["removed"], out["kept"] = clear(folder)
    found = entries(folder)
    out["bytes"] = sum(e.size for e in found)
    out["max_bytes"] = _limits()[0]
    parts: dict[str, int] = {}
    for e in found:
        parts[e.kind] = parts.get(e.kind, 0) + e.size
    out["parts"] = [{"kind": k, "bytes": n, "what": PARTS.get(k, "")}
                    for k, n in sorted(parts.items(), key=lambda kv: (-kv[1], kv[0]))]
    out["entries"] = [{"name": e.name, "kind": e.kind, "bytes": e.size, "about": e.about,
                       "used": datetime.fromtimestamp(e.used, timezone.utc).isoformat(timespec="seconds")}
                      for e in found]
    return out
