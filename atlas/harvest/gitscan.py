"""The single-pass scanner: first visible commit of many probes on a first-parent mainline.

One ``git log --first-parent --diff-merges=first-parent --no-renames -p -U0 --reverse`` stream is read
in large chunks for all probes of a repository together (see docs/history.md). Terms are literal
byte strings (UTF-8); one compiled regex of the escaped terms finds candidate lines, and
``bytes.count`` counts the occurrences on each ``+``/``-`` line. Paths come from the ``diff --git`` /
``new file mode`` headers. git runs through gitpython's command interface (``Git.execute``).
"""
from __future__ import annotations

import queue
import re
import subprocess
import threading

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore
from dataclasses import dataclass, field

import git as gitpython
from git.exc import GitCommandNotFound

from ..errors import AtlasError, Location

MARK = b"\x00\x01"
FORMAT = "--format=%x00%x01%H %P%x00%cI%x00%aI"
CONFIG = [
    "-c", "core.quotePath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
    "-c", "log.showRoot=true", "-c", "log.showSignature=false", "-c", "color.ui=never",
    "-c", "diff.relative=false", "-c", "core.fsmonitor=false", "-c", "log.diffMerges=first-parent",
]
DIFF = ["-p", "-U0", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
        "--src-prefix=a/", "--dst-prefix=b/"]
CHUNK = 1 << 20
# how git says a blob is not in the object store (a partial clone says the second when it may not
# fetch from its promisor remote)
_UNREADABLE = re.compile(rb"unable to read ([0-9a-f]{40,64})|could not fetch ([0-9a-f]{40,64}) from "
                         rb"promisor remote")
# git may not use any transport while it reads history (a partial clone would otherwise fetch
# missing blobs over the network); `fetch_missing=True` lifts this
NO_TRANSPORT = "none"
_ESC = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
        ord("r"): 13, ord('"'): 34, ord("\\"): 92}


@dataclass
class Commit:
    sha: str
    parents: list[str]
    committer_date: str
    author_date: str


@dataclass
class Scan:
    """What one pass found: probe -> first commit, and how much it read."""

    terms: dict[str, Commit] = field(default_factory=dict)
    paths: dict[str, Commit] = field(default_factory=dict)
    commits: int = 0
    skipped_paths: list[str] = field(default_factory=list)
    # when blobs are missing: blob sha -> the paths it was read at
    missing: dict[str, list[str]] = field(default_factory=dict)
    # terms found where a missing blob at an earlier commit could hold an earlier appearance
    # (term -> the missing blobs, oldest first), and terms not found that a missing blob could hold
    earlier: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


class GitError(AtlasError):
    pass


class Repo:
    """git commands against one git directory (bare or not, with or without a config file)."""

    def __init__(self, gitdir, name: str = "", fetch_missing: bool = False):
        self.gitdir = str(gitdir)
        self.name = name or self.gitdir
        self.git = gitpython.Git(self.gitdir)
        self.env = {"GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1"}
        if not fetch_missing:
            self.env["GIT_ALLOW_PROTOCOL"] = NO_TRANSPORT

    def argv(self, *args: str) -> list[str]:
        return ["git", "--git-dir", self.gitdir, "--no-replace-objects", *CONFIG, *args]

    def popen(self, *args: str, stdin=None):
        try:
            return self.git.execute(self.argv(*args), as_process=True, env=self.env,
                                    istream=stdin)
        except GitCommandNotFound as exc:
            raise AtlasError(f"git is not installed or not on PATH: {exc}", self.name) from None

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> tuple[int, bytes, bytes]:
        proc = self.popen(*args, stdin=subprocess.PIPE if input is not None else None)
        out, err = proc.proc.communicate(input)
        status = proc.proc.returncode
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

    def scan(self, revs: list[str], terms: list[str], paths: list[str], *, first_parent=True,
             progress=None) -> Scan:
        """First commit (in --reverse order of `revs`) at which each term / path is visible.

        `revs` are rev-list arguments (e.g. [cutoff_head] or [new, '^old']). When blobs are missing
        (git dies with `unable to read <sha>`, or a partial clone may not fetch), one `--raw` pass
        lists the blobs of the history, the object store says which are absent, and the scan runs
        again without the paths they were read at (`skipped_paths`). The readable versions of
        those paths are then searched one by one, and every term is marked: found where no missing
        blob could hold an earlier appearance (exact), found but a missing blob at an earlier
        commit could hold it (`earlier`), or not found while a missing blob could hold it
        (`unknown`). Path probes need trees only and stay exact.
        """
        walk = (["--first-parent", "--diff-merges=first-parent"] if first_parent
                else ["--topo-order", "--diff-merges=first-parent"])
        base = ["log", *walk, *DIFF, "--reverse", FORMAT, *revs, "--"]
        proc = self.popen(*base)
        result, err = _read(proc, terms, paths, progress)
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
        result, err = _read(proc, terms, paths, progress)
        if err is not None:
            raise GitError(f"{self.name}: git log failed even without the {len(skipped)} paths "
                           f"whose blobs are missing: {_first_line(err)}", Location(self.name))
        result.skipped_paths = skipped
        result.missing = {b: sorted(ps) for b, ps in missing.items()}
        self._settle(result, history, set(skipped), terms, paths)
        return result

    def _settle(self, result: Scan, history: "_History", skipped: set[str], terms, paths):
        """Complete a scan that left out the paths whose blobs are missing: the terms in the
        readable versions of those paths, what the missing blobs leave unknown or possibly
        earlier, and path probes satisfied by a skipped file."""
        order = {c.sha: i for i, c in enumerate(history.commits)}
        first_missing = _first_missing(history)
        contents = self._skipped_contents(history, skipped) if terms else {}
        for t in dict.fromkeys(terms):
            _settle_term(result, t, history, order, skipped, contents)
            hit = result.terms.get(t)
            if hit is None:
                result.unknown.append(t)
            elif first_missing is not None and first_missing < order.get(hit.sha, -1):
                result.earlier[t] = _missing_until(history, order[hit.sha])
        _settle_paths(result, history, order, skipped, paths)

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
        inside, edge = [], []
        for line in out.decode().split():
            (edge if line.startswith("-") else inside).append(line.lstrip("-"))
        return inside, edge

    def holding_term(self, term: str, commits: list[str],
                     unreadable: dict[str, list[str]] | None = None) -> set[str]:
        """The commits whose tree has `term` in some file (`git grep -F`).

        git grep reports a blob it cannot read on stderr and goes on (exit 0 or 1): such blobs
        are added to `unreadable` (blob -> paths), since the answer says nothing about them."""
        found: set[str] = set()
        for i in range(0, len(commits), 256):
            batch = commits[i:i + 256]
            status, out, err = self.run("grep", "-F", "-l", "-z", "-I", "-e", term, *batch, "--",
                                        check=False)
            blobs = _unreadable_blobs(err)
            if blobs and unreadable is not None:
                for b, ps in blobs.items():
                    unreadable.setdefault(b, [])
                    unreadable[b] = sorted(set(unreadable[b]) | set(ps))
            if status not in (0, 1) or (blobs and unreadable is None):
                raise GitError(f"{self.name}: git grep failed: {_first_line(err)}",
                               Location(self.name))
            for item in out.split(b"\x00"):
                if item:
                    found.add(item.split(b":", 1)[0].decode())
        return found

    def holding_path(self, probe: str, commits: list[str]) -> set[str]:
        """The commits whose tree has a file at or under `probe` (`git ls-tree`)."""
        found: set[str] = set()
        for sha in commits:
            status, out, err = self.run("ls-tree", "-r", "-z", "--name-only", sha, "--", probe,
                                        check=False)
            if status:
                raise GitError(f"{self.name}: cannot read the tree of {sha[:12]} (corrupt "
                               f"repository?): {_first_line(err)}", Location(self.name))
            names = [n.decode("utf-8", "surrogateescape") for n in out.split(b"\x00") if n]
            if any(_under(n, probe) for n in names):
                found.add(sha)
        return found

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


def _settle_term(result: Scan, t: str, history: "_History", order, skipped, contents) -> None:
    """A term found in a readable version of a skipped path before the scan's answer replaces it."""
    needle = t.encode("utf-8")
    for i, c in enumerate(history.commits):
        if t in result.terms and order.get(result.terms[t].sha, -1) <= i:
            return
        if any(p in skipped and needle in contents.get(new, b"") for p, _old, new, _st in c.changes):
            result.terms[t] = c.commit()
            return


def _missing_until(history: "_History", at: int) -> list[str]:
    """The missing blobs that the commits before index `at` wrote or replaced, and that the commit
    at `at` replaced: an earlier appearance could hide in them."""
    missing = history.absent
    return list(dict.fromkeys(
        b for j, c in enumerate(history.commits[:at + 1])
        for _p, old, new, _st in c.changes
        for b in ((old, new) if j < at else (old,)) if b in missing))


def _settle_paths(result: Scan, history: "_History", order, skipped, paths) -> None:
    """A path probe can be satisfied by a skipped file: take the earlier of both answers."""
    for c in history.commits:
        for path, _old, _new, status in c.changes:
            if status != "A" or path not in skipped:
                continue
            for probe in paths:
                old = result.paths.get(probe)
                if old is not None and order.get(old.sha, -1) <= order[c.sha]:
                    continue
                if _under(path, probe):
                    result.paths[probe] = c.commit()


def _under(path: str, probe: str) -> bool:
    return path == probe or path.startswith(probe + "/")


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


def _read(proc, terms: list[str], paths: list[str], progress) -> tuple[Scan, bytes | None]:
    """Parse one log stream. Returns (result, None) or (partial result, stderr) on failure."""
    parser = _Parser(terms, paths, progress)
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
                proc.proc.kill()
            except (OSError, AttributeError):
                pass
            chunks.stop()
            proc._terminate()
    if stopped:
        return parser.result, None
    err = proc.proc.stderr.read()
    status = proc.proc.wait()
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
    def __init__(self, terms, paths, progress):
        self.result = Scan()
        self.active = {t.encode("utf-8"): t for t in dict.fromkeys(terms)}
        self.counts = {t: 0 for t in self.active}
        self.pending = set(paths)
        self.rx = self._compile()
        self.cur: Commit | None = None
        self.touched: set[bytes] = set()
        self.new_paths: set[str] = set()
        self.progress = progress

    def _compile(self):
        if not self.active:
            return None
        alt = b"|".join(re.escape(t) for t in sorted(self.active, key=len, reverse=True))
        return re.compile(alt)

    def done(self) -> bool:
        return not self.active and not self.pending

    def feed(self, data: bytes) -> bool:
        """Process a block that starts just after a newline and ends with one.
        True when every probe is found (the caller stops git)."""
        pos = 0
        marker = b"\n" + MARK
        while True:
            nxt = data.find(marker, pos)
            seg_end = len(data) if nxt < 0 else nxt + 1
            if self.cur is not None and seg_end > pos:
                self._segment(data, pos, seg_end)
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

    def _segment(self, data: bytes, start: int, end: int) -> None:
        if self.rx is not None:
            self._count_terms(data, start, end)
        if self.pending:
            self._find_new_paths(data, start, end)

    def _count_terms(self, data: bytes, start: int, end: int) -> None:
        """Count the active terms on the added (+1) and removed (-1) lines of the segment."""
        last = -1
        for m in self.rx.finditer(data, start, end):
            ls = data.rfind(b"\n", 0, m.start()) + 1
            if ls == last:
                continue
            last = ls
            first = data[ls]
            if first != 43 and first != 45:  # '+' / '-'
                continue
            if data.startswith((b"+++ ", b"--- "), ls) and self._in_header(data, ls):
                continue
            le = data.find(b"\n", ls)
            line = data[ls + 1:le]
            sign = 1 if first == 43 else -1
            for t in self.active:
                c = line.count(t)
                if c:
                    self.counts[t] += sign * c
                    self.touched.add(t)

    def _find_new_paths(self, data: bytes, start: int, end: int) -> None:
        """The pending path probes that a file added in the segment (`new file mode`) lies under."""
        p = data.find(b"\nnew file mode", max(start - 1, 0), end)
        while p >= 0:
            d = data.rfind(b"\ndiff --git ", 0, p)
            if d >= 0:
                path = header_path(data[d + 12:data.find(b"\n", d + 1)])
                for probe in self.pending:
                    if _under(path, probe):
                        self.new_paths.add(probe)
            p = data.find(b"\nnew file mode", p + 1, end)

    @staticmethod
    def _in_header(data: bytes, ls: int) -> bool:
        """A `--- `/`+++ ` line is a file header when no hunk (`@@`) started since `diff --git`."""
        d = data.rfind(b"\ndiff --git ", 0, ls)
        return data.rfind(b"\n@@", max(d, 0), ls) < 0

    def _commit_done(self) -> bool:
        cur = self.cur
        self.result.commits += 1
        changed = False
        for t in self.touched:
            if self.counts[t] > 0:
                self.result.terms[self.active.pop(t)] = cur
                del self.counts[t]
                changed = True
            else:
                self.counts[t] = 0
        self.touched.clear()
        for probe in self.new_paths:
            self.result.paths[probe] = cur
            self.pending.discard(probe)
        self.new_paths.clear()
        if changed:
            self.rx = self._compile()
        if self.progress and self.result.commits % 200 == 0:
            self.progress(self.result.commits)
        return self.done()
