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
@click.option("--format", "fmt", type=click.Choice(["ttl", "jsonld", "nt", "nq", "trig"]), default="ttl",
              show_default=True, help="RDF serialisation (jsonld: compacted, with an @context of the prefixes; "
              "nq and trig: the named graphs, one per data file).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to FILE (atomically) instead of standard output.")
@click.option("--to-endpoint", default=None, metavar="URL",
              help="PUT the atlas into this Graph Store Protocol endpoint (Oxigraph: http://HOST:PORT/store).")
@click.option("--graph", default=None, metavar="IRI",
              help="With --to-endpoint: the named graph to replace (default: the default graph).")
@click.option("--all-symbols", is_flag=True, default=False,
              help="Every public API symbol of data/api/ (default: every release, and the symbols concepts name).")
@click.option("--base", default=None, metavar="IRI",
              help="Where `atlas map --base` publishes the site: every concept, flow and repository IRI becomes "
                   "its page's (https://example.org/atlas/concepts/hccs.html#it).")
@data_option
def export(fmt, output, to_endpoint, graph, data_dir, all_symbols, base):
    """Export the atlas as RDF (SKOS, PROV-O, DCTERMS, DOAP and data/ontology.ttl).

    Output is deterministic: the same data gives the same bytes. Every relation is written from
    both ends (inverse or mirror) and as skos:related; every concept is in one skos:ConceptScheme.
    The dataset's VoID description (licence, creator, version, counts) comes with it; nq and trig
    keep each data file's triples in a named graph of its own, as the SPARQL store holds them.

    \b
    Examples:
      atlas export --format ttl -o atlas.ttl
      atlas export --format jsonld -o atlas.jsonld
      atlas export --format nq -o atlas.nq
      atlas export --to-endpoint http://127.0.0.1:7878/store
      atlas export --all-symbols --format nt -o atlas-api.nt
    """
    finish(commands.export(fmt, output, to_endpoint, graph, data_dir, all_symbols, base))
