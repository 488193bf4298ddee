"""A reader's step facts (`model.StepFacts`) say what its built steps say.

The summary and the cost report read every step's model, usage and commands from the facts a
reader keeps while it reads (issue 61: 2.5 million tiny steps, a million Claude Code records,
no step built). Here each is checked against the same trajectory with its facts taken away,
so every step is built: the fidelity summary, the cost report (two price sets), each step's
cost. A swedeck live file is read both ways: in memory, and mapped (a window at a time)
whatever its size.
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

import msgspec
import pytest

from swedeck.core.cost import Prices, cost_of
from swedeck.core.trajectory import loader
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.model import Trajectory

FIXTURES = Path(__file__).parent / "fixtures" / "agents"
PRICES = (Prices(), Prices({"m": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75},
                            "claude-sonnet-4-5": {"input": 3, "output": 15}}))


def _everything(trajectory: Trajectory) -> dict[str, Any]:
    reports = [cost_of(trajectory, prices) for prices in PRICES]
    return {"summary": summary(trajectory), "costs": [report.as_record() for report in reports],
            "steps": [sorted(report.steps.items()) for report in reports]}


def _line(role: str, content: Any = "", **extra: Any) -> dict[str, Any]:
    kinds = {"assistant": "action", "user": "observation", "tool": "observation"}
    return {"role": role, "content": content, "extra": {"message_type": kinds.get(role, "user_message"), **extra}}


_CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}
SHAPES: dict[str, list[dict[str, Any]]] = {
    "text commands": [_line("assistant", "```bash\nls\n```"), _line("user", "x"),
                      _line("assistant", "two\n```bash\na\n```\n```bash\nb\n```"), _line("user", "y"),
                      _line("assistant", "```mswea_bash_command\nls\n```\n```bash\nexample\n```"),
                      _line("assistant", "```sh\nls\n```"), _line("assistant", "no fence"),
                      _line("assistant", [{"type": "text", "text": "```bash\nls\n```"}])],
    "recorded": [_line("assistant", "t", actions=[{"command": "ls"}, {"command": "Read x", "shell": False}],
                       usage={"prompt_tokens": 1200, "completion_tokens": 30, "cached_tokens": 1000,
                              "cache_write_tokens": 100}, model="claude-sonnet-4-5"),
                 {"role": "assistant", "content": "t", "tool_calls": [_CALL],
                  "extra": {"message_type": "action", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}},
                 {"role": "tool", "content": "o", "tool_call_id": "c1", "extra": {"message_type": "observation"}},
                 _line("assistant", "done", usage={"prompt_tokens": 0, "completion_tokens": 0}),
                 _line("assistant", "est", usage={"prompt_tokens": 50, "completion_tokens": 5, "estimated": True}),
                 _line("assistant", "none named", model=None),
                 {"role": "meta", "event": "mode", "mode": "yolo"},
                 _line("assistant", "after", usage={"prompt_tokens": 7, "completion_tokens": 2}, model="other")],
    "usage a head does not take": [_line("assistant", "a", usage={"prompt_tokens": "12", "completion_tokens": 3}),
                                   _line("assistant", "b", model=5),
                                   _line("assistant", "c", usage={"prompt_tokens": 9, "completion_tokens": 1})],
    "negative usage": [_line("assistant", "a", usage={"prompt_tokens": -4, "completion_tokens": 3}),
                       _line("assistant", "b", usage={"prompt_tokens": 9, "completion_tokens": 1})],
    "damaged": [_line("assistant", "```bash\nls\n```"), "{not json", _line("assistant", "```bash\nls\n```")],
}


def _swedeck_file(path: Path, lines: list[Any]) -> Path:
    header = {"role": "meta", "format": "swedeck-traj/1", "session": {"id": "s", "model": "m"}}
    task = _line("user", "the task")
    task["extra"]["message_type"] = "task"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line)
                              for line in [header, task, *lines]) + "\n", encoding="utf-8")
    return path


def _mapped(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    mapped: list[Any] = []
    real = loader._mapped
    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    monkeypatch.setattr(loader, "_mapped", lambda *args: mapped.append(real(*args)) or mapped[-1])
    return mapped


def _without_facts(path: Path) -> dict[str, Any]:
    trajectory = load_trajectory(path, lazy=True)
    trajectory.facts = None
    return _everything(trajectory)


@pytest.mark.parametrize("read", ["mapped", "in memory"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_swedeck_files_facts_say_what_its_steps_say(tmp_path, monkeypatch, shape, read):
    path = _swedeck_file(tmp_path / "run.traj.jsonl", SHAPES[shape])
    mapped = _mapped(monkeypatch) if read == "mapped" else []
    trajectory = load_trajectory(path, lazy=True)
    assert bool(mapped and isinstance(mapped[0], mmap.mmap)) == (read == "mapped")
    if shape == "negative usage":  # a figure the facts do not keep: the steps are read
        assert trajectory.step_facts() is None
        return
    assert trajectory.step_facts() is not None and len(trajectory.steps) > 1
    assert _everything(trajectory) == _without_facts(path)


def test_a_mapped_swedeck_file_of_many_windows_keeps_its_facts_in_order(tmp_path, monkeypatch):
    """Steps across windows (1 MB each), some read by their heads and one line by line (a
    damaged line in its window), each with its own usage and model."""
    lines: list[Any] = []
    for step in range(12_000):
        lines.append(_line("assistant", f"step {step}\n```bash\nls {step}\n```" + " pad" * 20,
                           usage={"prompt_tokens": 100 + step, "completion_tokens": step % 7},
                           model="m" if step % 3 else "claude-sonnet-4-5"))
        lines.append(_line("user", "out " * 30))
        if step == 6000:
            lines.append("{damaged")
    path = _swedeck_file(tmp_path / "long.traj.jsonl", lines)
    assert path.stat().st_size > 3 << 20
    _mapped(monkeypatch)
    trajectory = load_trajectory(path, lazy=True)
    assert trajectory.step_facts() is not None and len(trajectory.steps) == 12_000
    assert _everything(trajectory) == _without_facts(path)


@pytest.mark.parametrize("path", [FIXTURES / "claude-code" / "cc-session-1.jsonl",
                                  FIXTURES / "claude-code" / "cc-session-1" / "subagents" / "agent-ag1.jsonl"],
                         ids=lambda path: path.name)
def test_claude_codes_facts_say_what_its_steps_say(path):
    trajectory = load_trajectory(path, lazy=True)
    assert trajectory.step_facts() is not None
    assert _everything(trajectory) == _without_facts(path)


def test_claude_codes_facts_over_a_generated_session(tmp_path):
    from bench.generate import write_claude_code_with_sidechains

    path = write_claude_code_with_sidechains(tmp_path / "long.jsonl", 400, 200, sidechains=5)
    trajectory = load_trajectory(path, lazy=True)
    assert trajectory.step_facts() is not None and len(trajectory.steps) >= 100
    assert _everything(trajectory) == _without_facts(path)
    assert msgspec.json.encode(_everything(trajectory))  # plain data


@pytest.mark.parametrize("text", ["", "plain", "```bash\nls\n```", "```bash\nls```", "```bash  \nls\n```",
                                  "```bash x\nls\n```", "```bash\nunclosed", "```sh\nls\n```\n```bash\nls\n```",
                                  "```mswea_bash_command\na\n```\n```bash\nb\n```\n```mswea_bash_command\nc\n```",
                                  "```bash\n```bash\nls\n```\n```", "````bash\nls\n````", "```\nls\n```"])
def test_the_commands_counted_in_a_text_are_those_read_from_it(text):
    from swedeck.core.actions import text_action_count, text_actions

    assert text_action_count(text) == len(text_actions(text))


def _reference_parents(records: list[dict[str, Any]]) -> list[int]:
    """Claude Code's tree as its reader's docstring says it: a record's parent is the latest
    record before it with the uuid it names; one that names none found continues the record
    before it, but the first record and a sidechain's first, which start a run."""
    position: dict[str, int] = {}
    parents = []
    for index, record in enumerate(records):
        named = record.get("parentUuid")
        if named is None and record.get("subtype") == "compact_boundary":
            named = record.get("logicalParentUuid")
        parent = position.get(named, -1) if isinstance(named, str) else -1
        if parent < 0 and index and not record.get("isSidechain"):
            parent = index - 1
        parents.append(parent)
        position[record["uuid"]] = index
    return parents


@pytest.mark.parametrize("seed", range(12))
def test_claude_codes_tree_finds_each_records_parent(tmp_path, seed):
    """Random sessions: chains, branches, records naming none or one after them or themselves,
    compact boundaries, sidechains, and (half the seeds) uuids that repeat, as a resumed session
    copies its records: the tree built in one pass at the end says what the reference says."""
    import random

    from swedeck.core.trajectory.model import TrajectoryInfo
    from swedeck.core.trajectory.readers import chat, claude_code
    from swedeck.core.trajectory.readers.source import Source

    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    for index in range(400):
        uuid = f"u{rng.randrange(150)}" if seed % 2 and rng.random() < 0.3 else f"u{index}-{seed}"
        roll = rng.random()
        named = (records[-1]["uuid"] if records and roll < 0.6 else
                 rng.choice(records)["uuid"] if records and roll < 0.8 else
                 None if roll < 0.9 else uuid if roll < 0.95 else f"u{index + 1}-{seed}")
        record = {"type": rng.choice(["user", "assistant"]), "uuid": uuid, "parentUuid": named, "sessionId": "s",
                  "isSidechain": rng.random() < 0.1, "message": {"role": "user", "content": "x"}}
        if rng.random() < 0.05:
            record.update(type="system", subtype="compact_boundary", parentUuid=None, logicalParentUuid=named)
        records.append(record)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    tree, _ = claude_code._scan(Source(path=path, content=path.read_bytes()), TrajectoryInfo(), chat.Tally(),
                                claude_code._Requests(), [])
    assert list(tree.parent) == _reference_parents(records)
    assert tree.position == {record["uuid"]: index for index, record in enumerate(records)}
    assert (len(tree.position) < len(records)) == bool(seed % 2)
