"""Loader and `atlas validate` rules: each rule with a broken fixture, asserting file, line and message."""
from __future__ import annotations

import textwrap

import pytest

from atlas.model.checks import check
from atlas.index.compiled import load_atlas
from atlas.model.load import load_data
from atlas.model.core import Atlas
from atlas.errors import AtlasError
from conftest import write


def problems(data_dir):
    return check(load_data(data_dir)).problems


def find(probs, code):
    hits = [p for p in probs if p.code == code]
    assert hits, f"no {code} among {[str(p) for p in probs]}"
    return hits[0]


def concept_file(mini, name, body):
    return write(mini / "concepts" / "x" / f"{name}.yaml", textwrap.dedent(body))


GOOD = """\
id: {id}
kind: concept
names: {{en: "{id} name", zh: "{id} 名"}}
beginner: {{en: "b", zh: "初"}}
professional: {{en: "p", zh: "专"}}
relations:
  - {{type: uses, target: bus-x}}
evidence:
  - url: https://example.org/x
"""


def test_mini_is_clean(mini):
    assert [str(p) for p in problems(mini) if p.is_error] == []


def test_round_trip_through_plain_form(mini):
    loaded = check(load_data(mini))
    again = Atlas.from_plain(loaded.atlas.to_plain())
    assert again.to_plain() == loaded.atlas.to_plain()
    assert again.concept("bus-x").names.zh == "X 总线"
    assert again.concept("lib-s").relations[0].type == "built-on"
    assert again.first_visible("bus-x").precision == "on-or-before"


def test_inverse_relation_is_stored_forward(mini_atlas):
    # board-a declares `has-part: core-v`; it is stored as core-v part-of board-a
    rel = [r for r in mini_atlas.concept("board-a").relations][0]
    assert (rel.type, rel.source, rel.target) == ("part-of", "core-v", "board-a")


def test_yaml_syntax_error_has_line(mini):
    f = concept_file(mini, "broken", "id: broken\nkind: [unclosed\n")
    p = find(problems(mini), "yaml-syntax")
    assert p.location.file.endswith("concepts/x/broken.yaml") and p.location.line >= 2
    assert f.exists()


def test_unknown_key_with_did_you_mean(mini):
    concept_file(mini, "typo", GOOD.format(id="typo") + "aliasses: {en: [T]}\n")
    p = find(problems(mini), "unknown-key")
    assert p.location.line == 10 and p.location.col == 1
    assert 'unknown key "aliasses"' in p.message and 'did you mean "aliases"' in p.hint


def test_missing_required_field(mini):
    concept_file(mini, "bare", "id: bare\nkind: concept\nnames: {en: B, zh: 乙}\n")
    msgs = [p.message for p in problems(mini) if p.code == "missing-field"]
    assert 'a concept has no "beginner"' in msgs and 'a concept has no "evidence"' in msgs


def test_bad_enum_value(mini):
    concept_file(mini, "badkind", GOOD.format(id="badkind").replace("kind: concept", "kind: libary"))
    p = find(problems(mini), "bad-value")
    assert p.location.line == 2 and "'libary'" in p.message and '"library"' in p.hint


def test_duplicate_id_across_files(mini):
    write(mini / "concepts" / "y" / "bus-x.yaml", (mini / "concepts" / "x" / "bus-x.yaml").read_text())
    p = find(problems(mini), "duplicate-id")
    assert 'concept id "bus-x" is defined twice' in p.message and "concepts/x/bus-x.yaml" in p.hint


def test_dangling_relation(mini):
    concept_file(mini, "dangle", GOOD.format(id="dangle").replace("target: bus-x", "target: bus-z"))
    p = find(problems(mini), "unknown-ref")
    assert p.location.file.endswith("dangle.yaml") and p.location.line == 7
    assert '"bus-z" is not a concept' in p.message and "bus-x" in p.hint


def test_dangling_claim_flow_probe_and_evidence_repo(mini):
    claims = mini / "claims" / "claims.yaml"
    claims.write_text(claims.read_text().replace("about: [lib-s]", "about: [lib-q]"))
    flow = mini / "flows" / "put-signal.yaml"
    flow.write_text(flow.read_text().replace("concepts: [core-v]\nedges", "concepts: [core-w]\nedges"))
    eng = mini / "concepts" / "x" / "engine-u.yaml"
    eng.write_text(eng.read_text().replace("repo: example/shmem", "repo: example/nope"))
    core = mini / "concepts" / "x" / "core-v.yaml"
    core.write_text(core.read_text().replace("example/hccl@", "example/gone@"))
    probs = problems(mini)
    msgs = {p.message for p in probs if p.is_error}
    assert 'claim subject "lib-q" is not a concept' in msgs
    assert 'concept of step "wait" is not a concept' in " ".join(msgs) or any(
        '"core-w"' in m for m in msgs)
    assert 'probe repository "example/nope" is not listed in data/repositories/' in msgs
    assert 'evidence pin repository "example/gone" is not listed in data/repositories/' in msgs


@pytest.mark.parametrize("alias", ["bx", "ＢＸ", "Bx"])
def test_alias_collision_case_and_width_insensitive(mini, alias):
    concept_file(mini, "clash", GOOD.format(id="clash") + f"aliases: {{en: [{alias}]}}\n")
    p = find(problems(mini), "alias-collision")
    assert "bus-x" in p.message and "clash" in p.message


def test_malformed_sha_and_pin(mini):
    concept_file(mini, "shas", GOOD.format(id="shas").replace(
        "  - url: https://example.org/x",
        "  - pin: example/hccl@abc123:README.md#L1\n  - pin: example/hccl/README.md line 3"))
    probs = problems(mini)
    assert "'abc123' is not 40 lowercase hex digits" in find(probs, "bad-sha").message
    bad = find(probs, "bad-pin")
    assert bad.location.line == 10 and "malformed pin" in bad.message


def test_date_after_cutoff(mini):
    tl = mini / "timeline.yaml"
    tl.write_text(tl.read_text().replace("committer_date: '2026-03-01T12:00:00+00:00'",
                                         "committer_date: '2026-08-27T01:00:00+00:00'"))
    p = find(problems(mini), "after-cutoff")
    assert p.location.file.endswith("timeline.yaml") and "after the cut-off 2026-08-26" in p.message


def test_late_evening_with_offset_is_still_the_cutoff_day(mini):
    tl = mini / "timeline.yaml"
    tl.write_text(tl.read_text().replace("committer_date: '2026-03-01T12:00:00+00:00'",
                                         "committer_date: '2026-08-27T07:00:00+08:00'"))
    assert not [p for p in problems(mini) if p.code == "after-cutoff"]


@pytest.mark.parametrize("rtype", ["part-of", "built-on"])
def test_cycles(mini, rtype):
    concept_file(mini, "ring-a", GOOD.format(id="ring-a").replace("type: uses, target: bus-x",
                                                                  f"type: {rtype}, target: ring-b"))
    concept_file(mini, "ring-b", GOOD.format(id="ring-b").replace("type: uses, target: bus-x",
                                                                  f"type: {rtype}, target: ring-a"))
    p = find(problems(mini), "cycle")
    assert rtype in p.message and "ring-a" in p.message and "ring-b" in p.message


def test_unsafe_tag_is_refused(mini):
    concept_file(mini, "evil", GOOD.format(id="evil").replace('kind: concept',
                                                              'kind: !!python/object/apply:os.system ["true"]'))
    p = find(problems(mini), "unsafe-tag")
    assert p.location.line == 2


def test_duplicate_key(mini):
    concept_file(mini, "twice", GOOD.format(id="twice") + "kind: api\n")
    assert 'key "kind" appears twice' in find(problems(mini), "duplicate-key").message


def test_missing_translation(mini):
    concept_file(mini, "mono", GOOD.format(id="mono").replace('beginner: {en: "b", zh: "初"}', 'beginner: "b"'))
    p = find(problems(mini), "missing-translation")
    assert p.location.line == 4 and "no zh text" in p.message


def test_id_must_match_file_name(mini):
    concept_file(mini, "other-name", GOOD.format(id="real-name"))
    assert "differs from its file name" in find(problems(mini), "id-mismatch").message


def test_flow_cycle(mini):
    flow = mini / "flows" / "put-signal.yaml"
    flow.write_text(flow.read_text() + "  - {from: wait, to: init, type: control}\n")
    assert "not a DAG" in find(problems(mini), "cycle").message


def test_load_atlas_raises_one_error_type_with_problems(mini):
    concept_file(mini, "broken", "id: broken\n")
    with pytest.raises(AtlasError) as info:
        load_atlas(mini)
    assert info.value.problems and all(p.location.file for p in info.value.problems)


def test_unquoted_comma_in_flow_text(mini):
    concept_file(mini, "comma", GOOD.format(id="comma").replace('professional: {en: "p", zh: "专"}',
                                                                 'professional: {en: a, b, zh: 专}'))
    p = find(problems(mini), "unquoted-comma")
    assert p.location.line == 5 and '"b" became a key of professional' in p.message


def test_flow_text_typo_is_unknown_key(mini):
    concept_file(mini, "typo2", GOOD.format(id="typo2").replace('zh: "专"}', 'zn: "专"}'))
    p = find(problems(mini), "unknown-key")
    assert 'did you mean "zh"' in p.hint


@pytest.mark.parametrize("loader_name", ["SafeLoader", "CSafeLoader"])
def test_unquoted_question_mark_in_flow_text_says_what_to_quote(mini, monkeypatch, loader_name):
    """libyaml reads `{en: Who ...?, zh: ...}`; the pure-Python reader does not. Under the pure reader
    the error names the file, line and column and says to quote the text; both readers agree once quoted."""
    import yaml
    from atlas.model import hygiene
    if not hasattr(yaml, loader_name):
        pytest.skip(f"PyYAML has no {loader_name} here")
    monkeypatch.setattr(hygiene, "_Loader", getattr(yaml, loader_name))
    q = mini / "questions.yaml"
    text = q.read_text(encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "names:" in ln)
    lines = text.splitlines()
    lines[line - 1] = lines[line - 1][:lines[line - 1].index("names:")] + \
        "names: {en: Who organises the communication?, zh: 谁组织通信}"
    q.write_text("\n".join(lines) + "\n", encoding="utf-8")
    probs = problems(mini)
    if loader_name == "SafeLoader":
        syntax = [p for p in probs if p.code == "yaml-syntax"]
        assert len(syntax) == 1
        p = syntax[0]
        assert p.location.file.endswith("questions.yaml") and p.location.line == line
        assert '"?" must be quoted' in p.hint and '{en: "Who moves the data?"' in p.hint
    else:
        assert not [p for p in probs if p.code == "yaml-syntax"]


def test_bracket_in_flow_text_says_what_to_quote(mini):
    concept_file(mini, "brk", GOOD.format(id="brk").replace('professional: {en: "p", zh: "专"}',
                                                             'professional: {en: a [b] c, zh: 专}'))
    p = find(problems(mini), "yaml-syntax")
    assert p.location.line == 5 and '"[" must be quoted' in p.hint


CLAIM = """\
claims:
  - id: gate
    statement: {{en: "s", zh: "述"}}
    status: {status}
    about: [lib-s]
    evidence:
{evidence}
"""
PIN = "example/hccl@0123456789abcdef0123456789abcdef01234567:docs/cores.md#L3-L5"


@pytest.mark.parametrize("status, evidence, ok", [
    ("confirmed", [("url", "second-hand")], False),
    ("confirmed", [("url", "derived"), ("pin", "second-hand")], False),
    ("confirmed", [("pin", "derived"), ("url", "second-hand")], False),
    ("confirmed", [("pin", "derived"), ("pin", "derived")], True),
    ("confirmed", [("url", "second-hand"), ("pin", "read-in-source")], True),
    ("hypothesis", [("url", "second-hand")], True),
    ("refuted", [("url", "unverified")], True),
])
def test_claim_status_follows_evidence(mini, status, evidence, ok):
    items = "\n".join(
        f"      - {{{kind}: {PIN if kind == 'pin' else 'https://example.org/e'}, confidence: {conf}}}"
        for kind, conf in evidence)
    write(mini / "claims" / "gate.yaml", CLAIM.format(status=status, evidence=items))
    hits = [p for p in problems(mini) if p.code == "status-exceeds-evidence"]
    if ok:
        assert hits == []
    else:
        assert len(hits) == 1 and hits[0].is_error
        assert hits[0].location.file.endswith("claims/gate.yaml") and hits[0].location.line == 2
        assert 'claim "gate" is confirmed but no evidence item was read in source' in hits[0].message


# -- planes, test plans and history coverage ------------------------------------------------------

PLANE = """\
id: ctl-plane
kind: concept
names: {{en: "Control plane", zh: "控制面"}}
answers:
{answers}
beginner: {{en: "b", zh: "初"}}
professional: {{en: "p", zh: "专"}}
relations:
  - {{type: uses, target: lib-s}}
evidence:
  - url: https://example.org/plane
undated: {{note: {{en: "a term of analysis", zh: "分析用语"}}}}
"""


@pytest.mark.parametrize("answers, ok", [
    ("  address: {en: a, zh: 甲}", False),                        # core-v answers submit only
    ("  address: {en: a, zh: 甲}\n  submit: {en: s, zh: 乙}", True),
])
def test_plane_tag_agrees_with_the_plane_answers(mini, answers, ok):
    write(mini / "concepts" / "x" / "ctl-plane.yaml", PLANE.format(answers=answers))
    flow = (mini / "flows" / "put-signal.yaml").read_text()
    (mini / "flows" / "put-signal.yaml").write_text(
        flow.replace("    concepts: [core-v, engine-u]", "    concepts: [core-v, ctl-plane]"))
    hits = [p for p in problems(mini) if p.code == "plane-mismatch"]
    if ok:
        assert hits == []
        return
    assert len(hits) == 1 and hits[0].is_error
    assert hits[0].location.file.endswith("flows/put-signal.yaml") and hits[0].location.line == 9
    assert 'step "put" of flow "put-signal" is tagged ctl-plane, which answers address' in hits[0].message
    assert "its concepts answer submit" in hits[0].message


def test_a_plane_step_whose_concepts_answer_nothing_is_not_judged(mini):
    write(mini / "concepts" / "x" / "ctl-plane.yaml", PLANE.format(answers="  address: {en: a, zh: 甲}"))
    flow = (mini / "flows" / "put-signal.yaml").read_text()
    (mini / "flows" / "put-signal.yaml").write_text(
        flow.replace("    concepts: [core-v, engine-u]", "    concepts: [ctl-plane, board-a]"))
    assert [p for p in problems(mini) if p.code == "plane-mismatch"] == []


def _claims(mini) -> str:
    return (mini / "claims" / "claims.yaml").read_text()


def test_a_hypothesis_needs_its_test_plan(mini):
    text = _claims(mini)
    start = text.index("    test_plan:")
    (mini / "claims" / "claims.yaml").write_text(text[:start])
    p = find(problems(mini), "missing-test-plan")
    assert p.is_error and p.location.file.endswith("claims/claims.yaml") and p.location.line == 11
    assert 'claim "lib-s-fast" is a hypothesis without a test plan' in p.message


def test_test_plan_step_order_and_pins_are_checked(mini):
    text = _claims(mini).replace("step: put-signal/put", "step: put-signal/gone")
    text += text[text.index("  - id: lib-s-fast"):].replace("lib-s-fast", "lib-s-slow")
    (mini / "claims" / "claims.yaml").write_text(text)
    probs = problems(mini)
    step = [p for p in probs if p.code == "unknown-ref" and "test plan" in p.message]
    assert step and 'names step "gone" of flow "put-signal", which does not exist' in step[0].message
    assert step[0].location.line == 19  # the test plan
    order = find(probs, "duplicate-order")
    assert '"lib-s-fast" and "lib-s-slow" both have decision order 1' in order.message
    (mini / "claims" / "claims.yaml").write_text(
        _claims(mini).replace("      where:\n        - pin:", "      where: []\n      wherever:\n        - pin:", 1))
    probs = problems(mini)
    assert "pins no line to time or print at" in find(probs, "no-evidence").message


def test_every_concept_is_dated_or_says_why(mini):
    lib_n = mini / "concepts" / "x" / "lib-n.yaml"
    text = lib_n.read_text()
    lib_n.write_text(text[:text.index("undated:")])
    p = find(problems(mini), "undated-without-reason")
    assert p.location.file.endswith("lib-n.yaml") and 'concept "lib-n" has no probe' in p.message
    lib_n.write_text(text.replace("undated:", "probes:\n  - {repo: example/hccl, term: LIB_N}\nundated:"))
    assert 'concept "lib-n" has probes and an undated reason' in find(problems(mini), "undated-with-probes").message
    lib_n.write_text(text.replace("undated:\n", "undated:\n  repos: [example/hccl]\n"))
    p = find(problems(mini), "undated-but-harvested")
    assert "example/hccl has been harvested" in p.message


def test_why_undated_reasons(mini_atlas):
    assert mini_atlas.why_undated("bus-x") is None                     # dated
    assert mini_atlas.why_undated("board-a") == ("no-public-repository", [])
    assert mini_atlas.why_undated("lib-s") == ("not-harvested", ["example/shmem"])
    assert mini_atlas.why_undated("engine-u")[0] in ("not-found", "not-harvested")
