"""`atlas serve --mcp` as a real subprocess, driven by the MCP SDK's own stdio client.

One session runs a scenario (every tool with good and with bad input, resources, the prompt) and
the tests check what it recorded. The server gets a copy of the bundled data, which must come out
unchanged, and a SERVICE query aimed at a real listener on 127.0.0.1 that must receive nothing.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import DATA

TOOLS = {"search", "card", "compare", "related", "path", "claims", "flow", "timeline", "sparql"}

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
}

# each tool call and the command line that must give the same JSON
SAME_AS_CLI = {
    "search": {"text": "direct drive"},
    "claims": {"topic": "Mooncake"},
    "sparql": {"query": "CONSTRUCT { ?c atlas:answersQuestion question:link } "
                        "WHERE { ?c atlas:answersQuestion question:link } LIMIT 2"},
}
CLI_OF = {
    "search": ["query", "direct drive", "--format", "json"],
    "claims": ["claims", "Mooncake", "--format", "json"],
    "sparql": ["query", "--sparql", SAME_AS_CLI["sparql"]["query"], "--format", "json"],
}


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


async def _scenario(data: Path, cache: Path, service_port: int) -> dict:
    env = {"ATLAS_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "atlas", "serve", "--mcp", "--data", str(data)], env=env)
    out: dict = {"good": {}, "bad": {}, "same": {}}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                out["tools"] = {t.name: t.input_schema for t in (await s.list_tools()).tools}
                out["templates"] = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
                out["prompts"] = [p.name for p in (await s.list_prompts()).prompts]
                for name, args in GOOD.items():
                    r = await s.call_tool(name, args)
                    out["good"][name] = (r.is_error, r.content[0].text)
                for name, args in BAD.items():
                    r = await s.call_tool(name, args)
                    out["bad"][name] = (r.is_error, r.content[0].text)
                r = await s.call_tool("sparql", {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:"
                                                          f"{service_port}/sparql> {{ ?s ?p ?o }} }}"})
                out["service"] = (r.is_error, r.content[0].text)
                out["concept_md"] = (await s.read_resource("atlas://concept/hccs")).contents[0].text
                claims = json.loads(out["good"]["claims"][1])
                out["claim_id"] = claims[0]["id"]
                out["claim_md"] = (await s.read_resource(f"atlas://claim/{claims[0]['id']}")).contents[0].text
                out["flow_md"] = (await s.read_resource("atlas://flow/minimal-shmem-link")).contents[0].text
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
                out["concurrent"] = []

                async def one(name, args):  # the SDK runs tools in worker threads, here at once
                    r = await s.call_tool(name, args)
                    out["concurrent"].append((name, r.is_error, r.content[0].text[:200]))

                async with anyio.create_task_group() as tg:
                    for _ in range(4):
                        for name in ("search", "claims", "card", "sparql"):
                            tg.start_soon(one, name, {**GOOD, "claims": {"topic": "Mooncake"}}[name])
                r = await s.call_tool("search", {"text": "collective communication", "lang": "zh"})
                out["collective"] = (r.is_error, r.content[0].text)
                for name, args in SAME_AS_CLI.items():
                    r = await s.call_tool(name, args)
                    out["same"][name] = (r.is_error, r.content[0].text)
                r = await s.call_tool("card", {"term": "hccs"})
                out["still_alive"] = not r.is_error
    return out


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp")
    data = root / "data"
    shutil.copytree(DATA, data)
    before = _digest(data)
    listener = Listener()
    result: dict = {}

    def run():  # a thread of its own: the browser tests' playwright loop may own this one
        try:
            result["out"] = anyio.run(_scenario, data, root / "cache", listener.port)
        except BaseException as exc:  # re-raised below, in the test's thread
            result["error"] = exc

    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join(timeout=300)
    finally:
        listener.close()
    if "error" in result:
        raise result["error"]
    out = result["out"]
    out["data_unchanged"] = _digest(data) == before
    out["service_connections"] = listener.connections
    out["data"] = data
    out["cache"] = root / "cache"
    return out


def test_lists_every_tool_resource_and_prompt(session):
    assert set(session["tools"]) == TOOLS
    for name, schema in session["tools"].items():
        for prop, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{prop} has no description"
    assert set(session["templates"]) == {"atlas://concept/{ident}", "atlas://claim/{ident}",
                                         "atlas://flow/{ident}"}
    assert session["prompts"] == ["explain"]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_answers_good_input(session, name):
    is_error, text = session["good"][name]
    assert not is_error, text
    json.loads(text)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_refuses_bad_input_without_crashing(session, name):
    is_error, text = session["bad"][name]
    assert is_error
    assert "Error" in text and "Traceback" not in text
    assert session["still_alive"]


def test_card_is_the_command_lines_json(session):
    env = dict(os.environ, ATLAS_CACHE=str(session["cache"]))
    cli = subprocess.run([sys.executable, "-m", "atlas", "query", "直驱", "--format", "json",
                          "--data", str(session["data"])], capture_output=True, text=True, env=env,
                         check=True)
    assert json.loads(session["good"]["card"][1]) == json.loads(cli.stdout)
    assert json.loads(cli.stdout)["evidence"][0]["confidence"]


def test_bad_input_carries_the_command_lines_message(session):
    env = dict(os.environ, ATLAS_CACHE=str(session["cache"]))
    cli = subprocess.run([sys.executable, "-m", "atlas", "query", "--sparql", BAD["sparql"]["query"],
                          "--data", str(session["data"])], capture_output=True, text=True, env=env)
    assert cli.returncode == 1
    message = cli.stderr.strip().splitlines()[0].split(": ", 2)[-1]
    assert message in session["bad"]["sparql"][1]
    assert "no concept matches" in session["bad"]["card"][1]
    assert "is not a day" in session["bad"]["timeline"][1]


def test_updates_and_service_are_refused_and_nothing_is_written(session):
    assert "SPARQL Update" in session["bad"]["sparql"][1]
    is_error, text = session["service"]
    assert is_error and "SERVICE" in text
    assert session["service_connections"] == 0
    assert session["data_unchanged"]


def test_resources_and_prompt_are_markdown_with_pins(session):
    md = session["concept_md"]
    assert md.startswith("# HCCS") and "## Evidence" in md and "@" in md and "read-in-source" in md
    assert session["claim_md"].startswith(f"# Claim `{session['claim_id']}`")
    assert "## Steps" in session["flow_md"]
    assert session["missing_resource"] and "no concept" in session["missing_resource"]
    assert "citing" in session["prompt"] or "cite" in session["prompt"]
    assert "# HCCS" in session["prompt"]


@pytest.mark.parametrize("name", sorted(SAME_AS_CLI))
def test_search_claims_and_graphs_are_the_command_lines_json(session, name):
    is_error, text = session["same"][name]
    assert not is_error, text
    env = dict(os.environ, ATLAS_CACHE=str(session["cache"]))
    cli = subprocess.run([sys.executable, "-m", "atlas", *CLI_OF[name], "--data", str(session["data"])],
                         capture_output=True, text=True, env=env, check=True)
    assert json.loads(text) == json.loads(cli.stdout)


def test_search_is_the_ranked_search_and_claims_take_words(session):
    hits = json.loads(session["collective"][1])["hits"]
    assert (hits[0]["type"], hits[0]["id"]) == ("concept", "collective-communication"), hits[:3]
    assert hits[0]["name"] == {"zh": "集合通信"}, hits[0]
    claims = json.loads(session["same"]["claims"][1])
    assert len(claims) >= 3 and all("mooncake" in json.dumps(c).lower() for c in claims[:3])
    assert "@context" in json.loads(session["same"]["sparql"][1])


def test_lang_is_an_enum_and_a_bad_prompt_carries_the_message(session):
    assert session["tools"]["card"]["properties"]["lang"]["enum"] == ["en", "zh", "all"]
    assert session["missing_prompt"] and "no concept matches" in session["missing_prompt"]


def test_calls_at_once_are_answered_like_calls_in_turn(session):
    assert len(session["concurrent"]) == 16
    assert [c for c in session["concurrent"] if c[1]] == []
