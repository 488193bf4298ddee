"""`compacted` in one pass (issue 49: 17 ms a prompt on a 10,000-step session compacted 33
times) keeps exactly what the rule says: each compaction applied to the whole history in
turn, as the reference below does, on histories with every kind of compaction record, the
ones that do not fit included (out of range, later positions forgotten, undone, unreadable)."""

from __future__ import annotations

import random

import msgspec

from swedeck.core.messages import Message, MessageType, make_message
from swedeck.core.trajectory.compaction import compacted, is_compaction, undone


def reference(messages: list[Message]) -> list[Message]:
    """The rule, applied to the whole history at each compaction (the code before issue 49's)."""
    taken_back = undone(messages)
    kept = list(range(len(messages)))
    for position, message in enumerate(messages):
        if not is_compaction(message):
            continue
        extra = message.extra
        if extra.undoes is not None or position in taken_back:
            kept = [index for index in kept if index != position]
            continue
        if extra.replaces is not None or "replaces" in extra.unknown:
            gone = {index for index in extra.replaces or () if 0 <= index < position}
            first = next((index for index in kept if index in gone), None)
            kept = [position if index == first else index for index in kept
                    if index != position and (index not in gone or index == first)]
            continue
        if extra.forgotten is not None or "forgotten" in extra.unknown:
            dropped = set(extra.forgotten or ())
            kept = [index for index in kept if index not in dropped]
            continue
        system = [index for index in kept if index < position and messages[index].message_type == MessageType.SYSTEM]
        kept = system[:1] + [index for index in kept if index >= position]
    return [messages[index] for index in kept]


def history(rng: random.Random, size: int) -> list[Message]:
    messages = [make_message("system", "sys", MessageType.SYSTEM), make_message("user", "task", MessageType.TASK)]
    compactions: list[int] = []
    while len(messages) < size:
        position, roll = len(messages), rng.random()
        if roll < 0.6 or position < 4:
            kind = MessageType.ACTION if position % 2 else MessageType.OBSERVATION
            messages.append(make_message("assistant" if position % 2 else "user", f"m{position}", kind))
        elif roll < 0.63:
            messages.append(make_message("system", f"s{position}", MessageType.SYSTEM))
        elif roll < 0.78:  # swedeck's own: a range before it, now and then out of range or repeated
            start = rng.randrange(0, position)
            replaces = list(range(start, rng.randrange(start, position) + 1))
            if rng.random() < 0.2:
                replaces += [rng.randrange(-3, position + 5) for _ in range(3)]
            messages.append(make_message("user", f"c{position}", MessageType.COMPACTION, replaces=replaces))
            compactions.append(position)
        elif roll < 0.86:  # a condensation that names what it forgot, later positions too
            forgotten = [rng.randrange(0, size + 5) for _ in range(rng.randrange(1, 6))]
            messages.append(make_message("user", f"f{position}", MessageType.COMPACTION, forgotten=forgotten))
            compactions.append(position)
        elif roll < 0.93:  # a summary that replaces all before it (Claude Code's, Codex's)
            messages.append(make_message("user", f"k{position}", MessageType.COMPACTION))
            compactions.append(position)
        elif compactions:  # an undo, of a compaction or of a position that is none
            target = rng.choice(compactions) if rng.random() < 0.8 else rng.randrange(0, position)
            messages.append(make_message("user", f"u{position}", MessageType.COMPACTION, undoes=target))
    return messages


def test_one_pass_keeps_what_the_rule_applied_to_the_whole_history_keeps():
    rng = random.Random(49)
    for _ in range(400):
        messages = history(rng, rng.randrange(5, 80))
        assert [m.text for m in compacted(messages)] == [m.text for m in reference(messages)], [m.text for m in messages]


def test_an_unreadable_record_is_read_as_the_rule_reads_it():
    messages = history(random.Random(7), 30)
    for name in ("replaces", "forgotten"):
        odd = make_message("user", "odd", MessageType.COMPACTION)
        odd = msgspec.structs.replace(odd, extra=msgspec.structs.replace(odd.extra, unknown={name: "all of it"}))
        assert name in odd.extra.unknown
        both = [*messages, odd, make_message("assistant", "after", MessageType.ACTION)]
        assert [m.text for m in compacted(both)] == [m.text for m in reference(both)]
