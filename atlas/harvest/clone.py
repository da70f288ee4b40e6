"""`atlas refresh --clone`: the only network use. Accepts https://, ssh:// and file:// URLs only."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import AtlasError, Location
from ..model import REPO_RE

SCHEMES = ("https", "ssh", "file")


def check_url(url: str) -> str:
    """'' when the URL may be cloned, else why not."""
    if not isinstance(url, str) or not url:
        return "empty URL"
    if url.startswith("-"):
        return "starts with '-' (would be read as an option)"
    if any(ord(ch) < 32 or ch.isspace() for ch in url):
        return "contains white space or control characters"
    if "::" in url.split("/", 1)[0] or url.lower().startswith("ext:"):
        return "transport helpers (ext::, fd::, ...) are refused"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme.lower() not in SCHEMES or "://" not in url:
        return f"only {', '.join(s + '://' for s in SCHEMES)} URLs are accepted"
    host = parts.hostname or ""
    if parts.scheme.lower() in ("https", "ssh") and not host:
        return "no host"
    if host.startswith("-") or (parts.username or "").startswith("-"):
        return "host or user starts with '-'"
    if parts.scheme.lower() == "file" and parts.netloc not in ("", "localhost"):
        return "file:// URLs must name a local path"
    return ""


def clone_repo(repo_id: str, urls: list[str], root: Path) -> Path:
    """Clone the first acceptable URL into root/<owner>/<name> (atomically: a temporary folder
    beside it is renamed when the clone is complete). Returns the clone's path."""
    if not REPO_RE.match(repo_id):
        raise AtlasError(f"not a repository id: {repo_id!r}", Location("--clone"))
    owner, name = repo_id.split("/", 1)
    dest = root / owner / name
    if dest.exists():
        raise AtlasError(f"{repo_id}: {dest} exists but is not a git clone", Location(str(dest)),
                         hint="remove it or point repos/local.yaml elsewhere")
    reasons = []
    url = ""
    for cand in urls:
        why = check_url(cand)
        if not why:
            url = cand
            break
        reasons.append(f"{cand!r}: {why}")
    if not url:
        raise AtlasError(f"{repo_id}: no URL that may be cloned"
                         + (f" ({'; '.join(reasons)})" if reasons else " (the repository lists none)"),
                         Location(repo_id), hint="add an https:// URL to its `urls:`")
    import git as gitpython

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=str(dest.parent)))
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": ":".join(SCHEMES)}
    argv = ["git", "-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
            "-c", "core.hooksPath=/dev/null", "clone", "--quiet", "--no-recurse-submodules",
            "--", url, str(tmp / "c")]
    try:
        status, _out, err = gitpython.Git(str(dest.parent)).execute(
            argv, with_extended_output=True, with_exceptions=False, env=env,
            stdout_as_string=True)
        if status:
            last = (err.strip().splitlines() or ["(no message)"])[-1]
            raise AtlasError(f"{repo_id}: git clone {url} failed: {last}", Location(url))
        os.replace(tmp / "c", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
