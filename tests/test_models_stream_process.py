"""The stream process (`model.stream_process`, on by default): litellm's calls run in one
helper process so parsing a stream does not take the UI's GIL (bench B1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support.openai_server import ToolCallSpec, Turn, Usage, model_config, openai_server  # noqa: F401
from support.waiting import exited, wait_until
from swedeck.core.events import StreamDelta
from swedeck.core.messages import MessageType, make_message
from swedeck.core.models import get_model
from swedeck.core.models.stream_process import stream_process

TASK = [make_message("system", "You are a helper.", MessageType.SYSTEM), make_message("user", "Fix it", MessageType.TASK)]
SECRET = "sk-stream-process-secret-0123456789"


def worker_pid() -> int:
    process = stream_process()._process
    assert process is not None and process.poll() is None
    return process.pid


def test_models_share_one_stream_process_and_no_secret_is_on_its_command_line(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)), Turn.bash_tool("pwd", usage=Usage(6, 6)))
    config = model_config(openai_server, model_kwargs={"api_key": SECRET})
    first = get_model(config).query(TASK)
    pid = worker_pid()
    second = get_model(config).query(TASK)
    assert [first.actions[0].command, second.actions[0].command] == ["ls", "pwd"]
    assert worker_pid() == pid
    assert SECRET not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    assert openai_server.requests[0]["messages"][1]["content"] == "Fix it"


def test_a_stream_process_killed_mid_stream_is_replaced_and_the_query_retried(openai_server):
    openai_server.script(Turn(text="word " * 100, chunks=100, chunk_delay_s=0.05, usage=Usage(5, 5)),
                         Turn(text="second try", tool_calls=[ToolCallSpec("bash", {"command": "ls"})], usage=Usage(7, 7)))
    model = get_model(model_config(openai_server, attempts=3))
    stream_process().warm_up()
    killed = []
    first_delta = threading.Event()

    def emit(event):
        if isinstance(event, StreamDelta):
            first_delta.set()

    def kill_soon():
        first_delta.wait(30)
        pid = worker_pid()
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    threading.Thread(target=kill_soon, daemon=True).start()
    response = model.query(TASK, emit=emit)
    assert killed and response.message.content == "second try" and response.usage.prompt_tokens == 7
    assert len(openai_server.requests) == 2
    assert worker_pid() != killed[0]


@pytest.mark.parametrize("litellm_loads", [True, False], ids=["loaded", "still-importing"])
def test_the_stream_process_leaves_when_swedeck_is_killed(tmp_path, litellm_loads):
    """The worker reads its input while litellm imports: a parent killed during those seconds
    ends the worker at once (a litellm whose import never ends proves it did not wait)."""
    env = dict(os.environ)
    if not litellm_loads:
        (tmp_path / "litellm.py").write_text("import threading\nthreading.Event().wait()\n")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    code = ("import sys, threading; from swedeck.core.models.stream_process import stream_process; "
            "p = stream_process(); p.warm_up(); print(p._process.pid, flush=True); threading.Event().wait()")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    try:
        wait_until(lambda: exited(pid), timeout=20, what=f"the stream process {pid} to leave with its parent")
    finally:
        if not exited(pid):
            os.kill(pid, signal.SIGKILL)
