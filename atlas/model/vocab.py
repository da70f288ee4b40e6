"""IRIs of the atlas's RDF face, kept free of rdflib so SPARQL start-up does not import it."""

BASE = "https://ascend-atlas.invalid/"  # reserved TLD: stable, never collides, not dereferenceable

SCHEME = BASE + "id/scheme"  # the one skos:ConceptScheme every concept is in

PREFIXES = {
    "atlas": BASE + "ontology#",
    "concept": BASE + "id/concept/",
    "kind": BASE + "id/kind/",
    "question": BASE + "id/question/",
    "claim": BASE + "id/claim/",
    "flow": BASE + "id/flow/",
    "repo": BASE + "id/repo/",
    "evidence": BASE + "id/evidence/",
    "sighting": BASE + "id/sighting/",
    "harvest": BASE + "id/harvest/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "prov": "http://www.w3.org/ns/prov#",
    "dcterms": "http://purl.org/dc/terms/",
    "doap": "http://usefulinc.com/ns/doap#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
