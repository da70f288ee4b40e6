"""`atlas serve --mcp`: the atlas as a Model Context Protocol server over stdio.

Coding assistants call its tools for search, cards, comparisons, relations, paths, claims, flows,
the timeline, read-only SPARQL and `fetch` (any record or document as Markdown, by offset). Every
tool answers with structured content that its declared `outputSchema` describes (the command line's
`--format json`, docs/json.md, evidence pins and their confidence included) and with the same
answer as a Markdown outline for the model to read (not the JSON a second time). No message is over
20,000 bytes: cards and flows come in sections (summary first), the long lists in pages whose cursor
continues from the stored answer (`atlas.mcp.paging`), and the Markdown resources in pages
(`?page=N`). An argument a tool does not take, or a bad value, gives an error result carrying the
command line's message. The server reads data/ and the cache, writes nothing into data/, and never
reaches the network (SPARQL SERVICE is refused).

Calls run at once, in two small pools of worker threads: SPARQL queries in one (each evaluates in a
child process under the time limit), every other tool in the other, so a slow query never holds up
a search; the opened atlas gives each thread a search index of its own. Every line the client sends
is checked first (`atlas.mcp.jsonrpc`): a malformed message that the SDK would drop unanswered gets a
JSON-RPC error reply.

`AtlasTools` holds the tool logic and knows nothing of MCP; `build_server` wires it into the SDK
through `atlas.mcp.sdk` (the optional `mcp` extra and pydantic are imported there and in
`atlas.mcp.stdio` only), with the output schemas of `atlas.mcp.schemas`.
"""

import json
import re
from pathlib import Path

from .. import commands
from . import markdown, paging
from ..view import queries, views
from ..errors import AtlasError, Location, NoMatch
from ..text import day, not_a_day

INSTRUCTIONS = (
    "The Ascend communication atlas: a curated bilingual (English/中文) knowledge graph of how data "
    "moves between Huawei Ascend NPUs (HCCL, HCOMM, HiXL, SHMEM, MemFabric, HCCS, UB/URMA, "
    "SDMA/UDMA/MTE, WQE/SQ/CQ/doorbell, AIV direct drive, Mooncake's Ascend flags, DeepEP ...). "
    "Each concept answers some of six questions: who organises the communication, who establishes "
    "the addresses, who submits the tasks, who moves the data, which physical link the data takes, "
    "whether the peer participates. Start with `search`, then `card`; cite the evidence pins "
    "(owner/repo@sha:path#La-Lb) and their confidence, and respect claim statuses. A card comes "
    "in sections: the summary first, then `section` evidence, claims, relations or history; a flow "
    "likewise (summary, steps, edges). Search hits carry a `uri`: `fetch` reads it as Markdown, "
    "from `offset`, at most `max_length` characters. Long answers come in pages: while "
    "`page.next_cursor` is not null, call again with the same arguments and `cursor` set to it.")

# A card's and a flow's sections: the fields each holds, and the lists in it that come in pages
CARD_SECTIONS: dict[str, tuple[str, ...]] = {
    "summary": ("id", "kind", "names", "aliases", "answers", "beginner", "professional", "hardware", "hardware_note",
                "lifecycle", "first_visible", "undated", "defined_at", "as_of"),
    "evidence": ("evidence",),
    "claims": ("claims",),
    "relations": ("relations", "flows", "labels"),
    "history": ("history", "repositories", "api"),
}
CARD_LISTS = {"evidence": ("evidence",), "claims": ("claims",), "relations": ("relations", "flows"),
              "history": ("history", "repositories", "api")}
FLOW_SECTIONS: dict[str, tuple[str, ...]] = {
    "summary": ("id", "title", "summary", "evidence", "choices", "labels"),
    "steps": ("steps",),
    "edges": ("edges",),
    "layout": ("layout",),
}
FLOW_LISTS = {"summary": ("evidence",), "steps": ("steps",), "edges": ("edges",), "layout": ("layout",)}
FETCH_BYTES = 16_000  # the most UTF-8 bytes of Markdown one `fetch` returns
RESOURCE_URI = re.compile(r"atlas://(concept|claim|flow|claims|docs|repo)/([^?#]+)\Z")

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
    take the `cursor` of the page before and return one page; the whole answer of a call is kept
    (`paging.Store`), so the next page is cut from it without computing it again."""

    def __init__(self, data_dir=None):
        import threading

        self.data_dir = data_dir
        self._opened = None
        self._opening = threading.Lock()  # the tools run in worker threads
        self.store = paging.Store(16)

    @property
    def opened(self):
        """The atlas, opened once (as `atlas query` reads it from the cache)."""
        with self._opening:
            if self._opened is None:
                from ..opened import Opened

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

    def _page(self, tool: str, arguments: dict, compute, lists) -> dict:
        """One page of the answer `compute()` gives (stored for the cursors that continue it);
        `lists(value)` names the lists that are paged."""
        call = paging.call_digest(tool, arguments, self.opened.key)
        offset = paging.cursor_offset(arguments.get("cursor"), call)
        value = self.store.get(call, compute)
        return paging.page(value, lists(value), offset, call, wire, item_bytes=item_bytes)

    def search(self, text: str, lang: str = "all", limit: int = 10, cursor: str | None = None):
        _check_lang(lang)
        if not text.strip():
            raise AtlasError("give some words to search for", Location("text"))
        if not 1 <= limit <= 100:
            raise AtlasError(f"limit {limit} is out of range", Location("limit"), "use 1 to 100")

        def compute():
            from ..ask.answer import understood

            value, _reading = understood(self.opened, text, limit, cards=False)  # `atlas query WORDS --format json`
            value = _lang_only(value, lang)
            value["hits"] = [{**hit, "uri": hit_uri(hit)} for hit in value["hits"]]
            return value

        return self._page("search", {"text": text, "lang": lang, "limit": limit, "cursor": cursor}, compute,
                          lambda v: [("hits",)])

    def card(self, term: str, lang: str = "all", as_of: str | None = None, section: str = "summary",
             cursor: str | None = None):
        """One section of a concept's card (the summary first), its lists in pages."""
        _check_lang(lang)
        as_of = _check_date(as_of, "as_of")
        _section(CARD_SECTIONS, section)
        c = self.concept(term)

        def compute():
            whole = _lang_only(views.card(self.atlas, c, as_of), lang)
            return {"id": c.id, "section": section, "sections": list(CARD_SECTIONS),
                    "card": {k: whole[k] for k in _fields(CARD_SECTIONS, section, whole)}}

        arguments = {"term": c.id, "lang": lang, "as_of": as_of, "section": section, "cursor": cursor}
        return self._page("card", arguments, compute, lambda v: [("card", k) for k in CARD_LISTS.get(section, ())])

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
        return self._page("claims", {"topic": topic, "status": status, "cursor": cursor},
                          lambda: {"claims": commands.claims_value(self.opened, topic, status)},  # `atlas claims`
                          lambda v: [("claims",)])

    def flow(self, name: str, section: str = "summary", cursor: str | None = None):
        """One section of a flow (the summary first), its lists in pages."""
        _section(FLOW_SECTIONS, section)
        whole = commands.flow_value(self.opened, name)

        def compute():
            return {"id": whole["id"], "section": section, "sections": list(FLOW_SECTIONS),
                    "flow": {k: whole[k] for k in _fields(FLOW_SECTIONS, section, whole)}}

        return self._page("flow", {"name": whole["id"], "section": section, "cursor": cursor}, compute,
                          lambda v: [("flow", k) for k in FLOW_LISTS[section]])

    def timeline(self, term: str | None = None, repo: str | None = None, as_of: str | None = None,
                 cursor: str | None = None):
        as_of = _check_date(as_of, "as_of")
        return self._page("timeline", {"term": term, "repo": repo, "as_of": as_of, "cursor": cursor},
                          lambda: queries.timeline(self.atlas, term or None, (repo,) if repo else (), as_of),
                          lambda v: [("sightings",), ("not_found",), ("unknown",)])

    def sparql(self, query: str, cursor: str | None = None):
        def lists(value):
            if "results" in value:
                return [("results", "bindings")]
            return [("@graph",)]

        arguments = {"query": query, "cursor": cursor}
        from ..linked import sparql

        sparql.guard(query)  # SPARQL Update, SERVICE and over-long or over-deep queries are refused
        call = paging.call_digest("sparql", arguments, self.opened.key)
        value = self.store.get(call, lambda: self._sparql_json(query))
        if "results" not in value and "@graph" not in value:
            paging.cursor_offset(cursor, call)
            return value  # ASK: one boolean, never paged
        return self._page("sparql", arguments, lambda: value, lists)

    def _sparql_json(self, query: str) -> dict:
        """What `atlas query --sparql Q --format json` prints: results JSON, or JSON-LD."""
        rendered = commands.sparql_embedded(query, "json", open_store=self.opened.sparql_store)
        return json.loads(rendered.text)  # as `--format json`: results JSON, or JSON-LD

    def fetch(self, uri: str, offset: int = 0, max_length: int = 8_000) -> tuple[str, dict]:
        """The Markdown of a record or document (`uri`, as search hits and resources give it) from
        character `offset`, at most `max_length` characters and FETCH_BYTES bytes: the text, and
        where it sits ({uri, offset, length, total, next_offset})."""
        if offset < 0:
            raise AtlasError(f"offset {offset} is out of range", Location("offset"), "use 0 or more")
        if not 1 <= max_length <= 20_000:
            raise AtlasError(f"max_length {max_length} is out of range", Location("max_length"), "use 1 to 20000")
        text = self.markdown(uri)
        if offset > len(text):
            raise AtlasError(f"offset {offset} is past the end ({len(text)} characters)", Location("offset"))
        part = text[offset:offset + max_length]
        if len(part.encode()) > FETCH_BYTES:
            part = part.encode()[:FETCH_BYTES].decode("utf-8", "ignore")
        end = offset + len(part)
        where = {"uri": uri, "offset": offset, "length": len(part), "total": len(text),
                 "next_offset": end if end < len(text) else None}
        if end < len(text):
            part += f"\n\n[{len(text) - end} more characters: fetch again with offset {end}]\n"
        return part, where

    # Markdown, for resources, `fetch` and the prompt
    def markdown(self, uri: str) -> str:
        """The Markdown a resource URI names (without `?page`)."""
        m = RESOURCE_URI.match(uri)
        if m is None:
            raise AtlasError(f'"{uri[:80]}" is not a URI of the atlas', Location("uri"),
                             "give a uri from a search hit or a resource: atlas://concept/ID, atlas://claim/ID, "
                             "atlas://flow/ID, atlas://claims/STATUS, atlas://repo/OWNER/NAME, atlas://docs/NAME")
        kind, ident = m.groups()
        read = {"concept": self.concept_markdown, "claim": self.claim_markdown, "flow": self.flow_markdown,
                "claims": self.claim_group_markdown, "repo": self.repo_markdown, "docs": self.document}[kind]
        return read(ident)

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

    def repo_markdown(self, ident: str) -> str:
        r = self.atlas.repo_by_id.get(ident)
        if r is None:
            raise AtlasError(f'no repository "{ident}"', Location(f"atlas://repo/{ident}"))
        return f"# Repository `{r.id}`\n\n" + markdown.outline(views.repo(self.atlas, r))

    def claim_group_markdown(self, status: str) -> str:
        """Every claim with one status, as one Markdown document."""
        if status not in self.claim_groups():
            raise AtlasError(f'no claims with status "{status}"', Location(f"atlas://claims/{status}"),
                             "use one of " + ", ".join(self.claim_groups()))
        rows = queries.claims(self.atlas, None, status)
        head = f"# Claims with status {status}\n\n{len(rows)} claim(s), by id.\n"
        return head + "".join("\n" + _demoted(markdown.claim(cl)) for cl in sorted(rows, key=lambda r: r["id"]))

    def claim_groups(self) -> dict[str, int]:
        """The claim statuses in use, with how many claims each has."""
        from ..model.core import CLAIM_STATUSES

        counts = {s: sum(1 for cl in self.atlas.claims if cl.status == s) for s in CLAIM_STATUSES}
        return {s: n for s, n in counts.items() if n}

    def document(self, name: str) -> str:
        """A document by its resource name: `readme` (README.md) or a page of docs/ (`schema` is
        docs/schema.md): of the checkout or source tree, else (the README) the one installed with
        the package's metadata."""
        found = document_path(document_file(name), self.data_dir)
        if found is not None:
            return found.read_text(encoding="utf-8")
        if name == "readme":
            from importlib.metadata import PackageNotFoundError, metadata

            try:
                text = metadata("ascend-atlas").get_payload()  # type: ignore[attr-defined]
            except PackageNotFoundError:
                text = None
            if text:
                return str(text)
        raise AtlasError(f"{document_file(name)} is not installed with this copy of the atlas",
                         Location(f"atlas://docs/{name}"))

    def documents(self) -> list[str]:
        """The documents' resource names: readme, then the pages of docs/ by name."""
        root = document_path("README.md", self.data_dir)
        pages = sorted(p.stem for p in (root.parent / "docs").glob("*.md")) if root else []
        return ["readme", *(p for p in pages if re.fullmatch(r"[a-z0-9][a-z0-9-]*", p))]

    def page_of(self, uri: str, page: str | None) -> str:
        """Page `page` (1 when None) of the Markdown at `uri`; a page that another follows ends with
        a comment naming the next one's URI."""
        pages = paging.text_pages(self.markdown(uri))
        n = int(page) if page and page.isdigit() else 0 if page else 1
        if not 1 <= n <= len(pages):
            raise AtlasError(f'no page "{page}" of {uri}', Location(f"{uri}?page={page}"),
                             f"pages 1 to {len(pages)}")
        if n == len(pages):
            return pages[n - 1]
        return pages[n - 1] + f"\n<!-- page {n} of {len(pages)}; the next: {uri}?page={n + 1} -->\n"


def document_file(name: str) -> str:
    """The file a document's resource name stands for."""
    if name == "readme":
        return "README.md"
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise AtlasError(f'no document "{name[:60]}"', Location(f"atlas://docs/{name[:60]}"))
    return f"docs/{name}.md"


def hit_uri(hit: dict) -> str:
    """The resource URI of a search hit (concept, claim, flow or repository)."""
    return f"atlas://{hit['type']}/{hit['id']}"


def _section(sections: dict[str, tuple[str, ...]], section: str) -> tuple[str, ...]:
    if section not in sections:
        raise AtlasError(f'no section "{section}"', Location("section"), "use " + ", ".join(sections))
    return sections[section]


def _fields(sections: dict[str, tuple[str, ...]], section: str, whole: dict) -> list[str]:
    """The fields of `whole` in `section`: the summary holds every field no other section names, so a
    field added to a view reaches this face without a change here."""
    if section != "summary":
        return [k for k in sections[section] if k in whole]
    others = {k for name, keys in sections.items() if name != "summary" for k in keys}
    return [k for k in whole if k not in others]


CUT_NOTE = ("- … (the outline stops here so that the message stays under 20,000 bytes; the structured content "
            "holds the whole answer)\n")


def answer_text(value) -> str:
    """The text content of an answer: its Markdown outline, cut at a line where the outline and the
    structured content together would pass the page budget (one item can be larger than half of it)."""
    text = markdown.outline(value)
    room = paging.PAGE_BYTES - len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if len(json.dumps(text, ensure_ascii=False).encode()) <= room:
        return text
    kept, used = [], len(json.dumps(CUT_NOTE, ensure_ascii=False).encode())
    for line in text.splitlines(keepends=True):
        used += len(json.dumps(line, ensure_ascii=False).encode()) - 2
        if used > room:
            break
        kept.append(line)
    return "".join(kept) + CUT_NOTE


def wire(value) -> str:
    """What a tool's answer puts on the wire (near enough to measure it): the text content
    (`answer_text`) and the value as structured content."""
    return json.dumps({"content": [{"type": "text", "text": answer_text(value)}], "structuredContent": value},
                      ensure_ascii=False, separators=(",", ":"))


def item_bytes(item, depth: int) -> int:
    """What one paged item adds to `wire`: its compact JSON and its outline (indented, escaped)."""
    text = markdown.outline(item)
    return (len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()) + len(text.encode())
            + (text.count("\n") + 1) * (2 * depth + 2) + 2)


def document_path(name: str, data_dir=None) -> Path | None:
    """`name` beside the data folder in use (a checkout), or in the source tree of the package."""
    from ..paths import PACKAGE_DIR, data_dir as resolve_data_dir

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
# The MCP server: the SDK's side lives in atlas/mcp/sdk.py, imported only when a server is built
# ---------------------------------------------------------------------------------------------


