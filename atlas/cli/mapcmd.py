"""`atlas map`: write the HTML site (overview, timeline, concept pages, explorer, flow pages)."""
from __future__ import annotations

import click

from .. import commands
from .common import data_option, finish, table_option


@click.command("map")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), default="site",
              show_default=True,
              help="Directory to write the site into: index.html (overview), timeline.html, "
                   "concepts/<id>.html, explorer.html, flow-<id>.html.")
@table_option("as_of", help="Initial date of the page's as-of control (default: the atlas cut-off); "
                           "concepts first visible later start greyed out.")
@click.option("--force", is_flag=True,
              help="Write into a non-empty folder that has no atlas-map.json, and replace pages "
                   "the map wrote that were edited since. Files the map did not write are never "
                   "replaced or removed, even with --force.")
@table_option("repos_dir", help="Root of the local clones: each file behind a pin gets a source page "
                                "(default: $ATLAS_REPOS, else repos/ beside the data folder).")
@table_option("hops")
@click.option("--base", default=None, metavar="IRI",
              help="The address the site will be served at (https://example.org/atlas/): each concept, flow and "
                   "repository page shows its IRI under it, links its Turtle (written beside it) and embeds "
                   "its JSON-LD; `atlas export --base` writes the same IRIs.")
@data_option
def map_(out_dir, as_of, force, repos_dir, hops, base, data_dir):
    """Write the atlas as an HTML site that works from file:// with no network.

    index.html: the overview table (concepts by first visible day x the six questions);
    timeline.html: first visible commits per repository; concepts/<id>.html: one card each;
    explorer.html: the relation graph; flow-<id>.html: each flow as a DAG;
    source/<repo>/<sha>/<path>.html, when local clones are found: each pinned file and the files
    defining what the pinned lines call, with numbered lines, the pins marked, calls linked.
    atlas-map.json lists the files the map wrote (with their sha256): only those are ever
    replaced or removed; a non-empty folder without it is refused unless --force is given.

    \b
    Examples:
      atlas map
      atlas map -o /tmp/site --as-of 2024-01-01
      atlas map --base https://example.org/atlas/
    """
    finish(commands.site(out_dir, as_of, force, data_dir, repos_dir, hops, base))
