"""From a line back to the atlas: which concepts, claims, flow steps and evidence cite it.

`cited(atlas)` lists every evidence pin with its owner; `where(atlas, index, repo, path, line)`
answers for one line of a file: the pins that cover it (each with its owner), the function around
it, and the nearest pins above and below in the same file at the same commit.

A path matches when it is the file's path or its end after a `/` (`dispatch.h` matches
`src/op/dispatch.h`); without a repository every repository is searched; without a commit every
pinned or indexed commit of the file is answered, one `Place` each.
"""
from __future__ import annotations

from typing import NamedTuple

from ..model.core import Atlas, Evidence
from ..view.views import Owner, owned_evidence
from .records import CodeIndex, Function


class Citation(NamedTuple):
    owner: Owner
    evidence: Evidence

    @property
    def pin(self):
        return self.evidence.pin


def cited(atlas: Atlas) -> list[Citation]:
    """Every evidence item that has a pin, with its owner, in data order (`views.owned_evidence`
    with the pins kept)."""
    return [Citation(o, e) for o, e in owned_evidence(atlas) if e.pin is not None]


class Place(NamedTuple):
    """The answer for one line of one file at one commit."""

    repo: str
    commit: str
    path: str
    line: int
    covering: list[Citation]  # the pins whose lines hold `line`
    function: Function | None  # the innermost function around the line, when indexed
    before: list[Citation]  # the nearest pins of the file that end above the line
    after: list[Citation]  # the nearest pins that start below it
    indexed: bool  # the file is in the code index

    @property
    def owners(self) -> list[Owner]:
        return list(dict.fromkeys(c.owner for c in self.covering))


def path_matches(path: str, wanted: str) -> bool:
    wanted = wanted.lstrip("/")
    return path == wanted or path.endswith("/" + wanted)


def where(atlas: Atlas, index: CodeIndex | None, repo: str | None, path: str, line: int,
          commit: str | None = None, citations: list[Citation] | None = None) -> list[Place]:
    """The places that match (repo, path, commit) with what cites `line` there, sorted by
    repository, path and commit. `citations` may pass `cited(atlas)` computed once."""
    cites = cited(atlas) if citations is None else citations

    def wanted(r: str, c: str, p: str) -> bool:
        return (repo is None or r == repo) and (commit is None or c == commit) and path_matches(p, path)

    by_file: dict[tuple[str, str, str], list[Citation]] = {}
    for cit in cites:
        p = cit.pin
        if wanted(p.repo, p.sha, p.path):
            by_file.setdefault((p.repo, p.sha, p.path), []).append(cit)
    for f in index.files if index is not None else []:
        if wanted(f.repo, f.commit, f.path):
            by_file.setdefault(f.key, [])
    return [_place(index, key, pins, line) for key, pins in sorted(by_file.items())]


def _place(index: CodeIndex | None, key: tuple[str, str, str], pins: list[Citation], line: int) -> Place:
    repo, commit, path = key
    covering = [c for c in pins if c.pin.start <= line <= c.pin.end]
    above = [c for c in pins if c.pin.end < line]
    below = [c for c in pins if c.pin.start > line]
    nearest_end = max((c.pin.end for c in above), default=None)
    nearest_start = min((c.pin.start for c in below), default=None)
    return Place(repo, commit, path, line, covering,
                 index.enclosing(repo, commit, path, line) if index is not None else None,
                 [c for c in above if c.pin.end == nearest_end],
                 [c for c in below if c.pin.start == nearest_start],
                 index is not None and index.file(repo, commit, path) is not None)
