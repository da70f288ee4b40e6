"""The public files of a repository at a commit, read from its trees (never a checkout, never a blob).

`PathRule` says whether a path is public: it matches one of the `public` globs and none of the
`exclude` globs of the repository's `api:` (a glob's `*` matches within one folder, `**` any number
of folders, `?` one character). `TreeReader` lists the public files (path -> blob) of any commit
through one long-running `git cat-file --batch`: only the folders a glob can reach are opened, and
every tree is read once (trees are shared by many commits).
"""
from __future__ import annotations

import re
import subprocess
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ..errors import AtlasError, Location
from ..gitrun import Git, close


def _glob_regex(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


class PathRule:
    """Which paths are public (see the module's docstring)."""

    def __init__(self, public: list[str], exclude: list[str] = ()):  # type: ignore[assignment]
        self.public = list(public)
        self.exclude = list(exclude)
        self._yes = re.compile("|".join(f"(?:{_glob_regex(g)})" for g in self.public) or "(?!)")
        self._no = re.compile("|".join(f"(?:{_glob_regex(g)})" for g in self.exclude) or "(?!)")
        self._prefixes = [self._literal(g) for g in self.public]
        # the deepest folder a glob without `**` can match in (None: any depth)
        self._depths = [None if "**" in g else g.count("/") for g in self.public]
        self.match = lru_cache(maxsize=None)(self._match)

    @staticmethod
    def _literal(glob: str) -> tuple[list[str], bool]:
        """The folders a glob names before its first wildcard, and whether it can go deeper than them."""
        parts = glob.split("/")
        fixed: list[str] = []
        for p in parts[:-1]:
            if any(ch in p for ch in "*?["):
                return fixed, True
            fixed.append(p)
        return fixed, False

    def _match(self, path: str) -> bool:
        return bool(self._yes.fullmatch(path)) and not self._no.fullmatch(path)

    def folders(self) -> list[str] | None:
        """The literal folders ("include/", ...) every public path starts with; None when a glob has none."""
        out = []
        for fixed, _deeper in self._prefixes:
            if not fixed:
                return None
            out.append("/".join(fixed) + "/")
        return sorted(set(out))

    def enters(self, folder: str) -> bool:
        """Whether a public file can lie under `folder` ("" is the root)."""
        parts = folder.split("/") if folder else []
        for (fixed, deeper), depth in zip(self._prefixes, self._depths):
            n = min(len(parts), len(fixed))
            if parts[:n] != fixed[:n] or (depth is not None and len(parts) > depth):
                continue
            if len(parts) <= len(fixed) or deeper:
                return True
        return False


def iso_date(stamp: int, offset: str) -> str:
    """git's `%cI` of a timestamp and a `+hhmm` offset."""
    sign = -1 if offset.startswith("-") else 1
    hours, minutes = int(offset[1:3] or 0), int(offset[3:5] or 0)
    tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    return datetime.fromtimestamp(stamp, tz).isoformat()


class CommitInfo:
    __slots__ = ("sha", "tree", "parents", "committer_date", "author_date")

    def __init__(self, sha: str, tree: str, parents: list[str], committer_date: str, author_date: str):
        self.sha, self.tree, self.parents = sha, tree, parents
        self.committer_date, self.author_date = committer_date, author_date


class TreeReader:
    """Commits and trees of one clone through `git cat-file --batch` (no transport: a missing object is
    reported, never fetched)."""

    def __init__(self, git: Git, name: str, rule: PathRule):
        self.name = name
        self.rule = rule
        self.proc = git.popen("cat-file", "--batch", stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.trees: dict[tuple[str, str], dict[str, str]] = {}  # (tree, folder) -> public files under it
        self.commits: dict[str, CommitInfo] = {}

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # type: ignore[union-attr]
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        close(self.proc)

    def __enter__(self) -> "TreeReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _object(self, oid: str) -> tuple[str, bytes] | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) != 3:
            return None  # "<oid> missing"
        size = int(head[2])
        body = self.proc.stdout.read(size + 1)[:size]
        return head[1].decode(), body

    def commit(self, sha: str) -> CommitInfo:
        if sha in self.commits:
            return self.commits[sha]
        got = self._object(sha)
        if got is None or got[0] != "commit":
            raise AtlasError(f"{self.name}: commit {sha[:12]} is missing (corrupt repository?)", Location(self.name))
        tree, parents, cdate, adate = "", [], "", ""
        for line in got[1].split(b"\n\n", 1)[0].split(b"\n"):
            key, _, rest = line.partition(b" ")
            if key == b"tree":
                tree = rest.decode()
            elif key == b"parent":
                parents.append(rest.decode())
            elif key in (b"committer", b"author"):
                stamp, offset = rest.rsplit(b" ", 2)[1:]
                when = iso_date(int(stamp), offset.decode())
                if key == b"committer":
                    cdate = when
                else:
                    adate = when
        info = CommitInfo(sha, tree, parents, cdate, adate)
        self.commits[sha] = info
        return info

    def public_files(self, sha: str) -> dict[str, str]:
        """path -> blob for the public files of a commit."""
        return dict(self._tree(self.commit(sha).tree, ""))

    def _tree(self, oid: str, folder: str) -> dict[str, str]:
        key = (oid, folder)
        if key in self.trees:
            return self.trees[key]
        got = self._object(oid)
        if got is None or got[0] != "tree":
            raise AtlasError(f"{self.name}: tree {oid[:12]} of {folder or 'the root'} is missing (corrupt "
                             "repository?)", Location(self.name))
        out: dict[str, str] = {}
        data, pos, width = got[1], 0, len(oid) // 2
        while pos < len(data):
            sp = data.index(b" ", pos)
            nul = data.index(b"\0", sp)
            mode = data[pos:sp]
            name = data[sp + 1:nul].decode("utf-8", "surrogateescape")
            child = data[nul + 1:nul + 1 + width].hex()
            pos = nul + 1 + width
            path = f"{folder}/{name}" if folder else name
            if mode == b"40000":
                if self.rule.enters(path):
                    out.update(self._tree(child, path))
            elif mode != b"160000" and self.rule.match(path):
                out[path] = child
        self.trees[key] = out
        return out
