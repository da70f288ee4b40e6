"""Link each call site to the definitions it may reach in the same repository@commit.

The rule, for a call of `name` written with the scope `qualifier` and `args` arguments:

1. the candidates are the definitions of `name` in the indexed files of the same repository, commit
   and language family: functions with a body, and function-like macros;
2. a qualified call (`ns::A::name(...)`) keeps the candidates whose qualified name ends with
   `ns::A::name`; when none does, all stay (the scope may come from a `using`);
3. when more than one is left, those whose parameters admit `args` arguments are kept; when none
   does, all stay;
4. one left: `resolved`; several: `ambiguous`, every one listed. None: `external` when the
   repository@commit was searched for the name (atlas.code.build) and every file the search met
   was read, `unknown` when some blob could not be read (they are listed), `unsearched` when the
   name was never searched (the call is beyond the hop limit).

A call left without a target names the concepts whose probe terms, names or aliases are the called
name (or `qualifier::name`): an `aclshmem_*` call from sgl-kernel-npu leads to the SHMEM concept.
"""
from __future__ import annotations

from ..model import Atlas
from .parse import family_of
from .records import Call, Definition, Link, MissingBlob, SourceFile


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


def link_calls(files: list[SourceFile], searched: dict[tuple[str, str, str], set[str]],
               unreadable: dict[tuple[str, str], list[MissingBlob]],
               names: dict[str, list[str]]) -> list[Link]:
    """A Link for every call site of every indexed function, in file and source order.

    `searched`: (repo, commit, family) -> the names searched there; `unreadable`: (repo, commit) ->
    the blobs those searches could not read; `names`: from `concept_names`."""
    table = definitions(files)
    links = []
    for f in files:
        family = family_of(f.language)
        defs = table.get((f.repo, f.commit, family), {})
        done = searched.get((f.repo, f.commit, family), set())
        blobs = sorted({b.blob for b in unreadable.get((f.repo, f.commit), [])})
        for fn in f.functions:
            for call in fn.calls:
                links.append(link(fn, call, defs.get(call.name, []), call.name in done, blobs, names))
    return links


def link(caller, call: Call, candidates: list[Definition], searched: bool, missing: list[str],
         names: dict[str, list[str]]) -> Link:
    """The Link of one call site given the definitions of its name (the rule above)."""
    targets = narrow(call, candidates)
    if not searched:
        status = "unsearched"
    elif len(targets) == 1:
        status = "resolved"
    elif targets:
        status = "ambiguous"
    else:
        status = "unknown" if missing else "external"
    concepts = [] if targets else concepts_for(call, names)
    return Link(caller, call, status, targets, concepts, list(missing))


def narrow(call: Call, candidates: list[Definition]) -> list[Definition]:
    """Rules 2 and 3: by the written scope, then by the number of arguments."""
    out = list(candidates)
    if call.qualifier and out:
        want = f"{call.qualifier}::{call.name}"
        scoped = [d for d in out if d.qualified == want or d.qualified.endswith("::" + want)]
        out = scoped or out
    if len(out) > 1:
        fit = [d for d in out if d.accepts(call.args)]
        out = fit or out
    return out


def concepts_for(call: Call, names: dict[str, list[str]]) -> list[str]:
    found = set(names.get(call.name, []))
    if call.qualifier:
        found |= set(names.get(f"{call.qualifier}::{call.name}", []))
    return sorted(found)
