"""`path:` a file, or a folder (any file under it), is visible at a commit when the commit's tree has
it. In the diff stream a path first becomes visible at the first commit that adds a file at or under
it (`new file mode`); trees alone answer it, so missing blobs never make it uncertain. The
independent check is `git ls-tree` of the commit."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import Location
from ..gitformat import Commit, GitError, _first_line, header_path

if TYPE_CHECKING:
    from ..gitscan import Repo, _History


def under(path: str, probe: str) -> bool:
    return path == probe or path.startswith(probe + "/")


class PathMatcher:
    def __init__(self, values: list[str]):
        self.pending = set(values)
        self.new: set[str] = set()

    def done(self) -> bool:
        return not self.pending

    def segment(self, data: bytes, start: int, end: int) -> None:
        """The pending path probes that a file added in the segment (`new file mode`) lies under."""
        if not self.pending:
            return
        p = data.find(b"\nnew file mode", max(start - 1, 0), end)
        while p >= 0:
            d = data.rfind(b"\ndiff --git ", 0, p)
            if d >= 0:
                path = header_path(data[d + 12:data.find(b"\n", d + 1)])
                self.new |= {probe for probe in self.pending if under(path, probe)}
            p = data.find(b"\nnew file mode", p + 1, end)

    def commit_done(self, commit: Commit) -> list[str]:
        found = sorted(self.new)
        self.pending -= self.new
        self.new.clear()
        return found


class Path:
    name = "path"
    reads_contents = False

    def normalize(self, value: str) -> tuple[str, str]:
        path = (value or "").strip().replace("\\", "/")
        while path.startswith("./"):
            path = path[2:]
        path = path.strip("/")
        parts = path.split("/")
        if not path or any(x in ("", ".", "..") for x in parts) or "\n" in path:
            return value, f"not a path inside the repository: {value!r}"
        return path, ""

    def matcher(self, values: list[str]) -> PathMatcher:
        return PathMatcher(values)

    def settle(self, found: dict[str, Commit], history: "_History", order: dict[str, int], skipped: set[str],
               contents: dict[str, bytes], values: list[str]) -> None:
        """A path probe can be satisfied by a skipped file: take the earlier of both answers."""
        for c in history.commits:
            for path, _old, _new, status in c.changes:
                if status != "A" or path not in skipped:
                    continue
                for probe in values:
                    old = found.get(probe)
                    if old is not None and order.get(old.sha, -1) <= order[c.sha]:
                        continue
                    if under(path, probe):
                        found[probe] = c.commit()

    def holding(self, g: "Repo", value: str, commits: list[str],
                unreadable: dict[str, list[str]] | None = None) -> set[str]:
        """The commits whose tree has a file at or under `value` (`git ls-tree`); trees only."""
        held: set[str] = set()
        for sha in commits:
            status, out, err = g.run("ls-tree", "-r", "-z", "--name-only", sha, "--", value, check=False)
            if status:
                raise GitError(f"{g.name}: cannot read the tree of {sha[:12]} (corrupt "
                               f"repository?): {_first_line(err)}", Location(g.name))
            names = [n.decode("utf-8", "surrogateescape") for n in out.split(b"\x00") if n]
            if any(under(n, value) for n in names):
                held.add(sha)
        return held


METHOD = Path()
