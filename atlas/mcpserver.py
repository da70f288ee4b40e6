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
through `atlas.mcpsdk` (the optional `mcp` extra and pydantic are imported there and in
`atlas.mcpstdio` only), with the output schemas of `atlas.mcpshapes`.
"""

import json
from pathlib import Path

from . import commands, markdown, paging, queries, views
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
        from .ask import understood

        value, _reading = understood(self.opened, text, limit, cards=False)  # `atlas query WORDS --format json`
        return self._page("search", {"text": text, "lang": lang, "limit": limit, "cursor": cursor},
                          _lang_only(value, lang), [("hits",)])

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

        sparql.guard(query)  # SPARQL Update, SERVICE and over-long or over-deep queries are refused
        rendered = commands.sparql_embedded(query, "json", open_store=self.opened.sparql_store)
        return json.loads(rendered.text)  # as `--format json`: results JSON, or JSON-LD

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
# The MCP server: the SDK's side lives in atlas/mcpsdk.py, imported only when a server is built
# ---------------------------------------------------------------------------------------------


def build_server(data_dir=None):
    """The MCP server object (needs the `mcp` extra)."""
    from .mcpsdk import build_server as build

    return build(data_dir)


def serve(data_dir=None) -> None:
    from .mcpsdk import serve as run

    run(data_dir)
