"""One writer at a time: `atlas refresh` holds an exclusive lock on its data folder.

The lock is an advisory lock (`flock` on POSIX, `msvcrt.locking` on Windows) on the hidden file
`.timeline.lock` beside `timeline.yaml`. The file holds the pid of the holder, for the message a
second writer gets. The operating system drops the lock when its holder ends, however it ends, so a
killed refresh never leaves the folder locked; the file itself stays (removing it would race).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import AtlasError, Location

LOCKNAME = ".timeline.lock"


def _try(fd: int, block: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        while True:
            try:
                os.lseek(fd, 0, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
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


def _holder(file: Path) -> str:
    try:
        pid = file.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
    return pid if pid.isdigit() else ""


class DataLock:
    """`with DataLock(data_dir, wait=False):` - raises AtlasError when another process holds the
    lock and `wait` is false; else waits for it."""

    def __init__(self, data_dir, wait: bool = False):
        self.data_dir = Path(data_dir)
        self.file = self.data_dir / LOCKNAME
        self.wait = wait
        self.fd = -1

    def __enter__(self) -> "DataLock":
        try:
            self.fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise AtlasError(f"cannot create the lock file: {exc.strerror or exc}",
                             Location(str(self.file)),
                             hint="refresh needs a data folder it may write") from None
        if not _try(self.fd, False):
            if not self.wait:
                pid = _holder(self.file)
                os.close(self.fd)
                self.fd = -1
                raise AtlasError(f"another refresh is running on {self.data_dir}"
                                 + (f" (pid {pid})" if pid else ""), Location(str(self.file)),
                                 hint="wait for it to finish, or pass --wait")
            _try(self.fd, True)
        os.ftruncate(self.fd, 0)
        os.lseek(self.fd, 0, os.SEEK_SET)
        os.write(self.fd, f"{os.getpid()}\n".encode())
        return self

    def __exit__(self, *exc) -> None:
        if self.fd >= 0:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = -1
