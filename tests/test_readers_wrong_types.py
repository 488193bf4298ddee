"""Issue 61: a field of the wrong type reads as missing, in every reader, on every path.

Hypothesis takes a fixture of each format (ours: Claude Code, Codex, ATIF, Harbor, Inspect,
OpenHands, mini-swe-agent, SWE-agent, swedeck's live and final files), replaces one value in
it (at any depth) with a value of another type, and reads it as the replay does: whole, step
by step, its token curve and its fidelity summary, and, as a large file is, its end and its
start first. The reader may refuse the file with a reason (a `TrajectoryError` naming it), but
never with an internal error: "unexpected content (TypeError …)", or an exception of its own.
Nine kinds of field did before this test (tests/test_hostile_input.py keeps each).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from support.replay import write_trajectory
from swedeck.core.replay.document import ReadingDocument, open_document
from swedeck.core.replay.token_curve import token_curve
from swedeck.core.trajectory import loader
from swedeck.core.trajectory.errors import TrajectoryError
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory, open_reading
from swedeck.core.trajectory.readers import source as sources

AGENTS = FIXTURES / "agents"
SOURCES = [AGENTS / "claude-code" / "cc-session-1.jsonl", AGENTS / "claude-code" / "cc-session-1" / "subagents" /
           "agent-ag1.jsonl", *sorted((AGENTS / "codex").glob("*.jsonl")), AGENTS / "atif" / "v1.5-plain.json",
           AGENTS / "atif" / "v1.8-subagents.json", AGENTS / "atif" / "harbor-0.25.0-of-mini-v2-tool-calls.json",
           AGENTS / "inspect" / "calc.json", AGENTS / "openhands" / "v0-events.json",
           AGENTS / "openhands" / "eval-output.jsonl", FIXTURES / "mini-v1-text.traj.json",
           FIXTURES / "mini-v2-tool-calls.traj.json", FIXTURES / "sweagent-tool-calls.traj",
           FIXTURES / "sweagent-older.traj"]
WRONG: list[Any] = ["x", "", [1], [], {"a": 1}, {}, True, False, -3, 0, 10 ** 30, 1e308, None]
INTERNAL = ("unexpected content", "TypeError", "AttributeError", "KeyError", "IndexError")


def _places(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    places: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            places += [(*prefix, key), *_places(item, (*prefix, key))]
    elif isinstance(value, list):
        for index, item in enumerate(value[:8]):
            places += [(*prefix, index), *_places(item, (*prefix, index))]
    return places


def _documents(path: Path) -> list[Any]:
    """The file's JSON values: one, or one a line (a line that is not JSON kept as its text)."""
    if path.suffix != ".jsonl":
        return [json.loads(path.read_text())]
    values: list[Any] = []
    for line in path.read_text().splitlines():
        try:
            values.append(json.loads(line))
        except ValueError:
            values.append(line)
    return values


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[Any], list[tuple[int, tuple[Any, ...]]]]]:
    folder = tmp_path_factory.mktemp("swedeck-files")
    ours = [write_trajectory(folder / "final", 4), write_trajectory(folder / "live", 4, finish=False)]
    found = []
    for path in [*SOURCES, *ours]:
        documents = _documents(path)
        places = [(number, place) for number, value in enumerate(documents) for place in _places(value)]
        found.append((path.name, documents, places))
    return found


def _read(path: Path, mapped: bool) -> None:
    """Read as the replay reads: the whole file, every step, the curve, the summary; mapped, a
    part from each end first."""
    trajectory = load_trajectory(path)
    summary(trajectory)
    document = open_document(path)
    for number in range(1, document.step_count + 1):
        document.step(number)
    list(token_curve(document))
    if mapped:
        for at_end in (True, False):
            reading = open_reading(path, at_end)
            if reading is not None:
                part = ReadingDocument(reading)
                for number in range(1, part.step_count + 1):
                    part.step(number)
                reading.finish()


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), mapped=st.booleans())
def test_one_value_of_another_type_never_fails_a_reader_inside(files, tmp_path, monkeypatch, data, mapped):
    name, documents, places = data.draw(st.sampled_from(files), label="file")
    number, place = data.draw(st.sampled_from(places), label="place")
    value = data.draw(st.sampled_from(WRONG), label="value")
    changed = json.loads(json.dumps(documents))
    target = changed[number]
    for part in place[:-1]:
        target = target[part]
    target[place[-1]] = value
    path = tmp_path / f"{data.draw(st.integers(0, 10 ** 9), label='case')}-{name}"
    if name.endswith(".jsonl"):
        path.write_text("\n".join(item if isinstance(item, str) else json.dumps(item) for item in changed) + "\n")
    else:
        path.write_text(json.dumps(changed[0]))
    if mapped:  # read as a large file is: mapped, in windows, a part first
        monkeypatch.setattr(loader, "MAP_BYTES", 1)
        monkeypatch.setattr(loader, "PART_FROM_BYTES", 1)
        monkeypatch.setattr(sources, "PART_BYTES", 700)
    try:
        _read(path, mapped)
    except TrajectoryError as error:  # refused with a reason: fine, unless the reason is an internal error
        assert not any(word in str(error) for word in INTERNAL), (name, place, value, str(error))
    finally:
        monkeypatch.undo()
