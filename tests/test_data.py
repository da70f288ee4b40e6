"""Gates over the real data/: it validates, every card is complete in both languages,
communicating kinds answer a question, everything has evidence and a relation, and every bold term of
the seed's English reading (and its Chinese counterpart) resolves through `atlas query`."""
from __future__ import annotations

import re

import pytest

from atlas.view import terms as resolve, views
from atlas.model.checks import check
from atlas.model.load import load_data
from conftest import DATA, ROOT

# Kinds exempt from answering one of the six questions, and why:
EXEMPT_KINDS = {
    "paper": "a paper proposes a system; it moves no bytes itself (DualPath, UB-Mesh)",
    "concept": "frame concepts of the seed itself (history axis, cut-off, a disambiguation page)",
    "hardware": "some blocks (AIC, a product such as Atlas A2) compute or contain; only their parts communicate",
    "system": "a whole system such as CANN or CloudMatrix 384 bundles the parts that answer",
    "source-artifact": "a source file is evidence, not an actor",
}

# Every bold term of shared/seed/READING.md, with the Chinese term the original uses for it.
SEED_TERMS_EN = [
    "Elastic dispatch", "symmetric memory", "placeholder kernel", "SIMT", "WQE", "Data-as-Flag", "UDMA",
    "SQ/CQ", "Full-Mesh dispatch", "URMA", "doorbell", "DeepEP", "AIV", "QP", "combine", "ascend_deepep",
    "HiSilicon hierarchy", "MoonEP", "data plane", "control plane", "sync plane", "HCCL", "HiXL", "SHMEM",
    "PE", "DMA", "HCCS", "Fabric Memory", "AIV direct drive", "history axis", "technical axis",
    "first visible commit", "2026-08-26", "Mooncake", "signal", "KV cache", "P/D disaggregation",
    "DualPath", "QoS",
]
SEED_TERMS_ZH = [
    "对称内存", "占位 kernel", "直驱", "AIV 直驱", "数据面", "控制面", "同步面", "前缀和", "海思 hierarchy",
    "历史纵轴", "技术横轴", "首次可见提交", "研究截止日", "P/D 分离", "灵衢", "对称堆", "门铃",
]


# The everyday words of the seed's ten pages that are not bold in READING.md, with the card each must open.
EVERYDAY_WORDS = {
    "collective communication": "collective-communication", "集合通信": "collective-communication",
    "point-to-point": "point-to-point", "单点通信": "point-to-point", "Put/Get": "put-get",
    "原子操作": "atomics", "atomics": "atomics", "完成通知": "completion-notification",
    "completion notification": "completion-notification", "AllReduce": "allreduce", "AllGather": "allgather",
    "ReduceScatter": "reduce-scatter", "AlltoAllV": "all-to-all", "Broadcast": "broadcast",
    "Ascend C": "ascend-c", "超节点": "super-node", "super node": "super-node", "编译开关": "build-flag",
    "build flags": "build-flag", "字节带宽": "byte-bandwidth", "WQE 提交率": "wqe-submission-rate",
    "P 维路由扫描": "route-scan", "拓扑扇出": "topology-fan-out", "最慢 rank 的尾延迟": "tail-latency",
    "tail latency": "tail-latency", "SIMT 线程模型": "simt-on-aiv", "两层路由": "moe-distribute-dispatch-v2-layered",
    "发送热路径": "send-hot-path", "槽位分配": "slot-allocation", "跨核协作": "cross-core-cooperation",
    "远程写入": "put-get", "Full-Mesh 通信窗": "full-mesh-comm-window", "MoE": "mixture-of-experts",
    "rank": "rank", "核函数": "device-kernel", "peer 调度": "moonep", "通信域": "communicator",
    "计算网络": "compute-network", "输出重排": "receiver-layout", "接收端连续排布": "receiver-layout",
    "NPU": "npu", "Host": "host-cpu", "Ascend C 参考实现": "deepep-moe-dis-dispatch-h", "token": "token",
}


@pytest.fixture(scope="module")
def loaded():
    return check(load_data(DATA))


@pytest.fixture(scope="module")
def atlas(loaded):
    return loaded.atlas


def test_data_validates(loaded):
    errors = [str(p) for p in loaded.problems if p.is_error]
    assert errors == [], "\n".join(errors[:30])


def test_bold_terms_are_the_ones_in_reading_md():
    text = (ROOT.parent / "shared" / "seed" / "READING.md")
    if not text.exists():
        pytest.skip("shared/seed is not beside the checkout")
    bold = set(re.findall(r"\*\*([^*]+)\*\*", text.read_text(encoding="utf-8"))) - {"bold"}
    assert bold <= set(SEED_TERMS_EN), f"bold terms missing from the gate list: {bold - set(SEED_TERMS_EN)}"


@pytest.mark.parametrize("term", SEED_TERMS_EN + SEED_TERMS_ZH)
def test_seed_term_resolves(atlas, term):
    assert resolve.find(atlas, term) is not None, f"`atlas query {term}` finds nothing"


@pytest.mark.parametrize("word", sorted(EVERYDAY_WORDS))
def test_everyday_word_opens_its_card(atlas, word):
    hit = resolve.find(atlas, word)
    assert hit is not None and hit.id == EVERYDAY_WORDS[word], f"`atlas query {word}` opens {hit and hit.id}"


def test_enough_content(atlas):
    assert len(atlas.concepts) >= 147 and len(atlas.claims) >= 12 and len(atlas.flows) >= 7
    assert {q.id for q in atlas.questions} == {"organize", "address", "submit", "move", "link", "peer"}


def test_every_card_is_complete_in_both_languages(atlas):
    missing = []
    for c in atlas.concepts:
        for field in ("names", "beginner", "professional"):
            for lang in ("en", "zh"):
                if not getattr(c, field).get(lang):
                    missing.append(f"{c.id}.{field}.{lang}")
        for q, a in c.answers.items():
            if not (a.en and a.zh):
                missing.append(f"{c.id}.answers.{q}")
    assert missing == []


def test_communicating_kinds_answer_a_question(atlas):
    silent = [c.id for c in atlas.concepts if not c.answers and c.kind not in EXEMPT_KINDS]
    assert silent == []


def test_every_concept_has_evidence_and_a_relation(atlas):
    assert [c.id for c in atlas.concepts if not c.evidence] == []
    assert [c.id for c in atlas.concepts if not atlas.touching.get(c.id)] == []


def test_not_one_stack(atlas):
    """The seed's point, as data: no concept answers all six questions."""
    assert [c.id for c in atlas.concepts if len(c.answers) == 6] == []


def test_every_pin_uses_a_full_sha(atlas):
    for c in atlas.concepts:
        for e in c.evidence:
            if e.pin:
                assert re.fullmatch(r"[0-9a-f]{40}", e.pin.sha), (c.id, str(e.pin))


def _yaml_files():
    from atlas.model.walk import list_files
    return [rel for rel, _, _ in list_files(DATA).files if not rel.endswith(".jsonl")]


@pytest.mark.parametrize("rel", _yaml_files())
def test_pure_and_libyaml_readers_agree(rel):
    """data/ must read the same with PyYAML's pure-Python SafeLoader (used where libyaml is missing)
    and with libyaml's CSafeLoader: e.g. an unquoted `?` inside {...} parses only with libyaml."""
    import yaml
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML was built without libyaml")
    text = (DATA / rel).read_text(encoding="utf-8")
    try:
        pure = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        pytest.fail(f"{rel}: the pure-Python reader fails: {exc}")
    assert pure == yaml.load(text, Loader=yaml.CSafeLoader), f"{rel} reads differently with libyaml"


def test_a_concept_recorded_as_a_hypothesis_shows_that_claim(atlas):
    """A concept whose text says it is recorded as hypothesis Bn lists the claim of hypothesis Bn."""
    said = {}
    for c in atlas.concepts:
        text = " ".join(c.beginner.both() + c.professional.both())
        for n in re.findall(r"hypothesis (B\d)", text):
            said.setdefault(c.id, set()).add(n)
    assert len(said) >= 5
    for cid, numbers in said.items():
        statements = [cl["statement"]["en"] for cl in views.card(atlas, atlas.concept(cid))["claims"]]
        for n in numbers:
            assert any(s.startswith(f"Hypothesis {n}:") for s in statements), (cid, n, statements)


def _validate(data, cwd, cache):
    import os
    import subprocess
    import sys

    env = dict(os.environ, ATLAS_CACHE=str(cache))
    return subprocess.run([sys.executable, "-m", "atlas", "validate", "--no-shacl", "--data", str(data)],
                          capture_output=True, text=True, cwd=cwd, env=env)


@pytest.mark.skipif(not hasattr(__import__("yaml"), "CSafeLoader"), reason="needs libyaml to differ from")
def test_validate_reports_what_only_libyaml_reads_at_its_line(tmp_path):
    import shutil

    data = tmp_path / "d2"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("timeline.yaml"))
    q = data / "questions.yaml"
    lines = q.read_text(encoding="utf-8").splitlines(keepends=True)
    n = next(i for i, t in enumerate(lines) if '"Who organises the communication?"' in t)
    lines[n] = lines[n].replace('"Who organises the communication?"', "Who organises the communication?")
    q.write_text("".join(lines), encoding="utf-8")
    for _ in range(2):  # the second run answers from the remembered files: the broken one is read again
        r = _validate(data, tmp_path, tmp_path / "cache")
        assert r.returncode == 1, r.stdout
        assert re.search(rf"^d2/questions.yaml:{n + 1}:\d+: error: libyaml reads this but PyYAML's pure-Python "
                         r"reader stops.*\[yaml-portability\]", r.stdout, re.M), r.stdout
        assert "quote" in r.stdout and "data/questions.yaml" not in r.stdout
    q.write_text("".join(lines).replace("Who organises the communication?",
                                        '"Who organises the communication?"'), encoding="utf-8")
    assert _validate(data, tmp_path, tmp_path / "cache").returncode == 0


def test_a_questions_file_that_does_not_read_is_reported_once_under_its_own_folder(tmp_path):
    import shutil

    data = tmp_path / "d2"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("timeline.yaml"))
    (data / "questions.yaml").write_text("questions: [ {id: organize\n", encoding="utf-8")
    r = _validate(data, tmp_path, tmp_path / "cache")
    assert r.returncode == 1 and "d2/questions.yaml:" in r.stdout and "data/questions.yaml" not in r.stdout
    assert "[yaml-syntax]" in r.stdout and "[missing-question]" not in r.stdout, r.stdout
    (data / "questions.yaml").write_text("questions: []\n", encoding="utf-8")
    r = _validate(data, tmp_path, tmp_path / "cache")
    assert "d2/questions.yaml: error: questions.yaml lacks: organize" in r.stdout, r.stdout
