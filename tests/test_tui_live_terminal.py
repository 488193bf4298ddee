"""The installed `swedeck run` (the live UI) in a real terminal (tmux) against the scripted
server: hostile escapes in a model's answer and a command's output are shown, never obeyed,
and the signals a terminal sends (closing it: SIGHUP; `kill`: SIGTERM) end the session with
its final file and no container left behind."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import uuid

import pytest

from conftest import swedeck_command
from support.openai_server import Turn
from support.reliability import SUBMIT
from support.terminal import TMUX, capture, wait_for_text
from support.waiting import exited, wait_until

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]
TITLE, CLIP = "\x1b]0;HACKED-TITLE\x07", "\x1b]52;c;SGFja2VkQ2xpcGJvYXJk\x07"  # "HackedClipboard"


def start_live_ui(server, tmp_path, *extra: str) -> str:
    """A tmux session running the live UI in yolo mode; `tmp_path/pid` holds its process id."""
    name = f"swedeck-live-{uuid.uuid4().hex[:8]}"
    argv = [*swedeck_command(), "run", "--mode", "yolo", "-m", "hosted_vllm/scripted",
            "-c", f"model.model_kwargs={{api_base: '{server.url}'}}", "-c", "model.cost_tracking=ignore_errors",
            "--cwd", str(tmp_path), "-o", str(tmp_path / "run.traj.json"), *extra, "do the task"]
    env = f"SWEDECK_CONFIG_DIR={tmp_path}/config SWEDECK_DATA_DIR={tmp_path}/data SWEDECK_CACHE_DIR={tmp_path}/cache"
    # -u: pytest exports COLUMNS/LINES, which Textual would take over the terminal's real size.
    command = f"echo $$ > {tmp_path}/pid; exec env -u COLUMNS -u LINES {env} {shlex.join(argv)}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", name, "-x", "140", "-y", "40", command], check=True)
    subprocess.run([*TMUX, "set-option", "-t", name, "set-clipboard", "on"], check=True)
    return name


def test_escapes_from_the_model_and_commands_are_shown_not_obeyed_in_the_live_ui(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool("printf 'out \\033]0;HACKED-OUT\\007 \\033]52;c;SGFja2VkQ2xpcGJvYXJk\\007\\n'",
                       text=f"Looking {TITLE} and {CLIP}"),
        Turn.bash_tool(SUBMIT),
    )
    name = start_live_ui(openai_server, tmp_path)
    try:
        wait_for_text(name, "␛]0;HACKED-TITLE␇", timeout=60)  # the model's escape, drawn as symbols
        wait_for_text(name, "The agent submitted", timeout=60)
        pane_title = subprocess.run([*TMUX, "display-message", "-p", "-t", name, "#{pane_title}"],
                                    capture_output=True, text=True).stdout
        buffers = subprocess.run([*TMUX, "list-buffers"], capture_output=True, text=True).stdout
        assert "HACKED" not in pane_title, pane_title
        assert "HackedClipboard" not in buffers
        assert "␛]52;c;" in capture(name)
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)


@pytest.mark.parametrize("how,env", [("SIGTERM", "local"), ("SIGHUP", "docker"), ("SIGINT", "local")])
def test_a_signal_to_the_live_ui_ends_the_session_with_its_record(openai_server, tmp_path, how, env):
    from support.docker_env import TEST_IMAGE, docker_client

    client = docker_client() if env == "docker" else None
    extra = ["--env", "docker", "--image", TEST_IMAGE] if client is not None else []
    openai_server.script(Turn.bash_tool("sleep 60"), Turn.bash_tool(SUBMIT))
    name = start_live_ui(openai_server, tmp_path, *extra)
    live, final = tmp_path / "run.traj.jsonl", tmp_path / "run.traj.json"
    try:
        wait_until(lambda: live.exists() and '"action"' in live.read_text(), timeout=60)
        session_id = json.loads(live.read_text().splitlines()[0])["session"]["id"]
        if client is not None:
            assert client.containers.list(filters={"label": f"swedeck.session={session_id}"})
        if how == "SIGHUP":  # the person closes the terminal
            subprocess.run([*TMUX, "kill-session", "-t", name], check=True)
        else:  # `kill`, or `kill -INT` (Ctrl+C in the UI is a key, but a signal may still come)
            os.kill(int((tmp_path / "pid").read_text()), getattr(signal, how))
        wait_until(lambda: final.exists(), timeout=60)
        pid = int((tmp_path / "pid").read_text())
        wait_until(lambda: exited(pid), timeout=30, what="the UI's process to exit")  # not left behind
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", name], capture_output=True)
    saved = json.loads(final.read_text())
    assert saved["info"]["exit_status"] == "Interrupted"
    if client is not None:
        wait_until(lambda: not client.containers.list(all=True, filters={"label": f"swedeck.session={session_id}"}),
                   timeout=30)
