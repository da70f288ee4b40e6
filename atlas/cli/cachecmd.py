"""`atlas cache`: what the cache holds, and clearing it."""
from __future__ import annotations

import click

from .. import commands
from .common import finish, format_option


@click.command("cache")
@click.option("--clear", is_flag=True, help="Remove every cache entry that no running process holds.")
@format_option
def cache(clear, fmt):
    """Show the cache folder ($ATLAS_CACHE, else ~/.cache/ascend-atlas), its size, the size of each
    part (the compiled indexes, the parses of the code, the code tables, ...) and its entries, newest
    use first; the compiled index of each data folder names that folder.

    The cache cleans up after itself: it keeps the compiled index in use, the three most recently
    used others ($ATLAS_CACHE_KEEP) and at most 400 MB in all ($ATLAS_CACHE_MAX_MB), removing the
    oldest first. An entry a running process holds is never removed.

    \b
    Examples:
      atlas cache
      atlas cache --clear
      atlas cache --format json
    """
    finish(commands.cache(clear, fmt))
