"""First releases and declarations end to end, on a repository this test builds with real git: a symbol's
first release is the first release (in release order) whose tree declares it, "never released" /
"从未发布" when none does, on every face; the declaration cases that were once read as removals
(a deprecation macro with its message on the next line, an attribute macro after `()`, an `enum class`
that becomes a plain enum, a mid-file `#ifndef X / #define X` block); and, over the committed
data/api/*.jsonl (no clone needed), no symbol whose first release and release grid disagree, and none
of the five symbols once falsely marked removed marked removed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from atlas.model import apifile
from atlas.harvest.publicfiles import PathRule
from test_api import commit, git  # the same tagged test repositories

DATA = Path(__file__).resolve().parent.parent / "data"
REPO = "example/shmem"

ENUM_OLD = """typedef enum {
    ACL_OPT_DETERMINISTIC = 0, // 0: off
    ACL_OPT_STRONG_CONSISTENCY = 2,
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3
} aclSysParamOpt;
"""
# the message of the deprecation macro on the next line (as hicann/runtime writes it)
ENUM_NEW = """typedef enum {
    ACL_OPT_DETERMINISTIC = 0, // 0: off
    ACL_OPT_STRONG_CONSISTENCY ACL_DEPRECATED_MESSAGE(
        "ACL_OPT_STRONG_CONSISTENCY is deprecated, use ACL_OPT_DETERMINISTIC") = 2,
    ACL_OPT_ENABLE_KERNEL_EARLY_START = 3
} aclSysParamOpt;
"""
MIDFILE = """#ifndef H_A
#define H_A
int kept(void);
#ifndef ACL_PROF_TENSOR_INFO_DEFINED
#define ACL_PROF_TENSOR_INFO_DEFINED
typedef struct aclprofTensor { int type; } aclprofTensor;
#endif
#endif
"""


def atlas(*args):
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "120"})


@pytest.fixture
def shipped(tmp_path, mini):
    """example/shmem's history: day 1 declares gone_early, the enum, HcclGetCommConfigCapability and an
    `enum class K`; day 2 removes gone_early, puts the deprecation macro in the enum and the weak-symbol
    macro after the function's `()` (tagged v1.0.0); day 3 makes K a plain enum and adds the mid-file
    block (tagged v1.1.0); day 4 adds late_fn, which no release ships."""
    repo = tmp_path / "repos" / "example" / "shmem"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "T")
    git(repo, "config", "user.email", "t@x")
    c = [commit(repo, {"README": "x\n"}, 0)]
    c.append(commit(repo, {"include/a.h": "int kept(void);\nint gone_early(void);\nenum class K { K_A };\n",
                           "include/acl.h": ENUM_OLD,
                           "include/comm.h": "extern unsigned HcclGetCommConfigCapability();\n"}, 1))
    c.append(commit(repo, {"include/a.h": "int kept(void);\nenum class K { K_A };\n", "include/acl.h": ENUM_NEW,
                           "include/comm.h": "extern unsigned HcclGetCommConfigCapability() HCOMM_WEAK_SYMBOL;\n"}, 2))
    git(repo, "tag", "v1.0.0")
    c.append(commit(repo, {"include/a.h": MIDFILE + "enum K { K_A };\n"}, 3))
    git(repo, "tag", "v1.1.0")
    c.append(commit(repo, {"include/late.h": "void late_fn(void);\n"}, 4))
    repos_yaml = mini / "repositories" / "repos.yaml"
    repos_yaml.write_text(repos_yaml.read_text(encoding="utf-8") + (
        "    branch: main\n    api:\n      public: [\"include/**/*.h\"]\n"
        "      surfaces:\n"
        "        - {folder: include, scanned: true, reason: {en: \"installed whole\", zh: \"整体安装\"}}\n"
        "        - {folder: src, scanned: false, reason: {en: \"sources\", zh: \"源码\"}}\n"
        "    releases: {scheme: semver, tags: \"v*\"}\n"), encoding="utf-8")
    lib_s = mini / "concepts" / "x" / "lib-s.yaml"
    lib_s.write_text(lib_s.read_text(encoding="utf-8") + "api: [gone_early, kept]\n", encoding="utf-8")
    out = atlas("refresh", "--data", str(mini), "--repos", str(tmp_path / "repos"), "--repo", REPO)
    assert out.returncode in (0, 1), out.stderr
    rows = [json.loads(x) for x in apifile.path(mini, REPO).read_text(encoding="utf-8").splitlines()]
    symbols = {(r["kind"], r["name"]): r for r in rows if r["type"] == "symbol"}
    return {"data": str(mini), "commits": c, "symbols": symbols}


def events(rec: dict) -> list[str]:
    return [e[2] for e in rec["history"]]


def test_first_release_is_the_first_release_whose_tree_declares_it(shipped):
    s = shipped["symbols"]
    # added and removed before v1.0.0: its introducing commit is in v1.0.0's history, yet v1.0.0 does not ship it
    assert events(s[("function", "gone_early")]) == ["added", "removed"]
    assert s[("function", "gone_early")]["first_release"] == "" and s[("function", "gone_early")]["releases"] == ".."
    assert s[("function", "kept")]["first_release"] == "v1.0.0"
    # an enum class that became a plain enum: K::K_A ships in v1.0.0 only, K_A first in v1.1.0
    assert (s[("enum-constant", "K::K_A")]["first_release"], s[("enum-constant", "K::K_A")]["releases"]) == \
        ("v1.0.0", "A.")
    assert (s[("enum-constant", "K_A")]["first_release"], s[("enum-constant", "K_A")]["releases"]) == ("v1.1.0", ".A")
    assert s[("function", "late_fn")]["first_release"] == ""


def test_declarations_once_read_as_removals_stay(shipped):
    s = shipped["symbols"]
    for key in [("type", "aclSysParamOpt"), ("enum-constant", "ACL_OPT_DETERMINISTIC"),
                ("enum-constant", "ACL_OPT_STRONG_CONSISTENCY"), ("enum-constant", "ACL_OPT_ENABLE_KERNEL_EARLY_START"),
                ("function", "HcclGetCommConfigCapability")]:
        assert events(s[key]) == ["added"], (key, s[key]["history"])
        assert s[key]["first_release"] == "v1.0.0" and s[key]["releases"] == "AA", key
    assert s[("enum-constant", "ACL_OPT_STRONG_CONSISTENCY")]["signature"] == "ACL_OPT_STRONG_CONSISTENCY = 2"
    assert s[("function", "HcclGetCommConfigCapability")]["signature"] == \
        "extern unsigned HcclGetCommConfigCapability()"
    # the mid-file #ifndef/#define is a macro of the header; the file's own guard is not
    assert s[("macro", "ACL_PROF_TENSOR_INFO_DEFINED")]["first_release"] == "v1.1.0"
    assert ("type", "aclprofTensor") in s and ("macro", "H_A") not in s


def test_the_surfaces_a_repository_scans_are_said(shipped):
    d = shipped["data"]
    summary = json.loads(atlas("api", "--repo", REPO, "--data", d, "--format", "json").stdout)
    assert summary["surfaces"] == [
        {"folder": "include", "scanned": True, "reason": {"en": "installed whole", "zh": "整体安装"}},
        {"folder": "src", "scanned": False, "reason": {"en": "sources", "zh": "源码"}}]
    text = atlas("api", "--repo", REPO, "--data", d).stdout
    assert "include: scanned · 读取: installed whole" in text and "src: not scanned · 不读取: sources" in text, text


def test_never_released_on_every_face(shipped):
    d = shipped["data"]
    card = json.loads(atlas("api", "gone_early", "--data", d, "--format", "json").stdout)["symbols"][0]
    assert card["first_release"] is None
    assert card["first_release_label"] == {"en": "never released", "zh": "从未发布"}
    assert [r["state"] for r in card["releases"]] == ["absent", "absent"]
    text = atlas("api", "gone_early", "--data", d).stdout
    assert "first release:  never released · 从未发布" in text, text
    cards = json.loads(atlas("api", "K_A", "--data", d, "--format", "json").stdout)["symbols"]
    shipped_card = next(x for x in cards if x["name"] == "K_A")
    assert shipped_card["first_release"]["name"] == "v1.1.0"
    assert [r["state"] for r in shipped_card["releases"]] == ["absent", "first"]
    since = json.loads(atlas("api", "--repo", REPO, "--since", "v1.0.0", "--data", d, "--format", "json").stdout)
    rows = {x["name"]: x for x in since["symbols"]}
    assert rows["K_A"]["first_release"] == "v1.1.0" and "kept" not in rows
    assert rows["late_fn"]["first_release_label"]["zh"] == "从未发布"
    assert "never released · 从未发布" in atlas("api", "--repo", REPO, "--since", "v1.0.0", "--data", d).stdout
    concept = json.loads(atlas("query", "lib-s", "--data", d, "--format", "json").stdout)
    assert {a["name"]: a["first_release_label"]["en"] for a in concept["api"]} == \
        {"gone_early": "never released", "kept": "v1.0.0"}
    assert "never released · 从未发布" in atlas("query", "lib-s", "--data", d).stdout
    from atlas.mcp import markdown
    from atlas.view import views
    from atlas.index.compiled import load_atlas

    a = load_atlas(Path(d))
    md = markdown.card(views.card(a, a.concept("lib-s")), views.question_names(a))
    assert "`gone_early` (example/shmem)" in md and "first release never released · 从未发布" in md, md


# -- the committed data (no clone needed) ---------------------------------------------------------


def committed() -> list[tuple[str, list[dict], list[dict]]]:
    out = []
    for f in sorted((DATA / apifile.FOLDER).glob("*" + apifile.SUFFIX)):
        got = apifile.read(f)
        assert got is not None, f
        out.append((f.name, got[1], got[2]))
    assert out, "no data/api files"
    return out


def test_no_first_release_contradicts_its_release_grid():
    """Over every symbol of every repository: the first release is the first release column that is not
    absent, and a symbol with no first release is absent from every release."""
    bad = []
    total = 0
    for name, releases, symbols in committed():
        order = [r["name"] for r in releases]
        for s in symbols:
            total += 1
            assert len(s["releases"]) == len(order), (name, s["name"])
            first = next((order[i] for i, ch in enumerate(s["releases"]) if ch != "."), "")
            if s["first_release"] != first:
                bad.append((name, s["kind"], s["name"], s["first_release"], s["releases"]))
    assert total > 5000 and bad == [], bad[:10]


@pytest.mark.parametrize("repo, kind, name", [
    ("hicann+runtime", "type", "aclSysParamOpt"),
    ("hicann+runtime", "enum-constant", "ACL_OPT_DETERMINISTIC"),
    ("hicann+runtime", "enum-constant", "ACL_OPT_ENABLE_DEBUG_KERNEL"),
    ("hicann+runtime", "enum-constant", "ACL_OPT_STRONG_CONSISTENCY"),
    ("libochao-huawei+hcomm", "function", "HcclGetCommConfigCapability"),
    ("hicann+runtime", "macro", "ACL_PROF_TENSOR_INFO_DEFINED"),
])
def test_no_false_removal_of_the_symbols_once_marked_removed(repo, kind, name):
    got = apifile.read(DATA / apifile.FOLDER / f"{repo}{apifile.SUFFIX}")
    assert got is not None
    sym = next(s for s in got[2] if s["kind"] == kind and s["name"] == name)
    assert "removed" not in events(sym) and sym["where"], sym["history"]


def test_every_repository_with_releases_states_its_surfaces():
    """Each repository with releases says which folders are its public surface and which are not (with the
    reason in both languages); the folders stated scanned are exactly those the public globs reach."""
    from atlas.index.compiled import load_atlas

    with_releases = [r for r in load_atlas(DATA).repositories if r.releases is not None]
    assert with_releases
    for r in with_releases:
        assert r.api is not None and r.api.surfaces, r.id
        rule = PathRule(r.api.public, r.api.exclude)
        for s in r.api.surfaces:
            assert s.reason.en and s.reason.zh, (r.id, s.folder)
            leaf = s.folder.rsplit("/", 1)[-1]
            kept = PathRule(["**"], r.api.exclude).match(s.folder + "/x.h")  # not under an excluded glob
            reached = rule.match(s.folder) if "." in leaf else rule.enters(s.folder) and kept
            inner = any(t.scanned and t.folder.startswith(s.folder + "/") for t in r.api.surfaces)
            # a folder not scanned is reached only through a scanned folder stated inside it
            assert reached == s.scanned or (reached and not s.scanned and inner), (r.id, s.folder, r.api.public)
        for glob in r.api.public:  # every glob is explained by a scanned folder
            assert any(glob == s.folder or glob.startswith(s.folder + "/") for s in r.api.surfaces if s.scanned), \
                (r.id, glob)


def test_a_bad_surface_entry_names_its_file_and_line(mini):
    repos_yaml = mini / "repositories" / "repos.yaml"
    repos_yaml.write_text(repos_yaml.read_text(encoding="utf-8") + (
        "    api:\n      public: [\"include/*.h\"]\n      surfaces:\n"
        "        - {folder: include, scanned: maybe, reason: {en: \"x\", zh: \"x\"}}\n"
        "        - {folder: ../up, scanned: false, reason: {en: \"x\", zh: \"x\"}}\n"), encoding="utf-8")
    out = atlas("validate", "--data", str(mini))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    text = out.stdout + out.stderr
    assert "repos.yaml:" in text and "scanned must be true or false" in text and "'../up'" in text, text
