"""One writer at a time: an advisory lock (`flock` on POSIX, `msvcrt.locking` on Windows).
`atlas refresh` locks a hidden file in its data folder (`FileLock`), `atlas map` its output folder
itself (`FolderLock`: no file is created among the user's).

A lock file holds the pid of the holder, for the message another writer gets. The operating system
drops the lock when its holder ends, however it ends, so a killed process never leaves a folder
locked; a lock file stays (removing it would race with the next holder).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .errors import AtlasError, Location


def try_lock(fd: int, block: bool) -> bool:
    """Take the lock on `fd`; False when another process holds it and `block` is false."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        while True:
            try:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
                return True
            except OSError:
                if not block:
                    return False
                time.sleep(0.2)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


def holder(file: Path) -> str:
    """The pid written in a lock file, or ""."""
    try:
        pid = file.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
    return pid if pid.isdigit() else ""


class FileLock:
    """`with FileLock(file, what, wait=...):` holds the lock on `file`. When another process holds it,
    raises AtlasError naming `what` (and the holder's pid) unless `wait`; then it says on standard
    error that it waits, and waits."""

    def __init__(self, file: Path, what: str, wait: bool = False, hint: str = "", create_hint: str = ""):
        self.file = Path(file)
        self.what = what
        self.wait = wait
        self.hint = hint
        self.create_hint = create_hint
        self.fd = -1

    def _open(self) -> int:
        try:
            return os.open(self.file, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise AtlasError(f"cannot create the lock file: {exc.strerror or exc}", Location(str(self.file)),
                             hint=self.create_hint) from None

    def _mark(self) -> None:
        try:
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            os.write(self.fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # a full disk: the pid only serves the message another writer gets

    def __enter__(self) -> "FileLock":
        self.fd = self._open()
        if not try_lock(self.fd, False):
            pid = holder(self.file) if self.file.is_file() else ""
            busy = self.what + (f" (pid {pid})" if pid else "")
            if not self.wait:
                os.close(self.fd)
                self.fd = -1
                raise AtlasError(busy, Location(str(self.file)), hint=self.hint)
            from .output import terminal_safe

            sys.stderr.write(terminal_safe(f"waiting: {busy}") + "\n")
            sys.stderr.flush()
            try_lock(self.fd, True)
        self._mark()
        return self

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            if self.file.is_file():
                try:
                    os.ftruncate(self.fd, 0)
                except OSError:
                    pass
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = -1


class FolderLock(FileLock):
    """The lock on a folder itself (`flock` on its descriptor), so that taking it writes nothing
    into the folder. Where folders cannot be locked (Windows), a hidden file `fallback` in it is."""

    def __init__(self, folder: Path, what: str, fallback: str, wait: bool = False, hint: str = ""):
        super().__init__(Path(folder) / fallback, what, wait, hint)
        self.folder = Path(folder)

    def _open(self) -> int:
        if not hasattr(os, "O_DIRECTORY"):
            return super()._open()
        self.file = self.folder
        try:
            return os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise AtlasError(f"cannot open the folder to lock it: {exc.strerror or exc}",
                             Location(str(self.folder))) from None

    def _mark(self) -> None:
        if self.file != self.folder:
            super()._mark()
