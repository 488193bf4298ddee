"""Reading a program's screen in a real terminal (tmux), for the end-to-end UI tests.

Every test process has its own tmux server (`TMUX`: a socket named after the process) that
stays up when it has no session (`exit-empty off`). On the shared default server, a test
that closed the last session raced the next `new-session` of another run on the same
machine, which then failed with "server exited unexpectedly".
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import time
from pathlib import Path

TMUX = ["tmux", "-L", f"swedeck-tests-{os.getpid()}"]


def _start_server() -> None:
    if shutil.which("tmux") is None:
        return
    # The panes inherit the server's environment: from a terminal (or under pytest) COLUMNS and
    # LINES are set, and Textual would take them over the pane's real size.
    clean = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    subprocess.run([*TMUX, "start-server", ";", "set-option", "-g", "exit-empty", "off"], capture_output=True,
                   env=clean)
    socket = subprocess.run([*TMUX, "display-message", "-p", "#{socket_path}"], capture_output=True,
                            text=True).stdout.strip()

    def stop() -> None:  # ours alone, and its socket file
        subprocess.run([*TMUX, "kill-server"], capture_output=True)
        if socket:
            Path(socket).unlink(missing_ok=True)

    atexit.register(stop)


_start_server()


def capture(session: str) -> str:
    return subprocess.run([*TMUX, "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def wait_for_text(session: str, text: str, timeout: float = 30) -> str:
    """The screen once `text` is on it; fails with the last screen after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def send_keys(session: str, *keys: str) -> None:
    subprocess.run([*TMUX, "send-keys", "-t", session, *keys], check=True)


def exit_code(done: Path, timeout: float = 15) -> str:
    """What the command wrote to `done` (`...; echo $? > done`) once it ended."""
    deadline = time.monotonic() + timeout
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not done.exists():
        raise AssertionError(f"the command did not end within {timeout} s")
    return done.read_text().strip()
