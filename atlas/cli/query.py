"""Query commands: query, related, path, questions, compare, flow, claims, repo."""
from __future__ import annotations


import click

from .. import commands
from ..view import queries
from .common import common_options, finish, lang_option, table_option

LANG = lang_option
AS_OF = table_option("as_of", help="Show the atlas as visible on DATE (YYYY-MM-DD): concepts whose first "
                                   "sighting is later are MARKED 'not yet visible' (never hidden); "
                                   "concepts without any sighting are marked 'undated'.")


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("terms", nargs=-1)
@LANG
@AS_OF
@click.option("-s", "--search", is_flag=True, help="Treat the words as free text and print a table.")
@table_option("sparql")
@click.option("--sparql-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the SPARQL query from a file.")
@click.option("--endpoint", default=None, metavar="URL",
              help="With --sparql: send the query to this SPARQL endpoint instead of the embedded store.")
@click.option("--allow-service", is_flag=True,
              help="With --endpoint: let the endpoint follow SERVICE clauses (the embedded store never does).")
@table_option("timeout")
@table_option("max_rows")
@table_option("results")
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

        run_sparql(sparql, sparql_file, endpoint, commands.sparql_results(results, fmt), data_dir,
                   limits={"allow_service": allow_service, "timeout": timeout, "max_rows": max_rows})
        return
    if not terms:
        raise click.UsageError("give a TERM, FILTERs or --sparql (see atlas query --help)")
    args = list(terms)
    if search or queries.is_filter_query(args):
        finish(commands.filter_concepts(args, lang, fmt, data_dir, as_of))
    else:
        finish(commands.show(" ".join(args), lang, fmt, data_dir, as_of))


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
    finish(commands.related(term, rel, depth, lang, fmt, data_dir))


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
    finish(commands.path(a, b, rel, fmt, data_dir))


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
    finish(commands.questions(terms, show_answers, lang, fmt, data_dir))


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
    finish(commands.compare(terms, lang, fmt, data_dir))


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
    finish(commands.flow(" ".join(name) if name else None, lang, fmt, data_dir))


@click.command()
@click.argument("topic", nargs=-1)
@click.option("--status", default=None, help="Only claims with this status.")
@click.option("--full", is_flag=True, help="Without a TOPIC: each claim with its whole statement and evidence.")
@LANG
@common_options
def claims(topic, status, full, lang, data_dir, fmt):
    """The seed's conclusions as claims with status and evidence: all, or those for a TOPIC.

    Without a TOPIC every claim is one line (status, id, statement), grouped by status with a
    count; --full gives each with its evidence. TOPIC is searched in the claims' own text
    (statement, note, evidence) and in the concepts the claims are about; the claims come ranked,
    best first, with their evidence.

    \b
    Examples:
      atlas claims
      atlas claims --full --status hypothesis
      atlas claims Mooncake
      atlas claims "tail latency"
    """
    finish(commands.claims(" ".join(topic) if topic else None, status, lang, fmt, data_dir, full))


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
    finish(commands.repo(ident, lang, fmt, data_dir))
