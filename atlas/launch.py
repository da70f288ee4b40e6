"""The `atlas` console script. Three hot paths are answered without importing click (which alone
costs about twice Python's start-up): `atlas query TERM`, a concept card straight from the card
store or a ranked search over the search index; `atlas query --sparql Q` over the embedded store;
and `atlas refresh` when nothing changed since its last no-op run (the stamp).
Everything else - every other option, every miss, every error - goes to the click CLI in atlas.cli,
which prints exactly the same output for the same arguments.
"""
from __future__ import annotations

import os
import sys

_OPTIONS = {"--lang": ("en", "zh", "all"), "--format": ("text", "json")}


def _simple_query(argv: list[str]):
    """(term, lang, fmt, data_dir) when argv is `query TERM [--lang L] [--format F] [--data D]`."""
    if len(argv) < 2 or argv[0] != "query":
        return None
    opts = {"--lang": "en", "--format": "text", "--data": None}
    words = []
    rest = argv[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in opts and i + 1 < len(rest):
            value = rest[i + 1]
            if arg in _OPTIONS and value not in _OPTIONS[arg]:
                return None
            opts[arg] = value
            i += 2
            continue
        if arg.startswith("-") or ":" in arg:
            return None  # any other option, or a filter: the full CLI handles it
        words.append(arg)
        i += 1
    if not words:
        return None
    return " ".join(words), opts["--lang"], opts["--format"], opts["--data"]


def _options(argv: list[str], allowed: dict) -> dict | None:
    """`--opt value` pairs only, each in `allowed` (name -> choices or None); else None."""
    opts = {}
    if len(argv) % 2:
        return None
    for name, value in zip(argv[::2], argv[1::2]):
        if name not in allowed or (allowed[name] and value not in allowed[name]) or value.startswith("-"):
            return None
        opts[name] = value
    return opts


def _fast_refresh(argv: list[str]) -> bool:
    """`atlas refresh [--data D] [--repos R] [--format F]` when nothing changed since the last no-op."""
    opts = _options(argv[1:], {"--data": None, "--repos": None, "--format": ("text", "json")})
    if opts is None:
        return False
    from .errors import AtlasError
    from .harvest import stamp
    from .index import load_keyed
    from .paths import data_dir as resolve_data_dir, repos_root

    try:
        d = resolve_data_dir(opts.get("--data"))
        _load, key = load_keyed(d, lazy=True)
        report = stamp.check(d, key, repos_root(opts.get("--repos"), d), None)
    except AtlasError:
        return False
    if report is None:
        return False
    from . import render
    from .output import format_result

    _write(format_result(opts.get("--format", "text"), report.to_plain(),
                         lambda _o: render.refresh_table(report)))
    return True


def _write(out: str) -> None:
    try:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(1)


def _fast_sparql(argv: list[str]) -> bool:
    """`atlas query --sparql Q [--results R] [--format F] [--data D]` over the embedded store."""
    opts = _options(argv[1:], {"--sparql": None, "--results": ("table", "json", "csv", "tsv"),
                               "--format": ("text", "json"), "--data": None, "--timeout": None, "--max-rows": None})
    if opts is None or "--sparql" not in opts:
        return False
    from . import sparql
    from .errors import AtlasError
    from .index import load_keyed
    from .output import terminal_safe
    from .paths import data_dir as resolve_data_dir

    results = opts.get("--results") or ("json" if opts.get("--format") == "json" else "table")
    try:
        limits = (float(opts.get("--timeout", sparql.QUERY_TIMEOUT)), int(opts.get("--max-rows", sparql.MAX_ROWS)))
    except ValueError:
        return False  # click says what is wrong with the number
    if not (0.1 <= limits[0] <= 3600 and limits[1] >= 1):
        return False
    try:
        load, key = load_keyed(opts.get("--data"), lazy=True)
        nt = sparql.nt_cache(load, key, resolve_data_dir(opts.get("--data")))
    except AtlasError:
        return False  # bad data: the full CLI reports every problem
    try:
        out = sparql.render(sparql.run_embedded(opts["--sparql"], nt, timeout=limits[0], max_rows=limits[1]), results)
    except AtlasError as exc:  # refused, malformed or over a limit: the message the full CLI prints
        sys.stderr.write(terminal_safe(f"Error: {exc}") + "\n")
        sys.exit(1)
    out = terminal_safe(out)
    _write(out[:-1] if out.endswith("\n") else out)  # CSV / TSV bring their own line break (CRLF)
    return True


def _fast(argv: list[str]) -> bool:
    if argv[:1] == ["refresh"]:
        return _fast_refresh(argv)
    if argv[:1] == ["query"] and "--sparql" in argv:
        return _fast_sparql(argv)
    simple = _simple_query(argv)
    if simple is None:
        return False
    term, lang, fmt, data_dir = simple
    from .cards import open_store
    from .errors import AtlasError

    try:
        store = open_store(data_dir)
        kind, found = store.answer(term)
        if kind == "hits" and not found:
            return False  # nothing matched: the full CLI prints the suggestions
        from . import render
        from .output import format_result

        if kind == "card":
            out = format_result(fmt, store.card(found), lambda d: render.card(d, store.questions, lang))
        else:
            out = format_result(fmt, {"query": term, "hits": found}, lambda d: render.hits(d, lang))
    except AtlasError:
        return False  # the full CLI reports it, with locations
    _write(out)
    return True


def main() -> None:
    argv = sys.argv[1:]
    if _fast(argv):
        sys.exit(0)
    from .cli import main as cli_main

    cli_main()
