"""SPEC §9.3: one loader for swedeck, mini-swe-agent and SWE-agent trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import (
    MINI_FIXTURE,
    MINI_V2_FIXTURE,
    SWEAGENT_DEMOS_FIXTURE,
    SWEAGENT_FIXTURE,
    SWEAGENT_OLDER_FIXTURE,
)
from swedeck.core.messages import MessageType
from swedeck.core.trajectory import TrajectoryError, load_trajectory

T = MessageType


def test_mini_fixture_steps_and_commands() -> None:
    trajectory = load_trajectory(MINI_FIXTURE)
    assert trajectory.format == "mini-swe-agent"
    assert len(trajectory.steps) == 8
    assert trajectory.steps[0].commands == ["ls -la"]
    assert trajectory.steps[5].commands == ["sed -i 's|/ len(values)|/ len(values) if values else 0|' calc.py"]
    assert trajectory.steps[-1].commands == ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"]
    types = [message.message_type for message in trajectory.messages]
    assert types[:4] == [T.SYSTEM, T.TASK, T.ACTION, T.OBSERVATION]
    assert types[-1] == T.FINAL
    assert all(step.observation_indices == (step.message_index + 1,) for step in trajectory.steps)
    assert all(step.prompt_end == step.message_index for step in trajectory.steps)
    assert all(step.usage is None for step in trajectory.steps)  # v1 records no usage


def test_mini_v2_usage_is_recorded_and_a_format_error_belongs_to_the_step_before_it() -> None:
    trajectory = load_trajectory(MINI_V2_FIXTURE)
    raw = json.loads(MINI_V2_FIXTURE.read_text())["messages"]
    queries = [m for m in raw if m["role"] == "assistant"]
    assert len(trajectory.steps) == len(queries) == 4
    for step, record in zip(trajectory.steps, queries, strict=True):
        usage = record["extra"]["response"]["usage"]
        assert step.usage is not None and not step.usage.estimated
        assert step.usage.prompt_tokens == usage["prompt_tokens"]
        assert step.usage.completion_tokens == usage["completion_tokens"]
        assert step.usage.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]
        assert step.cost == record["extra"]["cost"]
    second = trajectory.steps[1]
    answers = [trajectory.messages[i] for i in second.observation_indices]
    assert [m.message_type for m in answers] == [T.OBSERVATION, T.FORMAT_ERROR]
    assert trajectory.steps[-1].observation_indices == (len(raw) - 1,)  # the `exit` record ends the run
    assert trajectory.messages[-1].message_type == T.EXIT
    assert trajectory.info.exit_status == "Submitted"


def test_sweagent_fixture_follows_history_and_takes_the_missing_last_step_from_trajectory() -> None:
    trajectory = load_trajectory(SWEAGENT_FIXTURE)
    raw = json.loads(SWEAGENT_FIXTURE.read_text())
    assert trajectory.format == "swe-agent"
    history = raw["history"]
    assert [m.role for m in trajectory.messages[: len(history)]] == [entry["role"] for entry in history]
    assert len(trajectory.steps) == len(raw["trajectory"]) == 5
    assert [s.commands[0] for s in trajectory.steps] == [r["action"] for r in raw["trajectory"]]
    assert [trajectory.messages[s.observation_indices[0]].text for s in trajectory.steps] == [
        r["observation"] for r in raw["trajectory"]]
    assert trajectory.messages[1].message_type == T.TASK
    assert [i for i, m in enumerate(trajectory.messages) if m.message_type == T.OBSERVATION] == [3, 5, 7, 9, 11]
    assert trajectory.messages[3].tool_call_id == "call_01"
    assert trajectory.steps[0].actions[0].tool_call_id == "call_01"
    fifth = trajectory.messages[trajectory.steps[4].message_index]
    assert fifth.extra.unknown["from_trajectory"] is True and fifth.text == "The fix works. Submitting."
    assert trajectory.info.exit_status == "submitted"
    assert trajectory.info.model_stats.prompt_tokens == 9000
    assert trajectory.info.model_stats.api_calls == 5
    assert trajectory.info.model_name == "gpt-4o"
    assert trajectory.steps[1].state == {"open_file": "/calc/calc.py", "working_dir": "/calc"}


def test_older_sweagent_file_without_message_type_has_every_observation() -> None:
    trajectory = load_trajectory(SWEAGENT_OLDER_FIXTURE)
    raw = json.loads(SWEAGENT_OLDER_FIXTURE.read_text())
    assert len(trajectory.steps) == len(raw["trajectory"]) == 5
    for step, record in zip(trajectory.steps, raw["trajectory"], strict=True):
        assert step.commands == [record["action"].rstrip("\n")]  # SWE-agent keeps the parser's newline
        assert [trajectory.messages[i].text for i in step.observation_indices] == [record["observation"]]
    types = [m.message_type for m in trajectory.messages]
    assert types[:3] == [T.SYSTEM, T.USER_MESSAGE, T.TASK]  # the demonstration is not the task
    diff = trajectory.messages[trajectory.steps[-1].observation_indices[0]]
    assert diff.extra.unknown["from_trajectory"] is True  # `history` ends before the submitted diff
    first = trajectory.messages[trajectory.steps[0].message_index]
    assert first.extra.reasoning is None  # SWE-agent's thought is in the content: shown once


def test_demonstrations_in_history_are_not_steps() -> None:
    trajectory = load_trajectory(SWEAGENT_DEMOS_FIXTURE)
    raw = json.loads(SWEAGENT_DEMOS_FIXTURE.read_text())
    real = [e for e in raw["history"] if e["role"] == "assistant" and not e.get("is_demo")]
    assert len(trajectory.steps) == len(real) == 4
    assert [s.commands[0] for s in trajectory.steps] == [e["action"] for e in real]
    assert trajectory.steps[0].prompt_end == 6  # system, four demonstration messages, the task
    assert trajectory.messages[5].message_type == T.TASK


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_sweagent_json_strings_and_missing_keys(tmp_path: Path) -> None:
    raw = json.loads(SWEAGENT_FIXTURE.read_text())
    raw["replay_config"] = json.loads(raw["replay_config"])  # an object, or (as the fixture has it) a string
    for step in raw["trajectory"]:
        step["state"] = json.dumps({"open_file": "x.py"})
    loaded = load_trajectory(_write(tmp_path, "a.traj", raw))
    assert loaded.info.model_name == "gpt-4o"
    assert loaded.steps[0].state == {"open_file": "x.py"}

    minimal = load_trajectory(_write(tmp_path, "b.traj", {"history": raw["history"]}))
    assert len(minimal.steps) == 4 and minimal.info.exit_status is None and minimal.info.config == {}
    assert len(minimal.messages) == len(raw["history"])

    from_steps = load_trajectory(_write(tmp_path, "c.traj", {"trajectory": raw["trajectory"]}))
    assert [s.commands[0] for s in from_steps.steps][-1] == "submit"


def test_sweagent_list_content(tmp_path: Path) -> None:
    raw = json.loads(SWEAGENT_FIXTURE.read_text())
    raw["history"][3]["content"] = [{"type": "text", "text": "Found 1 matches"}]
    loaded = load_trajectory(_write(tmp_path, "list.traj", raw))
    assert loaded.messages[3].text == "Found 1 matches"


def test_mini_dict_with_info_equals_bare_list(tmp_path: Path) -> None:
    messages = json.loads(MINI_FIXTURE.read_text())
    document = {"info": {"exit_status": "Submitted", "submission": "diff",
                         "model_stats": {"instance_cost": 0.5, "api_calls": 10},
                         "config": {"model": {"model_name": "openai/gpt-4o"}}},
                "messages": messages, "trajectory_format": "mini-swe-agent-1"}
    loaded = load_trajectory(_write(tmp_path, "d.traj.json", document))
    bare = load_trajectory(MINI_FIXTURE)
    assert [s.commands for s in loaded.steps] == [s.commands for s in bare.steps]
    assert loaded.info.exit_status == "Submitted" and loaded.info.model_stats.instance_cost == 0.5
    assert loaded.info.model_name == "openai/gpt-4o"


def test_mini_tool_call_format_and_exit(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    submit = {"id": "call_2", "type": "function",
              "function": {"name": "bash", "arguments": '{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}'}}
    document = {"messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "look", "tool_calls": [call], "extra": {"cost": 0.01}},
        {"role": "tool", "tool_call_id": "call_1", "content": "a b", "extra": {"returncode": 0}},
        {"role": "assistant", "content": "no command here"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action"},
        {"role": "assistant", "content": "", "tool_calls": [submit]},
        {"role": "tool", "tool_call_id": "call_2", "content": "done"},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "done"}},
    ]}
    loaded = load_trajectory(_write(tmp_path, "e.traj.json", document))
    assert [m.message_type for m in loaded.messages] == [
        T.SYSTEM, T.TASK, T.ACTION, T.OBSERVATION, T.ASSISTANT_MESSAGE, T.FORMAT_ERROR, T.ACTION, T.OBSERVATION, T.EXIT]
    assert loaded.steps[0].commands == ["ls"] and loaded.steps[0].actions[0].tool_call_id == "call_1"
    assert loaded.steps[0].cost == 0.01 and loaded.messages[3].extra.returncode == 0
    assert loaded.steps[1].observation_indices == (5,)
    assert loaded.info.exit_status == "Submitted" and loaded.info.submission == "done"


def test_mini_wrong_typed_extra_is_kept_not_fatal(tmp_path: Path) -> None:
    document = [{"role": "user", "content": "task", "extra": {"timestamp": "yesterday", "custom": 1}}]
    message = load_trajectory(_write(tmp_path, "f.traj.json", document)).messages[0]
    assert message.extra.timestamp is None
    assert message.extra.unknown == {"raw_timestamp": "yesterday", "custom": 1}


@pytest.mark.parametrize(("content", "reason"), [
    (None, "no such file"),
    ("", "empty"),
    ("   \n", "empty"),
    ("{not json", "Expecting"),
    ('{"messages": 5}', "`messages` is int"),
    ('[1, 2]', "not an object"),
    ('{"foo": 1}', "not a trajectory"),
    ('[{"role": "wizard", "content": "x"}]', "unknown message role"),
    ('{"history": [{"role": "user", "content": {"a": 1}}], "info": [1]}', "`info` is list"),
])
def test_unreadable_files_name_file_and_reason(tmp_path: Path, content: str | None, reason: str) -> None:
    path = tmp_path / "bad.traj.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(TrajectoryError) as caught:
        load_trajectory(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_binary_and_folder_are_trajectory_errors(tmp_path: Path) -> None:
    binary = tmp_path / "x.traj"
    binary.write_bytes(b"\x89PNG\x00\x00\x01")
    with pytest.raises(TrajectoryError, match="binary"):
        load_trajectory(binary)
    with pytest.raises(TrajectoryError, match="folder"):
        load_trajectory(tmp_path)


def test_truncated_fixture_is_an_error(tmp_path: Path) -> None:
    text = SWEAGENT_FIXTURE.read_text()
    path = _write(tmp_path, "cut.traj", text[: len(text) // 2])
    with pytest.raises(TrajectoryError, match="cut.traj"):
        load_trajectory(path)


def test_a_file_read_ahead_is_used_only_while_it_is_the_file_that_was_read(tmp_path: Path) -> None:
    """`swedeck replay FILE` reads its file while the UI imports (`core/startup/read_ahead.py`)
    and hands the read to the loader; the loader takes those bytes only when the file is
    unchanged since, else reads it again."""
    import os

    from swedeck.core.startup.read_ahead import ReadAhead

    path = _write(tmp_path, "run.traj.json", MINI_FIXTURE.read_text())
    ahead = ReadAhead.start(path)
    first = load_trajectory(path, ahead=ahead)
    assert not ahead.reading and ahead.take(path, path.stat()) is None  # taken once, by the loader, and not kept
    assert first.messages[1].text == load_trajectory(MINI_FIXTURE).messages[1].text

    ahead = ReadAhead.start(path)
    before = path.stat()
    ahead.wait()  # the read has finished: the change comes after it
    document = json.loads(MINI_FIXTURE.read_text())
    (document["messages"] if isinstance(document, dict) else document)[1]["content"] = "the task, written again"
    path.write_text(json.dumps(document))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))  # changed within the same clock tick
    assert load_trajectory(path, ahead=ahead).messages[1].text == "the task, written again"

    other = _write(tmp_path, "other.traj.json", MINI_FIXTURE.read_text())
    ahead = ReadAhead.start(path)
    assert load_trajectory(other, ahead=ahead) and ahead.reading  # another file's read is not taken

    from support.replay import add_step, start_writer
    from swedeck.core.replay.document import LiveDocument, open_document

    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    live = writer.path
    ahead = ReadAhead.start(live)
    assert isinstance(open_document(live, ahead), LiveDocument)
    assert not ahead.reading  # a live file is indexed by its lines: its bytes are not kept

    for nothing in (tmp_path, tmp_path / "run.traj.json#2", tmp_path / "missing.traj"):  # not read ahead
        assert not ReadAhead.start(nothing).reading


def test_an_inspect_log_s_first_sample_is_decompressed_ahead_and_used_only_for_that_file(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    """Issue 49: for a `.eval`, the read-ahead decompresses its first sample's member while the UI
    imports; the loader uses it only for that sample of that file, unchanged since."""
    import os

    from bench.generate import write_inspect_eval
    from swedeck.core.startup.read_ahead import ReadAhead
    from swedeck.core.trajectory.readers import inspect_log

    path = write_inspect_eval(tmp_path / "run.eval", 6, 100)
    decompressed: list[str] = []
    member = inspect_log._member
    monkeypatch.setattr(inspect_log, "_member", lambda archive, name: (decompressed.append(name),
                                                                        member(archive, name))[1])
    whole = load_trajectory(path)
    assert any(name.startswith("samples/") for name in decompressed)

    decompressed.clear()
    ahead = ReadAhead.start(path)
    assert ahead.reading
    early = load_trajectory(path, ahead=ahead)
    assert decompressed == ["header.json"] and not ahead.reading  # the sample's member came from the read-ahead
    assert list(early.messages) == list(whole.messages)

    ahead = ReadAhead.start(path)
    ahead.wait()
    before = path.stat()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))  # changed since it was read
    decompressed.clear()
    assert list(load_trajectory(path, ahead=ahead).messages) == list(whole.messages)
    assert any(name.startswith("samples/") for name in decompressed)  # read again

    import shutil
    import zipfile

    two = tmp_path / "two.eval"  # another sample than the first: read by the loader
    shutil.copy(path, two)
    with zipfile.ZipFile(two, "a") as archive:
        first = next(name for name in archive.namelist() if name.startswith("samples/"))
        archive.writestr("samples/zz_epoch_1.json", archive.read(first))
    ahead = ReadAhead.start(two)
    decompressed.clear()
    assert len(load_trajectory(Path(f"{two}#2"), ahead=ahead).steps) == len(whole.steps)
    assert decompressed == ["header.json", "samples/zz_epoch_1.json"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "messages", "history", "trajectory", "info", "tool_calls", "extra",
                         "model_stats", "message_type", "action", "tool_call_ids", "replay_config", "state",
                         "function", "arguments", "id"]) | st.text(max_size=4), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_json)
def test_fuzz_loader_only_raises_trajectory_error(tmp_path: Path, document: object) -> None:
    path = tmp_path / "fuzz.traj"
    path.write_text(json.dumps(document))
    try:
        trajectory = load_trajectory(path)
    except TrajectoryError as error:
        assert "fuzz.traj" in str(error)
    else:
        assert len(trajectory.steps) == sum(m.role == "assistant" for m in trajectory.messages)


def test_a_new_format_is_one_file_and_one_line(tmp_path, monkeypatch):
    """SPEC §9.3, issue 45.5: a toy format (`tests/support/toy_reader.py`) added by one line of
    `READERS` is found by content, listed in a folder by its own `sniff`, loaded, printed, and
    opened in the replay view; nothing else knows of it."""
    import asyncio

    from support import toy_reader
    from swedeck.core.trajectory import readers
    from swedeck.core.trajectory.loader import trajectory_files
    from swedeck.core.trajectory.printer import text_lines

    monkeypatch.setattr(readers, "READERS", (readers.Reader.of(toy_reader), *readers.READERS))
    path = tmp_path / "play.toy.jsonl"
    path.write_text('{"toy": 1}\n{"cmd": "ls", "out": "a.py"}\n{"cmd": "cat a.py", "out": "print(1)"}\n')
    assert trajectory_files(tmp_path) == [path]
    toy = load_trajectory(path)
    assert toy.format == "toy" and [step.commands for step in toy.steps] == [["ls"], ["cat a.py"]]
    printed = "\n".join(text_lines(toy, toy.steps))
    assert "  $ cat a.py" in printed and "print(1)" in printed

    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.replay_screen import ReplayScreen

    async def replay() -> None:
        app = ReplayApp([path])
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.step_count == 2)
            await pilot.press("l")
            await wait_for(pilot, lambda: app.screen.step == 2)
            await pilot.press("q")

    asyncio.run(replay())
