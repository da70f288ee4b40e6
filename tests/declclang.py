"""An independent reader of a header's declarations, for the declaration oracle: libclang (the C/C++ front
end of LLVM, from the `libclang` wheel) parses the header as C++ with its preprocessor and reports the
same kinds as `atlas.code.decls` from its own AST: functions (file and namespace scope, public members,
not friends), enum constants (qualified by the enum for a scoped enum), macros (but the include guard
clang itself recognises), and types (named records with a body, typedefs, aliases).

It differs from the tree-sitter reader by design in one way: the preprocessor evaluates conditions, so
a declaration in an inactive branch is not seen (`inactive` gives the lines clang skipped); the
comparison (`compare`) sets those apart. Includes are resolved within the given include folders; a
missing one is an error clang recovers from. Used by tests/test_decl_oracle.py and
bench/bench_decl_oracle.py.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import ctypes
import re

import clang.cindex as ci


class _RangeList(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]

_STUBS = {  # the few standard headers the public headers include, as plain typedefs (no system headers)
    "stddef.h": "typedef unsigned long size_t; typedef long ptrdiff_t;\n#define NULL 0\n",
    "stdint.h": "".join(f"typedef {t} {n};\n" for t, n in [
        ("signed char", "int8_t"), ("short", "int16_t"), ("int", "int32_t"), ("long", "int64_t"),
        ("unsigned char", "uint8_t"), ("unsigned short", "uint16_t"), ("unsigned int", "uint32_t"),
        ("unsigned long", "uint64_t"), ("long", "intptr_t"), ("unsigned long", "uintptr_t")]),
    "stdbool.h": "", "stdio.h": "typedef struct FILE FILE;\n", "stdlib.h": "", "string.h": "",
    "unistd.h": "", "pthread.h": "typedef unsigned long pthread_t;\n", "time.h": "", "limits.h": "",
    "sys/types.h": "", "errno.h": "", "stdarg.h": "typedef char *va_list;\n", "float.h": "", "math.h": "",
    "assert.h": "", "signal.h": "", "semaphore.h": "", "sys/time.h": "", "sys/socket.h": "", "netinet/in.h": "",
    "arpa/inet.h": "", "sys/mman.h": "", "fcntl.h": "", "dlfcn.h": "", "sched.h": "", "stdatomic.h": "",
}
_STD = """#pragma once
#include <stddef.h>
#include <stdint.h>
namespace std {
using ::size_t; using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t; using ::uint8_t;
using ::uint16_t; using ::uint32_t; using ::uint64_t; using ::intptr_t; using ::uintptr_t; using ::ptrdiff_t;
class string; class string_view; class mutex; class recursive_mutex; class shared_mutex; class thread;
class exception; class condition_variable; class type_info; class ostream; class istream; class runtime_error;
template <class...> class vector; template <class...> class map; template <class...> class unordered_map;
template <class...> class set; template <class...> class unordered_set; template <class...> class list;
template <class...> class shared_ptr; template <class...> class unique_ptr; template <class...> class weak_ptr;
template <class...> class function; template <class...> struct pair; template <class...> class tuple;
template <class...> struct atomic; template <class, size_t> struct array; template <class...> class deque;
template <class...> class basic_string; template <class...> class optional; template <class...> class variant;
template <class...> class initializer_list; template <class...> class queue; template <class...> class future;
template <class...> class promise; template <class...> class lock_guard; template <class...> class unique_lock;
template <class...> class enable_shared_from_this; template <class...> class multimap; template <class...> class stack;
template <class...> class priority_queue; template <class...> class bitset; template <class...> class complex;
namespace chrono { template <class...> class duration; using milliseconds = duration<long>;
using seconds = duration<long>; using microseconds = duration<long>; using nanoseconds = duration<long>;
template <class...> class time_point; class steady_clock; class system_clock; class high_resolution_clock; }
}
"""
for _h in ("cstdint", "cstddef", "cstring", "cstdlib", "cstdio", "climits", "cstdarg", "cmath", "string", "vector",
           "map", "unordered_map", "set", "unordered_set", "list", "memory", "functional", "mutex", "shared_mutex",
           "atomic", "thread", "utility", "tuple", "array", "deque", "queue", "stack", "iostream", "sstream",
           "ostream", "istream", "fstream", "string_view", "optional", "variant", "initializer_list", "future",
           "condition_variable", "chrono", "exception", "stdexcept", "type_traits", "algorithm", "limits",
           "iomanip", "cassert", "bitset", "complex", "numeric", "iterator", "typeinfo", "cerrno", "ctime"):
    _STUBS[_h] = _STD
_FUNCTIONS = {ci.CursorKind.FUNCTION_DECL, ci.CursorKind.CXX_METHOD, ci.CursorKind.CONSTRUCTOR,
              ci.CursorKind.DESTRUCTOR, ci.CursorKind.FUNCTION_TEMPLATE, ci.CursorKind.CONVERSION_FUNCTION}
_TEMPLATES = {ci.CursorKind.CLASS_TEMPLATE, ci.CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
_RECORDS = {ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL, ci.CursorKind.CLASS_DECL, ci.CursorKind.ENUM_DECL,
            *_TEMPLATES}
_SCOPES = {ci.CursorKind.NAMESPACE, *_RECORDS}
_INDEX: ci.Index | None = None
_STUB_DIR: str | None = None


def _stub_dir() -> str:
    global _STUB_DIR
    if _STUB_DIR is None:
        _STUB_DIR = tempfile.mkdtemp(prefix="declclang-")
        for name, text in _STUBS.items():
            p = Path(_STUB_DIR) / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
    return _STUB_DIR


def parse(path: str, text: bytes, include: list[str] = ()):  # type: ignore[assignment]
    """The translation unit of one header (`path` names it; `include` are the folders its includes are
    looked up in)."""
    global _INDEX
    if _INDEX is None:
        _INDEX = ci.Index.create()
    _stub_missing(path, text, include)
    args = ["-x", "c++", "-std=c++17", "-nostdinc", "-nostdinc++", "-ferror-limit=0", "-Wno-everything",
            *("-I" + d for d in include), "-I" + _stub_dir(), "-I" + _stub_dir() + "/missing",
            "-D__aicore__=", "-D__gm__=", "-D__global__="]  # the Ascend C qualifiers, as the reader blanks them
    opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES \
        | ci.TranslationUnit.PARSE_INCOMPLETE
    return _INDEX.parse(path, args=args, unsaved_files=[(path, text.decode("utf-8", "replace"))], options=opts)


_TEMPLATE_ARGS = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def _stub_missing(path: str, text: bytes, include) -> None:
    """An empty file for each header the text includes that no include folder holds: a missing include
    is a fatal error in clang, which would hide every later error; an empty one leaves the names it would
    have declared unknown, and clang reports them where they are used."""
    here = [str(Path(path).parent), *include, _stub_dir()]
    for m in _INCLUDE.finditer(text):
        name = m.group(1).decode("utf-8", "replace").strip()
        if ".." in name.split("/") or name.startswith("/"):
            continue
        if not any(os.path.isfile(os.path.join(d, name)) for d in here):
            stub = Path(_stub_dir()) / "missing" / name
            stub.parent.mkdir(parents=True, exist_ok=True)
            stub.touch()


def _qualified(c) -> list[str]:
    parts = []
    p = c.semantic_parent
    while p is not None and p.kind in _SCOPES:
        if p.kind == ci.CursorKind.ENUM_DECL and not p.is_scoped_enum():
            p = p.semantic_parent  # a C enum's constants live in the enclosing scope
            continue
        if p.spelling and not p.is_anonymous():
            parts.append(p.spelling)
        p = p.semantic_parent
    return parts[::-1]


def _access(c, parent) -> bool:
    """Whether `c` stands in a public section of `parent`: the last access specifier before it, else
    the default (public in a struct or union, private in a class)."""
    public = parent.kind != ci.CursorKind.CLASS_DECL and not (
        parent.kind in _TEMPLATES and any(t.spelling == "class" for t in list(parent.get_tokens())[:12]
                                          if t.spelling in ("class", "struct", "union")))
    for child in parent.get_children():
        if child.kind == ci.CursorKind.CXX_ACCESS_SPEC_DECL:
            public = child.access_specifier == ci.AccessSpecifier.PUBLIC
        elif child == c:
            return public
    return public


def _public(c) -> bool:
    """Whether a member is reachable from outside its records."""
    c = c.canonical  # an out-of-line definition: the access of its declaration in the record
    p = c.semantic_parent
    while p is not None and p.kind in (_RECORDS - {ci.CursorKind.ENUM_DECL}):
        if not _access(c, p):
            return False
        c, p = p, p.semantic_parent
    return True


def _named(c) -> bool:
    """Whether a record's name is written (`typedef enum {...} X` gives the enum X's name for linkage only)."""
    loc = c.location
    for i, t in enumerate(c.get_tokens()):
        if t.location.line == loc.line and t.location.column == loc.column:
            return t.spelling == c.spelling
        if i > 8:
            break
    return False


def _guard(tu, path: str) -> str:
    """The include guard clang recognised for the file (its multiple-include optimisation), else ""."""
    f = tu.get_file(path)
    if not ci.conf.lib.clang_isFileMultipleIncludeGuarded(tu, f):
        return ""
    for c in tu.cursor.get_children():
        if c.kind == ci.CursorKind.MACRO_DEFINITION and c.location.file and c.location.file.name == path:
            return c.spelling if len(list(c.get_tokens())) == 1 else ""
    return ""


def declarations(path: str, text: bytes, include: list[str] = ()) -> set[tuple[str, str, int]]:  # type: ignore[assignment]
    """{(kind, name, line)} of one header, as clang reads it."""
    return from_unit(parse(path, text, include), path)


def from_unit(tu, path: str) -> set[tuple[str, str, int]]:
    """{(kind, name, line)} of the header `path` of a parsed unit."""
    guard = _guard(tu, path)
    out: set[tuple[str, str, int]] = set()

    def walk(cursor) -> None:
        for c in cursor.get_children():
            loc = c.location
            if loc.file is None or loc.file.name != path:
                continue
            k = c.kind
            if k == ci.CursorKind.MACRO_DEFINITION:
                if c.spelling != guard:
                    out.add(("macro", c.spelling, loc.line))
                continue
            if k == ci.CursorKind.FRIEND_DECL or not _public(c):
                continue
            name = _TEMPLATE_ARGS.sub("", "::".join([*_qualified(c), c.spelling]))  # as the reader names it
            if k in _FUNCTIONS:
                out.add(("function", name, loc.line))
            elif k == ci.CursorKind.ENUM_CONSTANT_DECL:
                out.add(("enum-constant", name, loc.line))
            elif k in (ci.CursorKind.TYPEDEF_DECL, ci.CursorKind.TYPE_ALIAS_DECL):
                out.add(("type", name, loc.line))
            elif k in _RECORDS and c.is_definition() and c.spelling and not c.is_anonymous() and _named(c):
                out.add(("type", name, loc.line))
            if k in _SCOPES or k == ci.CursorKind.LINKAGE_SPEC or k == ci.CursorKind.UNEXPOSED_DECL:
                walk(c)

    walk(tu.cursor)
    return out


def inactive(path: str, text: bytes, include: list[str] = ()) -> set[int]:  # type: ignore[assignment]
    """The lines of the header in preprocessor branches clang skipped."""
    return skipped(parse(path, text, include), path)


def skipped(tu, path: str) -> set[int]:
    lib = ci.conf.lib
    lib.clang_getSkippedRanges.restype = ctypes.POINTER(_RangeList)
    lib.clang_getSkippedRanges.argtypes = [ci.TranslationUnit, ci.File]
    lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
    ranges = lib.clang_getSkippedRanges(tu, tu.get_file(path))
    lines: set[int] = set()
    try:
        for i in range(ranges.contents.count):
            r = ranges.contents.ranges[i]
            lines.update(range(r.start.line, r.end.line + 1))
    finally:
        lib.clang_disposeSourceRangeList(ranges)
    return lines


def errors(tu, path: str) -> dict[int, str]:
    """line -> the first error clang reported on that line of the header."""
    out: dict[int, str] = {}
    for d in tu.diagnostics:
        loc = d.location
        if d.severity >= ci.Diagnostic.Error and loc.file is not None and loc.file.name == path:
            for line in range(loc.line, loc.line + 4):  # a declaration's name may stand lines after its type
                out.setdefault(line, d.spelling)
    return out


def compare(ts: set[tuple[str, str, int]], cl: set[tuple[str, str, int]], skipped: set[int]):
    """(only tree-sitter, only clang): the disagreements, leaving out the tree-sitter declarations in
    branches clang skipped (the readers differ there by design)."""
    only_ts = {d for d in ts - cl if d[2] not in skipped}
    return only_ts, cl - ts


def tree_sitter(text: bytes, decorations: tuple[str, ...] = ()) -> set[tuple[str, str, int]]:
    from atlas.code.decls import declarations as ts_declarations

    return {(k, n, line) for k, n, line, _s, _c in ts_declarations(text, decorations)}

