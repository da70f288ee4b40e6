"""Which concept a term names, in both languages (mini atlas): the one resolver every face uses."""
from __future__ import annotations

import pytest

from atlas import resolve
from atlas.errors import AtlasError, NoMatch


@pytest.mark.parametrize("term, expected", [
    ("bus-x", "bus-x"),            # id
    ("Bus X", "bus-x"),            # English name
    ("bus x", "bus-x"),            # case
    ("X 总线", "bus-x"),            # Chinese name
    ("测试总线", "bus-x"),           # Chinese alias
    ("ＢＸ", "bus-x"),              # full-width alias
    ("unified test", "bus-x"),     # unique prefix of an alias
    ("甲卡", "board-a"),
    ("aiv-like", "core-v"),
    ("SHMEM-like", "lib-s"),
    ("对称", "lib-s"),              # unique Chinese prefix
    ("Symmetric Library S", "lib-s"),
])
def test_resolution(mini_atlas, term, expected):
    assert resolve.concept(mini_atlas, term).id == expected


def test_ambiguous_prefix_gives_suggestions(mini_atlas):
    with pytest.raises(NoMatch) as info:
        resolve.concept(mini_atlas, "lib")
    assert isinstance(info.value, AtlasError) and info.value.term == "lib"
    assert {s["id"] for s in info.value.rows} >= {"lib-c", "lib-s"}




def test_chinese_miss_suggests(mini_atlas):
    with pytest.raises(AtlasError) as info:
        resolve.concept(mini_atlas, "总线甲")
    assert "bus-x" in [s["id"] for s in info.value.rows]


def test_ambiguous_prefix_says_so_and_lists_the_owners_first(mini_atlas):
    with pytest.raises(AtlasError) as info:
        resolve.concept(mini_atlas, "lib")
    assert "ambiguous" in info.value.message
    assert [s["id"] for s in info.value.rows][:3] == ["lib-c", "lib-n", "lib-s"]
