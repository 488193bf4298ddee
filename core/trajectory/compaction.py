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

from ..messages import Message, MessageType, without_exits
from .model import Step, Trajectory


def is_compaction(message: Message) -> bool:
    return message.message_type == MessageType.COMPACTION


def positions(messages: Sequence[Message]) -> Sequence[int]:
    """Where the compaction markers are: from the reader's table when it has one (a file of
    millions of lines is not built whole to find none), else by looking at each message."""
    from .lazy import MessageList

    if isinstance(messages, MessageList) and messages.compactions is not None:
        return messages.compactions
    return [position for position, message in enumerate(messages) if is_compaction(message)]


def undone(messages: Sequence[Message]) -> set[int]:
    """Positions of the compactions an undo marker takes back."""
    out: set[int] = set()
    for message in messages:
        if is_compaction(message) and message.extra.undoes is not None:
            out.add(message.extra.undoes)
    return out


def compacted(messages: Sequence[Message]) -> list[Message]:
    """The history a query was sent, with every compaction before it applied.

    One pass: a compaction changes only what came before it, so the messages kept so far are
    rewritten at each one and later ones are appended as they come (a 10,000-step session
    compacted 33 times: 17 ms a prompt when every compaction rewrote the whole history)."""
    if not any(is_compaction(message) for message in messages):
        return list(messages)
    taken_back = undone(messages)
    kept: list[int] = []  # what is kept of the messages before `position`, in the order sent
    dropped_later: set[int] = set()  # later positions an earlier compaction forgot
    for position, message in enumerate(messages):
        if not is_compaction(message):
            if position not in dropped_later:
                kept.append(position)
            continue
        extra = message.extra
        if extra.undoes is not None or position in taken_back:
            continue
        if extra.replaces is not None or "replaces" in extra.unknown:  # one it cannot read names no message
            gone = {index for index in extra.replaces or () if 0 <= index < position}  # only what came before it
            first = next((index for index in kept if index in gone), None)
            kept = [position if index == first else index for index in kept if index not in gone or index == first]
            continue
        if extra.forgotten is not None or "forgotten" in extra.unknown:
            dropped = set(extra.forgotten or ())
            kept = [index for index in kept if index not in dropped]
            dropped_later.update(index for index in dropped if index > position)
            if position not in dropped and position not in dropped_later:
                kept.append(position)
            continue
        system = [index for index in kept if messages[index].message_type == MessageType.SYSTEM]
        kept = system[:1]
        if position not in dropped_later:
            kept.append(position)
    return [messages[index] for index in kept]


REPLACES_SAID = 5
"""Indices named in one note about a `replaces` that does not fit."""


def compaction_problems(messages: Sequence[Message]) -> list[str]:
    """What does not fit in swedeck's compaction records (`replaces`): said in the fidelity panel.
    The rebuild (`compacted`) uses only the messages before the marker that are still seen, so a
    record that names others changes nothing it should not."""
    notes: list[str] = []
    gone: set[int] = set()
    markers = positions(messages)
    for position in markers:
        extra = messages[position].extra
        if "replaces" in extra.unknown:
            notes.append(f"compaction at message {position}: its replaces is not a list of message positions "
                         f"({str(extra.unknown['replaces'])[:80]!r}); it replaces nothing")
            continue
        if extra.replaces is None or extra.undoes is not None:
            continue
        replaces = list(extra.replaces)
        outside = [index for index in replaces if not 0 <= index < position]
        again = [index for index in replaces if index in gone]
        if outside:
            notes.append(f"compaction at message {position}: replaces names {len(outside):,} positions that are not "
                         f"before it ({_some(outside)}); ignored")
        if again:
            notes.append(f"compaction at message {position}: replaces names {len(again):,} messages an earlier "
                         f"compaction already replaced ({_some(again)})")
        if len(set(replaces)) != len(replaces):  # in any order: swedeck's own follow the history as the model saw it
            notes.append(f"compaction at message {position}: replaces repeats positions; read as the set of them")
        if not replaces:
            notes.append(f"compaction at message {position}: replaces names no message")
        gone.update(index for index in replaces if 0 <= index < position)
    if any(messages[p].extra.tokens_before is None and messages[p].extra.unknown.get("compaction_source")
           for p in markers):
        notes.append("the agent's compaction records no token figures: its loss report counts the tokens with "
                     "swedeck's own tokenizer")
    return notes


def _some(indices: list[int]) -> str:
    shown = ", ".join(str(index) for index in indices[:REPLACES_SAID])
    return shown + (", …" if len(indices) > REPLACES_SAID else "")


def sendable(history: Sequence[Message]) -> list[Message]:
    """What a query of `history` is sent before the history processors: every compaction
    applied, the run's exit records left out."""
    return without_exits(compacted(history))


def label(message: Message) -> str:
    """`compacted: 180,000 -> 12,000` (the token figures where the file records them)."""
    extra = message.extra
    if extra.undoes is not None:
        return "compaction undone"
    before, after = extra.tokens_before, extra.tokens_after
    if before is not None and after is not None:
        return f"compacted: {before:,} -> {after:,}"
    if before is not None:
        return f"compacted: {before:,} -> summary"
    if extra.forgotten is not None:
        return f"condensed: {len(extra.forgotten)} messages forgotten"
    return "compacted"


def compaction_between(messages: Sequence[Message], previous_answer: int, answer: int) -> Message | None:
    """The compaction between two answers (message positions; -1: none before), the last if
    several; only the messages between the two are read."""
    position = compaction_position(messages, previous_answer, answer)
    return messages[position] if position is not None else None


def compaction_position(messages: Sequence[Message], previous_answer: int, answer: int) -> int | None:
    """Where `compaction_between`'s compaction is."""
    for index in range(answer - 1, previous_answer, -1):
        if is_compaction(messages[index]):
            return index
    return None


def compaction_at(trajectory: Trajectory, step: Step) -> Message | None:
    """The compaction between the previous step's query and this one (the last, if several)."""
    previous = trajectory.steps[step.index - 2].message_index if step.index > 1 else -1
    return compaction_between(trajectory.messages, previous, step.message_index)
