"""Release questions in `atlas query`, in English and Chinese: two repositories built here with real git
and tags, their API history harvested by `atlas refresh`, the questions asked through the console script
(the fast launcher) and through click, which print the same bytes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas.cli import cli

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
       "COLUMNS": "200"}
T0 = 1767225600  # 2026-01-01T00:00:00Z


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], day: int) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    stamp = f"{T0 + day * 86400} +0000"
    subprocess.run(["git", "commit", "-q", "-m", f"day {day}"], cwd=repo, check=True, capture_output=True,
                   env={**ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    return git(repo, "rev-parse", "HEAD")


def new_repo(root: Path, rid: str) -> Path:
    repo = root / rid
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "T")
    git(repo, "config", "user.email", "t@x")
    return repo


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """example/shmem: shmem_put on day 1 (tag v1.0.0), engine_u_put on day 3 (tag v1.1.0), shmem_wait on
    day 5 (no tag after it: never released). example/hccl: a source file on day 2 (tag v2.0.0), shmem_put on
    day 4 (tag v2.1.0). The concept lib-s names shmem_put and engine_u_put."""
    import shutil

    from conftest import MINI

    tmp = tmp_path_factory.mktemp("release")
    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    data = tmp / "data"
    shutil.copytree(MINI, data)
    root = tmp / "repos"
    shmem, hccl = new_repo(root, "example/shmem"), new_repo(root, "example/hccl")
    c = {"put": commit(shmem, {"include/shmem.h": "int shmem_put(int pe);\n"}, 1)}
    git(shmem, "tag", "v1.0.0")
    commit(hccl, {"src/collective/bus.c": "int BUS_X;\n"}, 2)  # what the mini atlas's probes look for
    git(hccl, "tag", "v2.0.0")
    c["engine"] = commit(shmem, {"include/engine.h": "void engine_u_put(void);\n"}, 3)
    git(shmem, "tag", "v1.1.0")
    c["hccl_put"] = commit(hccl, {"include/hccl.h": "int shmem_put(int pe);\n"}, 4)
    git(hccl, "tag", "v2.1.0")
    c["wait"] = commit(shmem, {"include/wait.h": "void shmem_wait(int x);\n"}, 5)
    repos = data / "repositories" / "repos.yaml"
    text = repos.read_text(encoding="utf-8")
    api = ("    branch: main\n    api:\n      public: [\"include/**/*.h\"]\n"
           "    releases: {scheme: semver, tags: \"v*\"}\n")
    text = text.replace("    status: active\n", "    status: active\n" + api).replace(
        "    status: mirror\n", "    status: mirror\n" + api)
    repos.write_text(text, encoding="utf-8")
    lib_s = data / "concepts" / "x" / "lib-s.yaml"
    lib_s.write_text(lib_s.read_text(encoding="utf-8") + "api: [shmem_put, engine_u_put]\n", encoding="utf-8")
    out = run("refresh", "--data", str(data), "--repos", str(root), "--repo", "example/shmem", "--repo",
              "example/hccl")
    assert out.returncode in (0, 1), out.stderr
    assert (data / "api" / "example+hccl.jsonl").is_file() and (data / "api" / "example+shmem.jsonl").is_file(), \
        out.stdout + out.stderr
    return {"data": data, "commits": c, "tags": {t: git(shmem if t.startswith("v1") else hccl, "rev-list", "-n1", t)
                                               for t in ("v1.0.0", "v1.1.0", "v2.1.0")}}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=ENV)


def ask(world, question: str, *extra: str) -> subprocess.CompletedProcess:
    """The question through the console script (the fast launcher); click must print the same bytes."""
    args = ["query", question, "--data", str(world["data"]), *extra]
    fast = run(*args)
    slow = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert (slow.stdout, slow.exit_code) == (fast.stdout, fast.returncode), question
    return fast


def released(world, question: str) -> dict:
    done = ask(world, question, "--format", "json")
    assert done.returncode == 0, (question, done.stderr)
    value = json.loads(done.stdout)
    assert value["intent"]["kind"] == "release", (question, value["intent"])
    return {(s["repo"], s["name"]): s for s in value["answer"]["symbols"]}


QUESTIONS = ["which release added {X}", "{X} first release", "since when is {X} available",
             "which CANN release added {X}", "which release do I need for {X}", "{X} 从哪个版本开始有",
             "{X} 是哪个版本加入的", "{X} 需要哪个版本", "{X}需要哪个版本"]


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_phrasing_answers_with_the_first_release_per_repository(world, question):
    got = released(world, question.format(X="shmem_put"))
    assert set(got) == {("example/shmem", "shmem_put"), ("example/hccl", "shmem_put")}
    shmem, hccl = got[("example/shmem", "shmem_put")], got[("example/hccl", "shmem_put")]
    assert (shmem["first_release"]["name"], shmem["first_release"]["commit"]) == ("v1.0.0", world["tags"]["v1.0.0"])
    assert (hccl["first_release"]["name"], hccl["first_release"]["commit"]) == ("v2.1.0", world["tags"]["v2.1.0"])
    assert shmem["introduced"] == world["commits"]["put"] and hccl["introduced"] == world["commits"]["hccl_put"]


def test_the_text_answer_leads_with_release_day_and_commit_in_both_languages(world):
    c = world["commits"]
    en = ask(world, "which release added engine_u_put")
    assert en.returncode == 0
    first = en.stdout.splitlines()[0]
    assert first == (f"first release v1.1.0 (2026-01-04) - engine_u_put in example/shmem; introduced by commit "
                     f"{c['engine'][:12]} (2026-01-04)")
    zh = ask(world, "engine_u_put 是哪个版本加入的", "--lang", "zh")
    assert zh.stdout.splitlines()[0] == (f"首次发布于 v1.1.0（2026-01-04）- example/shmem 的 engine_u_put；"
                                         f"引入提交 {c['engine'][:12]}（2026-01-04）")


def test_a_symbol_no_release_ships_says_never_released(world):
    got = released(world, "shmem_wait first release")
    assert got[("example/shmem", "shmem_wait")]["first_release"] is None
    en = ask(world, "shmem_wait first release").stdout
    assert en.startswith("never released - shmem_wait in example/shmem") and world["commits"]["wait"][:12] in en
    zh = ask(world, "shmem_wait 从哪个版本开始有", "--lang", "zh").stdout
    assert zh.startswith("从未发布 - example/shmem 的 shmem_wait")


def test_a_concept_that_names_symbols_gives_their_first_releases(world):
    done = ask(world, "which release added Symmetric Library S", "--format", "json")
    value = json.loads(done.stdout)
    assert value["intent"]["kind"] == "release" and value["answer"]["concepts"] == ["lib-s"]
    got = {(s["repo"], s["name"]): s["first_release"]["name"] for s in value["answer"]["symbols"]}
    assert got == {("example/shmem", "shmem_put"): "v1.0.0", ("example/hccl", "shmem_put"): "v2.1.0",
                   ("example/shmem", "engine_u_put"): "v1.1.0"}
    text = ask(world, "对称内存库 S 从哪个版本开始有", "--lang", "zh").stdout
    assert text.startswith("lib-s 所指的公开符号：") and "首次发布于 v1.0.0" in text


def test_a_symbol_name_alone_reaches_its_card_and_a_concept_without_symbols_its_history(world):
    card = ask(world, "shmem_wait")
    assert card.returncode == 0 and "first release:  never released · 从未发布" in card.stdout
    value = json.loads(ask(world, "since when is engine-u available", "--format", "json").stdout)
    assert value["intent"]["kind"] == "history" and value["intent"]["concepts"] == ["engine-u"]  # names no symbol
