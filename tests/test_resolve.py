"""Which concept a term names, in both languages (mini atlas): the one resolver every face uses."""
from __future__ import annotations

import pytest

from atlas.view import terms as resolve
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


# ---------------------------------------------------------------------------------------------
# The compiled index's lookups answer as the resolver does over the records
# ---------------------------------------------------------------------------------------------

def _bundled_names():
    from atlas.index.compiled import load_atlas
    from conftest import DATA

    atlas = load_atlas(DATA)
    names = sorted({*atlas.name_index, *atlas.loose_index, *atlas.concept_by_id})
    return atlas, names


_BUNDLED = None


def _bundled():
    global _BUNDLED
    if _BUNDLED is None:
        from atlas.opened import Opened
        from conftest import DATA

        atlas, names = _bundled_names()
        _BUNDLED = (atlas, names, Opened(DATA).cards)
    return _BUNDLED


def _terms():
    """Terms shaped like the names the atlas holds: a name, its start, a stretch from inside it, with
    its case or spacing changed, or words that name nothing."""
    from hypothesis import strategies as st

    _atlas, names, _store = _bundled()
    name = st.sampled_from(names)
    cut = st.tuples(name, st.integers(0, 40), st.integers(1, 40)).map(lambda t: t[0][t[1]:t[1] + t[2]])
    start = st.tuples(name, st.integers(1, 40)).map(lambda t: t[0][:t[1]])
    shaped = st.one_of(name, cut, start).flatmap(
        lambda s: st.sampled_from([s, s.upper(), s.title(), s.replace(" ", ""), s.replace("-", " "), f" {s} "]))
    return st.one_of(shaped, st.text(alphabet="abcdeghilmnoprstu -（）总线通信", min_size=1, max_size=12))


def test_the_stored_lookups_resolve_as_the_records_do():
    """Oracle: over many generated terms, the card store of the compiled index (which reads the keys
    that start with a term before those that contain it, and the bracketed names through their own
    index) names the same concept, exactly or by a confident prefix, as `atlas.view.terms` over the
    whole atlas; and spotting names reads the same bracketed parts from both."""
    from hypothesis import HealthCheck, given, settings

    from atlas.ask import understand

    atlas, _names, store = _bundled()
    stored = understand.name_keys(store.name_index, store.loose_index)
    whole = understand.name_keys(atlas.name_index, atlas.loose_index)
    assert stored.parts == whole.parts and stored.loose_parts == whole.loose_parts and stored.parts

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_terms())
    def check(term):
        assert store.exact(term) == resolve.exact_id(atlas.concept_by_id, atlas.name_index, atlas.loose_index,
                                                     term), term
        assert store.prefix(term) == resolve.prefix_id(atlas.name_index, atlas.loose_index, term), term

    check()
