"""SPEC §11.2 / issue 14: what the model saw, rebuilt from the trajectory alone, is exactly
what was sent, for every step of a run with processors and cache marks.

"Sent" is checked at two points: the request swedeck's model layer hands to litellm
(`LitellmModel.request`, recorded by a spy that lets the real call run: roles, contents,
tool calls and cache marks, byte for byte), and the body the scripted server received
over HTTP, where litellm's OpenAI-compatible transform has dropped what such providers
do not take (`cache_control`, a `content: null` beside tool calls) and nothing else.
"""

from __future__ import annotations

import copy
import json

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.models.litellm_model import LitellmModel
from swedeck.core.prompt_view import step_prompt
from swedeck.core.trajectory.loader import load_trajectory

PROCESSORS = [{"type": "last_n_observations", "n": 1}, {"type": "cache_control", "last_n_messages": 2}]


def many_lines(tag: str) -> str:
    return f"for i in 1 2 3 4 5; do echo {tag}-$i; done"


def as_litellm_sends_to_openai(messages: list[dict]) -> list[dict]:
    """What litellm's OpenAI-compatible transform leaves of a message list."""
    out = copy.deepcopy(messages)
    for message in out:
        message.pop("cache_control", None)
        if message.get("content") is None and message.get("tool_calls"):
            message.pop("content")
        if isinstance(message.get("content"), list):
            for part in message["content"]:
                part.pop("cache_control", None)
    return out


def run_with_processors(openai_server, tmp_path, cache_mode: str | None = None):
    """A headless run of six queries with PROCESSORS; its final file."""
    openai_server.script(*[Turn.bash_tool(many_lines(f"s{k}")) for k in range(1, 6)], Turn.bash_tool(SUBMIT))
    model = model_config(openai_server)
    model.set_cache_control = cache_mode
    config = make_config(tmp_path, model, agent__mode="yolo")
    config.agent.history_processors = PROCESSORS
    result = run_session(config, "print some lines", Driver(), interactive=False)
    assert result.exit_status == "Submitted"
    return tmp_path / "session.traj.json"


@pytest.mark.parametrize("cache_mode", [None, "default_end"])
def test_every_step_is_rebuilt_as_it_was_sent(openai_server, tmp_path, monkeypatch, cache_mode):
    handed: list[list[dict]] = []
    request = LitellmModel.request

    def spy(self, messages, *, stream, **shape):
        kwargs = request(self, messages, stream=stream, **shape)
        handed.append(json.loads(json.dumps(kwargs["messages"])))
        return kwargs

    monkeypatch.setattr(LitellmModel, "request", spy)
    trajectory = load_trajectory(run_with_processors(openai_server, tmp_path, cache_mode))
    assert len(trajectory.steps) == len(handed) == len(openai_server.requests) == 6
    for number, (sent, received) in enumerate(zip(handed, openai_server.requests, strict=True), 1):
        rebuilt = step_prompt(trajectory, number)
        assert rebuilt.processors_source == "recorded"
        assert rebuilt.request_messages() == sent, f"step {number}"
        assert as_litellm_sends_to_openai(rebuilt.request_messages()) == received["messages"], f"step {number}"
    fourth = handed[3]
    assert any("Old environment output" in json.dumps(m) for m in fourth)  # the processors changed it
    # the cache_control processor marks the last two; the model's default_end keeps only its own, on the last
    assert sum("cache_control" in json.dumps(m) for m in fourth) == (1 if cache_mode else 2)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_what_if_starts_from_the_processors_the_run_had_and_totals_the_run(openai_server, tmp_path):
    from swedeck.core.replay.what_if import what_if_prompt
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.what_if_screen import WhatIfScreen

    path = run_with_processors(openai_server, tmp_path)
    trajectory = load_trajectory(path)
    app = ReplayApp([path], start_step=5)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("p")
        what_if = app.screen
        assert isinstance(what_if, WhatIfScreen)
        enabled = [p for p in what_if.processors if p["enabled"]]
        assert [p["type"] for p in enabled] == ["last_n_observations", "cache_control"]
        assert {p["type"] for p in what_if.processors if not p["enabled"]} >= {"remove_regex", "worker"}
        assert what_if.prompt.total_tokens == step_prompt(trajectory, 5).total_tokens  # as the run had it
        await app.workers.wait_for_complete()
        await pilot.pause()
        expected = sum(what_if_prompt(trajectory, n, enabled).history_tokens
                       - what_if_prompt(trajectory, n, enabled).total_tokens for n in range(1, 7))
        assert what_if.run_saved == expected > 0
        assert f"whole run: {expected:,} tokens saved over 6 queries" in str(
            what_if.query_one("#what-if-run").render())


def test_calls_sent_without_ids_get_unique_ones_and_context_filter_keeps_them_paired(openai_server, tmp_path):
    from support.openai_server import ToolCallSpec

    def no_id(command: str) -> Turn:
        return Turn(tool_calls=[ToolCallSpec("bash", {"command": command}, send_id=False)])

    openai_server.script(*[no_id(f"echo {k}") for k in range(4)], no_id(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    config.agent.history_processors = [{"type": "context_filter", "num_invocations_to_keep": 2}]
    assert run_session(config, "echo things", Driver(), interactive=False).exit_status == "Submitted"
    ids = [call["id"] for m in openai_server.requests[-1]["messages"] for call in m.get("tool_calls") or ()]
    assert len(ids) == len(set(ids)) == 3  # two invocations, and the call whose result opens the first
    for request in openai_server.requests:  # every result sent has its call before it
        called: set[str] = set()
        for message in request["messages"]:
            called |= {call["id"] for call in message.get("tool_calls") or ()}
            assert message.get("tool_call_id") is None or message["tool_call_id"] in called
    saved = load_trajectory(tmp_path / "session.traj.json")
    all_ids = [call.id for m in saved.messages for call in m.tool_calls or ()]
    assert len(all_ids) == len(set(all_ids)) == 5
