"""The atlas data model: vocabularies, records and the `Atlas` with its lookups.

No I/O here: the loader builds these objects from data/, the cache stores them with
`Atlas.to_plain()` / `Atlas.from_plain()`, and every other module receives an `Atlas`.
"""
from __future__ import annotations

import re
from typing import Callable, TypeVar, cast

from ..errors import Location
from ..text import norm, squash

# ---------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------

KINDS = (
    "library", "api", "protocol", "hardware", "link", "engine", "data-path-attribute",
    "build-flag", "memory-model", "technique", "system", "paper", "source-artifact", "concept",
)

QUESTION_IDS = ("organize", "address", "submit", "move", "link", "peer")

# forward type -> inverse name; symmetric types map to themselves.
RELATION_TYPES: dict[str, str] = {
    "uses": "used-by",
    "built-on": "underlies",
    "submits-to": "receives-work-from",
    "moves-over": "carries",
    "runs-on": "hosts",
    "part-of": "has-part",
    "configures": "configured-by",
    "implements": "implemented-by",
    "replaces": "replaced-by",
    "alternative-to": "alternative-to",
    "analogous-to": "analogous-to",
    "disambiguates": "disambiguates",
}
SYMMETRIC = frozenset(t for t, inv in RELATION_TYPES.items() if t == inv)
INVERSE_TO_FORWARD = {inv: fwd for fwd, inv in RELATION_TYPES.items() if fwd != inv}
ACYCLIC_RELATIONS = ("part-of", "built-on")

LIFECYCLES = ("active", "migrated", "pending-deprecation", "deprecated")
CONFIDENCES = ("read-in-source", "second-hand", "derived", "unverified")
CLAIM_STATUSES = ("confirmed", "refuted", "hypothesis", "placeholder", "open")
EDGE_TYPES = ("data", "sync", "control", "order")
REPO_STATUSES = ("active", "mirror", "archived", "migrated", "pending-deprecation", "unavailable")
PRECISIONS = ("exact", "on-or-before", "unknown")  # unknown: not found, missing blobs could hold it
METHODS = ("term", "path")  # probe methods; each is a module of atlas/harvest/methods
# The public API surface (atlas/harvest/methods/api.py, docs/history.md): the kinds of symbols read from
# the public headers, how a repository's release tags are ordered, and what a symbol's history records.
API_KINDS = ("function", "enum-constant", "macro", "type")
RELEASE_SCHEMES = ("semver", "date", "list")
API_EVENTS = ("added", "removed", "changed")
# an event after the first is exact, or uncertain when missing blobs could hold the symbol there
EVENT_PRECISIONS = ("exact", "on-or-before", "uncertain")
# Why a concept has no dated sighting (Atlas.why_undated): no public repository holds it; the
# repositories that do were not harvested here (no clone); its probes found nothing; no reason given.
UNDATED_REASONS = ("no-public-repository", "not-harvested", "not-found", "no-reason")
LANGS = ("en", "zh")

DEFAULT_CUTOFF = "2026-08-26"

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
SHA_RE = re.compile(r"^[0-9a-f]{40}$")
PIN_RE = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)"
    r"@(?P<sha>[^:]+):(?P<path>[^#]+)#L(?P<start>\d+)(?:-L(?P<end>\d+))?$"
)
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A second-hand citation of the seed: one of its pages, at the atlas's own reserved host
SEED_URL_RE = re.compile(r"^https://ascend-atlas\.invalid/seed#page-([1-9][0-9]?)$")


def seed_page_of(url: str) -> int | None:
    """The seed page a URL cites (`https://ascend-atlas.invalid/seed#page-N`), or None."""
    m = SEED_URL_RE.match(url or "")
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------------------------
# Records: a small replacement for dataclasses (which cost ~20 ms at import: too much for the
# start-up of `atlas query`). Fields are the class annotations, in order; F(factory) makes a fresh
# default per instance.
# ---------------------------------------------------------------------------------------------

class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory):
        self.factory = factory


_T = TypeVar("_T")


def F(factory: Callable[[], _T]) -> _T:
    """A field's default made fresh for each record (`aliases: dict = F(dict)`). Typed as the value it
    makes, so the type checker sees the field's own type."""
    return cast(_T, _Factory(factory))


_MISSING = object()


class Record:
    _fields: tuple = ()
    _defaults: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        names = tuple(n for n in cls.__dict__.get("__annotations__", {}) if not n.startswith("_"))
        cls._fields = names
        cls._defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
        for n in cls._defaults:
            delattr(cls, n)

    def __init__(self, *args, **kwargs):
        names = self._fields
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes {len(names)} fields")
        values = dict(zip(names, args))
        for name in names[len(args):]:
            if name in kwargs:
                values[name] = kwargs.pop(name)
                continue
            default = self._defaults.get(name, _MISSING)
            if default is _MISSING:
                raise TypeError(f"{type(self).__name__} needs {name!r}")
            values[name] = default.factory() if isinstance(default, _Factory) else default
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(kwargs))!r}")
        self.__dict__.update(values)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]  # records are mutable: never keys

    def replace(self, **changes):
        """A copy with some fields changed (like dataclasses.replace)."""
        values = {n: getattr(self, n) for n in self._fields}
        values.update(changes)
        return type(self)(**values)

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({inner})"



class Text(Record):
    """A short text in both languages; either side may be empty while data is incomplete."""

    en: str = ""
    zh: str = ""

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def both(self) -> list[str]:
        return [t for t in (self.en, self.zh) if t]

    def __bool__(self) -> bool:
        return bool(self.en or self.zh)


class Pin(Record):
    repo: str
    sha: str
    path: str
    start: int
    end: int

    def __str__(self) -> str:
        lines = f"#L{self.start}" if self.start == self.end else f"#L{self.start}-L{self.end}"
        return f"{self.repo}@{self.sha}:{self.path}{lines}"

    @classmethod
    def parse(cls, text: str) -> "Pin | None":
        m = PIN_RE.match(text.strip())
        if not m:
            return None
        start = int(m["start"])
        end = int(m["end"]) if m["end"] else start
        return cls(m["repo"], m["sha"], m["path"], start, end)


class Evidence(Record):
    pin: Pin | None = None
    url: str = ""
    supports: Text = F(Text)
    symbol: str = ""
    confidence: str = "read-in-source"
    loc: Location | None = None
    blob: str = ""  # a pin's git blob id (full, or abbreviated to 7+ hex digits); "" when not recorded

    @property
    def source(self) -> str:
        return str(self.pin) if self.pin else self.url


class Relation(Record):
    type: str  # always a forward type or a symmetric one
    source: str
    target: str
    note: Text = F(Text)
    evidence: list[Evidence] = F(list)
    loc: Location | None = None


class Probe(Record):
    """What to look for in a repository's history: `value` by `method` (one of METHODS; the data
    write it as the key, `term: HcclInit` or `path: include/hccl`)."""

    repo: str
    method: str = "term"
    value: str = ""
    loc: Location | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.repo, self.method, self.value)


class Lifecycle(Record):
    status: str = "active"
    note: Text = F(Text)


class Undated(Record):
    """Why a concept has no probe: the public repositories that hold it (none of them harvested
    here; empty when no public repository does) and a note saying so in both languages."""

    repos: list[str] = F(list)
    note: Text = F(Text)
    loc: Location | None = None


class Concept(Record):
    id: str
    kind: str
    names: Text
    aliases: dict[str, list[str]] = F(dict)  # lang -> aliases
    answers: dict[str, Text] = F(dict)  # question id -> one-line answer
    beginner: Text = F(Text)
    professional: Text = F(Text)
    hardware: list[str] = F(list)  # ids of hardware/system concepts
    hardware_note: Text = F(Text)
    lifecycle: Lifecycle = F(Lifecycle)
    relations: list[Relation] = F(list)
    evidence: list[Evidence] = F(list)
    probes: list[Probe] = F(list)
    undated: Undated | None = None  # set when no probe can date the concept
    api: list[str] = F(list)  # API symbols the concept names (besides its probes' terms and aliases)
    loc: Location | None = None

    def all_names(self) -> list[str]:
        out = [n for n in (self.names.en, self.names.zh) if n]
        for lang in LANGS:
            out.extend(self.aliases.get(lang, []))
        return out


class Question(Record):
    id: str
    names: Text
    explanation: Text = F(Text)
    loc: Location | None = None


class TestPlan(Record):
    """How a hypothesis could be refuted: where to time or print (pinned lines), what to measure,
    which result confirms or refutes it, and its place in the order the hypotheses are decided."""

    __test__ = False  # not a pytest test class

    order: int = 0  # 1 = decide first
    step: str = ""  # the flow step it instruments, "flow-id/step-id" (optional)
    where: list[Evidence] = F(list)
    measure: Text = F(Text)
    confirm: Text = F(Text)
    refute: Text = F(Text)
    loc: Location | None = None

    @property
    def flow_step(self) -> tuple[str, str]:
        flow, _, step = self.step.partition("/")
        return flow, step


class Claim(Record):
    id: str
    statement: Text
    status: str
    about: list[str] = F(list)
    evidence: list[Evidence] = F(list)
    note: Text = F(Text)
    test_plan: TestPlan | None = None  # required for a hypothesis
    loc: Location | None = None


class FlowStep(Record):
    id: str
    label: Text
    actor: str
    concepts: list[str] = F(list)
    source: Evidence | None = None
    note: Text = F(Text)
    title: Text = F(Text)  # one line, at most about 60 characters; the label is the detail
    loc: Location | None = None


class FlowEdge(Record):
    source: str
    target: str
    type: str
    label: str = ""
    loc: Location | None = None


class WindowRegion(Record):
    """One region of the memory a flow's kernels share (its `layout`): where it starts and how large
    it is, as the source computes them (expressions, not numbers), who writes it and who reads it.
    `part_of` names the region it lies inside ("" at the top level)."""

    id: str
    label: Text = F(Text)
    offset: str = ""
    size: str = ""
    writers: Text = F(Text)
    readers: Text = F(Text)
    part_of: str = ""
    evidence: list[Evidence] = F(list)
    loc: Location | None = None


class Flow(Record):
    id: str
    title: Text
    summary: Text = F(Text)
    steps: list[FlowStep] = F(list)
    edges: list[FlowEdge] = F(list)
    evidence: list[Evidence] = F(list)
    loc: Location | None = None
    layout: list[WindowRegion] = F(list)  # the shared memory window's regions, in address order

    def ordered_steps(self) -> list[FlowStep]:
        """Steps in a stable topological order (Kahn, ties broken by declaration order)."""
        index = {s.id: i for i, s in enumerate(self.steps)}
        indeg = {s.id: 0 for s in self.steps}
        succ: dict[str, list[str]] = {s.id: [] for s in self.steps}
        for e in self.edges:
            if e.source in succ and e.target in indeg:
                succ[e.source].append(e.target)
                indeg[e.target] += 1
        ready = sorted((sid for sid, d in indeg.items() if d == 0), key=index.__getitem__)
        out: list[str] = []
        while ready:
            sid = ready.pop(0)
            out.append(sid)
            for t in succ[sid]:
                indeg[t] -= 1
                if indeg[t] == 0:
                    ready.append(t)
                    ready.sort(key=index.__getitem__)
        seen = set(out)
        out.extend(s.id for s in self.steps if s.id not in seen)  # cycles: keep the rest
        by_id = {s.id: s for s in self.steps}
        return [by_id[sid] for sid in out]


class ApiFolder(Record):
    """One folder (or file) of a repository stated as part of its public surface or not, and why: the
    install rules that ship its headers are the best evidence."""

    folder: str
    scanned: bool  # whether the `public` globs read it
    reason: Text = F(Text)
    evidence: list[Evidence] = F(list)
    loc: Location | None = None


class ApiRule(Record):
    """A repository's public surface: the files that are public (globs: `*` within a folder, `**` any
    folders), those left out, the kinds of symbols read, the decoration macros to blank, and the
    folders stated public or not with the reason (`surfaces`)."""

    public: list[str] = F(list)
    exclude: list[str] = F(list)
    kinds: list[str] = F(lambda: list(API_KINDS))
    decorations: list[str] = F(list)
    surfaces: list[ApiFolder] = F(list)
    loc: Location | None = None


class ReleaseRule(Record):
    """Which tags of a repository are releases and their order (atlas/harvest/releases.py)."""

    scheme: str = "semver"  # one of RELEASE_SCHEMES
    tags: str = "*"  # a glob on the tag's name
    prefix: str = ""  # taken off the name before the version is read (semver)
    order: list[str] = F(list)  # the stated list (scheme: list)
    exclude: list[str] = F(list)  # tags that are not releases
    note: Text = F(Text)
    loc: Location | None = None


class Repository(Record):
    id: str
    urls: list[str] = F(list)
    purpose: Text = F(Text)
    hardware: list[str] = F(list)
    status: str = "active"
    branch: str = ""  # empty: the repository's HEAD
    mirror_of: str = ""
    migrated_from: list[str] = F(list)
    note: Text = F(Text)
    evidence: list[Evidence] = F(list)
    api: ApiRule | None = None
    releases: ReleaseRule | None = None
    loc: Location | None = None


class SeedPage(Record):
    """One of the seed's ten analysis pages, summarised in our own words (data/seed.yaml)."""

    id: str  # page-N
    number: int
    title: Text
    summary: Text = F(Text)
    flows: list[str] = F(list)  # flows that follow the page's execution path
    loc: Location | None = None


class Sighting(Record):
    """One harvest result: when a probe first became visible on a repository's mainline."""

    concept: str
    repo: str
    method: str
    value: str
    found: bool
    sha: str = ""
    committer_date: str = ""  # ISO 8601 with offset
    author_date: str = ""
    mainline: str = ""
    introduced: str = ""
    introduced_date: str = ""
    precision: str = "exact"
    head: str = ""
    cutoff: str = DEFAULT_CUTOFF
    harvested_at: str = ""
    note: str = ""
    first_release: str = ""  # the first release whose commit contains `introduced` ("" = none)
    loc: Location | None = None

    @property
    def date(self) -> str:
        """The UTC calendar day of the committer date (the day the cut-off is compared with)."""
        return utc_day(self.committer_date)


class RepoHarvest(Record):
    """Provenance of one repository's harvest: the HEAD read and when."""

    repo: str
    head: str
    branch: str
    cutoff: str
    cutoff_head: str
    harvested_at: str  # when the scan ended (UTC)
    commits: int = 0
    shallow: bool = False
    skipped_paths: list[str] = F(list)
    started_at: str = ""  # when the scan began (UTC); empty in timelines written before it was kept
    loc: Location | None = None


class Release(Record):
    """One release of a repository: a tag in the release order (index 0 first)."""

    repo: str
    name: str
    commit: str
    date: str  # ISO 8601 with offset: the tagger's date, else the commit's committer date
    index: int = 0
    annotated: bool = False
    missing: int = 0  # public files at its commit whose blobs the clone lacks


class ApiSurface(Record):
    """The header of one repository's API history (data/api/<owner>+<name>.jsonl): what was read,
    the releases, and the tags that are not releases."""

    repo: str
    branch: str = ""
    head: str = ""
    cutoff: str = DEFAULT_CUTOFF
    cutoff_head: str = ""
    commits: int = 0
    started_at: str = ""
    harvested_at: str = ""
    rules: str = ""  # a key of the repository's `api:` and `releases:` when harvested
    extractor: str = ""  # the declaration rules and parser versions
    files: dict[str, str] = F(dict)  # public file -> blob at the cut-off head
    skipped_paths: list[str] = F(list)
    missing_blobs: list[str] = F(list)
    tags: str = ""  # a key of the tag refs when harvested
    symbols: int = 0
    releases: list[Release] = F(list)
    ignored_tags: list[list[str]] = F(list)  # [tag, why it is not a release]
    loc: Location | None = None


class ApiSymbol(Record):
    """One public symbol of a repository and its history on the first-parent mainline."""

    repo: str
    kind: str  # one of API_KINDS
    name: str  # qualified for C++ (`ns::Class::f`)
    # [sha, committer date, event (API_EVENTS), signature, precision (EVENT_PRECISIONS)], oldest first;
    # the first is the first appearance ("added")
    history: list[list[str]] = F(list)
    introduced: str = ""  # for a first appearance at a merge: the side-branch commit, else = history[0]
    introduced_date: str = ""
    note: str = ""
    signature: str = ""  # at the cut-off (the last one seen when removed)
    where: list[list] = F(list)  # [path, line] at the cut-off
    first_release: str = ""  # "" = in no release at the cut-off
    releases: str = ""  # one character per release: "." absent, else the index into release_signatures
    release_signatures: list[str] = F(list)
    loc: Location | None = None

    @property
    def first(self) -> list[str]:
        return self.history[0] if self.history else ["", "", "added", "", "exact"]

    @property
    def removed(self) -> list[str] | None:
        """The event that removed it, when it is absent at the cut-off."""
        return self.history[-1] if self.history and self.history[-1][2] == "removed" else None

    @property
    def short(self) -> str:
        """The name without its scopes (`f` of `ns::C::f`)."""
        return self.name.rsplit("::", 1)[-1]


# ---------------------------------------------------------------------------------------------
# The atlas
# ---------------------------------------------------------------------------------------------


class Atlas(Record):
    questions: list[Question] = F(list)
    concepts: list[Concept] = F(list)
    claims: list[Claim] = F(list)
    flows: list[Flow] = F(list)
    repositories: list[Repository] = F(list)
    sightings: list[Sighting] = F(list)
    harvests: list[RepoHarvest] = F(list)
    # the API histories: every repository's header and releases, and the symbols that concepts name
    # (all symbols are in the API store, atlas/index/apistore.py)
    surfaces: list[ApiSurface] = F(list)
    symbols: list[ApiSymbol] = F(list)
    seed_pages: list[SeedPage] = F(list)
    cutoff: str = DEFAULT_CUTOFF

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        self.concept_by_id = {c.id: c for c in self.concepts}
        self.question_by_id = {q.id: q for q in self.questions}
        self.repo_by_id = {r.id: r for r in self.repositories}
        self.flow_by_id = {f.id: f for f in self.flows}
        self.claim_by_id = {c.id: c for c in self.claims}
        names: dict[str, set[str]] = {}
        loose: dict[str, set[str]] = {}
        for c in self.concepts:
            for n in [c.id, *c.all_names()]:
                names.setdefault(norm(n), set()).add(c.id)
                loose.setdefault(squash(n), set()).add(c.id)
        self.name_index = names
        self.loose_index = loose
        touching: dict[str, list[Relation]] = {}
        for c in self.concepts:
            for r in c.relations:
                touching.setdefault(r.source, []).append(r)
                if r.target != r.source:
                    touching.setdefault(r.target, []).append(r)
        self.touching = touching
        by_concept: dict[str, list[Sighting]] = {}
        for s in self.sightings:
            by_concept.setdefault(s.concept, []).append(s)
        for lst in by_concept.values():
            lst.sort(key=lambda s: (not s.found, s.committer_date or "9999", s.repo, s.value))
        self.sightings_by_concept = by_concept
        self.surface_by_repo = {x.repo: x for x in self.surfaces}
        self.symbols_by_name = name_index(self.symbols)

    # -- lookups used everywhere --------------------------------------------------------------

    def concept(self, ident: str) -> Concept:
        return self.concept_by_id[ident]

    def relations(self) -> list[Relation]:
        return [r for c in self.concepts for r in c.relations]

    def claims_about(self, ident: str) -> list[Claim]:
        return [cl for cl in self.claims if ident in cl.about]

    def flows_touching(self, ident: str) -> list[Flow]:
        return [f for f in self.flows if any(ident in s.concepts for s in f.steps)]

    def first_visible(self, ident: str) -> Sighting | None:
        """The earliest found sighting of a concept over all its probes, or None."""
        for s in self.sightings_by_concept.get(ident, []):
            if s.found:
                return s
        return None

    def why_undated(self, ident: str) -> tuple[str, list[str]] | None:
        """None when the concept has a dated sighting; else (one of UNDATED_REASONS, the
        repositories concerned)."""
        if self.first_visible(ident) is not None:
            return None
        c = self.concept_by_id[ident]
        harvested = {h.repo for h in self.harvests}
        if c.probes:
            repos = sorted({p.repo for p in c.probes})
            waiting = [r for r in repos if r not in harvested]
            return ("not-harvested", waiting) if waiting else ("not-found", repos)
        if c.undated is None:
            return "no-reason", []
        public = [r for r in c.undated.repos if self._public(r)]
        return ("not-harvested", public) if public else ("no-public-repository", list(c.undated.repos))

    def _public(self, repo_id: str) -> bool:
        r = self.repo_by_id.get(repo_id)
        return r is not None and r.status != "unavailable" and any(
            u.startswith(("https://", "ssh://", "git://")) for u in r.urls)

    def visible_on(self, ident: str, date: str) -> bool | None:
        """True/False once the concept has sightings; None when it has no dated sighting."""
        first = self.first_visible(ident)
        if first is None:
            return None
        return first.date <= date

    # -- plain form for the compiled index (marshal-able: dict/list/str/int/bool/None) ---------

    def to_plain(self) -> dict:
        return {name: [_plain(x) for x in getattr(self, name)] for name in _LISTS} | {
            "cutoff": self.cutoff}

    @classmethod
    def from_plain(cls, data: dict) -> "Atlas":
        kwargs = {name: [_unplain(_LISTS[name], x) for x in data[name]] for name in _LISTS}
        return cls(cutoff=data["cutoff"], **kwargs)


_LISTS = {
    "questions": Question, "concepts": Concept, "claims": Claim, "flows": Flow,
    "repositories": Repository, "sightings": Sighting, "harvests": RepoHarvest, "seed_pages": SeedPage,
    "surfaces": ApiSurface, "symbols": ApiSymbol,
}

# field name -> record class, for nested reconstruction
_NESTED = {
    (Concept, "names"): Text, (Concept, "beginner"): Text, (Concept, "professional"): Text,
    (Concept, "hardware_note"): Text, (Concept, "lifecycle"): "Lifecycle",
    (Concept, "relations"): [Relation], (Concept, "evidence"): [Evidence],
    (Concept, "probes"): [Probe], (Concept, "answers"): {"*": Text},
    (Concept, "undated"): "Undated", (Undated, "note"): Text,
    (Lifecycle, "note"): Text, (Relation, "note"): Text, (Relation, "evidence"): [Evidence],
    (Evidence, "pin"): Pin, (Evidence, "supports"): Text,
    (Question, "names"): Text, (Question, "explanation"): Text,
    (Claim, "statement"): Text, (Claim, "evidence"): [Evidence], (Claim, "note"): Text,
    (Claim, "test_plan"): "TestPlan", (TestPlan, "where"): [Evidence], (TestPlan, "measure"): Text,
    (TestPlan, "confirm"): Text, (TestPlan, "refute"): Text,
    (FlowStep, "label"): Text, (FlowStep, "source"): Evidence, (FlowStep, "note"): Text,
    (FlowStep, "title"): Text, (SeedPage, "title"): Text, (SeedPage, "summary"): Text,
    (Flow, "title"): Text, (Flow, "summary"): Text, (Flow, "steps"): [FlowStep],
    (Flow, "edges"): [FlowEdge], (Flow, "evidence"): [Evidence], (Flow, "layout"): [WindowRegion],
    (WindowRegion, "label"): Text, (WindowRegion, "writers"): Text, (WindowRegion, "readers"): Text,
    (WindowRegion, "evidence"): [Evidence],
    (Repository, "purpose"): Text, (Repository, "note"): Text, (Repository, "evidence"): [Evidence],
    (Repository, "api"): "ApiRule", (Repository, "releases"): "ReleaseRule", (ReleaseRule, "note"): Text,
    (ApiSurface, "releases"): [Release], (ApiRule, "surfaces"): [ApiFolder], (ApiFolder, "reason"): Text,
    (ApiFolder, "evidence"): [Evidence],
}
_CLASSES = {"Lifecycle": Lifecycle, "Undated": Undated, "TestPlan": TestPlan, "ApiRule": ApiRule,
            "ReleaseRule": ReleaseRule}


def plain(record) -> dict:
    """One record's plain form (marshal-able), as `Atlas.to_plain` stores it."""
    return _plain(record)


def unplain(what, data: dict):
    """A record from its plain form: `what` is a list of the Atlas ("concepts", "sightings", ...)
    or a record class (Relation)."""
    return _unplain(_LISTS[what] if isinstance(what, str) else what, data)


def _plain(obj):
    if obj is None or isinstance(obj, (str, int, bool, float)):
        return obj
    if isinstance(obj, Location):
        return (obj.file, obj.line, obj.col)
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return {name: _plain(getattr(obj, name)) for name in obj._fields}


def _unplain(cls, data):
    if data is None:
        return None
    kwargs = {}
    for name, value in data.items():
        spec = _NESTED.get((cls, name))
        if isinstance(spec, str):
            spec = _CLASSES[spec]
        if name == "loc":
            kwargs[name] = Location(*value) if value else None
        elif spec is None:
            kwargs[name] = value
        elif isinstance(spec, list):
            kwargs[name] = [_unplain(spec[0], v) for v in value]
        elif isinstance(spec, dict):
            kwargs[name] = {k: _unplain(spec["*"], v) for k, v in value.items()}
        else:
            kwargs[name] = _unplain(spec, value)
    obj = cls.__new__(cls)  # every field is present in the plain form: skip __init__
    obj.__dict__.update(kwargs)
    return obj


def name_index(symbols) -> dict[str, list[ApiSymbol]]:
    """name (qualified, and without its scopes) -> the API symbols so named."""
    out: dict[str, list[ApiSymbol]] = {}
    for sym in symbols:
        for key in {sym.name, sym.short}:
            out.setdefault(key, []).append(sym)
    return out


def named_by(c: Concept, index: dict[str, list[ApiSymbol]]) -> list[ApiSymbol]:
    """The API symbols a concept names (docs/schema.md): a `term` probe's value in the probe's repository;
    an entry of its `api:` list (`owner/name:` narrows it to a repository); its name or an alias, exactly,
    in a repository where it has a probe. Sorted by (repository, kind, name)."""
    probed = sorted({p.repo for p in c.probes})
    wanted: list[tuple[str, str | None, bool]] = [(p.value, p.repo, False) for p in c.probes if p.method == "term"]
    for entry in c.api:
        head, sep, rest = entry.partition(":")
        if sep and "/" in head and not rest.startswith(":"):
            wanted.append((rest, head, False))
        else:
            wanted.append((entry, None, False))
    wanted += [(n, r, True) for n in c.all_names() for r in probed]
    found: dict[tuple[str, str, str], ApiSymbol] = {}
    for name, repo, exact in wanted:
        for sym in index.get(name, []):
            if (repo is None or sym.repo == repo) and (not exact or sym.name == name):
                found.setdefault((sym.repo, sym.kind, sym.name), sym)
    return [found[k] for k in sorted(found)]


def utc_day(iso: str) -> str:
    """The UTC day (YYYY-MM-DD) of an ISO 8601 timestamp with offset; a bare date as it is."""
    if len(iso) <= 10:
        return iso
    from datetime import datetime, timezone

    try:
        stamp = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso[:10]
    if stamp.tzinfo is None:
        return iso[:10]
    return stamp.astimezone(timezone.utc).strftime("%Y-%m-%d")


def canonical_relation(rel_type: str) -> tuple[str, bool] | None:
    """Map a relation name as written in data to (forward type, reversed?)."""
    if rel_type in RELATION_TYPES:
        return rel_type, False
    if rel_type in INVERSE_TO_FORWARD:
        return INVERSE_TO_FORWARD[rel_type], True
    return None
