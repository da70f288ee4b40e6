"""`verify`: check every evidence pin (`owner/repo@sha:path#La-Lb`) against the local clones.

Status of a pin:
- ok: the commit exists, the path is a file at it, the lines exist, and `symbol` (if any) occurs in them;
- broken: the sha is not a full 40-hex commit of the clone, the path is missing or a folder at that
  commit, the lines are out of range, or the symbol is not in them;
- stale: correct at its sha, but at the branch head the file is gone or those lines read differently;
- unchecked: no local clone, the clone cannot be read, or the pinned commit is not in it (the clone
  may be older than the pin) - never counted as passed.
One `git cat-file --batch` per repository answers all its pins.
"""
from __future__ import annotations

from ..errors import AtlasError, Location
from ..model import SHA_RE, F, Atlas, Evidence, Record
from ..paths import repos_root as default_repos_root
from . import locate


class PinRow(Record):
    pin: str
    repo: str
    status: str  # ok | broken | stale | unchecked
    location: str  # the YAML file:line of the evidence item
    reason: str = ""
    owner: str = ""  # what the evidence belongs to (concept id, claim id, ...)

    def to_plain(self) -> dict:
        return {n: getattr(self, n) for n in self._fields}


class VerifyReport(Record):
    rows: list[PinRow] = F(list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows if r.status == status)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("broken") else 0

    def to_plain(self) -> dict:
        return {"counts": {s: self.count(s) for s in ("ok", "broken", "stale", "unchecked")},
                "pins": [r.to_plain() for r in self.rows]}


def iter_evidence(atlas: Atlas):
    """(owner label, Evidence) for every evidence item of the atlas, in data order."""
    for c in atlas.concepts:
        for e in c.evidence:
            yield f"concept {c.id}", e
        for r in c.relations:
            for e in r.evidence:
                yield f"relation {r.source} {r.type} {r.target}", e
    for cl in atlas.claims:
        for e in cl.evidence:
            yield f"claim {cl.id}", e
    for f in atlas.flows:
        for e in f.evidence:
            yield f"flow {f.id}", e
        for st in f.steps:
            if st.source is not None:
                yield f"flow {f.id} step {st.id}", st.source
    for r in atlas.repositories:
        for e in r.evidence:
            yield f"repository {r.id}", e


def verify(atlas: Atlas, repos_root=None) -> VerifyReport:
    root = default_repos_root(repos_root)
    mapping = locate.local_map(root) if root.is_dir() else {}
    by_repo: dict[str, list[tuple[str, Evidence]]] = {}
    for owner, e in iter_evidence(atlas):
        if e.pin is not None:
            by_repo.setdefault(e.pin.repo, []).append((owner, e))
    report = VerifyReport()
    for rid in sorted(by_repo):
        report.rows.extend(_verify_repo(atlas, rid, by_repo[rid], root, mapping))
    order = {"broken": 0, "stale": 1, "unchecked": 2, "ok": 3}
    report.rows.sort(key=lambda r: (order[r.status], r.location, r.pin))
    return report


def _loc(e: Evidence) -> str:
    return str(e.loc) if e.loc else "(unknown location)"


def _verify_repo(atlas, rid, items, root, mapping) -> list[PinRow]:
    def row(owner, e, status, reason):
        return PinRow(str(e.pin), rid, status, _loc(e), reason, owner)

    clone = locate.find_clone(rid, root, mapping)
    if clone is None:
        return [row(o, e, "unchecked", f"no local clone of {rid} under {root}") for o, e in items]
    repo = atlas.repo_by_id.get(rid)
    head, head_note = "", ""
    try:
        _ref, head = locate.resolve_branch(clone, repo.branch if repo else "")
    except AtlasError as exc:
        head_note = f"; staleness not checked: {exc.message}"
    from .gitscan import Repo  # imports gitpython

    g = Repo(clone.gitdir, rid)
    if not head and not head_note:
        head = g.rev_parse((repo.branch if repo and repo.branch else "HEAD"))
    requests: list[str] = []
    for _o, e in items:
        p = e.pin
        if SHA_RE.match(p.sha) and "\n" not in p.path:
            requests += [f"{p.sha}^{{commit}}", f"{p.sha}:{p.path}"]
            if head:
                requests.append(f"{head}:{p.path}")
    requests = list(dict.fromkeys(requests))
    try:
        answers = _batch(g, requests) if requests else {}
    except AtlasError as exc:
        return [row(o, e, "unchecked", f"cannot read the clone: {exc.message}") for o, e in items]
    out = []
    for owner, e in items:
        p = e.pin
        if not SHA_RE.match(p.sha):
            out.append(row(owner, e, "broken", f"{p.sha!r} is not a full 40-hex sha"))
            continue
        if "\n" in p.path:
            out.append(row(owner, e, "broken", "the path contains a line break"))
            continue
        commit = answers.get(f"{p.sha}^{{commit}}")
        if commit is None:
            # the clone may simply be older than the pin: that is not a check that passed or failed
            out.append(row(owner, e, "unchecked", f"commit {p.sha[:12]} is not in the clone "
                           f"({clone.path}): fetch it to check this pin (or the sha is wrong)"))
            continue
        blob = answers.get(f"{p.sha}:{p.path}")
        if blob is None:
            out.append(row(owner, e, "broken", f"{p.path} does not exist at {p.sha[:12]}"))
            continue
        kind, content = blob
        if kind != "blob":
            out.append(row(owner, e, "broken", f"{p.path} is a {kind} at {p.sha[:12]}, not a file"))
            continue
        lines = content.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if p.start < 1 or p.end < p.start or p.end > len(lines):
            out.append(row(owner, e, "broken", f"lines L{p.start}-L{p.end} out of range: "
                           f"{p.path} has {len(lines)} lines at {p.sha[:12]}"))
            continue
        chosen = lines[p.start - 1:p.end]
        if e.symbol and e.symbol.encode("utf-8") not in b"\n".join(chosen):
            out.append(row(owner, e, "broken", f"symbol {e.symbol!r} is not in lines "
                           f"L{p.start}-L{p.end} of {p.path}"))
            continue
        if head and head != p.sha:
            now = answers.get(f"{head}:{p.path}")
            if now is None or now[0] != "blob":
                out.append(row(owner, e, "stale", f"correct at {p.sha[:12]}, but {p.path} is gone "
                               f"at the branch head {head[:12]}"))
                continue
            hl = now[1].split(b"\n")
            if hl[p.start - 1:p.end] != chosen:
                out.append(row(owner, e, "stale", f"correct at {p.sha[:12]}, but lines "
                               f"L{p.start}-L{p.end} read differently at the branch head "
                               f"{head[:12]}"))
                continue
        out.append(row(owner, e, "ok", head_note.lstrip("; ")))
    return out


def _batch(g, requests: list[str]) -> dict[str, tuple[str, bytes]]:
    """Ask `git cat-file --batch` for each object name; name -> (type, content) when present."""
    data = "".join(r + "\n" for r in requests).encode("utf-8")
    _status, out, _err = g.run("cat-file", "--batch", input=data)
    answers: dict[str, tuple[str, bytes]] = {}
    pos = 0
    for req in requests:
        nl = out.find(b"\n", pos)
        if nl < 0:
            raise AtlasError("truncated answer from git cat-file", Location(g.name))
        line = out[pos:nl]
        pos = nl + 1
        if line.endswith((b" missing", b" ambiguous")):
            continue  # absent
        _oid, kind, size = line.rsplit(b" ", 2)
        answers[req] = (kind.decode(), out[pos:pos + int(size)])
        pos += int(size) + 1
    return answers
