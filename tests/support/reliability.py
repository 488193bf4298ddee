"""Helpers of the reliability and security suites (SPEC §13): the headless command line
against the scripted server, waiting, reading a live `.jsonl` line by line, and Docker
availability."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import swedeck_command

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The command a scripted model ends with (every suite that scripts one imports it from here)."""


def headless_args(server_url: str, tmp_path: Path, *extra: str, output: Path | None = None,
                  model: str = "hosted_vllm/scripted") -> list[str]:
    """`swedeck run --headless` at the scripted server, commands and trajectory in `tmp_path`."""
    return [
        *swedeck_command(), "run", "--headless", "-m", model,
        "-c", f"model.model_kwargs={{api_base: '{server_url}'}}", "-c", "model.cost_tracking=ignore_errors",
        "-c", "model.retry.backoff_min_s=0.01", "-c", "model.retry.backoff_max_s=0.05",
        "--cwd", str(tmp_path), "-o", str(output or tmp_path / "run.traj.json"), *extra,
    ]


def jsonl_records(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The whole JSON lines of a live file, and the torn last line if there is one.

    Only the last line may be incomplete (a process killed mid-write); anything else that
    does not parse fails the calling test.
    """
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    records: list[dict[str, Any]] = []
    torn = None
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            is_last = number == len(lines) - 1  # no newline after it: the write was cut
            assert is_last, f"line {number + 1} of {path} is broken but not the last line: {line[:200]!r}"
            torn = line.decode("utf-8", "replace")
    return records, torn


def api_view(record: dict[str, Any]) -> dict[str, Any]:
    """A trajectory message as the model API saw it (what the scripted server recorded)."""
    out: dict[str, Any] = {"role": record["role"], "content": record.get("content")}
    if record.get("tool_calls"):
        out["tool_calls"] = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                             for c in record["tool_calls"]]
    if record.get("tool_call_id"):
        out["tool_call_id"] = record["tool_call_id"]
    return out


def docker_client_or_skip() -> Any:
    """A docker-py client of a reachable engine with `swedeck-test:latest`; a skip (or, with
    SWEDECK_REQUIRE_DOCKER=1, a failure) when there is none."""
    required = os.environ.get("SWEDECK_REQUIRE_DOCKER") == "1"
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        client.images.get("swedeck-test:latest")
        return client
    except Exception as error:  # noqa: BLE001 - no engine, no socket, no image: all mean "cannot test docker here"
        reason = f"no Docker engine with swedeck-test:latest answers ({type(error).__name__}: {error})"
        if required:
            pytest.fail(f"SWEDECK_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)


def swedeck_files(folder: Path, *, name: str = "seed", task: str = "the task", thought: str = "look",
                  output: str = "<output>a</output>") -> tuple[Path, Path]:
    """A swedeck live `.jsonl` (kept) and its final `.traj.json`, written by the real writer."""
    from swedeck.core.messages import MessageType, make_message
    from swedeck.core.trajectory.writer import TrajectoryWriter

    writer = TrajectoryWriter(folder / f"{name}.traj.json", {"id": name, "model": "m", "config": {}}, keep_jsonl=True)
    writer.add_message(make_message("system", "you are", MessageType.SYSTEM))
    writer.add_message(make_message("user", task, MessageType.TASK, step=0))
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    writer.add_message(make_message("assistant", thought, MessageType.ACTION, step=1, tool_calls=[call]))
    writer.add_message(make_message("tool", output, MessageType.OBSERVATION, step=1, tool_call_id="call_1"))
    writer.add_meta("mode", mode="yolo")
    final = writer.finish({"exit_status": "Submitted", "submission": ""})
    return folder / f"{name}.traj.jsonl", final
