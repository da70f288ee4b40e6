"""The public API history end to end, on a repository this test builds with real git: `atlas refresh`
writes data/api/<owner>+<name>.jsonl and the probes' first releases; `atlas api`, `atlas query`,
`atlas compare`, the cards, `atlas validate`, the RDF export and the site read it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:  # one module name for the browser fixtures in the whole run: two would start two Playwrights
    from tests.browserkit import artifacts, axe_violations, browser, tab  # noqa: F401 (fixtures)
except ImportError:  # run from tests/
    from browserkit import artifacts, axe_violations, browser, tab  # noqa: F401 (fixtures)

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
T0 = 1767225600  # 2026-01-01T00:00:00Z


def git(cwd, *args, input=None, day=None) -> str:
    env = ENV if day is None else {**ENV, "GIT_COMMITTER_DATE": f"{T0 + day * 86400} +0000"}
    p = subprocess.run(["git", *args], cwd=cwd, env=env, input=input, capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


def commit(repo: Path, files: dict[str, str], day: int) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    stamp = f"{T0 + day * 86400} +0000"
    env = {**ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "commit", "-q", "-m", f"day {day}", "--allow-empty"], cwd=repo, env=env, check=True,
                   capture_output=True)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def world(tmp_path, mini):
    """The mini atlas with example/shmem declaring its public headers and releases, and a clone of it:
    day 1 adds shmem_put and SHMEM_MAX (tagged v1.0.0), day 2 re-signs shmem_put and adds engine_u_put
    (the probe of engine-u; tagged v1.1.0-rc1, annotated), day 3 removes SHMEM_MAX (tagged v1.1.0, and
    v1.1.0-temp, which is not a release)."""
    repo = tmp_path / "repos" / "example" / "shmem"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "T")
    git(repo, "config", "user.email", "t@x")
    c = [commit(repo, {"README": "x\n"}, 0)]
    c.append(commit(repo, {"include/shmem.h": "int shmem_put(int pe);\n#define SHMEM_MAX 8\n"}, 1))
    git(repo, "tag", "v1.0.0")
    c.append(commit(repo, {"include/shmem.h": "int shmem_put(int pe, long n);\n#define SHMEM_MAX 8\n",
                           "include/engine.h": "void engine_u_put(void);\n"}, 2))
    git(repo, "tag", "-a", "-m", "rc", "v1.1.0-rc1", day=2)  # the tagger's date: before the cut-off
    c.append(commit(repo, {"include/shmem.h": "int shmem_put(int pe, long n);\n"}, 3))
    git(repo, "tag", "v1.1.0")
    git(repo, "tag", "v1.1.0-temp")
    repos_yaml = mini / "repositories" / "repos.yaml"
    repos_yaml.write_text(repos_yaml.read_text(encoding="utf-8") + (
        "    branch: main\n    api:\n      public: [\"include/**/*.h\"]\n"
        "    releases: {scheme: semver, tags: \"v*\"}\n"), encoding="utf-8")
    lib_s = mini / "concepts" / "x" / "lib-s.yaml"
    lib_s.write_text(lib_s.read_text(encoding="utf-8") + "api: [shmem_put]\n", encoding="utf-8")
    out = atlas("refresh", "--data", str(mini), "--repos", str(tmp_path / "repos"), "--repo", "example/shmem")
    assert out.returncode in (0, 1), out.stderr
    return {"data": mini, "repos": tmp_path / "repos", "commits": c, "clone": repo}


def atlas(*args, env=None):
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "120", **(env or {})})


def test_refresh_writes_the_api_history(world):
    text = (world["data"] / "api" / "example+shmem.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(x) for x in text.splitlines()]
    assert rows[0]["type"] == "surface" and rows[0]["symbols"] == 3
    assert [r["name"] for r in rows if r["type"] == "release"] == ["v1.0.0", "v1.1.0-rc1", "v1.1.0"]
    assert ["v1.1.0-temp", ] == [t for t, _why in rows[0]["ignored_tags"]]
    symbols = {r["name"]: r for r in rows if r["type"] == "symbol"}
    c = world["commits"]
    assert [e[:3] for e in symbols["shmem_put"]["history"]] == [[c[1], "2026-01-02T00:00:00+00:00", "added"],
                                                              [c[2], "2026-01-03T00:00:00+00:00", "changed"]]
    assert symbols["shmem_put"]["releases"] == "ABB" and symbols["shmem_put"]["first_release"] == "v1.0.0"
    assert symbols["SHMEM_MAX"]["history"][-1][:3] == [c[3], "2026-01-04T00:00:00+00:00", "removed"]
    assert symbols["SHMEM_MAX"]["releases"] == "AA."
    assert symbols["engine_u_put"]["first_release"] == "v1.1.0-rc1"
    timeline = (world["data"] / "timeline.yaml").read_text(encoding="utf-8")
    assert "first_release: v1.1.0-rc1" in timeline  # the probe engine_u_put( of engine-u
    assert text == "\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                             for r in rows) + "\n"  # deterministic, one line per record


def test_atlas_api_symbol(world):
    out = atlas("api", "shmem_put", "--data", str(world["data"]))
    assert out.returncode == 0, out.stderr
    assert world["commits"][1][:12] in out.stdout and "first release:  v1.0.0" in out.stdout
    assert "int shmem_put(int pe, long n)" in out.stdout and "concepts:       lib-s" in out.stdout
    card = json.loads(atlas("api", "shmem_put", "--data", str(world["data"]), "--format", "json").stdout)
    sym = card["symbols"][0]
    assert sym["card"] == "symbol" and sym["where"][0]["path"] == "include/shmem.h"
    assert [r["state"] for r in sym["releases"]] == ["first", "changed", "present"]
    assert sym["first_release"]["name"] == "v1.0.0" and sym["removed"] is None
    gone = json.loads(atlas("api", "SHMEM_MAX", "--data", str(world["data"]), "--format", "json").stdout)
    assert gone["symbols"][0]["removed"]["sha"] == world["commits"][3]
    # `atlas query` finds a symbol card too (the launcher's fast path and click give the same)
    fast = atlas("query", "shmem_put", "--data", str(world["data"]))
    assert fast.returncode == 0 and fast.stdout == out.stdout


def test_atlas_api_since_and_diff(world):
    d = str(world["data"])
    diff = json.loads(atlas("api", "--diff", "v1.0.0", "v1.1.0", "--repo", "example/shmem", "--data", d,
                            "--format", "json").stdout)
    assert [x["name"] for x in diff["added"]] == ["engine_u_put"]
    assert [x["name"] for x in diff["removed"]] == ["SHMEM_MAX"]
    assert diff["changed"] == [{"kind": "function", "name": "shmem_put", "before": "int shmem_put(int pe)",
                                "after": "int shmem_put(int pe, long n)"}]
    text = atlas("api", "--diff", "v1.0.0", "v1.1.0", "--repo", "example/shmem", "--data", d).stdout
    assert "1 added, 1 removed, 1 changed signature" in text
    since = json.loads(atlas("api", "--repo", "example/shmem", "--since", "v1.0.0", "--data", d,
                             "--format", "json").stdout)
    assert [x["name"] for x in since["symbols"]] == ["engine_u_put"]
    assert [r["name"] for r in since["releases"]] == ["v1.1.0-rc1", "v1.1.0"]


@pytest.mark.parametrize("args, code, words", [
    (["api", "no_such_symbol"], 1, "no public API symbol"),
    (["api", "--repo", "example/nothing"], 1, "no API history for the repository"),
    (["api", "--repo", "example/shmem", "--since", "v9"], 1, "has no release 'v9'"),
    (["api", "shmem_put", "--repo", "example/shmem"], 2, "not both"),
    (["api"], 2, "give a SYMBOL"),
    (["api", "--repo", "example/shmem", "--since", "v1.0.0", "--diff", "v1.0.0", "v1.1.0"], 2, "cannot be combined"),
])
def test_atlas_api_misses_and_usage(world, args, code, words):
    out = atlas(*args, "--data", str(world["data"]))
    assert out.returncode == code and words in out.stderr + out.stdout, (out.stdout, out.stderr)


def test_cards_and_compare_show_first_releases(world):
    d = str(world["data"])
    card = json.loads(atlas("query", "lib-s", "--data", d, "--format", "json").stdout)
    assert [(a["name"], a["first_release"]) for a in card["api"]] == [("shmem_put", "v1.0.0")]
    engine = json.loads(atlas("query", "engine-u", "--data", d, "--format", "json").stdout)
    assert engine["first_visible"]["first_release"] == "v1.1.0-rc1"
    assert "first release: v1.1.0-rc1" in atlas("query", "engine-u", "--data", d).stdout
    compare = json.loads(atlas("compare", "engine-u", "lib-s", "--data", d, "--format", "json").stdout)
    assert compare["concepts"][0]["needs_release"] == "v1.1.0-rc1"
    assert "example/shmem v1.1.0-rc1" in atlas("compare", "engine-u", "lib-s", "--data", d).stdout


def test_a_probe_after_the_last_release_needs_an_unreleased_build(world):
    """A probe first seen after every release of a repository that has releases: its card, history,
    comparison and the comparison asked as a question say "unreleased", not nothing."""
    commit(world["clone"], {"src/late.c": "int lib_s_late_hook;\n"}, 5)
    lib_s = world["data"] / "concepts" / "x" / "lib-s.yaml"
    text = lib_s.read_text(encoding="utf-8")  # the undated reason (the file's last field but api) goes
    assert text.endswith("api: [shmem_put]\n")
    lib_s.write_text(text[:text.index("undated:")] + 'probes:\n  - {repo: example/shmem, term: "lib_s_late_hook"}\n'
                     "api: [shmem_put]\n", encoding="utf-8")
    d = str(world["data"])
    out = atlas("refresh", "--data", d, "--repos", str(world["repos"]), "--repo", "example/shmem")
    assert out.returncode in (0, 1), out.stderr
    card = json.loads(atlas("query", "lib-s", "--data", d, "--format", "json").stdout)
    assert card["first_visible"]["first_release"] == "" and card["first_visible"]["needs_release"] == "unreleased"
    assert [h["needs_release"] for h in card["history"]] == ["unreleased"]
    assert "first release: unreleased" in atlas("query", "lib-s", "--data", d).stdout
    compare = json.loads(atlas("compare", "engine-u", "lib-s", "--data", d, "--format", "json").stdout)
    assert [c["needs_release"] for c in compare["concepts"]] == ["v1.1.0-rc1", "unreleased"]
    asked = json.loads(atlas("query", "engine-u", "vs", "lib-s", "--data", d, "--format", "json").stdout)
    assert asked["intent"]["kind"] == "comparison"
    assert [c["needs_release"] for c in asked["answer"]["concepts"]] == ["v1.1.0-rc1", "unreleased"]


def test_validate_names_the_file_and_line_of_a_bad_record(world):
    path = world["data"] / "api" / "example+shmem.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[4])
    rec["history"][0][2] = "appeared"
    lines[4] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = atlas("validate", "--data", str(world["data"]), "--no-shacl")
    assert out.returncode == 1
    assert "api/example+shmem.jsonl:5:1" in out.stdout and "bad-api-field" in out.stdout
    path.write_text("not json\n", encoding="utf-8")
    out = atlas("validate", "--data", str(world["data"]), "--no-shacl")
    assert out.returncode == 1 and "example+shmem.jsonl:1" in out.stdout and "bad-api-line" in out.stdout


def test_a_new_tag_is_a_new_release_and_nothing_new_writes_nothing(world):
    d, r = str(world["data"]), str(world["repos"])
    path = world["data"] / "api" / "example+shmem.jsonl"
    before = path.read_text(encoding="utf-8")
    assert atlas("refresh", "--data", d, "--repos", r).returncode in (0, 1)
    assert path.read_text(encoding="utf-8") == before  # up to date: not even rewritten
    git(world["clone"], "tag", "v1.2.0")
    assert atlas("refresh", "--data", d, "--repos", r).returncode in (0, 1)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["name"] for x in rows if x["type"] == "release"][-1] == "v1.2.0"


def test_the_map_replaces_and_removes_the_api_pages_it_wrote(world, tmp_path):
    """The API pages are the map's own (its manifest): after a new release a second `atlas map` into
    the same folder replaces them, and the page of a repository without an API history any more goes."""
    d, site = str(world["data"]), tmp_path / "site"
    assert atlas("map", "-o", str(site), "--data", d).returncode == 0
    git(world["clone"], "tag", "v1.2.0")
    assert atlas("refresh", "--data", d, "--repos", str(world["repos"])).returncode in (0, 1)
    out = atlas("map", "-o", str(site), "--data", d)
    assert out.returncode == 0, out.stderr
    assert "v1.2.0" in (site / "api" / "example+shmem.html").read_text("utf-8")
    (world["data"] / "api" / "example+shmem.jsonl").unlink()
    out = atlas("map", "-o", str(site), "--data", d)
    assert out.returncode == 0, out.stderr
    assert not (site / "api" / "example+shmem.html").exists() and (site / "api" / "index.html").is_file()


def test_the_rdf_export_holds_releases_and_named_symbols(world):
    d = str(world["data"])
    nt = atlas("export", "--format", "nt", "--data", d).stdout
    assert "<http://usefulinc.com/ns/doap#revision> \"v1.1.0-rc1\"" in nt
    assert "/id/api/example.shmem/function/shmem_put>" in nt  # named by lib-s
    assert "/id/api/example.shmem/macro/SHMEM_MAX>" not in nt
    full = atlas("export", "--format", "nt", "--all-symbols", "--data", d).stdout
    assert "/id/api/example.shmem/macro/SHMEM_MAX>" in full
    out = atlas("query", "--sparql", "SELECT ?r WHERE { ?s atlas:firstRelease ?v . ?v doap:revision ?r }",
                "--data", d, "--results", "csv")
    assert "v1.1.0-rc1" in out.stdout and "v1.0.0" in out.stdout


def test_the_sparql_store_follows_a_changed_api_list(world, tmp_path):
    """The store updates only the changed files' triples: a concept's `api:` list names symbols of an
    API history file, so dropping the name must drop the symbol and the naming triple even though the
    history file did not change."""
    d = str(world["data"])
    env = {"ATLAS_CACHE": str(tmp_path / "cache")}
    ask = "SELECT ?c ?s WHERE { ?c atlas:namesSymbol ?s }"
    out = atlas("query", "--sparql", ask, "--data", d, "--results", "csv", env=env)
    assert out.returncode == 0 and "shmem_put" in out.stdout, out.stderr
    lib_s = world["data"] / "concepts" / "x" / "lib-s.yaml"
    lib_s.write_text(lib_s.read_text(encoding="utf-8").replace("api: [shmem_put]\n", ""), encoding="utf-8")
    out = atlas("query", "--sparql", ask, "--data", d, "--results", "csv", env=env)
    assert "shmem_put" not in out.stdout, out.stdout
    labels = "SELECT ?l WHERE { ?s a atlas:ApiSymbol ; rdfs:label ?l }"
    assert "shmem_put" not in atlas("query", "--sparql", labels, "--data", d, "--results", "csv", env=env).stdout
    releases = "SELECT ?r WHERE { ?v a doap:Version ; doap:revision ?r }"
    assert "v1.1.0-rc1" in atlas("query", "--sparql", releases, "--data", d, "--results", "csv", env=env).stdout


@pytest.mark.browser
def test_the_api_page_in_a_browser(world, tmp_path, tab, artifacts):  # noqa: F811 (fixtures)
    site = tmp_path / "site"
    out = atlas("map", "-o", str(site), "--data", str(world["data"]))
    assert out.returncode == 0, out.stderr
    page = tab.open((site / "api" / "example+shmem.html").as_uri(), "atlasApi")
    assert page.locator("#rows tr").count() == 3
    page.fill("#f-text", "shmem")
    page.wait_for_function("() => document.querySelectorAll('#rows tr').length === 2")
    page.select_option("#f-state", "removed")
    page.wait_for_function("() => document.querySelectorAll('#rows tr').length === 1")
    assert "SHMEM_MAX" in page.locator("#rows").inner_text()
    assert axe_violations(page) == []
    for w in (1440, 390):
        page.set_viewport_size({"width": w, "height": 900})
        page.screenshot(path=str(artifacts / f"api-page-{w}.png"))
        assert axe_violations(page) == []
    concept = (site / "concepts" / "lib-s.html").read_text("utf-8")
    assert '<a href="../api/example+shmem.html#q=shmem_put" translate="no"><code>shmem_put</code></a>' in concept
    page.goto((site / "api" / "index.html").as_uri())
    assert "example/shmem" in page.locator("table.apiindex").inner_text()
    assert axe_violations(page) == []
    tab.check_clean()


def test_a_declaration_links_the_sites_source_page_when_the_map_wrote_one(world, tmp_path):
    """With a clone, `atlas map` writes a source page for each pinned file; an API row whose header is
    one of them links that page at its line, the others link the file upstream."""
    head = world["commits"][-1]
    lib_s = world["data"] / "concepts" / "x" / "lib-s.yaml"
    lib_s.write_text(lib_s.read_text(encoding="utf-8").replace(
        "evidence:\n", f"evidence:\n  - pin: example/shmem@{head}:include/shmem.h#L1-L1\n"
                       "    confidence: read-in-source\n", 1), encoding="utf-8")
    site = tmp_path / "site"
    out = atlas("map", "-o", str(site), "--data", str(world["data"]), "--repos", str(world["repos"]), "--hops", "0")
    assert out.returncode == 0, out.stderr
    page = (site / "api" / "example+shmem.html").read_text("utf-8")
    from atlas.site import build_site
    from atlas.index.compiled import load_atlas

    bare = tmp_path / "bare"  # the library call without the API pages: the concept page names, links nothing
    build_site(load_atlas(world["data"]), bare)
    assert "<code>shmem_put</code>" in (bare / "concepts" / "lib-s.html").read_text("utf-8")
    assert "api/example+shmem.html" not in (bare / "concepts" / "lib-s.html").read_text("utf-8")
    local = f"../source/example/shmem/{head}/include/shmem.h.html"
    assert (site / local[3:]).is_file()
    assert f'<a href="{local}#L1">shmem_put</a>' in page
    assert f'<a href="https://github.com/example/shmem/blob/{head}/include/engine.h#L1">engine_u_put</a>' in page
    data = json.loads(page.split('id="atlas-data"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
    assert data["source"] == {"include/shmem.h": local}


@pytest.mark.browser
def test_the_api_page_stays_fast_at_20000_rows(tmp_path, tab):  # noqa: F811
    """20,000 symbols and 30 releases: the page shows one page of rows; filtering stays quick."""
    import time

    from atlas.site.apipage import repo_page

    releases = [{"name": f"v1.{i}.0", "date": "2026-01-01T00:00:00+00:00", "commit": "a" * 40, "url": ""}
                for i in range(30)]
    items = [{"repo": "o/r", "kind": ("function", "macro")[i % 2], "name": f"sym_{i:05d}",
              "signature": f"int sym_{i:05d}(int a, long b)",
              "first": {"sha": "b" * 40, "date": "2026-01-02T00:00:00+00:00", "event": "added",
                        "signature": "", "precision": "exact", "url": ""},
              "first_release": "v1.3.0", "removed": None, "releases": "..." + "A" * 27, "where": [["inc/x.h", i]],
              "concepts": []} for i in range(20000)]
    page = {"summary": {"repo": "o/r", "cutoff": "2026-08-26", "cutoff_head": "c" * 40, "harvested_at": "",
                        "releases": releases, "ignored_tags": [], "symbols": 20000, "kinds": {"function": 10000,
                                                                                               "macro": 10000}},
            "base": "https://example.invalid/o/r", "items": items}
    path = tmp_path / "api" / "big.html"
    path.parent.mkdir()
    path.write_text(repo_page(page), encoding="utf-8")
    t0 = time.perf_counter()
    p = tab.open(path.as_uri(), "atlasApi")
    ready = time.perf_counter() - t0
    assert p.locator("#rows tr").count() == 100  # one page of rows in the document
    t0 = time.perf_counter()
    p.fill("#f-text", "sym_1999")
    p.wait_for_function("() => document.querySelectorAll('#rows tr').length === 10")
    filtered = time.perf_counter() - t0
    assert ready < 10 and filtered < 5, (ready, filtered)
    tab.check_clean()
