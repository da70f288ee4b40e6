"""Read-only SPARQL: over the embedded store (pyoxigraph, loaded from a cached N-Triples export) or
over a SPARQL 1.1 endpoint; plus loading the atlas into a server through the Graph Store Protocol.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .errors import AtlasError, Location

UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY")
TIMEOUT = 10.0  # seconds for a whole HTTP exchange (connect, send, headers and body)
QUERY_TIMEOUT = 5.0  # seconds for an embedded query (--timeout)
MAX_ROWS = 100_000  # rows or triples of an embedded result (--max-rows)
MAX_BYTES = 64 * 1024 * 1024  # bytes of an endpoint's response, or of an embedded result
MAX_MEMORY = 2 << 30  # address space of the process that runs an embedded query

_STRIP = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""' r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"' r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>" r"|#[^\n]*", re.S)
_WORD = re.compile(r"(?<![\w:?$@-])([A-Za-z]+)(?![\w:-])")


def _prefix_block() -> str:
    from .vocab import PREFIXES

    return "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in sorted(PREFIXES.items()))


_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
_SERVICE = re.compile(r"(?<![\w:?$@-])SERVICE(?![\w:-])", re.I)


def unescape(query: str) -> str:
    """The query as a SPARQL parser reads it: `\\uXXXX` and `\\UXXXXXXXX` escapes are decoded
    before parsing, anywhere in the text (SPARQL 1.1, section 19.2), so `\\u0053ERVICE` is SERVICE."""
    def one(m):
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else m.group(0)

    return _ESCAPE.sub(one, query)


def _where(bare: str, start: int, where: str) -> Location:
    return Location(where, bare[:start].count("\n") + 1, start - bare.rfind("\n", 0, start))


def guard(query: str, where: str = "query", allow_service: bool = False) -> None:
    """Refuse SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP, ...) and, unless `allow_service`,
    SERVICE (a query that would make the store or the endpoint call another server). Both readings
    of the text are checked, with escapes decoded and as written, so an escaped quote cannot hide
    a keyword inside what only looks like a string."""
    for bare in _views(query):
        for m in _WORD.finditer(bare):
            word = m.group(1).upper()
            if word in UPDATE_WORDS:
                raise AtlasError(f"{word} is SPARQL Update; the atlas answers read-only queries only",
                                 _where(bare, m.start(), where),
                                 "use SELECT, ASK, CONSTRUCT or DESCRIBE; change data/ and rerun instead")
    if not allow_service:
        refuse_service(query, where)


def _views(query: str) -> list[str]:
    """The query without strings, IRIs and comments: with escapes decoded, and as written."""
    decoded = unescape(query)
    return [_STRIP.sub(" ", decoded)] + ([_STRIP.sub(" ", query)] if decoded != query else [])


def refuse_service(query: str, where: str = "query") -> None:
    """SERVICE would send requests over the network (pyoxigraph follows it): refuse it."""
    for bare in _views(query):
        m = _SERVICE.search(bare)
        if m:
            raise AtlasError("SERVICE would send the query to another server; the atlas answers from "
                             "its own data only", _where(bare, m.start(), where),
                             "remove the SERVICE clause (with --endpoint, --allow-service lets the endpoint "
                             "follow it)")


def with_prefixes(query: str) -> tuple[str, int]:
    """Prepend the atlas's standard prefixes, always: a query's own PREFIX lines come later and
    win (redeclaring a prefix is legal SPARQL), and the others stay available."""
    block = _prefix_block()
    return block + query, block.count("\n")


def nt_cache(load, key: str, data_dir: Path) -> Path | bytes:
    """The cached N-Triples export for data `key` (which covers the code: rdf.py, vocab.py, ...)
    and data/ontology.ttl; `load()` gives the atlas when it must be built. When the cache cannot
    be written (a read-only folder), the export itself comes back, as bytes."""
    from . import cache

    ontology = data_dir / "ontology.ttl"
    path = cache.path("graph", f"{key}-{cache.file_crc(ontology)}", ".nt")
    if not path.is_file():
        from .rdf import build_graph, serialize

        text = serialize(build_graph(load(), ontology), "nt").encode("utf-8")
        try:
            cache.atomic_write(path, text)
        except OSError:
            return text  # a cache that cannot be written only costs speed
    return path


def _syntax_error(exc: Exception, offset: int, where: str) -> AtlasError:
    msg = str(exc).split("\n")[0]
    m = re.search(r"(\d+):(\d+)", msg)
    line, col = (max(int(m.group(1)) - offset, 1), int(m.group(2))) if m else (0, 0)
    if m:
        msg = msg[: m.start()] + f"{line}:{col}" + msg[m.end():]
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return AtlasError(f"malformed SPARQL: {msg}", Location(where, line, col),
                      "check the query's syntax (PREFIXes for atlas:, concept:, skos:, prov:, dcterms:, "
                      "doap: ... are always added for you)")


def run_embedded(query: str, nt, where: str = "query", timeout: float = QUERY_TIMEOUT,
                 max_rows: int = MAX_ROWS) -> dict:
    """Answer `query` from the embedded store loaded with `nt` (a path to, or the bytes of, the
    N-Triples export). SERVICE and SPARQL Update are refused first. Where the system can fork, the
    store runs in a child process that is killed at the deadline: pyoxigraph evaluates a query in
    native code that Python cannot interrupt, so the time limit is enforced from outside."""
    guard(query, where)
    if timeout <= 0 or max_rows <= 0:
        raise AtlasError("--timeout and --max-rows must be positive", Location(where))
    if not hasattr(os, "fork"):  # no fork (Windows): the row limit holds, the time limit cannot
        return _evaluate(query, nt, where, max_rows)
    return _in_child(query, nt, where, timeout, max_rows)


def _evaluate(query: str, nt, where: str, max_rows: int) -> dict:
    import pyoxigraph as ox

    full, offset = with_prefixes(query)
    store = ox.Store()
    # the file is our own rdflib export: lenient parsing (no IRI re-validation) halves the load time
    source = {"input": nt} if isinstance(nt, bytes) else {"path": str(nt)}
    store.bulk_load(format=ox.RdfFormat.N_TRIPLES, lenient=True, **source)
    try:
        result = store.query(full)
    except SyntaxError as exc:
        raise _syntax_error(exc, offset, where) from None
    if isinstance(result, ox.QueryBoolean):
        return {"type": "boolean", "boolean": bool(result)}
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows = []
        for sol in result:
            if len(rows) >= max_rows:
                raise _too_many(where, max_rows)
            rows.append({n: _term(sol[n]) for n in names if sol[n] is not None})
        return {"type": "bindings", "vars": names, "rows": rows}
    triples = []
    for t in result:
        if len(triples) >= max_rows:
            raise _too_many(where, max_rows)
        triples.append(f"{t.subject} {t.predicate} {t.object} .")
    return {"type": "graph", "triples": sorted(triples)}


def _limit_memory() -> None:
    """Cap the child's address space, so that a query that builds a huge intermediate result
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


def _in_child(query: str, nt, where: str, timeout: float, max_rows: int) -> dict:
    """Run `_evaluate` in a forked child; its answer comes back through a pipe as marshal bytes.
    The parent waits until the deadline, reads at most MAX_BYTES, and kills the child otherwise."""
    import marshal
    import select
    import signal
    import time

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer, write, and leave without running any of the parent's cleanup
        code = 0
        try:
            os.close(rfd)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)  # a native out-of-memory abort prints to stderr: the parent explains it
            _limit_memory()
            try:
                payload = ("ok", _evaluate(query, nt, where, max_rows))
            except AtlasError as exc:
                payload = ("error", exc.message, tuple(exc.location or Location(where)), exc.hint)
            except Exception as exc:  # noqa: BLE001 - the store's own failure, reported by the parent
                payload = ("error", f"the embedded store failed: {exc}", (where, 0, 0), "")
            data = memoryview(marshal.dumps(payload))
            while data:
                data = data[os.write(wfd, data):]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    chunks, size, done = [], 0, False
    deadline = time.monotonic() + timeout
    try:
        while not done:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                raise AtlasError(f"the query ran longer than {timeout:g} s (the time limit, --timeout)",
                                 Location(where), "add a LIMIT, narrow the patterns, or raise --timeout")
            chunk = os.read(rfd, 1 << 20)
            done = not chunk
            size += len(chunk)
            if size > MAX_BYTES:
                raise AtlasError(f"the result is larger than {MAX_BYTES >> 20} MB (the result-size limit)",
                                 Location(where), "add a LIMIT or select fewer variables")
            chunks.append(chunk)
    finally:
        os.close(rfd)
        if not done:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        payload = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        raise AtlasError(f"the query needed more than {MAX_MEMORY >> 30} GB of memory (the memory limit)",
                         Location(where), "add a LIMIT or narrow the patterns") from None
    if payload[0] == "error":
        raise AtlasError(payload[1], Location(*payload[2]), payload[3])
    return payload[1]


def _term(t) -> dict:
    import pyoxigraph as ox

    if isinstance(t, ox.NamedNode):
        return {"type": "uri", "value": t.value}
    if isinstance(t, ox.BlankNode):
        return {"type": "bnode", "value": t.value}
    out = {"type": "literal", "value": t.value}
    if t.language:
        out["xml:lang"] = t.language
    elif t.datatype and t.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
        out["datatype"] = t.datatype.value
    return out


def check_url(url: str, where: str = "--endpoint"):
    """The parts of an http(s) URL, or a clear refusal (no traceback for `http://[::1/q`, a line
    break or a space in the URL, a port out of range)."""
    import urllib.parse

    bad = next((ch for ch in url if ord(ch) < 0x21 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise AtlasError(f"the URL contains the control or space character {bad!r}: {url!r}", Location(where),
                         "give the endpoint's URL on its own, without spaces or line breaks")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise AtlasError(f"not a valid URL ({exc}): {url!r}", Location(where),
                         "write it like http://127.0.0.1:7878/query (IPv6: http://[::1]:7878/query)") from None
    if parts.scheme not in ("http", "https") or not host:
        raise AtlasError(f"not an http(s) URL: {url!r}", Location(where))
    return parts, host, port


def _http(method: str, url: str, body: bytes, headers: dict, timeout: float, where: str,
          limit: int = MAX_BYTES) -> tuple[int, bytes]:
    """One HTTP exchange under one overall deadline: a timer shuts the socket when `timeout`
    seconds have passed since the start, whatever the server is doing (a server that trickles its
    headers a byte at a time cannot hold the command). At most `limit` bytes of body are read."""
    import http.client
    import socket
    import threading
    import urllib.parse

    parts, host, port = check_url(url, where)
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
        conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read(limit + 1)
        if expired.is_set():
            raise OSError("deadline")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set():
            raise AtlasError(f"no complete answer from {url} within {timeout:g} s", Location(url),
                             "is the server overloaded, or is the URL its query endpoint?") from None
        raise AtlasError(f"cannot reach {url}: {exc}", Location(url),
                         "is the SPARQL server running, and is the URL its query endpoint?") from None
    finally:
        timer.cancel()
        conn.close()
    if len(data) > limit:
        raise AtlasError(f"the response from {url} is larger than {limit >> 20} MB", Location(url),
                         "add a LIMIT to the query")
    moved = resp.getheader("Location") if 300 <= resp.status < 400 else None
    if moved:  # not followed: the query (or the atlas, for a PUT) would be sent to a host never named
        moved = urllib.parse.urljoin(url, moved)
        raise AtlasError(f"HTTP {resp.status} {resp.reason} from {url}: the server points to {moved!r}",
                         Location(url), f"if you trust it, run again with {where} {moved}")
    if resp.status >= 300:
        text = data[:300].decode("utf-8", "replace").strip()
        raise AtlasError(f"HTTP {resp.status} {resp.reason} from {url}" + (f": {text}" if text else ""),
                         Location(url))
    return resp.status, data


def run_endpoint(query: str, url: str, timeout: float = TIMEOUT, where: str = "query",
                 allow_service: bool = False) -> dict:
    check_url(url)
    guard(query, where, allow_service)
    full, _ = with_prefixes(query)
    _, body = _http("POST", url, full.encode("utf-8"), {
        "Content-Type": "application/sparql-query; charset=utf-8",
        "Accept": "application/sparql-results+json, application/n-triples;q=0.9"}, timeout, "--endpoint")
    try:
        doc = json.loads(body)
    except ValueError:
        lines = [ln for ln in body.decode("utf-8", "replace").splitlines() if ln.strip()]
        return {"type": "graph", "triples": sorted(lines)}
    if "boolean" in doc:
        return {"type": "boolean", "boolean": bool(doc["boolean"])}
    names = doc.get("head", {}).get("vars", [])
    rows = [{k: {kk: vv for kk, vv in v.items()} for k, v in b.items()}
            for b in doc.get("results", {}).get("bindings", [])]
    return {"type": "bindings", "vars": names, "rows": rows}


def load_endpoint(nt_text: str, url: str, graph: str | None = None, timeout: float = 6 * TIMEOUT) -> int:
    """PUT the atlas into a Graph Store Protocol endpoint (replacing that graph); return the status."""
    import urllib.parse

    check_url(url, "--to-endpoint")
    sep = "&" if "?" in url else "?"
    target = url + sep + ("graph=" + urllib.parse.quote(graph, safe="") if graph else "default")
    status, _ = _http("PUT", target, nt_text.encode("utf-8"), {"Content-Type": "application/n-triples"},
                      timeout, "--to-endpoint")
    return status


def render(result: dict, fmt: str) -> str:
    """Text for a result: `table` for people; `json` = SPARQL 1.1 Query Results JSON (SELECT, ASK)
    or compacted JSON-LD (CONSTRUCT, DESCRIBE); `csv` / `tsv` = SPARQL 1.1 CSV / TSV results."""
    if result["type"] == "boolean":
        return json.dumps({"boolean": result["boolean"]}) if fmt == "json" else str(result["boolean"]).lower()
    if result["type"] == "graph":
        if fmt == "json":
            return graph_jsonld(result["triples"])
        return "\n".join(result["triples"])
    names, rows = result["vars"], result["rows"]
    doc = {"head": {"vars": names}, "results": {"bindings": rows}}
    if fmt == "json":
        return json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True)
    if fmt in ("csv", "tsv"):
        return _csv_tsv(doc, fmt)
    cells = [[_show(r.get(n)) for n in names] for r in rows]
    from .render import table

    return table(names, cells) + f"\n{len(rows)} row(s)"


def _csv_tsv(doc: dict, fmt: str) -> str:
    """SPARQL 1.1 CSV (full IRIs, bare values, CRLF) or TSV (terms in N-Triples syntax), written by
    pyoxigraph from the JSON results - the same for the embedded store and an endpoint."""
    import pyoxigraph as ox

    solutions = ox.parse_query_results(json.dumps(doc).encode("utf-8"), ox.QueryResultsFormat.JSON)
    target = ox.QueryResultsFormat.CSV if fmt == "csv" else ox.QueryResultsFormat.TSV
    return solutions.serialize(format=target).decode("utf-8")  # ends with its own line break


def graph_jsonld(triples: list[str]) -> str:
    """CONSTRUCT / DESCRIBE results (N-Triples lines) as compacted JSON-LD with the atlas's @context."""
    from rdflib import Graph

    from .rdf import jsonld

    g = Graph()
    g.parse(data="\n".join(triples) + "\n", format="nt")
    return jsonld(g).rstrip("\n")


def _show(term: dict | None) -> str:
    if not term:
        return ""
    value = term["value"]
    from .vocab import BASE

    ids = BASE + "id/"
    if term["type"] == "uri" and value.startswith(ids):
        kind, _, local = value[len(ids):].partition("/")
        return f"{kind}:{local}"
    if term.get("xml:lang"):
        return f"{value}@{term['xml:lang']}"
    return value
