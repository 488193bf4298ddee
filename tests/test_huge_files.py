"""Issue 49: huge and hostile files open in bounded memory and time, with a clear message.

A file of `MAP_BYTES` or more is mapped, not read: every reader must read it exactly as it
reads the same file in memory (checked here on every fixture, mapped whatever its size). A
JSON line of a gigabyte is skipped unparsed, a zip whose directory lies is refused, a uuid
cycle never hangs, and the process's own peak memory says so.
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE, swedeck_command
from support.measured import peak_of, raw_zip
from support.reliability import swedeck_files
from swedeck.core.trajectory import loader
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.model import Trajectory
from swedeck.core.trajectory.readers.source import MAX_LINE_BYTES

FIXTURES = Path(__file__).parent / "fixtures"
GIGABYTE = 1 << 30


def _fixture_files() -> list[Path]:
    agents = FIXTURES / "agents"
    return [MINI_FIXTURE, SWEAGENT_FIXTURE, *sorted(FIXTURES.glob("*.traj*")),
            agents / "claude-code" / "cc-session-1.jsonl", *sorted(agents.glob("codex/*.jsonl")),
            *sorted(agents.glob("atif/*.json")), agents / "openhands" / "v0-events.json",
            agents / "openhands" / "eval-output.jsonl", agents / "inspect" / "calc.json"]


def _digest(trajectory: Trajectory) -> dict[str, Any]:
    """Everything a person sees of a trajectory: its messages, its steps, the fidelity panel, the warnings."""
    return {"messages": [message.to_record() for message in trajectory.messages],
            "steps": [(step.index, [action.command for action in step.actions], step.observation_indices,
                       step.usage, step.provenance) for step in trajectory.steps],
            "summary": summary(trajectory), "warnings": trajectory.info.warnings,
            "stats": trajectory.info.model_stats}


@pytest.mark.parametrize("path", [*_fixture_files(), "own.traj.jsonl", "own.traj.json"],
                         ids=lambda path: Path(path).name)
def test_a_mapped_file_reads_as_the_same_file_read_into_memory(tmp_path, monkeypatch, path):
    if isinstance(path, str):
        written = swedeck_files(tmp_path, name="own", task="the task ü", thought="look — here", output="<output>a ✓</output>")
        path = next(file for file in written if file.name == path)
    read = _digest(load_trajectory(path))
    mapped: list[Any] = []
    real = loader._mapped
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    monkeypatch.setattr(loader, "_mapped", lambda *args: mapped.append(real(*args)) or mapped[-1])
    assert _digest(load_trajectory(path)) == read
    assert mapped and isinstance(mapped[0], mmap.mmap)


# --- a JSON line of a gigabyte ----------------------------------------------------------------------

STAMP = "2026-11-20T10:00:00.000Z"


def _codex(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": STAMP, "type": kind, "payload": payload})


def _jsonl_around(name: str) -> tuple[list[str], list[str]]:
    """The lines before and after the huge one, for each JSONL format."""
    if name == "codex":
        head = [_codex("session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.46.0"}),
                _codex("turn_context", {"model": "gpt-5-codex"}),
                _codex("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]})]
        tail = [_codex("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                                         "arguments": json.dumps({"command": ["bash", "-lc", "ls"]})}),
                _codex("response_item", {"type": "function_call_output", "call_id": "c1",
                                         "output": json.dumps({"output": "a", "metadata": {"exit_code": 0}})})]
        return head, tail
    if name == "claude-code":
        def record(uuid: str, parent: str | None, kind: str, message: dict[str, Any]) -> str:
            return json.dumps({"sessionId": "s", "uuid": uuid, "parentUuid": parent, "type": kind, "timestamp": STAMP,
                               "message": message})
        head = [record("u1", None, "user", {"role": "user", "content": "go"})]
        tail = [record("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "model": "claude",
                                                 "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                              "input": {"command": "ls"}}]}),
                record("u2", "a1", "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                                          "content": "a"}]})]
        return head, tail
    header = json.dumps({"role": "meta", "format": "swedeck-traj/1", "session": {"id": "s", "model": "m"}})
    head = [header, json.dumps({"role": "user", "content": "go", "extra": {"message_type": "task", "step": 0}})]
    tail = [json.dumps({"role": "assistant", "content": "look", "extra": {"message_type": "assistant_message",
                                                                        "step": 1}})]
    return head, tail


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["codex", "claude-code", "swedeck"])
def test_a_json_line_of_a_gigabyte_is_skipped_unparsed_in_bounded_memory(tmp_path, name):
    """The line is never copied: its size is known from where it ends, found in the mapping a
    window at a time, each window given back. (Most of the gigabyte is a hole in the file: zero
    bytes, what a torn write leaves, that cost no disk.)"""
    head, tail = _jsonl_around(name)
    path = tmp_path / ("huge.traj.jsonl" if name == "swedeck" else "huge.jsonl")
    before, after = ("\n".join(head) + "\n").encode(), ("\n" + "\n".join(tail) + "\n").encode()
    with path.open("wb") as handle:
        handle.write(before + b'{"type": "assistant", "text": "' + b"x" * 16384)
        handle.seek(GIGABYTE, 1)
        handle.write(after)
    ran, peak_mb = peak_of([*swedeck_command(), "replay", str(path), "--print"])
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    huge_line, size = len(head) + 1, path.stat().st_size - len(before) - len(after)
    assert f"line {huge_line}" in ran.stdout and f"a line of {size:,} bytes" in ran.stdout, ran.stdout
    assert f"{MAX_LINE_BYTES:,}" in ran.stdout
    assert "steps: 1" in ran.stdout or "step 1" in ran.stdout, ran.stdout
    assert peak_mb < 250, peak_mb  # the gigabyte is never in the process


# --- a zip whose directory lies ---------------------------------------------------------------------

def _eval_entries() -> list[tuple[str, int, bytes, int, int]]:
    import zlib

    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}).encode()
    sample = json.dumps({"id": "s1", "epoch": 1, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]}).encode()
    return [("header.json", 0, header, len(header), zlib.crc32(header)),
            ("samples/s1_epoch_1.json", 0, sample, len(sample), zlib.crc32(sample))]


def _lie(data: bytes, lie: str) -> bytes:
    """`data` (a zip) with its end record, or its directory's first entry, lying."""
    import struct

    end = data.rindex(b"PK\x05\x06")
    count, size, offset = struct.unpack_from("<HII", data, end + 10)  # entries, directory size and offset
    patched = bytearray(data)
    if lie == "directory-past-the-end":
        struct.pack_into("<I", patched, end + 16, len(data) * 1000)
    elif lie == "million-entries":
        struct.pack_into("<HH", patched, end + 8, 65535, 65535)
    elif lie == "directory-size":
        struct.pack_into("<I", patched, end + 12, 0xFFFFFFF0)
    elif lie == "member-offset":
        struct.pack_into("<I", patched, offset + 42, len(data) * 7)  # the first entry's local header offset
    elif lie == "member-size":
        struct.pack_into("<I", patched, offset + 20, 0x7FFFFFF0)  # the first entry's compressed size
    assert count == 2 and size > 0
    return bytes(patched)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("lie", ["directory-past-the-end", "million-entries", "directory-size", "member-offset",
                                 "member-size"])
def test_a_zip_whose_directory_lies_is_one_clear_line(tmp_path, lie):
    path = tmp_path / "log.eval"
    path.write_bytes(_lie(raw_zip(_eval_entries()), lie))
    ran, peak_mb = peak_of([*swedeck_command(), "replay", str(path), "--print"])
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran.stderr
    if lie in ("million-entries", "member-size"):  # harmless lies: the directory's own bytes say how many
        # entries it holds, and a member is read to the size it decompresses to (its CRC checked), as zipfile does
        assert ran.returncode == 0 and "step 1/1" in ran.stdout, ran.stderr
        return
    assert ran.returncode == 1, (ran.returncode, ran.stdout)
    assert ran.stderr.startswith("swedeck: ") and ran.stderr.count("\n") == 1 and str(path) in ran.stderr, ran.stderr
    assert peak_mb < 250, peak_mb


# --- a uuid cycle ------------------------------------------------------------------------------------

@pytest.mark.timeout(60)
@pytest.mark.parametrize("cycle", ["self", "pair", "long"])
def test_a_uuid_cycle_in_a_claude_code_session_never_hangs(tmp_path, cycle):
    """Records whose parents lead back to themselves: a parent is always an earlier record, so a
    record naming itself or a later one continues the record before it (a cycle cannot form),
    and the fidelity panel says how many did."""
    def record(uuid: str, parent: str | None, kind: str = "user", text: str = "go") -> dict[str, Any]:
        message = {"role": kind, "content": text} if kind == "user" else {"id": uuid, "role": "assistant",
                                                                           "content": text}
        return {"sessionId": "s", "uuid": uuid, "parentUuid": parent, "type": kind, "timestamp": STAMP,
                "message": message}

    lines = [record("root", None), record("a1", "root", "assistant", "answer")]
    if cycle == "self":
        lines += [record("x", "x", "assistant", "looped")]
    elif cycle == "pair":
        lines += [record("x", "y", "assistant", "looped"), record("y", "x")]
    else:
        lines += [record(f"c{n}", f"c{(n + 1) % 5000}", "assistant" if n % 2 else "user", "looped") for n in range(5000)]
    path = tmp_path / "cycle.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    trajectory = load_trajectory(path)
    texts = [message.content for message in trajectory.messages]
    assert texts[:2] == ["go", "answer"] and "looped" in texts
    unlinked = {"self": 1, "pair": 1, "long": 4999}[cycle]
    assert any(note.startswith(f"{unlinked} records name no parent") for note in trajectory.fidelity.notes), \
        trajectory.fidelity.notes
    printed = peak_of([*swedeck_command(), "replay", str(path), "--print"])[0]
    assert printed.returncode == 0 and "Traceback" not in printed.stderr, printed.stderr


def _rss_file_kb() -> int:
    """This process's resident pages of mapped files (Linux)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("RssFile:")[1].split()[0])


def test_a_walk_over_every_step_of_a_mapped_file_gives_its_pages_back(tmp_path, monkeypatch):
    """A search reads every step of a file: from a mapped file each read maps pages, and the
    walk gives them back every so many bytes (a search over a 2 GB rollout held 2 GB)."""
    from swedeck.core.replay.document import open_document
    from swedeck.core.replay.search import matching_steps
    from swedeck.core.trajectory.readers import source

    head, _ = _jsonl_around("codex")
    output = "x" * 3000
    step = "\n".join([
        _codex("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "look"}]}),
        _codex("response_item", {"type": "function_call", "name": "shell", "call_id": "c", "arguments": '{"command": ["ls"]}'}),
        _codex("response_item", {"type": "function_call_output", "call_id": "c", "output": output})]) + "\n"
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(head) + "\n" + step * 8000)  # 25 MB
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    monkeypatch.setattr(source, "_GIVE_BACK", 1 << 20)
    before, most = _rss_file_kb(), 0
    document = open_document(path)
    for number in matching_steps(document, "not in any step"):
        raise AssertionError(number)
    for number in range(1, document.step_count + 1, 97):  # and a walk that samples it, as a person jumps
        document.step(number)
        most = max(most, _rss_file_kb() - before)
    assert document.step_count == 8000
    assert most < 8 << 10, most  # kilobytes: a few windows, not the file's 25 MB


def test_an_openhands_event_list_is_read_by_its_events_heads(tmp_path, monkeypatch):
    """A v0 event list is planned from each event's head; an event is read whole when its
    step is shown, and reads as the events parsed whole do."""
    from bench.generate import write_openhands
    from swedeck.core.trajectory.outline import RawList, RawRecords

    path = write_openhands(tmp_path / "events.json", 300, 400)
    reads: list[int] = []
    real_item = RawRecords._item
    monkeypatch.setattr(RawRecords, "_item", lambda self, index: reads.append(index) or real_item(self, index))
    trajectory = load_trajectory(path, lazy=True)
    _ = trajectory.steps[-1], trajectory.messages[trajectory.steps[-1].message_index]
    assert len(trajectory.steps) == 300 and 0 < len(reads) <= 10  # the last step's events, not the file's
    planned = _digest(load_trajectory(path))
    monkeypatch.setattr(RawList, "records", lambda self, head=None: list(self))  # every event parsed whole
    assert _digest(load_trajectory(path)) == planned


# --- swedeck's own file of millions of lines (issue 61) ----------------------------------------------

def _own_lines(steps: int, damaged: bool = True) -> list[str]:
    """A live file with what windows must keep straight: meta events between messages, a blank
    line, a damaged line (unless not `damaged`), a demonstration, a compaction marker, a submission record."""
    lines = [json.dumps({"role": "meta", "format": "swedeck-traj/1", "session": {"id": "s", "model": "m"}}),
             json.dumps({"role": "system", "content": "sys", "extra": {"message_type": "system"}}),
             json.dumps({"role": "user", "content": "task", "extra": {"message_type": "task"}})]
    for step in range(1, steps + 1):
        lines.append(json.dumps({"role": "assistant", "content": f"look {step}\n```bash\nls {step}\n```",
                                 "extra": {"message_type": "action", "step": step}}))
        lines.append(json.dumps({"role": "user", "content": f"<returncode>0</returncode><output>{step}</output>",
                                 "extra": {"message_type": "observation", "step": step}}))
        if step % 97 == 0:
            lines.append(json.dumps({"role": "meta", "event": "mode_change", "mode": "yolo", "previous": "confirm"}))
        if step % 131 == 0 and damaged:
            lines.append("")
        if step % 389 == 0 and damaged:
            lines.append('{"role": "assistant", "content": ')  # damaged
        if step % 211 == 0:
            lines.append(json.dumps({"role": "assistant", "content": "demo", "extra": {"message_type": "action",
                                                                                      "is_demo": True}}))
        if step == 500:
            lines.append(json.dumps({"role": "user", "content": "summary", "extra": {
                "message_type": "compaction", "summary": "s", "replaces": [3, 4, 5, 6]}}))
    lines.append(json.dumps({"role": "user", "content": "done", "extra": {"message_type": "final"}}))
    return lines


@pytest.mark.parametrize("torn", [False, True], ids=["whole", "torn-last-line"])
def test_a_live_file_read_in_windows_is_the_same_file_read_line_by_line(tmp_path, monkeypatch, torn):
    """A mapped `.traj.jsonl` is read a window at a time, each message built when read: with
    windows of a few KB over 1,200 steps, every message, step, event, warning and compaction
    note is the reader's of the same file in memory."""
    from swedeck.core.trajectory.compaction import compaction_problems
    from swedeck.core.trajectory.readers import jsonl_windows

    lines = _own_lines(1200)
    path = tmp_path / "own.traj.jsonl"
    path.write_text("\n".join(lines) + ("\n" if not torn else '\n{"role": "assistant", "cont'))

    def seen(trajectory: Trajectory) -> dict[str, Any]:
        return {**_digest(trajectory), "events": trajectory.meta_events,
                "notes": compaction_problems(trajectory.messages)}

    read = seen(load_trajectory(path))
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    monkeypatch.setattr(jsonl_windows, "WINDOW", 4096)
    windowed = load_trajectory(path, lazy=True)
    assert len(windowed.messages.__dict__.get("_blocks", ())) > 1000  # read in windows, by steps
    assert seen(windowed) == read
    assert read["warnings"] and ("incomplete" in read["warnings"][-1]) == torn
    assert len(read["steps"]) == 1200 and len(windowed.meta_events) == 1200 // 97


def test_the_last_step_of_a_huge_live_file_builds_only_its_own_messages(tmp_path, monkeypatch):
    """`replay --print --step -1` of a mapped file builds the messages of that step, not of the
    file (2.5 million tiny steps took 30 s and 2.1 GB when every one was built)."""
    from swedeck.core.messages import Message

    path = tmp_path / "own.traj.jsonl"
    path.write_text("\n".join(_own_lines(3000, damaged=False)) + "\n")
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    built: list[int] = []
    real = Message.from_record.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Message, "from_record", classmethod(lambda cls, data: built.append(1) or real(cls, data)))
    trajectory = load_trajectory(path, lazy=True)
    step = trajectory.step(-1)
    assert step.index == 3000 and "ls 3000" in step.actions[0].command
    assert len(built) <= 4, len(built)  # its action and observation, and the block before it: read by heads


def test_a_long_claude_code_session_builds_each_steps_request_when_asked(tmp_path, monkeypatch):
    """Issue 63.5: each of Claude Code's request records names every message before it: built
    for every step, a 40 MB session of 10,000 steps made 50 million messages (404 s, 24 GB). Past
    `EAGER_PROMPTS` a step's request is built when it is asked for, the same as built at once."""
    from bench.generate import write_claude_code_requests
    from swedeck.core.trajectory.readers import claude_code

    path = write_claude_code_requests(tmp_path / "session.jsonl", 400, 60)
    lazy = load_trajectory(path, lazy=True)
    assert not isinstance(lazy.recorded_prompts, dict) and len(lazy.recorded_prompts) == 400
    assert summary(lazy)["steps_by_provenance"] == {"recorded": 400}
    monkeypatch.setattr(claude_code, "EAGER_PROMPTS", 1000)
    eager = load_trajectory(path, lazy=True)
    assert isinstance(eager.recorded_prompts, dict)
    for number in (1, 2, 399, 400):
        assert [(m.role, m.text) for m in lazy.recorded_prompts[number]] == \
            [(m.role, m.text) for m in eager.recorded_prompts[number]]
        assert lazy.rebuilt_requests[number] == eager.rebuilt_requests[number]
    assert len(lazy.recorded_prompts[400]) == 1 + 1 + 2 * 399  # the system prompt, the task, every step before


def test_a_claude_code_sessions_request_records_are_held_as_names_and_places(tmp_path):
    """Issue 63.5: a 400 MB session with its own request records held 707 MB (each request's
    fields as a dict, each message's hash as text, each entry's usage twice). Now a request is
    a struct of digests and the plan keeps no usage beside the entries: the same steps, the
    same totals, and a request record that does not say what it should is never "recorded"."""
    from bench.generate import write_claude_code_requests
    from swedeck.core.trajectory.readers import claude_code

    path = write_claude_code_requests(tmp_path / "session.jsonl", 40, 60)
    trajectory = load_trajectory(path, lazy=True)
    stats = trajectory.info.model_stats
    assert stats.api_calls == 40
    assert stats.prompt_tokens == sum(step.usage.prompt_tokens for step in trajectory.steps) > 0
    assert stats.completion_tokens == sum(step.usage.completion_tokens for step in trajectory.steps) > 0
    assert summary(trajectory)["steps_by_provenance"] == {"recorded": 40}
    digest = "ab" * 32
    assert claude_code.name(digest) == bytes.fromhex(digest)
    assert claude_code.name(digest.upper()) == digest.upper()  # not Claude Code's spelling: no one's digest
    assert claude_code.name("ab") == "ab"
    lines = path.read_text().splitlines()
    requests = [index for index, line in enumerate(lines) if json.loads(line)["type"] == "api-request"]
    assert len(requests) == 40
    hostile = {requests[3]: {"tail": "not a list"}, requests[9]: {"keep": "3"}, requests[14]: {"id": 7},
               requests[20]: {"tail": [name.upper() for name in json.loads(lines[requests[20]])["tail"]]}}
    for index, change in hostile.items():
        lines[index] = json.dumps({**json.loads(lines[index]), **change})
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n")
    forged = load_trajectory(changed, lazy=True)
    fidelity = summary(forged)
    assert len(forged.steps) == 40
    assert fidelity["steps_by_provenance"].get("recorded", 0) < 40
    assert 1 <= len(forged.recorded_prompts) <= 3  # the steps before the first request that does not say its messages
    for number in forged.recorded_prompts:  # what is recorded is what the file's messages are
        assert [m.text for m in forged.recorded_prompts[number]] == [m.text for m in trajectory.recorded_prompts[number]]


def test_the_subagent_tree_sums_each_run_from_its_outline_as_its_steps_would(tmp_path):
    """Issue 65.4: each subagent of a session is a node with its steps, tokens, dollars, duration,
    ending and the step that started it, summed from the reader's outline (no step built), the
    same as summed from every step."""
    from bench.generate import write_claude_code_with_subagents
    from swedeck.core.cost import Prices, cost_of
    from swedeck.core.subagents import subagent_runs, subagent_tree, summed

    path = write_claude_code_with_subagents(tmp_path / "session.jsonl", 5, 7, 200, main_steps=12)
    main = load_trajectory(path, lazy=True)
    prices = Prices()
    root = subagent_tree(main, prices)
    assert [child.parent_step for child in root.children] == [2, 4, 6, 8, 10]
    report = cost_of(main, prices, subagent_runs(main))
    assert root.cost_usd == pytest.approx(report.by_role["main"])
    for child in root.children:
        run = load_trajectory(child.target, lazy=True)
        assert child.cost_usd == pytest.approx(report.by_role[f"subagent {child.id}"])
        assert (child.steps, child.ended, child.duration_s) == (len(run.steps), "end_turn", 16.0)
        assert child.prompt_tokens == sum(step.usage.prompt_tokens for step in run.steps)
        assert child.completion_tokens == sum(step.usage.completion_tokens for step in run.steps)
        run.info.raw.pop("outline")  # read step by step: the same figures
        slow = summed(run, prices, child.id, child.target, child.parent_step)
        assert (slow.steps, slow.prompt_tokens, slow.completion_tokens) == \
            (child.steps, child.prompt_tokens, child.completion_tokens)
        assert slow.duration_s == 14.0  # its answers' span (the outline's is its records', the task's too)
        assert slow.cost_usd == pytest.approx(child.cost_usd)
    broken = tmp_path / "session" / "subagents" / "agent-broken.jsonl"
    broken.write_text("not json at all\n")
    again = subagent_tree(load_trajectory(path, lazy=True), prices)
    assert again.children[-1].id == "broken" and again.children[-1].error and again.children[-1].parent_step is None


@pytest.mark.parametrize("name", ["fixture", "generated"])
def test_the_summary_and_the_cost_of_a_claude_code_session_build_no_step(tmp_path, monkeypatch, name):
    """Issue 61.14: a million records' summary and cost took 26 of 41 s building every step; they
    read the plan's columns now, and say what the built steps say (every kind of call: a shell
    tool under any name, a call whose input is a string, a step without usage)."""
    from swedeck.core.cost import Prices, cost_of
    from swedeck.core.trajectory import lazy

    if name == "fixture":
        path = Path(__file__).parent / "fixtures/agents/claude-code/cc-session-1.jsonl"
    else:
        path = tmp_path / "s.jsonl"
        records, parent = [], None
        calls = [("Bash", {"command": "ls"}), ("mcp__acp__Bash", {"command": "pwd", "description": "x"}),
                 ("Read", {"file_path": "a"}), ("Bash", '{"command": "git status"}'), ("Bash", {"cmd": ["bash", "-c", "x"]}),
                 ("shell", {"command": 5}), ("Bash", "not json")]
        for number in range(40):
            user = {"sessionId": "s", "type": "user", "uuid": f"u{number}", "parentUuid": parent,
                    "message": {"role": "user", "content": "go" if not number else [
                        {"type": "tool_result", "tool_use_id": f"t{number - 1}", "content": "ok"}]}}
            tool, arguments = calls[number % len(calls)]
            message = {"id": f"m{number}", "role": "assistant", "model": f"claude-{number % 3}",
                       "content": [{"type": "text", "text": "hm"}, {"type": "tool_use", "id": f"t{number}", "name": tool,
                                                                     "input": arguments}]}
            if number % 5:
                message["usage"] = {"input_tokens": number, "output_tokens": 3, "cache_read_input_tokens": number * 2}
            records += [user, {"sessionId": "s", "type": "assistant", "uuid": f"a{number}", "parentUuid": f"u{number}",
                               "message": message}]
            parent = f"a{number}"
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
    trajectory = load_trajectory(path, lazy=True)
    built: list[int] = []
    step = lazy.StepList._step
    monkeypatch.setattr(lazy.StepList, "_step", lambda self, index: (built.append(index), step(self, index))[1])
    prices = Prices({"claude-1": {"input": 1.0, "output": 2.0}})
    fast = summary(trajectory), cost_of(trajectory, prices)
    assert set(built) <= {0} and trajectory.step_facts() is not None  # the first, for what comes before it
    trajectory.facts = None
    assert (summary(trajectory), cost_of(trajectory, prices)) == fast and len(built) > 1
    if name == "generated":
        assert fast[0]["tool_calls"] == 40 and fast[0]["shell_commands"] == 24, fast[0]
        assert fast[0]["usage"] == "mixed" and set(fast[1].unpriced) == {"claude-0", "claude-2"}
