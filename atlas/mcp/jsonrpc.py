"""One line of JSON-RPC 2.0 input, checked before the MCP SDK reads it, so that every malformed
message is answered.

The SDK's stdio reader (mcp 2.3) drops a line it cannot read without a reply, so a client that sent
an id would wait forever (docs/mcp.md, "Malformed messages"). `check` reads a line the way JSON-RPC 2.0 and MCP define
a message and returns either the text to hand on or the error replies: a parse error (-32700) for a
line that is not UTF-8 JSON text (a lone surrogate, raw or escaped, included), an invalid request
(-32600) for JSON that is not a message (an array, a wrong version, an id that is not a string or an
integer, a method that is not a string, params that are not an object). A reply carries the id the
client sent whenever that id is usable; otherwise its id is null, as JSON-RPC 2.0 says. A batch is
answered once for every member that carries an id: MCP removed JSON-RPC batching in protocol
2025-06-18. Responses (a message with `result` or `error` and no `method`) are never answered.
"""
from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_LINE = 8 << 20  # bytes of one message; a longer line is refused unread
_SURROGATE = re.compile("[\ud800-\udfff]")


class Reply(NamedTuple):
    id: str | int | None
    code: int
    message: str


def usable_id(message: Any) -> str | int | None:
    """The id of a message when MCP allows it (a string or an integer), else None."""
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)) else None


def too_long() -> Reply:
    return Reply(None, INVALID_REQUEST, f"the message is longer than {MAX_LINE:,} bytes")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(text: str) -> tuple[Any, str]:
    """The JSON value of a line, or the reason it is not JSON."""
    try:
        return json.loads(text, parse_constant=_no_constant), ""
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg} (at character {exc.pos + 1})"
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    except RecursionError:
        return None, "not JSON this server reads: nested too deeply"


def _lone_surrogate(value: Any) -> str:
    """The first lone surrogate in any key or string of `value`, as its escape ("" when none)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            m = _SURROGATE.search(item)
            if m:
                return f"\\u{ord(m.group(0)):04x}"
    return ""


def _request_problem(message: dict) -> str:
    if not isinstance(message["method"], str):
        return "method must be a string"
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return f"params must be an object, not {_json_type(params)}"
    return ""


def _envelope_problem(message: Any) -> str:
    """Why a JSON value is not a JSON-RPC 2.0 message MCP accepts ("" when it is one)."""
    if not isinstance(message, dict):
        return f"a message must be a JSON object, not {_json_type(message)}"
    if message.get("jsonrpc") != "2.0":
        return f'jsonrpc must be "2.0", not {json.dumps(message.get("jsonrpc"))[:20]}'
    if "id" in message and usable_id(message) is None:
        return f"id must be a string or an integer, not {_json_type(message['id'])}"
    if "method" in message:
        return _request_problem(message)
    if ("result" in message or "error" in message) and "id" in message:
        return ""
    return "a request needs a method (a string)"


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
             int: "an integer", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _batch(items: list) -> list[Reply]:
    why = ("JSON-RPC batches are not part of MCP (removed in protocol 2025-06-18); send one message "
           "per line")
    ids = [i for i in (usable_id(m) for m in items) if i is not None]
    return [Reply(i, INVALID_REQUEST, why) for i in ids] or [Reply(None, INVALID_REQUEST, why)]


def is_response(message: Any) -> bool:
    """A client's answer to a request of the server: it is never answered, even when malformed."""
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)


def check(line: bytes) -> tuple[str | None, list[Reply]]:
    """The text of a good message and no replies, or None and the replies a bad one needs. A
    blank line is neither (nothing to hand on, nothing to answer)."""
    if not line.strip():
        return None, []
    try:
        text, bad_byte = line.decode("utf-8"), -1
    except UnicodeDecodeError as exc:  # still read, so the reply can carry the id
        text, bad_byte = line.decode("utf-8", "surrogateescape"), exc.start
    message, why = _parse(text.rstrip("\r\n"))
    if why:
        return None, [Reply(None, PARSE_ERROR, why)]
    if isinstance(message, list):
        return None, _batch(message)
    ident = usable_id(message)
    if bad_byte >= 0:
        return None, [] if is_response(message) else [
            Reply(ident, PARSE_ERROR, f"the message is not UTF-8 (byte {bad_byte})")]
    surrogate = _lone_surrogate(message)
    if surrogate:
        return None, [] if is_response(message) else [
            Reply(ident, PARSE_ERROR, f"the message holds a lone surrogate ({surrogate}), which is not text")]
    problem = _envelope_problem(message)
    if problem:
        return None, [] if is_response(message) else [Reply(ident, INVALID_REQUEST, problem)]
    return text, []
