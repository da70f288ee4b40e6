"""`atlas serve --sparql`: a real server process on 127.0.0.1, asked by real SPARQL clients
(SPARQLWrapper, rdflib's SPARQLStore) and by raw sockets that are slow, idle or too big."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from atlas.linked.endpoint import Refused, negotiate, query_of

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")


def _start(data, *extra, env=None):
    cmd = [sys.executable, "-m", "atlas", "serve", "--sparql", "--port", "0", "--data", str(data), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    line = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        m = re.search(rb"SPARQL endpoint at (http://\S+)", line)
        if m:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
            return proc, m.group(1).decode()
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"the server did not start: {line!r}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import shutil

    from conftest import MINI

    data = tmp_path_factory.mktemp("served") / "data"
    shutil.copytree(MINI, data)
    proc, url = _start(data, "--timeout", "3", "--max-concurrent", "2")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _get(url: str, query: str, accept: str | None = None, method: str = "GET", body: bytes | None = None,
         ctype: str | None = None):
    target = url + ("?" + urllib.parse.urlencode({"query": query}) if method == "GET" and query else "")
    req = urllib.request.Request(target, data=body, method=method)
    if accept:
        req.add_header("Accept", accept)
    if ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


# --------------------------------------------------------------------------------------------------
# Real clients
# --------------------------------------------------------------------------------------------------

def test_sparqlwrapper_gets_select_ask_and_construct_in_each_format(server):
    from SPARQLWrapper import CSV, JSON, N3, TSV, TURTLE, XML, SPARQLWrapper

    client = SPARQLWrapper(server)
    client.setQuery("PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "
                    "SELECT ?c WHERE { ?c a skos:Concept } ORDER BY ?c")
    client.setReturnFormat(JSON)
    rows = client.query().convert()["results"]["bindings"]
    assert rows and all(r["c"]["type"] == "uri" for r in rows)
    client.setReturnFormat(XML)
    doc = client.query().convert()  # an xml.dom document
    assert len(doc.getElementsByTagName("result")) == len(rows)
    for fmt, sep in ((CSV, b","), (TSV, b"\t")):
        client.setReturnFormat(fmt)
        text = client.query().convert()
        assert text.splitlines()[0] in (b"c", b"?c") and len(text.splitlines()) == len(rows) + 1
    client.setQuery("ASK { ?s ?p ?o }")
    client.setReturnFormat(JSON)
    assert client.query().convert() == {"head": {}, "boolean": True}
    client.setReturnFormat(XML)
    assert client.query().convert().getElementsByTagName("boolean")[0].firstChild.data == "true"
    client.setQuery("CONSTRUCT WHERE { ?c <http://www.w3.org/2004/02/skos/core#prefLabel> ?l }")
    for fmt in (TURTLE, N3, XML):
        client.setReturnFormat(fmt)
        result = client.query()
        graph = result.convert()
        if isinstance(graph, bytes):
            from rdflib import Graph

            graph = Graph().parse(data=graph.decode(), format="turtle")
        assert len(graph) >= 2 * len(rows) - 2


def test_sparqlwrapper_post_and_its_errors(server):
    from SPARQLWrapper import JSON, POST, POSTDIRECTLY, SPARQLWrapper
    from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, Unauthorized, SPARQLWrapperException

    for mode in ("urlencoded", POSTDIRECTLY):
        client = SPARQLWrapper(server)
        client.setMethod(POST)
        client.setRequestMethod(mode)
        client.setReturnFormat(JSON)
        client.setQuery("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        n = int(client.query().convert()["results"]["bindings"][0]["n"]["value"])
        assert n > 100
        client.setQuery("SELECT * WHERE { ?s ?p }")
        with pytest.raises(QueryBadFormed):
            client.query()
    client = SPARQLWrapper(server)
    client.setMethod(POST)
    client.setQuery("INSERT DATA { <a:b> <a:c> <a:d> }")  # SPARQLWrapper sends this as an update
    with pytest.raises((Unauthorized, SPARQLWrapperException, urllib.error.HTTPError)) as exc:
        client.query()
    assert "403" in str(exc.value)


def test_rdflib_sparqlstore_reads_the_endpoint_as_a_graph(server):
    from rdflib import Graph, URIRef
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    g = Graph(store=SPARQLStore(server, returnFormat="xml"))
    rows = list(g.query("SELECT ?c WHERE { ?c a <http://www.w3.org/2004/02/skos/core#Concept> } ORDER BY ?c"))
    assert rows and all(isinstance(r[0], URIRef) for r in rows)
    assert g.query("ASK { ?s ?p ?o }").askAnswer is True
    triples = list(g.triples((URIRef(str(rows[0][0])), None, None)))
    assert triples
    json_store = Graph(store=SPARQLStore(server, returnFormat="json", method="POST"))
    assert len(list(json_store.query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 7"))) == 7


# --------------------------------------------------------------------------------------------------
# The protocol, by hand
# --------------------------------------------------------------------------------------------------

def test_content_negotiation_and_defaults(server):
    q = "SELECT ?c WHERE { ?c a <http://www.w3.org/2004/02/skos/core#Concept> } LIMIT 2"
    cases = [(None, "application/sparql-results+xml"), ("*/*", "application/sparql-results+xml"),
             ("application/sparql-results+json", "application/sparql-results+json"),
             ("text/csv", "text/csv"), ("text/tab-separated-values", "text/tab-separated-values"),
             ("text/csv;q=0.5, application/json", "application/json"),
             ("text/*", "text/csv")]
    for accept, expected in cases:
        status, ctype, _ = _get(server, q, accept)
        assert status == 200 and ctype.startswith(expected), (accept, ctype)
    c = "CONSTRUCT WHERE { ?c a <http://www.w3.org/2004/02/skos/core#Concept> }"
    for accept, expected in ((None, "text/turtle"), ("application/ld+json", "application/ld+json"),
                             ("application/n-triples", "application/n-triples"),
                             ("application/rdf+xml", "application/rdf+xml")):
        status, ctype, body = _get(server, c, accept)
        assert status == 200 and ctype.startswith(expected), (accept, ctype)
    assert json.loads(_get(server, c, "application/ld+json")[2])["@context"]
    status, _, body = _get(server, "ASK { ?s ?p ?o }", "text/csv")
    assert status == 406 and b"ASK" in body


def test_protocol_errors_have_the_spec_s_status(server):
    assert _get(server + "?format=json", "")[0] == 400  # no query (and no bare GET: that is the description)
    assert _get(server, "SELECT * WHERE { ?s ?p }")[0] == 400  # malformed
    status, _, body = _get(server, "DELETE WHERE { ?s ?p ?o }")
    assert status == 400 and b"SPARQL Update" in body
    form = urllib.parse.urlencode({"update": "DROP ALL"}).encode()
    assert _get(server, "", method="POST", body=form, ctype="application/x-www-form-urlencoded")[0] == 403
    assert _get(server, "", method="POST", body=b"DROP ALL", ctype="application/sparql-update")[0] == 403
    assert _get(server, "", method="POST", body=b"ASK {}", ctype="text/plain")[0] == 415
    assert _get(server, "", method="PUT", body=b"x", ctype="text/turtle")[0] == 405
    two = server + "?" + urllib.parse.urlencode([("query", "ASK {}"), ("query", "ASK {}")])
    assert _get(two, "")[0] == 400
    dataset = server + "?" + urllib.parse.urlencode([("query", "ASK {}"), ("default-graph-uri", "http://x/")])
    assert _get(dataset, "")[0] == 400
    status, _, body = _get(server, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/q> { ?s ?p ?o } }")
    assert status == 400 and b"SERVICE" in body
    status, _, body = _get(server, "", method="POST", body=b"ASK { ?s ?p '\xff' }", ctype="application/sparql-query")
    assert status == 400 and b"UTF-8" in body


def test_limits_answer_with_a_status_and_a_message(server):
    big = b"ASK {} #" + b"x" * (1 << 20)
    status, _, body = _get(server, "", method="POST", body=big, ctype="application/sparql-query")
    assert status == 413
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    status, _, body = _get(server, slow)
    assert status == 500 and b"time limit" in body


def test_unit_negotiation_and_query_extraction():
    assert negotiate("", "bindings")[1] == "xml"
    assert negotiate("application/sparql-results+json;q=0.1, text/csv;q=0.9", "bindings")[1] == "csv"
    with pytest.raises(Refused) as exc:
        negotiate("text/csv, text/tab-separated-values", "boolean")
    assert exc.value.status == 406
    assert query_of("GET", "", [("query", "ASK {}")], b"") == "ASK {}"
    assert query_of("POST", "application/x-www-form-urlencoded", [], b"query=ASK+%7B%7D") == "ASK {}"


# --------------------------------------------------------------------------------------------------
# Slow and idle clients do not hold others up; the concurrency limit
# --------------------------------------------------------------------------------------------------

def _connect(url: str) -> socket.socket:
    parts = urllib.parse.urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def test_slow_and_idle_connections_do_not_block_other_clients(server):
    parts = urllib.parse.urlsplit(server)
    idle = [_connect(server) for _ in range(30)]  # open and say nothing
    trickle = []
    for _ in range(10):  # a request head sent a byte at a time, never finished
        s = _connect(server)
        s.sendall(b"GET " + parts.path.encode())
        trickle.append(s)
    slow_body = _connect(server)  # a POST whose body never comes
    slow_body.sendall(f"POST {parts.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/sparql-query\r\n"
                      f"Content-Length: 100\r\n\r\nASK".encode())
    try:
        for _ in range(5):
            start = time.monotonic()
            status, _, body = _get(server, "ASK { ?s ?p ?o }", "application/sparql-results+json")
            assert status == 200 and json.loads(body)["boolean"] is True
            assert time.monotonic() - start < 5
            for s in trickle:
                s.sendall(b"?")
        slow_body.settimeout(30)
        reply = slow_body.recv(4096)
        assert reply.startswith(b"HTTP/1.1 408"), reply  # the body's deadline (10 s)
    finally:
        for s in idle + trickle + [slow_body]:
            s.close()


def test_a_connection_that_sends_no_request_is_closed(server):
    s = _connect(server)
    s.settimeout(30)
    start = time.monotonic()
    assert s.recv(100) == b""  # closed by the server at the head deadline
    assert 5 < time.monotonic() - start < 25
    s.close()


def test_more_queries_than_slots_wait_or_get_503(mini):
    proc, url = _start(mini, "--timeout", "2", "--max-concurrent", "1")
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    results: list = []
    try:
        threads = [threading.Thread(target=lambda: results.append(_get(url, slow))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        statuses = sorted(r[0] for r in results)
        assert 503 in statuses and 500 in statuses, statuses
        assert _get(url, "ASK { ?s ?p ?o }")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_it_listens_on_loopback_unless_told_otherwise(mini):
    proc, url = _start(mini)
    try:
        assert urllib.parse.urlsplit(url).hostname == "127.0.0.1"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    r = subprocess.run([sys.executable, "-m", "atlas", "serve", "--sparql", "--mcp"], capture_output=True)
    assert r.returncode == 2 and b"--mcp or --sparql" in r.stderr


# --------------------------------------------------------------------------------------------------
# The service description, quads by negotiation, CORS
# --------------------------------------------------------------------------------------------------

def test_get_without_a_query_answers_with_the_service_description(server):
    from rdflib import Graph, URIRef
    from rdflib.namespace import RDF

    from test_linked import SD, VOID, check_vocabularies

    status, ctype, body = _get(server, "")
    assert status == 200 and ctype.startswith("text/turtle"), (status, ctype, body[:300])
    g = Graph().parse(data=body.decode(), format="turtle")
    services = list(g.subjects(RDF.type, URIRef(SD + "Service")))
    assert len(services) == 1
    service = services[0]
    assert g.value(service, URIRef(SD + "endpoint")) == URIRef(server)
    assert (service, URIRef(SD + "supportedLanguage"), URIRef(SD + "SPARQL11Query")) in g
    assert (service, URIRef(SD + "feature"), URIRef(SD + "UnionDefaultGraph")) in g
    assert (service, URIRef(SD + "resultFormat"), URIRef("http://www.w3.org/ns/formats/N-Quads")) in g
    dataset = g.value(service, URIRef(SD + "defaultDataset"))
    assert g.value(dataset, URIRef(VOID + "sparqlEndpoint")) == URIRef(server)
    named = list(g.objects(dataset, URIRef(SD + "namedGraph")))
    assert named and all(g.value(n, URIRef(SD + "name")) for n in named)
    check_vocabularies(g)
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    n = json.loads(_get(server, count, "application/sparql-results+json")[2])["results"]["bindings"][0]["n"]
    assert int(g.value(g.value(dataset, URIRef(SD + "defaultGraph")), URIRef(VOID + "triples"))) == int(n["value"])
    status, ctype, body = _get(server, "", "application/ld+json")
    assert status == 200 and ctype.startswith("application/ld+json")
    assert len(Graph().parse(data=body.decode(), format="json-ld")) == len(g)
    assert _get(server, "", "text/csv")[0] == 406


def test_construct_over_graph_comes_as_n_quads_or_trig(server):
    import pyoxigraph as ox

    q = ("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } "
         "FILTER(STRSTARTS(STR(?g), 'https://ascend-atlas.invalid/graph/concepts/')) }")
    sizes = set()
    for media, fmt in (("application/n-quads", ox.RdfFormat.N_QUADS), ("application/trig", ox.RdfFormat.TRIG)):
        status, ctype, body = _get(server, q, media)
        assert status == 200 and ctype.startswith(media), (media, status, ctype)
        store = ox.Store()
        store.load(body, format=fmt)
        sizes.add(len(store))
    assert len(sizes) == 1 and sizes.pop() > 10


def test_cors_only_for_the_origin_given(server, mini):
    origin = "http://yasgui.example.test"
    q = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"})
    req = urllib.request.Request(server + "?" + q, headers={"Origin": origin})
    with urllib.request.urlopen(req, timeout=30) as resp:  # off by default
        assert resp.headers.get("Access-Control-Allow-Origin") is None
    proc, url = _start(mini, "--cors", origin)
    try:
        req = urllib.request.Request(url + "?" + q, headers={"Origin": origin})
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200 and resp.headers.get("Access-Control-Allow-Origin") == origin
        pre = urllib.request.Request(url, method="OPTIONS", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        with urllib.request.urlopen(pre, timeout=30) as resp:
            assert resp.status == 200 and "POST" in resp.headers.get("Access-Control-Allow-Methods", "")
        other = urllib.request.Request(url + "?" + q, headers={"Origin": "http://elsewhere.test"})
        with urllib.request.urlopen(other, timeout=30) as resp:
            assert resp.headers.get("Access-Control-Allow-Origin") is None
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    bad = subprocess.run([sys.executable, "-m", "atlas", "serve", "--sparql", "--cors", "example.org", "--data",
                          str(mini)], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "is not an origin" in bad.stderr
