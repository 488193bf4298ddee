"""The installed `swedeck replay` in a real terminal (tmux): first frame, a key, quit."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import MINI_FIXTURE, swedeck_command
from support.terminal import wait_for_text

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")



def test_replay_in_tmux(tmp_path):
    session = f"swedeck-replay-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(MINI_FIXTURE)]) + f"; echo $? > {done}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
    try:
        wait_for_text(session, "step 1/", timeout=20)
        subprocess.run(["tmux", "send-keys", "-t", session, "$"], check=True)
        screen = wait_for_text(session, "mini-swe-agent · step", timeout=20)
        total = re.search(r"step \d+/(\d+)", screen).group(1)
        wait_for_text(session, f"step {total}/{total}", timeout=20)
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        deadline = time.monotonic() + 10
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.read_text().strip() == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
