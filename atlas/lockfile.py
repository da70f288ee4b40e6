"""The one file lock of the atlas: an advisory lock (`flock` on POSIX; on Windows `msvcrt.locking`,
which has no shared locks, so a shared lock is not taken there). The operating system drops a lock
when its holder ends, however it ends, so a killed process never leaves anything locked.

- `Lock(path)`: a lock on one file, created when missing, shared or exclusive, waiting, for a time,
  or not at all; `stale()` says the file was removed or replaced after it was opened. The cache
  (a reader of an entry holds it shared, eviction takes it exclusively without waiting), the compiled
  index's generations and the SPARQL store's versions and builds lock with it.
- `FileLock` / `FolderLock`: one writer at a time, with a message naming who holds it. `atlas refresh`
  locks a hidden file in its data folder (`FileLock`), `atlas map` its output folder itself
  (`FolderLock`: no file is created among the user's). Such a lock file holds the pid of the holder,
  for the message another writer gets, and stays (removing it would race with the next holder).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .errors import AtlasError, Location

POLL_S = 0.02  # how often a lock that waits for a time asks again


def take(fd: int, shared: bool = False, block: bool = True) -> bool:
    """Take the lock on `fd` (shared or exclusive); False when another process holds it and `block`
    is false."""
    try:
        import fcntl
    except ImportError:  # Windows
        return shared or _take_msvcrt(fd, block)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if block else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


def _take_msvcrt(fd: int, block: bool) -> bool:
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


class Lock:
    """An advisory lock on one file, created when missing. `shared(timeout)` waits by default;
    `exclusive(timeout)` gives up at once by default; a timeout of None waits as long as it takes, a
    number gives up after that many seconds. `stale()` is true when the file was removed or replaced
    after it was opened (whoever removed it held it exclusively). `release()` (or leaving a `with`
    block) closes the file, which drops the lock."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.fd = -1

    def _open(self) -> None:
        if self.fd < 0:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)

    def _take(self, shared: bool, timeout: float | None) -> bool:
        self._open()
        if timeout is None:
            return take(self.fd, shared, block=True)
        end = time.monotonic() + timeout
        while not take(self.fd, shared, block=False):
            if time.monotonic() >= end:
                return False
            time.sleep(POLL_S)
        return True

    def shared(self, timeout: float | None = None) -> bool:
        return self._take(True, timeout)

    def exclusive(self, timeout: float | None = 0) -> bool:
        return self._take(False, timeout)

    def stale(self) -> bool:
        try:
            a, b = os.fstat(self.fd), os.stat(self.path)
        except OSError:
            return True
        return (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the lock
            self.fd = -1

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def locked(path: Path, shared: bool = False, wait: bool = True) -> Lock | None:
    """A `Lock` on `path`, taken (waiting for it when `wait`), or None when another process holds it."""
    lock = Lock(path)
    try:
        taken = lock._take(shared, None if wait else 0)
    except OSError:
        lock.release()
        raise
    if not taken:
        lock.release()
        return None
    return lock


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
        if not take(self.fd, block=False):
            pid = holder(self.file) if self.file.is_file() else ""
            busy = self.what + (f" (pid {pid})" if pid else "")
            if not self.wait:
                os.close(self.fd)
                self.fd = -1
                raise AtlasError(busy, Location(str(self.file)), hint=self.hint)
            from .output import terminal_safe

            sys.stderr.write(terminal_safe(f"waiting: {busy}") + "\n")
            sys.stderr.flush()
            take(self.fd, block=True)
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
