"""`atlas serve --mcp`: the atlas as a Model Context Protocol server over stdio.

Coding assistants call its tools for search, cards, comparisons, relations, paths, claims, flows,
the timeline and read-only SPARQL. Every tool answers with structured content that its declared
`outputSchema` describes, and with the same value as JSON text: the command line's `--format json`
(docs/json.md), evidence pins and their confidence included. `claims`, `timeline`, `search` and
`sparql` answer in pages under 20,000 bytes (`atlas.paging`). A bad input gives an error result
carrying the command line's message. The server reads data/ and the cache, writes nothing into
data/, and never reaches the network (SPARQL SERVICE is refused).

Calls run at once, in two small pools of worker threads: SPARQL queries in one (each evaluates in a
child process under the time limit), every other tool in the other, so a slow query never holds up
a search; the opened atlas gives each thread a search index of its own. Every line the client sends
is checked first (`atlas.jsonrpc`): a malformed message that the SDK would drop unanswered gets a
JSON-RPC error reply.

`AtlasTools` holds the tool logic and knows nothing of MCP; `build_server` wires it into the SDK
(the optional `mcp` extra, imported only here and in `atlas.mcpstdio`), with the output schemas of
`atlas.mcpshapes`.
"""

import json
from pathlib import Path

from . import commands, markdown, paging, queries, views
from .errors import AtlasError, Location, NoMatch
from .mcpshapes import tool_schema
from .output import to_json
from .text import day, not_a_day

INSTRUCTIONS = (
    "The Ascend communication atlas: a curated bilingual (English/中文) knowledge graph of how data "
    "moves between Huawei Ascend NPUs (HCCL, HCOMM, HiXL, SHMEM, MemFabric, HCCS, UB/URMA, "
    "SDMA/UDMA/MTE, WQE/SQ/CQ/doorbell, AIV direct drive, Mooncake's Ascend flags, DeepEP ...). "
    "Each concept answers some of six questions: who organises the communication, who establishes "
    "the addresses, who submits the tasks, who moves the data, which physical link the data takes, "
    "whether the peer participates. Start with `search`, then `card`; cite the evidence pins "
    "(owner/repo@sha:path#La-Lb) and their confidence, and respect claim statuses. `claims`, "
    "`timeline`, `search` and `sparql` answer in pages: while `page.next_cursor` is not null, call "
    "again with the same arguments and `cursor` set to it.")

SPARQL_WORKERS = 2  # queries evaluated at once (each a child process using a core)
LOOKUP_WORKERS = 8  # every other tool: quick reads of the atlas and the search index


# ---------------------------------------------------------------------------------------------
# The tools, without MCP
# ---------------------------------------------------------------------------------------------

def _lang_only(value, lang: str):
    """Reduce every bilingual {en, zh} object to one language (lang 'all' keeps both)."""
    if lang == "all":
        return value
    if isinstance(value, dict):
        if set(value) == {"en", "zh"} and all(isinstance(v, str) for v in value.values()):
            return {lang: value[lang]}
        return {k: _lang_only(v, lang) for k, v in value.items()}
    if isinstance(value, list):
        return [_lang_only(v, lang) for v in value]
    return value


def _check_lang(lang: str) -> str:
    if lang not in ("en", "zh", "all"):
        raise AtlasError(f'unknown language "{lang}"', Location("lang"), "use en, zh or all")
    return lang


def _check_date(value: str | None, where: str) -> str | None:
    if value is None or value == "":
        return None
    parsed = day(value)
    if parsed is None:
        raise AtlasError(not_a_day(value), Location(where))
    return parsed


def _demoted(md: str) -> str:
    """Markdown with every heading one level lower (to sit under a heading of its own)."""
    return "\n".join("#" + line if line.startswith("#") else line for line in md.splitlines()) + "\n"


class AtlasTools:
    """The tools, as plain functions returning the library's values (no MCP here). The paged ones
    take the `cursor` of the page before and return one page."""

    def __init__(self, data_dir=None):
        import threading

        self.data_dir = data_dir
        self._opened = None
        self._opening = threading.Lock()  # the tools run in worker threads

    @property
    def opened(self):
        """The atlas, opened once (as `atlas query` reads it from the cache)."""
        with self._opening:
            if self._opened is None:
                from .opened import Opened

                self._opened = Opened(self.data_dir)
            return self._opened

    @property
    def atlas(self):
        return self.opened.atlas

    @property
    def index(self):
        return self.opened.index  # this thread's own connection

    def concept(self, term: str):
        return self.opened.concept(term)

    def _page(self, tool: str, arguments: dict, value: dict, lists: list[paging.Path]) -> dict:
        call = paging.call_digest(tool, arguments, self.opened.key)
        return paging.page(value, lists, paging.cursor_offset(arguments.get("cursor"), call), call, to_json)

    def search(self, text: str, lang: str = "all", limit: int = 10, cursor: str | None = None):
        _check_lang(lang)
        if not text.strip():
            raise AtlasError("give some words to search for", Location("text"))
        if not 1 <= limit <= 100:
            raise AtlasError(f"limit {limit} is out of range", Location("limit"), "use 1 to 100")
        hits = self.index.search(text, limit=limit)  # the ranked list of `atlas query WORDS`
        value = _lang_only({"query": text, "hits": hits}, lang)
        return self._page("search", {"text": text, "lang": lang, "limit": limit, "cursor": cursor}, value,
                          [("hits",)])

    def card(self, term: str, lang: str = "all", as_of: str | None = None):
        _check_lang(lang)
        as_of = _check_date(as_of, "as_of")
        return _lang_only(views.card(self.atlas, self.concept(term), as_of), lang)

    def compare(self, terms: list[str]):
        if len(terms) < 2:
            raise AtlasError("compare needs at least two concepts", Location("terms"))
        return commands.compare_value(self.atlas, terms)

    def related(self, term: str, relation: str | None = None, depth: int = 1):
        if not 1 <= depth <= 10:
            raise AtlasError(f"depth {depth} is out of range", Location("depth"), "use 1 to 10")
        return commands.related_value(self.atlas, term, relation, depth)

    def path(self, a: str, b: str):
        return commands.path_value(self.atlas, a, b)

    def claims(self, topic: str | None = None, status: str | None = None, cursor: str | None = None):
        rows = commands.claims_value(self.opened, topic, status)  # as `atlas claims [TOPIC]`
        return self._page("claims", {"topic": topic, "status": status, "cursor": cursor}, {"claims": rows},
                          [("claims",)])

    def flow(self, name: str):
        return commands.flow_value(self.opened, name)

    def timeline(self, term: str | None = None, repo: str | None = None, as_of: str | None = None,
                 cursor: str | None = None):
        as_of = _check_date(as_of, "as_of")
        value = queries.timeline(self.atlas, term or None, (repo,) if repo else (), as_of)
        return self._page("timeline", {"term": term, "repo": repo, "as_of": as_of, "cursor": cursor}, value,
                          [("sightings",), ("not_found",), ("unknown",)])

    def sparql(self, query: str, cursor: str | None = None):
        arguments = {"query": query, "cursor": cursor}
        value = self._sparql_json(query)
        if "results" in value:
            return self._page("sparql", arguments, value, [("results", "bindings")])
        if "@graph" in value:
            return self._page("sparql", arguments, value, [("@graph",)])
        paging.cursor_offset(cursor, paging.call_digest("sparql", arguments, self.opened.key))
        return value  # ASK: one boolean, never paged

    def _sparql_json(self, query: str) -> dict:
        """What `atlas query --sparql Q --format json` prints: results JSON, or JSON-LD."""
        from . import sparql

        sparql.guard(query)  # SPARQL Update and SERVICE are refused
        result = sparql.run_embedded(query, self.opened.triples)
        return json.loads(sparql.render(result, "json"))

    # Markdown, for resources and the prompt
    def concept_markdown(self, ident: str) -> str:
        c = self.atlas.concept_by_id.get(ident)
        if c is None:
            raise AtlasError(f'no concept "{ident}"', Location(f"atlas://concept/{ident}"))
        return markdown.card(views.card(self.atlas, c), views.question_names(self.atlas))

    def claim_markdown(self, ident: str) -> str:
        cl = self.atlas.claim_by_id.get(ident)
        if cl is None:
            raise AtlasError(f'no claim "{ident}"', Location(f"atlas://claim/{ident}"))
        return markdown.claim(views.claim(self.atlas, cl))

    def flow_markdown(self, ident: str) -> str:
        return markdown.flow(queries.flow(self.atlas, ident))

    def claim_group_markdown(self, status: str) -> str:
        """Every claim with one status, as one Markdown document."""
        rows = queries.claims(self.atlas, None, status)
        head = f"# Claims with status {status}\n\n{len(rows)} claim(s), by id.\n"
        return head + "".join("\n" + _demoted(markdown.claim(cl)) for cl in sorted(rows, key=lambda r: r["id"]))

    def claim_groups(self) -> dict[str, int]:
        """The claim statuses in use, with how many claims each has."""
        from .model import CLAIM_STATUSES

        counts = {s: sum(1 for cl in self.atlas.claims if cl.status == s) for s in CLAIM_STATUSES}
        return {s: n for s, n in counts.items() if n}

    def document(self, name: str) -> str:
        """README.md or docs/schema.md: of the checkout or source tree, else (the README) the one
        installed with the package's metadata."""
        found = document_path(name, self.data_dir)
        if found is not None:
            return found.read_text(encoding="utf-8")
        if name == "README.md":
            from importlib.metadata import PackageNotFoundError, metadata

            try:
                text = metadata("ascend-atlas").get_payload()  # type: ignore[attr-defined]
            except PackageNotFoundError:
                text = None
            if text:
                return str(text)
        raise AtlasError(f"{name} is not installed with this copy of the atlas", Location(name))


def document_path(name: str, data_dir=None) -> Path | None:
    """`name` beside the data folder in use (a checkout), or in the source tree of the package."""
    from .paths import PACKAGE_DIR, data_dir as resolve_data_dir

    for root in (resolve_data_dir(data_dir).parent, PACKAGE_DIR.parent):
        if (root / name).is_file() and (root / "data" / "atlas.yaml").is_file():
            return root / name
    return None


def error_text(exc: AtlasError) -> str:
    """The message the command line prints for the same failure, suggestions included."""
    text = f"Error: {exc.message}"
    if exc.hint:
        text += f"\n    hint: {exc.hint}"
    rows = exc.rows if isinstance(exc, NoMatch) else None
    if rows:
        text += "\nclosest: " + ", ".join(r["id"] for r in rows)
    return text


# ---------------------------------------------------------------------------------------------
# The MCP server (the SDK is imported only from here on)
# ---------------------------------------------------------------------------------------------

TITLES = {
    "search": "Search the atlas", "card": "Concept card", "compare": "Compare concepts",
    "related": "Related concepts", "path": "Path between two concepts", "claims": "Claims and their evidence",
    "flow": "Flow as ordered steps", "timeline": "When concepts became visible", "sparql": "Read-only SPARQL query",
}


class _Args:
    """Annotated parameter types the SDK turns into input schemas with descriptions."""

    def __init__(self):
        from typing import Annotated, Literal

        from pydantic import Field

        self.Annotated, self.Field = Annotated, Field
        self.term = Annotated[str, Field(description="A concept id, an English or Chinese name or alias "
                                                     "(e.g. hccs, 直驱, 'AIV direct drive').")]
        self.lang = Annotated[Literal["en", "zh", "all"],
                              Field(description="en, zh or all (default): which language's text to keep in "
                                                "bilingual fields.")]
        self.as_of = Annotated[str | None, Field(description="YYYY-MM-DD: mark whether the concept was "
                                                             "already visible in a public repository then.")]
        self.cursor = Annotated[str | None, Field(description="page.next_cursor of the page before, with the "
                                                              "same other arguments; omit for the first page.")]

    def text(self, description: str, optional: bool = False):
        kind = str | None if optional else str
        return self.Annotated[kind, self.Field(description=description)]


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
    call, a = _Caller(), _Args()
    functions = {**_lookup_tools(tools, call, a), **_more_tools(tools, call, a)}
    server = MCPServer(name="ascend-atlas", title="Ascend communication atlas", instructions=INSTRUCTIONS,
                       version=release, tools=[_tool(name, fn) for name, fn in functions.items()],
                       resources=_resources(tools))
    _templates_and_prompt(server, tools, a)
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


def _lookup_tools(tools: AtlasTools, call: _Caller, args: _Args) -> dict:
    Annotated, Field = args.Annotated, args.Field

    async def search(text: args.text("Words in English or Chinese, e.g. 'collective communication' or 单点通信."),
                     lang: args.lang = "all",
                     limit: Annotated[int, Field(description="At most this many hits (1-100).")] = 10,
                     cursor: args.cursor = None):
        """Ranked search over the atlas. Use it first when the user's words are not an exact id.
        Answers in pages (page.next_cursor)."""
        return await call(tools.search, text, lang, limit, cursor)

    async def card(term: args.term, lang: args.lang = "all", as_of: args.as_of = None):
        """A concept's full card: answers to the six questions, beginner and professional
        explanations, relations, claims, flows, evidence pins with confidence, and history."""
        return await call(tools.card, term, lang, as_of)

    async def compare(terms: Annotated[list[str], Field(description="Two or more concept ids or names.")]):
        """Concepts side by side: kind, each question's answer, hardware, lifecycle, first visible."""
        return await call(tools.compare, terms)

    async def related(term: args.term,
                      relation: args.text("Only this relation type, from either side (uses, used-by, carries ...).",
                                          optional=True) = None,
                      depth: Annotated[int, Field(description="Hops to follow, 1-10.")] = 1):
        """Concepts related to a concept, in both directions."""
        return await call(tools.related, term, relation, depth)

    async def path(a: Annotated[str, Field(description="The concept to start from.")],
                   b: Annotated[str, Field(description="The concept to reach.")]):
        """The shortest typed chain of relations between two concepts."""
        return await call(tools.path, a, b)

    return {"search": search, "card": card, "compare": compare, "related": related, "path": path}


def _more_tools(tools: AtlasTools, call: _Caller, a: _Args) -> dict:
    async def claims(topic: a.text("A concept, or words, the claims are about (omit for all claims).",
                                   optional=True) = None,
                     status: a.text("Only claims with this status (confirmed, refuted, open, hypothesis ...).",
                                    optional=True) = None,
                     cursor: a.cursor = None):
        """The seed's conclusions as claims, each with a status and its evidence; with a topic,
        ranked. Answers in pages (page.next_cursor)."""
        return await call(tools.claims, topic, status, cursor)

    async def flow(name: a.text("A flow id, title or unique prefix (atlas flow lists them).")):
        """An execution path as ordered steps, each with its actor, concepts and source pin."""
        return await call(tools.flow, name)

    async def timeline(term: a.text("Only this concept or probe value.", optional=True) = None,
                       repo: a.text("Only this repository, owner/name.", optional=True) = None,
                       as_of: a.as_of = None, cursor: a.cursor = None):
        """When each concept first became visible in a public repository (UTC day of the
        committer date; full timestamps kept), oldest first, then the probes not found. Answers
        in pages (page.next_cursor)."""
        return await call(tools.timeline, term, repo, as_of, cursor)

    async def sparql(query: a.text("A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); "
                                   "prefixes atlas: concept: question: claim: flow: repo: skos: prov: "
                                   "dcterms: doap: are predeclared."),
                     cursor: a.cursor = None):
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


def _templates_and_prompt(server, tools: AtlasTools, a: _Args) -> None:
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
    def explain(term: a.text("The concept to explain.")) -> str:
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
