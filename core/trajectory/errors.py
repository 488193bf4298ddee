"""The one error a trajectory file gives when it cannot be read or written (SPEC §9.3)."""

from __future__ import annotations

from pathlib import Path

from ..errors import SwedeckError


class TrajectoryError(SwedeckError):
    """A trajectory file that cannot be read: the message names the file and the reason."""

    def __init__(self, path: str | Path, reason: str):
        super().__init__(f"cannot read trajectory {path}: {reason}")
        self.path = str(path)
        self.reason = reason
