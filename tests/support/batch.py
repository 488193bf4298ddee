"""Helpers for the batch tests (`swedeck batch`, SPEC §15): instance files, a scripted model
that answers each instance from its own conversation, and a sink that keeps the events."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, TextIO, cast

from conftest import swedeck_command
from support.openai_server import Turn
from support.reliability import SUBMIT
from swedeck.core.batch.progress import JsonLines, Tally
from swedeck.core.batch.runner import Batch, BatchOptions

ID_IN_TASK = re.compile(r"fix issue (\S+)")


def conversation(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        parts.append(content or "")
    return "\n".join(parts)


def submits_its_own_patch(body: dict[str, Any]) -> Turn:
    """Each instance's first answer submits a patch that names its own instance."""
    found = ID_IN_TASK.search(conversation(body))
    assert found is not None
    return Turn.bash_tool(f"{SUBMIT} && echo 'patch for {found.group(1)}'")


def write_instances(path: Path, ids: list[str], **fields: Any) -> Path:
    path.write_text("\n".join(json.dumps({"instance_id": i, "problem_statement": f"fix issue {i}", **fields})
                              for i in ids) + "\n")
    return path


def events_of(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.startswith("{")]


class Collect:
    """A batch sink that keeps the events (the JSON printer's records, as `--json` prints them)."""

    def __init__(self, tally: Tally):
        self.records: list[dict[str, Any]] = []
        self.ticks = 0
        self._json = JsonLines(cast(TextIO, self), tally)  # it writes to us as to a stream

    def write(self, text: str) -> None:
        if text.strip():
            self.records.append(json.loads(text))

    def flush(self) -> None:
        pass

    def __call__(self, event: Any) -> None:
        self._json(event)

    def tick(self) -> None:  # called while instances run, as the batch calls the printers'
        self.ticks += 1

    def of(self, name: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record["event"] == name]


def run_batch(config: Any, instances: list[Any], out: Path, **options: Any) -> tuple[int, Collect]:
    tally = Tally(workers=options.get("workers", 1))
    sink = Collect(tally)
    code = Batch(config, instances, out, BatchOptions(**options), sink, tally).run()
    return code, sink


def batch_command(server: Any, instances: Path, out: Path, *extra: str) -> list[str]:
    return [*swedeck_command(), "batch", str(instances), "-o", str(out), "--env", "local", "--cwd", str(out.parent),
            "-m", "hosted_vllm/scripted", "-c", f"model.model_kwargs={{api_base: '{server.url}'}}",
            "-c", "model.cost_tracking=ignore_errors", *extra]


def clean_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SWEDECK_CONFIG_DIR": str(tmp_path / "config"), "SWEDECK_DATA_DIR": str(tmp_path / "data")}


