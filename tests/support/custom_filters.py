"""Custom filters for `context_filter` tests (loaded by dotted path, as users configure them)."""

from __future__ import annotations

from swedeck.core.messages import Message


def drop_assistant_text(messages: list[Message]) -> list[Message]:
    return [m for m in messages if not (m.role == "assistant" and m.text == "drop me")]


def explode(messages: list[Message]) -> list[Message]:
    raise RuntimeError("filter broke")


def not_a_list(messages: list[Message]) -> str:
    return "nope"


SEEN: list[list[str]] = []


def keep_last_two(messages: list[Message]) -> list[Message]:
    """Notes the roles it was given, and keeps the last two (it would drop a system message)."""
    SEEN.append([m.role for m in messages])
    return messages[-2:]


def leave_a_mark(messages: list[Message]) -> list[Message]:
    """Writes a file when it runs: the proof that a trajectory's recorded filter was (not) called."""
    import os
    from pathlib import Path

    Path(os.environ["SWEDECK_TEST_MARK"]).write_text("ran")
    return messages
