"""The no-op fast path of `atlas refresh`: a small stamp in the user's cache remembers the last run
that found nothing to do - the data key (content hash of data/, timeline and API histories included),
the arguments, and each repository's clone, branch head and tags. When all of them are unchanged, the refresh answers
from the stamp without rebuilding the atlas or starting git; any difference runs the full refresh.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import AtlasError
from ..index.cache import crc, read, write
from ..paths import cache_dir
from . import locate
from .report import RefreshReport, RepoRow


def _path(data_dir: Path) -> Path:
    return cache_dir() / f"refresh-{crc(str(Path(data_dir).resolve()))}.marshal"


def _args(root, cutoff, repo_ids, concept_ids, allow_shallow) -> tuple:
    return (str(Path(root).resolve()), cutoff or "", tuple(sorted(repo_ids)), tuple(sorted(concept_ids)),
            bool(allow_shallow))


def _heads(root: Path, branches: dict[str, str]) -> dict | None:
    mapping = locate.local_map(root) if root.is_dir() else {}
    out = {}
    for rid, branch in branches.items():
        clone = locate.find_clone(rid, root, mapping)
        if clone is None or clone.shallow:
            return None
        try:
            ref, head = locate.resolve_branch(clone, branch)
        except AtlasError:
            return None
        if not ref:
            return None
        out[rid] = (str(clone.path), ref, head, locate.tags_key(clone))  # a new tag may be a new release
    return out


def check(data_dir, key: str, root: Path, cutoff, repo_ids=(), concept_ids=(), allow_shallow=False):
    """The report of the remembered no-op run when nothing changed since; else None."""
    stamp = read(_path(data_dir))  # checksummed: a damaged stamp is a miss
    if not isinstance(stamp, dict) or stamp.get("key") != key or \
            stamp.get("args") != _args(root, cutoff, repo_ids, concept_ids, allow_shallow):
        return None
    if _heads(Path(root), stamp["branches"]) != stamp["heads"]:
        return None
    plain = stamp["report"]
    rows = [RepoRow(**dict(r, seconds=0.0)) for r in plain["repositories"]]
    return RefreshReport(cutoff=plain["cutoff"], timeline=plain["timeline"], rows=rows)


def remember(data_dir, key: str, root: Path, cutoff, repo_ids, concept_ids, allow_shallow,
             atlas, report: RefreshReport) -> None:
    """Keep the stamp of a run that changed nothing and failed nowhere (else forget it)."""
    path = _path(data_dir)
    if report.written or report.failed or report.problems or \
            any(r.status not in ("up-to-date", "no-probes") for r in report.rows):
        try:
            path.unlink()
        except OSError:
            pass
        return
    branches = {r.repo: (atlas.repo_by_id[r.repo].branch if r.repo in atlas.repo_by_id else "")
                for r in report.rows if r.status == "up-to-date"}
    heads = _heads(Path(root), branches)
    if heads is None:
        return
    stamp = {"key": key, "args": _args(root, cutoff, repo_ids, concept_ids, allow_shallow),
             "branches": branches, "heads": heads, "report": report.to_plain()}
    write(path, stamp)  # atomic and checksummed; a cache that cannot be written only costs speed
