"""`atlas validate`."""
from __future__ import annotations

import sys

import click

from ..index import validate as run_validate
from ..output import terminal_safe
from .common import data_option, emit_json, format_option


@click.command()
@data_option
@format_option
@click.option("--no-shacl", is_flag=True, help="Skip the SHACL shapes (data/shapes.ttl).")
@click.option("--fail-on-warnings", is_flag=True, help="Exit 1 on warnings too.")
def validate(data_dir, fmt, no_shacl, fail_on_warnings):
    """Check every file of data/ and print every problem as file:line:col.

    Exit 0 when clean, 1 with errors (or warnings with --fail-on-warnings), 2 on usage errors.

    \b
    Example:
      atlas validate
      atlas validate --data tests/fixtures/mini --no-shacl
    """
    from ..paths import choose_data, describe

    chosen = choose_data(data_dir)
    loaded = run_validate(chosen.path)
    problems = list(loaded.problems)
    if not no_shacl and not loaded.errors:
        try:
            from ..shacl import shacl_problems
        except ImportError:
            shacl_problems = None
        if shacl_problems is not None:
            problems.extend(shacl_problems(loaded))
    errors = [p for p in problems if p.is_error]
    warnings = [p for p in problems if not p.is_error]
    if fmt == "json":
        emit_json({"errors": len(errors), "warnings": len(warnings), "data": str(chosen.path), "problems": [
            {"file": p.location.file, "line": p.location.line, "col": p.location.col,
             "level": p.level, "code": p.code, "message": p.message, "hint": p.hint}
            for p in problems]})
    else:
        for p in problems:
            click.echo(terminal_safe(str(p)))
        files = len({p.location.file for p in problems})
        where = f" in {files} file(s)" if files else ""
        a = loaded.atlas
        click.echo(f"{len(errors)} error(s), {len(warnings)} warning(s){where}; "
                   f"{len(a.concepts)} concepts, {len(a.claims)} claims, {len(a.flows)} flows, "
                   f"{len(a.repositories)} repositories, {len(a.sightings)} sightings")
        click.echo(terminal_safe(f"data: {describe(*chosen)}"))
    if errors or (fail_on_warnings and warnings):
        sys.exit(1)
