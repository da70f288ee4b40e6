"""`refresh`: harvest the first visible commit of every probe, repository by repository.

Pure library code (no printing). The scanner is imported and git started only when a repository
actually needs git; an unchanged repository (same branch head, cut-off and probes) is recognised from the ref
files alone. See docs/history.md for the definition and the incremental rules.
"""
from __future__ import annotations

import os
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from ..errors import AtlasError, Location, Problem
from ..model.core import DEFAULT_CUTOFF, Atlas, F, Probe, Record, RepoHarvest, Sighting, utc_day
from ..paths import repos_root as default_repos_root
from ..text import day, not_a_day
from . import locate
from .lock import DataLock
from .methods import REGISTRY, SURFACES
from .report import RefreshReport, RepoRow
from .timeline import FILENAME, merge, read_state, sighting_key, write_state


def parse_cutoff(text: str, where: str = "--cutoff") -> date:
    """A cut-off or as-of day, through the one day parser (`atlas.text.day`)."""
    text = str(text)
    parsed = day(text)
    if parsed is None:
        raise AtlasError(not_a_day(text), Location(where))
    return date.fromisoformat(parsed)


def cutoff_timestamp(day: date) -> int:
    """First second after the cut-off day (UTC): a commit counts when its committer time is less."""
    nxt = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)
    return int(nxt.timestamp())


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def normalize_probe(p: Probe) -> tuple[str, str]:
    """(value to scan for, '' or why the probe cannot be harvested), by the probe's method."""
    if p.method not in REGISTRY or REGISTRY[p.method].surface:
        return p.value, f"unknown probe method {p.method!r}"
    return REGISTRY[p.method].normalize(p.value)


class _Want(Record):
    method: str
    value: str  # as written in the data (the sighting's value)
    scan: str  # normalised for scanning
    concepts: list[tuple[str, Probe]]


class _Mainline(Record):
    """A repository's branch and its first-parent walk, cut at the cut-off."""
    ref: str
    head: str
    shallow: bool
    walk: list  # (committer timestamp, sha), newest first
    idx: int | None  # the index in `walk` of the cut-off head, None when no commit is before it
    cutoff_head: str = ""
    commits: int = 0  # mainline commits up to the cut-off head


class _Plan(Record):
    """Which probes need which pass."""
    new_commits: int | None  # commits after the previous cut-off head, when it is an ancestor
    full: list = F(list)  # probes read over the whole mainline
    ranged: list = F(list)  # probes not found before: read over the new commits only
    kept: dict = F(dict)  # (method, scan) -> the earlier sighting, for probes found before


class _Findings(Record):
    """What the history scan answered, by (method, scan)."""
    hits: dict = F(dict)  # the mainline commit where the probe first became visible
    intro: dict = F(dict)  # for hits at merges: the side-branch commit that introduced it
    skipped: set = F(set)  # paths read without their missing blobs
    missing: dict = F(dict)  # blob -> the paths it was read at
    earlier: dict = F(dict)  # term -> blobs missing at earlier commits (an earlier appearance could hide)
    unknown: set = F(set)  # terms not seen, where missing blobs could hold them
    intro_doubt: dict = F(dict)  # (method, scan) -> blobs missing on the merged side that could hold
    # an earlier introduction (blob -> paths): `intro` is then an upper bound
    side_missing: dict = F(dict)  # blob -> paths, for the blobs missing on merged sides
    results: dict = F(dict)  # surface method name -> what its matcher recorded


def _hits(scan, wants) -> dict:
    return {(w.method, w.scan): scan.found[(w.method, w.scan)] for w in wants if (w.method, w.scan) in scan.found}


def _wanted(wants, runs=None) -> dict:
    """What a scan looks for: method name -> (the method, the values), from the probes planned and the
    runs of surface methods that read the history."""
    out: dict[str, tuple] = {}
    for w in wants:
        out.setdefault(w.method, (REGISTRY[w.method], []))[1].append(w.scan)
    for name, run in (runs or {}).items():
        if run.reads:
            out[name] = (REGISTRY[name], run.values)
    return out


class Outcome(Record):
    """What one repository's job hands back to the run: its report row, its problems, the harvest
    (None when nothing was harvested), its sightings and the keys (concept, method, value) of the
    probes it covered."""

    row: RepoRow
    problems: list = F(list)
    harvest: RepoHarvest | None = None
    sightings: list = F(list)
    keys: list = F(list)
    surfaces: dict = F(dict)  # surface method name -> the text of its file to write


def _with_earlier_blobs(s: Sighting, blobs: list[str]) -> Sighting:
    """A term's sighting made on-or-before: blobs missing at earlier commits could hold it."""
    return s.replace(precision="on-or-before", note="; ".join(filter(None, [
        s.note, f"{len(blobs)} blob(s) missing from the clone at earlier commits could hold an earlier "
        "appearance: " + ", ".join(b[:12] for b in blobs[:5]) + (" ..." if len(blobs) > 5 else "")])))


def _side_doubt(side_sha: str, blobs: dict[str, list[str]]) -> str:
    """The note of a merge's sighting whose side-branch introduction is uncertain."""
    names = [f"{b[:12]} ({', '.join(ps[:2]) or '?'})" for b, ps in sorted(blobs.items())]
    return (f"introduced on the side branch by {side_sha[:12]} or earlier" if side_sha else
            "first visible at the merge itself as far as the readable blobs show") + (
        f": {len(blobs)} blob(s) missing from the clone on the merged side could hold an earlier "
        "appearance: " + ", ".join(names[:5]) + (" ..." if len(names) > 5 else ""))


def refresh(atlas: Atlas, data_dir, repos_root=None, cutoff: str = DEFAULT_CUTOFF,
            repo_ids=(), concept_ids=(), clone: bool = False, allow_shallow: bool = False,
            progress=None, state=None, fetch_missing: bool = False,
            jobs: int | None = None, wait: bool = False, clone_timeout: float | None = None) -> RefreshReport:
    """Harvest probes into data_dir/timeline.yaml. `progress(repo, done, total)` is called while
    a repository's history is read. Returns a report; raises AtlasError only for bad arguments
    or an unreadable timeline. `state` is the (harvests, sightings) already loaded from that
    timeline (the compiled index has them), which spares re-reading the YAML.
    `fetch_missing` lets git fetch the missing blobs of a partial clone from its promisor remote
    (network use); without it git uses no transport at all. `jobs` repositories are harvested at
    once in separate processes (default: the number of CPUs); the report and the timeline do not
    depend on it. A `clone` gets `clone_timeout` seconds (default `clone.TIMEOUT`).

    The run holds the data folder's lock (`lock.DataLock`): a second writer is refused, or waits
    with `wait`. The timeline is read again under the lock before it is written, so that runs on
    different repositories one after the other keep each other's results. A cut-off later than
    the atlas's own (`atlas.cutoff`, from atlas.yaml) is refused: its sightings would make the
    atlas unloadable."""
    day = parse_cutoff(cutoff)
    cutoff = day.isoformat()
    if atlas.cutoff and cutoff > str(atlas.cutoff):
        raise AtlasError(f"the cut-off {cutoff} is after the atlas's cut-off {atlas.cutoff}: "
                         "its sightings would make the atlas unloadable", Location("--cutoff"),
                         hint="use a cut-off on or before it, or move `cutoff:` in atlas.yaml first")
    with DataLock(Path(data_dir), wait=wait):
        return _refresh(atlas, Path(data_dir), day, repos_root, repo_ids, concept_ids, clone,
                        allow_shallow, progress, state, fetch_missing, jobs, clone_timeout)


def _refresh(atlas, data_dir, day, repos_root, repo_ids, concept_ids, clone, allow_shallow,
             progress, state, fetch_missing, jobs, clone_timeout=None) -> RefreshReport:
    cutoff = day.isoformat()
    root = default_repos_root(repos_root, data_dir)
    tpath = data_dir / FILENAME
    report = RefreshReport(cutoff=cutoff, timeline=str(tpath))
    _check_selection(atlas, repo_ids, concept_ids)
    groups = _probe_groups(atlas, repo_ids, concept_ids)
    old_h, old_s = state if state is not None else read_state(tpath)
    old_h_by = {h.repo: h for h in old_h}
    old_s_by = {sighting_key(s): s for s in old_s}
    mapping = locate.local_map(root) if root.is_dir() else {}

    done: dict[str, Outcome] = {}
    waiting: list[_RepoJob] = []
    for rid in sorted(groups):
        surfaces = [] if concept_ids else [m for m in SURFACES if m.declared(atlas.repo_by_id.get(rid))]
        if not groups[rid] and not surfaces:
            done[rid] = _no_probes(atlas, rid, root)
            continue
        mine = {k: v for k, v in old_s_by.items() if k[0] == rid}
        job = _RepoJob(atlas.repo_by_id.get(rid), rid, groups[rid], root, mapping, cutoff, day,
                       clone, allow_shallow, old_h_by.get(rid), mine, RepoRow(rid, probes=len(groups[rid])))
        job.fetch_missing = fetch_missing
        job.clone_timeout = clone_timeout
        job.surfaces, job.data_dir = surfaces, data_dir
        kept = job.quick()  # an unchanged repository is answered here, without git
        if kept is not None:
            done[rid] = kept
        else:
            waiting.append(job)
    done.update(_run_jobs(waiting, jobs, progress))
    new_h, new_s, drop = _collect(report, done, list(old_s_by.values()), concept_ids)
    everything = None if repo_ids or concept_ids else set(groups)
    if everything is not None:  # probes of repositories no longer in the data
        drop |= {k for k in old_s_by if k[0] not in everything}
    if new_h or new_s or drop:
        _write(tpath, cutoff, new_h, new_s, drop, done, concept_ids, everything)
        report.written = True
    if _write_surfaces(data_dir, done, atlas if everything is not None else None):
        report.written = True
    from .blobs import record_blobs  # each pin's blob id, where a clone holds its file

    report.blobs = record_blobs(atlas, data_dir, root).written
    return report


def _write_surfaces(data_dir, done: dict[str, Outcome], atlas) -> bool:
    """Store the files the surface methods made (under the lock, as the timeline); with `atlas` (a run
    of every repository) remove those of repositories that declare none any more."""
    wrote = False
    for rid, out in sorted(done.items()):
        for name, text in out.surfaces.items():
            if text and out.row.status != "failed":
                REGISTRY[name].write(data_dir, rid, text)
                wrote = True
    if atlas is not None:
        for m in SURFACES:
            wrote |= bool(m.prune(data_dir, {r.id for r in atlas.repositories if m.declared(r)}))
    return wrote


def _check_selection(atlas, repo_ids, concept_ids) -> None:
    """Refuse a --concept or --repo that the atlas does not know."""
    for cid in concept_ids:
        if cid not in atlas.concept_by_id:
            raise AtlasError(f"unknown concept {cid!r}", Location("--concept"),
                             hint="see `atlas query` for concept ids")
    known_repos = set(atlas.repo_by_id) | {p.repo for c in atlas.concepts for p in c.probes}
    for rid in repo_ids:
        if rid not in known_repos:
            raise AtlasError(f"unknown repository {rid!r}", Location("--repo"),
                             hint="repositories are listed in data/repositories/")


def _probe_groups(atlas, repo_ids, concept_ids) -> dict[str, list[tuple[str, Probe]]]:
    """repository -> the (concept id, probe) pairs of this run. A repository named with --repo, or
    every listed one when the run is not narrowed, has a group even without probes."""
    groups: dict[str, list[tuple[str, Probe]]] = {rid: [] for rid in repo_ids}
    if not repo_ids and not concept_ids:  # every listed repository gets a row, probes or not
        groups.update({r.id: [] for r in atlas.repositories})
    for c in atlas.concepts:
        if concept_ids and c.id not in concept_ids:
            continue
        for p in c.probes:
            if repo_ids and p.repo not in repo_ids:
                continue
            groups.setdefault(p.repo, []).append((c.id, p))
    return groups


def _no_probes(atlas, rid, root) -> Outcome:
    """The outcome of a repository without probes: a row that says why it is not harvested."""
    row = RepoRow(rid, probes=0)
    row.status = "no-probes"
    row.messages.append(_why_no_harvest(atlas, rid, root))
    return Outcome(row)


def _collect(report, done, old_sightings, concept_ids):
    """Put every outcome's row and problems into the report, in repository order. Returns the
    new harvests, the new sightings, and the keys of earlier sightings whose probe is gone."""
    new_h: list[RepoHarvest] = []
    new_s: list[Sighting] = []
    drop: set = set()
    in_scope = set(concept_ids) if concept_ids else None
    for rid in sorted(done):
        out = done[rid]
        report.rows.append(out.row)
        report.problems.extend(out.problems)
        if out.row.status == "no-probes":
            continue
        if out.harvest is not None:
            new_h.append(out.harvest)
        new_s.extend(out.sightings)
        if out.row.status != "failed":
            drop |= _gone(old_sightings, rid, out.keys, in_scope)
    return new_h, new_s, drop


def _gone(sightings, rid, keys, in_scope) -> set:
    """The keys of `rid`'s sightings (of the concepts in scope, None: all) whose probe is not
    among `keys` (concept, method, value) any more."""
    current = set(keys)
    return {sighting_key(s) for s in sightings if s.repo == rid
            and (in_scope is None or s.concept in in_scope)
            and (s.concept, s.method, s.value) not in current}


def _write(tpath, cutoff, new_h, new_s, drop, done, concept_ids, everything) -> None:
    """Merge this run's results into the timeline as it is now on disk (read under the lock: a
    run before this one may have written since the data were loaded), then write it.
    `everything` is the set of listed repositories when the run covered all of them."""
    cur_h, cur_s = read_state(tpath)
    in_scope = set(concept_ids) if concept_ids else None
    for rid, out in done.items():
        if out.row.status not in ("no-probes", "failed"):
            drop |= _gone(cur_s, rid, out.keys, in_scope)
    if everything is not None:
        drop |= {sighting_key(s) for s in cur_s if s.repo not in everything}
    harvests, sightings = merge(cur_h, cur_s, new_h, new_s, drop)
    if everything is not None:
        harvests = [h for h in harvests if h.repo in everything]
    write_state(tpath, cutoff, harvests, sightings)


def _why_no_harvest(atlas, rid, root) -> str:
    """Why a listed repository without probes is not harvested (it is one of the accounts)."""
    from .accounts import account_repositories

    one = Atlas(repositories=[r for r in atlas.repositories if r.id == rid])
    acc = account_repositories(one, root, check_objects=False)[0]
    return f"{rid}: not harvested: {acc.state}: {acc.reason}"


_QUEUE = None  # progress events of a worker process: (repo, done, total)


def _init_worker(q):
    global _QUEUE
    _QUEUE = q


def _work(job: "_RepoJob"):
    if _QUEUE is not None:
        job.progress = lambda rid, n, total: _QUEUE.put((rid, n, total))
    return job.rid, job.outcome()


def _run_jobs(jobs: list["_RepoJob"], n: int | None, progress) -> dict[str, Outcome]:
    """Run the jobs, `n` at once in worker processes (in this process when n is 1 or there is
    one job). Progress events of the workers are passed on to `progress` from a thread here."""
    n = max(1, n or os.cpu_count() or 1)
    if n == 1 or len(jobs) <= 1:
        out = {}
        for job in jobs:
            job.progress = progress
            out[job.rid] = job.outcome()
        return out
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor, as_completed

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    q = ctx.Queue() if progress else None
    relay = None
    if q is not None:
        def forward():
            while True:
                item = q.get()
                if item is None:
                    return
                progress(*item)

        relay = threading.Thread(target=forward, daemon=True)
        relay.start()
    jobs = sorted(jobs, key=lambda j: -j.weight())  # the largest first: a shorter critical path
    out = {}
    try:
        with ProcessPoolExecutor(max_workers=min(n, len(jobs)), mp_context=ctx,
                                 initializer=_init_worker, initargs=(q,)) as pool:
            futures = {pool.submit(_work, job): job for job in jobs}
            for fut in as_completed(futures):
                job = futures[fut]
                try:
                    rid, result = fut.result()
                except Exception as exc:  # a worker died: that repository fails, others go on
                    job.row.status = "failed"
                    job.row.errors += 1
                    job.problem("harvest-failed", f"{job.rid}: the worker process failed: "
                                f"{type(exc).__name__}: {exc}")
                    rid, result = job.rid, Outcome(job.row, job.problems)
                out[rid] = result
    finally:
        if q is not None:
            q.put(None)
        if relay is not None:
            relay.join()
    return out


class _RepoJob:
    fetch_missing = False
    clone_timeout = None  # seconds for --clone; None: the clone module's default
    surfaces: list = []  # the surface methods the repository declares (none when narrowed to concepts)
    data_dir = None  # where their files are kept

    def __init__(self, repo, rid, probes, root, mapping, cutoff, day, clone, allow_shallow,
                 old, old_s_by, row):
        self.repo, self.rid, self.root, self.mapping = repo, rid, root, mapping
        self.cutoff, self.day, self.clone_ok, self.allow_shallow = cutoff, day, clone, allow_shallow
        self.old, self.old_s_by, self.progress = old, old_s_by, None
        self.row = row
        self.problems: list[Problem] = []
        self.clone = None
        self.ref = self.head = ""
        self.wants: dict[tuple[str, str], _Want] = {}
        self.bad: list[tuple[str, Probe, str]] = []
        for cid, p in probes:
            scan, why = normalize_probe(p)
            if why:
                self.bad.append((cid, p, why))
                continue
            w = self.wants.setdefault((p.method, scan), _Want(p.method, p.value, scan, []))
            w.concepts.append((cid, p))

    def keys(self):
        for w in self.wants.values():
            for cid, p in w.concepts:
                yield cid, w.method, p.value

    def problem(self, code, message, loc=None, level="error", hint=""):
        self.problems.append(Problem(loc or Location(self.rid), level, code, message, hint))
        self.row.messages.append(message + (f" (hint: {hint})" if hint else ""))

    # -- the job -------------------------------------------------------------------------

    def outcome(self) -> Outcome:
        """What the parent merges."""
        t0 = time.perf_counter()
        self.texts: dict[str, str] = {}
        harvest, sightings = self.run()
        self.row.seconds = round(time.perf_counter() - t0, 3)
        return Outcome(self.row, self.problems, harvest, sightings, list(self.keys()), dict(self.texts))

    def weight(self) -> int:
        """A cost estimate for scheduling: the bytes of the clone's packs (0 when unknown)."""
        if self.clone is None:
            return 0
        try:
            packs = (self.clone.commondir / "objects" / "pack").glob("*.pack")
            return sum(f.stat().st_size for f in packs)
        except OSError:
            return 0

    def quick(self) -> Outcome | None:
        """The outcome when the repository is unchanged since the last harvest (no git), else
        None. Finding the clone and its branch head is pure Python."""
        t0 = time.perf_counter()
        if self.bad or not (self.wants or self.surfaces):
            return None
        try:
            self._locate()
        except AtlasError:
            return None  # reported by the full run
        if not (self.ref and self._up_to_date(self.ref, self.head, self.clone.shallow)):
            return None
        harvest, sightings = self._keep(self.old)
        self.row.seconds = round(time.perf_counter() - t0, 3)
        return Outcome(self.row, self.problems, harvest, sightings, list(self.keys()))

    def _locate(self):
        if self.clone is not None:
            return
        rid = self.rid
        clone = locate.find_clone(rid, self.root, self.mapping)
        if clone is None and self.clone_ok:
            from .clone import clone_repo

            clone_repo(rid, self.repo.urls if self.repo else [], self.root, timeout=self.clone_timeout)
            clone = locate.find_clone(rid, self.root, self.mapping)
        if clone is None:
            raise AtlasError(f"{rid}: no local clone under {self.root}", Location(str(self.root)),
                             hint=f"clone it to {self.root / rid}, map it in "
                                  f"{self.root / 'local.yaml'}, or run with --clone")
        if clone.shallow and not self.allow_shallow:
            raise AtlasError(f"{rid}: {clone.path} is a shallow clone; its first commits are not "
                             "the repository's", clone.location,
                             hint="fetch the full history (git fetch --unshallow), or pass "
                                  "--allow-shallow to accept on-or-before dates")
        self.ref, self.head = locate.resolve_branch(clone, self.repo.branch if self.repo else "")
        self.clone = clone

    def run(self) -> tuple[RepoHarvest | None, list[Sighting]]:
        for cid, p, why in self.bad:
            self.row.errors += 1
            self.problem("bad-probe", f"{self.rid}: {p.method} {p.value!r} (concept {cid}): {why}",
                         p.loc)
        if not self.wants and not self.surfaces:
            self.row.status = "failed"
            return None, []
        try:
            return self._run()
        except AtlasError as exc:
            self.row.status = "failed"
            self.row.errors += 1
            msg = exc.message if exc.message.startswith(self.rid) else f"{self.rid}: {exc.message}"
            self.problem(_code(exc), msg, exc.location, hint=exc.hint)
            return None, []

    def _run(self):
        """Find the clone, plan which probes need reading, scan the history, build the sightings."""
        started = now_utc()
        self._locate()
        if self.ref and self._up_to_date(self.ref, self.head, self.clone.shallow):
            return self._keep(self.old)
        g, line = self._mainline()
        self.row.head, self.row.commits = line.head, line.commits
        plan = self._plan(line)
        runs = {m.name: m.start(self.data_dir, self.repo, self.clone, self.cutoff) for m in self.surfaces}
        for run in runs.values():
            run.prepare(g, line, self.fetch_missing)
        found = self._find(g, line, plan, runs)
        self.row.status = "incremental" if (plan.new_commits is not None if self.wants else self._ranged) \
            else "scanned"
        harvest = RepoHarvest(repo=self.rid, head=line.head, branch=line.ref, cutoff=self.cutoff,
                              cutoff_head=line.cutoff_head, harvested_at=now_utc(), commits=line.commits,
                              shallow=line.shallow, skipped_paths=sorted(found.skipped), started_at=started)
        for name, run in runs.items():
            run.finish(g, line, found.results.get(name), not self._ranged, started, harvest.harvested_at)
            self.texts[name] = run.text
        harvest, sightings = self._sightings(g, line, plan, found, harvest)
        for name, run in runs.items():
            sightings = REGISTRY[name].annotate(sightings, run.annotator())
        return harvest, sightings

    # -- the steps of a run ------------------------------------------------------------------

    def _mainline(self):
        """(git, _Mainline): the clone opened with git, its branch head and the first-parent walk."""
        from . import gitscan  # (git is needed)

        rid, clone, ref, head = self.rid, self.clone, self.ref, self.head
        g = gitscan.Repo(clone.gitdir, rid, fetch_missing=self.fetch_missing)
        if not ref:
            ref, head = self._git_resolve(g, self.repo.branch if self.repo else "")
        shallow = clone.shallow or g.is_shallow()
        if shallow and not self.allow_shallow:
            raise AtlasError(f"{rid}: shallow clone", clone.location,
                             hint="pass --allow-shallow to accept on-or-before dates")
        walk = g.mainline(head)
        limit = cutoff_timestamp(self.day)
        idx = next((i for i, (ts, _sha) in enumerate(walk) if ts < limit), None)
        if idx is None:
            return g, _Mainline(ref, head, shallow, walk, idx)
        return g, _Mainline(ref, head, shallow, walk, idx, walk[idx][1], len(walk) - idx)

    def _plan(self, line: "_Mainline") -> "_Plan":
        """Which probes need which pass: the whole mainline, only the commits since the last
        harvest (not found then), or none (found then: that sighting is kept)."""
        plan = _Plan(self._new_commits(line))
        for key, w in self.wants.items():
            prev = self._previous(w)
            if plan.new_commits is None or prev is None:
                plan.full.append(w)
            elif prev.found:
                plan.kept[key] = prev
            else:
                plan.ranged.append(w)
        return plan

    def _new_commits(self, line: "_Mainline") -> int | None:
        """The number of mainline commits after the previous cut-off head when that head is an
        ancestor of this one (an incremental run is possible), else None."""
        old = self.old
        if line.idx is None or not (old and old.cutoff_head and line.cutoff_head and old.branch == line.ref
                and old.shallow == line.shallow
                and not old.skipped_paths):  # an incomplete clone is read whole every time
            return None
        for j in range(line.idx, len(line.walk)):
            if line.walk[j][1] == old.cutoff_head:
                return j - line.idx
        return None

    def _revs(self, line: "_Mainline", plan: "_Plan", runs: dict) -> tuple[list[str], int]:
        """The one pass's revisions and its length: the whole mainline when a probe or a surface needs it
        (or the readers would start from different commits), else the commits after where they all
        stopped; ([], 0) when nothing needs reading."""
        starts = {run.base for run in runs.values() if run.reads}
        if plan.ranged and plan.new_commits:
            starts.add(self.old.cutoff_head)
        self._ranged = not plan.full and "" not in starts and len(starts) <= 1
        if not line.cutoff_head:
            return [], 0
        if not self._ranged:
            return [line.cutoff_head], line.commits
        base = next(iter(starts), line.cutoff_head)
        if base == line.cutoff_head:
            return [], 0
        start = len(line.walk) if line.idx is None else line.idx
        count = next((j - start for j in range(start, len(line.walk)) if line.walk[j][1] == base), line.commits)
        return [line.cutoff_head, "^" + base], count

    _ranged = False

    def _find(self, g, line: "_Mainline", plan: "_Plan", runs: dict | None = None) -> "_Findings":
        """Scan the history for the planned probes and the surfaces that read it; then, for hits at
        merges, the commit that introduced each probe on the merged side."""
        found = _Findings()
        runs = runs or {}
        todo = plan.full + plan.ranged
        revs, total = self._revs(line, plan, runs)
        if revs and (todo or any(run.reads for run in runs.values())):
            scan = self._scan(g, revs, todo, total, runs)
            self.row.read = scan.commits
            found = _Findings(hits=_hits(scan, todo), skipped=set(scan.skipped_paths), missing=scan.missing,
                              earlier=scan.earlier, unknown=set(scan.unknown), results=scan.results)
        if found.missing:
            self._warn_missing(g, found.missing, self.clone)
        found.intro, found.intro_doubt, found.side_missing = self._introductions(g, found.hits)
        side_only = {b: ps for b, ps in found.side_missing.items() if b not in found.missing}
        if side_only:
            self._warn_missing(g, side_only, self.clone, side=True)
            found.skipped |= {p for ps in side_only.values() for p in ps}
        return found

    def _sightings(self, g, line, plan, found, harvest) -> tuple[RepoHarvest | None, list[Sighting]]:
        """One sighting per (concept, probe); (None, []) when nothing is found any more where an
        earlier harvest found something (that harvest is kept)."""
        now = harvest.harvested_at
        out: list[Sighting] = []
        any_found = False
        for key, w in self.wants.items():
            for cid, p in w.concepts:
                s: Sighting | None
                if key in plan.kept or key in found.hits:
                    s = self._found(cid, w, key, line, plan, found, now)
                    any_found = True
                elif key in found.unknown:
                    s = self._unknown(cid, p, w, line, found, g, now)
                else:
                    s = self._not_found(cid, p, w, line, now)
                    if s is None:  # an earlier harvest found it: that sighting is kept
                        continue
                out.append(s)
        if not any_found and self._lost_all(line):
            return None, []
        if line.shallow:
            self.row.messages.append(f"{self.rid}: shallow clone: every date is on-or-before")
        return harvest, out

    def _found(self, cid, w, key, line, plan, found, now) -> Sighting:
        rid = self.rid
        if key in plan.kept:
            base = self.old_s_by.get((rid, cid, w.method, w.value)) or plan.kept[key]
            s = base.replace(concept=cid, head=line.head, cutoff=self.cutoff, harvested_at=now, loc=None)
        else:
            s = self._sighting(cid, w, found.hits[key], found.intro.get(key), line.shallow, line.head, now,
                               found.intro_doubt.get(key))
            if key in found.earlier:
                s = _with_earlier_blobs(s, found.earlier[key])
        self.row.found += 1
        if s.note and s.precision == "on-or-before" and not any(
                m.startswith(f"{rid}: precision") for m in self.row.messages):
            self.row.messages.append(f"{rid}: precision on-or-before: " + s.note)
        return s

    def _unknown(self, cid, p, w, line, found, g, now) -> Sighting:
        """A term not in the readable files, where missing blobs could hold it."""
        rid, n = self.rid, len(found.missing)
        self.row.unknown += 1
        self.problem("probe-unknown", f"{rid}: {w.method} {w.value!r} (concept {cid}) is unknown: not in "
                     f"the readable files, but {n} blob(s) missing from the clone could hold it", p.loc,
                     level="warning", hint=self._missing_hint(g))
        return Sighting(concept=cid, repo=rid, method=w.method, value=w.value, found=False,
                        precision="unknown", head=line.head, cutoff=self.cutoff, harvested_at=now,
                        note=f"not seen on {line.ref} up to {line.cutoff_head[:12]}, but {n} blob(s) "
                             "missing from the clone could hold it")

    def _not_found(self, cid, p, w, line, now) -> Sighting | None:
        """A probe not on the mainline up to the cut-off; None when an earlier harvest found it
        before the cut-off (that sighting is kept, and a problem says so)."""
        rid = self.rid
        prevs = self.old_s_by.get((rid, cid, w.method, w.value))
        self.row.not_found += 1
        msg = (f"{rid}: {w.method} {w.value!r} (concept {cid}) not found on {line.ref} "
               f"before the cut-off {self.cutoff} ({line.commits} mainline commits)")
        if prevs is not None and prevs.found and utc_day(prevs.committer_date) <= self.cutoff:
            self.problem("probe-not-found", msg + f"; the earlier result ({prevs.sha[:12]}, harvested at "
                         f"{prevs.harvested_at}) is kept", p.loc, hint="history rewritten or wrong branch?")
            return None
        self.problem("probe-not-found", msg, p.loc, hint="check the term's spelling, the branch, or the cut-off")
        return Sighting(concept=cid, repo=rid, method=w.method, value=w.value, found=False,
                        head=line.head, cutoff=self.cutoff, harvested_at=now,
                        note=f"not on {line.ref} up to {line.cutoff_head[:12] or 'the cut-off'} "
                             f"({line.commits} mainline commits)"
                             + ("; shallow clone: older history is missing" if line.shallow else ""))

    def _lost_all(self, line) -> bool:
        """True (the run fails) when no probe is found but an earlier harvest found some before the
        cut-off: wrong branch or rewritten history, so the earlier results are kept."""
        rid = self.rid
        earlier = [s for k, s in self.old_s_by.items()
                   if k[0] == rid and s.found and utc_day(s.committer_date) <= self.cutoff]
        if not earlier:
            return False
        self.row.status = "failed"
        self.row.errors += 1
        self.problem("empty-harvest", f"{rid}: none of {len(self.wants)} probes found on {line.ref} up to "
                     f"{line.cutoff_head[:12] or 'the cut-off'}; the earlier results ({len(earlier)} found) "
                     "are kept", self.clone.location, hint="wrong branch or rewritten history?")
        return True

    def _missing_hint(self, g) -> str:
        remote = g.promisor_remote()
        if remote and not self.fetch_missing:
            return (f"a partial clone: `atlas refresh --fetch-missing` fetches them from its "
                    f"promisor remote {remote}")
        if remote:
            return f"the promisor remote {remote} could not supply them"
        return "no promisor remote: fetch the full history into the clone"

    def _warn_missing(self, g, missing: dict[str, list[str]], clone, side: bool = False) -> None:
        names = [f"{b[:12]} ({', '.join(ps[:2]) or '?'})" for b, ps in sorted(
            missing.items(), key=lambda kv: (kv[1], kv[0]))]
        kind = "partial clone" if g.promisor_remote() else "incomplete clone"
        where = (" on merged side branches; the commits that introduced terms there are found "
                 "without them (on-or-before where they could hold an earlier one)") if side else (
            "; the files they were read at are scanned without them")
        self.problem("missing-blobs", f"{self.rid}: {kind}: {len(missing)} blob(s) missing from "
                     f"the object store{where}: "
                     + ", ".join(names[:6]) + (" ..." if len(names) > 6 else ""),
                     clone.location, level="warning", hint=self._missing_hint(g))

    def _git_resolve(self, g, branch):
        if branch:
            locate.check_branch(self.rid, branch, Location(self.rid))
            for cand in locate.branch_candidates(branch):
                sha = g.rev_parse(cand)
                if sha:
                    return cand, sha
            raise AtlasError(f"{self.rid}: branch {branch!r} not found in the clone",
                             Location(self.rid))
        sym = g.symbolic_head()
        if sym and locate.PULL_REF.match(sym):
            raise AtlasError(f"{self.rid}: HEAD points to the pull-request ref {sym}; refusing to "
                             "harvest it", Location(self.rid))
        sha = g.rev_parse("HEAD")
        if not sha:
            raise AtlasError(f"{self.rid}: HEAD does not name a commit", Location(self.rid))
        return sym or "HEAD", sha

    def _scan(self, g, revs, wants, total, runs=None):
        report = None
        if self.progress:
            rid, cb = self.rid, self.progress
            cb(rid, 0, total)
            report = lambda n: cb(rid, min(n, total), total)  # noqa: E731
        scan = g.scan(revs, _wanted(wants, runs), progress=report)
        if self.progress:
            self.progress(self.rid, total, total)
        return scan

    def _introductions(self, g, hits) -> tuple[dict, dict, dict[str, list[str]]]:
        """For hits at a mainline merge M: the commit that introduced the probe on the merged side.

        The rule (docs/history.md): the first commit of `git rev-list --topo-order --reverse
        M^2.. ^M^1` whose tree holds the probe, else M itself. One streaming pass answers it while
        no boundary commit (a parent outside that range) holds the probe, since counts then start
        at 0; otherwise the commits are asked one by one (`git grep -F`, `git ls-tree`).

        Returns (probe -> side commit, probe -> {blob: paths}, {blob: paths}). The second names,
        for a term, the blobs missing from the clone that could hold an earlier introduction: the
        answer is then only an upper bound (the commit found holds the term, or M when none does).
        The third is every missing blob met on the merged sides."""
        by_merge: dict[str, list[tuple[str, str]]] = {}
        commits = {}
        for key, c in hits.items():
            if len(c.parents) > 1:
                by_merge.setdefault(c.sha, []).append(key)
                commits[c.sha] = c
        out: dict = {}
        doubts: dict = {}
        met: dict[str, set[str]] = {}
        for sha, keys in by_merge.items():
            c = commits[sha]
            revs = [*c.parents[1:], "^" + c.parents[0]]
            side = g.scan(revs, _wanted(_Want(m, v, v, []) for m, v in keys), first_parent=False)
            _inside, edge = g.rev_list(revs, boundary=True)
            for b, ps in side.missing.items():
                met.setdefault(b, set()).update(ps)
            for k in keys:
                found, doubt = self._introduced(g, revs, edge, side, k)
                if found is not None:
                    out[k] = found
                if doubt:
                    doubts[k] = doubt
                for b, ps in doubt.items():
                    met.setdefault(b, set()).update(ps)
        return out, doubts, {b: sorted(ps) for b, ps in met.items()}

    @staticmethod
    def _introduced(g, revs, edge, side, k) -> tuple:
        """(the side commit that introduced probe `k`, or None; the missing blobs that leave it
        uncertain, blob -> paths). The first commit found holding the value always holds it, so with
        missing blobs it stays a sound upper bound; a method that reads trees only is never uncertain."""
        m = REGISTRY[k[0]]
        found = side.found.get(k)
        doubt: dict[str, list[str]] = {}
        if k in side.earlier:
            doubt = {b: side.missing.get(b, []) for b in side.earlier[k]}
        elif k in side.unknown:
            doubt = dict(side.missing)
        unreadable: dict[str, list[str]] = {}
        if edge and m.holding(g, k[1], edge, unreadable):
            order = g.rev_list(revs)[0]
            held = m.holding(g, k[1], order, unreadable)
            first = next((x for x in order if x in held), None)
            found = g.commit(first) if first else None
        for b, ps in unreadable.items():  # git could not read them: the answer says nothing of them
            doubt[b] = sorted(set(doubt.get(b, [])) | set(ps))
        return found, doubt

    def _sighting(self, cid, w, c, side, shallow, head, now, doubt=None) -> Sighting:
        """`doubt`: blobs missing on a merged side that could hold an earlier introduction; the
        side commit (or the merge) is then an upper bound and the sighting on-or-before."""
        notes = []
        root = not c.parents
        precision = "on-or-before" if (shallow or root or doubt) else "exact"
        if shallow:
            notes.append("shallow clone: the history before its first commit is missing")
        elif root:
            notes.append("present in the root commit: it may be older than the repository "
                         "(an import of earlier history)")
        if len(c.parents) > 1 and doubt:
            notes.append(f"merged at {c.sha[:12]}; " + _side_doubt(side.sha if side else "", doubt))
        elif len(c.parents) > 1:
            if side is not None:
                notes.append(f"merged at {c.sha[:12]}; introduced on the side branch by "
                             f"{side.sha[:12]}")
            else:
                notes.append(f"first visible at the merge {c.sha[:12]} itself (no side-branch "
                             "commit adds it)")
        if utc_day(c.committer_date) > self.cutoff:
            notes.append("committer date after the cut-off (clock skew): the commit is an "
                         "ancestor of the cut-off head")
        intro = side or c
        return Sighting(concept=cid, repo=self.rid, method=w.method, value=w.value, found=True,
                        sha=c.sha, committer_date=c.committer_date, author_date=c.author_date,
                        mainline=c.sha, introduced=intro.sha,
                        introduced_date=intro.committer_date, precision=precision, head=head,
                        cutoff=self.cutoff, harvested_at=now, note="; ".join(notes))

    # -- incremental bookkeeping ---------------------------------------------------------

    def _previous(self, w: _Want) -> Sighting | None:
        """The sighting of the last harvest for this probe, when all its concepts have one."""
        old = self.old
        if old is None:
            return None
        prev = None
        for cid, _p in w.concepts:
            s = self.old_s_by.get((self.rid, cid, w.method, w.value))
            if s is None or s.head != old.head or s.cutoff != old.cutoff:
                return None
            prev = prev or s
        return prev

    def _up_to_date(self, ref, head, shallow) -> bool:
        old = self.old
        # An incomplete clone at the same head gives the same answers again (git may not fetch
        # unless --fetch-missing lets it): only then is it read again, for the blobs that may come.
        if old is None or old.head != head or old.branch != ref or old.cutoff != self.cutoff \
                or old.shallow != shallow or (old.skipped_paths and self.fetch_missing):
            return False
        if not all(m.current(self.data_dir, self.repo, self.clone, ref, head, self.cutoff, self.fetch_missing)
                   for m in self.surfaces):
            return False
        return all(self._previous(w) is not None for w in self.wants.values())

    def _keep(self, old: RepoHarvest):
        self.row.status = "up-to-date"
        self.row.head, self.row.commits = old.head, old.commits
        for w in self.wants.values():
            for cid, p in w.concepts:
                s = self.old_s_by[(self.rid, cid, w.method, w.value)]
                if s.found:
                    self.row.found += 1
                elif s.precision == "unknown":
                    self.row.unknown += 1
                else:
                    self.row.not_found += 1
                    self.problem("probe-not-found", f"{self.rid}: {w.method} {w.value!r} (concept "
                                 f"{cid}) not found on {old.branch} before the cut-off "
                                 f"{self.cutoff} ({old.commits} mainline commits)", p.loc,
                                 hint="check the term's spelling, the branch, or the cut-off")
        if old.skipped_paths:
            self.row.messages.append(f"{self.rid}: {len(old.skipped_paths)} path(s) read without "
                                     "their missing blobs")
        return None, []


def _code(exc: AtlasError) -> str:
    m = exc.message
    for needle, code in (("refusing the branch", "bad-branch"), ("no local clone", "no-clone"),
                         ("shallow", "shallow-clone"),
                         ("branch", "missing-branch"), ("pull-request", "pull-request-ref"),
                         ("corrupt", "corrupt-repository"), ("clone", "clone-failed")):
        if needle in m:
            return code
    return "harvest-failed"
