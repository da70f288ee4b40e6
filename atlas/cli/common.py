"""Options and output helpers shared by every command. The shared options are built from the one
option table, `atlas.commands.OPTIONS`, which the fast launcher reads too."""
from __future__ import annotations

import functools
import sys

import click

from .. import progress
from ..commands import OPTIONS, Answer

FORMATS = OPTIONS["fmt"].choices


def table_option(dest: str, help: str | None = None):
    """The click decorator of the option `dest` of the table (`help`: this command's own words)."""
    o = OPTIONS[dest]
    kind: click.ParamType | None
    if o.folder:
        kind = click.Path(file_okay=False)
    elif o.number is not None:
        ranged = click.FloatRange if o.number is float else click.IntRange
        kind = ranged(min=o.bounds[0], max=o.bounds[1])
    else:
        kind = click.Choice(list(o.choices)) if o.choices else None
    return click.option(*o.flags, o.dest, type=kind, default=o.default, envvar=o.envvar,
                        show_default=o.default is not None, metavar=o.metavar, help=help or o.help,
                        callback=day_callback if o.day else None)


format_option = table_option("fmt")
lang_option = table_option("lang")


def shows_progress(fn):
    """Run a command with its long jobs' progress drawn (on a terminal, for a text answer only)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with progress.shown(kwargs.get("fmt") or "text"):
            return fn(*args, **kwargs)
    return run


def data_option(fn):
    """--data; every command that reads a data folder takes it, and shows its long jobs' progress."""
    return table_option("data_dir")(shows_progress(fn))


def common_options(fn):
    return data_option(format_option(fn))


def finish(result: Answer) -> None:
    """Print a command function's answer and end with its exit code."""
    if result.out:
        click.echo(result.out)
    if result.err:
        click.echo(result.err, err=True)
    if result.code:
        sys.exit(result.code)


def day_callback(ctx, param, value):
    """click callback of a day option (--as-of): the one day parser, `atlas.text.day`; a bad day is
    a usage error (exit 2) with one wording everywhere."""
    from ..text import day, not_a_day

    if value is None:
        return None
    parsed = day(value)
    if parsed is None:
        raise click.BadParameter(not_a_day(value), ctx=ctx, param=param)
    return parsed
