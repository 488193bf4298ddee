"""What a view returns when the person forks (`f`): replay, diff and watch end their app
with it, and the command starts the live session (`swedeck/commands/replay_ui.py`)."""

from __future__ import annotations

from pathlib import Path

import msgspec


class ForkRequest(msgspec.Struct, frozen=True):
    """Fork a live session from `step` of the run in `path`."""

    path: Path
    step: int
