"""The declarations of a public header (atlas/code/decls.py) and the release order rules
(atlas/harvest/releases.py), on headers and tag lists written here."""
from __future__ import annotations

import pytest

from atlas.code.decls import blank_decorations, canonical, declarations
from atlas.harvest.publicfiles import PathRule
from atlas.harvest.releases import Tag, order, semver_key
from atlas.model.core import ReleaseRule

HEADER = b"""/* Copyright */
#ifndef INC_ACL_H_
#define INC_ACL_H_
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#define ACL_MAJOR 1
#define ACL_CALL(x, ...) foo((x), __VA_ARGS__)
typedef struct aclrtStream_ *aclrtStream;
typedef void (*aclrtCallback)(void *userData);
typedef enum { ACL_MEM_A = 0, ACL_MEM_B = 1 << 2 } aclrtMemPolicy;
// a comment that names int fake(void);
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,  // trailing
                                         aclrtMemPolicy policy);
HcclResult HCCL_API HcclInit(const char *info);
__attribute__((visibility("default"))) int withAttr(int);
static inline int helper(int x) { int local(void); return x; }
void (*globalFp)(int);
extern int someVariable;
#if 0
int inDisabledBranch(void);
#endif
#ifdef __cplusplus
}
#endif
#endif
"""

CPP = b"""namespace hixl {
enum class Status : int { OK = 0, FAIL };
class ASCEND_FUNC_VISIBILITY Engine {
 public:
  Engine();
  ~Engine();
  Status Init(const char *name, int timeout = 1000);
  template <typename T> T Get(int key) const;
  using Handle = void *;
 private:
  int Hidden();
  friend void Peek(Engine &);
};
struct Desc { int a; };
}
template <typename T, pipe_t P = PIPE_MTE3>
ACLSHMEM_DEVICE void aclshmemx_put(__gm__ T *dst, __gm__ T *src);
"""


def names(data: bytes, decorations=()) -> dict[tuple[str, str], list]:
    out: dict = {}
    for kind, name, line, sig, _can in declarations(data, tuple(decorations)):
        out.setdefault((kind, name), []).append((line, sig))
    return out


def test_a_c_header():
    got = names(HEADER)
    assert ("macro", "INC_ACL_H_") not in got  # the include guard
    assert got[("macro", "ACL_MAJOR")] == [(8, "ACL_MAJOR 1")]
    assert got[("macro", "ACL_CALL")] == [(9, "ACL_CALL(x, ...) foo((x), __VA_ARGS__)")]
    assert got[("type", "aclrtStream")] == [(10, "typedef struct aclrtStream_ *aclrtStream")]
    assert got[("type", "aclrtCallback")] == [(11, "typedef void (*aclrtCallback)(void *userData)")]
    assert got[("enum-constant", "ACL_MEM_B")] == [(12, "ACL_MEM_B = 1 << 2")]
    assert got[("type", "aclrtMemPolicy")] == [(12, "typedef enum {...} aclrtMemPolicy")]
    # the decoration is blanked, the comment and the extra spaces are gone, the line is the name's
    assert got[("function", "aclrtMalloc")] == [
        (14, "aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemPolicy policy)")]
    assert got[("function", "HcclInit")] == [(16, "HcclResult HcclInit(const char *info)")]
    assert got[("function", "withAttr")] == [(17, "int withAttr(int)")]
    assert got[("function", "helper")] == [(18, "static inline int helper(int x)")]
    assert got[("function", "inDisabledBranch")]  # every preprocessor branch counts
    for absent in ("fake", "local", "globalFp", "someVariable"):
        assert ("function", absent) not in got, absent


def test_a_cpp_header():
    got = names(CPP)
    assert ("type", "hixl::Engine") in got and ("type", "hixl::Desc") in got
    assert got[("enum-constant", "hixl::Status::FAIL")] == [(2, "FAIL")]  # an enum class scopes its constants
    assert got[("function", "hixl::Engine::Engine")] == [(5, "Engine()")]
    assert got[("function", "hixl::Engine::~Engine")] == [(6, "~Engine()")]
    assert got[("function", "hixl::Engine::Init")] == [(7, "Status Init(const char *name, int timeout = 1000)")]
    assert got[("function", "hixl::Engine::Get")] == [(8, "template <typename T> T Get(int key) const")]
    assert got[("type", "hixl::Engine::Handle")] == [(9, "using Handle = void *")]
    assert ("function", "hixl::Engine::Hidden") not in got  # private
    assert ("function", "Peek") not in got and ("function", "hixl::Engine::Peek") not in got  # friend
    assert got[("function", "aclshmemx_put")] == [
        (17, "template <typename T, pipe_t P = PIPE_MTE3> void aclshmemx_put(T *dst, T *src)")]


def test_decorations_keep_lines_and_enum_constants():
    data = (b"ACL_FUNC_VISIBILITY int f(void);\nenum { ACL_MEMCPY_HOST_TO_DEVICE, X_API };\n"
            b"#define ACL_FUNC_VISIBILITY\n")
    blanked = blank_decorations(data)
    assert len(blanked) == len(data) and blanked.count(b"\n") == data.count(b"\n")
    assert b"ACL_MEMCPY_HOST_TO_DEVICE" in blanked and b"X_API" in blanked  # no name follows them
    assert b"#define ACL_FUNC_VISIBILITY" in blanked  # preprocessor lines are never blanked
    got = names(data)
    assert ("enum-constant", "ACL_MEMCPY_HOST_TO_DEVICE") in got and ("macro", "ACL_FUNC_VISIBILITY") in got
    mine = b"MY_EXPORT(1) int g(void);\n"
    assert ("function", "g") in names(mine, ["MY_EXPORT"])


def test_canonical_ignores_formatting_only():
    assert canonical("int  f( int a ,long b )") == canonical("int f(int a, long b)")
    assert canonical("void **p") == canonical("void** p") != canonical("void *p")
    assert canonical("unsigned int x") != canonical("unsignedint x")


def test_the_memo_gives_the_same_declarations():
    memo: dict = {}
    previous: list = []
    versions = [CPP, CPP.replace(b"int Hidden();", b"int Hidden();\n public:\n  int Shown();"), HEADER, CPP]
    for data in versions:
        assert declarations(data, (), memo, previous) == declarations(data)


def test_path_rules():
    rule = PathRule(["include/**/*.h", "src/*/api.h"], ["include/internal/**"])
    assert rule.match("include/a.h") and rule.match("include/x/y/b.h") and rule.match("src/m/api.h")
    assert not rule.match("include/internal/c.h") and not rule.match("include/a.hpp")
    assert not rule.match("src/m/n/api.h") and not rule.match("docs/include/a.h")
    assert rule.enters("include") and rule.enters("include/x") and rule.enters("src") and rule.enters("src/m")
    assert not rule.enters("docs") and not rule.enters("src/m/n")
    assert rule.folders() == ["include/", "src/"]
    assert PathRule(["**/*.h"]).folders() is None


# -- release order ---------------------------------------------------------------------------------


def test_semver_order_with_odd_tags():
    tags = ["v9.1.0", "v9.1.0-beta.2.pre", "v9.1.0.pre", "v9.1.0-beta.3", "v9.1.0-beta.1", "v9.0.1",
            "v0.3.11-rc1", "v0.3.11", "v0.3.11.post1", "v0.3.0-alpha", "v0.3.0-beta", "v1.5.0.rc1", "v1.5.0"]
    assert sorted(tags, key=semver_key) == [
        "v0.3.0-alpha", "v0.3.0-beta", "v0.3.11-rc1", "v0.3.11", "v0.3.11.post1", "v1.5.0.rc1", "v1.5.0",
        "v9.0.1", "v9.1.0-beta.1", "v9.1.0-beta.2.pre", "v9.1.0-beta.3", "v9.1.0.pre", "v9.1.0"]
    for odd in ("v1.3.2-temp", "v1.5.1-cn-test", "v25.12.0_CAM", "latest", "v1.2"):
        assert semver_key(odd) is None, odd
    assert semver_key("v1.0.0-rc10") > semver_key("v1.0.0-rc9")


def tag(name, commit="a" * 40, date="2026-01-01T00:00:00+00:00"):
    return Tag(name, commit, date, False)


@pytest.mark.parametrize("rule, tags, want, ignored", [
    (ReleaseRule(scheme="semver", tags="v*"), [tag("v1.0.0"), tag("v1.0.0-rc1"), tag("v1.3.2-temp"), tag("nightly")],
     ["v1.0.0-rc1", "v1.0.0"], {"v1.3.2-temp", "nightly"}),
    (ReleaseRule(scheme="semver", tags="mf_release_*", prefix="mf_release_"),
     [tag("mf_release_0.1.0"), tag("mf_release_0.0.2")], ["mf_release_0.0.2", "mf_release_0.1.0"], set()),
    (ReleaseRule(scheme="date"), [tag("2026.6.2", date="2026-06-23T10:00:00+08:00"),
                                  tag("2026.06.15.post1", date="2026-06-11T10:00:00+08:00")],
     ["2026.06.15.post1", "2026.6.2"], set()),
    (ReleaseRule(scheme="list", order=["UB_alpha", "v25.12.0"]), [tag("v25.12.0"), tag("UB_alpha"), tag("x")],
     ["UB_alpha", "v25.12.0"], {"x"}),
    (ReleaseRule(scheme="semver", exclude=["v2.0.0"]),
     [tag("v2.0.0"), tag("v1.0.0"), tag("v3.0.0", date="2026-08-27T01:00:00+00:00"), tag("v4.0.0", commit="")],
     ["v1.0.0"], {"v2.0.0", "v3.0.0", "v4.0.0"}),
], ids=["semver", "prefix", "date", "list", "excluded-late-and-commitless"])
def test_release_rules(rule, tags, want, ignored):
    got, skipped = order(rule, tags, "2026-08-26")
    assert [t.name for t in got] == want
    assert {name for name, _why in skipped} == ignored


def test_decorations_that_once_hid_declarations():
    """A deprecation macro with its message on the next line after an enumerator's name, an upper-case
    attribute macro between `()` and `;`, an `enum class` against a plain enum, and a mid-file
    `#ifndef X / #define X` block (a macro of the header; only the file's first block is its guard)."""
    src = b"""#ifndef GUARD_H
#define GUARD_H
typedef enum {
    OPT_A = 0, // a comment
    OPT_B ACL_DEPRECATED_MESSAGE(
        "OPT_B is deprecated, use OPT_A") = 2,
    OPT_C = 3
} opt_t;
extern unsigned Cap() HCOMM_WEAK_SYMBOL;
int Later(int x) WEAK_ATTR { return x; }
enum class Scoped { S_A };
enum Plain { P_A };
#ifndef TENSOR_INFO_DEFINED
#define TENSOR_INFO_DEFINED
typedef struct T { int a; } T;
#endif
#endif
"""
    got = names(src)
    assert got[("enum-constant", "OPT_B")] == [(5, "OPT_B = 2")] and ("enum-constant", "OPT_C") in got
    assert got[("type", "opt_t")] == [(8, "typedef enum {...} opt_t")]
    assert got[("function", "Cap")] == [(9, "extern unsigned Cap()")]
    assert got[("function", "Later")] == [(10, "int Later(int x)")]
    assert ("enum-constant", "Scoped::S_A") in got and ("enum-constant", "S_A") not in got
    assert ("enum-constant", "P_A") in got and ("enum-constant", "Plain::P_A") not in got
    assert got[("macro", "TENSOR_INFO_DEFINED")] == [(14, "TENSOR_INFO_DEFINED")]
    assert ("macro", "GUARD_H") not in got and ("type", "T") in got
    # a region macro alone on its line; enumerators in a preprocessor branch, the last without a comma
    region = names(b"RT_RUNTIME_DEPRECATED_DECLS_BEGIN\n\ntypedef int ctl_t;\ntypedef enum {\n  A0 = 0,\n"
                   b"#ifndef OPEN_BUILD\n  A1 = 1,\n  A2\n#endif\n} e_t;\nRT_RUNTIME_DEPRECATED_DECLS_END\n")
    assert {("type", "ctl_t"), ("enum-constant", "A1"), ("enum-constant", "A2"), ("type", "e_t")} <= set(region)
    # an enum constant or a call that only looks like a decoration is kept
    assert ("enum-constant", "ACL_MEMCPY_HOST_TO_DEVICE") in names(b"enum m { ACL_MEMCPY_HOST_TO_DEVICE, X };")
