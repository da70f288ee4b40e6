"""Find the local clone of a repository and read its refs - in pure Python, without git.

Where a clone is looked for, in order (``root`` is ``--repos``, else ``$ATLAS_REPOS``, else
``repos/`` beside ``data/``):

1. ``root/local.yaml`` (git-ignored): a mapping ``owner/name: path`` (relative to ``root``, ``~``
   expanded) for clones kept elsewhere;
2. ``root/<owner>/<name>`` (a clone with a work tree, or a bare repository), ``root/<owner>/<name>.git``;
3. ``root/<owner>+<name>/repo`` and ``root/<owner>+<name>`` (a flat layout).

A directory is a git directory when it holds ``HEAD`` and ``objects/``; no ``config`` file is needed
(bare copies may have none). Refs are read from loose files and ``packed-refs`` so that an unchanged
repository is recognised without starting git.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..bounded import SMALL_FILE, read_bounded
from ..errors import AtlasError, Location
from ..model.core import REPO_RE, Record
from ..text import PULL_REF_PATTERN, branch_problem

_SHA = re.compile(rb"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_PACKED_TAG = re.compile(rb"^([0-9a-f]{40}(?:[0-9a-f]{24})?) (refs/tags/[^\n]+)$", re.M)
PULL_REF = re.compile(PULL_REF_PATTERN)


class Clone(Record):
    repo: str
    path: Path  # what was found (work tree or git directory)
    gitdir: Path  # per-worktree git directory (HEAD lives here)
    commondir: Path  # objects, refs, packed-refs, shallow

    @property
    def shallow(self) -> bool:
        f = self.commondir / "shallow"
        try:
            return f.stat().st_size > 0
        except OSError:
            return False

    @property
    def location(self) -> Location:
        return Location(str(self.path))


def git_dirs(path: Path) -> tuple[Path, Path] | None:
    """(gitdir, commondir) of a work tree or git directory, or None when `path` is neither."""
    dot = path / ".git"
    if dot.is_file():  # worktree or submodule: "gitdir: <path>"
        try:
            text = dot.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if not text.startswith("gitdir:"):
            return None
        target = Path(text[7:].strip())
        path = target if target.is_absolute() else (dot.parent / target)
    elif dot.is_dir():
        path = dot
    if not (path / "HEAD").is_file():
        return None
    common = path
    cfile = path / "commondir"
    if cfile.is_file():
        try:
            c = Path(cfile.read_text(encoding="utf-8").strip())
        except OSError:
            return None
        common = c if c.is_absolute() else (path / c)
    if not (common / "objects").is_dir():
        return None
    return path, common


def local_map(root: Path) -> dict[str, Path]:
    """The mapping in ``root/local.yaml`` (repo id -> path); {} when there is none."""
    f = root / "local.yaml"
    if not f.is_file():
        if f.exists():  # a folder, a device, a FIFO
            raise AtlasError("the clone mapping is not a regular file", Location(str(f)),
                             hint="repos/local.yaml maps `owner/name: path`; remove what is there")
        return {}
    import yaml

    try:
        text = read_bounded(f, SMALL_FILE, "clone mapping").decode("utf-8")
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError) as exc:
        raise AtlasError(f"cannot read the clone mapping: {exc}", Location(str(f))) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = Location(str(f), mark.line + 1, mark.column + 1) if mark else Location(str(f))
        raise AtlasError(f"invalid YAML in the clone mapping: {getattr(exc, 'problem', exc)}",
                         loc) from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise AtlasError("the clone mapping must be a mapping `owner/name: path`", Location(str(f)),
                         hint="e.g.  hicann/hccl: ~/src/hccl")
    data = {}  # the node tree is read, never constructed: aliases are never expanded
    for k, v in node.value:
        if not (isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)):
            mark = k.start_mark
            raise AtlasError("bad entry (want `owner/name: path`, both plain text)",
                             Location(str(f), mark.line + 1, mark.column + 1))
        data[k.value] = v.value
    out = {}
    for key, value in data.items():
        if not isinstance(key, str) or not REPO_RE.match(key) or not isinstance(value, str) \
                or not value.strip():
            raise AtlasError(f"bad entry {key!r}: {value!r} (want `owner/name: path`)",
                             Location(str(f)))
        p = Path(os.path.expanduser(value.strip()))
        out[key] = p if p.is_absolute() else root / p
    return out


def candidates(repo: str, root: Path, mapping: dict[str, Path] | None = None) -> list[Path]:
    owner, name = repo.split("/", 1)
    out = []
    if mapping and repo in mapping:
        out.append(mapping[repo])
    out += [root / owner / name, root / owner / f"{name}.git", root / f"{owner}+{name}" / "repo",
            root / f"{owner}+{name}"]
    return out


def find_clone(repo: str, root: Path, mapping: dict[str, Path] | None = None) -> Clone | None:
    if mapping is None:
        mapping = local_map(root)
    for cand in candidates(repo, root, mapping):
        dirs = git_dirs(cand)
        if dirs:
            return Clone(repo, cand, dirs[0], dirs[1])
    return None


# -- refs ------------------------------------------------------------------------------------


class RefReader:
    """Reads refs the way git stores them (loose files, then packed-refs). No reftable."""

    def __init__(self, clone: Clone):
        self.clone = clone
        self._packed: dict[str, str] | None = None
        self._packed_raw: bytes | None = None

    @property
    def supported(self) -> bool:
        return not (self.clone.commondir / "reftable").exists()

    def packed(self) -> dict[str, str]:
        if self._packed is None:
            self._packed = {}
            try:
                raw = (self.clone.commondir / "packed-refs").read_bytes()
            except OSError:
                raw = b""
            for line in raw.splitlines():
                if not line or line[:1] in (b"#", b"^"):
                    continue
                sha, _, name = line.partition(b" ")
                if _SHA.match(sha):
                    self._packed[name.decode("utf-8", "replace")] = sha.decode()
        return self._packed

    def packed_one(self, name: str) -> str | None:
        """One packed ref by a byte search (a packed-refs file can hold 25,000 refs)."""
        if self._packed is not None:
            return self._packed.get(name)
        if self._packed_raw is None:
            try:
                self._packed_raw = b"\n" + (self.clone.commondir / "packed-refs").read_bytes()
            except OSError:
                self._packed_raw = b""
        raw = self._packed_raw
        needle = b" " + name.encode("utf-8") + b"\n"
        at = raw.find(needle)
        if at < 0 and raw.endswith(needle[:-1]):
            at = len(raw) - len(needle) + 1
        while at >= 0:
            start = raw.rfind(b"\n", 0, at) + 1
            sha = raw[start:at]
            if _SHA.match(sha):
                return sha.decode()
            at = raw.find(needle, at + 1)
        return None

    def _loose(self, name: str) -> bytes | None:
        base = self.clone.gitdir if name == "HEAD" else self.clone.commondir
        try:
            return (base / name).read_bytes().strip()
        except (OSError, ValueError):
            return None

    def resolve(self, name: str, depth: int = 0) -> tuple[str, str] | None:
        """(final ref name, sha) for a ref name, following symbolic refs; None if absent."""
        if depth > 5:
            raise AtlasError(f"symbolic ref loop at {name}", self.clone.location)
        raw = self._loose(name)
        if raw is not None:
            if raw.startswith(b"ref:"):
                return self.resolve(raw[4:].strip().decode("utf-8", "replace"), depth + 1)
            if _SHA.match(raw):
                return name, raw.decode()
            raise AtlasError(f"ref {name} holds neither a sha nor a symbolic ref (corrupt?)",
                             self.clone.location)
        sha = self.packed_one(name)
        if sha:
            return name, sha
        if name != "HEAD" and not name.startswith("refs/"):
            return None
        return None

    def head_symref(self) -> str:
        """What HEAD points to: a ref name, or '' when detached."""
        raw = self._loose("HEAD") or b""
        return raw[4:].strip().decode("utf-8", "replace") if raw.startswith(b"ref:") else ""

    def pull_tips(self) -> set[str]:
        tips = {sha for name, sha in self.packed().items() if PULL_REF.match(name)}
        base = self.clone.commondir
        for sub in ("refs/pull", "refs/merge-requests"):
            d = base / sub
            if d.is_dir():
                for dirpath, _dirs, files in os.walk(d):
                    for f in files:
                        try:
                            tips.add((Path(dirpath) / f).read_bytes().strip().decode())
                        except OSError:
                            pass
        return tips


def branch_candidates(branch: str) -> list[str]:
    if branch.startswith("refs/"):
        return [branch]
    return [f"refs/heads/{branch}", f"refs/remotes/origin/{branch}", f"refs/remotes/{branch}"]


def check_branch(repo: str, branch: str, where: Location) -> None:
    """Refuse a `branch:` that git would not accept as a ref name, or a pull-request ref."""
    why = branch_problem(branch)
    if why:
        raise AtlasError(f"{repo}: refusing the branch {branch!r}: {why}", where,
                         hint="set `branch:` to the mainline branch in data/repositories/")


def resolve_branch(clone: Clone, branch: str) -> tuple[str, str]:
    """(ref name, head sha) of the branch to harvest; '' = the clone's HEAD.

    Refuses pull-request refs (refs/pull/*), also when HEAD points there or is detached at one.
    Raises AtlasError for a missing branch. Returns ('', '') when refs cannot be read in pure
    Python (reftable), so that the caller asks git.
    """
    reader = RefReader(clone)
    if not reader.supported:
        return "", ""
    if branch:
        check_branch(clone.repo, branch, clone.location)
        found = None
        for cand in branch_candidates(branch):
            if PULL_REF.match(cand):
                raise AtlasError(f"{clone.repo}: refusing to harvest the pull-request ref {cand}",
                                 clone.location, hint="set `branch:` to the mainline branch")
            found = reader.resolve(cand)
            if found:
                break
        if not found:
            raise AtlasError(f"{clone.repo}: branch {branch!r} not found in the clone",
                             clone.location,
                             hint="fetch it, or correct `branch:` in data/repositories/")
    else:
        sym = reader.head_symref()
        found = reader.resolve("HEAD")
        if found is None:
            raise AtlasError(f"{clone.repo}: HEAD points to {sym or '?'}, which does not exist "
                             "(empty or corrupt clone)", clone.location)
        if not sym:
            found = ("HEAD", found[1])
    ref, sha = found
    if PULL_REF.match(ref):
        raise AtlasError(f"{clone.repo}: HEAD points to the pull-request ref {ref}; refusing to "
                         "harvest it", clone.location, hint="check out the mainline branch, or "
                         "set `branch:` in data/repositories/")
    if ref == "HEAD" and sha in reader.pull_tips():
        raise AtlasError(f"{clone.repo}: HEAD is detached at {sha[:12]}, the tip of a "
                         "pull-request ref; refusing to harvest it", clone.location)
    return ref, sha


def tags_key(clone: Clone) -> str:
    """A key of the clone's tag refs (names and what they point to), read without git: a new, moved or
    removed tag changes it."""
    import hashlib

    try:
        raw = (clone.commondir / "packed-refs").read_bytes()
    except OSError:
        raw = b""
    first, last = raw.find(b" refs/tags/"), raw.rfind(b" refs/tags/")  # packed-refs is sorted by name
    if first >= 0:
        raw = raw[raw.rfind(b"\n", 0, first) + 1:raw.find(b"\n", last) if raw.find(b"\n", last) >= 0 else len(raw)]
    else:
        raw = b""
    refs = {n.decode("utf-8", "replace"): s.decode() for s, n in _PACKED_TAG.findall(raw)}
    base = clone.commondir / "refs" / "tags"
    if base.is_dir():
        for dirpath, _dirs, files in os.walk(base):
            for f in files:
                p = Path(dirpath) / f
                try:
                    refs[p.relative_to(clone.commondir).as_posix()] = p.read_bytes().strip().decode("ascii", "replace")
                except OSError:
                    continue
    text = "\n".join(f"{n} {s}" for n, s in sorted(refs.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
