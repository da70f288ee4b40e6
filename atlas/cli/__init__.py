"""The `atlas` command line: a click group whose commands live in small modules, imported only
when that command runs (so `atlas query` never pays for rdflib, pyvis, gitpython or networkx).

Every command's logic lives in the library; the modules here parse arguments, call one function
and format its result. `AtlasError` is turned into a message without a traceback in one place.
"""
from __future__ import annotations

import importlib
import sys

import click

from ..errors import AtlasError

# command name -> (module under atlas.cli, attribute)
COMMANDS = {
    "query": ("query", "query"),
    "related": ("query", "related"),
    "path": ("query", "path"),
    "questions": ("query", "questions"),
    "compare": ("query", "compare"),
    "flow": ("query", "flow"),
    "claims": ("query", "claims"),
    "repo": ("query", "repo"),
    "validate": ("data", "validate"),
    "refresh": ("history", "refresh"),
    "timeline": ("history", "timeline"),
    "verify": ("history", "verify"),
    "map": ("mapcmd", "map_"),
    "export": ("linked", "export"),
    "serve": ("serve", "serve"),
    "cache": ("cachecmd", "cache"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module = importlib.import_module(f"{__name__}.{spec[0]}")
        return getattr(module, spec[1])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ascend-atlas", prog_name="atlas", message="%(prog)s %(version)s")
def cli():
    """The Ascend communication atlas: who organises, addresses, submits, moves, links and
    whether the peer takes part - for HCCL, HiXL, SHMEM, HCCS, UB, UDMA, AIV direct drive and more.

    \b
    Examples:
      atlas query hccs
      atlas query 直驱 --lang zh
      atlas compare hccl hixl ascend-shmem
      atlas questions
    """


def main(argv=None):
    from ..text import argument_problem

    problem = argument_problem(sys.argv[1:] if argv is None else argv)
    if problem:  # bytes that are not UTF-8: a usage error, before click prints them
        click.echo(f"Error: {problem}", err=True)
        sys.exit(2)
    try:
        cli.main(args=argv, prog_name="atlas", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except AtlasError as exc:
        from ..output import terminal_safe

        click.echo(terminal_safe(f"Error: {exc}"), err=True)
        for problem in exc.problems[:20]:
            click.echo(terminal_safe(str(problem)), err=True)
        if len(exc.problems) > 20:
            click.echo(f"... and {len(exc.problems) - 20} more (run `atlas validate`)", err=True)
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(1)
    except OSError as exc:  # a file that cannot be written or read: which one and why, no traceback
        from ..output import terminal_safe

        why = str(exc) if exc.filename is None or "cannot write" in str(exc) else f"{exc.filename}: {exc.strerror}"
        click.echo(terminal_safe(f"Error: {why}"), err=True)
        sys.exit(1)
    sys.exit(0)
