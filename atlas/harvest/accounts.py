"""Every listed repository accounted for: harvested, or the reason it is not.

`account_repositories(atlas, repos_root)` returns one `RepoAccount` per repository of
data/repositories/ (and per repository that only probes name), sorted by id. The state is one of

- ``harvested``: a harvest of it is in the timeline (``incomplete`` when blobs were missing);
- ``not-harvested``: it has probes and a readable clone, but the timeline has no harvest of it yet;
- ``no-probes``: a readable clone, but no concept has a probe in it;
- ``no-public-url``: no https:// or ssh:// URL, or the listed URL serves no repository
  (status ``unavailable``);
- ``not-cloned``: no local clone under the repos root;
- ``pull-request-ref``: its branch or HEAD is a pull-request ref (never harvested);
- ``missing-branch``, ``shallow``: the clone lacks the branch, or is shallow;
- ``corrupt``: the branch head or its tree cannot be read.

Finding a clone and its head is pure Python; only the check that the head commit and its tree
are readable starts git (one `git cat-file --batch-check`).
"""
from __future__ import annotations

from ..errors import AtlasError
from ..model.core import Atlas, F, Record, utc_day
from ..paths import repos_root as default_repos_root
from . import locate

_PUBLIC = ("https://", "ssh://", "git://")


class RepoAccount(Record):
    repo: str
    state: str
    reason: str = ""
    listed: bool = True  # in data/repositories/ (False: only probes name it)
    probes: int = 0
    found: int = 0
    not_found: int = 0
    unknown: int = 0
    head: str = ""
    harvested_at: str = ""
    first_day: str = ""  # the UTC day of its earliest sighting
    incomplete: bool = False

    def to_plain(self) -> dict:
        return {n: getattr(self, n) for n in self._fields}


def account_repositories(atlas: Atlas, repos_root=None, check_objects: bool = True
                         ) -> list[RepoAccount]:
    """One account per repository (listed or probed), sorted by id. `check_objects=False` skips
    the git check of the head commit and tree (then no repository is found `corrupt`)."""
    root = default_repos_root(repos_root)
    mapping = locate.local_map(root) if root.is_dir() else {}
    probes: dict[str, int] = {}
    for c in atlas.concepts:
        for p in c.probes:
            probes[p.repo] = probes.get(p.repo, 0) + 1
    harvests = {h.repo: h for h in atlas.harvests}
    seen: dict[str, list] = {}
    for s in atlas.sightings:
        seen.setdefault(s.repo, []).append(s)
    listed = {r.id: r for r in atlas.repositories}
    out = []
    for rid in sorted(set(listed) | set(probes)):
        repo = listed.get(rid)
        acc = RepoAccount(rid, "", listed=repo is not None, probes=probes.get(rid, 0))
        ss = seen.get(rid, [])
        acc.found = sum(1 for s in ss if s.found)
        acc.unknown = sum(1 for s in ss if not s.found and s.precision == "unknown")
        acc.not_found = sum(1 for s in ss if not s.found) - acc.unknown
        days = sorted(s.date for s in ss if s.found and s.committer_date)
        acc.first_day = days[0] if days else ""
        acc.state, acc.reason = _state(rid, repo, acc, root, mapping, harvests.get(rid),
                                       check_objects)
        out.append(acc)
    return out


def _state(rid, repo, acc, root, mapping, harvest, check_objects) -> tuple[str, str]:
    urls = list(repo.urls) if repo else []
    if repo is not None and (repo.status == "unavailable" or not any(
            u.startswith(_PUBLIC) for u in urls)):
        why = ("listed as unavailable: its URL serves no public repository"
               if repo.status == "unavailable" else "no https:// or ssh:// git URL is listed")
        return "no-public-url", why
    clone = locate.find_clone(rid, root, mapping)
    if clone is None:
        return "not-cloned", f"no local clone under {root} (atlas refresh --clone fetches it)"
    if clone.shallow:
        return "shallow", f"{clone.path} is a shallow clone (refresh needs --allow-shallow)"
    try:
        ref, head = locate.resolve_branch(clone, repo.branch if repo else "")
    except AtlasError as exc:
        state = "pull-request-ref" if "pull-request" in exc.message else (
            "missing-branch" if "branch" in exc.message else "corrupt")
        return state, exc.message
    if check_objects and head:
        from . import gitscan

        g = gitscan.Repo(clone.gitdir, rid)
        _, out, _ = g.run("cat-file", "--batch-check", input=f"{head}\n{head}^{{tree}}\n".encode(),
                          check=False)
        if b"missing" in out or out.count(b"\n") < 2:
            return "corrupt", f"{rid}: the head {head[:12]} of {ref} or its tree cannot be read"
    acc.head = head
    if not acc.probes:
        return "no-probes", "a readable clone, but no concept has a probe in this repository"
    if harvest is None:
        return "not-harvested", "probes and a readable clone, but no harvest yet (atlas refresh)"
    acc.harvested_at = harvest.harvested_at
    acc.incomplete = bool(harvest.skipped_paths)
    notes = [f"{harvest.commits} mainline commits up to {harvest.cutoff_head[:12]} "
             f"(cut-off {harvest.cutoff}, harvested {utc_day(harvest.harvested_at)})"]
    if harvest.skipped_paths:
        notes.append(f"incomplete clone: {len(harvest.skipped_paths)} path(s) read without their "
                     "missing blobs")
    if head and head != harvest.head:
        notes.append(f"the branch moved to {head[:12]} since: run atlas refresh")
    return "harvested", "; ".join(notes)


class UndatedAccount(Record):
    """A concept that no sighting dates, and why (see `Atlas.why_undated`); `detail` gives, per
    repository concerned, its state in the accounts (e.g. not-cloned; the reason is on its row)."""

    concept: str
    reason: str
    repos: list = F(list)
    detail: str = ""
    note: dict = F(dict)

    def to_plain(self) -> dict:
        return {n: getattr(self, n) for n in self._fields}


def account_undated(atlas: Atlas, accounts: list[RepoAccount]) -> list[UndatedAccount]:
    """Every concept without a dated sighting, sorted by id, with the reason and, for the
    repositories that hold it, their state in `accounts` (not-cloned, no-public-url, ...)."""
    states = {a.repo: a for a in accounts}
    out = []
    for c in sorted(atlas.concepts, key=lambda c: c.id):
        why = atlas.why_undated(c.id)
        if why is None:
            continue
        reason, repos = why
        detail = "; ".join(f"{r}: {states[r].state}" for r in repos if r in states)
        note = c.undated.note if c.undated else None
        out.append(UndatedAccount(c.id, reason, list(repos), detail,
                                  {"en": note.en, "zh": note.zh} if note else {"en": "", "zh": ""}))
    return out
