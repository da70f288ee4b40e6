"""Loose copies of pinned files: any regular file in the clones folder that is not inside a git
repository, used for a pin only when its git blob id is the one the pin records.

A pin may carry the id of the file's git blob (`blob:` in the data, written by `atlas refresh`
where a clone exists). Whoever holds a copy of the file from any source - a download, a mail, a
copy kept from a clone now gone - drops it anywhere under `--repos` (or points `--repos` at a
folder of such files): `atlas verify` then checks the pin against it, and the code index, `atlas
source` and the site read it, as they read a clone. A copy is matched by its bytes, never by its
name, so a different version of the file is refused rather than shown under a pin it does not
match.

The blob id is git's: the SHA-1 of `blob <size>\\0` followed by the bytes (`git hash-object`).
The walk skips git directories, work trees (a folder holding `.git`), names starting with a dot,
`local.yaml` and files over `MAX_SIZE`; it follows no symbolic link and stops after `MAX_FILES`
files, so a clones folder full of work trees costs a directory listing, not a read of every file.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import NamedTuple

MAX_FILES = 10_000
MAX_SIZE = 16 * 1024 * 1024
BLOB_RE = re.compile(r"^[0-9a-f]{7,40}$")  # a blob id, full or abbreviated as git abbreviates it


def blob_id(data: bytes) -> str:
    """git's blob id of `data` (what `git hash-object` prints for a file holding it)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


class LooseFile(NamedTuple):
    path: str
    size: int
    mtime: int


def _is_git_dir(entry: os.DirEntry) -> bool:
    try:
        names = set(os.listdir(entry.path))
    except OSError:
        return True  # unreadable: not walked
    return ".git" in names or ("HEAD" in names and "objects" in names)


def listing(root: Path) -> list[LooseFile]:
    """The candidate loose files under `root`, sorted by path (see the module's docstring)."""
    out: list[LooseFile] = []
    todo = [str(root)]
    while todo and len(out) < MAX_FILES:
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") or (folder == str(root) and e.name == "local.yaml"):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if not _is_git_dir(e):
                        todo.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    if st.st_size <= MAX_SIZE:
                        out.append(LooseFile(e.path, st.st_size, st.st_mtime_ns))
            except OSError:
                continue
            if len(out) >= MAX_FILES:
                break
    return sorted(out)


def stamp(files: list[LooseFile]) -> str:
    """Changes when a loose file appears, goes, or changes size or time."""
    return hashlib.sha1("\n".join(f"{f.path}\0{f.size}\0{f.mtime}" for f in files).encode(
        "utf-8", "surrogateescape")).hexdigest() if files else ""


class LooseCopies:
    """The loose files under a folder, hashed on first need."""

    def __init__(self, root: Path, files: list[LooseFile] | None = None):
        self.root = Path(root)
        self.files = listing(self.root) if files is None and self.root.is_dir() else (files or [])
        self._ids: dict[str, str] | None = None  # path -> blob id

    def __bool__(self) -> bool:
        return bool(self.files)

    def ids(self) -> dict[str, str]:
        if self._ids is None:
            self._ids = {}
            for f in self.files:
                data = self._read(f.path)
                if data is not None:
                    self._ids[f.path] = blob_id(data)
        return self._ids

    def find(self, blob: str) -> str | None:
        """The path of a loose file whose blob id is `blob` (or starts with it, for an
        abbreviated id); None when none is, or when an abbreviation matches two different blobs."""
        if not blob or not BLOB_RE.match(blob):
            return None
        hits = {b: p for p, b in self.ids().items() if b.startswith(blob)}
        return next(iter(hits.values())) if len(hits) == 1 else None

    def named(self, path: str) -> list[tuple[str, str]]:
        """(path, blob id) of the loose files with the same file name as `path` (to say why a copy
        was not used)."""
        name = path.rsplit("/", 1)[-1]
        return [(p, b) for p, b in sorted(self.ids().items()) if os.path.basename(p) == name]

    def read(self, blob: str) -> bytes | None:
        """The bytes of the loose copy of `blob`, checked again as they are read."""
        path = self.find(blob)
        data = self._read(path) if path else None
        return data if data is not None and blob_id(data).startswith(blob) else None

    @staticmethod
    def _read(path: str) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_SIZE + 1)
        except OSError:
            return None
        return None if len(data) > MAX_SIZE else data
