"""SPARQL under attack: SERVICE is refused by reading the query (wherever a query comes from: the
command line, the MCP tool, `--endpoint`, `atlas serve --sparql`) and the embedded store cannot reach
the network at all; deep, long and endless queries stop with a message; an endpoint's malformed
answers are located errors; a password in an endpoint URL is never shown. Real processes, a real
listener on 127.0.0.1 that must receive nothing, a real HTTP server that answers badly."""
from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.linked import sparql
from atlas.errors import AtlasError
from atlas.linked.syntax import MAX_DEPTH, unescape
from test_rdf import oxigraph_server  # noqa: F401 - the real Oxigraph server fixture


def atlas(*args, data=None, timeout=120, env=None):
    cmd = [sys.executable, "-m", "atlas", *args] + (["--data", str(data)] if data else [])
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})


@contextlib.contextmanager
def listener():
    """A TCP listener on 127.0.0.1: `received()` says whether anyone connected."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.setblocking(False)
    seen = []

    def received() -> bool:
        try:
            while True:
                conn = srv.accept()[0]
                seen.append(conn)
        except BlockingIOError:
            pass
        return bool(seen)

    try:
        yield srv.getsockname()[1], received
    finally:
        for conn in seen:
            conn.close()
        srv.close()


# --------------------------------------------------------------------------------------------------
# SERVICE, by parsing: a hypothesis test with Oxigraph's own parser as the oracle
# --------------------------------------------------------------------------------------------------

EX = "http://example.org/"
_STORE = ox.Store()
for _p, _o in (("p", ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))),
               ("q", ox.NamedNode(EX + "o")), ("r", ox.Literal("x"))):
    _STORE.add(ox.Quad(ox.NamedNode(EX + "s"), ox.NamedNode(EX + _p), _o))

# the pattern before the splice ends with a number, a prefixed name, a string, a variable or a bracket
BEFORE = ["?s ex:p 1", "?s ex:p +1", "?s ex:q ex:o", "?s ex:r 'x'", "?s ex:r \"x\"", "?s ?p ?o",
          "?s ex:q <http://example.org/o>", "FILTER(?z = 1)", "BIND(ex:o AS ?w)", "?s ex:p 1 ;ex:q ex:o"]
GAPS = ["", " ", "\n", "\t", " . ", ".", "#note\n", "# SERVICE in a comment is not one\n", " #x\r\n"]
TARGETS = ["<http://127.0.0.1:9/sparql>", ":sparql", "?svc"]


def _oxigraph_calls_service(query: str) -> bool:
    """Oracle: Oxigraph parses `query` with a SERVICE, which it then evaluates (port 9 is refused by
    its own HTTP client before any connection, so nothing leaves the machine)."""
    try:
        list(_STORE.query(query))
    except (OSError, RuntimeError) as exc:  # a SERVICE it tried, or one whose variable is unbound
        return "port 9" in str(exc) or "service" in str(exc).lower()
    except SyntaxError:
        return False
    return False


@st.composite
def spliced(draw):
    word = draw(st.sampled_from(["SERVICE", "service", "Service", "sErViCe"]))
    escaped = draw(st.booleans())
    if escaped:  # some letters as \\u escapes, decoded by a SPARQL parser before it parses
        word = "".join(f"\\u{ord(c):04X}" if draw(st.booleans()) else c for c in word)
    silent = draw(st.sampled_from(["", " SILENT", "SILENT", " silent"]))
    target = draw(st.sampled_from(TARGETS))
    before = draw(st.sampled_from(BEFORE))
    gap = draw(st.sampled_from(GAPS))
    after = draw(st.sampled_from([" { ?a ?b ?c }", "{?a ?b ?c}", " { }"]))
    prologue = f"PREFIX ex: <{EX}>\nPREFIX : <http://127.0.0.1:9/>\n"
    bind = "BIND(<http://127.0.0.1:9/sparql> AS ?svc) " if target == "?svc" else ""
    head = f"{prologue}SELECT * WHERE {{ VALUES ?z {{ 1 }} {bind}{before}{gap}"
    return head + word + silent + (" " if target.startswith("?") or not silent else " ") + target + after + " }"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spliced())
def test_service_spliced_anywhere_is_refused_whenever_a_parser_reads_it(query):
    loud = re.sub(r"(?i) ?silent", "", query)  # SILENT would hide the oracle's error: ask without it
    if not _oxigraph_calls_service(unescape(loud)):
        return  # not a SERVICE for the parser (e.g. `ex:oSERVICE` is one name): nothing to refuse
    with pytest.raises(AtlasError, match="SERVICE would send the query to another server"):
        sparql.guard(query)
    with pytest.raises(AtlasError, match="SERVICE"):
        sparql.guard(loud)


@settings(max_examples=200, deadline=None)
@given(before=st.sampled_from(BEFORE), gap=st.sampled_from(GAPS),
       hidden=st.sampled_from(["'SERVICE'", "\"\"\"SERVICE { }\"\"\"", "<http://x/SERVICE>", "ex:SERVICE",
                               "?SERVICE", "ex:a.SERVICE", "\"x\"@en", "# SERVICE <http://x/> { }\n"]))
def test_service_as_text_name_or_comment_is_not_refused(before, gap, hidden):
    query = f"PREFIX ex: <{EX}>\nSELECT * WHERE {{ VALUES ?z {{ 1 }} {before}{gap} BIND({hidden!s} AS ?h) }}"
    if hidden.startswith("#"):
        query = f"PREFIX ex: <{EX}>\nSELECT * WHERE {{ {before} {hidden} }}"
    sparql.guard(query)  # no false alarm


def test_the_issue_s_case_and_glued_forms_are_refused():
    for q in ("SELECT ?a WHERE { ?s ?p 1SERVICE <http://127.0.0.1:9/sparql> { ?a ?b ?c } } LIMIT 1",
              "SELECT * WHERE { ?s ?p 1 SERVICESILENT <http://127.0.0.1:9/q> { ?a ?b ?c } }",
              "PREFIX : <http://127.0.0.1:9/> SELECT * WHERE { ?s ?p 1 SERVICE:q { ?a ?b ?c } }",
              "SELECT * WHERE { ?s ?p true\\u0053ERVICE <http://127.0.0.1:9/q> { } }"):
        with pytest.raises(AtlasError, match="SERVICE would send"):
            sparql.guard(q)


def test_cli_mcp_endpoint_and_server_refuse_service_and_the_listener_receives_nothing(mini):
    from atlas.mcp.tools import AtlasTools

    with listener() as (port, received), _answering_server(_ok_json) as endpoint:
        q = f"SELECT ?a WHERE {{ ?s ?p 1SERVICE <http://127.0.0.1:{port}/sparql> {{ ?a ?b ?c }} }} LIMIT 1"
        r = atlas("query", "--sparql", q, data=mini)
        assert r.returncode == 1 and b"SERVICE would send" in r.stderr and b"query:1:26" in r.stderr, r.stderr
        with pytest.raises(AtlasError, match="SERVICE would send"):
            AtlasTools(mini).sparql(q)
        r = atlas("query", "--sparql", q, "--endpoint", endpoint.url)
        assert r.returncode == 1 and b"SERVICE" in r.stderr and not endpoint.seen
        time.sleep(0.3)
        assert not received()


def test_the_query_child_has_no_network_at_all():
    """Past the parser, a SERVICE evaluated in the query's child process reaches nothing; the same
    evaluation outside the child does connect (so the test can fail)."""
    def service(port: int):
        def work():
            try:
                list(ox.Store().query(f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/q> {{ ?a ?b ?c }} }}"))
            except OSError as exc:
                return str(exc)
            return "answered"
        return work

    if not sparql.in_child(lambda: sparql.leave_network(), "probe", 10):
        pytest.skip("this system does not let a process leave the network (no user namespaces)")
    with listener() as (port, received):
        answer = sparql.in_child(service(port), "query", 10, isolate=True)
        time.sleep(0.3)
        assert not received(), "the isolated child connected"
        assert "unreachable" in answer.lower() or "error" in answer.lower()
    with listener() as (port, received):
        with pytest.raises(AtlasError, match="time limit"):  # it connects, then waits for an answer
            sparql.in_child(service(port), "query", 2, isolate=False)
        assert received(), "the control child did not connect: the test cannot tell"


# --------------------------------------------------------------------------------------------------
# Bounded queries: depth, length, endless files, positions
# --------------------------------------------------------------------------------------------------

def test_deep_nesting_is_refused_with_a_message_that_names_depth(mini):
    q = "SELECT * WHERE " + "{" * 3000 + " ?s ?p ?o " + "}" * 3000
    r = atlas("query", "--sparql", q, data=mini)
    err = r.stderr.decode()
    assert r.returncode == 1 and "nests 3000 levels deep" in err and f"depth limit is {MAX_DEPTH}" in err, err
    assert "memory" not in err and "Traceback" not in err
    ok = "SELECT * WHERE " + "{" * 50 + " ?s ?p ?o " + "}" * 50 + " LIMIT 1"
    assert atlas("query", "--sparql", ok, data=mini).returncode == 0


def test_sparql_file_dev_zero_is_bounded(mini, tmp_path):
    start = time.monotonic()
    r = atlas("query", "--sparql-file", "/dev/zero", data=mini, timeout=60)
    assert r.returncode == 1 and b"larger than 1,048,576 bytes" in r.stderr, r.stderr
    assert b"MemoryError" not in r.stderr and b"Traceback" not in r.stderr and time.monotonic() - start < 30
    bad = tmp_path / "q.rq"
    bad.write_bytes(b"SELECT * WHERE { ?s ?p '\xff' }")
    r = atlas("query", "--sparql-file", str(bad), data=mini)
    assert r.returncode == 1 and b"not UTF-8" in r.stderr and str(bad).encode() in r.stderr


def test_syntax_error_positions_are_the_user_s_own_lines(mini):
    for args in (["query", "--sparql", "SELECT ?x WHERE {\n  ?x ?y \n}"],):
        r = atlas(*args, data=mini)
        err = r.stderr.decode()
        assert r.returncode == 1 and re.search(r"query:3:\d+: malformed SPARQL: error at 3:\d+", err), err


@pytest.mark.server
def test_an_endpoint_s_syntax_error_names_the_user_s_line(oxigraph_server):  # noqa: F811
    r = atlas("query", "--sparql", "SELECT ?x WHERE {\n  ?x ?y \n}", "--endpoint", oxigraph_server + "/query")
    err = r.stderr.decode()
    assert r.returncode == 1 and "HTTP 400" in err and re.search(r"error at 3:\d+", err), err


def test_rendering_is_inside_the_time_limit(mini):
    """A 5 MB literal built by the query and drawn as a table: stopped at --timeout (the table alone
    takes about 5 s to draw on a quiet machine, 10 s on a busy one, so the limit is 2 s; before, the
    drawing came on top of the limit)."""
    binds = "".join(f"BIND(CONCAT(?{c}, ?{c}, ?{c}, ?{c}) AS ?{n}) " for c, n in zip("abcdefgh", "bcdefghi"))
    q = f"SELECT ?big WHERE {{ BIND(\"0123456789\" AS ?a) {binds}BIND(CONCAT({', '.join(['?i'] * 8)}) AS ?big) }}"
    start = time.monotonic()
    r = atlas("query", "--sparql", q, "--timeout", "2", data=mini)
    elapsed = time.monotonic() - start
    assert r.returncode == 1 and b"covers evaluation and rendering" in r.stderr, r.stderr
    assert elapsed < 9, elapsed


# --------------------------------------------------------------------------------------------------
# Endpoint answers of the wrong shape; passwords
# --------------------------------------------------------------------------------------------------

class _Endpoint:
    def __init__(self, server):
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/query"
        self.seen: list = []


@contextlib.contextmanager
def _answering_server(reply):
    """A real HTTP server on 127.0.0.1 whose every POST gets `reply(handler)` = (status, type, body)."""
    holder: list = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            holder[0].seen.append((dict(self.headers), body))
            status, ctype, data = reply(self)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_PUT = do_POST

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(_Endpoint(server))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()


def _ok_json(_):
    return 200, "application/sparql-results+json", json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": []}}
                                                              ).encode()


BAD_ANSWERS = [
    ("application/sparql-results+json", b"[1,2,3]", "a JSON list, not a results object at $"),
    ("application/sparql-results+json", b"42", "a JSON int, not a results object at $"),
    ("application/sparql-results+json", b'{"head": {"vars": ["x"]}, "results": {"bindings": [1]}}',
     "a binding that is a JSON int, not an object at $.results.bindings[0]"),
    ("application/sparql-results+json", b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": 5}]}}',
     "not an RDF term (an object with a type and a string value) at $.results.bindings[0].x"),
    ("application/sparql-results+json", b"[" * 200_000, "JSON nested more than 64 levels deep"),
    ("application/sparql-results+json", b'{"head": {"vars": ["x"]}, "results": {"bindi', "not JSON"),
    ("application/sparql-results+json", b'{"results": {"bindings": []}}', "no list of variable names"),
    ("text/plain", b"x\ny\n", "text/plain, not SPARQL results JSON"),
    ("text/html", b"<html>login</html>", "text/html, not SPARQL results JSON"),
]


@pytest.mark.parametrize("ctype,body,message", BAD_ANSWERS)
def test_endpoint_answers_of_the_wrong_shape_are_located_errors(ctype, body, message):
    with _answering_server(lambda _: (200, ctype, body)) as endpoint:
        r = atlas("query", "--sparql", "SELECT ?x WHERE { ?x ?p ?o }", "--endpoint", endpoint.url)
    err = r.stderr.decode()
    assert r.returncode == 1 and message in err and endpoint.url in err, err
    assert "Traceback" not in err and not r.stdout


def test_a_graph_answer_must_be_n_triples():
    with _answering_server(lambda _: (200, "application/n-triples", b"<a:b> <a:c> \"unterminated .\n")) as ep:
        r = atlas("query", "--sparql", "CONSTRUCT WHERE { ?s ?p ?o }", "--endpoint", ep.url)
    assert r.returncode == 1 and b"not N-Triples" in r.stderr and not r.stdout


def test_an_endpoint_password_is_sent_but_never_shown():
    secret = "s3cr3t-pa55"

    def refuse(handler):
        return 500, "text/plain", f"server trouble for {handler.headers.get('Authorization')}".encode()

    with _answering_server(refuse) as endpoint:
        url = endpoint.url.replace("http://", f"http://reader:{secret}@")
        r = atlas("query", "--sparql", "ASK {}", "--endpoint", url)
        assert endpoint.seen and endpoint.seen[0][0]["Authorization"].startswith("Basic ")
    err = r.stderr.decode()
    assert r.returncode == 1 and "HTTP 500" in err and secret not in err and "reader:***@" in err, err
    for bad in (f"http://reader:{secret}@127.0.0.1:1/q", f"http://reader:{secret}@[::1/q",
                f"http://reader:{secret}@127.0.0.1:99999/q"):
        r = atlas("query", "--sparql", "ASK {}", "--endpoint", bad, timeout=60)
        assert r.returncode in (1, 2) and secret.encode() not in r.stderr + r.stdout, r.stderr


def test_each_name_class_matches_exactly_its_code_points():
    """Oracle, exhaustive: every character class the SPARQL tokenizer builds (written as the negation
    of its complement, see linked.syntax.char_class) matches a code point exactly when one of its
    ranges holds it, over all 1,114,112 code points; and over the grammar's own list for names."""
    import re

    from atlas.linked import syntax as s

    used = [(s._PN_CHARS_BASE,), (s._PN_CHARS, s._DOT), (s._PN_CHARS,), (s._PN_CHARS_U, s._COLON, s._DIGITS),
            (s._PN_CHARS, s._DOT, s._COLON), (s._PN_CHARS, s._COLON), (s._PN_CHARS_U, s._DIGITS),
            (s._PN_CHARS_U, s._DIGITS, s._NAME_EXTRA)]
    everything = "".join(map(chr, range(0x110000)))
    for sets in used:
        ranges = [r for part in sets for r in part]
        found = {m.start() for m in re.finditer(s.char_class(*sets), everything)}
        wanted = {c for lo, hi in ranges for c in range(lo, hi + 1)}
        assert found == wanted, sets
    # PN_CHARS_BASE as the SPARQL 1.1 grammar writes it (production 164)
    grammar = re.compile("[A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D"
                         "\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF]")
    assert {m.start() for m in grammar.finditer(everything)} == \
        {m.start() for m in re.finditer(s.char_class(s._PN_CHARS_BASE), everything)}
