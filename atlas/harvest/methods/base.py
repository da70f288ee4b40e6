"""The interface of a probe method (see the package's docstring) and the records it shares with the
scanner. A method is a plain object; `Method` is its shape, for the type checker and the reader."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..gitscan import Commit, Repo, _History


class Matcher(Protocol):
    """One method's part of a scan: fed the diff of each mainline commit, oldest first."""

    def segment(self, data: bytes, start: int, end: int) -> None:
        """A piece of the current commit's `git log -p -U0` output, `data[start:end]`; a file's header
        is never split from its lines."""

    def commit_done(self, commit: "Commit") -> list[str]:
        """The current commit ended: the values first visible at it (the scanner records them)."""

    def done(self) -> bool:
        """Nothing is left to find (when every matcher is done the scan stops early)."""


class Method(Protocol):
    name: str  # as the data write it: `term:`, `path:`
    reads_contents: bool  # whether missing blobs can hide the value (trees alone answer it otherwise)

    def normalize(self, value: str) -> tuple[str, str]:
        """(the value to scan for, '' or why the probe cannot be harvested)."""

    def matcher(self, values: list[str]) -> Matcher:
        """A matcher for these (normalised) values."""

    def settle(self, found: dict[str, "Commit"], history: "_History", order: dict[str, int],
               skipped: set[str], contents: dict[str, bytes], values: list[str]) -> None:
        """Complete `found` (value -> first commit) for a scan that left out the `skipped` paths (their
        blobs are missing): what the readable versions of those paths (`contents`, blob -> bytes)
        add. `order` is each commit's index in the history. Marking what stays uncertain is the
        scanner's job."""

    def holding(self, g: "Repo", value: str, commits: list[str],
                unreadable: dict[str, list[str]] | None = None) -> set[str]:
        """The commits whose tree holds the value (the independent check). Blobs that could not be
        read are added to `unreadable` (blob -> paths): the answer says nothing about them."""
