"""One writer at a time: `atlas refresh` holds an exclusive lock on its data folder.

The lock (`atlas.lockfile`: an advisory lock the operating system drops when its holder ends) is
on the hidden file `.timeline.lock` beside `timeline.yaml`, which holds the holder's pid for the
message a second writer gets.
"""
from __future__ import annotations

from pathlib import Path

from ..lockfile import FileLock

LOCKNAME = ".timeline.lock"


class DataLock(FileLock):
    """`with DataLock(data_dir, wait=False):` - raises AtlasError when another process holds the
    lock and `wait` is false; else waits for it."""

    def __init__(self, data_dir, wait: bool = False):
        self.data_dir = Path(data_dir)
        super().__init__(self.data_dir / LOCKNAME, f"another refresh is running on {self.data_dir}", wait,
                         hint="wait for it to finish, or pass --wait",
                         create_hint="refresh needs a data folder it may write")
