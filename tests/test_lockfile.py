"""The one file lock (atlas.lockfile): shared and exclusive locks between real processes, a lock
dropped when its holder dies, a replaced lock file seen as stale; and no other module takes a lock of
its own."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atlas.lockfile import Lock, locked

PKG = Path(__file__).resolve().parent.parent / "atlas"
ROOT = PKG.parent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shared locks are POSIX's")


def _holder(path: Path, shared: bool) -> subprocess.Popen:
    """Another process holding a lock on `path` until its standard input closes."""
    code = (f"import sys; from atlas.lockfile import Lock; lock = Lock({str(path)!r}); "
            f"assert lock.{'shared' if shared else 'exclusive'}(None); print('held', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_shared_holder_admits_readers_and_keeps_writers_out(tmp_path):
    path = tmp_path / "x.lock"
    proc = _holder(path, shared=True)
    try:
        with Lock(path) as reader:
            assert reader.shared(0)
        with Lock(path) as writer:
            t0 = time.monotonic()
            assert not writer.exclusive(0.2)
            assert time.monotonic() - t0 >= 0.2  # it waited the time it was given
        assert locked(path, wait=False) is None
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait()
    lock = locked(path, wait=False)  # the holder ended: its lock went with it
    assert lock is not None
    lock.release()


def test_an_exclusive_holder_keeps_readers_out_until_it_dies(tmp_path):
    path = tmp_path / "x.lock"
    proc = _holder(path, shared=False)
    with Lock(path) as reader:
        assert not reader.shared(0)
        proc.kill()
        proc.wait()
        assert reader.shared(5)


def test_a_replaced_lock_file_is_stale(tmp_path):
    path = tmp_path / "x.lock"
    with Lock(path) as lock:
        assert lock.shared() and not lock.stale()
        path.unlink()
        assert lock.stale()
        path.write_text("")
        assert lock.stale()  # another file under the same name


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("flock", "lockf", "locking"):
            yield node.lineno, node.attr


def test_no_module_but_lockfile_takes_a_lock():
    found = []
    for file in sorted(PKG.rglob("*.py")):
        if file.name == "lockfile.py" and file.parent == PKG:
            continue
        found += [f"{file.relative_to(ROOT)}:{line}: {attr}" for line, attr in _calls(ast.parse(file.read_text()))]
    assert not found, "file locks are taken through atlas.lockfile only:\n" + "\n".join(found)
