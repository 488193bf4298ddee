"""SPEC §2, §9.5, §13 R1/S4: `swedeck run --headless` as a real process: progress lines,
JSON events, exit codes, Ctrl+C, and resuming after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import swedeck_command
from support.openai_server import Turn, Usage
from support.reliability import SUBMIT
from support.waiting import running_below, wait_until


def headless_args(server, tmp_path: Path, *extra: str) -> list[str]:
    return [
        *swedeck_command(), "run", "--headless", "-m", "hosted_vllm/scripted",
        "-c", f"model.model_kwargs={{api_base: '{server.url}'}}", "-c", "model.cost_tracking=ignore_errors",
        "-c", "model.retry.backoff_max_s=0.05", "--cwd", str(tmp_path), "-o", str(tmp_path / "run.traj.json"), *extra,
    ]


def test_headless_run_prints_progress_and_submits(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool("printf 'a\\033[31mred\\033[0m\\n'", text="Look \x1b]0;title\x07here", usage=Usage(100, 10)),
        Turn.bash_tool(f"{SUBMIT} && echo patch", usage=Usage(150, 10)),
    )
    result = subprocess.run(headless_args(openai_server, tmp_path, "fix it"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "step 1 |" in out and "step 2 |" in out
    assert "$ printf" in out and "ared" in out
    assert "\x1b" not in out and "\x07" not in out
    assert "swedeck: submitted; trajectory: " in out and str(tmp_path / "run.traj.json") in out
    saved = json.loads((tmp_path / "run.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted" and saved["info"]["submission"] == "patch\n"
    assert (tmp_path / "run.traj.json").stat().st_mode & 0o777 == 0o600


def test_headless_json_events(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server, tmp_path, "--json", "t"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    names = [e["event"] for e in events]
    assert names[0] == "StateChanged" and names[-1] == "SessionEnded"
    assert "QueryFinished" in names and "CommandFinished" in names and "StreamDelta" not in names
    assert events[-1]["exit_status"] == "Submitted"


def test_headless_needs_a_task_and_a_model(tmp_path):
    no_task = subprocess.run([*swedeck_command(), "run", "--headless", "-m", "x/y"], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
    assert no_task.returncode == 2 and "needs a task" in no_task.stderr
    no_model = subprocess.run([*swedeck_command(), "run", "--headless", "t", "-o", str(tmp_path / "a.traj.json")],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert no_model.returncode == 2 and no_model.stdout == ""
    # one line, the usage error itself (it was "stopped: the environment failed (... needs a model ...)")
    assert no_model.stderr.strip().splitlines() == [
        "swedeck: a live session needs a model: pass -m NAME (e.g. -m openai/gpt-4o) or set model.model_name"]


def test_the_ui_without_a_model_says_so_before_it_opens(tmp_path):
    # exit 2 and one line on stderr, with no UI drawn (stdout stays empty: no terminal escapes)
    done = subprocess.run([*swedeck_command(), "run", "t", "-o", str(tmp_path / "a.traj.json")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "needs a model: pass -m NAME" in done.stderr and done.stdout == ""


def test_step_limit_exits_3(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo 1"), Turn.bash_tool("echo 2"))
    result = subprocess.run(headless_args(openai_server, tmp_path, "--step-limit", "1", "t"), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "swedeck: stopped at a limit (step limit reached" in result.stdout


def test_ctrl_c_interrupts_with_130(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("sleep 30"))
    process = subprocess.Popen(headless_args(openai_server, tmp_path, "t"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    jsonl = tmp_path / "run.traj.jsonl"
    wait_until(lambda: jsonl.exists() and '"action"' in jsonl.read_text())
    wait_until(lambda: running_below(process.pid, ["sleep", "30"]), what="the command to start")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, out + err
    assert json.loads((tmp_path / "run.traj.json").read_text())["info"]["exit_status"] == "Interrupted"


def test_kill_9_leaves_a_jsonl_that_replays_and_resumes(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo first > first.txt"), Turn(text="never", hang_s=60))
    process = subprocess.Popen(headless_args(openai_server, tmp_path, "t"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    jsonl = tmp_path / "run.traj.jsonl"
    # generous waits: the whole suite at load 7-15 made 30 s too short (issue 62)
    wait_until(lambda: jsonl.exists() and '"observation"' in jsonl.read_text(), timeout=120)
    wait_until(lambda: len(openai_server.requests) == 2, timeout=120)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    assert not (tmp_path / "run.traj.json").exists()
    printed = subprocess.run([*swedeck_command(), "replay", str(jsonl), "--print"], capture_output=True, text=True,
                             timeout=60)
    assert printed.returncode == 0, printed.stderr
    assert "echo first > first.txt" in printed.stdout
    lines = jsonl.read_text().splitlines()
    header = json.loads(lines[0])
    header["session"]["cwd"] = str(tmp_path / "gone")
    moved = tmp_path / "moved" / "run.traj.jsonl"
    moved.parent.mkdir()
    moved.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    openai_server.script(Turn.bash_tool(f"{SUBMIT} && cat first.txt"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # from another folder and without --cwd (the README's resume): it runs where the session ran (issue 62.2)
    args = headless_args(openai_server, tmp_path, "--resume", str(jsonl))
    at = args.index("--cwd")
    resumed = subprocess.run(args[:at] + args[at + 2:], capture_output=True, text=True, timeout=240, cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming {jsonl} in {tmp_path.resolve()} (where it ran; --cwd overrides)" in resumed.stderr
    saved = json.loads((tmp_path / "run.traj.json").read_text())
    assert saved["info"]["exit_status"] == "Submitted" and saved["info"]["submission"] == "first\n"
    kinds = [m["extra"]["message_type"] for m in saved["messages"]]
    assert kinds.count("task") == 1 and kinds.count("action") == 2
    last_request = openai_server.requests[-1]["messages"]
    assert any(m.get("tool_calls") for m in last_request[:-1]), "the resumed prompt carries the old history"
    gone = subprocess.run(args[:at] + args[at + 2:-1] + [str(moved)], capture_output=True, text=True, timeout=120,
                          cwd=elsewhere)  # a session whose folder is gone: a usage error that says so
    assert gone.returncode == 2 and "which no longer exists" in gone.stderr, gone.stderr


def test_the_task_is_recorded_before_litellm_has_loaded(tmp_path):
    # litellm's import takes seconds (here: for ever): a crash in that time must not lose the
    # task. A `litellm` that never finishes importing stands in front of the real one.
    import os
    import signal


    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "litellm.py").write_text("import time\ntime.sleep(300)\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen([*swedeck_command(), "run", "--headless", "-m", "hosted_vllm/not-in-the-map",
                                "-c", "model.stream_process=false", "-t", "remember this task",
                                "-o", str(tmp_path / "run"), "--cwd", str(tmp_path)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    live = tmp_path / "run.traj.jsonl"
    try:
        def recorded() -> bool:
            assert process.poll() is None, "the session ended instead of waiting for litellm"
            return live.exists() and "remember this task" in live.read_text()

        wait_until(recorded, timeout=60)
        assert process.poll() is None  # still waiting for the import: the record did not wait for it
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    from swedeck.core.trajectory.loader import load_trajectory

    types = [m.message_type.value for m in load_trajectory(live).messages]
    assert types[:2] == ["system", "task"]


def test_headless_says_while_it_streams_and_why_each_step_ended(openai_server, tmp_path):
    from support.openai_server import ToolCallSpec

    slow = Turn(text="Let me think about this for a while. " * 40, chunks=45, chunk_delay_s=0.15,
                tool_calls=[ToolCallSpec("bash", {"command": "echo slow"})])
    truncated = Turn(text="A long answer that stops in the mid", finish_reason="length")  # no command
    openai_server.script(slow, truncated, Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server, tmp_path, "think"), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    progress = [line for line in lines if line.strip().startswith("… streaming step 1:")]
    assert progress and "tokens" in progress[0] and "tok/s" in progress[0]
    assert any("truncated: the answer reached max_tokens" in line for line in lines)
    assert any(line.strip().startswith("format error (sent back to the model):") for line in lines)
    sent = openai_server.requests[0]
    assert sent["max_tokens"] == 8192  # the default cap on one answer (the model is unknown to litellm)


@pytest.mark.parametrize("signal_name,env", [("SIGTERM", "local"), ("SIGHUP", "local"), ("SIGTERM", "docker")])
def test_a_terminating_signal_ends_the_session_with_its_record(openai_server, tmp_path, signal_name, env):
    import signal

    from support.docker_env import TEST_IMAGE, docker_client

    extra = ["--env", "docker", "--image", TEST_IMAGE] if env == "docker" else []
    client = docker_client() if env == "docker" else None
    openai_server.script(Turn.bash_tool("sleep 30"), Turn.bash_tool(SUBMIT))
    process = subprocess.Popen(headless_args(openai_server, tmp_path, *extra, "wait a while"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    live = tmp_path / "run.traj.jsonl"
    try:
        wait_until(lambda: live.exists() and '"action"' in live.read_text(), timeout=60)
        if client is not None:  # the filter below finds the session's container while it runs
            session_id = json.loads(live.read_text().splitlines()[0])["session"]["id"]
            assert client.containers.list(filters={"label": f"swedeck.session={session_id}"})
        process.send_signal(getattr(signal, signal_name))
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, out
    saved = json.loads((tmp_path / "run.traj.json").read_text())  # the final file was written
    assert saved["info"]["exit_status"] == "Interrupted"
    if client is not None:  # and the container is gone
        session_id = saved["info"]["session"]["id"]
        left = client.containers.list(all=True, filters={"label": f"swedeck.session={session_id}"})
        assert left == []


def test_headless_says_when_the_stream_guard_cut_an_answer(openai_server, tmp_path):
    # A repeating answer the guard cuts (no command left in it: a format error), then a submission
    openai_server.script(Turn(text="<x>a</x>" * 400, chunks=40), Turn.bash_tool(SUBMIT))
    result = subprocess.run(headless_args(openai_server, tmp_path, "t", "-c", "model.stream_guard_enabled=true",
                                          "-c", "model.stream_guard_tag_threshold=20"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stream guard: the answer repeated itself" in result.stdout, result.stdout


def test_the_streaming_rate_counts_from_the_first_token(monkeypatch):
    """The wait before it (litellm's first import, the provider's time to first token) is not
    streaming: 30 s of waiting then 400 tokens in 3 s is ~130 tok/s, not ~12 (or 0); and the
    first line comes after a stretch of stream, not with its first token ("≈8 tokens, starting")."""
    from swedeck.core import events as ev
    from swedeck.core.headless import ProgressPrinter

    clock = iter([100.0, 130.0, 133.0])
    monkeypatch.setattr("swedeck.core.headless.time.monotonic", lambda: next(clock))
    printer = ProgressPrinter(open(os.devnull, "w"), every_s=1)
    printer.render(ev.QueryStarted(step=1))
    first = printer.render(ev.StreamDelta(step=1, kind="text", text="x" * 400))
    assert first is None  # the first line comes `every_s` into the stream, when it has a rate to say
    later = printer.render(ev.StreamDelta(step=1, kind="text", text="x" * 1200))
    assert later is not None and "≈400 tokens, 133 tok/s, 33 s (first token after 30.0 s)" in later, later
