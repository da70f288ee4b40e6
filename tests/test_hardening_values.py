"""Bad values in data files and API histories end in located messages, in `atlas validate` as in
every other command: impossible days and timestamps, giant numbers, deep nesting, hostile API history
lines, and files with very many unknown keys (in time linear in the keys). Real files in a copy of the
fixture atlas, the real command line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from atlas.index.compiled import validate
from atlas.model import hygiene, yamlnodes
from atlas.model.load import load_data
from conftest import write


def invoke(*args) -> tuple[int, str]:
    """`python -m atlas ARGS` as a real process: its exit code and its output (stdout, then stderr);
    a traceback fails the test."""
    r = subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, timeout=120,
                       env={**os.environ, "COLUMNS": "200"})
    out = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out, out[-3000:]
    return r.returncode, out


def located(problems, code: str) -> list[str]:
    return [str(p.location) for p in problems if p.code == code]


def _append(mini: Path, rel: str, text: str) -> Path:
    f = mini / rel
    f.write_text(f.read_text(encoding="utf-8") + text, encoding="utf-8")
    return f


CONCEPT = "concepts/x/board-a.yaml"  # 14 lines: what is appended is line 15


# --------------------------------------------------------------------------------------------------
# The portability check reports what the load reports, never a traceback
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel, text, code, where", [
    ("atlas.yaml", None, "bad-date", "atlas.yaml:1:9"),  # cutoff: 2026-02-30, unquoted
    (CONCEPT, "since: 2026-02-30\n", "unknown-key", f"{CONCEPT}:15:1"),
    (CONCEPT, "since: 2026-13-45T25:61:61Z\n", "unknown-key", f"{CONCEPT}:15:1"),
    (CONCEPT, "since: " + "1" * 5000 + "\n", "too-long", f"{CONCEPT}:15:8"),
    (CONCEPT, "since: " + "1_" * 5000 + "1\n", "too-long", f"{CONCEPT}:15:8"),
], ids=["impossible-cutoff", "impossible-since", "impossible-stamp", "5000-digits", "5001-digits-underscored"])
def test_validate_reports_the_values_query_reports(mini, rel, text, code, where):
    if text is None:
        write(mini / "atlas.yaml", "cutoff: 2026-02-30\n")
    else:
        _append(mini, rel, text)
    found = validate(mini).problems  # raised ValueError from the pure-Python reader's constructor before
    assert f"data/{where}" in located(found, code), [str(p) for p in found]
    assert not [p for p in found if p.code in ("yaml-portability", "check-crashed")]
    code_v, out_v = invoke("validate", "--no-shacl", "--data", str(mini))
    code_q, out_q = invoke("query", "board-a", "--data", str(mini))
    assert code_v == 1 and code_q == 1
    line = next(s for s in out_v.splitlines() if f"[{code}]" in s)
    assert line in out_q  # the same located error, word for word


def test_a_number_is_bounded_and_both_readers_agree_below_the_bound(mini):
    _append(mini, CONCEPT, "since: " + "7" * 1000 + "\n")
    found = validate(mini).problems
    assert not [p for p in found if p.code in ("too-long", "yaml-portability", "check-crashed")]


@pytest.mark.parametrize("depth", [65, 600, 100_000])  # hygiene.MAX_DEPTH is 64
def test_nesting_is_bounded_with_a_message(mini, depth):
    """Past hygiene.MAX_DEPTH, before the pure-Python reader (whose recursion ends near 500 levels) and
    libyaml (which stops at 1,000 levels, with a message that read like a quoting problem)."""
    _append(mini, CONCEPT, "since: " + "[" * depth + "]" * depth + "\n")
    found = validate(mini).problems
    assert [p for p in found if p.code == "too-deep" and p.location.line == 15], [str(p) for p in found]
    assert not [p for p in found if p.code in ("yaml-syntax", "yaml-portability", "check-crashed")]
    code, out = invoke("query", "board-a", "--data", str(mini))
    assert code == 1 and "[too-deep]" in out


def test_nesting_within_the_bound_is_read(mini):
    _append(mini, CONCEPT, "note_deep: " + "[" * (hygiene.MAX_DEPTH - 2) + "]" * (hygiene.MAX_DEPTH - 2) + "\n")
    assert not located(load_data(mini).problems, "too-deep")


# --------------------------------------------------------------------------------------------------
# Unknown keys: the first MAX_UNKNOWN listed, the rest counted, in linear time
# --------------------------------------------------------------------------------------------------

def test_unknown_keys_are_listed_up_to_the_bound_then_counted(mini):
    _append(mini, CONCEPT, "".join(f"k{i:04d}: 1\n" for i in range(500)))
    found = load_data(mini).problems
    listed = [p for p in found if p.code == "unknown-key"]
    assert [p.location.line for p in listed] == list(range(15, 15 + yamlnodes.MAX_UNKNOWN))
    assert listed[0].message == 'unknown key "k0000" in a concept'
    (more,) = [p for p in found if p.code == "many-unknown-keys"]
    assert more.location.line == 15 + yamlnodes.MAX_UNKNOWN
    assert more.message.startswith(f"{500 - yamlnodes.MAX_UNKNOWN} more")


def test_200000_unknown_keys_validate_and_query_in_under_5_seconds(mini, tmp_path):
    """The whole command, as a process, on a 2.2 MB file (61 s of CPU for validate before). CPU time
    of the child is measured, so a loaded machine does not fail the test."""
    _append(mini, CONCEPT, "".join(f"k{i:06d}: 1\n" for i in range(200_000)))
    for args, says in ((["validate", "--no-shacl"], b"199980 more unknown keys"),
                       (["query", "board-a"], b'unknown key "k000019"')):
        env = {**os.environ, "ATLAS_CACHE": str(tmp_path / args[0])}  # each builds its index itself
        before = os.times()
        start = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "atlas", *args, "--data", str(mini)], capture_output=True,
                           env=env, timeout=300)
        cpu = (os.times().children_user - before.children_user) + (os.times().children_system
                                                                    - before.children_system)
        assert r.returncode == 1 and b"Traceback" not in r.stderr, r.stderr[-2000:]
        assert cpu < 5, f"{args[0]}: {cpu:.1f} s of CPU ({time.monotonic() - start:.1f} s wall)"
        assert says in r.stdout + r.stderr
        print(f"{args[0]}: {cpu:.2f} s of CPU, {time.monotonic() - start:.2f} s wall")


# --------------------------------------------------------------------------------------------------
# API history files: a bounded reader, clean text, one line per symbol
# --------------------------------------------------------------------------------------------------

SHA = "1" * 40


def _symbol(name: str, signature: str | None = None) -> dict:
    sig = signature if signature is not None else f"int {name}(void)"
    return {"type": "symbol", "kind": "function", "name": name, "signature": sig, "where": [["include/a.h", 3]],
            "history": [[SHA, "2025-01-01T00:00:00Z", "added", sig, "exact"]]}


def api_file(mini: Path, symbols: list, extra_lines: dict | None = None, count: int | None = None) -> Path:
    """data/api/example+hccl.jsonl with a header and `symbols`; `extra_lines`: line number -> raw text."""
    header = {"type": "surface", "branch": "main", "head": SHA, "cutoff": "2026-08-26", "cutoff_head": SHA,
              "commits": 3, "symbols": len(symbols) if count is None else count, "files": {},
              "started_at": "2026-01-01T00:00:00Z", "harvested_at": "2026-01-01T00:00:00Z"}
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) for r in [header, *symbols]]
    for n, raw in sorted((extra_lines or {}).items()):
        lines.insert(n - 1, raw)
    return write(mini / "api" / "example+hccl.jsonl", "\n".join(lines) + "\n")


def _errors(mini: Path) -> list:
    return [p for p in validate(mini).problems if p.is_error]


def test_a_good_api_history_is_read(mini):
    api_file(mini, [_symbol("hccl_a"), _symbol("hccl_b")])
    assert _errors(mini) == []
    code, out = invoke("api", "hccl_a", "--data", str(mini))
    assert code == 0 and "int hccl_a(void)" in out


@pytest.mark.parametrize("args", [["validate", "--no-shacl"], ["api", "hccl_a"], ["query", "hccl_a"]])
def test_a_100000_deep_line_is_a_located_error_everywhere(mini, args):
    api_file(mini, [_symbol("hccl_a")], {3: "[" * 100_000 + "]" * 100_000})
    code, out = invoke(*args, "--data", str(mini))  # a RecursionError before
    assert code == 1 and "api/example+hccl.jsonl:3:1: error: arrays and objects nested deeper than 16" in out, out


def _nesting(value) -> int:
    """The obvious definition: how deep arrays and objects nest in a parsed JSON value."""
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


JSON_TEXT = st.text(alphabet='[]{}"\\,:ab \n\u00e9', max_size=6)
JSON_VALUES = st.recursive(st.none() | st.integers() | JSON_TEXT,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
                           max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.integers(0, 6))
def test_the_bracket_count_agrees_with_the_parsed_nesting(value, bound):
    """`apifile.depth` (one pass over the text, strings skipped) against the depth of the value the JSON
    parser builds, around every bound from 0 to 6, with brackets, quotes and backslashes inside strings."""
    from atlas.model import apifile

    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert (apifile.depth(raw, bound) > bound) == (_nesting(value) > bound)
    if apifile.depth(raw, bound):
        assert apifile.depth(raw, bound) == _nesting(value)


def test_a_deep_value_inside_a_string_is_not_nesting(mini):
    api_file(mini, [{**_symbol("hccl_a"), "note": "[" * 5000}])
    assert _errors(mini) == []


def test_a_giant_api_line_is_refused_at_its_line(mini):
    from atlas.model import apifile

    api_file(mini, [{**_symbol("hccl_a"), "note": "x" * (apifile.MAX_LINE + 1)}])
    (p,) = _errors(mini)
    assert p.code == "bad-api-line" and p.location.line == 2 and "at most" in p.message


@pytest.mark.parametrize("field, value, what", [
    ("signature", "void f(\x1b]52;c;aGk=\x07)", "U+001B"),
    ("signature", "void f(\u202eint x)", "U+202E"),
    ("note", "\x9b31m", "U+009B"),
    ("name", "hccl\u200b_a", "U+200B"),
])
def test_control_characters_in_an_api_history_are_refused_at_their_line(mini, field, value, what):
    api_file(mini, [_symbol("hccl_0"), {**_symbol("hccl_a"), field: value}])
    errors = _errors(mini)
    assert [(p.code, p.location.line) for p in errors if p.code == "control-character"] == [("control-character", 3)]
    assert what in errors[0].message or any(what in p.message for p in errors)
    code, out = invoke("api", "hccl_0", "--data", str(mini))
    assert code == 1 and "\x1b" not in out and "\u202e" not in out


@pytest.mark.parametrize("record", [
    _symbol("hccl_a", "void f(<script>alert(1)</script>)"),
    _symbol("hccl_a", "int f(void) <!-- x -->"),
    {**_symbol("hccl_a"), "history": [[SHA, "2025-01-01T00:00:00Z", "added", "<img src=x onerror=alert(1)>",
                                      "exact"]]},
    _symbol("hccl<svg/onload=alert(1)>"),
])
def test_markup_in_names_and_signatures_is_refused_at_its_line(mini, record):
    api_file(mini, [_symbol("hccl_0"), record])
    assert ("bad-api-field", 3) in [(p.code, p.location.line) for p in _errors(mini)]


def test_templates_and_comparisons_are_not_markup(mini):
    api_file(mini, [_symbol("hccl_a", "template <typename T> std::vector<T> f(int a < 2)"),
                    _symbol("operator<", "bool operator<(const A &a, const A &b)"),
                    _symbol("operator<<", "std::ostream &operator<<(std::ostream &o, A a)")])
    assert _errors(mini) == []


def test_a_duplicated_symbol_is_refused_even_when_the_count_matches(mini):
    api_file(mini, [_symbol("hccl_a"), _symbol("hccl_a"), _symbol("hccl_b")], count=3)
    dups = [p for p in _errors(mini) if p.code == "duplicate-symbol"]
    assert [(p.location.line, p.message) for p in dups] == [(3, "the function hccl_a is listed twice (first at "
                                                                "line 2)")]
