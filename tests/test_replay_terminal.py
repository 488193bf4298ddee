"""The installed `swedeck replay` in a real terminal (tmux): first frame, a key, quit."""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid

import pytest

from conftest import FIXTURES, MINI_FIXTURE, SWEAGENT_OLDER_FIXTURE, swedeck_command
from support.terminal import TMUX, capture, exit_code, send_keys, wait_for_text

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")



def test_replay_in_tmux(tmp_path):
    session = f"swedeck-replay-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(MINI_FIXTURE)]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
    try:
        wait_for_text(session, "step 1/", timeout=20)
        send_keys(session, "$")
        screen = wait_for_text(session, "mini-swe-agent · step", timeout=20)
        total = re.search(r"step \d+/(\d+)", screen).group(1)
        wait_for_text(session, f"step {total}/{total}", timeout=20)
        send_keys(session, "q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


def test_the_replay_prices_each_step_with_the_configs_model_prices_in_tmux(tmp_path):
    """`model.prices` prices the replay's steps as it prices `--print` (the UI's settings dropped
    them: each step was priced with litellm's map alone)."""
    import json

    path = FIXTURES / "agents" / "atif" / "v1.5-plain.json"
    prices = ["-c", "'model.prices={\"openai/gpt-5\": {\"input\": 1000, \"output\": 2000}}'"]
    printed = subprocess.run([*swedeck_command(), "replay", str(path), "--print", "--json", "-c",
                              'model.prices={"openai/gpt-5": {"input": 1000, "output": 2000}}'],
                             capture_output=True, text=True, timeout=60, check=True)
    first = json.loads(printed.stdout.splitlines()[1])
    assert first["step"] == 1 and first["cost_usd"] > 0.1  # priced by the config, not litellm's map
    session = f"swedeck-prices-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(path), *prices]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", command], check=True)
    try:
        screen = wait_for_text(session, f"${first['cost_usd']:.4f}", timeout=30)  # the step list's column
        assert re.search(rf"1 ls +\${first['cost_usd']:.4f}", screen), screen
        send_keys(session, "q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


def test_an_older_sweagent_file_shows_its_last_observation_in_tmux(tmp_path):
    # Its `history` ends before the submitted diff; SWE-agent's `trajectory` list has it.
    session = f"swedeck-older-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(SWEAGENT_OLDER_FIXTURE), "--step", "-1"]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
    try:
        screen = wait_for_text(session, "step 5/5", timeout=20)
        assert "swe-agent" in screen
        wait_for_text(session, "diff --git a/calc.py", timeout=20)
        send_keys(session, "h")
        screen = wait_for_text(session, "step 4/5", timeout=20)
        assert "0" in screen and "(no output)" not in screen
        send_keys(session, "q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


def test_fork_from_the_replay_ui_continues_live_in_tmux(openai_server, tmp_path):
    # SPEC §11.3 end to end: the installed command, a real terminal, the scripted model server.
    from support.openai_server import Turn
    from support.reliability import SUBMIT
    from swedeck.core.replay.fork import fork_history
    from swedeck.core.trajectory.loader import load_trajectory

    openai_server.script(Turn.bash_tool("echo forked-from-step-3"), Turn.bash_tool(SUBMIT))
    output = tmp_path / "fork.traj.json"
    session = f"swedeck-fork-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    settings = [f"model.model_kwargs.api_base={openai_server.url}",
                "model.cost_tracking=ignore_errors", f"run.output={output}", f"environment.cwd={tmp_path}"]
    args = [*swedeck_command(), "replay", str(MINI_FIXTURE), "--step", "3", "-m", "hosted_vllm/forked"] + [
        f"-c {s}" for s in settings]
    env = f"SWEDECK_CONFIG_DIR={tmp_path}/config SWEDECK_DATA_DIR={tmp_path}/data SWEDECK_CACHE_DIR={tmp_path}/cache"
    command = f"env {env} " + " ".join(args) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "140", "-y", "40", command], check=True)
    try:
        wait_for_text(session, "step 3/", timeout=20)
        send_keys(session, "f")
        screen = wait_for_text(session, "echo forked-from-step-3", timeout=60)  # the live UI, asking to run it
        assert "continuing from" in screen and "(no task yet)" not in screen
        wait_for_text(session, "waiting for you", timeout=20)
        send_keys(session, "y")
        wait_for_text(session, "COMPLETE_TASK_AND_SUBMIT", timeout=30)
        # the command shows before it is asked about, and a `y` before the ask is not an answer:
        # wait for the ask itself (the first command's line says "ran" by now)
        wait_for_text(session, "[waiting for you: y approve", timeout=30)
        send_keys(session, "y")
        wait_for_text(session, "to type a follow-up task", timeout=30)
        wait_for_text(session, " Type ", timeout=30)  # the footer offers the line once it is asked
        # `i` opens the line and Enter, typed right after it (one write), sends it empty: the
        # session ends. The Enter must not be spent opening the line a second time.
        send_keys(session, "i", "Enter")
        wait_for_text(session, "session ended: Submitted", timeout=30)
        send_keys(session, "C-q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
    history = fork_history(load_trajectory(MINI_FIXTURE), 3)
    first = openai_server.requests[0]["messages"]
    assert len(first) == len(history) and first[-1]["content"] == history[-1].text
    forked = load_trajectory(output)
    assert forked.messages[: len(history)] == history
    assert any(step.commands == ["echo forked-from-step-3"] for step in forked.steps)


def test_terminal_escapes_in_a_trajectory_are_shown_not_obeyed(tmp_path):
    # An OSC 0 (window title) and an OSC 52 (clipboard) in a model's answer, a command's output
    # and the task: the terminal's title and clipboard stay as they were, the sequences show.
    from support.replay import add_step, start_writer

    title, clip = "\x1b]0;HACKED-TITLE\x07", "\x1b]52;c;SGFja2VkQ2xpcGJvYXJk\x07"  # "HackedClipboard"
    writer = start_writer(tmp_path / "hostile", task=f"fix it {title}")
    add_step(writer, 1, thought=f"Thinking {clip} and {title}", output=f"out {clip} {title}")
    writer.close()
    session = f"swedeck-escapes-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(writer.path)]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
    subprocess.run([*TMUX, "set-option", "-t", session, "set-clipboard", "on"], check=True)
    try:
        screen = wait_for_text(session, "step 1/1", timeout=20)
        wait_for_text(session, "␛]52;c;", timeout=20)  # drawn as symbols
        pane_title = subprocess.run([*TMUX, "display-message", "-p", "-t", session, "#{pane_title}"],
                                    capture_output=True, text=True).stdout
        buffers = subprocess.run([*TMUX, "list-buffers"], capture_output=True, text=True).stdout
        assert "HACKED" not in pane_title, pane_title
        assert "HackedClipboard" not in buffers
        assert "␛]0;HACKED-TITLE␇" in capture(session) or "␛]0;HACKED-TITLE␇" in screen
        send_keys(session, "q")
        assert exit_code(done) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


def test_the_tmux_tests_pass_the_same_from_a_terminal_that_sets_columns_and_lines(tmp_path):
    """A terminal exports its size; the panes the tests start must not inherit it (issue 32)."""
    import os
    import sys

    env = {**os.environ, "COLUMNS": "40", "LINES": "10"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                             f"{__file__}::test_replay_in_tmux",
                             f"{__file__}::test_an_older_sweagent_file_shows_its_last_observation_in_tmux"],
                            env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]


@pytest.mark.parametrize("command", [
    ["replay", "{missing}"],
    ["replay", "{missing}", "--print"],
    ["replay", "{missing}#2"],
    ["prompt", "{missing}", "--step", "1"],
    ["export", "{missing}", "-o", "{out}"],
    ["diff", "{missing}", "{missing}"],
    ["diff", "{missing}", "{missing}", "--print"],
])
def test_a_missing_path_is_one_line_and_exit_2_in_every_subcommand_without_a_terminal(tmp_path, command):
    missing = str(tmp_path / "no-such.traj.json")
    argv = [part.format(missing=missing, out=tmp_path / "out.html") for part in command]
    result = subprocess.run([*swedeck_command(), *argv], capture_output=True, text=True, timeout=60,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.strip() == f"swedeck: {argv[1]}: no such file or folder"
    assert result.stdout == ""
    assert not (tmp_path / "out.html").exists()


def test_q_leaves_at_once_while_a_huge_file_is_still_read(tmp_path):
    """Issue 62.3: `q` right after a huge file opens waited for the token curve's worker, which
    reads every step (asyncio's executor is joined as the app ends): seconds, minutes under load."""
    import json
    import time

    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for number in range(15_000):
        messages += [{"role": "assistant", "content": f"step {number}\n```bash\necho {number}\n```"},
                     {"role": "user", "content": "<returncode>0</returncode>\n<output>\n" + "x" * 2900 + "\n</output>"}]
    path = tmp_path / "big.traj.json"
    path.write_text(json.dumps({"messages": messages, "info": {"exit_status": "Submitted"},
                                "trajectory_format": "mini-swe-agent-1"}))
    session = f"swedeck-quit-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "replay", str(path)]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", command], check=True)
    try:
        wait_for_text(session, "step 1/15000", timeout=60)
        pressed = time.monotonic()
        send_keys(session, "q")
        assert exit_code(done, timeout=30) == "0"
        took = time.monotonic() - pressed
        assert took < 5, took  # 0.3 s here; the whole curve took tens of seconds before
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
