"""Calls that reach their real callee: a repository built here with vendored-looking folders (files the
test writes) and project code that calls into the standard library, into its own classes by the
receiver's type, and into a vendored library with and without including it. Real git, real tree-sitter."""
from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from atlas.code import vendored
from atlas.code.build import index_atlas
from atlas.model.core import Atlas, Claim, Evidence, Pin, Text

from test_harvest import Repo, d

# a formatting library copied in, the way projects vendor one (written here, not copied)
FMT_H = textwrap.dedent("""\
    namespace fmt {
    template <typename T> class basic_memory_buffer {
     public:
      void reserve(int n) { grow(n); }
      void move(basic_memory_buffer &other) { other.reserve(0); }
      void grow(int n) {}
    };
    inline int format(const char *s) { return 0; }
    }
    """)
JSON_HPP = textwrap.dedent("""\
    namespace nl {
    class json {
     public:
      int insert(int v) { return v; }
      int size() const { return 0; }
      int empty() const { return 0; }
    };
    }
    """)
NESTED_H = "namespace spd { inline int reset(int x) { return x; } }\n"
ENGINE_H = textwrap.dedent("""\
    #include <set>
    #include <vector>
    namespace eng {
    class Buffer {
     public:
      void reserve(int n) { size_ = n; }
      int size() const { return size_; }
     private:
      int size_ = 0;
    };
    class Engine {
     public:
      void run(int n);
      void step();
     private:
      std::set<int> in_use_;
      Buffer staging_;
      std::unique_ptr<Buffer> owned_;
    };
    }
    """)
ENGINE_CPP = textwrap.dedent("""\
    #include "engine.h"
    namespace eng {
    static int helper(int v) { return v + 1; }
    void Engine::step() { helper(1); }
    void Engine::run(int n)
    {
        std::vector<int> op_descs;
        op_descs.reserve(n);
        auto moved = std::move(op_descs);
        in_use_.insert(n);
        in_use_.empty();
        staging_.reserve(n);
        owned_->reserve(n);
        owned_.reset();
        Buffer local;
        local.reserve(2);
        this->step();
        step();
        eng::helper(2);
        mystery.grow(3);
        std::sort(op_descs.begin(), op_descs.end());
        mystery.size();
        mystery.step();
    }
    }
    """)
USES_FMT = textwrap.dedent("""\
    #include "fmt/format.h"
    int show() { return fmt::format("x"); }
    int shown() { return format("y"); }
    """)
ONE_CALL = "int lonely() { return format(\"z\"); }\n"

UTIL_H = "namespace util { inline int twice(int x) { return 2 * x; } }\n"
USES_NS = '#include "util.h"\nusing namespace util;\nint a() { return twice(1); }\n'
NO_USING = '#include "util.h"\nint b() { return twice(2); }\nint c() { return ring_doorbell(); }\n'
STUB = "int ring_doorbell() { return 0; }\nint t() { return ring_doorbell(); }\n"

DERIVED = textwrap.dedent("""\
    #include "engine.h"
    namespace eng {
    class Derived : public Buffer {
     public:
      int grow() { this->reserve(2); return size(); }
    };
    }
    """)

FILES = {"src/derived.cpp": DERIVED, "src/util.h": UTIL_H, "src/uses_ns.cpp": USES_NS, "src/no_using.cpp": NO_USING,
         "test/stub/bell_stub.cc": STUB, "third_party/fmt/include/fmt/format.h": FMT_H,
         "src/json/LICENSE": "a licence of its own\n",
         "src/json/json.hpp": JSON_HPP, "lib/include/spdx/include/spd/reset.h": NESTED_H,
         "src/engine.h": ENGINE_H, "src/engine.cpp": ENGINE_CPP, "src/uses_fmt.cpp": USES_FMT,
         "src/lonely.cpp": ONE_CALL, "LICENSE": "the project's licence\n"}
VENDORED = ("third_party/fmt", "src/json", "lib/include/spdx/include/spd")


def _index(tmp_path):
    c = Repo(tmp_path / "repos", "o/calls").commit(FILES, d(1))
    seeds = ("src/engine.cpp", "src/uses_fmt.cpp", "src/lonely.cpp", "src/uses_ns.cpp", "src/no_using.cpp",
             "src/derived.cpp", "test/stub/bell_stub.cc")
    pins = [Evidence(pin=Pin("o/calls", c, p, 1, 1)) for p in seeds]
    atlas = Atlas(claims=[Claim("x", Text("s", "s"), "confirmed", evidence=pins)])
    return index_atlas(atlas, tmp_path / "repos", hops=2)


def _links(index, path):
    return {(ln.call.line, ln.call.text): ln for ln in index.links if ln.caller.path == path}


def test_calls_reach_their_callee_by_receiver_type_scope_and_includes(tmp_path):
    index = _index(tmp_path)
    assert {f.path for f in index.files} >= {"src/engine.cpp", "src/engine.h", "third_party/fmt/include/fmt/format.h"}
    links = _links(index, "src/engine.cpp")

    def got(line, text):
        ln = links[(line, text)]
        return ln.status, ln.confidence, [t.qualified for t in ln.targets]

    stdlib = ("stdlib", "unresolved", [])
    assert got(8, "op_descs.reserve") == stdlib  # a std::vector, never fmt's buffer
    assert got(9, "std::move") == stdlib  # never fmt's basic_memory_buffer::move
    assert got(10, "in_use_.insert") == stdlib  # a field declared std::set in the class's header
    assert got(11, "in_use_.empty") == stdlib
    assert got(12, "staging_.reserve") == ("resolved", "exact", ["eng::Buffer::reserve"])
    assert got(13, "owned_->reserve") == ("resolved", "exact", ["eng::Buffer::reserve"])  # through unique_ptr
    assert got(14, "owned_.reset") == stdlib  # the unique_ptr itself, not spd::reset
    assert got(16, "local.reserve") == ("resolved", "exact", ["eng::Buffer::reserve"])
    assert got(17, "this->step") == ("resolved", "exact", ["eng::Engine::step"])
    assert got(18, "step") == ("resolved", "exact", ["eng::Engine::step"])
    assert got(19, "eng::helper") == ("resolved", "exact", ["eng::helper"])
    assert got(20, "mystery.grow")[:2] == ("external", "unresolved")  # only fmt has grow: not included here
    assert got(21, "std::sort") == stdlib
    assert got(22, "mystery.size") == ("external", "unresolved", [])  # a std container's name: not guessed
    assert got(23, "mystery.step") == ("by-name", "by name", ["eng::Engine::step"])  # type unknown
    step = _links(index, "src/engine.cpp")[(4, "helper")]
    assert (step.status, [t.qualified for t in step.targets]) == ("resolved", ["eng::helper"])


def test_a_method_of_a_base_class_is_reached(tmp_path):
    links = _links(_index(tmp_path), "src/derived.cpp")
    assert [t.qualified for t in links[(5, "this->reserve")].targets] == ["eng::Buffer::reserve"]
    assert [t.qualified for t in links[(5, "size")].targets] == ["eng::Buffer::size"]
    assert links[(5, "size")].status == "resolved"


def test_another_namespace_needs_a_using_line_and_test_code_is_reached_from_tests_only(tmp_path):
    index = _index(tmp_path)
    assert [t.qualified for t in _links(index, "src/uses_ns.cpp")[(3, "twice")].targets] == ["util::twice"]
    other = _links(index, "src/no_using.cpp")
    assert other[(2, "twice")].targets == [] and other[(2, "twice")].status == "external"
    assert other[(3, "ring_doorbell")].targets == []  # only a test stub defines it
    stub = _links(index, "test/stub/bell_stub.cc")[(2, "ring_doorbell")]
    assert stub.status == "resolved" and stub.targets[0].path == "test/stub/bell_stub.cc"


def test_a_vendored_library_is_reached_only_from_a_file_that_includes_it(tmp_path):
    index = _index(tmp_path)
    uses = _links(index, "src/uses_fmt.cpp")
    assert [t.path for t in uses[(2, "fmt::format")].targets] == ["third_party/fmt/include/fmt/format.h"]
    assert uses[(2, "fmt::format")].confidence == "exact"
    lonely = _links(index, "src/lonely.cpp")[(1, "format")]
    assert lonely.targets == [] and lonely.status == "external"
    for ln in index.links:  # no call from the project's own code lands in a folder it does not include
        own = not any(ln.caller.path.startswith(v + "/") for v in VENDORED)
        if own and ln.caller.path != "src/uses_fmt.cpp":
            assert not any(t.path.startswith(v + "/") for t in ln.targets for v in VENDORED), ln
        if ln.call.qualifier.startswith("std"):
            assert ln.status == "stdlib" and not ln.targets


def test_vendored_folders_are_read_from_the_tree():
    paths = list(FILES) + ["include/external/acl/acl.h", "deps/zlib.h", "src/a/fmt/core.h"]
    assert vendored.roots(paths) == sorted(["deps", "lib/include/spdx/include/spd", "src/a/fmt", "src/json",
                                            "third_party/fmt"])
    tree = vendored.Vendored(paths)
    assert tree.root_of("third_party/fmt/include/fmt/format.h") == "third_party/fmt"
    assert tree.root_of("include/external/acl/acl.h") == ""  # CANN's own public headers
    assert tree.included(["fmt/format.h", "vector"]) == {"third_party/fmt"}
    assert tree.reachable("src/x.cpp", ["json.hpp"], "src/json/json.hpp")
    assert not tree.reachable("src/x.cpp", ["vector"], "src/json/json.hpp")
    assert tree.reachable("src/json/json.hpp", [], "src/json/json.hpp")


_folder = st.sampled_from(["src", "third_party", "3rdparty", "include", "lib", "fmt", "core", "vendor", "x"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_folder, min_size=0, max_size=4).map(lambda f: "/".join([*f, "f.h"])), max_size=12),
       st.lists(st.sampled_from(["", "src", "lib", "src/core"]), max_size=2))
def test_every_vendored_file_has_one_outermost_root(paths, licensed):
    """Oracle: a file is vendored exactly when some folder on its path is vendored by the rules, and its
    root is the outermost such folder."""
    paths = paths + [f"{p}/LICENSE" if p else "LICENSE" for p in licensed]
    tree = vendored.Vendored(paths)

    def marked(folders: list[str], i: int) -> bool:  # is folders[:i + 1] vendored, by the module's rules
        name = folders[i].lower()
        parent = folders[i - 1].lower() if i else ""
        return (parent in vendored.CONTAINERS or name in vendored.KNOWN
                or (parent == "include" and "include" in [f.lower() for f in folders[:i - 1]])
                or any(p.startswith("/".join(folders[:i + 1]) + "/") and p.rsplit("/", 1)[-1] == "LICENSE"
                       and p.count("/") == i + 1 for p in paths)
                or (name in vendored.CONTAINERS and any(p.count("/") == i + 1 and p.startswith(
                    "/".join(folders[:i + 1]) + "/") for p in paths)))

    for p in paths:
        folders = p.split("/")[:-1]
        hits = [i for i in range(len(folders)) if marked(folders, i)]
        assert tree.root_of(p) == ("/".join(folders[:hits[0] + 1]) if hits else ""), (p, tree.roots)
