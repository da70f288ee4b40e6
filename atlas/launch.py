"""The `atlas` console script. It answers the commonest command - `atlas query TERM` for a term
that names a concept - straight from the card store, without importing click (which alone costs
about twice Python's start-up); everything else, including every error and every other option,
goes to the click CLI in atlas.cli, which prints exactly the same card for the same arguments.
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


def _fast(argv: list[str]) -> bool:
    simple = _simple_query(argv)
    if simple is None:
        return False
    term, lang, fmt, data_dir = simple
    from .cards import open_store
    from .errors import AtlasError

    try:
        store = open_store(data_dir)
        ident = store.find(term)
        if ident is None:
            return False
        from . import render
        from .output import format_result

        out = format_result(fmt, store.card(ident), lambda d: render.card(d, store.questions, lang))
    except AtlasError:
        return False  # the full CLI reports it, with locations
    try:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(1)
    return True


def main() -> None:
    argv = sys.argv[1:]
    if _fast(argv):
        sys.exit(0)
    from .cli import main as cli_main

    cli_main()
