"""Compaction as one concept in the step model (SPEC §9.3, §17): whatever the format calls it
(Claude Code's compact boundary and summary, Codex's `compacted`, OpenHands' condensation),
a reader writes a `MessageType.COMPACTION` message where it happened. What the model saw
after it is what `compacted` keeps: without `forgotten`, the leading system prompt, the
marker (its summary) and what follows; with `forgotten` (message indices), all but those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import Message, MessageType
from .model import Step, Trajectory


def _extra(message: Message) -> dict[str, Any]:
    return message.extra.model_extra or {}


def is_compaction(message: Message) -> bool:
    return message.message_type == MessageType.COMPACTION


def compacted(messages: Sequence[Message]) -> list[Message]:
    """The history a query was sent, with every compaction before it applied."""
    kept = list(range(len(messages)))
    for position, message in enumerate(messages):
        if not is_compaction(message):
            continue
        forgotten = _extra(message).get("forgotten")
        if isinstance(forgotten, list):
            dropped = {index for index in forgotten if isinstance(index, int)}
            kept = [index for index in kept if index not in dropped]
            continue
        system = [index for index in kept if index < position and messages[index].message_type == MessageType.SYSTEM]
        kept = system[:1] + [index for index in kept if index >= position]
    return [messages[index] for index in kept]


def label(message: Message) -> str:
    """`compacted: 180,000 -> 12,000` (the token figures where the file records them)."""
    extra = _extra(message)
    before, after = extra.get("tokens_before"), extra.get("tokens_after")
    if isinstance(before, int) and isinstance(after, int):
        return f"compacted: {before:,} -> {after:,}"
    if isinstance(before, int):
        return f"compacted: {before:,} -> summary"
    forgotten = extra.get("forgotten")
    if isinstance(forgotten, list):
        return f"condensed: {len(forgotten)} messages forgotten"
    return "compacted"


def compaction_at(trajectory: Trajectory, step: Step) -> Message | None:
    """The compaction between the previous step's query and this one (the last, if several)."""
    previous = trajectory.steps[step.index - 2].message_index if step.index > 1 else -1
    for index in range(step.message_index - 1, previous, -1):
        if is_compaction(trajectory.messages[index]):
            return trajectory.messages[index]
    return None
