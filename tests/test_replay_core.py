"""SPEC §11.1-11.2 without the UI: lazy documents, search, token curve, what-if figures."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE
from support.replay import add_step, start_writer, write_trajectory
from swedeck.core.prompt_view import step_prompt
from swedeck.core.replay import LiveDocument, LoadedDocument, open_document
from swedeck.core.replay.search import matching_steps, next_match
from swedeck.core.replay.token_curve import token_curve
from swedeck.core.replay.what_if import what_if_curve, what_if_prompt
from swedeck.core.trajectory import TrajectoryError, load_trajectory

LAST_TWO = [{"type": "last_n_observations", "n": 2}]


def test_jsonl_opens_lazily_and_matches_the_loader(tmp_path):
    path = write_trajectory(tmp_path / "t", 5, finish=False)
    document = open_document(path)
    assert isinstance(document, LiveDocument)
    assert document.step_count == 5
    assert len(document.index._cache) == 0  # nothing parsed before a step is shown
    view = document.step(3)
    loaded = load_trajectory(path)
    step = loaded.step(3)
    assert view.assistant == loaded.messages[step.message_index]
    assert view.observations == loaded.observations(step)
    assert (view.prompt_tokens, view.window, view.prompt_end) == (300, 10_000, step.prompt_end)
    assert [a.command for a in view.actions] == ["echo step-3-output"]
    assert len(document.index._cache) < 6


@pytest.mark.parametrize("fixture", [MINI_FIXTURE, SWEAGENT_FIXTURE])
def test_other_formats_open_whole(fixture):
    document = open_document(fixture)
    assert isinstance(document, LoadedDocument)
    trajectory = load_trajectory(fixture)
    assert document.step_count == len(trajectory.steps) > 0
    view = document.step(document.step_count)
    assert view.assistant.role == "assistant"


def test_follow_sees_appended_steps(tmp_path):
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    document = open_document(writer.path)
    assert document.step_count == 1
    add_step(writer, 2)
    add_step(writer, 3)
    assert document.refresh() == 2
    assert document.step(3).actions[0].command == "echo step-3-output"
    assert document.refresh() == 0
    writer.close()


@pytest.mark.parametrize("content,reason", [
    (b"", "empty"),
    (b"\x00\x01binary\x00", "binary"),
    (b'{"role":"meta","format":"swedeck-traj/1","session":{}}\n{"role":"assistant","content":', None),
    (b'{"messages": "nope"}', "not a list"),
    (b"[1, 2, 3]", None),
])
def test_bad_files_give_one_error_naming_the_file(tmp_path, content, reason):
    path = tmp_path / "bad.traj.json"
    path.write_bytes(content)
    try:
        document = open_document(path)
    except TrajectoryError as error:
        assert str(path) in str(error)
        if reason:
            assert reason in error.reason
    else:
        assert document.step_count == 0  # a torn single line: nothing to show, but no crash


def test_a_torn_jsonl_line_in_the_middle_fails_at_that_step(tmp_path):
    path = write_trajectory(tmp_path / "t", 3, finish=False)
    lines = path.read_text().splitlines()
    lines[5] = lines[5][:20]  # step 2's assistant message, torn
    path.write_text("\n".join(lines) + "\n")
    document = open_document(path)
    assert document.step(1).number == 1
    with pytest.raises(TrajectoryError, match="t.traj.jsonl"):
        for number in range(1, document.step_count + 1):
            document.step(number)


def test_search_finds_steps_in_thoughts_commands_and_output(tmp_path):
    writer = start_writer(tmp_path / "t")
    add_step(writer, 1, thought="look at Calculator")
    add_step(writer, 2, command="grep -n divide calc.py")
    add_step(writer, 3, output="ZeroDivisionError: division by zero")
    path = writer.finish({"exit_status": "Submitted"})
    document = open_document(path)
    assert list(matching_steps(document, "calculator")) == [1]
    assert list(matching_steps(document, "DIVI")) == [2, 3]
    assert list(matching_steps(document, "absent")) == [] and list(matching_steps(document, "")) == []
    assert next_match([2, 3], 3) == 2 and next_match([2, 3], 2, forward=False) == 3
    assert next_match([], 1) is None


def test_token_curve_uses_recorded_usage_and_estimates_the_rest(tmp_path):
    path = write_trajectory(tmp_path / "t", 4)
    assert [(p.step, p.tokens, p.estimated) for p in token_curve(open_document(path))] == [
        (1, 100, False), (2, 200, False), (3, 300, False), (4, 400, False)]
    mini = list(token_curve(open_document(MINI_FIXTURE)))
    trajectory = load_trajectory(MINI_FIXTURE)
    assert len(mini) == len(trajectory.steps)
    recorded = [p for p in mini if not p.estimated]
    estimated = [p for p in mini if p.estimated]
    for point in estimated:  # an estimate is the unprocessed prompt `swedeck prompt` counts
        assert point.tokens == step_prompt(trajectory, point.step, [{"type": "default"}]).history_tokens
    assert all(p.tokens > 0 for p in recorded + estimated)
    tokens = [p.tokens for p in estimated]
    assert tokens == sorted(tokens)


@pytest.mark.parametrize("fixture", [MINI_FIXTURE, SWEAGENT_FIXTURE])
def test_what_if_equals_the_prompt_command(fixture):
    from swedeck.cli import main

    trajectory = load_trajectory(fixture)
    step = len(trajectory.steps)
    prompt = what_if_prompt(trajectory, step, LAST_TWO)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["prompt", str(fixture), "--step", str(step), "-c",
                     "agent.history_processors=[{type: last_n_observations, n: 2}]", "--json"])
    assert code == 0
    printed = json.loads(buffer.getvalue())
    assert printed["total_tokens"] == prompt.total_tokens
    assert printed["history_tokens"] == prompt.history_tokens
    assert len(printed["messages"]) == len(prompt.lines)
    curve = list(what_if_curve(trajectory, LAST_TWO))
    assert curve[-1].tokens == prompt.total_tokens and curve[-1].saved == prompt.history_tokens - prompt.total_tokens
    assert any(point.saved > 0 for point in curve)
    assert all(point.saved >= 0 for point in curve)
    off = what_if_prompt(trajectory, step, [{"type": "last_n_observations", "n": 2, "enabled": False}])
    assert off.total_tokens == off.history_tokens


def test_steps_kept_are_shared_safely_by_threads():
    """Issue 49: the replay's UI, its token curve's worker and its search read one document at
    once. Letting the oldest step go while another thread read or let go the same one raised
    KeyError, or "dictionary changed size during iteration", in that thread (a search stopped
    with an error). Threads switch as often as they can here; every read gets its own value."""
    import sys
    import threading

    from swedeck.core.trajectory.lazy import Kept

    interval = sys.getswitchinterval()
    kept: Kept[int, tuple[int]] = Kept(2)
    errors: list[str] = []

    def read(offset: int) -> None:
        try:
            for turn in range(100_000):
                key = (turn + offset) % 50
                value = kept.get(key) or kept.keep(key, (key,))
                assert value == (key,)
        except Exception as error:  # noqa: BLE001 - what a thread met, said by the test
            errors.append(repr(error))
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=read, args=(start * 7,)) for start in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and len(kept) <= 2
