"""The one walk of a data folder: which files the atlas reads. Validate, the compiled index and
every command list their files here, so they cannot disagree.

The walk takes regular `*.yaml` / `*.yml` files only (and the generated API histories,
`*.jsonl`), skips names that start with a dot, follows a
symbolic link only when it stays inside the data folder, and visits every folder once (a link
back to a parent is a loop, not an endless walk). Everything else that would be read or followed
is reported as a `Problem` with the path it concerns: a dangling link, a link that leaves the
folder or loops, a special file (a FIFO, a device, a socket), a folder or file it cannot read,
and a tree too large to be a data folder. An entry that disappears between the listing of its
folder and the look at it (a process's folder under /proc, a file being replaced) is skipped with a
warning (`vanished`). A filesystem root is refused before anything is read.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable, NamedTuple

from ..bounded import DATA_FILE
from ..errors import AtlasError, Location, Problem

SUFFIXES = (".yaml", ".yml", ".jsonl")
MAX_ENTRIES = 200_000  # names looked at; the bundled atlas has a few hundred, a grown one 30,000 and more


class Listing(NamedTuple):
    files: list[tuple[str, int, int]]  # (path relative to the folder, size, mtime in ns), sorted
    problems: list[Problem]
    folders: list[str] = []  # every folder listed, relative to the folder ("" is the folder itself)


def refuse_root(root: Path) -> None:
    """A filesystem root (`--data /`) is never a data folder: refuse it before walking it."""
    if Path(os.path.realpath(root)) == Path(Path(os.path.realpath(root)).anchor):
        raise AtlasError("refusing to read a filesystem root as the data folder", Location(str(root)),
                         "pass the atlas's data/ folder with --data DIR (or set ATLAS_DATA)")


def _inside(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


class _Walker:
    def __init__(self, root: Path, display: Callable[[str], str]):
        self.root = str(root)
        self.real_root = os.path.realpath(root)
        self.display = display
        self.files: list[tuple[str, int, int]] = []
        self.problems: list[Problem] = []
        self.seen: set[tuple[int, int]] = set()
        self.linked: list[str] = []  # folders reached through a link, walked after the real ones
        self.folders: list[str] = []
        self.count = 0

    def problem(self, rel: str, code: str, message: str, hint: str = "") -> None:
        self.problems.append(Problem(Location(self.display(rel)), "error", code, message, hint))

    def failed(self, rel: str, exc: OSError, code: str = "unreadable", what: str = "cannot read") -> None:
        """An entry that could not be looked at: gone since its folder was listed (a warning, and the
        walk goes on without it), or unreadable (an error)."""
        if isinstance(exc, FileNotFoundError):
            self.problems.append(Problem(Location(self.display(rel)), "warning", "vanished",
                                         "disappeared, or could not be looked at, while the data folder was read; "
                                         "skipped"))
        else:
            self.problem(rel, code, f"{what}: {exc.strerror or exc}",
                         "give the folder read and search permission, or remove it" if code == "unreadable-folder"
                         else "")

    def run(self) -> Listing:
        st = os.stat(self.root)
        self.seen.add((st.st_dev, st.st_ino))
        stack = [""]
        while stack or self.linked:
            if not stack:  # real folders first: a folder is read at its real place, not through a link
                self.enter(self.linked.pop(0), stack)
                continue
            rel = stack.pop()
            if not self.folder(rel, stack):
                break
        self.files.sort()
        return Listing(self.files, self.problems, sorted(self.folders))

    def enter(self, rel: str, stack: list) -> None:
        """Walk a folder reached through a link, unless it was walked already."""
        try:
            st = os.stat(os.path.join(self.root, rel))
        except OSError as exc:
            self.failed(rel, exc)
            return
        if (st.st_dev, st.st_ino) in self.seen:
            self.problem(rel, "link-loop", "this link leads to a folder that is read already (a loop or a "
                         "second way in)", "remove the link")
            return
        self.seen.add((st.st_dev, st.st_ino))
        stack.append(rel)

    def folder(self, rel: str, stack: list) -> bool:
        """List one folder, pushing its sub-folders on `stack`; False once the walk must stop."""
        try:
            with os.scandir(os.path.join(self.root, rel) if rel else self.root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.failed(rel or ".", exc, "unreadable-folder", "cannot read folder")
            return True
        self.folders.append(rel)
        for e in entries:
            if e.name.startswith("."):
                continue
            self.count += 1
            if self.count > MAX_ENTRIES:
                self.problem(rel or ".", "too-many-files",
                             f"more than {MAX_ENTRIES} names under the data folder: not an atlas data folder",
                             "pass the atlas's data/ folder with --data DIR")
                return False
            self.entry(e, os.path.join(rel, e.name) if rel else e.name, stack)
        return True

    def entry(self, e: os.DirEntry, rel: str, stack: list) -> None:
        try:
            link = e.is_symlink()
            if link and not self.link_ok(e, rel):
                return
            st = os.stat(e.path)
        except OSError as exc:
            self.failed(rel, exc)
            return
        if stat.S_ISDIR(st.st_mode):
            if link:
                self.linked.append(rel)
                return
            if (st.st_dev, st.st_ino) in self.seen:
                self.problem(rel, "link-loop", "this folder is reached a second time (a link loop)",
                             "remove the link")
                return
            self.seen.add((st.st_dev, st.st_ino))
            stack.append(rel)
        elif stat.S_ISREG(st.st_mode):
            if e.name.endswith(SUFFIXES):
                if not os.access(e.path, os.R_OK):
                    if os.path.lexists(e.path):
                        self.problem(rel, "unreadable", "cannot read file: permission denied")
                    else:  # gone since it was looked at
                        self.failed(rel, FileNotFoundError(rel))
                    return
                if st.st_size > DATA_FILE:
                    self.problem(rel, "too-large", f"{st.st_size // 2**20} MB: larger than a data file can be "
                                 f"({DATA_FILE // 2**20} MB)", "is this the right file? it is not read")
                    return
                self.files.append((rel, st.st_size, st.st_mtime_ns))
        else:
            self.problem(rel, "special-file", f"{_kind(st.st_mode)} in the data folder: only regular files are read",
                         "remove it; data files are plain YAML files")

    def link_ok(self, e: os.DirEntry, rel: str) -> bool:
        """A symbolic link is followed only to an existing target inside the data folder."""
        try:
            target = os.path.realpath(e.path, strict=True)
        except OSError as exc:
            import errno

            if exc.errno == errno.ELOOP:
                self.problem(rel, "link-loop", "symbolic link loop", "remove the link")
            elif exc.errno != errno.ENOENT:
                self.failed(rel, exc)
            else:
                self.problem(rel, "broken-link", f"symbolic link to a missing target ({os.readlink(e.path)})",
                             "remove the link or restore its target")
            return False
        if not _inside(target, self.real_root):
            self.problem(rel, "link-outside", f"symbolic link leaves the data folder (to {target})",
                         "copy the file into the data folder instead of linking to it")
            return False
        return True


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def list_files(root: Path, display: Callable[[str], str] | None = None) -> Listing:
    """Every data file under `root` (see the module's rules) and the problems met on the way.
    `display(rel)` names a path in a problem (default: the path under `root`)."""
    root = Path(root)
    refuse_root(root)
    return _Walker(root, display or (lambda rel: os.path.join(str(root), rel))).run()
