"""Helpers of the replay, fork and watch tests: swedeck trajectories written by the real
TrajectoryWriter, step by step, so tests can also write while a reader follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swedeck.core.messages import Action, ContextInfo, MessageType, Usage, make_message
from swedeck.core.trajectory.writer import TrajectoryWriter

WINDOW = 10_000


def session_meta(model: str = "openai/test-model") -> dict[str, Any]:
    return {"id": "test-session-0001", "started": 0.0, "swedeck_version": "test", "model": model,
            "environment": "local", "config": {"model": {"model_name": model}}}


def start_writer(base: Path, *, task: str = "Fix the bug in calc.py") -> TrajectoryWriter:
    writer = TrajectoryWriter(base, session_meta())
    writer.add_message(make_message("system", "You are a helpful agent. Reply with one bash command.",
                                    MessageType.SYSTEM))
    writer.add_message(make_message("user", task, MessageType.TASK, turn=1))
    return writer


def command_of(step: int) -> str:
    return f"echo step-{step}-output"


def add_step(writer: TrajectoryWriter, step: int, *, command: str | None = None, prompt_tokens: int | None = None,
             thought: str | None = None, output: str | None = None) -> None:
    command = command or command_of(step)
    prompt_tokens = prompt_tokens if prompt_tokens is not None else 100 * step
    thought = thought or f"Thought {step}: let me run the next command."
    writer.add_message(make_message(
        "assistant", f"{thought}\n\n```bash\n{command}\n```", MessageType.ACTION, step=step,
        actions=(Action(command=command),), usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=20),
        cost=0.01, context=ContextInfo(window=WINDOW, prompt_tokens=prompt_tokens,
                                       left_percent=100.0 * (1 - prompt_tokens / WINDOW))))
    text = output if output is not None else f"step-{step}-output"
    writer.add_message(make_message("user", f"<returncode>0</returncode>\n<output>\n{text}\n</output>",
                                    MessageType.OBSERVATION, step=step, returncode=0))


def write_trajectory(base: Path, steps: int = 4, *, finish: bool = True, **options: Any) -> Path:
    """A swedeck trajectory of `steps` echo steps; the final `.traj.json` or the live `.jsonl`."""
    writer = start_writer(base)
    for step in range(1, steps + 1):
        add_step(writer, step, **options)
    if finish:
        return writer.finish({"exit_status": "Submitted", "submission": "done",
                              "model_stats": {"instance_cost": 0.01 * steps, "api_calls": steps}})
    writer.close()
    return writer.path
