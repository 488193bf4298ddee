"""`OpenRun` (issue 64.1), without a UI: one open trajectory, its threads and what they report.

The views' behaviour over it is the replay's, diff's and what-if's tests; these check the run
itself through its sink: the curve, a large file's part then its whole with what was asked
meanwhile, a long history's prompt, the export, follow and closing.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import pytest
from test_reading_parts import write_rollout

from support.replay import add_step, start_writer, write_trajectory
from swedeck.core.prompt_view import step_prompt
from swedeck.core.replay import open_run
from swedeck.core.replay.document import LiveDocument, LoadedDocument, ReadingDocument
from swedeck.core.replay.open_run import (
    CurvePoints,
    Exported,
    Failed,
    OpenRun,
    Progress,
    PromptReady,
    Read,
    RunEvent,
    WholeReadFailed,
)
from swedeck.core.replay.token_curve import token_curve
from swedeck.core.trajectory.loader import load_trajectory


class Sink:
    """What a run reported, in order, waited on by condition (never by a fixed sleep)."""

    def __init__(self) -> None:
        self.events: queue.Queue[RunEvent] = queue.Queue()
        self.seen: list[RunEvent] = []

    def __call__(self, event: RunEvent) -> None:
        self.events.put(event)

    def until(self, found: Callable[[RunEvent], bool], timeout: float = 30) -> RunEvent:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no such event; seen: {[type(event).__name__ for event in self.seen]}")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if found(event):
                return event


def curve_of(sink: Sink, run: OpenRun) -> dict[int, int]:
    tokens: dict[int, int] = {}
    while True:
        event = sink.until(lambda e: isinstance(e, CurvePoints | Failed))
        assert isinstance(event, CurvePoints), event
        if run.current(event):
            tokens.update((point.step, point.tokens) for point in event.points)
            if event.done:
                return tokens


def test_a_file_read_whole_opens_at_the_step_asked_and_its_curve_is_the_cores(tmp_path):
    path = write_trajectory(tmp_path / "t", 6)
    sink = Sink()
    run = OpenRun(path, sink)
    assert run.open(-2) == 5 and isinstance(run.document, LoadedDocument) and run.reading is None
    run.start()
    expected = {point.step: point.tokens for point in token_curve(LoadedDocument(load_trajectory(path)))}
    assert curve_of(sink, run) == expected and len(expected) == 6
    run.start_curve()  # again: the points of the newer one are the run's, the older's are not current
    assert curve_of(sink, run) == expected


def test_a_large_file_shows_its_end_then_its_whole_with_what_was_asked_meanwhile_in_order(tmp_path, held):
    path = write_rollout(tmp_path / "rollout.jsonl", rounds=200)
    total = len(load_trajectory(path).steps)
    sink = Sink()
    run = OpenRun(path, sink)
    assert run.open(5) == 5  # a step from the start: the file's first steps are read first
    part = run.reading
    assert part is not None and not part.at_end and 5 < part.step_count < total
    run.close()

    sink = Sink()
    run = OpenRun(path, sink)
    place = run.open(-1)
    part = run.reading
    assert part is not None and part.at_end and place == part.step_count < total
    assert run.place_in_part(-2) == part.step_count - 1 and run.place_in_part(5) is None
    asked: list[str] = []
    assert run.when_read(lambda: asked.append("go to 5")) and run.when_read(lambda: asked.append("search"))
    run.start()
    sink.until(lambda event: isinstance(event, Progress))  # said while it reads
    held.set()
    read = sink.until(lambda event: isinstance(event, Read))
    assert isinstance(read, Read) and run.current(read)
    # its thread is done, the UI's has not taken it yet: still the part, and what is asked still waits
    assert run.reading is part and run.when_read(lambda: asked.append("prompt"))
    shown = place - 3  # the person moved 3 steps back meanwhile
    number, then = run.adopt(read, shown)
    assert number == total - 3 and run.reading is None and isinstance(run.document, LoadedDocument)
    assert run.document.step_count == total
    for asked_for in then:
        asked_for()
    assert asked == ["go to 5", "search", "prompt"] and not run.when_read(lambda: asked.append("later"))


def test_a_whole_reading_that_fails_is_said_for_its_file(tmp_path, held, monkeypatch):
    def broken(self: ReadingDocument) -> LoadedDocument:
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(ReadingDocument, "finish", broken)
    path = write_rollout(tmp_path / "rollout.jsonl", rounds=200)
    sink = Sink()
    run = OpenRun(path, sink)
    run.open(-1)
    run.start()
    read = sink.until(lambda event: isinstance(event, Read))
    assert isinstance(read, Read)
    with pytest.raises(WholeReadFailed, match="the whole file could not be read .RuntimeError: the disk went away."):
        run.adopt(read, 1)


def test_a_closed_run_stops_reading_and_says_nothing_more(tmp_path, held):
    path = write_rollout(tmp_path / "rollout.jsonl", rounds=200)
    sink = Sink()
    run = OpenRun(path, sink)
    run.open(-1)
    part = run.reading
    assert part is not None
    run.start()
    run.close()
    held.set()
    assert part.reading.source.stopped
    run.start_curve()  # nothing reported once closed
    with pytest.raises(AssertionError, match="no such event"):
        sink.until(lambda event: isinstance(event, Read | CurvePoints), timeout=2)


def test_a_long_historys_prompt_is_worked_out_in_a_thread_and_a_newer_ask_supersedes_it(tmp_path, monkeypatch):
    monkeypatch.setattr(open_run, "PROMPT_IN_WORKER", 1)
    path = write_trajectory(tmp_path / "t", 5)
    trajectory = load_trajectory(path)
    sink = Sink()
    run = OpenRun(path, sink)
    run.open(1)
    assert run.prompt(4, [], None) is None and run.prompt(5, [], None) is None
    ready = sink.until(lambda event: isinstance(event, PromptReady) and run.current(event))
    assert isinstance(ready, PromptReady) and ready.step == 5
    expected = step_prompt(trajectory, 5)
    assert [line.tokens for line in ready.prompt.lines] == [line.tokens for line in expected.lines]
    # the older ask's, where its thread was done before the newer ask: told, but no longer current
    assert not any(isinstance(event, PromptReady) and event.step == 4 and run.current(event) for event in sink.seen)
    assert not run.current(PromptReady(run, ready.generation - 1, 4, ready.prompt, []))
    monkeypatch.setattr(open_run, "PROMPT_IN_WORKER", 10_000)
    now = run.prompt(2, [], None)  # a short history: at once
    assert now is not None and now.total_tokens == step_prompt(trajectory, 2).total_tokens


def test_a_prompt_that_raises_is_a_failed_event(tmp_path, monkeypatch):
    monkeypatch.setattr(open_run, "PROMPT_IN_WORKER", 1)
    path = write_trajectory(tmp_path / "t", 3)
    sink = Sink()
    run = OpenRun(path, sink)
    run.open(1)
    run.prompt(3, [{"type": "last_n_observations", "n": "not a number"}], None)
    failed = sink.until(lambda event: isinstance(event, Failed))
    assert isinstance(failed, Failed) and failed.work == "prompt"


def test_the_export_writes_the_open_run_and_says_so_even_after_it_is_closed(tmp_path):
    path = write_trajectory(tmp_path / "t", 3)
    sink = Sink()
    run = OpenRun(path, sink)
    run.open(1)
    out = tmp_path / "out.atif.json"
    run.export(out, dict)
    run.close()  # the person moved to another file meanwhile
    said = sink.until(lambda event: isinstance(event, Exported))
    assert isinstance(said, Exported) and not said.failed and f"wrote {out} (ATIF-" in said.text
    assert len(load_trajectory(out).steps) == 3
    run.export(tmp_path / "missing" / "out.html", dict)
    failed = sink.until(lambda event: isinstance(event, Exported))
    assert isinstance(failed, Exported) and failed.failed and failed.text.startswith("export failed: ")


def test_follow_sees_new_steps_then_the_final_file_the_live_one_became(tmp_path):
    writer = start_writer(tmp_path / "live")
    add_step(writer, 1)
    sink = Sink()
    run = OpenRun(writer.path, sink)
    run.open(1)
    assert isinstance(run.document, LiveDocument) and run.follow().new == 0
    add_step(writer, 2)
    assert run.follow().new == 1 and run.document.step_count == 2
    final = writer.finish({"exit_status": "Submitted", "submission": "done"})
    followed = run.follow()
    assert followed.final == final and run.path == final and run.document.step_count == 2


def test_what_a_run_is_paced_by_is_asked_and_its_collector_policy_kept(tmp_path):
    calls: list[str] = []
    released = threading.Event()

    class Quiet:
        def wait(self) -> None:
            calls.append("wait")

    class Paced:
        quiet = Quiet()

        def worker_pace(self, every_quiet: int, every_yield: int, yield_s: float) -> Callable[[int], None]:
            return lambda number: calls.append("pace")

        def hold(self) -> None:
            calls.append("hold")

        def release(self) -> None:
            calls.append("release")
            released.set()

        def freeze(self) -> None:
            calls.append("freeze")

        def thaw(self) -> None:
            calls.append("thaw")

    path = write_trajectory(tmp_path / "t", 3)
    sink = Sink()
    run = OpenRun(path, sink, Paced())
    run.open(1)
    assert calls == ["thaw", "freeze"]  # the previous file's objects let go, this one's frozen
    run.start()
    curve_of(sink, run)
    assert released.wait(10)  # after the curve's last points, however it ends
    assert calls[2] == "hold" and calls.count("pace") == 3 and calls[-1] == "release"
    assert list(run.search_places("step-2-output")) == [2]
