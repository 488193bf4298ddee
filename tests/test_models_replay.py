"""The replay model (`replay:PATH`) and the get_model registry."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from conftest import MINI_FIXTURE, REPO
from swedeck.core.config import ModelConfig
from swedeck.core.events import StreamDelta
from swedeck.core.messages import MessageType, make_message
from swedeck.core.models import get_model
from swedeck.core.models.base import FormatError, QueryCancelled, ReplayExhausted
from swedeck.core.models.replay_model import ReplayModel

TASK = [make_message("user", "Fix it", MessageType.TASK)]


def _replay(path, **kwargs) -> ReplayModel:
    model = get_model(ModelConfig(model_name=f"replay:{path}", model_kwargs=kwargs))
    assert isinstance(model, ReplayModel)
    return model


def test_replays_a_mini_swe_agent_trajectory_in_order_then_is_exhausted():
    recorded = [m for m in json.loads(MINI_FIXTURE.read_text()) if m["role"] == "assistant"]
    model = _replay(MINI_FIXTURE, tokens_per_second=0)
    events = []
    answers = []
    for step in range(len(recorded)):
        answers.append(model.query(TASK, step=step, emit=events.append))
    assert [a.message.content for a in answers] == [m["content"] for m in recorded]
    assert answers[0].actions[0].command == "ls -la"  # ```mswea_bash_command block parsed
    assert answers[0].message.extra.message_type == MessageType.ACTION
    streamed = "".join(e.text for e in events if isinstance(e, StreamDelta) and e.step == 0)
    assert streamed == recorded[0]["content"]
    assert model.stats.api_calls == len(recorded)
    with pytest.raises(ReplayExhausted):
        model.query(TASK)


def _write(tmp_path, messages):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"messages": messages}))
    return path


def test_tool_call_trajectory_and_format_errors_are_reparsed(tmp_path):
    path = _write(tmp_path, [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "look", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}],
         "extra": {"message_type": "action", "usage": {"prompt_tokens": 50, "completion_tokens": 5}, "cost": 0.25}},
        {"role": "assistant", "content": "no command here"},
    ])
    model = _replay(path, tokens_per_second=0)
    first = model.query(TASK)
    assert first.actions[0].command == "ls" and first.actions[0].tool_call_id == "c1"
    assert first.usage.prompt_tokens == 50 and first.cost == 0.25
    with pytest.raises(FormatError):
        model.query(TASK)
    assert model.remaining == 0


def test_streams_at_the_configured_rate_and_can_be_cancelled(tmp_path):
    path = _write(tmp_path, [{"role": "assistant", "content": "word " * 400 + "\n```bash\nls\n```"}])
    model = _replay(path, tokens_per_second=100)  # ~4 s for the whole message
    events = []
    threading.Timer(0.3, model.cancel).start()
    started = time.monotonic()
    with pytest.raises(QueryCancelled):
        model.query(TASK, emit=events.append)
    assert time.monotonic() - started < 3  # safety net: cancelled long before the end
    assert 0 < len(events) < 400
    assert model.remaining == 1  # the cancelled answer is given again


def test_missing_file_is_a_clear_error(tmp_path):
    from swedeck.core.errors import SwedeckError

    with pytest.raises(SwedeckError, match="no trajectory file"):
        _replay(tmp_path / "nope.json")


def test_importing_models_and_context_window_does_not_import_litellm():
    code = (
        "import sys\n"
        "import swedeck.core.models, swedeck.core.context_window\n"
        "from swedeck.core.models import get_model\n"
        "from swedeck.core.config import ModelConfig\n"
        "get_model(ModelConfig(model_name='openai/gpt-4o'))\n"
        "from swedeck.core.context_window import resolve_context_window\n"
        "resolve_context_window('gpt-4o')\n"
        "from swedeck.core.messages import make_message, MessageType\n"
        f"replay = get_model(ModelConfig(model_name='replay:{MINI_FIXTURE}', model_kwargs={{'tokens_per_second': 0}}))\n"
        "replay.query([make_message('user', 'hi', MessageType.TASK)])\n"
        "print('litellm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_swe_agent_tool_calls_replay_as_commands():
    from conftest import SWEAGENT_FIXTURE

    model = _replay(SWEAGENT_FIXTURE, tokens_per_second=0)
    first = model.query(TASK)
    assert first.actions[0].command == "find_file calc.py"
    assert first.message.extra.message_type == MessageType.ACTION


def test_mini_swe_agent_fence_wins_over_example_bash_blocks(tmp_path):
    text = "Example:\n```bash\nrm -rf /\n```\nNow:\n```mswea_bash_command\nls\n```"
    model = _replay(_write(tmp_path, [{"role": "assistant", "content": text}]), tokens_per_second=0)
    assert [a.command for a in model.query(TASK).actions] == ["ls"]
