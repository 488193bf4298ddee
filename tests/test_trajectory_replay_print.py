"""SPEC §2: `swedeck replay PATH --print [--json] [--step N]`, run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE, swedeck_command
from swedeck.core.messages import MessageType, Usage, make_message
from swedeck.core.redact import Redactor
from swedeck.core.text import strip_control
from swedeck.core.trajectory.writer import TrajectoryWriter


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*swedeck_command(), "replay", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})


def test_print_sweagent_fixture_text() -> None:
    result = replay(str(SWEAGENT_FIXTURE), "--print")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "swe-agent, 5 steps" in out and "submitted" in out
    for number, command in enumerate(["find_file calc.py", "open calc.py", "edit 5:5",
                                      "python3 -c 'from calc import average", "submit"], 1):
        assert f"step {number}/5" in out and f"$ {command}" in out
    assert "\r" not in out and "\x1b" not in out


def test_print_mini_fixture_json_lines() -> None:
    result = replay(str(MINI_FIXTURE), "--print", "--json")
    assert result.returncode == 0, result.stderr
    records = [r for r in map(json.loads, result.stdout.splitlines()) if "step" in r]
    assert [r["step"] for r in records] == list(range(1, 9))
    assert records[1]["actions"] == [{"command": "cat calc.py"}]
    assert records[-1]["observations"][0]["message_type"] == "final"
    assert records[4]["observations"][0]["content"].startswith("<returncode>1</returncode>")


def test_negative_step_selects_one() -> None:
    last = replay(str(MINI_FIXTURE), "--print", "--json", "--step", "-1")
    assert [r["step"] for r in map(json.loads, last.stdout.splitlines()) if "step" in r] == [8]
    second = replay(str(SWEAGENT_FIXTURE), "--print", "--step", "-3")
    assert "step 3/5" in second.stdout and "step 2/5" not in second.stdout and "step 4/5" not in second.stdout
    out_of_range = replay(str(SWEAGENT_FIXTURE), "--print", "--step", "-9")
    assert out_of_range.returncode == 2 and "out of range" in out_of_range.stderr


def test_print_swedeck_file_with_usage_and_control_sequences(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "s", {"id": "s1", "model": "m"}, Redactor())
    writer.add_message(make_message("user", "task", MessageType.TASK))
    writer.add_message(make_message("assistant", "look\n```bash\nls\n```", MessageType.ACTION,
                                    usage=Usage(prompt_tokens=1200, completion_tokens=30), cost=0.002))
    writer.add_message(make_message("user", "\x1b[31mred\x1b[0m\x1b]0;title\x07 file", MessageType.OBSERVATION,
                                    returncode=0))
    result = replay(str(writer.path), "--print")
    assert result.returncode == 0, result.stderr
    assert "swedeck-jsonl, 1 steps" in result.stdout
    assert "1200 prompt + 30 completion tokens" in result.stdout and "$0.0020" in result.stdout
    assert "observation (exit 0):" in result.stdout and "red file" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_print_a_folder_file_by_file(tmp_path: Path) -> None:
    (tmp_path / "a.traj").write_text(SWEAGENT_FIXTURE.read_text())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.traj.json").write_text(MINI_FIXTURE.read_text())
    result = replay(str(tmp_path), "--print")
    assert result.returncode == 0, result.stderr
    assert result.stdout.index("a.traj (swe-agent") < result.stdout.index("b.traj.json (mini-swe-agent")
    (tmp_path / "broken.traj.json").write_text("{")
    partly = replay(str(tmp_path), "--print", "--json")
    assert partly.returncode == 1 and "broken.traj.json" in partly.stderr
    assert len(partly.stdout.splitlines()) == 13 + 2  # a fidelity line a file


def test_unreadable_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.traj"
    bad.write_bytes(b"\x00\x01binary")
    result = replay(str(bad), "--print")
    assert result.returncode == 1
    assert result.stderr.strip() == f"swedeck: cannot read trajectory {bad}: a binary file, not JSON"


def test_without_print_an_empty_folder_is_a_usage_error(tmp_path) -> None:
    result = replay(str(tmp_path))  # the UI path checks its arguments before drawing anything
    assert result.returncode == 2 and "no trajectory files" in result.stderr and "Traceback" not in result.stderr


def test_strip_control_keeps_text() -> None:
    assert strip_control("a\x1b[2J\x1b[1;1Hb\tc\r\nd\x08\re") == "ab\tc\nde"
