"""The ACP client against a scripted agent (tests/support/acp_agent.py, a real process speaking
the protocol over stdio): terminals in swedeck's environment, and the faults the real adapters
do not show on demand. The real adapters are in tests/test_record.py and tests/test_acp_live.py."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support.docker_env import docker_config
from swedeck.core.acp.run import run_acp
from swedeck.core.config import EnvironmentConfig

AGENT = Path(__file__).parent / "support" / "acp_agent.py"


def scripted(tmp_path: Path, turns: list[list[dict[str, Any]]], **extra: Any) -> tuple[str, Path]:
    log = tmp_path / "agent-received.jsonl"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns, "log": str(log), **extra}))
    return shlex.join([sys.executable, str(AGENT), str(script)]), log


def events(path: Path, name: str) -> list[dict[str, Any]]:
    return [event for event in json.loads(path.read_text())["meta_events"] if event["event"] == name]


def said(lines: list[str]) -> str:
    return "\n".join(lines)


def run(tmp_path: Path, turns: list[list[dict[str, Any]]], environment: EnvironmentConfig | None = None,
        **extra: Any) -> tuple[Any, list[str], Path]:
    spec, log = scripted(tmp_path, turns, **extra)
    lines: list[str] = []
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    result = run_acp(spec, "the task", cwd=work, output=str(tmp_path / "acp"), say=lines.append,
                     environment=environment)
    return result, lines, log


def chunk(text: str) -> dict[str, Any]:
    return {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}


def test_a_terminal_runs_in_swedecks_shell_with_its_folder_variables_and_limit(tmp_path):
    (tmp_path / "work" / "sub").mkdir(parents=True)
    result, lines, _ = run(tmp_path, [[
        {"terminal": {"toolCallId": "t1", "command": "sh", "args": ["-c", "pwd; echo $GREETING; exit 3"],
                      "cwd": str(tmp_path / "work" / "sub"), "env": [{"name": "GREETING", "value": "hello there"}]}},
        {"terminal": {"toolCallId": "t2", "command": "printf 'x%.0s' $(seq 1 100); echo ' é end'", "limit": 6}},
        {"terminal": {"toolCallId": "t3", "command": "pwd"}},
    ]])
    text = said(lines)
    assert result.exit_code == 0, text
    assert f"terminal: exit 3 signal None truncated False output '{tmp_path / 'work' / 'sub'}\\nhello there\\n'" in text
    # the newest 6 bytes would begin inside "é": the output begins at the next character
    assert "terminal: exit 0 signal None truncated True output ' end\\n'" in text
    assert f"output '{tmp_path / 'work'}\\n'" in text  # a subshell: the first terminal's cd did not stay
    recorded = events(result.path, "acp_terminal")
    assert [(event["exit_code"], event["environment"]) for event in recorded] == [(3, "local"), (0, "local"), (0, "local")]
    tools = events(result.path, "acp_tool")
    assert tools[0]["status"] == "failed" and "hello there" in tools[0]["output"]


def test_a_killed_terminal_ends_with_a_signal(tmp_path):
    started = time.monotonic()
    result, lines, _ = run(tmp_path, [[{"terminal": {"toolCallId": "t1", "command": "echo begun; sleep 30",
                                                     "kill_when": "begun"}}]])
    assert time.monotonic() - started < 25
    assert "terminal: exit None signal SIGKILL truncated False output 'begun\\n" in said(lines), said(lines)


def test_a_terminal_runs_in_swedecks_docker_container(tmp_path):
    environment = docker_config(cwd="/tmp")
    result, lines, _ = run(tmp_path, [[{"terminal": {"toolCallId": "t1", "command": "cat /etc/hostname; pwd"}}]],
                           environment=environment)
    text = said(lines)
    assert result.exit_code == 0, text
    hostname = (Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else "")
    reported = events(result.path, "acp_terminal")[0]
    assert reported["environment"] == "docker" and reported["output"].endswith("/tmp\n")
    assert reported["output"].splitlines()[0] != hostname  # the container's, not this machine's


def test_files_are_read_and_written_only_inside_the_session_folder(tmp_path):
    result, lines, _ = run(tmp_path, [[
        {"write": {"path": str(tmp_path / "work" / "a" / "new.txt"), "content": "written ✓"}},
        {"read": {"path": str(tmp_path / "work" / "a" / "new.txt")}},
        {"read": {"path": str(tmp_path / "script.json")}},
        {"write": {"path": str(tmp_path / "work" / ".." / "escaped.txt"), "content": "no"}},
    ]])
    assert (tmp_path / "work" / "a" / "new.txt").read_text() == "written ✓"
    assert not (tmp_path / "escaped.txt").exists()
    text = said(lines)
    assert 'read: {"content": "written \\u2713"}' in text
    assert "outside the session's folder" in text
    assert [event["path"] for event in events(result.path, "acp_write")] == [str(tmp_path / "work" / "a" / "new.txt")]


def test_malformed_and_unknown_messages_are_said_counted_and_never_a_crash(tmp_path):
    result, lines, _ = run(tmp_path, [[
        {"raw": "{this is not json"},
        {"update": {"sessionUpdate": "a_future_update", "whatever": 1}},
        chunk("still here"),
    ]])
    text = said(lines)
    assert result.exit_code == 0, text
    assert "cannot read (1): not JSON" in text
    assert "cannot read (2): session/update of an unknown type 'a_future_update'" in text
    assert "agent: still here" in text
    assert [event["what"] for event in events(result.path, "acp_unreadable")] == [
        "not JSON", "session/update of an unknown type 'a_future_update'"]
    assert events(result.path, "acp_unreadable_total")[0]["count"] == 2


def test_an_agent_that_dies_mid_prompt_is_said_and_nothing_is_lost(tmp_path):
    result, lines, _ = run(tmp_path, [[
        {"ask": {"toolCall": {"toolCallId": "c1", "title": "rm -rf build"},
                 "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}},
        chunk("about to fall over"), {"die": 9}]])
    text = said(lines)
    assert result.exit_code == 1 and result.stop_reason == "error"
    assert "the ACP agent failed: it ended (or closed its output) before it answered" in text
    data = json.loads(result.path.read_text())
    assert data["info"]["exit_status"] == "ACP: error"
    assert [event["title"] for event in events(result.path, "acp_permission")] == ["rm -rf build"]
    assert events(result.path, "acp_prompt")[0]["text"] == "the task"


def test_a_huge_tool_output_arrives_whole(tmp_path):
    size = 50 << 20
    result, lines, _ = run(tmp_path, [[{"big": size, "toolCallId": "b1"}, chunk("done")]])
    assert result.exit_code == 0, said(lines)
    assert len(events(result.path, "acp_tool")[0]["output"]) == size
    assert "agent: done" in said(lines)


def test_a_permission_asked_after_the_person_cancels_is_answered_cancelled(tmp_path):
    from swedeck.core import events as ev
    from swedeck.core.acp.session import AcpSession
    from swedeck.core.config import SwedeckConfig

    ask = {"options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"},
                       {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}
    spec, log = scripted(tmp_path, [[{"ask": {"toolCall": {"toolCallId": "c1", "title": "first"}, **ask}},
                                     {"wait_cancel": True},
                                     {"ask": {"toolCall": {"toolCallId": "c2", "title": "second"}, **ask}}]])
    config = SwedeckConfig.model_validate({"agent": {"mode": "confirm"}})
    session = AcpSession(config, spec, "the task", cwd=tmp_path, output=str(tmp_path / "acp"))
    seen: list[Any] = []

    def emit(event: Any) -> None:
        seen.append(event)
        if isinstance(event, ev.ConfirmationRequested):
            session.interrupt()  # Esc while the person is asked: session/cancel
        elif isinstance(event, ev.InputRequested):
            event.future.set_result("")

    result = session.run(emit)
    asked = [event.command for event in seen if isinstance(event, ev.ConfirmationRequested)]
    assert asked == ["first"]  # the second request came after the cancel: never put to the person
    permissions = events(Path(str(result.trajectory_path)), "acp_permission")
    assert [(event["title"], event["kind"], event.get("reason")) for event in permissions] == [
        ("first", "cancelled", None), ("second", "cancelled", "asked after session/cancel")]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(message.get("method") == "session/cancel" for message in received)
    answers = [message["result"]["outcome"] for message in received
               if isinstance(message.get("result"), dict) and "outcome" in message["result"]]
    assert answers == [{"outcome": "cancelled"}, {"outcome": "cancelled"}]
    assert result.message == "ACP: cancelled"


def test_an_acp_record_forks_only_where_its_agent_can_load_it(tmp_path):
    """An ACP agent loads a whole session (session/load), never part of one: the fork is at the
    last step, of an agent that can load, and says why anywhere else."""
    from swedeck.core.acp.fork import acp_resume
    from swedeck.core.errors import UsageError
    from swedeck.core.trajectory.loader import load_trajectory

    for load, folder in ((False, "cannot"), (True, "can")):
        (tmp_path / folder).mkdir()
        result, _, _ = run(tmp_path / folder, [[chunk("hello")]], load_session=load)
        trajectory = load_trajectory(result.path)
        if not load:
            with pytest.raises(UsageError, match="cannot load a session"):
                acp_resume(trajectory, len(trajectory.steps))
            continue
        resume = acp_resume(trajectory, len(trajectory.steps))
        assert resume is not None and resume.session_id == "scripted-session-1"
        assert resume.cwd == str(tmp_path / folder / "work")


def test_a_resumed_acp_session_loads_the_agents_session_and_goes_on(tmp_path):
    history = [chunk("said before")["update"], {"sessionUpdate": "user_message_chunk",
                                                 "content": {"type": "text", "text": "asked before"}}]
    spec, log = scripted(tmp_path, [[chunk("went on")]], load_session=True, history=history)
    lines: list[str] = []
    result = run_acp(spec, "next words", cwd=tmp_path, output=str(tmp_path / "resumed"), say=lines.append,
                     resume="scripted-session-1")
    assert result.exit_code == 0 and "agent: went on" in said(lines)
    assert "said before" not in said(lines)  # the agent's history as it loaded: counted, not new words
    assert "2 updates of its history" in said(lines)
    received = [json.loads(line) for line in log.read_text().splitlines()]
    methods = [message.get("method") for message in received]
    assert "session/load" in methods and "session/new" not in methods
    load = next(message for message in received if message.get("method") == "session/load")
    assert load["params"]["sessionId"] == "scripted-session-1"
    session = events(result.path, "acp_session")[0]
    assert session["loaded"] is True and session["session_id"] == "scripted-session-1"
    assert session["history_updates"] == 2


def test_swedecks_rules_answer_an_acp_agents_requests_with_their_explanation(tmp_path):
    from swedeck.core import events as ev
    from swedeck.core.acp.session import AcpSession
    from swedeck.core.config import SwedeckConfig

    options = [{"optionId": "once", "name": "Allow", "kind": "allow_once"},
               {"optionId": "always", "name": "Always", "kind": "allow_always"},
               {"optionId": "no", "name": "Reject", "kind": "reject_once"}]

    def ask(call: str, command: Any) -> dict[str, Any]:
        return {"ask": {"toolCall": {"toolCallId": call, "title": f"run {call}", "rawInput": {"command": command}},
                        "options": options}}

    spec, log = scripted(tmp_path, [[ask("c1", "ls -la"), ask("c2", "rm build.log"),
                                     ask("c3", ["/bin/bash", "-lc", "rm build.log"]), ask("c4", "curl https://example.com")]])
    config = SwedeckConfig.model_validate({"agent": {"mode": "confirm", "whitelist_actions": ["^ls\\b"]}})
    session = AcpSession(config, spec, "the task", cwd=tmp_path, output=str(tmp_path / "acp"))
    asked: list[str] = []
    decided: list[tuple[str, str, str]] = []

    def emit(event: Any) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            asked.append(event.command)
            event.future.set_result(ev.Decision(kind="always_allow" if len(asked) == 1 else "reject", comment="no"))
        elif isinstance(event, ev.ActionDecided):
            decided.append((event.command, event.decision, event.reason))
        elif isinstance(event, ev.InputRequested):
            event.future.set_result("")

    result = session.run(emit)
    # what will run is shown, the agent's title beside it (issue 61.4: the title alone can say anything)
    assert asked == ["rm build.log    (run c2)", "curl https://example.com    (run c4)"]  # ls by the whitelist
    assert decided[0] == ("ls -la    (run c1)", "auto", "whitelisted")
    assert decided[1] == ("rm build.log    (run c2)", "approved", "and from now on: rm …")
    assert decided[2] == ("rm build.log    (run c3)", "auto", "always allowed: rm …")  # Codex's form of the same
    assert decided[3] == ("curl https://example.com    (run c4)", "rejected", "no")
    answers = [event["answer"] for event in events(Path(str(result.trajectory_path)), "acp_permission")]
    assert answers == ["once", "always", "once", "no"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_live_panes_show_the_plan_a_terminals_output_and_an_unknown_update(tmp_path, anyio_backend):
    from support.driver import make_config
    from support.waiting import wait_for
    from swedeck.core.acp.session import AcpSession
    from swedeck.core.config import ModelConfig
    from swedeck.tui.live.app import SwedeckApp
    from swedeck.tui.widgets.input_line import InputLine
    from swedeck.tui.widgets.note import Note
    from swedeck.tui.widgets.observation_pane import ObservationPane
    from swedeck.tui.widgets.plan_panel import PlanPanel

    plan = {"update": {"sessionUpdate": "plan", "entries": [
        {"content": "read the code", "status": "completed", "priority": "high"},
        {"content": "[bold]fix[/bold] the bug", "status": "in_progress", "priority": "high"},
        {"content": "run the tests", "status": "pending", "priority": "medium"}]}}
    spec, _ = scripted(tmp_path, [[plan, {"terminal": {"toolCallId": "t1", "command": "echo streamed-line"}},
                                   {"update": {"sessionUpdate": "a_future_update"}}, chunk("done")]])
    config = make_config(tmp_path, ModelConfig(model_name="acp"), agent__mode="yolo")
    app = SwedeckApp(AcpSession(config, spec, "the task", cwd=tmp_path, output=str(tmp_path / "acp")))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.session_screen
        await wait_for(pilot, lambda: screen.query_one(InputLine).purpose == "follow_up", 60)
        panel = screen.query_one(PlanPanel)
        assert panel.display and str(panel.render()) == (
            "plan 1/3 done\n  ✓ read the code\n  ▶ [bold]fix[/bold] the bug\n  · run the tests")  # literal
        records = list(screen.query_one(ObservationPane).records.values())
        assert any("streamed-line" in record.output for record in records)
        notes = [str(note.render()) for note in screen.query(Note)]
        assert any("unknown type 'a_future_update'" in note for note in notes)
        await pilot.press("i", "enter")
        await wait_for(pilot, lambda: screen.ended, 60)


DENY_RM = 'prefix_rule(pattern = ["rm"], decision = "forbidden")\nprefix_rule(pattern = ["ls"], decision = "allow")\n'


def test_headless_the_rules_deny_a_permission_request_and_an_unasked_terminal(tmp_path):
    """Issue 60.1: headless answers through the same gate as the live screen: a request to run a
    denied command is rejected, and a terminal whose command the rules deny never runs (it exits
    126 with the rule's words); what they do not deny runs."""
    from swedeck.core.config import SwedeckConfig

    rules = tmp_path / "policy.rules"
    rules.write_text(DENY_RM)
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim.txt").write_text("keep me\n")
    options = [{"optionId": "once", "name": "Allow", "kind": "allow_once"},
               {"optionId": "no", "name": "Reject", "kind": "reject_once"}]
    spec, log = scripted(tmp_path, [[
        {"ask": {"toolCall": {"toolCallId": "c1", "title": "Remove the file", "rawInput": {"command": "rm victim.txt"}},
                 "options": options}},
        {"terminal": {"toolCallId": "t1", "command": "rm victim.txt"}},
        {"terminal": {"toolCallId": "t2", "command": "bash", "args": ["-c", "env rm -f victim.txt"]}},
        {"terminal": {"toolCallId": "t3", "command": "echo still here"}}]])
    config = SwedeckConfig.model_validate({"agent": {"rules": [str(rules)]}})
    lines: list[str] = []
    result = run_acp(spec, "the task", cwd=work, output=str(tmp_path / "acp"), say=lines.append, config=config)
    assert (work / "victim.txt").read_text() == "keep me\n"
    received = [json.loads(line) for line in log.read_text().splitlines()]
    answers = [message["result"]["outcome"].get("optionId") for message in received
               if isinstance(message.get("result"), dict) and "outcome" in message["result"]]
    assert answers == ["no"]
    text = said(lines)
    assert "permission: $ rm victim.txt  (Remove the file) -> Reject: denied by the rules" in text
    assert text.count("terminal refused:") == 2
    assert "terminal: exit 126" in text and "swedeck: not run: denied by the rules" in text
    assert "terminal: exit 0 signal None truncated False output 'still here\\n'" in text
    terminals = events(result.path, "acp_terminal")
    assert [terminal.get("refused", "")[:19] for terminal in terminals] == [
        "denied by the rules", "denied by the rules", ""]


def test_live_confirm_asks_for_what_no_request_carried_and_shows_what_will_run(tmp_path):
    """Issue 60.1 and 61.4: in confirm mode a terminal runs unasked only when a permission request
    the person allowed carried its command; any other terminal, and a file write no request
    carried, is asked about. The prompt shows the command that will run (the request's
    `rawInput`), the agent's title beside it, and `a` makes a rule for that command."""
    from swedeck.core import events as ev
    from swedeck.core.acp.session import AcpSession
    from swedeck.core.config import SwedeckConfig

    work = tmp_path / "work"
    work.mkdir()
    options = [{"optionId": "once", "name": "Allow", "kind": "allow_once"},
               {"optionId": "always", "name": "Always", "kind": "allow_always"},
               {"optionId": "no", "name": "Reject", "kind": "reject_once"}]
    spec, log = scripted(tmp_path, [[
        {"ask": {"toolCall": {"toolCallId": "c1", "title": "ls -la", "rawInput": {"command": "echo hidden > h.txt"}},
                 "options": options}},
        {"terminal": {"toolCallId": "c1", "command": "echo hidden > h.txt"}},  # carried by c1: not asked again
        {"terminal": {"toolCallId": "t2", "command": "echo unasked > u.txt"}},  # asked, rejected: never runs
        {"write": {"path": str(work / "w.txt"), "content": "written"}},  # asked, approved
        {"write": {"path": str(work / "x.txt"), "content": "not written"}}]])  # asked, rejected
    config = SwedeckConfig.model_validate({"agent": {"mode": "confirm"}})
    session = AcpSession(config, spec, "the task", cwd=work, output=str(tmp_path / "acp"))
    asked: list[str] = []
    answers = iter(["always_allow", "reject", "approve", "reject"])

    def emit(event: Any) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            asked.append(event.command)
            event.future.set_result(ev.Decision(kind=next(answers)))  # type: ignore[arg-type]
        elif isinstance(event, ev.InputRequested):
            event.future.set_result("")

    session.run(emit)
    assert asked[0] == "echo hidden > h.txt    (ls -la)"  # what runs, with the title that said otherwise
    assert asked[1] == "echo unasked > u.txt"
    assert asked[2].startswith(f"write {work / 'w.txt'} (7 characters)") and asked[3].startswith("write")
    assert len(asked) == 4
    assert (work / "h.txt").read_text() == "hidden\n" and not (work / "u.txt").exists()
    assert (work / "w.txt").read_text() == "written" and not (work / "x.txt").exists()
    approvals = session._gate.gate.approvals  # `a`: a rule for what was shown and approved, never for the title
    assert approvals.allowed_by("echo hidden > h.txt") is not None and approvals.allowed_by("ls -la") is None
    writes = events(Path(str(session.trajectory_path)), "acp_write")
    assert [write.get("refused") for write in writes] == [None, "the person did not allow it"]


def test_sigterm_ends_a_headless_acp_session_whole(tmp_path):
    """Issue 61.10: SIGTERM to `swedeck run --acp --headless` ends the session as an interrupt
    does: the agent's process group is ended and the final file is written with the status."""
    import signal
    import subprocess

    from conftest import swedeck_command
    from support.agent_clis import processes_in
    from support.waiting import wait_until

    work = tmp_path / "work"
    work.mkdir()
    spec, log = scripted(tmp_path, [[chunk("working"), {"wait_cancel": True}]])
    running = subprocess.Popen([*swedeck_command(), "run", "--acp", spec, "--headless", "-t", "the task", "-o",
                                str(tmp_path / "acp"), "--cwd", str(work)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_until(lambda: log.exists() and "session/prompt" in log.read_text(), timeout=60, what="the prompt")
        running.send_signal(signal.SIGTERM)
        out, err = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 128 + signal.SIGTERM, out + err
    final = json.loads((tmp_path / "acp.traj.json").read_text())
    assert final["info"]["exit_status"] == "ACP: stopped by SIGTERM"
    wait_until(lambda: not processes_in(work), timeout=15, what="the agent ended")


def test_start_up_is_said_phase_by_phase_and_a_wait_restarts_while_the_agent_talks(tmp_path, monkeypatch):
    """Issue 60.9: spawn, initialize, session/new and the first update are said with their times;
    a start-up phase waits from the agent's last sign of life (a line on stderr restarts it), and
    an agent that exits or falls silent is said by phase."""
    import shlex

    import swedeck.core.acp.run as acp_run

    result, lines, _ = run(tmp_path, [[chunk("hello")]])
    text = said(lines)
    for phase in ("spawn", "initialize", "session/new", "first update"):
        assert f"swedeck: start-up: {phase} at " in text, text
    session = events(result.path, "acp_session")[0]
    assert list(session["startup_s"]) == ["spawn", "initialize", "session/new"]

    monkeypatch.setattr(acp_run, "START_TIMEOUT_S", 1.5)
    spec, _ = scripted(tmp_path, [[chunk("late but here")]])
    slow = tmp_path / "slow.sh"  # talks on stderr for 3 s (twice the wait) before it starts the agent
    slow.write_text(f"for i in 1 2 3 4 5 6; do echo warming up >&2; sleep 0.5; done\nexec {spec}\n")
    lines = []
    done = run_acp(f"bash {shlex.quote(str(slow))}", "the task", cwd=tmp_path, output=str(tmp_path / "slow"),
                   say=lines.append)
    assert done.stop_reason == "end_turn" and "late but here" in said(lines)

    silent = f"{sys.executable} -c 'import time; time.sleep(30)'"
    lines = []
    done = run_acp(silent, "the task", cwd=tmp_path, output=str(tmp_path / "silent"), say=lines.append)
    assert done.stop_reason == "error" and "did not answer initialize and said nothing for 2 s" in said(lines)
    lines = []
    done = run_acp(f"{sys.executable} -c 'import sys, time; time.sleep(0.3); sys.exit(3)'", "the task", cwd=tmp_path,
                   output=str(tmp_path / "gone"), say=lines.append)
    assert done.stop_reason == "error" and "before it answered initialize" in said(lines), said(lines)


def test_a_fifo_or_a_huge_file_in_the_session_folder_is_refused_not_read(tmp_path, monkeypatch):
    """Issue 61.9-10: the agent's `fs/read_text_file` reads regular files only, with a bound: a
    FIFO (which would hang the session) and a file over the bound are refused with a reason."""
    import os

    import swedeck.core.acp.run as acp_run

    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "pipe")
    (work / "big.txt").write_text("x" * 5000)
    (work / "small.txt").write_text("hello\n")
    monkeypatch.setattr(acp_run, "READ_LIMIT", 4096)
    result, lines, _ = run(tmp_path, [[{"read": {"path": str(work / "pipe")}}, {"read": {"path": str(work / "big.txt")}},
                                       {"read": {"path": str(work / "small.txt")}}]])
    text = said(lines)
    assert result.stop_reason == "end_turn"
    assert "not a regular file" in text and "more than 4,096" in text and '"content": "hello\\n"' in text


def test_a_follower_never_blocks_on_what_sits_in_the_answers_place(tmp_path):
    """Issue 61.9: `OUT.traj.stream` as a FIFO or a link to /dev/zero is not read (the view would
    freeze, or read without end)."""
    import os

    from swedeck.core.record.live import stream_path, streaming_answer

    record = tmp_path / "run.traj.jsonl"
    os.mkfifo(stream_path(record))
    assert streaming_answer(record) is None
    stream_path(record).unlink()
    os.symlink("/dev/zero", stream_path(record))
    assert streaming_answer(record) is None


def test_what_the_agent_leaves_running_in_a_session_of_its_own_ends_with_the_session(tmp_path):
    """Issue 61.10: a `setsid` child of the agent (outside its process group) is adopted by
    swedeck (a subreaper) and ended with the session."""
    import os

    from support.waiting import wait_until

    marker = tmp_path / "daemon.pid"  # written by the daemon once it runs
    daemon = ["sh", "-c", f"echo $$ > '{marker}'; exec sleep 300"]
    result, lines, _ = run(tmp_path, [[{"spawn": daemon}, {"wait_file": str(marker)}, chunk("started a daemon")]])
    assert marker.exists() and marker.read_text(), "the daemon started while the session ran"
    pid = int(marker.read_text())

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"

    wait_until(gone, timeout=15, what="the daemon ended with the session")
    assert result.stop_reason == "end_turn"
