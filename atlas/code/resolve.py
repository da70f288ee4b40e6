"""Link each call site to the definitions it may reach in the same repository@commit.

The candidates of a call of `name` are the definitions of `name` in the indexed files of the same
repository, commit and language family (functions with a body, and function-like macros), less those
in a vendored folder (atlas.code.vendored) that the calling file neither lies in nor includes. Which
of them the call reaches depends on how it is written:

1. `std::...` (or a member call on a receiver declared with a `std::` type; through `->` on a
   `std::unique_ptr`/`shared_ptr` the pointee's type counts instead): the standard library
   (`stdlib`), never a definition of the repository;
2. `Q::name(...)`: the candidates whose qualified name is `Q::name` or ends with `::Q::name`; none
   left: no target (the scope may be an alias or another project's);
3. `obj.name(...)`, `p->name(...)` with a known receiver type `T` (`this` is the caller's class; a
   name declared in the function, a parameter, a field of the caller's class): the methods of `T`
   (qualified name ending with `T::name`), else of its base classes, nearest first (the bases the
   indexed files declare, by the classes' names); none: no target;
   with an unknown type: the member functions of that name, `by-name` - but for a name that the
   standard containers, strings and smart pointers also have (`STD_MEMBERS`: `size`, `clear`,
   `reset`, ...), which is not guessed (no target);
4. `name(...)`: the definitions in the caller's scopes, innermost first (the class and its bases,
   then each enclosing namespace, then the global one, where the macros are), then in the namespaces the
   caller's file names in `using namespace` lines; a function of another namespace is not reached;
5. when more than one is left, those whose parameters admit the arguments are kept (when none
   does, all stay; candidates by name only must admit them - in a source file, where a definition
   outside its class does not repeat its default arguments, not too many); then, when still more than one,
   those in the caller's own file, else those in a file it includes (when there are any).

Test code is reached only from test code (atlas.code.vendored.is_test).

Then: one left by rules 2 to 4 is `resolved`, several `ambiguous`; candidates by name only
(rule 3 without a type; in Python, any attribute call not on `self`, which may name a module's
function) are `by-name`. None: `external` when the repository@commit was searched for
the name (atlas.code.build) and every file the search met was read, `unknown` when some blob could
not be read (they are listed), `unsearched` when the name was never searched (beyond the hop limit).
A link's confidence follows its status (atlas.code.records.CONFIDENCE): `exact` for a resolved call,
`by name` when candidates are listed but none is picked, `unresolved` when there is no target.

A call left without a target names the concepts whose probe terms, names or aliases are the called
name (or `qualifier::name`): an `aclshmem_*` call from sgl-kernel-npu leads to the SHMEM concept.
"""
from __future__ import annotations

import re

from ..model.core import Atlas
from .parse import family_of
from .records import Call, Definition, Link, MissingBlob, SourceFile
from .vendored import Vendored

# the member functions of the standard containers, strings, smart pointers, atomics and locks: on a
# receiver of unknown type, a call of one of these names is not matched by name
STD_MEMBERS = frozenset("""
    size empty clear reserve resize capacity shrink_to_fit push_back pop_back emplace_back push_front pop_front
    emplace_front emplace emplace_hint insert erase find count contains at front back data begin end cbegin cend
    rbegin rend swap assign append c_str substr compare length npos lower_bound upper_bound equal_range merge
    extract reset get release use_count lock unlock try_lock load store exchange fetch_add fetch_sub
    compare_exchange_strong compare_exchange_weak notify_one notify_all wait wait_for wait_until join detach
    joinable value value_or has_value first second str what top push pop max_size key_comp
    """.split())
_SMART = re.compile(r"^(?:::)?std::(?:unique_ptr|shared_ptr)<(.+?)(?:,.*)?>$")
_ARGS = re.compile(r"<[^<>]*>")


def concept_names(atlas: Atlas) -> dict[str, list[str]]:
    """Identifier -> the concepts whose probe terms, names or aliases are exactly it."""
    out: dict[str, set[str]] = {}
    for c in atlas.concepts:
        for name in {p.value for p in c.probes if p.method == "term" and p.value} | set(c.all_names()):
            out.setdefault(name.strip(), set()).add(c.id)
    return {k: sorted(v) for k, v in out.items()}


def definitions(files: list[SourceFile]) -> dict[tuple[str, str, str], dict[str, list[Definition]]]:
    """(repo, commit, family) -> name -> its definitions in the indexed files, in file order."""
    table: dict[tuple[str, str, str], dict[str, list[Definition]]] = {}
    for f in files:
        names = table.setdefault((f.repo, f.commit, family_of(f.language)), {})
        for fn in f.functions:
            names.setdefault(fn.name, []).append(fn)
        for m in f.macros:
            if m.callable:
                names.setdefault(m.name, []).append(m)
    return table


Fields = dict[tuple[str, str], set[str]]  # (class's last name, field) -> the types it is declared with
Bases = dict[str, set[str]]  # class's last name -> the last names of its base classes


def link_calls(files: list[SourceFile], searched: dict[tuple[str, str, str], set[str]],
               unreadable: dict[tuple[str, str], list[MissingBlob]],
               names: dict[str, list[str]], vendored: dict[tuple[str, str], Vendored] | None = None) -> list[Link]:
    """A Link for every call site of every indexed function, in file and source order.

    `searched`: (repo, commit, family) -> the names searched there; `unreadable`: (repo, commit) ->
    the blobs those searches could not read; `names`: from `concept_names`; `vendored`:
    (repo, commit) -> its vendored folders (none when absent)."""
    table = definitions(files)
    fields: dict[tuple[str, str], Fields] = {}
    bases: dict[tuple[str, str], Bases] = {}
    for f in files:
        held = fields.setdefault((f.repo, f.commit), {})
        for cls, field, kind in f.fields:
            held.setdefault((cls.rsplit("::", 1)[-1], field), set()).add(kind)
        above = bases.setdefault((f.repo, f.commit), {})
        for cls, parents in f.bases:
            above.setdefault(cls.rsplit("::", 1)[-1], set()).update(n.rsplit("::", 1)[-1] for n in parents)
    links = []
    for f in files:
        family = family_of(f.language)
        defs = table.get((f.repo, f.commit, family), {})
        done = searched.get((f.repo, f.commit, family), set())
        blobs = sorted({b.blob for b in unreadable.get((f.repo, f.commit), [])})
        tree = (vendored or {}).get((f.repo, f.commit))
        held = fields.get((f.repo, f.commit), {})
        above = bases.get((f.repo, f.commit), {})
        for fn in f.functions:
            for call in fn.calls:
                candidates = defs.get(call.name, [])
                if tree is not None and candidates:
                    candidates = [d for d in candidates if tree.reachable(f.path, f.includes, d.path)]
                links.append(link(fn, call, candidates, call.name in done, blobs, names, held, f, above))
    return links


def link(caller, call: Call, candidates: list[Definition], searched: bool, missing: list[str],
         names: dict[str, list[str]], fields: Fields | None = None, file: SourceFile | None = None,
         bases: Bases | None = None) -> Link:
    """The Link of one call site given the reachable definitions of its name (the rules above)."""
    targets, how = choose(caller, call, candidates, fields or {}, file, bases or {})
    if how == "stdlib":
        status = "stdlib"
    elif not searched:
        status = "unsearched"
    elif how == "by-name" and targets:
        status = "by-name"
    elif len(targets) == 1:
        status = "resolved"
    elif targets:
        status = "ambiguous"
    else:
        status = "unknown" if missing else "external"
    concepts = [] if targets or status == "stdlib" else concepts_for(call, names)
    return Link(caller, call, status, targets, concepts, list(missing))


def choose(caller, call: Call, candidates: list[Definition], fields: Fields,
           file: SourceFile | None = None, bases: Bases | None = None) -> tuple[list[Definition], str]:
    """(the definitions the call may reach, how: "exact", "by-name" or "stdlib")."""
    targets, how = _choose(caller, call, candidates, fields, file.usings if file is not None else (), bases or {})
    if len(targets) > 1:
        targets = [d for d in targets if d.path == caller.path] or \
            [d for d in targets if file is not None and any(d.path == i or d.path.endswith("/" + i.lstrip("./"))
                                                             for i in file.includes)] or targets
    return targets, how


def _choose(caller, call: Call, candidates: list[Definition], fields: Fields,
            usings: tuple[str, ...], bases: Bases) -> tuple[list[Definition], str]:
    python = caller.path.endswith((".py", ".pyi"))
    sep = "." if python else "::"
    if not python and (_is_std(call.qualifier) or (call.receiver and _is_std(_receiver_type(caller, call, fields)))):
        return [], "stdlib"
    if call.receiver:
        kind = _receiver_type(caller, call, fields)
        if kind:
            return _fit(call, _methods(candidates, kind, call.name, sep, bases)), "exact"
        if call.name in STD_MEMBERS and not python:
            return [], "exact"
        guessed = [d for d in candidates if (python or getattr(d, "member", False)) and _admits(d, call.args)]
        return _fit(call, guessed), "by-name"
    if call.qualifier:
        want = f"{call.qualifier}::{call.name}"
        return _fit(call, [d for d in candidates if d.qualified == want or d.qualified.endswith("::" + want)]), "exact"
    scopes = [] if python else caller.qualified.split(sep)[:-1]  # a Python method is not called bare
    for depth in range(len(scopes), -1, -1):
        want = sep.join([*scopes[:depth], call.name])
        found = [d for d in candidates if d.qualified == want]
        if not found and depth == len(scopes) and depth:  # the caller's class: then its bases
            found = _methods(candidates, sep.join(scopes), call.name, sep, bases, own=False)
        if found:
            return _fit(call, found), "exact"
    wanted = {f"{u}::{call.name}" for u in usings}
    return _fit(call, [d for d in candidates if d.qualified in wanted]), "exact"


def _methods(candidates: list[Definition], kind: str, name: str, sep: str, bases: Bases,
             own: bool = True) -> list[Definition]:
    """The methods `name` of the class `kind` (with `own`), else of its bases, nearest first."""
    level = [kind.rsplit(sep, 1)[-1]]
    seen = set(level)
    if own:
        want = f"{kind}{sep}{name}"
        found = [d for d in candidates if d.qualified == want or d.qualified.endswith(sep + want)]
        if found:
            return found
    for _depth in range(6):
        level = [b for c in level for b in sorted(bases.get(c, ())) if b not in seen]
        if not level:
            break
        seen.update(level)
        found = [d for d in candidates for b in level if d.qualified == f"{b}{sep}{name}"
                 or d.qualified.endswith(f"{sep}{b}{sep}{name}")]
        if found:
            return found
    return []


_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".cu")


def _admits(d: Definition, args: int) -> bool:
    """Whether a guessed candidate may take `args` arguments: a definition in a source file is
    usually written outside its class, where the declaration's default arguments are not repeated,
    so only too many arguments rule it out there."""
    if d.path.lower().endswith(_SOURCES):
        return args < 0 or getattr(d, "max_args", -1) < 0 or args <= getattr(d, "max_args", -1)
    return d.accepts(args)


def _fit(call: Call, out: list[Definition]) -> list[Definition]:
    """Rule 5: by the number of arguments, when more than one is left."""
    if len(out) > 1:
        fit = [d for d in out if d.accepts(call.args)]
        out = fit or out
    return out


def _is_std(scope: str) -> bool:
    scope = scope.removeprefix("::")
    return scope == "std" or scope.startswith("std::")


def _receiver_type(caller, call: Call, fields: Fields) -> str:
    """The receiver's type without template arguments ("" when not known), for a member call."""
    arrow = call.receiver.startswith("->")
    what = call.receiver[2:] if arrow else call.receiver[1:]
    sep = "." if caller.path.endswith((".py", ".pyi")) else "::"
    if what == "this":
        return caller.qualified.rsplit(sep, 1)[0] if sep in caller.qualified else ""
    kind = ""
    if what.startswith("T:"):
        kind = what[2:]
    elif what.startswith("m:") and sep in caller.qualified:
        owner = caller.qualified.rsplit(sep, 1)[0].rsplit(sep, 1)[-1]
        kinds = fields.get((owner, what[2:]), set())
        kind = next(iter(kinds)) if len(kinds) == 1 else ""
    if kind in ("", "?", "auto"):
        return ""
    smart = _SMART.match(kind)
    if smart and arrow:
        kind = smart.group(1)
    while True:
        shorter = _ARGS.sub("", kind)
        if shorter == kind:
            break
        kind = shorter
    return kind.removeprefix("::")


def concepts_for(call: Call, names: dict[str, list[str]]) -> list[str]:
    found = set(names.get(call.name, []))
    if call.qualifier:
        found |= set(names.get(f"{call.qualifier}::{call.name}", []))
    return sorted(found)
