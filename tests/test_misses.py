"""Lookups that match nothing say so, and pins stay inside their repository: `atlas source` and
`atlas where` name what they looked for, why it cannot match and what to try (in the language asked
for, exit 1); `validate` refuses a pin path that is absolute, climbs out or is not a path git stores;
the code index and `atlas source` skip such a pin alone. Real git repositories built by the test
(tests/test_code.py), the real console script."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from atlas import commands
from atlas.code.answers import read_files
from atlas.code.build import index_atlas
from atlas.model.load import load_data

from test_code import _fixture_atlas


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    """(data folder, clones folder, the clone's commit of example/shmem) built once for the module."""
    tmp = tmp_path_factory.mktemp("misses")
    _atlas, root, c1, c2 = _fixture_atlas(tmp)
    return tmp / "data", root, c1, c2


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, cwd=str(cwd),
                       timeout=120, env={**os.environ, "COLUMNS": "300"})
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _canary(tmp_path: Path) -> Path:
    return tmp_path / "ran"


MISSES = [  # (argument, what the message must say besides the common lines)
    ("/etc/passwd:1", "/etc/passwd is an absolute path"),
    ("../../etc/shadow:1", "../../etc/shadow climbs out of its repository"),
    ("nosuch.c:1", "no pinned or indexed file matches nosuch.c"),
    ("a$(touch {canary})/b@1111111111111111111111111111111111111111:f.c#L1", "is not a repository name"),
]


@pytest.mark.parametrize("command", ["source", "where"])
@pytest.mark.parametrize("term, says", MISSES, ids=["absolute", "climbs", "no-file", "shell-in-repo"])
def test_a_miss_says_what_was_looked_for_and_what_to_try(fixture, tmp_path, command, term, says):
    data, root, _c1, _c2 = fixture
    term = term.format(canary=_canary(tmp_path))
    r = run(command, term, "--data", str(data), "--repos", str(root), cwd=tmp_path)
    assert r.returncode == 1  # the README: exit 1 when no line could be shown / no pin covers the line
    text = " ".join((r.stdout + r.stderr).split())  # as read, whatever the wrapping
    assert f'atlas {command}: nothing to show for "{term}"' in text, text
    assert says in text and "looked in: the" in text and "try: the end of a pinned path" in text, text
    if command == "source":
        assert r.stdout == ""  # a miss is said on standard error, as every miss is
    assert not _canary(tmp_path).exists()


@pytest.mark.parametrize("command", ["source", "where"])
def test_a_miss_in_chinese_and_in_json(fixture, tmp_path, command):
    data, root, _c1, _c2 = fixture
    r = run(command, "../../etc/shadow:1", "--lang", "zh", "--data", str(data), "--repos", str(root), cwd=tmp_path)
    assert r.returncode == 1
    text = r.stdout + r.stderr
    assert "没有可显示的内容" in text and "跳出了所在仓库" in text and "可以试试" in text
    assert "nothing to show" not in text
    both = run(command, "nosuch.c:1", "--lang", "all", "--data", str(data), "--repos", str(root), cwd=tmp_path)
    assert "nothing to show" in both.stdout + both.stderr and "没有可显示的内容" in both.stdout + both.stderr
    r = run(command, "/etc/passwd:1", "--format", "json", "--data", str(data), "--repos", str(root), cwd=tmp_path)
    assert r.returncode == 1
    miss = json.loads(r.stdout)["miss"]
    assert miss["reason"] == "absolute" and miss["path"] == "/etc/passwd" and miss["files"] > 0


def test_a_close_file_name_is_offered(fixture, tmp_path):
    data, root, _c1, _c2 = fixture
    r = run("source", "puts.c:3", "--data", str(data), "--repos", str(root), cwd=tmp_path)
    assert r.returncode == 1 and "pinned files with a close name: include/put.h, src/put.c" in r.stderr, r.stderr


# --------------------------------------------------------------------------------------------------
# Pins stay inside their repository
# --------------------------------------------------------------------------------------------------

BAD_PATHS = ["../../../../tmp/escape.c", "/etc/passwd", "src/../../x.c", "C:\\x.c", ":(glob)*.c", "src/./put.c",
             "src//put.c", ".git/config", "src/\x01put.c"]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_validate_refuses_a_pin_path_outside_the_repository(fixture, tmp_path, path):
    import shutil

    data, _root, c1, _c2 = fixture
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    f = copy / "repositories" / "repos.yaml"
    text = f.read_text(encoding="utf-8")
    assert f"{c1}:include/put.h#L1-L2" in text
    f.write_text(text.replace(f"{c1}:include/put.h#L1-L2", f"{c1}:{path}#L1-L2"), encoding="utf-8")
    line = next(i for i, s in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if f"{c1}:" in s)
    problems = [p for p in load_data(copy).problems if p.is_error]
    assert [(p.code, p.location.line) for p in problems][:1] == [("bad-pin", line)] or \
        ("control-character", line) in [(p.code, p.location.line) for p in problems], [str(p) for p in problems]


def test_every_pin_of_the_bundled_atlas_is_a_path_git_stores():
    from atlas.index.compiled import load_atlas
    from atlas.text import pin_path_problem
    from atlas.view.views import owned_evidence

    root = Path(__file__).resolve().parent.parent / "data"
    pins = [e.pin for _o, e in owned_evidence(load_atlas(root)) if e.pin is not None]
    assert pins and [str(p) for p in pins if pin_path_problem(p.path)] == []


def test_the_code_index_and_source_skip_a_bad_pin_alone(fixture, tmp_path):
    """Before, one such pin made git refuse the whole batch: `atlas map --repos` and `atlas source` failed
    with "is outside repository"."""
    import shutil

    data, root, c1, c2 = fixture
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    f = copy / "repositories" / "repos.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace(f"{c1}:include/put.h#L1-L2",
                                                       f"{c1}:../../../../tmp/escape.c#L1-L2"), encoding="utf-8")
    loaded = load_data(copy)  # the error is reported; the records are still there
    index = index_atlas(loaded.atlas, root)
    skipped = [u for u in index.unindexed if u.path == "../../../../tmp/escape.c"]
    assert [(u.repo, u.reason) for u in skipped] == [("example/shmem", "the path climbs out of its repository (..)")]
    assert {f.path for f in index.files} >= {"src/put.c", "src/doorbell.c"}
    _opened, _pins, code, _root = commands.code_tables(data, root)  # the good data's tables and clones
    bad, other = ("example/hccl", c2, "../../../../tmp/escape.c"), ("example/hccl", c2, "src/absent.cc")
    assert code is not None and code.text(other) is None  # asked of the clone with git, in the bad one's batch
    texts = read_files(code, [bad, other])
    assert texts[bad] == (None, "the path climbs out of its repository (..)")
    assert texts[other][0] is None and "outside" not in texts[other][1], texts[other]


def test_the_clone_hint_of_a_miss_speaks_the_language_asked_for():
    from atlas.code.answers import clone_hint
    from atlas.terminal.source import _clone_hint

    clones = {"root": "/r", "found": [], "absent": ["a/b"], "hint": clone_hint(["a/b"], Path("/r"))}
    zh = "\n".join(_clone_hint(clones, 100, "zh"))
    assert "/r 下没有 a/b 的本地克隆" in zh and "no local clone" not in zh and "atlas refresh --clone --repo a/b" in zh
    both = "\n".join(_clone_hint(clones, 100, "all"))
    assert "no local clone of a/b" in both and "本地克隆" in both
    assert "本地克隆" not in "\n".join(_clone_hint(clones, 100, "en"))
