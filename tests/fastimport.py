"""The `git fast-import` stream of a generated history, shared by the oracle tests that build
repositories: every commit writes its whole tree (deleteall + M), the last one is master's tip and
each other commit has a branch of its own, so that nothing is unreachable."""
from __future__ import annotations

from collections.abc import Callable


def commit_stream(commits, times: list[int], zones: list[str], body: Callable[[str, object], str]) -> list[bytes]:
    """`commits`: (parents, tree {file name: value}, time index, zone index) in order; `body(name, value)`
    is a file's text."""
    out = []
    for i, (parents, tree, t, z) in enumerate(commits):
        ref = "refs/heads/master" if i == len(commits) - 1 else f"refs/heads/c{i}"
        msg = f"c{i}".encode()
        out.append(f"commit {ref}\nmark :{i + 1}\n".encode())
        out.append(f"author A <a@x> {times[t]} {zones[z]}\ncommitter C <c@x> {times[t]} {zones[z]}\n".encode())
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        if parents:
            out.append(f"from :{parents[0] + 1}\n".encode())
            out += [f"merge :{p + 1}\n".encode() for p in parents[1:]]
        out.append(b"deleteall\n")
        for name, value in sorted(tree.items()):
            text = body(name, value).encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(text), text))
    return out
