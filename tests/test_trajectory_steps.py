"""SPEC §9.2-9.3: a step is a model query, counted the same way everywhere: by the loader,
the live file's index, the replay model, and mini-swe-agent's own inspector reading our
final file (one page per model call, after a first page for the system and task)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.config import ModelConfig
from swedeck.core.messages import MessageType, make_message
from swedeck.core.models import get_model
from swedeck.core.models.base import ReplayExhausted
from swedeck.core.replay.document import open_document
from swedeck.core.trajectory.loader import load_trajectory


def mini_inspector_pages(messages: list[dict]) -> int:
    """How many pages mini-swe-agent's inspector shows for these messages (its own code)."""
    from minisweagent.run.utilities.inspector import _messages_to_steps

    return len(_messages_to_steps(messages))


@pytest.fixture()
def three_call_run(openai_server, tmp_path) -> Path:
    """A finished headless run with three model calls (the third submits), the live file kept."""
    openai_server.script(Turn.bash_tool("echo one > one.txt"), Turn.bash_tool("cat one.txt"),
                         Turn.bash_tool(f"{SUBMIT} && cat one.txt"))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    config.run.keep_jsonl = True
    result = run_session(config, "write one", Driver(), interactive=False)
    assert result.exit_status == "Submitted"
    return tmp_path / "session.traj.json"


def test_a_three_call_run_has_three_steps_everywhere(three_call_run: Path):
    saved = json.loads(three_call_run.read_text())
    final = [m for m in saved["messages"] if m["extra"]["message_type"] == "final"]
    assert len(final) == 1 and final[0]["role"] == "user"  # a record of the submission, not a query
    assert len(load_trajectory(three_call_run).steps) == 3
    live = three_call_run.with_name("session.traj.jsonl")
    assert open_document(live).step_count == open_document(three_call_run).step_count == 3
    assert mini_inspector_pages(saved["messages"]) == 3 + 1


def test_observations_carry_the_command_but_no_actions(three_call_run: Path):
    saved = json.loads(three_call_run.read_text())
    with_actions = [m["role"] for m in saved["messages"] if m["extra"].get("actions")]
    assert with_actions == ["assistant"] * 3
    observations = [m for m in saved["messages"] if m["extra"]["message_type"] == "observation"]
    assert [m["extra"]["command"] for m in observations] == ["echo one > one.txt", "cat one.txt",
                                                               f"{SUBMIT} && cat one.txt"]
    assert observations[1]["extra"]["raw_output"] == "one\n"
    assert "<returncode>0</returncode>" in observations[1]["content"]  # what the model got stays as it was


def test_replaying_a_run_re_executes_its_queries_and_not_its_submission(three_call_run: Path):
    model = get_model(ModelConfig(model_name=f"replay:{three_call_run}", model_kwargs={"tokens_per_second": 0}))
    task = [make_message("user", "write one", MessageType.TASK)]
    commands = [model.query(task).actions[0].command for _ in range(3)]
    assert commands == ["echo one > one.txt", "cat one.txt", f"{SUBMIT} && cat one.txt"]
    with pytest.raises(ReplayExhausted):
        model.query(task)


def test_human_mode_commands_are_not_pages_of_the_inspector(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo from-model"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="human")
    driver = Driver(inputs=["echo typed-by-a-person"])

    def back_to_yolo(d: Driver, event) -> None:  # after the person's command ran, the model goes on
        from swedeck.core import events as ev

        if isinstance(event, ev.CommandFinished) and "typed-by-a-person" in event.command:
            d.session.set_mode("yolo")

    driver.on_event = back_to_yolo
    result = run_session(config, "task", driver)
    assert result.exit_status == "Submitted"
    saved = json.loads((tmp_path / "session.traj.json").read_text())
    typed = [m for m in saved["messages"] if m["extra"].get("command") == "echo typed-by-a-person"]
    assert [m["extra"]["message_type"] for m in typed] == ["user_message", "observation"]
    assert mini_inspector_pages(saved["messages"]) == len(load_trajectory(tmp_path / "session.traj.json").steps) + 1
