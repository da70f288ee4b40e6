"""Linked data: the RDF export (rdf), SPARQL (syntax, sparql), the on-disk triple store (triplestore),
SHACL and the HTTP endpoint (endpoint). May import: base, model, view, index; endpoint also commands.
"""
