"""Linked-data commands: `atlas export` and the SPARQL side of `atlas query`."""
from __future__ import annotations

import sys

import click

from ..errors import AtlasError, Location
from ..paths import data_dir as resolve_data_dir
from .common import data_option


def run_sparql(text, path, endpoint, results, data_dir, limits=None):
    from ..commands import sparql_query
    from .common import finish

    where = "query"
    if path:
        from ..sparql import read_query_file

        where = str(path)
        text = read_query_file(where)  # bounded: `--sparql-file /dev/zero` is refused, not read
    finish(sparql_query(text, results, data_dir, endpoint, where, limits))


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
    from ..index import load_atlas
    from ..rdf import build_graph, serialize

    if to_endpoint:
        from ..sparql import check_url

        check_url(to_endpoint, "--to-endpoint")  # before the work of building the graph
    atlas = load_atlas(data_dir)
    g = build_graph(atlas, resolve_data_dir(data_dir) / "ontology.ttl")
    if to_endpoint:
        from ..sparql import load_endpoint

        status = load_endpoint(serialize(g, "nt"), to_endpoint, graph)
        click.echo(f"loaded {len(g)} triples into {to_endpoint} (HTTP {status})")
        return
    text = serialize(g, fmt)
    if output:
        from ..cache import atomic_write

        try:
            atomic_write(output, text)
        except OSError as exc:
            raise AtlasError(f"cannot write the export: {exc}", Location(output)) from None
        click.echo(f"wrote {len(g)} triples to {output}", err=True)
    else:
        sys.stdout.write(text)
