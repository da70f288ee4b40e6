"""Generated histories for the oracle tests that build repositories: the `git fast-import` stream
(every commit writes its whole tree, deleteall + M; the last one is master's tip and each other
commit has a branch of its own, so that nothing is unreachable), and a repack without one blob."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


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


def drop_blob(path: Path, pick: int, sh: Callable[..., bytes]) -> str | None:
    """Repack the repository without one of its blobs (chosen by `pick`); its sha, or None when it
    has none. `sh(cwd, *git_args, input=None, ok=(0,))` runs git the way the calling test does."""
    listing = sh(path, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    objs = [line.split() for line in listing.decode().splitlines()]
    blobs = sorted(o for o, t in objs if t == "blob")
    if not blobs:
        return None
    gone = blobs[pick % len(blobs)]
    keep = "".join(f"{o}\n" for o, _t in objs if o != gone).encode()
    packs = list((path / "objects" / "pack").glob("pack-*"))
    sh(path, "pack-objects", "-q", str(path / "objects" / "pack" / "pack"), input=keep)
    for p in packs:
        p.unlink()
    for loose in (path / "objects").glob("[0-9a-f][0-9a-f]/*"):  # small imports stay loose
        loose.unlink()
    assert sh(path, "cat-file", "-e", gone, ok=(0, 1, 128)) == b""
    return gone
