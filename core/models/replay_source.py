"""The answers of a saved trajectory, for the replay model: the assistant message of every
step, by the loader's step rule (a submission record or a demonstration is not an answer),
and the summary of every compaction swedeck's `summarize` recorded (a summary is an answer too)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SwedeckError
from ..messages import Message
from ..trajectory.compaction import is_compaction
from ..trajectory.loader import load_trajectory


def recorded_answers(path: Path) -> tuple[list[Message], list[Message]]:
    """(the assistant message of every step, every compaction with its summary) in order."""
    if not path.is_file():
        raise SwedeckError(f"replay: no trajectory file at {path}")
    trajectory = load_trajectory(path)
    summaries = [message for message in trajectory.messages
                 if is_compaction(message) and message.extra.summary is not None]
    return [trajectory.messages[step.message_index] for step in trajectory.steps], summaries
