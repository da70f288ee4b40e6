"""The project's one exception type and the problem records that validation collects.

Everything that goes wrong because of input (a data file, a repository, a probe, an argument)
is reported as a `Problem` with a `Location`, or raised as an `AtlasError` carrying one.
"""
from __future__ import annotations

from collections import namedtuple


class Location(namedtuple("Location", "file line col", defaults=(0, 0))):
    """Where something came from: a file with 1-based line and column, or any named place
    (a repository and probe, a URL, a command-line argument). Immutable and ordered."""

    __slots__ = ()

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.col or 1}"
        return self.file


class Problem(namedtuple("Problem", "location level code message hint", defaults=("",))):
    """One finding: level is "error" or "warning"; code a stable kebab-case slug."""

    __slots__ = ()

    def __str__(self) -> str:
        text = f"{self.location}: {self.level}: {self.message} [{self.code}]"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    @property
    def is_error(self) -> bool:
        return self.level == "error"


class AtlasError(Exception):
    """The single exception type of the project. It always names a location."""

    def __init__(self, message: str, location: Location | str | None = None, hint: str = "",
                 problems: list[Problem] | None = None):
        super().__init__(message)
        if isinstance(location, str):
            location = Location(location)
        self.message = message
        self.location = location
        self.hint = hint
        self.problems = problems or []

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


class UsageError(AtlasError):
    """An argument the command cannot take (a filter value outside its choices, a query over the
    length limit): the command line reports it with exit code 2, like click's own usage errors."""


class NoMatch(AtlasError):
    """A name (`term`) that matched no record, or several: carries the closest records as `rows`
    (plain dicts with id, kind and name), which every front end prints as "did you mean"."""

    def __init__(self, message: str, location: Location | str | None = None, hint: str = "",
                 rows: list[dict] | None = None, term: str = ""):
        super().__init__(message, location, hint)
        self.rows = rows or []
        self.term = term
