"""A `TrajectoryIndex` that also notes the role of every message line as it indexes it, so
step boundaries (one step per assistant message) are known without parsing messages."""

from __future__ import annotations

import re

from ..trajectory.index import TrajectoryIndex

_ROLE = re.compile(rb'^\s*\{\s*"role"\s*:\s*"(\w+)"')


class RoleIndex(TrajectoryIndex):
    def __init__(self, path):
        self.roles: list[str] = []
        self.assistants: list[int] = []
        """Message index of each assistant message: step k is `assistants[k - 1]`."""
        super().__init__(path)

    def _reset(self, identity) -> None:
        super()._reset(identity)
        self.roles, self.assistants = [], []

    def _add_line(self, offset: int, line: bytes) -> None:
        before = len(self._messages)
        super()._add_line(offset, line)
        if len(self._messages) > before:
            # swedeck writes `role` first (Message field order); anything else is parsed to find out
            match = _ROLE.match(line)
            role = match.group(1).decode() if match else self._parsed_role(before)
            self.roles.append(role)
            if role == "assistant":
                self.assistants.append(before)

    def _parsed_role(self, index: int) -> str:
        try:
            return self.message(index).role
        except Exception:  # an unreadable line shows its error when its step is opened
            return "unknown"
