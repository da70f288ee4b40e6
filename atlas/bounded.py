"""Reading a file the user names, within a size bound: a data file, `repos/local.yaml`. A file
larger than its bound (a sparse file, a device, a `/proc` entry that reports size 0 and never
ends) is an error naming the file, not a wait or a MemoryError."""
from __future__ import annotations

import os

from .errors import AtlasError, Location

DATA_FILE = 16 * 1024 * 1024  # a data file (the bundled atlas's largest, timeline.yaml, is ~130 KB)
SMALL_FILE = 1024 * 1024  # a small settings file such as repos/local.yaml


class TooLarge(AtlasError):
    """A file over its bound."""


def read_bounded(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of `path`, at most `limit` of them: raises TooLarge past that (OSError as usual)."""
    with open(path, "rb") as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise TooLarge(f"the {what} is larger than {_size(limit)}; refusing to read it", Location(str(path)),
                       hint="is this the right file? (a device or an endless file is never read)")
    return raw


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n} bytes"
