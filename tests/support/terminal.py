"""Reading a program's screen in a real terminal (tmux), for the end-to-end UI tests."""

from __future__ import annotations

import subprocess
import time


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
