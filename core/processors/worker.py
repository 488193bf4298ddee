"""`worker`: the current turn only (hierarchical history filtering, §6.3 turns)."""

from __future__ import annotations

from typing import Literal

from ..messages import Message
from .base import Processor, is_system, last_task_index


class Worker(Processor):
    """The system message, then the last `task` and everything after it."""

    type: Literal["worker"] = "worker"

    def __call__(self, history: list[Message]) -> list[Message]:
        start = last_task_index(history)
        if start is None:
            return list(history)
        return [message for message in history[:start] if is_system(message)] + history[start:]
