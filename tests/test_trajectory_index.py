"""SPEC §11.1/§11.4: a live `.jsonl` read lazily, and followed by reading only new bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MINI_FIXTURE
from swedeck.core.messages import MessageType, make_message
from swedeck.core.redact import Redactor
from swedeck.core.trajectory import TrajectoryError, load_trajectory
from swedeck.core.trajectory.index import TrajectoryIndex
from swedeck.core.trajectory.writer import TrajectoryWriter


def _writer(tmp_path: Path) -> TrajectoryWriter:
    return TrajectoryWriter(tmp_path / "live", {"id": "idx", "model": "m"}, Redactor())


def test_index_matches_the_loader(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    for message in load_trajectory(MINI_FIXTURE).messages:
        writer.add_message(message)
    writer.add_meta("mode_change", mode="yolo", previous="confirm")
    index = TrajectoryIndex(writer.path)
    loaded = load_trajectory(writer.path)
    assert len(index) == len(loaded.messages) == 18
    assert index.message(-1) == loaded.messages[-1] and index.message(3) == loaded.messages[3]
    assert index.header["session"]["id"] == "idx"
    assert [(e.event, e.message_count) for e in index.meta_events()] == [("mode_change", 18)]


def test_refresh_reads_only_new_lines_and_waits_for_whole_ones(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    writer.add_message(make_message("user", "task", MessageType.TASK))
    index = TrajectoryIndex(writer.path)
    assert len(index) == 1 and index.refresh() == 0
    writer.add_message(make_message("assistant", "one", MessageType.ASSISTANT_MESSAGE))
    with open(writer.path, "ab") as handle:
        handle.write(b'{"role": "user", "content": "half')
    assert index.refresh() == 1 and index.torn_tail
    assert index.message(1).text == "one"
    with open(writer.path, "ab") as handle:
        handle.write(b'", "extra": {"message_type": "observation"}}\n')
    assert index.refresh() == 1 and not index.torn_tail
    assert index.message(2).text == "half" and index.message(2).message_type == MessageType.OBSERVATION


def test_a_replaced_file_is_indexed_again(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    writer.add_message(make_message("user", "a", MessageType.TASK))
    writer.add_message(make_message("user", "b", MessageType.USER_MESSAGE))
    index = TrajectoryIndex(writer.path)
    writer.close()
    again = TrajectoryWriter(writer.path, {"id": "idx2"}, Redactor())
    again.add_message(make_message("user", "c", MessageType.TASK))
    index.refresh()
    assert len(index) == 1 and index.message(0).text == "c" and index.header["session"]["id"] == "idx2"


def test_not_a_swedeck_jsonl(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match="swedeck-traj/1"):
        TrajectoryIndex(MINI_FIXTURE)
