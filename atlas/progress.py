"""Progress of the long jobs (the code index, the map, the API history, the first cache build, refresh),
shown with click's progress bar on a terminal and nowhere else.

A front turns it on for the length of one command with `shown(fmt)`: only for text answers and only when
standard error is a terminal, so a pipe, a file, JSON output and the MCP server see nothing extra, and
every final summary is printed as before. The jobs themselves only say what they do, with `bar(label,
total)`; without a front that turned progress on, that is a no-op. The switch is a context variable, so
it ends with the command's block and never leaks into another thread's or process's work.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

_SHOWN: ContextVar[bool] = ContextVar("atlas_progress_shown", default=False)


def on_terminal(fmt: str = "text", stream=None) -> bool:
    """Whether progress is drawn for an answer in `fmt` with standard error (or `stream`) as it is."""
    stream = sys.stderr if stream is None else stream
    try:
        return fmt == "text" and stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: never draw on it
        return False


@contextmanager
def shown(fmt: str = "text") -> Iterator[None]:
    """Within this block, the jobs below draw their progress (on a terminal, for a text answer)."""
    token = _SHOWN.set(on_terminal(fmt))
    try:
        yield
    finally:
        _SHOWN.reset(token)


def active() -> bool:
    return _SHOWN.get()


class Bar:
    """What a job calls while it works: `advance(n)` steps done, `total(n)` when the count grows."""

    def __init__(self, inner=None):
        self._inner = inner

    def advance(self, n: int = 1) -> None:
        if self._inner is not None and n > 0:
            self._inner.update(n)

    def total(self, n: int) -> None:
        if self._inner is not None:
            self._inner.length = max(1, n)

    def label(self, text: str) -> None:
        if self._inner is not None:
            self._inner.label = text


@contextmanager
def bar(label: str, total: int, when: bool = True) -> Iterator[Bar]:
    """A bar of `total` steps named `label` on standard error when progress is shown (and `when`: a job
    that is short this time, such as an update of a few files, passes False), else a silent one (also for
    nothing to do).
    click's own bar is used: it is already a dependency, draws only on a terminal, shows the count and
    an estimate of the time left, and redraws at most a few times a second."""
    if not (when and total > 0 and _SHOWN.get()):
        yield Bar()
        return
    import click

    with click.progressbar(length=max(1, total), label=label, file=sys.stderr, show_pos=True,
                           show_eta=True, width=30) as inner:
        yield Bar(inner)
