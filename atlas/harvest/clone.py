"""`atlas refresh --clone`: the only network use. Clones a repository from the first of its `urls:` that
validate accepts (`atlas.text.repo_url_problem`: https:// only, the public address); git may reach it
over ssh or from a local path when the user's own git config says so (`url.<base>.insteadOf`).

git runs in a session of its own, so that its helpers (ssh, remote-https) can be stopped together: at
the time limit, on SIGTERM or Ctrl-C of the refresh, and when the clone fails. The clone is written to
a `.<name>.partial-*` folder beside its destination and renamed when complete; a partial folder is
removed on every exit path, and one left by a process that no longer runs (killed with SIGKILL) is
removed by the next clone into the same place."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import AtlasError, Location
from ..gitrun import Git
from ..model.core import REPO_RE
from ..text import repo_url_problem

TRANSPORTS = ("https", "ssh", "file")  # what git may use, after the user's url.<base>.insteadOf
TIMEOUT = 1800.0  # seconds a clone may take (`--clone-timeout`)
_OWNER = "atlas-clone.pid"  # inside a partial folder: the process that is writing it
_RUNNING: dict[int, Path] = {}  # process group of a running git clone -> its partial folder
_RUNNING_LOCK = threading.Lock()


def check_url(url: str) -> str:
    """'' when the URL may be cloned, else why not: the rule validate applies to `urls:`."""
    return repo_url_problem(url)


def clone_repo(repo_id: str, urls: list[str], root: Path, timeout: float | None = None) -> Path:
    """Clone the first acceptable URL into root/<owner>/<name> (atomically: a temporary folder
    beside it is renamed when the clone is complete). Returns the clone's path. git gets `timeout`
    seconds (None: TIMEOUT); then its whole process group is killed and the partial folder removed."""
    timeout = TIMEOUT if timeout is None else timeout
    if not REPO_RE.match(repo_id):
        raise AtlasError(f"not a repository id: {repo_id!r}", Location("--clone"))
    owner, name = repo_id.split("/", 1)
    dest = root / owner / name
    if dest.exists():
        raise AtlasError(f"{repo_id}: {dest} exists but is not a git clone", Location(str(dest)),
                         hint="remove it or point repos/local.yaml elsewhere")
    url = _first_acceptable(repo_id, urls)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(dest.parent, name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=str(dest.parent)))
    try:
        (tmp / _OWNER).write_text(f"{os.getpid()}\n")
        _run_git(repo_id, url, tmp / "c", timeout)
        os.replace(tmp / "c", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _first_acceptable(repo_id: str, urls: list[str]) -> str:
    reasons = []
    for cand in urls:
        why = check_url(cand)
        if not why:
            return cand
        reasons.append(f"{cand!r}: {why}")
    raise AtlasError(f"{repo_id}: no URL that may be cloned"
                     + (f" ({'; '.join(reasons)})" if reasons else " (the repository lists none)"),
                     Location(repo_id), hint="add an https:// URL to its `urls:`")


def _run_git(repo_id: str, url: str, into: Path, timeout: float) -> None:
    git = Git(None, url, network=TRANSPORTS, config=("-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
                                                     "-c", "core.hooksPath=/dev/null"))
    proc = git.popen("clone", "--quiet", "--no-recurse-submodules", "--", url, str(into),
                     stdout=subprocess.DEVNULL, cwd=str(into.parent), start_new_session=True)
    with _RUNNING_LOCK:
        _RUNNING[proc.pid] = into.parent
    try:
        _err = proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        raise AtlasError(f"{repo_id}: git clone {url} did not finish within {timeout:g} s; it was stopped "
                         "and its partial folder removed", Location(url),
                         hint="raise --clone-timeout, or clone it yourself and map it in repos/local.yaml") from None
    finally:
        with _RUNNING_LOCK:
            _RUNNING.pop(proc.pid, None)
        _kill_group(proc.pid)  # helpers git left behind, and git itself when we are leaving early
        proc.wait()
    if proc.returncode:
        text = _err.decode("utf-8", "replace").strip() if _err else ""
        last = (text.splitlines() or ["(no message)"])[-1]
        raise AtlasError(f"{repo_id}: git clone {url} failed: {last}", Location(url))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _remove_orphans(parent: Path, name: str) -> None:
    """Remove partial folders whose writer no longer runs (a refresh killed with SIGKILL)."""
    for old in parent.glob(f".{name}.partial-*"):
        try:
            pid = int((old / _OWNER).read_text().strip())
        except (OSError, ValueError):
            continue  # not ours to judge: no owner recorded
        if not _alive(pid):
            shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # PermissionError: it runs, under another user
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def stop_running_clones() -> None:
    """Kill every running clone's process group and remove its partial folder (signal handlers)."""
    with _RUNNING_LOCK:
        running = list(_RUNNING.items())
    for pgid, partial in running:
        _kill_group(pgid)
        shutil.rmtree(partial, ignore_errors=True)


@contextlib.contextmanager
def stopped_on_signals():
    """While active (main thread only), SIGTERM and SIGINT first stop the running clones, then end
    the process as they would have: SIGTERM with exit status 143, SIGINT as KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, _frame):
        stop_running_clones()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    before = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
