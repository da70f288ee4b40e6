"""`atlas validate` reports every error, whatever else is wrong: each kind of break of a catalogue is
found alone, and k random breaks planted in one copy of the data are all found together (the YAML stage
and the SHACL stage, which runs over whatever loaded). Dates and timestamps are real calendar values in
the YAML stage. Real files, the real command."""
from __future__ import annotations

import contextlib
import copy
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable, NamedTuple

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas.commands import validate_problems
from conftest import MINI, ROOT, write


def atlas(*args, cwd=None, timeout=120):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "atlas", *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          env=env, timeout=timeout)


# --------------------------------------------------------------------------------------------------
# A copy of the mini atlas as Python values, breaks planted into it, written back as YAML
# --------------------------------------------------------------------------------------------------

class Copy:
    """The files of tests/fixtures/mini: YAML as values (`docs`), other files as text (`raw`)."""

    def __init__(self) -> None:
        self.docs: dict[str, object] = {}
        self.raw: dict[str, str] = {}
        for path in sorted(MINI.rglob("*")):
            rel = path.relative_to(MINI).as_posix()
            if path.suffix == ".yaml":
                self.docs[rel] = yaml.safe_load(path.read_text(encoding="utf-8"))
            elif path.is_file():
                self.raw[rel] = path.read_text(encoding="utf-8")

    def concepts(self) -> list[str]:
        return sorted(r for r in self.docs if r.startswith("concepts/"))

    def fresh(self, rng: random.Random, field: str) -> str | None:
        """A concept whose `field` no break has set yet (so that a second break cannot overwrite the
        first), or None."""
        self.__dict__.setdefault("taken", set())
        free = [r for r in self.concepts() if (r, field) not in self.taken]
        if not free:
            return None
        rel = rng.choice(free)
        self.taken.add((rel, field))
        return rel

    def write(self, root: Path) -> dict[str, str]:
        texts = dict(self.raw)
        for rel, doc in self.docs.items():
            texts[rel] = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=4096)
        for rel, text in texts.items():
            write(root / rel, text)
        return texts


class Expect(NamedTuple):
    """A problem that must be reported: its code, the file (relative to the data folder; "" for any)
    and, when it is reported at a value, a text that only that value's line holds."""

    code: str
    file: str = ""
    marker: str = ""


TIMELINE = "timeline.yaml"
CLAIMS = "claims/claims.yaml"
QUESTIONS = "questions.yaml"
REPOS = "repositories/repos.yaml"


def _sighting(n: int, **fields) -> dict:
    base = {"concept": "bus-x", "repo": "example/hccl", "method": "term", "value": f"PLANTED_{n}", "found": True,
            "sha": f"{n:040x}", "committer_date": "2025-06-01T10:00:00+08:00", "precision": "exact",
            "cutoff": "2026-08-26", "head": "1" * 40}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def unknown_key(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = rng.choice(c.concepts())
    c.docs[rel][f"colour_{n}"] = "red"
    return Expect("unknown-key", rel, f"colour_{n}")


def missing_translation(c: Copy, rng: random.Random, n: int) -> Expect | None:
    rel = c.fresh(rng, "professional")
    if rel is None:
        return None
    c.docs[rel]["professional"] = {"en": f"Only English {n}."}
    return Expect("missing-translation", rel)


def unknown_relation_target(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = rng.choice(c.concepts())
    c.docs[rel].setdefault("relations", []).append({"type": "uses", "target": f"ghost-{n}"})
    return Expect("unknown-ref", rel, f"ghost-{n}")


def bad_sha(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = rng.choice(c.concepts())
    c.docs[rel].setdefault("evidence", []).append(
        {"pin": f"example/hccl@BAD{n}:docs/x.md#L1", "confidence": "read-in-source"})
    return Expect("bad-sha", rel, f"BAD{n}")


def impossible_day(c: Copy, rng: random.Random, n: int) -> Expect:
    stamp = f"2025-02-30T10:{n % 60:02d}:00+08:00"
    c.docs[TIMELINE]["sightings"].append(_sighting(n, committer_date=stamp))
    return Expect("bad-date", TIMELINE, stamp)


def impossible_harvest_start(c: Copy, rng: random.Random, n: int) -> Expect:
    stamp = f"2026-13-01T10:{n % 60:02d}:00Z"
    rows = c.docs[TIMELINE]["repositories"]
    rows.append(dict(rows[0], started_at=stamp, harvested_at=f"2026-11-01T01:{n % 60:02d}:00Z"))
    return Expect("bad-date", TIMELINE, stamp)


def after_cutoff(c: Copy, rng: random.Random, n: int) -> Expect:
    c.docs[TIMELINE]["sightings"].append(_sighting(n, committer_date=f"2026-09-{1 + n % 28:02d}T10:00:00+00:00"))
    return Expect("after-cutoff", TIMELINE)


def after_own_cutoff(c: Copy, rng: random.Random, n: int) -> Expect:
    """Only the SHACL stage knows this one: the day is before the research cut-off, after its own."""
    c.docs[TIMELINE]["sightings"].append(_sighting(n, cutoff="2025-03-01", committer_date="2025-03-02T10:00:00Z"))
    return Expect("shacl", TIMELINE)


def found_without_sha(c: Copy, rng: random.Random, n: int) -> Expect:
    c.docs[TIMELINE]["sightings"].append(_sighting(n, sha=None))
    return Expect("missing-field", TIMELINE)


def overclaimed(c: Copy, rng: random.Random, n: int) -> Expect:
    c.docs[CLAIMS]["claims"].append({
        "id": f"planted-{n}", "statement": {"en": f"Planted {n}.", "zh": f"植入 {n}。"}, "status": "confirmed",
        "about": ["bus-x"], "evidence": [{"url": f"https://example.org/{n}", "confidence": "second-hand"}]})
    return Expect("status-exceeds-evidence", CLAIMS)


def duplicate_claim(c: Copy, rng: random.Random, n: int) -> Expect:
    claims = c.docs[CLAIMS]["claims"]
    claims.append(dict(rng.choice(claims)))
    return Expect("duplicate-id", CLAIMS)


def part_of_cycle(c: Copy, rng: random.Random, n: int) -> Expect:
    a, b = rng.sample(c.concepts(), 2)
    for one, other in ((a, b), (b, a)):
        c.docs[one].setdefault("relations", []).append({"type": "part-of", "target": Path(other).stem})
    return Expect("cycle")


def alias_of_another(c: Copy, rng: random.Random, n: int) -> Expect:
    a, b = rng.sample(c.concepts(), 2)
    c.docs[a].setdefault("aliases", {}).setdefault("en", []).append(c.docs[b]["names"]["en"])
    return Expect("alias-collision")


def alias_of_itself(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = rng.choice(c.concepts())
    c.docs[rel].setdefault("aliases", {}).setdefault("en", []).append(Path(rel).stem.upper())
    return Expect("self-alias", rel)


def zero_width_space(c: Copy, rng: random.Random, n: int) -> Expect | None:
    rel = c.fresh(rng, "beginner")
    if rel is None:
        return None
    c.docs[rel]["beginner"] = {"en": f"Invisible\u200b{n} here.", "zh": "不可见字符。"}
    return Expect("control-character", rel, f"Invisible\u200b{n}")


def escape_sequence(c: Copy, rng: random.Random, n: int) -> Expect:
    claim = rng.choice(c.docs[CLAIMS]["claims"])  # a second one on the same claim gives the same report
    claim["note"] = {"en": f"Clears the screen \x1b[2J {n}", "zh": "清屏"}
    return Expect("control-character", CLAIMS)


def question_missing(c: Copy, rng: random.Random, n: int) -> Expect | None:
    """One question fewer (one that no other break has planted something in)."""
    questions = c.docs[QUESTIONS]["questions"]
    plain = [q for q in questions if not any(k.startswith("hint_") for k in q)]
    if not plain:
        return None
    questions.remove(rng.choice(plain))
    return Expect("missing-question", QUESTIONS)


def question_key(c: Copy, rng: random.Random, n: int) -> Expect:
    rng.choice(c.docs[QUESTIONS]["questions"])[f"hint_{n}"] = "x"
    return Expect("unknown-key", QUESTIONS, f"hint_{n}")


def malformed_id(c: Copy, rng: random.Random, n: int) -> Expect | None:
    rel = c.fresh(rng, "id")
    if rel is None:
        return None
    c.docs[rel]["id"] = f"Bad_Id_{n}"
    return Expect("bad-id", rel, f"Bad_Id_{n}")


def ssh_url(c: Copy, rng: random.Random, n: int) -> Expect:
    rng.choice(c.docs[REPOS]["repositories"])["urls"].append(f"ssh://git@example.invalid/r{n}.git")
    return Expect("bad-url", REPOS, f"r{n}.git")


def unlisted_probe_repo(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = rng.choice(c.concepts())
    c.docs[rel].setdefault("probes", []).append({"repo": f"nobody/repo-{n}", "term": f"TERM_{n}"})
    return Expect("unknown-repo", rel, f"nobody/repo-{n}")


def bad_lifecycle(c: Copy, rng: random.Random, n: int) -> Expect | None:
    rel = c.fresh(rng, "lifecycle")
    if rel is None:
        return None
    c.docs[rel]["lifecycle"] = {"status": f"retired-{n}", "note": {"en": "Gone.", "zh": "已废弃。"}}
    return Expect("bad-value", rel, f"retired-{n}")


def ghost_step_concept(c: Copy, rng: random.Random, n: int) -> Expect:
    rng.choice(c.docs["flows/put-signal.yaml"]["steps"])["concepts"].append(f"ghost-step-{n}")
    return Expect("unknown-ref", "flows/put-signal.yaml", f"ghost-step-{n}")


def broken_file(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = f"concepts/x/broken-{n}.yaml"
    c.raw[rel] = f"id: broken-{n}\nkind: [unclosed\n"
    return Expect("yaml-syntax", rel)


def alias_bomb(c: Copy, rng: random.Random, n: int) -> Expect:
    rel = f"concepts/x/bomb-{n}.yaml"
    c.raw[rel] = bomb(levels=9, width=10) + f"id: bomb-{n}\n"
    return Expect("yaml-aliases", rel)


def libyaml_only(c: Copy, rng: random.Random, n: int) -> Expect:
    """A file that only libyaml reads: an unquoted `?` inside {...}."""
    rel = f"concepts/x/portable-{n}.yaml"
    c.raw[rel] = textwrap.dedent(f"""\
        id: portable-{n}
        kind: concept
        names: {{en: What is portable {n}?, zh: "可移植 {n}"}}
        beginner: {{en: "b", zh: "初"}}
        professional: {{en: "p", zh: "专"}}
        relations:
          - {{type: uses, target: bus-x}}
        evidence:
          - url: https://example.org/portable
        """)
    return Expect("yaml-portability", rel)


CATALOGUE: list[Callable[[Copy, random.Random, int], Expect | None]] = [
    unknown_key, missing_translation, unknown_relation_target, bad_sha, impossible_day, impossible_harvest_start,
    after_cutoff, after_own_cutoff, found_without_sha, overclaimed, duplicate_claim, part_of_cycle,
    alias_of_another, alias_of_itself, zero_width_space, escape_sequence, question_missing, question_key,
    malformed_id, ssh_url, unlisted_probe_repo, bad_lifecycle, ghost_step_concept, broken_file, alias_bomb,
]
if hasattr(yaml, "CSafeLoader"):  # a difference between the two readers needs both
    CATALOGUE.append(libyaml_only)


def bomb(levels: int, width: int) -> str:
    """`levels` levels of `width` aliases each: width ** levels values once expanded."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def missing(expected: list[Expect], problems, texts: dict[str, str]) -> list[Expect]:
    """The expectations that no problem meets."""
    out = []
    for e in expected:
        hits = [p for p in problems if p.code == e.code and (not e.file or p.location.file.endswith("data/" + e.file))]
        if e.marker:
            lines = [i for i, text in enumerate(texts[e.file].splitlines(), 1) if e.marker in text]
            hits = [p for p in hits if p.location.line in lines]
        if not hits:
            out.append(e)
    return out


def plant(tmp: Path, breaks, seed: int):
    copy, rng = Copy(), random.Random(seed)
    expected = [e for e in (make(copy, rng, n) for n, make in enumerate(breaks, 1)) if e is not None]
    texts = copy.write(tmp / "data")
    _loaded, problems = validate_problems(tmp / "data")
    return expected, problems, texts


@pytest.mark.parametrize("make", CATALOGUE, ids=lambda f: f.__name__)
def test_each_break_alone_is_reported_where_it_is(tmp_path, make):
    expected, problems, texts = plant(tmp_path, [make], 0)
    assert not missing(expected, problems, texts), [str(p) for p in problems]
    assert not any(p.code == "check-crashed" for p in problems)


def test_the_copy_without_breaks_is_clean(tmp_path):
    _, problems, _ = plant(tmp_path, [], 0)
    assert [str(p) for p in problems if p.is_error] == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(CATALOGUE), min_size=2, max_size=7), st.integers(0, 2**16))
def test_k_random_breaks_in_one_copy_are_all_reported(tmp_path_factory, breaks, seed):
    expected, problems, texts = plant(tmp_path_factory.mktemp("k"), breaks, seed)
    lost = missing(expected, problems, texts)
    assert not lost, (f"{len(lost)} of {len(expected)} breaks not reported: {lost}", [str(p) for p in problems])
    assert not any(p.code == "check-crashed" for p in problems)


# --------------------------------------------------------------------------------------------------
# The combinations that hid an error before (each failed on the previous code)
# --------------------------------------------------------------------------------------------------

def test_five_breaks_in_one_copy_are_five_reports(tmp_path):
    """The outside check's five: an impossible day (found only by SHACL before, and SHACL did not run
    when anything else was wrong), a found sighting without its commit, a day after the cut-off, a
    relation to a missing concept and a claim stronger than its evidence."""
    breaks = [impossible_day, found_without_sha, after_cutoff, unknown_relation_target, overclaimed]
    for one in breaks:
        expected, problems, texts = plant(tmp_path / one.__name__, [one], 1)
        assert not missing(expected, problems, texts), one.__name__
    expected, problems, texts = plant(tmp_path / "all", breaks, 1)
    assert not missing(expected, problems, texts), [str(p) for p in problems]


def test_shacl_runs_when_the_yaml_stage_has_errors_and_both_are_reported(tmp_path):
    expected, problems, texts = plant(tmp_path, [after_own_cutoff, unknown_key], 2)
    assert not missing(expected, problems, texts), [str(p) for p in problems]
    r = atlas("validate", "--data", str(tmp_path / "data"), "--format", "json")
    codes = [p["code"] for p in json.loads(r.stdout)["problems"]]
    assert r.returncode == 1 and "unknown-key" in codes and "shacl" in codes, r.stdout


def test_a_questions_file_with_an_error_still_says_which_questions_it_lacks(tmp_path):
    expected, problems, texts = plant(tmp_path, [question_key, question_missing], 3)
    assert not missing(expected, problems, texts), [str(p) for p in problems]


def test_a_control_character_in_a_value_does_not_hide_what_only_libyaml_reads(tmp_path):
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML was built without libyaml")
    copy = Copy()
    rel = libyaml_only(copy, random.Random(0), 7).file
    copy.raw[rel] = copy.raw[rel].replace('zh: "可移植 7"', 'zh: "可移植\\e 7"')
    copy.write(tmp_path / "data")
    _loaded, problems = validate_problems(tmp_path / "data", shacl=False)
    codes = {p.code for p in problems if p.location.file.endswith(rel)}
    assert {"control-character", "yaml-portability"} <= codes, [str(p) for p in problems]


def test_a_malformed_id_does_not_hide_the_rest_of_the_record(tmp_path):
    copy = Copy()
    bad = malformed_id(copy, random.Random(4), 9)
    doc = copy.docs[bad.file]
    doc["colour_9"] = "red"
    doc["relations"] = [{"type": "uses", "target": "ghost-9", "evidence": [{"pin": "example/hccl@BAD9:docs/x.md#L1"}]}]
    expected = [bad, Expect("unknown-key", bad.file, "colour_9"), Expect("unknown-ref", bad.file, "ghost-9"),
                Expect("bad-sha", bad.file, "BAD9")]
    texts = copy.write(tmp_path / "data")
    _loaded, problems = validate_problems(tmp_path / "data", shacl=False)
    assert not missing(expected, problems, texts), [str(p) for p in problems]


def test_a_sighting_missing_a_field_still_has_its_other_fields_checked(tmp_path):
    copy = Copy()
    copy.docs[TIMELINE]["sightings"].append(_sighting(5, value=None, sha="NOT-A-SHA",
                                                      committer_date="2025-02-30T10:00:00Z"))
    texts = copy.write(tmp_path / "data")
    _loaded, problems = validate_problems(tmp_path / "data", shacl=False)
    expected = [Expect("missing-field", TIMELINE), Expect("bad-sha", TIMELINE, "NOT-A-SHA"),
                Expect("bad-date", TIMELINE, "2025-02-30T10:00:00Z")]
    assert not missing(expected, problems, texts), [str(p) for p in problems]


# --------------------------------------------------------------------------------------------------
# Dates and timestamps are values of the calendar, in the YAML stage
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where, key, value", [
    ("sighting", "committer_date", "2025-02-30T10:00:00+08:00"),
    ("sighting", "author_date", "2025-13-01T10:00:00+08:00"),
    ("sighting", "introduced_date", "2025-01-01T24:00:00Z"),
    ("sighting", "committer_date", "2025-01-01T10:00:00"),          # no offset
    ("sighting", "harvested_at", "2025-01-01T10:00:00+15:00"),      # no such offset
    ("sighting", "cutoff", "2026-02-29"),
    ("sighting", "committer_date", "yesterday"),
    ("harvest", "harvested_at", "2026-11-31T00:00:00Z"),
    ("harvest", "started_at", "2026-11-01 00:00:00"),
    ("harvest", "cutoff", "2026-08-26T00:00:00Z"),
    ("timeline", "cutoff", "2026-08-26 extra"),
])
def test_every_date_and_timestamp_is_a_real_calendar_value(mini, where, key, value):
    text = (mini / TIMELINE).read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    target = {"sighting": doc["sightings"][0], "harvest": doc["repositories"][0], "timeline": doc}[where]
    target[key] = value
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    write(mini / TIMELINE, text)
    line = next(i for i, t in enumerate(text.splitlines(), 1)
                if value in t and t.strip().lstrip("- ").startswith(key + ":"))
    r = atlas("validate", "--no-shacl", "--data", str(mini), "--format", "json")
    bad = [p for p in json.loads(r.stdout)["problems"] if p["code"] == "bad-date"]
    assert r.returncode == 1 and [(p["file"].endswith(TIMELINE), p["line"]) for p in bad] == [(True, line)], bad
    assert value in bad[0]["message"]


def test_an_impossible_day_is_not_exported(mini):
    """With the YAML stage catching it, `export` refuses the data instead of writing 2025-02-30^^xsd:date."""
    text = (mini / TIMELINE).read_text(encoding="utf-8").replace("2025-01-02T10:00:00+08:00",
                                                                  "2025-02-30T10:00:00+08:00")
    write(mini / TIMELINE, text)
    r = atlas("export", "--data", str(mini), "--format", "nt")
    assert r.returncode == 1 and "2025-02-30" not in r.stdout and "bad-date" in r.stderr and "Traceback" not in r.stderr


# --------------------------------------------------------------------------------------------------
# Alias-safe walks: every walk over loaded YAML goes by identity
# --------------------------------------------------------------------------------------------------

def test_an_alias_bomb_is_a_located_error_for_every_command(mini):
    """Nine levels of ten aliases (10**9 values once expanded) took every command past 60 s."""
    text = bomb(levels=9, width=10) + "id: bomb\n"
    write(mini / "concepts" / "x" / "bomb.yaml", text)
    from atlas.model.hygiene import MAX_ALIASES

    line = 1 + (MAX_ALIASES + 1 + 9) // 10  # line 1 holds no alias; ten per line after it
    for args in (["validate"], ["validate", "--no-shacl"], ["query", "bus-x"], ["export", "--format", "nt"],
                 ["query", "--sparql", "ASK { ?s ?p ?o }"]):
        r = atlas(*args, "--data", str(mini), timeout=60)
        out = r.stdout + r.stderr
        assert r.returncode == 1 and "Traceback" not in out, (args, out)
        assert f"concepts/x/bomb.yaml:{line}:" in out and "[yaml-aliases]" in out, (args, out)


@st.composite
def alias_graphs(draw, max_nodes: int = 40):
    """A YAML document of anchored lists and mappings, each holding plain values and aliases to the
    ones before it: (text, distinct scalar nodes, alias lines in order, expanded size)."""
    lines, sizes, scalars, alias_lines = [], [], 0, []
    for i in range(draw(st.integers(1, max_nodes))):
        items, size = [], 0
        for _ in range(draw(st.integers(1, 3))):
            if i and draw(st.integers(0, 3)):
                j = draw(st.integers(max(0, i - 3), i - 1))
                items.append(f"*n{j}")
                alias_lines.append(i + 1)
                size += sizes[j]
            else:
                items.append(f"v{i}x{len(items)}")
                scalars += 1
                size += 1
        if draw(st.booleans()):
            lines.append(f"k{i}: &n{i} [{', '.join(items)}]")
        else:
            lines.append(f"k{i}: &n{i} {{{', '.join(f'f{m}: {item}' for m, item in enumerate(items))}}}")
            scalars += len(items)
        scalars += 1  # the key k<i>
        sizes.append(size)
    return "\n".join(lines) + "\n", scalars, alias_lines, sum(sizes)


@contextlib.contextmanager
def seconds(limit: int):
    """Stop the test (an exception in the walk) when it takes longer than `limit` seconds."""
    def stop(signum, frame):
        raise TimeoutError(f"took more than {limit} s: the walk expands aliases")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@settings(max_examples=80, deadline=None)
@given(alias_graphs())
def test_the_value_walk_over_random_alias_graphs_is_linear(graph):
    """Each scalar node is checked once, however many aliases reach it (the count is the written
    size, not the expanded one, which reaches 3**39 here); more than MAX_ALIASES alias uses is one
    yaml-aliases error at the line of the first alias over the limit."""
    from atlas.model import hygiene, load, yamlnodes

    text, scalars, alias_lines, _expanded = graph
    checked = []
    real = hygiene._check_scalar

    def counting(ctx, node, text):
        checked.append(node)
        return real(ctx, node, text)

    result = yamlnodes.Loaded(load.Atlas())
    ctx = yamlnodes._Ctx("g.yaml", result)
    hygiene._check_scalar = counting
    try:
        with seconds(20):
            root = yaml.compose(text, Loader=hygiene._Loader)
            read = hygiene._check_values(ctx, root, text)
    finally:
        hygiene._check_scalar = real
    assert len(checked) == scalars == len({id(n) for n in checked})
    over = len(alias_lines) > hygiene.MAX_ALIASES
    assert read is not over
    errors = [(p.code, p.location.line) for p in result.problems]
    assert errors == ([("yaml-aliases", alias_lines[hygiene.MAX_ALIASES])] if over else [])


@settings(max_examples=80, deadline=None)
@given(alias_graphs(), st.data())
def test_the_two_readers_are_compared_by_identity_and_as_equality_would(graph, data):
    """`same_value` (the pure-Python / libyaml comparison) walks by identity, yet answers as `==`
    (the slow obvious definition, used where the expanded size is small)."""
    from atlas.model.hygiene import portable_problems, same_value

    text, _scalars, _aliases, expanded = graph
    pure = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - safe loaders
    fast = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    with seconds(20):
        assert same_value(pure, fast)
        assert portable_problems(text, "g.yaml") == []
    if expanded <= 5_000:
        other = copy.deepcopy(fast)
        key = data.draw(st.sampled_from(sorted(other)))
        holder = other[key]
        slot = data.draw(st.sampled_from(sorted(holder) if isinstance(holder, dict) else range(len(holder))))
        holder[slot] = data.draw(st.sampled_from(["v0x0", "changed", 1, None, [], {}]))
        assert same_value(pure, other) == (pure == other)


def test_a_recursive_value_is_compared_without_end():
    from atlas.model.hygiene import portable_problems, same_value

    text = "a: &a [1, *a]\nb: &b {x: *b}\n"
    assert portable_problems(text, "r.yaml") == []
    pure = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506
    assert same_value(pure, yaml.load(text, Loader=yaml.SafeLoader))  # noqa: S506
    assert not same_value(pure, {"a": [1, [1]], "b": {"x": {}}})


# --------------------------------------------------------------------------------------------------
# Invisible characters, aliases that repeat a name, folders whose entries vanish
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("char", ["\u200b", "\u200e", "\u200f", "\u2060", "\U000e0041"])
@pytest.mark.parametrize("written", ["raw", "escape"])
def test_an_invisible_character_is_a_located_error_and_never_printed_raw(mini, char, written):
    f = mini / "concepts" / "x" / "bus-x.yaml"
    text = char if written == "raw" else f"\\U{ord(char):08X}"  # YAML's escape in a double-quoted string
    f.write_text(f.read_text(encoding="utf-8").replace('beginner: {en: "A fast link."',
                                                       f'beginner: {{en: "A fast{text} link."'), encoding="utf-8")
    line = next(i for i, t in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if t.startswith("beginner"))
    r = atlas("validate", "--no-shacl", "--data", str(mini))
    assert r.returncode == 1 and f"bus-x.yaml:{line}:" in r.stdout and f"U+{ord(char):04X}" in r.stdout, r.stdout
    assert "[control-character]" in r.stdout and char not in r.stdout + r.stderr
    bad = json.loads(atlas("validate", "--no-shacl", "--data", str(mini), "--format", "json").stdout)
    assert bad["errors"] == 1 and bad["problems"][0]["line"] == line


def test_a_term_with_an_invisible_character_is_echoed_escaped(mini):
    r = atlas("query", "zz\u200bzz\u202ezz", "--data", str(mini))
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "\u200b" not in out and "\u202e" not in out and "\\u200b" in out, out


@pytest.mark.parametrize("alias, says", [("bus-x", 'repeats its id "bus-x"'), ("BUS-X", 'repeats its id "bus-x"'),
                                         ("Ｂｕｓ Ｘ", 'repeats its English name "Bus X"'),
                                         ("X 总线", 'repeats its Chinese name "X 总线"')])
def test_a_concept_may_not_list_its_own_id_or_name_as_an_alias(mini, alias, says):
    f = mini / "concepts" / "x" / "bus-x.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("aliases: {en: [BX, ", f"aliases: {{en: [BX, {alias}, "),
                 encoding="utf-8")
    r = atlas("validate", "--no-shacl", "--data", str(mini))
    assert r.returncode == 1 and "bus-x.yaml:4:" in r.stdout and "[self-alias]" in r.stdout, r.stdout
    assert says in r.stdout


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc file system")
def test_validate_over_proc_skips_what_vanishes_without_a_traceback():
    r = atlas("validate", "--data", "/proc", timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Traceback" not in out and "error(s)" in r.stdout, out[-2000:]


def test_entries_that_vanish_during_the_walk_are_warnings(tmp_path):
    """A folder whose files and links come and go while it is read (as /proc's do): every walk ends,
    with the churning names either read, reported as vanished (a warning), or not seen at all."""
    import threading

    from atlas.model.walk import list_files

    root = tmp_path / "data"
    (root / "concepts" / "x").mkdir(parents=True)
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            i += 1
            folder = root / "concepts" / f"f{i % 7}"
            for make in (lambda: folder.mkdir(), lambda: (folder / "a.yaml").write_text("id: a\n"),
                         lambda: (root / f"l{i % 5}.yaml").symlink_to(folder / "a.yaml"),
                         lambda: (folder / "a.yaml").unlink(), lambda: (root / f"l{i % 5}.yaml").unlink(),
                         lambda: folder.rmdir()):
                with contextlib.suppress(OSError):
                    make()

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(300):
            listing = list_files(root)
            assert all(p.code in ("vanished", "broken-link") for p in listing.problems), listing.problems
    finally:
        stop.set()
        thread.join()


def test_a_file_that_vanishes_before_it_is_read_is_a_warning(mini):
    from atlas.model.yamlnodes import Loaded, _Ctx
    from atlas.model.hygiene import _compose
    from atlas.model.core import Atlas

    loaded = Loaded(Atlas())
    assert _compose(mini / "concepts" / "x" / "gone.yaml", _Ctx("gone.yaml", loaded)) is None
    assert [(p.level, p.code) for p in loaded.problems] == [("warning", "vanished")]
