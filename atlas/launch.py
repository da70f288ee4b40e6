"""The `atlas` console script. A command line is answered by a hot path without click
(atlas.fastpaths) when it is one, else by the click CLI (atlas.cli), which prints exactly the same
output for the same arguments.
"""
from __future__ import annotations

import os
import sys


def _write(result) -> int:
    try:
        if result.out:
            sys.stdout.write(result.out + "\n")
            sys.stdout.flush()
        if result.err:
            sys.stderr.write(result.err + "\n")
            sys.stderr.flush()
    except BrokenPipeError:
        os._exit(1)
    return result.code


def readable(argv: list[str]) -> None:
    """Stop with exit code 2 when an argument is not UTF-8 text (never a traceback); let a terminal
    that cannot show every character get escapes instead of an encoding error."""
    from .text import argument_problem

    problem = argument_problem(argv)
    if problem:
        sys.stderr.write(f"Error: {problem}\n")
        sys.exit(2)
    for stream in (sys.stdout, sys.stderr):
        if (getattr(stream, "encoding", "") or "").lower().replace("-", "") != "utf8" and \
                hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    readable(argv)
    from .fastpaths import answer

    result = answer(argv)
    if result is not None:
        sys.exit(_write(result))
    from .cli import main as cli_main

    cli_main(argv)
