"""Linked-data commands: `atlas export` and the SPARQL side of `atlas query`."""
from __future__ import annotations

import click

from .. import commands
from .common import data_option, finish


def run_sparql(text, path, endpoint, results, data_dir, limits=None):
    from .common import finish

    where = "query"
    if path:
        where = str(path)
        text = commands.sparql_file(path)
    finish(commands.sparql_query(text, results, data_dir, endpoint, where, limits))


@click.command()
@click.option("--format", "fmt", type=click.Choice(["ttl", "jsonld", "nt"]), default="ttl",
              show_default=True, help="RDF serialisation (jsonld: compacted, with an @context of the prefixes).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to FILE (atomically) instead of standard output.")
@click.option("--to-endpoint", default=None, metavar="URL",
              help="PUT the atlas into this Graph Store Protocol endpoint (Oxigraph: http://HOST:PORT/store).")
@click.option("--graph", default=None, metavar="IRI",
              help="With --to-endpoint: the named graph to replace (default: the default graph).")
@data_option
def export(fmt, output, to_endpoint, graph, data_dir):
    """Export the atlas as RDF (SKOS, PROV-O, DCTERMS, DOAP and data/ontology.ttl).

    Output is deterministic: the same data gives the same bytes. Every relation is written from
    both ends (inverse or mirror) and as skos:related; every concept is in one skos:ConceptScheme.

    \b
    Examples:
      atlas export --format ttl -o atlas.ttl
      atlas export --format jsonld -o atlas.jsonld
      atlas export --to-endpoint http://127.0.0.1:7878/store
    """
    finish(commands.export(fmt, output, to_endpoint, graph, data_dir))
