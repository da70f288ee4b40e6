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

Reading a damaged or vanished cache file gives None (a miss); a cache that cannot be written only
costs speed. `atomic_write` is how any file the project owns is replaced, cache or data: a
temporary file in the same folder, flushed to disk, then renamed over the target.
"""
from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path

from .bounded import DATA_FILE, read_bounded
from .paths import PACKAGE_DIR, cache_dir

_PYTHON = "%d.%d" % sys.version_info[:2]
_code_key: str | None = None


def crc(text: str) -> str:
    """A short stable key for cache file names."""
    import zlib

    return f"{zlib.crc32(text.encode()):08x}"


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


def _sources(root: Path) -> list[tuple[str, int, int, int]]:
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
    files = _sources(root)
    stamp_file = path("code", crc(str(root)))
    known = read(stamp_file)
    if isinstance(known, dict) and known.get("python") == _PYTHON and known.get("files") == files:
        return known["key"]
    key = crc(_PYTHON) + digest_files(root, [f[0] for f in files])[:16]
    write(stamp_file, {"python": _PYTHON, "files": files, "key": key})
    return key


def read(file: Path):
    """The value cached in `file`, or None when it is missing or damaged."""
    try:
        return marshal.loads(file.read_bytes())  # loads(bytes) is much faster than load(file)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write(file: Path, value, sync: bool = True) -> bool:
    """Cache `value` in `file` (atomically); False when the cache cannot be written. `sync=False`
    skips the fsync, for many small entries that are cheap to recompute (a parse per blob): after a
    crash such an entry may read as damaged, which is a miss."""
    try:
        atomic_write(file, marshal.dumps(value), sync=sync)
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
