"""Options and output helpers shared by every command."""
from __future__ import annotations

import sys

import click

from ..output import format_result, to_json

FORMATS = ("text", "json")


def data_option(fn):
    return click.option(
        "--data", "data_dir", type=click.Path(file_okay=False), default=None,
        help="Data directory (default: $ATLAS_DATA, else the bundled atlas).")(fn)


def format_option(fn):
    return click.option(
        "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
        help="Output format; json is stable (see docs/json.md).")(fn)


def common_options(fn):
    return data_option(format_option(fn))


def get_atlas(data_dir):
    from ..index import load_atlas

    return load_atlas(data_dir)


def get_searchable(data_dir):
    """(atlas, search index) of the compiled index; the search index is read from the cache."""
    from ..index import load_keyed
    from ..search import open_index

    materialise, key = load_keyed(data_dir, lazy=True)
    atlas = materialise()
    return atlas, open_index(key, lambda: atlas)


def emit_json(obj) -> None:
    click.echo(to_json(obj))


def emit(fmt: str, obj, render) -> None:
    """Print `obj` as JSON, or `render(obj)` (a str) as text."""
    out = format_result(fmt, obj, render)
    if out:
        click.echo(out)


def fail(code: int = 1):
    sys.exit(code)
