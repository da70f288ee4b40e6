"""The interface of a probe method (see the package's docstring) and the records it shares with the
scanner. A method is a plain object; `Method` is its shape, for the type checker and the reader.

`Surface` is the shape of a surface method: one that is not fed a probe's values but harvests what a
repository declares (its public API and releases) in the same pass. The job of a repository
(`refresh._RepoJob`) asks each surface method whether the repository declares it (`declared`), whether
its stored file still answers without git (`current`, the quick path), and otherwise starts a run
(`start`) that says where its stored history ends (`prepare` sets `run.base`; "" = from the root).
The pass then feeds its matcher like any other (its `result()` is kept in `Scan.results`; after
missing blobs the scanner asks `from_history` instead); `run.finish(...)` builds the file's text
(`run.text`, "" when unchanged), `annotate` gives the probes' sightings what the surface knows (the
first release), and the run's file is written by `write` in the main process, under the lock."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from ...model.core import Repository, Sighting
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
    surface: bool  # False: a probe method

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


class SurfaceRun(Protocol):
    """One repository's run of a surface method, in its job."""

    base: str  # the commit its stored history ends at ("" = read from the root)
    reads: bool  # whether the pass must feed its matcher (False: nothing to read in the history)
    values: list[str]  # what its matcher is made from
    text: str  # after `finish`: the file to write ("" when it did not change)

    def prepare(self, g: "Repo", line: Any, fetch_missing: bool = False) -> None:
        """Read the stored harvest and decide `base`."""

    def finish(self, g: "Repo", line: Any, commits: Any, full: bool, started: str, now: str) -> None:
        """After the pass: `commits` is the matcher's result (None when the pass did not run), `full`
        whether the pass read from the root."""

    def annotator(self) -> Callable[[str], str]:
        """commit -> what `annotate` gives a sighting introduced by it."""


class Surface(Protocol):
    name: str
    surface: bool  # True
    reads_contents: bool

    def declared(self, repo: "Repository | None") -> bool:
        """Whether the repository declares this surface."""

    def values(self, repo: "Repository") -> list[str]:
        """The values its matcher is made from."""

    def matcher(self, values: list[str]) -> Matcher:
        """A matcher for the pass."""

    def from_history(self, history: "_History", values: list[str]) -> Any:
        """The matcher's result, from the `--raw` listing of a scan that met missing blobs."""

    def current(self, data_dir: Any, repo: "Repository", clone: Any, ref: str, head: str, cutoff: str,
                fetch_missing: bool) -> bool:
        """Whether its stored file answers as it is (read without git)."""

    def start(self, data_dir: Any, repo: "Repository", clone: Any, cutoff: str) -> SurfaceRun:
        """A run in the repository's job."""

    def write(self, data_dir: Any, repo: str, text: str) -> None:
        """Store a run's file (main process, under the refresh lock)."""

    def prune(self, data_dir: Any, keep: set[str]) -> list[str]:
        """Remove the files of repositories that do not declare it any more."""

    def annotate(self, sightings: "list[Sighting]", first: Callable[[str], str]) -> "list[Sighting]":
        """The repository's sightings with what the surface knows of them."""
