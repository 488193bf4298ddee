"""Helpers for the batch tests (`swedeck batch`, SPEC §15): instance files, a scripted model
that answers each instance from its own conversation, and a sink that keeps the events."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import swedeck_command
from support.openai_server import Turn
from support.reliability import SUBMIT
from swedeck.core.batch.progress import JsonLines, Tally
from swedeck.core.batch.runner import Batch, BatchOptions

ID_IN_TASK = re.compile(r"fix issue (\S+)")


def conversation(body: dict) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        parts.append(content or "")
    return "\n".join(parts)


def submits_its_own_patch(body: dict) -> Turn:
    """Each instance's first answer submits a patch that names its own instance."""
    instance_id = ID_IN_TASK.search(conversation(body)).group(1)
    return Turn.bash_tool(f"{SUBMIT} && echo 'patch for {instance_id}'")


def write_instances(path: Path, ids: list[str], **fields) -> Path:
    path.write_text("\n".join(json.dumps({"instance_id": i, "problem_statement": f"fix issue {i}", **fields})
                              for i in ids) + "\n")
    return path


def events_of(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


class Collect:
    """A batch sink that keeps the events (the JSON printer's records, as `--json` prints them)."""

    def __init__(self, tally: Tally):
        self.records: list[dict] = []
        self.ticks = 0
        self._json = JsonLines(self, tally)

    def write(self, text: str) -> None:
        if text.strip():
            self.records.append(json.loads(text))

    def flush(self) -> None:
        pass

    def __call__(self, event) -> None:
        self._json(event)

    def tick(self) -> None:  # called while instances run, as the batch calls the printers'
        self.ticks += 1

    def of(self, name: str) -> list[dict]:
        return [record for record in self.records if record["event"] == name]


def run_batch(config, instances, out: Path, **options) -> tuple[int, Collect]:
    tally = Tally(workers=options.get("workers", 1))
    sink = Collect(tally)
    code = Batch(config, instances, out, BatchOptions(**options), sink, tally).run()
    return code, sink


def batch_command(server, instances: Path, out: Path, *extra: str) -> list[str]:
    return [*swedeck_command(), "batch", str(instances), "-o", str(out), "--env", "local", "--cwd", str(out.parent),
            "-m", "hosted_vllm/scripted", "-c", f"model.model_kwargs={{api_base: '{server.url}'}}",
            "-c", "model.cost_tracking=ignore_errors", *extra]


def clean_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SWEDECK_CONFIG_DIR": str(tmp_path / "config"), "SWEDECK_DATA_DIR": str(tmp_path / "data")}


