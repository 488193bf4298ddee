"""SPEC §19: the real ACP adapters (npm, pinned, installed by .ci/run) in swedeck's live panes
under Pilot, against the scripted servers: an approval, a reject with a comment (sent on as
the person's next words), a follow-up, and an interrupt (`session/cancel`) of a slow answer;
then the record replays with every step's prompt recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.agent_clis import agent_cli, claude_environment, codex_environment
from support.anthropic_server import AnthropicServer, Reply
from support.driver import make_config
from support.responses_server import ResponsesServer, Step
from support.waiting import wait_for
from swedeck.core.config import ModelConfig
from swedeck.core.trajectory.loader import load_trajectory

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

SLOW = "I will now say a great many words, slowly, so that you can stop me. " * 12


async def drive(pilot: Any, app: Any, work: Path, first: str, second: str) -> None:
    """Approve the first command, reject the second with a comment, ask a follow-up, and stop
    its slow answer; then end the session."""
    from swedeck.tui.widgets.assistant_message import AssistantMessage
    from swedeck.tui.widgets.input_line import InputLine
    from swedeck.tui.widgets.observation_pane import ObservationPane

    screen = app.session_screen
    line = screen.query_one(InputLine)
    await wait_for(pilot, lambda: screen.confirmation is not None, 90)
    assert first in screen.confirmation.command
    await pilot.press("y")
    await wait_for(pilot, lambda: screen.confirmation is not None and second in screen.confirmation.command, 90)
    assert (work / "a.txt").read_text() == "one\n"
    records = screen.query_one(ObservationPane).records.values()
    assert any(first in record.command and record.result is not None for record in records)
    await pilot.press("n")
    await wait_for(pilot, lambda: line.purpose == "reject", 10)
    await pilot.press(*"keep a.txt", "enter")
    await wait_for(pilot, lambda: line.purpose == "follow_up", 90)  # the comment went on; its answer ended the turn
    assert (work / "a.txt").exists()
    await pilot.press("i", *"say a lot", "enter")  # i: to the input line
    await wait_for(pilot, lambda: any("slowly" in "".join(message.text_sources)
                                      for message in screen.query(AssistantMessage)), 90)
    await pilot.press("escape")  # session/cancel while the answer streams
    await wait_for(pilot, lambda: line.purpose == "follow_up", 90)
    await pilot.press("i", "enter")  # no follow-up: the session ends
    await wait_for(pilot, lambda: screen.ended, 90)


def check_record(path: Path, received: int, stop: str = "cancelled") -> dict[str, Any]:
    """`received`: the model calls the server answered whole (the cancelled one is not a step)."""
    data = json.loads(path.read_text())
    events = data["meta_events"]
    permissions = [event["kind"] for event in events if event["event"] == "acp_permission"]
    assert permissions[:2] == ["allow_once", "reject_once"], permissions
    prompts = [event["text"] for event in events if event["event"] == "acp_prompt"]
    assert prompts[1:] == ["keep a.txt", "say a lot"], prompts
    assert data["info"]["exit_status"] == f"ACP: {stop}"
    trajectory = load_trajectory(path)
    assert sorted(trajectory.recorded_prompts) == list(range(1, received + 1))  # every step's, recorded
    return data


async def test_claude_codes_adapter_in_the_live_panes(tmp_path, anyio_backend, monkeypatch):
    from swedeck.core.acp.session import AcpSession
    from swedeck.tui.live.app import SwedeckApp

    adapter = agent_cli("claude-code-acp")
    for key, value in claude_environment(tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    work = tmp_path / "work"
    work.mkdir()
    with AnthropicServer() as server:
        server.script(Reply.acp_bash("echo one > a.txt", text="Writing a.txt."),
                      Reply.acp_bash("rm a.txt", text="Now removing it."),
                      Reply(text="Keeping a.txt, as you say."),
                      Reply(text=SLOW, chunk_delay_s=0.05))
        config = make_config(tmp_path, ModelConfig(model_name="acp"), agent__mode="confirm")
        session = AcpSession(config, adapter, "make a.txt", cwd=work, output=str(tmp_path / "acp"),
                             upstream=server.url)
        app = SwedeckApp(session)
        async with app.run_test(size=(140, 40)) as pilot:
            await drive(pilot, app, work, "echo one > a.txt", "rm a.txt")
        received = [body for path, body in zip(server.paths, server.requests, strict=True)
                    if body.get("tools") and "count_tokens" not in path]
    check_record(tmp_path / "acp.traj.json", len(received) - 1)
    assert any("keep a.txt" in json.dumps(body["messages"]) for body in received)


async def test_codexs_adapter_in_the_live_panes(tmp_path, anyio_backend, monkeypatch):
    from swedeck.core.acp.session import AcpSession
    from swedeck.tui.live.app import SwedeckApp

    agent_cli("codex-acp")
    for key, value in codex_environment(tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    work = tmp_path / "work"
    work.mkdir()
    with ResponsesServer() as server:
        server.script(Step(text="Writing a.txt.", call=("exec_command", {"cmd": "echo one > a.txt"})),
                      Step(text="Now removing it.", call=("exec_command", {"cmd": "rm a.txt"})),
                      Step(text="Keeping a.txt, as you say."),
                      Step(text=SLOW, chunk_delay_s=0.05))
        config = make_config(tmp_path, ModelConfig(model_name="acp"), agent__mode="confirm")
        session = AcpSession(config, "codex", "make a.txt", cwd=work, output=str(tmp_path / "acp"),
                             upstream=server.url)
        app = SwedeckApp(session)
        async with app.run_test(size=(140, 40)) as pilot:
            await drive(pilot, app, work, "echo one > a.txt", "rm a.txt")
        received = list(server.requests)
    check_record(tmp_path / "acp.traj.json", len(received) - 1)
