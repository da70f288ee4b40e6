"""Bytes are input too: arguments that are not UTF-8, a disk that fills during a write, files of
the user's that are too large to be what they claim. Real processes and real files (a real tmpfs
where this machine lets a test mount one, and a real file-size limit everywhere)."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.cli import COMMANDS
from test_harvest import ROOT, Repo, d

MINI = ROOT / "tests" / "fixtures" / "mini"
ATLAS = [sys.executable, "-m", "atlas"]


def run(argv: list, cwd: Path, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """argv may hold bytes (passed to the process as they are)."""
    e = {k: v for k, v in os.environ.items() if k not in ("ATLAS_DATA", "ATLAS_REPOS")}
    e.update(ATLAS_DATA=str(MINI), **(env or {}))
    return subprocess.run(ATLAS + argv, cwd=cwd, env=e, capture_output=True, timeout=120, **kw)


# ---------------------------------------------------------------------------------------------
# arguments that are not UTF-8
# ---------------------------------------------------------------------------------------------

BAD = [b"caf\xe9", b"\xff\xfe", b"\xed\xa0\x80", b"ok\x80"]  # Latin-1, no UTF-8, a lone surrogate, a stray byte


@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
@pytest.mark.parametrize("argv", [["query", BAD[0]], ["claims", BAD[1]], ["flow", BAD[2]], ["repo", BAD[3]],
                                  ["query", "hccs", "--format", BAD[1]], ["query", BAD[2], "--format", "json"]])
def test_undecodable_arguments_are_a_usage_error(tmp_path, argv, locale):
    """issue 26: these raised UnicodeEncodeError tracebacks (exit 1), also under LC_ALL=C."""
    done = run(argv, tmp_path, env={"LC_ALL": locale})
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "Traceback" not in err, err
    bad = next(a for a in argv if isinstance(a, bytes))
    assert "is not UTF-8 text" in err and str(bad)[1:] in err  # its bytes, shown as escapes
    assert done.stdout == b""


# raw bytes (mostly not UTF-8) and text (always UTF-8, Chinese and controls included), never NUL
arg_bytes = st.one_of(st.lists(st.integers(1, 255), min_size=1, max_size=12).map(bytes),
                      st.text(st.characters(blacklist_characters="\0"), min_size=1, max_size=8).map(
                          lambda t: t.encode("utf-8", "surrogatepass")))


def _safe(arg: bytes) -> bytes:
    """A random argument, kept from reaching a real option (`--clone` would clone): one that reads
    as text and starts with "-" gets a letter in front."""
    try:
        arg.decode("utf-8")
    except UnicodeDecodeError:
        return arg
    return b"x" + arg if arg.startswith(b"-") else arg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(COMMANDS)), args=st.lists(arg_bytes, min_size=1, max_size=3),
       json_format=st.booleans(), locale=st.sampled_from(["C.UTF-8", "C"]))
def test_random_bytes_in_argv_never_give_a_traceback(tmp_path_factory, command, args, json_format, locale):
    """Every command, random bytes as its arguments (and --format json): an answer, a miss or a
    usage error, never a traceback; an argument that is not UTF-8 is always exit 2."""
    cwd = tmp_path_factory.mktemp("argv")
    argv = [command, *map(_safe, args)] + (["--format", "json"] if json_format else [])
    done = run(argv, cwd, env={"LC_ALL": locale, "ATLAS_REPOS": str(cwd)})
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and done.returncode in (0, 1, 2), (argv, err)
    undecodable = any(not _decodes(a) for a in argv if isinstance(a, bytes))
    if undecodable:
        assert done.returncode == 2 and "is not UTF-8 text" in err, (argv, err)
    assert not os.listdir(cwd), argv  # nothing was written where it ran


def _decodes(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_a_path_that_is_not_utf8_in_the_environment_is_shown_escaped(tmp_path):
    """$ATLAS_DATA may name a folder whose name is not UTF-8: its messages escape it."""
    name = os.fsdecode(b"data-\xff")
    shutil.copytree(MINI, tmp_path / name)
    done = subprocess.run(ATLAS + ["validate", "--no-shacl"], cwd=tmp_path, capture_output=True, timeout=120,
                          env=dict(os.environ, ATLAS_DATA=os.fsencode(tmp_path / name)))
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"data-\\udcff" in done.stdout


# ---------------------------------------------------------------------------------------------
# a write that fails: which file and why, the old file intact
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def site(tmp_path):
    shutil.copytree(MINI, tmp_path / "data")
    Repo(tmp_path / "clones", "example/hccl", branch="main").commit({"src/collective/a.c": "BUS_X\n"}, d(3))
    Repo(tmp_path / "clones", "example/shmem", branch="main").commit({"s.c": "engine_u_put(\n"}, d(4))
    return tmp_path


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1500, 1500))  # Python ignores SIGXFSZ: writes get EFBIG


def test_a_file_size_limit_during_refresh_names_the_file_and_keeps_it(site):
    """issue 26: OSError 27 (EFBIG) from the timeline write was a traceback."""
    timeline = site / "data" / "timeline.yaml"
    old = timeline.read_bytes()
    done = subprocess.run(ATLAS + ["refresh", "-j", "1", "--data", str(site / "data"), "--repos",
                                   str(site / "clones")], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limit_file_size, env=dict(os.environ, ATLAS_CACHE=str(site / "cache")))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot write {timeline}: File too large (the file was not changed)" in done.stderr
    assert timeline.read_bytes() == old
    assert not [p for p in os.listdir(site / "data") if p.endswith(".tmp")]


def _can_mount_tmpfs(where: Path) -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            f"mount -t tmpfs -o size=64k tmpfs '{where}'"], capture_output=True)
    return probe.returncode == 0


def test_a_full_disk_during_refresh_names_the_file_and_keeps_it(site):
    """A real tmpfs (in a private mount namespace), filled up before the refresh writes."""
    disk = site / "disk"
    disk.mkdir()
    if not _can_mount_tmpfs(disk):
        pytest.skip("this machine does not let an unprivileged test mount a tmpfs (unshare)")
    script = f"""
set -e
mount -t tmpfs -o size=256k tmpfs '{disk}'
cp -r '{site / "data"}' '{disk}/data'
dd if=/dev/zero of='{disk}/filler' bs=4k 2>/dev/null || true
sha256sum '{disk}/data/timeline.yaml'
set +e
'{sys.executable}' -m atlas refresh -j 1 --data '{disk}/data' --repos '{site / "clones"}'
echo "exit=$?"
sha256sum '{disk}/data/timeline.yaml'
ls -a '{disk}/data'
"""
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, ATLAS_CACHE=str(site / "cache")))
    out = done.stdout.splitlines()
    assert "exit=1" in out and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert f"cannot write {disk}/data/timeline.yaml: No space left on device (the file was not changed)" \
        in done.stderr
    sums = [line.split()[0] for line in out if line.endswith("timeline.yaml") and len(line.split()[0]) == 64]
    assert len(sums) == 2 and sums[0] == sums[1]  # the old file, byte for byte
    assert not [line for line in out if line.endswith(".tmp")]


# ---------------------------------------------------------------------------------------------
# reads of files the user names are bounded
# ---------------------------------------------------------------------------------------------

def test_a_huge_data_file_is_a_located_error_and_never_read(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(MINI, data)
    huge = data / "concepts" / "x" / "huge.yaml"
    with open(huge, "wb") as fh:  # sparse: 64 MB that take no disk
        fh.truncate(64 * 1024 * 1024)
    for args in (["validate", "--no-shacl"], ["query", "bus-x"]):
        done = subprocess.run(ATLAS + args + ["--data", str(data)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert "huge.yaml" in done.stdout + done.stderr and "[too-large]" in done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["sparse", "device", "folder"])
def test_local_yaml_is_read_within_a_bound(site, kind):
    local = site / "clones" / "local.yaml"
    if kind == "sparse":
        with open(local, "wb") as fh:
            fh.write(b"example/hccl: example/hccl\n")
            fh.truncate(32 * 1024 * 1024)
    elif kind == "device":
        os.symlink("/dev/zero", local)
    else:
        local.mkdir()
    done = subprocess.run(ATLAS + ["verify", "--data", str(site / "data"), "--repos", str(site / "clones")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(local) in done.stderr
    assert ("larger than 1 MB" if kind == "sparse" else "not a regular file") in done.stderr


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(max_codepoint=0x7f), st.characters()), max_size=40))
def test_the_width_of_text_is_the_sum_of_its_characters_widths(text):
    """Oracle: `width` (which counts an ASCII text by its length) equals the definition, character by
    character: a combining mark takes none, a wide or full-width character two, any other one."""
    import unicodedata

    from atlas.text import width

    expected = sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
                   for ch in text)
    assert width(text) == expected
