"""Linked data as outside tools see it: skosify's checks, an OWL RL closure (owlrl), a complete declared
vocabulary, relations from both ends matching `atlas related`, PROV for harvests, UTC days, the shapes
and their invalid fixtures, SHACL problems at data lines, SPARQL CSV/TSV and JSON-LD."""
from __future__ import annotations

import csv
import io
import json
import logging
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD

from atlas.view import queries
from atlas.cli import cli
from atlas.index.compiled import load_atlas
from atlas.model.core import KINDS, RELATION_TYPES, Atlas, Concept, Relation, Text, utc_day
from atlas.linked.rdf import (
    ATLAS, CONCEPT, SCHEME_IRI, build_graph, datetime_literal, harvest_iri, inverse_property, kind_iri,
    relation_property, repo_iri, serialize,
)
from conftest import DATA, ROOT, write

SHAPES = ROOT / "tests" / "fixtures" / "shacl"
FOREIGN = ("http://www.w3.org/2004/02/skos/core#", "http://www.w3.org/ns/prov#",
           "http://usefulinc.com/ns/doap#", str(ATLAS))


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def bundled():
    """The bundled atlas and its export (built once for the module)."""
    atlas = load_atlas(DATA)
    return atlas, build_graph(atlas, DATA / "ontology.ttl")


def _all_relation_names():
    return {name: relation_property(name) for name in [*RELATION_TYPES, *RELATION_TYPES.values()]}


# ---------------------------------------------------------------------------------------------
# SKOS: one scheme, kinds on top, links as skos:related; skosify finds nothing to mend
# ---------------------------------------------------------------------------------------------

def test_scheme_holds_every_concept_with_the_kinds_on_top(bundled):
    atlas, g = bundled
    assert list(g.subjects(RDF.type, SKOS.ConceptScheme)) == [SCHEME_IRI]
    for p in (DCTERMS.title, DCTERMS.description):
        assert {o.language for o in g.objects(SCHEME_IRI, p)} == {"en", "zh"}
    newest = max(h.harvested_at for h in atlas.harvests)
    assert g.value(SCHEME_IRI, DCTERMS.modified) == datetime_literal(newest)
    assert set(g.objects(SCHEME_IRI, SKOS.hasTopConcept)) == {kind_iri(k) for k in KINDS}
    concepts = set(g.subjects(RDF.type, SKOS.Concept))
    assert len(concepts) == len(atlas.concepts) + len(KINDS)
    assert all((c, SKOS.inScheme, SCHEME_IRI) in g for c in concepts)
    for c in atlas.concepts:
        assert list(g.objects(CONCEPT[c.id], SKOS.broader)) == [kind_iri(c.kind)]
        assert (kind_iri(c.kind), SKOS.narrower, CONCEPT[c.id]) in g
    assert {o.language for o in g.objects(kind_iri("link"), SKOS.prefLabel)} == {"en", "zh"}


def _skosify_messages(g: Graph) -> list[tuple[str, str]]:
    import skosify

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append((record.levelname, record.getMessage()))

    root = logging.getLogger()
    handler, level = Keep(), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        copy = Graph()
        for t in g:
            copy.add(t)
        skosify.skosify(copy, label=None)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    return records


def test_skosify_finds_no_loose_concepts_and_no_label_problems(bundled):
    _atlas, g = bundled
    messages = _skosify_messages(g)
    assert messages, "skosify logged nothing: the check would pass vacuously"
    loose = [m for _, m in messages if "loose concept" in m]
    labels = [m for _, m in messages if "prefLabel" in m or "altLabel" in m or "hiddenLabel" in m]
    warnings = [m for lvl, m in messages if lvl in ("WARNING", "ERROR", "CRITICAL")]
    assert loose == [] and labels == [] and warnings == []


def test_skosify_check_can_fail():
    """The same check on a concept outside any hierarchy, and a doubled prefLabel, reports both."""
    g = Graph()
    c = URIRef("https://example.invalid/c")
    g.add((c, RDF.type, SKOS.Concept))
    g.add((c, SKOS.prefLabel, Literal("a", lang="en")))
    g.add((c, SKOS.prefLabel, Literal("b", lang="en")))
    text = " ".join(m for _, m in _skosify_messages(g))
    assert "loose concept" in text and "more than one prefLabel" in text


def test_every_relation_is_a_skos_related_and_written_from_both_ends(bundled):
    atlas, g = bundled
    ont = Graph().parse(DATA / "ontology.ttl")
    for name, p in _all_relation_names().items():
        assert set(ont.objects(p, RDFS.subPropertyOf)) == {SKOS.related}, name
    forward = 0
    for r in atlas.relations():
        s, t = CONCEPT[r.source], CONCEPT[r.target]
        assert (s, relation_property(r.type), t) in g
        assert (t, inverse_property(r.type), s) in g
        assert (s, SKOS.related, t) in g and (t, SKOS.related, s) in g
        forward += 1
    assert forward > 300
    # the questions from the report: the card's 11 "carries" of HCCS, and analogy from NVLink's end
    assert len(set(g.objects(CONCEPT["hccs"], ATLAS.carries))) == 11
    assert (CONCEPT["nvlink"], ATLAS.analogousTo, CONCEPT["hccs"]) in g


# ---------------------------------------------------------------------------------------------
# OWL RL: the closure adds no relation triple the export lacks, and types nothing new
# ---------------------------------------------------------------------------------------------

def _closure(g: Graph) -> set:
    import owlrl

    before = set(g)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False,
                           datatype_axioms=False).expand(g)
    return set(g) - before


def _inverse_or_symmetric(ont: Graph) -> set:
    props = set(ont.subjects(RDF.type, OWL.SymmetricProperty))
    for a, b in ont.subject_objects(OWL.inverseOf):
        props |= {a, b}
    return props


def test_owl_rl_closure_adds_nothing_the_mini_export_lacks(mini):
    g = build_graph(load_atlas(mini), DATA / "ontology.ttl")
    props = _inverse_or_symmetric(g)
    assert ATLAS.carries in props and SKOS.related in props
    added = _closure(g)
    assert [t for t in added if t[1] in props] == []
    assert [t for t in added if t[1] == SKOS.related or t[1] == SKOS.broader] == []
    # domains and ranges hold for every use: the reasoner types nothing into our classes
    assert [t for t in added if t[1] == RDF.type and str(t[2]).startswith(FOREIGN)] == []


def test_owl_rl_closure_adds_no_relation_triple_on_the_bundled_atlas(bundled):
    """Over the bundled export's triples of every inverse or symmetric property (relations, SKOS links)
    plus the ontology: the rules that derive such triples (inverse, symmetric, sub- and equivalent
    properties) need nothing else, and the whole export takes a minute in owlrl."""
    _atlas, g = bundled
    ont = Graph().parse(DATA / "ontology.ttl")
    props = _inverse_or_symmetric(ont)
    sub = Graph()
    for t in ont:
        sub.add(t)
    for p in props:
        for t in g.triples((None, p, None)):
            sub.add(t)
    assert len(sub) - len(ont) > 1500
    added = _closure(sub)
    assert [t for t in added if t[1] in props] == []


def test_owl_rl_check_can_fail(mini):
    """Drop the materialised inverses and the closure brings them back: the check above would see it."""
    g = build_graph(load_atlas(mini), DATA / "ontology.ttl")
    for s, p, o in list(g.triples((None, relation_property("underlies"), None))):
        g.remove((s, p, o))
    added = _closure(g)
    assert (CONCEPT["lib-c"], relation_property("underlies"), CONCEPT["lib-s"]) in added


# ---------------------------------------------------------------------------------------------
# The vocabulary
# ---------------------------------------------------------------------------------------------

def _declared(ont: Graph):
    kinds = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)
    return {s for k in kinds for s in ont.subjects(RDF.type, k)}


def _undeclared(g: Graph, ont: Graph) -> set:
    used = {p for p in g.predicates() if str(p).startswith(str(ATLAS))}
    used |= {o for o in g.objects(None, RDF.type) if str(o).startswith(str(ATLAS))}
    return used - _declared(ont)


def test_every_atlas_term_used_is_declared_labelled_and_explained(bundled, mini):
    _atlas, g = bundled
    ont = Graph().parse(DATA / "ontology.ttl")
    mini_g = build_graph(load_atlas(mini), DATA / "ontology.ttl")
    assert _undeclared(g, ont) == set() and _undeclared(mini_g, ont) == set()
    for term in _declared(ont):
        if not str(term).startswith(str(ATLAS)):
            continue
        for p in (RDFS.label, RDFS.comment):
            langs = sorted(o.language for o in ont.objects(term, p))
            assert langs == ["en", "zh"], f"{term} {p}: {langs}"


def test_undeclared_property_is_caught(mini):
    g = build_graph(load_atlas(mini), DATA / "ontology.ttl")
    ont = Graph().parse(DATA / "ontology.ttl")
    g.add((CONCEPT["bus-x"], ATLAS.colour, Literal("blue")))
    assert _undeclared(g, ont) == {ATLAS.colour}


def test_domains_and_ranges_hold_for_every_use(bundled):
    """A declared domain or range is true of every subject and object in the export."""
    _atlas, g = bundled
    ont = Graph().parse(DATA / "ontology.ttl")
    supers = {}
    for cls, sup in ont.subject_objects(RDFS.subClassOf):
        supers.setdefault(cls, set()).add(sup)

    def types(node):
        out = set(g.objects(node, RDF.type))
        for t in list(out):
            out |= supers.get(t, set())
        return out

    checked = 0
    for p in _declared(ont):
        domain, rng = ont.value(p, RDFS.domain), ont.value(p, RDFS.range)
        for s, o in g.subject_objects(p):
            if domain is not None:
                assert domain in types(s), f"{s} uses {p} but is no {domain}"
            if rng is None:
                continue
            if isinstance(o, Literal):
                want = RDF.langString if o.language else (o.datatype or XSD.string)
                assert rng == want, f"{p} {o!r}: range {rng}"
            else:
                assert rng in types(o), f"{p} -> {o}: no {rng}"
            checked += 1
    assert checked > 5000


# ---------------------------------------------------------------------------------------------
# Both ends: `atlas related` and SPARQL give the same neighbours, for every relation type
# ---------------------------------------------------------------------------------------------

def _sparql_triples(nt_text: str) -> set:
    import pyoxigraph as ox

    store = ox.Store()
    store.load(nt_text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    names = {str(p): n for n, p in _all_relation_names().items()}
    values = " ".join(f"<{p}>" for p in names)
    q = f"SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o }}"
    cut = len(str(CONCEPT))
    return {(sol["s"].value[cut:], names[sol["p"].value], sol["o"].value[cut:]) for sol in store.query(q)}


def _related_rows(atlas: Atlas) -> tuple[set, set]:
    """(concept, name, neighbour) rows and (type, concept, neighbour) pairs from `atlas related`."""
    rows, pairs = set(), set()
    for c in atlas.concepts:
        for rtype in RELATION_TYPES:
            for row in queries.related(atlas, c, rel=rtype):
                rows.add((c.id, row["relation"], row["id"]))
                pairs.add((rtype, c.id, row["id"]))
    return rows, pairs


def _agree(atlas: Atlas, triples: set) -> None:
    rows, pairs = _related_rows(atlas)
    inverse = {inv: fwd for fwd, inv in RELATION_TYPES.items()}
    sparql_pairs = {(inverse.get(name, name), s, o) for s, name, o in triples}
    assert rows <= triples
    assert pairs == sparql_pairs


def test_related_and_sparql_agree_on_every_relation_of_the_bundled_atlas(bundled):
    atlas, g = bundled
    triples = _sparql_triples(serialize(g, "nt"))
    _agree(atlas, triples)
    used = {name for _, name, _ in triples}
    assert used >= set(RELATION_TYPES) - {"replaces"} | {"carries", "used-by", "has-part"}


def test_related_command_and_sparql_command_agree(mini):
    for concept, rel, prop in (("lib-c", "underlies", "underlies"), ("net-y", "alternative-to", "alternativeTo"),
                               ("bus-x", "alternative-to", "alternativeTo")):
        related = json.loads(run("related", concept, "--rel", rel, "--data", str(mini), "--format", "json"))
        ids = sorted(r["id"] for r in related["related"])
        out = run("query", "--data", str(mini), "--sparql",
                  f"SELECT ?x WHERE {{ concept:{concept} atlas:{prop} ?x }} ORDER BY ?x", "--results", "csv")
        assert [line.rsplit("/", 1)[-1] for line in out.splitlines()[1:]] == ids and ids


ids = st.sampled_from(["a", "b", "c", "d", "e"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(RELATION_TYPES)), ids, ids), max_size=12))
def test_related_and_sparql_agree_on_random_relations(edges):
    """Oracle: for random relation sets, the store answers from each end what `related` walks."""
    rels = {}
    for rtype, s, t in edges:
        if s != t:
            rels.setdefault(s, []).append(Relation(rtype, s, t))
    concepts = [Concept(i, "concept", Text(en=i.upper(), zh=i), relations=rels.get(i, [])) for i in "abcde"]
    atlas = Atlas(concepts=concepts)
    _agree(atlas, _sparql_triples(serialize(build_graph(atlas), "nt")))


# ---------------------------------------------------------------------------------------------
# PROV for harvests, and UTC days
# ---------------------------------------------------------------------------------------------

def test_each_harvest_is_an_activity_and_each_sighting_was_generated_by_one(bundled):
    atlas, g = bundled
    for h in atlas.harvests:
        act = harvest_iri(h.repo, h.harvested_at, h.head)
        assert {PROV.Activity, ATLAS.Harvest} <= set(g.objects(act, RDF.type))
        assert g.value(act, PROV.endedAtTime) == datetime_literal(h.harvested_at)
        assert g.value(act, ATLAS.cutoff) == Literal(h.cutoff, datatype=XSD.date)
        assert g.value(act, ATLAS.repository) == repo_iri(h.repo)
        used = g.value(act, PROV.used)
        assert g.value(used, ATLAS.commit) == Literal(h.head) and g.value(used, ATLAS.repository) == repo_iri(h.repo)
        assert (used, RDF.type, PROV.Entity) in g
        # a start time only where the harvest recorded one: nothing is made up
        started = g.value(act, PROV.startedAtTime)
        if h.started_at:
            assert started == datetime_literal(h.started_at) and h.started_at <= h.harvested_at
        else:
            assert started is None
    sightings = list(g.subjects(RDF.type, ATLAS.Sighting))
    assert len(sightings) == len(atlas.sightings)
    for node in sightings:
        act = g.value(node, PROV.wasGeneratedBy)
        assert (act, RDF.type, PROV.Activity) in g
        assert g.value(node, PROV.generatedAtTime) == g.value(act, PROV.endedAtTime)
    assert all(g.value(e, PROV.hadPrimarySource) is not None for e in g.objects(None, ATLAS.evidence))


def test_sighting_dates_are_utc_days_with_typed_timestamps(bundled):
    atlas, g = bundled
    shifted = 0
    for node in g.subjects(RDF.type, ATLAS.Sighting):
        stamp = g.value(node, ATLAS.committerDate)
        if stamp is None:
            continue
        assert stamp.datatype == XSD.dateTime
        day = g.value(node, DCTERMS.date)
        assert day.datatype == XSD.date and str(day) == utc_day(str(stamp))
        shifted += str(day) != str(stamp)[:10]
    assert shifted == 15  # the sightings whose local day is not their UTC day (hixl 74d4d3e8 gives 2)


# ---------------------------------------------------------------------------------------------
# Shapes and where their problems are reported
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture, expected", [
    ("project.ttl", ["a repository needs one name owner/name", "a repository needs one status",
                     "a repository's locations are doap:GitRepository nodes"]),
    ("flow.ttl", ["a flow needs one kebab-case identifier", "a flow needs its title in English and Chinese",
                  "a flow needs at least one step"]),
    ("question.ttl", ["a question's identifier is one of", "a question needs its wording in English and Chinese"]),
    ("answer.ttl", ["an answer is to exactly one of the six questions", "an answer belongs to exactly one concept",
                    "an answer needs its text in English and Chinese"]),
    ("harvest.ttl", ["a harvest reads one listed repository", "a commit is 40 lowercase hex digits",
                     "xsd:dateTime"]),
])
def test_shapes_catch_their_invalid_fixtures(fixture, expected):
    from atlas.linked.shacl import check

    shapes = Graph().parse(DATA / "shapes.ttl")
    messages = [v["message"] for v in check(Graph().parse(SHAPES / fixture), shapes)]
    for text in expected:
        assert any(text in m for m in messages), (text, messages)


def _timeline_line(path: Path, marker: str) -> int:
    """The line of the `- ` item that contains `marker` in a timeline file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    hit = next(i for i, line in enumerate(lines) if marker in line)
    return next(i for i in range(hit, -1, -1) if lines[i].startswith("- ")) + 1


def _add_sighting(mini: Path, committer_date: str, cutoff: str = "2026-08-26") -> None:
    text = (mini / "timeline.yaml").read_text(encoding="utf-8")
    text += (f"- concept: net-y\n  cutoff: '{cutoff}'\n  found: true\n"
             f"  sha: 5555555555555555555555555555555555555555\n  committer_date: '{committer_date}'\n"
             "  precision: exact\n  head: 1111111111111111111111111111111111111111\n"
             "  method: term\n  value: NET_Y_LATE\n  repo: example/hccl\n")
    write(mini / "timeline.yaml", text)


def test_late_evening_commit_before_the_cut_off_passes(mini):
    # 01:30 on the 27th in UTC+8 is 17:30 on the 26th in UTC: visible by the cut-off
    _add_sighting(mini, "2026-08-27T01:30:00+08:00")
    run("validate", "--data", str(mini))
    g = build_graph(load_atlas(mini), mini / "ontology.ttl")
    days = {str(d) for d in g.objects(None, DCTERMS.date)}
    assert "2026-08-26" in days and "2026-08-27" not in days


def test_shacl_problems_point_at_the_timeline_line(mini):
    _add_sighting(mini, "2025-03-01T23:30:00-08:00", cutoff="2025-03-01")  # UTC: 2 March, after its cut-off
    out = run("validate", "--data", str(mini), "--format", "json", code=1)
    problems = [p for p in json.loads(out)["problems"] if p["code"] == "shacl"]
    assert len(problems) == 1, problems
    p = problems[0]
    assert "after its own cut-off" in p["message"] and "2025-03-02" in p["message"]
    assert p["file"].endswith("timeline.yaml") and p["line"] == _timeline_line(mini / "timeline.yaml", "NET_Y_LATE")


def test_shacl_problems_point_at_the_concept_file(mini):
    from atlas.linked.shacl import validate_graph

    atlas = load_atlas(mini)
    atlas.concept("bus-x").names = Text(en="Bus X")
    (v,) = [v for v in validate_graph(atlas, mini) if v["focus"] == "concept/bus-x"]
    assert v["location"].file.endswith("bus-x.yaml") and v["location"].line == 1


# ---------------------------------------------------------------------------------------------
# The SPARQL front end
# ---------------------------------------------------------------------------------------------

def test_free_prefixes_stay_when_a_query_declares_its_own(mini):
    q = ("PREFIX ex: <https://example.invalid/>\nPREFIX concept: <https://ascend-atlas.invalid/id/concept/>\n"
         "SELECT ?x WHERE { concept:lib-c atlas:underlies ?x }")
    out = run("query", "--data", str(mini), "--sparql", q, "--results", "csv")
    assert out.splitlines()[1:] == ["https://ascend-atlas.invalid/id/concept/lib-s"]
    # a syntax error is still reported at the user's line
    result = CliRunner().invoke(cli, ["query", "--data", str(mini), "--sparql",
                                      "PREFIX ex: <a:>\nSELECT ?x WHERE { ?x }"])
    assert result.exit_code == 1 and result.exception.location.line == 2


def test_csv_and_tsv_follow_sparql_1_1(mini):
    q = ("SELECT ?c ?l ?n WHERE { ?c a atlas:Link ; skos:prefLabel ?l . "
         "OPTIONAL { ?c atlas:lifecycle ?n } } ORDER BY ?c ?l")
    result = CliRunner().invoke(cli, ["query", "--data", str(mini), "--sparql", q, "--results", "csv"])
    out = result.stdout_bytes.decode("utf-8")  # (`.output` folds CRLF into LF)
    assert "\r\n" in out and out.endswith("\r\n")
    rows = list(csv.reader(io.StringIO(out, newline="")))
    assert rows[0] == ["c", "l", "n"] and len(rows) > 2
    for c, label, status in rows[1:]:
        assert c.startswith("https://ascend-atlas.invalid/id/concept/")
        assert "@" not in label and label and status == "active"
    tsv = run("query", "--data", str(mini), "--sparql", q, "--results", "tsv")
    head, *lines = tsv.splitlines()
    assert head == "?c\t?l\t?n"
    cells = [line.split("\t") for line in lines]
    assert all(c.startswith("<https://") and re.match(r'^".*"@(en|zh)$', lbl) for c, lbl, _ in cells)
    # the embedded store and the launcher's fast path print the same bytes
    import contextlib

    from atlas import fastpaths, launch

    argv = ["query", "--sparql", q, "--results", "csv", "--data", str(mini)]
    assert fastpaths._fast_sparql(argv) is not None  # answered without click
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit) as ended:
        launch.main(argv)
    assert ended.value.code == 0 and buf.getvalue() == out


def test_construct_and_describe_give_json_ld(mini):
    for q in ("CONSTRUCT { ?x atlas:underlies ?y } WHERE { ?x atlas:underlies ?y }",
              "DESCRIBE concept:bus-x"):
        out = run("query", "--data", str(mini), "--sparql", q, "--format", "json")
        doc = json.loads(out)
        assert doc["@context"]["concept"] == str(CONCEPT)
        parsed = Graph().parse(data=out, format="json-ld")
        nt = run("query", "--data", str(mini), "--sparql", q)
        assert set(parsed) == set(Graph().parse(data=nt, format="nt")) and len(parsed)
    assert '"@id": "concept:lib-c"' in run("query", "--data", str(mini), "--sparql",
                                           "CONSTRUCT { ?x atlas:underlies ?y } WHERE { ?x atlas:underlies ?y }",
                                           "--format", "json")


def test_export_jsonld_is_compacted_with_a_context(mini, tmp_path):
    out = tmp_path / "atlas.jsonld"
    run("export", "--data", str(mini), "--format", "jsonld", "-o", str(out))
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["@context"]["skos"] == str(SKOS) and doc["@context"]["concept"] == str(CONCEPT)
    nodes = {n["@id"]: n for n in doc["@graph"]}
    assert "skos:prefLabel" in nodes["concept:bus-x"]
    g = Graph().parse(out, format="json-ld")
    nt = Graph().parse(data=run("export", "--data", str(mini), "--format", "nt"), format="nt")
    assert set(g) == set(nt)


def test_linked_data_examples_are_current():
    """Each `$ atlas ...` block in docs/linked-data.md prints what the page shows."""
    import runpy

    script = runpy.run_path(str(ROOT / "scripts" / "docs_linked.py"))
    readme = (ROOT / "docs" / "linked-data.md").read_text(encoding="utf-8")
    start, end = script["_section"](readme)
    assert len(script["BLOCK"].findall(readme[start:end])) >= 4
    assert script["main"](["--check"]) == 0, \
        "docs/linked-data.md examples are stale: run python scripts/docs_linked.py"


# ---------------------------------------------------------------------------------------------
# The dataset's description (VoID), its licence, and the named graphs leaving the tool (N-Quads, TriG)
# ---------------------------------------------------------------------------------------------

VOID = "http://rdfs.org/ns/void#"
SD = "http://www.w3.org/ns/sparql-service-description#"
# the terms the VoID vocabulary (W3C Interest Group Note, 2011, section 6 and its RDFS) and the SPARQL 1.1
# Service Description (W3C Recommendation, 2013, section 3) define, written out here
VOID_TERMS = {"Dataset", "Linkset", "TechnicalFeature", "DatasetDescription", "class", "classes", "classPartition",
              "dataDump", "distinctObjects", "distinctSubjects", "documents", "entities", "exampleResource",
              "feature", "inDataset", "linkPredicate", "objectsTarget", "openSearchDescription", "properties",
              "property", "propertyPartition", "rootResource", "sparqlEndpoint", "subjectsTarget", "subset",
              "target", "triples", "uriLookupEndpoint", "uriRegexPattern", "uriSpace", "vocabulary"}
SD_TERMS = {"Service", "Feature", "Language", "Function", "Aggregate", "EntailmentRegime", "EntailmentProfile",
            "GraphCollection", "Dataset", "Graph", "NamedGraph", "endpoint", "feature", "defaultEntailmentRegime",
            "entailmentRegime", "defaultSupportedEntailmentProfile", "supportedEntailmentProfile",
            "extensionFunction", "extensionAggregate", "languageExtension", "supportedLanguage",
            "propertyFeature", "defaultDataset", "availableGraphs", "resultFormat", "inputFormat",
            "defaultGraph", "namedGraph", "name", "graph", "SPARQL10Query", "SPARQL11Query", "SPARQL11Update",
            "DereferencesURIs", "UnionDefaultGraph", "RequiresDataset", "EmptyGraphs", "BasicFederatedQuery"}
# domains the specifications give (subject must have the class)
DOMAINS = {SD + "endpoint": SD + "Service", SD + "supportedLanguage": SD + "Service",
           SD + "resultFormat": SD + "Service", SD + "defaultDataset": SD + "Service",
           SD + "defaultGraph": SD + "Dataset", SD + "namedGraph": SD + "Dataset", SD + "name": SD + "NamedGraph",
           SD + "graph": SD + "NamedGraph", VOID + "classPartition": VOID + "Dataset",
           VOID + "propertyPartition": VOID + "Dataset", VOID + "subset": VOID + "Dataset",
           VOID + "sparqlEndpoint": VOID + "Dataset", VOID + "rootResource": VOID + "Dataset"}


def check_vocabularies(g: Graph) -> None:
    """Every void: and sd: term used is one the specifications define, and the subject of each
    property with a stated domain has that class (asserted, as no reasoner runs here)."""
    used = {str(t) for triple in g for t in triple if isinstance(t, URIRef)}
    assert {t[len(VOID):] for t in used if t.startswith(VOID)} <= VOID_TERMS
    assert {t[len(SD):] for t in used if t.startswith(SD)} <= SD_TERMS
    for s, p, _ in g:
        if str(p) in DOMAINS:
            assert (s, RDF.type, URIRef(DOMAINS[str(p)])) in g, (s, p)


def _export(fmt: str, data=DATA) -> str:
    return run("export", "--data", str(data), "--format", fmt)


@pytest.fixture(scope="module")
def exported():
    """The bundled atlas's Turtle export, read back by rdflib."""
    return Graph().parse(data=_export("ttl"), format="turtle")


def test_the_export_describes_itself_with_void_a_licence_and_a_version(exported, bundled):
    from atlas.linked.rdf import DATA_LICENSE, DATASET_IRI, MAINTAINERS, package_version

    g, data = exported, bundled[1]
    void = lambda name: URIRef(VOID + name)  # noqa: E731
    assert (DATASET_IRI, RDF.type, void("Dataset")) in g
    assert g.value(DATASET_IRI, DCTERMS.license) == DATA_LICENSE == URIRef("https://creativecommons.org/licenses/by/4.0/")
    assert g.value(DATASET_IRI, DCTERMS.creator) == g.value(DATASET_IRI, DCTERMS.publisher) == MAINTAINERS
    assert {o.language for o in g.objects(MAINTAINERS, URIRef("http://xmlns.com/foaf/0.1/name"))} == {"en", "zh"}
    day = str(data.value(SCHEME_IRI, DCTERMS.modified))[:10]
    assert str(g.value(DATASET_IRI, OWL.versionInfo)) == f"atlas {package_version()}, data {day}"
    # the counts are the data's (the export less its description)
    assert int(g.value(DATASET_IRI, void("triples"))) == len(data) == len(g) - len(_description(g))
    classes = {o for o in data.objects(None, RDF.type) if isinstance(o, URIRef)}
    assert int(g.value(DATASET_IRI, void("classes"))) == len(classes)
    assert int(g.value(DATASET_IRI, void("properties"))) == len(set(data.predicates()))
    assert int(g.value(DATASET_IRI, void("entities"))) == len({s for s in data.subjects() if isinstance(s, URIRef)})
    parts = {g.value(p, void("property")): int(g.value(p, void("triples")))
             for p in g.objects(DATASET_IRI, void("propertyPartition"))}
    assert parts[SKOS.prefLabel] == len(list(data.triples((None, SKOS.prefLabel, None))))
    check_vocabularies(_description(g))


def _description(g: Graph) -> Graph:
    out = Graph()
    for t in g:
        if str(t[0]).startswith(("https://ascend-atlas.invalid/id/dataset", "https://ascend-atlas.invalid/id/agent/")):
            out.add(t)
    return out


def test_the_named_graph_partitions_are_the_store_s_graphs(exported):
    from atlas.commands import store_quads
    from atlas.opened import Opened
    from atlas.linked.rdf import DATASET_IRI

    _quads, graphs = store_quads(Opened(DATA))
    named = {str(exported.value(n, URIRef(SD + "name"))): int(exported.value(exported.value(n, URIRef(SD + "graph")),
                                                                                URIRef(VOID + "triples")))
             for n in exported.objects(DATASET_IRI, URIRef(SD + "namedGraph"))}
    assert named == graphs and len(graphs) > 100
    assert sum(graphs.values()) == int(exported.value(DATASET_IRI, URIRef(VOID + "triples")))


def test_pyshacl_and_skosify_still_accept_the_export_with_its_description(exported):
    import pyshacl
    import skosify

    conforms, _graph, text = pyshacl.validate(exported, shacl_graph=Graph().parse(DATA / "shapes.ttl"))
    assert conforms, text[:2000]
    logging.getLogger("skosify").setLevel(logging.ERROR)
    checked = skosify.skosify(Graph() + exported, label_lang="en", eliminate_redundancy=False,
                              break_cycles=False, keep_related=True, mark_top_concepts=False)
    assert len(checked) >= len(exported) - 10


@pytest.mark.parametrize("fmt", ["nq", "trig"])
def test_quads_round_trip_the_store_s_named_graphs_through_pyoxigraph(fmt, tmp_path):
    import pyoxigraph as ox

    from atlas.commands import store_quads
    from atlas.opened import Opened
    from atlas.linked.triplestore import graph_iri

    out = tmp_path / f"atlas.{fmt}"
    run("export", "--data", str(DATA), "--format", fmt, "-o", str(out))
    got = ox.Store()
    got.load(path=str(out), format=ox.RdfFormat.N_QUADS if fmt == "nq" else ox.RdfFormat.TRIG)
    quads, graphs = store_quads(Opened(DATA))
    store = ox.Store()
    store.load(quads, format=ox.RdfFormat.N_QUADS)
    names = {g.value for g in got.named_graphs()}
    assert names == set(graphs) | {graph_iri("#dataset")} and len(graphs) > 100
    for name in graphs:
        graph = ox.NamedNode(name)
        assert set(got.quads_for_pattern(None, None, None, graph)) == set(store.quads_for_pattern(None, None, None,
                                                                                                   graph)), name
    description = Graph().parse(data=b"".join(str(q.triple).encode() + b" .\n" for q in got.quads_for_pattern(
        None, None, None, ox.NamedNode(graph_iri("#dataset")))).decode(), format="nt")
    check_vocabularies(description)
    assert _export(fmt) == _export(fmt)  # the same bytes, run after run


def test_all_symbols_is_refused_with_quads():
    result = CliRunner().invoke(cli, ["export", "--data", str(DATA), "--format", "nq", "--all-symbols"])
    assert result.exit_code == 1 and "--all-symbols goes with ttl, jsonld or nt" in str(result.exception)
