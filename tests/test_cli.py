"""The CLI through click's runner, and once through a real subprocess of the installed `atlas`."""
from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from atlas.cli import cli


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def test_query_card_text_and_json(mini):
    out = run("query", "ｂｘ", "--data", str(mini)).output
    assert "Bus X  X 总线" in out and "alternative-to: net-y" in out
    data = json.loads(run("query", "bus-x", "--data", str(mini), "--format", "json").output)
    assert data["id"] == "bus-x" and data["answers"]["link"]["zh"] == "同一机箱内芯片之间。"


def test_query_zh(mini):
    out = run("query", "测试总线", "--lang", "zh", "--data", str(mini)).output
    assert "数据走哪条物理链路" in out and "一条高速链路。" in out


def test_no_match_exits_1_with_suggestions(mini):
    result = run("query", "buzz-x", "--data", str(mini), code=1)
    assert 'nothing in concepts, claims, flows or repositories matches "buzz-x"' in result.output
    assert "nearest names:" in result.output and "bus-x" in result.output
    zh = run("query", "总线甲乙丙", "--data", str(mini), code=1).output  # said in the query's language
    assert "概念、论断、流程和仓库中都没有与“总线甲乙丙”匹配的内容" in zh
    assert "bus-x" in run("query", "bux-x", "--data", str(mini)).output  # a one-edit typo is found


def test_filters_table(mini):
    out = run("query", "kind:library", "--data", str(mini)).output
    assert "lib-c" in out and "3 concept(s)" in out


def test_bad_filter_is_a_clear_error(mini):
    result = CliRunner().invoke(cli, ["query", "kind:lnk", "--data", str(mini)])
    assert result.exit_code == 2 and 'unknown kind "lnk"' in result.output  # a usage error


@pytest.mark.parametrize("args", [["query", "kind:nosuch"], ["query", "answers:nosuch"], ["claims", "--status", "x"],
                                  ["related", "bus-x", "--rel", "nosuch"], ["query", "rel:nosuch:bus-x"],
                                  ["qurey", "bus-x"], ["query", "--formt", "json", "bus-x"]])
def test_one_exit_code_per_kind_of_result_usage_is_2(mini, args):
    fast = subprocess.run([sys.executable, "-m", "atlas", *args, "--data", str(mini)], capture_output=True, text=True)
    assert fast.returncode == 2 and fast.stdout == "" and "Traceback" not in fast.stderr, (args, fast.stderr)
    assert CliRunner().invoke(cli, [*args, "--data", str(mini)]).exit_code == 2, args


def test_one_exit_code_per_kind_of_result_found_0_nothing_1(mini):
    assert run("query", "bus-x", "--data", str(mini)).exit_code == 0
    assert run("query", "kind:library", "--data", str(mini)).exit_code == 0
    assert run("query", "zzzzqqq", "--data", str(mini), code=1).exit_code == 1
    assert run("query", "kind:engine", "text:zzzzqqq", "--data", str(mini), code=1).exit_code == 1
    assert run("claims", "zzzzqqq", "--data", str(mini), code=1).exit_code == 1


def test_a_mistyped_command_or_option_names_the_closest():
    for args, said in ((["qurey", "hccs"], "No such command 'qurey'. Did you mean 'query'?"),
                       (["valdate"], "Did you mean 'validate'?"),
                       (["query", "--formt", "json", "hccs"], "Did you mean '--format'?")):
        done = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True)
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
    done = subprocess.run([sys.executable, "-m", "atlas", "xyzzy"], capture_output=True, text=True)
    assert done.returncode == 2 and "No such command 'xyzzy'." in done.stderr and "Did you mean" not in done.stderr


@pytest.mark.parametrize("columns", ["200", "80", "60"])
def test_help_fits_80_columns_with_examples_of_the_main_jobs(columns):
    from atlas.text import width

    done = subprocess.run([sys.executable, "-m", "atlas", "--help"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS=columns))
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and max(width(x) for x in lines) <= 80, [x for x in lines if width(x) > 80]
    examples = [x.split()[1] for x in lines if x.strip().startswith("atlas ")]
    assert {"query", "claims", "flow", "map", "refresh", "serve"} <= set(examples)
    commands = lines[lines.index("Commands:") + 1:]
    from atlas.cli import COMMANDS
    assert len([x for x in commands if x[2] != " "]) == len(COMMANDS)  # a line (or two, when narrow) each
    assert not any(x.rstrip().endswith("...") for x in commands)  # none cut short
    assert "Exit codes: 0 found or ok; 1 nothing found, or a check failed;" in done.stdout
    for name in ("query", "claims", "map", "refresh", "verify", "validate", "path"):
        sub = subprocess.run([sys.executable, "-m", "atlas", name, "--help"], capture_output=True, text=True,
                             env=dict(os.environ, COLUMNS=columns))
        assert max(width(x) for x in sub.stdout.splitlines()) <= 80, name


def test_claims_without_a_topic_one_line_each_grouped_by_status(mini):
    from atlas.index.compiled import load_atlas

    atlas = load_atlas(mini)
    out = run("claims", "--data", str(mini)).output.splitlines()
    statuses = sorted({c.status for c in atlas.claims})
    for status in statuses:
        count = sum(1 for c in atlas.claims if c.status == status)
        head = out.index(f"{status} ({count})")
        assert all(x.startswith(f"  [{status}] ") for x in out[head + 1:head + 1 + count])
    assert sum(1 for x in out if x.startswith("  [")) == len(atlas.claims)  # one line per claim
    assert out[-1].startswith(f"{len(atlas.claims)} claims: ")
    assert not any(x.strip().startswith("- ") for x in out)  # no evidence without --full
    full = run("claims", "--full", "--data", str(mini)).output
    assert "    - " in full  # the evidence
    assert json.loads(run("claims", "--format", "json", "--data", str(mini)).output)[0]["evidence"]


def test_usage_error_exits_2(mini):
    assert CliRunner().invoke(cli, ["query", "--lang", "fr", "bus-x"]).exit_code == 2
    assert CliRunner().invoke(cli, ["query", "bus-x", "--as-of", "yesterday"]).exit_code == 2


def test_related_path_questions_compare_flow_claims(mini):
    d = ["--data", str(mini)]
    assert "engine-u" in run("related", "lib-s", "--depth", "2", *d).output
    assert run("path", "lib-n", "engine-u", *d).output.strip() == \
        "lib-n -analogous-to-> lib-c -uses-> bus-x <-moves-over- engine-u"
    q = run("questions", *d).output
    assert "answer all six" in q and "bus-x" in q
    c = run("compare", "lib-c", "lib-s", "bus-x", *d).output
    assert "pending-deprecation" in c and "Two-sided" in c
    assert "put-signal" in run("flow", *d).output
    f = run("flow", "put-signal", *d).output
    assert "after put (sync: signal)" in f
    assert "[hypothesis] lib-s-fast" in run("claims", *d).output
    js = json.loads(run("compare", "lib-c", "bus-x", *d, "--format", "json").output)
    assert [c["id"] for c in js["concepts"]] == ["lib-c", "bus-x"]


def test_validate_exit_codes(mini):
    assert run("validate", "--data", str(mini), "--no-shacl").output.startswith("0 error(s)")
    (mini / "concepts" / "x" / "bad.yaml").write_text("id: bad\nkind: nope\n", encoding="utf-8")
    out = run("validate", "--data", str(mini), "--no-shacl", code=1).output
    assert "concepts/x/bad.yaml:2:7: error: kind 'nope' is not one of" in out


def test_bad_data_gives_message_not_traceback(mini):
    (mini / "concepts" / "x" / "bad.yaml").write_text("id: bad\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "atlas", "query", "bus-x", "--data", str(mini)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "bad.yaml" in proc.stderr


def test_installed_console_script(mini, tmp_path):
    exe = shutil.which("atlas", path=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    assert exe, "the `atlas` console script is not installed: run pip install '.[test]'"
    env = dict(os.environ, ATLAS_DATA=str(mini))
    proc = subprocess.run([exe, "query", "甲卡"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Board A" in proc.stdout


def test_fast_launcher_prints_what_the_click_cli_prints(mini, monkeypatch):
    """`atlas query TERM` skips click (start-up); its output must equal the full CLI's."""
    monkeypatch.setenv("COLUMNS", "100")
    env = dict(os.environ, COLUMNS="100", ATLAS_DATA=str(mini))
    for args in (["query", "ｂｘ"], ["query", "测试总线", "--lang", "zh"], ["query", "bus-x", "--format", "json"],
                 ["query", "Unified", "test", "--lang", "all"], ["query", "lib-s", "--data", str(mini)]):
        fast = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=env)
        slow = CliRunner().invoke(cli, args, env={"ATLAS_DATA": str(mini), "COLUMNS": "100"},
                                  catch_exceptions=False)
        assert fast.returncode == 0 == slow.exit_code, (args, fast.stderr)
        assert fast.stdout == slow.output, args


def test_fast_launcher_falls_back_for_misses_and_options(mini):
    env = dict(os.environ, ATLAS_DATA=str(mini))
    miss = subprocess.run([sys.executable, "-m", "atlas", "query", "buzz-x"], capture_output=True, text=True, env=env)
    assert miss.returncode == 1 and "nearest names:" in miss.stderr and "bus-x" in miss.stderr
    table = subprocess.run([sys.executable, "-m", "atlas", "query", "kind:library"], capture_output=True,
                           text=True, env=env)
    assert table.returncode == 0 and "3 concept(s)" in table.stdout
    bad = subprocess.run([sys.executable, "-m", "atlas", "query", "bus-x", "--lang", "fr"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "Invalid value" in bad.stderr


def test_refresh_no_op_answers_from_the_stamp_until_something_changes(mini, tmp_path, monkeypatch):
    from test_harvest import Repo, d
    import atlas.harvest.refresh as harvest_refresh

    root = tmp_path / "repos"
    hccl = Repo(root, "example/hccl")
    hccl.commit({"src/collective/a.c": "BUS_X\n"}, d(2))
    Repo(root, "example/shmem").commit({"e.c": "engine_u_put(x)\n"}, d(3))
    args = ["refresh", "--data", str(mini), "--repos", str(root), "--format", "json"]
    first = json.loads(run(*args).output)
    assert first["written"] and {r["status"] for r in first["repositories"]} == {"scanned"}
    second = json.loads(run(*args).output)            # a real no-op: writes the stamp
    assert not second["written"] and {r["status"] for r in second["repositories"]} == {"up-to-date"}

    def boom(*a, **k):
        raise AssertionError("the full refresh ran although nothing changed")

    real = harvest_refresh.refresh
    monkeypatch.setattr(harvest_refresh, "refresh", boom)
    third = json.loads(run(*args).output)             # answered from the stamp
    untimed = lambda rows: [dict(r, seconds=0) for r in rows]  # noqa: E731  (timing varies)
    assert untimed(third["repositories"]) == untimed(second["repositories"])
    monkeypatch.setattr(harvest_refresh, "refresh", real)  # (undo() would also drop the private cache)
    for fmt in ("json", "text"):                      # the click-free launcher prints the same
        a = [*args[:-1], fmt]
        fast = subprocess.run([sys.executable, "-m", "atlas", *a], capture_output=True, text=True,
                              env=dict(os.environ))
        untime = lambda text: re.sub(r'\b\d+\.\d+\b', 'T', text)  # noqa: E731  (seconds vary)
        assert fast.returncode == 0 and untime(fast.stdout) == untime(run(*a).output)
    hccl.commit({"b.c": "more\n"}, d(4))              # a new commit invalidates the stamp
    fourth = json.loads(run(*args).output)
    statuses = {r["repo"]: r["status"] for r in fourth["repositories"]}
    assert statuses["example/hccl"] == "incremental"


def test_fast_launcher_sparql_matches_the_click_cli(mini):
    env = dict(os.environ, ATLAS_DATA=str(mini), COLUMNS="100")
    q = "SELECT ?c ?l WHERE { ?c atlas:answersQuestion question:link ; skos:prefLabel ?l } ORDER BY ?c ?l"
    for extra in ([], ["--results", "csv"], ["--format", "json"]):
        args = ["query", "--sparql", q, *extra]
        fast = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, env=env)
        slow = CliRunner().invoke(cli, args, env={"ATLAS_DATA": str(mini), "COLUMNS": "100"},
                                  catch_exceptions=False)
        assert fast.returncode == 0 == slow.exit_code and fast.stdout == slow.output, extra
    refused = subprocess.run([sys.executable, "-m", "atlas", "query", "--sparql", "DROP ALL"],
                             capture_output=True, text=True, env=env)
    assert refused.returncode == 1 and "read-only" in refused.stderr and "Traceback" not in refused.stderr


def test_claim_test_plan_shows_on_the_claim_its_flow_step_and_in_json(mini):
    out = run("claims", "--full", "--data", str(mini), "--status", "hypothesis").output
    assert "Test plan (decision order 1, flow step put-signal/put)" in out
    assert "confirms: lib-s is faster below 4 KB." in out and "refutes: lib-c is as fast or faster." in out
    assert "example/shmem@89abcdef0123456789abcdef0123456789abcdef:src/put.c#L10-L12" in out
    zh = run("claims", "--full", "--data", str(mini), "--status", "hypothesis", "--lang", "zh").output
    assert "measure: 分别用 lib-s 与 lib-c 计时小消息写入。" in zh
    plan = json.loads(run("claims", "--data", str(mini), "--format", "json").output)
    by_id = {c["id"]: c for c in plan}
    assert by_id["not-layers"]["test_plan"] is None
    assert by_id["lib-s-fast"]["test_plan"]["order"] == 1
    assert by_id["lib-s-fast"]["test_plan"]["where"][0]["pin"]["path"] == "src/put.c"
    flow = run("flow", "put-signal", "--data", str(mini)).output
    assert "test plan: lib-s-fast (decision order 1; atlas claims lib-s-fast)" in flow
    steps = json.loads(run("flow", "put-signal", "--data", str(mini), "--format", "json").output)["steps"]
    assert [s["test_plans"] for s in steps] == [[], [{"claim": "lib-s-fast", "order": 1}], []]


def test_card_says_why_a_concept_is_undated(mini):
    out = run("query", "lib-s", "--data", str(mini)).output
    assert "History: undated" in out
    assert "the repositories that hold it were not harvested here (no clone) (example/shmem)" in out
    card = json.loads(run("query", "board-a", "--data", str(mini), "--format", "json").output)
    assert card["undated"]["reason"] == "no-public-repository"
    assert json.loads(run("query", "bus-x", "--data", str(mini), "--format", "json").output)["undated"] is None
