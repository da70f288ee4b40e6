"""Writing the site into a folder the map owns only in part.

The output folder keeps a manifest, `atlas-map.json`, that lists every file the map wrote there
with the sha256 of its bytes. The rules, checked in full before anything is written (a refused
run changes nothing):

- a folder that is absent or empty is the map's: everything is written;
- a non-empty folder with no manifest is refused, unless `force` is given;
- the manifest is a record, not an authority: a file is replaced or removed only when its name is
  one the map gives its pages (`PAGE_NAME`: index.html, table.html, map.html, timeline.html,
  explorer.html, flows.html, repos.html, seed.html, repos/<owner>/<name>.html,
  concepts/<id>.html, flow-<id>.html, code-<id>.html, api/index.html, api/<owner>+<name>.html,
  vis-network.min.js, source/...html) *and*
  its bytes are the bytes the manifest records. An entry of any other name is ignored (and
  dropped from the next manifest), so a manifest that lists `notes.txt` never costs the user that file;
- a page the manifest lists is replaced (or, when the site no longer has it, removed) if its bytes
  still match the manifest; if the user changed it, the run is refused unless `force` is given;
- a file the manifest does not list is never modified or removed, `force` or not: a page name
  that is taken by such a file (or a folder, or a link) is refused and named; the one exception
  is a regular file whose bytes already equal the new page, which is adopted as it is;
- a symbolic link is never followed: not for a page, not for `concepts/`, not for the manifest.
  A link the manifest lists (the user put it in place of a page) counts as a changed file.

One run at a time writes into a folder: a run holds a lock on the folder itself (`flock`; on
Windows on the hidden file `.atlas-map.lock` in it) from reading the manifest to writing the
last one, and a second run waits for it (saying so on standard error), so the manifest always
describes the pages.

Every file goes through `cache.atomic_write` (temporary file, fsync, rename), so a reader or a
crash sees the old page or the new one. The manifest is written before the pages with both the
old and the new hash of every file being replaced ("pending"), and again at the end without
them, so a run killed half way leaves a folder the next run still recognises as its own.
The manifest has no timestamps: the same data gives the same bytes.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from ..index import cache
from .. import progress
from ..errors import AtlasError
from ..lockfile import FolderLock

MANIFEST = "atlas-map.json"
LOCK = ".atlas-map.lock"
_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # model.ID_RE: a concept or flow id
_REPO = r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*"  # model.REPO_RE: owner/name
_API = _REPO.replace("/", r"\+")  # site.apipage.page_file: api/<owner>+<name>.html
_SEGMENT = r"(?!\.\.?/)[A-Za-z0-9._+@-]+"  # a source page's path segment (site.source.source_file), never . or ..
PAGE_NAME = re.compile(rf"(?:index|table|map|timeline|explorer|flows|repos|seed)\.html|concepts/{_ID}\.html"
                       rf"|(?:flow|code)-{_ID}\.html|repos/{_REPO}\.html|api/(?:index|{_API})\.html|vis-network\.min\.js"
                       rf"|source/(?:{_SEGMENT}/)+{_SEGMENT}\.html")
_MAX_MANIFEST = 16 * 1024 * 1024  # bytes read of a manifest at most (the bundled atlas's is 20 KB)
_FORMAT = 1
_MAX_NAMED = 8


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lstat(path: Path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AtlasError(f"cannot inspect the file: {exc.strerror}", str(path)) from exc


def manifest_bytes(files: dict[str, str], pending: dict[str, list[str]] | None = None) -> bytes:
    doc = {"format": _FORMAT, "generator": "atlas map",
           "note": "Files written by `atlas map`; it replaces or removes only these.",
           "files": dict(sorted(files.items()))}
    if pending:
        doc["pending"] = {k: sorted(v) for k, v in sorted(pending.items())}
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def read_manifest(out: Path) -> dict[str, set[str]] | None:
    """The files the manifest in `out` lists, each with the hashes it accepts; None if there is
    no manifest. A manifest that is a link, not a regular file, or not ours is refused."""
    path = out / MANIFEST
    st = _lstat(path)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise AtlasError("the map's manifest is not a regular file (a link, folder or device); "
                         "the map does not follow it", str(path),
                         hint="remove it, or write the site into another folder")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_MANIFEST + 1)
        if len(raw) > _MAX_MANIFEST:
            raise ValueError(f"larger than {_MAX_MANIFEST // 2**20} MB")
        doc = json.loads(raw.decode("utf-8"))
        files = doc["files"]
        pending = doc.get("pending", {})
        if doc.get("format") != _FORMAT or not isinstance(files, dict) or not isinstance(pending, dict):
            raise ValueError("unknown format")
        owned = {_rel(k): {str(v)} for k, v in files.items()}
        for k, hashes in pending.items():
            owned.setdefault(_rel(k), set()).update(str(h) for h in hashes)
        return owned
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AtlasError(f"the map's manifest cannot be read: {exc}", str(path),
                         hint="remove it, or write the site into another folder") from exc


def _rel(name) -> str:
    """A manifest entry, checked: a relative path inside the folder (no `..`, no absolute path)."""
    name = str(name)
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in name:
        raise ValueError(f"entry {name!r} is not a path inside the folder")
    return name


def _is_empty(out: Path) -> bool:
    """No entry but hidden ones (a `.gitignore` that keeps the folder in a checkout, `.DS_Store`):
    the map writes no hidden file, so they never stand in its way."""
    try:
        with os.scandir(out) as it:
            return all(e.name.startswith(".") for e in it)
    except OSError as exc:
        raise AtlasError(f"cannot list the output folder: {exc.strerror}", str(out)) from exc


def _parents_ok(out: Path, rel: str) -> str | None:
    """Why the folders on the way to `rel` cannot hold a page (None when they can or are absent)."""
    here = out
    for part in rel.split("/")[:-1]:
        here = here / part
        st = _lstat(here)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            return f"{here.name}/ is a symbolic link (the map writes nothing through a link)"
        if not stat.S_ISDIR(st.st_mode):
            return f"{here.name} is not a folder"
    return None


def _kind(st) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    return "a file" if stat.S_ISREG(st.st_mode) else "a special file"


class Plan:
    """What one run will do: the files to write, to remove, to adopt, and the conflicts."""

    def __init__(self):
        self.write: list[str] = []
        self.remove: list[str] = []
        self.conflicts: list[str] = []   # never allowed
        self.changed: list[str] = []     # owned files the user changed: allowed with force


def _file_hash(path: Path) -> str | None:
    """sha256 of a file's bytes, read in blocks (a page name can hold a huge file of the user's)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def _plan_page(plan: Plan, out: Path, rel: str, data: bytes, owned: dict[str, set[str]]) -> None:
    why = _parents_ok(out, rel)
    if why:
        plan.conflicts.append(f"{rel}: {why}")
        return
    path = out / rel
    st = _lstat(path)
    if st is None:
        plan.write.append(rel)
        return
    regular = stat.S_ISREG(st.st_mode)
    if rel not in owned:
        if regular and _file_hash(path) == sha256(data):
            return  # already the page, byte for byte: adopted as it is
        plan.conflicts.append(f"{rel}: {_kind(st)} the map did not write")
    elif stat.S_ISDIR(st.st_mode) or not (regular or stat.S_ISLNK(st.st_mode)):
        plan.conflicts.append(f"{rel}: {_kind(st)} where the map wrote a page")
    else:
        now = _file_hash(path) if regular else None
        if now is not None and now == sha256(data) and now in owned[rel]:
            return  # ours and already this page, byte for byte: a rebuild leaves it alone
        if now is None or now not in owned[rel]:
            plan.changed.append(f"{rel}: changed since the map wrote it ({_kind(st)})")
        plan.write.append(rel)


def _plan_stale(plan: Plan, out: Path, rel: str, owned: dict[str, set[str]]) -> None:
    if _parents_ok(out, rel):
        return  # its folder is now a link or a file: nothing of ours is reachable there
    path = out / rel
    st = _lstat(path)
    if st is None:
        return
    if stat.S_ISREG(st.st_mode) and _file_hash(path) in owned[rel]:
        plan.remove.append(rel)
    elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
        plan.changed.append(f"{rel}: changed since the map wrote it ({_kind(st)}; no longer a page)")
        plan.remove.append(rel)
    # a folder or special file in place of an old page is left alone


def check_folder(out: Path, force: bool = False) -> dict[str, set[str]]:
    """The files the map owns in `out` (from its manifest; none when there is none). Refuses a path
    that is not a folder, a damaged manifest, and a non-empty folder without a manifest unless
    `force` is given."""
    out = Path(out)
    st = _lstat(out)
    if st is not None and not out.is_dir():  # a link to a folder named by the user is that folder
        raise AtlasError("the output path exists and is not a folder", str(out))
    owned = read_manifest(out) if st is not None else None
    if owned is None:
        if st is not None and not _is_empty(out) and not force:
            raise AtlasError(
                f"the output folder is not empty and has no {MANIFEST}, so `atlas map` did not "
                "write it; refusing to write pages among files it does not own", str(out),
                hint="choose an empty or new folder, or pass --force to write beside the files "
                     "there (files the map did not write are never replaced, even with --force)")
        owned = {}
    return owned


def plan_site(out: Path, files: dict[str, bytes], force: bool = False) -> tuple[Plan, dict]:
    """Check the folder `out` for writing `files` (relative path -> bytes). Raises AtlasError
    naming the folder and the files in the way when the run must not go ahead."""
    owned = {rel: hashes for rel, hashes in check_folder(out, force).items() if PAGE_NAME.fullmatch(rel)}
    plan = Plan()
    for rel in sorted(files):
        _plan_page(plan, out, rel, files[rel], owned)
    for rel in sorted(set(owned) - set(files) - {MANIFEST}):
        _plan_stale(plan, out, rel, owned)
    if plan.conflicts:
        raise AtlasError(_listing(f"{len(plan.conflicts)} page name(s) are taken by files the map "
                                  "does not own; refusing to write (nothing was changed)",
                                  plan.conflicts), str(out),
                         hint="move those files away, or write the site into another folder")
    if plan.changed and not force:
        raise AtlasError(_listing(f"{len(plan.changed)} file(s) the map wrote were changed since; "
                                  "refusing to replace them (nothing was changed)", plan.changed),
                         str(out), hint="pass --force to replace them with the new pages")
    return plan, owned


def _listing(head: str, items: list[str]) -> str:
    lines = [head] + [f"  {i}" for i in items[:_MAX_NAMED]]
    if len(items) > _MAX_NAMED:
        lines.append(f"  ... and {len(items) - _MAX_NAMED} more")
    return "\n".join(lines)


def _replace(out: Path, rel: str, data: bytes) -> None:
    path = out / rel
    try:
        st = _lstat(path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            os.unlink(path)  # the link itself, never what it points to
        elif st is not None and _file_hash(path) == sha256(data):
            return  # unchanged: keep the file (and its time stamp) as it is
        cache.atomic_write(path, data)
    except OSError as exc:
        raise AtlasError(f"cannot write the page: {exc.strerror or exc}", str(path)) from exc


def write_site(out, files: dict[str, bytes], force: bool = False) -> None:
    """Write `files` (relative path -> bytes) into the folder `out` under the rules above, holding
    the folder's lock (a second run into the same folder waits)."""
    out = Path(os.path.abspath(out))
    if _lstat(out) is None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AtlasError(f"cannot create the output folder: {exc.strerror}", str(out)) from exc
    elif not out.is_dir():
        raise AtlasError("the output path exists and is not a folder", str(out))
    with FolderLock(out, f"another `atlas map` is writing into {out}", LOCK, wait=True):
        _write_locked(out, files, force)


def _write_locked(out: Path, files: dict[str, bytes], force: bool) -> None:
    plan, owned = plan_site(out, files, force)
    final = {rel: sha256(data) for rel, data in files.items()}
    pending = {rel: sorted(owned.get(rel, set()) | {final[rel]}) for rel in plan.write}
    pending.update({rel: sorted(owned[rel]) for rel in plan.remove})
    kept = {rel: final[rel] for rel in final if rel not in plan.write}
    _replace(out, MANIFEST, manifest_bytes(kept, pending))
    with progress.bar("writing pages", len(plan.write)) as step:
        for rel in plan.write:
            _replace(out, rel, files[rel])
            step.advance()
    for rel in plan.remove:
        try:
            os.unlink(out / rel)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise AtlasError(f"cannot remove the old page: {exc.strerror}", str(out / rel)) from exc
    _replace(out, MANIFEST, manifest_bytes(final))
