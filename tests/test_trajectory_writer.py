"""SPEC §9.1, §9.2, §9.4, §9.5: the live `.jsonl`, the atomic final file, secrets, resume."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from conftest import MINI_FIXTURE
from support.waiting import wait_until
from swedeck.core import paths
from swedeck.core.messages import Message, MessageType, make_message
from swedeck.core.redact import Redactor, secret_values
from swedeck.core.trajectory import load_trajectory
from swedeck.core.trajectory.writer import TrajectoryWriter

T = MessageType
SECRET = "sk-live-0123456789abcdef"
ENV_SECRET = "ghp_forwardedtokenvalue"


def _meta(config: dict | None = None) -> dict:
    return {"id": "0123456789abcdef", "started": 1.0, "swedeck_version": "0.1", "model": "openai/gpt-4o",
            "environment": "local", "config": config or {"model": {"model_name": "openai/gpt-4o"}}}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_header_then_one_line_per_message_visible_before_finish(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "run", _meta(), Redactor())
    assert writer.path == tmp_path / "run.traj.jsonl"
    header = _lines(writer.path)
    assert header == [{"role": "meta", "format": "swedeck-traj/1", "session": _meta()}]
    writer.add_message(make_message("system", "sys", T.SYSTEM))
    writer.add_message(make_message("user", "the task", T.TASK))
    # another reader (a fresh open, as `tail -f` or `swedeck watch` does) sees both lines now
    lines = _lines(writer.path)
    assert [(line["role"], line["extra"]["message_type"]) for line in lines[1:]] == [("system", "system"),
                                                                                     ("user", "task")]
    loaded = load_trajectory(writer.path)
    assert loaded.format == "swedeck-jsonl" and [m.text for m in loaded.messages] == ["sys", "the task"]
    writer.close()


def test_files_are_private(tmp_path: Path) -> None:
    os.umask(0o022)
    writer = TrajectoryWriter(tmp_path / "a.traj.jsonl", _meta(), Redactor(), keep_jsonl=True)
    assert _mode(writer.path) == 0o600
    final = writer.finish({"exit_status": "Submitted"})
    assert _mode(final) == 0o600 and _mode(writer.path) == 0o600


def test_default_name_under_the_data_dir() -> None:
    writer = TrajectoryWriter(None, _meta(), Redactor())
    assert writer.path.parent == paths.trajectories_dir()
    assert writer.path.name.endswith("-01234567.traj.jsonl")
    writer.close()


def test_final_file_replaces_jsonl(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "s", _meta(), Redactor())
    writer.add_message(make_message("user", "task", T.TASK))
    writer.add_meta("processors_change", hash="abc", processors=[{"type": "last_n_observations", "n": 3}])
    writer.add_message(make_message("assistant", "hi", T.ASSISTANT_MESSAGE))
    final = writer.finish({"exit_status": "Submitted", "submission": "patch",
                           "model_stats": {"instance_cost": 0.25, "api_calls": 1, "prompt_tokens": 10,
                                           "completion_tokens": 2}})
    assert final == tmp_path / "s.traj.json" and not writer.path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.traj.json"]  # no temp file left
    document = json.loads(final.read_text())
    assert document["trajectory_format"] == "swedeck-1"
    assert document["info"]["model_stats"] == {"instance_cost": 0.25, "api_calls": 1, "prompt_tokens": 10,
                                               "completion_tokens": 2}
    assert document["info"]["swedeck_version"] == "0.1"
    # what mini-swe-agent's inspector reads: a list of role/content messages
    assert [(m["role"], m["content"]) for m in document["messages"]] == [("user", "task"), ("assistant", "hi")]
    loaded = load_trajectory(final)
    assert loaded.format == "swedeck-json" and loaded.info.exit_status == "Submitted"
    assert loaded.processors == {"abc": [{"type": "last_n_observations", "n": 3}]}
    assert loaded.meta_events[0].message_count == 1
    assert writer.finish({"exit_status": "ignored"}) == final


def test_keep_jsonl_keeps_it_with_an_end_line(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "k", _meta(), Redactor(), keep_jsonl=True)
    writer.finish(exit_status="LimitsExceeded", submission="")
    assert writer.path.exists()
    loaded = load_trajectory(writer.path)
    assert loaded.info.exit_status == "LimitsExceeded" and loaded.meta_events[-1].event == "end"


def test_final_write_is_atomic(tmp_path: Path) -> None:
    final = tmp_path / "x.traj.json"
    final.write_text('{"old": true}')
    writer = TrajectoryWriter(tmp_path / "x", _meta(), Redactor())
    writer.add_message(make_message("user", "t", T.TASK))
    inode_before = final.stat().st_ino
    writer.finish({"exit_status": "Submitted"})
    assert final.stat().st_ino != inode_before  # a new file renamed over, never rewritten in place
    assert json.loads(final.read_text())["trajectory_format"] == "swedeck-1"


def test_secrets_never_reach_the_files(tmp_path: Path) -> None:
    config = {"model": {"model_name": "gpt", "api_key": SECRET, "model_kwargs": {"api_key": SECRET, "max_tokens": 9}},
              "environment": {"env": {"GITHUB_TOKEN": ENV_SECRET}}}
    redactor = Redactor(secret_values(config))
    writer = TrajectoryWriter(tmp_path / "sec", _meta(config), redactor, keep_jsonl=True)
    writer.add_message(make_message("user", "run echo $GITHUB_TOKEN", T.TASK))
    writer.add_message(make_message("user", f"<output>{ENV_SECRET}\nkey={SECRET}</output>", T.OBSERVATION))
    writer.add_meta("limit_change", note=f"token {SECRET}")
    final = writer.finish({"exit_status": "Submitted", "submission": f"diff {ENV_SECRET}"})
    for path in (writer.path, final):
        text = path.read_text()
        assert SECRET not in text and ENV_SECRET not in text
        assert "***" in text
    header = _lines(writer.path)[0]
    assert header["session"]["config"]["model"]["model_kwargs"] == {"api_key": "***", "max_tokens": 9}


def test_resume_appends_to_a_crashed_jsonl(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "c", _meta(), Redactor())
    writer.add_message(make_message("user", "task", T.TASK))
    writer.close()
    with open(writer.path, "ab") as handle:  # died mid-line
        handle.write(b'{"role": "assistant", "cont')
    crashed = load_trajectory(writer.path)
    again = TrajectoryWriter.resume(writer.path, _meta(), Redactor(), messages=crashed.messages)
    assert again.path == writer.path
    again.add_message(make_message("assistant", "next", T.ASSISTANT_MESSAGE))
    loaded = load_trajectory(writer.path)
    assert [m.text for m in loaded.messages] == ["task", "next"] and not loaded.info.warnings
    final = again.finish({"exit_status": "Submitted"})
    assert [m.text for m in load_trajectory(final).messages] == ["task", "next"]


def test_resume_from_another_format_starts_a_seeded_jsonl(tmp_path: Path) -> None:
    source = tmp_path / "github_issue.traj.json"
    source.write_text(MINI_FIXTURE.read_text())
    messages = load_trajectory(source).messages
    writer = TrajectoryWriter.resume(source, _meta(), Redactor(), messages=messages)
    assert writer.path.name == "github_issue.resumed-01234567.traj.jsonl"
    assert len(load_trajectory(writer.path).messages) == len(messages)
    writer.add_message(make_message("user", "a follow-up task", T.TASK))
    final = writer.finish({"exit_status": "Submitted"})
    assert final != source and source.read_text() == MINI_FIXTURE.read_text()
    assert len(load_trajectory(final).messages) == len(messages) + 1


_CHILD = """
import sys, time
from swedeck.core.messages import MessageType, make_message
from swedeck.core.redact import Redactor
from swedeck.core.trajectory.writer import TrajectoryWriter
writer = TrajectoryWriter(sys.argv[1], {"id": "child"}, Redactor())
for number in range(100000):
    writer.add_message(make_message("user", "x" * 5000 + str(number), MessageType.OBSERVATION))
    if number == 3:
        print("ready", flush=True)
"""


def test_sigkill_mid_write_leaves_a_loadable_jsonl(tmp_path: Path) -> None:
    target = tmp_path / "killed"
    live = target.with_name("killed.traj.jsonl")
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        wait_until(lambda: live.stat().st_size > 20 * 5000, what="the child to be writing")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    with open(live, "ab") as handle:  # make sure the tail is torn, whatever instant the kill hit
        handle.write(b'{"role": "user", "content": "xx')
    loaded = load_trajectory(live)
    assert len(loaded.messages) >= 20
    assert all(isinstance(m, Message) for m in loaded.messages)
    assert any("incomplete" in warning for warning in loaded.info.warnings)


def test_garbage_in_the_middle_of_a_jsonl_is_skipped_with_a_warning_naming_the_line(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "g", _meta(), Redactor())
    writer.close()
    with open(writer.path, "a") as handle:
        handle.write("garbage\n")
        handle.write(json.dumps(make_message("user", "t", T.TASK).to_record()) + "\n")
    loaded = load_trajectory(writer.path)
    assert [m.text for m in loaded.messages] == ["t"]
    assert len(loaded.info.warnings) == 1 and loaded.info.warnings[0].startswith("line 2 is damaged (")


def test_a_second_session_on_the_same_output_is_refused_and_the_first_keeps_its_file(tmp_path):
    import pytest as _pytest

    from swedeck.core.errors import SwedeckError
    from swedeck.core.messages import MessageType, make_message
    from swedeck.core.trajectory.loader import load_trajectory
    from swedeck.core.trajectory.writer import TrajectoryWriter

    first = TrajectoryWriter(tmp_path / "same", {"id": "one"})
    first.add_message(make_message("user", "the first task", MessageType.TASK))
    with _pytest.raises(SwedeckError, match="being written by another swedeck session"):
        TrajectoryWriter(tmp_path / "same", {"id": "two"})
    first.add_message(make_message("user", "still mine", MessageType.USER_MESSAGE))
    assert [m.text for m in load_trajectory(first.path).messages] == ["the first task", "still mine"]
    first.close()
    TrajectoryWriter(tmp_path / "same", {"id": "three"}).close()  # free again once the first is done


def test_a_session_killed_after_its_submission_still_reads_as_submitted(openai_server, tmp_path):
    from support.driver import Driver, make_config, run_session
    from support.openai_server import Turn, model_config
    from swedeck.core.trajectory.loader import load_trajectory

    openai_server.script(Turn.bash_tool("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch"))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    config.run.keep_jsonl = True
    run_session(config, "t", Driver(), interactive=False)
    live = tmp_path / "session.traj.jsonl"
    lines = live.read_text().splitlines()
    end = next(i for i, line in enumerate(lines) if '"event":"end"' in line.replace(" ", ""))
    cut = tmp_path / "killed.traj.jsonl"
    cut.write_text("\n".join(lines[:end]) + "\n")  # as if killed before the end was written
    info = load_trajectory(cut).info
    assert info.exit_status == "Submitted" and info.submission == "the-patch\n"
