"""RDF export round trip, SHACL, the read-only SPARQL guard, and a real Oxigraph server on loopback."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, SKOS

from atlas.cli import cli
from atlas.errors import AtlasError
from atlas.model.core import RELATION_TYPES, KINDS, Text
from atlas.linked.rdf import CONCEPT, build_graph, kind_class, relation_property
from atlas.linked import sparql
from conftest import ROOT


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.parametrize("fmt", ["ttl", "nt", "jsonld"])
def test_export_round_trip(mini, tmp_path, fmt):
    out = tmp_path / f"atlas.{fmt}"
    run("export", "--data", str(mini), "--format", fmt, "-o", str(out))
    g = Graph().parse(out, format={"ttl": "turtle", "nt": "nt", "jsonld": "json-ld"}[fmt])
    from atlas.index.compiled import load_atlas
    expected = build_graph(load_atlas(mini), mini / "ontology.ttl")
    described = {s for s in g.subjects() if str(s).startswith(("https://ascend-atlas.invalid/id/dataset",
                                                                "https://ascend-atlas.invalid/id/agent/"))}
    assert len(g) == len(expected) + sum(1 for t in g if t[0] in described)  # the data, and its description
    bus = CONCEPT["bus-x"]
    assert (bus, SKOS.prefLabel, Literal("X 总线", lang="zh")) in g
    assert (bus, relation_property("alternative-to"), CONCEPT["net-y"]) in g
    assert (CONCEPT["lib-s"], relation_property("built-on"), CONCEPT["lib-c"]) in g


def test_export_is_deterministic(mini):
    a = run("export", "--data", str(mini), "--format", "ttl")
    b = run("export", "--data", str(mini), "--format", "ttl")
    assert a == b
    assert run("export", "--data", str(mini), "--format", "jsonld") == \
        run("export", "--data", str(mini), "--format", "jsonld")


def test_ontology_matches_the_model():
    g = Graph().parse(ROOT / "data" / "ontology.ttl", format="turtle")
    for kind in KINDS:
        assert (kind_class(kind), None, None) in g, kind
    for fwd, inv in RELATION_TYPES.items():
        p = relation_property(fwd)
        if fwd == inv:
            assert (p, None, OWL.SymmetricProperty) in g
        else:
            assert (p, OWL.inverseOf, relation_property(inv)) in g
        assert any(o.language == "zh" for o in g.objects(p, URIRef("http://www.w3.org/2000/01/rdf-schema#label")))


def test_shacl_passes_on_fixture_and_catches_a_broken_atlas(mini):
    from atlas.index.compiled import load_atlas
    from atlas.linked.shacl import validate_graph

    shutil.copy(ROOT / "data" / "shapes.ttl", mini / "shapes.ttl")
    shutil.copy(ROOT / "data" / "ontology.ttl", mini / "ontology.ttl")
    atlas = load_atlas(mini)
    assert validate_graph(atlas, mini) == []
    atlas.concept("bus-x").names = Text(en="Bus X")          # no Chinese label
    atlas.concept("net-y").evidence = []                      # no evidence
    violations = validate_graph(atlas, mini)
    by_focus = {(v["focus"], v["message"]) for v in violations}
    assert ("concept/bus-x", "a concept needs exactly one prefLabel in English and one in Chinese") in by_focus
    assert ("concept/net-y", "a concept needs at least one piece of evidence") in by_focus


def test_validate_runs_shacl(mini):
    shutil.copy(ROOT / "data" / "shapes.ttl", mini / "shapes.ttl")
    shapes = (mini / "shapes.ttl").read_text().replace('sh:maxInclusive "2026-08-26"', 'sh:maxInclusive "2024-01-01"')
    (mini / "shapes.ttl").write_text(shapes)
    out = run("validate", "--data", str(mini), code=1)
    assert "error: sighting/" in out and "research cut-off" in out
    # reported at the sighting's item in the timeline, not inside shapes.ttl
    lines = [line for line in out.splitlines() if "error: sighting/" in line]
    assert lines and all("timeline.yaml:" in line and "shapes.ttl" not in line for line in lines)
    run("validate", "--data", str(mini), "--no-shacl")


@pytest.mark.parametrize("update", [
    "INSERT DATA { <a:b> <a:c> <a:d> }", "DELETE WHERE { ?s ?p ?o }", "LOAD <http://example.org/x>",
    "CLEAR ALL", "DROP GRAPH <a:g>", "insert { ?s ?p 1 } where { ?s ?p ?o }",
    "PREFIX x: <a:>\n# comment\nCREATE GRAPH <a:g>",
])
def test_read_only_guard_refuses_updates(mini, update):
    with pytest.raises(AtlasError, match="SPARQL Update"):
        sparql.guard(update)
    result = CliRunner().invoke(cli, ["query", "--data", str(mini), "--sparql", update])
    assert result.exit_code == 1 and "read-only" in str(result.exception)


def test_guard_ignores_keywords_inside_strings_and_iris():
    sparql.guard('SELECT ?x WHERE { ?x ?p "please DELETE me" . ?x ?q <http://e.org/LOAD> } # DROP')


def test_malformed_query_reports_line_and_column(mini):
    result = CliRunner().invoke(cli, ["query", "--data", str(mini), "--sparql", "SELECT ?c\nWHERE { ?c a }"])
    assert result.exit_code == 1
    err = result.exception
    assert isinstance(err, AtlasError) and err.location.line == 2 and err.location.col > 1


def test_embedded_select_ask_and_formats(mini):
    q = "SELECT ?c WHERE { ?c atlas:answersQuestion question:link } ORDER BY ?c"
    table = run("query", "--data", str(mini), "--sparql", q)
    assert "concept:bus-x" in table and "concept:net-y" in table and "2 row(s)" in table
    js = json.loads(run("query", "--data", str(mini), "--sparql", q, "--format", "json"))
    assert [b["c"]["value"].rsplit("/", 1)[-1] for b in js["results"]["bindings"]] == ["bus-x", "net-y"]
    csv = run("query", "--data", str(mini), "--sparql", q, "--results", "csv")
    assert csv.splitlines()[0] == "c"
    assert run("query", "--data", str(mini), "--sparql",
               "ASK { concept:lib-c atlas:lifecycle 'pending-deprecation' }").strip() == "true"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def oxigraph_server(tmp_path):
    exe = shutil.which("oxigraph", path=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    assert exe, "the oxigraph server (PyPI package `oxigraph`) is not installed: pip install '.[test]'"
    port = _free_port()
    proc = subprocess.Popen([exe, "serve", "--location", str(tmp_path / "store"), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/query?query=ASK%7B%7D", timeout=1).read()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(proc.stderr.read().decode())
                time.sleep(0.1)
        else:
            raise RuntimeError("oxigraph did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.server
def test_real_oxigraph_server_answers_like_the_embedded_store(mini, oxigraph_server):
    out = run("export", "--data", str(mini), "--to-endpoint", oxigraph_server + "/store")
    assert "loaded" in out and "HTTP 20" in out
    q = "SELECT ?c ?l WHERE { ?c a skos:Concept ; skos:prefLabel ?l } ORDER BY ?c ?l"
    remote = json.loads(run("query", "--data", str(mini), "--endpoint", oxigraph_server + "/query",
                            "--sparql", q, "--format", "json"))
    local = json.loads(run("query", "--data", str(mini), "--sparql", q, "--format", "json"))
    assert remote["results"]["bindings"] == local["results"]["bindings"]
    assert len(local["results"]["bindings"]) == 2 * (8 + len(KINDS))  # concepts and kinds, en + zh
    # the server answers from both ends of a relation, and with SKOS terms, as the embedded store does
    for q in ("SELECT ?x WHERE { concept:lib-c atlas:underlies ?x } ORDER BY ?x",
              "SELECT ?x WHERE { concept:net-y atlas:alternativeTo ?x } ORDER BY ?x",
              "SELECT ?x WHERE { concept:lib-c skos:related ?x } ORDER BY ?x",
              "SELECT ?k WHERE { ?k skos:topConceptOf ?s } ORDER BY ?k"):
        remote = run("query", "--endpoint", oxigraph_server + "/query", "--sparql", q, "--results", "csv")
        local = run("query", "--data", str(mini), "--sparql", q, "--results", "csv")
        assert remote == local and len(local.splitlines()) > 1, q
    q = "CONSTRUCT { ?x atlas:carries ?y } WHERE { ?x atlas:carries ?y }"
    remote = run("query", "--endpoint", oxigraph_server + "/query", "--sparql", q, "--format", "json")
    local = run("query", "--data", str(mini), "--sparql", q, "--format", "json")
    assert remote == local and json.loads(local)["@graph"]
    # loading again replaces rather than duplicates
    run("export", "--data", str(mini), "--to-endpoint", oxigraph_server + "/store")
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    n1 = json.loads(run("query", "--endpoint", oxigraph_server + "/query", "--sparql", count, "--format", "json"))
    g = Graph().parse(data=run("export", "--data", str(mini), "--format", "nt"), format="nt")
    assert int(n1["results"]["bindings"][0]["n"]["value"]) == len(g)


def test_unreachable_endpoint_and_http_error(mini, oxigraph_server):
    port = _free_port()
    result = CliRunner().invoke(cli, ["query", "--endpoint", f"http://127.0.0.1:{port}/query", "--sparql", "ASK {}"])
    assert result.exit_code == 1 and f"cannot reach http://127.0.0.1:{port}/query" in str(result.exception)
    result = CliRunner().invoke(cli, ["query", "--endpoint", oxigraph_server + "/nope", "--sparql", "ASK {}"])
    assert result.exit_code == 1 and "HTTP 404" in str(result.exception)
