"""The only reader of data/: YAML (safe, composed to nodes so every value keeps its file:line:col)
into model objects, collecting every problem instead of stopping at the first.

`load_data(dir)` returns a `Loaded` with the `Atlas`, the problems and the references each file
made (checked afterwards by `checks.check`)."""
from __future__ import annotations
from dataclasses import dataclass, field
from pathlib import Path
from ..errors import AtlasError, Location, Problem
from .core import (
    QUESTION_IDS, ApiSurface,
    ApiSymbol, Atlas, RepoHarvest, Sighting, DEFAULT_CUTOFF, plain, unplain,
)
from .walk import list_files
from .fromyaml import (
    parse_claim, parse_concept, parse_flow, parse_question, parse_repository, parse_seed_page, parse_timeline,
)
from .hygiene import _compose
from .yamlnodes import Loaded, Ref, _Ctx, _date, _fields, _list


def _list_file(ctx: _Ctx, root, key: str) -> list:
    f = _fields(ctx, root, f"{ctx.file}", (key,), (key,))
    if not f or key not in f:
        return []
    return _list(ctx, f[key], key)


class _Reading:
    """One file being read: the records it defines (kept in order, duplicates included: which one
    wins is decided when the files are put together, see `assemble`), its settings and a sink for
    its problems and references."""

    def __init__(self):
        self.loaded = Loaded(Atlas())
        self.atlas = self.loaded.atlas
        self.records: list[tuple[str, object, Location]] = []
        self.cutoff: str | None = None
        self.surface: ApiSurface | None = None  # an API history's header, and its symbols
        self.symbols: list[ApiSymbol] = []

    def add(self, ctx: _Ctx, kind: str, record, node) -> None:
        """Keep `record` (if it parsed) with the location of its node."""
        if record is not None:
            self.records.append((kind, record, ctx.loc(node)))


@dataclass
class FileResult:
    """What one data file says when read on its own, consulting no other file: its records in
    order (kind, record, location; duplicates kept), the problems and references found in it, the
    cut-off it sets (atlas.yaml), the sightings and harvests it holds (timeline.yaml) and the surface
    and every symbol of an API history (data/api/*.jsonl). Its plain
    form (`to_plain`) is what the compiled index caches per file content."""

    display: str
    records: list = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    cutoff: str | None = None
    sightings: list[Sighting] = field(default_factory=list)
    harvests: list[RepoHarvest] = field(default_factory=list)
    unread: bool = False  # the file could not be read at all (reported once, by its own problem)
    surface: ApiSurface | None = None
    symbols: list[ApiSymbol] = field(default_factory=list)

    def to_plain(self) -> dict:
        return {
            "display": self.display,
            "records": [(kind, plain(r), tuple(loc)) for kind, r, loc in self.records],
            "problems": [(tuple(p.location), p.level, p.code, p.message, p.hint) for p in self.problems],
            "refs": [(r.kind, r.target, tuple(r.loc), r.what) for r in self.refs],
            "cutoff": self.cutoff,
            "sightings": [plain(s) for s in self.sightings],
            "harvests": [plain(h) for h in self.harvests],
            "unread": self.unread,
            "surface": None if self.surface is None else plain(self.surface),
            "symbols": [plain(s) for s in self.symbols],
        }

    @classmethod
    def from_plain(cls, data: dict) -> "FileResult":
        return cls(
            data["display"],
            [(kind, unplain(_LISTS_OF[kind], r), Location(*loc)) for kind, r, loc in data["records"]],
            [Problem(Location(*loc), *rest) for loc, *rest in data["problems"]],
            [Ref(kind, target, Location(*loc), what) for kind, target, loc, what in data["refs"]],
            data["cutoff"],
            [unplain("sightings", s) for s in data["sightings"]],
            [unplain("harvests", h) for h in data["harvests"]],
            bool(data.get("unread")),
            None if data.get("surface") is None else unplain("surfaces", data["surface"]),
            [unplain("symbols", s) for s in data.get("symbols", ())])


_LISTS_OF = {"question": "questions", "repository": "repositories", "concept": "concepts", "claim": "claims",
             "flow": "flows", "seed page": "seed_pages"}


def _read_settings(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
    f = _fields(ctx, root, "atlas.yaml", ("cutoff",), ("cutoff",))
    if f and "cutoff" in f:
        reading.cutoff = _date(ctx, f["cutoff"], "cutoff") or DEFAULT_CUTOFF


def _read_timeline(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
    sightings, harvests, _ = parse_timeline(ctx, root)
    reading.atlas.sightings.extend(sightings)
    reading.atlas.harvests.extend(harvests)


def _list_of(kind: str, key: str, parse):
    """A reader of a file holding `key:` with a list of records."""
    def read(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
        for item in _list_file(ctx, root, key):
            reading.add(ctx, kind, parse(ctx, item), item)
    return read


def _one_per_file(kind: str, parse):
    """A reader of a file holding one record whose id is the file's name."""
    def read(reading: _Reading, ctx: _Ctx, root, path: Path) -> None:
        reading.add(ctx, kind, parse(ctx, root, path.stem), root)
    return read


# Where each kind of record lives (docs/schema.md): files at the top of data/, by name, and folders
# under it, by the folder's name; reader(reading, ctx, root node, path).
_TOP_FILES = {
    "atlas.yaml": _read_settings,
    "questions.yaml": _list_of("question", "questions", parse_question),
    "timeline.yaml": _read_timeline,
    "seed.yaml": _list_of("seed page", "pages", parse_seed_page),
}


_FOLDERS = {
    "repositories": _list_of("repository", "repositories", parse_repository),
    "concepts": _one_per_file("concept", parse_concept),
    "claims": _list_of("claim", "claims", parse_claim),
    "flows": _one_per_file("flow", parse_flow),
}


def _display(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def _read_api_file(reading: _Reading, path: Path, rel: Path, file: str, raw: bytes | None) -> None:
    """A generated API history (`data/api/<owner>+<name>.jsonl`, read by `atlas.model.apiload`)."""
    from .apiload import read_file as read_api

    if len(rel.parts) != 2 or rel.parts[0] != "api":
        reading.loaded.problems.append(Problem(Location(file), "warning", "unknown-file",
                                               "file is not part of the atlas layout and was not read",
                                               "API histories live in data/api/ (see docs/schema.md)"))
        return
    got = read_api(path, file, raw)
    reading.loaded.problems.extend(got.problems)
    if got.surface is not None:
        reading.surface = got.surface
        reading.symbols = got.symbols
        reading.loaded.refs.append(Ref("repo", got.surface.repo, Location(file, 1, 1), "API history"))


def _read_file(reading: _Reading, path: Path, rel: Path, file: str, raw: bytes | None = None) -> None:
    if path.suffix == ".jsonl":
        _read_api_file(reading, path, rel, file, raw)
        return
    ctx = _Ctx(file, reading.loaded)
    before = len(reading.loaded.problems)
    root = _compose(path, ctx, raw)
    if root is None:
        if len(reading.loaded.problems) > before:
            reading.loaded.unread.add(ctx.file)
        else:
            ctx.warning(Location(ctx.file), "empty-file", "file is empty")
        return
    read = _TOP_FILES.get(rel.name) if len(rel.parts) == 1 else _FOLDERS.get(rel.parts[0])
    if read is None:
        ctx.warning(Location(ctx.file), "unknown-file", "file is not part of the atlas layout and was not read",
                    "see docs/schema.md for where each kind of record lives")
        return
    read(reading, ctx, root, path)
    ctx.finish()


def read_file(path: Path, rel: Path, display: str, raw: bytes | None = None) -> FileResult:
    """Read one data file on its own (`rel`: its path under the data folder; `display`: its name
    in locations; `raw`: its bytes, when read already). Never raises for bad data: the problems are
    in the result."""
    reading = _Reading()
    _read_file(reading, path, rel, display, raw)
    loaded = reading.loaded
    return FileResult(display, reading.records, loaded.problems, loaded.refs, reading.cutoff,
                      reading.atlas.sightings, reading.atlas.harvests, bool(loaded.unread),
                      reading.surface, reading.symbols)


def _sort(atlas: Atlas) -> None:
    atlas.concepts.sort(key=lambda c: c.id)
    atlas.claims.sort(key=lambda c: c.id)
    atlas.flows.sort(key=lambda f: f.id)
    atlas.repositories.sort(key=lambda r: r.id.lower())
    order = {q: i for i, q in enumerate(QUESTION_IDS)}
    atlas.questions.sort(key=lambda q: order[q.id])
    atlas.seed_pages.sort(key=lambda p: p.number)


def duplicate(kind: str, ident: str, loc: Location, first: Location) -> Problem:
    """The problem of a record whose id an earlier record (in file order) took already."""
    return Problem(loc, "error", "duplicate-id", f'{kind} id "{ident}" is defined twice',
                   f"the other definition is at {first}")


def assemble(loaded: Loaded, results) -> Loaded:
    """Put files read on their own together, in the order given (the walk's order): the first
    record of a kind and id is kept, a later one is a `duplicate-id` error; the lists are sorted
    and indexed. `results` yields (path, FileResult)."""
    atlas = loaded.atlas
    seen: dict[tuple[str, str], Location] = {}
    for path, result in results:
        loaded.files.append(path)
        loaded.problems.extend(result.problems)
        loaded.refs.extend(result.refs)
        if result.unread:
            loaded.unread.add(result.display)
        for kind, record, loc in result.records:
            key = (kind, record.id)
            if key in seen:
                loaded.problems.append(duplicate(kind, record.id, loc, seen[key]))
                continue
            seen[key] = loc
            getattr(atlas, _LISTS_OF[kind]).append(record)
        if result.cutoff is not None:
            atlas.cutoff = result.cutoff
        atlas.sightings.extend(result.sightings)
        atlas.harvests.extend(result.harvests)
        _add_api(loaded, result)
    _sort(atlas)
    _name_symbols(loaded)
    atlas.reindex()
    return loaded


def _add_api(loaded: Loaded, result: FileResult) -> None:
    """An API history's surface and symbols (one file per repository: a second one is reported by
    `checks.check_api`)."""
    if result.surface is not None:
        loaded.atlas.surfaces.append(result.surface)
        loaded.api[result.surface.repo] = result.symbols


def _name_symbols(loaded: Loaded) -> None:
    """The surfaces in repository order, and the symbols that concepts name (`apiload.named`)."""
    if loaded.api:
        from .apiload import named

        loaded.atlas.surfaces.sort(key=lambda x: x.repo)
        loaded.atlas.symbols = named(loaded.atlas, [s for syms in loaded.api.values() for s in syms])


def listing(data_dir: Path, display_base: Path | None = None):
    """(Loaded without records, the files to read as (path, rel, display)) for a data folder:
    the walk's problems are in the Loaded already; None for the files when the folder cannot be
    read at all."""
    data_dir = Path(data_dir)
    loaded = Loaded(Atlas(), data_dir=data_dir)
    base = display_base if display_base is not None else data_dir.parent
    loaded.display_dir = _display(data_dir, base)
    if not data_dir.is_dir():
        loaded.problems.append(Problem(Location(str(data_dir)), "error", "no-data",
                                       "data directory does not exist"))
        return loaded, None
    try:
        found = list_files(data_dir, lambda rel: _display(data_dir / rel, base))
    except AtlasError as exc:
        loaded.problems.append(Problem(exc.location, "error", "data-root", exc.message, exc.hint))
        return loaded, None
    loaded.problems.extend(found.problems)
    files = [(data_dir / rel, Path(rel), _display(data_dir / rel, base)) for rel, _, _ in found.files]
    return loaded, files


def load_data(data_dir: Path, display_base: Path | None = None) -> Loaded:
    """Read every file of a data directory. Never raises for bad data: see `Loaded.problems`."""
    loaded, files = listing(data_dir, display_base)
    if files is None:
        return loaded
    return assemble(loaded, ((path, read_file(path, rel, display)) for path, rel, display in files))
