"""Query commands: query, related, path, questions, compare, flow, claims, repo."""
from __future__ import annotations

import sys

import click

from .. import queries, render
from ..errors import AtlasError, Location
from ..output import terminal_safe
from .common import common_options, emit, emit_json, get_atlas, get_searchable

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
    """Show a concept card, search everything the atlas says, or filter concepts.

    When the words name one concept (an id, an English or Chinese name or alias, case- and
    width-insensitive, or a prefix of only that concept's names that no other name contains) its
    card is printed. Otherwise one ranked search runs over concepts, claims, flows and repositories
    in both languages, and each hit shows the text it matched in. With FILTERs (kind:, answers:,
    hw:, status:, repo:, rel:TYPE:TARGET, text:) or --search, prints a table of matching concepts;
    remaining words are free text over names, aliases and explanations in both languages.

    \b
    Examples:
      atlas query hccs
      atlas query 直驱 --lang zh
      atlas query collective communication library
      atlas query 集合通信 算法
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
    kind, found = store.answer(term)
    if kind == "hits" and found:
        emit(fmt, {"query": term, "hits": found}, lambda d: render.hits(d, lang))
        return
    ident = found if kind == "card" else _resolve_or_exit(store.atlas(), term, fmt, lang).id
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
@click.argument("name", nargs=-1)
@LANG
@common_options
def flow(name, lang, data_dir, fmt):
    """List the flows, or show one as ordered steps with actors, concepts and pins.

    NAME is a flow id or title (either language), a unique prefix of one, or words that only one
    flow's id and title hold. On a miss the closest flows are named.

    \b
    Examples:
      atlas flow
      atlas flow minimal-shmem-link
      atlas flow DualPath
    """
    if not name:
        emit(fmt, queries.flows(get_atlas(data_dir)), lambda r: render.flows(r, lang))
        return
    atlas, index = get_searchable(data_dir)
    emit(fmt, queries.flow(atlas, " ".join(name), index), lambda r: render.flow(r, lang))


@click.command()
@click.argument("topic", nargs=-1)
@click.option("--status", default=None, help="Only claims with this status.")
@LANG
@common_options
def claims(topic, status, lang, data_dir, fmt):
    """The seed's conclusions as claims with status and evidence: all, or those for a TOPIC.

    TOPIC is searched in the claims' own text (statement, note, evidence) and in the concepts the
    claims are about; the claims come ranked, best first.

    \b
    Examples:
      atlas claims
      atlas claims Mooncake
      atlas claims "tail latency"
      atlas claims --status hypothesis
    """
    if not topic:
        emit(fmt, queries.claims(get_atlas(data_dir), None, status), lambda r: render.claims(r, lang))
        return
    text = " ".join(topic)
    atlas, index = get_searchable(data_dir)
    rows = queries.claims_topic(atlas, index, text, status)
    if not rows and fmt != "json":
        click.echo(f'no claims match "{text}"' + (f" with status {status}" if status else ""), err=True)
        sys.exit(1)
    emit(fmt, rows, lambda r: render.claims(r, lang))
    if not rows:
        sys.exit(1)


@click.command()
@click.argument("ident", required=False)
@LANG
@common_options
def repo(ident, lang, data_dir, fmt):
    """List the repositories, or show one: purpose, status, mirror and migration history,
    hardware, notes and its harvest (head, cut-off head, skipped paths, probes found).

    ID is owner/name (case-insensitive), the name alone, or a unique prefix.

    \b
    Examples:
      atlas repo
      atlas repo hicann/shmem
    """
    if not ident:
        emit(fmt, queries.repos(get_atlas(data_dir)), lambda r: render.repos(r, lang))
        return
    atlas, index = get_searchable(data_dir)
    r = queries.find_repo(atlas, ident)
    if r is None:
        from ..text import suggest

        close = [h["id"] for h in index.search(ident, types={"repo"}, limit=5)]
        close += [x for x in suggest(ident, {r.id: r.id for r in atlas.repositories}, 5) if x not in close]
        named = [x for x in atlas.repositories if x.id.lower().split("/", 1)[-1] == ident.strip().lower()]
        message = f'several repositories are named "{ident}"' if len(named) > 1 else \
            f'no repository "{ident}"'
        raise AtlasError(message, Location("repo"),
                         ("closest: " + ", ".join(close[:5])) if close else "run `atlas repo` to list them")
    emit(fmt, queries.repo(atlas, r), lambda d: render.repo(d, lang))
