"""The compiled index: the validated atlas kept as a marshal file in the user's cache, so a query
does not parse YAML. It is keyed by the data directory and invalidated by a content hash of every
data file (a stat check of size and mtime skips the hashing when nothing was touched), by the
folder's real path and by the package's code (see atlas.cache for the keys).
"""
from __future__ import annotations

from pathlib import Path

from . import cache
from .cache import crc
from .errors import AtlasError, Location
from .model import Atlas
from .paths import data_dir as resolve_data_dir
from .walk import list_files


def _scan(root: Path) -> list[tuple[str, int, int]]:
    """The data files (the one walk, `atlas.walk`); an error met on the way stops the command (an entry
    that vanished meanwhile is only a warning: it is not read)."""
    listing = list_files(root)
    errors = [p for p in listing.problems if p.is_error]
    if errors:
        raise AtlasError(f"the data folder has {len(errors)} problem(s)", Location(str(root)),
                         "run `atlas validate` for the full list", problems=errors)
    return listing.files


def _head_file(root: Path) -> Path:
    """Small per-data-directory file: code key, file stats and the content hash."""
    return cache.path("index", crc(str(root)), ".head")


def _body_file(key: str) -> Path:
    return cache.path("atlas", key)


def load_atlas(data_dir=None, *, use_cache: bool = True) -> Atlas:
    """The validated atlas of `data_dir`. Raises AtlasError (with every problem) on bad data."""
    return load_keyed(data_dir, use_cache=use_cache)[0]


def load_keyed(data_dir=None, *, use_cache: bool = True, lazy: bool = False):
    """The atlas and the key of its data (content hash + code stamp) for derived caches.

    With lazy=True the atlas comes back as a function that builds it, so a caller that only
    needs the key (a warm SPARQL query, a card lookup) never reconstructs the records."""
    root = resolve_data_dir(data_dir).resolve()
    if not root.is_dir():
        raise AtlasError("data directory does not exist", Location(str(root)),
                         "pass --data DIR or set ATLAS_DATA")
    files = _scan(root)
    code = cache.code_key()
    head_file = _head_file(root)
    head = cache.read(head_file) if use_cache else None
    digest = None
    if isinstance(head, dict) and head.get("code") == code and head.get("root") == str(root):
        if head.get("files") == files:
            digest = head["hash"]
        else:
            fresh = cache.digest_files(root, [f[0] for f in files])
            if fresh == head.get("hash"):
                digest = fresh
                cache.write(head_file, dict(head, files=files))
    if digest is not None:
        key = cache.data_key(digest, root)
        body = _body_file(key)
        if body.is_file():
            def materialise():
                plain = cache.read(body)
                if plain is None:  # vanished or damaged meanwhile: rebuild
                    return _build(root)
                return Atlas.from_plain(plain)

            return (materialise if lazy else materialise()), key
    atlas = _build(root)
    digest = digest or cache.digest_files(root, [f[0] for f in files])
    key = cache.data_key(digest, root)
    if use_cache:
        cache.write(_body_file(key), atlas.to_plain())
        from .search import build as build_search  # the search index, keyed like this one

        build_search(atlas, key)
        cache.write(head_file, {"code": code, "root": str(root), "files": files, "hash": digest})
    if lazy:
        return (lambda: atlas), key
    return atlas, key


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
    loaded = load_data(root, display_base=Path.cwd() if _inside_cwd(root) else root.parent)
    _check_portable(loaded)
    return check(loaded)


def _check_portable(loaded) -> None:
    """Every file must read the same with PyYAML's pure-Python reader as with libyaml (the atlas is
    read with whichever the machine has). That reader is slow, so the sha256 of each file that
    passed is remembered in the cache and the same bytes are not read again."""
    import hashlib

    from . import cache
    from .loader import portable_problems

    known_file = cache.path("portable-yaml", cache.crc(cache.code_key()))
    known = set(cache.read(known_file) or ())
    unread = loaded.unread  # reported once, by the load; a file that did read may still differ
    passed = set()
    for path in loaded.files:
        display = f"{loaded.display_dir}/{path.relative_to(loaded.data_dir).as_posix()}"
        if display in unread:
            continue
        try:
            raw = path.read_bytes()
        except OSError:
            continue  # reported by the load itself
        digest = hashlib.sha256(raw).hexdigest()
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
