"""git's output, read: a commit's header, the paths of a diff (C-style quoted), the lines in which git
says it could not read a blob, and the error type of a git command that failed. Pure Python: the
probe methods and the scanner share it, and importing it costs nothing (no git runs)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import AtlasError

# how git says a blob is not in the object store (a partial clone says the second when it may not
# fetch from its promisor remote)
_UNREADABLE = re.compile(rb"unable to read ([0-9a-f]{40,64})|could not fetch ([0-9a-f]{40,64}) from "
                         rb"promisor remote")
_ESC = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
        ord("r"): 13, ord('"'): 34, ord("\\"): 92}


@dataclass
class Commit:
    sha: str
    parents: list[str]
    committer_date: str
    author_date: str


class GitError(AtlasError):
    pass


_GREP_UNREADABLE = re.compile(rb"'[0-9a-f]{4,64}:([^\n]*)': unable to read ([0-9a-f]{40,64})")


def _unreadable_blobs(err: bytes) -> dict[str, list[str]]:
    """blob -> paths, for the blobs that `git grep` (or `git log`) said it could not read."""
    out: dict[str, set[str]] = {}
    for m in _GREP_UNREADABLE.finditer(err):
        out.setdefault(m.group(2).decode(), set()).add(m.group(1).decode("utf-8", "surrogateescape"))
    for m in _UNREADABLE.finditer(err):
        out.setdefault((m.group(1) or m.group(2)).decode(), set())
    return {b: sorted(ps) for b, ps in out.items()}


def _first_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


def unquote(raw: bytes) -> bytes:
    """Undo git's C-style quoting of a path (the quotes included)."""
    out = bytearray()
    i, n = 1, len(raw) - 1
    while i < n:
        ch = raw[i]
        if ch == 92 and i + 1 < n:
            nxt = raw[i + 1]
            if 48 <= nxt <= 55:
                out.append(int(raw[i + 1:i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESC.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return bytes(out)


def header_path(rest: bytes) -> str:
    """The path of a `diff --git a/P b/P` header (no renames: both sides are the same path)."""
    if rest.startswith(b'"'):
        end = 1
        while end < len(rest):
            if rest[end] == 92:
                end += 2
                continue
            if rest[end] == 34:
                break
            end += 1
        p = unquote(rest[:end + 1])[2:]
    else:
        n = (len(rest) - 5) // 2
        p = rest[2:2 + n]
    return p.decode("utf-8", "surrogateescape")
