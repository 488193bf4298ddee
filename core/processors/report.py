"""How many tokens each processor saves on a history (the meter's "next ≈ N", the inspector)."""

from __future__ import annotations

from dataclasses import dataclass

from ..messages import Message
from ..tokens import count_messages


@dataclass(frozen=True)
class StageTokens:
    index: int
    """Position of the processor in the configured list."""
    type: str
    before: int
    after: int

    @property
    def saved(self) -> int:
        return self.before - self.after


@dataclass(frozen=True)
class TokenReport:
    before: int
    after: int
    stages: tuple[StageTokens, ...]

    @property
    def saved(self) -> int:
        return self.before - self.after


def token_report(history: list[Message], stages: list[tuple[int, str, list[Message]]]) -> TokenReport:
    """`stages`: (index, type, output) per applied processor, in order. Counts are cached per
    message object and processors pass unchanged messages through, so this stays cheap."""
    before = count_messages(history)
    rows, current = [], before
    for index, kind, output in stages:
        after = count_messages(output)
        rows.append(StageTokens(index=index, type=kind, before=current, after=after))
        current = after
    return TokenReport(before=before, after=current, stages=tuple(rows))
