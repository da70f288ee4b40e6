"""The shapes of the code face's answers (`atlas where`, `atlas source`, the source pages): plain,
JSON-ready dicts, declared as TypedDicts for the type checker. Imported only under TYPE_CHECKING,
so that the fast path of `where` and `source` does not build these classes at start-up."""
from __future__ import annotations

from typing import NotRequired, TypedDict

from ..view.views import EvidenceView, OwnerView


class CitationView(TypedDict):
    owner: OwnerView
    evidence: EvidenceView


class DefinitionRef(TypedDict):
    repo: str
    commit: str
    path: str
    start: int
    end: int
    name: str
    qualified: str


class CallView(TypedDict):
    line: int
    col: int
    name: str
    text: str
    status: str  # resolved | ambiguous | by-name | stdlib | external | unknown | unsearched (atlas.code.records)
    confidence: str  # exact | by name | unresolved
    targets: list[DefinitionRef]  # every candidate, or the first KEPT_TARGETS of `candidates`
    candidates: int  # how many definitions the call may reach
    concepts: list[str]


class CallerView(TypedDict):
    repo: str
    commit: str
    path: str
    line: int  # the call site
    function: str  # the calling function's qualified name
    start: int  # where the calling function starts


class FunctionView(TypedDict):
    name: str
    qualified: str
    start: int
    end: int
    calls: list[CallView]
    callers: list[CallerView]  # every caller, or the first KEPT_CALLERS of `callers_total`
    callers_total: int


class PlaceView(TypedDict):
    repo: str
    commit: str
    path: str
    line: int
    indexed: bool  # the file is in the code index
    covering: list[CitationView]  # the pins whose lines hold the line
    function: FunctionView | None  # the innermost function around it
    before: list[CitationView]  # the nearest pins that end above it
    after: list[CitationView]  # the nearest pins that start below it


class ExcerptView(TypedDict):
    repo: str
    commit: str
    path: str
    start: int
    end: int
    owners: list[OwnerView]  # the records that cite exactly these lines ([] for a pin typed in)
    url: str
    lines: list[str]  # the source lines start..end ([] when the clone cannot give them)
    missing: str  # why the lines are not shown ("" when they are)
    functions: list[FunctionView]  # the functions that hold or overlap the lines
    language: NotRequired[str]


class MissView(TypedDict):
    """What `atlas where` or `atlas source` looked for when nothing matched, and why."""
    term: str  # the argument as typed
    repo: str  # the repository it names ("" when none)
    path: str  # the path it names
    line: int  # the line (0 when none could be read)
    reason: str  # absolute | climbs | bad-repo | unknown-repo | no-file
    files: int  # the pinned files looked in
    repos: int  # the repositories they belong to
    clones: int  # the clones whose code index was looked in
    closest: list[str]  # pinned paths whose file name is close to the one asked for


class Clones(TypedDict):
    root: str
    found: list[str]  # pinned repositories with a local clone
    absent: list[str]  # pinned repositories without one
    hint: str  # how to bring the absent ones in ("" when none is absent)
