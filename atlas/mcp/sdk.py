"""The MCP SDK's side of `atlas serve --mcp`: the tools, resources and prompt as the SDK declares
them, over `mcp.tools.AtlasTools` (plain functions that know nothing of MCP). Imported only when a
server is built, so the rest of the atlas never needs the optional `mcp` extra or pydantic.

Each tool's parameters are typed with the module-level `Annotated` aliases below: the SDK turns
them into the input schema, descriptions included."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..errors import AtlasError

from .tools import INSTRUCTIONS, LOOKUP_WORKERS, SPARQL_WORKERS, AtlasTools, answer_text, error_text
from .schemas import tool_schema


def _text(description: str):
    return Field(description=description)


Term = Annotated[str, _text("A concept id, an English or Chinese name or alias (e.g. hccs, 直驱, 'AIV direct drive').")]
Lang = Annotated[Literal["en", "zh", "all"],
                 _text("en, zh or all (default): which language's text to keep in bilingual fields.")]
AsOf = Annotated[str | None, _text("YYYY-MM-DD: mark whether the concept was already visible in a public "
                                   "repository then.")]
Cursor = Annotated[str | None, _text("page.next_cursor of the page before, with the same other arguments; omit "
                                     "for the first page.")]
SearchText = Annotated[str, _text("Words in English or Chinese, e.g. 'collective communication' or 单点通信.")]
Limit = Annotated[int, _text("At most this many hits (1-100).")]
Terms = Annotated[list[str], _text("Two or more concept ids or names.")]
RelationType = Annotated[str | None, _text("Only this relation type, from either side (uses, used-by, carries ...).")]
Depth = Annotated[int, _text("Hops to follow, 1-10.")]
PathFrom = Annotated[str, _text("The concept to start from.")]
PathTo = Annotated[str, _text("The concept to reach.")]
Topic = Annotated[str | None, _text("A concept, or words, the claims are about (omit for all claims).")]
Status = Annotated[str | None, _text("Only claims with this status (confirmed, refuted, open, hypothesis ...).")]
FlowName = Annotated[str, _text("A flow id, title or unique prefix (atlas flow lists them).")]
CardSection = Annotated[Literal["summary", "evidence", "claims", "relations", "history"],  # CARD_SECTIONS
                        _text("Which part of the card: summary (default: names, answers, explanations, "
                              "hardware, lifecycle, first visible), evidence, claims, relations or history.")]
FlowSection = Annotated[Literal["summary", "steps", "edges", "layout"],  # FLOW_SECTIONS
                        _text("Which part of the flow: summary (default: title, summary, evidence, choices), "
                              "steps, edges or layout (the memory window its kernels share, where the flow has one).")]
Uri = Annotated[str, _text("A uri from a search hit or a resource: atlas://concept/ID, atlas://claim/ID, "
                           "atlas://flow/ID, atlas://claims/STATUS, atlas://repo/OWNER/NAME, atlas://docs/NAME.")]
Offset = Annotated[int, _text("The character to start from (0 for the beginning; next_offset of the answer "
                              "before to go on).")]
MaxLength = Annotated[int, _text("At most this many characters (1-20000; fewer when the bytes would exceed "
                                 "16,000).")]
TimelineTerm = Annotated[str | None, _text("Only this concept or probe value.")]
TimelineRepo = Annotated[str | None, _text("Only this repository, owner/name.")]
Query = Annotated[str, _text("A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); prefixes atlas: "
                             "concept: question: claim: flow: repo: skos: prov: dcterms: doap: are predeclared.")]
ExplainTerm = Annotated[str, _text("The concept to explain.")]

TITLES = {
    "search": "Search the atlas", "card": "Concept card", "compare": "Compare concepts",
    "related": "Related concepts", "path": "Path between two concepts", "claims": "Claims and their evidence",
    "flow": "Flow as ordered steps", "timeline": "When concepts became visible", "sparql": "Read-only SPARQL query",
    "fetch": "Read a record or document as Markdown",
}


class _Caller:
    """Runs a tool's function in a worker thread of its pool and makes the MCP answer: the value
    as structured content and as a Markdown outline (`fetch`: its Markdown, and where it sits), or
    an error result with the command line's message."""

    def __init__(self):
        import anyio

        self.pools = {"lookup": anyio.CapacityLimiter(LOOKUP_WORKERS),
                      "sparql": anyio.CapacityLimiter(SPARQL_WORKERS)}

    async def __call__(self, fn, *args, pool: str = "lookup"):
        from functools import partial

        import anyio.to_thread
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import CallToolResult, TextContent

        try:
            value = await anyio.to_thread.run_sync(partial(fn, *args), limiter=self.pools[pool])
        except AtlasError as exc:
            raise ToolError(error_text(exc)) from None
        text, value = value if isinstance(value, tuple) else (answer_text(value), value)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)


def build_server(data_dir=None):
    """The MCP server object (needs the `mcp` extra)."""
    from importlib.metadata import PackageNotFoundError, version

    from mcp.server.mcpserver import MCPServer

    try:
        release = version("ascend-atlas")
    except PackageNotFoundError:  # run from a source tree that is not installed
        release = "0"
    tools = AtlasTools(data_dir)
    call = _Caller()
    functions = {**_lookup_tools(tools, call), **_more_tools(tools, call)}

    class Server(MCPServer):
        """The SDK's server, listing the records' resources (which need the atlas opened) only when
        a client first asks, so that start-up does not wait for the atlas."""
        listed = False

        async def list_resources(self):
            import anyio.to_thread

            if not self.listed:
                for resource in await anyio.to_thread.run_sync(_record_resources, tools):
                    self.add_resource(resource)
                self.listed = True
            return await super().list_resources()

    server = Server(name="ascend-atlas", title="Ascend communication atlas", instructions=INSTRUCTIONS,
                    version=release, tools=[_tool(name, fn) for name, fn in functions.items()],
                    resources=_document_resources(tools))
    _templates_and_prompt(server, tools)
    return server


def _tool(name: str, fn):
    """The SDK's tool for `fn`, with its title, its hints (read-only, idempotent, no outside world)
    and the output schema of its answer."""
    from mcp.server.mcpserver.tools import Tool
    from mcp.types import ToolAnnotations

    hints = ToolAnnotations(title=TITLES[name], read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
    tool = Tool.from_function(fn, name=name, title=TITLES[name], annotations=hints, structured_output=False)
    tool.fn_metadata.output_schema = tool_schema(name)  # published; the answers are made to it
    tool.fn_metadata.arg_model = _strict(tool.fn_metadata.arg_model)  # an argument it does not take: an error
    tool.parameters["additionalProperties"] = False
    return tool


def _strict(model):
    """The SDK's argument model of a tool, refusing arguments the tool does not take."""
    from pydantic import ConfigDict

    return type(model.__name__, (model,), {"model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid"),
                                           "__module__": model.__module__})


def _lookup_tools(tools: AtlasTools, call: _Caller) -> dict:
    async def search(text: SearchText, lang: Lang = "all", limit: Limit = 10, cursor: Cursor = None):
        """Ranked search over the atlas. Use it first when the user's words are not an exact id.
        Answers in pages (page.next_cursor)."""
        return await call(tools.search, text, lang, limit, cursor)

    async def card(term: Term, lang: Lang = "all", as_of: AsOf = None, section: CardSection = "summary",
                   cursor: Cursor = None):
        """A concept's card, a section at a time: the summary (names, answers to the six questions,
        beginner and professional explanations, hardware, lifecycle, first visible), then on request
        its evidence pins with confidence, claims, relations (and flows) or history. Long sections
        answer in pages (page.next_cursor)."""
        return await call(tools.card, term, lang, as_of, section, cursor)

    async def compare(terms: Terms):
        """Concepts side by side: kind, each question's answer, hardware, lifecycle, first visible."""
        return await call(tools.compare, terms)

    async def related(term: Term, relation: RelationType = None, depth: Depth = 1):
        """Concepts related to a concept, in both directions."""
        return await call(tools.related, term, relation, depth)

    async def path(a: PathFrom, b: PathTo):
        """The shortest typed chain of relations between two concepts."""
        return await call(tools.path, a, b)

    return {"search": search, "card": card, "compare": compare, "related": related, "path": path}


def _more_tools(tools: AtlasTools, call: _Caller) -> dict:
    async def claims(topic: Topic = None, status: Status = None, cursor: Cursor = None):
        """The seed's conclusions as claims, each with a status and its evidence; with a topic,
        ranked. Answers in pages (page.next_cursor)."""
        return await call(tools.claims, topic, status, cursor)

    async def flow(name: FlowName, section: FlowSection = "summary", cursor: Cursor = None):
        """An execution path, a section at a time: the summary (title, summary, evidence, choices),
        then its ordered steps (each with its actor, concepts and source pin), its edges or the layout
        of the memory window its kernels share. Long sections answer in pages (page.next_cursor)."""
        return await call(tools.flow, name, section, cursor)

    async def timeline(term: TimelineTerm = None, repo: TimelineRepo = None, as_of: AsOf = None,
                       cursor: Cursor = None):
        """When each concept first became visible in a public repository (UTC day of the
        committer date; full timestamps kept), oldest first, then the probes not found. Answers
        in pages (page.next_cursor)."""
        return await call(tools.timeline, term, repo, as_of, cursor)

    async def sparql(query: Query, cursor: Cursor = None):
        """Run a read-only SPARQL query over the atlas's RDF; updates and SERVICE are refused.
        SELECT answers in pages of bindings, CONSTRUCT and DESCRIBE in pages of JSON-LD nodes
        (page.next_cursor; the next pages come from the stored result, not another run)."""
        return await call(tools.sparql, query, cursor, pool="sparql")

    async def fetch(uri: Uri, offset: Offset = 0, max_length: MaxLength = 8000):
        """Read a record (concept card, claim, flow, repository, claims by status) or a document as
        Markdown, from `offset`, at most `max_length` characters; next_offset says where to go on."""
        return await call(tools.fetch, uri, offset, max_length)

    return {"claims": claims, "flow": flow, "timeline": timeline, "sparql": sparql, "fetch": fetch}


def _reader(name: str, tools: AtlasTools, uri: str):
    """A resource's read function (named, as the SDK wants): the first page of the Markdown at
    `uri`, an AtlasError as the SDK's resource error."""
    def read() -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return tools.page_of(uri, None)
        except AtlasError as exc:
            raise ResourceError(error_text(exc)) from None

    read.__name__ = name
    return read


def _resource(tools: AtlasTools, uri: str, name: str, title: str, description: str):
    from mcp.server.mcpserver.resources import FunctionResource

    return FunctionResource.from_function(_reader(name, tools, uri), uri, name=name, title=title,
                                          description=description + " Long ones come in pages (?page=2 ...).",
                                          mime_type="text/markdown")


def _document_resources(tools: AtlasTools) -> list:
    """The documents: the README and the pages of docs/."""
    out = [_resource(tools, "atlas://docs/readme", "readme", "README: the atlas and how to use it",
                     "What the atlas is and where its documentation is.")]
    for name in tools.documents()[1:]:
        first = tools.document(name).partition("\n")[0].lstrip("# ").strip()
        out.append(_resource(tools, f"atlas://docs/{name}", name, first or f"docs/{name}.md",
                             f"The documentation page docs/{name}.md."))
    return out


def _record_resources(tools: AtlasTools) -> list:
    """Every flow and every group of claims (by status), as Markdown resources."""
    try:
        flows, groups = tools.atlas.flows, tools.claim_groups()
    except AtlasError:  # bad data: the tools say what is wrong when they are called
        flows, groups = [], {}
    out = []
    for f in sorted(flows, key=lambda f: f.id):
        out.append(_resource(tools, f"atlas://flow/{f.id}", f"flow-{f.id}", f"Flow: {f.title.en} / {f.title.zh}",
                             f"{len(f.steps)} steps, in order, with actors, concepts and source pins."))
    for status, n in groups.items():
        out.append(_resource(tools, f"atlas://claims/{status}", f"claims-{status}", f"Claims with status {status}",
                             f"The {n} claim(s) the atlas holds as {status}, with their evidence."))
    return out


TEMPLATES = {
    "concept": ("atlas://concept/{ident}{?page}", "A concept card as Markdown, both languages."),
    "claim": ("atlas://claim/{ident}{?page}", "A claim with its status and evidence, as Markdown."),
    "flow": ("atlas://flow/{ident}{?page}", "A flow as ordered steps, as Markdown."),
    "claims": ("atlas://claims/{ident}{?page}", "Every claim with one status, as Markdown."),
    "repo": ("atlas://repo/{owner}/{name}{?page}", "A repository with its harvest and probes, as Markdown."),
    "docs": ("atlas://docs/{ident}{?page}", "A document: readme, or a page of docs/ by name."),
}


def _templates_and_prompt(server, tools: AtlasTools) -> None:
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    def paged(uri: str, page: str | None) -> str:
        try:
            return tools.page_of(uri, page)
        except AtlasError as exc:
            raise ResourceNotFoundError(error_text(exc)) from None

    def reader(kind: str):
        def read(ident: str, page: str | None = None) -> str:
            return paged(f"atlas://{kind}/{ident}", page)

        read.__name__ = f"{kind}_resource"
        return read

    def read_repo(owner: str, name: str, page: str | None = None) -> str:
        return paged(f"atlas://repo/{owner}/{name}", page)

    for kind, (template, description) in TEMPLATES.items():
        read = read_repo if kind == "repo" else reader(kind)
        server.resource(template, mime_type="text/markdown", description=description)(read)

    @server.prompt()
    def explain(term: ExplainTerm) -> str:
        """Explain a concept from its atlas card, citing evidence pins."""
        try:
            text = tools.page_of(f"atlas://concept/{tools.concept(term).id}", None)
        except AtlasError as exc:  # a protocol error the SDK passes on with its message
            raise MCPError(INVALID_PARAMS, error_text(exc)) from None
        return ("Explain the following concept from the Ascend communication atlas. Answer only "
                "from this card. Say which of the six questions it answers, give the beginner "
                "explanation first and the professional one after, and cite each fact with its "
                "evidence pin (owner/repo@sha:path#L...) and confidence; say so where the card "
                "has no evidence.\n\n" + text)


def serve(data_dir=None) -> None:
    import anyio

    from .stdio import serve_stdio

    anyio.run(serve_stdio, build_server(data_dir))
