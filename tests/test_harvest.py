"""atlas.harvest: first visible commits harvested from real git repositories built in tmp_path."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from atlas.errors import AtlasError
from atlas.harvest import read_state
from atlas.harvest.clone import check_url
from atlas.harvest.refresh import refresh
from atlas.harvest.timeline import HEADER
from atlas.model.core import Atlas, Concept, Probe, Repository, Text

ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "A",
    "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "C",
    "GIT_COMMITTER_EMAIL": "c@example.org", "GIT_TERMINAL_PROMPT": "0",
}
ROOT = Path(__file__).resolve().parent.parent


def git(cwd, *args, env=None, input=None) -> str:
    e = {**os.environ, **ENV, **(env or {})}
    out = subprocess.run(["git", *args], cwd=cwd, env=e, check=True, capture_output=True,
                         input=input)
    return out.stdout.decode().strip()


class Repo:
    """A repository under <root>/<owner>/<name>, committed with fixed dates."""

    def __init__(self, root: Path, rid: str = "o/r", branch: str = "master"):
        self.rid = rid
        self.path = root / rid
        self.path.mkdir(parents=True)
        git(self.path, "init", "-q", "-b", branch)

    def commit(self, files: dict, date: str, author_date: str | None = None, msg: str = "c") -> str:
        for name, content in files.items():
            f = self.path / name
            if content is None:
                git(self.path, "rm", "-q", "--", name)
                continue
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
            git(self.path, "add", "--", name)
        env = {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": author_date or date}
        git(self.path, "commit", "-q", "--allow-empty", "-m", msg, env=env)
        return self.head()

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD")

    def git(self, *args, date="2026-01-01T00:00:00+00:00"):
        return git(self.path, *args, env={"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date})

    def object_file(self, sha: str) -> Path:
        return self.path / ".git" / "objects" / sha[:2] / sha[2:]


def atlas_of(probes, repos=(), branch=""):
    """probes: [(concept id, Probe)]"""
    concepts = {}
    for cid, p in probes:
        concepts.setdefault(cid, Concept(id=cid, kind="concept", names=Text(cid, cid)))
        concepts[cid].probes.append(p)
    repositories = [Repository(id=r, branch=branch) for r in repos]
    return Atlas(concepts=list(concepts.values()), repositories=repositories)


def d(day: int, month: int = 1, year: int = 2026, hour: int = 12) -> str:
    return f"{year}-{month:02d}-{day:02d}T{hour:02d}:00:00+00:00"


@pytest.fixture
def env(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "repos").mkdir()
    return tmp_path


def run(env, atlas, **kw):
    kw.setdefault("cutoff", "2026-08-26")
    return refresh(atlas, env / "data", repos_root=env / "repos", **kw)


def sightings(env):
    return {(s.concept, s.value): s for s in read_state(env / "data" / "timeline.yaml")[1]}


# -- the definition -----------------------------------------------------------------------------


def test_term_in_root_commit_is_on_or_before(env):
    r = Repo(env / "repos")
    root = r.commit({"a.c": "int HcclInit(void);\n"}, d(1))
    r.commit({"b.c": "other\n"}, d(2))
    report = run(env, atlas_of([("c", Probe("o/r", "term", "HcclInit"))]))
    s = sightings(env)[("c", "HcclInit")]
    assert report.exit_code == 0
    assert (s.found, s.sha, s.precision) == (True, root, "on-or-before")
    assert "root commit" in s.note
    assert s.committer_date == "2026-01-01T12:00:00+00:00"


def test_side_branch_merge_records_mainline_and_introducing_commit(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "base\n"}, d(1))
    r.git("checkout", "-q", "-b", "feature")
    intro = r.commit({"f.c": "void use_udma(void);\n"}, d(2), msg="feature")
    r.commit({"g.c": "more\n"}, d(3))
    r.git("checkout", "-q", "master")
    r.commit({"m.c": "mainline\n"}, d(4))
    r.git("merge", "-q", "--no-ff", "-m", "merge", "feature", date=d(5))
    merge = r.head()
    run(env, atlas_of([("c", Probe("o/r", "term", "use_udma")), ("p", Probe("o/r", "path", "g.c"))]))
    s = sightings(env)[("c", "use_udma")]
    assert (s.sha, s.mainline, s.introduced, s.precision) == (merge, merge, intro, "exact")
    assert s.committer_date == d(5) and s.introduced_date == d(2)
    p = sightings(env)[("p", "g.c")]
    assert p.sha == merge and p.introduced != merge


def test_author_date_before_cutoff_committer_date_after(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "x\n"}, d(1))
    r.commit({"b.c": "late_term\n"}, d(27, 8), author_date=d(1, 8))
    report = run(env, atlas_of([("c", Probe("o/r", "term", "late_term"))]))
    s = sightings(env)[("c", "late_term")]
    assert not s.found and report.rows[0].not_found == 1 and report.exit_code == 1
    assert "late_term" in report.rows[0].messages[0] and "o/r" in report.rows[0].messages[0]


def test_commit_after_cutoff_not_visible_and_end_of_day_utc(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "x\n"}, d(1))
    edge = r.commit({"b.c": "edge_term\n"}, "2026-08-27T07:59:59+08:00")  # 23:59:59 UTC on the 26th
    r.commit({"c.c": "after_term\n"}, "2026-08-27T00:00:00+00:00")
    run(env, atlas_of([("e", Probe("o/r", "term", "edge_term")), ("a", Probe("o/r", "term", "after_term"))]))
    s = sightings(env)
    assert s[("e", "edge_term")].sha == edge
    assert not s[("a", "after_term")].found
    h = read_state(env / "data" / "timeline.yaml")[0][0]
    assert h.cutoff_head == edge and h.commits == 2 and h.head != edge


def test_added_removed_readded_gives_first_addition(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "x\n"}, d(1))
    first = r.commit({"a.c": "x\nTERM_X\n"}, d(2))
    r.commit({"a.c": "x\n"}, d(3))
    r.commit({"b.c": "TERM_X\n"}, d(4))
    run(env, atlas_of([("c", Probe("o/r", "term", "TERM_X"))]))
    assert sightings(env)[("c", "TERM_X")].sha == first


def test_moved_within_one_commit_is_not_new(env):
    r = Repo(env / "repos")
    r.commit({"z.c": "x\n"}, d(1))
    first = r.commit({"a.c": "MOVED_T\n"}, d(2))
    r.commit({"a.c": None, "b.c": "MOVED_T\n"}, d(3))
    run(env, atlas_of([("c", Probe("o/r", "term", "MOVED_T"))]))
    assert sightings(env)[("c", "MOVED_T")].sha == first


def test_renamed_file(env):
    r = Repo(env / "repos")
    r.commit({"z.c": "x\n"}, d(1))
    added = r.commit({"old.c": "RENAMED_TERM\n"}, d(2))
    r.git("mv", "old.c", "new.c")
    r.commit({}, d(3))
    renamed = r.head()
    run(env, atlas_of([("t", Probe("o/r", "term", "RENAMED_TERM")), ("p", Probe("o/r", "path", "new.c"))]))
    s = sightings(env)
    assert s[("t", "RENAMED_TERM")].sha == added
    assert s[("p", "new.c")].sha == renamed


def test_path_probe_file_and_folder(env):
    r = Repo(env / "repos")
    r.commit({"README": "x\n"}, d(1))
    c2 = r.commit({"include/dev/shmem_udma.h": "x\n"}, d(2))
    r.commit({"include/dev/other.h": "x\n"}, d(3))
    run(env, atlas_of([("f", Probe("o/r", "path", "include/dev/shmem_udma.h")),
                       ("g", Probe("o/r", "path", "include/dev/")),
                       ("h", Probe("o/r", "path", "include/de")),
                       ("n", Probe("o/r", "path", "nothere"))]))
    s = sightings(env)
    assert s[("f", "include/dev/shmem_udma.h")].sha == c2
    assert s[("g", "include/dev/")].sha == c2
    assert not s[("h", "include/de")].found  # a folder prefix is a whole path component
    assert not s[("n", "nothere")].found


def test_chinese_term(env):
    r = Repo(env / "repos")
    r.commit({"a.md": "English only\n"}, d(1))
    c2 = r.commit({"docs/说明.md": "AIV 直驱 模式\n"}, d(2))
    run(env, atlas_of([("c", Probe("o/r", "term", "直驱"))]))
    assert sightings(env)[("c", "直驱")].sha == c2


def test_term_full_of_regex_characters(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "aXb(**)[ a.b(* a.b()[\n"}, d(1))
    c2 = r.commit({"b.c": "call a.b(*)[ here\n"}, d(2))
    run(env, atlas_of([("c", Probe("o/r", "term", "a.b(*)["))]))
    assert sightings(env)[("c", "a.b(*)[")].sha == c2


def test_header_lines_are_not_content(env):
    r = Repo(env / "repos")
    r.commit({"x": "1\n"}, d(1))
    r.commit({"HDR_TERM.c": "no\n"}, d(2))  # the term only in a file name (diff headers)
    c3 = r.commit({"y.c": "-- HDR_TERM\n"}, d(3))
    run(env, atlas_of([("c", Probe("o/r", "term", "HDR_TERM"))]))
    assert sightings(env)[("c", "HDR_TERM")].sha == c3


def test_same_probe_for_two_concepts_and_timeline_format(env):
    r = Repo(env / "repos")
    r.commit({"a": "x\n"}, d(1))
    c2 = r.commit({"b": "SHARED\n"}, d(2))
    run(env, atlas_of([("b-one", Probe("o/r", "term", "SHARED")), ("a-two", Probe("o/r", "term", "SHARED"))]))
    text = (env / "data" / "timeline.yaml").read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    doc = yaml.safe_load(text)
    assert list(doc) == ["cutoff", "repositories", "sightings"] and doc["cutoff"] == "2026-08-26"
    assert [s["concept"] for s in doc["sightings"]] == ["a-two", "b-one"]
    assert all(s["sha"] == c2 for s in doc["sightings"])
    rec = doc["sightings"][0]
    assert list(rec) == sorted(rec)
    assert set(rec) == {"concept", "repo", "method", "value", "found", "sha", "committer_date",
                        "author_date", "mainline", "introduced", "introduced_date", "precision",
                        "head", "cutoff", "harvested_at", "note", "first_release"}
    h = doc["repositories"][0]
    assert set(h) == {"repo", "branch", "head", "cutoff", "cutoff_head", "started_at", "harvested_at",
                      "commits", "shallow", "skipped_paths"}
    assert h["branch"] == "refs/heads/master" and h["harvested_at"].endswith("Z")
    assert h["started_at"].endswith("Z") and h["started_at"] <= h["harvested_at"]


# -- clones and failures ------------------------------------------------------------------------


def test_shallow_clone_refused_unless_allowed(env, tmp_path):
    src = Repo(tmp_path / "src")
    src.commit({"a": "SH_OLD\n"}, d(1))
    src.commit({"b": "x\n"}, d(2))
    c3 = src.commit({"c": "SH_NEW\n"}, d(3))
    dest = env / "repos" / "o" / "r"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{src.path}", str(dest))
    atlas = atlas_of([("c", Probe("o/r", "term", "SH_NEW")), ("d", Probe("o/r", "term", "SH_OLD"))])
    report = run(env, atlas)
    assert report.rows[0].status == "failed" and "shallow" in report.rows[0].messages[0]
    assert not (env / "data" / "timeline.yaml").exists()
    report = run(env, atlas, allow_shallow=True)
    s = sightings(env)
    assert s[("c", "SH_NEW")].sha == c3
    assert all(x.precision == "on-or-before" for x in s.values())
    assert read_state(env / "data" / "timeline.yaml")[0][0].shallow is True
    assert any("on-or-before" in m for m in report.rows[0].messages)


def test_missing_branch(env):
    r = Repo(env / "repos")
    r.commit({"a": "T\n"}, d(1))
    report = run(env, atlas_of([("c", Probe("o/r", "term", "T"))], repos=["o/r"], branch="develop"))
    row = report.rows[0]
    assert row.status == "failed" and row.errors == 1 and report.exit_code == 1
    assert "develop" in row.messages[0] and "o/r" in row.messages[0]
    assert report.problems[0].code == "missing-branch"


def test_missing_clone(env):
    report = run(env, atlas_of([("c", Probe("x/y", "term", "T"))]))
    assert report.rows[0].status == "failed" and "no local clone" in report.rows[0].messages[0]


def test_pull_request_head_refused(env):
    r = Repo(env / "repos")
    sha = r.commit({"a": "T\n"}, d(1))
    r.git("update-ref", "refs/pull/7/head", sha)
    r.git("symbolic-ref", "HEAD", "refs/pull/7/head")
    report = run(env, atlas_of([("c", Probe("o/r", "term", "T"))]))
    assert report.rows[0].status == "failed" and "pull-request" in report.rows[0].messages[0]


def test_corrupt_object_fails_and_keeps_earlier_results(env):
    r = Repo(env / "repos")
    r.commit({"a": "x\n"}, d(1))
    c2 = r.commit({"dir/b": "CORRUPT_T\n"}, d(2))
    atlas = atlas_of([("c", Probe("o/r", "term", "CORRUPT_T"))])
    run(env, atlas)
    before = (env / "data" / "timeline.yaml").read_bytes()
    r.commit({"c": "y\n"}, d(3))
    tree = git(r.path, "rev-parse", f"{c2}^{{tree}}")
    r.object_file(tree).unlink()
    # an incremental run reads only the new commit and does not notice; a new probe needs a full scan
    atlas.concepts[0].probes.append(Probe("o/r", "term", "OTHER_T"))
    report = run(env, atlas)
    assert report.rows[0].status == "failed" and report.exit_code == 1
    assert "corrupt" in report.rows[0].messages[0]
    assert (env / "data" / "timeline.yaml").read_bytes() == before


def test_one_repository_fails_another_succeeds(env):
    good = Repo(env / "repos", "o/good")
    c1 = good.commit({"a": "GOOD_T\n"}, d(1))
    atlas = atlas_of([("g", Probe("o/good", "term", "GOOD_T")), ("b", Probe("o/bad", "term", "GOOD_T"))])
    report = run(env, atlas)
    rows = {row.repo: row for row in report.rows}
    assert rows["o/bad"].status == "failed" and rows["o/good"].found == 1
    assert report.exit_code == 1
    assert sightings(env)[("g", "GOOD_T")].sha == c1


def test_bare_repository_without_config_file(env, tmp_path):
    src = Repo(tmp_path / "src")
    src.commit({"a": "x\n"}, d(1))
    c2 = src.commit({"b": "BARE_T\n"}, d(2))
    bare = env / "repos" / "o" / "r"
    git(tmp_path, "clone", "-q", "--bare", str(src.path), str(bare))
    (bare / "config").unlink()
    git(bare, "pack-refs", "--all") if False else None
    report = run(env, atlas_of([("c", Probe("o/r", "term", "BARE_T"))]))
    assert report.exit_code == 0, report.rows[0].messages
    assert sightings(env)[("c", "BARE_T")].sha == c2


def test_flat_layout_and_packed_refs(env, tmp_path):
    src = Repo(tmp_path / "src")
    c1 = src.commit({"a": "SNAP_T\n"}, d(1))
    snap = env / "repos" / "o+r" / "repo"
    git(tmp_path, "clone", "-q", "--bare", str(src.path), str(snap))
    git(snap, "pack-refs", "--all")
    (snap / "config").unlink()
    report = run(env, atlas_of([("c", Probe("o/r", "term", "SNAP_T"))]))
    assert report.exit_code == 0 and sightings(env)[("c", "SNAP_T")].sha == c1
    assert run(env, atlas_of([("c", Probe("o/r", "term", "SNAP_T"))])).rows[0].status == "up-to-date"


def test_local_yaml_mapping(env, tmp_path):
    src = Repo(tmp_path / "elsewhere", "x/y")
    c1 = src.commit({"a": "MAP_T\n"}, d(1))
    (env / "repos" / "local.yaml").write_text(f"o/r: {src.path}\n", encoding="utf-8")
    run(env, atlas_of([("c", Probe("o/r", "term", "MAP_T"))]))
    assert sightings(env)[("c", "MAP_T")].sha == c1


def test_missing_blob_without_promisor_remote(env):
    """A small blob deleted from the object store: named in a warning; what it could hold is
    unknown, later hits are on-or-before, readable versions of its file are still searched."""
    r = Repo(env / "repos")
    r.commit({"a": "x\n"}, d(1))
    c2 = r.commit({"data/small.txt": "MAYBE_T\n", "small.c": "SMALL_T\n"}, d(2))
    c3 = r.commit({"later.c": "LATER_T\n"}, d(3))
    c4 = r.commit({"data/small.txt": "READABLE_T\n"}, d(4))
    blob = git(r.path, "rev-parse", f"{c2}:data/small.txt")
    r.object_file(blob).unlink()
    report = run(env, atlas_of([("s", Probe("o/r", "term", "SMALL_T")), ("l", Probe("o/r", "term", "LATER_T")),
                                ("p", Probe("o/r", "path", "data")), ("m", Probe("o/r", "term", "MAYBE_T")),
                                ("r", Probe("o/r", "term", "READABLE_T"))]))
    s = sightings(env)
    assert (s[("s", "SMALL_T")].sha, s[("s", "SMALL_T")].precision) == (c2, "exact")
    assert (s[("l", "LATER_T")].sha, s[("l", "LATER_T")].precision) == (c3, "on-or-before")
    assert blob[:12] in s[("l", "LATER_T")].note
    assert (s[("r", "READABLE_T")].sha, s[("r", "READABLE_T")].precision) == (c4, "on-or-before")
    assert (s[("p", "data")].sha, s[("p", "data")].precision) == (c2, "exact")
    maybe = s[("m", "MAYBE_T")]
    assert (maybe.found, maybe.precision) == (False, "unknown")
    row = report.rows[0]
    assert (row.found, row.unknown, row.not_found, row.errors) == (4, 1, 0, 0)
    warn = next(p for p in report.problems if p.code == "missing-blobs")
    assert blob[:12] in warn.message and "data/small.txt" in warn.message
    assert "4 MiB" not in warn.message and "no promisor remote" in warn.hint
    assert any(p.code == "probe-unknown" and "MAYBE_T" in p.message for p in report.problems)
    assert read_state(env / "data" / "timeline.yaml")[0][0].skipped_paths == ["data/small.txt"]
    # the same head again: the same answers, so nothing is read or written (no churn of the timeline)
    again = run(env, atlas_of([("s", Probe("o/r", "term", "SMALL_T")), ("l", Probe("o/r", "term", "LATER_T")),
                               ("p", Probe("o/r", "path", "data")), ("m", Probe("o/r", "term", "MAYBE_T")),
                               ("r", Probe("o/r", "term", "READABLE_T"))]))
    assert again.rows[0].status == "up-to-date" and not again.written
    assert (again.rows[0].found, again.rows[0].unknown) == (4, 1)


def test_missing_blob_on_merged_side_branch_makes_introduced_on_or_before(env):
    """A blob missing on a merged side branch (not on the mainline): the side commit found in the
    readable blobs is only an upper bound, so the sighting is on-or-before, the note and a
    warning name the blob, and its path is recorded as read without it."""
    r = Repo(env / "repos")
    r.commit({}, d(1), msg="root-empty")
    r.commit({"a.c": "hello\n"}, d(2))
    r.git("checkout", "-q", "-b", "side")
    side1 = r.commit({"sub/s.c": "TERM_SIDE\n"}, d(3))
    side2 = r.commit({"sub/s.c": "TERM_SIDE\nTERM_SIDE2\n"}, d(4))
    r.git("checkout", "-q", "master")
    r.commit({}, d(5), msg="empty1")
    r.commit({}, d(5, hour=13), msg="empty2")
    r.git("merge", "-q", "--no-ff", "-m", "merge", "side", date=d(6))
    merge = r.head()
    r.commit({"p.c": "TERM_PLAIN\n"}, d(8))
    blob = git(r.path, "rev-parse", f"{side1}:sub/s.c")
    r.object_file(blob).unlink()
    probes = [("t", Probe("o/r", "term", "TERM_SIDE")), ("u", Probe("o/r", "term", "TERM_SIDE2")),
              ("p", Probe("o/r", "path", "sub")), ("q", Probe("o/r", "term", "TERM_PLAIN"))]
    report = run(env, atlas_of(probes))
    s = sightings(env)
    t = s[("t", "TERM_SIDE")]
    assert (t.sha, t.introduced, t.precision) == (merge, side2, "on-or-before")
    assert blob[:12] in t.note and "or earlier" in t.note
    # the missing blob could hold TERM_SIDE2 as well: never claimed exact
    assert s[("u", "TERM_SIDE2")].precision == "on-or-before"
    # paths need trees only: exact, and the true first commit
    assert (s[("p", "sub")].introduced, s[("p", "sub")].precision) == (side1, "exact")
    assert (s[("q", "TERM_PLAIN")].precision, s[("q", "TERM_PLAIN")].note) == ("exact", "")
    warn = next(p for p in report.problems if p.code == "missing-blobs")
    assert blob[:12] in warn.message and "sub/s.c" in warn.message and "side" in warn.message
    assert report.rows[0].errors == 0
    assert read_state(env / "data" / "timeline.yaml")[0][0].skipped_paths == ["sub/s.c"]


def test_partial_clone_degrades_unless_fetch_is_allowed(env, tmp_path):
    src = Repo(tmp_path / "src")
    src.commit({"a.c": "x\n"}, d(1))
    c2 = src.commit({"inc/b.h": "PARTIAL_T\n"}, d(2))
    src.git("config", "uploadpack.allowFilter", "true")
    dest = env / "repos" / "o" / "r"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{src.path}", str(dest))

    def objects():
        return git(dest, "cat-file", "--batch-all-objects", "--batch-check").count("\n")

    before = objects()
    atlas = atlas_of([("t", Probe("o/r", "term", "PARTIAL_T")), ("p", Probe("o/r", "path", "inc"))])
    report = run(env, atlas)
    assert objects() == before  # nothing was fetched
    s = sightings(env)
    assert (s[("t", "PARTIAL_T")].found, s[("t", "PARTIAL_T")].precision) == (False, "unknown")
    assert s[("p", "inc")].sha == c2
    warn = next(p for p in report.problems if p.code == "missing-blobs")
    assert "partial clone" in warn.message and "--fetch-missing" in warn.hint
    report = run(env, atlas, fetch_missing=True)
    assert objects() > before
    s = sightings(env)
    assert (s[("t", "PARTIAL_T")].sha, s[("t", "PARTIAL_T")].precision) == (c2, "exact")
    assert not any(p.code == "missing-blobs" for p in report.problems)


def test_missing_commit_is_corruption_and_others_go_on(env):
    good = Repo(env / "repos", "o/good")
    g1 = good.commit({"a": "GOOD_T\n"}, d(1))
    r = Repo(env / "repos", "o/bad")
    r.commit({"a": "x\n"}, d(1))
    c2 = r.commit({"b": "BAD_T\n"}, d(2))
    r.commit({"c": "y\n"}, d(3))
    r.object_file(c2).unlink()
    report = run(env, atlas_of([("g", Probe("o/good", "term", "GOOD_T")), ("b", Probe("o/bad", "term", "BAD_T"))]))
    rows = {row.repo: row for row in report.rows}
    assert rows["o/bad"].status == "failed" and "corrupt" in rows["o/bad"].messages[0]
    assert any(p.code == "corrupt-repository" for p in report.problems)
    assert sightings(env)[("g", "GOOD_T")].sha == g1


def test_bad_probe_and_bad_cutoff(env):
    r = Repo(env / "repos")
    r.commit({"a": "T\n"}, d(1))
    report = run(env, atlas_of([("c", Probe("o/r", "term", "two\nlines")), ("p", Probe("o/r", "path", "../x")),
                                ("ok", Probe("o/r", "term", "T"))]))
    assert report.rows[0].errors == 2 and report.rows[0].found == 1
    with pytest.raises(AtlasError) as exc:
        run(env, atlas_of([("c", Probe("o/r", "term", "T"))]), cutoff="2026-13-01")
    assert str(exc.value.location) == "--cutoff"
    with pytest.raises(AtlasError):
        run(env, atlas_of([("c", Probe("o/r", "term", "T"))]), repo_ids=("no/such",))


# -- incremental and atomic -----------------------------------------------------------------------


def test_incremental_refresh_after_new_commits(env, tmp_path):
    r = Repo(env / "repos")
    c1 = r.commit({"a": "OLD_T\n"}, d(1))
    r.commit({"b": "x\n"}, d(2))
    atlas = atlas_of([("o", Probe("o/r", "term", "OLD_T")), ("n", Probe("o/r", "term", "NEW_T"))])
    first = run(env, atlas)
    assert first.rows[0].status == "scanned" and first.rows[0].not_found == 1
    again = run(env, atlas)
    assert again.rows[0].status == "up-to-date" and not again.written
    r.commit({"c": "y\n"}, d(3))
    c4 = r.commit({"d": "NEW_T\n"}, d(4))
    r.commit({"e": "z\n"}, d(5))
    inc = run(env, atlas)
    assert inc.rows[0].status == "incremental" and inc.rows[0].read == 2  # stops once found
    s = sightings(env)
    assert s[("o", "OLD_T")].sha == c1 and s[("n", "NEW_T")].sha == c4
    assert s[("o", "OLD_T")].head == r.head()
    # a new probe gets a full scan; the answers equal a scan from nothing
    atlas2 = atlas_of([("o", Probe("o/r", "term", "OLD_T")), ("n", Probe("o/r", "term", "NEW_T")),
                       ("x", Probe("o/r", "term", "y"))])
    assert run(env, atlas2).rows[0].status == "incremental"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    refresh(atlas2, fresh, repos_root=env / "repos", cutoff="2026-08-26")
    strip = lambda ss: {k: (v.sha, v.found, v.precision) for k, v in ss.items()}  # noqa: E731
    assert strip(sightings(env)) == strip({(x.concept, x.value): x for x in read_state(fresh / "timeline.yaml")[1]})
    # rewritten history: full rescan
    r.git("reset", "-q", "--hard", c1)
    c2b = r.commit({"f": "NEW_T\n"}, d(6))
    res = run(env, atlas2)
    assert res.rows[0].status == "scanned" and sightings(env)[("n", "NEW_T")].sha == c2b


def test_noop_refresh_does_not_import_the_scanner(env):
    r = Repo(env / "repos")
    r.commit({"a": "NOOP_T\n"}, d(1))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from atlas.harvest.refresh import refresh
        from atlas.model.core import Atlas, Concept, Probe, Text
        a = Atlas(concepts=[Concept(id="c", kind="concept", names=Text("c", "c"),
                                    probes=[Probe("o/r", "term", "NOOP_T")])])
        rep = refresh(a, {str(env / 'data')!r}, repos_root={str(env / 'repos')!r})
        print(rep.rows[0].status, "atlas.harvest.gitscan" in sys.modules)
    """)
    out1 = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    out2 = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out1.stdout.split() == ["scanned", "True"]
    assert out2.stdout.split() == ["up-to-date", "False"]


def test_refresh_and_verify_are_modules_of_the_package():
    """`atlas.harvest.refresh` and `atlas.harvest.verify` are the modules whatever was imported
    first (the package re-exports no function of those names); the old module names are gone; the
    package still imports without the scanner."""
    script = textwrap.dedent(f"""
        import importlib.util, inspect, sys
        sys.path.insert(0, {str(ROOT)!r})
        import atlas.harvest as h
        print("atlas.harvest.gitscan" in sys.modules, hasattr(h, "refresh"), hasattr(h, "verify"),
              "refresh" in h.__all__, "verify" in h.__all__)
        from atlas.harvest.verify import verify
        from atlas.harvest import refresh, verify as verify_module
        print(inspect.ismodule(refresh), inspect.ismodule(verify_module), inspect.isfunction(verify),
              inspect.isfunction(refresh.refresh), verify_module.verify is verify,
              h.refresh is refresh, h.VerifyReport is verify_module.VerifyReport)
        print(*(importlib.util.find_spec(m) is None
                for m in ("atlas.harvest.run", "atlas.harvest.pincheck", "atlas.site.render")))
        print(inspect.ismodule(importlib.import_module("atlas.site.network")))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:4] == ["False False False False False", "True True True True True True True",
                                          "True True True", "True"], out.stdout


def test_interrupted_write_leaves_old_file_whole(env):
    """Kill a writer (SIGKILL) at arbitrary moments: the file is always one whole version."""
    target = env / "data" / "timeline.yaml"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from atlas.harvest.timeline import write_state
        from atlas.model.core import Sighting
        i = 0
        while True:
            i += 1
            ss = [Sighting(concept=f"c{{k}}", repo="o/r", method="term", value="v" * 50,
                           found=True, sha=f"{{i:040d}}") for k in range(3000)]
            write_state({str(target)!r}, "2026-08-26", [], ss)
            print(i, flush=True)
    """)
    import time

    for delay in (0.35, 0.6, 0.9):
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # at least one version written
        time.sleep(delay)
        proc.kill()
        proc.wait()
        proc.stdout.close()
        _h, ss = read_state(target)
        assert len(ss) == 3000 and len({s.sha for s in ss}) == 1


def test_failed_harvest_never_overwrites_good_results(env):
    r = Repo(env / "repos")
    c1 = r.commit({"a": "KEEP_T\n"}, d(1))
    atlas = atlas_of([("c", Probe("o/r", "term", "KEEP_T"))], repos=["o/r"])
    run(env, atlas)
    # the branch now points at an unrelated history without the term (as after a bad fetch)
    r.git("checkout", "-q", "--orphan", "other")
    r.git("rm", "-rfq", ".")
    r.commit({"z": "nothing\n"}, d(2))
    r.git("branch", "-f", "master", "other")
    r.git("checkout", "-q", "master")
    report = run(env, atlas)
    assert report.exit_code == 1
    assert sightings(env)[("c", "KEEP_T")].sha == c1


def test_clone_url_safety_and_file_clone(env, tmp_path, monkeypatch):
    for bad in ("ext::sh -c touch% /tmp/pwned", "-uhttps://x", "http://example.org/r",
                "git@github.com:o/r.git", "ssh://-oProxyCommand=x/r", "fd::17", "https://",
                "ssh://git@example.org/o/r.git", f"file://{tmp_path}"):  # validate's rule: https:// only
        assert check_url(bad), bad
    assert check_url("https://github.com/hicann/hccl") == ""
    src = Repo(tmp_path / "src")
    c1 = src.commit({"a": "CLONED_T\n"}, d(1))
    # the user's git config may route an https:// URL to a local mirror (or over ssh)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.file://{src.path}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://example.invalid/o/r")
    atlas = atlas_of([("c", Probe("o/r", "term", "CLONED_T"))])
    atlas.repositories = [Repository(id="o/r", urls=["ext::sh -c false", "https://example.invalid/o/r"])]
    atlas.reindex()
    report = run(env, atlas, clone=True)
    assert report.exit_code == 0, report.rows[0].messages
    assert (env / "repos" / "o" / "r" / ".git").is_dir()
    assert sightings(env)[("c", "CLONED_T")].sha == c1
    atlas.repositories = [Repository(id="o/z", urls=["ext::sh -c false"])]
    atlas.concepts[0].probes.append(Probe("o/z", "term", "X"))
    atlas.reindex()
    rep = run(env, atlas, clone=True, repo_ids=("o/z",))
    assert rep.rows[0].status == "failed" and "no URL" in rep.rows[0].messages[0]


# -- headers that follow one another (empty commits, merges with an empty first-parent diff) ---


def test_empty_commit_then_merge(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "base\n"}, d(1))
    r.git("checkout", "-q", "-b", "side")
    intro = r.commit({"lib/x.c": "EMPTY_MERGE_T\n"}, d(2))
    r.git("checkout", "-q", "master")
    empty = r.commit({}, d(3), msg="empty")
    r.git("merge", "-q", "--no-ff", "-m", "merge", "side", date=d(4))
    merge = r.head()
    run(env, atlas_of([("t", Probe("o/r", "term", "EMPTY_MERGE_T")), ("p", Probe("o/r", "path", "lib"))]))
    s = sightings(env)
    for key in (("t", "EMPTY_MERGE_T"), ("p", "lib")):
        assert (s[key].sha, s[key].introduced, s[key].precision) == (merge, intro, "exact"), empty


def test_empty_commit_then_ordinary_commit(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "base\n"}, d(1))
    r.commit({}, d(2), msg="empty")
    c3 = r.commit({"b/c.c": "AFTER_EMPTY_T\n"}, d(3))
    r.commit({"d.c": "AFTER_EMPTY_T again\n"}, d(4))
    run(env, atlas_of([("t", Probe("o/r", "term", "AFTER_EMPTY_T")), ("p", Probe("o/r", "path", "b"))]))
    s = sightings(env)
    assert s[("t", "AFTER_EMPTY_T")].sha == c3 and s[("p", "b")].sha == c3


def test_two_empty_commits_in_a_row(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "base\n"}, d(1))
    r.commit({}, d(2), msg="empty 1")
    r.commit({}, d(3), msg="empty 2")
    c4 = r.commit({"b.c": "TWO_EMPTY_T\n"}, d(4))
    report = run(env, atlas_of([("t", Probe("o/r", "term", "TWO_EMPTY_T")),
                                ("p", Probe("o/r", "path", "b.c"))]))
    assert report.rows[0].read == 4  # every header is seen, none is swallowed by the one before
    s = sightings(env)
    assert s[("t", "TWO_EMPTY_T")].sha == c4 and s[("p", "b.c")].sha == c4


def test_empty_root_commit(env):
    r = Repo(env / "repos")
    r.commit({}, d(1), msg="empty root")
    c2 = r.commit({"a.c": "ROOT_EMPTY_T\n"}, d(2))
    run(env, atlas_of([("t", Probe("o/r", "term", "ROOT_EMPTY_T")), ("p", Probe("o/r", "path", "a.c"))]))
    s = sightings(env)
    for key in (("t", "ROOT_EMPTY_T"), ("p", "a.c")):
        assert (s[key].sha, s[key].precision) == (c2, "exact")


def test_merge_with_empty_first_parent_diff(env):
    r = Repo(env / "repos")
    r.commit({"a.c": "base\n"}, d(1))
    r.git("checkout", "-q", "-b", "side")
    r.commit({"s.c": "side only\n"}, d(2))
    r.git("checkout", "-q", "master")
    r.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "ours", "side", date=d(3))
    ours = r.head()
    assert git(r.path, "diff", f"{ours}^1", ours) == ""
    r.git("checkout", "-q", "-b", "side2")
    intro = r.commit({"n/x.c": "AFTER_OURS_T\n"}, d(4))
    r.git("checkout", "-q", "master")
    r.git("merge", "-q", "--no-ff", "-m", "merge 2", "side2", date=d(5))
    merge2 = r.head()
    c6 = r.commit({"z.c": "PLAIN_AFTER_T\n"}, d(6))
    run(env, atlas_of([("t", Probe("o/r", "term", "AFTER_OURS_T")), ("p", Probe("o/r", "path", "n")),
                       ("q", Probe("o/r", "term", "PLAIN_AFTER_T")), ("s", Probe("o/r", "path", "s.c"))]))
    s = sightings(env)
    assert (s[("t", "AFTER_OURS_T")].sha, s[("t", "AFTER_OURS_T")].introduced) == (merge2, intro)
    assert (s[("p", "n")].sha, s[("p", "n")].introduced) == (merge2, intro)
    assert s[("q", "PLAIN_AFTER_T")].sha == c6
    assert not s[("s", "s.c")].found  # the ours-merge kept the mainline's tree


# -- parallel harvest ---------------------------------------------------------------------------


def test_parallel_harvest_equals_serial(env, tmp_path):
    shas = {}
    for i, rid in enumerate(("o/a", "o/b", "o/c")):
        r = Repo(env / "repos", rid)
        r.commit({"x": "x\n"}, d(1))
        shas[rid] = r.commit({f"f{i}.c": "PAR_T\n"}, d(2 + i))
    probes = [(f"c{i}", Probe(rid, "term", "PAR_T")) for i, rid in enumerate(shas)]
    probes.append(("bad", Probe("o/missing", "term", "PAR_T")))
    events = []
    par = run(env, atlas_of(probes), jobs=3, progress=lambda *e: events.append(e))
    assert [r.repo for r in par.rows] == ["o/a", "o/b", "o/c", "o/missing"]
    assert [r.status for r in par.rows] == ["scanned"] * 3 + ["failed"]
    assert {e[0] for e in events} == set(shas) and ("o/a", 2, 2) in events
    assert {s.repo: s.sha for s in sightings(env).values()} == shas
    serial = tmp_path / "serial"
    serial.mkdir()
    one = refresh(atlas_of(probes), serial, repos_root=env / "repos", cutoff="2026-08-26", jobs=1)
    assert [(r.repo, r.status, r.found, r.messages) for r in one.rows] == \
           [(r.repo, r.status, r.found, r.messages) for r in par.rows]
    clock = ("harvested_at:", "started_at:")  # wall-clock times of the two runs differ by design
    strip = lambda p: [ln for ln in p.read_text().splitlines() if not ln.strip().startswith(clock)]  # noqa: E731
    assert strip(serial / "timeline.yaml") == strip(env / "data" / "timeline.yaml")
    again = run(env, atlas_of(probes), jobs=3)
    assert [r.status for r in again.rows] == ["up-to-date"] * 3 + ["failed"] and not again.written


# -- every listed repository accounted for ------------------------------------------------------


def test_every_listed_repository_is_accounted_for(env):
    from atlas.harvest import account_repositories

    Repo(env / "repos", "o/done").commit({"a": "ACC_T\n"}, d(1))
    Repo(env / "repos", "o/noprobe").commit({"a": "x\n"}, d(1))
    pr = Repo(env / "repos", "o/pr")
    sha = pr.commit({"a": "ACC_T\n"}, d(1))
    pr.git("update-ref", "refs/pull/3/head", sha)
    pr.git("symbolic-ref", "HEAD", "refs/pull/3/head")
    bad = Repo(env / "repos", "o/corrupt")
    bad.commit({"a": "ACC_T\n"}, d(1))
    bad.object_file(git(bad.path, "rev-parse", "HEAD^{tree}")).unlink()
    atlas = atlas_of([("c", Probe(r, "term", "ACC_T")) for r in ("o/done", "o/pr", "o/corrupt", "o/away")])
    listed = {"o/done": "https://x.org/o/done", "o/noprobe": "https://x.org/o/noprobe",
              "o/pr": "https://x.org/o/pr", "o/corrupt": "https://x.org/o/c", "o/away": "https://x.org/a",
              "o/web": "", "o/gone": "https://x.org/gone"}
    atlas.repositories = [Repository(id=r, urls=[u] if u else [],
                                     status="unavailable" if r == "o/gone" else "active")
                          for r, u in listed.items()]
    atlas.reindex()
    report = run(env, atlas)
    rows = {r.repo: r for r in report.rows}
    assert set(rows) == set(listed)  # every listed repository has a row
    assert rows["o/noprobe"].status == "no-probes" and "no-probes" in rows["o/noprobe"].messages[0]
    assert rows["o/web"].status == "no-probes" and "no-public-url" in rows["o/web"].messages[0]
    atlas.harvests, atlas.sightings = read_state(env / "data" / "timeline.yaml")
    states = {a.repo: a.state for a in account_repositories(atlas, env / "repos")}
    assert states == {"o/done": "harvested", "o/noprobe": "no-probes", "o/pr": "pull-request-ref",
                      "o/corrupt": "corrupt", "o/away": "not-cloned", "o/web": "no-public-url",
                      "o/gone": "no-public-url"}


def test_timeline_repos_report_names_every_listed_repository(tmp_path):
    import json

    from click.testing import CliRunner

    from atlas.cli import cli

    empty = tmp_path / "clones"
    empty.mkdir()
    res = CliRunner().invoke(cli, ["timeline", "--repos-report", "--repos", str(empty),
                                   "--data", str(ROOT / "data"), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    listed = {r["id"] for f in (ROOT / "data" / "repositories").glob("*.yaml")
              for r in yaml.safe_load(f.read_text(encoding="utf-8"))["repositories"]}
    got = {a["repo"]: a for a in doc["repositories"]}
    assert listed <= set(got)
    assert all(a["state"] in ("not-cloned", "no-public-url") and a["reason"] for a in got.values())
    text = CliRunner().invoke(cli, ["timeline", "--repos-report", "--repos", str(empty),
                                    "--data", str(ROOT / "data")])
    assert "not-cloned" in text.output and "repository" in text.output


def test_repos_report_lists_the_undated_concepts_with_their_reason(tmp_path, mini):
    import json

    from click.testing import CliRunner

    from atlas.cli import cli

    empty = tmp_path / "clones"
    empty.mkdir()
    args = ["timeline", "--repos-report", "--repos", str(empty), "--data", str(mini)]
    res = CliRunner().invoke(cli, args + ["--format", "json"])
    assert res.exit_code == 0, res.output
    undated = {u["concept"]: u for u in json.loads(res.output)["undated"]}
    assert set(undated) == {"board-a", "core-v", "engine-u", "lib-n", "lib-s", "net-y"}  # all but the dated
    assert undated["board-a"]["reason"] == "no-public-repository" and undated["board-a"]["repos"] == []
    assert undated["lib-s"]["reason"] == "not-harvested" and undated["lib-s"]["repos"] == ["example/shmem"]
    assert undated["lib-s"]["detail"] == "example/shmem: not-cloned"
    assert undated["engine-u"]["reason"] == "not-harvested"  # a probe in a repository never harvested
    assert undated["net-y"]["note"]["zh"] == "一种网络：没有公开仓库包含它。"
    text = CliRunner().invoke(cli, args).output
    assert "Undated concepts (6)" in text and "- board-a: no-public-repository: A test board" in text
