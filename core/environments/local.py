"""`local`: a bash session on this machine, in `cwd` (default: the current folder)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

from ..config import EnvironmentConfig
from ..redact import Redactor
from .channel import ReaderQueue
from .session_environment import SessionEnvironment

_WATCHDOG = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the session's orphans come to us
libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: swedeck gone (even by SIGKILL) -> SIGTERM

def descendants():
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    parents[int(name)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= frontier
    return found

def end(*_):
    for _ in range(5):
        pids = descendants()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
    os._exit(0)

signal.signal(signal.SIGTERM, end)
if os.getppid() == 1:
    end()
shell = os.fork()
if shell == 0:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these; the shell and its commands must not
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(0)
while True:
    try:
        pid, _ = os.wait()
    except ChildProcessError:
        end()
    except InterruptedError:
        continue
    if pid == shell:
        end()
"""
"""The local shell's parent: a child subreaper, so a program that leaves the command's tree
(double fork, `setsid`) stays in the session's tree and a stop still finds it; and a watchdog
that kills the whole tree when swedeck dies, however it dies (the kernel tells it: a parent-
death signal), or when the shell exits."""


def _shell_argv() -> list[str]:
    bash = ["bash", "--norc", "--noprofile"]
    if not sys.platform.startswith("linux"):
        return bash  # no subreapers: such orphans escape a stop (docs/security.md)
    return [sys.executable, "-I", "-S", "-c", _WATCHDOG, *bash]


class LocalChannel:
    orphans_are_ours = False  # the host's init adopts the person's own programs too
    tree_root: int | None = None

    def __init__(self, env: dict[str, str], cwd: str):
        # A session of its own: a Ctrl+C in the UI's terminal does not reach the commands.
        self._process = subprocess.Popen(
            _shell_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=cwd, env=env, start_new_session=True,
        )
        self.tree_root = self._process.pid if sys.platform.startswith("linux") else None
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        self._reader = ReaderQueue(lambda: os.read(fd, 65_536), "swedeck-local-shell")

    def send(self, data: bytes) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(data)
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the shell died; `recv` reports EOF and the session restarts

    def recv(self, timeout: float) -> bytes | None:
        return self._reader.get(timeout)

    def run_helper(self, argv: list[str], timeout: float) -> tuple[int, bytes]:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return done.returncode, done.stdout + done.stderr

    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        self._reader.stop()
        if self.tree_root is not None:  # the watchdog ends the whole tree, setsid'ed programs too
            try:
                self._process.terminate()
                self._process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self._process.pid, 9)  # the shell and whatever it left behind in its session
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._process.wait(timeout=10)


class LocalEnvironment(SessionEnvironment):
    def __init__(self, config: EnvironmentConfig, session_id: str, redactor: Redactor | None = None):
        super().__init__(config, session_id, redactor)
        self.cwd = str(Path(self.config.cwd or os.getcwd()).resolve())
        self.description = f"local (commands run on this host) {self.cwd}"

    def _open_channel(self) -> LocalChannel:
        env = {name: value for name, value in os.environ.items() if name != "SWEDECK_CMD"}
        return LocalChannel({**env, **self.session_env()}, self.cwd)

    def get_template_vars(self) -> dict[str, object]:
        return {**super().get_template_vars(), **platform.uname()._asdict()}

    def _initial_cwd(self) -> str | None:
        return None  # the shell starts there

    def _resolve(self, path: str) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else Path(self._current_cwd() or self.cwd) / candidate

    def read_file(self, path: str) -> str:
        return self._resolve(path).read_text(encoding="utf-8", errors="replace")

    def write_file(self, path: str, text: str) -> None:
        target = self._resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
