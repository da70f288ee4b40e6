"""`atlas daemon start|stop|status`: the resident process (atlas.resident) of this cache folder."""
from __future__ import annotations

import click

from ..commands import Answer
from ..output import format_result
from .common import finish, format_option


@click.group()
def daemon():
    """A resident process that answers `atlas query`, `atlas where` and `atlas source` without
    Python's imports or a check of every data file: it watches the data folders for changes instead
    (Linux inotify). Answers are the same as without it; when it is not running, does not answer or
    declines, the command answers by itself. One per cache folder ($ATLAS_CACHE), for any data
    folder; it exits after --idle seconds without a request. ATLAS_RESIDENT=0 bypasses it.

    \b
    Examples:
      atlas daemon start --data data
      atlas daemon status
      atlas daemon stop
    """


@daemon.command()
@click.option("--data", "data_dirs", multiple=True, type=click.Path(file_okay=False),
              help="A data folder to open, watch and check before it is ready (repeatable); others are "
                   "opened on their first query.")
@click.option("--idle", type=click.FloatRange(1, 7 * 86400), default=1800, show_default=True,
              help="Exit after this many seconds without a request.")
@format_option
def start(data_dirs, idle, fmt):
    """Start the resident process (nothing to do when one is running)."""
    from ..resident import start as start_resident

    state, started = start_resident(list(data_dirs), idle)
    state = dict(state, started_now=started)
    finish(Answer(format_result(fmt, state, _text), "", 0))


@daemon.command()
@format_option
def stop(fmt):
    """Stop the resident process of this cache folder."""
    from ..resident import stop as stop_resident

    state = stop_resident()
    if state is None:
        finish(Answer(format_result(fmt, {"running": False}, lambda _: "no resident process was running"), "", 0))
        return
    finish(Answer(format_result(fmt, dict(state, running=False),
                                lambda s: f"stopped the resident process (pid {s['pid']}) after "
                                          f"{_answers(s['answered'])}"), "", 0))


@daemon.command()
@format_option
def status(fmt):
    """Whether one runs, and how it checks data.

    Each data folder it has opened is "watched", or checked on every answer, with the reason (a symbolic
    link or a hard-linked file inside, a network filesystem). Exit 1 when none runs."""
    from ..resident import status as resident_status

    state = resident_status()
    if state is None:
        finish(Answer(format_result(fmt, {"running": False}, lambda _: "no resident process is running"), "", 1))
    finish(Answer(format_result(fmt, state, _text), "", 0))


def _text(s: dict) -> str:
    lead = "started" if s.get("started_now") else "running"
    lines = [f"resident process {lead}: pid {s['pid']}, since {s['started'].replace('T', ' ')}, "
             f"{_answers(s['answered'])}, exits after {s['idle_s']:g} s idle"]
    if not s["watcher"]:
        lines.append("  no file watcher here (inotify): every answer checks the data files")
    for folder, how in sorted(s["folders"].items()):
        lines.append(f"  {folder}: " + ("watched" if how == "watched" else f"checked on every answer ({how})"))
    return "\n".join(lines)


def _answers(n: int) -> str:
    return f"{n} answer" + ("" if n == 1 else "s")
