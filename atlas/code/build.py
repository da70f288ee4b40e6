"""`index_atlas`: which files are indexed, read from the clones and parsed (or taken from the cache).

What is indexed:

1. every file that the atlas names: each evidence pin (concepts, relations, claims, flows, flow
   steps, repositories) at its commit, and each path probe that names a file, at the commit its
   repository was last harvested at (a probe that names a folder is not expanded);
2. then, `hops` times: the files of the same repository@commit that define (a function, or a
   function-like macro) a name that the files of the previous round call. The names are searched
   with one `git grep -l -w -F` per repository@commit and language family over its C/C++ (or
   Python) files (`strategy="grep"`, the default), or by parsing every such file that `git
   ls-tree` lists (`strategy="tree"`; both give the same index, bench/bench_code.py times them).

A pinned file that no clone holds is read from a loose copy in the clones folder whose git blob id
is the one the pin records (`atlas.harvest.loose`; hop 0 only, its calls are not followed).

Blobs are read with `git cat-file --batch` (one process per repository and round), only when their
parse is not cached. A blob that the clone lacks is named (`MissingBlob`), and so is every file a
search could not read: a call whose name is not found while such blobs exist is `unknown`, never
`external`.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from typing import NamedTuple

from .. import progress
from ..errors import AtlasError
from ..model.core import SHA_RE, Atlas
from ..paths import repos_root as default_repos_root
from ..text import pin_path_problem
from ..harvest import locate
from ..harvest.loose import LooseCopies, blob_id
from . import store
from .citing import cited
from .gitread import GitReader
from .parse import SOURCE_EXTENSIONS, family_of, language_of, parse
from .records import Call, CodeIndex, Function, Macro, MissingBlob, SourceFile, Unindexed
from .resolve import concept_names, link_calls
from .vendored import Vendored

STRATEGIES = ("grep", "tree")


class Target(NamedTuple):
    repo: str
    commit: str
    path: str


def named_files(atlas: Atlas) -> dict[Target, bool]:
    """The files the atlas names -> True when a pin names it (False: only a path probe, which may
    name a folder and is then left out without a word)."""
    out: dict[Target, bool] = {}
    for cit in cited(atlas):
        p = cit.pin
        out[Target(p.repo, p.sha, p.path)] = True
    heads = {h.repo: h.cutoff_head or h.head for h in atlas.harvests}
    for c in atlas.concepts:
        for probe in c.probes:
            head = heads.get(probe.repo)
            if probe.method == "path" and probe.value and head:
                out.setdefault(Target(probe.repo, head, probe.value.strip("/")), False)
    return out


def index_atlas(atlas: Atlas, repos_root=None, hops: int = 1, strategy: str = "grep") -> CodeIndex:
    """The code index of every file the atlas names, plus `hops` rounds of the files that define
    what they call (see the module's docstring)."""
    if hops < 0:
        raise AtlasError(f"hops must be 0 or more, not {hops}", "hops")
    if strategy not in STRATEGIES:
        raise AtlasError(f"unknown search strategy {strategy!r} (want one of {', '.join(STRATEGIES)})",
                         "strategy")
    root = default_repos_root(repos_root)
    mapping = locate.local_map(root) if root.is_dir() else {}
    by_repo: dict[str, dict[Target, bool]] = {}
    for target, pinned in named_files(atlas).items():
        by_repo.setdefault(target.repo, {})[target] = pinned
    index = CodeIndex(hops=hops)
    searches: dict[tuple[str, str, str], set[str]] = {}
    vendored: dict[tuple[str, str], Vendored] = {}
    unreadable: dict[tuple[str, str], list[MissingBlob]] = {}
    with Parsing() as parsing:
        for rid in sorted(by_repo):
            _index_repo(index, rid, by_repo[rid], root, mapping, strategy, hops, parsing, searches, unreadable,
                        vendored)
    _from_loose(atlas, index, root)
    index.files.sort(key=lambda f: (f.repo, f.commit, f.path))
    index.links = link_calls(index.files, searches, unreadable, concept_names(atlas), vendored)
    index.reindex()
    return index


def _from_loose(atlas: Atlas, index: CodeIndex, root) -> None:
    """The pinned files no clone answered, read from loose copies whose blob id the pin records;
    a file without such a copy stays unindexed, with the copies that were refused named."""
    blobs: dict[tuple[str, str, str], str] = {}
    for cit in cited(atlas):
        if cit.evidence.blob:
            blobs.setdefault((cit.pin.repo, cit.pin.sha, cit.pin.path), cit.evidence.blob)
    if not any((u.repo, u.commit, u.path) in blobs for u in index.unindexed):
        return
    loose = LooseCopies(root)
    if not loose:
        return
    kept: list[Unindexed] = []
    for u in index.unindexed:
        want = blobs.get((u.repo, u.commit, u.path), "")
        data = loose.read(want) if want else None
        if data is None:
            refused = [p for p, _b in loose.named(u.path)]
            kept.append(u._replace(reason=u.reason + (f"; loose copies refused, their blob is not {want}: "
                                                       + ", ".join(refused[:3]) if refused and want else "")))
            continue
        oid, language = blob_id(data), language_of(u.path)
        value = store.load(oid, language)
        if value is None:
            value = parse(data, language)
            store.save(oid, language, value)
        index.files.append(source_file(u.repo, u.commit, u.path, oid, value, 0))
    index.unindexed = kept


def source_file(repo: str, commit: str, path: str, oid: str, value: dict, hop: int) -> SourceFile:
    """The records of one parsed file."""
    base = (repo, commit, path)
    functions = [Function(*base, name, qualified, start, end, lo, hi, [Call(*c) for c in calls], member)
                 for name, qualified, start, end, lo, hi, calls, member in value["functions"]]
    macros = [Macro(*base, *m) for m in value["macros"]]
    return SourceFile(repo, commit, path, oid, language_of(path), value["lines"], hop, functions, macros,
                      tuple(value["includes"]), tuple(tuple(f) for f in value["fields"]), tuple(value["usings"]),
                      tuple((cls, tuple(names)) for cls, names in value["bases"]))


def _index_repo(index: CodeIndex, rid: str, targets: dict[Target, bool], root, mapping, strategy: str, hops: int,
                parsing: "Parsing", searches: dict, unreadable: dict, vendored: dict) -> None:
    """The files of one repository into `index` (a missing or corrupt clone: its pins are unindexed)."""
    clone = locate.find_clone(rid, root, mapping)
    if clone is None:
        index.unindexed += [Unindexed(t.repo, t.commit, t.path, f"no local clone of {rid} under {root}")
                            for t, pinned in sorted(targets.items()) if pinned]
        return
    job = RepoJob(rid, clone, strategy, parsing)
    try:
        job.run(targets, hops)
    except AtlasError as exc:  # a corrupt clone (a missing tree or commit object) fails alone
        index.unindexed += [Unindexed(t.repo, t.commit, t.path, f"cannot read the clone ({clone.path}): "
                                      f"{exc.message}") for t, pinned in sorted(targets.items()) if pinned]
        return
    index.files.extend(job.files.values())
    index.missing.extend(_unique(job.missing))
    index.unindexed.extend(job.unindexed)
    searches.update({(rid, c, fam): names for (c, fam), names in job.searched.items()})
    unreadable.update({(rid, c): _unique(blobs) for c, blobs in job.unreadable.items()})
    vendored.update({(rid, c): v for c, v in job.vendored().items()})


def _parse_one(item: tuple[bytes, str]) -> dict:
    return parse(*item)


def _orphan_guard(parent: int) -> None:
    """In a worker process: end when the process that started it is gone (killed, so that it could not
    shut its pool down), rather than wait for work for ever."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def worker_pool(workers: int, fork: bool = False) -> ProcessPoolExecutor:
    """`workers` processes for the index's parses or the map's pages; each ends with the process that
    started it. `fork`: started by fork, so that they inherit the caller's tables."""
    import multiprocessing

    context = multiprocessing.get_context("fork") if fork else None
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_orphan_guard, initargs=(os.getpid(),))


class Parsing:
    """Parses the blobs an index needs: in worker processes (one per core) when a batch is large
    enough to pay for them, and counted on a progress bar ("files parsed of those to parse") that
    appears with the first parse, so an index read wholly from the cache draws none."""

    BATCH = 24  # below this many files, parsing here is quicker than starting the workers

    def __init__(self, workers: int | None = None):
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self.pool: ProcessPoolExecutor | None = None
        self.todo = 0
        self._stack = ExitStack()
        self._bar: progress.Bar | None = None

    def __enter__(self) -> "Parsing":
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
        self._stack.close()

    def step(self, n: int, repo: str) -> progress.Bar:
        self.todo += n
        if self._bar is None:
            self._bar = self._stack.enter_context(progress.bar("parsing the code", self.todo))
        self._bar.total(self.todo)
        self._bar.label(f"parsing {repo}")
        return self._bar

    def parse(self, items: list[tuple[bytes, str]], repo: str):
        """The parses of (data, language) items, in order, as they are done."""
        if not items:
            return
        bar = self.step(len(items), repo)
        if len(items) < self.BATCH or self.workers < 2:
            for item in items:
                value = parse(*item)
                bar.advance()
                yield value
            return
        if self.pool is None:
            self.pool = worker_pool(self.workers)
        for value in self.pool.map(_parse_one, items, chunksize=max(1, min(16, len(items) // (4 * self.workers)))):
            bar.advance()
            yield value


class RepoJob:
    """Everything the index reads from one repository."""

    def __init__(self, repo: str, clone: locate.Clone, strategy: str = "grep", parsing: Parsing | None = None):
        self.repo = repo
        self.parsing = parsing or Parsing(workers=1)
        self.clone = clone
        self.strategy = strategy
        self.git = GitReader(clone.gitdir, repo)
        self.files: dict[tuple[str, str], SourceFile] = {}  # (commit, path) -> file
        self.missing: list[MissingBlob] = []
        self.unindexed: list[Unindexed] = []
        self.searched: dict[tuple[str, str], set[str]] = {}  # (commit, family) -> names searched
        self.unreadable: dict[str, list[MissingBlob]] = {}  # commit -> blobs a search could not read
        self._trees: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def run(self, targets: dict[Target, bool], hops: int) -> None:
        level = self._seeds(targets)
        for f in level:
            self.files.setdefault((f.commit, f.path), f)
        for hop in range(1, hops + 1):
            if not level:
                break
            level = self._follow(level, hop)

    def vendored(self) -> dict[str, Vendored]:
        """commit -> the vendored folders of its tree, for each commit that has indexed files."""
        out = {}
        for commit in sorted({c for c, _p in self.files}):
            try:
                out[commit] = Vendored(p for p, _oid in self.git.list_files(commit, ("",)))
            except AtlasError:  # a tree git cannot list: no folder is taken for vendored
                out[commit] = Vendored([])
        return out

    # -- round 0: the files the atlas names ------------------------------------------------------

    def _seeds(self, targets: dict[Target, bool]) -> list[SourceFile]:
        ordered = sorted(targets)
        good = [t for t in ordered if SHA_RE.match(t.commit) and not pin_path_problem(t.path)]
        for t in ordered:
            if t not in good and targets[t]:  # skipped alone: git would refuse the whole batch
                why = pin_path_problem(t.path)
                self.unindexed.append(Unindexed(t.repo, t.commit, t.path, f"the path {why}" if why else
                                                "not a full 40-hex commit id"))
        commits = self.git.info([f"{c}^{{commit}}" for c in sorted({t.commit for t in good})])
        present = [t for t in good if commits.get(f"{t.commit}^{{commit}}")]
        for t in good:
            if t not in present and targets[t]:
                self.unindexed.append(Unindexed(t.repo, t.commit, t.path, f"commit {t.commit[:12]} is not in "
                                                f"the clone ({self.clone.path})"))
        objects = self.git.info([f"{t.commit}:{t.path}" for t in present])
        wanted = []
        for t in present:
            obj = objects.get(f"{t.commit}:{t.path}")
            if obj is not None and obj.kind == "blob":
                wanted.append((t.commit, t.path, obj.oid))
            elif obj is None:
                self._absent(t, targets[t])
            elif targets[t]:
                self.unindexed.append(Unindexed(t.repo, t.commit, t.path, f"a {obj.kind}, not a file, at "
                                                f"{t.commit[:12]}"))
        return self._load(wanted, 0, "named by the atlas")

    def _absent(self, t: Target, pinned: bool) -> None:
        """A named path git could not read: its blob is missing, or the path is not there."""
        entry = self.git.tree_entry(t.commit, t.path)
        if entry is not None and entry[0] == "blob":
            self.missing.append(MissingBlob(t.repo, t.commit, t.path, entry[1], "named by the atlas"))
        elif pinned:
            self.unindexed.append(Unindexed(t.repo, t.commit, t.path, f"no such file at {t.commit[:12]}"))

    # -- reading and parsing ---------------------------------------------------------------------

    def _load(self, entries: list[tuple[str, str, str]], hop: int, why: str,
              keep=None) -> list[SourceFile]:
        """SourceFiles for (commit, path, blob) entries: parses from the cache, the rest read in one
        `git cat-file --batch` and parsed; a blob the clone lacks is recorded as missing. `keep`
        (a test on the parse) leaves out the files it refuses before their records are built."""
        parsed: dict[tuple[str, str], dict] = {}
        todo = []
        for commit, path, oid in entries:
            value = store.load(oid, language_of(path))
            if value is None:
                todo.append((commit, path, oid))
            else:
                parsed[(commit, path)] = value
        blobs = self.git.contents(sorted({oid for _c, _p, oid in todo}))
        readable: list[tuple[str, str, str, bytes]] = []
        for commit, path, oid in todo:
            data = blobs.get(oid)
            if data is None:
                self.missing.append(MissingBlob(self.repo, commit, path, oid, why))
            else:
                readable.append((commit, path, oid, data))
        values = self.parsing.parse([(data, language_of(path)) for _c, path, _o, data in readable], self.repo)
        for (commit, path, oid, _d), value in zip(readable, values):
            store.save(oid, language_of(path), value)
            parsed[(commit, path)] = value
        return [self._file(commit, path, oid, parsed[(commit, path)], hop)
                for commit, path, oid in entries
                if (commit, path) in parsed and (keep is None or keep(parsed[(commit, path)]))]

    def _file(self, commit: str, path: str, oid: str, value: dict, hop: int) -> SourceFile:
        return source_file(self.repo, commit, path, oid, value, hop)

    # -- rounds 1..hops: the files that define what the previous round calls -----------------------

    def _follow(self, level: list[SourceFile], hop: int) -> list[SourceFile]:
        wanted: dict[tuple[str, str], set[str]] = {}
        for f in level:
            fam = family_of(f.language)
            if fam:
                names = wanted.setdefault((f.commit, fam), set())
                names.update(c.name for fn in f.functions for c in fn.calls)
        found: list[SourceFile] = []
        for (commit, fam), names in sorted(wanted.items()):
            done = self.searched.setdefault((commit, fam), set())
            names -= done
            done |= names
            if names:
                found += self._search(commit, fam, names, hop)
        for f in found:
            self.files.setdefault((f.commit, f.path), f)
        return found

    def _search(self, commit: str, family: str, names: set[str], hop: int) -> list[SourceFile]:
        """The new files of `commit` that define any of `names`."""
        specs = [f":(icase)*{ext}" for ext in SOURCE_EXTENSIONS[family]]
        why = "searched for " + ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        if self.strategy == "tree":
            candidates = self._tree(commit, family)
        else:
            candidates = self._grep(commit, sorted(names), specs, why)
        fresh = [(commit, p, oid) for p, oid in candidates if (commit, p) not in self.files]
        before = len(self.missing)
        loaded = self._load(fresh, hop, why, keep=lambda value: _defines(value, names))
        self.unreadable.setdefault(commit, []).extend(self.missing[before:])
        return loaded

    def _grep(self, commit: str, names: list[str], specs: list[str], why: str) -> list[tuple[str, str]]:
        """(path, blob) of the files of `commit` that hold one of `names`; the answer is cached
        (a commit's files never change) unless some blob could not be read."""
        known = store.load_search(self.repo, commit, names, specs)
        if known is not None:
            return known
        paths, unreadable = self.git.grep_words(commit, names, specs)
        for path, blob in sorted(unreadable.items()):
            miss = MissingBlob(self.repo, commit, path, blob, why)
            self.missing.append(miss)
            self.unreadable.setdefault(commit, []).append(miss)
        objects = self.git.info([f"{commit}:{p}" for p in paths])
        found = [(p, obj.oid) for p in paths if (obj := objects.get(f"{commit}:{p}")) is not None]
        if not unreadable and len(found) == len(paths):
            store.save_search(self.repo, commit, names, specs, found)
        return found

    def _tree(self, commit: str, family: str) -> list[tuple[str, str]]:
        key = (commit, family)
        if key not in self._trees:
            self._trees[key] = self.git.list_files(commit, tuple(SOURCE_EXTENSIONS[family]))
        return self._trees[key]


def _defines(value: dict, names: set[str]) -> bool:
    """Whether a parse defines one of `names` (a function, or a function-like macro)."""
    return any(fn[0] in names for fn in value["functions"]) or \
        any(m[3] >= 0 and m[0] in names for m in value["macros"])


def _unique(blobs: list[MissingBlob]) -> list[MissingBlob]:
    """Each missing blob once per path and commit (a search in each round may meet it again)."""
    seen: dict[tuple[str, str, str], MissingBlob] = {}
    for b in blobs:
        seen.setdefault((b.commit, b.path, b.blob), b)
    return list(seen.values())
