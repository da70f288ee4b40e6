"""The compiled index: the validated atlas kept as a marshal file in the user's cache, so a query
does not parse YAML. It is keyed by the data directory and invalidated by a content hash of every
data file (a stat check of size and mtime skips the hashing when nothing was touched) and by the
code that builds it.
"""
from __future__ import annotations

import marshal
import os
from pathlib import Path

from .errors import AtlasError, Location
from .model import Atlas
from .paths import PACKAGE_DIR, cache_dir, data_dir as resolve_data_dir

FORMAT = 3
_CODE = ("model.py", "loader.py", "checks.py", "index.py", "text.py")


def _scan(root: Path) -> list[tuple[str, int, int]]:
    out = []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if e.name.startswith("."):
                continue
            if e.is_dir():
                stack.append(Path(e.path))
            elif e.name.endswith((".yaml", ".yml")):
                st = e.stat()
                out.append((os.path.relpath(e.path, root), st.st_size, st.st_mtime_ns))
    out.sort()
    return out


def _code_stamp() -> list:
    stamp = [FORMAT]
    for name in _CODE:
        try:
            st = os.stat(PACKAGE_DIR / name)
            stamp.append((name, st.st_size, st.st_mtime_ns))
        except OSError:
            stamp.append((name, 0, 0))
    return stamp


def _content_hash(root: Path, files) -> str:
    import hashlib

    h = hashlib.sha256()
    for rel, _, _ in files:
        h.update(rel.encode())
        h.update(b"\0")
        h.update((root / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _cache_file(root: Path) -> Path:
    import zlib

    key = f"{zlib.crc32(str(root).encode()):08x}"
    return cache_dir() / f"index-{key}.marshal"


def _read_cache(path: Path):
    try:
        with open(path, "rb") as fh:
            return marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _write_cache(path: Path, payload: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            marshal.dump(payload, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs speed


def load_atlas(data_dir=None, *, use_cache: bool = True) -> Atlas:
    """The validated atlas of `data_dir`. Raises AtlasError (with every problem) on bad data."""
    return load_keyed(data_dir, use_cache=use_cache)[0]


def load_keyed(data_dir=None, *, use_cache: bool = True, lazy: bool = False):
    """The atlas and the content hash of its data (a key for derived caches such as the RDF).

    With lazy=True the atlas comes back as a function that builds it, so a caller that only
    needs the key (a warm SPARQL query) never reconstructs the records."""
    root = resolve_data_dir(data_dir).resolve()
    if not root.is_dir():
        raise AtlasError("data directory does not exist", Location(str(root)),
                         "pass --data DIR or set ATLAS_DATA")
    files = _scan(root)
    code = _code_stamp()
    cache = _cache_file(root)
    cached = _read_cache(cache) if use_cache else None
    if cached and cached.get("code") == code and cached.get("root") == str(root):
        fresh = cached.get("files") == files
        if not fresh:
            digest = _content_hash(root, files)
            fresh = cached.get("hash") == digest
            if fresh:
                cached["files"] = files
                _write_cache(cache, cached)
        if fresh:
            plain = cached["atlas"]
            if lazy:
                return (lambda: Atlas.from_plain(plain)), cached["hash"]
            return Atlas.from_plain(plain), cached["hash"]
    else:
        digest = None
    atlas = _build(root)
    digest = digest or _content_hash(root, files)
    if use_cache:
        _write_cache(cache, {"code": code, "root": str(root), "files": files, "hash": digest,
                             "atlas": atlas.to_plain()})
    if lazy:
        return (lambda: atlas), digest
    return atlas, digest


def _build(root: Path) -> Atlas:
    from .checks import check
    from .loader import load_data

    loaded = check(load_data(root))
    errors = loaded.errors
    if errors:
        raise AtlasError(f"the atlas data has {len(errors)} error(s)", Location(str(root)),
                         "run `atlas validate` for the full list", problems=errors)
    return loaded.atlas


def validate(data_dir=None):
    """Load and check everything; return the `Loaded` result (problems sorted by location)."""
    from .checks import check
    from .loader import load_data

    root = resolve_data_dir(data_dir).resolve()
    return check(load_data(root, display_base=Path.cwd() if _inside_cwd(root) else root.parent))


def _inside_cwd(root: Path) -> bool:
    try:
        root.relative_to(Path.cwd())
        return True
    except ValueError:
        return False
