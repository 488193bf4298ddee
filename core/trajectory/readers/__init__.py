"""Trajectory readers, found by content (not by file extension) in one table.

Each reader module has `FORMAT`, `accepts(source) -> bool` and `read(source) -> Trajectory`.
The first reader that accepts a file reads it; adding a format touches one file and one line.
"""

from __future__ import annotations

from typing import Protocol

from ..model import Trajectory, TrajectoryFormat
from . import atif, claude_code, codex, inspect_log, mini_swe_agent, openhands, swe_agent, swedeck_json, swedeck_jsonl
from .source import Source


class Reader(Protocol):
    """What each reader module provides."""

    FORMAT: TrajectoryFormat

    def accepts(self, source: Source) -> bool: ...
    def read(self, source: Source) -> Trajectory: ...


# Order matters: the JSONL formats look at their first lines only; the swedeck formats and ATIF
# have explicit markers; OpenHands' v0 export is a bare list of events, and mini-swe-agent
# accepts any list or `messages` dict, so it goes last.
READERS: tuple[Reader, ...] = (swedeck_jsonl, claude_code, codex, swedeck_json, atif, inspect_log, openhands,
                               swe_agent, mini_swe_agent)

__all__ = ["READERS", "Reader", "Source"]
