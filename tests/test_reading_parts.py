"""Issue 49: a large rollout shows its first or last steps at once, read from its first or last
bytes alone, while the whole file is read in a worker (`loader.open_reading`).

What a part shows must be what the whole reading shows of the same steps, wherever the part
is cut: checked here for every cut of a rollout with everything a Codex rollout holds
(reasoning, patches, models changing, compactions, damaged lines, repeated token counts).
The replay screen numbers the last steps from the end until the whole is read, keeps what
needs the whole file (a go-to past the part, a search) until then, and lands on the same
step when it is done.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from support.waiting import wait_for
from swedeck.core.replay.document import LoadedDocument, ReadingDocument, StepView
from swedeck.core.trajectory import loader
from swedeck.core.trajectory.loader import load_trajectory, open_reading
from swedeck.core.trajectory.readers import source as sources
from swedeck.core.trajectory.readers.source import Stopped

SIZE = (120, 36)


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-11-27T10:00:00.000Z", "type": kind, "payload": payload}) + "\n"


def _usage(tokens: int) -> dict[str, Any]:
    usage = {"input_tokens": tokens, "cached_input_tokens": tokens // 2, "output_tokens": 40, "total_tokens": tokens + 40}
    return {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage,
                                            "model_context_window": 272000}}


def write_rollout(path: Path, rounds: int = 40) -> Path:
    """A rollout with every kind of record a reader meets, in varied order."""
    lines = [_line("session_meta", {"id": "parts", "cwd": "/work", "cli_version": "0.46.0",
                                    "base_instructions": {"text": "You are Codex."}}),
             _line("response_item", {"type": "message", "role": "developer", "content": [
                 {"type": "input_text", "text": "<permissions>workspace-write</permissions>"}]}),
             _line("turn_context", {"cwd": "/work", "model": "gpt-5-codex"}),
             _line("response_item", {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "Fix the parser."}]})]
    for number in range(1, rounds + 1):
        call = f"call_{number}"
        if number % 3 == 0:
            lines.append(_line("response_item", {"type": "reasoning", "summary": [
                {"type": "summary_text", "text": f"thinking {number}"}], "encrypted_content": "gAAA"}))
        lines.append(_line("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": f"step {number}: look " + "x" * (number * 37 % 500)}]}))
        if number % 7 == 0:
            lines.append(_line("response_item", {"type": "custom_tool_call", "call_id": call, "name": "apply_patch",
                                                 "input": f"*** Begin Patch\n*** Update File: p{number}.py\n*** End Patch"}))
            output_kind = "custom_tool_call_output"
        elif number % 11 == 0:
            lines.append(_line("response_item", {"type": "local_shell_call", "call_id": call,
                                                 "action": {"type": "exec", "command": ["ls", f"d{number}"]}}))
            output_kind = "local_shell_call_output"
        elif number % 13 == 0:
            output_kind = ""  # an answer without a call
        else:
            lines.append(_line("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                                 "arguments": json.dumps({"command": ["bash", "-lc", f"cat f{number}"]})}))
            output_kind = "function_call_output"
        lines.append(_line("event_msg", _usage(1000 + 100 * number)))
        if number % 5 == 0:
            lines.append(_line("event_msg", _usage(9)))  # repeated: not this call's
        if output_kind:
            output = json.dumps({"output": f"out {number}\n" * (number % 9 + 1), "metadata": {"exit_code": number % 2}})
            lines.append(_line("response_item", {"type": output_kind, "call_id": call, "output": output}))
        lines.append(_line("event_msg", {"type": "exec_command_end", "call_id": call}))
        if number % 8 == 0:
            lines.append(_line("turn_context", {"cwd": "/work", "model": f"gpt-5-codex-{number}"}))
        if number % 9 == 0:
            lines.append(_line("compacted", {"message": f"Summary of the first {number} steps."}))
        if number % 10 == 0:
            lines.append('{"timestamp": "2026-11-27", "type": "event_msg", "payl\n')  # damaged
        if number % 12 == 0:
            lines.append(_line("response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"and then {number}"}]}))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def write_session(path: Path, rounds: int = 40) -> Path:
    """A Claude Code session with what its tree holds: model calls of several records, tool
    results, Task runs inside it (sidechains, written while the main call waits), rewound
    answers, compactions, records that name no parent, titles and damaged lines."""
    base = {"userType": "external", "cwd": "/work", "sessionId": "parts", "version": "2.0.14", "gitBranch": "main",
            "timestamp": "2026-11-27T10:00:00Z"}
    lines: list[str] = []

    def put(kind: str, uuid: str, parent: str | None, message: dict[str, Any] | None = None, **more: Any) -> str:
        record = {**base, "parentUuid": parent, "isSidechain": more.pop("side", False), "type": kind, "uuid": uuid,
                  **more}
        if message is not None:
            record["message"] = message
        lines.append(json.dumps(record) + "\n")
        return uuid

    def answer(uuid: str, parent: str, call: str, block: dict[str, Any], model: str = "claude-x", **more: Any) -> str:
        usage = {"input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 5, "output_tokens": 7}
        return put("assistant", uuid, parent, {"id": call, "role": "assistant", "model": model, "content": [block],
                                               "usage": usage, "stop_reason": "tool_use"}, **more)

    parent = put("user", "u0", None, {"role": "user", "content": "Fix the parser."})
    for number in range(1, rounds + 1):
        call, model = f"msg_{number}", "claude-x" if number < 20 else "claude-y"
        if number % 3 == 0:
            parent = answer(f"t{number}", parent, call, {"type": "thinking", "thinking": f"think {number}"}, model)
        parent = answer(f"a{number}", parent, call, {"type": "text", "text": f"step {number}: " + "x" * (number * 37 % 300)},
                        model)
        if number % 10 == 0:  # a rewound answer beside the one kept: a branch
            answer(f"r{number}", parent, f"msg_r{number}", {"type": "text", "text": f"rewound {number}"}, model)
        if number % 13 == 0:
            parent = put("user", f"q{number}", parent, {"role": "user", "content": f"and then {number}"})
            continue
        parent = answer(f"b{number}", parent, call, {"type": "tool_use", "id": f"toolu_{number}", "name": "Bash",
                                                     "input": {"command": f"cat f{number}"}}, model)
        if number % 4 == 0:  # a Task's run, written while the main call waits
            root = put("user", f"s{number}", None, {"role": "user", "content": f"search {number}"}, side=True)
            answer(f"sa{number}", root, f"msg_s{number}", {"type": "text", "text": f"found {number}"}, side=True)
        if number % 11 == 0:
            lines.append('{"type": "user", "uuid": "torn", "message": {"role": "us\n')
        if number % 7 == 0:
            lines.append(json.dumps({"type": "summary", "summary": f"title {number}", "leafUuid": parent}) + "\n")
        parent = put("user", f"o{number}", parent, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": f"out {number}\n" * (number % 9 + 1),
             "is_error": number % 5 == 0}]})
        if number % 17 == 0:
            boundary = put("system", f"c{number}", None, subtype="compact_boundary", logicalParentUuid=parent,
                           compactMetadata={"trigger": "auto", "preTokens": 1000 * number})
            parent = put("user", f"cs{number}", boundary, {"role": "user", "content": f"Summary up to {number}."},
                         isCompactSummary=True)
        if number % 19 == 0:  # names no parent: continues the record before it
            parent = put("user", f"n{number}", None, {"role": "user", "content": f"unlinked {number}"})
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _views(document: LoadedDocument) -> list[StepView]:
    """What the replay shows of each step, less where it is in the file."""
    return [msgspec.structs.replace(document.step(number), number=0, prompt_end=0)
            for number in range(1, document.step_count + 1)]


def _without_kept(view: StepView) -> StepView:
    """A step as a file's last steps show it: what a compaction kept of the whole history
    before it is said once the whole is read (the gap between the figures is said at once)."""
    detail = view.compaction_detail.split("kept: ")[0].removesuffix(" · ")  # the kept part is the last
    return msgspec.structs.replace(view, compaction_detail=detail)


@pytest.mark.parametrize(("write", "at_end"), [(write_rollout, True), (write_rollout, False), (write_session, True)],
                         ids=["codex-end", "codex-start", "claude-code-end"])
def test_a_part_shows_its_steps_as_the_whole_reading_does_wherever_it_is_cut(tmp_path, monkeypatch, mapped, write,
                                                                           at_end):
    path = write(tmp_path / "rollout.jsonl")
    whole = _views(LoadedDocument(load_trajectory(path)))
    if at_end:
        whole = [_without_kept(view) for view in whole]
    assert any(view.compaction for view in whole)
    size, seen = path.stat().st_size, set()
    for reach in range(600, size, max(211, size // 150)):  # a cut in every kind of record, and inside lines
        monkeypatch.setattr(sources, "PART_BYTES", reach)
        reading = open_reading(path, at_end)
        if reading is None:  # fewer than two steps that far in
            assert reach < 4000
            continue
        shown = _views(ReadingDocument(reading))
        assert 0 < len(shown) < len(whole)
        assert shown == (whole[-len(shown):] if at_end else whole[:len(shown)]), reach
        assert reading.preview.info.model_name == load_trajectory(path).info.model_name
        assert reading.preview.info.session == load_trajectory(path).info.session
        seen.add(len(shown))
    assert len(seen) > 20  # the cuts fell in many places


def test_the_whole_reading_is_the_loaders_and_says_how_far_it_got(tmp_path, monkeypatch, mapped):
    path = write_rollout(tmp_path / "rollout.jsonl", rounds=400)
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    reading = open_reading(path, at_end=True)
    assert reading is not None and reading.progress == 0
    whole = reading.finish()
    assert reading.progress == 1
    assert _views(LoadedDocument(whole)) == _views(LoadedDocument(load_trajectory(path)))
    assert whole.info.warnings == load_trajectory(path).info.warnings != []


def test_a_reading_stopped_ends_in_its_own_thread(tmp_path, monkeypatch, mapped):
    path = write_rollout(tmp_path / "rollout.jsonl", rounds=400)
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    reading = open_reading(path, at_end=False)
    assert reading is not None
    ended: list[BaseException] = []

    def whole() -> None:
        try:
            reading.finish()
        except Stopped as error:
            ended.append(error)

    reading.stop()
    thread = threading.Thread(target=whole)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and len(ended) == 1


def test_only_a_large_file_whose_part_reads_alone_is_read_so(tmp_path, monkeypatch):
    rollout = write_rollout(tmp_path / "rollout.jsonl")
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    assert open_reading(rollout, at_end=True) is None  # small: read whole at once
    monkeypatch.setattr(loader, "PART_FROM_BYTES", 1)
    in_memory = open_reading(rollout, at_end=True)  # read into memory, not mapped: the same part
    assert in_memory is not None and isinstance(in_memory.source.content, bytes)
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    assert _views(ReadingDocument(open_reading(rollout, at_end=True))) == _views(ReadingDocument(in_memory))
    accented = tmp_path / "accented.jsonl"
    accented.write_text(rollout.read_text().replace("Fix the parser.", "Répare l'analyseur."), encoding="utf-8")
    monkeypatch.setattr(loader, "MAP_BYTES", 1 << 40)
    assert open_reading(accented, at_end=True) is None  # its text decoded: offsets are characters
    own = tmp_path / "own.traj.json"
    own.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert open_reading(own, at_end=True) is None  # no reader of parts for it
    long_end = tmp_path / "long.jsonl"
    long_end.write_text(rollout.read_text() + _line("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "y" * 20000}]}))
    monkeypatch.setattr(sources, "PART_MAX_BYTES", 8192)
    assert open_reading(long_end, at_end=True) is None  # its last line is longer than any part
    assert open_reading(long_end, at_end=False) is not None
    session = write_session(tmp_path / "session.jsonl")
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    assert open_reading(session, at_end=True) is not None
    assert open_reading(session, at_end=False) is None  # the main line's start: known only at its end


def test_no_other_file_is_read_to_find_it_has_no_part(tmp_path, monkeypatch):
    """Its first bytes say (`sniffs_part`): a 24 MB ATIF or SWE-agent file is not read twice."""
    monkeypatch.setattr(loader, "PART_FROM_BYTES", 1)
    read: list[Path] = []
    real = loader._source
    monkeypatch.setattr(loader, "_source", lambda path, *args: read.append(path) or real(path, *args))
    fixtures = Path(__file__).parent / "fixtures"
    for path in (fixtures / "agents" / "atif" / "v1.5-plain.json", fixtures / "agents" / "openhands" / "eval-output.jsonl",
                 fixtures / "mini-v2-tool-calls.traj.json"):
        assert open_reading(path, at_end=True) is None
    assert read == []
    rollout = write_rollout(tmp_path / "rollout.jsonl")
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    assert open_reading(rollout, at_end=True) is not None and read == [rollout]


def test_a_run_swedeck_record_recorded_is_read_whole(tmp_path, monkeypatch, mapped):
    """Its recorded prompts are joined to its steps by their answers, over the whole file."""
    from swedeck.core.trajectory.join import note_record

    monkeypatch.setenv("SWEDECK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(sources, "PART_BYTES", 4096)
    rollout, session = write_rollout(tmp_path / "rollout.jsonl"), write_session(tmp_path / "session.jsonl")
    assert open_reading(rollout, at_end=True) is not None and open_reading(session, at_end=True) is not None
    record = tmp_path / "run.traj.json"
    record.write_text("{}")
    note_record(record, ["parts"])  # the two files' session id
    assert open_reading(rollout, at_end=True) is None and open_reading(session, at_end=True) is None


def test_a_reading_is_paced_every_1024_lines(tmp_path):
    """`Source.pace`, where the replay's reading waits while a key is handled."""
    from swedeck.core.trajectory.readers.source import Source

    calls: list[int] = []
    source = Source(path=tmp_path / "x.jsonl", content=b"".join(b'{"n": %d}\n' % n for n in range(5000)))
    source.pace = lambda: calls.append(source.read_to)
    assert sum(1 for _ in source.lines()) == 5000
    assert len(calls) == 4


# --- the replay screen ---------------------------------------------------------------------


def _text(screen: Any, selector: str) -> str:
    from textual.widgets import Static

    return str(screen.query_one(selector, Static).render())


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_replay_shows_the_last_steps_numbered_from_the_end_until_the_file_is_read(tmp_path, held):
    from swedeck.tui.replay.app import ReplayApp

    path = write_rollout(tmp_path / "rollout.jsonl", rounds=200)
    total = len(load_trajectory(path).steps)
    app = ReplayApp([path], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: " · reading " in _text(screen, "#replay-header"))
        shown = screen.document.step_count
        assert 10 < shown < 100
        assert screen.document.reading.source.pace is not None  # it steps aside for keys (`pacing.quiet.wait`)
        assert f"step -1 of the last {shown}" in _text(screen, "#replay-header")
        assert "step 200: look" in _text(screen, "#model-text")
        await pilot.press("h")
        await wait_for(pilot, lambda: f"step -2 of the last {shown}" in _text(screen, "#replay-header"))
        assert screen.step_list.label(shown - 1).split()[0] == "-2"
        await pilot.press("g", "5", "enter")  # not among the last steps: done when the whole is read
        await pilot.press("slash", "o", "u", "t", "space", "7", "enter")
        assert "step -2" in _text(screen, "#replay-header") and not screen.searching
        await pilot.press("t")  # the prompt needs every step before this one: said, not shown
        assert app.screen is screen
        held.set()
        await wait_for(pilot, lambda: screen.reading is None, timeout=30)
        await wait_for(pilot, lambda: screen.matches, timeout=30)  # the search kept for the whole file ran
        assert screen.search_text == "out 7"
        assert screen.step_list.from_end is False
        assert screen.step_list.label(total - 1).split()[0] == str(total - 1)
    # where the person was, the go-to, then the search's first match after it
    assert screen.step == min(step for step in screen.matches if step >= 5)


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize(("write", "start", "keys", "from_end"),
                         [(write_rollout, -1, ("h", "h"), 2), (write_rollout, None, ("l", "l"), None),
                          (write_session, -1, ("h", "h", "h"), 3)],
                         ids=["codex-end", "codex-start", "claude-code-end"])
async def test_the_replay_lands_on_the_same_step_when_the_file_is_read(tmp_path, held, write, start, keys, from_end):
    from swedeck.tui.replay.app import ReplayApp

    path = write(tmp_path / "rollout.jsonl", rounds=200)
    total = len(load_trajectory(path).steps)
    expected = total - from_end if from_end is not None else 3
    app = ReplayApp([path], start_step=start)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: " · reading " in _text(screen, "#replay-header"))
        if start is None:
            assert "step 1 of the first" in _text(screen, "#replay-header")
            assert "task: Fix the parser." in _text(screen, "#model-text")
        else:
            assert "task:" not in _text(screen, "#model-text")  # the first of the last steps is not the first
        await pilot.press(*keys)
        before = _text(screen, "#model-text")
        held.set()
        await wait_for(pilot, lambda: screen.reading is None, timeout=30)
        await wait_for(pilot, lambda: f"step {expected}/{total}" in _text(screen, "#replay-header"))
        assert _text(screen, "#model-text") == before


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_leaving_a_file_while_it_is_read_stops_its_reading(tmp_path, held):
    from swedeck.tui.replay.app import ReplayApp

    first = write_rollout(tmp_path / "a.jsonl", rounds=200)
    second = write_rollout(tmp_path / "b.jsonl", rounds=100)
    app = ReplayApp([first, second], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: " · reading " in _text(screen, "#replay-header"))
        reading = screen.document
        assert isinstance(reading, ReadingDocument)
        await pilot.press("L")
        await wait_for(pilot, lambda: screen.path == second)
        assert reading.reading.source.stopped
        held.set()
        await wait_for(pilot, lambda: screen.reading is None, timeout=30)
        await wait_for(pilot, lambda: "step 1/100" in _text(screen, "#replay-header"), timeout=30)
        await wait_for(pilot, lambda: not [worker for worker in app.workers if worker.is_running])
        assert screen.error is None


def test_the_header_numbers_a_files_last_steps_from_the_end_while_it_is_read():
    from swedeck.tui.replay.header import ReadProgress, ReplayHeader

    header = ReplayHeader(name="r.jsonl", format="codex", step=1439, steps=1439, model="gpt-5-codex")
    assert header.but(reading=ReadProgress(0.42, True)).text() == \
        "r.jsonl · codex · step -1 of the last 1,439 · reading 42% · gpt-5-codex"
    assert header.but(step=1, reading=ReadProgress(0.05, False)).text() == \
        "r.jsonl · codex · step 1 of the first 1,439 · reading 5% · gpt-5-codex"
    assert header.text() == "r.jsonl · codex · step 1439/1439 · gpt-5-codex"
    assert len(header.but(reading=ReadProgress(0.42, True)).text()) <= 78  # an 80-column header, its borders


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_whole_reading_that_fails_is_said_and_ends_the_reading(tmp_path, monkeypatch, mapped):
    from swedeck.tui.replay.app import ReplayApp

    def broken(self: ReadingDocument) -> LoadedDocument:
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(ReadingDocument, "finish", broken)
    monkeypatch.setattr(sources, "PART_BYTES", 32768)
    app = ReplayApp([write_rollout(tmp_path / "rollout.jsonl", rounds=200)], start_step=-1)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.error is not None)
        assert "the whole file could not be read (RuntimeError: the disk went away)" in screen.error
        assert screen.reading is None and " · reading " not in _text(screen, "#replay-header")
