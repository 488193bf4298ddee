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

pytestmark = pytest.mark.xdist_group("heavy")  # node adapters: not beside the Ray cluster (pyproject.toml)


def in_the_app(test: Any) -> Any:
    return pytest.mark.anyio(pytest.mark.parametrize("anyio_backend", ["asyncio"])(test))

SLOW = "I will now say a great many words, slowly, so that you can stop me. " * 12


async def drive(pilot: Any, app: Any, work: Path, first: str, second: str) -> Any:
    """Approve the first command, reject the second with a comment, ask a follow-up, and stop
    its slow answer; then end the session. Returns what `t` showed while the first command was
    asked about (issue 62: the request the agent sent, as recorded)."""
    from swedeck.tui.shared.prompt_inspector import PromptInspector
    from swedeck.tui.widgets.assistant_message import AssistantMessage
    from swedeck.tui.widgets.input_line import InputLine
    from swedeck.tui.widgets.observation_pane import ObservationPane

    screen = app.session_screen
    line = screen.query_one(InputLine)
    await wait_for(pilot, lambda: screen.confirmation is not None, 90)
    assert first in screen.confirmation.command
    screen.query_one("Transcript").focus()
    await pilot.press("t")
    await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector), 10)
    shown = app.screen
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is screen, 10)
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
    from swedeck.tui.widgets.command_block import CommandBlock

    refused = [block for block in screen.query(CommandBlock) if second in block.command]
    assert refused and all(block.state == "rejected" for block in refused), [b.state for b in refused]  # not "ran"
    await pilot.press("i", *"say a lot", "enter")  # i: to the input line
    await wait_for(pilot, lambda: any("slowly" in "".join(message.text_sources)
                                      for message in screen.query(AssistantMessage)), 90)
    await pilot.press("escape")  # session/cancel while the answer streams
    await wait_for(pilot, lambda: line.purpose == "follow_up", 90)
    await pilot.press("i", "enter")  # no follow-up: the session ends
    await wait_for(pilot, lambda: screen.ended, 90)
    return shown


def check_inspector(shown: Any, request: dict[str, Any], wire: str) -> None:
    """`t` showed the request the agent sent at step 1, message for message, with its tools."""
    from swedeck.core.record.wire import prompt_entries
    from swedeck.core.tokens import count_message

    assert shown.title_text.startswith("What the model got at step 1: the request the agent sent, as recorded")
    sent = [entry.build() for entry in prompt_entries(wire, request)]
    assert len(shown.lines) == len(sent) >= 2, (len(shown.lines), len(sent))
    assert [line.tokens for line in shown.lines] == [count_message(message) for message in sent]  # as sent
    assert f"({len(request['tools'])} tools)" in shown.title_text


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


def _claude_adapter(tmp_path: Path, monkeypatch: Any) -> tuple[str, Path]:
    """The pinned claude-code-acp, its home in `tmp_path`, and the folder it works in."""
    for key, value in claude_environment(tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    work = tmp_path / "work"
    work.mkdir()
    return agent_cli("claude-code-acp"), work


@in_the_app
async def test_claude_codes_adapter_in_the_live_panes(tmp_path, anyio_backend, monkeypatch):
    from swedeck.core.acp.session import AcpSession
    from swedeck.tui.live.app import SwedeckApp

    adapter, work = _claude_adapter(tmp_path, monkeypatch)
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
            shown = await drive(pilot, app, work, "echo one > a.txt", "rm a.txt")
        received = [body for path, body in zip(server.paths, server.requests, strict=True)
                    if body.get("tools") and "count_tokens" not in path]
    check_record(tmp_path / "acp.traj.json", len(received) - 1)
    check_inspector(shown, received[0], "anthropic")
    assert any("keep a.txt" in json.dumps(body["messages"]) for body in received)


@in_the_app
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
            shown = await drive(pilot, app, work, "echo one > a.txt", "rm a.txt")
        received = list(server.requests)
    check_record(tmp_path / "acp.traj.json", len(received) - 1)
    check_inspector(shown, received[0], "responses")


def test_the_installed_swedeck_drives_claude_code_in_a_real_terminal(tmp_path):
    """`swedeck run --acp claude-code` in tmux: the confirmation, y, the follow-up question,
    and an empty follow-up ends it, with the record written."""
    import os
    import shlex
    import subprocess
    import uuid

    from conftest import swedeck_command
    from support.terminal import TMUX, exit_code, send_keys, wait_for_text

    agent_cli("claude-code-acp")
    work = tmp_path / "work"
    work.mkdir()
    environment = claude_environment(tmp_path / "home")
    with AnthropicServer() as server:
        server.script(Reply.acp_bash("echo one > a.txt", text="Writing a.txt."), Reply(text="Wrote it."))
        variables = [f"{name}={environment[name]}" for name in ("HOME", "ANTHROPIC_API_KEY", "IS_SANDBOX",
                                                                  "SWEDECK_AGENTS_DIR", "DISABLE_AUTOUPDATER")
                     if name in environment]
        command = shlex.join(["env", *variables, *swedeck_command(), "run", "--acp", "claude-code", "--upstream",
                              server.url, "-t", "make a.txt", "--cwd", str(work), "-o", str(tmp_path / "acp"),
                              "--mode", "confirm"])
        done = tmp_path / "exit-code"
        session = f"swedeck-acp-{uuid.uuid4().hex[:6]}"
        subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                        f"{command}; echo $? > {shlex.quote(str(done))}"], check=True)
        try:
            screen = wait_for_text(session, "echo one > a.txt", timeout=90)
            assert "ACP: claude-code" in screen
            wait_for_text(session, "Approve", timeout=30)
            send_keys(session, "y")
            wait_for_text(session, "follow-up", timeout=90)
            assert (work / "a.txt").read_text() == "one\n"
            send_keys(session, "i")
            send_keys(session, "Enter")
            wait_for_text(session, "session ended", timeout=60)
            send_keys(session, "C-q")  # the person quits: the process ends, and says how
            assert exit_code(done, timeout=30) == "0"
        finally:
            subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)
    assert os.path.getsize(tmp_path / "acp.traj.json") > 0
    data = json.loads((tmp_path / "acp.traj.json").read_text())
    assert [event["kind"] for event in data["meta_events"] if event["event"] == "acp_permission"] == ["allow_once"]


def test_a_claude_code_session_goes_on_from_its_record(tmp_path):
    """`swedeck run --resume RECORD` of an ACP record: the agent loads its session
    (session/load) and the next words go on from it, in a new record."""
    import subprocess

    from conftest import swedeck_command

    agent_cli("claude-code-acp")
    work = tmp_path / "work"
    work.mkdir()
    environment = claude_environment(tmp_path / "home")
    with AnthropicServer() as server:
        server.script(Reply(text="First answer."), Reply(text="Second answer."))
        first = subprocess.run([*swedeck_command(), "run", "--acp", "claude-code", "--headless", "-t", "the first words",
                                "--upstream", server.url, "-o", str(tmp_path / "one"), "--cwd", str(work)],
                               env=environment, capture_output=True, text=True, timeout=100)
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
        second = subprocess.run([*swedeck_command(), "run", "--resume", str(tmp_path / "one.traj.json"), "--headless",
                                 "-t", "the next words", "-o", str(tmp_path / "two")],
                                env=environment, capture_output=True, text=True, timeout=100)
        received = [body for path, body in zip(server.paths, server.requests, strict=True)
                    if body.get("tools") and "count_tokens" not in path]
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert "continuing the agent's session" in second.stdout and "Second answer." in second.stdout
    last = json.dumps(received[-1]["messages"])
    assert "the first words" in last and "First answer." in last and "the next words" in last
    session = next(event for event in json.loads((tmp_path / "two.traj.json").read_text())["meta_events"]
                   if event["event"] == "acp_session")
    assert session["loaded"] is True


@in_the_app
async def test_a_subagent_claude_code_starts_over_acp_is_in_the_live_tree(tmp_path, anyio_backend, monkeypatch):
    """Issue 65.4 under `--acp`: the real claude-code-acp starts a subagent (`Agent`); while the
    session waits for the person's next words, `S` lists it (from the record of the agent's
    traffic), with the step whose answer asked for it and its own steps."""
    from swedeck.core.acp.session import AcpSession
    from swedeck.tui.live.app import SwedeckApp
    from swedeck.tui.replay.subagent_screen import SubagentScreen
    from swedeck.tui.widgets.input_line import InputLine

    adapter, work = _claude_adapter(tmp_path, monkeypatch)
    with AnthropicServer() as server:
        server.script(Reply(text="Asking a helper.", tool=("Task", {
                          "description": "look around", "prompt": "list the files", "subagent_type": "general-purpose",
                          "run_in_background": False})),
                      Reply.acp_bash("ls", text="Listing."), Reply(text="Sub done."), Reply(text="Done."))
        config = make_config(tmp_path, ModelConfig(model_name="acp"), agent__mode="yolo")
        session = AcpSession(config, adapter, "look around", cwd=work, output=str(tmp_path / "acp"),
                             upstream=server.url)
        app = SwedeckApp(session)
        async with app.run_test(size=(140, 40)) as pilot:
            screen = app.session_screen
            line = screen.query_one(InputLine)
            await wait_for(pilot, lambda: line.purpose == "follow_up", 120)
            screen.query_one("Transcript").focus()
            await pilot.press("S")
            tree = await wait_for(pilot, lambda: isinstance(app.screen, SubagentScreen) and app.screen.root
                                  and app.screen, 30)
            (child,) = tree.root.children
            assert (child.id, child.parent_step, child.steps) == ("1", 1, 2), child
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen, 10)
            await pilot.press("i", "enter")  # no follow-up: the session ends
            await wait_for(pilot, lambda: screen.ended, 90)
