"""Read-only SPARQL: over the embedded store (pyoxigraph, an on-disk store opened read-only, see
`atlas.linked.triplestore`) or over a SPARQL 1.1 endpoint; the results in the W3C formats; loading the atlas
into a server through the Graph Store Protocol.

An embedded query runs in a forked child process: the child leaves the network (a network namespace
of its own, with no interface but a loopback that is down), caps its memory, opens the store, answers
and renders the answer in the format asked for; the parent waits until the deadline and kills it
then. So the time limit covers evaluation and rendering, and no query can reach another server
whatever it says (SERVICE is refused before, by `atlas.linked.syntax`, as well).
"""
from __future__ import annotations

import json
import os
import re
from typing import NamedTuple

from ..errors import AtlasError, Location
from .syntax import MAX_QUERY, UPDATE_WORDS, check, query_form, unescape  # noqa: F401 - re-exported

TIMEOUT = 10.0  # seconds for a whole HTTP exchange (connect, send, headers and body)
QUERY_TIMEOUT = 5.0  # seconds for an embedded query, rendering included (--timeout)
MAX_ROWS = 100_000  # rows or triples of an embedded result (--max-rows)
MAX_BYTES = 64 * 1024 * 1024  # bytes of an endpoint's response, or of a rendered result
MAX_MEMORY = 2 << 30  # address space of the process that runs an embedded query
MAX_JSON_DEPTH = 64  # nesting of an endpoint's JSON answer (the results format needs 4)

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"

# What each kind of result can be rendered as (`--results`, or the server's content negotiation).
FORMATS = {
    "bindings": ("table", "json", "xml", "csv", "tsv"),
    "boolean": ("table", "json", "xml"),
    "graph": ("table", "json", "xml", "turtle", "jsonld", "nt"),
}


class Rendered(NamedTuple):
    kind: str  # "bindings" (SELECT), "boolean" (ASK) or "graph" (CONSTRUCT, DESCRIBE)
    text: str


def guard(query: str, where: str = "query", allow_service: bool = False) -> None:
    """Refuse SPARQL Update, SERVICE (unless `allow_service`), and queries too long or too deep
    (see `atlas.linked.syntax.check`). Every place a query comes from calls this first."""
    check(query, where, allow_service)


def prefixes() -> dict[str, str]:
    from ..model.vocab import PREFIXES

    return dict(sorted(PREFIXES.items()))


def with_prefixes(query: str) -> tuple[str, int]:
    """The query with the atlas's standard prefixes prepended (for an endpoint, which does not know
    them): a query's own PREFIX lines come later and win, which SPARQL allows."""
    block = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in prefixes().items())
    return block + query, block.count("\n")


def read_query_file(path: str) -> str:
    """A query file, read up to MAX_QUERY bytes (`/dev/zero` or a huge file is refused, not read)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_QUERY + 1)
    except OSError as exc:
        raise AtlasError(f"cannot read the query: {exc.strerror or exc}", Location(path)) from None
    if len(raw) > MAX_QUERY:
        raise AtlasError(f"the query file is larger than {MAX_QUERY:,} bytes", Location(path),
                         "a SPARQL query that long is almost certainly not meant")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AtlasError(f"the query is not UTF-8 text (byte {exc.start})", Location(path)) from None


def _syntax_error(exc: Exception, where: str, offset: int = 0) -> AtlasError:
    """Oxigraph's message, with the line made the user's own (`offset` hidden lines before it)."""
    msg = str(exc).split("\n")[0]
    m = re.search(r"(\d+):(\d+)", msg)
    line, col = (max(int(m.group(1)) - offset, 1), int(m.group(2))) if m else (0, 0)
    if m:
        msg = msg[: m.start()] + f"{line}:{col}" + msg[m.end():]
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return AtlasError(f"malformed SPARQL: {msg}", Location(where, line, col),
                      "check the query's syntax (PREFIXes for atlas:, concept:, skos:, prov:, dcterms:, "
                      "doap: ... are always there for you)")


class StoreDamaged(AtlasError):
    """The on-disk store could not be opened or read: a cache miss, rebuilt by the caller."""


# --------------------------------------------------------------------------------------------------
# The embedded store, in a child process
# --------------------------------------------------------------------------------------------------

def run_embedded(query: str, source, where: str = "query", timeout: float = QUERY_TIMEOUT,
                 max_rows: int = MAX_ROWS, formats: dict | str = "json") -> Rendered:
    """Answer `query` from the embedded store and render it: `source` is the folder of an on-disk
    store (opened read-only) or N-Quads bytes (loaded into memory, when no store could be written).
    `formats` maps a result kind to a format of FORMATS (one name: the same for every kind). SPARQL
    Update and SERVICE are refused first. Where the system can fork, the work runs in a child that
    is killed at the deadline: pyoxigraph evaluates in native code Python cannot interrupt."""
    guard(query, where)
    if timeout <= 0 or max_rows <= 0:
        raise AtlasError("--timeout and --max-rows must be positive", Location(where))
    if isinstance(formats, str):
        formats = dict.fromkeys(FORMATS, formats)

    def work() -> Rendered:
        store = _open(source)
        _limit_memory()  # after the load: the limit bounds the query, not the store
        return render(_evaluate(store, query, where, max_rows), formats)

    if not hasattr(os, "fork"):  # no fork (Windows): the row limit holds, the time limit cannot
        return work()
    return Rendered(*in_child(lambda: tuple(work()), where, timeout, isolate=True))


def _open(source):
    import pyoxigraph as ox

    if isinstance(source, (bytes, bytearray)):
        store = ox.Store()
        store.bulk_load(input=bytes(source), format=ox.RdfFormat.N_QUADS, lenient=True)
        return store
    path = os.fspath(source)
    try:
        return ox.Store.read_only(path)
    except (OSError, RuntimeError) as exc:  # RocksDB: "IO error: ...", "Corruption: ..."
        raise StoreDamaged(f"the SPARQL store cannot be opened: {exc}", Location(path)) from None


def _damaged(exc: Exception) -> bool:
    """Whether the store's exception says its files are damaged or gone (RocksDB's messages)."""
    return isinstance(exc, OSError) or str(exc).startswith(("Corruption", "IO error"))


def _evaluate(store, query: str, where: str, max_rows: int) -> dict:
    import pyoxigraph as ox

    try:
        # every triple is in the named graph of a data file that states it: the default graph is their union
        result = store.query(query, prefixes=prefixes(), use_default_graph_as_union=True)
    except SyntaxError as exc:
        raise _syntax_error(exc, where) from None
    except (OSError, RuntimeError) as exc:  # RocksDB read a damaged block
        if _damaged(exc):
            raise StoreDamaged(f"the SPARQL store is damaged: {exc}", Location(where)) from None
        raise
    try:
        if isinstance(result, ox.QueryBoolean):
            return {"type": "boolean", "boolean": bool(result)}
        if isinstance(result, ox.QuerySolutions):
            names = [v.value for v in result.variables]
            rows: list[dict] = []
            for sol in result:
                if len(rows) >= max_rows:
                    raise _too_many(where, max_rows)
                rows.append({n: term_json(sol[n]) for n in names if sol[n] is not None})
            return {"type": "bindings", "vars": names, "rows": rows}
        triples: list[str] = []
        for t in result:
            if len(triples) >= max_rows:
                raise _too_many(where, max_rows)
            triples.append(f"{t.subject} {t.predicate} {t.object} .")
        return {"type": "graph", "triples": sorted(set(triples))}
    except (OSError, RuntimeError) as exc:
        if _damaged(exc):
            raise StoreDamaged(f"the SPARQL store is damaged: {exc}", Location(where)) from None
        raise


def term_json(t) -> dict:
    """A pyoxigraph term as a SPARQL 1.1 Results JSON term."""
    import pyoxigraph as ox

    if isinstance(t, ox.NamedNode):
        return {"type": "uri", "value": t.value}
    if isinstance(t, ox.BlankNode):
        return {"type": "bnode", "value": t.value}
    out = {"type": "literal", "value": t.value}
    if t.language:
        out["xml:lang"] = t.language
    elif t.datatype and t.datatype.value != XSD_STRING:
        out["datatype"] = t.datatype.value
    return out


def _limit_memory() -> None:
    """Cap the process's address space, so that a query that builds a huge intermediate result
    fails in the child instead of exhausting the machine's memory."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = MAX_MEMORY if hard == resource.RLIM_INFINITY else min(MAX_MEMORY, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass


def _too_many(where: str, max_rows: int) -> AtlasError:
    return AtlasError(f"the result has more than {max_rows} rows (the result-size limit, --max-rows)",
                      Location(where), "add a LIMIT, narrow the patterns, or raise --max-rows")


def leave_network() -> bool:
    """Move this process into a network namespace of its own (Linux, unprivileged user namespaces):
    it has no interface but a loopback that is down, so nothing it does can reach any server. Only
    a single-threaded process can do this: call it in a fresh child. False where the system does not
    allow it (SERVICE is still refused by `guard`)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    clone_newuser, clone_newnet = 0x10000000, 0x40000000
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(clone_newuser | clone_newnet) == 0
    except (OSError, AttributeError):
        return False


def _child(work, wfd: int, where: str, isolate: bool) -> None:
    """The child's side of `in_child`: answer, write, and leave without the parent's cleanup."""
    import marshal

    code = 0
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)  # a native out-of-memory abort prints to stderr: the parent explains it
        if isolate:
            leave_network()
        try:
            payload: tuple = ("ok", work())
        except AtlasError as exc:
            kind = "damaged" if isinstance(exc, StoreDamaged) else "error"
            payload = (kind, exc.message, tuple(exc.location or Location(where)), exc.hint)
        except RecursionError:
            payload = ("error", "the answer is nested too deeply to read", (where, 0, 0), "")
        except MemoryError:
            payload = ("memory",)
        except Exception as exc:  # noqa: BLE001 - the store's own failure, reported by the parent
            payload = ("error", f"the embedded store failed: {exc}", (where, 0, 0), "")
        data = memoryview(marshal.dumps(payload))
        while data:
            data = data[os.write(wfd, data):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def in_child(work, where: str, timeout: float, isolate: bool = False):
    """`work()` (its value marshal can carry) computed in a forked child, which is killed when
    `timeout` seconds have passed or its answer grows past MAX_BYTES. With `isolate`, the child
    first leaves the network (`leave_network`)."""
    import marshal

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _child(work, wfd, where, isolate)
    os.close(wfd)
    data = _read_child(rfd, pid, where, timeout)
    try:
        payload = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        payload = ("memory",)
    if payload[0] == "memory":
        raise AtlasError(f"the query needed more than {MAX_MEMORY >> 30} GB of memory (the memory limit)",
                         Location(where), "add a LIMIT or narrow the patterns")
    if payload[0] == "damaged":
        raise StoreDamaged(payload[1], Location(*payload[2]), payload[3])
    if payload[0] == "error":
        raise AtlasError(payload[1], Location(*payload[2]), payload[3])
    return payload[1]


def _read_child(rfd: int, pid: int, where: str, timeout: float) -> bytes:
    """Everything the child writes until it closes the pipe; at the deadline or past MAX_BYTES the
    child is killed and the limit named."""
    import select
    import signal
    import time

    chunks, size, done = [], 0, False
    deadline = time.monotonic() + timeout
    try:
        while not done:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                raise AtlasError(f"the query ran longer than {timeout:g} s (the time limit, --timeout, "
                                 "covers evaluation and rendering)", Location(where),
                                 "add a LIMIT, narrow the patterns, or raise --timeout")
            chunk = os.read(rfd, 1 << 20)
            done = not chunk
            size += len(chunk)
            if size > MAX_BYTES + (1 << 16):
                raise AtlasError(f"the result is larger than {MAX_BYTES >> 20} MB (the result-size limit)",
                                 Location(where), "add a LIMIT or select fewer variables")
            chunks.append(chunk)
    finally:
        os.close(rfd)
        if not done:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return b"".join(chunks)


# --------------------------------------------------------------------------------------------------
# Results in the W3C formats
# --------------------------------------------------------------------------------------------------

def render(result: dict, formats: dict | str, where: str = "--results") -> Rendered:
    """Text for a result, in the format `formats` names for its kind:

    - SELECT: `table` for people; `json` = SPARQL 1.1 Query Results JSON; `xml` = SPARQL Query Results
      XML; `csv` / `tsv` = SPARQL 1.1 CSV / TSV.
    - ASK: `table` (`true` / `false`), `json` (with its `head`), `xml`. CSV and TSV are refused: the
      W3C defines them for SELECT results only, and no results parser reads a bare `true`.
    - CONSTRUCT, DESCRIBE: `table` / `nt` (sorted N-Triples), `json` / `jsonld` (compacted JSON-LD with
      the atlas's @context), `turtle`, `xml` (RDF/XML).
    """
    kind = result["type"]
    fmt = formats if isinstance(formats, str) else formats[kind]
    if fmt not in FORMATS[kind]:
        raise AtlasError(_unfit(kind, fmt), Location(where), _fits(kind))
    if kind == "boolean":
        return Rendered(kind, _boolean(result["boolean"], fmt))
    if kind == "graph":
        return Rendered(kind, _graph(result["triples"], fmt))
    return Rendered(kind, _bindings(result["vars"], result["rows"], fmt))


def _unfit(kind: str, fmt: str) -> str:
    form = {"boolean": "an ASK query", "graph": "a CONSTRUCT or DESCRIBE query", "bindings": "a SELECT query"}[kind]
    if fmt in ("csv", "tsv"):
        return (f"{fmt.upper()} results are defined for SELECT queries only (SPARQL 1.1 Query Results CSV "
                f"and TSV Formats); {form} has no {fmt.upper()} form")
    return f"{form} cannot be written as {fmt}"


def _fits(kind: str) -> str:
    return "use --results table, json or xml"


def _boolean(value: bool, fmt: str) -> str:
    if fmt == "json":  # SPARQL 1.1 Query Results JSON, section 3: head, then boolean
        return json.dumps({"head": {}, "boolean": value})
    if fmt == "xml":
        return _oxigraph_results({"head": {}, "boolean": value}, "xml")
    return str(value).lower()


def _bindings(names: list[str], rows: list[dict], fmt: str) -> str:
    doc = {"head": {"vars": names}, "results": {"bindings": rows}}
    if fmt == "json":
        return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True)
    if fmt in ("csv", "tsv", "xml"):
        return _oxigraph_results(doc, fmt)
    cells = [[_show(r.get(n)) for n in names] for r in rows]
    from ..terminal.render import table

    return table(names, cells) + f"\n{len(rows)} row(s)"


def _oxigraph_results(doc: dict, fmt: str) -> str:
    """SPARQL 1.1 CSV (full IRIs, bare values, CRLF), TSV (terms in N-Triples syntax) or Query
    Results XML, written by pyoxigraph from the JSON results - the same for the embedded store and
    an endpoint."""
    import pyoxigraph as ox

    parsed = ox.parse_query_results(json.dumps(doc).encode("utf-8"), ox.QueryResultsFormat.JSON)
    target = {"csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV,
              "xml": ox.QueryResultsFormat.XML}[fmt]
    text = (parsed.serialize(format=target) or b"").decode("utf-8")
    return text + "\n" if fmt == "xml" else text  # CSV and TSV end with their own line break


def _graph(triples: list[str], fmt: str) -> str:
    if fmt in ("json", "jsonld"):
        return graph_jsonld(triples)
    if fmt in ("turtle", "xml"):
        import pyoxigraph as ox

        target = ox.RdfFormat.TURTLE if fmt == "turtle" else ox.RdfFormat.RDF_XML
        quads = ox.parse(("\n".join(triples) + "\n").encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
        return (ox.serialize((q.triple for q in quads), format=target, prefixes=prefixes()) or b"").decode("utf-8")
    return "\n".join(triples) + ("\n" if fmt == "nt" and triples else "")


def graph_jsonld(triples: list[str]) -> str:
    """CONSTRUCT / DESCRIBE results (N-Triples lines) as compacted JSON-LD with the atlas's @context.
    Literals keep their lexical form (rdflib would rewrite `Z` as `+00:00`)."""
    import rdflib
    from rdflib import Graph

    from .rdf import jsonld

    g = Graph()
    keep, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        g.parse(data="\n".join(triples) + "\n", format="nt")
    finally:
        rdflib.NORMALIZE_LITERALS = keep
    return jsonld(g).rstrip("\n")


def _show(term: dict | None) -> str:
    if not term:
        return ""
    value = term["value"]
    from ..model.vocab import BASE

    ids = BASE + "id/"
    if term["type"] == "uri" and value.startswith(ids):
        kind, _, local = value[len(ids):].partition("/")
        return f"{kind}:{local}"
    if term.get("xml:lang"):
        return f"{value}@{term['xml:lang']}"
    return value


# --------------------------------------------------------------------------------------------------
# SPARQL endpoints
# --------------------------------------------------------------------------------------------------

def public_url(url: str) -> str:
    """The URL as messages show it: a password in it is replaced by `***`."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    except ValueError:
        return re.sub(r"//([^/@:]*):[^/@]*@", r"//\1:***@", url)


def hide_secret(text: str, url: str) -> str:
    """`text` (a server's answer) without the URL's password, plain or as HTTP Basic credentials."""
    import base64
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return text
    if not password:
        return text
    plain = f"{urllib.parse.unquote(user or '')}:{urllib.parse.unquote(password)}"
    for secret in (password, urllib.parse.unquote(password), base64.b64encode(plain.encode("utf-8")).decode("ascii")):
        text = text.replace(secret, "***")
    return text


def check_url(url: str, where: str = "--endpoint"):
    """The parts of an http(s) URL, or a clear refusal (no traceback for `http://[::1/q`, a line
    break or a space in the URL, a port out of range). A password never appears in a message."""
    import urllib.parse

    shown = public_url(url)
    bad = next((ch for ch in url if ord(ch) < 0x21 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise AtlasError(f"the URL contains the control or space character {bad!r}: {shown!r}", Location(where),
                         "give the endpoint's URL on its own, without spaces or line breaks")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise AtlasError(f"not a valid URL ({public_url(str(exc))}): {shown!r}", Location(where),
                         "write it like http://127.0.0.1:7878/query (IPv6: http://[::1]:7878/query)") from None
    if parts.scheme not in ("http", "https") or not host:
        raise AtlasError(f"not an http(s) URL: {shown!r}", Location(where))
    return parts, host, port


def _auth_header(parts) -> dict:
    """HTTP Basic credentials from the URL's user and password (sent, never shown)."""
    import base64
    import urllib.parse

    if parts.username is None:
        return {}
    pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
    return {"Authorization": "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")}


def _http(method: str, url: str, body: bytes, headers: dict, timeout: float, where: str,
          limit: int = MAX_BYTES) -> tuple[int, bytes, str]:
    """One HTTP exchange under one overall deadline: a timer shuts the socket when `timeout`
    seconds have passed since the start, whatever the server is doing (a server that trickles its
    headers a byte at a time cannot hold the command). At most `limit` bytes of body are read.
    Returns the status, the body and the content type."""
    import http.client
    import socket
    import threading

    parts, host, port = check_url(url, where)
    shown = public_url(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(host, port, timeout=timeout)
    expired = threading.Event()

    def expire():
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, target, body=body, headers={**headers, **_auth_header(parts)})
        resp = conn.getresponse()
        data = resp.read(limit + 1)
        if expired.is_set():
            raise OSError("deadline")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set():
            raise AtlasError(f"no complete answer from {shown} within {timeout:g} s", Location(shown),
                             "is the server overloaded, or is the URL its query endpoint?") from None
        raise AtlasError(f"cannot reach {shown}: {public_url(str(exc))}", Location(shown),
                         "is the SPARQL server running, and is the URL its query endpoint?") from None
    finally:
        timer.cancel()
        conn.close()
    _check_status(resp, data, url, where, limit)
    return resp.status, data, (resp.getheader("Content-Type") or "").split(";")[0].strip().lower()


def _check_status(resp, data: bytes, url: str, where: str, limit: int) -> None:
    import urllib.parse

    shown = public_url(url)
    if len(data) > limit:
        raise AtlasError(f"the response from {shown} is larger than {limit >> 20} MB", Location(shown),
                         "add a LIMIT to the query")
    moved = resp.getheader("Location") if 300 <= resp.status < 400 else None
    if moved:  # not followed: the query (or the atlas, for a PUT) would be sent to a host never named
        moved = public_url(urllib.parse.urljoin(url, moved))
        raise AtlasError(f"HTTP {resp.status} {resp.reason} from {shown}: the server points to {moved!r}",
                         Location(shown), f"if you trust it, run again with {where} {moved}")
    if resp.status >= 300:
        text = hide_secret(data[:300].decode("utf-8", "replace").strip(), url)
        raise AtlasError(f"HTTP {resp.status} {resp.reason} from {shown}" + (f": {text}" if text else ""),
                         Location(shown))


_RESULTS_JSON = ("application/sparql-results+json", "application/json")
_TRIPLES = ("application/n-triples", "text/plain")


def run_endpoint(query: str, url: str, timeout: float = TIMEOUT, where: str = "query",
                 allow_service: bool = False, formats: dict | str = "json") -> Rendered:
    """Send `query` to a SPARQL 1.1 endpoint and render its answer, which must be SPARQL Results
    JSON (SELECT, ASK) or N-Triples (CONSTRUCT, DESCRIBE) of the right shape: anything else is an
    error naming the URL and the place in the answer. The time limit covers the exchange, reading
    the answer and rendering it."""
    import time

    check_url(url)
    guard(query, where, allow_service)
    if isinstance(formats, str):
        formats = dict.fromkeys(FORMATS, formats)
    full, hidden = with_prefixes(query)
    graph = query_form(query) in ("CONSTRUCT", "DESCRIBE")
    start = time.monotonic()
    try:
        _, body, ctype = _http("POST", url, full.encode("utf-8"), {
            "Content-Type": "application/sparql-query; charset=utf-8",
            "Accept": _TRIPLES[0] if graph else _RESULTS_JSON[0]}, timeout, "--endpoint")
    except AtlasError as exc:  # a server's syntax error counts the PREFIX lines it was sent: not shown
        if " 400 " in exc.message:
            exc.message = re.sub(r"(?<=\bat )(\d+):(\d+)",
                                 lambda m: f"{max(int(m.group(1)) - hidden, 1)}:{m.group(2)}", exc.message)
        raise
    shown = public_url(url)
    left = max(timeout - (time.monotonic() - start), 0.5)

    def work() -> tuple:
        return tuple(render(endpoint_result(body, ctype, shown, graph), formats))

    if not hasattr(os, "fork"):
        return Rendered(*work())
    return Rendered(*in_child(work, shown, left))


def endpoint_result(body: bytes, ctype: str, shown: str, graph: bool = False) -> dict:
    """An endpoint's answer as a result: N-Triples for a CONSTRUCT or DESCRIBE (`graph`), else SPARQL
    1.1 Results JSON of the right shape; a located error for anything else (a text/plain page for a
    SELECT, truncated JSON, `[1,2,3]`, bindings that are not objects, brackets nested 200,000 deep)."""
    expected = _TRIPLES if graph else _RESULTS_JSON
    if ctype not in expected:
        raise _bad_answer(shown, f"{ctype or 'without a content type'}, not "
                          + ("N-Triples" if graph else "SPARQL results JSON"))
    if graph:
        return {"type": "graph", "triples": _ntriples(body, shown)}
    if _json_depth(body) > MAX_JSON_DEPTH:
        raise _bad_answer(shown, f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise _bad_answer(shown, f"not JSON ({exc})") from None
    return results_from_json(doc, shown)


def _json_depth(body: bytes) -> int:
    """The deepest nesting of brackets in a JSON text, strings skipped (before json.loads recurses)."""
    depth = deepest = 0
    for m in re.finditer(rb'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', body):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                break
        elif tok in (b"]", b"}"):
            depth -= 1
    return deepest


def results_from_json(doc, shown: str) -> dict:
    """SPARQL 1.1 Query Results JSON (section 3) read strictly: an object with `head`, and either
    `boolean` or `results.bindings`, a list of objects mapping variable names to RDF terms."""
    if not isinstance(doc, dict):
        raise _bad_answer(shown, f"a JSON {type(doc).__name__}, not a results object", "$")
    if "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise _bad_answer(shown, "`boolean` is not true or false", "$.boolean")
        return {"type": "boolean", "boolean": doc["boolean"]}
    head = doc.get("head")
    names = head.get("vars") if isinstance(head, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _bad_answer(shown, "no list of variable names in `head.vars`", "$.head.vars")
    results = doc.get("results")
    rows = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(rows, list):
        raise _bad_answer(shown, "no list in `results.bindings`", "$.results.bindings")
    return {"type": "bindings", "vars": names, "rows": [_row(r, i, shown) for i, r in enumerate(rows)]}


def _row(row, i: int, shown: str) -> dict:
    if not isinstance(row, dict):
        raise _bad_answer(shown, f"a binding that is a JSON {type(row).__name__}, not an object",
                          f"$.results.bindings[{i}]")
    out = {}
    for name, term in row.items():
        at = f"$.results.bindings[{i}].{name}"
        if not isinstance(term, dict) or term.get("type") not in ("uri", "literal", "bnode", "typed-literal") \
                or not isinstance(term.get("value"), str):
            raise _bad_answer(shown, "not an RDF term (an object with a type and a string value)", at)
        clean = {"type": "literal" if term["type"] == "typed-literal" else term["type"], "value": term["value"]}
        for key in ("xml:lang", "datatype"):
            if isinstance(term.get(key), str) and clean["type"] == "literal":
                clean[key] = term[key]
        out[name] = clean
    return out


def _ntriples(body: bytes, shown: str) -> list[str]:
    """N-Triples lines, each one checked by pyoxigraph's parser (the line number names a bad one)."""
    import pyoxigraph as ox

    try:
        triples = list(ox.parse(body, format=ox.RdfFormat.N_TRIPLES))
    except SyntaxError as exc:
        raise _bad_answer(shown, f"not N-Triples ({str(exc).splitlines()[0]})") from None
    return sorted({f"{q.subject} {q.predicate} {q.object} ." for q in triples})


def _bad_answer(shown: str, what: str, at: str = "") -> AtlasError:
    return AtlasError(f"the endpoint's answer is {what}" + (f" at {at}" if at else ""), Location(shown),
                      "is the URL the server's SPARQL query endpoint?")


def load_endpoint(nt_text: str, url: str, graph: str | None = None, timeout: float = 6 * TIMEOUT) -> int:
    """PUT the atlas into a Graph Store Protocol endpoint (replacing that graph); return the status."""
    import urllib.parse

    check_url(url, "--to-endpoint")
    sep = "&" if "?" in url else "?"
    target = url + sep + ("graph=" + urllib.parse.quote(graph, safe="") if graph else "default")
    status, _, _ = _http("PUT", target, nt_text.encode("utf-8"), {"Content-Type": "application/n-triples"},
                         timeout, "--to-endpoint")
    return status
