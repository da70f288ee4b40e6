"""The one way the atlas runs git: every git process of the package (the harvester's history scan, the
code index, the public-file scan, the pin checks, `refresh --clone`) starts here, with one environment:

- no network unless the caller asks for it: `GIT_ALLOW_PROTOCOL=none` and `GIT_NO_LAZY_FETCH=1` (a
  partial clone reports a missing object instead of fetching it), and no system-wide git config;
  a caller that needs the network (`refresh --clone`, `refresh --fetch-missing`) names the transports
  it allows, and then git reads its usual configuration (proxies, credential helpers);
- no prompt (`GIT_TERMINAL_PROMPT=0`), no pager, no replace objects, the C locale (git's messages are
  read by the callers), and `core.fsmonitor=false` (no daemon or hook is started by a read);
- `run` keeps at most `limit` bytes of standard output (the process is stopped past it, and the
  caller gets an AtlasError naming the repository) and the first `MAX_ERRORS` bytes of standard error.

`tests/test_gitrun.py` fails when another module of the package starts git through subprocess.
"""
from __future__ import annotations

import os
import subprocess
import threading
from typing import IO, NamedTuple, Sequence

from .errors import AtlasError, Location

ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1", "GIT_PAGER": "cat", "PAGER": "cat",
       "LC_ALL": "C", "LANGUAGE": "C"}
OFFLINE = {"GIT_ALLOW_PROTOCOL": "none", "GIT_NO_LAZY_FETCH": "1", "GIT_CONFIG_NOSYSTEM": "1"}
# settings every command runs with (the output formats the callers parse, whatever the user's config)
CONFIG = (
    "-c", "core.fsmonitor=false", "-c", "core.quotePath=false", "-c", "core.pager=cat", "-c", "color.ui=never",
    "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false",
    "-c", "log.showRoot=true", "-c", "log.showSignature=false", "-c", "log.diffMerges=first-parent",
    "-c", "grep.lineNumber=false", "-c", "grep.fullName=true", "-c", "grep.patternType=fixed",
)
MAX_OUTPUT = 1 << 31  # bytes of standard output `run` keeps by default
MAX_ERRORS = 1 << 20  # bytes of standard error kept (the rest is read and dropped)
CHUNK = 1 << 20


def environment(network: Sequence[str] = ()) -> dict[str, str]:
    """The environment git runs with: the caller's, with ENV, and OFFLINE unless `network` names the
    transports git may use (then `GIT_ALLOW_PROTOCOL` lists them)."""
    env = {**os.environ, **ENV}
    if network:
        env["GIT_ALLOW_PROTOCOL"] = ":".join(network)
        for name in ("GIT_NO_LAZY_FETCH", "GIT_CONFIG_NOSYSTEM"):
            env.pop(name, None)
    else:
        env.update(OFFLINE)
    return env


class Result(NamedTuple):
    status: int
    out: bytes
    err: bytes


class Git:
    """git against one git directory (bare or not, with or without a config file), or with no
    repository at all (`gitdir=None`: `git clone`). `name` is what error messages call it."""

    def __init__(self, gitdir=None, name: str = "", network: Sequence[str] = (), config: Sequence[str] = ()):
        self.gitdir = None if gitdir is None else str(gitdir)
        self.name = name or self.gitdir or "git"
        self.network = tuple(network)
        self.config = tuple(config)
        self.env = environment(self.network)

    def argv(self, *args: str) -> list[str]:
        where = ["--git-dir", self.gitdir, "--no-replace-objects"] if self.gitdir is not None else []
        return ["git", "--no-pager", *where, *CONFIG, *self.config, *args]

    def popen(self, *args: str, stdin=None, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
              **kwargs) -> subprocess.Popen:
        """git started with `args` (a stream the caller reads and ends: `close`); standard input is
        empty unless `stdin` says otherwise."""
        try:
            return subprocess.Popen(self.argv(*args), stdin=subprocess.DEVNULL if stdin is None else stdin,
                                    stdout=stdout, stderr=stderr, env=self.env, **kwargs)
        except FileNotFoundError:
            raise AtlasError("git is not installed or not on PATH", Location(self.name)) from None
        except OSError as exc:
            raise AtlasError(f"cannot run git: {exc.strerror or exc}", Location(self.name)) from None

    def run(self, *args: str, input: bytes | None = None, limit: int = MAX_OUTPUT) -> Result:
        """Run git to its end: (exit status, standard output, the start of standard error)."""
        proc = self.popen(*args, stdin=subprocess.PIPE if input is not None else None)
        errors: list[bytes] = []
        threads = [threading.Thread(target=_drain, args=(proc.stderr, errors, MAX_ERRORS), daemon=True)]
        if input is not None:
            threads.append(threading.Thread(target=_feed, args=(proc.stdin, input), daemon=True))
        for t in threads:
            t.start()
        try:
            out = _collect(proc.stdout, limit)
        finally:
            if proc.poll() is None and proc.stdout is not None and not proc.stdout.closed:
                proc.kill()
            proc.wait()
            for t in threads:
                t.join()
            close(proc)
        if out is None:
            raise AtlasError(f"git {args[0] if args else ''} wrote more than {limit:,} bytes; it was stopped",
                             Location(self.name))
        return Result(proc.returncode, out, b"".join(errors))


def _collect(stream: IO[bytes] | None, limit: int) -> bytes | None:
    """Everything `stream` gives, or None past `limit` bytes."""
    assert stream is not None
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read1(CHUNK) if hasattr(stream, "read1") else stream.read(CHUNK)
        if not chunk:
            stream.close()
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


def _drain(stream: IO[bytes] | None, into: list[bytes], keep: int) -> None:
    assert stream is not None
    kept = 0
    try:
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                return
            if kept < keep:
                into.append(chunk[:keep - kept])
                kept += len(into[-1])
    except (OSError, ValueError):
        return


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    assert stream is not None
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # git stopped reading (it failed, or the output bound stopped it): its status says why
    finally:
        try:
            stream.close()
        except (BrokenPipeError, OSError):
            pass


def close(proc: subprocess.Popen) -> None:
    """Stop `proc` if it still runs, wait for it and close its pipes."""
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            try:
                stream.close()
            except (BrokenPipeError, OSError):
                pass
