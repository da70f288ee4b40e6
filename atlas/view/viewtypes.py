"""The shapes of the views (atlas.view.views): one `TypedDict` per view, so the type checker sees every
field and the MCP tools derive their output schemas from the same declarations.

They live apart from the functions that build the views because declaring them costs a few
milliseconds at import, and a card lookup in the terminal never needs them at run time:
`atlas.view.views` gives each of them by name, importing this module the first time one is asked for.
"""
from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class TextView(TypedDict):
    en: str
    zh: str


class PinView(TypedDict):
    repo: str
    sha: str
    path: str
    start: int
    end: int


class EvidenceView(TypedDict):
    source: str  # the pin as written (owner/repo@sha:path#La-Lb) or the URL
    confidence: str
    supports: TextView
    url: str  # where a browser reads it: the pinned commit and lines upstream, or the URL ("" if none)
    pin: NotRequired[PinView]
    seed_page: NotRequired[int]  # a citation of the seed's page N (no public address: url is "")
    symbol: NotRequired[str]
    defined_at: NotRequired[str]  # "file:line:col" of the evidence in data/


class RelatedView(TypedDict):
    id: str
    name: TextView
    note: TextView
    direction: str  # "out": this concept is the relation's source; "in": its target
    evidence: list[EvidenceView]


class RelationGroup(TypedDict):
    relation: str  # the name read from this concept's side (uses / used-by ...)
    type: str  # the forward (or symmetric) relation type behind it
    concepts: list[RelatedView]


class ClaimRef(TypedDict):
    id: str
    status: str
    statement: TextView


class FlowRef(TypedDict):
    id: str
    title: TextView
    steps: list[str]  # ids of the steps that name the concept, in the flow's order


class HistoryItem(TypedDict):
    repo: str
    method: str
    value: str
    found: bool
    sha: str
    date: str  # committer timestamp with its offset ("" when not found)
    author_date: str
    introduced: str
    precision: str
    head: str
    cutoff: str
    url: str  # the commit upstream ("" when not found)
    first_release: str  # the first release containing the commit that introduced it ("" = none)
    needs_release: str  # first_release; "unreleased" when the repository has releases but none holds it; ""


class FirstVisible(TypedDict):
    date: str  # committer timestamp with its offset; people see its UTC day
    repo: str
    sha: str
    precision: str
    method: str
    value: str
    url: str
    first_release: str  # "" when the repository has no release containing it (or no releases)
    needs_release: str  # first_release; "unreleased" when the repository has releases but none holds it; ""


class RepoRef(TypedDict):
    id: str
    status: str  # "" for a repository the atlas does not describe
    mirror_of: str
    purpose: TextView


class Lifecycle(TypedDict):
    status: str
    note: TextView


class AsOf(TypedDict):
    date: str
    visible: bool | None  # None: nothing dates the concept


class UndatedView(TypedDict):
    reason: str  # one of model.UNDATED_REASONS
    repos: list[str]
    note: TextView


class Card(TypedDict):
    id: str
    kind: str
    names: TextView
    aliases: dict[str, list[str]]
    answers: dict[str, TextView]  # question id -> answer, in question order
    beginner: TextView
    professional: TextView
    hardware: list[str]
    hardware_note: TextView
    lifecycle: Lifecycle
    relations: list[RelationGroup]
    claims: list[ClaimRef]
    flows: list[FlowRef]
    evidence: list[EvidenceView]
    history: list[HistoryItem]
    first_visible: FirstVisible | None
    repositories: list[RepoRef]
    labels: dict[str, TextView]  # names of the concepts the card refers to (hardware, relations)
    undated: UndatedView | None  # why no sighting dates the concept (None when one does)
    api: list["ApiItem"]  # the API symbols the concept names, with their history
    defined_at: str
    as_of: NotRequired[AsOf]


class Row(TypedDict):
    id: str
    kind: str
    name: TextView
    answers: list[str]  # the question ids answered
    lifecycle: str
    first_visible: NotRequired[str]  # UTC day, "" when undated
    visible: NotRequired[bool | None]


class PlanView(TypedDict):
    order: int  # 1 = decide first
    step: str  # "flow-id/step-id" it instruments, or ""
    where: list[EvidenceView]  # the pinned lines to time or print at
    measure: TextView
    confirm: TextView
    refute: TextView


class ClaimView(TypedDict):
    id: str
    status: str
    statement: TextView
    about: list[str]
    note: TextView
    evidence: list[EvidenceView]
    test_plan: PlanView | None
    score: NotRequired[float]


class StepPlan(TypedDict):
    claim: str
    order: int


# "from" is a Python keyword: these two shapes are declared in the functional form
AfterView = TypedDict("AfterView", {"from": str, "type": str, "label": str})


EdgeView = TypedDict("EdgeView", {"from": str, "to": str, "type": str, "label": str})


class StepView(TypedDict):
    id: str
    title: TextView  # one line; the label when the data gives no title
    label: TextView
    actor: str
    concepts: list[str]
    note: TextView
    source: EvidenceView | None
    test_plans: list[StepPlan]  # the claims whose test plan instruments this step, in decision order
    after: list[AfterView]


OptionView = TypedDict("OptionView", {"to": str, "label": str})


ChoiceView = TypedDict("ChoiceView", {"from": str, "options": list[OptionView]})


class RegionView(TypedDict):
    id: str
    label: TextView
    offset: str  # as the source computes it
    size: str
    writers: TextView
    readers: TextView
    part_of: str  # the region it lies in; "" at the top level
    evidence: list[EvidenceView]


class FlowView(TypedDict):
    id: str
    title: TextView
    summary: TextView
    evidence: list[EvidenceView]
    steps: list[StepView]  # in topological order
    edges: list[EdgeView]
    choices: list[ChoiceView]  # steps whose labelled control edges are alternatives (one is taken)
    labels: dict[str, TextView]  # names of the concepts the steps name
    layout: list[RegionView]  # the shared window's regions in address order ([] when the flow has none)


class FlowSummary(TypedDict):
    id: str
    title: TextView
    summary: TextView
    steps: int
    edges: int


class QuestionView(TypedDict):
    id: str
    names: TextView
    explanation: TextView


class HarvestView(TypedDict):
    head: str
    branch: str
    cutoff: str
    cutoff_head: str
    harvested_at: str
    commits: int
    shallow: bool
    skipped_paths: list[str]


class ProbeView(TypedDict):
    concept: str
    method: str
    value: str
    found: bool
    sha: str
    date: str
    precision: str


class RepoSummary(TypedDict):
    id: str
    status: str
    purpose: TextView
    mirror_of: str
    harvested: bool
    probes: int
    found: int


class RepoView(TypedDict):
    id: str
    urls: list[str]
    purpose: TextView
    status: str
    branch: str
    mirror_of: str
    migrated_from: list[str]
    hardware: list[str]
    note: TextView
    evidence: list[EvidenceView]
    harvest: HarvestView | None
    probes: list[ProbeView]
    concepts: list[str]  # concepts with a probe in this repository
    first_seen: list[str]  # concepts first visible in this repository, oldest first
    defined_at: str


Pairs = list[tuple[str, str]]  # (language or "", text)


class SearchDocument(TypedDict):
    type: str  # concept, claim, flow or repo
    id: str
    name: TextView
    keys: list[str]  # exact names (id, names, aliases, titles)
    names: Pairs
    head: Pairs
    body: Pairs
    evidence: Pairs


class OwnerView(TypedDict):
    kind: str
    id: str
    flow: str  # the flow of a step ("" otherwise)
    label: str


class ApiEvent(TypedDict):
    sha: str
    date: str  # committer timestamp with its offset
    event: str  # added | removed | changed
    signature: str  # after the event ("" for a removal)
    precision: str  # exact | on-or-before (a first appearance) | uncertain
    url: str


class ReleaseRef(TypedDict):
    name: str
    date: str
    commit: str
    url: str


class ApiItem(TypedDict):
    """A symbol as one line of a card, a list or the site's table."""
    repo: str
    kind: str
    name: str
    signature: str
    first: ApiEvent | None  # None for a symbol only seen in releases
    first_release: str  # the first release whose tree declares it; "" = never released
    first_release_label: TextView  # the release's name, or "never released" / "从未发布"
    removed: ApiEvent | None
    releases: str  # one character per release: "." absent, a letter per distinct signature
    where: NotRequired[list[list]]  # [path, line] at the cut-off (the site's table)
    concepts: NotRequired[list[str]]  # ids of the concepts that name it (the site's table)


class WhereView(TypedDict):
    path: str
    line: int
    url: str


class ReleaseState(TypedDict):
    name: str
    state: str  # absent | first | present | changed | removed (read like caniuse's release columns)
    signature: str


class SymbolCard(TypedDict):
    card: str  # "symbol"
    repo: str
    kind: str
    name: str
    signature: str  # at the cut-off (the last one seen when removed)
    where: list[WhereView]  # at the cut-off head
    first: ApiEvent | None
    introduced: str  # the side-branch commit for a first appearance at a merge, else first's commit
    introduced_date: str
    note: str
    first_release: ReleaseRef | None  # the first release whose tree declares it; None = never released
    first_release_label: TextView  # the release's name, or "never released" / "从未发布"
    removed: ApiEvent | None
    changes: list[ApiEvent]  # every event after the first, oldest first
    releases: list[ReleaseState]
    concepts: list[dict[str, Any]]  # [{id, name}] of the concepts that name it
    cutoff: str
    cutoff_head: str


class ApiChange(TypedDict):
    kind: str
    name: str
    before: str
    after: str


class ApiDiff(TypedDict):
    repo: str
    base: ReleaseRef
    target: ReleaseRef
    added: list[ApiChange]
    removed: list[ApiChange]
    changed: list[ApiChange]
    unreadable: dict[str, int]  # release -> public files the clone could not read there (answers there may miss)


class ApiPage(TypedDict):
    """One repository's public API as the site shows it: its summary and every symbol."""
    summary: "ApiSummary"
    base: str  # the repository's web address
    items: list[ApiItem]


class ApiSince(TypedDict):
    repo: str
    since: ReleaseRef
    releases: list[ReleaseRef]  # the releases after it, in order
    symbols: list[ApiItem]  # first released after it, then those in no release yet


class SurfaceFolder(TypedDict):
    folder: str
    scanned: bool  # whether the public globs read it
    reason: TextView


class ApiSummary(TypedDict):
    repo: str
    cutoff: str
    cutoff_head: str
    harvested_at: str
    releases: list[ReleaseRef]
    ignored_tags: list[list[str]]
    symbols: int
    kinds: dict[str, int]
    surfaces: list[SurfaceFolder]  # the folders stated public (scanned) or not, with the reason


class SeedPageView(TypedDict):
    id: str  # page-N, the anchor citations of the page point at
    number: int
    title: TextView
    summary: TextView
    flows: list[str]


class AtlasViews(TypedDict):
    cutoff: str
    questions: list[QuestionView]
    cards: list[Card]  # by id
    claims: list[ClaimView]  # by id
    flows: list[FlowView]  # by id
    repositories: list[RepoSummary]  # by id, case-insensitive
    releases: dict[str, list[ReleaseRef]]  # repository -> its releases, in release order
    repos: list[RepoView]  # the same repositories in full, same order
    seed: list[SeedPageView]  # by page number
