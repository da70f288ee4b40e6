"""Options and output helpers shared by every command. The shared options are built from the one
option table, `atlas.commands.OPTIONS`, which the fast launcher reads too."""
from __future__ import annotations

import sys

import click

from ..commands import OPTIONS, Answer
from ..output import format_result, to_json

FORMATS = OPTIONS["fmt"].choices


def table_option(dest: str, help: str | None = None):
    """The click decorator of the option `dest` of the table (`help`: this command's own words)."""
    o = OPTIONS[dest]
    if o.folder:
        kind = click.Path(file_okay=False)
    elif o.number is not None:
        ranged = click.FloatRange if o.number is float else click.IntRange
        kind = ranged(min=o.bounds[0], max=o.bounds[1])
    else:
        kind = click.Choice(list(o.choices)) if o.choices else None
    return click.option(*o.flags, o.dest, type=kind, default=o.default, envvar=o.envvar,
                        show_default=o.default is not None, metavar=o.metavar, help=help or o.help)


data_option = table_option("data_dir")
format_option = table_option("fmt")
lang_option = table_option("lang")


def common_options(fn):
    return data_option(format_option(fn))


def get_atlas(data_dir):
    from ..index import load_atlas

    return load_atlas(data_dir)


def emit_json(obj) -> None:
    click.echo(to_json(obj))


def emit(fmt: str, obj, render) -> None:
    """Print `obj` as JSON, or `render(obj)` (a str) as text."""
    out = format_result(fmt, obj, render)
    if out:
        click.echo(out)


def finish(result: Answer) -> None:
    """Print a command function's answer and end with its exit code."""
    if result.out:
        click.echo(result.out)
    if result.err:
        click.echo(result.err, err=True)
    if result.code:
        sys.exit(result.code)


def fail(code: int = 1):
    sys.exit(code)


def day_callback(ctx, param, value):
    """click callback of a day option (--as-of): the one day parser, `atlas.text.day`."""
    from ..text import day

    if value is not None and day(value) is None:
        raise click.BadParameter(f"{value!r} is not a day (use YYYY-MM-DD)", ctx=ctx, param=param)
    return value
