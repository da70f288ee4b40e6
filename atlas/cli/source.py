"""The code behind the pins: `atlas where` and `atlas source`."""
from __future__ import annotations

import click

from .. import commands
from ..output import wants_color
from .common import common_options, finish, lang_option, table_option


@click.command()
@click.argument("location")
@lang_option
@table_option("repos_dir")
@table_option("hops")
@common_options
def where(location, lang, repos_dir, hops, data_dir, fmt):
    """What cites a line: the concepts, claims, flow steps and evidence whose pins cover
    [REPO:]PATH:LINE, the function around it (from the local clones) and the nearest pins.

    PATH may be the end of a path (dispatch.h); without REPO every repository is searched. Exit
    code 1 when no pin covers the line. Without clones the pins still answer, and the output says
    which clone would add the functions.

    \b
    Examples:
      atlas where shmem_device_udma.hpp:490
      atlas where hicann/shmem:src/device/gm2gm/engine/shmem_device_udma.hpp:490
      atlas where dispatch.h#L4166 --format json
    """
    finish(commands.where(location, lang, fmt, data_dir, repos_dir, hops))


@click.command()
@click.argument("target", nargs=-1, required=True)
@lang_option
@table_option("repos_dir")
@table_option("hops")
@common_options
def source(target, lang, repos_dir, hops, data_dir, fmt):
    """The source behind a pin, a concept, a flow step or a line, read from the local clones:
    the lines with their numbers (highlighted on a terminal, plain when piped), the function around
    them, its calls (each linked to its definitions) and its callers.

    TARGET is a pin (owner/repo@sha:path#La-Lb), a concept (its pinned evidence), a flow and one
    of its steps, a flow (every pinned step), or [REPO:]PATH:LINE. Exit code 1 when no line could
    be shown (no clone: the output says which clone to add and how).

    \b
    Examples:
      atlas source aiv-direct-drive
      atlas source full-mesh-dispatch-path wqe-write
      atlas source shmem_device_udma.hpp:490
    """
    finish(commands.source(target, lang, fmt, data_dir, repos_dir, hops, color=wants_color()))
