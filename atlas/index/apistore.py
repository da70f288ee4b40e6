"""The API store: every repository's API history (data/api/*.jsonl), compiled into the cache beside the
card store and keyed like it (the data's content hash, its folder and the code), so that a symbol is
found without reading the histories or building the atlas.

`api-<key>/` holds `index.marshal` (each repository's header and releases, its web address, and the
concepts that name each symbol), `names.marshal` (a symbol's name, its name without scopes and both
lower-cased -> the symbols so named) and one `<repo>.marshal` per repository with its symbols. The
compiled atlas holds only the symbols concepts name (`Atlas.symbols`); this store holds them all.
"""
from __future__ import annotations

import marshal
import re
from pathlib import Path
from typing import Any, Callable

from ..model import apifile
from . import cache
from ..view import views
from ..model.core import ApiSurface, ApiSymbol, Release, named_by, name_index

IDENTIFIER = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*:)?[A-Za-z_~][A-Za-z0-9_:~]*$")
_SYMBOL_FIELDS = [f for f in ApiSymbol._fields if f != "loc"]
_SURFACE_FIELDS = [f for f in ApiSurface._fields if f not in ("loc", "releases")]
_RELEASE_FIELDS = [f for f in Release._fields]


def looks_like_symbol(term: str) -> bool:
    """A single identifier (or `ns::name`, or `owner/name:symbol`): worth a look in the store."""
    return bool(IDENTIFIER.match(term.strip()))


class ApiStore:
    def __init__(self, directory: Path, index: dict):
        self.directory = directory
        self.index = index
        self._names: dict | None = None
        self._symbols: dict[str, list[ApiSymbol]] = {}

    # -- reading --------------------------------------------------------------------------------

    def repos(self) -> list[str]:
        return sorted(self.index["repos"])

    def surface(self, repo: str) -> ApiSurface | None:
        got = self.index["repos"].get(repo)
        if got is None:
            return None
        head = dict(got["surface"])
        releases = [Release(**r) for r in head.pop("releases")]
        return ApiSurface(**head, releases=releases)

    def surfaces(self, repo: str) -> list[dict]:
        """The folders the repository's data states public or not, with the reason: [{folder, scanned,
        reason {en, zh}}] (data/repositories/, `api: surfaces:`)."""
        got = self.index["repos"].get(repo)
        return list(got.get("surfaces", [])) if got else []

    def base(self, repo: str) -> str:
        got = self.index["repos"].get(repo)
        return got["base"] if got else f"https://github.com/{repo}"

    def symbols(self, repo: str) -> list[ApiSymbol]:
        if repo not in self._symbols:
            plain = cache.read(self.directory / _file(repo)) if repo in self.index["repos"] else None
            self._symbols[repo] = [ApiSymbol(repo=repo, **p) for p in plain or []]
        return self._symbols[repo]

    def names(self) -> dict:
        if self._names is None:
            self._names = cache.read(self.directory / "names.marshal") or {}
        return self._names

    def lookup(self, term: str) -> list[ApiSymbol]:
        """The symbols a name names: `owner/name:` narrows to one repository; the qualified name or the
        name without scopes, exactly, else ignoring case (but an ordinary capitalised word, `Memory`, only
        as written: "memory" is a word to search for)."""
        term = term.strip()
        repo = ""
        head, sep, rest = term.partition(":")
        if sep and "/" in head and not rest.startswith(":"):
            repo, term = head, rest
        names = self.names()
        refs = [r for r in names.get(term) or names.get(term.lower()) or []
                if not _plain_word(r[2]) or term in (r[2], r[2].rsplit("::", 1)[-1])]
        out = []
        for rid, kind, name in refs:
            if repo and rid != repo:
                continue
            sym = next((s for s in self.symbols(rid) if s.name == name and s.kind == kind), None)
            if sym is not None:
                out.append(sym)
        return out

    def card(self, sym: ApiSymbol) -> views.SymbolCard:
        named = self.index["named"].get(f"{sym.repo}\0{sym.kind}\0{sym.name}", [])
        concepts = [{"id": cid, "name": {"en": en, "zh": zh}} for cid, en, zh in named]
        return views.symbol_card(self.base(sym.repo), self.surface(sym.repo), sym, concepts)

    def page(self, repo: str) -> views.ApiPage:
        """A repository's public API as the site shows it (every symbol, with where it is and the
        concepts that name it)."""
        surface = self.surface(repo)
        assert surface is not None
        base = self.base(repo)
        syms = self.symbols(repo)
        items = []
        for sym in syms:
            item = views.api_item_of(base, sym)
            item["where"] = [list(w) for w in sym.where]
            item["concepts"] = [cid for cid, _en, _zh in self.index["named"].get(f"{repo}\0{sym.kind}\0{sym.name}", [])]
            items.append(item)
        return {"summary": views.api_summary(base, surface, syms, self.surfaces(repo)), "base": base, "items": items}

    def closest(self, term: str, limit: int = 5) -> list[str]:
        import difflib

        names = [n for n in self.names() if n != n.lower() or "_" in n]
        return difflib.get_close_matches(term, names, n=limit, cutoff=0.75)


def _plain_word(name: str) -> bool:
    """A name whose last part is a capitalised word (`Status::Memory`, `Init`): typed in lower case it is
    an ordinary word ("memory"), so it names the symbol only as written."""
    short = name.rsplit("::", 1)[-1]
    return short.isalpha() and short[:1].isupper() and short[1:].islower()


def _file(repo: str) -> str:
    return apifile.file_name(repo).replace(apifile.SUFFIX, ".marshal")


def open_api(key: str, data_dir: Path, materialise: Callable[[], Any]) -> ApiStore:
    """The API store of the compiled index `key`; written from data/api/ (and the atlas, for the
    concepts and web addresses) when missing."""
    directory = cache.path("api", key, "")
    index = cache.read(directory / "index.marshal")
    if index is not None:
        return ApiStore(directory, index)
    histories = _read_all(Path(data_dir))
    index, names = _write(directory, histories, materialise())
    store = ApiStore(directory, index)
    store._names = names  # what was just read, kept (also when the cache cannot be written)
    store._symbols = {rid: syms for rid, (_surface, syms) in histories.items()}
    return store


def _read_all(data_dir: Path) -> dict[str, tuple[ApiSurface, list[ApiSymbol]]]:
    from ..model.apiload import read_file

    out = {}
    folder = data_dir / apifile.FOLDER
    for f in sorted(folder.glob("*" + apifile.SUFFIX)) if folder.is_dir() else []:
        got = read_file(f, str(f))
        if got.surface is not None:
            out[got.surface.repo] = (got.surface, got.symbols)
    return out


def _write(directory: Path, histories: dict, atlas) -> tuple[dict, dict]:
    everything = [s for _surface, syms in histories.values() for s in syms]
    named: dict[str, list] = {}
    index_all = name_index(everything)
    for c in atlas.concepts:
        for sym in named_by(c, index_all):
            named.setdefault(f"{sym.repo}\0{sym.kind}\0{sym.name}", []).append([c.id, c.names.en, c.names.zh])
    names: dict[str, list] = {}
    for sym in everything:
        ref = [sym.repo, sym.kind, sym.name]
        for key in dict.fromkeys([sym.name, sym.short, sym.name.lower(), sym.short.lower()]):
            names.setdefault(key, []).append(ref)
    index = {"repos": {rid: {"base": views.repo_base(atlas, rid), "surface": _plain_surface(surface),
                             "surfaces": _folders(atlas, rid)}
                       for rid, (surface, _s) in histories.items()}, "named": named}
    try:
        with cache.atomic_dir(directory) as tmp:
            for rid, (_surface, syms) in histories.items():
                (tmp / _file(rid)).write_bytes(marshal.dumps([{f: getattr(s, f) for f in _SYMBOL_FIELDS if f != "repo"}
                                                              for s in syms]))
            (tmp / "names.marshal").write_bytes(marshal.dumps(names))
            (tmp / "index.marshal").write_bytes(marshal.dumps(index))
    except OSError:
        pass  # a read-only cache: the next command reads the histories again
    return index, names


def _folders(atlas, repo: str) -> list[dict]:
    r = next((x for x in atlas.repositories if x.id == repo), None)
    return [{"folder": f.folder, "scanned": f.scanned, "reason": {"en": f.reason.en, "zh": f.reason.zh}}
            for f in (r.api.surfaces if r is not None and r.api is not None else [])]


def _plain_surface(surface: ApiSurface) -> dict:
    out = {f: getattr(surface, f) for f in _SURFACE_FIELDS}
    out["releases"] = [{f: getattr(r, f) for f in _RELEASE_FIELDS} for r in surface.releases]
    return out
