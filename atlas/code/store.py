"""Parse results cached by blob: a blob never changes, so its functions, calls and macros are
computed once per version of the code and of the grammars.

Each result is one file, `<cache>/source-<key>/<blob>-<language>.marshal`, where the key covers the
code that makes and reads the results (this module, parse.py and decls.py, by content) and the
tree-sitter versions: a change elsewhere in the package keeps the parses, so the cache holds one copy.
The answers of word searches (`git grep` at a commit, for the names a round of the index follows)
are kept beside them as `grep-<hash>.marshal`, hashed from the repository, commit, pathspecs and
names; an answer that met an unreadable blob is not kept. Files are replaced atomically
(`cache.write`, without fsync); a damaged or unexpected entry reads as a miss and is parsed again.
"""
from __future__ import annotations

from pathlib import Path

from ..index import cache

_key: str | None = None


def folder() -> Path:
    """The folder of the parse results of this code and these grammars."""
    global _key
    if _key is None:
        from .parse import grammar_versions

        here = Path(__file__).resolve().parent
        makers = "\0".join(cache.file_crc(here / name) for name in ("index/database.py", "parse.py", "decls.py"))
        _key = cache.crc(makers + "\0" + grammar_versions())
    return cache.path("source", _key, "")


def _file(blob: str, language: str) -> Path:
    return folder() / f"{blob}-{language or 'text'}.marshal"


def load(blob: str, language: str) -> dict | None:
    """The cached parse of `blob` read as `language`, or None (never cached, or damaged)."""
    value = cache.read(_file(blob, language))
    return value if _well_formed(value) else None


def save(blob: str, language: str, value: dict) -> None:
    """Cache a parse (atomically, without fsync: a damaged entry is only a miss); a cache that
    cannot be written only costs speed."""
    cache.write(_file(blob, language), value, sync=False)


def _well_formed(value) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("lines"), int)
            and isinstance(value.get("functions"), list) and isinstance(value.get("macros"), list)
            and all(isinstance(f, tuple) and len(f) == 8 for f in value["functions"])
            and all(isinstance(m, tuple) and len(m) == 5 for m in value["macros"])
            and isinstance(value.get("includes"), list) and isinstance(value.get("fields"), list)
            and isinstance(value.get("usings"), list) and isinstance(value.get("bases"), list))


def _search_file(repo: str, commit: str, names: list[str], specs: list[str]) -> Path:
    import hashlib

    digest = hashlib.sha256("\0".join([repo, commit, *specs, "", *sorted(names)]).encode()).hexdigest()[:32]
    return folder() / f"grep-{digest}.marshal"


def load_search(repo: str, commit: str, names: list[str], specs: list[str]) -> list[tuple[str, str]] | None:
    """The cached answer of a word search at a commit: [(path, blob)], or None."""
    value = cache.read(_search_file(repo, commit, names, specs))
    if isinstance(value, list) and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return value
    return None


def save_search(repo: str, commit: str, names: list[str], specs: list[str], found: list[tuple[str, str]]) -> None:
    """Cache the answer of a search that read every blob (a commit's content never changes)."""
    cache.write(_search_file(repo, commit, names, specs), found, sync=False)


def _decls_file(blob: str, variant: str) -> Path:
    return folder() / f"{blob}-decls-{variant}.marshal"


def load_decls(blob: str, variant: str) -> list | None:
    """The cached declarations of a header blob (`decls.declarations`) under the decorations `variant`,
    or None."""
    value = cache.read(_decls_file(blob, variant))
    if isinstance(value, list) and all(isinstance(d, tuple) and len(d) == 5 for d in value):
        return value
    return None


def save_decls(blob: str, variant: str, value: list) -> None:
    cache.write(_decls_file(blob, variant), value, sync=False)
