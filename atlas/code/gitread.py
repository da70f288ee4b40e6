"""git against one clone, for the code index: object names, blob contents, tree listings and word
searches at a commit, never a checkout.

Every command runs through the package's one runner (atlas.gitrun) with no transport allowed, so a
partial clone never fetches a missing blob over the network: git reports it missing and the index
names it. Requests go in batches (`git cat-file --batch-check` and `--batch`, one process each for
any number of objects).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from ..errors import AtlasError, Location
from ..gitrun import Git
# how git grep names a blob it cannot read: "error: '<commit>:<path>': unable to read <blob>"
_UNREADABLE = re.compile(r"'([0-9a-f]{40,64}):(.*)': unable to read ([0-9a-f]{40,64})")


class ObjectInfo(NamedTuple):
    """An object that is present."""

    oid: str
    kind: str
    size: int


class GitReader:
    """The git commands of one clone (a bare repository or a work tree's git directory)."""

    def __init__(self, gitdir: Path, name: str):
        self.gitdir = str(gitdir)
        self.name = name
        self.git = Git(self.gitdir, name)

    def run(self, *args: str, input: bytes | None = None) -> tuple[int, bytes, bytes]:
        return self.git.run(*args, input=input)

    def info(self, names: list[str]) -> dict[str, ObjectInfo | None]:
        """`git cat-file --batch-check` for object names (`<commit>^{commit}`, `<commit>:<path>`,
        a blob id): name -> (oid, type, size), or None when git has no such object."""
        if not names:
            return {}
        if any("\n" in n for n in names):
            raise AtlasError("an object name holds a line break", Location(self.name))
        status, out, err = self.run("cat-file", "--batch-check", input="".join(n + "\n" for n in names).encode())
        rows = out.decode("utf-8", "surrogateescape").split("\n")
        if status or len(rows) < len(names):
            raise AtlasError(f"git cat-file --batch-check failed: {_first_line(err)}", Location(self.name))
        answers: dict[str, ObjectInfo | None] = {}
        for name, row in zip(names, rows):
            parts = row.rsplit(" ", 2)
            if len(parts) == 3 and parts[2].isdigit():
                answers[name] = ObjectInfo(parts[0], parts[1], int(parts[2]))
            else:  # "<name> missing" (or "ambiguous")
                answers[name] = None
        return answers

    def contents(self, oids: list[str]) -> dict[str, bytes | None]:
        """`git cat-file --batch` for blob ids: oid -> bytes, or None when the blob is missing."""
        if not oids:
            return {}
        status, out, err = self.run("cat-file", "--batch", input="".join(o + "\n" for o in oids).encode())
        if status:
            raise AtlasError(f"git cat-file --batch failed: {_first_line(err)}", Location(self.name))
        got: dict[str, bytes | None] = {}
        pos = 0
        for oid in oids:
            nl = out.find(b"\n", pos)
            if nl < 0:
                raise AtlasError("truncated answer from git cat-file --batch", Location(self.name))
            head = out[pos:nl].split(b" ")
            pos = nl + 1
            if len(head) != 3:  # "<oid> missing"
                got[oid] = None
                continue
            size = int(head[2])
            got[oid] = out[pos:pos + size]
            pos += size + 1
        return got

    def tree_entry(self, commit: str, path: str) -> tuple[str, str] | None:
        """(type, oid) of `path` in the tree of `commit`, read from trees only (so a missing blob
        is still named); None when the path is not there."""
        status, out, err = self.run("ls-tree", "-z", "--full-tree", commit, "--", path)
        if status:
            raise AtlasError(f"cannot read the tree of {commit[:12]} (a tree object is missing?): "
                             f"{_first_line(err)}", Location(self.name))
        for entry in out.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            if name.decode("utf-8", "surrogateescape") == path:
                _mode, kind, oid = meta.decode().split(" ")
                return kind, oid
        return None

    def list_files(self, commit: str, suffixes: tuple[str, ...]) -> list[tuple[str, str]]:
        """(path, blob oid) of every file of `commit` whose name ends with one of `suffixes`
        (`git ls-tree -r`, whose paths are literal: the suffixes are matched here)."""
        status, out, err = self.run("ls-tree", "-r", "-z", "--full-tree", commit)
        if status:
            raise AtlasError(f"cannot list the tree of {commit[:12]}: {_first_line(err)}", Location(self.name))
        rows = []
        for entry in out.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            parts = meta.split(b" ")
            path = name.decode("utf-8", "surrogateescape")
            if len(parts) == 3 and parts[1] == b"blob" and path.lower().endswith(suffixes):
                rows.append((path, parts[2].decode()))
        return rows

    def grep_words(self, commit: str, words: list[str], pathspecs: list[str]) -> tuple[list[str], dict[str, str]]:
        """(the files of `commit` that hold any of `words` as a whole word, {path: blob} of the
        files git could not read, which may hold them too). One `git grep -l -w -F` for all words."""
        if not words:
            return [], {}
        args = ["grep", "-l", "-z", "-I", "-w", "-F", "--no-textconv"]
        for w in words:
            args += ["-e", w]
        status, out, err = self.run(*args, commit, "--", *pathspecs)
        text = err.decode("utf-8", "surrogateescape")
        unreadable = {m.group(2): m.group(3) for m in _UNREADABLE.finditer(text)}
        if status not in (0, 1) and not unreadable:
            raise AtlasError(f"git grep failed at {commit[:12]}: {_first_line(err)}", Location(self.name))
        paths = []
        prefix = commit + ":"
        for item in out.split(b"\0"):
            name = item.decode("utf-8", "surrogateescape")
            if name.startswith(prefix):
                paths.append(name[len(prefix):])
        return paths, unreadable


def blob_lines(data: bytes) -> list[str]:
    """A blob's lines as git counts them: split at each `\\n` only, every other byte kept (a `\\r`
    before the `\\n` of a Windows line end, a form feed, U+2028 stay in their line); a last line
    without a newline is a line."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _first_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "(no message)"
