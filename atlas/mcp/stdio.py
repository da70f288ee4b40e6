"""The MCP server's stdio transport: the SDK's, with every line the client sends checked first.

The SDK's stdio reader (mcp 2.3) drops a line it cannot read without replying (docs/mcp.md, "Malformed messages"), so
a client that sent an id would wait forever. Here the lines are read from the process's stdin
(fd 0 then reads the null device, so that no child process takes the client's bytes) and handed to
the SDK's `stdio_server` as its input: a good message goes on, a malformed one is answered with a
JSON-RPC error (`atlas.mcp.jsonrpc`, then the SDK's own reading of what passed), and a line over the
size limit is skipped unread and answered. The replies go out through the SDK's writer, so they
never interleave with its own.
"""
import json
import os

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .jsonrpc import INVALID_REQUEST, MAX_LINE, Reply, check, is_response, too_long, usable_id


class Wire:
    """The client's lines as the SDK's reader iterates them: only the messages it can read."""

    def __init__(self, answers):
        self.answers = answers
        self.fd = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        self.raw = os.fdopen(self.fd, "rb")
        self.one_reader = anyio.CapacityLimiter(1)  # never waits behind the tools' threads

    def __aiter__(self):
        return self._lines()

    def _next_line(self) -> tuple[bytes, bool] | None:
        """The next line and whether it was too long (then only its start), or None at the end."""
        line = self.raw.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) <= MAX_LINE or line.endswith(b"\n"):
            return line, False
        while True:
            more = self.raw.readline(1 << 20)
            if not more or more.endswith(b"\n"):
                return line, True

    async def _lines(self):
        async with self.answers:
            while True:
                got = await anyio.to_thread.run_sync(self._next_line, limiter=self.one_reader,
                                                     abandon_on_cancel=True)
                if got is None:
                    return
                text, replies = checked_line(*got)
                for reply in replies:
                    await self.answers.send(_error_message(reply))
                if text is not None:
                    yield text


def checked_line(line: bytes, over_limit: bool = False) -> tuple[str | None, list[Reply]]:
    """The text of a message the SDK reads and no replies, or None and the error replies: the
    checks of `atlas.mcp.jsonrpc`, then the SDK's own reading of what passed them (a request it would
    drop is answered; a response it would drop is dropped here, as JSON-RPC never answers one)."""
    if over_limit:
        return None, [too_long()]
    text, replies = check(line)
    if text is None:
        return None, replies
    why = _sdk_refusal(text)
    if not why:
        return text, replies
    message = json.loads(text)
    return None, [] if is_response(message) else [Reply(usable_id(message), INVALID_REQUEST, why)]


def _sdk_refusal(text: str) -> str:
    """Why the SDK's reader would drop a message ("" when it reads it)."""
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        return ""
    except Exception as exc:  # pydantic's ValidationError, or anything the SDK's reader would drop
        first = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        return f"not a message MCP reads: {first}"[:200]


def _error_message(reply: Reply) -> SessionMessage:
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=reply.id,
                                             error=types.ErrorData(code=reply.code, message=reply.message)))


async def _forward(answers, write_stream) -> None:
    async with answers:
        async for message in answers:
            try:
                await write_stream.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return


async def serve_stdio(server) -> None:
    """What the SDK's `MCPServer.run("stdio")` does, with the checked reader in place of its own."""
    answers_in, answers_out = anyio.create_memory_object_stream[SessionMessage](64)
    async with stdio_server(stdin=Wire(answers_in)) as (read_stream, write_stream):  # type: ignore[arg-type]
        low = server._lowlevel_server  # the SDK's run_stdio_async serves this same object
        async with anyio.create_task_group() as tg:
            tg.start_soon(_forward, answers_out, write_stream)
            await low.run(read_stream, write_stream, low.create_initialization_options())
            tg.cancel_scope.cancel()
