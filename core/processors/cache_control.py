"""`cache_control`: mark the last few messages as prompt-cache breakpoints (Anthropic style)."""

from __future__ import annotations

from typing import Any, Literal

from ..messages import Message
from .base import Processor, derived

EPHEMERAL = {"type": "ephemeral"}


def _cleared(message: Message) -> Message:
    content = message.content
    marked_parts = isinstance(content, list) and any("cache_control" in part for part in content)
    if message.cache_control is None and not marked_parts:
        return message
    update: dict[str, Any] = {"cache_control": None}
    if marked_parts and isinstance(content, list):
        update["content"] = [{k: v for k, v in part.items() if k != "cache_control"} for part in content]
    return message.updated(**update)


def _marked(message: Message) -> Message:
    if message.role == "tool":
        # Tool results carry the mark on the message, not on a content part.
        return message.updated(cache_control=dict(EPHEMERAL))
    content = message.content
    if isinstance(content, list) and content:
        parts = [dict(part) for part in content]
        parts[-1]["cache_control"] = dict(EPHEMERAL)
    else:
        parts = [{"type": "text", "text": message.text, "cache_control": dict(EPHEMERAL)}]
    return message.updated(content=parts)


class CacheControl(Processor):
    """Clear every mark, then mark the last `last_n_messages` messages of the tagged roles,
    skipping the last `last_n_messages_offset` of them. `last_n_messages <= 0` only clears."""

    type: Literal["cache_control"] = "cache_control"
    last_n_messages: int = 2
    """Messages to mark; 0 or less only clears marks."""
    last_n_messages_offset: int = 0
    """The last this many messages of the tagged roles are skipped."""
    tagged_roles: tuple[str, ...] = ("user", "tool")
    """Roles that can be marked."""

    def __call__(self, history: list[Message]) -> list[Message]:
        out = [derived("cache_clear", message, _cleared) for message in history]
        seen = marked = 0
        for index in range(len(out) - 1, -1, -1):
            if marked >= self.last_n_messages:
                break
            if out[index].role not in self.tagged_roles:
                continue
            seen += 1
            if seen > self.last_n_messages_offset:
                out[index] = derived("cache_mark", out[index], _marked)
                marked += 1
        return out
