"""`atlas api`: the public API of the repositories, symbol by symbol and release by release."""
from __future__ import annotations

import click

from .. import commands
from .common import common_options, finish


@click.command()
@click.argument("symbol", required=False)
@click.option("--repo", default=None, metavar="OWNER/NAME", help="The repository (for --since and --diff).")
@click.option("--since", default=None, metavar="TAG", help="The symbols first released after this release.")
@click.option("--diff", nargs=2, default=None, metavar="A B",
              help="What was added, removed or changed its signature from release A to release B.")
@common_options
def api(symbol, repo, since, diff, data_dir, fmt):
    """The public API symbols of the repositories: each with its first commit on the mainline, the
    first release that contains it, its removal and signature changes (from `atlas refresh`).

    \b
    Examples:
      atlas api aclshmemx_udma_put_nbi
      atlas api --repo hicann/shmem --since v1.3.0
      atlas api --diff v8.5.0 v9.0.0 --repo hicann/hccl
      atlas api --repo hicann/runtime --format json
    """
    if symbol and (repo or since or diff):
        raise click.UsageError("give a SYMBOL, or --repo with --since or --diff, not both")
    if not symbol and not repo:
        raise click.UsageError("give a SYMBOL, or --repo OWNER/NAME (with --since TAG or --diff A B)")
    if since and diff:
        raise click.UsageError("--since and --diff cannot be combined")
    finish(commands.api(symbol, repo, since, diff, fmt, data_dir))
