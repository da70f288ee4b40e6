"""`term:` a literal string (UTF-8 bytes, within one line) is visible at a commit when some file of its
tree holds it. In the diff stream a term's occurrences are counted on the added (+1) and removed (-1)
lines of each commit: it first becomes visible at the first commit where the running count is above
zero. The independent check is `git grep -F` on the commit's tree."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...errors import Location
from ..gitformat import Commit, GitError, _first_line, _unreadable_blobs

if TYPE_CHECKING:
    from ..gitscan import Repo, _History


class TermMatcher:
    def __init__(self, values: list[str]):
        self.active = {t.encode("utf-8"): t for t in dict.fromkeys(values)}
        self.counts = {t: 0 for t in self.active}
        self.touched: set[bytes] = set()
        self.rx = self._compile()

    def _compile(self):
        if not self.active:
            return None
        alt = b"|".join(re.escape(t) for t in sorted(self.active, key=len, reverse=True))
        return re.compile(alt)

    def done(self) -> bool:
        return not self.active

    def segment(self, data: bytes, start: int, end: int) -> None:
        """Count the active terms on the added (+1) and removed (-1) lines of the segment."""
        if self.rx is None:
            return
        last = -1
        for m in self.rx.finditer(data, start, end):
            ls = data.rfind(b"\n", 0, m.start()) + 1
            if ls == last:
                continue
            last = ls
            first = data[ls]
            if first != 43 and first != 45:  # '+' / '-'
                continue
            if data.startswith((b"+++ ", b"--- "), ls) and _in_header(data, ls):
                continue
            self._count(data[ls + 1:data.find(b"\n", ls)], 1 if first == 43 else -1)

    def _count(self, line: bytes, sign: int) -> None:
        for t in self.active:
            c = line.count(t)
            if c:
                self.counts[t] += sign * c
                self.touched.add(t)

    def commit_done(self, commit: Commit) -> list[str]:
        found = []
        for t in self.touched:
            if self.counts[t] > 0:
                found.append(self.active.pop(t))
                del self.counts[t]
            else:
                self.counts[t] = 0
        self.touched.clear()
        if found:
            self.rx = self._compile()
        return found


def _in_header(data: bytes, ls: int) -> bool:
    """A `--- `/`+++ ` line is a file header when no hunk (`@@`) started since `diff --git`."""
    d = data.rfind(b"\ndiff --git ", 0, ls)
    return data.rfind(b"\n@@", max(d, 0), ls) < 0


class Term:
    name = "term"
    reads_contents = True

    def normalize(self, value: str) -> tuple[str, str]:
        if "\n" in value or "\r" in value:
            return value, "a term must be one line (terms are matched within a line)"
        if not value.strip():
            return value, "empty term"
        return value, ""

    def matcher(self, values: list[str]) -> TermMatcher:
        return TermMatcher(values)

    def settle(self, found: dict[str, Commit], history: "_History", order: dict[str, int], skipped: set[str],
               contents: dict[str, bytes], values: list[str]) -> None:
        """A term found in a readable version of a skipped path before the scan's answer replaces it."""
        for t in dict.fromkeys(values):
            needle = t.encode("utf-8")
            for i, c in enumerate(history.commits):
                if t in found and order.get(found[t].sha, -1) <= i:
                    break
                if any(p in skipped and needle in contents.get(new, b"") for p, _old, new, _st in c.changes):
                    found[t] = c.commit()
                    break

    def holding(self, g: "Repo", value: str, commits: list[str],
                unreadable: dict[str, list[str]] | None = None) -> set[str]:
        """The commits whose tree has `value` in some file (`git grep -F`).

        git grep reports a blob it cannot read on stderr and goes on (exit 0 or 1): such blobs
        are added to `unreadable` (blob -> paths), since the answer says nothing about them."""
        held: set[str] = set()
        for i in range(0, len(commits), 256):
            batch = commits[i:i + 256]
            status, out, err = g.run("grep", "-F", "-l", "-z", "-I", "-e", value, *batch, "--", check=False)
            blobs = _unreadable_blobs(err)
            if blobs and unreadable is not None:
                for b, ps in blobs.items():
                    unreadable[b] = sorted(set(unreadable.get(b, [])) | set(ps))
            if status not in (0, 1) or (blobs and unreadable is None):
                raise GitError(f"{g.name}: git grep failed: {_first_line(err)}", Location(g.name))
            held |= {item.split(b":", 1)[0].decode() for item in out.split(b"\x00") if item}
        return held


METHOD = Term()
