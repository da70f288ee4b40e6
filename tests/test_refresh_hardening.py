"""`atlas refresh` under pressure: two writers at once, a cut-off past the atlas's, hostile ref
names, a clone that hangs, and the files a refresh leaves. Real processes, real git repositories."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from atlas.harvest import read_state
from atlas.text import refname_problem
from test_harvest import ROOT, Repo, d

MINI = ROOT / "tests" / "fixtures" / "mini"


def atlas_cli(*args, cwd=None, env=None):
    e = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=e, timeout=120)


@pytest.fixture
def site(tmp_path):
    """A copy of the mini data (no timeline yet) and clones of its two repositories."""
    data = tmp_path / "data"
    shutil.copytree(MINI, data)
    (data / "timeline.yaml").unlink()
    repos = tmp_path / "repos"
    hccl = Repo(repos, "example/hccl", branch="main")
    hccl.commit({"src/collective/a.c": "BUS_X\n"}, d(3))
    shmem = Repo(repos, "example/shmem", branch="main")
    shmem.commit({"s.c": "engine_u_put(\n"}, d(4))
    return tmp_path


def hold_lock(data: Path) -> subprocess.Popen:
    """Another writer: a real process that holds the data folder's lock until its stdin closes."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from atlas.harvest.lock import DataLock
        with DataLock({str(data)!r}):
            print("locked", flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stdin=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def wait_for_waiters(lockfile: Path, n: int, limit: float = 60) -> None:
    """Until `n` processes are blocked on the lock (Linux lists them in /proc/locks with `->`);
    elsewhere a pause long enough for both runs to load the data."""
    locks = Path("/proc/locks")
    if not locks.exists():
        time.sleep(5)
        return
    inode = f":{lockfile.stat().st_ino} "
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if sum("->" in line and inode in line for line in locks.read_text().splitlines()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError("the refreshes never waited for the lock")


def refresh_proc(site, repo, *extra):
    return subprocess.Popen([sys.executable, "-m", "atlas", "refresh", "--data", str(site / "data"),
                             "--repos", str(site / "repos"), "--repo", repo, *extra],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_refreshes_keep_both_results(site):
    holder = hold_lock(site / "data")
    try:
        # while the lock is held, a refresh without --wait is refused and names the holder
        busy = atlas_cli("refresh", "--data", str(site / "data"), "--repos", str(site / "repos"),
                         "--repo", "example/hccl")
        assert busy.returncode == 1
        assert "another refresh is running on" in busy.stderr + busy.stdout
        assert f"(pid {holder.pid})" in busy.stderr + busy.stdout
        assert not (site / "data" / "timeline.yaml").exists()
        # two runs on different repositories, both loaded before either could write
        a = refresh_proc(site, "example/hccl", "--wait")
        b = refresh_proc(site, "example/shmem", "--wait")
        wait_for_waiters(site / "data" / ".timeline.lock", 2)  # both loaded the empty timeline
        holder.stdin.close()
        outs = [p.communicate(timeout=120) for p in (a, b)]
    finally:
        holder.wait(timeout=30)
        holder.stdout.close()
    assert a.returncode == 0, outs[0]
    assert b.returncode == 0, outs[1]
    harvests, sightings = read_state(site / "data" / "timeline.yaml")
    assert sorted(h.repo for h in harvests) == ["example/hccl", "example/shmem"]
    assert {(s.repo, s.concept) for s in sightings if s.found} == {
        ("example/hccl", "bus-x"), ("example/hccl", "lib-c"), ("example/shmem", "engine-u")}
    assert atlas_cli("validate", "--data", str(site / "data")).returncode == 0
    leftovers = [p.name for p in (site / "data").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_cutoff_after_the_atlas_cutoff_is_refused(site):
    args = ("--data", str(site / "data"), "--repos", str(site / "repos"))
    late = atlas_cli("refresh", "--cutoff", "2026-08-27", *args)
    assert late.returncode == 1
    text = late.stderr + late.stdout
    assert "--cutoff" in text and "2026-08-27" in text and "2026-08-26" in text, text
    assert "Traceback" not in text
    assert not (site / "data" / "timeline.yaml").exists()
    # the atlas still loads, and a cut-off on the atlas's day works
    assert atlas_cli("validate", *args[:2]).returncode == 0
    ok = atlas_cli("refresh", "--cutoff", "2026-08-26", *args)
    assert ok.returncode == 0, ok.stderr
    assert atlas_cli("validate", *args[:2]).returncode == 0


# -- ref names ----------------------------------------------------------------------------------

REF_ALPHABET = "ab/.-_@{}~^:?*[\\ \t\x01\x7féx"


def git_accepts(name: str) -> bool:
    """git's own rule (refs.c's check_refname_format, through `git check-ref-format`). The command
    reads a name that starts with '-' as an option, so such a name is asked under refs/ (the same
    components are checked; a leading '-' breaks none of the rules)."""
    asked = "refs/" + name if name.startswith("-") else name
    out = subprocess.run(["git", "check-ref-format", asked], capture_output=True)
    return out.returncode == 0


@settings(max_examples=100, deadline=None)
@example("refs/heads/a.lock")
@example("refs/heads/a@{b")
@example("refs/heads/.x")
@example("@")
@example("refs/heads/x.")
@example("refs/a//b")
@example("refs/heads/a..b")
@example("main")
@example("refs/heads/é@x")
@example("refs/heads/a\x7fb")
@example("refs/heads/a.lock.b/c")
@example("-/@")
@given(st.one_of(st.text(alphabet=REF_ALPHABET, max_size=14),
                 st.text(alphabet=REF_ALPHABET, max_size=12).map(lambda t: "refs/heads/" + t)))
def test_ref_names_as_git_checks_them(name):
    if name.startswith("-"):  # the asked name has one more component: compare like with like
        assert (refname_problem(name) == "") == git_accepts(name) or "/" not in name, name
        return
    assert (refname_problem(name) == "") == git_accepts(name), (name, refname_problem(name))


@pytest.mark.parametrize("branch", ["refs/heads/../pull/1/head", "refs/pull/1/head",
                                    "pull/1/head", "refs/merge-requests/3/head",
                                    "refs/remotes/origin/pull/2/merge", "main@{1}", "a..b",
                                    "x.lock", "ma\x01in", "-"])
def test_bad_branch_refused_at_validate_and_refresh(site, branch):
    repos_yaml = site / "data" / "repositories" / "repos.yaml"
    text = repos_yaml.read_text(encoding="utf-8")
    quoted = branch.replace("\\", "\\\\").replace('"', '\\"').replace("\x01", "\\x01")
    repos_yaml.write_text(text.replace("    status: active\n",
                                       f'    status: active\n    branch: "{quoted}"\n', 1),
                          encoding="utf-8")
    line = text[: text.index("    status: active\n")].count("\n") + 2
    # validate: a located error in the repository's YAML
    from atlas.model.load import load_data

    loaded = load_data(site / "data")
    found = [p for p in loaded.problems if p.code in ("bad-branch", "control-character")]
    assert found and found[0].location.file.endswith("repos.yaml"), loaded.problems
    assert found[0].location.line == line
    # refresh (the library, which skips validation): refused, nothing harvested from that ref
    from atlas.harvest.refresh import refresh

    loaded.atlas.repo_by_id["example/hccl"].branch = branch
    report = refresh(loaded.atlas, site / "data", repos_root=site / "repos",
                     repo_ids=("example/hccl",))
    assert report.exit_code == 1
    assert any(p.code == "bad-branch" for p in report.problems), report.problems
    assert not any(h.repo == "example/hccl" for h in read_state(site / "data" / "timeline.yaml")[0])


def test_refresh_keeps_the_timeline_mode_and_leaves_no_temporary_files(site):
    from atlas.harvest.refresh import refresh
    from atlas.model.load import load_data

    tl = site / "data" / "timeline.yaml"
    tl.write_text("cutoff: '2026-08-26'\nrepositories: []\nsightings: []\n", encoding="utf-8")
    os.chmod(tl, 0o640)
    report = refresh(load_data(site / "data").atlas, site / "data", repos_root=site / "repos")
    assert report.written and report.exit_code == 0, report.problems
    assert stat.S_IMODE(tl.stat().st_mode) == 0o640
    assert len(read_state(tl)[1]) == 3
    assert [p.name for p in (site / "data").iterdir() if p.name.endswith(".tmp")] == []


def test_alias_bomb_in_local_yaml_fails_fast_with_a_location(site):
    from atlas.errors import AtlasError
    from atlas.harvest import locate

    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]\n" for i in range(8))
    (site / "repos" / "local.yaml").write_text(bomb, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(AtlasError) as err:
        locate.local_map(site / "repos")
    assert time.perf_counter() - t0 < 2
    assert err.value.location.file.endswith("local.yaml") and err.value.location.line == 1
    (site / "repos" / "local.yaml").write_text("example/hccl: hccl-elsewhere\n", encoding="utf-8")
    assert locate.local_map(site / "repos") == {"example/hccl": site / "repos" / "hccl-elsewhere"}
