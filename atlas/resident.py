"""The resident process: one long-running `atlas` per cache folder that answers the hot command lines
(`atlas query`, `atlas where`, `atlas source`) for any data folder, so that a query pays neither the
imports nor the check of every data file's stamp. Started by `atlas daemon start`; the console script
(atlas.launch) asks it first when its socket is there, and answers by itself when it is not, when it
does not answer, or when it declines.

- **The same answers.** The resident process runs the console script's own hot paths
  (atlas.fastpaths) with the caller's arguments, working folder and environment, and tells the
  faces whether the caller's standard output is a terminal (colours) and how wide it is. Anything
  the hot paths leave to click, and any failure, is declined, and the caller answers it itself.
- **Fresh data.** Each data folder is watched (atlas.watch) before its files are first checked;
  while no file event has arrived since, the check is skipped. Any event, and any folder that cannot
  be watched soundly (a symbolic link or a hard-linked file inside, a network filesystem), means the
  files are checked as a query checks them.
- **The same code.** A caller from another package folder or another Python is declined; a resident
  process whose package sources changed on disk (their sizes and times) since it started declines and
  exits.
- **One user.** The socket (`<cache>/resident.sock`) is created with mode 0600 and, on Linux, the
  caller's user id is checked (SO_PEERCRED); requests are marshalled tuples.
- **Its own end.** It exits after `--idle` seconds without a request (default 30 minutes), on
  `atlas daemon stop`, or on SIGTERM, and removes its socket.

One request at a time: a second caller waits for the first answer (the environment, the working
folder and standard output are the process's own, set per request).
"""
from __future__ import annotations

import marshal
import os
import sys

PROTOCOL = 1
IDLE_S = 1800.0
_MAX_REQUEST = 1 << 24
_SOCKET_MAX = 107  # bytes in an AF_UNIX path (sun_path less its final NUL)


class Reply:
    """What the resident process printed during the command, and the command's answer (out, err,
    code: what atlas.launch writes). A plain class: `typing`'s import costs more than the round trip."""

    __slots__ = ("printed_out", "printed_err", "out", "err", "code")

    def __init__(self, printed_out: str, printed_err: str, out: str, err: str, code: int) -> None:
        self.printed_out, self.printed_err = printed_out, printed_err
        self.out, self.err, self.code = out, err, code


def socket_path() -> str:
    from .cachefolder import cache_folder

    return os.path.join(cache_folder(), "resident.sock")


def _code() -> tuple[str, str]:
    """Which code a process runs: its package folder and its Python (the resident process also
    checks that the package's sources on disk are those it started with)."""
    return os.path.dirname(os.path.abspath(__file__)), sys.version


# --------------------------------------------------------------------------------------------------
# The caller's side
# --------------------------------------------------------------------------------------------------

def ask(argv: list[str]) -> Reply | None:
    """The resident process's answer to `argv`, or None (none runs, it declined, or it failed)."""
    if os.environ.get("ATLAS_RESIDENT") == "0":
        return None
    path = socket_path()
    if not os.path.exists(path):
        return None
    env = dict(os.environ)
    _terminal_width(env)
    request = ("answer", _code(), argv, os.getcwd(), env, _isatty(sys.stdout), _isatty(sys.stderr))
    reply = _call(path, request)
    if not reply or reply[0] != "answered":
        return None
    return Reply(*reply[1:])


def _isatty(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def _terminal_width(env: dict) -> None:
    """The terminal width the caller's own process would draw for (atlas.render.term_width reads
    $COLUMNS, else the terminal of standard output), given to the resident process as $COLUMNS."""
    try:
        if int(env.get("COLUMNS", "0")) > 0:
            return
    except ValueError:
        pass
    try:
        env["COLUMNS"] = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        pass


def _call(path: str, request: tuple, timeout: float | None = None):
    """Send one request and read its reply; None when nothing answers."""
    import _socket  # (the C module: `socket`'s import costs a query more than the whole round trip)

    try:
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, AttributeError):  # no Unix sockets here
        return None
    try:
        s.settimeout(2.0)
        s.connect(path)
        s.settimeout(timeout)
        _send(s, (PROTOCOL, *request))
        return _receive(s)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    finally:
        s.close()


def _send(s, value) -> None:
    body = marshal.dumps(value)
    s.sendall(len(body).to_bytes(4, "big") + body)


def _receive(s):
    head = _exactly(s, 4)
    size = int.from_bytes(head, "big")
    if size > _MAX_REQUEST:
        raise ValueError("message too large")
    return marshal.loads(_exactly(s, size))


def _exactly(s, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = s.recv(min(size - got, 1 << 20))
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------------------------------
# Starting, stopping, asking how it is
# --------------------------------------------------------------------------------------------------

def status() -> dict | None:
    """pid, start time (UTC, ISO), answers given, the data folders it watches (each "watched" or why
    its files are checked on every answer) and the idle limit; None when none answers."""
    reply = _call(socket_path(), ("status",), timeout=10.0)
    if not reply or reply[0] != "status":
        return None
    return reply[1]


def start(data_dirs: list[str], idle: float) -> tuple[dict, bool]:
    """Start a resident process for this cache folder (already running: its status, False). Each
    of `data_dirs` is opened, watched and checked before it reports ready. Raises AtlasError when
    it cannot start, with the end of its log."""
    import subprocess
    import time

    from .cache import cache_dir
    from .errors import AtlasError, Location

    known = status()
    if known is not None:
        return known, False
    path = socket_path()
    if len(os.fsencode(path)) > _SOCKET_MAX:
        raise AtlasError(f"the cache folder's path is too long for a socket ({len(os.fsencode(path))} bytes, "
                         f"at most {_SOCKET_MAX})", Location(path), "set ATLAS_CACHE to a shorter folder")
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "resident.log"
    with open(log, "ab") as err:
        child = subprocess.Popen([sys.executable, "-m", "atlas.resident", "--idle", repr(float(idle)),
                                  *[os.path.abspath(d) for d in data_dirs]],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                 start_new_session=True, close_fds=True,
                                 cwd=os.path.dirname(_code()[0]))  # `-m` imports this very package
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
            raise AtlasError("the resident process stopped while starting: " + " / ".join(tail or ["(no log)"]),
                             Location(str(log)), "see the log")
        now = status()
        if now is not None:
            return now, True
        time.sleep(0.05)
    child.kill()
    raise AtlasError("the resident process did not start within 600 s", Location(str(log)), "see the log")


def stop() -> dict | None:
    """Stop the resident process of this cache folder and wait until its socket is gone; its last
    status, or None when none was running."""
    import time

    path = socket_path()
    reply = _call(path, ("stop",), timeout=60.0)
    if not reply or reply[0] != "stopping":
        return None
    deadline = time.monotonic() + 60
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    return reply[1]


# --------------------------------------------------------------------------------------------------
# The resident process
# --------------------------------------------------------------------------------------------------

class _Printed:
    """Standard output or error of one request: kept, and a terminal when the caller's is one."""

    def __init__(self, tty: bool) -> None:
        import io

        self.buffer, self.tty = io.StringIO(), tty

    def write(self, text: str) -> int:
        return self.buffer.write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty

    @property
    def encoding(self) -> str:
        return "utf-8"


class _Server:
    def __init__(self, idle: float) -> None:
        import time

        from . import cache, index
        from .paths import PACKAGE_DIR

        self.idle, self.answered, self.code = idle, 0, _code()
        self.sources = cache.source_stamps(PACKAGE_DIR)
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            from .watch import Watcher

            index.WATCH = Watcher()
        except (OSError, AttributeError):  # no inotify here: every answer checks the files
            index.WATCH = None
        self.watch = index.WATCH

    def status(self) -> dict:
        watched = self.watch.state() if self.watch is not None else {}
        return {"pid": os.getpid(), "started": self.started, "answered": self.answered,
                "idle_s": self.idle, "folders": watched, "watcher": self.watch is not None}

    def warm(self, data_dirs: list[str]) -> None:
        """Import what answers need and open each data folder's index, cards and search."""
        from . import ask, commands, render, search  # noqa: F401  (imported once, here)
        from .errors import AtlasError
        from .opened import Opened

        for folder in data_dirs:
            try:
                opened = Opened(folder)
                opened.cards.exact("")
                opened.index
            except (AtlasError, OSError):
                continue  # a query for it reports the problem itself

    def serve(self, path: str) -> None:
        import gc
        import socket

        tmp = f"{path}.{os.getpid()}"
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        srv.bind(tmp)
        os.chmod(tmp, 0o600)
        srv.listen(16)
        os.replace(tmp, path)
        mine = os.stat(path).st_ino
        srv.settimeout(self.idle)
        gc.disable()
        try:
            while True:
                try:
                    conn, _ = srv.accept()
                except socket.timeout:
                    return
                with conn:
                    if not self.handle(conn):
                        return
                # after the reply (and only then: no collection pauses an answer), what the answer
                # opened is freed (an opened atlas and its card store refer to each other), so the
                # next update of the index finds no reader on the generation it replaces and updates
                # it in place instead of copying the database
                gc.collect()
        finally:
            srv.close()
            try:
                if os.stat(path).st_ino == mine:
                    os.unlink(path)
            except OSError:
                pass

    def handle(self, conn) -> bool:
        """Answer one request; False when the process should end."""
        conn.settimeout(10.0)
        try:
            if not _same_user(conn):
                return True
            request = _receive(conn)
            if not isinstance(request, tuple) or len(request) < 2 or request[0] != PROTOCOL:
                _send(conn, ("declined",))
                return True
            kind = request[1]
            if kind == "status":
                _send(conn, ("status", self.status()))
                return True
            if kind == "stop":
                _send(conn, ("stopping", self.status()))
                return False
            if kind != "answer" or len(request) != 8:
                _send(conn, ("declined",))
                return True
            same = self._code_unchanged()  # (one scan of the package's sources per answer)
            if tuple(request[2]) != self.code or not same:
                _send(conn, ("declined",))
                return same
            conn.settimeout(None)
            _send(conn, self.answer(*request[3:]))
        except (OSError, EOFError, ValueError, TypeError):
            pass  # the caller went away or sent something else: it answers by itself
        return True

    def _code_unchanged(self) -> bool:
        from . import cache
        from .paths import PACKAGE_DIR

        return cache.source_stamps(PACKAGE_DIR) == self.sources

    def answer(self, argv, cwd, env, out_tty, err_tty) -> tuple:
        import contextlib

        from .fastpaths import answer

        saved_env, saved_cwd = dict(os.environ), os.getcwd()
        out, err = _Printed(out_tty), _Printed(err_tty)
        try:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result = answer(list(argv))
        except Exception:  # a fault the caller's own run will show it, with its traceback
            import traceback

            traceback.print_exc(file=sys.__stderr__)
            return ("declined",)
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
            os.chdir(saved_cwd)
        if result is None:
            return ("declined",)
        self.answered += 1
        return ("answered", out.buffer.getvalue(), err.buffer.getvalue(), result.out, result.err, result.code)


def _same_user(conn) -> bool:
    import socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the socket's mode (0600) is the check
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1] == os.getuid()


def main(argv: list[str]) -> int:
    """`python -m atlas.resident [--idle SECONDS] [DATA ...]` (what `atlas daemon start` runs)."""
    import signal

    idle = IDLE_S
    if argv[:1] == ["--idle"]:
        idle, argv = float(argv[1]), argv[2:]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = _Server(idle)
    path = socket_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    server.warm(argv)  # (before the socket is there: a caller meanwhile answers by itself)
    server.serve(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
