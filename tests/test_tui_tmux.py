"""The installed `swedeck demo` in a real terminal (tmux): approve a command, see its output."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from support.terminal import TMUX, capture, wait_for_text

pytestmark = pytest.mark.timeout(90)
SCRIPT = Path(sys.executable).parent / "swedeck"



@pytest.mark.skipif(shutil.which("tmux") is None or not SCRIPT.exists(), reason="needs tmux and the installed swedeck")
def test_demo_in_tmux_approves_a_command_and_shows_its_output(tmp_path):
    name = f"swedeck-test-{uuid.uuid4().hex[:8]}"
    env = f"SWEDECK_CONFIG_DIR={tmp_path}/config SWEDECK_DATA_DIR={tmp_path}/data SWEDECK_CACHE_DIR={tmp_path}/cache"
    subprocess.run([*TMUX, "new", "-d", "-s", name, "-x", "160", "-y", "48",
                    f"env {env} {SCRIPT} demo -c model.model_kwargs.tokens_per_second=0"], check=True)
    try:
        wait_for_text(name, "waiting for you: y approve")
        assert "CONFIRM" in capture(name)
        subprocess.run([*TMUX, "send-keys", "-t", name, "y"], check=True)
        screen = wait_for_text(name, "test_calc.py")
        assert "exit 0" in screen
        subprocess.run([*TMUX, "send-keys", "-t", name, "C-q"], check=True)
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)
