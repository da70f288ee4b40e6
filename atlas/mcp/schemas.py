"""What each MCP tool answers: the shapes (TypedDicts) and the JSON Schemas the server declares
as the tools' `outputSchema`.

A card and a flow come in sections whose fields are those of the view layer's own `views.Card`
and `views.FlowView` (each optional, as a section holds some), and the claims are
`views.ClaimView`: pydantic derives their schemas from those declarations, so a field added to a
view is in the schema with no edit here. The other answers (search hits, compare, related, path,
the timeline, SPARQL results) are plain dicts of `atlas.view.queries`, `atlas.index.search` and `atlas.linked.sparql`
that the view layer does not declare yet; their shapes are declared here (to be folded into the
view layer), and tests/test_mcp.py fails when an answer carries a field its shape lacks. The paged
answers carry `page` (`atlas.mcp.paging.Page`).
"""
from typing import Any, NotRequired, TypedDict

from ..view import views
from .paging import Page
from ..view.views import ClaimView, TextView

# ---------------------------------------------------------------------------------------------

class Snippet(TypedDict):
    field: str  # names, head, body or evidence ("" when only an exact name matched)
    lang: str
    text: str


class SearchHit(TypedDict):
    type: str  # concept, claim, flow or repo
    id: str
    name: TextView
    score: float
    snippet: Snippet
    uri: str  # the hit's resource, as `fetch` reads it: atlas://concept/ID, ...


class Intent(TypedDict):
    kind: str  # definition, history, release, question, comparison, claims or search (atlas/ask/understand.py)
    question: str | None  # the one of the six questions asked (kind question)
    concepts: list[str]  # the concepts the answer is about, in the order named
    lang: str  # the question's language: en or zh


class SearchAnswer(TypedDict):
    query: str
    intent: Intent
    answer: dict[str, Any] | None  # what the intent asks for (docs/json.md); null for a search
    hits: list[SearchHit]
    page: Page


class QuestionName(TypedDict):
    id: str
    names: TextView


class CompareFirst(TypedDict):
    date: str
    repo: str
    sha: str
    precision: str
    first_release: str


class CompareColumn(TypedDict):
    id: str
    kind: str
    name: TextView
    answers: dict[str, TextView]
    hardware: list[str]
    lifecycle: str
    lifecycle_note: TextView
    first_visible: CompareFirst | None
    needs_release: str  # the release it first shipped in; "unreleased"; "" (undated, or no releases)


class CompareAnswer(TypedDict):
    questions: list[QuestionName]
    concepts: list[CompareColumn]
    related_among_them: list[str]


RelatedItem = TypedDict("RelatedItem", {"depth": int, "from": str, "relation": str, "id": str, "kind": str,
                                        "name": TextView})


class RelatedAnswer(TypedDict):
    id: str
    related: list[RelatedItem]


PathStep = TypedDict("PathStep", {"from": str, "to": str, "relation": str, "direction": str})
PathAnswer = TypedDict("PathAnswer", {"from": str, "to": str, "steps": list[PathStep]})


def _partial(view: Any, name: str) -> Any:
    """The view's TypedDict with every key optional (a section holds some of them)."""
    import typing

    hints = typing.get_type_hints(view, include_extras=True)
    plain = {k: typing.get_args(h)[0] if typing.get_origin(h) is NotRequired else h for k, h in hints.items()}
    return TypedDict(name, {k: NotRequired[h] for k, h in plain.items()})  # type: ignore[operator]


CardPart = _partial(views.Card, "CardPart")
FlowPart = _partial(views.FlowView, "FlowPart")


class CardAnswer(TypedDict):
    id: str
    section: str  # the part of the card this answer holds
    sections: list[str]  # every part, the summary first
    card: CardPart  # type: ignore[valid-type]  # the fields of `views.Card` this section holds
    page: Page


class FlowAnswer(TypedDict):
    id: str
    section: str
    sections: list[str]
    flow: FlowPart  # type: ignore[valid-type]  # the fields of `views.FlowView` this section holds
    page: Page


class FetchAnswer(TypedDict):
    uri: str
    offset: int  # the first character given (the text content holds the Markdown)
    length: int  # characters given
    total: int  # characters in the whole document
    next_offset: int | None  # give it as `offset` to go on; null at the end


class ClaimsAnswer(TypedDict):
    claims: list[ClaimView]
    page: Page


class SightingItem(TypedDict):
    date: str  # UTC day of the committer date
    repo: str
    concept: str
    method: str
    value: str
    sha: str
    committer_date: str  # with its offset
    introduced: str
    precision: str
    note: str


class NotFoundItem(TypedDict):
    repo: str
    concept: str
    method: str
    value: str
    cutoff: str


class UnknownItem(NotFoundItem):
    note: str


class TimelineAnswer(TypedDict):
    as_of: str | None
    hidden_after_as_of: int
    sightings: list[SightingItem]
    not_found: list[NotFoundItem]
    unknown: list[UnknownItem]
    page: Page


# SPARQL 1.1 Query Results JSON (section 3) and the compacted JSON-LD of CONSTRUCT and DESCRIBE
RdfTerm = TypedDict("RdfTerm", {"type": str, "value": str, "datatype": NotRequired[str],
                                "xml:lang": NotRequired[str]})


class ResultsHead(TypedDict):
    vars: NotRequired[list[str]]
    link: NotRequired[list[str]]


class Bindings(TypedDict):
    bindings: list[dict[str, RdfTerm]]


class SelectAnswer(TypedDict):
    head: ResultsHead
    results: Bindings
    page: Page


class AskAnswer(TypedDict):
    head: NotRequired[ResultsHead]
    boolean: bool


GraphAnswer = TypedDict("GraphAnswer", {"@context": dict[str, str], "@graph": list[dict[str, Any]],
                                        "page": Page})
SparqlAnswer = SelectAnswer | AskAnswer | GraphAnswer

SHAPES: dict[str, Any] = {
    "search": SearchAnswer, "card": CardAnswer, "compare": CompareAnswer, "related": RelatedAnswer,
    "path": PathAnswer, "claims": ClaimsAnswer, "flow": FlowAnswer, "timeline": TimelineAnswer,
    "sparql": SparqlAnswer, "fetch": FetchAnswer,
}


def tool_schema(tool: str) -> dict:
    """The output schema of one tool (a union of shapes is titled after the tool)."""
    schema = output_schema(SHAPES[tool])
    schema.setdefault("title", tool.capitalize() + "Answer")
    return schema


def output_schema(shape: Any) -> dict:
    """The JSON Schema of an answer shape, derived by pydantic from its TypedDict, so that a field
    added to a view is in the schema with no edit here. A bilingual {en, zh} object may hold one
    language only (the `lang` argument), and the schema's root is an object (MCP asks for one)."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(pydantic_readable(shape, {})).json_schema(mode="serialization")
    _tidy(schema)
    schema.setdefault("type", "object")
    return schema


def pydantic_readable(tp: Any, done: dict) -> Any:
    """`tp` with every `typing.TypedDict` in it rebuilt as a `typing_extensions.TypedDict`, the only
    kind pydantic reads below Python 3.12 (the same keys; `NotRequired` read off the annotation,
    which Python 3.11 misses in `__required_keys__` under postponed annotations)."""
    import typing

    import typing_extensions

    if typing.is_typeddict(tp):
        if tp not in done:
            items = {}
            for key, hint in typing.get_type_hints(tp, include_extras=True).items():
                optional = typing.get_origin(hint) in (typing.NotRequired, typing_extensions.NotRequired)
                inner = pydantic_readable(typing.get_args(hint)[0] if optional else hint, done)
                items[key] = typing_extensions.NotRequired[inner] if optional else inner
            done[tp] = typing_extensions.TypedDict(tp.__name__, items)  # type: ignore[operator]
            done[tp].__doc__ = tp.__doc__
        return done[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is None or origin is typing.Literal or not args:
        return tp
    if origin is typing.Annotated:
        return typing.Annotated[(pydantic_readable(args[0], done), *tp.__metadata__)]
    inner = tuple(pydantic_readable(a, done) for a in args)
    if origin in (typing.Union, __import__("types").UnionType):
        return typing.Union[inner]
    return origin[inner]


def _tidy(node: Any) -> None:
    """Let {en, zh} objects hold one language; drop the titles pydantic makes of property names."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            if set(props) == {"en", "zh"}:
                node.pop("required", None)
            for prop in props.values():
                prop.pop("title", None)
        for value in node.values():
            _tidy(value)
    elif isinstance(node, list):
        for value in node:
            _tidy(value)
