"""Changed data files applied to the compiled index (atlas.index.database), with work proportional to the
change. docs/architecture.md ("The compiled index") describes the steps; in short, for a set of
files whose content hash changed (added, edited or removed):

1. each file's rows are replaced: its parse result (kept by content hash), the records it defines
   (`cand`, duplicates included), the references it makes (`ref`) and its own problems;
2. every (kind, id) it defined before or defines now gets its winner again (the first definition
   in file order, as `load.assemble` decides) and its duplicate-id problems; a winner that
   changed is derived again: name lookups, relations, claim subjects, flow concepts, search rows;
3. the cross-file checks of `atlas.model.checks` run again on what the change can reach, each on a small
   atlas built from the index's tables (`Scopes`), and their problems replace the old ones of the
   same scope; a relation to a removed id is found because the references to every id that
   appeared or disappeared are checked again;
4. every card that shows something that changed gets a new epoch: it is rendered again when asked.

A first build is the same update with every file added (`everything`): the scopes are then the
whole atlas.
"""
from __future__ import annotations

from typing import NamedTuple

from ..model import apifile, checks
from . import cache, search
from .. import progress
from ..view import views
from ..errors import Location, Problem
from ..model.load import FileResult, assemble, duplicate
from ..model.yamlnodes import Loaded
from ..model.core import (
    ACYCLIC_RELATIONS, DEFAULT_CUTOFF, QUESTION_IDS, ApiSymbol, Atlas, Concept, Relation, Text, name_index,
    named_by, plain, unplain,
)
from ..text import norm, squash

STAGES = {"file": 0} | {fn.__name__: 1 + i for i, fn in enumerate(checks.CHECKS)}  # the order check() reports
DOC_TYPES = {"concept": "concept", "claim": "claim", "flow": "flow", "repository": "repo"}
LISTS = {"question": "questions", "repository": "repositories", "concept": "concepts", "claim": "claims",
         "flow": "flows", "seed page": "seed_pages"}
REF_KINDS = {"concept": ("concept", "hardware"), "repository": ("repo",), "flow": ("flow",)}  # record -> Ref.kind
API_SUFFIX = apifile.SUFFIX  # an API history (data/api/<owner>+<name>.jsonl): no records, a surface and symbols
SETTINGS, TIMELINE, QUESTIONS = "atlas.yaml", "timeline.yaml", "questions.yaml"


class Change(NamedTuple):
    """A data file's new state: its content hash and its name in locations (its parse result is
    in the `parsed` table under both), or gone."""

    sha: str
    display: str
    gone: bool = False


class Snap(NamedTuple):
    """What the cross-file checks and the cards depend on, of one record: where it is defined,
    its kind, names, relations (type, source, target, key) and the concepts a claim or flow names."""

    win: tuple
    kind: str
    names: bytes
    relations: tuple
    subjects: frozenset


def rkey(r) -> str:
    return "\0".join(checks.relation_key(r))


# ---------------------------------------------------------------------------------------------
# Reading records back
# ---------------------------------------------------------------------------------------------

class Results:
    """Parse results of the files of the index (by rel); the most recently used are kept in
    memory (a first build of a large atlas must not hold them all)."""

    KEEP = 256

    def __init__(self, con):
        from collections import OrderedDict

        self.con = con
        self.cache: OrderedDict = OrderedDict()

    def get(self, rel: str) -> FileResult | None:
        if rel in self.cache:
            self.cache.move_to_end(rel)
            return self.cache[rel]
        row = self.con.execute("SELECT parsed.blob FROM file JOIN parsed ON parsed.sha = file.sha AND "
                               "parsed.display = file.display WHERE file.rel = ?", (rel,)).fetchone()
        result = self.cache[rel] = FileResult.from_plain(cache.unpack(row[0])) if row else None
        if len(self.cache) > self.KEEP:
            self.cache.popitem(last=False)
        return result

    def record(self, rel: str, pos: int):
        return self.result(rel).records[pos][1]

    def result(self, rel: str) -> FileResult:
        """The parse result of a file the index holds (a missing one is a damaged index)."""
        found = self.get(rel)
        if found is None:
            raise cache.Corrupt(f"no parse result for {rel}")
        return found

    def winner(self, kind: str, ident: str):
        row = self.con.execute("SELECT rel, pos FROM win WHERE kind = ? AND id = ?", (kind, ident)).fetchone()
        return self.record(*row) if row else None


def all_results(con, records_only: bool = False):
    """(rel, FileResult) of every file, in file order."""
    rows = con.execute("SELECT file.rel, parsed.blob FROM file JOIN parsed ON parsed.sha = file.sha AND "
                       "parsed.display = file.display ORDER BY file.rel")
    for rel, blob in rows:
        data = cache.unpack(blob)
        if records_only:
            data = dict(data, problems=[], refs=[])
        yield rel, FileResult.from_plain(data)


def materialise(con, root) -> Atlas:
    """The whole atlas, from the parse results (the same as loading every file)."""
    loaded = Loaded(Atlas(), data_dir=root)
    return assemble(loaded, ((root / rel, r) for rel, r in all_results(con, records_only=True))).atlas


def problems(con) -> list[Problem]:
    """Every problem of the index, in the order `checks.check` reports them."""
    out = [Problem(Location(*p[0]), *p[1:]) for (blob,) in
           con.execute("SELECT blob FROM problem ORDER BY stage, scope, seq") for p in cache.unpack(blob)]
    out.sort(key=lambda p: (p.location.file, p.location.line, p.location.col, p.code))
    return out


def skeleton(ident: str, kind: str, names_blob: bytes, relations=()) -> Concept:
    """A concept with only what the name lookups and the cross-file checks read: id, kind, names,
    aliases and location (and the relations given)."""
    names, aliases, loc = cache.unpack(names_blob)
    return Concept(ident, kind, Text(**names), aliases=aliases, relations=list(relations),
                   loc=Location(*loc) if loc else None)


# ---------------------------------------------------------------------------------------------
# The update
# ---------------------------------------------------------------------------------------------

class Update:
    def __init__(self, con, changes: dict[str, Change], counter: int, everything: bool):
        self.con = con
        self.changes = changes
        self.epoch = counter + 1
        self.everything = everything
        self.results = Results(con)
        self.keys: set[tuple[str, str]] = set()
        self.before: dict[tuple[str, str], Snap | None] = {}
        self.after: dict[tuple[str, str], Snap | None] = {}
        self.changed: set[tuple[str, str]] = set()
        self.top = {rel for rel in changes if rel in (SETTINGS, TIMELINE, QUESTIONS)}
        self.api = everything or any(rel.endswith(API_SUFFIX) for rel in changes)  # an API history changed
        self._symbols: dict[str, list[ApiSymbol]] | None = None

    def run(self) -> None:
        self.files()
        self.winners()
        self.settings()
        self.named()
        Scopes(self).run()
        self.cards()

    # -- 1. files -----------------------------------------------------------------------------

    def files(self) -> None:
        con = self.con
        for rel, ch in sorted(self.changes.items()):
            if not self.everything:
                self.keys.update(con.execute("SELECT kind, id FROM cand WHERE rel = ?", (rel,)).fetchall())
                con.execute("DELETE FROM ref WHERE fid = (SELECT fid FROM file WHERE rel = ?)", (rel,))
                for table in ("cand", "file"):
                    con.execute(f"DELETE FROM {table} WHERE rel = ?", (rel,))
                con.execute("DELETE FROM problem WHERE scope = ?", ("f:" + rel,))
            if not ch.gone:
                self.add_file(rel, ch)

    def add_file(self, rel: str, ch: Change) -> None:
        con = self.con
        fid = con.execute("INSERT INTO file (rel, sha, display) VALUES (?, ?, ?)", (rel, ch.sha, ch.display)).lastrowid
        con.execute("UPDATE parsed SET used = ? WHERE sha = ? AND display = ?", (self.epoch, ch.sha, ch.display))
        result = self.results.result(rel)
        con.executemany("INSERT INTO cand VALUES (?, ?, ?, ?, ?, ?)", [
            (kind, r.id, rel, pos, loc.line, loc.col) for pos, (kind, r, loc) in enumerate(result.records)])
        self.keys.update((kind, r.id) for kind, r, _ in result.records)
        con.executemany("INSERT INTO ref VALUES (?, ?, ?)", sorted({(r.kind, r.target, fid) for r in result.refs}))
        put(con, "f:" + rel, "file", result.problems)

    # -- 2. winners -----------------------------------------------------------------------------

    def winners(self) -> None:
        with progress.bar("indexing the records", len(self.keys), when=self.everything) as step:
            for kind, ident in sorted(self.keys):
                self.winner(kind, ident)
                step.advance()

    def winner(self, kind: str, ident: str) -> None:
        before = None if self.everything else self.snap(kind, ident)
        cands = self.con.execute("SELECT rel, pos, line, col FROM cand WHERE kind = ? AND id = ? "
                                 "ORDER BY rel, pos", (kind, ident)).fetchall()
        win = tuple(cands[0][:2]) if cands else None
        if before is None or win != before.win or win[0] in self.changes:
            self.replace(kind, ident, win)
        self.duplicates(kind, ident, cands)
        after = self.snap(kind, ident)
        if before != after or (win and win[0] in self.changes):
            self.changed.add((kind, ident))
        self.before[(kind, ident)], self.after[(kind, ident)] = before, after

    def snap(self, kind: str, ident: str) -> Snap | None:
        con = self.con
        win = con.execute("SELECT rel, pos FROM win WHERE kind = ? AND id = ?", (kind, ident)).fetchone()
        if win is None:
            return None
        if kind == "concept":
            ckind, names = con.execute("SELECT kind, names FROM concept WHERE id = ?", (ident,)).fetchone()
            rels = con.execute("SELECT type, source, target, rkey FROM rel WHERE owner = ? ORDER BY pos",
                               (ident,)).fetchall()
            return Snap(tuple(win), ckind, bytes(names), tuple(map(tuple, rels)), frozenset())
        table, column = {"claim": ("about", "claim"), "flow": ("touch", "flow")}.get(kind, (None, None))
        subjects = frozenset(r[0] for r in con.execute(
            f"SELECT concept FROM {table} WHERE {column} = ?", (ident,))) if table else frozenset()
        return Snap(tuple(win), kind, b"", (), subjects)

    def replace(self, kind: str, ident: str, win) -> None:
        con = self.con
        con.execute("DELETE FROM win WHERE kind = ? AND id = ?", (kind, ident))
        if not self.everything:
            remove_derived(con, kind, ident)
        if win is not None:
            con.execute("INSERT INTO win VALUES (?, ?, ?, ?)", (kind, ident, *win))
            add_derived(con, kind, self.results.record(*win))

    def duplicates(self, kind: str, ident: str, cands) -> None:
        scope = f"d:{kind}:{ident}"
        if not self.everything:
            self.con.execute("DELETE FROM problem WHERE scope = ?", (scope,))
        if len(cands) > 1:
            display = {rel: self.display(rel) for rel, *_ in cands}
            first = Location(display[cands[0][0]], cands[0][2], cands[0][3])
            put(self.con, scope, "file", [duplicate(kind, ident, Location(display[rel], line, col), first)
                                          for rel, _pos, line, col in cands[1:]])

    def display(self, rel: str) -> str:
        return self.con.execute("SELECT display FROM file WHERE rel = ?", (rel,)).fetchone()[0]

    # -- settings and timeline ------------------------------------------------------------------

    def settings(self) -> None:
        con = self.con
        if SETTINGS in self.top or self.everything:
            result = self.results.get(SETTINGS)
            cutoff = result.cutoff if result is not None and result.cutoff is not None else DEFAULT_CUTOFF
            set_meta(con, "cutoff", cutoff)
        if TIMELINE in self.top or self.everything:
            con.execute("DELETE FROM sighting")
            result = self.results.get(TIMELINE)
            sightings = [s for _rel, r in self.timeline_results() for s in r.sightings]
            con.executemany("INSERT INTO sighting VALUES (?, ?, ?)",
                            [(s.concept, i, cache.pack(plain(s))) for i, s in enumerate(sightings)])
            del result
        if any(kind == "question" for kind, _ in self.changed) or self.everything:
            questions = [q for q in (self.results.winner("question", q) for q in QUESTION_IDS) if q]
            set_meta(con, "questions", views.question_names(Atlas(questions=questions)))

    # -- the API histories: their surfaces, the symbols each concept names -------------------------

    def api_results(self):
        """(rel, FileResult) of the API histories read, in file order."""
        rels = [r[0] for r in self.con.execute("SELECT rel FROM file WHERE rel LIKE ? ORDER BY rel",
                                               ("%" + API_SUFFIX,))]
        for rel in rels:
            result = self.results.get(rel)
            if result is not None and result.surface is not None:
                yield rel, result

    def symbols(self) -> dict[str, list[ApiSymbol]]:
        """repository -> every symbol of its API history (`Loaded.api`: a later file of the same
        repository replaces an earlier one, as in `load.assemble`)."""
        if self._symbols is None:
            self._symbols = {}
            for _rel, result in self.api_results():
                assert result.surface is not None
                self._symbols[result.surface.repo] = result.symbols
        return self._symbols

    def named(self) -> None:
        """The surfaces (meta `surfaces`) and, per concept, the symbols it names (table `named`):
        for every concept when an API history changed, else for the concepts that changed."""
        con = self.con
        if self.api:
            surfaces = sorted((r.surface for _rel, r in self.api_results()), key=lambda x: x.repo)
            set_meta(con, "surfaces", [plain(x) for x in surfaces])
            con.execute("DELETE FROM named")
            ids = [r[0] for r in con.execute("SELECT id FROM concept ORDER BY id")]
        else:
            ids = sorted(i for k, i in self.changed if k == "concept")
            con.executemany("DELETE FROM named WHERE concept = ?", [(i,) for i in ids])
        symbols = self.symbols() if ids else {}
        if not symbols:
            return
        index = name_index([x for syms in symbols.values() for x in syms])
        for ident in ids:
            c = self.results.winner("concept", ident)
            if c is not None:
                con.executemany("INSERT INTO named VALUES (?, ?, ?, ?, ?, ?)", [
                    (ident, i, x.repo, x.kind, x.name, cache.pack(plain(x))) for i, x in enumerate(named_by(c, index))])

    def timeline_results(self):
        """The files that hold sightings (the timeline), in file order."""
        for rel in (TIMELINE,):
            result = self.results.get(rel)
            if result is not None:
                yield rel, result

    # -- 4. cards -------------------------------------------------------------------------------

    def cards(self) -> None:
        con, epoch = self.con, self.epoch
        kinds = {kind for kind, _ in self.changed}
        if self.everything or self.api or self.top & {SETTINGS, QUESTIONS, TIMELINE} or \
                kinds & {"repository", "question"}:
            set_meta(con, "epoch_all", epoch)
            return
        ids: set[str] = set()
        for key in self.changed:
            ids |= self.reached(key)
        con.executemany("INSERT OR REPLACE INTO stale VALUES (?, ?)", [(i, epoch) for i in sorted(ids)])

    def reached(self, key: tuple[str, str]) -> set[str]:
        """The concepts whose card shows something of the changed record `key`."""
        kind, ident = key
        before, after = self.before.get(key), self.after.get(key)
        out: set[str] = set()
        for snap in (before, after):
            if snap is not None:
                out |= snap.subjects | {end for r in snap.relations for end in r[1:3]}
        if kind != "concept":
            return out
        out.add(ident)
        if before is None or after is None or before.names != after.names:  # where its names are shown
            for row in self.con.execute("SELECT owner, source, target FROM rel WHERE source = ? OR target = ?",
                                        (ident, ident)):
                out.update(row)
            out |= self.listing_hardware(ident)
        return out

    def listing_hardware(self, ident: str) -> set[str]:
        """The concepts whose hardware list names `ident` (a card labels them by name)."""
        return {r[0] for r in self.con.execute(
            "SELECT cand.id FROM ref JOIN file ON file.fid = ref.fid JOIN cand ON cand.rel = file.rel "
            "WHERE ref.kind = 'hardware' AND ref.target = ? AND cand.kind = 'concept'", (ident,))}


def set_meta(con, key: str, value) -> None:
    from .database import set_meta as put_meta

    put_meta(con, key, value)


def put(con, scope: str, stage: str, found: list[Problem]) -> None:
    """Store the problems of one scope (after its old ones were removed)."""
    if found:
        con.execute("INSERT INTO problem VALUES (?, ?, ?, ?)",
                    (scope, STAGES[stage], 0, cache.pack([(tuple(p.location), *p[1:]) for p in found])))


def add_derived(con, kind: str, record) -> None:
    """The rows derived from the record that counts for (kind, id)."""
    if kind == "concept":
        c = record
        con.execute("INSERT INTO concept VALUES (?, ?, ?, ?)",
                    (c.id, c.kind, cache.pack(({"en": c.names.en, "zh": c.names.zh}, c.aliases,
                                               tuple(c.loc) if c.loc else None)), int(c.undated is not None)))
        names = [c.id, *c.all_names()]
        con.executemany("INSERT INTO name VALUES (?, ?)", [(k, c.id) for k in sorted({norm(n) for n in names})])
        con.executemany("INSERT INTO loose VALUES (?, ?)", [(k, c.id) for k in sorted({squash(n) for n in names})])
        con.executemany("INSERT INTO rel VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            (c.id, i, r.type, r.source, r.target, rkey(r), *(tuple(r.loc) if r.loc else ("", 0, 0)),
             cache.pack(plain(r))) for i, r in enumerate(c.relations)])
        if c.api:
            con.execute("INSERT INTO apiname VALUES (?)", (c.id,))
    elif kind == "claim":
        con.executemany("INSERT INTO about VALUES (?, ?)", [(record.id, x) for x in sorted(set(record.about))])
    elif kind == "flow":
        concepts = {x for s in record.steps for x in s.concepts}
        con.executemany("INSERT INTO touch VALUES (?, ?)", [(record.id, x) for x in sorted(concepts)])
    if kind in DOC_TYPES:
        search.add_documents(con, views.search_documents(Atlas(**{LISTS[kind]: [record]})))


def remove_derived(con, kind: str, ident: str) -> None:
    if kind == "concept":
        for table, column in (("concept", "id"), ("name", "id"), ("loose", "id"), ("rel", "owner"),
                              ("apiname", "concept")):
            con.execute(f"DELETE FROM {table} WHERE {column} = ?", (ident,))
    elif kind == "claim":
        con.execute("DELETE FROM about WHERE claim = ?", (ident,))
    elif kind == "flow":
        con.execute("DELETE FROM touch WHERE flow = ?", (ident,))
    if kind in DOC_TYPES:
        search.remove_documents(con, DOC_TYPES[kind], ident)


# ---------------------------------------------------------------------------------------------
# 3. The cross-file checks, on what a change can reach
# ---------------------------------------------------------------------------------------------

class _Kind(NamedTuple):
    kind: str


class _Lookup:
    """A read-only mapping backed by one SQL query (`?` is the key), remembered per key."""

    def __init__(self, con, sql: str, make=lambda row: row, preload: dict | None = None):
        self.con, self.sql, self.make = con, sql, make
        self.known: dict = dict(preload or {})
        self.complete = preload is not None

    def get(self, key, default=None):
        if key not in self.known and not self.complete:
            row = self.con.execute(self.sql, (key,)).fetchone()
            self.known[key] = self.make(row) if row else None
        found = self.known.get(key)
        return default if found is None else found

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key):
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


class IndexView:
    """What `checks.check_refs` reads of an Atlas, from the index's tables: concept kinds and
    repository ids by id (looked up one by one, or all at once for a first build), and - only to
    word a hint for a wrong reference - every concept's names and every repository."""

    def __init__(self, con, everything: bool):
        self.con = con
        kinds = {i: _Kind(k) for i, k in con.execute("SELECT id, kind FROM concept")} if everything else None
        repos = {r[0]: True for r in con.execute("SELECT id FROM win WHERE kind = 'repository'")} \
            if everything else None
        self.concept_by_id = _Lookup(con, "SELECT kind FROM concept WHERE id = ?", lambda r: _Kind(r[0]), kinds)
        self.repo_by_id = _Lookup(con, "SELECT 1 FROM win WHERE kind = 'repository' AND id = ?",
                                  lambda r: True, repos)
        flows = {r[0]: True for r in con.execute("SELECT id FROM win WHERE kind = 'flow'")} if everything else None
        self.flow_by_id = _Lookup(con, "SELECT 1 FROM win WHERE kind = 'flow' AND id = ?", lambda r: True, flows)
        self._concepts: list | None = None

    @property
    def concepts(self) -> list[Concept]:
        if self._concepts is None:
            self._concepts = [skeleton(i, k, n) for i, k, n in
                              self.con.execute("SELECT id, kind, names FROM concept ORDER BY id")]
        return self._concepts

    @property
    def repositories(self) -> list:
        return [_Repo(r[0]) for r in self.con.execute("SELECT id FROM win WHERE kind = 'repository'")]

    @property
    def flows(self) -> list:
        return [_Repo(r[0]) for r in self.con.execute("SELECT id FROM win WHERE kind = 'flow'")]


class _Repo(NamedTuple):  # (a repository or a flow: only its id is read)
    id: str


class Scopes:
    """The cross-file checks of one update, each run on the part of the atlas the change reaches
    (or all of it for a first build), replacing the problems of the same scope."""

    def __init__(self, update: Update):
        self.u = update
        self.con = update.con
        self.all = update.everything
        self.display_dir = _display_dir(update.con)
        concepts = [i for k, i in update.changed if k == "concept"]
        self.concepts = set(concepts)
        self.naming = any(self._renamed(k, i) for k, i in update.changed if k in REF_KINDS)

    def _renamed(self, kind: str, ident: str) -> bool:
        before, after = self.u.before.get((kind, ident)), self.u.after.get((kind, ident))
        if before is None or after is None:
            return before is not after
        return before.names != after.names or before.kind != after.kind

    def loaded(self, atlas: Atlas | None = None, **kw) -> Loaded:
        return Loaded(atlas or Atlas(), display_dir=self.display_dir, **kw)

    def run(self) -> None:
        """Each check of `checks.CHECKS` on what the change reaches. A check without a scope here
        stops the update: a new cross-file check must say what it depends on (see the module)."""
        runs = {
            "check_refs": self.refs, "check_questions": self.questions, "check_collisions": self.collisions,
            "check_identifiers": self.identifiers,
            "check_cycles": self.cycles, "check_relations": self.relations, "check_dates": self.dates,
            "check_flows": lambda: self.records("flow", "flows", "w:", checks.check_flows),
            "check_claim_status": lambda: self.records("claim", "claims", "m:", checks.check_claim_status),
            "check_planes": self.planes, "check_test_plans": self.test_plans, "check_undated": self.undated,
            "check_api": self.histories, "check_seed_citations": self.seed_citations,
        }
        for check in checks.CHECKS:
            if check.__name__ not in runs:
                raise NotImplementedError(f"atlas.index.update has no scope for {check.__name__}: say which records "
                                          "its problems depend on (docs/architecture.md, The compiled index)")
            runs[check.__name__]()

    def relations(self) -> None:
        self.pairs()
        self.lonely()

    def replace(self, scopes, stage: str, found: dict[str, list[Problem]]) -> None:
        for scope in sorted(scopes):
            if not self.all:
                self.con.execute("DELETE FROM problem WHERE scope = ?", (scope,))
            put(self.con, scope, stage, found.get(scope, []))

    # -- references -----------------------------------------------------------------------------

    def refs(self) -> None:
        rels = self._ref_files()
        view = IndexView(self.con, self.all)
        found = {}
        for rel in sorted(rels):
            result = self.u.results.get(rel)
            if result is not None and result.refs:
                loaded = self.loaded(refs=result.refs)
                loaded.atlas = view  # type: ignore[assignment]  # what check_refs reads
                checks.check_refs(loaded)
                found["r:" + rel] = loaded.problems
        self.replace({"r:" + rel for rel in rels}, "check_refs", found)

    def _ref_files(self) -> set[str]:
        con = self.con
        if self.all:
            return {r[0] for r in con.execute("SELECT rel FROM file")}
        rels = set(self.u.changes)
        for kind, ident in self.u.changed:
            if kind in REF_KINDS and self._renamed(kind, ident):
                kinds = REF_KINDS[kind]
                rels |= {r[0] for r in con.execute(
                    "SELECT DISTINCT rel FROM ref JOIN file ON file.fid = ref.fid "
                    f"WHERE target = ? AND kind IN ({','.join('?' * len(kinds))})",
                    (ident, *kinds))}
        if self.naming:
            rels |= {r[0][2:] for r in con.execute("SELECT DISTINCT scope FROM problem WHERE scope LIKE 'r:%'")}
        return rels

    # -- questions ------------------------------------------------------------------------------

    def questions(self) -> None:
        where = f"{self.display_dir}/{QUESTIONS}"
        mine = [p for p in _stored(self.con, stage=0) if p.location.file == where]
        questions = [q for q in (self.u.results.winner("question", q) for q in QUESTION_IDS) if q]
        result = self.u.results.get(QUESTIONS)
        loaded = self.loaded(Atlas(questions=questions), problems=list(mine),
                             unread={where} if result is not None and result.unread else set())
        checks.check_questions(loaded)
        self.replace({"q"}, "check_questions", {"q": loaded.problems[len(mine):]})

    # -- identifiers shared across kinds ----------------------------------------------------------

    def identifiers(self) -> None:
        """An id that a question, a concept, a claim or a flow shares: checked again for every id a
        changed file defined before or defines now (scope `i:<id>`)."""
        kinds = ("question", "concept", "claim", "flow")
        marks = ",".join("?" * len(kinds))
        if self.all:
            ids = {r[0] for r in self.con.execute(
                f"SELECT id FROM win WHERE kind IN ({marks}) GROUP BY id HAVING COUNT(*) > 1", kinds)}
        else:
            ids = {i for k, i in self.u.keys if k in kinds}
        found: dict[str, list[Problem]] = {}
        for ident in sorted(ids):
            winners = {k: self.u.results.winner(k, ident) for k in kinds}
            lists = {LISTS[k]: [r] for k, r in winners.items() if r is not None}
            if len(lists) > 1:
                loaded = self.loaded(Atlas(**lists))
                checks.check_identifiers(loaded)
                found["i:" + ident] = loaded.problems
        self.replace({"i:" + i for i in ids}, "check_identifiers", found)

    # -- collisions -----------------------------------------------------------------------------

    def collisions(self) -> None:
        con = self.con
        if self.all:
            reach = {r[0] for r in con.execute("SELECT id FROM concept")}
            group = reach
        else:
            keys = self._keys(self.concepts) | self._old_keys()
            reach = self.concepts | self._owners(keys)
            group = reach | self._owners(self._keys(reach))
        concepts = sorted((skeleton(i, k, n) for i, k, n in self._concept_rows(group)), key=lambda c: c.id)
        loaded = self.loaded(Atlas(concepts=concepts))
        checks.check_collisions(loaded)
        at = {c.loc: c.id for c in concepts if c.id in reach}
        found: dict[str, list[Problem]] = {}
        for p in loaded.problems:
            if p.location in at or self.all:
                found.setdefault("c:" + at.get(p.location, "?"), []).append(p)
        self.replace({"c:" + i for i in reach} | ({"c:?"} if self.all else set()), "check_collisions", found)

    def _keys(self, ids) -> set[str]:
        return {r[0] for i in sorted(ids) for r in self.con.execute("SELECT key FROM name WHERE id = ?", (i,))}

    def _old_keys(self) -> set[str]:
        out = set()
        for i in self.concepts:
            before = self.u.before.get(("concept", i))
            if before is not None:
                names, aliases, _ = cache.unpack(before.names)
                c = Concept(i, before.kind, Text(**names), aliases=aliases)
                out |= {norm(n) for n in [i, *c.all_names()]}
        return out

    def _owners(self, keys) -> set[str]:
        return {r[0] for k in sorted(keys) for r in self.con.execute("SELECT id FROM name WHERE key = ?", (k,))}

    def _concept_rows(self, ids):
        if self.all:
            return self.con.execute("SELECT id, kind, names FROM concept")
        return [row for i in sorted(ids) for row in
                self.con.execute("SELECT id, kind, names FROM concept WHERE id = ?", (i,))]

    # -- relations ------------------------------------------------------------------------------

    def _changed_relations(self) -> list[tuple]:
        out: list[tuple] = []
        for i in self.concepts:
            for snap in (self.u.before.get(("concept", i)), self.u.after.get(("concept", i))):
                out.extend(snap.relations if snap else ())
        return out

    def cycles(self) -> None:
        if not self.all and not any(r[0] in ACYCLIC_RELATIONS for r in self._changed_relations()):
            return
        marks = ",".join("?" * len(ACYCLIC_RELATIONS))
        rows = self.con.execute(f"SELECT owner, type, source, target, file, line, col FROM rel "
                                f"WHERE type IN ({marks}) ORDER BY owner, pos", ACYCLIC_RELATIONS)
        loaded = self.loaded(Atlas(concepts=_owners_of(rows)))
        checks.check_cycles(loaded)
        self.replace({"y"}, "check_cycles", {"y": loaded.problems})

    def pairs(self) -> None:
        if self.all:
            rows = self.con.execute("SELECT owner, type, source, target, file, line, col, rkey FROM rel "
                                    "ORDER BY owner, pos").fetchall()
            keys = {r[7] for r in rows}
        else:
            keys = {r[3] for r in self._changed_relations()}
            rows = sorted((row for k in sorted(keys) for row in self.con.execute(
                "SELECT owner, type, source, target, file, line, col, rkey, pos FROM rel WHERE rkey = ?", (k,))),
                key=lambda row: (row[0], row[8]))
        at = {Location(*row[4:7]): row[7] for row in rows}
        loaded = self.loaded()
        checks.check_relation_pairs(loaded, [r for c in _owners_of(row[:7] for row in rows) for r in c.relations])
        found: dict[str, list[Problem]] = {}
        for p in loaded.problems:
            found.setdefault("p:" + at.get(p.location, "?"), []).append(p)  # (?: records without a place)
        self.replace({"p:" + k for k in keys} | ({"p:?"} if self.all else set()), "check_relations", found)

    def lonely(self) -> None:
        con = self.con
        if self.all:
            ids = {r[0] for r in con.execute("SELECT id FROM concept")}
            touched = {r[0] for r in con.execute("SELECT source FROM rel UNION SELECT target FROM rel")}
        else:
            ids = self.concepts | {end for r in self._changed_relations() for end in r[1:3]}
            touched = {i for i in ids if con.execute("SELECT 1 FROM rel WHERE source = ? OR target = ? LIMIT 1",
                                                     (i, i)).fetchone()}
        concepts = sorted((skeleton(i, k, n) for i, k, n in self._concept_rows(ids)), key=lambda c: c.id)
        loaded = self.loaded()
        checks.check_lonely(loaded, concepts, {i: [True] for i in touched})
        by_loc = {c.loc: c.id for c in concepts}
        found: dict[str, list[Problem]] = {}
        for p in loaded.problems:
            found.setdefault("n:" + by_loc.get(p.location, "?"), []).append(p)
        self.replace({"n:" + i for i in ids} | ({"n:?"} if self.all else set()), "check_relations", found)

    # -- dates, flows, claims -------------------------------------------------------------------

    def dates(self) -> None:
        if not self.all and not self.u.top & {SETTINGS, TIMELINE}:
            return
        cutoff = get_meta(self.con, "cutoff", DEFAULT_CUTOFF)
        sightings = [s for _rel, r in self.u.timeline_results() for s in r.sightings]
        loaded = self.loaded(Atlas(sightings=sightings, cutoff=cutoff))
        checks.check_dates(loaded)
        self.replace({"t"}, "check_dates", {"t": loaded.problems})

    def records(self, kind: str, list_name: str, prefix: str, check) -> None:
        """A check of single records of `kind` (its problems depend on nothing else)."""
        if self.all:
            ids = {r[0] for r in self.con.execute("SELECT id FROM win WHERE kind = ?", (kind,))}
        else:
            ids = {i for k, i in self.u.changed if k == kind}
        found = {}
        for ident in sorted(ids):
            record = self.u.results.winner(kind, ident)
            if record is not None:
                loaded = self.loaded(Atlas(**{list_name: [record]}))
                check(loaded)
                found[prefix + ident] = loaded.problems
        self.replace({prefix + i for i in ids}, check.__name__, found)

    # -- planes, test plans, undated concepts ---------------------------------------------------

    def planes(self) -> None:
        """Per flow: its steps and the answers of the concepts they name."""
        con = self.con
        if self.all:
            ids = {r[0] for r in con.execute("SELECT id FROM win WHERE kind = 'flow'")}
        else:
            ids = {i for k, i in self.u.changed if k == "flow"}
            for c in self.concepts:  # a concept whose answers (or existence) changed
                ids |= {r[0] for r in con.execute("SELECT flow FROM touch WHERE concept = ?", (c,))}
        found = {}
        for ident in sorted(ids):
            flow = self.u.results.winner("flow", ident)
            if flow is None:
                continue
            named = sorted({x for s in flow.steps for x in s.concepts})
            concepts = [c for c in (self.u.results.winner("concept", x) for x in named) if c is not None]
            loaded = self.loaded(Atlas(flows=[flow], concepts=concepts))
            checks.check_planes(loaded)
            found["pl:" + ident] = loaded.problems
        self.replace({"pl:" + i for i in ids}, "check_planes", found)

    def test_plans(self) -> None:
        """All claims at once (a decision order is unique across them) and the flows they name."""
        if not self.all and not any(k in ("claim", "flow") for k, _ in self.u.changed):
            return
        claims = self._all("claim")
        loaded = self.loaded(Atlas(claims=claims, flows=self._all("flow")))
        checks.check_test_plans(loaded)
        self.replace({"tp"}, "check_test_plans", {"tp": loaded.problems})

    def _all(self, kind: str) -> list:
        rows = self.con.execute("SELECT id FROM win WHERE kind = ? ORDER BY id", (kind,)).fetchall()
        return [self.u.results.winner(kind, r[0]) for r in rows]

    def undated(self) -> None:
        """Per concept: its probes and undated reason, and (for one with a reason) the harvests."""
        con = self.con
        if self.all:
            ids = {r[0] for r in con.execute("SELECT id FROM concept")}
        else:
            ids = set(self.concepts)
            if TIMELINE in self.u.top:
                ids |= {r[0] for r in con.execute("SELECT id FROM concept WHERE undated = 1")}
        harvests = [h for _rel, r in self.u.timeline_results() for h in r.harvests]
        found = {}
        for ident in sorted(ids):
            c = self.u.results.winner("concept", ident)
            if c is not None:
                loaded = self.loaded(Atlas(concepts=[c], harvests=harvests))
                checks.check_undated(loaded)
                found["ud:" + ident] = loaded.problems
        self.replace({"ud:" + i for i in ids}, "check_undated", found)


    # -- the API histories, the seed's pages ------------------------------------------------------

    def histories(self) -> None:
        """Coarse scopes. `as`: every API history's header against its repository and the cut-off,
        again when a history, a repository or the settings changed. `an:<id>`: a concept's `api:`
        names against every symbol, for the concepts that changed and, when a history changed,
        for every concept with an `api:` list."""
        u = self.u
        if self.all or u.api or SETTINGS in u.top or any(k == "repository" for k, _ in u.changed):
            surfaces = [unplain("surfaces", x) for x in get_meta(self.con, "surfaces", [])]
            repos = [r for r in (u.results.winner("repository", x.repo) for x in surfaces) if r is not None]
            loaded = self.loaded(Atlas(surfaces=surfaces, repositories=repos,
                                       cutoff=get_meta(self.con, "cutoff", DEFAULT_CUTOFF)))
            checks.check_api(loaded)
            self.replace({"as"}, "check_api", {"as": loaded.problems})
        if self.all or u.api:
            ids = {r[0] for r in self.con.execute("SELECT concept FROM apiname")} | self.concepts
        else:
            ids = set(self.concepts)
        found = {}
        symbols = u.symbols() if ids else {}
        for ident in sorted(ids):
            c = u.results.winner("concept", ident)
            if c is not None and c.api:
                loaded = self.loaded(Atlas(concepts=[c]), api=symbols)
                checks.check_api(loaded)
                found["an:" + ident] = loaded.problems
        self.replace({"an:" + i for i in ids}, "check_api", found)

    def seed_citations(self) -> None:
        """Per record (`sc:<kind>:<id>`): the seed citations of its evidence against the seed's pages;
        every record again when a seed page changed."""
        u = self.u
        pages = [p for p in self._all("seed page") if p is not None]
        kinds = ("concept", "claim", "flow", "repository")
        if self.all or any(k == "seed page" for k, _ in u.changed):
            keys = {(k, r[0]) for k in kinds for r in self.con.execute("SELECT id FROM win WHERE kind = ?", (k,))}
        else:
            keys = {(k, i) for k, i in u.changed if k in kinds}
        found = {}
        for kind, ident in sorted(keys):
            record = u.results.winner(kind, ident)
            if record is not None and pages:
                loaded = self.loaded(Atlas(seed_pages=pages, **{LISTS[kind]: [record]}))
                checks.check_seed_citations(loaded)
                found[f"sc:{kind}:{ident}"] = loaded.problems
        self.replace({f"sc:{k}:{i}" for k, i in keys}, "check_seed_citations", found)


def _owners_of(rows) -> list[Concept]:
    """Concepts (empty but for their id) holding the relations of rows (owner, type, source,
    target, file, line, col), in the order given."""
    owners: dict[str, Concept] = {}
    for owner, typ, source, target, file, line, col in rows:
        c = owners.get(owner)
        if c is None:
            c = owners[owner] = Concept(owner, "concept", Text())
        c.relations.append(Relation(typ, source, target, loc=Location(file, line, col)))
    return [owners[k] for k in sorted(owners)]


def _stored(con, stage: int) -> list[Problem]:
    return [Problem(Location(*p[0]), *p[1:]) for (blob,) in
            con.execute("SELECT blob FROM problem WHERE stage = ? ORDER BY scope, seq", (stage,))
            for p in cache.unpack(blob)]


def _display_dir(con) -> str:
    return get_meta(con, "display", "data")


def get_meta(con, key: str, default=None):
    from .database import get_meta as read_meta

    return read_meta(con, key, default)


# ---------------------------------------------------------------------------------------------
# What one card shows, without the rest of the atlas
# ---------------------------------------------------------------------------------------------

def neighbourhood(con, ident: str) -> Atlas | None:
    """A small atlas holding what the card of concept `ident` shows: the concept, every relation
    touching it with the names of the concepts at its other end, the names of its hardware, the
    claims about it, the flows through it, its sightings, the harvests, the repositories, the
    questions and the cut-off. A card computed on
    it equals the card computed on the whole atlas (tests/test_incremental.py checks it)."""
    results = Results(con)
    c = results.winner("concept", ident)
    if c is None:
        return None
    held: dict[str, list] = {}
    for owner, blob in con.execute("SELECT owner, blob FROM rel WHERE (source = ? OR target = ?) AND owner != ? "
                                   "ORDER BY owner, pos", (ident, ident, ident)):
        held.setdefault(owner, []).append(unplain(Relation, cache.unpack(blob)))
    ends = set(held) | set(c.hardware) | {end for r in c.relations for end in (r.source, r.target)} | \
        {end for rels in held.values() for r in rels for end in (r.source, r.target)}
    ends.discard(ident)
    timeline = results.get(TIMELINE)
    concepts = [c] + [skeleton(i, k, n, held.get(i, ())) for i in sorted(ends)
                      for i, k, n in con.execute("SELECT id, kind, names FROM concept WHERE id = ?", (i,))]
    concepts.sort(key=lambda x: x.id)
    return Atlas(
        questions=[q for q in (results.winner("question", q) for q in QUESTION_IDS) if q],
        concepts=concepts,
        claims=_winners(con, results, "claim", "SELECT claim FROM about WHERE concept = ?", ident),
        flows=_winners(con, results, "flow", "SELECT flow FROM touch WHERE concept = ?", ident),
        repositories=sorted(_winners(con, results, "repository", "SELECT id FROM win WHERE kind = 'repository'"),
                            key=lambda r: r.id.lower()),
        sightings=[unplain("sightings", cache.unpack(b)) for (b,) in
                   con.execute("SELECT blob FROM sighting WHERE concept = ? ORDER BY seq", (ident,))],
        harvests=list(timeline.harvests) if timeline else [],
        cutoff=get_meta(con, "cutoff", DEFAULT_CUTOFF),
        surfaces=surfaces(con), symbols=named_symbols(con, ident))


def surfaces(con) -> list:
    """Every API history's header (with its releases), by repository."""
    return [unplain("surfaces", x) for x in get_meta(con, "surfaces", [])]


def named_symbols(con, ident: str | None = None) -> list[ApiSymbol]:
    """The API symbols concept `ident` names (every concept's, each once, without it), sorted by
    (repository, kind, name) as `apiload.named` gives them."""
    # every concept's: the first row of each symbol alone is read (a symbol's rows hold one history's
    # record of it: unpacking every row cost an update 0.4 s at 10,000 concepts naming one symbol each)
    sql, args = ("SELECT blob FROM named WHERE concept = ? ORDER BY seq", (ident,)) if ident is not None else \
        ("SELECT blob FROM named WHERE rowid IN (SELECT MIN(rowid) FROM named GROUP BY repo, kind, name)", ())
    out: dict[tuple[str, str, str], ApiSymbol] = {}
    for (blob,) in con.execute(sql, args):
        sym = unplain("symbols", cache.unpack(blob))
        out.setdefault((sym.repo, sym.kind, sym.name), sym)
    return [out[k] for k in sorted(out)]


def _winners(con, results: Results, kind: str, sql: str, *args) -> list:
    ids = sorted({r[0] for r in con.execute(sql, args)})
    return [x for x in (results.winner(kind, i) for i in ids) if x is not None]
