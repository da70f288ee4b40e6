"""`pip install .` (not editable) into a fresh virtual environment, then the first ten minutes:
inside a checkout `refresh` and `verify` use the checkout's data/ and repos/; anywhere else they
use the user data directory ($XDG_DATA_HOME/ascend-atlas), created from the bundled data, and
nothing is ever written under site-packages (issue 23: they read site-packages/atlas_data and
looked for clones in site-packages/repos).

The environment is built once for the module. The atlas is installed from a copy of the checkout
(pip builds in the source tree) with `--no-deps`: its dependencies are the running test
environment's, seen through a .pth file that names that environment's site-packages folder (a
folder named in a .pth is put on the module path without running the .pth files in it, so an
editable install of the atlas there stays out of sight). Nothing is downloaded but the build
backend, from the package index through pip's cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org", GIT_AUTHOR_DATE="2025-01-02T03:04:05+00:00",
               GIT_COMMITTER_DATE="2025-01-02T03:04:05+00:00")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_clone(root: Path, repo: str = "hicann/hccl") -> str:
    """A small repository at root/<owner>/<name> on branch master (the atlas's branch for hccl);
    its head's short sha, which a refresh that read it names."""
    path = root / repo
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "master")
    (path / "README.md").write_text(f"a test repository in {root}\n", encoding="utf-8")
    _git(path, "add", "README.md")
    _git(path, "commit", "-q", "-m", "first")
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True,
                          check=True).stdout.strip()[:12]


def _read_clone(report: dict, head: str) -> bool:
    """Whether a refresh report says it read the clone whose head is `head`."""
    return any(head in m for r in report["repositories"] for m in r["messages"])


def tree_state(root: Path) -> dict[str, tuple]:
    """Every entry under root: kind, size, mtime and content hash (links not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[str(p.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _copy_checkout(dest: Path) -> Path:
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "atlas", dest / "atlas", ignore=ignore)
    shutil.copytree(ROOT / "data", dest / "data", ignore=ignore)
    (dest / "repos").mkdir()
    shutil.copy2(ROOT / "repos" / "README.md", dest / "repos" / "README.md")
    return dest


class Installed:
    def __init__(self, base: Path):
        self.base = base
        (base / "checkout").mkdir()
        self.checkout = _copy_checkout(base / "checkout")
        self.venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True, capture_output=True)
        self.python = self.venv / "bin" / "python"
        purelib = subprocess.run([str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        self.site = Path(purelib)
        (self.site / "_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
        done = subprocess.run([str(self.python), "-m", "pip", "install", "-q", "--no-deps", str(self.checkout)],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.fail(f"pip install failed:\n{done.stdout}\n{done.stderr}")
        self.exe = self.venv / "bin" / "atlas"
        self.home = base / "home"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("ATLAS_DATA", "ATLAS_REPOS", "XDG_DATA_HOME", "PYTHONPATH")}
        self.env.update(HOME=str(self.home), XDG_DATA_HOME=str(base / "xdg"), ATLAS_CACHE=str(base / "cache"))

    def run(self, cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.exe), *args], cwd=cwd, env=dict(self.env, **(env or {})),
                              capture_output=True, text=True, timeout=300)

    def json(self, cwd: Path, *args: str, codes=(0,), env: dict | None = None) -> dict:
        done = self.run(cwd, *args, "--format", "json", env=env)
        assert done.returncode in codes and "Traceback" not in done.stderr, done.stderr
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    inst = Installed(tmp_path_factory.mktemp("install"))
    assert (inst.site / "atlas_data" / "atlas.yaml").is_file()
    assert not (inst.site / "atlas" / "__init__.py").is_symlink()
    return inst


def _unchecked_for_missing(report: dict, repo: str) -> list:
    return [r for r in report["pins"] if r["pin"].startswith(repo + "@") and "no local clone" in r["reason"]]


def test_inside_the_checkout_refresh_and_verify_use_its_folders(installed):
    co = installed.checkout
    before = tree_state(installed.venv)
    head = make_clone(co / "repos")
    timeline = co / "data" / "timeline.yaml"
    sub = co / "atlas"  # any folder inside the checkout: found from the working directory upwards
    report = installed.json(sub, "verify", codes=(0, 1))
    assert report["folders"] == {"data": str(co / "data"), "repos": str(co / "repos"), "origin": "checkout"}
    assert not _unchecked_for_missing(report, "hicann/hccl")  # the clone in the checkout's repos/ was read
    text = installed.run(co, "verify")
    assert f"data: {co / 'data'} (the checkout's); clones: {co / 'repos'}" in text.stdout
    done = installed.json(co, "refresh", "--repo", "hicann/hccl", "-j", "1", codes=(0, 1))
    assert done["folders"]["data"] == str(co / "data") and done["timeline"] == str(timeline)
    assert _read_clone(done, head) and (co / "data" / ".timeline.lock").is_file()  # refresh's lock: it wrote there
    valid = installed.run(co, "validate", "--no-shacl")
    assert f"data: {co / 'data'} (the checkout's)" in valid.stdout
    assert tree_state(installed.venv) == before
    assert not (installed.base / "xdg").exists()  # the user data directory is not made in a checkout


def test_elsewhere_they_use_the_user_data_directory_and_never_write_site_packages(installed, tmp_path):
    user = installed.base / "xdg" / "ascend-atlas"
    shutil.rmtree(user, ignore_errors=True)
    before = tree_state(installed.venv)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    card = installed.json(elsewhere, "query", "hccs")  # reading needs nothing made
    assert card["id"] == "hccs" and not user.exists()
    first = installed.run(elsewhere, "verify")
    assert f"created {user / 'data'} from the bundled data" in first.stderr
    assert f"data: {user / 'data'} (the user data directory's); clones: {user / 'repos'}" in first.stdout
    assert (user / "data" / "atlas.yaml").is_file() and not (installed.site / "repos").exists()
    head = make_clone(user / "repos")
    report = installed.json(elsewhere, "verify", codes=(0, 1))
    assert report["folders"] == {"data": str(user / "data"), "repos": str(user / "repos"), "origin": "user"}
    assert not _unchecked_for_missing(report, "hicann/hccl")
    done = installed.json(elsewhere, "refresh", "--repo", "hicann/hccl", "-j", "1", codes=(0, 1))
    assert done["timeline"] == str(user / "data" / "timeline.yaml") and _read_clone(done, head)
    assert (user / "data" / ".timeline.lock").is_file()
    valid = installed.run(elsewhere, "validate", "--no-shacl")  # reads the user's copy from now on
    assert f"data: {user / 'data'} (the user data directory's)" in valid.stdout
    assert tree_state(installed.venv) == before


def test_options_and_environment_still_win(installed, tmp_path):
    data = tmp_path / "mine"
    shutil.copytree(ROOT / "tests" / "fixtures" / "mini", data)
    clones = tmp_path / "clones"
    clones.mkdir()
    for cwd in (installed.checkout, tmp_path):
        by_env = installed.json(cwd, "verify", env={"ATLAS_DATA": str(data), "ATLAS_REPOS": str(clones)},
                                codes=(0, 1))
        assert by_env["folders"] == {"data": str(data), "repos": str(clones), "origin": "$ATLAS_DATA"}
        by_option = installed.json(cwd, "verify", "--data", str(data), codes=(0, 1))
        assert by_option["folders"] == {"data": str(data), "repos": str(tmp_path / "repos"), "origin": "--data"}
