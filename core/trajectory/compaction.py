"""Compaction as one concept in the step model (SPEC §9.3, §17): whatever the format calls it
(Claude Code's compact boundary and summary, Codex's `compacted`, OpenHands' condensation),
a reader writes a `MessageType.COMPACTION` message where it happened. What the model saw
after it is what `compacted` keeps: without `forgotten`, the leading system prompt, the
marker (its summary) and what follows; with `forgotten` (message indices), all but those.

swedeck's own `summarize` processor (SPEC §17, `agent/compaction.py`) records `replaces`
(message indices, one range of the history as the model then saw it): the marker, whose
content is the summary, stands where the first of them stood, and they are gone. An undo
is a marker with `undoes` (the position of the compaction it takes back): from there on
that compaction is as if it never happened, and the undo marker itself is never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from ..messages import Message, MessageType
from .model import Step, Trajectory


def _extra(message: Message) -> dict[str, Any]:
    return message.extra.unknown


def _position(value: Any) -> TypeGuard[int]:
    """A message position as a file records one: an int, not a bool (`true` is not position 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_compaction(message: Message) -> bool:
    return message.message_type == MessageType.COMPACTION


def undone(messages: Sequence[Message]) -> set[int]:
    """Positions of the compactions an undo marker takes back."""
    out: set[int] = set()
    for message in messages:
        if is_compaction(message):
            target = _extra(message).get("undoes")
            if _position(target):
                out.add(target)
    return out


def compacted(messages: Sequence[Message]) -> list[Message]:
    """The history a query was sent, with every compaction before it applied."""
    if not any(is_compaction(message) for message in messages):
        return list(messages)
    taken_back = undone(messages)
    kept = list(range(len(messages)))
    for position, message in enumerate(messages):
        if not is_compaction(message):
            continue
        extra = _extra(message)
        if "undoes" in extra or position in taken_back:
            kept = [index for index in kept if index != position]
            continue
        replaces = extra.get("replaces")
        if isinstance(replaces, list):
            gone = {index for index in replaces if _position(index)}
            first = next((index for index in kept if index in gone), None)
            kept = [position if index == first else index for index in kept
                    if index != position and (index not in gone or index == first)]
            continue
        forgotten = extra.get("forgotten")
        if isinstance(forgotten, list):
            dropped = {index for index in forgotten if _position(index)}
            kept = [index for index in kept if index not in dropped]
            continue
        system = [index for index in kept if index < position and messages[index].message_type == MessageType.SYSTEM]
        kept = system[:1] + [index for index in kept if index >= position]
    return [messages[index] for index in kept]


def label(message: Message) -> str:
    """`compacted: 180,000 -> 12,000` (the token figures where the file records them)."""
    extra = _extra(message)
    if "undoes" in extra:
        return "compaction undone"
    before, after = extra.get("tokens_before"), extra.get("tokens_after")
    if isinstance(before, int) and isinstance(after, int):
        return f"compacted: {before:,} -> {after:,}"
    if isinstance(before, int):
        return f"compacted: {before:,} -> summary"
    forgotten = extra.get("forgotten")
    if isinstance(forgotten, list):
        return f"condensed: {len(forgotten)} messages forgotten"
    return "compacted"


def compaction_between(messages: Sequence[Message], previous_answer: int, answer: int) -> Message | None:
    """The compaction between two answers (message positions; -1: none before), the last if
    several; only the messages between the two are read."""
    for index in range(answer - 1, previous_answer, -1):
        if is_compaction(messages[index]):
            return messages[index]
    return None


def compaction_at(trajectory: Trajectory, step: Step) -> Message | None:
    """The compaction between the previous step's query and this one (the last, if several)."""
    previous = trajectory.steps[step.index - 2].message_index if step.index > 1 else -1
    return compaction_between(trajectory.messages, previous, step.message_index)
