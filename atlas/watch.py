"""Whether a data folder may have changed since its files were last checked, known without a `stat`
per file: the kernel's file events (Linux inotify), read through ctypes.

A query checks the stamps of every data file (atlas.index.unchanged), about a microsecond each: 11 ms at
10,000 files, more than Python's start-up. A long-running process (atlas.resident) watches each data
folder instead: every folder under it is watched for writes, attribute changes, creations, deletions
and renames, and the events are read (without waiting) before each answer. The kernel queues an event
within the write call itself, so an edit that finished before a query started is always seen.

`Watcher.trusted(root)` is True only when the folder was watched before its files were last checked
(`verified`) and no event has arrived since. A folder is never trusted, and its files are checked as
before, when an edit could reach its files without an event on the watched folders:

- a symbolic link under it (the link's target may be written through another path);
- a file with several hard links (written through another name, it reports to that name's folder);
- a folder on a network or FUSE filesystem (another machine's writes make no local events);
- a queue overflow, or more folders than the user's inotify watches allow.

Also not seen: writes through a memory map (no event is made for them). The Python libraries that wrap
inotify (watchdog, watchfiles) read events on a thread of their own, so an event can still be in
transit when a query asks; here the caller reads the queue itself, in order, before it answers.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from pathlib import Path

_EVENTS = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)  # modify, attrib, close-write,
# moved from/to, create, delete, delete-self, move-self
_ONLYDIR, _DONT_FOLLOW = 0x1000000, 0x2000000
_OVERFLOW, _IGNORED = 0x4000, 0x8000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then the name, padded)
_NETWORK = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs",
            "virtiofs", "vboxsf", "davfs"}


class Watcher:
    """The data folders one process watches, and whether each is unchanged since last checked."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self._folder_of: dict[int, Path] = {}  # watch descriptor -> the data folder it is under
        self._clean: dict[Path, bool] = {}  # armed folders: unchanged since their files were checked
        self.why: dict[Path, str] = {}  # the folders that are never trusted, and why

    def close(self) -> None:
        os.close(self.fd)

    def trusted(self, root: Path) -> bool:
        """True when no file under `root` can have changed since it was last `verified`. The first
        call for a folder starts watching it (and is False: its files must be checked once)."""
        self._read_events()
        if root not in self._clean:
            self._arm(root)
            return False
        return self._clean[root] and root not in self.why

    def verified(self, root: Path) -> None:
        """`root`'s files were just checked against the stamps of the state being served."""
        if root in self._clean:
            self._clean[root] = True

    def state(self) -> dict[str, str]:
        """Each watched folder: "watched" or why its files are checked on every answer."""
        return {str(r): self.why.get(r, "watched") for r in self._clean}

    def _read_events(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size + size
                if mask & _OVERFLOW:
                    self._clean = {}  # every folder is walked and checked again
                    continue
                root = self._folder_of.get(wd)
                if root is not None:
                    self._clean.pop(root, None)  # walked again (a new folder gets its watch), then checked
                if mask & _IGNORED:
                    self._folder_of.pop(wd, None)

    def _arm(self, root: Path) -> None:
        """Watch every folder under `root` (before its files are checked), noting what makes it
        untrustworthy."""
        self.why.pop(root, None)
        why = _remote(root)
        stack = [str(root)]
        while stack:
            folder = stack.pop()
            wd = self._add(self.fd, os.fsencode(folder), _EVENTS | _ONLYDIR | _DONT_FOLLOW)
            if wd < 0:
                why = why or f"a folder cannot be watched ({os.strerror(ctypes.get_errno())}): {folder}"
                continue
            self._folder_of[wd] = root
            try:
                entries = list(os.scandir(folder))
            except OSError as exc:
                why = why or f"a folder cannot be read ({exc.strerror}): {folder}"
                continue
            for entry in entries:
                if entry.is_symlink():
                    why = why or f"a symbolic link: {entry.path}"
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.stat(follow_symlinks=False).st_nlink > 1:
                    why = why or f"a file with several hard links: {entry.path}"
        if why:
            self.why[root] = why
        self._clean[root] = False


def _remote(root: Path) -> str | None:
    """Why `root` is on a filesystem whose changes make no local events (network, FUSE), or None."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "the mounted filesystems cannot be read (/proc/self/mountinfo)"
    best, kind = "", ""
    target = str(root)
    for line in lines:
        fields = line.split()
        if "-" not in fields:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[fields.index("-") + 1]
    if kind in _NETWORK or kind.startswith("fuse"):
        return f"on a {kind} filesystem ({best})"
    return None
