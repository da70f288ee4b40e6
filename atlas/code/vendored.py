"""Which folders of a repository hold another project's code (a vendored copy), read from its tree.

A folder is vendored when:

1. it sits directly in a folder named `third_party`, `thirdparty`, `third-party`, `3rdparty`,
   `vendor`, `vendored` or `deps` (files directly in such a folder make the folder itself one);
2. it holds a licence of its own (`LICENSE*`, `LICENCE*`, `COPYING*`) and is not the top folder;
3. it sits directly in an `include` folder that is itself inside another `include` folder: a
   library's own header tree copied into the project's headers (`x/include/lib/include/fmt`);
4. its name is one of a few libraries that are commonly copied into C++ projects (`fmt`,
   `nlohmann`, `spdlog`, `googletest`, ...; `KNOWN`), as a supplement to the rules above.

A folder named `external` is not one: CANN repositories keep their own public headers in
`include/external/`. Each vendored file belongs to its outermost vendored folder (its root).
A root is reached from the project's code only by a file that includes one of its files: an
`#include` whose path is the end of a file's path in the root (`fmt/format.h`).

Test code (a file in a `test`, `tests`, `ut`, `st`, `llt`, ... folder, or named `*_test.*`,
`test_*`) is reached only from test code: a product's call never lands in a test's stub.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

CONTAINERS = frozenset({"third_party", "thirdparty", "third-party", "3rdparty", "vendor", "vendored", "deps"})
LICENCES = ("license", "licence", "copying")
KNOWN = frozenset({"fmt", "nlohmann", "spdlog", "googletest", "gtest", "gmock", "pybind11", "folly", "absl",
                   "abseil-cpp", "boost", "catch2", "doctest", "cxxopts", "rapidjson", "yaml-cpp", "glog",
                   "gflags", "mockcpp", "tinyxml2", "cli11", "eigen", "protobuf", "zlib", "openssl"})


TEST_FOLDERS = frozenset({"test", "tests", "testing", "ut", "st", "llt", "unittest", "unittests", "testcase",
                          "testcases", "gtest", "mock", "mocks", "stub", "stubs"})
_TEST_FILE = re.compile(r"(?:^test_|_test\.|_tests\.|_unittest\.|_utest\.|_stest\.|_stub\.)", re.I)


def is_test(path: str) -> bool:
    """Whether a file is test code (by its folders or its name)."""
    *folders, name = path.split("/")
    return any(f.lower() in TEST_FOLDERS for f in folders) or bool(_TEST_FILE.search(name))


def roots(paths: Iterable[str]) -> list[str]:
    """The vendored folders of a tree given the paths of its files (rules 1 to 4), outermost only."""
    found: set[str] = set()
    for path in paths:
        parts = path.split("/")
        folders = parts[:-1]
        for i, name in enumerate(folders):
            low = name.lower()
            if low in CONTAINERS:
                found.add("/".join(parts[:i + 2]) if i + 1 < len(folders) else "/".join(parts[:i + 1]))
            if low in KNOWN:
                found.add("/".join(parts[:i + 1]))
            if low == "include" and i + 1 < len(folders) and "include" in (f.lower() for f in folders[:i]):
                found.add("/".join(parts[:i + 2]))
        if folders and parts[-1].lower().startswith(LICENCES):
            found.add("/".join(folders))
    outer = sorted(found, key=lambda r: (r.count("/"), r))
    kept: list[str] = []
    for r in outer:
        if not any(r == k or r.startswith(k + "/") for k in kept):
            kept.append(r)
    return sorted(kept)


class Vendored:
    """The vendored roots of one tree, which file belongs to which, and which roots an include reaches."""

    def __init__(self, paths: Iterable[str]):
        paths = list(paths)
        self.roots = roots(paths)
        self._ends: dict[str, set[str]] = {}
        for path in paths:
            root = self.root_of(path)
            if root:
                parts = path.split("/")
                for i in range(len(parts)):
                    self._ends.setdefault("/".join(parts[i:]), set()).add(root)

    def root_of(self, path: str) -> str:
        """The vendored root that holds `path`, or "" for the project's own code."""
        for r in self.roots:
            if path.startswith(r + "/"):
                return r
        return ""

    def included(self, includes: Iterable[str]) -> set[str]:
        """The roots that the `#include` paths of a file reach."""
        out: set[str] = set()
        for inc in includes:
            out |= self._ends.get(inc.lstrip("./"), set())
        return out

    def reachable(self, caller_path: str, includes: Iterable[str], target_path: str) -> bool:
        """Whether a call from `caller_path` may reach a definition in `target_path`: the target is
        the project's own code (not test code, unless the caller is), or in the caller's own root, or
        in a root the caller includes."""
        if is_test(target_path) and not is_test(caller_path):
            return False
        root = self.root_of(target_path)
        return not root or root == self.root_of(caller_path) or root in self.included(includes)
