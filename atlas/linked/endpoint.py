"""`atlas serve --sparql`: a read-only SPARQL 1.1 Protocol endpoint over the embedded store.

Served by uvicorn (an asyncio HTTP server; its HTTP parser is h11) with a Starlette application:
a slow or idle client costs a coroutine, never a thread, so it cannot hold other clients up. What
this module adds is the protocol and the limits:

- the query operation at `/sparql`: GET with `query=`, POST `application/sparql-query`, POST
  `application/x-www-form-urlencoded`; a request that is not a query gets 400, a POST of another
  type 415, another method 405, the update operation (`update=`, `application/sparql-update`) 403
  (this service refuses updates, as Oxigraph's read-only server does), SERVICE and update keywords in a
  query 400, a dataset in the request (`default-graph-uri`, `named-graph-uri`) 400 (use FROM);
- GET `/sparql` with no parameter at all: the SPARQL 1.1 Service Description (`atlas.linked.rdf`), with the
  dataset's VoID description, as Turtle (the default), N-Triples, RDF/XML or JSON-LD;
- content negotiation: SELECT as SPARQL Results XML (the default), JSON, CSV or TSV; ASK as XML or
  JSON; CONSTRUCT and DESCRIBE as Turtle (the default), JSON-LD, N-Triples, RDF/XML, and as N-Quads
  or TriG (the triples in the default graph: N-Triples and Turtle are N-Quads and TriG); 406 when the
  `Accept` header allows none;
- CORS for one origin when `cors` is given (off by default), so that a browser client such as YASGUI
  served elsewhere can query;
- limits: every query runs as `atlas query --sparql` does (a forked child without network, the time
  limit covering rendering, the row and memory limits; 500 with the limit's message); at most
  `max_concurrent` queries at once (a request waits up to the time limit for a slot, then gets 503 with
  Retry-After); a request body of at most MAX_QUERY bytes (413), read within `body_timeout` seconds
  (408); a connection that has not sent a complete request head within `head_timeout` seconds is
  closed (uvicorn has no such limit of its own: `_Protocol`).
"""
from __future__ import annotations

import re
import sys
import urllib.parse
from dataclasses import dataclass

from .. import commands
from . import sparql
from ..errors import AtlasError
from .syntax import MAX_QUERY, query_form

PATH = "/sparql"

# media type -> format of sparql.FORMATS, per result kind; the first is the default
MEDIA = {
    "bindings": {"application/sparql-results+xml": "xml", "application/sparql-results+json": "json",
                 "application/json": "json", "text/csv": "csv", "text/tab-separated-values": "tsv",
                 "application/xml": "xml"},
    "boolean": {"application/sparql-results+xml": "xml", "application/sparql-results+json": "json",
                "application/json": "json", "application/xml": "xml"},
    "graph": {"text/turtle": "turtle", "application/ld+json": "jsonld", "application/n-triples": "nt",
              "application/rdf+xml": "xml", "text/plain": "nt", "application/n-quads": "nt",
              "application/trig": "turtle"},
    # the service description (rdflib's names of the formats)
    "description": {"text/turtle": "turtle", "application/n-triples": "nt", "application/rdf+xml": "xml",
                    "application/ld+json": "json-ld", "text/plain": "nt"},
}
KIND = {"SELECT": "bindings", "ASK": "boolean", "CONSTRUCT": "graph", "DESCRIBE": "graph"}


class Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass
class Limits:
    timeout: float = sparql.QUERY_TIMEOUT
    max_rows: int = sparql.MAX_ROWS
    max_concurrent: int = 2
    body_timeout: float = 10.0
    head_timeout: float = 10.0


def negotiate(accept: str, kind: str) -> tuple[str, str]:
    """The media type and format for `kind` that the `Accept` header prefers (RFC 9110: highest q,
    a specific type before a wildcard, then our order); the default for an empty header."""
    offered = list(MEDIA[kind])
    if not accept.strip():
        return offered[0], MEDIA[kind][offered[0]]
    best = None
    for rank, item in enumerate(accept.split(",")):
        media, _, params = item.strip().partition(";")
        media = media.strip().lower()
        q = _quality(params)
        if q <= 0:
            continue
        for order, mine in enumerate(offered):
            if _matches(media, mine):
                score = (q, media.count("*") == 0, -media.count("*"), -order)
                if best is None or score > best[0]:
                    best = (score, mine)
    if best is None:
        raise Refused(406, f"none of the media types in Accept ({accept[:200]}) can carry "
                      f"{'an ASK' if kind == 'boolean' else 'this'} result; offered: {', '.join(offered)}")
    return best[1], MEDIA[kind][best[1]]


def _quality(params: str) -> float:
    for p in params.split(";"):
        name, _, value = p.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                return max(0.0, min(1.0, float(value)))
            except ValueError:
                return 0.0
    return 1.0


def _matches(pattern: str, media: str) -> bool:
    if pattern in ("*/*", "*"):
        return True
    if pattern.endswith("/*"):
        return media.split("/")[0] == pattern[:-2]
    return pattern == media


def query_of(method: str, ctype: str, params: list[tuple[str, str]], body: bytes) -> str:
    """The query string of a protocol request, or Refused with the protocol's status."""
    fields = list(params)
    if method == "POST":
        if ctype == "application/sparql-query":
            fields.append(("query", _utf8(body)))
        elif ctype == "application/x-www-form-urlencoded":
            fields += urllib.parse.parse_qsl(_utf8(body), keep_blank_values=True)
        elif ctype == "application/sparql-update":
            raise Refused(403, "this endpoint answers read-only queries; SPARQL Update is refused")
        else:
            raise Refused(415, f"a query is POSTed as application/sparql-query or application/x-www-form-urlencoded, "
                          f"not {ctype or 'without a Content-Type'}")
    names = [k for k, _ in fields]
    if "update" in names:
        raise Refused(403, "this endpoint answers read-only queries; SPARQL Update is refused")
    if "default-graph-uri" in names or "named-graph-uri" in names:
        raise Refused(400, "a dataset in the request is not supported; use FROM and FROM NAMED in the query "
                      "(every data file is a named graph: <https://ascend-atlas.invalid/graph/PATH>)")
    queries = [v for k, v in fields if k == "query"]
    if len(queries) != 1:
        raise Refused(400, "a query request carries exactly one `query`" + (f"; this one has {len(queries)}"
                                                                           if queries else ""))
    return queries[0]


def _utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(400, f"the request is not UTF-8 (byte {exc.start})") from None


def answer(query: str, accept: str, data_dir, limits: Limits) -> tuple[str, bytes]:
    """Media type and body for one query (blocking: run in a worker thread)."""
    try:
        sparql.guard(query, "query")
    except AtlasError as exc:
        raise Refused(400, str(exc)) from None
    form = query_form(query)
    if form is None:
        raise Refused(400, "malformed SPARQL: no SELECT, ASK, CONSTRUCT or DESCRIBE")
    media, fmt = negotiate(accept, KIND[form])
    try:
        rendered = commands.sparql_embedded(query, fmt, data_dir, "query",
                                            {"timeout": limits.timeout, "max_rows": limits.max_rows})
    except AtlasError as exc:
        malformed = exc.message.startswith("malformed SPARQL")
        raise Refused(400 if malformed else 500, str(exc)) from None
    if rendered.kind != KIND[form]:  # the form read from the text disagrees with the store's: ask again
        media, fmt = negotiate(accept, rendered.kind)
        rendered = commands.sparql_embedded(query, fmt, data_dir, "query",
                                            {"timeout": limits.timeout, "max_rows": limits.max_rows})
    return media, rendered.text.encode("utf-8")


def describe(described, endpoint: str, accept: str) -> tuple[str, bytes]:
    """Media type and body of the service description of the endpoint at `endpoint`."""
    from .rdf import service_description

    media, fmt = negotiate(accept, "description")
    return media, service_description(described, endpoint).serialize(format=fmt).encode("utf-8")


def make_app(data_dir=None, limits: Limits | None = None, cors: str | None = None):
    """The Starlette application of the endpoint (`cors`: the one origin whose pages may query it)."""
    import anyio
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    limits = limits or Limits()
    slots = anyio.CapacityLimiter(limits.max_concurrent)
    dataset: list = []  # the VoID description, made at the first request for it

    def description(endpoint: str, accept: str) -> tuple[str, bytes]:
        if not dataset:
            dataset.append(commands.dataset_description(data_dir))
        return describe(dataset[0], endpoint, accept)

    async def body_of(request: Request) -> bytes:
        chunks, size = [], 0
        try:
            with anyio.fail_after(limits.body_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > MAX_QUERY:
                        raise Refused(413, f"the request body is larger than {MAX_QUERY:,} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            raise Refused(408, f"the request body did not arrive within {limits.body_timeout:g} s") from None
        return b"".join(chunks)

    async def endpoint(request: Request) -> Response:
        try:
            if request.method == "GET" and not request.query_params:  # the service description
                url = str(request.url.replace(query="", fragment=""))
                media, data = await anyio.to_thread.run_sync(description, url, request.headers.get("accept", ""))
                return Response(data, 200, media_type=f"{media}; charset=utf-8", headers={"Vary": "Accept"})
            body = await body_of(request) if request.method == "POST" else b""
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            query = query_of(request.method, ctype, list(request.query_params.multi_items()), body)
            accept = request.headers.get("accept", "")
            try:
                with anyio.fail_after(limits.timeout):
                    await slots.acquire()
            except TimeoutError:
                raise Refused(503, f"all {limits.max_concurrent} query slots stayed busy for {limits.timeout:g} s",
                              {"Retry-After": str(max(int(limits.timeout), 1))}) from None
            try:
                media, data = await anyio.to_thread.run_sync(answer, query, accept, data_dir, limits)
            finally:
                slots.release()
        except Refused as exc:
            return PlainTextResponse(exc.message + "\n", exc.status, headers=exc.headers)
        return Response(data, 200, media_type=f"{media}; charset=utf-8", headers={"Vary": "Accept"})

    async def home(request: Request) -> Response:
        return PlainTextResponse(f"The Ascend communication atlas: a read-only SPARQL 1.1 endpoint at {PATH}\n")

    middleware = [Middleware(CORSMiddleware, allow_origins=[cors], allow_methods=["GET", "POST"],
                             allow_headers=["Accept", "Content-Type"], max_age=600)] if cors else []
    return Starlette(routes=[Route(PATH, endpoint, methods=["GET", "POST"]), Route("/", home)],
                     middleware=middleware)


def _protocol(head_timeout: float):
    """uvicorn's h11 protocol with a deadline for the request head: a connection that opens and
    sends nothing, or trickles its headers, is closed when `head_timeout` seconds pass without a
    complete request (uvicorn itself only times out idle keep-alive connections)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _Protocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(head_timeout, self._head_expired)

        def _head_expired(self) -> None:
            cycle = getattr(self, "cycle", None)
            if cycle is None or getattr(cycle, "response_complete", False):
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._head_timer.cancel()
            self._arm()

        def connection_lost(self, exc) -> None:
            self._head_timer.cancel()
            super().connection_lost(exc)

    return _Protocol


LOOPBACK = ("127.0.0.1", "::1", "localhost")

# -- admission: which requests reach the application at all ---------------------------------------

HOST_NAMES = ("localhost", "127.0.0.1", "[::1]")  # what `Host` may name, with or without a port
_HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(?P<port>\d{1,5}))?")


def host_name(value: str) -> str | None:
    """The name a `Host` header (or an --allow-host value) gives, lowercased, with an IPv6 address
    written as `[::1]`; None when it is not a host name, an address or an [IPv6] with an optional port."""
    import ipaddress

    m = _HOST.fullmatch(value)
    if m is None or (m["port"] is not None and not 0 < int(m["port"]) < 65536):
        return None
    name = m["name"].lower()
    if name.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(name[1:-1]).compressed}]"
        except ValueError:
            return None
    return name


def host_allowed(value: str | None, allowed=()) -> bool:
    """Whether a request's `Host` names this endpoint: localhost, 127.0.0.1 or [::1] (any port), or a
    name given with --allow-host. A web page that rebinds its own name to 127.0.0.1 sends its own
    name here, so it gets no answer and takes no query slot (DNS rebinding)."""
    name = host_name(value) if value else None
    return name is not None and (name in HOST_NAMES or name in {host_name(a) for a in allowed})


def allowed_hosts(values) -> tuple[str, ...]:
    """The --allow-host values, checked: each a host name or address (a port is not part of it)."""
    from ..errors import Location, UsageError

    out = []
    for value in values:
        m = _HOST.fullmatch(value)
        name = host_name(value)
        if m is None or name is None or m["port"] is not None:
            raise UsageError(f"--allow-host {value!r} is not a host name", Location("--allow-host"),
                             "give the name clients put in the Host header, without a port: "
                             "--allow-host atlas.example.org")
        out.append(name)
    return tuple(out)


def admit(app, allowed=()):
    """The ASGI application `app` behind two checks made before anything is read or queued: a request
    with both Content-Length and Transfer-Encoding (an ambiguous framing, RFC 9112 6.3: a request
    smuggled after it would be read differently by each party) gets 400, and a `Host` that is not
    allowed (`host_allowed`) gets 421; both close the connection, so nothing sent after them is served."""

    async def admitted(scope, receive, send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        names = [n.lower() for n, _ in scope["headers"]]
        hosts = [v.decode("latin-1") for n, v in scope["headers"] if n.lower() == b"host"]
        if b"content-length" in names and b"transfer-encoding" in names:
            await _refuse(send, 400, "a request may carry Content-Length or Transfer-Encoding, not both "
                          "(RFC 9112, 6.3); the connection is closed")
        elif len(hosts) != 1 or not host_allowed(hosts[0], allowed):
            shown = repr(hosts[0][:200]) if len(hosts) == 1 else f"{len(hosts)} Host headers"
            await _refuse(send, 421, f"this endpoint answers requests addressed to localhost, 127.0.0.1 or [::1] "
                          f"only, not {shown}: a web page that points its own name at this machine must not "
                          "read the answers. To serve under another name, start it with --allow-host NAME")
        else:
            await app(scope, receive, send)

    return admitted


async def _refuse(send, status: int, message: str) -> None:
    body = (message + "\n").encode("utf-8")
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def bind(host: str, port: int):
    """A listening socket on `host`:`port` (0: any free port), or a located error."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        from ..errors import Location

        raise AtlasError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", Location("--host/--port"),
                         "choose another --port (0 picks a free one)") from None
    return sock


def serve(data_dir=None, host: str = "127.0.0.1", port: int = 7979, limits: Limits | None = None,
          allow_hosts=(), cors: str | None = None) -> None:
    """Run the endpoint until interrupted. The store is built before the first request. Requests are
    admitted by `admit` (loopback names in `Host`, and `allow_hosts`)."""
    import uvicorn

    limits = limits or Limits()
    store = commands.sparql_store(data_dir)  # bad data stops here, with every problem
    if hasattr(store, "close"):
        store.close()
    import rdflib  # noqa: F401 - imported before any query forks: JSON-LD answers need it
    sock = bind(host, port)
    shown_host = sock.getsockname()[0]
    url = f"http://{'[' + shown_host + ']' if ':' in shown_host else shown_host}:{sock.getsockname()[1]}{PATH}"
    if host not in LOOPBACK:
        print(f"atlas: serving to the network on {host}: anyone who can reach it can query the atlas"
              + ("" if allow_hosts else "; requests are answered only when their Host is localhost, 127.0.0.1 or "
                 "[::1]: add --allow-host NAME for the name clients use"), file=sys.stderr)
    print(f"atlas: SPARQL endpoint at {url} (Ctrl-C stops it)", file=sys.stderr, flush=True)
    config = uvicorn.Config(admit(make_app(data_dir, limits, cors), allow_hosts), http=_protocol(limits.head_timeout),
                            lifespan="off",
                            log_level="warning", access_log=False, server_header=False,
                            timeout_keep_alive=5, limit_concurrency=256)
    uvicorn.Server(config).run(sockets=[sock])
