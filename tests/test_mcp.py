"""`atlas serve --mcp` as a real subprocess, driven by the MCP SDK's own stdio client.

One session runs a scenario (every tool with good and with bad input, every page of the paged
tools, resources, the prompt) and the tests check what it recorded. The SDK's client checks each
answer's structured content against the tool's declared `outputSchema` as it receives it (and
raises when one does not conform); the tests check it again with every object closed
(`additionalProperties: false`), so a field an answer carries but its schema does not declare fails
too. The server gets a copy of the bundled data, which must come out unchanged, and a SERVICE query
aimed at a real listener on 127.0.0.1 that must receive nothing. A second server answers a search
while six slow SPARQL queries run.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from atlas.mcp.markdown import outline
from atlas.mcp.tools import CUT_NOTE
from conftest import DATA

TOOLS = {"search", "card", "compare", "related", "path", "claims", "flow", "timeline", "sparql", "fetch"}
PAGED = {"search", "card", "claims", "flow", "timeline", "sparql"}
PAGE_LIMIT = 20_000  # bytes of one message

GOOD = {
    "search": {"text": "direct drive"},
    "card": {"term": "直驱"},
    "compare": {"terms": ["hccl", "hixl", "ascend-shmem"]},
    "related": {"term": "hccs", "depth": 1},
    "path": {"a": "use-ubshmem", "b": "ascend-shmem"},
    "claims": {"topic": "use-ubshmem"},
    "flow": {"name": "minimal-shmem-link"},
    "timeline": {"repo": "kvcache-ai/Mooncake"},
    "sparql": {"query": "SELECT ?c WHERE { ?c atlas:answersQuestion question:link } LIMIT 3"},
    "fetch": {"uri": "atlas://concept/hccs", "max_length": 500},
}
BAD = {
    "search": {"text": "   "},
    "card": {"term": "no-such-concept-zz"},
    "compare": {"terms": ["hccl"]},
    "related": {"term": "hccs", "relation": "no-such-relation"},
    "path": {"a": "hccs", "b": "no-such-concept-zz"},
    "claims": {"status": "no-such-status"},
    "flow": {"name": "no-such-flow"},
    "timeline": {"as_of": "2026-13-45"},
    "sparql": {"query": "DELETE WHERE { ?s ?p ?o }"},
    "fetch": {"uri": "https://example.org/hccs"},
}
# arguments a tool does not take, or values its input schema refuses
UNKNOWN = [("card", {"term": "hccs", "extra": 1}), ("search", {"text": "hccs", "cursor": None, "lang": "fr"}),
           ("fetch", {"uri": "atlas://concept/hccs", "start_index": 10}), ("card", {"term": "hccs", "section": "x"})]
# more answers of other shapes: one language, ASK, CONSTRUCT, an as-of card
MORE = [
    ("card", {"term": "hccs", "lang": "en", "as_of": "2025-01-01"}),
    ("search", {"text": "集合通信", "lang": "zh", "limit": 5}),
    ("sparql", {"query": "ASK { ?s ?p ?o }"}),
    ("sparql", {"query": "CONSTRUCT { ?c atlas:answersQuestion question:link } "
                         "WHERE { ?c atlas:answersQuestion question:link } LIMIT 2"}),
    ("flow", {"name": "token-journey-128p", "section": "steps"}),
    ("card", {"term": "ascend-shmem", "section": "evidence"}),
    ("related", {"term": "hccl", "depth": 3}),
    ("timeline", {"as_of": "2025-06-01"}),
]
# the long answers, walked page by page
# more than one page of bindings (the query runs once: the next pages come from the stored result)
BIG_SELECT = "SELECT ?c ?l WHERE { ?c skos:prefLabel ?l } ORDER BY ?c ?l"
BIG_CONSTRUCT = "CONSTRUCT { ?s ?p ?o } WHERE { ?s a skos:Concept ; ?p ?o }"
WALKS = {
    "claims": {},
    "timeline": {},
    "search": {"text": "hccl", "limit": 100},
    "sparql": {"query": BIG_SELECT},
    "construct": {"query": BIG_CONSTRUCT},
}
# each walk and the command line that gives the whole answer at once
CLI_OF = {
    "claims": ["claims", "--format", "json"],
    "timeline": ["timeline", "--format", "json"],
    "sparql": ["query", "--sparql", BIG_SELECT, "--format", "json"],
    "construct": ["query", "--sparql", BIG_CONSTRUCT, "--format", "json"],
}
ITEMS = {"claims": [("claims",)], "timeline": [("sightings",), ("not_found",), ("unknown",)],
         "search": [("hits",)], "sparql": [("results", "bindings")], "construct": [("@graph",)]}

# each tool call and the command line that must give the same JSON (the paged ones: their items)
SAME_AS_CLI = {
    "search": {"text": "direct drive"},
    "claims": {"topic": "Mooncake"},
    "sparql": {"query": "CONSTRUCT { ?c atlas:answersQuestion question:link } "
                        "WHERE { ?c atlas:answersQuestion question:link } LIMIT 2"},
}
SAME_CLI = {
    "search": ["query", "direct drive", "--format", "json"],
    "claims": ["claims", "Mooncake", "--format", "json"],
    "sparql": ["query", "--sparql", SAME_AS_CLI["sparql"]["query"], "--format", "json"],
}
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


class Listener:
    """A TCP listener on 127.0.0.1 that records whether anybody connected."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self._stop = True
        self.thread.join()
        self.sock.close()


def _params(data: Path, cache: Path) -> StdioServerParameters:
    env = {"ATLAS_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
    return StdioServerParameters(command=sys.executable, args=["-m", "atlas", "serve", "--mcp", "--data", str(data)],
                                 env=env)


def _answer(r) -> dict:
    """What one call returned: error flag, text, structured content, and the text's bytes."""
    text = r.content[0].text
    return {"error": r.is_error, "text": text, "structured": r.structured_content, "bytes": len(text.encode())}


def _message_bytes(result) -> int:
    """The bytes of the JSON-RPC message that carried a result (as the server writes it)."""
    envelope = len('{"jsonrpc":"2.0","id":999,"result":}')
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode()) + envelope


async def _walk(s: ClientSession, name: str, args: dict) -> list[dict]:
    """Every page of a paged call, following next_cursor, each with its message's size and time."""
    pages, cursor = [], None
    while True:
        t0 = time.monotonic()
        r = await s.call_tool(name, {**args, **({"cursor": cursor} if cursor else {})})
        pages.append({**_answer(r), "message": _message_bytes(r), "seconds": time.monotonic() - t0})
        cursor = None if r.is_error else r.structured_content["page"]["next_cursor"]
        if not cursor or len(pages) > 200:
            return pages


async def _every_section(s: ClientSession, out: dict) -> None:
    """Every section and page of every card and flow, every page of every resource, and each
    document read through `fetch`: the size of each message (and the errors)."""
    from atlas.index.compiled import load_atlas
    from atlas.mcp.tools import CARD_SECTIONS, FLOW_SECTIONS

    atlas = load_atlas(out["data"])
    sizes, errors = {}, []
    for tool, ids, sections, key in (("card", [c.id for c in atlas.concepts], CARD_SECTIONS, "term"),
                                     ("flow", [f.id for f in atlas.flows], FLOW_SECTIONS, "name")):
        for ident in ids:
            for section in sections:
                pages = await _walk(s, tool, {key: ident, "section": section})
                errors += [(tool, ident, section) for p in pages if p["error"]]
                sizes[(tool, ident, section)] = max(p["message"] for p in pages)
                out["sections"].setdefault((tool, ident), {})[section] = [p["structured"] for p in pages]
    uris = [f"atlas://concept/{c.id}" for c in atlas.concepts] + [f"atlas://claim/{c.id}" for c in atlas.claims]
    uris += [str(u) for u in out["resources"]] + [f"atlas://repo/{r.id}" for r in atlas.repositories]
    for uri in uris:
        texts, page = [], 1
        while True:
            r = await s.read_resource(uri + (f"?page={page}" if page > 1 else ""))
            sizes[("resource", uri, page)] = _message_bytes(r)
            texts.append(r.contents[0].text)
            if f"the next: {uri}?page={page + 1} -->" not in texts[-1]:
                break
            page += 1
        out["resource_pages"][uri] = texts
    out["sizes"], out["section_errors"] = sizes, errors


async def _fetch_all(s: ClientSession, uri: str, max_length: int) -> list:
    """A document read through `fetch`, `max_length` characters at a time."""
    parts, offset = [], 0
    while offset is not None and len(parts) < 500:
        r = await s.call_tool("fetch", {"uri": uri, "offset": offset, "max_length": max_length})
        parts.append({**_answer(r), "message": _message_bytes(r)})
        offset = None if r.is_error else r.structured_content["next_offset"]
    return parts


async def _lists(s: ClientSession, out: dict) -> None:
    listed = (await s.list_tools()).tools
    out["tools"] = {t.name: t.input_schema for t in listed}
    out["output_schemas"] = {t.name: t.output_schema for t in listed}
    out["titles"] = {t.name: t.title for t in listed}
    out["annotations"] = {t.name: t.annotations for t in listed}
    out["templates"] = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
    out["resources"] = {str(r.uri): r for r in (await s.list_resources()).resources}
    out["read"] = {}
    for uri in out["resources"]:
        out["read"][uri] = (await s.read_resource(uri)).contents[0].text
    out["prompts"] = [p.name for p in (await s.list_prompts()).prompts]


async def _calls(s: ClientSession, out: dict, service_port: int) -> None:
    for name, args in GOOD.items():
        out["good"][name] = _answer(await s.call_tool(name, args))
    for name, args in BAD.items():
        out["bad"][name] = _answer(await s.call_tool(name, args))
    out["unknown"] = [(name, _answer(await s.call_tool(name, args))) for name, args in UNKNOWN]
    out["more"] = [(name, _answer(await s.call_tool(name, args))) for name, args in MORE]
    for walk, args in WALKS.items():
        out["walks"][walk] = await _walk(s, "sparql" if walk == "construct" else walk, args)
    first = out["walks"]["claims"][0]["structured"]["page"]["next_cursor"]
    out["foreign_cursor"] = _answer(await s.call_tool("claims", {"status": "confirmed", "cursor": first}))
    out["forged_cursor"] = _answer(await s.call_tool("timeline", {"cursor": "7.0123456789abcdef"}))
    r = await s.call_tool("sparql", {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:"
                                              f"{service_port}/sparql> {{ ?s ?p ?o }} }}"})
    out["service"] = _answer(r)


async def _resources_and_prompt(s: ClientSession, out: dict) -> None:
    out["concept_md"] = (await s.read_resource("atlas://concept/hccs")).contents[0].text
    claims = out["good"]["claims"]["structured"]["claims"]
    out["claim_id"] = claims[0]["id"]
    out["claim_md"] = (await s.read_resource(f"atlas://claim/{claims[0]['id']}")).contents[0].text
    out["flow_md"] = (await s.read_resource("atlas://flow/minimal-shmem-link")).contents[0].text
    out["fetch_claim"] = (await s.call_tool("fetch", {"uri": f"atlas://claim/{claims[0]['id']}"})).content[0].text
    try:
        await s.read_resource("atlas://concept/no-such-concept-zz")
        out["missing_resource"] = None
    except Exception as exc:  # the SDK raises its protocol error
        out["missing_resource"] = str(exc)
    prompt = await s.get_prompt("explain", {"term": "hccs"})
    out["prompt"] = prompt.messages[0].content.text
    try:
        await s.get_prompt("explain", {"term": "no-such-concept-zz"})
        out["missing_prompt"] = None
    except Exception as exc:  # the SDK raises its protocol error
        out["missing_prompt"] = str(exc)


async def _scenario(data: Path, cache: Path, service_port: int) -> dict:
    out: dict = {"good": {}, "bad": {}, "same": {}, "walks": {}, "concurrent": [], "sections": {},
                 "resource_pages": {}, "data": data, "fetched": {}}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(_params(data, cache), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await _lists(s, out)
                await _calls(s, out, service_port)
                await _resources_and_prompt(s, out)
                await _every_section(s, out)
                for uri, max_length in (("atlas://docs/readme", 20_000), ("atlas://concept/ascend-shmem", 3_000),
                                        ("atlas://flow/full-mesh-dispatch-path", 20_000)):
                    out["fetched"][uri] = await _fetch_all(s, uri, max_length)

                async def one(name, args):  # the SDK runs tools in worker threads, here at once
                    r = await s.call_tool(name, args)
                    out["concurrent"].append((name, r.is_error, r.content[0].text[:200]))

                async with anyio.create_task_group() as tg:
                    for _ in range(4):
                        for name in ("search", "claims", "card", "sparql"):
                            tg.start_soon(one, name, {**GOOD, "claims": {"topic": "Mooncake"}}[name])
                out["collective"] = _answer(await s.call_tool("search", {"text": "collective communication",
                                                                         "lang": "zh"}))
                for name, args in SAME_AS_CLI.items():
                    out["same"][name] = await _walk(s, name, args)
                out["still_alive"] = not (await s.call_tool("card", {"term": "hccs"})).is_error
    return out


def _in_thread(fn, *args):
    """anyio.run(fn, *args) in a thread of its own (the browser tests' playwright loop may own this one)."""
    result: dict = {}

    def run():
        try:
            result["out"] = anyio.run(fn, *args)
        except BaseException as exc:  # re-raised below, in the test's thread
            result["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=300)
    if "error" in result:
        raise result["error"]
    return result["out"]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    data = root / "data"
    shutil.copytree(DATA, data)
    before = _digest(data)
    listener = Listener()
    try:
        out = _in_thread(_scenario, data, root / "cache", listener.port)
    finally:
        listener.close()
    out["data_unchanged"] = _digest(data) == before
    out["service_connections"] = listener.connections
    out["data"] = data
    out["cache"] = root / "cache"
    return out


def _cli(session, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATLAS_CACHE=str(session["cache"]))
    return subprocess.run([sys.executable, "-m", "atlas", *args, "--data", str(session["data"])],
                          capture_output=True, text=True, env=env)


def _closed(schema):
    """The schema with every object that lists its properties closed to others."""
    schema = copy.deepcopy(schema)

    def close(node):
        if isinstance(node, dict):
            if "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


def _every_answer(session):
    yield from ((name, a) for name, a in session["good"].items())
    yield from session["more"]
    for walk, pages in session["walks"].items():
        yield from (("sparql" if walk == "construct" else walk, a) for a in pages)
    yield from ((name, a) for name, pages in session["same"].items() for a in pages)
    yield "search", session["collective"]


def _whole(pages: list[str]) -> str:
    """A resource's pages put together (the comment naming the next page taken off)."""
    return "".join(p if i == len(pages) - 1 else p[:p.rindex("\n<!-- page ")] for i, p in enumerate(pages))


def _items(value: dict, paths) -> list:
    out = []
    for path in paths:
        node = value
        for key in path:
            node = node[key]
        out.extend(node)
    return out


# ---------------------------------------------------------------------------------------------
# Listing: tools with titles, hints and output schemas; resources; the prompt
# ---------------------------------------------------------------------------------------------

def test_lists_every_tool_resource_and_prompt(session):
    assert set(session["tools"]) == TOOLS
    for name, schema in session["tools"].items():
        for prop, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{prop} has no description"
    assert set(session["templates"]) == {"atlas://concept/{ident}{?page}", "atlas://claim/{ident}{?page}",
                                         "atlas://flow/{ident}{?page}", "atlas://claims/{ident}{?page}",
                                         "atlas://repo/{owner}/{name}{?page}", "atlas://docs/{ident}{?page}"}
    assert session["prompts"] == ["explain"]
    for name in PAGED:
        assert "cursor" in session["tools"][name]["properties"], name


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_has_a_title_read_only_hints_and_an_output_schema(session, name):
    assert session["titles"][name]
    hints = session["annotations"][name]
    assert hints is not None and hints.title == session["titles"][name]
    assert (hints.read_only_hint, hints.idempotent_hint, hints.destructive_hint, hints.open_world_hint) == \
        (True, True, False, False)
    schema = session["output_schemas"][name]
    assert schema and schema["type"] == "object"
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_output_schemas_come_from_the_view_layer(session):
    """The card and flow sections are the view layer's TypedDicts: every key of views.Card and
    views.FlowView is a property of a section, and a nested view (an evidence item) keeps its own fields."""
    from atlas.view import views

    card, flow = session["output_schemas"]["card"], session["output_schemas"]["flow"]
    assert set(card["$defs"]["CardPart"]["properties"]) == set(views.Card.__annotations__)
    assert set(flow["$defs"]["FlowPart"]["properties"]) == set(views.FlowView.__annotations__)
    assert set(card["$defs"]["EvidenceView"]["properties"]) == set(views.EvidenceView.__annotations__)
    assert set(session["output_schemas"]["claims"]["$defs"]["ClaimView"]["properties"]) == \
        set(views.ClaimView.__annotations__)


def test_resources_list_the_documents_every_flow_and_every_claim_group(session):
    from atlas.index.compiled import load_atlas

    atlas = load_atlas(session["data"])
    root = Path(__file__).parent.parent
    expected = {"atlas://docs/readme"} | {f"atlas://docs/{p.stem}" for p in (root / "docs").glob("*.md")}
    expected |= {f"atlas://flow/{f.id}" for f in atlas.flows}
    expected |= {f"atlas://claims/{s}" for s in {cl.status for cl in atlas.claims}}
    assert set(session["resources"]) == expected
    for uri, resource in session["resources"].items():
        assert resource.title and resource.description and resource.mime_type == "text/markdown", uri
        assert session["read"][uri].strip(), uri
    read = {uri: _whole(pages) for uri, pages in session["resource_pages"].items()}
    assert read["atlas://docs/readme"] == (root / "README.md").read_text(encoding="utf-8")
    assert read["atlas://docs/schema"].startswith("# The data of the atlas")
    for status in {cl.status for cl in atlas.claims}:
        ids = sorted(cl.id for cl in atlas.claims if cl.status == status)
        text = read[f"atlas://claims/{status}"]
        assert [line.split("`")[1] for line in text.splitlines() if line.startswith("## Claim `")] == ids
    flow = atlas.flows[0]
    assert read[f"atlas://flow/{flow.id}"].count("\n1. ") == 1


# ---------------------------------------------------------------------------------------------
# Every answer against its schema
# ---------------------------------------------------------------------------------------------

def test_every_answer_validates_against_its_declared_schema(session):
    checked = 0
    for name, answer in _every_answer(session):
        assert not answer["error"], (name, answer["text"][:300])
        structured = answer["structured"]
        assert structured is not None, name
        if name != "fetch":  # (fetch: the text is the document's Markdown)
            whole = outline(structured)  # the text: the same answer as Markdown, cut where it would pass the budget
            assert answer["text"] == whole or (answer["text"].endswith(CUT_NOTE)
                                               and whole.startswith(answer["text"][:-len(CUT_NOTE)])), name
        jsonschema.validate(structured, _closed(session["output_schemas"][name]))
        checked += 1
    assert checked >= 40


# ---------------------------------------------------------------------------------------------
# Paging
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("walk", sorted(WALKS))
def test_long_answers_come_in_pages_under_20000_bytes(session, walk):
    pages = session["walks"][walk]
    assert not any(p["error"] for p in pages), pages[-1]["text"][:300]
    assert len(pages) >= 2, f"{walk}: one page of {pages[0]['bytes']} bytes"
    assert max(p["message"] for p in pages) <= PAGE_LIMIT
    total = pages[0]["structured"]["page"]["total"]
    offset = 0
    for p in pages:
        page = p["structured"]["page"]
        assert (page["offset"], page["total"]) == (offset, total)
        assert page["count"] == len(_items(p["structured"], ITEMS[walk])) >= 1
        offset += page["count"]
    assert offset == total and pages[-1]["structured"]["page"]["next_cursor"] is None


@pytest.mark.parametrize("walk", sorted(CLI_OF))
def test_pages_put_together_are_the_command_lines_answer(session, walk):
    cli = _cli(session, CLI_OF[walk])
    assert cli.returncode == 0, cli.stderr
    whole = json.loads(cli.stdout)
    if walk == "claims":
        whole = {"claims": whole}
    items = [x for p in session["walks"][walk] for x in _items(p["structured"], ITEMS[walk])]
    assert items == _items(whole, ITEMS[walk])
    rest = {k: v for k, v in session["walks"][walk][0]["structured"].items() if k not in ("page", "results",
                                                                                          "@graph")}
    assert all(rest[k] == whole[k] for k in rest if not isinstance(rest[k], list))


def test_search_pages_are_the_ranked_list(session):
    from atlas.opened import Opened

    hits = [dict(h) for p in session["walks"]["search"] for h in p["structured"]["hits"]]
    assert all(h.pop("uri") == f"atlas://{h['type']}/{h['id']}" for h in hits)
    os.environ["ATLAS_CACHE"] = str(session["cache"])
    assert hits == Opened(session["data"]).index.search("hccl", limit=100)
    assert len(hits) == session["walks"]["search"][0]["structured"]["page"]["total"] > 10


def test_a_cursor_only_continues_its_own_call(session):
    for case in ("foreign_cursor", "forged_cursor"):
        answer = session[case]
        assert answer["error"] and "does not continue this call" in answer["text"], answer["text"]


# ---------------------------------------------------------------------------------------------
# Good and bad input (as before the schemas)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_answers_good_input(session, name):
    answer = session["good"][name]
    assert not answer["error"], answer["text"]
    assert answer["text"].strip() and answer["structured"]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_refuses_bad_input_without_crashing(session, name):
    answer = session["bad"][name]
    assert answer["error"]
    assert "Error" in answer["text"] and "Traceback" not in answer["text"]
    assert session["still_alive"]


def _put_together(pages_by_section: dict, key: str, lists: dict) -> dict:
    """A card's (a flow's) sections and pages put back together into one value."""
    whole: dict = {}
    for section, pages in pages_by_section.items():
        for page in pages:
            for field, value in page[key].items():
                if field in lists.get(section, ()) and field in whole:
                    whole[field] = whole[field] + value
                else:
                    whole[field] = value
    return whole


@pytest.mark.parametrize("tool,ident", [("card", "hccs"), ("card", "ascend-shmem"), ("card", "aiv-direct-drive"),
                                        ("flow", "full-mesh-dispatch-path"), ("flow", "minimal-shmem-link")])
def test_sections_put_together_are_the_command_lines_json(session, tool, ident):
    from atlas.mcp.tools import CARD_LISTS, FLOW_LISTS

    args = ["query", ident, "--format", "json"] if tool == "card" else ["flow", ident, "--format", "json"]
    cli = _cli(session, args)
    assert cli.returncode == 0, cli.stderr
    sections = session["sections"][(tool, ident)]
    assert list(sections)[0] == "summary"
    whole = _put_together(sections, tool, CARD_LISTS if tool == "card" else FLOW_LISTS)
    assert whole == json.loads(cli.stdout)
    assert session["good"]["card"]["structured"]["card"]["id"] == "aiv-direct-drive"


def test_no_message_is_over_20000_bytes(session):
    """Every section and page of every card and flow, every page of every resource."""
    assert session["section_errors"] == []
    assert len(session["sections"]) >= 150
    over = {k: v for k, v in session["sizes"].items() if v > PAGE_LIMIT}
    assert over == {}
    assert max(session["sizes"].values()) > 15_000  # the budget is used, not avoided
    for name, answers in [*session["walks"].items(), *session["same"].items()]:
        assert max(a["message"] for a in answers) <= PAGE_LIMIT, name
    assert any(len(pages) > 1 for pages in session["resource_pages"].values())


def test_fetch_reads_a_document_by_offset_and_max_length(session):
    for uri, parts in session["fetched"].items():
        assert not any(p["error"] for p in parts), parts[-1]["text"][:200]
        text = "".join(p["text"].split("\n\n[")[0] if p["structured"]["next_offset"] is not None else p["text"]
                       for p in parts)
        assert text == _whole(session["resource_pages"][uri]), uri
        assert all(p["message"] <= PAGE_LIMIT for p in parts)
        offsets = [p["structured"]["offset"] for p in parts]
        assert offsets == [0] + [p["structured"]["next_offset"] for p in parts[:-1]]
        assert all(p["structured"]["total"] == len(text) for p in parts)
    assert len(session["fetched"]["atlas://concept/ascend-shmem"]) > 3
    assert session["good"]["fetch"]["text"].startswith("# HCCS")
    assert session["good"]["fetch"]["structured"]["length"] == 500


def test_search_hits_carry_a_uri_fetch_reads(session):
    hits = session["good"]["search"]["structured"]["hits"]
    assert hits and all(h["uri"] == f"atlas://{h['type']}/{h['id']}" for h in hits)
    readable = set(session["resource_pages"])
    assert {h["uri"] for p in session["walks"]["search"] for h in p["structured"]["hits"]} <= readable


def test_an_argument_a_tool_does_not_take_is_refused(session):
    for name, answer in session["unknown"]:
        assert answer["error"], (name, answer["text"][:200])
    assert "extra" in session["unknown"][0][1]["text"].lower()
    assert session["tools"]["card"]["additionalProperties"] is False


def test_the_next_pages_come_from_the_stored_result(session):
    """The CONSTRUCT runs once: every page after the first is cut from the stored result."""
    pages = session["walks"]["construct"]
    assert len(pages) >= 21
    first, rest = pages[0]["seconds"], sorted(p["seconds"] for p in pages[1:])
    assert pages[20]["seconds"] <= first and rest[len(rest) // 2] < first / 4, (first, rest)


def test_bad_input_carries_the_command_lines_message(session):
    cli = _cli(session, ["query", "--sparql", BAD["sparql"]["query"]])
    assert cli.returncode == 1
    message = cli.stderr.strip().splitlines()[0].split(": ", 2)[-1]
    assert message in session["bad"]["sparql"]["text"]
    assert "no concept matches" in session["bad"]["card"]["text"]
    assert "is not a day" in session["bad"]["timeline"]["text"]


def test_updates_and_service_are_refused_and_nothing_is_written(session):
    assert "SPARQL Update" in session["bad"]["sparql"]["text"]
    answer = session["service"]
    assert answer["error"] and "SERVICE" in answer["text"]
    assert session["service_connections"] == 0
    assert session["data_unchanged"]


def test_resources_and_prompt_are_markdown_with_pins(session):
    md = session["concept_md"]
    assert md.startswith("# HCCS") and "## Evidence" in md and "@" in md and "read-in-source" in md
    assert session["claim_md"].startswith(f"# Claim `{session['claim_id']}`")
    assert "## Steps" in session["flow_md"]
    assert session["fetch_claim"].startswith(f"# Claim `{session['claim_id']}`")
    assert session["missing_resource"] and "no concept" in session["missing_resource"]
    assert "citing" in session["prompt"] or "cite" in session["prompt"]
    assert "# HCCS" in session["prompt"]


@pytest.mark.parametrize("name", sorted(SAME_AS_CLI))
def test_search_claims_and_graphs_are_the_command_lines_json(session, name):
    pages = session["same"][name]
    assert not any(p["error"] for p in pages), pages[-1]["text"]
    cli = _cli(session, SAME_CLI[name])
    assert cli.returncode == 0, cli.stderr
    theirs = json.loads(cli.stdout)
    paths = {"search": [("hits",)], "claims": [("claims",)], "sparql": [("@graph",)]}[name]
    mine = dict(pages[0]["structured"])
    for path in paths:  # the pages' items put together
        mine[path[0]] = [x for p in pages for x in p["structured"][path[0]]]
    mine.pop("page")
    if name == "search":
        mine["hits"] = [{k: v for k, v in hit.items() if k != "uri"} for hit in mine["hits"]]
    assert (mine["claims"] if name == "claims" else mine) == theirs


def test_search_is_the_ranked_search_and_claims_take_words(session):
    hits = session["collective"]["structured"]["hits"]
    assert (hits[0]["type"], hits[0]["id"]) == ("concept", "collective-communication"), hits[:3]
    assert hits[0]["name"] == {"zh": "集合通信"}, hits[0]
    claims = [c for p in session["same"]["claims"] for c in p["structured"]["claims"]]
    assert len(claims) >= 3 and all("mooncake" in json.dumps(c).lower() for c in claims[:3])
    assert "@context" in session["same"]["sparql"][0]["structured"]


def test_lang_is_an_enum_and_a_bad_prompt_carries_the_message(session):
    from atlas.mcp.tools import CARD_SECTIONS, FLOW_SECTIONS

    assert session["tools"]["card"]["properties"]["lang"]["enum"] == ["en", "zh", "all"]
    assert session["tools"]["card"]["properties"]["section"]["enum"] == list(CARD_SECTIONS)
    assert session["tools"]["flow"]["properties"]["section"]["enum"] == list(FLOW_SECTIONS)
    assert session["missing_prompt"] and "no concept matches" in session["missing_prompt"]


def test_calls_at_once_are_answered_like_calls_in_turn(session):
    assert len(session["concurrent"]) == 16
    assert [c for c in session["concurrent"] if c[1]] == []


# ---------------------------------------------------------------------------------------------
# A slow SPARQL query never holds up a search
# ---------------------------------------------------------------------------------------------

async def _search_behind_slow_queries(data: Path, cache: Path) -> dict:
    out: dict = {"slow": []}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(_params(data, cache), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("sparql", {"query": "ASK { ?s ?p ?o }"})  # the store and the index, opened
                await s.call_tool("search", {"text": "hccs"})
                t0 = time.monotonic()

                async def slow():
                    r = await s.call_tool("sparql", {"query": SLOW})
                    out["slow"].append((time.monotonic() - t0, r.is_error, r.content[0].text))

                async with anyio.create_task_group() as tg:
                    for _ in range(6):
                        tg.start_soon(slow)
                    await anyio.sleep(1.0)  # all six sent, the first ones evaluating
                    t1 = time.monotonic()
                    r = await s.call_tool("search", {"text": "direct drive"})
                    out["search_seconds"] = time.monotonic() - t1
                    out["search"] = r.structured_content
                    out["slow_done_before_search"] = len(out["slow"])
    return out


def test_a_search_answers_at_once_while_six_slow_sparql_queries_run(tmp_path):
    out = _in_thread(_search_behind_slow_queries, DATA, tmp_path / "cache")
    assert out["search"]["hits"][0]["id"] == "aiv-direct-drive"
    assert out["slow_done_before_search"] == 0  # the search was answered while they ran
    assert out["search_seconds"] < 2.5, out["search_seconds"]  # one global lock: at least 5 s, up to 30
    assert len(out["slow"]) == 6
    for seconds, is_error, text in out["slow"]:
        assert is_error and "time limit" in text, text  # each stopped at its own deadline, none crashed


@pytest.mark.parametrize("cache", ["writable", "unwritable"])
def test_each_thread_searches_over_a_connection_of_its_own(tmp_path, monkeypatch, cache):
    """The opened atlas, used from several threads at once: every thread gets its own SQLite
    connection (to the index file, or to a copy of the index kept in memory when the cache cannot
    be written), and every thread finds what one thread finds."""
    from atlas.opened import Opened

    if cache == "unwritable":
        (tmp_path / "a-file").write_text("")
        monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "a-file" / "cache"))
    else:
        monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "cache"))
    opened = Opened(DATA)
    expected = opened.index.search("direct drive", limit=5)
    found, barrier = {}, threading.Barrier(6)

    def search(i):
        barrier.wait()
        index = opened.index
        found[i] = (id(index.con), [index.search("direct drive", limit=5) for _ in range(20)])

    threads = [threading.Thread(target=search, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({con for con, _ in found.values()} | {id(opened.index.con)}) == 7
    assert all(hits == expected for _, runs in found.values() for hits in runs)
