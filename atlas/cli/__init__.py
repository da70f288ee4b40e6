"""The click commands, one small module per command group, each calling one command function.
May import: everything below; nothing imports it but the console script.

The `atlas` command line: a click group whose commands live in small modules, imported only
when that command runs (so `atlas query` never pays for rdflib, pyvis or networkx).

Every command's logic lives in the library; the modules here parse arguments, call one function
and format its result. `AtlasError` is turned into a message without a traceback in one place.
"""
from __future__ import annotations

import importlib
import sys

import click

from ..errors import AtlasError, UsageError

# command name -> (module under atlas.cli, attribute, the line `atlas --help` shows for it)
COMMANDS = {
    "query": ("query", "query", "A concept's card, a question answered, or a ranked search"),
    "related": ("query", "related", "The concepts related to one, in both directions"),
    "path": ("query", "path", "The shortest typed path between two concepts"),
    "questions": ("query", "questions", "The six-question matrix"),
    "compare": ("query", "compare", "Concepts side by side: kind, answers, first visible"),
    "flow": ("query", "flow", "The flows, or one as ordered steps"),
    "claims": ("query", "claims", "The seed's conclusions as claims, by status"),
    "repo": ("query", "repo", "The repositories, or one with its harvest"),
    "validate": ("data", "validate", "Check data/: every problem as file:line:col"),
    "refresh": ("history", "refresh", "Harvest when each probe first became visible"),
    "timeline": ("history", "timeline", "When each probe first became visible, oldest first"),
    "verify": ("history", "verify", "Check every evidence pin against the local clones"),
    "map": ("mapcmd", "map_", "Write the offline HTML map (it works from file://)"),
    "export": ("linked", "export", "The atlas as RDF: Turtle, JSON-LD or N-Triples"),
    "serve": ("serve", "serve", "Serve the atlas to coding assistants (MCP)"),
    "cache": ("cachecmd", "cache", "The cache folder's size and entries; --clear empties it"),
    "where": ("source", "where", "The concepts, claims and flow steps that cite a source line"),
    "source": ("source", "source", "The source lines behind a pin, a concept or a flow step"),
    "api": ("api", "api", "Public API symbols: first commit and release, diffs"),
}


class _Usage(click.ClickException):
    exit_code = 2

    def format_message(self) -> str:
        from ..output import terminal_safe

        return terminal_safe(self.message)


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module = importlib.import_module(f"{__name__}.{spec[0]}")
        command = getattr(module, spec[1])
        command.short_help = spec[2]
        return command

    def invoke(self, ctx):
        """A usage error of the library (an unknown filter value, a query over the limits) ends as
        click's usage errors do: the message, exit code 2."""
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise _Usage(str(exc)) from None

    def resolve_command(self, ctx, args):
        """A mistyped command is a usage error that names the closest commands, as git does."""
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, sorted(COMMANDS), n=3, cutoff=0.6)
            if close:
                alternatives = " or ".join(f"'{c}'" for c in close)
                ctx.fail(f"No such command '{name}'. Did you mean {alternatives}?")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 80})
@click.version_option(package_name="ascend-atlas", prog_name="atlas", message="%(prog)s %(version)s")
def cli():
    """The Ascend communication atlas: who organises, addresses, submits, moves, links and
    whether the peer takes part - for HCCL, HiXL, SHMEM, HCCS, UB, UDMA, AIV direct drive and more.

    \b
    Examples:
      atlas query hccs                          a concept's card
      atlas query when did hccs first appear    a question, answered first
      atlas query hccl 和 hixl 有什么区别       a comparison
      atlas claims                              every claim, by status
      atlas flow minimal-shmem-link             a flow, step by step
      atlas map -o site                         the offline map
      atlas refresh                             first visible days from repos/
      atlas serve --mcp                         the atlas for coding assistants

    \b
    Exit codes: 0 found or ok; 1 nothing found, or a check failed;
    2 a usage error (an unknown command, option or value).
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
        sys.exit(2 if isinstance(exc, UsageError) else 1)
    except BrokenPipeError:
        sys.exit(1)
    except OSError as exc:  # a file that cannot be written or read: which one and why, no traceback
        from ..output import terminal_safe

        why = str(exc) if exc.filename is None or "cannot write" in str(exc) else f"{exc.filename}: {exc.strerror}"
        click.echo(terminal_safe(f"Error: {why}"), err=True)
        sys.exit(1)
    sys.exit(0)
