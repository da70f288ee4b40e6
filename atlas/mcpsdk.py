"""The MCP SDK's side of `atlas serve --mcp`: the tools, resources and prompt as the SDK declares
them, over `mcpserver.AtlasTools` (plain functions that know nothing of MCP). Imported only when a
server is built, so the rest of the atlas never needs the optional `mcp` extra or pydantic.

Each tool's parameters are typed with the module-level `Annotated` aliases below: the SDK turns
them into the input schema, descriptions included."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .errors import AtlasError
from .mcpserver import INSTRUCTIONS, LOOKUP_WORKERS, SPARQL_WORKERS, AtlasTools, document_path, error_text
from .mcpshapes import tool_schema
from .output import to_json


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
TimelineTerm = Annotated[str | None, _text("Only this concept or probe value.")]
TimelineRepo = Annotated[str | None, _text("Only this repository, owner/name.")]
Query = Annotated[str, _text("A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); prefixes atlas: "
                             "concept: question: claim: flow: repo: skos: prov: dcterms: doap: are predeclared.")]
ExplainTerm = Annotated[str, _text("The concept to explain.")]

TITLES = {
    "search": "Search the atlas", "card": "Concept card", "compare": "Compare concepts",
    "related": "Related concepts", "path": "Path between two concepts", "claims": "Claims and their evidence",
    "flow": "Flow as ordered steps", "timeline": "When concepts became visible", "sparql": "Read-only SPARQL query",
}


class _Caller:
    """Runs a tool's function in a worker thread of its pool and makes the MCP answer: the value
    as structured content and as JSON text, or an error result with the command line's message."""

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
        return CallToolResult(content=[TextContent(type="text", text=to_json(value))], structured_content=value)


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
    server = MCPServer(name="ascend-atlas", title="Ascend communication atlas", instructions=INSTRUCTIONS,
                       version=release, tools=[_tool(name, fn) for name, fn in functions.items()],
                       resources=_resources(tools))
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
    return tool


def _lookup_tools(tools: AtlasTools, call: _Caller) -> dict:
    async def search(text: SearchText, lang: Lang = "all", limit: Limit = 10, cursor: Cursor = None):
        """Ranked search over the atlas. Use it first when the user's words are not an exact id.
        Answers in pages (page.next_cursor)."""
        return await call(tools.search, text, lang, limit, cursor)

    async def card(term: Term, lang: Lang = "all", as_of: AsOf = None):
        """A concept's full card: answers to the six questions, beginner and professional
        explanations, relations, claims, flows, evidence pins with confidence, and history."""
        return await call(tools.card, term, lang, as_of)

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

    async def flow(name: FlowName):
        """An execution path as ordered steps, each with its actor, concepts and source pin."""
        return await call(tools.flow, name)

    async def timeline(term: TimelineTerm = None, repo: TimelineRepo = None, as_of: AsOf = None,
                       cursor: Cursor = None):
        """When each concept first became visible in a public repository (UTC day of the
        committer date; full timestamps kept), oldest first, then the probes not found. Answers
        in pages (page.next_cursor)."""
        return await call(tools.timeline, term, repo, as_of, cursor)

    async def sparql(query: Query, cursor: Cursor = None):
        """Run a read-only SPARQL query over the atlas's RDF; updates and SERVICE are refused.
        SELECT answers in pages of bindings, CONSTRUCT and DESCRIBE in pages of JSON-LD nodes
        (page.next_cursor; the query runs again for each page)."""
        return await call(tools.sparql, query, cursor, pool="sparql")

    return {"claims": claims, "flow": flow, "timeline": timeline, "sparql": sparql}


def _reader(name: str, fn, *args):
    """A resource's read function (named, as the SDK wants): `fn(*args)`, an AtlasError as the
    SDK's resource error."""
    def read() -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return fn(*args)
        except AtlasError as exc:
            raise ResourceError(error_text(exc)) from None

    read.__name__ = name
    return read


def _resources(tools: AtlasTools) -> list:
    """The documents, every flow and every group of claims (by status), as Markdown resources."""
    from mcp.server.mcpserver.resources import FunctionResource

    def resource(uri: str, name: str, title: str, description: str, fn, *args):
        return FunctionResource.from_function(_reader(name, fn, *args), uri, name=name, title=title,
                                              description=description, mime_type="text/markdown")

    out = [resource("atlas://docs/readme", "readme", "README: the atlas and how to use it",
                    "What the atlas is, its commands, JSON, MCP tools and reliability promises.",
                    tools.document, "README.md")]
    if document_path("docs/schema.md", tools.data_dir):
        out.append(resource("atlas://docs/schema", "schema", "The data's schema (docs/schema.md)",
                            "How data/ is written: concepts, relations, evidence pins, claims, flows, "
                            "the timeline.", tools.document, "docs/schema.md"))
    try:
        flows, groups = tools.atlas.flows, tools.claim_groups()
    except AtlasError:  # bad data: the tools say what is wrong when they are called
        flows, groups = [], {}
    for f in sorted(flows, key=lambda f: f.id):
        out.append(resource(f"atlas://flow/{f.id}", f"flow-{f.id}", f"Flow: {f.title.en} / {f.title.zh}",
                            f"{len(f.steps)} steps, in order, with actors, concepts and source pins.",
                            tools.flow_markdown, f.id))
    for status, n in groups.items():
        out.append(resource(f"atlas://claims/{status}", f"claims-{status}", f"Claims with status {status}",
                            f"The {n} claim(s) the atlas holds as {status}, with their evidence.",
                            tools.claim_group_markdown, status))
    return out


def _templates_and_prompt(server, tools: AtlasTools) -> None:
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    def resource(fn, ident):
        try:
            return fn(ident)
        except AtlasError as exc:
            raise ResourceNotFoundError(error_text(exc)) from None

    @server.resource("atlas://concept/{ident}", mime_type="text/markdown",
                     description="A concept card as Markdown, both languages.")
    def concept_resource(ident: str) -> str:
        return resource(tools.concept_markdown, ident)

    @server.resource("atlas://claim/{ident}", mime_type="text/markdown",
                     description="A claim with its status and evidence, as Markdown.")
    def claim_resource(ident: str) -> str:
        return resource(tools.claim_markdown, ident)

    @server.resource("atlas://flow/{ident}", mime_type="text/markdown",
                     description="A flow as ordered steps, as Markdown.")
    def flow_resource(ident: str) -> str:
        return resource(tools.flow_markdown, ident)

    @server.prompt()
    def explain(term: ExplainTerm) -> str:
        """Explain a concept from its atlas card, citing evidence pins."""
        try:
            text = tools.concept_markdown(tools.concept(term).id)
        except AtlasError as exc:  # a protocol error the SDK passes on with its message
            raise MCPError(INVALID_PARAMS, error_text(exc)) from None
        return ("Explain the following concept from the Ascend communication atlas. Answer only "
                "from this card. Say which of the six questions it answers, give the beginner "
                "explanation first and the professional one after, and cite each fact with its "
                "evidence pin (owner/repo@sha:path#L...) and confidence; say so where the card "
                "has no evidence.\n\n" + text)


def serve(data_dir=None) -> None:
    import anyio

    from .mcpstdio import serve_stdio

    anyio.run(serve_stdio, build_server(data_dir))
