"""A `TrajectoryIndex` that also notes which message lines start a step as it indexes them,
so step boundaries are known without parsing messages."""

from __future__ import annotations

import re
from pathlib import Path

from ..trajectory.index import TrajectoryIndex
from ..trajectory.normalize import counts_as_step

_ROLE = re.compile(rb'^\s*\{\s*"role"\s*:\s*"(\w+)"')
# Quotes inside a JSON string are escaped, so this matches only the message's own type.
_FINAL = re.compile(rb'"message_type"\s*:\s*"final"')


class RoleIndex(TrajectoryIndex):
    def __init__(self, path: str | Path):
        self.steps: list[int] = []
        """Message index where each step starts: step k is `steps[k - 1]` (`normalize.is_step`)."""
        super().__init__(path)

    def _reset(self, identity: tuple[int, int]) -> None:
        super()._reset(identity)
        self.steps = []

    def _add_line(self, offset: int, line: bytes, length: int | None = None) -> None:
        before = len(self._messages)
        super()._add_line(offset, line, length)
        if len(self._messages) > before:
            # swedeck writes `role` first (Message field order); anything else is parsed to find out
            match = _ROLE.match(line)
            if match:
                role = match.group(1).decode()
                kind = "final" if role == "assistant" and _FINAL.search(line) else None
            else:
                role, kind = self._parsed(before)
            if counts_as_step(role, kind):
                self.steps.append(before)

    def _parsed(self, index: int) -> tuple[str, str | None]:
        try:
            message = self.message(index)
        except Exception:  # noqa: BLE001 - an unreadable line shows its error when its step is opened
            return "unknown", None
        return message.role, message.message_type.value
