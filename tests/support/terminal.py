"""Reading a program's screen in a real terminal (tmux), for the end-to-end UI tests."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def capture(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


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
    subprocess.run(["tmux", "send-keys", "-t", session, *keys], check=True)


def exit_code(done: Path, timeout: float = 15) -> str:
    """What the command wrote to `done` (`...; echo $? > done`) once it ended."""
    deadline = time.monotonic() + timeout
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not done.exists():
        raise AssertionError(f"the command did not end within {timeout} s")
    return done.read_text().strip()
