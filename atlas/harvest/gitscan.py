"""The single-pass scanner: first visible commit of many probes on a first-parent mainline.

One ``git log --first-parent --diff-merges=first-parent --no-renames -p -U0 --reverse`` stream is read
in large chunks for all probes of a repository together (see docs/history.md). The stream is cut
into commits, and each commit's diff is handed to one matcher per probe method (`methods/`: a term
is counted on the ``+``/``-`` lines, a path is seen in the ``new file mode`` headers), which say
what became visible at that commit. git runs through the package's one runner (atlas.gitrun).
"""
from __future__ import annotations

import queue
import subprocess
import threading

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
from dataclasses import dataclass, field

from ..errors import Location
from ..gitrun import MAX_ERRORS, Git, close
from .gitformat import _UNREADABLE, Commit, GitError, _first_line

MARK = b"\x00\x01"
FORMAT = "--format=%x00%x01%H %P%x00%cI%x00%aI"
DIFF = ["-p", "-U0", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index",
        "--src-prefix=a/", "--dst-prefix=b/"]
CHUNK = 1 << 20
# git may not use any transport while it reads history (a partial clone would otherwise fetch
# missing blobs over the network); `fetch_missing=True` lets it use those git itself deems safe
FETCH_TRANSPORTS = ("http", "https", "git", "ssh", "file")


Key = tuple[str, str]  # (method, value as scanned)


@dataclass
class Scan:
    """What one pass found: (method, value) -> first commit, and how much it read."""

    found: dict[Key, Commit] = field(default_factory=dict)
    commits: int = 0
    skipped_paths: list[str] = field(default_factory=list)
    # when blobs are missing: blob sha -> the paths it was read at
    missing: dict[str, list[str]] = field(default_factory=dict)
    # values found where a missing blob at an earlier commit could hold an earlier appearance (key ->
    # the missing blobs, oldest first), and values not found that a missing blob could hold (only
    # for methods that read contents: trees alone answer the others)
    earlier: dict[Key, list[str]] = field(default_factory=dict)
    unknown: list[Key] = field(default_factory=list)
    # what the matchers of surface methods recorded (method name -> their `result()`)
    results: dict[str, object] = field(default_factory=dict)


Wants = dict  # method name -> (the method, the values to scan for)


class Repo:
    """git commands against one git directory (bare or not, with or without a config file)."""

    def __init__(self, gitdir, name: str = "", fetch_missing: bool = False):
        self.gitdir = str(gitdir)
        self.name = name or self.gitdir
        self.git = Git(self.gitdir, self.name, network=FETCH_TRANSPORTS if fetch_missing else ())

    def popen(self, *args: str) -> subprocess.Popen:
        return self.git.popen(*args)

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> tuple[int, bytes, bytes]:
        status, out, err = self.git.run(*args, input=input)
        if check and status:
            raise GitError(f"{self.name}: git {args[0]} failed: {_first_line(err)}",
                           Location(self.name))
        return status, out, err

    # -- refs and history ------------------------------------------------------------------

    def rev_parse(self, rev: str) -> str:
        status, out, err = self.run("rev-parse", "--verify", "--quiet", "--end-of-options",
                                    rev + "^{commit}", check=False)
        return out.strip().decode() if status == 0 else ""

    def symbolic_head(self) -> str:
        status, out, _ = self.run("symbolic-ref", "-q", "HEAD", check=False)
        return out.strip().decode() if status == 0 else ""

    def is_shallow(self) -> bool:
        _, out, _ = self.run("rev-parse", "--is-shallow-repository", check=False)
        return out.strip() == b"true"

    def mainline(self, head: str) -> list[tuple[int, str]]:
        """(committer timestamp, sha) of the first-parent mainline from `head`, newest first."""
        status, out, err = self.run("rev-list", "--first-parent", "--timestamp", head, "--",
                                    check=False)
        if status:
            raise GitError(f"{self.name}: cannot walk the history from {head[:12]} (corrupt "
                           f"repository?): {_first_line(err)}", Location(self.name))
        rows = []
        for line in out.splitlines():
            ts, _, sha = line.partition(b" ")
            rows.append((int(ts), sha.decode()))
        return rows

    # -- the scan ------------------------------------------------------------------------

    def scan(self, revs: list[str], wants: Wants, *, first_parent=True, progress=None) -> Scan:
        """First commit (in --reverse order of `revs`) at which each wanted value is visible;
        `wants` maps a method's name to (the method, its values).

        `revs` are rev-list arguments (e.g. [cutoff_head] or [new, '^old']). When blobs are missing
        (git dies with `unable to read <sha>`, or a partial clone may not fetch), one `--raw` pass
        lists the blobs of the history, the object store says which are absent, and the scan runs
        again without the paths they were read at (`skipped_paths`). The readable versions of
        those paths are then searched one by one, and every value of a method that reads contents
        is marked: found where no missing blob could hold an earlier appearance (exact), found but
        a missing blob at an earlier commit could hold it (`earlier`), or not found while a missing
        blob could hold it (`unknown`). Methods that need trees only stay exact.
        """
        walk = (["--first-parent", "--diff-merges=first-parent"] if first_parent
                else ["--topo-order", "--diff-merges=first-parent"])
        base = ["log", *walk, *DIFF, "--reverse", FORMAT, *revs, "--"]
        proc = self.popen(*base)
        result, err = _read(proc, wants, progress)
        if err is None:
            return result
        if not _UNREADABLE.search(err):
            raise GitError(f"{self.name}: git log failed (corrupt repository?): {_first_line(err)}",
                           Location(self.name))
        history = self.history_blobs(walk, revs)
        missing = history.missing()
        if not missing:
            raise GitError(f"{self.name}: an object git needs is missing or unreadable (corrupt "
                           f"repository): {_first_line(err)}", Location(self.name))
        skipped = sorted({p for ps in missing.values() for p in ps})
        excl = [f":(exclude,literal){p}" for p in skipped]
        proc = self.popen(*base[:1], "--full-history", *base[1:], *excl)
        result, err = _read(proc, wants, progress)
        if err is not None:
            raise GitError(f"{self.name}: git log failed even without the {len(skipped)} paths "
                           f"whose blobs are missing: {_first_line(err)}", Location(self.name))
        result.skipped_paths = skipped
        result.missing = {b: sorted(ps) for b, ps in missing.items()}
        self._settle(result, history, set(skipped), wants)
        return result

    def _settle(self, result: Scan, history: "_History", skipped: set[str], wants: Wants):
        """Complete a scan that left out the paths whose blobs are missing: each method adds what the
        readable versions of those paths show; for the methods that read contents, what the missing
        blobs leave unknown or possibly earlier is marked."""
        order = {c.sha: i for i, c in enumerate(history.commits)}
        first_missing = _first_missing(history)
        probes = {name: mv for name, mv in wants.items() if not getattr(mv[0], "surface", False)}
        for name, (m, values) in wants.items():
            if name not in probes:  # a surface method takes every change from the listing
                result.results[name] = m.from_history(history, values)
        reading = any(m.reads_contents and values for m, values in probes.values())
        contents = self._skipped_contents(history, skipped) if reading else {}
        for name, (m, values) in probes.items():
            found = {v: c for (n, v), c in result.found.items() if n == name}
            m.settle(found, history, order, skipped, contents, values)
            result.found.update({(name, v): c for v, c in found.items()})
            if m.reads_contents:
                _mark_uncertain(result, name, values, history, order, first_missing)

    def _skipped_contents(self, history: "_History", skipped: set[str]) -> dict[str, bytes]:
        """The readable versions of the skipped paths (binary ones, which git would not diff, are
        left out as in the scan), searched for the terms directly."""
        missing = history.absent
        wanted = {new for c in history.commits for p, _old, new, _st in c.changes
                  if p in skipped and new not in missing and new.strip("0")}
        contents = self.read_blobs(sorted(wanted))
        return {b: v for b, v in contents.items() if b"\x00" not in v[:8000]}

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """Contents of readable blobs (one `git cat-file --batch`)."""
        if not shas:
            return {}
        _, out, _ = self.run("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        got: dict[str, bytes] = {}
        pos = 0
        while pos < len(out):
            nl = out.index(b"\n", pos)
            head = out[pos:nl].split(b" ")
            pos = nl + 1
            if len(head) < 3:
                continue
            size = int(head[2])
            got[head[0].decode()] = out[pos:pos + size]
            pos += size + 1
        return got

    def present(self, shas: list[str]) -> set[str]:
        """Those of `shas` the object store holds (one `git cat-file --batch-check`, no transport)."""
        if not shas:
            return set()
        _, out, _ = self.run("cat-file", "--batch-check=%(objectname)", input="".join(f"{s}\n" for s in shas).encode(),
                             check=False)
        return {line for line in out.decode().split("\n") if line and " " not in line}

    def present_objects(self) -> set[str]:
        """Every object in the local object store (never asks a promisor remote)."""
        _, out, _ = self.run("cat-file", "--batch-all-objects", "--batch-check=%(objectname)",
                             "--unordered")
        return set(out.decode().split())

    def promisor_remote(self) -> str:
        """The promisor remote of a partial clone, or ''."""
        status, out, _ = self.run("config", "--get-regexp", r"^(remote\..*\.promisor|"
                                  r"extensions\.partialclone)$", check=False)
        for line in out.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(" ")
            if key.lower() == "extensions.partialclone" and value:
                return value
            if key.endswith(".promisor") and value.lower() in ("true", "yes", "on", "1"):
                return key[len("remote."):-len(".promisor")]
        return ""

    # -- brute force, for the commits a merge brings in -------------------------------------

    def rev_list(self, revs: list[str], boundary: bool = False) -> tuple[list[str], list[str]]:
        """(commits of `revs` oldest first in --topo-order, boundary commits)."""
        extra = ["--boundary"] if boundary else []
        status, out, err = self.run("rev-list", "--topo-order", "--reverse", *extra, *revs, "--",
                                    check=False)
        if status:
            raise GitError(f"{self.name}: cannot walk {' '.join(revs)} (corrupt repository?): "
                           f"{_first_line(err)}", Location(self.name))
        inside: list[str] = []
        edge: list[str] = []
        for line in out.decode().split():
            (edge if line.startswith("-") else inside).append(line.lstrip("-"))
        return inside, edge

    def commit(self, sha: str) -> Commit:
        _, out, _ = self.run("show", "-s", FORMAT, sha)
        head, cdate, adate = out.strip(b"\n")[2:].split(b"\x00")
        sha, *parents = head.decode().split(" ")
        return Commit(sha, [p for p in parents if p], cdate.decode(), adate.decode())

    def history_blobs(self, walk: list[str], revs: list[str]) -> "_History":
        """Every commit of the walk (in order) with its changes (path, old blob, new blob, status),
        from one `git log --raw` pass, which needs commits and trees but no blob."""
        status, out, err = self.run("log", *walk, "--no-renames", "--raw", "-z", "--no-abbrev",
                                    "--reverse", FORMAT, *revs, "--", check=False)
        if status:
            raise GitError(f"{self.name}: corrupt repository: a commit or tree of the history is "
                           f"missing or unreadable: {_first_line(err)}", Location(self.name))
        history = _History(self)
        for rec in out.split(MARK)[1:]:
            head, cdate, rest = rec.split(b"\x00", 2)
            adate, _, raw = rest.partition(b"\n")
            sha, *parents = head.decode().split(" ")
            cur = _Changes(sha, [p for p in parents if p], cdate.decode(),
                           adate.split(b"\x00")[0].decode())
            history.commits.append(cur)
            toks = raw.lstrip(b"\n\x00").split(b"\x00")
            i = 0
            while i + 1 < len(toks):
                meta = toks[i].lstrip(b"\n").split(b" ")
                if not meta[0].startswith(b":") or len(meta) < 5:
                    i += 1
                    continue
                path = toks[i + 1].decode("utf-8", "surrogateescape")
                if meta[0] != b":160000" and meta[1] != b"160000":  # not a submodule
                    cur.changes.append((path, meta[2].decode(), meta[3].decode(),
                                        meta[4][:1].decode()))
                i += 2
        return history


@dataclass
class _Changes:
    sha: str
    parents: list[str]
    committer_date: str
    author_date: str
    changes: list[tuple[str, str, str, str]] = field(default_factory=list)

    def commit(self) -> Commit:
        return Commit(self.sha, self.parents, self.committer_date, self.author_date)


class _History:
    def __init__(self, repo: Repo):
        self.repo = repo
        self.commits: list[_Changes] = []
        self.absent: set[str] = set()

    def missing(self) -> dict[str, set[str]]:
        """blob sha -> paths, for the blobs of the history that are not in the object store."""
        blobs: dict[str, set[str]] = {}
        for c in self.commits:
            for path, old, new, _st in c.changes:
                for b in (old, new):
                    if b.strip("0"):
                        blobs.setdefault(b, set()).add(path)
        if not blobs:
            return {}
        present = self.repo.present_objects()
        self.absent = {b for b in blobs if b not in present}
        return {b: blobs[b] for b in self.absent}


def _first_missing(history: "_History") -> int | None:
    """The index of the first commit whose tree holds a missing blob: where one is written, or the
    one before a change that replaces it; None when no commit does."""
    missing = history.absent
    for i, c in enumerate(history.commits):
        if any(old in missing for _p, old, _new, _st in c.changes):
            return i - 1
        if any(new in missing for _p, _old, new, _st in c.changes):
            return i
    return None


def _mark_uncertain(result: Scan, name: str, values: list[str], history: "_History", order: dict[str, int],
                    first_missing: int | None) -> None:
    """A value not found is unknown (a missing blob could hold it); one found after the first
    commit with a missing blob may have appeared earlier, in a blob the clone lacks."""
    for v in dict.fromkeys(values):
        hit = result.found.get((name, v))
        if hit is None:
            result.unknown.append((name, v))
        elif first_missing is not None and first_missing < order.get(hit.sha, -1):
            result.earlier[(name, v)] = _missing_until(history, order[hit.sha])


def _missing_until(history: "_History", at: int) -> list[str]:
    """The missing blobs that the commits before index `at` wrote or replaced, and that the commit
    at `at` replaced: an earlier appearance could hide in them."""
    missing = history.absent
    return list(dict.fromkeys(
        b for j, c in enumerate(history.commits[:at + 1])
        for _p, old, new, _st in c.changes
        for b in ((old, new) if j < at else (old,)) if b in missing))


def _read(proc, wants: Wants, progress) -> tuple[Scan, bytes | None]:
    """Parse one log stream. Returns (result, None) or (partial result, stderr) on failure."""
    parser = _Parser(wants, progress)
    chunks = _Pump(proc.stdout)
    buf = b"\n"
    eof = False
    stopped = False
    try:
        while not eof:
            chunk = chunks.get()
            if not chunk:
                eof = True
                data, buf = buf, b""
            else:
                buf += chunk
                # cut at the start of the last file diff or commit, so that a file's header is
                # never split from its lines
                cut = max(buf.rfind(b"\ndiff --git "), buf.rfind(b"\n" + MARK))
                if cut <= 0:
                    continue
                data, buf = buf[:cut + 1], buf[cut:]
            if data and parser.feed(data):
                stopped = True
                break
        if not stopped:
            parser.finish()
    finally:
        if stopped or not eof:
            try:
                proc.kill()
            except OSError:
                pass
            chunks.stop()
            close(proc)
    if stopped:
        return parser.result, None
    err = proc.stderr.read(MAX_ERRORS)
    proc.stderr.close()  # (more than that: git stops at its next write)
    status = proc.wait()
    close(proc)
    if status:
        return parser.result, err or b"git failed"
    return parser.result, None


class _Pump:
    """Drains git's stdout on a thread so that git never waits while Python parses a chunk."""

    def __init__(self, stream, depth: int = 32):
        self.stream = stream
        self.queue: queue.Queue = queue.Queue(depth)
        self.halt = False
        try:  # a larger pipe lets git run ahead even before the thread is scheduled (Linux)
            fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except (OSError, ValueError, AttributeError, NameError):
            pass
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.halt:
                chunk = self.stream.read(CHUNK)
                self.queue.put(chunk)
                if not chunk:
                    return
        except (OSError, ValueError):
            self.queue.put(b"")

    def get(self) -> bytes:
        return self.queue.get()

    def stop(self):
        self.halt = True
        while self.thread.is_alive():  # unblock a put()
            try:
                self.queue.get_nowait()
            except queue.Empty:
                self.thread.join(0.01)


class _Parser:
    """Cuts the log stream into commits and hands each commit's diff to the matchers."""

    def __init__(self, wants: Wants, progress):
        self.result = Scan()
        self.matchers = {name: m.matcher(values) for name, (m, values) in wants.items()}
        self.cur: Commit | None = None
        self.progress = progress

    def done(self) -> bool:
        return all(m.done() for m in self.matchers.values())

    def feed(self, data: bytes) -> bool:
        """Process a block that starts just after a newline and ends with one.
        True when every probe is found (the caller stops git)."""
        pos = 0
        marker = b"\n" + MARK
        while True:
            nxt = data.find(marker, pos)
            seg_end = len(data) if nxt < 0 else nxt + 1
            if self.cur is not None and seg_end > pos:
                for m in self.matchers.values():
                    m.segment(data, pos, seg_end)
            if nxt < 0:
                return False
            line_end = data.find(b"\n", nxt + 1)
            if line_end < 0:
                line_end = len(data)
            if self.cur is not None and self._commit_done():
                return True
            head, cdate, adate = data[nxt + 3:line_end].split(b"\x00")
            sha, *parents = head.decode().split(" ")
            self.cur = Commit(sha, [p for p in parents if p], cdate.decode(), adate.decode())
            # resume AT the newline that ends the header: the next header may follow at once
            # (an empty commit, a merge with an empty first-parent diff), and its marker is
            # searched as "\n" + MARK
            pos = line_end

    def finish(self) -> None:
        if self.cur is not None:
            self._commit_done()
            self.cur = None
        for name, m in self.matchers.items():
            result = getattr(m, "result", None)
            if result is not None:
                self.result.results[name] = result()

    def _commit_done(self) -> bool:
        cur = self.cur
        assert cur is not None
        self.result.commits += 1
        for name, m in self.matchers.items():
            for value in m.commit_done(cur):
                self.result.found[(name, value)] = cur
        if self.progress and self.result.commits % 200 == 0:
            self.progress(self.result.commits)
        return self.done()
