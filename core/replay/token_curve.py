"""The token curve (SPEC §11.1): prompt tokens of every step, recorded or estimated.

Computed step by step so the UI can draw it progressively from a background worker; the
estimate of step k reuses the running sum of step k-1 (each message is counted once).
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from ..messages import Usage, answered_by
from ..tokens import count_message
from .document import ReplayDocument


class CurvePoint(msgspec.Struct, frozen=True):
    """One step of the token curve: the prompt's tokens at that query."""

    step: int
    tokens: int
    estimated: bool
    command: str = ""
    """The step's first command, for the step list."""
    mark: str = ""
    """`⟲` the history was compacted before this query, `p` its processors changed, else empty."""
    compaction: str = ""
    """`compacted: 180,000 -> 12,000` when the history was compacted before this query."""
    usage: Usage | None = None
    """The provider's usage of this query, where recorded (what its dollars are priced from)."""
    model: str | None = None
    """The model its answer names, where it does."""

    @property
    def label(self) -> str:
        """The step list's line after the step's number: its first command, after the compaction
        marker with its figures where the history was compacted before it."""
        if self.compaction:
            return f"⟲ {self.compaction}" + (f" · {self.command}" if self.command else "")
        return self.command


def token_curve(document: ReplayDocument, start: int = 1) -> Iterator[CurvePoint]:
    """Points for steps `start..step_count`; estimates count the history before each query."""
    running, counted = 3, 0
    previous = document.step(start - 1).processors if start > 1 else None
    for number in range(start, document.step_count + 1):
        view = document.step(number)
        command = view.actions[0].command if view.actions else ""
        mark = "⟲" if view.compaction else "p" if number > 1 and view.processors != previous else ""
        previous = view.processors
        usage, model = view.assistant.extra.usage, answered_by(view.assistant, None)
        if view.prompt_tokens is not None:
            yield CurvePoint(number, view.prompt_tokens, False, command, mark, view.compaction or "", usage, model)
            continue
        for message in document.messages_before(view.prompt_end)[counted:]:
            if message.role != "exit":
                running += count_message(message)
        counted = view.prompt_end
        yield CurvePoint(number, running, True, command, mark, view.compaction or "", usage, model)
