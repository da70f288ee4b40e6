"""The atlas as RDF (rdflib): SKOS concepts, PROV-O evidence, DCTERMS dates, DOAP repositories,
plus the project ontology in data/ontology.ttl. Every node has a stable IRI under `BASE`; there are no
blank nodes, so serialisations are deterministic.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from .model import Atlas, Evidence, Repository, Text

from .vocab import BASE, PREFIXES

ATLAS = Namespace(BASE + "ontology#")
ID = Namespace(BASE + "id/")
CONCEPT = Namespace(BASE + "id/concept/")
DOAP = Namespace("http://usefulinc.com/ns/doap#")
GRAPH_IRI = BASE + "graph"


def kind_class(kind: str) -> URIRef:
    return ATLAS["".join(part.capitalize() for part in kind.split("-"))]


def relation_property(rtype: str) -> URIRef:
    head, *rest = rtype.split("-")
    return ATLAS[head + "".join(p.capitalize() for p in rest)]


def concept_iri(ident: str) -> URIRef:
    return ID[f"concept/{ident}"]


def repo_local(ident: str) -> str:
    """owner/name -> owner.name (owners never contain dots), usable as `repo:owner.name` in SPARQL."""
    return quote(ident.replace("/", ".", 1), safe="")


def repo_iri(ident: str) -> URIRef:
    return ID[f"repo/{repo_local(ident)}"]


def source_iri(ev: Evidence, atlas: Atlas) -> URIRef:
    """A public IRI for the source: the file at the pinned commit and lines, or the URL."""
    if ev.url:
        return URIRef(ev.url)
    pin = ev.pin
    repo = atlas.repo_by_id.get(pin.repo)
    lines = f"L{pin.start}" if pin.start == pin.end else f"L{pin.start}-L{pin.end}"
    path = quote(pin.path, safe="/")
    home = repo.urls[0].rstrip("/") if repo and repo.urls else f"https://github.com/{pin.repo}"
    return URIRef(f"{home}/blob/{pin.sha}/{path}#{lines}")


def _texts(g: Graph, s, p, text: Text) -> None:
    for lang in ("en", "zh"):
        value = text.get(lang)
        if value:
            g.add((s, p, Literal(value, lang=lang)))


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:16]


def _evidence(g: Graph, atlas: Atlas, subject, ev: Evidence, prop=None) -> None:
    node = ID[f"evidence/{_digest(ev.source, ev.supports.en, ev.supports.zh, ev.symbol)}"]
    g.add((subject, prop or ATLAS.evidence, node))
    g.add((node, RDF.type, PROV.Entity))
    g.add((node, PROV.hadPrimarySource, source_iri(ev, atlas)))
    g.add((node, ATLAS.confidence, Literal(ev.confidence)))
    _texts(g, node, ATLAS.supports, ev.supports)
    if ev.symbol:
        g.add((node, ATLAS.symbol, Literal(ev.symbol)))
    if ev.pin:
        g.add((node, ATLAS.pin, Literal(str(ev.pin))))
        g.add((node, ATLAS.repository, repo_iri(ev.pin.repo)))
        g.add((node, ATLAS.commit, Literal(ev.pin.sha)))
        g.add((node, ATLAS.path, Literal(ev.pin.path)))
        g.add((node, ATLAS.lineStart, Literal(ev.pin.start)))
        g.add((node, ATLAS.lineEnd, Literal(ev.pin.end)))


def _repository(g: Graph, atlas: Atlas, r: Repository) -> None:
    node = repo_iri(r.id)
    g.add((node, RDF.type, DOAP.Project))
    g.add((node, DOAP.name, Literal(r.id)))
    _texts(g, node, DOAP.description, r.purpose)
    g.add((node, ATLAS.status, Literal(r.status)))
    for i, url in enumerate(r.urls):
        git = ID[f"repo/{repo_local(r.id)}/git/{i}"]
        g.add((node, DOAP.repository, git))
        g.add((git, RDF.type, DOAP.GitRepository))
        g.add((git, DOAP.location, URIRef(url)))
    if r.mirror_of:
        g.add((node, ATLAS.mirrorOf, Literal(r.mirror_of)))
    for m in r.migrated_from:
        g.add((node, ATLAS.migratedFrom, Literal(m)))
    for hw in r.hardware:
        if hw != "any":
            g.add((node, ATLAS.hardware, concept_iri(hw)))
    for ev in r.evidence:
        _evidence(g, atlas, node, ev)


def build_graph(atlas: Atlas, ontology: Path | None = None) -> Graph:
    g = Graph()
    for prefix, ns in PREFIXES.items():
        g.bind(prefix, ns)
    if ontology is not None and ontology.is_file():
        g.parse(ontology, format="turtle")
    for q in atlas.questions:
        node = ID[f"question/{q.id}"]
        g.add((node, RDF.type, ATLAS.Question))
        _texts(g, node, SKOS.prefLabel, q.names)
        _texts(g, node, SKOS.definition, q.explanation)
    for c in atlas.concepts:
        node = concept_iri(c.id)
        g.add((node, RDF.type, SKOS.Concept))
        g.add((node, RDF.type, kind_class(c.kind)))
        g.add((node, DCTERMS.identifier, Literal(c.id)))
        _texts(g, node, SKOS.prefLabel, c.names)
        for lang, aliases in c.aliases.items():
            for a in aliases:
                g.add((node, SKOS.altLabel, Literal(a, lang=lang)))
        _texts(g, node, SKOS.definition, c.professional)
        _texts(g, node, ATLAS.beginnerDefinition, c.beginner)
        for qid, answer in c.answers.items():
            q = ID[f"question/{qid}"]
            a = ID[f"concept/{c.id}/answer/{qid}"]
            g.add((node, ATLAS.answersQuestion, q))
            g.add((node, ATLAS.answer, a))
            g.add((a, RDF.type, ATLAS.Answer))
            g.add((a, ATLAS.question, q))
            _texts(g, a, RDFS.label, answer)
        for hw in c.hardware:
            if hw != "any":
                g.add((node, ATLAS.hardware, concept_iri(hw)))
        _texts(g, node, ATLAS.hardwareNote, c.hardware_note)
        g.add((node, ATLAS.lifecycle, Literal(c.lifecycle.status)))
        _texts(g, node, ATLAS.lifecycleNote, c.lifecycle.note)
        for r in c.relations:
            g.add((concept_iri(r.source), relation_property(r.type), concept_iri(r.target)))
        for ev in c.evidence:
            _evidence(g, atlas, node, ev)
        for p in c.probes:
            g.add((node, ATLAS.probe, Literal(f"{p.repo} {p.method}:{p.value}")))
    for cl in atlas.claims:
        node = ID[f"claim/{cl.id}"]
        g.add((node, RDF.type, ATLAS.Claim))
        g.add((node, DCTERMS.identifier, Literal(cl.id)))
        _texts(g, node, ATLAS.statement, cl.statement)
        g.add((node, ATLAS.status, Literal(cl.status)))
        _texts(g, node, RDFS.comment, cl.note)
        for ident in cl.about:
            g.add((node, DCTERMS.subject, concept_iri(ident)))
        for ev in cl.evidence:
            _evidence(g, atlas, node, ev)
    for f in atlas.flows:
        node = ID[f"flow/{f.id}"]
        g.add((node, RDF.type, ATLAS.Flow))
        g.add((node, DCTERMS.identifier, Literal(f.id)))
        _texts(g, node, DCTERMS.title, f.title)
        _texts(g, node, DCTERMS.description, f.summary)
        for ev in f.evidence:
            _evidence(g, atlas, node, ev)
        for i, s in enumerate(f.ordered_steps(), 1):
            step = ID[f"flow/{f.id}/step/{s.id}"]
            g.add((node, ATLAS.step, step))
            g.add((step, RDF.type, ATLAS.FlowStep))
            g.add((step, ATLAS.order, Literal(i)))
            g.add((step, ATLAS.actor, Literal(s.actor)))
            _texts(g, step, RDFS.label, s.label)
            for ident in s.concepts:
                g.add((step, ATLAS.touches, concept_iri(ident)))
            if s.source:
                _evidence(g, atlas, step, s.source, ATLAS.source)
        for e in f.edges:
            g.add((ID[f"flow/{f.id}/step/{e.source}"], ATLAS[e.type + "To"],
                   ID[f"flow/{f.id}/step/{e.target}"]))
    for r in atlas.repositories:
        _repository(g, atlas, r)
    for s in atlas.sightings:
        node = ID[f"sighting/{s.concept}/{_digest(s.repo, s.method, s.value)}"]
        g.add((node, RDF.type, ATLAS.Sighting))
        g.add((node, ATLAS.concept, concept_iri(s.concept)))
        g.add((node, ATLAS.repository, repo_iri(s.repo)))
        g.add((node, ATLAS.method, Literal(s.method)))
        g.add((node, ATLAS.probeValue, Literal(s.value)))
        g.add((node, ATLAS.found, Literal(s.found)))
        g.add((node, ATLAS.cutoff, Literal(s.cutoff, datatype=XSD.date)))
        if s.found:
            g.add((node, DCTERMS.date, Literal(s.committer_date[:10], datatype=XSD.date)))
            g.add((node, ATLAS.committerDate, Literal(s.committer_date, datatype=XSD.dateTime)))
            if s.author_date:
                g.add((node, ATLAS.authorDate, Literal(s.author_date, datatype=XSD.dateTime)))
            g.add((node, ATLAS.commit, Literal(s.sha)))
            g.add((node, ATLAS.precision, Literal(s.precision)))
            if s.introduced:
                g.add((node, ATLAS.introducedBy, Literal(s.introduced)))
        if s.head:
            g.add((node, ATLAS.harvestedHead, Literal(s.head)))
    return g


def serialize(g: Graph, fmt: str) -> str:
    """Deterministic text: sorted N-Triples; rdflib's sorted Turtle; JSON-LD with sorted nodes."""
    if fmt == "nt":
        lines = g.serialize(format="nt").splitlines()
        return "\n".join(sorted(line for line in lines if line.strip())) + "\n"
    if fmt == "ttl":
        return g.serialize(format="turtle")
    if fmt == "jsonld":
        import json

        doc = json.loads(g.serialize(format="json-ld"))
        nodes = doc if isinstance(doc, list) else doc.get("@graph", [doc])

        def norm(value):
            if isinstance(value, list):
                items = [norm(v) for v in value]
                return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
            if isinstance(value, dict):
                return {k: norm(v) for k, v in value.items()}
            return value

        nodes = sorted((norm(n) for n in nodes), key=lambda n: n.get("@id", ""))
        return json.dumps(nodes, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    raise ValueError(fmt)
