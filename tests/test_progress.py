"""Progress of the long jobs: each job runs as a real process with a pseudo-terminal as its standard
error (the pty module) and draws click's bar there; the same job with standard error in a pipe, or with
JSON output, prints nothing but its usual answer. And the parallel parse of the code index gives the
parses one process gives."""
from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_code import _fixture_atlas

ROOT = Path(__file__).resolve().parent.parent
BAR = "\x1b[?25l"  # click hides the cursor while it draws a bar


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(data folder, clones folder) of the code fixture, built once."""
    tmp = tmp_path_factory.mktemp("progress")
    _fixture_atlas(tmp)
    return tmp / "data", tmp / "repos"


def on_terminal(args: list[str], cache: Path, cwd: Path) -> tuple[str, str]:
    """(standard output through a pipe, what the terminal on standard error received)."""
    env = {**os.environ, "ATLAS_CACHE": str(cache), "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "atlas", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    seen = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed (Linux reports EIO)
            break
        if not chunk:
            break
        seen.append(chunk)
    os.close(master)
    out = proc.stdout.read()
    proc.stdout.close()
    assert proc.wait(timeout=300) in (0, 1)
    return out.decode("utf-8", "replace"), b"".join(seen).decode("utf-8", "replace")


def in_pipe(args: list[str], cache: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATLAS_CACHE": str(cache), "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def fresh(tmp_path: Path, name: str) -> Path:
    cache = tmp_path / name
    shutil.rmtree(cache, ignore_errors=True)
    return cache


def test_the_first_cache_build_shows_progress_on_a_terminal_only(world, tmp_path):
    data, _clones = world
    out, err = on_terminal(["query", "core-v", "--data", str(data)], fresh(tmp_path, "a"), tmp_path)
    assert "reading the data files" in err and "indexing the records" in err and BAR in err
    assert "core-v" in out
    again = on_terminal(["query", "core-v", "--data", str(data)], tmp_path / "a", tmp_path)[1]
    assert "reading the data files" not in again and BAR not in again  # a warm cache: nothing to show
    piped = in_pipe(["query", "core-v", "--data", str(data)], fresh(tmp_path, "b"), tmp_path)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout == out
    js = on_terminal(["query", "core-v", "--data", str(data), "--format", "json"], fresh(tmp_path, "c"), tmp_path)
    assert js[1] == "" and js[0].startswith("{")


@pytest.mark.parametrize("command", ["where", "source"])
def test_the_code_index_shows_files_parsed_on_a_terminal_only(world, tmp_path, command):
    data, clones = world
    args = [command, "put.c:13", "--data", str(data), "--repos", str(clones)]
    out, err = on_terminal(args, fresh(tmp_path, "a"), tmp_path)
    assert "parsing example/" in err and BAR in err, err
    import re

    done, total = re.findall(r"parsing example/\S+ +\[[#-]+\] +(\d+)/(\d+)", err)[-1]
    assert done == total and int(total) >= 3  # the final draw: every file it had to parse
    piped = in_pipe(args, fresh(tmp_path, "b"), tmp_path)
    assert "parsing" not in piped.stderr and BAR not in piped.stderr and piped.stdout == out


def test_the_map_shows_source_pages_and_pages_written_on_a_terminal_only(world, tmp_path):
    data, clones = world
    args = ["map", "-o", str(tmp_path / "site"), "--data", str(data), "--repos", str(clones)]
    out, err = on_terminal(args, fresh(tmp_path, "a"), tmp_path)
    assert "source pages" in err and "writing pages" in err and BAR in err
    assert out.startswith("wrote ")
    again = on_terminal(args, tmp_path / "a", tmp_path)[1]
    assert "writing pages" not in again  # a rebuild with nothing changed writes no page
    piped = in_pipe(["map", "-o", str(tmp_path / "site2"), "--data", str(data), "--repos", str(clones)],
                    fresh(tmp_path, "b"), tmp_path)
    assert piped.returncode == 0 and BAR not in piped.stderr and "pages" not in piped.stderr


def test_refresh_shows_commits_read_per_repository_on_a_terminal_only(world, tmp_path):
    data, clones = world
    mine = tmp_path / "data"
    shutil.copytree(data, mine)
    args = ["refresh", "--data", str(mine), "--repos", str(clones), "-j", "1"]
    out, err = on_terminal(args, fresh(tmp_path, "a"), tmp_path)
    assert BAR in err and ("example/hccl" in err or "example/shmem" in err), err  # a bar named by its repository
    shutil.rmtree(mine)
    shutil.copytree(data, mine)
    piped = in_pipe(args, fresh(tmp_path, "b"), tmp_path)
    assert BAR not in piped.stderr and piped.stdout.splitlines()[-1] == out.splitlines()[-1]


def test_parsing_in_worker_processes_gives_the_parses_of_one_process():
    """The pool's parses (in order, counted one by one) equal `parse` run here, item by item."""
    from atlas.code.build import Parsing
    from atlas.code.parse import parse

    items = [(f"int f{i}(int a) {{ return g{i % 5}(a, {i}); }}\n#define M{i}(x) (x)\n".encode() * (1 + i % 4),
              "c" if i % 2 else "cpp") for i in range(3 * Parsing.BATCH)]
    items += [(b"def f(a, *b):\n    return g(a)\n", "python")]
    with Parsing(workers=2) as parsing:
        got = list(parsing.parse(items, "o/r"))
        assert parsing.pool is not None and parsing.todo == len(items)
    assert got == [parse(*item) for item in items]


def test_a_second_data_folder_with_the_same_files_reuses_the_code_table(world, tmp_path, monkeypatch):
    """The code table is keyed by the data's content, the code and the clones, not by the folder: the
    same files elsewhere (an installed copy) answer from it without indexing again."""
    from atlas import commands

    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "cache"))
    data, clones = world
    other = tmp_path / "elsewhere" / "data"
    shutil.copytree(data, other)
    assert commands.where("put.c:13", data_dir=data, repos_dir=clones).code == 0
    tables = sorted((tmp_path / "cache").glob("codetab-*"))
    assert len(tables) == 1
    _opened, _pins, code, _root = commands.code_tables(other, clones, build=False)
    assert code is not None and sorted((tmp_path / "cache").glob("codetab-*")) == tables
    assert commands.where("put.c:13", data_dir=other, repos_dir=clones).out == \
        commands.where("put.c:13", data_dir=data, repos_dir=clones).out


def test_source_pages_rendered_in_worker_processes_are_those_rendered_here(world, tmp_path, monkeypatch):
    """The map's source pages made by the forked workers equal, byte for byte, those made in one process."""
    from atlas import commands
    from atlas.site import source

    data, clones = world
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    sites = {}
    for name, start in (("here", 10 ** 9), ("workers", 1)):
        monkeypatch.setattr(source, "PARALLEL_FROM", start)
        assert commands.site(str(tmp_path / name), data_dir=data, repos_dir=clones).code == 0
        sites[name] = {p.relative_to(tmp_path / name).as_posix(): p.read_bytes()
                       for p in (tmp_path / name).rglob("*") if p.is_file()}
    assert sum("source/" in k for k in sites["here"]) >= 3 and sites["here"] == sites["workers"]


def test_the_workers_end_when_the_process_that_started_them_is_killed(tmp_path):
    """A map or an index killed outright (a timeout's SIGKILL) leaves no worker waiting for ever."""
    import signal
    import time

    code = ("import sys, time\nfrom atlas.code.build import worker_pool\npool = worker_pool(2)\n"
            "list(pool.map(abs, range(8)))\nprint(*pool._processes, flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    workers = [int(w) for w in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(Path(f"/proc/{w}").exists() for w in workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    def running(pid: int) -> bool:  # a zombie (not yet reaped by whoever adopted it) has ended
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    deadline = time.monotonic() + 10
    while any(map(running, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(running, workers))
