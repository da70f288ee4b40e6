"""`atlas serve --mcp`: the atlas as a Model Context Protocol server over stdio.

Coding assistants call its tools for search, cards, comparisons, relations, paths, claims, flows,
the timeline and read-only SPARQL. Every tool returns the same JSON as the command line's
`--format json` (docs/json.md), evidence pins and their confidence included; a bad input gives an
error result carrying the command line's message. The server reads data/ and the cache, writes
nothing into data/, and never reaches the network (SPARQL SERVICE is refused).

`AtlasTools` holds the tool logic and knows nothing of MCP; `build_server` wires it into the SDK
(the optional `mcp` extra), which is imported only here.
"""

from . import commands, markdown, queries, views
from .errors import AtlasError, Location, NoMatch
from .output import to_json
from .text import day, not_a_day

INSTRUCTIONS = (
    "The Ascend communication atlas: a curated bilingual (English/中文) knowledge graph of how data "
    "moves between Huawei Ascend NPUs (HCCL, HCOMM, HiXL, SHMEM, MemFabric, HCCS, UB/URMA, "
    "SDMA/UDMA/MTE, WQE/SQ/CQ/doorbell, AIV direct drive, Mooncake's Ascend flags, DeepEP ...). "
    "Each concept answers some of six questions: who organises the communication, who establishes "
    "the addresses, who submits the tasks, who moves the data, which physical link the data takes, "
    "whether the peer participates. Start with `search`, then `card`; cite the evidence pins "
    "(owner/repo@sha:path#La-Lb) and their confidence, and respect claim statuses.")


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


class AtlasTools:
    """The tools, as plain functions returning the library's values (no MCP here)."""

    def __init__(self, data_dir=None):
        self.data_dir = data_dir
        self._opened = None

    @property
    def opened(self):
        """The atlas, opened once (as `atlas query` reads it from the cache)."""
        if self._opened is None:
            from .opened import Opened

            self._opened = Opened(self.data_dir)
        return self._opened

    @property
    def atlas(self):
        return self.opened.atlas

    @property
    def index(self):
        return self.opened.index

    def concept(self, term: str):
        return self.opened.concept(term)

    def search(self, text: str, lang: str = "all", limit: int = 10):
        _check_lang(lang)
        if not text.strip():
            raise AtlasError("give some words to search for", Location("text"))
        if not 1 <= limit <= 100:
            raise AtlasError(f"limit {limit} is out of range", Location("limit"), "use 1 to 100")
        hits = self.index.search(text, limit=limit)  # the ranked list of `atlas query WORDS`
        return _lang_only({"query": text, "hits": hits}, lang)

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

    def claims(self, topic: str | None = None, status: str | None = None):
        return commands.claims_value(self.opened, topic, status)  # as `atlas claims [TOPIC]`

    def flow(self, name: str):
        return commands.flow_value(self.opened, name)

    def timeline(self, term: str | None = None, repo: str | None = None, as_of: str | None = None):
        as_of = _check_date(as_of, "as_of")
        return queries.timeline(self.atlas, term or None, (repo,) if repo else (), as_of)

    def sparql(self, query: str):
        from . import sparql

        sparql.guard(query)  # SPARQL Update and SERVICE are refused
        result = sparql.run_embedded(query, self.opened.triples)
        import json

        return json.loads(sparql.render(result, "json"))  # as `--format json`: results JSON, or JSON-LD

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


def error_text(exc: AtlasError) -> str:
    """The message the command line prints for the same failure, suggestions included."""
    text = f"Error: {exc.message}"
    if exc.hint:
        text += f"\n    hint: {exc.hint}"
    rows = exc.rows if isinstance(exc, NoMatch) else None
    if rows:
        text += "\nclosest: " + ", ".join(r["id"] for r in rows)
    return text


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

    def text(self, description: str, optional: bool = False):
        kind = str | None if optional else str
        return self.Annotated[kind, self.Field(description=description)]


def build_server(data_dir=None):
    """The MCP server object (needs the `mcp` extra)."""
    from importlib.metadata import PackageNotFoundError, version

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        release = version("ascend-atlas")
    except PackageNotFoundError:  # run from a source tree that is not installed
        release = "0"
    import threading

    tools = AtlasTools(data_dir)
    one_at_a_time = threading.Lock()  # the SDK runs tools in worker threads; the atlas and index are shared
    server = MCPServer(name="ascend-atlas", title="Ascend communication atlas",
                       instructions=INSTRUCTIONS, version=release)

    def call(fn, *args):
        try:
            with one_at_a_time:
                return to_json(fn(*args))
        except AtlasError as exc:
            raise ToolError(error_text(exc)) from None

    a = _Args()
    _lookup_tools(server, tools, call, a)
    _more_tools(server, tools, call, a)
    _resources_and_prompt(server, tools, a, one_at_a_time)
    return server


def _lookup_tools(server, tools: AtlasTools, call, args: _Args) -> None:
    Annotated, Field = args.Annotated, args.Field

    @server.tool(structured_output=False)
    def search(text: args.text("Words in English or Chinese, e.g. 'collective communication' or 单点通信."),
               lang: args.lang = "all",
               limit: Annotated[int, Field(description="At most this many hits (1-100).")] = 10) -> str:
        """Ranked search over the atlas. Use it first when the user's words are not an exact id."""
        return call(tools.search, text, lang, limit)

    @server.tool(structured_output=False)
    def card(term: args.term, lang: args.lang = "all", as_of: args.as_of = None) -> str:
        """A concept's full card: answers to the six questions, beginner and professional
        explanations, relations, claims, flows, evidence pins with confidence, and history."""
        return call(tools.card, term, lang, as_of)

    @server.tool(structured_output=False)
    def compare(terms: Annotated[list[str], Field(description="Two or more concept ids or names.")]) -> str:
        """Concepts side by side: kind, each question's answer, hardware, lifecycle, first visible."""
        return call(tools.compare, terms)

    @server.tool(structured_output=False)
    def related(term: args.term,
                relation: args.text("Only this relation type, from either side (uses, used-by, carries ...).",
                                 optional=True) = None,
                depth: Annotated[int, Field(description="Hops to follow, 1-10.")] = 1) -> str:
        """Concepts related to a concept, in both directions."""
        return call(tools.related, term, relation, depth)

    @server.tool(structured_output=False)
    def path(a: Annotated[str, Field(description="The concept to start from.")],
             b: Annotated[str, Field(description="The concept to reach.")]) -> str:
        """The shortest typed chain of relations between two concepts."""
        return call(tools.path, a, b)


def _more_tools(server, tools: AtlasTools, call, a: _Args) -> None:
    @server.tool(structured_output=False)
    def claims(topic: a.text("A concept, or words, the claims are about (omit for all claims).",
                             optional=True) = None,
               status: a.text("Only claims with this status (confirmed, refuted, open, hypothesis ...).",
                              optional=True) = None) -> str:
        """The seed's conclusions as claims, each with a status and its evidence."""
        return call(tools.claims, topic, status)

    @server.tool(structured_output=False)
    def flow(name: a.text("A flow id, title or unique prefix (atlas flow lists them).")) -> str:
        """An execution path as ordered steps, each with its actor, concepts and source pin."""
        return call(tools.flow, name)

    @server.tool(structured_output=False)
    def timeline(term: a.text("Only this concept or probe value.", optional=True) = None,
                 repo: a.text("Only this repository, owner/name.", optional=True) = None,
                 as_of: a.as_of = None) -> str:
        """When each concept first became visible in a public repository (UTC day of the
        committer date; full timestamps kept), oldest first."""
        return call(tools.timeline, term, repo, as_of)

    @server.tool(structured_output=False)
    def sparql(query: a.text("A read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE); "
                             "prefixes atlas: concept: question: claim: flow: repo: skos: prov: "
                             "dcterms: doap: are predeclared.")) -> str:
        """Run a read-only SPARQL query over the atlas's RDF; updates and SERVICE are refused."""
        return call(tools.sparql, query)


def _resources_and_prompt(server, tools: AtlasTools, a: _Args, one_at_a_time) -> None:
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    def resource(fn, ident):
        try:
            with one_at_a_time:
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
            with one_at_a_time:
                text = tools.concept_markdown(tools.concept(term).id)
        except AtlasError as exc:  # a protocol error the SDK passes on with its message
            raise MCPError(INVALID_PARAMS, error_text(exc)) from None
        return ("Explain the following concept from the Ascend communication atlas. Answer only "
                "from this card. Say which of the six questions it answers, give the beginner "
                "explanation first and the professional one after, and cite each fact with its "
                "evidence pin (owner/repo@sha:path#L...) and confidence; say so where the card "
                "has no evidence.\n\n" + text)


def serve(data_dir=None) -> None:
    build_server(data_dir).run("stdio")
