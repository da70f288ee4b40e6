"""The user's own copy of the bundled data: created on first use, never inside site-packages.

Outside a checkout, `refresh` and `verify` work in the user data directory (`paths.user_dir()`).
Its `data/` is copied from the bundled data the first time (the data files only: YAML and Turtle),
into a temporary folder renamed into place, so that a crash or a second process never leaves half
a copy. The copy holds `.seeded-from` (a hidden file, so the data walk skips it) with the source
folder and the sha256 of its files; when the bundled data later differs (an upgrade), the copy is
kept as it is and the command says so once per run.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from .errors import AtlasError, Location

MARK = ".seeded-from"
_KEEP = (".yaml", ".yml", ".ttl")


def _files(source: Path) -> list[str]:
    """The data files under `source` (relative, sorted): what a seed copies."""
    out = []
    for dirpath, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        rel = os.path.relpath(dirpath, source)
        out += [os.path.normpath(os.path.join(rel, f)) for f in files
                if f.endswith(_KEEP) and not f.startswith(".")]
    return sorted(out)


def digest(source: Path) -> str:
    """sha256 over the names and bytes of the data files under `source`."""
    h = hashlib.sha256()
    for rel in _files(source):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update((source / rel).read_bytes() + b"\0")
    return h.hexdigest()


def _recorded(target: Path) -> str | None:
    try:
        return str(json.loads((target / MARK).read_text(encoding="utf-8"))["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _copy(source: Path, target: Path, stamp: str) -> None:
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        tmp.mkdir(parents=True)
        for rel in _files(source):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, tmp / rel)
        (tmp / MARK).write_text(json.dumps({"source": str(source), "sha256": stamp}, indent=1) + "\n",
                                encoding="utf-8")
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "atlas.yaml").is_file():
                raise
            # another process created it first: keep theirs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def seed(source: Path, target: Path) -> tuple[Path, str]:
    """`target`, created from `source` when it has no atlas yet; and a note for the user (empty when
    there is nothing to say)."""
    try:
        stamp = digest(source)
    except OSError as exc:
        raise AtlasError(f"cannot read the bundled data: {exc.strerror or exc}",
                         Location(str(exc.filename or source))) from None
    if (target / "atlas.yaml").is_file():
        recorded = _recorded(target)
        if recorded is not None and recorded != stamp:
            return target, (f"note: the bundled data changed since {target} was copied from it (an upgrade?); "
                            "the copy is kept as it is: move it away to start again from the bundled data")
        return target, ""
    if target.exists() and any(target.iterdir()):
        raise AtlasError("the user data folder exists but holds no atlas.yaml; refusing to write into it",
                         Location(str(target)), hint="move it away (it is created again from the bundled "
                                                     "data), or pass --data DIR")
    try:
        if target.exists():
            target.rmdir()
        _copy(source, target, stamp)
    except OSError as exc:
        raise AtlasError(f"cannot create the user data folder: {exc.strerror or exc}",
                         Location(str(exc.filename or target))) from None
    return target, f"created {target} from the bundled data {source}"
