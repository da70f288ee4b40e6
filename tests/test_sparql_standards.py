"""The W3C standards, exactly: canonical xsd:dateTime literals that survive every store unchanged,
SPARQL results in the formats the W3C specifies (JSON with its `head`, XML valid against the results
schema, CSV and TSV for SELECT only), and rdflib and pyoxigraph agreeing on queries over the export.
Third-party tools are the oracles: rdflib, pyoxigraph, an Oxigraph server, xmlschema, jsonschema."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import given, settings, strategies as st
from rdflib import Graph

from atlas.linked import sparql
from atlas.commands import sparql_query
from atlas.errors import AtlasError
from atlas.linked.rdf import canonical_datetime
from conftest import DATA
from test_rdf import oxigraph_server  # noqa: F401 - the real Oxigraph server fixture

XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def atlas(*args, env=None, timeout=120):
    cmd = [sys.executable, "-m", "atlas", *args]
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def export_nt(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "atlas.nt"
    r = atlas("export", "--format", "nt", "-o", str(out), "--data", str(DATA))
    assert r.returncode == 0, r.stderr
    return out


def _lexical_graph(nt: bytes) -> Graph:
    """The export as rdflib reads it with literals kept as written (rdflib's default rewrites them)."""
    keep, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        g = Graph()
        g.parse(data=nt.decode("utf-8"), format="nt")
        return g
    finally:
        rdflib.NORMALIZE_LITERALS = keep


def _triples(lines) -> set[str]:
    return {ln.strip() for ln in lines if ln.strip()}


# --------------------------------------------------------------------------------------------------
# Canonical timestamps
# --------------------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(year=st.integers(1, 9999), month=st.integers(1, 12), day=st.integers(1, 28), hour=st.integers(0, 23),
       minute=st.integers(0, 59), second=st.integers(0, 59),
       fraction=st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,6}", fullmatch=True)),
       zone=st.sampled_from(["Z", "+00:00", "-00:00", "+08:00", "-05:30", "+14:00", ""]))
def test_canonical_datetime_is_what_oxigraph_writes_back(year, month, day, hour, minute, second, fraction, zone):
    """Oracle: a value stored in pyoxigraph comes back in the XSD canonical form."""
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{zone}"
    store = ox.Store()
    node = ox.NamedNode("http://example.org/s")
    store.add(ox.Quad(node, node, ox.Literal(text, datatype=ox.NamedNode(XSD_DATETIME))))
    back = next(iter(store.quads_for_pattern(None, None, None))).object.value
    assert canonical_datetime(text) == back
    assert canonical_datetime(back) == back


def test_every_datetime_of_the_export_is_canonical(export_nt):
    stamps = [ln for ln in export_nt.read_text(encoding="utf-8").splitlines() if f'"^^<{XSD_DATETIME}>' in ln]
    assert len(stamps) > 200
    assert not [ln for ln in stamps if "+00:00" in ln or "-00:00" in ln]
    assert all(ln.split('"')[1] == canonical_datetime(ln.split('"')[1]) for ln in stamps)


def _data_only(lines: list[str]) -> list[str]:
    """The export's lines without the dataset's description (the store holds the data it describes)."""
    about = ("<https://ascend-atlas.invalid/id/dataset", "<https://ascend-atlas.invalid/id/agent/")
    return [ln for ln in lines if not ln.startswith(about)]


def test_construct_through_every_store_gives_back_the_export_literal_for_literal(export_nt):
    """The export, CONSTRUCT { ?s ?p ?o } through the embedded store, through rdflib and through a
    real Oxigraph server: the same triples, compared as N-Triples text (so literal for literal)."""
    exported = _triples(_data_only(export_nt.read_text(encoding="utf-8").splitlines()))
    q = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    embedded = _triples(sparql_query(q, "table", DATA, limits={"timeout": 60, "max_rows": 10**6}).out.splitlines())
    assert embedded == exported
    g = _lexical_graph("\n".join(_data_only(export_nt.read_text(encoding="utf-8").splitlines())).encode())
    keep, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        through_rdflib = _triples(g.query(q).graph.serialize(format="nt").splitlines())
    finally:
        rdflib.NORMALIZE_LITERALS = keep
    assert through_rdflib == exported
    assert len([t for t in exported if f'"^^<{XSD_DATETIME}>' in t]) > 200


@pytest.mark.server
def test_an_oxigraph_server_gives_back_the_export_literal_for_literal(export_nt, oxigraph_server):  # noqa: F811
    exported = _triples(export_nt.read_text(encoding="utf-8").splitlines())
    sparql.load_endpoint(export_nt.read_text(encoding="utf-8"), oxigraph_server + "/store")
    got = sparql.run_endpoint("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", oxigraph_server + "/query",
                              timeout=60, formats="nt")
    assert _triples(got.text.splitlines()) == exported


# --------------------------------------------------------------------------------------------------
# Results formats
# --------------------------------------------------------------------------------------------------

# The structure of SPARQL Query Results XML (W3C Recommendation, 2013, section 2 and its schema
# result.xsd), written out here: sparql = head, then results or boolean; head = variable*, link*;
# result = binding*; binding = one of uri, bnode, literal (literal: xml:lang or datatype).
RESULTS_XSD = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:res="http://www.w3.org/2005/sparql-results#"
           targetNamespace="http://www.w3.org/2005/sparql-results#" elementFormDefault="qualified">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace"/>
  <xs:element name="sparql">
    <xs:complexType>
      <xs:sequence>
        <xs:element ref="res:head"/>
        <xs:choice>
          <xs:element ref="res:results"/>
          <xs:element ref="res:boolean"/>
        </xs:choice>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
  <xs:element name="head">
    <xs:complexType>
      <xs:sequence>
        <xs:element ref="res:variable" minOccurs="0" maxOccurs="unbounded"/>
        <xs:element ref="res:link" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
  <xs:element name="variable">
    <xs:complexType><xs:attribute name="name" type="xs:NMTOKEN" use="required"/></xs:complexType>
  </xs:element>
  <xs:element name="link">
    <xs:complexType><xs:attribute name="href" type="xs:anyURI" use="required"/></xs:complexType>
  </xs:element>
  <xs:element name="results">
    <xs:complexType>
      <xs:sequence><xs:element ref="res:result" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
    </xs:complexType>
  </xs:element>
  <xs:element name="boolean" type="xs:boolean"/>
  <xs:element name="result">
    <xs:complexType>
      <xs:sequence><xs:element ref="res:binding" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
    </xs:complexType>
  </xs:element>
  <xs:element name="binding">
    <xs:complexType>
      <xs:choice>
        <xs:element ref="res:uri"/>
        <xs:element ref="res:bnode"/>
        <xs:element ref="res:literal"/>
      </xs:choice>
      <xs:attribute name="name" type="xs:NMTOKEN" use="required"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="uri" type="xs:string"/>
  <xs:element name="bnode" type="xs:string"/>
  <xs:element name="literal">
    <xs:complexType>
      <xs:simpleContent>
        <xs:extension base="xs:string">
          <xs:attribute name="datatype" type="xs:anyURI"/>
          <xs:attribute ref="xml:lang"/>
        </xs:extension>
      </xs:simpleContent>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""

_TERM = {"type": "object", "required": ["type", "value"], "additionalProperties": False,
         "properties": {"type": {"enum": ["uri", "literal", "bnode"]}, "value": {"type": "string"},
                        "xml:lang": {"type": "string"}, "datatype": {"type": "string"}},
         "not": {"required": ["xml:lang", "datatype"]}}
# SPARQL 1.1 Query Results JSON (W3C Recommendation, 2013, section 3), as a JSON Schema.
RESULTS_JSON = {
    "type": "object", "required": ["head"], "additionalProperties": False,
    "properties": {
        "head": {"type": "object", "additionalProperties": False,
                 "properties": {"vars": {"type": "array", "items": {"type": "string"}},
                                "link": {"type": "array", "items": {"type": "string"}}}},
        "results": {"type": "object", "required": ["bindings"],
                    "properties": {"bindings": {"type": "array",
                                                "items": {"type": "object", "additionalProperties": _TERM}}}},
        "boolean": {"type": "boolean"}},
    "oneOf": [{"required": ["results"], "properties": {"head": {"required": ["vars"]}}}, {"required": ["boolean"]}],
}

SELECTS = ["SELECT ?c ?l WHERE { ?c a atlas:Link ; skos:prefLabel ?l } ORDER BY ?c ?l",
           "SELECT ?s ?t WHERE { ?s atlas:committerDate ?t } ORDER BY ?s LIMIT 20",
           "SELECT ?c ?o WHERE { concept:hccs ?p ?o OPTIONAL { ?o skos:prefLabel ?c } } LIMIT 50",
           "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"]
ASKS = ["ASK { ?s ?p ?o }", "ASK { concept:hccs atlas:carries concept:nothing-here }"]


@pytest.fixture(scope="module")
def xml_schema():
    xmlschema = pytest.importorskip("xmlschema")
    return xmlschema.XMLSchema(RESULTS_XSD)


@pytest.mark.parametrize("query", SELECTS + ASKS)
def test_json_results_have_the_spec_structure(query):
    import jsonschema

    doc = json.loads(sparql_query(query, "json", DATA).out)
    jsonschema.validate(doc, RESULTS_JSON)
    assert "head" in doc


@pytest.mark.parametrize("query", SELECTS + ASKS)
def test_xml_results_are_valid_against_the_results_schema(query, xml_schema):
    text = sparql_query(query, "xml", DATA).out
    xml_schema.validate(text)
    back = ox.parse_query_results(text.encode("utf-8"), ox.QueryResultsFormat.XML)  # a second reader
    json_doc = json.loads(sparql_query(query, "json", DATA).out)
    if "boolean" in json_doc:
        assert bool(back) is json_doc["boolean"]
    else:
        assert len(list(back)) == len(json_doc["results"]["bindings"])


def test_the_schema_checks_can_fail(xml_schema):
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"boolean": True}, RESULTS_JSON)  # the ASK answer before: no head
    with pytest.raises(Exception, match="(?i)not an element|unexpected|invalid"):
        xml_schema.validate('<sparql xmlns="http://www.w3.org/2005/sparql-results#"><boolean>true</boolean></sparql>')


def test_ask_in_json_has_a_head_and_csv_tsv_are_refused():
    assert json.loads(sparql_query("ASK { ?s ?p ?o }", "json", DATA).out) == {"head": {}, "boolean": True}
    for fmt in ("csv", "tsv"):
        with pytest.raises(AtlasError, match=f"{fmt.upper()} results are defined for SELECT queries only") as exc:
            sparql_query("ASK { ?s ?p ?o }", fmt, DATA)
        assert "--results table, json or xml" in exc.value.hint
    r = atlas("query", "--sparql", "ASK { ?s ?p ?o }", "--results", "csv", "--data", str(DATA))
    assert r.returncode == 1 and b"defined for SELECT queries only" in r.stderr and b"Traceback" not in r.stderr


def test_csv_and_tsv_of_a_select_read_back():
    """TSV is read back by pyoxigraph term for term; CSV (lossy by design) by Python's csv module."""
    import csv
    import io

    q = SELECTS[0]
    rows = json.loads(sparql_query(q, "json", DATA).out)["results"]["bindings"]
    tsv = sparql_query(q, "tsv", DATA).out + "\n"
    back = list(ox.parse_query_results(tsv.encode("utf-8"), ox.QueryResultsFormat.TSV))
    assert [{k: sparql.term_json(s[k]) for k in ("c", "l")} for s in back] == rows
    text = sparql_query(q, "csv", DATA).out
    table = [r for r in csv.reader(io.StringIO(text + "\n", newline="")) if r]
    assert table[0] == ["c", "l"] and len(table) == len(rows) + 1
    assert [r[1] for r in table[1:]] == [b["l"]["value"] for b in rows]


# --------------------------------------------------------------------------------------------------
# rdflib and pyoxigraph agree over the export
# --------------------------------------------------------------------------------------------------

AGREE = [
    "SELECT ?c WHERE { ?c a skos:Concept } ORDER BY ?c",
    "SELECT ?c ?l WHERE { ?c skos:prefLabel ?l FILTER(lang(?l) = 'zh') } ORDER BY ?c ?l",
    "SELECT ?c ?l WHERE { ?c skos:altLabel ?l } ORDER BY ?c ?l",
    "SELECT ?s ?t WHERE { ?s atlas:committerDate ?t } ORDER BY ?s ?t",
    "SELECT ?s (STR(?t) AS ?text) WHERE { ?s prov:generatedAtTime ?t } ORDER BY ?s",
    "SELECT ?s ?d WHERE { ?s dcterms:date ?d } ORDER BY ?s",
    "SELECT ?h ?a ?b WHERE { ?h prov:startedAtTime ?a ; prov:endedAtTime ?b } ORDER BY ?h",
    "SELECT ?e ?a ?b WHERE { ?e atlas:lineStart ?a ; atlas:lineEnd ?b } ORDER BY ?e",
    "SELECT ?x ?y WHERE { ?x atlas:uses ?y } ORDER BY ?x ?y",
    "SELECT ?x ?y WHERE { ?x skos:related ?y } ORDER BY ?x ?y",
    "SELECT ?k (COUNT(?c) AS ?n) WHERE { ?c skos:broader ?k } GROUP BY ?k ORDER BY ?k",
    "SELECT ?q ?l WHERE { ?q a atlas:Question ; skos:prefLabel ?l } ORDER BY ?q ?l",
    "SELECT ?cl ?st WHERE { ?cl a atlas:Claim ; atlas:status ?st } ORDER BY ?cl",
    "SELECT ?r ?n WHERE { ?r a doap:Project ; doap:name ?n } ORDER BY ?r",
    "SELECT ?f ?s ?o WHERE { ?f atlas:step ?s . ?s atlas:order ?o } ORDER BY ?f ?o",
    "SELECT ?s ?f WHERE { ?s atlas:found ?f } ORDER BY ?s",
    "SELECT ?p WHERE { ?p a owl:ObjectProperty } ORDER BY ?p",
    "SELECT ?c ?d WHERE { ?c skos:definition ?d FILTER(lang(?d) = 'en') } ORDER BY ?c ?d",
    "SELECT (MAX(?t) AS ?newest) WHERE { ?h prov:endedAtTime ?t }",
    "SELECT ?m WHERE { ?s dcterms:modified ?m }",
]


def _rdflib_rows(g: Graph, query: str) -> list[tuple]:
    full, _ = sparql.with_prefixes(query)
    keep, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        result = g.query(full)
        return [tuple(None if v is None else v.n3() for v in row) for row in result]
    finally:
        rdflib.NORMALIZE_LITERALS = keep


def _oxigraph_rows(query: str, names: list[str]) -> list[tuple]:
    doc = json.loads(sparql_query(query, "json", DATA, limits={"max_rows": 10**6}).out)
    rows = []
    for b in doc["results"]["bindings"]:
        rows.append(tuple(_n3(b.get(n)) for n in names))
    return rows


def _n3(term: dict | None):
    if term is None:
        return None
    if term["type"] == "uri":
        return f"<{term['value']}>"
    lit = rdflib.Literal(term["value"], lang=term.get("xml:lang"),
                         datatype=term.get("datatype"), normalize=False)
    return lit.n3()


def test_rdflib_and_pyoxigraph_agree_on_twenty_queries_literals_included(export_nt):
    assert len(AGREE) == 20
    g = _lexical_graph("\n".join(_data_only(export_nt.read_text(encoding="utf-8").splitlines())).encode())
    for query in AGREE:
        theirs = _rdflib_rows(g, query)
        ours = _oxigraph_rows(query, [str(v) for v in g.query(sparql.with_prefixes(query)[0]).vars])
        assert theirs, query
        assert sorted(ours, key=repr) == sorted(theirs, key=repr), query
