"""`refresh --clone` is bounded: a git clone that hangs is stopped at its time limit, on SIGTERM and on
Ctrl-C, with every process it started, and leaves no partial folder. Real git, real ssh helper processes
(a script standing in for ssh that never answers), real signals."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atlas.errors import AtlasError
from atlas.harvest.clone import clone_repo
from test_harvest import ROOT, Repo, d

MINI = ROOT / "tests" / "fixtures" / "mini"
URL = "https://example.invalid/o/r.git"  # data lists https:// only; git's config routes it (insteadOf)


def route(monkeypatch, prefix: str, to: str) -> None:
    """git is told by environment config to reach URLs that start with `prefix` at `to` (as a user's
    `url.<base>.insteadOf` does): over ssh, or from a local path."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{to}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", prefix)


@pytest.fixture
def hanging_ssh(tmp_path, monkeypatch):
    """GIT_SSH_COMMAND is a script that records its pid and its child's, then waits forever; the
    https:// URLs of example.invalid and github.com are reached over ssh."""
    pids = tmp_path / "ssh.pids"
    script = tmp_path / "fake-ssh"
    script.write_text(f'#!/bin/sh\necho $$ >> "{pids}"\nsleep 300 &\necho $! >> "{pids}"\nwait\n')
    script.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(script))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
    for i, host in enumerate(("example.invalid", "github.com")):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", "url.ssh://git@example.invalid/.insteadOf")
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", f"https://{host}/")
    return pids


def started(pids: Path, timeout: float = 20) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = [int(x) for x in pids.read_text().split()] if pids.exists() else []
        if len(got) >= 2:
            return got
        time.sleep(0.05)
    raise AssertionError("the ssh stand-in never started")


def running(pid: int) -> bool:
    """A process that exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def all_gone(pids: list[int], timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(running(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def partials(root: Path) -> list[Path]:
    return list(root.rglob(".*.partial-*"))


def test_a_hanging_clone_stops_at_its_time_limit(tmp_path, hanging_ssh):
    root = tmp_path / "repos"
    t0 = time.monotonic()
    with pytest.raises(AtlasError) as err:
        clone_repo("o/r", [URL], root, timeout=2)
    took = time.monotonic() - t0
    assert 2 <= took < 15, took
    msg = err.value.message
    assert "did not finish within 2 s" in msg and "o/r" in msg and "--clone-timeout" in err.value.hint
    assert all_gone(started(hanging_ssh)), "ssh and its child must be killed with git"
    assert partials(root) == [] and not (root / "o" / "r").exists()


def test_a_clone_that_finishes_is_untouched_by_the_limit(tmp_path, monkeypatch):
    src = Repo(tmp_path / "src")
    sha = src.commit({"a": "x\n"}, d(1))
    route(monkeypatch, URL, f"file://{src.path}")
    dest = clone_repo("o/r", [URL], tmp_path / "repos", timeout=60)
    assert dest == tmp_path / "repos" / "o" / "r" and (dest / ".git").is_dir()
    assert subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip() == sha
    assert partials(tmp_path / "repos") == []


def test_a_failed_clone_says_why_and_leaves_nothing(tmp_path, monkeypatch):
    route(monkeypatch, URL, f"file://{tmp_path}/nothing-here")
    with pytest.raises(AtlasError) as err:
        clone_repo("o/r", [URL], tmp_path / "repos", timeout=60)
    assert "git clone" in err.value.message and "failed" in err.value.message
    assert partials(tmp_path / "repos") == [] and not (tmp_path / "repos" / "o" / "r").exists()


def test_partial_folders_of_dead_processes_are_removed_live_ones_kept(tmp_path, monkeypatch):
    src = Repo(tmp_path / "src")
    src.commit({"a": "x\n"}, d(1))
    parent = tmp_path / "repos" / "o"
    parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan, live, foreign = parent / ".r.partial-dead", parent / ".r.partial-live", parent / ".r.partial-x"
    for folder, owner in ((orphan, dead.pid), (live, os.getpid()), (foreign, None)):
        (folder / "c").mkdir(parents=True)
        if owner is not None:
            (folder / "atlas-clone.pid").write_text(f"{owner}\n")
    route(monkeypatch, URL, f"file://{src.path}")
    clone_repo("o/r", [URL], tmp_path / "repos", timeout=60)
    assert not orphan.exists(), "left by a process that no longer runs"
    assert live.exists() and foreign.exists(), "a running clone's folder, and one not written by a clone"


@pytest.fixture
def clone_site(tmp_path):
    """The mini atlas (its https:// URLs are github.com's, which hanging_ssh routes over ssh)."""
    shutil.copytree(MINI, tmp_path / "data")
    return tmp_path


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, None)])
def test_a_killed_refresh_takes_its_clone_with_it(clone_site, hanging_ssh, sig, status):
    env = {**os.environ, "ATLAS_CACHE": str(clone_site / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "atlas", "refresh", "--clone", "--repo", "example/hccl",
                             "--data", str(clone_site / "data"), "--repos", str(clone_site / "repos")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = started(hanging_ssh)
    assert partials(clone_site / "repos"), "the clone is under way"
    before = (clone_site / "data" / "timeline.yaml").read_bytes()
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err
    if status is not None:
        assert proc.returncode == status
    else:
        assert proc.returncode != 0
    assert all_gone(pids), "git's ssh helper outlived the refresh"
    assert partials(clone_site / "repos") == []
    assert (clone_site / "data" / "timeline.yaml").read_bytes() == before


def test_refresh_clone_timeout_reports_the_repository_and_keeps_the_timeline(clone_site, hanging_ssh):
    env = {**os.environ, "ATLAS_CACHE": str(clone_site / "cache")}
    before = (clone_site / "data" / "timeline.yaml").read_bytes()
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "atlas", "refresh", "--clone", "--clone-timeout", "2",
                        "--repo", "example/hccl", "--data", str(clone_site / "data"),
                        "--repos", str(clone_site / "repos")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t0 < 30
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "Traceback" not in out, out
    assert "example/hccl" in out and "did not finish within 2 s" in out, out
    assert all_gone(started(hanging_ssh)) and partials(clone_site / "repos") == []
    assert (clone_site / "data" / "timeline.yaml").read_bytes() == before


@pytest.mark.parametrize("url", ["ssh://git@example.invalid/o/r.git", "file:///tmp/o/r", "git://example.invalid/o/r",
                                 "ext::sh -c touch% /tmp/pwned", "https://-oProxyCommand=x/o/r", "https:///o/r"])
def test_clone_takes_only_what_validate_accepts(mini, url):
    """`refresh --clone` and `atlas validate` apply one rule to a repository's URL (https:// only: the
    public address readers open; git's insteadOf may still route it over ssh)."""
    from atlas.model.checks import check
    from atlas.harvest.clone import check_url
    from atlas.model.load import load_data

    f = mini / "repositories" / "repos.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("urls: [https://github.com/example/hccl]",
                                                       f"urls: [{json.dumps(url)}]"), encoding="utf-8")
    bad = [p for p in check(load_data(mini)).problems if p.code == "bad-url"]
    assert len(bad) == 1 and bad[0].location.line == 3, bad
    assert check_url(url) and check_url(url) in bad[0].message
    with pytest.raises(AtlasError) as err:
        clone_repo("o/r", [url], mini.parent / "repos", timeout=5)
    assert "no URL that may be cloned" in err.value.message
    assert not check_url("https://github.com/example/hccl")
