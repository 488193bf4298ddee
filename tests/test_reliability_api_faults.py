"""SPEC §13 R2: API faults end to end (real HTTP to the scripted server, a real shell).

429 with Retry-After, 500, 503, a connection dropped mid-stream and a hang past the
timeout are retried; each retry is a `QueryRetrying` event (what the UI and the headless
lines show); the history, the trajectory and the next request hold each answer once and
never a partial one; when the retries run out an interactive session pauses with
`api_error` and "retry" carries on.
"""

from __future__ import annotations

import io
import json

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import ToolCallSpec, Turn, Usage, model_config
from support.reliability import SUBMIT
from swedeck.core import events as ev
from swedeck.core.headless import run_headless

PARTIAL = "PARTIAL-ANSWER-THAT-WAS-CUT"


def dropped(after_events: int = 3) -> Turn:
    """A stream that dies after some text deltas: the client saw a partial answer."""
    return Turn(text=f"{PARTIAL} " * 8, chunks=8, drop_after=after_events,
                tool_calls=[ToolCallSpec("bash", {"command": "echo partial-command"})])


def ended(after_events: int = 4) -> Turn:
    """A stream whose body ends cleanly (the connection closes, as behind a proxy) with no
    finish_reason and no [DONE]: the answer was cut, though HTTP saw nothing wrong."""
    return Turn(text=f"{PARTIAL} " * 8, chunks=8, end_after=after_events,
                tool_calls=[ToolCallSpec("bash", {"command": "echo partial-command"})])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream_process", [True, False], ids=["stream-process", "in-thread"])
def test_a_stream_that_ends_without_finish_reason_is_retried_like_a_dropped_one(openai_server, tmp_path,
                                                                                  stream_process):
    openai_server.script(ended(), Turn.bash_tool("echo one", text="first"), ended(6), Turn.bash_tool(SUBMIT))
    model = model_config(openai_server, attempts=3, stream_process=stream_process)
    config = make_config(tmp_path, model, agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "t", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    retries = driver.of(ev.QueryRetrying)
    assert [(r.step, r.attempt) for r in retries] == [(1, 1), (2, 1)]
    assert "finish_reason" in retries[0].error
    assert any(PARTIAL in d.text for d in driver.of(ev.StreamDelta) if d.step == 1)  # it was drawn, then dropped
    messages = saved_messages(tmp_path)
    assert PARTIAL not in json.dumps(messages) and "format_error" not in json.dumps(messages)
    assert not any(PARTIAL in json.dumps(r["messages"]) for r in openai_server.requests)


def faulty_script() -> list[Turn]:
    return [
        # step 1: rate limited (with Retry-After), then two server errors, then the answer
        Turn.rate_limited("0.3"), Turn.error(500), Turn.error(503),
        Turn.bash_tool("echo one", text="first", usage=Usage(100, 5)),
        # step 2: the connection drops mid-stream, then the answer
        dropped(), Turn.bash_tool("echo two", text="second", usage=Usage(120, 5)),
        # step 3: the server hangs past the timeout, then the answer
        Turn(text="never", hang_s=20), Turn.bash_tool(SUBMIT, text="third", usage=Usage(140, 5)),
    ]


def saved_messages(tmp_path) -> list[dict]:
    return json.loads((tmp_path / "session.traj.json").read_text())["messages"]


@pytest.mark.timeout(60)
def test_every_fault_is_retried_and_leaves_no_trace_in_the_history(openai_server, tmp_path):
    openai_server.script(*faulty_script())
    model = model_config(openai_server, attempts=4, timeout_s=2)
    config = make_config(tmp_path, model, agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "count to three", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message

    retries = driver.of(ev.QueryRetrying)
    assert [(r.step, r.attempt) for r in retries] == [(1, 1), (1, 2), (1, 3), (2, 1), (3, 1)]
    assert retries[0].wait_s == pytest.approx(0.3), "Retry-After is honoured"
    assert "429" in retries[0].error and "500" in retries[1].error and "503" in retries[2].error
    assert all(r.attempts == 4 for r in retries)
    # the dropped stream was drawn (the UI saw deltas) and then discarded by the retry
    assert any(PARTIAL in d.text for d in driver.of(ev.StreamDelta) if d.step == 2)
    assert [f.step for f in driver.of(ev.QueryFinished)] == [1, 2, 3]

    messages = saved_messages(tmp_path)
    assert PARTIAL not in json.dumps(messages) and "partial-command" not in json.dumps(messages)
    actions = [m for m in messages if m["extra"]["message_type"] == "action"]
    assert [a["content"] for a in actions] == ["first", "second", "third"]
    assert [a["tool_calls"][0]["function"]["arguments"] for a in actions] == [
        json.dumps({"command": c}) for c in ("echo one", "echo two", SUBMIT)]
    assert [m["extra"]["message_type"] for m in messages].count("observation") == 3  # the submission answers its call too

    # a retry sends exactly what the failed attempt sent; the next step one answer more
    sent = [r["messages"] for r in openai_server.requests]
    assert len(sent) == 8
    assert sent[0] == sent[1] == sent[2] == sent[3]
    assert sent[4] == sent[5] and sent[6] == sent[7]
    assert len(sent[4]) == len(sent[0]) + 2 and len(sent[6]) == len(sent[4]) + 2
    assert not any(PARTIAL in json.dumps(m) for m in sent[5:])
    for request in sent:
        assert len({json.dumps(m, sort_keys=True) for m in request}) == len(request), "no message twice"


@pytest.mark.timeout(60)
def test_headless_lines_show_each_retry(openai_server, tmp_path):
    openai_server.script(Turn.error(503), dropped(), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server, attempts=3), agent__mode="yolo")
    out = io.StringIO()
    result = run_headless(config, "t", out=out)
    assert result.exit_status == "Submitted"
    lines = [line.strip() for line in out.getvalue().splitlines()]
    retries = [line for line in lines if line.startswith("retry ")]
    assert len(retries) == 2 and retries[0].startswith("retry 1/3") and "503" in retries[0]
    assert retries[1].startswith("retry 2/3")
    assert PARTIAL not in out.getvalue()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fault", ["server_error", "dropped", "hang"])
def test_exhausted_retries_pause_and_retry_continues(openai_server, tmp_path, fault):
    failing = {"server_error": lambda: Turn.error(503), "dropped": dropped,
               "hang": lambda: Turn(text="never", hang_s=20)}[fault]
    openai_server.script(Turn.bash_tool("echo before", usage=Usage(100, 5)), failing(), failing(),
                         Turn.bash_tool(SUBMIT, usage=Usage(120, 5)))
    config = make_config(tmp_path, model_config(openai_server, attempts=2, timeout_s=2), agent__mode="yolo")
    driver = Driver(pauses=[ev.PauseDecision("retry")], inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted", result.message

    pauses = driver.of(ev.PauseRequested)
    assert [p.reason for p in pauses] == ["api_error"]
    assert [(r.step, r.attempt) for r in driver.of(ev.QueryRetrying)] == [(2, 1)]
    states = [e.state for e in driver.of(ev.StateChanged)]
    assert ev.AgentState.PAUSED in states
    sent = [r["messages"] for r in openai_server.requests]
    assert len(sent) == 4 and sent[1] == sent[2] == sent[3], "the retried query sends the same history"
    messages = saved_messages(tmp_path)
    assert [m["extra"]["message_type"] for m in messages].count("action") == 2
    assert PARTIAL not in json.dumps(messages)


@pytest.mark.timeout(60)
def test_exhausted_retries_then_quit_ends_with_api_error(openai_server, tmp_path):
    openai_server.script(Turn.error(500), Turn.error(500))
    config = make_config(tmp_path, model_config(openai_server, attempts=2), agent__mode="yolo")
    driver = Driver(pauses=[ev.PauseDecision("quit")])
    result = run_session(config, "t", driver)
    assert [p.reason for p in driver.of(ev.PauseRequested)] == ["api_error"]
    assert result.exit_status in ("APIError", "UserQuit")
    saved = json.loads((tmp_path / "session.traj.json").read_text())
    assert saved["info"]["exit_status"] == result.exit_status
    assert [m["extra"]["message_type"] for m in saved["messages"]].count("action") == 0


def test_credentials_refused_inside_a_500_are_not_retried(openai_server, tmp_path):
    # litellm wraps the OpenAI SDK's "Missing credentials" as InternalServerError (500)
    body = {"error": {"message": "Missing credentials. Please pass an `api_key`", "type": "server_error"}}
    openai_server.script(Turn.error(500, body), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server, attempts=6), agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "t", driver, interactive=False)
    assert result.exit_status == "APIError" and len(openai_server.requests) == 1
    assert not driver.of(ev.QueryRetrying)
    assert result.message.startswith("no valid credentials for hosted_vllm/test-model")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stream_process", ["true", "false"])
def test_a_missing_api_key_fails_at_once_and_says_what_to_set(tmp_path, stream_process):
    import os
    import subprocess

    from conftest import swedeck_command

    env = {name: value for name, value in os.environ.items() if "KEY" not in name and "TOKEN" not in name}
    env["SWEDECK_MODEL__STREAM_PROCESS"] = stream_process
    done = subprocess.run([*swedeck_command(), "run", "-m", "openai/gpt-4o", "--headless", "-t", "hi",
                           "--cwd", str(tmp_path), "-o", str(tmp_path / "run")],
                          env=env, capture_output=True, text=True, timeout=110)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "set OPENAI_API_KEY" in output and "no valid credentials for openai/gpt-4o" in output
    assert "retry" not in output.lower()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_a_200_that_is_not_a_completion_is_retried(openai_server, tmp_path, stream):
    page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    openai_server.script(Turn(garbage=page), Turn.bash_tool(SUBMIT, text="real answer"))
    config = make_config(tmp_path, model_config(openai_server, attempts=3, use_streaming=stream), agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "t", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    assert len(driver.of(ev.QueryRetrying)) == 1 and len(openai_server.requests) == 2
    assert "format_error" not in json.dumps(saved_messages(tmp_path))


def test_a_refused_connection_is_named_and_retried_briefly(tmp_path):
    """Issue 62: a model address where nothing listens was `InternalServerError (500)` retried
    five times (32 s); it is one line that names it, tried twice."""
    import socket
    import subprocess
    import time

    from support.reliability import headless_args

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    done = subprocess.run(headless_args(f"http://127.0.0.1:{port}/v1", tmp_path, "t"), capture_output=True,
                          text=True, timeout=120)
    took = time.monotonic() - started
    said = done.stdout + done.stderr
    assert done.returncode != 0 and f"connection refused: nothing answers at http://127.0.0.1:{port}" in said, said[-2000:]
    assert "gave up after 2 tries" in said and "InternalServerError" not in said, said[-2000:]
    assert took < 60, took
