"""`verify`: check every evidence pin (`owner/repo@sha:path#La-Lb`) against the local clones.

Status of a pin:
- ok: the commit exists, the path is a file at it, the lines exist, and `symbol` (if any) occurs in them;
- broken: the sha is not a full 40-hex commit of the clone, the path is missing or a folder at that
  commit, the lines are out of range, or the symbol is not in them;
- stale: correct at its sha, but at the branch head the file is gone or those lines read differently;
- unchecked: no local clone, the clone cannot be read, or the pinned commit is not in it (the clone
  may be older than the pin) - never counted as passed.
A pin that records its file's blob id (`blob:`) is broken when the clone's file at the pinned
commit has another one. Without the commit in a clone, such a pin is checked against a loose copy
of the file in the clones folder whose blob id is the recorded one (`atlas.harvest.loose`); a copy
with another blob id is named in the reason and not used.
One `git cat-file --batch` per repository answers all its pins.
"""
from __future__ import annotations

from ..errors import AtlasError, Location
from ..model.core import SHA_RE, F, Atlas, Evidence, Record
from ..paths import repos_root as default_repos_root
from ..view.views import owned_evidence
from . import locate
from .loose import LooseCopies, blob_id


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
    clonable: dict[str, str] = F(dict)  # repository -> the https:// URL `atlas refresh --clone` would use

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows if r.status == status)

    @property
    def exit_code(self) -> int:
        return 1 if self.count("broken") else 0

    def unchecked_repos(self) -> list[dict]:
        """The unchecked pins counted per repository: {repo, pins, reason, hint}, the reason shared by
        all of them (else how many reasons; each pin's own is in `pins`) and how to get a clone."""
        by_repo: dict[str, list[PinRow]] = {}
        for r in self.rows:
            if r.status == "unchecked":
                by_repo.setdefault(r.repo, []).append(r)
        out = []
        for repo, rows in sorted(by_repo.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            reasons = sorted({r.reason for r in rows})
            reason = reasons[0] if len(reasons) == 1 else f"{len(reasons)} different reasons (--all lists them)"
            out.append({"repo": repo, "pins": len(rows), "reason": reason, "hint": self._hint(repo, reasons)})
        return out

    def _hint(self, repo: str, reasons: list[str]) -> str:
        if any(why.startswith("no local clone") for why in reasons):
            if repo in self.clonable:
                return f"`atlas refresh --clone --repo {repo}` clones {self.clonable[repo]}"
            return "no https:// URL is listed for it: clone it by hand into the clones folder"
        return ""

    def to_plain(self) -> dict:
        return {"counts": {s: self.count(s) for s in ("ok", "broken", "stale", "unchecked")},
                "unchecked_repos": self.unchecked_repos(),
                "pins": [r.to_plain() for r in self.rows]}


def verify(atlas: Atlas, repos_root=None) -> VerifyReport:
    root = default_repos_root(repos_root)
    mapping = locate.local_map(root) if root.is_dir() else {}
    by_repo: dict[str, list[tuple[str, Evidence]]] = {}
    for owner, e in owned_evidence(atlas):
        if e.pin is not None:
            by_repo.setdefault(e.pin.repo, []).append((owner.label, e))
    report = VerifyReport()
    loose = LooseCopies(root)
    for rid in sorted(by_repo):
        rows = _verify_repo(atlas, rid, by_repo[rid], root, mapping)
        report.rows.extend(_from_loose(row, e, loose) if row.status == "unchecked" and loose else row
                           for row, (_o, e) in zip(rows, by_repo[rid]))
    from .clone import check_url

    for rid in sorted({r.repo for r in report.rows if r.status == "unchecked"}):
        repo = atlas.repo_by_id.get(rid)
        url = next((u for u in (repo.urls if repo else []) if not check_url(u)), "")
        if url:
            report.clonable[rid] = url
    report.rows.sort(key=_by_place)
    return report


_STATUS_ORDER = {"broken": 0, "stale": 1, "unchecked": 2, "ok": 3}


def _by_place(row: PinRow) -> tuple:
    """Rows by file, then line and column as numbers (`:12` before `:100`), then status and pin."""
    file, line, col = row.location, 0, 0
    parts = row.location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        file, line, col = parts[0], int(parts[1]), int(parts[2])
    return (file, line, col, _STATUS_ORDER[row.status], row.pin)


def _from_loose(row: PinRow, e: Evidence, loose: LooseCopies) -> PinRow:
    """An unchecked pin checked against a loose copy whose blob id is the pin's recorded one."""
    p = e.pin
    assert p is not None
    data = loose.read(e.blob) if e.blob else None
    if data is None:
        others = [f"{path} (blob {b[:12]})" for path, b in loose.named(p.path)]
        if others:
            want = f"the pinned blob {e.blob}" if e.blob else "a recorded blob id (the pin has none)"
            row.reason += f"; loose copies not used, their blob is not {want}: " + ", ".join(others[:3])
        return row
    lines, why = _pinned_lines(p, ("blob", data))
    chosen = lines[p.start - 1:p.end]
    where = f"a loose copy {loose.find(e.blob)} (blob {blob_id(data)[:12]})"
    if why:
        status, reason = "broken", f"{why} (read from {where})"
    elif e.symbol and e.symbol.encode("utf-8") not in b"\n".join(chosen):
        status, reason = "broken", f"symbol {e.symbol!r} is not in lines L{p.start}-L{p.end} of {where}"
    else:
        status, reason = "ok", f"checked against {where}; staleness not checked"
    return PinRow(row.pin, row.repo, status, row.location, reason, row.owner)


def _loc(e: Evidence) -> str:
    return str(e.loc) if e.loc else "(unknown location)"


def _verify_repo(atlas, rid, items, root, mapping) -> list[PinRow]:
    """The rows of one repository's pins: one `git cat-file --batch` reads every object they name."""
    def rows(status, reason):
        return [PinRow(str(e.pin), rid, status, _loc(e), reason, owner) for owner, e in items]

    clone = locate.find_clone(rid, root, mapping)
    if clone is None:
        return rows("unchecked", f"no local clone of {rid} under {root}")
    repo = atlas.repo_by_id.get(rid)
    branch = repo.branch if repo else ""
    head, head_note = _branch_head(clone, branch)
    from .gitscan import Repo

    g = Repo(clone.gitdir, rid)
    if not head and not head_note:
        head = g.rev_parse(branch or "HEAD")
    requests = _requests(items, head)
    try:
        answers = _batch(g, requests) if requests else {}
    except AtlasError as exc:
        return rows("unchecked", f"cannot read the clone: {exc.message}")
    ok_note = head_note.lstrip("; ")
    out = []
    for owner, e in items:
        status, reason = _check_pin(e, answers, head, clone, ok_note)
        out.append(PinRow(str(e.pin), rid, status, _loc(e), reason, owner))
    return out


def _branch_head(clone, branch) -> tuple[str, str]:
    """(the branch head from the ref files, or ''; '' or why staleness is not checked)."""
    try:
        _ref, head = locate.resolve_branch(clone, branch)
    except AtlasError as exc:
        return "", f"; staleness not checked: {exc.message}"
    return head, ""


def _requests(items, head: str) -> list[str]:
    """The object names the pins need: the commit, the file at it, and the file at the head."""
    requests: list[str] = []
    for _o, e in items:
        p = e.pin
        if SHA_RE.match(p.sha) and "\n" not in p.path:
            requests += [f"{p.sha}^{{commit}}", f"{p.sha}:{p.path}"]
            if head:
                requests.append(f"{head}:{p.path}")
    return list(dict.fromkeys(requests))


def _check_pin(e: Evidence, answers, head: str, clone, ok_note: str) -> tuple[str, str]:
    """(status, reason) of one pin, from the answers of `git cat-file --batch`."""
    p = e.pin
    assert p is not None  # only pinned evidence is checked
    if not SHA_RE.match(p.sha):
        return "broken", f"{p.sha!r} is not a full 40-hex sha"
    if "\n" in p.path:
        return "broken", "the path contains a line break"
    if answers.get(f"{p.sha}^{{commit}}") is None:
        # the clone may simply be older than the pin: that is not a check that passed or failed
        return "unchecked", (f"commit {p.sha[:12]} is not in the clone ({clone.path}): fetch it to "
                             "check this pin (or the sha is wrong)")
    lines, why = _pinned_lines(p, answers.get(f"{p.sha}:{p.path}"))
    if why:
        return "broken", why
    actual = blob_id(answers[f"{p.sha}:{p.path}"][1])
    if e.blob and not actual.startswith(e.blob):
        return "broken", f"the data record blob {e.blob} for {p.path}, but its blob at {p.sha[:12]} is {actual}"
    chosen = lines[p.start - 1:p.end]
    if e.symbol and e.symbol.encode("utf-8") not in b"\n".join(chosen):
        return "broken", f"symbol {e.symbol!r} is not in lines L{p.start}-L{p.end} of {p.path}"
    why = _staleness(p, chosen, head, answers) if head and head != p.sha else ""
    if why:
        return "stale", why
    return "ok", ok_note


def _pinned_lines(p, blob) -> tuple[list[bytes], str]:
    """(the lines of the pinned file, '') or ([], why the pinned lines cannot be read)."""
    if blob is None:
        return [], f"{p.path} does not exist at {p.sha[:12]}"
    kind, content = blob
    if kind != "blob":
        return [], f"{p.path} is a {kind} at {p.sha[:12]}, not a file"
    lines = content.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if p.start < 1 or p.end < p.start or p.end > len(lines):
        return [], (f"lines L{p.start}-L{p.end} out of range: {p.path} has {len(lines)} lines at "
                    f"{p.sha[:12]}")
    return lines, ""


def _staleness(p, chosen: list[bytes], head: str, answers) -> str:
    """'' when the pinned lines read the same at the branch head, else how they differ."""
    now = answers.get(f"{head}:{p.path}")
    if now is None or now[0] != "blob":
        return f"correct at {p.sha[:12]}, but {p.path} is gone at the branch head {head[:12]}"
    if now[1].split(b"\n")[p.start - 1:p.end] != chosen:
        return (f"correct at {p.sha[:12]}, but lines L{p.start}-L{p.end} read differently at the "
                f"branch head {head[:12]}")
    return ""


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
