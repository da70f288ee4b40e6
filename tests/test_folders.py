"""Which folders a command uses: the checkout rule, relative folders, output paths. Real processes,
real git repositories and real files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from atlas import paths
from test_harvest import ROOT, Repo, d

MINI = ROOT / "tests" / "fixtures" / "mini"


def atlas_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("ATLAS_DATA", "ATLAS_REPOS")}
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, cwd=cwd,
                          env={**e, **(env or {})}, timeout=180)


@pytest.fixture
def site(tmp_path):
    """tmp/data (a copy of the mini data) and tmp/clones/<owner>/<name>, its two repositories."""
    shutil.copytree(MINI, tmp_path / "data")
    Repo(tmp_path / "clones", "example/hccl", branch="main").commit({"src/collective/a.c": "BUS_X\n"}, d(3))
    Repo(tmp_path / "clones", "example/shmem", branch="main").commit({"s.c": "engine_u_put(\n"}, d(4))
    return tmp_path


# ---------------------------------------------------------------------------------------------
# issue 26 item 5: relative folders resolve against the working directory, at the start
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["option", "environment"])
def test_relative_repos_and_data_work_for_refresh_and_verify(site, how):
    """`--repos repos` or ATLAS_REPOS=repos reported every repository as "corrupt repository?:
    fatal: not a git repository" (git ran elsewhere); an absolute path worked."""
    if how == "option":
        args, env = ["--data", "data", "--repos", "clones"], {}
    else:
        args, env = [], {"ATLAS_DATA": "data", "ATLAS_REPOS": "clones"}
    done = atlas_cli("refresh", "-j", "1", "--format", "json", *args, cwd=site, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert {r["repo"]: (r["found"], r["errors"]) for r in report["repositories"]} == {
        "example/hccl": (2, 0), "example/shmem": (1, 0)}
    assert report["folders"]["repos"] == str(site / "clones") and report["folders"]["data"] == str(site / "data")
    checked = atlas_cli("verify", "--format", "json", *args, cwd=site, env=env)
    pins = json.loads(checked.stdout)["pins"]
    assert pins and not [p for p in pins if "not a git repository" in p["reason"] or "no local clone" in p["reason"]]


def test_relative_local_yaml_paths_are_read_from_the_root(site):
    """repos/local.yaml paths are relative to the clones' root, whatever the working directory."""
    (site / "clones" / "local.yaml").write_text("example/hccl: example/hccl\n", encoding="utf-8")
    work = site / "elsewhere"
    work.mkdir()
    done = atlas_cli("refresh", "-j", "1", "--format", "json", "--data", "../data", "--repos", "../clones", cwd=work)
    assert done.returncode == 0, done.stderr
    assert all(r["errors"] == 0 for r in json.loads(done.stdout)["repositories"])


# ---------------------------------------------------------------------------------------------
# issue 23 item 3: the checkout rule (the installed package is tested in test_install.py)
# ---------------------------------------------------------------------------------------------

def _checkout(root: Path, name: str = "ascend-atlas") -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "atlas.yaml").write_text("cutoff: 2026-01-01\n", encoding="utf-8")
    (root / "pyproject.toml").write_text(f'[build-system]\nrequires = []\n\n[project]\nname = "{name}"\n'
                                         f'version = "0"\n\n[tool.x]\nname = "other"\n', encoding="utf-8")
    return root


def test_a_checkout_is_found_from_the_working_directory_upwards(tmp_path, monkeypatch):
    co = _checkout(tmp_path / "co")
    (co / "docs" / "deep").mkdir(parents=True)
    monkeypatch.delenv("ATLAS_REPOS", raising=False)
    for cwd in (co, co / "docs" / "deep"):
        monkeypatch.chdir(cwd)
        assert paths.checkout() == co
        assert paths.choose_data() == (co / "data", "checkout")
        assert paths.repos_root() == co / "repos"
        assert paths.work_folders() == (co / "data", co / "repos", "checkout", "")


def test_not_a_checkout(tmp_path, monkeypatch):
    """Another project's pyproject.toml, or ours without data/atlas.yaml, is not a checkout; the
    name must be the [project] table's, not another table's."""
    other = _checkout(tmp_path / "other", name="someone-else")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_text('[project]\nname = "ascend-atlas"\n', encoding="utf-8")
    tabled = _checkout(tmp_path / "tabled", name="x")
    (tabled / "pyproject.toml").write_text('[tool.y]\nname = "ascend-atlas"\n[project]\nname = "x"\n',
                                           encoding="utf-8")
    for cwd in (other, bare, tabled, tmp_path):
        assert paths.checkout(cwd) is None, cwd


def test_outside_a_checkout_the_user_copy_is_made_once_and_kept(tmp_path, monkeypatch):
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    monkeypatch.delenv("ATLAS_REPOS", raising=False)
    monkeypatch.chdir(tmp_path)
    user = xdg / "ascend-atlas"
    assert paths.choose_data().origin == "bundled"
    first = paths.work_folders()
    assert first.data == user / "data" and first.repos == user / "repos" and first.note.startswith("created ")
    bundled = paths.bundled_data_dir()
    for f in ("atlas.yaml", "ontology.ttl", "concepts/hccs.yaml"):
        if (bundled / f).is_file():
            assert (user / "data" / f).read_bytes() == (bundled / f).read_bytes()
    assert not list((user / "data").rglob("*.py"))
    (user / "data" / "timeline.yaml").write_text("edited\n", encoding="utf-8")
    again = paths.work_folders()
    assert again.note == "" and (user / "data" / "timeline.yaml").read_text() == "edited\n"  # kept
    assert paths.choose_data() == (user / "data", "user")  # read by every command from now on
    mark = user / "data" / ".seeded-from"
    mark.write_text(json.dumps({"sha256": "0" * 64}), encoding="utf-8")  # as if the package was upgraded
    assert "the bundled data changed" in paths.work_folders().note


def test_a_relative_xdg_data_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", "relative/place")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.user_dir() == tmp_path / ".local" / "share" / "ascend-atlas"


def test_a_user_folder_without_an_atlas_is_never_written(tmp_path, monkeypatch):
    xdg = tmp_path / "xdg"
    (xdg / "ascend-atlas" / "data").mkdir(parents=True)
    (xdg / "ascend-atlas" / "data" / "mine.txt").write_text("mine\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    work = tmp_path / "w"
    work.mkdir()
    done = atlas_cli("verify", cwd=work, env={"XDG_DATA_HOME": str(xdg)})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "holds no atlas.yaml; refusing to write into it" in done.stderr
    assert os.listdir(xdg / "ascend-atlas" / "data") == ["mine.txt"]


# ---------------------------------------------------------------------------------------------
# issue 26 item 9: output paths
# ---------------------------------------------------------------------------------------------

def test_escape_sequences_in_an_output_path_never_reach_the_terminal(tmp_path):
    out = "site-\x1b]0;owned\x07-\x1b[2J"
    done = atlas_cli("map", "-o", out, "--data", str(MINI), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout
    assert "site-\\x1b]0;owned\\x07-\\x1b[2J/" in done.stdout
    assert (tmp_path / out / "index.html").is_file()
    exported = atlas_cli("export", "-o", "a-\x1b[31m.ttl", "--data", str(MINI), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "\x1b" not in exported.stderr and "a-\\x1b[31m.ttl" in exported.stderr


def test_export_refuses_a_missing_folder_and_creates_nothing(tmp_path):
    done = atlas_cli("export", "-o", "no/such/folder/atlas.ttl", "--data", str(MINI), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no/such/folder" in done.stderr and "does not exist" in done.stderr
    assert not (tmp_path / "no").exists()


def test_relative_output_paths_resolve_against_the_working_directory(tmp_path):
    done = atlas_cli("map", "-o", "out", "--data", str(MINI), cwd=tmp_path)
    assert f"to {tmp_path / 'out'}/" in done.stdout and f"data: {MINI} (--data)" in done.stdout
