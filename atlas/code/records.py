"""What the code index holds: source files with their functions, macros and call sites, the links
from each call to its definitions, and what could not be read (named, never guessed).

Lines are 1-based and inclusive. A function's range runs from its first line (its `template <...>`
line when it has one, its decorator in Python) to its closing brace; a macro's from `#define` to the
last line of its continuation. A `CodeIndex` answers the lookups every face needs: the files, the
functions of a file, the function that encloses a line, a function's callees and its callers.
"""
from __future__ import annotations

from typing import NamedTuple

# How a call was linked (see atlas.code.resolve):
#   resolved   - exactly one definition in the repository@commit fits it by its scope, receiver type or name
#   ambiguous  - several fit: every candidate is listed, none is picked
#   by-name    - a member call whose receiver's type is not known: the methods of that name are listed
#   stdlib     - a call into the standard library (`std::...`, a method of a `std::` type)
#   external   - the repository@commit was searched and defines no such function or macro
#   unknown    - searched, nothing found, but blobs the search could not read might define it
#   unsearched - the name was not searched (beyond the hop limit); targets are the definitions
#                the index happens to hold, which may not be all of them
STATUSES = ("resolved", "ambiguous", "by-name", "stdlib", "external", "unknown", "unsearched")
# how far a link can be trusted, by its status
CONFIDENCE = {"resolved": "exact", "ambiguous": "by name", "by-name": "by name", "unsearched": "by name",
              "stdlib": "unresolved", "external": "unresolved", "unknown": "unresolved"}

Key = tuple[str, str, str, int, str]  # repo, commit, path, first line, name


class Call(NamedTuple):
    """A call site inside a function: `name` is the called name's last part (`put` for
    `ns::Obj::put<T>(...)` and for `obj->put(...)`), `qualifier` the `::` scope written before it
    without template arguments (`ns::Obj`), `args` the number of arguments (-1: unknown, a Python
    `*args` or `**kwargs` in the call)."""

    name: str
    line: int
    col: int
    args: int
    qualifier: str = ""
    text: str = ""  # the callee expression as written (at most 80 characters)
    receiver: str = ""  # a member call's receiver: "", or "." / "->" then this | T:<type> | m:<name> | ?


class Function(NamedTuple):
    """A function or method definition (one with a body)."""

    repo: str
    commit: str
    path: str
    name: str
    qualified: str  # namespaces, classes and the written scope, joined by :: (Python: by .)
    start: int
    end: int
    min_args: int
    max_args: int  # -1: variadic
    calls: list[Call]  # in source order
    member: bool = False  # defined in a class body, or with a written scope (`Box::f`)

    @property
    def key(self) -> Key:
        return (self.repo, self.commit, self.path, self.start, self.name)

    def accepts(self, args: int) -> bool:
        return args < 0 or (self.min_args <= args and (self.max_args < 0 or args <= self.max_args))

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end


class Macro(NamedTuple):
    """A `#define`: object-like (`params` = -1) or function-like (`params` names, `variadic` for
    `...`). Only function-like macros can be the target of a call."""

    repo: str
    commit: str
    path: str
    name: str
    start: int
    end: int
    params: int = -1
    variadic: bool = False

    @property
    def key(self) -> Key:
        return (self.repo, self.commit, self.path, self.start, self.name)

    @property
    def qualified(self) -> str:
        return self.name

    @property
    def callable(self) -> bool:
        return self.params >= 0

    def accepts(self, args: int) -> bool:
        return args < 0 or args == self.params or (self.variadic and args >= self.params)

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end


Definition = Function | Macro


class SourceFile(NamedTuple):
    repo: str
    commit: str
    path: str
    blob: str
    language: str  # "c", "cpp", "python", or "" for a file that is not parsed (Markdown, CMake, ...)
    lines: int
    hop: int  # 0: named by the atlas; n: defines something a file of hop n-1 calls
    functions: list[Function]
    macros: list[Macro]
    includes: tuple[str, ...] = ()  # the paths its #include lines name, as written
    fields: tuple[tuple[str, str, str], ...] = ()  # (class, field, type) of the data members it declares
    usings: tuple[str, ...] = ()  # the namespaces its `using namespace` lines name
    bases: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (class, its base classes) of the classes it declares

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.repo, self.commit, self.path)


class Link(NamedTuple):
    """One call site and the definitions it may reach."""

    caller: Function
    call: Call
    status: str  # one of STATUSES
    targets: list  # Function | Macro, every candidate when ambiguous
    concepts: list[str]  # no target: the concepts whose probes or aliases name the called name
    missing: list[str]  # blobs the search could not read (they might define it too)

    @property
    def confidence(self) -> str:
        """exact, by name or unresolved (an unsearched call with no target is unresolved)."""
        return "unresolved" if not self.targets else CONFIDENCE[self.status]


class MissingBlob(NamedTuple):
    """A file the index needed whose blob is not in the clone (a partial clone, a removed object)."""

    repo: str
    commit: str
    path: str
    blob: str
    why: str = ""  # what needed it: "named by the atlas", or the names searched for


class Unindexed(NamedTuple):
    """A file the atlas names that could not be indexed, and why (no clone, commit not in it, ...)."""

    repo: str
    commit: str
    path: str
    reason: str


class CodeIndex:
    """The indexed files, the links of their calls, and what could not be read."""

    def __init__(self, files: list[SourceFile] | None = None, links: list[Link] | None = None,
                 missing: list[MissingBlob] | None = None, unindexed: list[Unindexed] | None = None,
                 hops: int = 1):
        self.files: list[SourceFile] = files or []
        self.links: list[Link] = links or []
        self.missing: list[MissingBlob] = missing or []
        self.unindexed: list[Unindexed] = unindexed or []
        self.hops = hops
        self.reindex()

    def reindex(self) -> None:
        """Rebuild the lookups after the lists changed."""
        self.file_by_key = {f.key: f for f in self.files}
        keys: dict[int, Key] = {}
        for f in self.files:
            keys.update((id(fn), fn.key) for fn in f.functions)
            keys.update((id(m), m.key) for m in f.macros)
        self._callees: dict[Key, list[Link]] = {}
        self._callers: dict[Key, list[Link]] = {}
        for link in self.links:
            self._callees.setdefault(keys[id(link.caller)], []).append(link)
            for t in link.targets:
                self._callers.setdefault(keys[id(t)], []).append(link)

    # -- lookups ------------------------------------------------------------------------------

    def file(self, repo: str, commit: str, path: str) -> SourceFile | None:
        return self.file_by_key.get((repo, commit, path))

    def functions_in(self, file: SourceFile) -> list[Function]:
        """The functions of a file in line order."""
        return sorted(file.functions, key=lambda f: (f.start, -f.end, f.name))

    def enclosing(self, repo: str, commit: str, path: str, line: int) -> Function | None:
        """The innermost function whose range holds `line`, or None (outside every function, or
        the file is not indexed)."""
        f = self.file(repo, commit, path)
        if f is None:
            return None
        inside = [fn for fn in f.functions if fn.covers(line)]
        return min(inside, key=lambda fn: (fn.end - fn.start, -fn.start)) if inside else None

    def callees(self, fn: Function) -> list[Link]:
        """The calls made inside `fn`, in source order, each with what it may reach."""
        return list(self._callees.get(fn.key, []))

    def callers(self, fn: Definition) -> list[Link]:
        """The calls that may reach `fn` (resolved to it, or listing it among ambiguous candidates)."""
        return list(self._callers.get(fn.key, []))
