"""Query commands: query, related, path, questions, compare, flow, claims."""
from __future__ import annotations

import sys

import click

from .. import queries, render
from ..errors import AtlasError
from ..output import terminal_safe
from .common import common_options, emit, emit_json, get_atlas

LANG = click.option("--lang", type=click.Choice(["en", "zh", "all"]), default="en", show_default=True,
                    help="Language of the explanations.")


def _date(ctx, param, value):
    from ..text import day

    if value is not None and day(value) is None:
        raise click.BadParameter(f"{value!r} is not a day (use YYYY-MM-DD)", ctx=ctx, param=param)
    return value


AS_OF = click.option("--as-of", callback=_date, default=None, metavar="DATE",
                     help="Show the atlas as visible on DATE (YYYY-MM-DD): concepts whose first "
                          "sighting is later are MARKED 'not yet visible' (never hidden); concepts "
                          "without any sighting are marked 'undated'.")


def _resolve_or_exit(atlas, term, fmt, lang):
    try:
        return queries.resolve(atlas, term)
    except AtlasError as exc:
        rows = getattr(exc, "suggestions", [])
        if fmt == "json":
            emit_json({"error": exc.message, "query": term, "suggestions": rows})
        else:
            click.echo(terminal_safe(render.suggestions(term, rows, lang, exc.message)), err=True)
        sys.exit(1)


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("terms", nargs=-1)
@LANG
@AS_OF
@click.option("-s", "--search", is_flag=True, help="Treat the words as free text and print a table.")
@click.option("--sparql", default=None, metavar="QUERY", help="Run a read-only SPARQL query instead.")
@click.option("--sparql-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the SPARQL query from a file.")
@click.option("--endpoint", default=None, metavar="URL",
              help="With --sparql: send the query to this SPARQL endpoint instead of the embedded store.")
@click.option("--allow-service", is_flag=True,
              help="With --endpoint: let the endpoint follow SERVICE clauses (the embedded store never does).")
@click.option("--timeout", type=click.FloatRange(min=0.1, max=3600), default=None, metavar="SECONDS",
              help="Time limit of a SPARQL query (default: 5 s embedded, 10 s for a whole endpoint exchange).")
@click.option("--max-rows", type=click.IntRange(min=1), default=None,
              help="Result-size limit of an embedded SPARQL query, in rows or triples (default: 100000).")
@click.option("--results", type=click.Choice(["table", "json", "csv", "tsv"]), default=None,
              help="SPARQL result format: table, json (SPARQL JSON; JSON-LD for CONSTRUCT/DESCRIBE), "
                   "csv or tsv (SPARQL 1.1 CSV/TSV). Default: table, or json with --format json.")
@common_options
def query(terms, lang, as_of, search, sparql, sparql_file, endpoint, allow_service, timeout, max_rows, results,
          data_dir, fmt):
    """Show a concept card, or search with filters.

    TERM is an id, an English or Chinese name or alias (case- and width-insensitive) or a unique
    prefix. With FILTERs (kind:, answers:, hw:, status:, repo:, rel:TYPE:TARGET, text:) or --search,
    prints a table of matching concepts; remaining words are free text over names, aliases and
    explanations in both languages.

    \b
    Examples:
      atlas query hccs
      atlas query 直驱 --lang zh
      atlas query kind:link answers:peer
      atlas query rel:uses:hccl
      atlas query --search doorbell
      atlas query --sparql 'SELECT ?c WHERE { ?c a skos:Concept } LIMIT 5'
    """
    if sparql or sparql_file:
        from .linked import run_sparql

        run_sparql(sparql, sparql_file, endpoint, results or ("json" if fmt == "json" else "table"),
                   data_dir, limits={"allow_service": allow_service, "timeout": timeout, "max_rows": max_rows})
        return
    if not terms:
        raise click.UsageError("give a TERM, FILTERs or --sparql (see atlas query --help)")
    args = list(terms)
    if search or queries.is_filter_query(args):
        atlas = get_atlas(data_dir)
        filters, text = queries.parse_filters(args)
        rows = queries.search(atlas, filters, text, as_of)
        emit(fmt, rows, lambda r: render.rows_table(r, lang))
        if not rows:
            sys.exit(1)
        return
    term = " ".join(args)
    from ..cards import open_store

    store = open_store(data_dir)  # precomputed cards: no need to rebuild the whole atlas
    ident = store.find(term)
    if ident is None:  # let the full atlas resolve it, or exit with ranked suggestions
        ident = _resolve_or_exit(store.atlas(), term, fmt, lang).id
    emit(fmt, store.card(ident, as_of), lambda d: render.card(d, store.questions, lang))


@click.command()
@click.argument("term")
@click.option("--rel", default=None, help="Only this relation type (either direction's name).")
@click.option("--depth", type=click.IntRange(1, 10), default=1, show_default=True)
@LANG
@common_options
def related(term, rel, depth, lang, data_dir, fmt):
    """Concepts related to TERM, in both directions, up to --depth hops.

    \b
    Example:
      atlas related udma --depth 2
    """
    atlas = get_atlas(data_dir)
    c = _resolve_or_exit(atlas, term, fmt, lang)
    rows = queries.related(atlas, c, rel, depth)
    emit(fmt, {"id": c.id, "related": rows}, lambda d: render.related({"id": c.id}, rows, lang))


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--rel", default=None, help="Only walk relations of this type.")
@common_options
def path(a, b, rel, data_dir, fmt):
    """The shortest typed path between two concepts, e.g. A -uses-> B <-part-of- C.

    \b
    Example:
      atlas path use-ascend-direct hccs
    """
    atlas = get_atlas(data_dir)
    ca = _resolve_or_exit(atlas, a, fmt, "en")
    cb = _resolve_or_exit(atlas, b, fmt, "en")
    steps = queries.path(atlas, ca, cb, rel)
    emit(fmt, {"from": ca.id, "to": cb.id, "steps": steps},
         lambda d: render.path(ca.id, cb.id, steps))
    if not steps and ca.id != cb.id:
        sys.exit(1)


@click.command()
@click.argument("terms", nargs=-1)
@click.option("--answers", "show_answers", is_flag=True,
              help="Print the one-line answers instead of marks (default when TERMs are given).")
@LANG
@common_options
def questions(terms, show_answers, lang, data_dir, fmt):
    """The six-question matrix: which concept answers which question.

    Without TERMs every concept that answers a question is listed, grouped by kind: the table
    that shows these terms are not layers of one stack.

    \b
    Examples:
      atlas questions
      atlas questions hccs hccl ascend-shmem udma aiv-direct-drive
    """
    atlas = get_atlas(data_dir)
    chosen = [_resolve_or_exit(atlas, t, fmt, lang) for t in terms]
    result = queries.questions(atlas, chosen or None)
    emit(fmt, result, lambda r: render.questions(r, lang, show_answers or bool(terms)))


@click.command()
@click.argument("terms", nargs=-1, required=True)
@LANG
@common_options
def compare(terms, lang, data_dir, fmt):
    """Side by side: kind, each question's answer, hardware, lifecycle, first visible.

    \b
    Examples:
      atlas compare hccl hixl ascend-shmem
      atlas compare use-ascend use-ascend-direct use-ubshmem
    """
    if len(terms) < 2:
        raise click.UsageError("compare needs at least two concepts")
    atlas = get_atlas(data_dir)
    chosen = [_resolve_or_exit(atlas, t, fmt, lang) for t in terms]
    emit(fmt, queries.compare(atlas, chosen), lambda r: render.compare(r, lang))


@click.command()
@click.argument("ident", required=False)
@LANG
@common_options
def flow(ident, lang, data_dir, fmt):
    """List the flows, or show one as ordered steps with actors, concepts and pins.

    \b
    Examples:
      atlas flow
      atlas flow minimal-shmem-link
    """
    atlas = get_atlas(data_dir)
    if not ident:
        emit(fmt, queries.flows(atlas), lambda r: render.flows(r, lang))
        return
    emit(fmt, queries.flow(atlas, ident), lambda r: render.flow(r, lang))


@click.command()
@click.argument("term", required=False)
@click.option("--status", default=None, help="Only claims with this status.")
@LANG
@common_options
def claims(term, status, lang, data_dir, fmt):
    """The seed's conclusions as claims with status and evidence (all, or those about TERM).

    \b
    Examples:
      atlas claims
      atlas claims use-ubshmem
      atlas claims --status hypothesis
    """
    atlas = get_atlas(data_dir)
    c = _resolve_or_exit(atlas, term, fmt, lang) if term else None
    emit(fmt, queries.claims(atlas, c, status), lambda r: render.claims(r, lang))
