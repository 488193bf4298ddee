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

_SUBREAPER = ("import ctypes, os, sys; ctypes.CDLL(None).prctl(36, 1, 0, 0, 0); "  # PR_SET_CHILD_SUBREAPER
              "os.execvp(sys.argv[1], sys.argv[1:])")
"""Starts the shell as a child subreaper: a program that leaves the command's tree (double fork,
`setsid -f`) is adopted by the shell instead of init, so a command's stop still finds it."""


def _shell_argv() -> list[str]:
    bash = ["bash", "--norc", "--noprofile"]
    if not sys.platform.startswith("linux"):
        return bash  # no subreapers: such orphans escape a stop (docs/security.md)
    return [sys.executable, "-I", "-S", "-c", _SUBREAPER, *bash]


class LocalChannel:
    orphans_are_ours = False  # the host's init adopts the person's own programs too

    def __init__(self, env: dict[str, str], cwd: str):
        # A session of its own: a Ctrl+C in the UI's terminal does not reach the commands.
        self._process = subprocess.Popen(
            _shell_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=cwd, env=env, start_new_session=True,
        )
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
