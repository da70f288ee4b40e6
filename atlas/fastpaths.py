"""The hot paths of the command line, answered without click (which alone costs about twice
Python's start-up): `atlas query WORDS`, a concept card straight from the card store or a ranked
search over the search index; `atlas query --sparql Q` over the embedded store; `atlas refresh` when
nothing changed since its last no-op run (the stamp); and `atlas where` and `atlas source`, from the
cached pin and code tables.

This module only parses: it reads the options of `atlas.commands.OPTIONS` (the table click's
decorators are built from) and calls the same command functions as the click commands. Everything
else - every other option, every error - is left to the click CLI in atlas.cli, which prints exactly
the same output for the same arguments. The console script (atlas.launch) answers through `answer`.
"""
from __future__ import annotations


def parse(argv: list[str], dests: tuple[str, ...], words: bool) -> tuple[dict, list[str]] | None:
    """The options `dests` of the table (each `--flag value`, with the table's defaults and
    environment variables) and, if `words`, the other words; None for anything the launcher leaves
    to click (another option, a bad choice, a word where none is taken)."""
    from .commands import OPTIONS

    table = {OPTIONS[d].long: OPTIONS[d] for d in dests}
    opts = {d: OPTIONS[d].value_from_env() for d in dests}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        option = table.get(arg)
        if option is not None and i + 1 < len(argv):
            value = option.convert(argv[i + 1])
            if value is None:
                return None  # click names what is wrong with it
            opts[option.dest] = value
            i += 2
            continue
        if arg.startswith("-") or not words:
            return None
        rest.append(arg)
        i += 1
    if any(_outside(OPTIONS[d].choices, opts[d]) for d in dests):
        return None  # an environment variable outside the choices: click names it
    return opts, rest


def _outside(choices: tuple[str, ...] | None, value: object) -> bool:
    """A value set (by an environment variable) that the option's choices do not hold."""
    if not choices or value is None:
        return False
    return value not in choices


def _fast_refresh(argv: list[str]):
    """`atlas refresh [--data D] [--repos R] [--format F]` when nothing changed since the last no-op."""
    from .commands import FAST, refresh

    parsed = parse(argv[1:], FAST["refresh"], words=False)
    if parsed is None:
        return None
    opts = parsed[0]
    return refresh(opts["data_dir"], opts["repos_dir"], opts["fmt"], only_unchanged=True)


def _fast_sparql(argv: list[str]):
    """`atlas query --sparql Q [--results R] [--format F] [--data D]` over the embedded store."""
    from .commands import FAST, error_answer, sparql_query, sparql_results, sparql_store
    from .errors import AtlasError

    parsed = parse(argv[1:], FAST["sparql"], words=False)
    if parsed is None or parsed[0]["sparql"] is None:
        return None
    opts = parsed[0]
    nt = sparql_store(opts["data_dir"])  # bad data: the full CLI reports every problem
    try:
        return sparql_query(opts["sparql"], sparql_results(opts["results"], opts["fmt"]), opts["data_dir"],
                            limits={"timeout": opts["timeout"], "max_rows": opts["max_rows"]}, nt=nt)
    except AtlasError as exc:  # refused, malformed or over a limit: answered here, never run twice
        return error_answer(exc)


def _fast_query(argv: list[str]):
    """`atlas query WORDS [--lang L] [--format F] [--data D] [--as-of DAY]`: a card, the ranked hits or
    a miss."""
    from .commands import FAST, show

    parsed = parse(argv[1:], FAST["query"], words=True)
    if parsed is None:
        return None
    opts, words = parsed
    if not words or any(":" in w and not w.rstrip("0123456789").endswith(":") for w in words):
        return None  # no words (usage), or a filter (PATH:LINE is not one): the full CLI handles it
    from .progress import shown

    with shown(opts["fmt"]):  # the first query builds the cache: its progress, on a terminal only
        return show(" ".join(words), opts["lang"], opts["fmt"], opts["data_dir"], opts["as_of"])


def _fast_code(argv: list[str]):
    """`atlas where LOCATION` and `atlas source TARGET [STEP]` with the table's options: answered
    from the cached pin and code tables (atlas.code.lookup)."""
    from .commands import FAST, source, where
    from .output import wants_color
    from .progress import shown

    parsed = parse(argv[1:], FAST[argv[0]], words=True)
    if parsed is None:
        return None
    opts, words = parsed
    common = (opts["lang"], opts["fmt"], opts["data_dir"], opts["repos_dir"], opts["hops"])
    if not 1 <= len(words) <= (1 if argv[0] == "where" else 2):
        return None
    with shown(opts["fmt"]):  # the first answer with clones indexes the code: its progress
        if argv[0] == "where":
            return where(words[0], *common)
        return source(words, *common, color=wants_color())


def answer(argv: list[str]):
    """The command function's answer for a hot path, or None (click takes over)."""
    if argv[:1] == ["refresh"]:
        path = _fast_refresh
    elif argv[:1] in (["where"], ["source"]):
        path = _fast_code
    elif argv[:1] == ["query"]:
        path = _fast_sparql if "--sparql" in argv else _fast_query
    else:
        return None
    from .errors import AtlasError

    try:
        return path(argv)
    except (AtlasError, OSError):
        return None  # the full CLI reports it, with locations
