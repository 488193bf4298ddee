"""`manager`: what previous turns delivered, plus the whole current turn."""

from __future__ import annotations

from typing import Literal

from ..messages import Message, MessageType
from .base import Processor, is_system, last_task_index


class Manager(Processor):
    """The system message, the `final` messages (submissions) of earlier turns, the current turn."""

    type: Literal["manager"] = "manager"

    def __call__(self, history: list[Message]) -> list[Message]:
        start = last_task_index(history)
        if start is None:
            return list(history)
        earlier = [m for m in history[:start] if is_system(m) or m.extra.message_type is MessageType.FINAL]
        return earlier + history[start:]
