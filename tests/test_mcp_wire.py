"""What goes over the MCP server's wire, below the tools: malformed JSON-RPC lines sent raw to a real
`atlas serve --mcp` process must each get an error reply (the SDK's own reader drops them without
one), checked against the SDK's own parser on random messages; and pages cut to a byte budget must
put the whole answer back together, checked on random answers.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import mcp.types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atlas.mcp import paging
from atlas.errors import AtlasError
from atlas.mcp.jsonrpc import INVALID_REQUEST, MAX_LINE, PARSE_ERROR, is_response, usable_id
from atlas.output import to_json
from conftest import DATA

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

# (case, the raw line, the code of the reply, the id it must carry)
MALFORMED = [
    ("bad JSON", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"', PARSE_ERROR, None),
    ("NaN", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', PARSE_ERROR, None),
    ("nested too deeply", b"[" * 100_000, PARSE_ERROR, None),
    ("an array", b'[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]', INVALID_REQUEST, 2),
    ("an empty array", b"[]", INVALID_REQUEST, None),
    ("a number", b"42", INVALID_REQUEST, None),
    ("a wrong version", b'{"jsonrpc":"1.0","id":3,"method":"tools/list"}', INVALID_REQUEST, 3),
    ("no version", b'{"id":"three","method":"tools/list"}', INVALID_REQUEST, "three"),
    ("an object id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', INVALID_REQUEST, None),
    ("a boolean id", b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', INVALID_REQUEST, None),
    ("a fractional id", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', INVALID_REQUEST, None),
    ("string params", b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}', INVALID_REQUEST, 5),
    ("array params", b'{"jsonrpc":"2.0","id":"p","method":"tools/call","params":["search"]}', INVALID_REQUEST, "p"),
    ("a numeric method", b'{"jsonrpc":"2.0","id":6,"method":7}', INVALID_REQUEST, 6),
    ("no method", b'{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7),
    ("an escaped lone surrogate",
     b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search","arguments":{"text":"\\ud800"}}}',
     PARSE_ERROR, 8),
    ("a lone surrogate as bytes",
     b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"text":"\xed\xa0\x80"}}}',
     PARSE_ERROR, 9),
    ("bytes that are not UTF-8", b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"\xff\xfe"}}',
     PARSE_ERROR, 10),
    ("a malformed notification", b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}',
     INVALID_REQUEST, None),
    ("a line over the limit", b'{"jsonrpc":"2.0","id":11,"method":"ping","params":{"x":"' + b"a" * MAX_LINE + b'"}}',
     INVALID_REQUEST, None),
]


class RawServer:
    """`atlas serve --mcp` with its stdin and stdout as plain pipes, lines read in a thread."""

    def __init__(self, cache):
        env = dict(os.environ, ATLAS_CACHE=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
        self.proc = subprocess.Popen([sys.executable, "-m", "atlas", "serve", "--mcp", "--data", str(DATA)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 10.0) -> dict | None:
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            return None

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=20)


@pytest.fixture(scope="module")
def replies(tmp_path_factory):
    """Each malformed line's reply (None: no reply within 10 s), then what a ping got after them all,
    what a client's response (never answered) was followed by, and the server's exit code."""
    server = RawServer(tmp_path_factory.mktemp("mcp-wire") / "cache")
    try:
        server.send(json.dumps(INIT).encode())
        assert server.reply(60)["result"]["serverInfo"]["name"] == "ascend-atlas"
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        out = {}
        for case, raw, _, _ in MALFORMED:
            server.send(raw)
            out[case] = server.reply()
        server.send(b'{"jsonrpc":"2.0","id":99,"result":{}}')  # a response to nothing: not answered
        server.send(b'{"jsonrpc":"2.0","id":"alive","method":"ping"}')
        out["after"] = server.reply()
    finally:
        out["exit"] = server.close()
    return out


@pytest.mark.parametrize("case,raw,code,ident", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_every_malformed_message_gets_an_error_reply(replies, case, raw, code, ident):
    reply = replies[case]
    assert reply is not None, f"{case}: no reply (a client waits forever)"
    types.JSONRPCError.model_validate(reply)  # a JSON-RPC error object, as the SDK reads one
    assert (reply["id"], reply["error"]["code"]) == (ident, code), reply
    assert reply["error"]["message"] and "Traceback" not in reply["error"]["message"]


def test_the_server_goes_on_and_never_answers_a_response(replies):
    assert replies["after"] == {"jsonrpc": "2.0", "id": "alive", "result": {}}
    assert replies["exit"] == 0


# ---------------------------------------------------------------------------------------------
# The reader against the SDK's own parser, on random messages
# ---------------------------------------------------------------------------------------------

texts = st.text(st.characters(min_codepoint=0, max_codepoint=0xFFFF), max_size=8)  # lone surrogates too
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False), texts)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(texts, inner, max_size=3)), max_leaves=6)
MISSING = object()
messages = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.one_of(st.just("2.0"), values),
    "id": st.one_of(st.integers(-2**40, 2**40), texts, values),
    "method": st.one_of(st.sampled_from(["ping", "tools/list", "tools/call", "notifications/initialized"]), values),
    "params": st.one_of(st.dictionaries(texts, values, max_size=3), values),
    "result": values,
    "error": values,
})


def _refuse(name):
    raise ValueError(name)


def _encode(message, ascii_only: bool, damage: int | None) -> bytes:
    text = json.dumps(message, ensure_ascii=ascii_only)
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate stays, as the bytes a broken client sends
    if damage is not None and raw:
        at = damage % len(raw)
        raw = raw[:at] + b"\xff" + raw[at + 1:] if damage % 2 else raw[:at]  # a bad byte, or a cut line
    return raw


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages, st.booleans(), st.one_of(st.none(), st.integers(0, 10_000)))
def test_a_request_with_an_id_is_read_by_the_sdk_or_answered_with_that_id(message, ascii_only, damage):
    from atlas.mcp.stdio import checked_line

    raw = _encode(message, ascii_only, damage)
    text, replies = checked_line(raw)
    if text is not None:  # handed on: the SDK's own reader reads it, and nothing is answered
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        assert replies == []
        return
    for reply in replies:
        assert reply.code in (PARSE_ERROR, INVALID_REQUEST) and reply.message
        assert reply.id is None or isinstance(reply.id, (str, int))
    try:  # what the client meant, read as strictly as JSON is defined (no NaN, no Infinity)
        sent = json.loads(raw.decode("utf-8", "surrogateescape"), parse_constant=_refuse)
    except ValueError:
        sent = None
    if isinstance(sent, dict) and not is_response(sent) and usable_id(sent) is not None:
        assert [r.id for r in replies] == [usable_id(sent)]
    if sent is not None and is_response(sent):
        assert replies == []  # a client's answer is never answered


# ---------------------------------------------------------------------------------------------
# Pages against the whole answer, on random answers
# ---------------------------------------------------------------------------------------------

items = st.recursive(st.one_of(st.integers(), st.text(max_size=40), st.booleans(), st.none()),
                     lambda inner: st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(items, max_size=40), st.lists(items, max_size=15), st.integers(150, 3000), st.text(max_size=30))
def test_pages_put_back_together_are_the_answer_and_each_fits_the_budget(first, second, budget, other):
    value = {"other": other, "a": {"list": first}, "b": second}
    paths = [("a", "list"), ("b",)]
    call = paging.call_digest("tool", {"x": other}, "key")
    got: tuple[list, list] = ([], [])
    cursor, offset = None, 0
    while True:
        page = paging.page(value, paths, paging.cursor_offset(cursor, call), call, to_json, budget)
        assert page["other"] == other and page["page"]["offset"] == offset
        count = page["page"]["count"]
        assert count == len(page["a"]["list"]) + len(page["b"])
        assert len(to_json(page).encode()) <= budget or count <= 1  # an item larger than the budget: alone
        got[0].extend(page["a"]["list"])
        got[1].extend(page["b"])
        offset += count
        cursor = page["page"]["next_cursor"]
        if cursor is None:
            break
        assert count >= 1
    assert got == (first, second) and offset == page["page"]["total"] == len(first) + len(second)


def test_a_cursor_is_refused_for_another_call_or_when_forged():
    call = paging.call_digest("claims", {"topic": "hccl"}, "key")
    other = paging.call_digest("claims", {"topic": "hixl"}, "key")
    cursor = paging.make_cursor(call, 12)
    assert paging.cursor_offset(cursor, call) == 12
    for bad, where in ((cursor, other), ("13" + cursor[2:], call), ("x", call), ("12.", call)):
        with pytest.raises(AtlasError, match="does not continue this call"):
            paging.cursor_offset(bad, where)
