"""SPEC §11.3: fork a live session from step k; re-execute recorded actions; re-run a whole
trajectory with the replay model."""

from __future__ import annotations

import json
import subprocess

from conftest import swedeck_command
from support.driver import Driver, make_config
from support.openai_server import Turn, model_config
from support.reliability import SUBMIT
from support.replay import add_step, start_writer
from swedeck.core import events as ev
from swedeck.core.replay.fork import actions_before, fork_history, fork_session
from swedeck.core.trajectory import load_trajectory


def file_steps(base):
    writer = start_writer(base)
    add_step(writer, 1, command="echo one > one.txt")
    add_step(writer, 2, command="cat one.txt >> two.txt && echo again >> two.txt")
    add_step(writer, 3, command="ls")
    return load_trajectory(writer.finish({"exit_status": "Submitted"}))


def test_fork_history_is_everything_before_the_query(tmp_path):
    trajectory = file_steps(tmp_path / "t")
    history = fork_history(trajectory, 3)
    assert history == trajectory.messages[: trajectory.steps[2].prompt_end]
    assert [m.message_type.value for m in history] == ["system", "task", "action", "observation", "action",
                                                     "observation"]
    assert fork_history(trajectory, 1) == trajectory.messages[:2]
    assert actions_before(trajectory, 3) == [(1, "echo one > one.txt"),
                                             (2, "cat one.txt >> two.txt && echo again >> two.txt")]
    assert actions_before(trajectory, -1) == actions_before(trajectory, 3)


def test_fork_sends_the_history_up_to_k_and_continues(openai_server, tmp_path):
    trajectory = file_steps(tmp_path / "t")
    work = tmp_path / "work"
    work.mkdir()
    openai_server.script(Turn.bash_tool("cat two.txt"), Turn.bash_tool(SUBMIT))
    config = make_config(work, model_config(openai_server), agent__mode="yolo")
    config.run.output = str(tmp_path / "fork.traj.json")
    session = fork_session(trajectory, 3, config, replay=True, interactive=False)
    driver = Driver()
    result = session.run(driver)

    assert result.exit_status == "Submitted", result.message
    first = openai_server.requests[0]["messages"]
    history = fork_history(trajectory, 3)
    assert [(m["role"], m["content"]) for m in first] == [(m.role, m.content) for m in history]
    assert (work / "two.txt").read_text() == "one\nagain\n"  # the actions ran before the first query
    assert [result.returncode for _, _, result in session.replayed] == [0, 0]
    forked = load_trajectory(result.trajectory_path)
    assert forked.messages[: len(history)] == history  # the fork's own file replays whole
    cat_step = next(step for step in forked.steps if step.commands == ["cat two.txt"])
    assert "one\nagain" in forked.observations(cat_step)[0].text


def test_fork_without_replay_starts_from_a_fresh_environment(openai_server, tmp_path):
    trajectory = file_steps(tmp_path / "t")
    work = tmp_path / "work"
    work.mkdir()
    openai_server.script(Turn.bash_tool(SUBMIT))
    config = make_config(work, model_config(openai_server), agent__mode="yolo")
    session = fork_session(trajectory, 2, config, interactive=False)
    result = session.run(Driver())
    assert result.exit_status == "Submitted"
    assert session.replayed == [] and not (work / "one.txt").exists()
    assert len(openai_server.requests[0]["messages"]) == len(fork_history(trajectory, 2))


def test_run_with_the_replay_model_re_executes_a_whole_trajectory(tmp_path):
    writer = start_writer(tmp_path / "recorded")
    add_step(writer, 1, command="echo rebuilt > made.txt")
    add_step(writer, 2, command=f"{SUBMIT} && cat made.txt")
    recorded = writer.finish({"exit_status": "Submitted"})
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "again.traj.json"
    completed = subprocess.run(
        [*swedeck_command(), "run", "-m", f"replay:{recorded}", "-c", "model.model_kwargs.tokens_per_second=0",
         "--headless", "--cwd", str(work), "-o", str(out), "-t", "Fix the bug in calc.py", "--exit-immediately"],
        capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr + completed.stdout
    assert (work / "made.txt").read_text() == "rebuilt\n"
    replayed = load_trajectory(out)
    assert replayed.info.exit_status == "Submitted"
    assert [s.commands for s in replayed.steps if s.commands] == [["echo rebuilt > made.txt"], [f"{SUBMIT} && cat made.txt"]]


def test_recorded_commands_are_untrusted_in_confirm_mode_each_is_asked(openai_server, tmp_path):
    """A file's commands, re-run by --replay-actions, are proposed like the model's: the person
    approves or rejects each, and a rejected one does not run."""
    trajectory = file_steps(tmp_path / "t")
    work = tmp_path / "work"
    work.mkdir()
    openai_server.script(Turn.bash_tool(SUBMIT))
    config = make_config(work, model_config(openai_server))  # confirm mode
    config.agent.whitelist_actions = ["^echo COMPLETE_TASK"]
    config.run.output = str(tmp_path / "fork.traj.json")
    session = fork_session(trajectory, 3, config, replay=True)
    driver = Driver(decisions=[ev.Decision("approve"), ev.Decision("reject", comment="not that one")], inputs=[None])
    driver.session = session
    result = session.run(driver)
    assert result.exit_status == "Submitted", result.message
    recorded = [command for _, command in actions_before(trajectory, 3)]
    assert [r.command for r in driver.of(ev.ConfirmationRequested)] == recorded
    assert [result is None for _, _, result in session.replayed] == [False, True]
    assert (work / "one.txt").exists() and not (work / "two.txt").exists()  # the rejected one did not run
    meta = [e for e in json.loads((tmp_path / "fork.traj.json").read_text())["meta_events"]
            if e["event"] == "replayed_command"]
    assert [e["approval"] for e in meta] == ["approved", "rejected"]


def test_a_fork_of_a_file_without_a_system_prompt_sends_swedecks_first(openai_server, tmp_path):
    """Claude Code and OpenHands v0 keep no system prompt: a fork sends swedeck's system prompt
    first, then the recorded messages, and its own file keeps that order (issue 43.10)."""
    from pathlib import Path

    agents = Path(__file__).parent / "fixtures" / "agents"
    for source in (agents / "claude-code" / "cc-session-1.jsonl", agents / "openhands" / "v0-events.json"):
        openai_server.requests.clear()
        trajectory = load_trajectory(source)
        work = tmp_path / source.stem
        work.mkdir()
        openai_server.script(Turn.bash_tool(SUBMIT))
        config = make_config(work, model_config(openai_server), agent__mode="yolo")
        config.run.output = str(tmp_path / f"{source.stem}.traj.json")
        history = fork_history(trajectory, 2)
        session = fork_session(trajectory, 2, config, interactive=False)
        result = session.run(Driver())
        assert result.exit_status == "Submitted", result.message
        sent = openai_server.requests[0]["messages"]
        assert [m["role"] for m in sent].count("system") == 1 and sent[0]["role"] == "system", source
        ours = 0 if history[0].role == "system" else 1  # the file's own system prompt, where it kept one
        assert [m["content"] for m in sent[ours:]] == [m.content for m in history], source
        forked = load_trajectory(result.trajectory_path)
        assert forked.messages[0].role == "system" and forked.messages[ours:len(history) + ours] == history
