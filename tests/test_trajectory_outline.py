"""A document read in outline (core/trajectory/outline.py): the same values as the whole parse, sooner.

The oracle is the standard library's `json`: every value an outline gives, and every record of a
`RawRecords`, must be what `json.loads` makes of the same text; and a file must load to the same
messages whether it is read in outline or (because of one NaN msgspec refuses) parsed whole.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, MINI_V2_FIXTURE
from swedeck.core.trajectory import TrajectoryError, load_trajectory
from swedeck.core.trajectory.outline import Outline, RawRecords, heads, outline, plain, records_at

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                              max_size=4), max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(document=st.dictionaries(st.text(max_size=8), _json, max_size=6), ascii_only=st.booleans())
def test_an_outline_has_the_values_json_has(document: dict[str, Any], ascii_only: bool) -> None:
    text = json.dumps(document, ensure_ascii=ascii_only)
    expected = json.loads(text)
    for form in (text, text.encode()):
        read = outline(form)
        assert plain(read) == expected
        assert list(read) == list(expected)  # the keys in the file's order, duplicates resolved as json does


@settings(max_examples=100, deadline=None)
@given(records=st.lists(st.dictionaries(st.sampled_from(["role", "content", "extra", "x"]), _json, max_size=4),
                        max_size=6))
def test_raw_records_are_the_records_json_has(records: list[dict[str, Any]]) -> None:
    document = outline(json.dumps({"messages": records}))
    found = records_at(document, "messages")
    extras_are_objects = all(isinstance(record.get("extra", {}), dict | None) for record in records)
    if not extras_are_objects:  # a head cannot be read: the list is parsed whole, as before
        assert found == records and not isinstance(found, RawRecords)
        return
    assert isinstance(found, RawRecords)
    assert list(found) == records and found[1:3] == records[1:3] and len(found) == len(records)
    for head, record in zip(heads(found), records, strict=True):
        assert head.get("role") == record.get("role")
        extra = record.get("extra")
        if isinstance(extra, dict):
            assert dict(head["extra"]) == {key: extra[key] for key in ("message_type", "is_demo") if key in extra}


@pytest.mark.parametrize("value", ["NaN", '"\\ud83d"', "1e999", "123456789012345678901234567890"])
def test_what_msgspec_refuses_reads_as_json_reads_it(value: str) -> None:
    text = '{"messages": [{"role": "user", "content": "x", "odd": VALUE}], "info": {"odd": VALUE}}'.replace("VALUE", value)
    read = outline(text)
    expected = json.loads(text)
    got = plain(read)
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)  # NaN != NaN, so compared as text
    assert list(records_at(read, "messages")) == got["messages"] or math.isnan(got["info"]["odd"])


def test_a_list_item_that_is_not_an_object_is_named_as_before(tmp_path: Path) -> None:
    path = tmp_path / "t.traj.json"
    path.write_text(json.dumps({"messages": [{"role": "system", "content": "s"}, "oops"], "info": {}}))
    with pytest.raises(TrajectoryError, match=r"`messages`\[1\] is str, not an object"):
        load_trajectory(path)


def _same_file_parsed_whole(path: Path, tmp_path: Path) -> Path:
    """The file with a NaN in its `info`: msgspec refuses it, so it is parsed whole by `json`."""
    document = json.loads(path.read_text())
    document.setdefault("info", {})["unreadable_by_msgspec"] = float("nan")
    whole = tmp_path / f"whole-{path.name}"
    whole.write_text(json.dumps(document))
    assert not isinstance(outline(whole.read_text()), Outline)
    return whole


def _records(path: Path) -> list[dict[str, Any]]:
    return [message.to_record() for message in load_trajectory(path).messages]


def test_mini_swe_agent_file_loads_the_same_in_outline_and_whole(tmp_path: Path) -> None:
    assert isinstance(outline(MINI_V2_FIXTURE.read_bytes()), Outline)
    assert _records(MINI_V2_FIXTURE) == _records(_same_file_parsed_whole(MINI_V2_FIXTURE, tmp_path))


@pytest.mark.parametrize("name", ["sweagent-tool-calls.traj", "sweagent-older.traj", "sweagent-demos-in-history.traj",
                                  "sweagent-requeried.traj"])
def test_swe_agent_file_loads_the_same_in_outline_and_whole(tmp_path: Path, name: str) -> None:
    """The reader plans every message from the records' heads (type, action, whether an observation
    is there) and builds it from the whole record: the heads must hold all the plan reads."""
    path = FIXTURES / name
    assert isinstance(outline(path.read_bytes()), Outline)
    assert _records(path) == _records(_same_file_parsed_whole(path, tmp_path))


def test_swedeck_file_loads_the_same_in_outline_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.traj.json"
    messages = [
        {"role": "system", "content": "sys", "extra": {"message_type": "system"}},
        {"role": "user", "content": "täsk ✓", "extra": {"message_type": "task"}},
        {"role": "assistant", "content": "demo", "extra": {"message_type": "assistant_message", "is_demo": True}},
        {"role": "assistant", "content": "```bash\nls\n```", "extra": {"message_type": "action", "step": 1}},
        {"role": "user", "content": "a b", "extra": {"message_type": "observation", "raw_output": "a b"}},
        {"role": "assistant", "content": "done", "extra": {"message_type": "final"}},
    ]
    path.write_text(json.dumps({"trajectory_format": "swedeck-1", "info": {}, "messages": messages}, ensure_ascii=False))
    trajectory = load_trajectory(path)
    assert [step.message_index for step in trajectory.steps] == [3]  # neither the demonstration nor the submission
    assert _records(path) == _records(_same_file_parsed_whole(path, tmp_path))


def _large(form: str, steps: int, output: str) -> dict[str, Any]:
    """`steps` steps of `output` each in a JSON format swedeck reads in outline."""
    head: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    if form == "swe-agent":
        history = head + [entry for number in range(steps) for entry in (
            {"role": "assistant", "content": "run it", "action": f"echo {number}", "message_type": "action"},
            {"role": "user", "content": output, "message_type": "observation"})]
        records = [{"action": f"echo {number}", "response": "run it", "observation": output} for number in range(steps)]
        return {"history": history, "trajectory": records, "info": {}}
    messages = head + [entry for number in range(steps) for entry in (
        {"role": "assistant", "content": f"```mswea_bash_command\necho {number}\n```"},
        {"role": "user", "content": output})]
    if form == "swedeck-json":
        types = ["system", "task"] + ["action", "observation"] * steps
        for message, kind in zip(messages, types, strict=True):
            message["extra"] = {"message_type": kind}
        messages[-2]["extra"]["actions"] = [{"command": f"echo {steps - 1}"}]
        return {"trajectory_format": "swedeck-1", "info": {}, "messages": messages}
    return {"messages": messages, "info": {}}


@pytest.mark.parametrize("form", ["mini-swe-agent", "swedeck-json", "swe-agent"])
def test_opening_a_large_file_parses_only_what_it_shows(tmp_path: Path, form: str) -> None:
    """The replay opens a file and shows its last step: the other records stay unparsed bytes,
    so what opening allocates is about the file itself (parsed whole, it is three times that)."""
    path = tmp_path / "big.traj"
    path.write_text(json.dumps(_large(form, 150, "x" * 40_000)))
    tracemalloc.start()
    try:
        trajectory = load_trajectory(path, lazy=True)
        assert trajectory.format == form
        assert trajectory.steps[-1].commands == ["echo 149"]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * path.stat().st_size
