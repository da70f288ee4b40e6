"""`atlas validate`."""
from __future__ import annotations

import click

from .. import commands
from .common import data_option, finish, format_option


@click.command()
@data_option
@format_option
@click.option("--no-shacl", is_flag=True, help="Skip the SHACL shapes (data/shapes.ttl).")
@click.option("--fail-on-warnings", is_flag=True, help="Exit 1 on warnings too.")
def validate(data_dir, fmt, no_shacl, fail_on_warnings):
    """Check every file of data/ and print every problem as file:line:col.

    The YAML stage reads every file and checks fields and cross-record rules; the SHACL stage then
    runs the shapes of data/shapes.ttl over whatever loaded, also when the YAML stage found errors.
    Exit 0 when clean, 1 with errors (or warnings with --fail-on-warnings), 2 on usage errors.

    \b
    Example:
      atlas validate
      atlas validate --data tests/fixtures/mini --no-shacl
    """
    finish(commands.validate(data_dir, fmt, shacl=not no_shacl, fail_on_warnings=fail_on_warnings))
