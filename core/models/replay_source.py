"""The answers of a saved trajectory, for the replay model: the assistant message of every
step, by the loader's step rule (a submission record or a demonstration is not an answer)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SwedeckError
from ..messages import Message
from ..trajectory.loader import load_trajectory


def assistant_messages(path: Path) -> list[Message]:
    if not path.is_file():
        raise SwedeckError(f"replay: no trajectory file at {path}")
    trajectory = load_trajectory(path)
    return [trajectory.messages[step.message_index] for step in trajectory.steps]
