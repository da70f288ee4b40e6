"""The one git runner (atlas.gitrun): its environment holds against the user's own git config, no
transport is allowed unless asked for, output is bounded, a missing git is a located error; and no other
module of the package starts a process (git or anything else) itself."""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from atlas.errors import AtlasError
from atlas.gitrun import Git, environment

PKG = Path(__file__).resolve().parent.parent / "atlas"
ROOT = PKG.parent
NAME = "süd/ß 1.c"  # quoted by git with core.quotePath=true


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A bare repository with one commit holding NAME (1,000 bytes), made with `git fast-import`."""
    repo = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    body = b"x" * 1000
    stream = (b"commit refs/heads/master\nmark :1\ncommitter C <c@x> 1700000000 +0000\ndata 2\nc0\n"
              b"M 100644 inline " + NAME.encode() + b"\ndata %d\n%s\n" % (len(body), body))
    subprocess.run(["git", "--git-dir", str(repo), "fast-import", "--quiet"], input=stream, check=True)
    return repo, "master"


@pytest.fixture
def hostile_config(tmp_path, monkeypatch):
    """A user whose global git config would change every output the atlas parses."""
    config = tmp_path / "gitconfig"
    config.write_text("[core]\n\tquotePath = true\n\tpager = false\n[color]\n\tui = always\n"
                      "[grep]\n\tlineNumber = true\n\tpatternType = perl\n[log]\n\tshowSignature = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")


def test_the_user_config_does_not_change_what_git_prints(tmp_path, hostile_config):
    repo, head = _repo(tmp_path)
    git = Git(repo, "o/r")
    status, out, _err = git.run("ls-tree", "-r", "--name-only", head)
    assert status == 0 and out.decode() == NAME + "\n"  # not quoted, not coloured
    status, out, _err = git.run("grep", "-l", "-e", "x.x", head, "--")
    assert status == 1 and out == b""  # a fixed string, not a pattern
    raw = subprocess.run(["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only", head],
                         capture_output=True, check=True).stdout
    assert raw.decode() != NAME + "\n"  # (the config does change plain git's output)


def test_no_transport_unless_asked(tmp_path):
    env = environment()
    assert env["GIT_ALLOW_PROTOCOL"] == "none" and env["GIT_NO_LAZY_FETCH"] == "1"
    assert env["LC_ALL"] == "C" and env["GIT_TERMINAL_PROMPT"] == "0"
    status, _out, err = Git(None, "x").run("ls-remote", "https://example.invalid/o/r.git")
    assert status != 0 and b"transport 'https' not allowed" in err
    env = environment(("https",))
    assert env["GIT_ALLOW_PROTOCOL"] == "https" and "GIT_NO_LAZY_FETCH" not in env


def test_output_is_bounded(tmp_path):
    repo, head = _repo(tmp_path)
    git = Git(repo, "o/r")
    assert len(git.run("cat-file", "blob", f"{head}:{NAME}").out) == 1000
    with pytest.raises(AtlasError) as exc:
        git.run("cat-file", "blob", f"{head}:{NAME}", limit=999)
    assert "more than 999 bytes" in str(exc.value) and "o/r" in str(exc.value)
    # input is fed while output is read: a batch larger than a pipe's buffer both ways
    oid = git.run("rev-parse", f"{head}:{NAME}").out.strip().decode()
    out = git.run("cat-file", "--batch", input=(oid + "\n").encode() * 2000).out
    assert len(out) == 2000 * (len(oid) + len(" blob 1000\n") + 1001)


def test_a_missing_git_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AtlasError) as exc:
        Git(tmp_path, "o/r").run("rev-parse", "HEAD")
    assert "git is not installed" in str(exc.value) and "o/r" in str(exc.value)


# -- no process started anywhere else ------------------------------------------------------------

STARTERS = {"subprocess": {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
            "os": {"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp",
                   "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp",
                   "spawnlpe", "posix_spawn", "posix_spawnp"},
            "asyncio": {"create_subprocess_exec", "create_subprocess_shell"}}


def _starts(tree: ast.AST):
    """(line, what) of every process start and gitpython import in a module."""
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.attr in STARTERS.get(func.value.id, ()):
            yield node.lineno, f"{func.value.id}.{func.attr}"
        elif isinstance(node, ast.ImportFrom) and node.module in STARTERS:
            for alias in node.names:
                if alias.name in STARTERS[node.module]:
                    yield node.lineno, f"from {node.module} import {alias.name}"
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "git" for a in node.names) or \
                isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "git" and not node.level:
            yield node.lineno, "gitpython"


def test_no_module_but_the_runner_starts_a_process():
    found = []
    for file in sorted(PKG.rglob("*.py")):
        if file == PKG / "gitrun.py":
            continue
        found += [f"{file.relative_to(ROOT)}:{line}: {what}" for line, what in _starts(ast.parse(file.read_text()))]
    assert not found, "git runs through atlas.gitrun only:\n" + "\n".join(found)


def test_the_scan_sees_every_way_of_starting_a_process():
    code = ("import subprocess, os\nfrom subprocess import check_output\nimport git\n"
            "subprocess.run(['git'])\nos.system('git')\nsubprocess.PIPE\ndef f() -> subprocess.Popen: ...\n")
    assert [what for _line, what in _starts(ast.parse(code))] == [
        "from subprocess import check_output", "gitpython", "subprocess.run", "os.system"]
