"""`atlas map`: write the interactive HTML map (index.html and one page per flow)."""
from __future__ import annotations

import click

from .common import data_option, get_atlas


def _date(ctx, param, value):
    from ..text import day

    if value is not None and day(value) is None:
        raise click.BadParameter(f"{value!r} is not a day (expected a date YYYY-MM-DD)", ctx=ctx, param=param)
    return value


@click.command("map")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default="site",
              show_default=True, help="Directory to write index.html and flow-<id>.html into.")
@click.option("--as-of", "as_of", metavar="DATE", callback=_date, default=None,
              help="Initial date of the page's as-of control (default: the atlas cut-off); "
                   "concepts first visible later start greyed out.")
@data_option
def map_(out_dir, as_of, data_dir):
    """Write a self-contained HTML map of the atlas (works from file://, no network).

    \b
    x: the six questions; y: first-visible date or kind (toggle in the page).
    Examples:
      atlas map
      atlas map -o /tmp/site --as-of 2024-01-01
    """
    from ..htmlmap import build_site

    atlas = get_atlas(data_dir)
    paths = build_site(atlas, out_dir, as_of=as_of)
    click.echo(f"wrote {len(paths)} page{'s' if len(paths) != 1 else ''} to {str(out_dir).rstrip('/')}/ "
               f"(open {paths[0]})")
