"""`orchestrator`: the conversation without the work (no actions, no observations)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..messages import Message, MessageType
from .base import Processor, is_system

CONVERSATION = frozenset(
    {MessageType.TASK, MessageType.USER_MESSAGE, MessageType.ASSISTANT_MESSAGE, MessageType.FINAL}
)


class Orchestrator(Processor):
    """The system message and the last `max_conversation_turns` conversation messages (0 keeps none)."""

    type: Literal["orchestrator"] = "orchestrator"
    max_conversation_turns: int = Field(default=8, ge=0)
    """Conversation messages kept (0 keeps none)."""

    def __call__(self, history: list[Message]) -> list[Message]:
        conversation = [i for i, m in enumerate(history) if m.extra.message_type in CONVERSATION and not is_system(m)]
        # Slicing with [-0:] would keep all; 0 means none.
        kept = set(conversation[max(0, len(conversation) - self.max_conversation_turns):]) if self.max_conversation_turns else set()
        return [m for i, m in enumerate(history) if is_system(m) or i in kept]
